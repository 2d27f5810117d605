#!/usr/bin/env bash
# --allow-cross-namespace-from revoked while entries exist (adv11): a platform team's
# PropertyOverrides programmed into another namespace's ServiceDefaults; the controller restarts
# without the flag. Every entry of the platform's leaves that target (the target's own namespace's
# entry stays), their status says TargetNotAllowed, including one whose newest generation points
# back home and is invalid (its held last valid generation must not keep the entry in the other
# namespace); deleting them finishes (the finalizer goes), nothing of the tenant's is deleted.
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
for n in px py; do
  check "platform/$n programmed into tenant/web" kubectl wait --for=condition=Programmed "propertyoverride/$n" -n platform --timeout=30s
done
eventually "tenant/web holds own, platform/x, platform/y" 15 "own@1 platform/px@1 platform/py@1" qentries tenant

# the controller stops; py turns invalid, pointing home (no webhook registered here); back without the flag
kill -TERM "$LC_CONTROLLER_PID"
for ((i = 0; i < 200; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
po py platform 150 | kubectl apply -f - >/dev/null
lc_controller || exit 1
eventually "revoked: the platform's entries leave tenant/web, the tenant's stays" 20 "own@1" qentries tenant
eventually "revoked: platform/px Accepted=False" 15 TargetNotAllowed cond px Accepted reason platform
pgen() { kubectl get propertyoverride "$1" -n platform -o jsonpath='{.status.programmedGeneration}' 2>/dev/null; }
eventually "revoked: platform/px's status claims no programmed generation" 15 "" pgen px
eventually "revoked: platform/py's status claims no programmed generation" 15 "" pgen py
check "tenant/own still programmed" kubectl wait --for=condition=Programmed propertyoverride/own -n tenant --timeout=10s
check "revoked: no entry of the platform's comes back (3 s)" holds 3 sh -c "[ \"\$(kubectl get servicedefaults web -n tenant -o json | jq -r '[.spec.envoyExtensions[]? | .arguments.PropertyOverride.namespace // empty] | length')\" = 0 ]"
kubectl delete propertyoverride px py -n platform --timeout=30s >/dev/null
check "deleting them finishes (finalizers removed)" sh -c '[ -z "$(kubectl get propertyoverride -n platform -o name 2>/dev/null)" ]'
check "the tenant's ServiceDefaults and entry are untouched" test "$(qentries tenant)" = "own@1"
finish
