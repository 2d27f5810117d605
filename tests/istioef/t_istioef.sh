#!/usr/bin/env bash
# oracle_istio_envoyfilter: generated PropertyOverrides of Istio targets (Service, Mesh), each
# rendered by our `propertyoverride render` into an EnvoyFilter that Istio's own code reads,
# validates (ValidateEnvoyFilter), converts (convertToEnvoyFilterWrapper) and applies
# (ApplyClusterMerge, ApplyListenerPatches, ApplyRouteConfigurationPatches) to a sidecar's
# resources named and built as istiod builds them, against the same PropertyOverride applied with
# Consul's meaning by our engine (`propertyoverride preview --mesh istio`); results compared
# proto-equal. Every refusal, ours and Istio's, is counted by reason, and Istio's validation
# warnings; every mismatch (Istio refusing what we rendered, or another result) fails the test.
# The corpus (corpus/*.yaml, every mismatch ever found) is replayed first, then PO_ISTIOEF_CASES
# (default 3000) generated from PO_ISTIOEF_SEED (default: the time; printed). The generator, the
# resources and the comparison are the oracle's (tests/oracles/istio-envoyfilter/*.go);
# tests/oracles/README.md, "istio-envoyfilter".
#
#   t_istioef.sh PROPERTYOVERRIDE_BINARY REPORT  (from the repository root; ctest runs it with
#                                                REPORT = build/tests/istioef/istioef-report.txt)
#   PO_ISTIOEF_REPORT=FILE                       the report of every mismatch goes there instead
# Each mismatch is also written as a corpus file into REPORT's directory, new/ (review it, then
# move it to corpus/ with a name saying what it is).
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
report=${PO_ISTIOEF_REPORT:-$2}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/lib/oracle.sh"
oracle=$(po_oracle istio-envoyfilter istio-envoyfilter)
new="$(dirname "$report")/new"
rm -rf "$new"; mkdir -p "$new"
rc=0
"$oracle" -cli "$bin" -cases "${PO_ISTIOEF_CASES:-3000}" -corpus "$here/corpus" -save "$new" -report "$report" || rc=$?
if [ "$rc" != 0 ]; then
  echo "(every mismatch in $report; each as a corpus file in $new)"
fi
exit "$rc"
