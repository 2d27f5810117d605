#!/usr/bin/env bash
# Every EnvoyFilter render prints for examples/istio (with each file's `# render-args:`), read
# back by cli_yaml2json, against Istio's published schema (@kubernetes-models/istio, installed
# by scripts/setup.sh into .deps/istio-node; PO_ISTIO_NODE_MODULES overrides). Then the check
# itself: a rendering with a broken applyTo must fail it.
. "$(dirname "$0")/lib.sh"
deps=${PO_DEPS_DIR:-.deps}
export PO_ISTIO_NODE_MODULES=${PO_ISTIO_NODE_MODULES:-$(cd "$deps" 2>/dev/null && pwd)/istio-node/node_modules}
if [ ! -d "$PO_ISTIO_NODE_MODULES/@kubernetes-models/istio" ]; then
  echo "FAIL missing $PO_ISTIO_NODE_MODULES/@kubernetes-models/istio: run scripts/setup.sh"; exit 1
fi
n=0
for f in examples/istio/*.yaml; do
  # shellcheck disable=SC2046
  "$bin" render -f "$f" $(sed -n 's/^# render-args: //p' "$f") >"$work/out.yaml" 2>"$work/err"
  check "render $f" 0 $? "$work/err"
  "$yaml2json" "$work/out.yaml" >"$work/out.json"
  node tests/cli/istio-schema/check.mjs "$work/out.json" >"$work/check" 2>&1
  check "schema $f" 0 $? "$work/check"
  n=$((n+1))
done
[ $n -ge 3 ] && pass=$((pass+1)) || { echo "FAIL only $n examples"; fail=$((fail+1)); }
# The check can fail: a value outside applyTo's enum.
"$bin" render -f examples/istio/mesh-wide-timeouts.yaml | sed 's/applyTo: CLUSTER/applyTo: CLUSTERS/' >"$work/bad.yaml"
"$yaml2json" "$work/bad.yaml" >"$work/bad.json"
node tests/cli/istio-schema/check.mjs "$work/bad.json" >"$work/check" 2>&1
check "schema refuses a bad applyTo" 1 $?
contains "schema names the field" "$work/check" "applyTo"
finish
