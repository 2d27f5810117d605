#!/usr/bin/env bash
# ctest's envoy_rules_oracle_<version> and envoy_rules_native_oracle_<version>: DRIVER against
# Envoy's own validators of the same go-control-plane envoy version as the embedded snapshot it
# judges with (the envoy-validate oracle's envoy-validate-VERSION, built by
# scripts/build-oracles.sh). Missing oracle: skipped (77), or failed under PO_REQUIRE_REAL=1.
#   run.sh DRIVER CORPUS VERSION
# PO_ORACLE_SEED, PO_ORACLE_CASES, PO_ORACLE_REPORT: see the drivers' comments.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib/oracle.sh
. "$here/../../scripts/lib/oracle.sh"
oracle=$(po_oracle envoy-validate "envoy-validate-$3") || { rc=$?; printf '%s\n' "$oracle"; exit $rc; }
exec "$1" --api "$3" "$oracle" "$2"
