#!/usr/bin/env bash
# EnvoyFilters and EnvoyPatchPolicies written by hand through the validating webhook (issue 12),
# with the real kubectl, the local API server and the controller: with the native kinds off (the
# default configuration) the webhook is not called for them; with the entries of
# deploy/components/validate-* registered (dialled at this run's controller), a bad EnvoyFilter
# is refused with our message naming configPatches[i] and the field, a good one is created, one
# that does something else than it says prints kubectl's `Warning:`; the same for
# EnvoyPatchPolicies; a metadata-only update of an object that would now be refused passes; and
# the controller's own EnvoyFilter writes are never refused, also with the webhook entry stripped
# of its matchConditions (the webhook's own rule for the managed-by label).
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml \
  -f crds/envoygateway/gateway.envoyproxy.io_envoypatchpolicies.yaml >/dev/null
lc_crds_ready envoyfilters.networking.istio.io envoypatchpolicies.gateway.envoyproxy.io || exit 1
kubectl create namespace shop >/dev/null
lc_controller --istio auto || exit 1
lc_register_webhook Fail

# The number of AdmissionReviews the controller's webhook has answered.
calls() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk '/^propertyoverride_webhook_requests_total[{ ]/ {n += $2} END {print n + 0}'; }

# The native entries as deploy/components/ add them, dialled at this run's controller; `strip`
# drops their matchConditions (so only the webhook's own rules decide).
register_native() { # policy [strip]
  local ca overlay rel
  ca=$(base64 -w0 <"$LC_WORK/tls/ca.crt")
  overlay=$e2e_work/overlay
  mkdir -p "$overlay"
  rel=$(realpath --relative-to="$overlay" "$top/deploy")
  printf 'resources: [%s]\ncomponents: [%s/components/validate-envoyfilters, %s/components/validate-envoypatchpolicies]\n' \
    "$rel" "$rel" "$rel" >"$overlay/kustomization.yaml"
  # (only the ValidatingWebhookConfiguration document of the render: the local server has no
  # PodDisruptionBudget for the client-side dry run to know)
  kubectl kustomize "$overlay" |
    awk 'function out() { if (doc ~ /\nkind: ValidatingWebhookConfiguration\n/) printf "%s", doc } /^---$/ { out(); doc = "\n"; next } { doc = doc $0 "\n" } END { out() }' |
    kubectl create --dry-run=client -o json -f - |
    jq -c --arg url "https://127.0.0.1:$LC_WEBHOOK_PORT/validate" --arg ca "$ca" --arg p "$1" --arg strip "${2:-}" \
      '.webhooks[] |= (.clientConfig = {url: $url, caBundle: $ca} | .failurePolicy = $p |
                       if $strip != "" then del(.matchConditions) else . end)' |
    kubectl apply -f - >/dev/null
}

ef() { # name patch-value-yaml [operation]
  cat <<YAML
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: $1
  namespace: shop
spec:
  workloadSelector:
    labels: {app: reviews}
  configPatches:
    - applyTo: CLUSTER
      match: {context: SIDECAR_OUTBOUND}
      patch: {operation: MERGE, value: {connect_timeout: 5s}}
    - applyTo: CLUSTER
      match: {context: SIDECAR_OUTBOUND}
      patch: {operation: ${3:-MERGE}, value: $2}
YAML
}
epp() { # name value-yaml
  cat <<YAML
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata:
  name: $1
  namespace: shop
spec:
  type: JSONPatch
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: edge}
  jsonPatches:
    - type: type.googleapis.com/envoy.config.cluster.v3.Cluster
      name: httproute/shop/web/rule/0
      operation: {op: add, path: /connect_timeout, value: $2}
YAML
}
bad_value='{outlier_detection: {max_ejection_percnt: 50}}'

# --- off (the default configuration): the webhook is not called for them -----------------------
before=$(calls)
out=$(ef unchecked "$bad_value" | kubectl apply -f - 2>&1)
contains "off: a bad EnvoyFilter is created" "$out" "created"
out=$(epp unchecked 5 | kubectl apply -f - 2>&1)
contains "off: a bad EnvoyPatchPolicy is created" "$out" "created"
check "off: the webhook was not called" test "$(calls)" = "$before"

# --- on: bad refused with where and what, good created, warnings printed ---------------------------
register_native Fail
out=$(ef bad "$bad_value" | kubectl apply -f - 2>&1)
check "on: a bad EnvoyFilter is refused" test -z "$(kubectl -n shop get envoyfilter bad -o name 2>/dev/null)"
contains "on: the denial is ours" "$out" 'admission webhook "envoyfilters.validate.propertyoverride.io" denied the request: EnvoyFilter shop/bad is invalid (1 error)'
contains "on: the denial names configPatches[1]" "$out" "spec.configPatches[1].patch.value"
contains "on: the denial names the field and the message" "$out" "No such field: max_ejection_percnt"
out=$(ef good '{outlier_detection: {max_ejection_percent: 50}}' | kubectl apply -f - 2>&1)
contains "on: a good EnvoyFilter is created" "$out" "envoyfilter.networking.istio.io/good created"
out=$(ef warned '{name: extra, connect_timeout: 1s}' INSERT_FIRST | kubectl apply -f - 2>&1)
contains "on: a warned EnvoyFilter is created" "$out" "envoyfilter.networking.istio.io/warned created"
contains "on: kubectl prints the warning" "$out" "Warning: spec.configPatches[1]: INSERT_FIRST on CLUSTER is treated as ADD"
out=$(epp bad 5 | kubectl apply -f - 2>&1)
contains "on: a bad EnvoyPatchPolicy is refused, naming jsonPatches[0] and the path" "$out" \
  'denied the request: EnvoyPatchPolicy shop/bad is invalid (1 error):'
contains "on: ... the path and what is valid" "$out" 'spec.jsonPatches[0].operation.value: not a valid value at /connect_timeout'
out=$(epp good '"5s"' | kubectl apply -f - 2>&1)
contains "on: a good EnvoyPatchPolicy is created" "$out" "created"
# An object written while the webhook was off, now invalid: a metadata-only change passes
# (matchCondition spec-changed, and the webhook's own rule), a spec change is judged.
out=$(kubectl -n shop label envoyfilter unchecked team=x 2>&1)
contains "on: a label on an EnvoyFilter that would now be refused passes" "$out" "labeled"
out=$(kubectl -n shop patch envoyfilter unchecked --type=json -p '[{"op":"replace","path":"/spec/configPatches/0/patch/value/connect_timeout","value":"6s"}]' 2>&1)
contains "on: a spec change of it is judged" "$out" "spec.configPatches[1].patch.value"
check "on: deleting it passes" kubectl -n shop delete envoyfilter unchecked

# --- the controller's own EnvoyFilters are never refused ---------------------------------------------
kubectl apply -f examples/istio/outlier-detection.yaml >/dev/null
po=api-payments-outlier-detection
check "own: programmed under the native webhook (Fail)" kubectl -n shop wait --for=condition=Programmed "propertyoverride/$po" --timeout=60s
check "own: its EnvoyFilter carries the managed-by label" test \
  "$(kubectl -n shop get envoyfilter "propertyoverride-$po" -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}')" = propertyoverride
# Without matchConditions every write is sent: the webhook itself lets the controller's through.
register_native Fail strip
kubectl -n shop patch propertyoverride "$po" --type=json -p '[{"op":"replace","path":"/spec/patches/3/value","value":40}]' >/dev/null
eventually "own: an edit reaches the EnvoyFilter with the webhook deciding alone" 30 40 \
  kubectl -n shop get envoyfilter "propertyoverride-$po" -o jsonpath='{.spec.configPatches[3].patch.value.outlier_detection.max_ejection_percent}'
eventually "own: generation 2 programmed" 30 2 kubectl -n shop get propertyoverride "$po" -o jsonpath='{.status.programmedGeneration}'
if grep -q '"envoyfilters.validate.propertyoverride.io" denied' "$e2e_work/controller.log"; then
  bad "own: the controller was refused by its own webhook"
else ok "own: the controller was never refused by its own webhook"; fi
finish
