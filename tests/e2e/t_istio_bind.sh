#!/usr/bin/env bash
# adv1 (issue 12): an EnvoyFilter the controller created is bound to itself by a second write
# (the propertyoverride.io/created annotation = its uid). When that write fails and the
# controller restarts before it succeeds, the restarted controller must still take the
# EnvoyFilter as its own (it carries this PropertyOverride's owner-uid and nothing else wrote
# it), not leave it as a foreign look-alike that stops every later edit from being programmed.
# Also: a tenant deleting our EnvoyFilter gets it back.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
kubectl wait --for=condition=Established crd/envoyfilters.networking.istio.io --timeout=60s >/dev/null
kubectl create namespace shop >/dev/null
lc_controller --istio on || exit 1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
YAML
po() { # connect_timeout
  kubectl apply -f - >/dev/null <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: b, namespace: shop}
spec:
  targetRef: {group: "", kind: Service, name: web}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /connect_timeout
      value: $1
YAML
}
ct() { kubectl -n shop get envoyfilter propertyoverride-b -o jsonpath='{.spec.configPatches[0].patch.value.connect_timeout}' 2>/dev/null; }
pov() { kubectl -n shop get propertyoverride b -o jsonpath="$1" 2>/dev/null; }
created() { kubectl -n shop get envoyfilter propertyoverride-b -o json 2>/dev/null | jq -r '.metadata.annotations["propertyoverride.io/created"] // "none"'; }

# --- EnvoyFilter UPDATEs refused (a dead webhook): the create succeeds, the binding write fails ----
dead=$(lc_free_port)
kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: refuse-updates}
webhooks:
  - name: refuse.adv1.test
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 1
    clientConfig: {url: "https://127.0.0.1:$dead/refuse"}
    rules: [{apiGroups: [networking.istio.io], apiVersions: ["*"], resources: [envoyfilters], operations: [UPDATE]}]
YAML
po 1s
eventually "created, not yet bound" 30 "1s none" sh -c "echo \$(kubectl -n shop get envoyfilter propertyoverride-b -o json 2>/dev/null | jq -r '.spec.configPatches[0].patch.value.connect_timeout, (.metadata.annotations[\"propertyoverride.io/created\"] // \"none\")')"
# --- the controller restarts before the binding write succeeds -----------------------------------
kill -9 "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
kubectl delete validatingwebhookconfiguration refuse-updates >/dev/null
lc_controller --istio on || exit 1
po 2s
eventually "after the restart: the edit is programmed into its own EnvoyFilter" 30 "2s" ct
eventually "after the restart: Programmed" 30 "True" pov '{.status.conditions[?(@.type=="Programmed")].status}'
check "after the restart: bound" test "$(created)" = "$(kubectl -n shop get envoyfilter propertyoverride-b -o jsonpath='{.metadata.uid}')"

# --- a tenant deletes our EnvoyFilter: it comes back ------------------------------------------------
kubectl -n shop delete envoyfilter propertyoverride-b >/dev/null
eventually "deleted by a tenant: back" 30 "2s" ct
finish
