# The setting of t_istio_move.sh, t_consul_move.sh and t_istio_bind.sh (sourced after lib.sh):
# the local API server with the EnvoyFilter CRD, namespace PO_NS (and istio-system), Service web
# in it, the controller (--istio on, plus the flags given), and helpers for PropertyOverride
# PO_NAME there, whose one patch sets the outbound clusters' connect_timeout.
move_start() { # build, controller flags...
  local build=$1
  shift
  lc_start "$build" "$e2e_work" || exit 1
  kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
  lc_crds_ready envoyfilters.networking.istio.io || exit 1
  for ns in "$PO_NS" istio-system; do kubectl create namespace "$ns" >/dev/null; done
  lc_controller --istio on "$@" || exit 1
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $PO_NS}
spec: {selector: {app: web}, ports: [{port: 80}]}
YAML
}
po() { # targetRef, connect_timeout
  kubectl apply -f - >/dev/null <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: $PO_NAME, namespace: $PO_NS}
spec:
  targetRef: $1
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /connect_timeout
      value: $2
YAML
}
# The API server refuses every OPERATION of a resource: a webhook at a dead URL, failurePolicy Fail.
# With a label KEY=VALUE, only of the objects carrying it.
refuse() { # operation resource group [label]
  local dead selector=""
  dead=$(lc_free_port)
  [ -n "${4:-}" ] && selector="objectSelector: {matchLabels: {\"${4%%=*}\": \"${4#*=}\"}}"
  kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: refuse}
webhooks:
  - name: refuse.adv1.test
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 1
    clientConfig: {url: "https://127.0.0.1:$dead/refuse"}
    rules: [{apiGroups: ["$3"], apiVersions: ["*"], resources: ["$2"], operations: [$1]}]
    $selector
YAML
}
refuse_creates() { refuse CREATE "$@"; } # resource group
allow() { kubectl delete validatingwebhookconfiguration refuse >/dev/null; }
allow_creates() { allow; }
# The EnvoyFilter's name: propertyoverride-<name> beside a Service, propertyoverride.<ns>.<name>
# in Istio's root namespace (a Mesh target's, docs/crd.md).
efname() { [ "$1" = istio-system ] && echo "propertyoverride.$PO_NS.$PO_NAME" || echo "propertyoverride-$PO_NAME"; }
efj() { kubectl -n "$1" get envoyfilter "$(efname "$1")" -o jsonpath="$2" 2>/dev/null; } # namespace jsonpath
ct() { efj "$1" '{.spec.configPatches[0].patch.value.connect_timeout}'; }                       # namespace
pov() { kubectl -n "$PO_NS" get propertyoverride "$PO_NAME" -o jsonpath="$1" 2>/dev/null; }
sd_entry() { entries servicedefaults web "$PO_NS"; }
is() { local want=${*: -1}; [ "$("${@:1:$#-1}")" = "$want" ]; } # command... want
programmed_false() { eventually "$1" 30 "False" pov '{.status.conditions[?(@.type=="Programmed")].status}'; }
