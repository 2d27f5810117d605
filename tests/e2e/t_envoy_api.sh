#!/usr/bin/env bash
# Issue 24 end to end, with the real kubectl: each PropertyOverride is judged by the Envoy API of
# the release its target's mesh runs. A Consul release without a snapshot fails the start;
# Istio's release is read from the istiod Service's app.kubernetes.io/version label (1.30.2 here;
# a canary revision's Service, listed first, says 1.31.0: the oldest of them is taken);
# status.envoyApi and the Accepted message name the snapshot; the webhook's denial names it;
# Listener.tcp_keepalive (go-control-plane envoy v1.37.0, not v1.32.4) is refused on a Consul target
# and admitted on an Istio 1.30 one; a field the snapshot deprecates (use_tcp_for_dns_lookups,
# dns_jitter) gets the Deprecated condition (the override still programmed), which goes when the
# field is removed; a restarted controller writes no status.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
lc_crds_ready envoyfilters.networking.istio.io || exit 1
for ns in shop istio-system; do kubectl create namespace "$ns" >/dev/null; done
# istiod's Service as Istio's chart labels it
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata:
  name: istiod
  namespace: istio-system
  labels: {app: istiod, app.kubernetes.io/version: "1.30.2"}
spec:
  selector: {app: istiod}
  ports: [{port: 15012}]
---
# a canary upgrade's second revision (listed before istiod: the first one listed won, adv-24)
apiVersion: v1
kind: Service
metadata:
  name: istio-canary
  namespace: istio-system
  labels: {app: istiod, istio.io/rev: 1-31, app.kubernetes.io/version: "1.31.0"}
spec:
  selector: {app: istiod, istio.io/rev: 1-31}
  ports: [{port: 15012}]
YAML

# --- a release without a snapshot fails the start, naming those there are ---------------------------
out=$("$build/propertyoverride" controller --kubeconfig "$KUBECONFIG" --webhook-bind-address 0 --consul-version 1.19 2>&1)
check "--consul-version 1.19: exit 2" test $? = 2
contains "--consul-version 1.19: the releases there are" "$out" \
  "propertyoverride controller: --consul-version '1.19': not a release this build knows; Consul releases with an Envoy API snapshot in this build: 1.21, 1.22 (default 1.22)"
out=$("$build/propertyoverride" controller --kubeconfig "$KUBECONFIG" --webhook-bind-address 0 --envoy-gateway-version 2.0 2>&1)
contains "--envoy-gateway-version 2.0 refused" "$out" "--envoy-gateway-version '2.0': not a release this build knows; Envoy Gateway releases with an Envoy API snapshot in this build: 1.5, 1.6, 1.7, 1.8, 1.9 (default 1.9)"

lc_controller --istio auto || exit 1
lc_register_webhook Fail
log=$(cat "$e2e_work/controller.log")
contains "log: Istio 1.30 read from the istiod Services" "$log" '"mesh":"Istio","release":"1.30","envoy_api":"v1.37.0","source":"detected"'
contains "log: every istiod Service seen" "$log" '"seen":"istio-canary 1.31.0, istiod 1.30.2"'
contains "log: Consul's default release" "$log" '"mesh":"Consul","release":"1.22","envoy_api":"v1.32.4","source":"default"'

pov() { kubectl -n shop get propertyoverride "$1" -o jsonpath="$2" 2>/dev/null; }
dep='{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/use_tcp_for_dns_lookups","value":true}'
good='{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/outlier_detection/max_ejection_percent","value":50}'
po_yaml() { # name kind target patches...
  local name=$1 kind=$2 target=$3
  shift 3
  printf '{"apiVersion":"propertyoverride.io/v1alpha1","kind":"PropertyOverride","metadata":{"name":"%s","namespace":"shop"},"spec":{"targetRef":{"kind":"%s","name":"%s"},"patches":[%s]}}' \
    "$name" "$kind" "$target" "$(IFS=,; echo "$*")"
}

# --- a Consul target: status.envoyApi, the Accepted message, the Deprecated condition -----------------
out=$(po_yaml web-dns ServiceDefaults web "$good" "$dep" | kubectl apply -f - 2>&1)
contains "the webhook warns of the deprecated field" "$out" "use_tcp_for_dns_lookups"
check "kubectl wait Programmed" kubectl -n shop wait --for=condition=Programmed propertyoverride/web-dns --timeout=30s
check "status.envoyApi: Consul 1.22, v1.32.4" test "$(pov web-dns '{.status.envoyApi.mesh} {.status.envoyApi.release} {.status.envoyApi.snapshot}')" = "Consul 1.22 v1.32.4"
contains "Accepted names the snapshot" "$(pov web-dns '{.status.conditions[?(@.type=="Accepted")].message}')" \
  "2 patches are valid for Consul and Envoy (judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22)"
check "Deprecated: True, DeprecatedFields" test "$(pov web-dns '{.status.conditions[?(@.type=="Deprecated")].status} {.status.conditions[?(@.type=="Deprecated")].reason}')" = "True DeprecatedFields"
msg=$(pov web-dns '{.status.conditions[?(@.type=="Deprecated")].message}')
contains "Deprecated names the snapshot" "$msg" "1 field set here is deprecated (judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22)"
contains "Deprecated names the field" "$msg" "patches[1]: /use_tcp_for_dns_lookups: field 'use_tcp_for_dns_lookups' of envoy.config.cluster.v3.Cluster is deprecated"
contains "kubectl describe shows the DeprecatedFields event" "$(kubectl -n shop describe propertyoverride web-dns 2>&1)" "DeprecatedFields"
check "the deprecated field is programmed all the same" sh -c "kubectl -n shop get servicedefaults web -o json | grep -q use_tcp_for_dns_lookups"

# --- the webhook's denial names the snapshot --------------------------------------------------------------
bad='{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/outlier_detection/max_ejection_percent","value":150}'
out=$(po_yaml web-bad ServiceDefaults web "$bad" | kubectl apply -f - 2>&1)
contains "denial: the rule" "$out" "150 violates uint32 lte 100"
contains "denial: the snapshot" "$out" "judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22"

# --- a field only newer Envoy APIs have: refused on Consul (1.22: v1.32.4), admitted on Istio 1.30 -----
ka='{"resourceFilter":{"resourceType":"listener","trafficDirection":"inbound"},"op":"add","path":"/tcp_keepalive/keepalive_probes","value":3}'
out=$(po_yaml web-ka ServiceDefaults web "$ka" | kubectl apply -f - 2>&1)
contains "Consul: tcp_keepalive refused" "$out" "no match for field 'tcp_keepalive'"
contains "Consul: the snapshots that have it" "$out" "in go-control-plane envoy v1.37.0 and v1.40.0 but not in go-control-plane envoy v1.32.4"
contains "Consul: the snapshot judging it" "$out" "judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22"
check "Consul: not stored" sh -c "! kubectl -n shop get propertyoverride web-ka >/dev/null 2>&1"
po_yaml api-ka Service api "$ka" | kubectl apply -f - >/dev/null
eventually "Istio target: status.envoyApi Istio 1.30 v1.37.0" 30 "Istio 1.30 v1.37.0" \
  pov api-ka '{.status.envoyApi.mesh} {.status.envoyApi.release} {.status.envoyApi.snapshot}'
check "Istio 1.30: tcp_keepalive accepted" test "$(pov api-ka '{.status.conditions[?(@.type=="Accepted")].status}')" = True
contains "Istio target: Accepted names it" "$(pov api-ka '{.status.conditions[?(@.type=="Accepted")].message}')" \
  "judged against go-control-plane envoy v1.37.0, the Envoy API of Istio 1.30"

# --- the deprecated field removed: the condition goes ------------------------------------------------------
kubectl -n shop patch propertyoverride web-dns --type=json -p '[{"op":"remove","path":"/spec/patches/1"}]' >/dev/null
eventually "field removed: generation 2 programmed" 30 "2" pov web-dns '{.status.programmedGeneration}'
eventually "field removed: no Deprecated condition" 30 "" pov web-dns '{.status.conditions[?(@.type=="Deprecated")].type}'
check "field removed: Accepted and Programmed only" test "$(pov web-dns '{.status.conditions[*].type}')" = "Accepted Programmed"
jitter='{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/dns_jitter","value":"2s"}'
po_yaml web-dns2 ServiceDefaults web "$jitter" | kubectl apply -f - >/dev/null 2>&1
eventually "dns_jitter (in v1.32.4, deprecated): Deprecated True" 30 "True" pov web-dns2 '{.status.conditions[?(@.type=="Deprecated")].status}'
contains "dns_jitter: named" "$(pov web-dns2 '{.status.conditions[?(@.type=="Deprecated")].message}')" "field 'dns_jitter' of envoy.config.cluster.v3.Cluster is deprecated"
eventually "dns_jitter: programmed all the same" 30 "True" pov web-dns2 '{.status.conditions[?(@.type=="Programmed")].status}'

# --- a restart writes no status ------------------------------------------------------------------------------
rvs() { kubectl -n shop get propertyoverrides -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}'; }
before=$(rvs)
kill -TERM "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
lc_controller --istio auto || exit 1
check "restart: no PropertyOverride written (resourceVersions $before)" holds 5 sh -c "test \"\$(kubectl -n shop get propertyoverrides -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}')\" = '$before'"
check "restart: Deprecated still there" test "$(pov web-dns2 '{.status.conditions[?(@.type=="Deprecated")].status}')" = True
finish
