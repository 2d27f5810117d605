#!/usr/bin/env bash
# ctest's envoy_rules_oracle: envoy_rules_diff against Envoy's own validators (the envoy-validate
# oracle, built by scripts/build-oracles.sh). Missing oracle: skipped (77), or failed under
# PO_REQUIRE_REAL=1. PO_ORACLE_SEED, PO_ORACLE_CASES, PO_ORACLE_REPORT: see diff_main.c.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib/oracle.sh
. "$here/../../scripts/lib/oracle.sh"
oracle=$(po_oracle envoy-validate envoy-validate) || { rc=$?; printf '%s\n' "$oracle"; exit $rc; }
exec "$1" "$oracle" "$2"
