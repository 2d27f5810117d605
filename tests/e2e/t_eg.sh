#!/usr/bin/env bash
# Envoy Gateway targets end to end (issue 12), with the real kubectl: the EnvoyPatchPolicy,
# Gateway and HTTPRoute CRDs installed before the controller starts (--envoy-gateway=auto finds
# them); Envoy Gateway's status is played by the local API server's test double
# (--fake-envoy-gateway, tests/apiserver/README.md). Cases: the example's Gateway, HTTPRoute and
# PropertyOverride -> the EnvoyPatchPolicy of the render golden, Programmed once "Envoy Gateway"
# programs it; an HTTPRoute change renames the clusters (and the fake says ResourceNotFound for
# names the Gateway no longer has until then); an invalid edit (webhook down) keeps the last good
# policy, never deleted in between; a controller restart deletes nothing; a hand-made policy of
# our name is left alone; the Gateway deleted -> ours deleted, back with it; the PropertyOverride
# deleted -> its policy gone; then, against a server whose Envoy Gateway has EnvoyPatchPolicies
# disabled, the status tells the operator what to set.
# On the real kube-apiserver (PO_APISERVER=real) there is no Envoy Gateway: the status cases that
# need its answer are left out (Programmed stays Pending there; that is checked instead).
. "$(dirname "$0")/lib.sh"
build=$1
fake=()
[ "${PO_APISERVER:-local}" = local ] && fake=(--fake-envoy-gateway)
lc_start "$build" "$e2e_work" "${fake[@]}" || exit 1
eg_crds || exit 1
kubectl create namespace shop >/dev/null
lc_controller --envoy-gateway auto || exit 1
lc_register_webhook Fail
contains "auto: EnvoyPatchPolicies found at start" "$(cat "$e2e_work/controller.log")" "Envoy Gateway targets programmed"

po=payments-outlier-detection
epp=propertyoverride-$po
eppj() { kubectl -n shop get envoypatchpolicy "$1" -o jsonpath="$2" 2>/dev/null; }
pov() { kubectl -n shop get propertyoverride "$1" -o jsonpath="$2" 2>/dev/null; }
reason() { pov "$1" '{.status.conditions[?(@.type=="Programmed")].reason}'; }
names() { kubectl -n shop get envoypatchpolicy "$epp" -o json 2>/dev/null | jq -r '[.spec.jsonPatches[].name] | unique | join(" ")'; }
uid_of() { eppj "$epp" '{.metadata.uid}'; }

# --- create: Gateway, HTTPRoute, PropertyOverride -> the EnvoyPatchPolicy of the render golden --------
kubectl apply -f examples/envoy-gateway/backend-outlier-detection.yaml >/dev/null
eventually "EnvoyPatchPolicy created" 30 "$epp" eppj "$epp" '{.metadata.name}'
want=$(kubectl create --dry-run=client -o json -f tests/cli/testdata/render-golden/envoy-gateway/backend-outlier-detection.eg.out.yaml | jq -cS .spec)
got=$(kubectl -n shop get envoypatchpolicy "$epp" -o json | jq -cS .spec)
check "spec is the render golden's" test "$got" = "$want"
check "owner-uid is the PropertyOverride's uid" test "$(kubectl -n shop get envoypatchpolicy "$epp" -o json | jq -r '.metadata.annotations["propertyoverride.io/owner-uid"]')" = "$(pov $po '{.metadata.uid}')"
check "created annotation bound to its own uid" test "$(kubectl -n shop get envoypatchpolicy "$epp" -o json | jq -r '.metadata.annotations["propertyoverride.io/created"] // empty')" = "$(uid_of)"
check "status.target names the EnvoyPatchPolicy" test "$(pov $po '{.status.target.kind} {.status.target.namespace}/{.status.target.name}')" = "EnvoyPatchPolicy shop/$epp"
if [ ${#fake[@]} -gt 0 ]; then
  check "kubectl wait Programmed (Envoy Gateway's status copied)" kubectl -n shop wait --for=condition=Programmed "propertyoverride/$po" --timeout=60s
  contains "Programmed names the policy" "$(pov $po '{.status.conditions[?(@.type=="Programmed")].message}')" "programmed by Envoy Gateway from EnvoyPatchPolicy shop/$epp"
else
  eventually "no Envoy Gateway: Pending" 30 "Pending" reason "$po"
fi
first_uid=$(uid_of)

# --- an HTTPRoute change renames the clusters ----------------------------------------------------------
check "clusters before: rules 0 and 2" test "$(names)" = "httproute/shop/api/rule/0 httproute/shop/api/rule/2"
kubectl -n shop patch httproute api --type=json -p '[{"op":"remove","path":"/spec/rules/1"}]' >/dev/null
eventually "HTTPRoute change: clusters renamed" 30 "httproute/shop/api/rule/0 httproute/shop/api/rule/1" names
if [ ${#fake[@]} -gt 0 ]; then
  eventually "HTTPRoute change: Programmed again" 30 "Programmed" reason "$po"
fi

# --- an invalid edit: with the webhook down, the last good policy stays (never deleted) -------------
# Every event of the policies from here to after the controller's restart, watched: none may be a
# deletion of ours (a look at the end would miss a delete and create in between).
kubectl -n shop get envoypatchpolicies -w --output-watch-events \
  -o jsonpath='{.type} {.object.metadata.name} {.object.metadata.uid}{"\n"}' >"$e2e_work/epp-events" 2>&1 &
watch_pid=$!
lc_pids+=($watch_pid)
eventually "watching the policies" 30 "ADDED $epp $first_uid" sh -c "head -1 '$e2e_work/epp-events'"
lc_unregister_webhook
good=$(kubectl -n shop get envoypatchpolicy "$epp" -o json | jq -cS .spec)
# inbound: a gateway has no local app (refused by the Envoy Gateway adapter, not the CRD)
bad='[{"op":"add","path":"/spec/patches/-","value":{"resourceFilter":{"resourceType":"cluster","trafficDirection":"inbound"},"op":"add","path":"/outlier_detection/consecutive_5xx","value":5}}]'
kubectl -n shop patch propertyoverride "$po" --type=json -p "$bad" >/dev/null
eventually "invalid edit: Accepted False" 30 "False" pov "$po" '{.status.conditions[?(@.type=="Accepted")].status}'
check "invalid edit: the last good policy kept, same object" holds 2 sh -c \
  "test \"\$(kubectl -n shop get envoypatchpolicy $epp -o json | jq -cS '[.spec, .metadata.uid]')\" = '[$good,\"$first_uid\"]'"
contains "invalid edit: the status says inbound is refused" "$(pov $po '{.status.conditions[?(@.type=="Accepted")].message}')" "inbound"
kubectl -n shop patch propertyoverride "$po" --type=json -p '[{"op":"remove","path":"/spec/patches/3"}]' >/dev/null
eventually "valid again: Accepted True" 30 "True" pov "$po" '{.status.conditions[?(@.type=="Accepted")].status}'
lc_register_webhook Fail

# --- a controller restart deletes nothing --------------------------------------------------------------
kill -TERM "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
lc_controller --envoy-gateway auto || exit 1
lc_register_webhook Fail
check "restart: the same policy object" holds 3 sh -c "test \"\$(kubectl -n shop get envoypatchpolicy $epp -o jsonpath='{.metadata.uid}')\" = $first_uid"
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
check "invalid edit and restart: no DELETED event of the policy, all along" test -z "$(grep -v "^MODIFIED $epp $first_uid\$" "$e2e_work/epp-events" | grep -v "^ADDED $epp $first_uid\$")"

# --- drift: someone edits our policy; it is put back ---------------------------------------------------
kubectl -n shop patch envoypatchpolicy "$epp" --type=json -p '[{"op":"replace","path":"/spec/jsonPatches/0/operation/value","value":99}]' >/dev/null
eventually "drift repaired" 30 "5" eppj "$epp" '{.spec.jsonPatches[0].operation.value}'

# --- a hand-made policy of our name: left alone ----------------------------------------------------------
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata:
  name: propertyoverride-handmade
  namespace: shop
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  type: JSONPatch
  jsonPatches:
    - type: type.googleapis.com/envoy.config.cluster.v3.Cluster
      name: httproute/shop/api/rule/0
      operation: {op: add, path: /connect_timeout, value: 9s}
YAML
handmade=$(kubectl -n shop get envoypatchpolicy propertyoverride-handmade -o json | jq -cS '{spec, annotations: .metadata.annotations}')
sed -e "s/name: $po/name: handmade/" examples/envoy-gateway/backend-outlier-detection.yaml | kubectl apply -f - >/dev/null
eventually "look-alike: status TargetError" 30 "TargetError" reason handmade
contains "look-alike: the status says it is left alone" "$(pov handmade '{.status.conditions[?(@.type=="Programmed")].message}')" "left alone"
check "look-alike: deleting the PropertyOverride" kubectl -n shop delete propertyoverride handmade --timeout=60s
check "look-alike: unchanged and still there" test "$handmade" = "$(kubectl -n shop get envoypatchpolicy propertyoverride-handmade -o json | jq -cS '{spec, annotations: .metadata.annotations}')"

# --- the Gateway deleted: ours deleted, the status says so; back with the Gateway ------------------------
kubectl -n shop delete gateway eg >/dev/null
eventually "Gateway deleted: policy deleted" 30 "" eppj "$epp" '{.metadata.name}'
eventually "Gateway deleted: status TargetNotFound" 30 "TargetNotFound" reason "$po"
kubectl apply -f examples/envoy-gateway/backend-outlier-detection.yaml >/dev/null
eventually "Gateway back: policy back" 30 "$epp" eppj "$epp" '{.metadata.name}'

# --- the PropertyOverride deleted: its policy goes, then it does ------------------------------------------
check "delete: kubectl delete returns" kubectl -n shop delete propertyoverride "$po" --timeout=60s
check "delete: policy gone" test -z "$(eppj "$epp" '{.metadata.name}')"

# --- Envoy Gateway with EnvoyPatchPolicies disabled: the status says what to set ----------------------------
if [ ${#fake[@]} -gt 0 ]; then
  lc_stop
  lc_start "$build" "$e2e_work/disabled" --fake-envoy-gateway=disabled || exit 1
  eg_crds || exit 1
  kubectl create namespace shop >/dev/null
  lc_controller --envoy-gateway on || exit 1
  kubectl apply -f examples/envoy-gateway/backend-outlier-detection.yaml >/dev/null
  eventually "disabled: Programmed False reason Disabled" 30 "Disabled" reason "$po"
  contains "disabled: the message says what to set" "$(pov $po '{.status.conditions[?(@.type=="Programmed")].message}')" \
    "extensionApis.enableEnvoyPatchPolicy: true"
  check "disabled: the policy stays written" test "$(eppj "$epp" '{.metadata.name}')" = "$epp"
fi
finish
