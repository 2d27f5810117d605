#!/usr/bin/env bash
# adv-22: a string `pattern` rule compiled its regex for every value judged (newlocale, regcomp,
# regfree: ~30 µs a value). An EnvoyFilter VIRTUAL_HOST ADD with 20,000 routes matching on
# path_separated_prefix (pattern ^[^?#]+[^?#/]$) cost 1.08 s of CPU in `validate -f` against
# 0.49 s for the same routes on `prefix` (no pattern); each pattern is now compiled once. Fails
# when the pattern file costs more than 1.6 times the control's CPU.
# Usage: t_pattern_cost.sh BUILD [routes]
set -euo pipefail
build=$1; routes=${2:-20000}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
gen() { # gen MATCH-FIELD FILE
  /usr/bin/python3 - "$1" "$routes" >"$2" <<'PY'
import json, sys
field, n = sys.argv[1], int(sys.argv[2])
routes = [{"name": "r%d" % k, "match": {field: "/a%d" % k}, "direct_response": {"status": 200}} for k in range(n)]
vh = {"name": "v", "domains": ["*"], "routes": routes}
print(json.dumps({"apiVersion": "networking.istio.io/v1alpha3", "kind": "EnvoyFilter",
                  "metadata": {"name": "x", "namespace": "d"},
                  "spec": {"configPatches": [{"applyTo": "VIRTUAL_HOST", "match": {"context": "SIDECAR_OUTBOUND"},
                                              "patch": {"operation": "ADD", "value": vh}}]}}))
PY
}
gen path_separated_prefix "$work/pattern.json"; gen prefix "$work/control.json"
cpu() { # the least of three runs: the machine is shared
  local best=999999 t
  for _ in 1 2 3; do
    /usr/bin/time -f '%U %S' -o "$work/t" "$build/propertyoverride" validate -f "$1" >"$work/out" 2>&1 || true
    t=$(awk '{printf "%d\n", ($1 + $2) * 1000}' "$work/t"); (( t < best )) && best=$t
  done
  echo "$best"
}
p=$(cpu "$work/pattern.json"); c=$(cpu "$work/control.json")
grep -q '^1 valid, 0 invalid' "$work/out" || { echo "FAIL: the control is not valid:"; cat "$work/out"; exit 1; }
echo "figure: $routes values under a pattern rule: ${p} ms of CPU, control ${c} ms"
(( c < 50 )) && c=50
if (( p * 10 > 16 * c )); then echo "FAIL: a pattern rule costs more than 1.6x the control (compiled per value?)"; exit 1; fi
echo "ok: a pattern rule is within 1.6x of the control"
