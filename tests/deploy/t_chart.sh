#!/usr/bin/env bash
# The Helm chart: renders (with Helm's template engine) for default values and every certificate
# mode, every object passes its Kubernetes schema, the default render equals deploy/, the CRD
# copy equals crds/, and bad values fail the values schema with the expected message.
#   t_chart.sh BUILD_DIR
source "$(dirname "$0")/lib.sh"
ns=propertyoverride-system

# --- Chart.yaml ----------------------------------------------------------------------------------
"$H" yaml2json "$chart/Chart.yaml" >"$work/chartyaml.json"
jqt "$work/chartyaml.json" "Chart.yaml: kubeVersion >=1.28 (webhook matchConditions, CRD CEL rules)" '.[0].kubeVersion == ">=1.28.0-0"'
jqt "$work/chartyaml.json" "Chart.yaml: apiVersion v2, named as its folder, semantic versions, appVersion = the CMake project version" \
  ".[0] | .apiVersion == \"v2\" and .name == \"propertyoverride\" and (.version | test(\"^[0-9]+\\\\.[0-9]+\\\\.[0-9]+\")) and .appVersion == \"$(sed -n 's/^project(propertyoverride VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")\""

# --- the CRDs: one source -------------------------------------------------------------------
for f in "$chart"/crds/*; do
  b=$(basename "$f")
  if cmp -s "$f" "$top/crds/$b"; then ok "chart crds/$b is byte-identical to crds/$b"
  else fail "helm/propertyoverride/crds/$b differs from crds/$b: copy it again (cp crds/$b helm/propertyoverride/crds/)"; fi
done
want=$(cd "$top/crds" && ls ./*.yaml | sed 's|^\./||' | grep -v '^kustomization.yaml$')
have=$(cd "$chart/crds" && ls)
[ "$want" = "$have" ] && ok "the chart carries exactly crds/*.yaml ($have)" || fail "chart crds/ has [$have], crds/ has [$want]"

# --- default values == deploy/ ---------------------------------------------------------------
kubectl kustomize "$top/deploy" >"$work/deploy.yaml"
"$H" yaml2json "$work/deploy.yaml" >"$work/deploy.json"
render default --namespace "$ns" --include-crds
if out=$(k8s_validate "$work/default.json"); then ok "default values: every object passes its schema"; else fail "default values: $out"; fi
if out=$(node "$top/tests/deploy/k8scheck.mjs" compare "$work/deploy.json" "$work/default.json"); then
  ok "default values render the same objects as deploy/ (Helm's labels aside)"
else fail "chart and deploy/ differ:"$'\n'"$out"; fi

jqt "$work/default.json" "default: self-managed certificates, no cert-manager objects" \
  '([.[] | select(.apiVersion|startswith("cert-manager.io"))] | length == 0) and (.[] | select(.kind=="Deployment") | .spec.template.spec.containers[0].args | index("--webhook-cert-mode=self-managed") != null)'

# --- cert-manager with the chart's Issuer -------------------------------------------------------
render certmanager --namespace "$ns" --include-crds -f "$top/tests/deploy/testdata/values/cert-manager.yaml"
if out=$(k8s_validate "$work/certmanager.json"); then ok "cert-manager: schemas"; else fail "cert-manager: $out"; fi
kubectl kustomize "$top/deploy/cert-manager" >"$work/deploy-cm.yaml"
"$H" yaml2json "$work/deploy-cm.yaml" >"$work/deploy-cm.json"
if out=$(node "$top/tests/deploy/k8scheck.mjs" compare "$work/deploy-cm.json" "$work/certmanager.json"); then
  ok "cert-manager: the same objects as deploy/cert-manager/"
else fail "chart (cert-manager) and deploy/cert-manager/ differ:"$'\n'"$out"; fi
jqt "$work/certmanager.json" "cert-manager: the CA of the Certificate the pods mount is injected" \
  '(.[] | select(.kind=="ValidatingWebhookConfiguration") | .metadata.annotations["cert-manager.io/inject-ca-from"]) as $ref | (.[] | select(.kind=="Certificate") | "\(.metadata.namespace)/\(.metadata.name)" == $ref and .spec.secretName == "propertyoverride-webhook-tls" and .spec.issuerRef == {"kind":"Issuer","name":"propertyoverride-selfsigned"} and .spec.dnsNames[0] == "propertyoverride-webhook.propertyoverride-system.svc") and (.[] | select(.kind=="Deployment") | .spec.template.spec.volumes[0].secret.secretName == "propertyoverride-webhook-tls" and (.spec.template.spec.containers[0].args | index("--webhook-cert-file=/etc/propertyoverride/tls/tls.crt") != null))'
jqt "$work/certmanager.json" "cert-manager: a self-signed Issuer; no Secret or webhook-configuration RBAC" \
  '(.[] | select(.kind=="Issuer") | .spec == {"selfSigned":{}}) and ([.[] | select(.kind=="Role" or .kind=="ClusterRole") | .rules[] | .resources[]] | (index("secrets") == null and index("validatingwebhookconfigurations") == null))'

# --- cert-manager with the user's issuer ------------------------------------------------------
render issuer --namespace "$ns" -f "$top/tests/deploy/testdata/values/cert-manager-issuer.yaml"
if out=$(k8s_validate "$work/issuer.json"); then ok "cert-manager issuerRef: schemas"; else fail "cert-manager issuerRef: $out"; fi
jqt "$work/issuer.json" "cert-manager issuerRef: no Issuer of ours" '[.[] | select(.kind=="Issuer")] | length == 0'
jqt "$work/issuer.json" "cert-manager issuerRef: the Certificate uses it" \
  '.[] | select(.kind=="Certificate") | .spec.issuerRef == {"kind":"ClusterIssuer","name":"corp-ca","group":"cert-manager.io"} and .spec.duration == "720h"'

# --- provided Secret ------------------------------------------------------------------------------
render secret --namespace "$ns" -f "$top/tests/deploy/testdata/values/secret.yaml"
if out=$(k8s_validate "$work/secret.json"); then ok "secret mode: schemas"; else fail "secret mode: $out"; fi
ca=$(sed -n 's/^ *caBundle: //p' "$top/tests/deploy/testdata/values/secret.yaml")
jqt "$work/secret.json" "secret mode: no cert-manager objects, no Secret or webhook-configuration RBAC" \
  '([.[] | select(.apiVersion|startswith("cert-manager.io"))] | length == 0) and ([.[] | select(.kind=="Role" or .kind=="ClusterRole") | .rules[] | .resources[]] | (index("secrets") == null and index("validatingwebhookconfigurations") == null))'
jqt "$work/secret.json" "secret mode: caBundle set, no inject-ca-from" \
  ".[] | select(.kind==\"ValidatingWebhookConfiguration\") | (.webhooks[0].clientConfig.caBundle == \"$ca\") and ((.metadata.annotations // {}) | has(\"cert-manager.io/inject-ca-from\") | not)"
jqt "$work/secret.json" "secret mode: the pods mount the user's Secret" \
  '.[] | select(.kind=="Deployment") | .spec.template.spec.volumes[0].secret.secretName == "my-webhook-cert"'
head -c 3 <<<"$(echo "$ca" | base64 -d)" | grep -q -- '---' && ok "secret mode: the test caBundle is base64 PEM" || fail "testdata caBundle is not base64 PEM"

# --- every other option ------------------------------------------------------------------------
render options --namespace platform -f "$top/tests/deploy/testdata/values/options.yaml"
if out=$(k8s_validate "$work/options.json"); then ok "options: schemas (ServiceMonitor included)"; else fail "options: $out"; fi
d='.[] | select(.kind=="Deployment")'
jqt "$work/options.json" "options: replicas, image, pull policy and secrets" \
  "$d | .spec.replicas == 3 and .spec.template.spec.containers[0].image == \"registry.example.com/platform/propertyoverride:0.1.0-rc1\" and .spec.template.spec.containers[0].imagePullPolicy == \"Always\" and .spec.template.spec.imagePullSecrets == [{\"name\":\"regcred\"}]"
jqt "$work/options.json" "options: controller flags (namespaces, log level, workers, lease timings)" \
  "$d | .spec.template.spec.containers[0].args as \$a | ([\"--namespace=team-a\",\"--namespace=team-b\",\"--log-level=debug\",\"--workers=6\",\"--lease-duration=30\",\"--renew-deadline=20\",\"--retry-period=4\"] - \$a) == []"
jqt "$work/options.json" "options: the batching window, the burst hold and HTTP/2 render their flags" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--target-\") or startswith(\"--kube-api-http2\"))] == [\"--target-batch-window=0.5\",\"--target-burst-quiet=0.1\",\"--target-burst-max=5\",\"--kube-api-http2=true\"]"
jqt "$work/default.json" "default: no batching, burst or HTTP/2 flag (the controller's defaults)" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--target-\") or startswith(\"--kube-api-http2\"))] == []"
jqt "$work/options.json" "options: resources, nodeSelector, tolerations, affinity, pod labels and annotations" \
  "$d | .spec.template.spec as \$s | \$s.containers[0].resources.limits.memory == \"512Mi\" and \$s.nodeSelector == {\"kubernetes.io/os\":\"linux\"} and \$s.tolerations[0].value == \"platform\" and (\$s.affinity | has(\"nodeAffinity\") and (has(\"podAntiAffinity\")|not)) and .spec.template.metadata.labels[\"example.com/cost-center\"] == \"42\" and .spec.template.metadata.annotations[\"example.com/team\"] == \"platform\""
jqt "$work/options.json" "options: watched namespaces get RoleBindings, no ClusterRoleBinding" \
  '([.[] | select(.kind=="RoleBinding" and .roleRef.kind=="ClusterRole" and .roleRef.name=="propertyoverride-controller") | .metadata.namespace] | sort) == ["team-a","team-b"] and ([.[] | select(.kind=="ClusterRoleBinding" and .roleRef.name=="propertyoverride-controller")] | length == 0)'
jqt "$work/options.json" "options: Istio's root namespace (not watched) grants EnvoyFilters alone, not the ClusterRole" \
  '([.[] | select(.kind=="Role" and .metadata.namespace=="mesh-root") | .rules] == [[{"apiGroups":["networking.istio.io"],"resources":["envoyfilters"],"verbs":["list","watch","create","update","delete"]}]]) and ([.[] | select(.kind=="RoleBinding" and .metadata.namespace=="mesh-root") | .roleRef] == [{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"propertyoverride-istio-root"}])'
# Without istio.version the controller reads Istio's release at start from istiod's Service in the
# root namespace (a list of Services there, releases.c): the Role there allows that list too (it
# was refused, and Istio judged as 1.31: e2e_rbac_chart_real's mesh-root-detect).
printf 'watchNamespaces: [team-a]\nistio: {mode: "on", rootNamespace: mesh-root}\n' >"$work/root-detect-values.yaml"
render root-detect --namespace "$ns" -f "$work/root-detect-values.yaml"
jqt "$work/root-detect.json" "watchNamespaces, no istio.version: Istio's root namespace grants EnvoyFilters and the list of Services (istiod's release)" \
  '[.[] | select(.kind=="Role" and .metadata.namespace=="mesh-root") | .rules] == [[{"apiGroups":["networking.istio.io"],"resources":["envoyfilters"],"verbs":["list","watch","create","update","delete"]},{"apiGroups":[""],"resources":["services"],"verbs":["list"]}]]'
# Istio's root namespace among the watched ones: the ClusterRole's binding there, no Role of its own.
printf 'watchNamespaces: [team-a, mesh-root]\nistio: {mode: "on", rootNamespace: mesh-root}\n' >"$work/root-watched-values.yaml"
render root-watched --namespace "$ns" -f "$work/root-watched-values.yaml"
jqt "$work/root-watched.json" "watchNamespaces with Istio's root namespace: bound to the ClusterRole there, no istio-root Role" \
  '([.[] | select(.metadata.namespace=="mesh-root") | "\(.kind)/\(.metadata.name)/\(.roleRef.kind)"] == ["RoleBinding/propertyoverride-controller/ClusterRole"])'
jqt "$work/options.json" "options: both webhooks (failurePolicy, timeout, only the watched namespaces)" \
  '[.[] | select(.kind=="ValidatingWebhookConfiguration") | .webhooks[] | .failurePolicy == "Ignore" and .timeoutSeconds == 10 and .namespaceSelector.matchExpressions[1] == {"key":"kubernetes.io/metadata.name","operator":"In","values":["team-a","team-b"]}] == [true, true]'
jqt "$work/options.json" "options: consulSync and consul.version render --consul-sync-status, --consul-sync-timeout and --consul-version" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--consul-\"))] == [\"--consul-sync-status=ignore\",\"--consul-sync-timeout=30\",\"--consul-version=1.21\",\"--consul-namespace-mirroring\"]"
jqt "$work/default.json" "default: no --consul-version or --envoy-gateway-version (the controller's defaults and what it reads from the cluster)" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--consul-version\") or startswith(\"--envoy-gateway-version\"))] == []"
jqt "$work/default.json" "default: --consul-sync-status=require (Programmed waits for consul-k8s), the default timeout" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--consul-sync\"))] == [\"--consul-sync-status=require\",\"--consul-sync-timeout=120\"]"
jqt "$work/default.json" "default: --webhook-memory-budget=96 (3/8 of the 256Mi limit)" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--webhook-memory-budget\"))] == [\"--webhook-memory-budget=96\"]"
jqt "$work/options.json" "options: --webhook-memory-budget=192 (3/8 of the 512Mi limit)" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--webhook-memory-budget\"))] == [\"--webhook-memory-budget=192\"]"
jqt "$work/options.json" "options: istio and clusterDomain render --istio, --istio-version, --istio-root-namespace, --cluster-domain" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--istio\") or startswith(\"--cluster-domain\"))] == [\"--istio=on\",\"--istio-version=1.31\",\"--istio-root-namespace=mesh-root\",\"--cluster-domain=corp.example\"]"
jqt "$work/default.json" "default: --istio=auto, Istio's default root namespace and cluster.local" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--istio\") or startswith(\"--cluster-domain\"))] == [\"--istio=auto\",\"--istio-root-namespace=istio-system\",\"--cluster-domain=cluster.local\"]"
jqt "$work/default.json" "default: services list/watch and envoyfilters CRUD for Istio targets (no get: the informers list and watch)" \
  '[.[] | select(.kind=="ClusterRole" and .metadata.name=="propertyoverride-controller") | .rules[] | select(.resources == ["services"] or .resources == ["envoyfilters"])] == [{"apiGroups":[""],"resources":["services"],"verbs":["list","watch"]},{"apiGroups":["networking.istio.io"],"resources":["envoyfilters"],"verbs":["list","watch","create","update","delete"]}]'
jqt "$work/default.json" "default: --envoy-gateway=auto, gateways/httproutes read and envoypatchpolicies CRUD" \
  "([$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--envoy-gateway\"))] == [\"--envoy-gateway=auto\"]) and ([.[] | select(.kind==\"ClusterRole\" and .metadata.name==\"propertyoverride-controller\") | .rules[] | select(.apiGroups == [\"gateway.networking.k8s.io\"] or .apiGroups == [\"gateway.envoyproxy.io\"])] == [{\"apiGroups\":[\"gateway.networking.k8s.io\"],\"resources\":[\"gateways\",\"httproutes\"],\"verbs\":[\"list\",\"watch\"]},{\"apiGroups\":[\"gateway.envoyproxy.io\"],\"resources\":[\"envoypatchpolicies\"],\"verbs\":[\"list\",\"watch\",\"create\",\"update\",\"delete\"]}])"
jqt "$work/options.json" "options: envoyGateway.mode off renders --envoy-gateway=off and no Gateway API or EnvoyPatchPolicy permissions" \
  "([$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--envoy-gateway\"))] == [\"--envoy-gateway=off\",\"--envoy-gateway-version=v1.9.1\"]) and ([.[] | select(.kind==\"ClusterRole\") | .rules[] | .apiGroups[]] | (index(\"gateway.envoyproxy.io\") == null and index(\"gateway.networking.k8s.io\") == null))"
jqt "$work/options.json" "options: tenancy.proxyDefaultsNamespaces, one --allow-proxydefaults-from each" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--allow-proxydefaults-from\"))] == [\"--allow-proxydefaults-from=platform\",\"--allow-proxydefaults-from=team-a\"]"
jqt "$work/options.json" "options: tenancy.allowCrossNamespaceFrom, one --allow-cross-namespace-from with the list" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--allow-cross-namespace-from\"))] == [\"--allow-cross-namespace-from=platform,infra\"]"
jqt "$work/default.json" "default: no --allow-cross-namespace-from (nobody names another namespace)" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--allow-cross-namespace-from\"))] == []"
jqt "$work/default.json" "default: no --allow-proxydefaults-from (only the controller's own namespace)" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--allow-proxydefaults-from\"))] == []"
jqt "$work/default.json" "default: PropertyOverrides reviewed on spec changes, ServiceDefaults/ProxyDefaults on changes of their entries by others than the controller (matchConditions)" \
  '.[] | select(.kind=="ValidatingWebhookConfiguration") | [.webhooks[] | {name, rules: [.rules[].resources[]], conditions: [(.matchConditions // [])[].name]}] == [{"name":"validate.propertyoverride.io","rules":["propertyoverrides"],"conditions":["spec-changed"]},{"name":"targets.validate.propertyoverride.io","rules":["servicedefaults","proxydefaults"],"conditions":["not-the-controller","holds-property-override","entries-changed"]}]'
render anyns --namespace "$ns" -f "$top/tests/deploy/testdata/values/tenancy-any.yaml"
jqt "$work/anyns.json" "tenancy: * renders as --allow-proxydefaults-from=*" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--allow-proxydefaults-from\"))] == [\"--allow-proxydefaults-from=*\"]"
jqt "$work/options.json" "options: ServiceMonitor on the metrics Service" \
  '.[] | select(.kind=="ServiceMonitor") | .metadata.labels.release == "prometheus" and .spec.endpoints == [{"port":"metrics","path":"/metrics","interval":"15s"}] and .spec.selector.matchLabels["app.kubernetes.io/component"] == "metrics"'
jqt "$work/options.json" "options: everything namespaced lands in the release namespace (or a watched one)" \
  '[.[] | select(.metadata.namespace != null) | .metadata.namespace] | unique == ["mesh-root","platform","team-a","team-b"]'

# --- webhook.validateNative: hand-written EnvoyFilters / EnvoyPatchPolicies (off by default) ----------
jqt "$work/default.json" "default: no webhook for EnvoyFilters or EnvoyPatchPolicies" \
  '[.[] | select(.kind=="ValidatingWebhookConfiguration") | .webhooks[].rules[].resources[]] - ["propertyoverrides","servicedefaults","proxydefaults"] == []'
render native --namespace "$ns" -f "$top/tests/deploy/testdata/values/validate-native.yaml"
if out=$(k8s_validate "$work/native.json"); then ok "validateNative: schemas"; else fail "validateNative: $out"; fi
jqt "$work/native.json" "validateNative: one entry per kind, its own rules, spec-changed / not-generated / not-the-controller" \
  '.[] | select(.kind=="ValidatingWebhookConfiguration") | [.webhooks[2:][] | {name, failurePolicy, path: .clientConfig.service.path, rules: [.rules[] | "\(.apiGroups[0])/\(.apiVersions[0])/\(.resources[0])"], conditions: [.matchConditions[].name]}] == [{"name":"envoyfilters.validate.propertyoverride.io","failurePolicy":"Ignore","path":"/validate","rules":["networking.istio.io/v1alpha3/envoyfilters"],"conditions":["spec-changed","not-generated","not-the-controller"]},{"name":"envoypatchpolicies.validate.propertyoverride.io","failurePolicy":"Ignore","path":"/validate","rules":["gateway.envoyproxy.io/v1alpha1/envoypatchpolicies"],"conditions":["spec-changed","not-generated","not-the-controller"]}]'
jqt "$work/native.json" "validateNative: not-the-controller names the chart's ServiceAccount" \
  '.[] | select(.kind=="ValidatingWebhookConfiguration") | .webhooks[2].matchConditions[2].expression | contains("system:serviceaccount:propertyoverride-system:propertyoverride-controller")'
# deploy/components/ add the same entries to deploy/ (an overlay as a user writes it).
# (kustomize takes relative paths only: the overlay in $work names deploy/ relative to it)
mkdir -p "$work/overlay"
rel=$(realpath --relative-to="$work/overlay" "$top/deploy")
printf 'resources: [%s]\ncomponents: [%s/components/validate-envoyfilters, %s/components/validate-envoypatchpolicies]\n' \
  "$rel" "$rel" "$rel" >"$work/overlay/kustomization.yaml"
kubectl kustomize "$work/overlay" >"$work/deploy-native.yaml"
"$H" yaml2json "$work/deploy-native.yaml" >"$work/deploy-native.json"
render native-crds --namespace "$ns" --include-crds -f "$top/tests/deploy/testdata/values/validate-native.yaml"
if out=$(node "$top/tests/deploy/k8scheck.mjs" compare "$work/deploy-native.json" "$work/native-crds.json"); then
  ok "validateNative: the same objects as deploy/ with deploy/components/validate-*"
else fail "chart (validateNative) and deploy/ + components differ:"$'\n'"$out"; fi
render native-fail --namespace "$ns" -f "$top/tests/deploy/testdata/values/validate-envoyfilter-fail.yaml"
jqt "$work/native-fail.json" "validateNative.envoyFilter alone, Fail, watched namespaces only" \
  '.[] | select(.kind=="ValidatingWebhookConfiguration") | [.webhooks[] | .name] == ["validate.propertyoverride.io","targets.validate.propertyoverride.io","envoyfilters.validate.propertyoverride.io"] and .webhooks[2].failurePolicy == "Fail" and .webhooks[2].namespaceSelector.matchExpressions[1] == {"key":"kubernetes.io/metadata.name","operator":"In","values":["team-a"]}'

# --- a single replica without leader election ------------------------------------------------------
render single --namespace "$ns" -f "$top/tests/deploy/testdata/values/single.yaml"
if out=$(k8s_validate "$work/single.json"); then ok "single replica: schemas"; else fail "single replica: $out"; fi
jqt "$work/single.json" "single replica: no Lease rule without leader election (the Secret's stay: self-managed)" \
  '[.[] | select(.kind=="Role") | .rules[] | .resources[]] | (index("leases") == null and index("secrets") != null)'
render single-secret --namespace "$ns" -f "$top/tests/deploy/testdata/values/single.yaml" -f "$top/tests/deploy/testdata/values/secret.yaml"
jqt "$work/single-secret.json" "single replica, the user's Secret: no leader-election Role or RoleBinding at all" \
  '[.[] | select((.kind=="Role" or .kind=="RoleBinding") and (.metadata.name | endswith("-leader-election")))] == []'
if out=$(k8s_validate "$work/single-secret.json"); then ok "single replica, the user's Secret: schemas"; else fail "single replica, the user's Secret: $out"; fi
jqt "$work/single.json" "single replica: --leader-elect=false, no PodDisruptionBudget" \
  '([.[] | select(.kind=="PodDisruptionBudget")] | length == 0) and (.[] | select(.kind=="Deployment") | .spec.replicas == 1 and (.spec.template.spec.containers[0].args | index("--leader-elect=false") != null))'

# --- another release name and namespace ---------------------------------------------------------
render other --name po --namespace ops
if out=$(k8s_validate "$work/other.json"); then ok "release po in ops: schemas"; else fail "release po in ops: $out"; fi
jqt "$work/other.json" "release po in ops: names, inject-ca-from and DNS names follow the release" \
  '(.[] | select(.kind=="ValidatingWebhookConfiguration") | .metadata.name == "po-propertyoverride" and .webhooks[0].clientConfig.service == {"name":"po-propertyoverride-webhook","namespace":"ops","path":"/validate","port":443}) and (.[] | select(.kind=="Deployment") | .spec.template.spec.containers[0].args as $a | (["--webhook-secret=po-propertyoverride-webhook-cert","--webhook-service=po-propertyoverride-webhook","--webhook-configuration=po-propertyoverride"] - $a) == []) and (.[] | select(.kind=="ClusterRole" and .metadata.name=="po-propertyoverride-webhook-ca") | .rules[0].resourceNames == ["po-propertyoverride"]) and (.[] | select(.kind=="Role") | .rules[2].resourceNames == ["po-propertyoverride-webhook-cert"])'
render other-cm --name po --namespace ops -f "$top/tests/deploy/testdata/values/cert-manager.yaml"
jqt "$work/other-cm.json" "release po in ops, cert-manager: inject-ca-from and DNS names follow the release" \
  '(.[] | select(.kind=="ValidatingWebhookConfiguration") | .metadata.annotations["cert-manager.io/inject-ca-from"] == "ops/po-propertyoverride-webhook") and (.[] | select(.kind=="Certificate") | .spec.dnsNames[0] == "po-propertyoverride-webhook.ops.svc")'

# --- release names Helm takes but a Service name does not ------------------------------------------
# a dot becomes "-": every object is named team-a-..., which the Services take (DNS-1035)
render dotted --name team.a --namespace ops
jqt "$work/dotted.json" "release team.a: every object named team-a-propertyoverride..." \
  '[.[] | .metadata.name | select(startswith("team-a-propertyoverride") | not)] == []'
# a digit first cannot be mended: refused at render time, naming the release and the way out
if "$H" --chart "$chart" --name 1abc --namespace ops >/dev/null 2>"$work/digit.err"; then
  fail "release 1abc: rendered, but its Services would be named 1abc-propertyoverride-..."
elif grep -qF 'release name "1abc" gives object names the base "1abc-propertyoverride", which is no DNS-1035 label' "$work/digit.err" &&
  grep -qF 'set fullnameOverride' "$work/digit.err"; then ok "release 1abc: refused, naming it and fullnameOverride"
else fail "release 1abc: refused without saying why: $(cat "$work/digit.err")"; fi
printf 'fullnameOverride: po1\n' >"$work/po1.yaml"
render digit-override --name 1abc --namespace ops -f "$work/po1.yaml"
jqt "$work/digit-override.json" "release 1abc with fullnameOverride po1: objects named po1-..." \
  '(.[] | select(.kind=="Service" and .metadata.name=="po1-webhook")) != null'

# --- NOTES.txt --------------------------------------------------------------------------------------
notes=$("$H" --chart "$chart" --namespace "$ns" --notes)
grep -q 'kubectl -n propertyoverride-system rollout status deployment/propertyoverride-controller' <<<"$notes" &&
  ok "NOTES.txt renders" || fail "NOTES.txt: $notes"
grep -q 'ProxyDefaults may be targeted by PropertyOverrides in: propertyoverride-system\.' <<<"$notes" &&
  ok "NOTES.txt: the ProxyDefaults tenancy default" || fail "NOTES.txt (tenancy): $notes"
notes=$("$H" --chart "$chart" --namespace "$ns" --notes -f "$top/tests/deploy/testdata/values/options.yaml")
grep -q 'ProxyDefaults may be targeted by PropertyOverrides in: platform, team-a\.' <<<"$notes" &&
  ok "NOTES.txt: tenancy.proxyDefaultsNamespaces" || fail "NOTES.txt (tenancy options): $notes"
notes=$("$H" --chart "$chart" --namespace "$ns" --notes -f "$top/tests/deploy/testdata/values/secret.yaml")
grep -q 'certificate mode secret' <<<"$notes" && ok "NOTES.txt renders in secret mode" || fail "NOTES.txt (secret): $notes"

# --- the webhook's memory budget from every Kubernetes quantity form of the memory limit ---------
# (3/8 of it, in whole MiB; a form the template cannot read fails the render, never 96 MiB under
# a smaller limit: "128M" had 96, 79% of it. Forms the values schema refuses fail there.)
for pair in '256Mi 96' '128Mi 48' '128M 45' '134217728 48' '150000Ki 54' '200M 71' '0.5Gi 192' '1.5Gi 576' \
            '1Gi 384' '1G 357' '1000000k 357' '0.25Ti 98304' '2Gi 768'; do
  set -- $pair
  printf 'resources:\n  limits:\n    memory: "%s"\n' "$1" >"$work/mem.yaml"
  render memr -f "$work/mem.yaml"
  jqt "$work/memr.json" "memory limit $1: --webhook-memory-budget=$2" \
    "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--webhook-memory-budget\"))] == [\"--webhook-memory-budget=$2\"]"
done
for m in 128974848000m 500m; do # milli: the values schema admits it
  printf 'resources:\n  limits:\n    memory: "%s"\n' "$m" >"$work/mem.yaml"
  if "$H" --chart "$chart" -f "$work/mem.yaml" >/dev/null 2>"$work/err"; then
    fail "memory limit $m: rendered, want a failure that names the forms read"
  elif grep -qF "resources.limits.memory \"$m\": the chart derives webhook.memoryBudgetMiB from it and cannot read this form" "$work/err"; then
    ok "memory limit $m: the render fails and says which forms are read"
  else
    fail "memory limit $m: got $(cat "$work/err")"
  fi
done
printf 'resources:\n  limits:\n    memory: "128974848000m"\nwebhook:\n  memoryBudgetMiB: 64\n' >"$work/mem.yaml"
render memr -f "$work/mem.yaml"
jqt "$work/memr.json" "webhook.memoryBudgetMiB set: the limit is not read" \
  "[$d | .spec.template.spec.containers[0].args[] | select(startswith(\"--webhook-memory-budget\"))] == [\"--webhook-memory-budget=64\"]"

# --- as a dependency of an umbrella chart (issue 25) -----------------------------------------------
# Helm gives a subchart its section of the umbrella's values plus `global`, and checks them against
# the subchart's schema: a schema without `global` made the chart impossible to depend on.
render umbrella --namespace "$ns" --name platform --as-subchart -f "$top/tests/deploy/testdata/values/umbrella.yaml"
if out=$(k8s_validate "$work/umbrella.json"); then ok "as a subchart: every object passes its schema"; else fail "as a subchart: $out"; fi
jqt "$work/umbrella.json" "as a subchart: nameOverride names every object and the app.kubernetes.io/name label" \
  '(length > 10) and all(.[]; (.metadata.name | startswith("platform-po")) and .metadata.labels["app.kubernetes.io/name"] == "po")'
jqt "$work/umbrella.json" "as a subchart: the umbrella's section reaches the chart, and the selector still selects the pods" \
  "$d | (.spec.template.spec.containers[0].args | index(\"--log-level=debug\") != null) and (.spec.selector.matchLabels | to_entries | all(.value as \$v | \$v != null)) and (.spec.selector.matchLabels as \$m | .spec.template.metadata.labels | contains(\$m)) and .spec.selector.matchLabels[\"app.kubernetes.io/name\"] == \"po\""
printf 'global: {}\n' >"$work/global-only.yaml"
render globalonly --namespace "$ns" --include-crds --as-subchart -f "$work/global-only.yaml"
if jq -e --slurpfile a "$work/default.json" '. == $a[0]' "$work/globalonly.json" >/dev/null; then
  ok "as a subchart with no section of its own: the same objects as a release of its own"
else fail "as a subchart with no section: the objects differ from the default render"; fi

# --- bad values fail the values schema with a clear message -------------------------------------
for f in "$top"/tests/deploy/testdata/bad/*.yaml; do
  want=$(sed -n '1s/^# expect: //p' "$f")
  if "$H" --chart "$chart" -f "$f" >/dev/null 2>"$work/err"; then
    fail "$(basename "$f"): rendered, want the error: $want"
  elif grep -qF -- "$want" "$work/err" && grep -q "values don't meet the specifications of the schema" "$work/err"; then
    ok "$(basename "$f") rejected: $want"
  else
    fail "$(basename "$f"): want '$want', got: $(cat "$work/err")"
  fi
done
finish
