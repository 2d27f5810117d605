#!/usr/bin/env bash
# adv27b: "Removing the finalizer by hand from a PropertyOverride being deleted (`kubectl patch
# --type=merge -p '{"metadata":{"finalizers":null}}'`, `kubectl edit`: the way out when no
# controller will ever clean up) is never changed by the webhook" (docs/gitops.md, "The
# finalizer"). The webhook puts it back on an object being deleted when the request's field
# manager (request.options.fieldManager) has an Apply entry owning finalizers in the stored
# managedFields; it does not ask whether this request is an apply, and managedFields are the
# writer's to set (an update that carries them replaces them). A tenant who may update their
# PropertyOverride writes Apply entries for kubectl's own managers (kubectl-patch, kubectl-edit,
# kubectl-replace) owning `f:finalizers`; once its deletion is stuck (here: the cleanup held back
# by a ValidatingAdmissionPolicy refusing ServiceDefaults updates, as a consul-k8s outage or a
# target nobody may write any more would), each documented hand removal by the cluster admin
# answers "patched" with the warning that the controller will remove it, and the finalizer is
# back: the PropertyOverride (and a namespace deletion behind it) stays stuck. Real kube-apiserver
# only (its managedFields handling and admission policies are the oracle).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
fin_start "$build"
override() { # name
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  targetRef: {kind: ServiceDefaults, name: web}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: 10\n' "$1"
}
finalizers() { kubectl get propertyoverride "$1" -o json 2>/dev/null | jq -c '.metadata.finalizers'; }
for n in p e; do override $n | kubectl create -f - >/dev/null || bad "$n: create"; done
eventually "p and e live in web" 30 "e@1 p@1" entries servicedefaults web
# the tenant's forgery: Apply entries for kubectl's hand-editing managers, owning finalizers
for n in p e; do
  kubectl get propertyoverride "$n" -o json --show-managed-fields |
    jq '.metadata.managedFields += [{"manager":"kubectl-patch"},{"manager":"kubectl-edit"},{"manager":"kubectl-replace"} |
          . + {"operation":"Apply","apiVersion":"propertyoverride.io/v1alpha1","fieldsType":"FieldsV1",
               "fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"propertyoverride.io/finalizer\"":{}}}}}]' |
    kubectl replace -f - >/dev/null || bad "$n: the tenant's update of its managedFields"
done
got=$(kubectl get propertyoverride p -o json --show-managed-fields | jq -c '[.metadata.managedFields[] | select(.operation == "Apply") | .manager] | sort')
check "p: the forged Apply entries are stored ($got)" test "$got" = '["kubectl-edit","kubectl-patch","kubectl-replace"]'

# the cleanup cannot happen: ServiceDefaults updates are refused
fin_freeze
kubectl delete propertyoverride p e --wait=false >/dev/null
check "p: its deletion is stuck (waits for a cleanup that cannot happen)" \
  test "$(kubectl get propertyoverride p -o json | jq -c '.metadata.deletionTimestamp != null')" = true

# the cluster admin's documented way out
kubectl patch propertyoverride p --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>"$e2e_work/p.err" ||
  bad "p: kubectl patch"
eventually "p: the hand removal by kubectl patch is left alone: deleted (finalizers '$(finalizers p)'; $(tr '\n' ' ' <"$e2e_work/p.err"))" \
  10 "" kubectl get propertyoverride p -o name
# kubectl edit's write: a PUT of the object without the finalizer, as kubectl-edit
kubectl get propertyoverride e -o json | jq '.metadata.finalizers = []' >"$e2e_work/e.json"
kubectl replace --field-manager=kubectl-edit -f "$e2e_work/e.json" >/dev/null 2>"$e2e_work/e.err" || bad "e: replace as kubectl-edit"
eventually "e: the hand removal by kubectl edit's PUT is left alone: deleted (finalizers '$(finalizers e)')" \
  10 "" kubectl get propertyoverride e -o name
fin_unfreeze
finish
