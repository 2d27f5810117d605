#!/usr/bin/env bash
# The mutating webhook and the controller never fight (issue 11 parts 2 and 3): four
# PropertyOverrides with priorities, all conflicting on outlier_detection, on a ServiceDefaults
# whose git version (a builtin/lua entry) is re-applied 10 times both ways while one priority
# changes and an out-of-range priority is refused by the CRD. Afterwards the entries are in
# priority-then-name order, each status names the right winner, and with nothing more applied
# the target's resourceVersion stays put: no write answers another write.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1
cat >"$e2e_work/web.yaml" <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web}
spec:
  protocol: http
  envoyExtensions:
    - name: builtin/lua
      required: false
      arguments: {ProxyType: connect-proxy, Listener: inbound, Script: "function envoy_on_request(r) end"}
YAML
po() { # name priority path value
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s}\nspec:\n  targetRef: {name: web}\n  priority: %s\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: %s\n      value: %s\n---\n' "$1" "$2" "$3" "$4"
}
{
  po z 5 /outlier_detection/max_ejection_percent 10
  po a 5 /outlier_detection/max_ejection_percent 20
  po m -3 /outlier_detection '{consecutive_5xx: 7}'
  po b 100 /outlier_detection/max_ejection_percent 30
} >"$e2e_work/pos.yaml"
kubectl apply -f "$e2e_work/web.yaml" >/dev/null
kubectl apply -f "$e2e_work/pos.yaml" >/dev/null
check "programmed" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s
eventually "entries by priority, then name" 30 "builtin/lua m@1 a@1 z@1 b@1" entries servicedefaults web
for i in $(seq 1 10); do
  kubectl apply -f "$e2e_work/web.yaml" >/dev/null 2>&1 || bad "round $i: client-side apply"
  kubectl apply --server-side --force-conflicts -f "$e2e_work/web.yaml" >/dev/null 2>&1 || bad "round $i: server-side apply"
  if [ "$i" = 5 ]; then kubectl patch propertyoverride b --type=merge -p '{"spec":{"priority":-10}}' >/dev/null; fi
  if [ "$i" = 7 ]; then
    if kubectl patch propertyoverride a --type=merge -p '{"spec":{"priority":3000000000}}' >/dev/null 2>&1; then
      bad "an out-of-range priority was admitted"
    fi
  fi
done
eventually "entries after b's priority change" 30 "builtin/lua b@2 m@1 a@1 z@1" entries servicedefaults web
eventually "z names a, applied before it on the tie, and wins" 30 \
  "default/a is applied before this one (same priority 5, then by name), so this one wins where both match" \
  sh -c "kubectl get propertyoverride z -o jsonpath='{.status.conditions[?(@.type==\"Programmed\")].message}' | grep -o 'default/a is applied before this one (same priority 5, then by name), so this one wins where both match'"
contains "b names m, applied after it, as the winner" "$(cond b Programmed message)" "default/m is applied after this one (priority -3 > this one's -10), so default/m wins where both match"
rv1=$(kubectl get servicedefaults web -o jsonpath='{.metadata.resourceVersion}')
sleep 6
rv2=$(kubectl get servicedefaults web -o jsonpath='{.metadata.resourceVersion}')
check "quiet: no write answers another ($rv1 -> $rv2)" test "$rv1" = "$rv2"
finish
