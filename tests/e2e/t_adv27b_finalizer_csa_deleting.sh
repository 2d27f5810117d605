#!/usr/bin/env bash
# adv27b: "Deleting a PropertyOverride still waits until its entries are cleaned up" (docs/gitops.md,
# "The finalizer"), through a client-side `kubectl apply` of the git version. t_adv27_finalizer_
# ssa_deleting.sh's case, client-side: a manifest that listed a finalizer of its own
# (`finalizers: [example.com/keep]`, applied with plain `kubectl apply`: the
# last-applied-configuration annotation remembers it) and no longer does is sent as a JSON merge
# patch `{"metadata":{"finalizers":null}}` (kubectl's three-way patch of a custom resource), which
# replaces the whole list, ours too. On a live object the webhook keeps ours (an update dropping
# it); on one being deleted it leaves every write but a server-side apply alone, so this apply,
# which is no hand removal (manager kubectl-client-side-apply, the annotation listing finalizers),
# ends the deletion before the cleanup: the PropertyOverride is gone while its entry is still in
# the ServiceDefaults. A controller that restarts before the cleanup ran then finds an entry whose
# PropertyOverride no longer exists (someone else's to it) and never removes it. Not new with
# e3b2f1f0 (the merge patch replaced the controller's own finalizer too), but the same loss the
# server-side case was fixed for. The cleanup is held back by a ValidatingAdmissionPolicy refusing
# ServiceDefaults updates, as in t_adv27_finalizer_ssa_deleting.sh. Real kube-apiserver only.
. "$(dirname "$0")/lib.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web}
spec: {protocol: http}
YAML
cat >"$e2e_work/a.yaml" <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata:
  name: a
  namespace: default
  finalizers: [example.com/keep]
spec:
  targetRef: {kind: ServiceDefaults, name: web}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: 10
YAML
sed '/finalizers:/d' "$e2e_work/a.yaml" >"$e2e_work/a2.yaml"
finalizers() { kubectl get propertyoverride a -o json 2>/dev/null | jq -c '.metadata.finalizers'; }
kubectl apply -f "$e2e_work/a.yaml" >/dev/null || bad "a: client-side apply (create)"
eventually "a: ours after the writer's" 30 '["example.com/keep","propertyoverride.io/finalizer"]' finalizers
eventually "a live in web" 30 "a@1" entries servicedefaults web

# the cleanup cannot happen for now: ServiceDefaults updates are refused
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: adv27b-freeze}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [consul.hashicorp.com]
        apiVersions: ["*"]
        operations: [UPDATE, DELETE]
        resources: [servicedefaults]
  validations:
    - expression: "false"
      message: frozen by adv27b
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: adv27b-freeze}
spec:
  policyName: adv27b-freeze
  validationActions: [Deny]
YAML
eventually "ServiceDefaults updates refused" 30 "" sh -c "kubectl annotate servicedefaults web --overwrite adv27b=probe >/dev/null 2>&1 && echo open"

kubectl delete propertyoverride a --wait=false >/dev/null
check "a: its deletion waits for the cleanup" \
  test "$(kubectl get propertyoverride a -o json | jq -c '.metadata.deletionTimestamp != null')" = true
# the pipeline applies the git version (client-side), which no longer lists its own finalizer
kubectl apply -f "$e2e_work/a2.yaml" >/dev/null 2>&1 || bad "a: client-side apply of a2"
sleep 1
got=$(finalizers)
check "a: still waiting for its cleanup after the client-side apply (got '${got:-gone}', entry in web: '$(entries servicedefaults web)')" \
  test "$got" = '["propertyoverride.io/finalizer"]'

# a controller restart before the cleanup could run
kill "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
kubectl delete validatingadmissionpolicybinding adv27b-freeze >/dev/null
lc_controller || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1
eventually "a: gone once its entry is removed" 60 "" kubectl get propertyoverride a -o name
eventually "web: a's entry removed (none left behind for good)" 60 "" entries servicedefaults web
finish
