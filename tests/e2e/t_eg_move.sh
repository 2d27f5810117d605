#!/usr/bin/env bash
# adv3 (issue 12): a valid PropertyOverride moved between an Envoy Gateway target (Gateway) and
# an Istio one (Service) keeps its old mesh object until its patches are written where it points
# now, through a controller killed with SIGKILL in between: the new kind's creates are refused by
# a webhook at a dead URL (move_lib.sh's refuse_creates), the old object must stay, and it goes
# once the new one is written. Every event of the EnvoyPatchPolicies is watched: ours is deleted
# only after the EnvoyFilter exists.
. "$(dirname "$0")/lib.sh"
PO_NS=platform PO_NAME=m
. "$(dirname "$0")/move_lib.sh"
build=$1
lc_start "$build" "$e2e_work" --fake-envoy-gateway || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
eg_crds && lc_crds_ready envoyfilters.networking.istio.io || exit 1
for ns in "$PO_NS" istio-system; do kubectl create namespace "$ns" >/dev/null; done
ctl() { lc_controller --istio on --envoy-gateway on; }
ctl || exit 1
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $PO_NS}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: $PO_NS}
spec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: $PO_NS}
spec: {parentRefs: [{name: eg}], rules: [{backendRefs: [{name: web, port: 80}]}]}
YAML
epp=propertyoverride-$PO_NAME
eppct() { kubectl -n "$PO_NS" get envoypatchpolicy "$epp" -o jsonpath='{.spec.jsonPatches[0].operation.value}' 2>/dev/null; }

po '{group: gateway.networking.k8s.io, kind: Gateway, name: eg}' 1s
eventually "Gateway: EnvoyPatchPolicy written" 30 "1s" eppct
kubectl -n "$PO_NS" get envoypatchpolicies -w --output-watch-events \
  -o jsonpath='{.type} {.object.metadata.name}{"\n"}' >"$e2e_work/epp-events" 2>&1 &
lc_pids+=($!)
eventually "watching the policies" 30 "ADDED $epp" sh -c "head -1 '$e2e_work/epp-events'"

# --- Gateway -> Service, EnvoyFilter creates refused, the controller SIGKILLed: the policy stays ----
refuse_creates envoyfilters networking.istio.io
po '{group: "", kind: Service, name: web}' 2s
programmed_false "Gateway -> Service: the create fails (status says so)"
check "Gateway -> Service, create refused: the EnvoyPatchPolicy is still there" holds 3 is eppct 1s
kill -KILL "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
ctl || exit 1
check "after SIGKILL and restart, create still refused: the EnvoyPatchPolicy is still there" holds 3 is eppct 1s
check "no DELETED event of the policy before the EnvoyFilter exists" test -z "$(grep "^DELETED" "$e2e_work/epp-events")"
allow_creates
eventually "Gateway -> Service: the EnvoyFilter is written once creates work" 30 "2s" ct "$PO_NS"
eventually "Gateway -> Service: then the EnvoyPatchPolicy goes" 30 "" eppct

# --- Service -> Gateway, EnvoyPatchPolicy creates refused: the EnvoyFilter stays ---------------------
refuse_creates envoypatchpolicies gateway.envoyproxy.io
po '{group: gateway.networking.k8s.io, kind: Gateway, name: eg}' 3s
programmed_false "Service -> Gateway: the create fails (status says so)"
check "Service -> Gateway, create refused: the EnvoyFilter is still there" holds 3 is ct "$PO_NS" 2s
kill -KILL "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
ctl || exit 1
check "after SIGKILL and restart: the EnvoyFilter is still there" holds 3 is ct "$PO_NS" 2s
allow_creates
eventually "Service -> Gateway: the EnvoyPatchPolicy is written once creates work" 30 "3s" eppct
eventually "Service -> Gateway: then the EnvoyFilter goes" 30 "" efj "$PO_NS" '{.metadata.name}'
finish
