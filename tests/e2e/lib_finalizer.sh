# What the finalizer-at-admission suites (t_adv27*_finalizer_*.sh) share: a cluster with the
# controller and its webhooks, a ServiceDefaults "web", a PropertyOverride manifest, the cleanup
# held back by a ValidatingAdmissionPolicy refusing ServiceDefaults updates (a consul-k8s webhook
# outage or any refusal would do the same) and let go again, and the end: a controller restart
# before the cleanup ran, after which a PropertyOverride that lost ours is gone with its entry left
# behind for good.
fin_start() { # build [off: without the mutating webhooks]
  lc_start "$1" "$e2e_work" || exit 1
  lc_controller || exit 1
  lc_register_webhook Fail
  [ "${2:-on}" = off ] || e2e_register_mutating || exit 1
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web}
spec: {protocol: http}
YAML
}
# a PropertyOverride manifest: name, its metadata.finalizers line (or nothing), the patch's value
fin_po() {
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
fin_finalizers() { kubectl get propertyoverride "$1" -o json 2>/dev/null | jq -c '.metadata.finalizers'; }
fin_freeze() { # [namespace of the ServiceDefaults web probed]
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: po-test-freeze}
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
      message: frozen by the test
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: po-test-freeze}
spec:
  policyName: po-test-freeze
  validationActions: [Deny]
YAML
  # refused by this policy, not merely failing (a web that is not there would pass for frozen)
  eventually "ServiceDefaults updates refused" 30 frozen sh -c "kubectl annotate -n ${1:-default} servicedefaults web --overwrite po-test-freeze=probe 2>&1 | grep -q 'frozen by the test' && echo frozen"
}
fin_unfreeze() { kubectl delete validatingadmissionpolicybinding po-test-freeze >/dev/null; }
fin_restart_unfreeze() {
  kill "$LC_CONTROLLER_PID"
  wait "$LC_CONTROLLER_PID" 2>/dev/null
  fin_unfreeze
  lc_controller || exit 1
  lc_register_webhook Fail
  e2e_register_mutating || exit 1
}
