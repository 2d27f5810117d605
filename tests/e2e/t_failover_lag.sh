#!/usr/bin/env bash
# A leadership change inside the window between a target write and its echo: two replicas, the
# ServiceDefaults watch held (the local server's holdWatchMs fault, 12 s), the leader killed as soon
# as the write adding a PropertyOverride's entry shows on the server, and that PropertyOverride
# deleted at once. The new leader has no note of the old one's write (the notes live in one
# process's memory: po_TargetIndex_CacheBehind cannot help), its cache is at the version written
# over, without the entry, and judged there the target looks current. The finalizer is the only
# thing that removes the entry (one naming a PropertyOverride that is gone is someone else's), so
# before releasing it without a write the reconcile reads the target from the server
# (po_ReconcileIO.read_target): the entry must leave the target and the deletion finish. Without
# that read the entry stayed for good ('gone@1 keep@1'). Local only (fault injection).
. "$(dirname "$0")/lib.sh"
build=$1
hold=${PO_FAILOVER_LAG_HOLD_MS:-12000}
[ "${LC_KIND:-local}" = local ] || { echo "skipped: holdWatchMs is the local server's fault"; exit 0; }
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_controller || exit 1
holder() { kubectl get lease propertyoverride-controller -n default -o jsonpath='{.spec.holderIdentity}'; }
faults() { lc_curl /admin/faults -X POST -H 'Content-Type: application/json' -d "$1" >/dev/null; }
po() { # name value
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s}\nspec:\n  targetRef: {group: consul.hashicorp.com, kind: ServiceDefaults, name: web}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' "$1" "$2"
}
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web}
spec: {protocol: http}
YAML
po keep 10 | kubectl apply -f - >/dev/null
eventually "keep programmed" 30 "keep@1" entries servicedefaults web
leader=""
for ((i = 0; i < 100; i++)); do
  leader=$(holder | sed -n 's/.*_\([0-9]*\)$/\1/p')
  [ -n "$leader" ] && break
  sleep 0.1
done
[ -n "$leader" ] && kill -0 "$leader" 2>/dev/null || { echo "FAIL no leader pid in the lease's holder: '$(holder)'"; exit 1; }
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"servicedefaults\"}"
po gone 67 | kubectl apply -f - >/dev/null
for ((i = 0; i < 400; i++)); do
  lc_curl /apis/consul.hashicorp.com/v1alpha1/namespaces/default/servicedefaults/web | grep -q '"gone"' && break
  sleep 0.025
done
kill -9 "$leader"
lc_curl /apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides/gone -X DELETE >/dev/null
sleep $((hold / 1000 + 3))
faults '{"holdWatchMs":0}'
eventually "gone's entry left web" 30 "keep@1" entries servicedefaults web
eventually "gone's deletion finished" 30 "" sh -c "kubectl get propertyoverride gone -o name 2>/dev/null"
finish
