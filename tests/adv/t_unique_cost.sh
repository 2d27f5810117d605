#!/usr/bin/env bash
# adv-22: repeated.unique is judged by a pairwise scan (engine/src/pgv.c check_unique), quadratic
# in a list's length up to 4096 items. An EnvoyFilter VIRTUAL_HOST ADD of 1.1 MB with 40 routes,
# each with a 4096-item internal_redirect_policy.response_headers_to_copy (unique: true), took
# 4.9-8.2 s of CPU in `validate -f` (0.39 s before the rule walk); the EnvoyFilter webhook runs the
# same check under timeoutSeconds 5 with failurePolicy Ignore, so such an object (with anything
# invalid beside it) would be admitted unchecked. The control: the same items in
# request_headers_to_remove (a list with item rules and no `unique`). Fails when the unique file
# costs more than 4 times the control's CPU.
# Usage: t_unique_cost.sh BUILD [routes]
set -euo pipefail
build=$1; routes=${2:-40}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
gen() { # gen FIELD FILE
  /usr/bin/python3 - "$1" "$routes" >"$2" <<'PY'
import json, sys
field, n = sys.argv[1], int(sys.argv[2])
def b36(i):
    s = ""
    while True:
        s = "0123456789abcdefghijklmnopqrstuvwxyz"[i % 36] + s; i //= 36
        if i == 0: return s
items = [b36(i) for i in range(4096)]
def route(k):
    r = {"name": "r%d" % k, "match": {"prefix": "/"}, "route": {"cluster": "c", "internal_redirect_policy": {}}}
    if field == "unique": r["route"]["internal_redirect_policy"]["response_headers_to_copy"] = items
    else: r["request_headers_to_remove"] = items
    return r
vh = {"name": "v", "domains": ["*"], "routes": [route(k) for k in range(n)]}
print(json.dumps({"apiVersion": "networking.istio.io/v1alpha3", "kind": "EnvoyFilter",
                  "metadata": {"name": "x", "namespace": "d"},
                  "spec": {"configPatches": [{"applyTo": "VIRTUAL_HOST", "match": {"context": "SIDECAR_OUTBOUND"},
                                              "patch": {"operation": "ADD", "value": vh}}]}}))
PY
}
gen unique "$work/unique.json"; gen control "$work/control.json"
cpu() { /usr/bin/time -f '%U %S' -o "$work/t" "$build/propertyoverride" validate -f "$1" >/dev/null 2>&1 || true; awk '{printf "%d\n", ($1 + $2) * 1000}' "$work/t"; }
u=$(cpu "$work/unique.json"); c=$(cpu "$work/control.json")
echo "figure: $routes lists of 4096 items: unique ${u} ms of CPU, control ${c} ms ($(wc -c <"$work/unique.json") bytes)"
(( c < 50 )) && c=50
if (( u > 4 * c )); then echo "FAIL: repeated.unique costs more than 4x a list with item rules (quadratic)"; exit 1; fi
echo "ok: repeated.unique is within 4x of the control"
