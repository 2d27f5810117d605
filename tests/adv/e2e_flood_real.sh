#!/usr/bin/env bash
# ADV: the webhook's memory budget against the real kube-apiserver (issue 21 item 3):
#  1. bodiless holders (tls_flood.py hold: 80 TLS connections, 4 addresses, each declaring a body
#     just under the "large" threshold and sending a byte every 4 s) while kubectl applies
#     PropertyOverrides: does a legit write get through within timeoutSeconds (5)?
#  2. one f1 quote-hidden review over TLS: the controller's peak resident memory (VmHWM).
#   PO_APISERVER=real bash tests/adv/e2e_flood_real.sh BUILD_DIR   (or tests/e2e/run_real.sh)
. "$(dirname "$0")/../e2e/lib.sh"
build=$1
here=$(cd "$(dirname "$0")" && pwd)
lc_start "$build" "$e2e_work" || exit 1
kubectl create namespace shop >/dev/null
lc_controller || exit 1
lc_register_webhook Fail
metric() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
hwm() { awk '/^VmHWM/ {print $2}' /proc/$LC_CONTROLLER_PID/status; }
pov() {
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: shop}\nspec:\n  targetRef: {kind: ServiceDefaults, name: api}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /connect_timeout\n      value: 2s\n' "$1"
}
out=$(pov before | kubectl apply -f - 2>&1)
contains "a write passes before the flood" "$out" "created"
echo "controller VmHWM before: $(hwm) kB"

small=$(( (100663296 / 64 - 65536 - 1) / 29 ))
/usr/bin/python3 "$here/tls_flood.py" hold 127.0.0.1 "$LC_WEBHOOK_PORT" "$LC_WORK/tls/ca.crt" 40 80 "$small" 2 4 >"$e2e_work/flood" 2>&1 &
flooder=$!
sleep 5
echo "in flight under the flood: $(metric propertyoverride_webhook_memory_inflight_bytes) bytes"
passed=0 failed=0
i=0
while kill -0 "$flooder" 2>/dev/null && [ $i -lt 12 ]; do
  i=$((i + 1))
  t0=$(date +%s.%N)
  if pov "during-$i" | kubectl apply -f - >"$e2e_work/apply-$i" 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  t1=$(date +%s.%N)
  echo "apply $i: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s: $(head -c 200 "$e2e_work/apply-$i")"
done
wait "$flooder"
cat "$e2e_work/flood"
echo "refusals: $(metric propertyoverride_webhook_memory_refusals_total)"
check "legit writes pass during a bodiless flood ($passed of $((passed + failed)) passed)" test $((passed * 2)) -ge $((passed + failed))
eventually "the budget is free again" 15 0 metric propertyoverride_webhook_memory_inflight_bytes

out=$(/usr/bin/python3 "$here/tls_flood.py" hidden 127.0.0.1 "$LC_WEBHOOK_PORT" "$LC_WORK/tls/ca.crt" 2>&1)
echo "hidden review answered: $out; controller VmHWM after it: $(hwm) kB (budget 96 MiB)"
check "the controller's peak stays under 256 MiB after one 3 MB review" test "$(hwm)" -lt 262144
check "the controller is alive" kill -0 "$LC_CONTROLLER_PID"
finish
