#!/usr/bin/env bash
# The one-shot CLI when memory runs out: EVERY allocation of a run fails in turn (failalloc.c,
# preloaded; PO_FAIL_ALLOC_AT=N fails the Nth), from the first (the schema's on-demand loads,
# the decoders) to the last (the report, the YAML emission). Each run must either give exactly
# what a normal run gives (the same exit code, 0 or 1, and the same stdout), or print nothing on
# stdout and exit 2 saying "out of memory" on stderr: never a valid input called invalid (a
# schema load that failed for lack of memory taken for "no such field"), an invalid one called
# valid, a partial output, a crash or a hang (each run has 60 s). No stride: every N is run
# (about 8,000 runs of ~10 ms each).
. tests/cli/lib.sh
shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")

# torture LABEL ARGS...: the reference run, the count, then every allocation failed in turn.
torture() {
  local label=$1 n total want_rc rc bad=0; shift
  "$bin" "$@" >"$work/want" 2>"$work/want_err"
  want_rc=$?
  if [ $want_rc -gt 1 ]; then echo "FAIL $label: reference run exit $want_rc"; cat "$work/want_err"; fail=$((fail+1)); return; fi
  PO_COUNT_ALLOC="$work/count" LD_PRELOAD="$shim" "$bin" "$@" >"$work/out" 2>/dev/null
  rc=$?
  if [ $rc -ne $want_rc ] || ! cmp -s "$work/out" "$work/want"; then
    echo "FAIL $label: the counted run differs from the reference (exit $rc)"; fail=$((fail+1)); return
  fi
  total=$(cat "$work/count")
  for ((n = 1; n <= total; n++)); do
    PO_FAIL_ALLOC_AT=$n LD_PRELOAD="$shim" timeout 60 "$bin" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq $want_rc ] && cmp -s "$work/out" "$work/want"; then pass=$((pass+1)); continue; fi
    if [ $rc -eq 2 ] && [ ! -s "$work/out" ] && grep -q "out of memory" "$work/err"; then pass=$((pass+1)); continue; fi
    fail=$((fail+1)); bad=$((bad+1))
    if [ $bad -le 10 ]; then
      echo "FAIL $label: allocation $n of $total: exit $rc (want $want_rc or 2; 124: hung; above 128: a signal)"
      head -3 "$work/err"; head -3 "$work/out"
    fi
  done
  echo "$label: allocations 1 to $total failed in turn, $bad wrong"
}

torture "validate valid" validate -f examples/valid/circuit-breakers.yaml
torture "validate invalid" validate -f examples/invalid/unknown-field.yaml
torture "render istio" render -f examples/istio/outlier-detection.yaml
torture "render eg" render -f examples/envoy-gateway/gateway-wide-timeouts.yaml
torture "explain" explain cluster/outlier_detection/max_ejection_percent
printf '%s' '{"name":"c","connect_timeout":"5s"}' >"$work/in.json"
printf '%s' '[{"op":"add","path":"/outlier_detection/max_ejection_percent","value":50}]' >"$work/p.json"
torture "patch" patch --message envoy.config.cluster.v3.Cluster --input "$work/in.json" --patches "$work/p.json"
finish
