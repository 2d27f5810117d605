#!/usr/bin/env bash
# bench_cli.sh BUILD_DIR [LIST_ITEMS]: the one-shot command's cost (docs/benchmarks.md, "CLI").
# For `validate -f` of one example (a Cluster and a Listener patch) and for `patch`: instructions
# (callgrind: stable on a busy machine), best wall time of 20 runs, peak RSS, shared objects
# loaded; then `validate -f` of a generated List of LIST_ITEMS (default 200,000)
# PropertyOverrides, as YAML and as JSON: wall and CPU time, peak RSS against the input's size,
# and the reader's own peak (PO_DEBUG_STREAM_STATS). Prints numbers, never fails on speed. Uses
# valgrind and GNU time when installed; the Lists are generated into a temporary directory and
# removed.
set -u
build=${1:?usage: bench_cli.sh BUILD_DIR [LIST_ITEMS]} items=${2:-200000}
bin=$build/propertyoverride
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '{"name":"db","connect_timeout":"5s"}' >"$work/in.json"
printf '[{"op":"add","path":"/outlier_detection/max_ejection_percent","value":50}]' >"$work/p.json"
# One realistic Cluster tuning of three patches, each in another part of the schema (issue 25's
# case: a Duration, a wrapper of the outlier detection, a parent created for the load assignment).
{
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata:\n  name: api-payments\n'
  printf '  namespace: shop\nspec:\n  targetRef:\n    kind: ServiceDefaults\n    name: api\n  patches:\n'
  for pv in '/common_http_protocol_options/idle_timeout 60s' '/outlier_detection/max_ejection_percent 50' \
            '/load_assignment/policy/overprovisioning_factor 140'; do
    set -- $pv
    printf '    - resourceFilter:\n        resourceType: cluster\n        trafficDirection: outbound\n'
    printf '        services:\n          - name: payments\n      op: add\n      path: %s\n      value: %s\n' "$1" "$2"
  done
} >"$work/three.yaml"

best_wall() { # best of 20, in ms
  local best=999999 t0 t1 ms
  for _ in $(seq 20); do
    t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000 )); [ $ms -lt $best ] && best=$ms
  done
  printf '%d.%03d ms' $((best / 1000)) $((best % 1000))
}

one() {
  local name=$1; shift
  local ir=n/a rss=n/a libs
  if command -v valgrind >/dev/null; then
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
  fi
  [ -x /usr/bin/time ] && /usr/bin/time -f '%M' -o "$work/rss" "$@" >/dev/null 2>&1 && rss=$(tail -1 "$work/rss")
  libs=$(LD_TRACE_LOADED_OBJECTS=1 "$1" 2>/dev/null | grep -c '=>\|ld-linux')
  printf '%-34s %12s instructions  best wall %s  peak RSS %s KB  %s shared objects\n' "$name" "$ir" "$(best_wall "$@")" "$rss" "$libs"
}

echo "== one-shot commands ($bin)"
one "validate -f (Cluster patch)" "$bin" validate -f examples/valid/circuit-breakers.yaml
one "validate -f (Listener patch)" "$bin" validate -f examples/valid/listener-buffer-limits.yaml
one "validate -f (3 Cluster patches)" "$bin" validate -f "$work/three.yaml"
one "patch (Cluster)" "$bin" patch --message envoy.config.cluster.v3.Cluster --input "$work/in.json" --patches "$work/p.json"
one "version" "$bin" version

for format in yaml json; do
  echo "== validate -f of a $format List of $items PropertyOverrides (every 1,000th invalid)"
  "$here/gen_cli_list.sh" "$items" 1000 "$format" >"$work/list.$format"
  size=$(stat -c %s "$work/list.$format")
  if [ -x /usr/bin/time ]; then
    PO_DEBUG_STREAM_STATS=1 /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$bin" validate -f "$work/list.$format" >"$work/out" 2>"$work/err"
    read -r wall user sys kb < <(tail -1 "$work/t")
    printf 'input %d bytes: wall %s s (user %s s, sys %s s), peak RSS %d KB (%.2fx the input); %s; %s\n' "$size" \
      "$wall" "$user" "$sys" "$kb" "$(echo "$kb * 1024 / $size" | bc -l)" "$(grep '^stream:' "$work/err")" "$(tail -1 "$work/out")"
  fi
  rm -f "$work/list.$format"
done
