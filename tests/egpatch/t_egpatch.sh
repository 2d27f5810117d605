#!/usr/bin/env bash
# oracle_eg_patch: generated PropertyOverrides of an Envoy Gateway target, rendered by our adapter
# into EnvoyPatchPolicies and applied with Envoy Gateway v1.9.1's own code (the eg-patch oracle,
# tests/oracles/eg-patch) to the resources Envoy Gateway generates for a Gateway and an HTTPRoute
# (fixtures/), against the same patches applied with Consul's meaning by our engine; results
# compared proto-equal. Every refusal of ours is counted by reason; every mismatch (Envoy Gateway
# failing where we rendered, or another result) fails the test. The corpus (corpus/*.json, every
# mismatch ever found) is replayed first, then PO_EGPATCH_CASES (default 3000) generated from
# PO_EGPATCH_SEED (default: the time; printed). tests/oracles/README.md, "eg-patch".
#
#   t_egpatch.sh EGPATCH_CASES_BINARY REPORT   (from the repository root; ctest runs it with
#                                              REPORT = build/tests/egpatch/egpatch-report.txt)
#   PO_EGPATCH_REPORT=FILE                     the report of every mismatch goes there instead
set -euo pipefail
cases_bin=$1
report=${PO_EGPATCH_REPORT:-$2}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/lib/oracle.sh"
oracle=$(po_oracle eg-patch eg-patch)
work=$(mktemp -d "${TMPDIR:-/tmp}/po-egpatch.XXXXXX")
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
"$cases_bin" "$here/fixtures" "$here/corpus" "$work/cases.jsonl" "$work/meta.jsonl"
"$oracle" <"$work/cases.jsonl" >"$work/verdicts.jsonl"
rc=0
/usr/bin/python3 "$here/tally.py" "$work/meta.jsonl" "$work/verdicts.jsonl" "$report" || rc=$?
echo "oracle_eg_patch: $(( $(date +%s) - t0 )) s"
if [ "$rc" != 0 ]; then
  sed -n '/^\[/,$p' "$report" | head -40 || true  # head closes the pipe early
  echo "(the first mismatches; all of them in $report)"
fi
exit "$rc"
