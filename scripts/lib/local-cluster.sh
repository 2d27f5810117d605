# A local "cluster" for the run command and the end-to-end tests: the bundled API server
# (tests/apiserver) over TLS with our CRDs, the controller with its webhook registered in a
# ValidatingWebhookConfiguration, and a kubeconfig for the real kubectl. Source it, then:
#   lc_start BUILD_DIR WORK_DIR [extra po-apiserver flags...]   sets LC_URL, KUBECONFIG (CRDs preloaded
#                                                                unless LC_NO_CRDS=1)
#   lc_controller [extra controller flags...]                    starts it, waits until ready
#                                                                (LC_READY_TIMEOUT s, default 10);
#                                                                --consul-sync-status is
#                                                                $LC_CONSUL_SYNC (default ignore:
#                                                                no consul-k8s here unless the
#                                                                server runs --fake-consul-k8s)
#   lc_register_webhook [failurePolicy]                          the ValidatingWebhookConfiguration
#                                                                (returns once the API server
#                                                                calls it: lc_webhook_ready)
#   lc_unregister_webhook                                        deletes it; returns once the API
#                                                                server no longer calls it
#   lc_stop                                                      stops everything (trap-safe)
#   LC_CONTROLLER_KUBECONFIG (real server only)                  a kubeconfig acting as
#                                                                LC_CONTROLLER_USER
#   lc_crds_ready [CRD...], lc_webhook_ready PORT                after creating CRDs or a webhook
#                                                                configuration (scripts/lib/ready.sh)
# Every process started here is recorded and stopped by lc_stop.

. "$(dirname "${BASH_SOURCE[0]}")/ready.sh"

lc_pids=()

# The username deploy/ gives the controller (its ServiceAccount): the webhooks' not-the-controller
# conditions name it. The real server also has a token for it (LC_CONTROLLER_KUBECONFIG), so a
# controller run with that kubeconfig and --controller-username is exempt as deployed.
LC_CONTROLLER_USER=system:serviceaccount:propertyoverride-system:propertyoverride-controller

lc_wait_file() { # file, timeout seconds
  local i
  for ((i = 0; i < $2 * 20; i++)); do [ -s "$1" ] && return 0; sleep 0.05; done
  echo "local-cluster: $1 did not appear within $2 s" >&2
  return 1
}

lc_free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

lc_start() {
  LC_BUILD=$(cd "$1" && pwd)
  LC_WORK=$2
  shift 2
  LC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  mkdir -p "$LC_WORK"
  local crds=()
  # LC_NO_CRDS=1: start empty, to install the CRDs with kubectl as a user would
  [ "${LC_NO_CRDS:-0}" = 1 ] || for f in "$LC_TOP"/crds/*.yaml "$LC_TOP"/crds/consul/*.yaml; do
    case $(basename "$f") in kustomization.yaml) continue ;; esac
    crds+=(--crd "$f")
  done
  rm -f "$LC_WORK/url"
  "$LC_BUILD/tests/apiserver/po-apiserver" --listen 127.0.0.1:0 --ready-file "$LC_WORK/url" \
    --tls-dir "$LC_WORK/tls" "${crds[@]}" "$@" >"$LC_WORK/apiserver.log" 2>&1 &
  lc_pids+=($!)
  lc_wait_file "$LC_WORK/url" 20 || { cat "$LC_WORK/apiserver.log" >&2; return 1; }
  LC_URL=$(cat "$LC_WORK/url")
  export KUBECONFIG="$LC_WORK/tls/kubeconfig"
  lc_wait_file "$KUBECONFIG" 10
}

lc_controller() { # extra flags...; the webhook serves with the API server's certificate (127.0.0.1)
  LC_WEBHOOK_PORT=$(lc_free_port)
  LC_PROBE_PORT=$(lc_free_port)
  "$LC_BUILD/propertyoverride" controller --kubeconfig "$KUBECONFIG" \
    --webhook-bind-address "127.0.0.1:$LC_WEBHOOK_PORT" \
    --webhook-cert-file "$LC_WORK/tls/tls.crt" --webhook-key-file "$LC_WORK/tls/tls.key" \
    --health-probe-bind-address "127.0.0.1:$LC_PROBE_PORT" --leader-election-namespace default \
    --lease-duration 4 --renew-deadline 3 --retry-period 1 --consul-sync-status "${LC_CONSUL_SYNC:-ignore}" \
    "$@" >>"$LC_WORK/controller.log" 2>&1 &
  LC_CONTROLLER_PID=$!
  lc_pids+=($LC_CONTROLLER_PID)
  local i
  for ((i = 0; i < ${LC_READY_TIMEOUT:-10} * 20; i++)); do
    curl -sf "http://127.0.0.1:$LC_PROBE_PORT/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "local-cluster: the controller did not become ready" >&2
  tail -20 "$LC_WORK/controller.log" >&2
  return 1
}

lc_register_webhook() { # [failurePolicy]
  local policy=${1:-Fail} ca
  ca=$(base64 -w0 <"$LC_WORK/tls/ca.crt")
  kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: propertyoverride
webhooks:
  - name: validate.propertyoverride.io
    <<: &call # how the API server calls the webhook, shared by both entries (a YAML merge key)
      admissionReviewVersions: [v1]
      sideEffects: None
      failurePolicy: $policy
      timeoutSeconds: 5
      clientConfig:
        url: https://127.0.0.1:$LC_WEBHOOK_PORT/validate
        caBundle: $ca
    rules:
      - apiGroups: [propertyoverride.io]
        apiVersions: [v1alpha1]
        operations: [CREATE, UPDATE]
        resources: [propertyoverrides]
    matchConditions: # as deploy/base/webhook.yaml's (tests/e2e/t_scope.sh compares them)
      - name: spec-changed
        expression: >-
          oldObject == null || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec
  # As deploy/ registers it: only the target writes the webhook could refuse (matchConditions).
  - name: targets.validate.propertyoverride.io
    <<: *call
    rules:
      - apiGroups: [consul.hashicorp.com]
        apiVersions: [v1alpha1]
        operations: [CREATE, UPDATE]
        resources: [servicedefaults, proxydefaults]
    matchConditions:
      - name: not-the-controller # a controller run as LC_CONTROLLER_USER (LC_CONTROLLER_KUBECONFIG, real server) is exempt
        expression: >-
          request.userInfo.username != '$LC_CONTROLLER_USER'
      - name: holds-property-override
        expression: >-
          has(object.spec) && has(object.spec.envoyExtensions) &&
          (oldObject == null || !has(oldObject.spec) || !has(oldObject.spec.envoyExtensions) ||
          object.spec.envoyExtensions != oldObject.spec.envoyExtensions) &&
          object.spec.envoyExtensions.exists(e, has(e.name) && e.name == 'builtin/property-override')
      - name: entries-changed
        expression: >-
          oldObject == null || !has(object.spec) || !has(object.spec.envoyExtensions) ||
          !has(oldObject.spec) || !has(oldObject.spec.envoyExtensions) ||
          (object.spec.envoyExtensions != oldObject.spec.envoyExtensions &&
          object.spec.envoyExtensions.filter(e, has(e.name) && e.name == 'builtin/property-override') !=
          oldObject.spec.envoyExtensions.filter(e, has(e.name) && e.name == 'builtin/property-override'))
YAML
  lc_webhook_ready "$LC_WEBHOOK_PORT"
}

# The webhook "down" as the tests mean it: its configuration deleted, and the API server no longer
# calling it (it reads configurations through an informer: the next write may still be sent).
lc_unregister_webhook() {
  kubectl delete validatingwebhookconfiguration propertyoverride >/dev/null && lc_webhook_gone
}

lc_stop() {
  local p
  for p in "${lc_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${lc_pids[@]}"; do
    for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$p" 2>/dev/null
  done
  lc_pids=()
}
