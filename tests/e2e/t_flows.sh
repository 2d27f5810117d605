#!/usr/bin/env bash
# kubectl flows end to end: install, create/update/delete, denials, webhook down, drift repair,
# pre-existing extensions, several overrides on one target, conflicts and priority (one target, and
# ProxyDefaults vs ServiceDefaults), printer columns, explain, wait.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_register_webhook Fail

out=$(kubectl api-resources --api-group=propertyoverride.io 2>&1)
contains "short name pov is served" "$out" "pov"
out=$(kubectl explain propertyoverride.spec.patches.resourceFilter 2>&1)
contains "kubectl explain describes resourceFilter" "$out" "trafficDirection"
out=$(kubectl explain propertyoverride.spec.priority 2>&1)
contains "kubectl explain describes priority" "$out" "lower is applied first"

kubectl apply -f examples/consul/ >/dev/null
kubectl apply -f examples/valid/ >/dev/null
check "kubectl wait Programmed" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=30s
eventually "api keeps builtin/lua first, ours after in name order" 10 \
  "builtin/lua api-billing-db-tcp-keepalive@1 api-connect-timeout@1 api-listener-buffer-limits@1 api-payments-outlier-detection@1" \
  entries servicedefaults api
check "frontend created and labelled" test "$(kubectl get servicedefaults frontend -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}')" = propertyoverride
out=$(kubectl get propertyoverrides 2>&1)
contains "printer columns" "$out" "TARGET"
contains "printer column values" "$out" "api-connect-timeout"

# denials: every invalid example is refused; those only the webhook can refuse carry its texts
# (the others the API server's schema refuses first)
for f in examples/invalid/*.yaml; do
  out=$(kubectl apply -f "$f" 2>&1)
  if kubectl get -f "$f" >/dev/null 2>&1; then bad "$f was admitted"; continue; fi
  ok "$(basename "$f") refused"
  grep -q '^# rejected-by: webhook$' "$f" || continue
  while IFS= read -r want; do
    contains "$(basename "$f"): denial" "$out" "$want"
  done < <(sed -n 's/^# webhook-\(message\|rule\|suggests\): //p' "$f")
done
out=$(kubectl apply --server-side -f examples/invalid/unknown-field.yaml 2>&1)
contains "server-side apply denied too" "$out" "no match for field 'max_ejection_percentage'!"

# server-side apply of a valid object
check "kubectl apply --server-side" kubectl apply --server-side -f examples/valid/tcp-keepalive.yaml

# update flows
kubectl patch propertyoverride api-connect-timeout --type=merge \
  -p '{"spec":{"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/connect_timeout","value":"7s"}]}}' >/dev/null
eventually "a valid update goes live as generation 2" 10 "2" \
  sh -c "kubectl get propertyoverride api-connect-timeout -o jsonpath='{.status.programmedGeneration}'"
out=$(kubectl get servicedefaults api -o json)
contains "the friendly 7s was written as seconds" "$out" '"seconds": 7'

# webhook down: failurePolicy Ignore and the server gone; the controller still validates
lc_unregister_webhook
kubectl patch propertyoverride api-connect-timeout --type=merge \
  -p '{"spec":{"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/connect_timeout","value":{"seconds":0}}]}}' >/dev/null
eventually "invalid update: Accepted False" 10 "False" cond api-connect-timeout Accepted status
contains "invalid update: the reason names the rule" "$(cond api-connect-timeout Accepted message)" "0s violates duration gt 0s"
contains "invalid update: generation 2 is still live" "$(cond api-connect-timeout Programmed message)" "generation 2 is still live"
out=$(kubectl describe propertyoverride api-connect-timeout 2>&1)
contains "kubectl describe shows the Warning event" "$out" "Invalid"
eventually "invalid update: the target keeps generation 2" 5 \
  "builtin/lua api-billing-db-tcp-keepalive@1 api-connect-timeout@2 api-listener-buffer-limits@1 api-payments-outlier-detection@1" \
  entries servicedefaults api
lc_register_webhook Fail

# drift: someone removes our entries by hand; they come back
kubectl patch servicedefaults api --type=merge -p '{"spec":{"envoyExtensions":[{"name":"builtin/lua","arguments":{"Script":"-- edited"}}]}}' >/dev/null 2>&1
eventually "drift repaired" 10 \
  "builtin/lua api-billing-db-tcp-keepalive@1 api-connect-timeout@2 api-listener-buffer-limits@1 api-payments-outlier-detection@1" \
  entries servicedefaults api
contains "their own extension kept as they edited it" "$(kubectl get servicedefaults api -o json)" "-- edited"

# overlap: both programmed, each names the other
kubectl apply -f examples/overlap/ >/dev/null
eventually "overlap: Programmed reason" 10 "Overlapping" cond frontend-connect-timeout-team Programmed reason
contains "overlap: names the other" "$(cond frontend-connect-timeout-team Programmed message)" "frontend-connect-timeout-platform"
contains "overlap: and the other way" "$(cond frontend-connect-timeout-platform Programmed message)" "frontend-connect-timeout-team"

# conflicts on resolved field chains (issue 11): checkout-a sets a field of outlier_detection,
# checkout-z replaces outlier_detection whole; same priority, so by name z is applied last and
# wins; both statuses say so. priority 10 on a reverses the order of the entries and the winner.
winner() { cond "$1" Programmed message | grep -oE 'so (this one|[^ ]+) wins where both match' | head -1; }
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: checkout-a}
spec:
  targetRef: {name: checkout}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: 50
---
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: checkout-z}
spec:
  targetRef: {name: checkout}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection
      value: {consecutive_5xx: 7}
EOF
eventually "conflict: a is Overlapping" 10 "Overlapping" cond checkout-a Programmed reason
eventually "conflict: z is Overlapping" 10 "Overlapping" cond checkout-z Programmed reason
contains "conflict: a names z, the field and the order" "$(cond checkout-a Programmed message)" \
  "sets a field inside envoy.config.cluster.v3.Cluster.outlier_detection, which PropertyOverride default/checkout-z patches[0] /outlier_detection replaces; default/checkout-z is applied after this one (same priority 0, then by name)"
eventually "conflict: a says z wins" 10 "so default/checkout-z wins where both match" winner checkout-a
eventually "conflict: z says it wins" 10 "so this one wins where both match" winner checkout-z
eventually "conflict: entries by name" 10 "checkout-a@1 checkout-z@1" entries servicedefaults checkout
out=$(kubectl get pov checkout-a checkout-z 2>&1)
contains "kubectl get pov: PRIORITY column" "$out" "PRIORITY"
echo "$out"
kubectl patch pov checkout-a --type=merge -p '{"spec":{"priority":10}}' >/dev/null
eventually "priority 10: a's entry goes after z's" 10 "checkout-z@1 checkout-a@2" entries servicedefaults checkout
eventually "priority 10: a wins" 10 "so this one wins where both match" winner checkout-a
eventually "priority 10: z says a wins" 10 "so default/checkout-a wins where both match" winner checkout-z
contains "priority 10: the reason is the priority" "$(cond checkout-z Programmed message)" "priority 10 > this one's 0"
out=$(kubectl get pov checkout-a 2>&1)
contains "kubectl get pov shows the priority" "$(echo "$out" | awk 'NR==2 {print $3}')" "10"
out=$(kubectl describe pov checkout-z 2>&1)
contains "kubectl describe: the Overlapping condition" "$out" "Overlapping"
contains "kubectl describe: names the other" "$out" "default/checkout-a"
echo "$out" | sed -n '/Conditions:/,$p' | head -30

# across targets: Consul applies the ProxyDefaults global extensions before a service's, so a
# mesh-wide PropertyOverride loses to a service's on the same field chain, and both say so; a
# change of the mesh-wide one refreshes the service's status (and its deletion clears it)
contains "ProxyDefaults vs ServiceDefaults: the mesh-wide one names the service's" \
  "$(cond mesh-tcp-keepalive Programmed message)" "PropertyOverride default/api-billing-db-tcp-keepalive (ServiceDefaults default/api)"
contains "ProxyDefaults vs ServiceDefaults: the service's names the mesh-wide one" \
  "$(cond api-billing-db-tcp-keepalive Programmed message)" "PropertyOverride default/mesh-tcp-keepalive (ProxyDefaults default/global)"
eventually "ProxyDefaults vs ServiceDefaults: the service's wins" 10 "so this one wins where both match" winner api-billing-db-tcp-keepalive
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: mesh-outlier}
spec:
  targetRef: {kind: ProxyDefaults, name: global}
  priority: 1000
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/consecutive_5xx
      value: 3
EOF
programmed_msg() { kubectl get pov "$1" -o jsonpath='{.status.conditions[?(@.type=="Programmed")].message}' | grep -o "$2" | head -1; }
eventually "a new mesh-wide one: the service's status names it" 10 "mesh-outlier" programmed_msg checkout-z mesh-outlier
eventually "a new mesh-wide one: it loses whatever its priority" 10 "so default/checkout-z wins where both match" \
  programmed_msg mesh-outlier "so default/checkout-z wins where both match"
kubectl get pov mesh-outlier api-billing-db-tcp-keepalive mesh-tcp-keepalive checkout-a checkout-z 2>&1
kubectl delete pov mesh-outlier --wait=true --timeout=30s >/dev/null
eventually "the mesh-wide one deleted: the service's status no longer names it" 10 "" programmed_msg checkout-z mesh-outlier
kubectl delete pov checkout-a checkout-z --wait=true --timeout=30s >/dev/null

# delete: only ours removed; the object we created goes when empty
kubectl delete -f examples/valid/ -f examples/overlap/ --wait=true --timeout=30s >/dev/null
eventually "delete: api keeps only its own extension" 10 "builtin/lua" entries servicedefaults api
eventually "delete: frontend (ours) is gone" 10 "" sh -c 'kubectl get servicedefaults frontend -o name 2>/dev/null'
eventually "delete: no PropertyOverride left" 10 "" sh -c 'kubectl get propertyoverrides -o name'

# metrics and probes
out=$(curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics")
contains "reconcile metrics" "$out" 'controller_runtime_reconcile_total{controller="propertyoverride",result="success"}'
contains "webhook metrics" "$out" "propertyoverride_webhook_requests_total"
contains "readyz verbose" "$(curl -s "http://127.0.0.1:$LC_PROBE_PORT/readyz?verbose")" "[+]informers-synced ok"
finish
