#!/usr/bin/env bash
# The one-shot CLI when memory runs out: EVERY allocation of a run fails in turn (failalloc.c,
# preloaded; PO_FAIL_ALLOC_AT=N fails the Nth), from the first (the schema's on-demand loads,
# the decoders) to the last (the report, the YAML emission). Each run must either give exactly
# what a normal run gives (the same exit code, 0 or 1, and the same stdout), or print nothing on
# stdout and exit 2 saying "out of memory" on stderr: never a valid input called invalid (a
# schema load that failed for lack of memory taken for "no such field"), an invalid one called
# valid, a partial output, a crash or a hang (each run has 60 s).
# validate -f: every N. render, explain and patch: every 4th N by default (a stride, for time:
# runs cost 30-80 ms each on the shared 2-core machine, not 10, and every N of all six is about
# 7,600 runs, 6-9 minutes); PO_OOM_STRIDE=1 runs every N of those too.
. tests/cli/lib.sh
shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")

. tests/cli/oom_lib.sh

stride=${PO_OOM_STRIDE:-4}
torture "validate valid" 1 validate -f examples/valid/circuit-breakers.yaml
torture "validate invalid" 1 validate -f examples/invalid/unknown-field.yaml
torture "render istio" "$stride" render -f examples/istio/outlier-detection.yaml
torture "render eg" "$stride" render -f examples/envoy-gateway/gateway-wide-timeouts.yaml
torture "explain" "$stride" explain cluster/outlier_detection/max_ejection_percent
# hand-written natives: their values decoded and Envoy's rules walked (json-c's writer, out of
# memory, returned texts with pieces missing: a wrong decode error, or a crash on NULL)
torture "validate EnvoyFilter" "$stride" validate -f tests/cli/testdata/native-rules/ef-required.yaml
torture "validate EnvoyPatchPolicy" "$stride" validate -f tests/cli/testdata/native-rules/epp-path.yaml
# an unknown field other snapshots have: the sentence naming them and the releases accepting it
# (the natives' after "No such field", inside an Any too; explain's), built in the run's arena
torture "validate natives, newer fields" "$stride" validate -f tests/cli/testdata/envoy-api/newer-fields-native.yaml \
  -f tests/cli/testdata/envoy-api/dns-cluster-ef.yaml --mesh istio@1.27 --mesh envoy-gateway@1.5
torture "explain, newer field" "$stride" explain route/vhost_header --mesh istio@1.27
printf '%s' '{"name":"c","connect_timeout":"5s"}' >"$work/in.json"
printf '%s' '[{"op":"add","path":"/outlier_detection/max_ejection_percent","value":50}]' >"$work/p.json"
# patch: json-c 0.16 turned some of its own failed allocations while parsing --patches into a
# wrong result instead of a NULL ("invalid JSON: data after the value", exit 2 without "out of
# memory"; a patch whose value silently became null, exit 1), at allocations 617-633 of 640,
# until cmake/json-c-patches: every allocation of 654 now gives the normal result or exit 2.
torture "patch" "$stride" patch --message envoy.config.cluster.v3.Cluster --input "$work/in.json" --patches "$work/p.json"
# the shared reader's refusals and the walk's entries not read (issue 21): a directory with a
# manifest, a FIFO, a link to a device and a file of another name; then one with nothing to read
# (exit 2 in the reference run too: torture takes 0 and 1 only, so it is run by hand here)
mkdir -p "$work/hostile/sub" "$work/nothing"
cp examples/valid/circuit-breakers.yaml "$work/hostile/sub/"
mkfifo "$work/hostile/pipe.yaml" "$work/nothing/pipe.yaml"
ln -s /dev/zero "$work/hostile/zero.json"
printf 'notes\n' >"$work/hostile/README.md"
torture "validate entries not read" 1 validate -f "$work/hostile"
"$bin" validate -f "$work/nothing" >"$work/want" 2>&1
PO_COUNT_ALLOC="$work/count" LD_PRELOAD="$shim" "$bin" validate -f "$work/nothing" >/dev/null 2>&1
total=$(cat "$work/count") bad=0
for ((n = 1; n <= total; n++)); do
  PO_FAIL_ALLOC_AT=$n LD_PRELOAD="$shim" timeout 60 "$bin" validate -f "$work/nothing" >"$work/out" 2>&1
  rc=$?
  if [ $rc -eq 2 ] && { cmp -s "$work/out" "$work/want" || grep -q "out of memory" "$work/out"; }; then pass=$((pass+1)); continue; fi
  fail=$((fail+1)); bad=$((bad+1)); [ $bad -le 5 ] && { echo "FAIL validate nothing read: allocation $n of $total: exit $rc"; head -3 "$work/out"; }
done
echo "validate nothing read: allocations 1 to $total failed in turn, $bad wrong"
finish
