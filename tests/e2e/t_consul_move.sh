#!/usr/bin/env bash
# adv1 (issue 12): a valid PropertyOverride moved from a Consul target keeps its entry there
# until its patches are written where it points now, as one moved from an Istio target keeps its
# EnvoyFilter (t_istio_move.sh). A ValidatingWebhookConfiguration refusing every CREATE of a kind
# (a dead URL, failurePolicy Fail) makes the new target's create fail: ServiceDefaults ->
# Service (EnvoyFilter creates refused) and ServiceDefaults web -> other (ServiceDefaults creates
# refused): the old entry must stay.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
kubectl wait --for=condition=Established crd/envoyfilters.networking.istio.io --timeout=60s >/dev/null
for ns in platform istio-system; do kubectl create namespace "$ns" >/dev/null; done
lc_controller --istio on --allow-proxydefaults-from platform || exit 1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: platform}
spec: {selector: {app: web}, ports: [{port: 80}]}
YAML
po() { # targetRef, connect_timeout
  kubectl apply -f - >/dev/null <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: m, namespace: platform}
spec:
  targetRef: $1
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /connect_timeout
      value: $2
YAML
}
refuse_creates() { # resource group
  local dead
  dead=$(lc_free_port)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: refuse-creates}
webhooks:
  - name: refuse.adv1.test
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 1
    clientConfig: {url: "https://127.0.0.1:$dead/refuse"}
    rules: [{apiGroups: ["$2"], apiVersions: ["*"], resources: ["$1"], operations: [CREATE]}]
YAML
}
allow_creates() { kubectl delete validatingwebhookconfiguration refuse-creates >/dev/null; }
efj() { kubectl -n "$1" get envoyfilter propertyoverride-m -o jsonpath="$2" 2>/dev/null; }
ct() { efj "$1" '{.spec.configPatches[0].patch.value.connect_timeout}'; }
pov() { kubectl -n platform get propertyoverride m -o jsonpath="$1" 2>/dev/null; }
sd_entry() { entries servicedefaults web platform; }
is() { local want=${*: -1}; [ "$("${@:1:$#-1}")" = "$want" ]; } # command... want

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web, namespace: platform}
spec: {protocol: http}
YAML
# --- ServiceDefaults -> Service, the EnvoyFilter's create refused: the entry stays ----------
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 1s
eventually "ServiceDefaults: entry written" 30 "m@1" sd_entry
refuse_creates envoyfilters networking.istio.io
po '{group: "", kind: Service, name: web}' 2s
eventually "ServiceDefaults -> Service: the create fails (status says so)" 30 "False" pov '{.status.conditions[?(@.type=="Programmed")].status}'
check "ServiceDefaults -> Service, create refused: the ServiceDefaults entry is still there" holds 3 is sd_entry m@1
allow_creates
eventually "ServiceDefaults -> Service: written once creates work" 30 "2s" ct platform

# --- the same between two Consul targets: ServiceDefaults web -> other, other's create refused -------
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web, namespace: platform}
spec: {protocol: http}
YAML
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: web}' 3s
eventually "ServiceDefaults web: entry" 30 "m@3" sd_entry
refuse_creates servicedefaults consul.hashicorp.com
po '{group: consul.hashicorp.com, kind: ServiceDefaults, name: other}' 4s
eventually "web -> other: the create fails (status says so)" 30 "False" pov '{.status.conditions[?(@.type=="Programmed")].status}'
check "web -> other, create refused: the entry in web is still there" holds 3 is sd_entry m@3
allow_creates
eventually "web -> other: written once creates work" 30 "m@4" entries servicedefaults other platform
finish
