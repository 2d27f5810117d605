#!/usr/bin/env bash
# Istio targets end to end (issue 12), with the real kubectl: the EnvoyFilter CRD installed
# before the controller starts (--istio=auto finds it), a Service and a PropertyOverride ->
# the EnvoyFilter of the render golden; a valid edit updates it; an invalid edit (webhook down)
# keeps the last good one; the Service's selector change follows; drift is repaired; the
# Service deleted -> ours deleted and the status says so; a hand-made EnvoyFilter of our name is
# left alone and reported; the PropertyOverride deleted -> its EnvoyFilter gone; Mesh global
# from an allowed namespace -> Istio's root namespace (propertyoverride.<ns>.<name>: deleted by
# hand, written again; one of the old name deleted after it); lists under --istio-version 1.31.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
lc_crds_ready envoyfilters.networking.istio.io || exit 1
for ns in shop platform istio-system; do kubectl create namespace "$ns" >/dev/null; done
lc_controller --istio auto --istio-version 1.31 --allow-proxydefaults-from platform || exit 1
lc_register_webhook Fail
contains "auto: EnvoyFilters found at start" "$(cat "$e2e_work/controller.log")" "Istio targets programmed"

po=api-payments-outlier-detection
ef=propertyoverride-$po
efj() { kubectl -n shop get envoyfilter "$1" -o jsonpath="$2" 2>/dev/null; }
pov() { kubectl -n shop get propertyoverride "$1" -o jsonpath="$2" 2>/dev/null; }
percent() { efj "$ef" '{.spec.configPatches[3].patch.value.outlier_detection.max_ejection_percent}'; }

# --- create: the Service and the PropertyOverride -> the EnvoyFilter of the render golden -----------
kubectl apply -f examples/istio/outlier-detection.yaml >/dev/null
check "kubectl wait Programmed" kubectl -n shop wait --for=condition=Programmed "propertyoverride/$po" --timeout=60s
eventually "EnvoyFilter selects the Service's pods" 30 "api backend" efj "$ef" '{.spec.workloadSelector.labels.app} {.spec.workloadSelector.labels.tier}'
want=$(kubectl create --dry-run=client -o json -f tests/cli/testdata/render-golden/istio/outlier-detection.istio.out.yaml | jq -cS .spec.configPatches)
got=$(kubectl -n shop get envoyfilter "$ef" -o json | jq -cS .spec.configPatches)
check "configPatches are the render golden's" test "$got" = "$want"
check "owner-uid is the PropertyOverride's uid" test "$(kubectl -n shop get envoyfilter "$ef" -o json | jq -r '.metadata.annotations["propertyoverride.io/owner-uid"]')" = "$(pov $po '{.metadata.uid}')"
check "created annotation bound to its own uid" test -n "$(kubectl -n shop get envoyfilter "$ef" -o json | jq -r '.metadata.annotations["propertyoverride.io/created"] // empty')"
check "status.target names the EnvoyFilter" test "$(pov $po '{.status.target.kind} {.status.target.namespace}/{.status.target.name}')" = "EnvoyFilter shop/$ef"
contains "Programmed says written is programmed" "$(pov $po '{.status.conditions[?(@.type=="Programmed")].message}')" "written is programmed"
out=$(kubectl -n shop get pov 2>&1)
contains "kubectl get pov lists it" "$out" "$po"
contains "kubectl get pov: Programmed True" "$(kubectl -n shop get pov "$po" --no-headers 2>&1)" "True"

# --- a valid edit updates it ------------------------------------------------------------------------
kubectl -n shop patch propertyoverride "$po" --type=json -p '[{"op":"replace","path":"/spec/patches/3/value","value":40}]' >/dev/null
eventually "edit: EnvoyFilter updated" 30 "40" percent
eventually "edit: generation 2 programmed" 30 "2" pov "$po" '{.status.programmedGeneration}'

# --- an invalid edit: refused by the webhook; with it down, the last good EnvoyFilter stays --------
bad='[{"op":"add","path":"/spec/patches/-","value":{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"remove","path":"/outlier_detection"}}]'
out=$(kubectl -n shop patch propertyoverride "$po" --type=json -p "$bad" 2>&1)
contains "webhook refuses remove for Istio" "$out" "not expressible in an Istio EnvoyFilter"
lc_unregister_webhook
kubectl -n shop patch propertyoverride "$po" --type=json -p "$bad" >/dev/null
eventually "invalid edit: Accepted False" 30 "False" pov "$po" '{.status.conditions[?(@.type=="Accepted")].status}'
contains "invalid edit: generation 2 still live in the EnvoyFilter" "$(pov $po '{.status.conditions[?(@.type=="Programmed")].message}')" "generation 2 is live in EnvoyFilter shop/$ef"
check "invalid edit: last good EnvoyFilter kept" holds 2 sh -c "test \"\$(kubectl -n shop get envoyfilter $ef -o jsonpath='{.spec.configPatches[3].patch.value.outlier_detection.max_ejection_percent}')\" = 40"
contains "kubectl describe shows the Invalid event" "$(kubectl -n shop describe propertyoverride "$po" 2>&1)" "Invalid"
kubectl -n shop patch propertyoverride "$po" --type=json -p '[{"op":"remove","path":"/spec/patches/4"}]' >/dev/null
eventually "valid again: Programmed" 30 "Programmed" pov "$po" '{.status.conditions[?(@.type=="Programmed")].reason}'
lc_register_webhook Fail

# --- the Service's selector changes: the EnvoyFilter follows ----------------------------------------
kubectl -n shop patch service api --type=merge -p '{"spec":{"selector":{"app":"api-v2","tier":null}}}' >/dev/null
eventually "selector change: workloadSelector updated" 30 '{"app":"api-v2"}' sh -c "kubectl -n shop get envoyfilter $ef -o json | jq -c .spec.workloadSelector.labels"

# --- drift: someone edits our EnvoyFilter; it is put back --------------------------------------------
kubectl -n shop patch envoyfilter "$ef" --type=json -p '[{"op":"replace","path":"/spec/configPatches/3/patch/value/outlier_detection/max_ejection_percent","value":99}]' >/dev/null
eventually "drift repaired" 30 "40" percent

# --- the Service deleted: ours deleted, the status says so; back with the Service -------------------
kubectl -n shop delete service api >/dev/null
eventually "Service deleted: EnvoyFilter deleted" 30 "" efj "$ef" '{.metadata.name}'
eventually "Service deleted: status TargetNotFound" 30 "TargetNotFound" pov "$po" '{.status.conditions[?(@.type=="Programmed")].reason}'
kubectl apply -f examples/istio/outlier-detection.yaml >/dev/null
eventually "Service back: EnvoyFilter back" 30 "$ef" efj "$ef" '{.metadata.name}'

# --- a hand-made EnvoyFilter of our name: left alone, reported ---------------------------------------
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: propertyoverride-handmade
  namespace: shop
spec:
  configPatches:
    - applyTo: CLUSTER
      match: {context: SIDECAR_OUTBOUND}
      patch: {operation: MERGE, value: {connect_timeout: 9s}}
YAML
handmade=$(kubectl -n shop get envoyfilter propertyoverride-handmade -o json | jq -cS '{spec, annotations: .metadata.annotations}')
sed -e "s/name: $po/name: handmade/" examples/istio/outlier-detection.yaml | kubectl apply -f - >/dev/null
eventually "look-alike: status TargetError" 30 "TargetError" pov handmade '{.status.conditions[?(@.type=="Programmed")].reason}'
contains "look-alike: the status says it is left alone" "$(pov handmade '{.status.conditions[?(@.type=="Programmed")].message}')" "left alone"
contains "look-alike: kubectl describe shows the Warning event" "$(kubectl -n shop describe propertyoverride handmade 2>&1)" "TargetError"
check "look-alike: unchanged" holds 2 sh -c "test '$handmade' = \"\$(kubectl -n shop get envoyfilter propertyoverride-handmade -o json | jq -cS '{spec, annotations: .metadata.annotations}')\""
check "look-alike: deleting the PropertyOverride" kubectl -n shop delete propertyoverride handmade --timeout=60s
check "look-alike: still there after" test "$(efj propertyoverride-handmade '{.metadata.name}')" = propertyoverride-handmade

# --- Mesh global: Istio's root namespace, no selector; lists under 1.31 -----------------------------
kubectl apply -f examples/istio/mesh-wide-timeouts.yaml >/dev/null
eventually "Mesh: EnvoyFilter in istio-system" 30 "propertyoverride.platform.mesh-defaults" \
  sh -c "kubectl -n istio-system get envoyfilter propertyoverride.platform.mesh-defaults -o jsonpath='{.metadata.name}'"
check "Mesh: no workloadSelector" test -z "$(kubectl -n istio-system get envoyfilter propertyoverride.platform.mesh-defaults -o jsonpath='{.spec.workloadSelector}')"
mef=propertyoverride.platform.mesh-defaults
mesh_ef() { kubectl -n istio-system get envoyfilter "$1" -o jsonpath='{.metadata.name}' 2>/dev/null; }
kubectl -n istio-system delete envoyfilter "$mef" >/dev/null
eventually "Mesh: deleted by hand, written again (the EnvoyFilter watch knows the new name)" 15 "$mef" mesh_ef "$mef"
# upgrade: the EnvoyFilter an earlier version wrote (propertyoverride-<name>, ours: owner and
# created annotations) goes once the new one is there
uid=$(kubectl -n platform get propertyoverride mesh-defaults -o jsonpath='{.metadata.uid}')
kubectl -n istio-system get envoyfilter "$mef" -o json |
  jq --arg uid "$uid" '{apiVersion, kind, spec, metadata: {name: "propertyoverride-mesh-defaults", namespace: "istio-system",
     labels: .metadata.labels, annotations: {"propertyoverride.io/owner-uid": $uid}}}' | kubectl create -f - >/dev/null
olduid=$(kubectl -n istio-system get envoyfilter propertyoverride-mesh-defaults -o jsonpath='{.metadata.uid}')
kubectl -n istio-system annotate envoyfilter propertyoverride-mesh-defaults "propertyoverride.io/created=$olduid" >/dev/null
eventually "upgrade: the old-named EnvoyFilter deleted" 15 "" mesh_ef propertyoverride-mesh-defaults
check "upgrade: the new one stays" test "$(mesh_ef "$mef")" = "$mef"
kubectl apply -f examples/istio/route-internal-headers.yaml >/dev/null
eventually "lists: MERGE_AND_REPLACE_LIST under --istio-version 1.31" 30 "MERGE_AND_REPLACE_LIST" \
  efj propertyoverride-frontend-internal-headers '{.spec.configPatches[0].patch.operation}'

# --- the PropertyOverride deleted: its EnvoyFilter goes, then it does --------------------------------
check "delete: kubectl delete returns" kubectl -n shop delete propertyoverride "$po" --timeout=60s
check "delete: EnvoyFilter gone" test -z "$(efj "$ef" '{.metadata.name}')"
finish
