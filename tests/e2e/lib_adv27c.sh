# adv27c helpers: a cluster with the controller and its webhooks, a ServiceDefaults "web", the
# cleanup held back by a ValidatingAdmissionPolicy refusing ServiceDefaults updates (as in
# t_adv27b_finalizer_csa_deleting.sh), and the end: a controller restart before the cleanup ran,
# after which a PropertyOverride that lost ours is gone with its entry left behind for good.
adv27c_start() {
  lc_start "$1" "$e2e_work" || exit 1
  lc_controller || exit 1
  lc_register_webhook Fail
  e2e_register_mutating || exit 1
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web}
spec: {protocol: http}
YAML
}
# a PropertyOverride manifest: name, its metadata.finalizers line (or nothing), the patch's value
adv27c_po() {
  cat <<Y
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata:
  name: $1
  namespace: default
${2:+  $2}
spec:
  targetRef: {kind: ServiceDefaults, name: web}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: ${3:-10}
Y
}
adv27c_finalizers() { kubectl get propertyoverride "$1" -o json 2>/dev/null | jq -c '.metadata.finalizers'; }
adv27c_freeze() {
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: adv27c-freeze}
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
      message: frozen by adv27c
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: adv27c-freeze}
spec:
  policyName: adv27c-freeze
  validationActions: [Deny]
YAML
  eventually "ServiceDefaults updates refused" 30 "" sh -c "kubectl annotate servicedefaults web --overwrite adv27c=probe >/dev/null 2>&1 && echo open"
}
adv27c_restart_unfreeze() {
  kill "$LC_CONTROLLER_PID"
  wait "$LC_CONTROLLER_PID" 2>/dev/null
  kubectl delete validatingadmissionpolicybinding adv27c-freeze >/dev/null
  lc_controller || exit 1
  lc_register_webhook Fail
  e2e_register_mutating || exit 1
}
