#!/usr/bin/env bash
# render when memory runs out: the Nth allocation fails (failalloc.c, preloaded), for each of
# the last 600 allocations of a render of testdata/render (and the last 300 and 500 of an Istio and an
# Envoy Gateway example's) (reading the current ServiceDefaults,
# the Consul arguments, the plans, the YAML emission; the earlier ones load the schema and
# compile). Each run must either print exactly what a normal run prints (exit 0), or print
# nothing and exit 2 saying "out of memory": never exit 0 with a rendering missing a target, an
# entry or a field, which a pipeline would apply as if it were whole; never a valid input called
# invalid (exit 1), a crash or a hang (each run has 60 s).
. tests/cli/lib.sh
shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
# sweep LABEL INPUT WINDOW: a reference render, the count, then each of the last WINDOW
# allocations failed in turn, judged as the header says.
sweep() {
  local label=$1 in=$2 window=$3 total first n rc
  "$bin" render -f "$in" >"$work/want" 2>"$work/err"
  check "$label render reference" 0 $? "$work/err" ""
  PO_COUNT_ALLOC="$work/count" LD_PRELOAD="$shim" "$bin" render -f "$in" >"$work/out" 2>&1
  check "$label render counted" 0 $?
  total=$(cat "$work/count")
  first=$(( total > window ? total - window : 1 ))
  for ((n = first; n <= total; n++)); do
    PO_FAIL_ALLOC_AT=$n LD_PRELOAD="$shim" timeout 60 "$bin" render -f "$in" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq 0 ]; then
      if cmp -s "$work/out" "$work/want"; then pass=$((pass+1)); else
        echo "FAIL $label allocation $n of $total: exit 0 with a different rendering:"; diff "$work/want" "$work/out" | head -20
        fail=$((fail+1))
      fi
    elif [ $rc -eq 2 ]; then
      if [ -s "$work/out" ]; then
        echo "FAIL $label allocation $n of $total: exit 2 but YAML was printed:"; head -5 "$work/out"; fail=$((fail+1))
      elif ! grep -q "out of memory" "$work/err"; then
        echo "FAIL $label allocation $n of $total: exit 2 without saying out of memory:"; cat "$work/err"; fail=$((fail+1))
      else pass=$((pass+1)); fi
    else
      echo "FAIL $label allocation $n of $total: exit $rc (124: hung; above 128: a signal):"; head -5 "$work/err"; fail=$((fail+1))
    fi
  done
  echo "$label: allocations $first to $total of $total failed in turn"
}

sweep consul "$data/render" 600
# An Istio target (an EnvoyFilter from the IR).
sweep istio examples/istio/outlier-detection.yaml 300
# An Envoy Gateway target (an EnvoyPatchPolicy from the IR, the Gateway and HTTPRoutes read from
# the inputs): all after the compile (validate -f alone makes 1,919 of the 2,442; cli_oom fails
# the compile's).
sweep eg examples/envoy-gateway/gateway-wide-timeouts.yaml 500
finish
