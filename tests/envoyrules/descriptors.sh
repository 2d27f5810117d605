#!/usr/bin/env bash
# ctest's envoy_descriptors_oracle_<version>: the descriptor set our build extracts for an
# embedded snapshot (proto/'s build/proto/envoy-VERSION.pb, the whole FileDescriptorSet taken from
# the .pb.go files of go-control-plane's envoy module VERSION) against Go's own registry of the
# same module version (envoy-validate-VERSION -compare-descriptors: every envoy/**/v3/*.proto file
# and its imports, file by file, byte-equal, or the fields that differ said). Missing oracle:
# skipped (77), or failed under PO_REQUIRE_REAL=1. OTHER_SET, another snapshot's set, must be
# found different, the fields that differ said: the comparison is seen to tell sets apart.
#   descriptors.sh SET_FILE VERSION OTHER_SET
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib/oracle.sh
. "$here/../../scripts/lib/oracle.sh"
oracle=$(po_oracle envoy-validate "envoy-validate-$2") || { rc=$?; printf '%s\n' "$oracle"; exit $rc; }
[ -s "$1" ] || { echo "FAIL: $1 is missing or empty (proto/CMakeLists.txt writes it when building the snapshot $2)"; exit 1; }
got=$("$oracle" -version)
[ "$got" = "$2" ] || { echo "FAIL: $oracle was built from envoy $got, not $2"; exit 1; }
out=$(mktemp "${TMPDIR:-/tmp}/po-descriptors.XXXXXX")
trap 'rm -f "$out"' EXIT
rc=0
"$oracle" -compare-descriptors "$3" >"$out" || rc=$?
if [ "$rc" != 1 ] || ! grep -q ': only in \|bytes differ' "$out"; then
  echo "FAIL: the comparison found $3 (another snapshot's) no different from $2's registry (exit $rc):"
  tail -5 "$out"
  exit 1
fi
echo "control: $3 differs, as it must: $(tail -1 "$out")"
exec "$oracle" -compare-descriptors "$1"
