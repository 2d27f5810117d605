#!/usr/bin/env bash
# deploy/: `kubectl kustomize` renders it offline; the objects pass their Kubernetes schemas and
# hold the properties the issue asks for (least-privilege RBAC, hardened pods, the webhook's
# settings); every controller flag it passes exists; and `kubectl apply -k deploy/` works against
# the local API server (twice: the second apply changes nothing), as does the chart's render.
# With PO_APISERVER=real (ctest deploy_deploy_real) the same against the real kube-apiserver and
# etcd: deploy/ installs its own CRD, RBAC is enforced, and the controller runs as deploy/'s
# ServiceAccount (a token for it), so what the Roles grant is exactly what it needs.
#   t_deploy.sh BUILD_DIR
source "$(dirname "$0")/lib.sh"
j="$work/deploy.json"
kubectl kustomize "$top/deploy" >"$work/deploy.yaml"
"$H" yaml2json "$work/deploy.yaml" >"$j"
ok "kubectl kustomize deploy/ renders $(jq length "$j") objects"
if out=$(k8s_validate "$j"); then ok "every object passes its schema"; else fail "$out"; fi
# An overlay that moves deploy/ to another namespace moves the ServiceAccount and
# --controller-username ($(POD_NAMESPACE)), but kustomize does not rewrite the not-the-controller
# conditions' username: left as it is, the controller's writes are judged again and the old name,
# no longer the controller's (a ServiceAccount whoever gets that namespace may create), skips the
# check of ServiceDefaults/ProxyDefaults entries (the adversarial review's find). docs/install.md's
# recipe ("Another namespace": a replacements entry in the overlay) is run as written, its
# resource pointed at deploy/, and must name the new namespace in every such condition.
mkdir -p "$work/ns-overlay"
awk '/^\*\*Another namespace\.\*\*/{on=1} on && /^```yaml/{grab=1; next} grab && /^```/{exit} grab' "$top/docs/install.md" |
  sed "s|^  - ../propertyoverride/deploy .*|  - $(realpath --relative-to="$work/ns-overlay" "$top/deploy")|" >"$work/ns-overlay/kustomization.yaml"
if grep -q '^namespace: mesh-ops' "$work/ns-overlay/kustomization.yaml" && kubectl kustomize "$work/ns-overlay" >"$work/ns-overlay.yaml" 2>"$work/ns-overlay.err"; then
  "$H" yaml2json "$work/ns-overlay.yaml" >"$work/ns-overlay.json"
  jqt "$work/ns-overlay.json" "docs/install.md's namespace overlay: every not-the-controller condition names the ServiceAccount where it now is" \
    '[.[] | select(.kind | test("WebhookConfiguration")) | .webhooks[] | .matchConditions // [] | .[] | select(.name=="not-the-controller") | .expression] | length >= 2 and all(. == "request.userInfo.username != '"'"'system:serviceaccount:mesh-ops:propertyoverride-controller'"'"'")'
  jqt "$work/ns-overlay.json" "docs/install.md's namespace overlay: the ServiceAccount and the Deployment moved" \
    '[.[] | select(.kind == "ServiceAccount" or .kind == "Deployment") | .metadata.namespace] | unique == ["mesh-ops"]'
else
  fail "docs/install.md's namespace overlay does not render: $(cat "$work/ns-overlay.err" 2>/dev/null | head -3)"
fi
# docs/install.md's "With kubectl" paragraph names every kind deploy/ creates (it once left the
# MutatingWebhookConfiguration out): the webhook configurations and the workload kinds by name.
para=$(awk '/^## With kubectl/{on=1;next} /^## /{on=0} on' "$top/docs/install.md" | tr '\n' ' ')
for k in $(jq -r '.[].kind' "$j" | sort -u | grep -E 'WebhookConfiguration|Deployment|PodDisruptionBudget|ServiceAccount|CustomResourceDefinition'); do
  w=$k; [ "$k" = CustomResourceDefinition ] && w=CRD
  case "$para" in *"$w"*) ok "docs/install.md names deploy/'s $k" ;;
    *) fail "docs/install.md's \"With kubectl\" does not name the $k that deploy/ creates" ;; esac
done

# --- the CRD comes from crds/, unchanged ---------------------------------------------------------
"$H" yaml2json "$top/crds/propertyoverride.io_propertyoverrides.yaml" >"$work/crd.json"
jq -e --slurpfile c "$work/crd.json" '[.[] | select(.kind=="CustomResourceDefinition")] == $c[0]' "$j" >/dev/null &&
  ok "the CRD is crds/propertyoverride.io_propertyoverrides.yaml, unchanged" || fail "the CRD in deploy/ differs from crds/"
jqt "$j" "only our CRD (consul-k8s owns its own)" '[.[] | select(.kind=="CustomResourceDefinition") | .metadata.name] == ["propertyoverrides.propertyoverride.io"]'

# --- least privilege: exactly these rules --------------------------------------------------------
jqt "$j" "ClusterRole: list/watch/patch PropertyOverrides, patch their status, get/list/watch/create/update/patch/delete the Consul targets, create/patch events" \
  '.[] | select(.kind=="ClusterRole" and .metadata.name=="propertyoverride-controller") | .rules == [
     {"apiGroups":["propertyoverride.io"],"resources":["propertyoverrides"],"verbs":["list","watch","patch"]},
     {"apiGroups":["propertyoverride.io"],"resources":["propertyoverrides/status"],"verbs":["patch"]},
     {"apiGroups":["consul.hashicorp.com"],"resources":["servicedefaults","proxydefaults"],"verbs":["get","list","watch","create","update","patch","delete"]},
     {"apiGroups":[""],"resources":["services"],"verbs":["list","watch"]},
     {"apiGroups":["networking.istio.io"],"resources":["envoyfilters"],"verbs":["list","watch","create","update","delete"]},
     {"apiGroups":["gateway.networking.k8s.io"],"resources":["gateways","httproutes"],"verbs":["list","watch"]},
     {"apiGroups":["gateway.envoyproxy.io"],"resources":["envoypatchpolicies"],"verbs":["list","watch","create","update","delete"]},
     {"apiGroups":[""],"resources":["events"],"verbs":["create","patch"]}]'
jqt "$j" "self-managed certificates: get/update of our one Validating- and MutatingWebhookConfiguration" \
  '.[] | select(.kind=="ClusterRole" and .metadata.name=="propertyoverride-webhook-ca") | .rules == [
     {"apiGroups":["admissionregistration.k8s.io"],"resources":["validatingwebhookconfigurations","mutatingwebhookconfigurations"],"resourceNames":["propertyoverride"],"verbs":["get","update"]}]'
jqt "$j" "Role in the controller namespace: leases get/create/update; secrets create, get/update of our one Secret" \
  '.[] | select(.kind=="Role") | .metadata.namespace == "propertyoverride-system" and .rules == [
     {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["get","create","update"]},
     {"apiGroups":[""],"resources":["secrets"],"verbs":["create"]},
     {"apiGroups":[""],"resources":["secrets"],"resourceNames":["propertyoverride-webhook-cert"],"verbs":["get","update"]}]'
jqt "$j" "no wildcard anywhere; secrets only in the controller namespace" \
  '([.[] | select(.kind=="ClusterRole" or .kind=="Role") | .rules[] | (.verbs + .resources + .apiGroups)[]] | all(. != "*")) and ([.[] | select(.kind=="ClusterRole") | .rules[] | .resources[]] | index("secrets") == null)'
jqt "$j" "three bindings, one per role" \
  '[.[] | select(.kind=="ClusterRoleBinding" or .kind=="RoleBinding") | .roleRef.name] | sort == ["propertyoverride-controller","propertyoverride-leader-election","propertyoverride-webhook-ca"]'
jqt "$j" "bindings name the controller's ServiceAccount" \
  '[.[] | select(.kind=="ClusterRoleBinding" or .kind=="RoleBinding") | .subjects] | all(. == [{"kind":"ServiceAccount","name":"propertyoverride-controller","namespace":"propertyoverride-system"}])'

# --- the Deployment ---------------------------------------------------------------------------------
d='.[] | select(.kind=="Deployment")'
jqt "$j" "2 replicas, leader election on, probes /healthz and /readyz on 8081" \
  "$d | .spec.replicas == 2 and (.spec.template.spec.containers[0] | (.args | index(\"--leader-elect=true\")) != null and .livenessProbe.httpGet == {\"path\":\"/healthz\",\"port\":\"probes\"} and .readinessProbe.httpGet == {\"path\":\"/readyz\",\"port\":\"probes\"} and (.ports | map(select(.name==\"probes\"))[0].containerPort == 8081))"
jqt "$j" "requests and limits, runAsNonRoot, readOnlyRootFilesystem, no privilege escalation, ALL capabilities dropped, seccomp RuntimeDefault" \
  "$d | .spec.template.spec as \$s | (\$s.containers[0].resources | .requests.cpu and .requests.memory and .limits.cpu and .limits.memory) and \$s.securityContext.runAsNonRoot == true and \$s.securityContext.seccompProfile.type == \"RuntimeDefault\" and (\$s.containers[0].securityContext | .readOnlyRootFilesystem == true and .allowPrivilegeEscalation == false and .capabilities.drop == [\"ALL\"])"
jqt "$j" "anti-affinity and the PodDisruptionBudget select the controller's pods" \
  "($d | .spec.template.metadata.labels) as \$l | ($d | .spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels) as \$a | (.[] | select(.kind==\"PodDisruptionBudget\") | .spec.minAvailable == 1 and (.spec.selector.matchLabels | to_entries | all(\$l[.key] == .value))) and (\$a | to_entries | all(\$l[.key] == .value))"
jqt "$j" "Services: webhook 443 -> 9443, metrics 8081" \
  '([.[] | select(.kind=="Service")] | map({(.metadata.name): .spec.ports[0] | [.port, .targetPort]}) | add) == {"propertyoverride-webhook":[443,"webhook"],"propertyoverride-metrics":[8081,"probes"]}'
version=$(sed -n 's/^project(propertyoverride VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
jqt "$j" "the image tag is the project version ($version)" "$d | .spec.template.spec.containers[0].image | endswith(\":$version\")"
"$build/propertyoverride" controller --help >"$work/help.txt" 2>&1 || true
for flag in $(jq -r "$d | .spec.template.spec.containers[0].args[1:][] | sub(\"=.*\"; \"\")" "$j"); do
  grep -q -- "$flag" "$work/help.txt" && ok "the controller knows $flag" || fail "deploy/ passes $flag, which 'propertyoverride controller --help' does not list"
done

# --- the webhook --------------------------------------------------------------------------------------
vwc='.[] | select(.kind=="ValidatingWebhookConfiguration")'
jqt "$j" "webhooks: Fail, sideEffects None, 5 s, Equivalent, kube-system left alone, /validate on the Service (both)" \
  "[$vwc | .webhooks[] | .failurePolicy == \"Fail\" and .sideEffects == \"None\" and .timeoutSeconds == 5 and .matchPolicy == \"Equivalent\" and .namespaceSelector == {\"matchExpressions\":[{\"key\":\"kubernetes.io/metadata.name\",\"operator\":\"NotIn\",\"values\":[\"kube-system\"]}]} and .clientConfig.service == {\"name\":\"propertyoverride-webhook\",\"namespace\":\"propertyoverride-system\",\"path\":\"/validate\",\"port\":443}] == [true, true]"
jqt "$j" "validate.propertyoverride.io: CREATE/UPDATE of PropertyOverrides whose spec changed (matchCondition spec-changed); never a subresource" \
  "$vwc | .webhooks[0] | .name == \"validate.propertyoverride.io\" and (.matchConditions | map(.name) == [\"spec-changed\"]) and (.matchConditions[0].expression | contains(\"object.spec != oldObject.spec\")) and (.rules | map({g: .apiGroups, r: .resources, o: .operations}) == [{\"g\":[\"propertyoverride.io\"],\"r\":[\"propertyoverrides\"],\"o\":[\"CREATE\",\"UPDATE\"]}])"
jqt "$j" "targets.validate.propertyoverride.io: CREATE/UPDATE of ServiceDefaults, ProxyDefaults holding builtin/property-override whose entries of that name changed, not by the controller's ServiceAccount" \
  "$vwc | .webhooks[1] | .name == \"targets.validate.propertyoverride.io\" and (.rules | map({g: .apiGroups, r: .resources, o: .operations}) == [{\"g\":[\"consul.hashicorp.com\"],\"r\":[\"servicedefaults\",\"proxydefaults\"],\"o\":[\"CREATE\",\"UPDATE\"]}]) and (.matchConditions | map(.name) == [\"not-the-controller\",\"holds-property-override\",\"entries-changed\"]) and (.matchConditions[0].expression == \"request.userInfo.username != 'system:serviceaccount:propertyoverride-system:propertyoverride-controller'\") and (.matchConditions[1].expression | contains(\"e.name == 'builtin/property-override'\")) and (.matchConditions[2].expression | contains(\"filter(e, has(e.name) && e.name == 'builtin/property-override')\"))"
mwc='.[] | select(.kind=="MutatingWebhookConfiguration")'
jqt "$j" "the MutatingWebhookConfiguration propertyoverride: overrides.mutate then targets.mutate, both Ignore, sideEffects None, IfNeeded, 3 s, /mutate, no caBundle, never kube-system" \
  "[$mwc | .metadata.name == \"propertyoverride\" and (.webhooks | map(.name) == [\"overrides.mutate.propertyoverride.io\",\"targets.mutate.propertyoverride.io\"]) and all(.webhooks[]; .failurePolicy == \"Ignore\" and .sideEffects == \"None\" and .reinvocationPolicy == \"IfNeeded\" and .timeoutSeconds == 3 and (.clientConfig | has(\"caBundle\") | not) and .clientConfig.service.path == \"/mutate\" and .namespaceSelector.matchExpressions == [{\"key\":\"kubernetes.io/metadata.name\",\"operator\":\"NotIn\",\"values\":[\"kube-system\"]}])] == [true]"
jqt "$j" "overrides.mutate.propertyoverride.io: CREATE/UPDATE of PropertyOverrides (not status), sent only when the finalizer is missing from a new object or dropped by an update, not by the controller" \
  "[$mwc | .webhooks[] | select(.name == \"overrides.mutate.propertyoverride.io\") | (.rules | map({g: .apiGroups, r: .resources, o: .operations}) == [{\"g\":[\"propertyoverride.io\"],\"r\":[\"propertyoverrides\"],\"o\":[\"CREATE\",\"UPDATE\"]}]) and (.matchConditions | map(.name) == [\"lacks-finalizer\",\"created-or-dropping-it\",\"not-the-controller\"]) and (.matchConditions[0].expression | contains(\"f == 'propertyoverride.io/finalizer'\")) and (.matchConditions[1].expression | contains(\"oldObject.metadata.finalizers.exists(\")) and (.matchConditions[2].expression == \"request.userInfo.username != 'system:serviceaccount:propertyoverride-system:propertyoverride-controller'\")] == [true]"
jqt "$j" "targets.mutate.propertyoverride.io: UPDATE of ServiceDefaults/ProxyDefaults only" \
  "[$mwc | .webhooks[] | select(.name == \"targets.mutate.propertyoverride.io\") | ( .failurePolicy == \"Ignore\" and .sideEffects == \"None\" and .reinvocationPolicy == \"IfNeeded\" and .timeoutSeconds == 3 and (.clientConfig | has(\"caBundle\") | not) and .clientConfig.service.path == \"/mutate\" and (.rules | map({g: .apiGroups, r: .resources, o: .operations}) == [{\"g\":[\"consul.hashicorp.com\"],\"r\":[\"servicedefaults\",\"proxydefaults\"],\"o\":[\"UPDATE\"]}]) and (.matchConditions | map(.name) == [\"holds-property-override\",\"spec-changed\",\"not-the-controller\"]))] == [true]"
jqt "$j" "the mutating webhook exempts the controller's own ServiceAccount, which the controller is told" \
  "($mwc | .webhooks[] | select(.name == \"targets.mutate.propertyoverride.io\") | .matchConditions[2].expression | contains(\"'system:serviceaccount:propertyoverride-system:propertyoverride-controller'\")) and (.[] | select(.kind==\"Deployment\") | .spec.template.spec.containers[0].args | index(\"--controller-username=system:serviceaccount:\$(POD_NAMESPACE):propertyoverride-controller\") != null)"
jqt "$j" "webhook: self-managed certificates (no caBundle shipped, the controller names its Secret, Service and configuration)" \
  '(.[] | select(.kind=="ValidatingWebhookConfiguration") | [.webhooks[].clientConfig | has("caBundle")] == [false, false]) and (.[] | select(.kind=="Deployment") | .spec.template.spec.containers[0].args as $a | (["--webhook-cert-mode=self-managed","--webhook-secret=propertyoverride-webhook-cert","--webhook-service=propertyoverride-webhook","--webhook-configuration=propertyoverride","--webhook-cert-dir=/tmp/propertyoverride-webhook"] - $a) == [])'
jqt "$j" "the read-only root's one writable path is an in-memory /tmp" \
  '.[] | select(.kind=="Deployment") | .spec.template.spec | .containers[0].volumeMounts == [{"name":"tmp","mountPath":"/tmp"}] and .volumes == [{"name":"tmp","emptyDir":{"medium":"Memory","sizeLimit":"16Mi"}}]'

# --- deploy/cert-manager/ -------------------------------------------------------------------------------
kubectl kustomize "$top/deploy/cert-manager" >"$work/cm.yaml"
"$H" yaml2json "$work/cm.yaml" >"$work/cm.json"
if out=$(k8s_validate "$work/cm.json"); then ok "deploy/cert-manager/: every object passes its schema"; else fail "deploy/cert-manager/: $out"; fi
jqt "$work/cm.json" "deploy/cert-manager/: Issuer and Certificate, CA injected, the pods mount its Secret; no Secret or webhook-configuration RBAC" \
  '([.[] | select(.kind=="Issuer" or .kind=="Certificate") | .kind] | sort == ["Certificate","Issuer"]) and (.[] | select(.kind=="ValidatingWebhookConfiguration") | .metadata.annotations["cert-manager.io/inject-ca-from"] == "propertyoverride-system/propertyoverride-webhook") and (.[] | select(.kind=="Deployment") | .spec.template.spec.volumes == [{"name":"webhook-tls","secret":{"secretName":"propertyoverride-webhook-tls"}}] and (.spec.template.spec.containers[0].args | index("--webhook-cert-file=/etc/propertyoverride/tls/tls.crt") != null and index("--webhook-cert-mode=self-managed") == null)) and ([.[] | select(.kind=="Role" or .kind=="ClusterRole") | .rules[] | .resources[]] | (index("secrets") == null and index("validatingwebhookconfigurations") == null)) and ([.[] | select(.metadata.name=="propertyoverride-webhook-ca")] | length == 0)'
for flag in $(jq -r '.[] | select(.kind=="Deployment") | .spec.template.spec.containers[0].args[1:][] | sub("=.*"; "")' "$work/cm.json"); do
  grep -q -- "$flag" "$work/help.txt" || fail "deploy/cert-manager/ passes $flag, which 'propertyoverride controller --help' does not list"
done

# --- kubectl apply -k against the API server ---------------------------------------------------------
if [ "${PO_APISERVER:-local}" = real ]; then
  source "$top/scripts/lib/real-cluster.sh"
  # deploy/ brings its own CRD, as shipped; the consul-k8s CRDs are consul-k8s's to install
  export LC_NO_CRDS=1
  # The audit log: the real authorizer's verdict on every request the controller made (below)
  LC_AUDIT=1
else
  if [ ! -x "$build/tests/apiserver/po-apiserver" ]; then
    fail "no $build/tests/apiserver/po-apiserver to apply to"
    finish
  fi
  source "$top/scripts/lib/local-cluster.sh"
  LC_KIND=local
fi
# On a failure the cluster's logs stay (etcd's data does not: lc_stop drops it).
trap 'set +e; lc_stop; if [ "${failures:-0}" -gt 0 ]; then echo "logs in $work/cluster"; else rm -rf "$work"; fi' EXIT
# The API server dials the webhook Service of deploy/ at a local port (TLS name unchanged:
# propertyoverride-webhook.propertyoverride-system.svc, which the self-managed certificate names).
webhook_port=$(lc_free_port)
# deploy/ runs --consul-sync-status=require: the local server plays consul-k8s (its test double
# sets Synced on the targets); the real one has no consul-k8s, so there the controller runs with
# ignore (below).
fake_consul=()
[ "$LC_KIND" = local ] && fake_consul=(--fake-consul-k8s)
lc_start "$build" "$work/cluster" --webhook-service "propertyoverride-system/propertyoverride-webhook=127.0.0.1:$webhook_port" "${fake_consul[@]}" ||
  { fail "the $LC_KIND API server did not start (logs in $work/cluster)"; exit 1; }
if [ "$LC_KIND" = real ]; then
  kubectl apply -f "$top/crds/consul/" >/dev/null && lc_crds_ready servicedefaults.consul.hashicorp.com proxydefaults.consul.hashicorp.com &&
    ok "real API server: consul-k8s's CRDs installed" || fail "installing crds/consul/ on the real API server"
fi
kustomize_dir="$top/deploy"
if ! kubectl api-resources --api-group=policy -o name 2>/dev/null | grep -q '^poddisruptionbudgets'; then
  # The local API server does not store PodDisruptionBudgets: apply the rest of the same render.
  echo "note: the local API server serves no policy/v1 PodDisruptionBudget; applying deploy/ without it"
  jq -c '.[] | select(.kind != "PodDisruptionBudget")' "$j" >"$work/apply.jsonl"
  apply() { kubectl apply -f "$work/apply.jsonl" "$@"; }
else
  apply() { kubectl apply -k "$kustomize_dir" "$@"; }
fi
if out=$(apply 2>&1); then ok "kubectl apply of deploy/ succeeded: $(grep -c created <<<"$out") created"; else fail "kubectl apply: $out"; fi
# The CRD deploy/ brings is used below as a user would, with kubectl (discovery, OpenAPI).
lc_crds_ready propertyoverrides.propertyoverride.io && ok "deploy/'s CRD is served, discovered and described" ||
  fail "deploy/'s CRD is not ready"
# "Changes nothing" by the objects' resourceVersions: kubectl prints "configured" for a
# PodDisruptionBudget on every apply (its selector's patch strategy is replace, so the patch is
# never empty), and the real server then stores nothing new.
versions() { jq -r '.[] | "\(.kind)/\(.metadata.name) \(.metadata.namespace // "")"' "$j" | while read -r kn ns; do
  kubectl get "$kn" ${ns:+-n "$ns"} -o jsonpath='{.metadata.resourceVersion}{"\n"}' 2>/dev/null || echo missing; done; }
before=$(versions)
if out=$(apply 2>&1) && [ "$(versions)" = "$before" ]; then ok "a second apply changes nothing (every resourceVersion kept)"; else fail "second apply: $out"; fi
for r in deployment/propertyoverride-controller service/propertyoverride-webhook service/propertyoverride-metrics \
         serviceaccount/propertyoverride-controller role/propertyoverride-leader-election rolebinding/propertyoverride-leader-election; do
  kubectl -n propertyoverride-system get "$r" -o name >/dev/null 2>&1 && ok "stored: $r" || fail "not stored: $r"
done
kubectl get validatingwebhookconfiguration propertyoverride -o jsonpath='{.webhooks[0].failurePolicy}' | grep -qx Fail &&
  ok "stored: the ValidatingWebhookConfiguration" || fail "the ValidatingWebhookConfiguration was not stored"
# The chart's render applies over it (same names: an upgrade from kubectl to Helm changes labels only).
render chart --namespace propertyoverride-system
jq -c '.[] | select(.kind != "PodDisruptionBudget")' "$work/chart.json" >"$work/chart.jsonl"
# (The Deployment's selector is immutable: the real server refuses a chart whose selector differs.)
if out=$(kubectl apply -f "$work/chart.jsonl" 2>&1) && ! grep -q created <<<"$out"; then
  ok "the chart's render applies over deploy/ and creates nothing new"
else fail "applying the chart's render: $out"; fi

# webhook.validateNative (off above): the configuration with the native kinds on passes the API
# server (matchConditions compiled, rules and selectors valid), for both failure policies.
for v in validate-native validate-envoyfilter-fail; do
  render "$v" --namespace propertyoverride-system -f "$top/tests/deploy/testdata/values/$v.yaml"
  if out=$(jq -c '.[] | select(.kind=="ValidatingWebhookConfiguration")' "$work/$v.json" | kubectl apply --dry-run=server -f - 2>&1); then
    ok "the chart's webhook configuration with $v.yaml passes kubectl apply --dry-run=server"
  else fail "$v.yaml: kubectl apply --dry-run=server: $out"; fi
done

# --- the controller with deploy/'s own arguments ---------------------------------------------------
# Every argument as deploy/ has it, except the listen addresses (loopback ports here), the
# certificate directory (a temp dir) and the kubeconfig (in a pod: in-cluster configuration).
probe_port=$(lc_free_port)
args=()
while read -r a; do
  case "$a" in
    --webhook-bind-address=*) a="--webhook-bind-address=127.0.0.1:$webhook_port" ;;
    --health-probe-bind-address=*) a="--health-probe-bind-address=127.0.0.1:$probe_port" ;;
    --webhook-cert-dir=*) a="--webhook-cert-dir=$work/certs" ;;
    --consul-sync-status=*) [ "$LC_KIND" = real ] && a="--consul-sync-status=ignore" ;;
  esac
  args+=("$a")
done < <(jq -r '.[] | select(.kind=="Deployment") | .spec.template.spec.containers[0].args[]' "$j")
# Kubernetes expands $(POD_NAMESPACE) from the container's env; do the same.
args=("${args[@]//\$(POD_NAMESPACE)/propertyoverride-system}")
controller_kubeconfig=$KUBECONFIG
if [ "$LC_KIND" = real ]; then
  # As in its pod: deploy/'s ServiceAccount, under the RBAC deploy/ grants (enforced by the real
  # server; the local one authorises every token).
  sa=system:serviceaccount:propertyoverride-system:propertyoverride-controller
  if sa_token=$(kubectl -n propertyoverride-system create token propertyoverride-controller --duration 1h 2>&1); then
    ok "a token for deploy/'s ServiceAccount"
  else fail "kubectl create token: $sa_token"; fi
  controller_kubeconfig=$work/controller.kubeconfig
  kubectl config view --raw --minify -o json |
    jq --arg t "$sa_token" '.users[0].user = {token: $t} | .contexts[0].context.namespace = "propertyoverride-system"' >"$controller_kubeconfig"
  # Every permission the controller uses, asked as the ServiceAccount (SubjectAccessReview)...
  can() { # expect(yes|no) ns verb resource [name]
    local got ns=()
    [ -n "$2" ] && ns=(-n "$2")
    got=$(kubectl auth can-i --as "$sa" "${ns[@]}" "$3" "$4${5:+/$5}" 2>/dev/null) || true  # exit 1 for "no"
    [ "$got" = "$1" ] && ok "RBAC: $3 $4${5:+/$5}${2:+ in $2}: $1" || fail "RBAC: $3 $4${5:+/$5}${2:+ in $2}: want $1, got '$got'"
  }
  for v in list watch patch; do can yes deploy-test "$v" propertyoverrides.propertyoverride.io; done
  can yes deploy-test patch propertyoverrides.propertyoverride.io/status
  for r in servicedefaults proxydefaults; do
    for v in get list watch create update patch delete; do can yes deploy-test "$v" "$r.consul.hashicorp.com"; done
  done
  for v in create patch; do can yes deploy-test "$v" events; done
  for v in get create update; do can yes propertyoverride-system "$v" leases.coordination.k8s.io; done
  can yes propertyoverride-system create secrets
  for v in get update; do can yes propertyoverride-system "$v" secrets propertyoverride-webhook-cert; done
  for v in get update; do can yes "" "$v" validatingwebhookconfigurations.admissionregistration.k8s.io propertyoverride; done
  # ...and nothing more: no other Secret, no Secrets elsewhere, no deletes of user objects, no
  # other webhook configuration, no pods.
  can no propertyoverride-system get secrets other-secret
  can no propertyoverride-system list secrets
  can no deploy-test get secrets propertyoverride-webhook-cert
  can no deploy-test delete propertyoverrides.propertyoverride.io
  can no deploy-test update propertyoverrides.propertyoverride.io
  can no "" update validatingwebhookconfigurations.admissionregistration.k8s.io other-webhook
  can no "" delete validatingwebhookconfigurations.admissionregistration.k8s.io propertyoverride
  can no deploy-test list pods
  can no deploy-test create leases.coordination.k8s.io
fi
"$build/propertyoverride" "${args[@]}" --kubeconfig "$controller_kubeconfig" >"$work/controller.log" 2>&1 &
controller=$!
lc_pids+=($controller)
ready=0
for ((i = 0; i < 600; i++)); do # up to 30 s: a bound for slow (sanitizer) builds, not a timing check
  curl -sf "http://127.0.0.1:$probe_port/readyz" >/dev/null 2>&1 && { ready=1; break; }
  kill -0 "$controller" 2>/dev/null || break
  sleep 0.05
done
if [ "$ready" = 1 ]; then ok "the controller runs with deploy/'s arguments and is ready"
else fail "the controller with deploy/'s arguments did not become ready: $(tail -5 "$work/controller.log")"; fi
kubectl -n propertyoverride-system get secret propertyoverride-webhook-cert -o name >/dev/null 2>&1 &&
  ok "self-managed: the controller created its Secret" || fail "self-managed: no Secret propertyoverride-webhook-cert"
ca=$(kubectl get validatingwebhookconfiguration propertyoverride -o jsonpath='{.webhooks[*].clientConfig.caBundle}')
[[ "$ca" =~ ^[A-Za-z0-9+/=]+\ [A-Za-z0-9+/=]+$ ]] && ok "self-managed: the caBundle is set in both webhooks" || fail "self-managed: caBundles: [$ca]"
mca=$(kubectl get mutatingwebhookconfiguration propertyoverride -o jsonpath='{.webhooks[*].clientConfig.caBundle}')
[ -n "$mca" ] && [ "$mca" = "${ca%% *} ${ca%% *}" ] && ok "self-managed: the same caBundle in both mutating webhooks" || fail "self-managed: mutating caBundles: [$mca]"
# Admission through deploy/'s ValidatingWebhookConfiguration and Service, over the controller's TLS
# (once the API server has read the configuration with the caBundle the controller just set).
kubectl create namespace deploy-test >/dev/null
lc_webhook_ready && ok "the API server calls the webhook through deploy/'s Service" ||
  fail "the API server does not reach the webhook through deploy/'s Service"
if out=$(kubectl -n deploy-test apply -f "$top/examples/invalid/max-ejection-percent-over-100.yaml" 2>&1); then
  fail "an invalid PropertyOverride was admitted: $out"
elif grep -q 'validate.propertyoverride.io' <<<"$out" && grep -q 'max_ejection_percent' <<<"$out"; then
  ok "the webhook denies an invalid PropertyOverride"
else fail "unexpected denial: $out"; fi
if out=$(kubectl -n deploy-test apply -f "$top/examples/valid/connect-timeout.yaml" 2>&1); then
  ok "the webhook admits a valid PropertyOverride"
else fail "a valid PropertyOverride was refused: $out"; fi
# Reconciled under deploy/'s RBAC: the target created, the entry written, the status patched.
if kubectl -n deploy-test wait --for=condition=Programmed propertyoverride/api-connect-timeout --timeout=60s >/dev/null 2>&1; then
  ok "the controller programs it (target created, status patched)"
else fail "api-connect-timeout not Programmed: $(kubectl -n deploy-test get propertyoverride api-connect-timeout -o jsonpath='{.status.conditions}' 2>&1)"; fi
# ServiceDefaults: reviewed only when they hold a builtin/property-override entry (matchConditions).
sd() { # name [envoyExtensions-json]: a ServiceDefaults as JSON
  jq -cn --arg n "$1" --argjson x "${2:-null}" \
    '{apiVersion: "consul.hashicorp.com/v1alpha1", kind: "ServiceDefaults", metadata: {name: $n}, spec: ({protocol: "http"} + (if $x then {envoyExtensions: $x} else {} end))}'
}
po_entry() { # max_ejection_percent
  jq -cn --argjson v "$1" '[{name: "builtin/lua", arguments: {Listener: "inbound", Script: "function envoy_on_request(h) end"}},
    {name: "builtin/property-override", arguments: {Patches: [{ResourceFilter: {ResourceType: "cluster", TrafficDirection: "outbound"},
      Op: "add", Path: "/outlier_detection/max_ejection_percent", Value: $v}]}}]'
}
if out=$(sd held "$(po_entry 150)" | kubectl -n deploy-test apply -f - 2>&1); then
  fail "an invalid builtin/property-override entry in a ServiceDefaults was admitted: $out"
elif grep -q 'admission webhook "targets.validate.propertyoverride.io" denied' <<<"$out" && grep -q max_ejection_percent <<<"$out"; then
  ok "the webhook denies a ServiceDefaults holding an invalid builtin/property-override entry"
else fail "unexpected denial: $out"; fi
sd held "$(po_entry 50)" | kubectl -n deploy-test apply -f - >/dev/null 2>&1 &&
  ok "the webhook admits a ServiceDefaults holding a valid entry" || fail "a valid ServiceDefaults entry was refused"
# SIGTERM, as the kubelet sends it: an orderly stop (exit 0) while the API server is still up.
kill -TERM "$controller"
rc=0; wait "$controller" || rc=$?
[ "$rc" = 0 ] && ok "SIGTERM: the controller stops in order" || fail "SIGTERM: the controller exited $rc: $(tail -3 "$work/controller.log")"
if grep -qiE 'forbidden|"code":403| 403 ' "$work/controller.log"; then
  fail "the controller was refused something (RBAC): $(grep -iE 'forbidden|403' "$work/controller.log" | head -3)"
else ok "the controller was refused nothing it asked the API server ($LC_KIND)"; fi
if [ "$LC_KIND" = real ]; then
  # Not every refusal reaches the log (a refused Event is only counted): the API server's own
  # record of each request, namespaces and resourceNames included.
  refused=$(lc_audit_refused "$work/cluster")
  n=$(lc_audit_count "$work/cluster")
  [ "$n" -gt 0 ] && [ -z "$refused" ] && ok "the audit log: none of the controller's $n requests was refused" ||
    fail "the audit log: the controller's requests refused: ${refused:-none, but no request of the controller logged ($n)}"
  # A target it created is waited for until its event comes, not created again (a 409
  # AlreadyExists, retried with backoff; e2e_echolag's case 5 makes that window on purpose).
  again=$(lc_audit_answered "$work/cluster" 409 create)
  [ -z "$again" ] && ok "the audit log: no create of the controller's answered AlreadyExists" ||
    fail "the audit log: the controller's creates answered 409: $again"
fi

# --- the controller down: only what it would check is blocked ----------------------------------------
# The webhook Service now refuses connections. Checked with deploy/'s configuration, then with the
# chart's, each created afresh from its render.
outage() { # label render.json
  local label=$1 n=$2 out
  kubectl delete validatingwebhookconfiguration propertyoverride >/dev/null
  jq -c '.[] | select(.kind=="ValidatingWebhookConfiguration")' "$3" | kubectl create -f - >/dev/null ||
    { fail "$label: creating its ValidatingWebhookConfiguration"; return; }
  out=$(sd "plain-$n" | kubectl -n deploy-test create -f - 2>&1) &&
    ok "$label, controller down: a plain ServiceDefaults is created" || fail "$label, controller down: plain ServiceDefaults refused: $out"
  out=$(kubectl -n deploy-test patch servicedefaults "plain-$n" --type=merge -p '{"metadata":{"finalizers":["finalizers.consul.hashicorp.com"]}}' 2>&1) &&
    ok "$label, controller down: a finalizer-only patch passes" || fail "$label, controller down: finalizer patch refused: $out"
  out=$(kubectl -n deploy-test patch servicedefaults held --type=merge -p "{\"metadata\":{\"labels\":{\"n\":\"$n\"}}}" 2>&1) &&
    ok "$label, controller down: a metadata-only patch of a ServiceDefaults holding an entry passes" || fail "$label: metadata patch of held refused: $out"
  out=$(jq -cn '{apiVersion: "consul.hashicorp.com/v1alpha1", kind: "ProxyDefaults", metadata: {name: "global"}, spec: {config: {protocol: "http"}}}' |
        kubectl -n deploy-test apply -f - 2>&1) &&
    ok "$label, controller down: a ProxyDefaults without extensions is written" || fail "$label: ProxyDefaults refused: $out"
  if out=$(sd "entry-$n" "$(po_entry 50)" | kubectl -n deploy-test create -f - 2>&1); then
    fail "$label, controller down: a ServiceDefaults holding a builtin/property-override entry was admitted"
  elif grep -q 'failed calling webhook "targets.validate.propertyoverride.io"' <<<"$out"; then
    ok "$label, controller down: a ServiceDefaults holding a builtin/property-override entry is refused (fail closed)"
  else fail "$label, controller down: unexpected: $out"; fi
  local protocol=grpc
  [ "$n" = 1 ] || protocol=http2
  out=$(kubectl -n deploy-test patch servicedefaults held --type=merge -p "{\"spec\":{\"protocol\":\"$protocol\"}}" 2>&1) &&
    ok "$label, controller down: a protocol change of a ServiceDefaults holding an entry passes (entries-changed)" ||
    fail "$label: protocol change of held refused: $out"
  if out=$(kubectl -n deploy-test patch servicedefaults held --type=json \
      -p '[{"op":"replace","path":"/spec/envoyExtensions/1/arguments/Patches/0/Value","value":60}]' 2>&1); then
    fail "$label, controller down: a change of the builtin/property-override entry of a ServiceDefaults was admitted"
  else grep -q 'failed calling webhook "targets.validate.propertyoverride.io"' <<<"$out" &&
    ok "$label, controller down: a change of its builtin/property-override entry is refused" || fail "$label: unexpected: $out"; fi
  if out=$(sed "s/^  name: .*/  name: down-$n/" "$top/examples/valid/connect-timeout.yaml" | kubectl -n deploy-test create -f - 2>&1); then
    fail "$label, controller down: a PropertyOverride was admitted unvalidated"
  else grep -q 'failed calling webhook "validate.propertyoverride.io"' <<<"$out" &&
    ok "$label, controller down: PropertyOverrides stay failurePolicy Fail" || fail "$label: unexpected: $out"; fi
  out=$(kubectl -n deploy-test label propertyoverride api-connect-timeout "n=$n" --overwrite 2>&1) &&
    ok "$label, controller down: a label on a PropertyOverride passes (spec-changed)" || fail "$label: PropertyOverride label refused: $out"
  if out=$(kubectl -n deploy-test patch propertyoverride api-connect-timeout --type=json \
      -p '[{"op":"replace","path":"/spec/patches/0/value","value":"7s"}]' 2>&1); then
    fail "$label, controller down: a spec change of a PropertyOverride was admitted unvalidated"
  else grep -q 'failed calling webhook "validate.propertyoverride.io"' <<<"$out" &&
    ok "$label, controller down: a spec change of a PropertyOverride is refused" || fail "$label: unexpected: $out"; fi
}
outage "deploy/" 1 "$j"
outage "the chart" 2 "$work/chart.json"
finish
