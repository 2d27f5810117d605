#!/usr/bin/env bash
# An adversary's measurement (a script, not registered): PO_APISERVER=real bash tests/e2e/adv_eg_memory.sh build
# Phase A (escape): the bound counts json-c's bytes, but the API server stores Go's encoding,
#   which writes '<', '>' and '&' as \u003c (6 bytes): a platform PropertyOverride opted in to
#   a tenant's routes, with a cluster patch value holding such characters, computes a policy
#   under 1 MiB that is stored (and sent to etcd) several times larger: "request is too large",
#   the policy frozen, the platform's edits never applied (the issue's original symptom).
# Phase B (opted in, memory): ADV_POS PropertyOverrides with routeNamespaces ["*"] and 4 cluster
#   patches each, ADV_ROUTES 16-rule tenant routes over 4 namespaces: the controller's VmHWM.
# Phase C (route cache): ADV_FAT routes of ~235 KiB (header matches the controller never reads),
#   not followed: the controller's RSS against the 256 MiB limit of deploy/ and the chart.
# Phase D (after C): the tenant churns a route (create/delete, 30 s) while its fat routes exist:
#   every Gateway reconcile parses every cached HTTPRoute text; the platform's edit latency and
#   the controller's CPU.
# Measured 2026-12-04 (real kube-apiserver, this build 1bb7fe9):
#   A: update refused by etcd's gRPC limit "2423261 vs. 2097152", policy left with 0 entries
#   B: 5 POs, 2000 routes: VmHWM 223 MiB; 5 POs, 4000 routes: 379 MiB; 1 PO, 4000 routes: 360 MiB
#   C: 600 fat routes (138 MiB): RSS 159 MiB; 1100 (252 MiB): RSS 382 MiB (limit 256 MiB)
#   D: 600 fat routes + churn: controller CPU 14.2 s in 30 s, platform edit 2.8 s (0.77 s quiet)
# Measured 2026-12-04 after the fixes (branch h-eg2, real kube-apiserver):
#   A: 1985 entries, 1,030,145 bytes stored (raw GET), no "too large"
#   B (ADV_POS=1 ADV_ROUTES=4000 ADV_PHASES=B): VmHWM 99.6 MiB (26 MiB before the PropertyOverride)
#   C (ADV_ROUTES=0 ADV_FAT=1100 ADV_PHASES=CD): 1100 fat routes (252 MiB): RSS 24.8 MiB
#   D (after C, 1100 fat routes): controller CPU 12.3 s in 30 s of 449 requests/s (the Gateway's
#     reconciles still parse every cached route, now ~1 KB each), platform edit 0.55 s (0.55 s quiet)
. "$(dirname "$0")/lib.sh"
build=$1
pos=${ADV_POS:-5}
nroutes=${ADV_ROUTES:-2000}
fat=${ADV_FAT:-1100}
phases=${ADV_PHASES:-ABC}
fake=()
[ "${PO_APISERVER:-local}" = local ] && fake=(--fake-envoy-gateway)
eg_crds() {
  local f
  for f in crds/envoygateway/*.yaml; do
    kubectl create --dry-run=client -o json -f "$f" |
      jq '.metadata.annotations["api-approved.kubernetes.io"] //= "unapproved, a minimal test copy (crds/envoygateway)"' |
      kubectl apply -f - >/dev/null
  done
}
lc_start "$build" "$e2e_work" "${fake[@]}" || exit 1
eg_crds
kubectl wait --for=condition=Established crd/envoypatchpolicies.gateway.envoyproxy.io \
  crd/gateways.gateway.networking.k8s.io crd/httproutes.gateway.networking.k8s.io --timeout=60s >/dev/null
for ns in infra t1 t2 t3 t4; do kubectl create namespace $ns >/dev/null; done
lc_controller --envoy-gateway auto || exit 1
lc_register_webhook Fail
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$LC_CONTROLLER_PID/status"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$LC_CONTROLLER_PID/status"; }
pol() { kubectl -n infra get envoypatchpolicy "propertyoverride-$1" -o json 2>/dev/null; }
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: infra}
spec:
  gatewayClassName: eg
  listeners:
    - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: site, namespace: infra}
spec:
  parentRefs: [{name: eg}]
  rules:
    - backendRefs: [{name: site, port: 8080}]
YAML
export ADV_URL=$LC_URL ADV_CA=$LC_WORK/tls/ca.crt ADV_TOKEN=$(lc_token)
drv=$(dirname "$0")/adv_eg_driver.py
per=$((nroutes / 4))
for ns in t1 t2 t3 t4; do /usr/bin/python3 "$drv" bulk $ns r "$per" 16 0 | sed "s/^/     $ns: /"; done

if [[ $phases == *A* ]]; then
  v=$(printf '<%.0s' $(seq 60))
  kubectl apply -f - >/dev/null <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: esc, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  routeNamespaces: [t1]
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /alt_stat_name
      value: "$v"
YAML
  sleep 20
  n=$(pol esc | jq '.spec.jsonPatches | length' 2>/dev/null)
  raw=$(kubectl get --raw /apis/gateway.envoyproxy.io/v1alpha1/namespaces/infra/envoypatchpolicies/propertyoverride-esc 2>/dev/null | wc -c)
  msg=$(kubectl -n infra get propertyoverride esc -o jsonpath='{.status.conditions[?(@.type=="Programmed")].message}')
  echo "     escape: policy entries ${n:-none}, stored (raw GET) $raw bytes; 'too large' lines in the log: $(grep -c 'too large' "$e2e_work/controller.log")"
  echo "     escape: Programmed: $(echo "$msg" | cut -c1-400)"
  kubectl get --raw /apis/gateway.envoyproxy.io/v1alpha1/namespaces/infra/envoypatchpolicies/propertyoverride-esc 2>/dev/null | grep -o 'alt_stat_name[^,]*' | head -1 | cut -c1-80 | sed 's/^/     escape: stored as /'
  check "escape: the policy exists (programmed with what fits)" test -n "$n" -a "${n:-0}" -gt 1
  kubectl -n infra delete propertyoverride esc >/dev/null
fi

if [[ $phases == *B* ]]; then
  h0=$(hwm_kib)
  for i in $(seq 1 "$pos"); do
    kubectl apply -f - >/dev/null <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: p$i, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  routeNamespaces: ["*"]
  patches:
    - {resourceFilter: {resourceType: cluster, trafficDirection: outbound}, op: add, path: /connect_timeout, value: 3s}
    - {resourceFilter: {resourceType: cluster, trafficDirection: outbound}, op: add, path: /per_connection_buffer_limit_bytes/value, value: 65536}
    - {resourceFilter: {resourceType: cluster, trafficDirection: outbound}, op: add, path: /outlier_detection/consecutive_5xx/value, value: 7}
    - {resourceFilter: {resourceType: cluster, trafficDirection: outbound}, op: add, path: /outlier_detection/max_ejection_percent/value, value: 50}
YAML
  done
  sleep 40
  for i in $(seq 1 "$pos"); do echo "     p$i: $(pol p$i | jq -c '.spec.jsonPatches | length') entries, $(pol p$i | jq -c .spec.jsonPatches | wc -c) bytes"; done
  kubectl -n infra patch propertyoverride p1 --type=json -p '[{"op":"replace","path":"/spec/patches/0/value","value":"4s"}]' >/dev/null
  sleep 30
  hwm=$(hwm_kib)
  echo "     opted in: $pos PropertyOverrides, $nroutes tenant routes: VmHWM $hwm KiB (before $h0), VmRSS $(rss_kib) KiB"
  check "opted in: VmHWM ($((hwm / 1024)) MiB) under 160 MiB" test "$hwm" -lt $((160 * 1024))
  for i in $(seq 1 "$pos"); do kubectl -n infra delete propertyoverride p$i >/dev/null; done
fi

if [[ $phases == *C* ]]; then
  /usr/bin/python3 "$drv" fat t1 "$fat" 256 | sed 's/^/     fat: /'
  sleep 15
  echo "     fat: controller VmRSS $(rss_kib) KiB VmHWM $(hwm_kib) KiB; alive: $(kill -0 $LC_CONTROLLER_PID 2>/dev/null && echo yes || echo no)"
  check "fat: the controller's RSS under 256 MiB with $fat tenant routes it does not follow" test "$(rss_kib)" -lt $((256 * 1024))
fi
if [[ $phases == *D* ]]; then
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: platform, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  patches:
    - {resourceFilter: {resourceType: cluster, trafficDirection: outbound}, op: add, path: /connect_timeout, value: 3s}
YAML
  sleep 15
  val() { pol platform | jq -r '[.spec.jsonPatches[].operation.value] | unique | join(",")'; }
  t0=$(date +%s.%N)
  kubectl -n infra patch propertyoverride platform --type=json -p '[{"op":"replace","path":"/spec/patches/0/value","value":"4s"}]' >/dev/null
  eventually "quiet: a platform edit applied" 120 4s val
  quiet=$(echo "$(date +%s.%N) - $t0" | bc)
  cpu0=$(awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$LC_CONTROLLER_PID/stat")
  /usr/bin/python3 "$drv" churn t2 30 >"$e2e_work/churn.out" &
  ch=$!
  sleep 10
  t0=$(date +%s.%N)
  kubectl -n infra patch propertyoverride platform --type=json -p '[{"op":"replace","path":"/spec/patches/0/value","value":"5s"}]' >/dev/null
  eventually "churn: a platform edit applied" 300 5s val
  busy=$(echo "$(date +%s.%N) - $t0" | bc)
  wait $ch
  cpu1=$(awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$LC_CONTROLLER_PID/stat")
  echo "     churn with fat routes: $(cat "$e2e_work/churn.out"); edit latency quiet ${quiet} s, during churn ${busy} s; controller CPU $(echo "$cpu1 - $cpu0" | bc) s"
fi
finish
