#!/usr/bin/env bash
# The webhook's self-managed certificate mode: the first replica makes a CA and a serving
# certificate, keeps them in a Secret and puts the CA into the ValidatingWebhookConfiguration's
# caBundle; kubectl's requests are then checked over that TLS; a second replica and a restart
# reuse the same CA.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
# the configuration exists with no caBundle, as deploy/ ships it
port=$(lc_free_port)
kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: propertyoverride}
webhooks:
  - name: validate.propertyoverride.io
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    clientConfig: {url: "https://127.0.0.1:$port/validate"}
    rules:
      - {apiGroups: [propertyoverride.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [propertyoverrides]}
YAML
selfmanaged() {
  "$LC_BUILD/propertyoverride" controller --kubeconfig "$KUBECONFIG" --webhook-cert-mode self-managed \
    --webhook-bind-address "127.0.0.1:$1" --webhook-cert-dir "$e2e_work/certs-$1" --webhook-cert-san 127.0.0.1 \
    --leader-election-namespace default --health-probe-bind-address 0 >>"$e2e_work/controller.log" 2>&1 &
  lc_pids+=($!)
  last_pid=$!
}
selfmanaged "$port"
eventually "the Secret is made" 10 "kubernetes.io/tls" sh -c "kubectl get secret propertyoverride-webhook-cert -n default -o jsonpath='{.type}'"
ca=$(kubectl get secret propertyoverride-webhook-cert -n default -o jsonpath='{.data.ca\.crt}')
eventually "the caBundle is the Secret's CA" 10 "$ca" sh -c "kubectl get validatingwebhookconfiguration propertyoverride -o jsonpath='{.webhooks[0].clientConfig.caBundle}'"
for i in $(seq 1 100); do curl -s --cacert <(echo "$ca" | base64 -d) "https://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
out=$(kubectl apply -f examples/invalid/max-ejection-percent-over-100.yaml 2>&1)
contains "kubectl's request was checked over the self-managed TLS" "$out" "150 violates uint32 lte 100"
check "a valid one is admitted" kubectl apply -f examples/valid/connect-timeout.yaml
port2=$(lc_free_port)
selfmanaged "$port2"
sleep 1
check "a second replica reuses the CA" test "$(kubectl get secret propertyoverride-webhook-cert -n default -o jsonpath='{.data.ca\.crt}')" = "$ca"
check "and serves with a certificate the CA signed" curl -sf -o /dev/null --cacert "$e2e_work/certs-$port/ca.crt" "https://127.0.0.1:$port2/healthz"
finish
