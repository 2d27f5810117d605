#!/usr/bin/env bash
# --allow-cross-namespace-from revoked while entries exist (adv11): a platform team's
# PropertyOverrides programmed into another namespace's ServiceDefaults; the controller restarts
# without the flag. Every entry of the platform's leaves that target (the target's own namespace's
# entry stays), their status says TargetNotAllowed, including one whose newest generation points
# back home and is invalid (its held last valid generation must not keep the entry in the other
# namespace); deleting them finishes (the finalizer goes), nothing of the tenant's is deleted.
# Before that, while it runs: pz's last valid generation held in tenant/web, the tenant deletes
# that ServiceDefaults and the controller writes it again; pz's status says the held generation
# is programmed once more (its home, reconciled while tenant/web was gone, had said none was).
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
lc_controller --allow-cross-namespace-from=platform || exit 1
kubectl create namespace tenant >/dev/null
kubectl create namespace platform >/dev/null
po() { # name namespace value [targetRef.namespace]
  cat <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: $1, namespace: $2}
spec:
  targetRef: {kind: ServiceDefaults, name: web${4:+, namespace: $4}}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: $3
YAML
}
qentries() {
  kubectl get servicedefaults web -n "$1" -o json 2>/dev/null | jq -r '[.spec.envoyExtensions // [] | .[] |
    .arguments.PropertyOverride | "\(if .namespace then .namespace + "/" else "" end)\(.name)@\(.generation)"] | sort | join(" ")'
}
po own tenant 10 | kubectl apply -f - >/dev/null
po px platform 20 tenant | kubectl apply -f - >/dev/null
po py platform 30 tenant | kubectl apply -f - >/dev/null
po pz platform 40 tenant | kubectl apply -f - >/dev/null
for n in px py pz; do
  check "platform/$n programmed into tenant/web" kubectl wait --for=condition=Programmed "propertyoverride/$n" -n platform --timeout=30s
done
eventually "tenant/web holds own, platform/x, platform/y, platform/z" 15 "own@1 platform/px@1 platform/py@1 platform/pz@1" qentries tenant
pgen() { kubectl get propertyoverride "$1" -n platform -o jsonpath='{.status.programmedGeneration}' 2>/dev/null; }

# while it runs: pz invalid, pointing home (generation 1 held in tenant/web). The tenant deletes
# tenant/web: that queues pz's home (platform/web, of the same name: it waited for tenant/web to
# go), whose status then rightly says nothing is live; the controller writes tenant/web again
# with pz's held entry, and that write must queue pz's home again (its echo is not reconciled).
po pz platform 150 | kubectl apply -f - >/dev/null
held_state() { echo "$(cond "$1" Accepted reason platform) $(pgen "$1")"; }
eventually "held: platform/pz Accepted=False, its generation 1 programmed" 15 "Invalid 1" held_state pz
kubectl delete servicedefaults web -n tenant >/dev/null
eventually "tenant/web deleted by the tenant, written again with the held entry" 20 "own@1 platform/px@1 platform/py@1 platform/pz@1" qentries tenant
eventually "platform/pz's status says its held generation 1 is programmed again" 15 1 pgen pz

# the controller stops; py turns invalid, pointing home (no webhook registered here); back without the flag
kill -TERM "$LC_CONTROLLER_PID"
for ((i = 0; i < 200; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
po py platform 150 | kubectl apply -f - >/dev/null
lc_controller || exit 1
eventually "revoked: the platform's entries leave tenant/web, the tenant's stays" 20 "own@1" qentries tenant
eventually "revoked: platform/px Accepted=False" 15 TargetNotAllowed cond px Accepted reason platform
eventually "revoked: platform/px's status claims no programmed generation" 15 "" pgen px
eventually "revoked: platform/py's status claims no programmed generation" 15 "" pgen py
eventually "revoked: platform/pz's status claims no programmed generation" 15 "" pgen pz
check "tenant/own still programmed" kubectl wait --for=condition=Programmed propertyoverride/own -n tenant --timeout=10s
check "revoked: no entry of the platform's comes back (3 s)" holds 3 sh -c "[ \"\$(kubectl get servicedefaults web -n tenant -o json | jq -r '[.spec.envoyExtensions[]? | .arguments.PropertyOverride.namespace // empty] | length')\" = 0 ]"
kubectl delete propertyoverride px py pz -n platform --timeout=30s >/dev/null
check "deleting them finishes (finalizers removed)" sh -c '[ -z "$(kubectl get propertyoverride -n platform -o name 2>/dev/null)" ]'
check "the tenant's ServiceDefaults and entry are untouched" test "$(qentries tenant)" = "own@1"
finish
