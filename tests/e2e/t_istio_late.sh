#!/usr/bin/env bash
# --istio=auto with Istio installed after the controller started (issue 12): no EnvoyFilter CRD
# at start -> PropertyOverrides of a Service and of the Mesh say Programmed=False MeshNotEnabled
# and why (checked again); the CRD installed -> within the recheck interval (1 s here) the
# controller watches Services and EnvoyFilters, programs both EnvoyFilters without a restart,
# logs it, and propertyoverride_istio_enabled goes from 0 to 1. Local and real API server.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
for ns in shop platform istio-system; do kubectl create namespace "$ns" >/dev/null; done
lc_controller --istio auto --istio-recheck-interval 1 --allow-proxydefaults-from platform || exit 1
contains "auto: no EnvoyFilters at start" "$(cat "$e2e_work/controller.log")" "Istio targets not programmed"
check "istio_enabled gauge 0" sh -c "curl -s http://127.0.0.1:$LC_PROBE_PORT/metrics | grep -qx 'propertyoverride_istio_enabled 0'"

po=api-payments-outlier-detection
pov() { kubectl -n "$1" get propertyoverride "$2" -o jsonpath="$3" 2>/dev/null; }
kubectl apply -f examples/istio/outlier-detection.yaml >/dev/null
kubectl apply -f examples/istio/mesh-wide-timeouts.yaml >/dev/null
eventually "before: the Service's says MeshNotEnabled" 30 MeshNotEnabled pov shop "$po" '{.status.conditions[?(@.type=="Programmed")].reason}'
eventually "before: the Mesh's says MeshNotEnabled" 30 MeshNotEnabled pov platform mesh-defaults '{.status.conditions[?(@.type=="Programmed")].reason}'
contains "before: the status says it is checked again" "$(pov shop "$po" '{.status.conditions[?(@.type=="Programmed")].message}')" \
  "checked again every --istio-recheck-interval"

# Istio installed: the EnvoyFilter CRD
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
lc_crds_ready envoyfilters.networking.istio.io || exit 1
eventually "after: the Service's EnvoyFilter written" 30 "propertyoverride-$po" \
  sh -c "kubectl -n shop get envoyfilter propertyoverride-$po -o jsonpath='{.metadata.name}' 2>/dev/null"
eventually "after: the Mesh's EnvoyFilter written" 30 "propertyoverride.platform.mesh-defaults" \
  sh -c "kubectl -n istio-system get envoyfilter propertyoverride.platform.mesh-defaults -o jsonpath='{.metadata.name}' 2>/dev/null"
eventually "after: the Service's Programmed" 30 Programmed pov shop "$po" '{.status.conditions[?(@.type=="Programmed")].reason}'
eventually "after: the Mesh's Programmed" 30 Programmed pov platform mesh-defaults '{.status.conditions[?(@.type=="Programmed")].reason}'
contains "after: logged" "$(cat "$e2e_work/controller.log")" "EnvoyFilters are served now"
check "after: istio_enabled gauge 1" test "$(metric propertyoverride_istio_enabled)" = 1
check "after: the controller did not restart" kill -0 "$LC_CONTROLLER_PID"
# the watches work: drift repaired
kubectl -n shop delete envoyfilter "propertyoverride-$po" >/dev/null
eventually "after: a deleted EnvoyFilter comes back (the watch)" 30 "propertyoverride-$po" \
  sh -c "kubectl -n shop get envoyfilter propertyoverride-$po -o jsonpath='{.metadata.name}' 2>/dev/null"
finish
