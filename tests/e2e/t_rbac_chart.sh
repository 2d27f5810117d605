#!/usr/bin/env bash
# The controller as the Helm chart deploys it (its ServiceAccount, the chart's RBAC, the chart's
# own arguments) on the real kube-apiserver, under documented values: every request it makes must
# be one the chart's RBAC allows, in the real authorizer's word (lc_audit_refused: namespaces
# included, which lc_audit_rbac does not compare). What this found, and now holds:
#   - Envoy Gateway installed (its CRDs and its control plane's Service, labelled
#     control-plane=envoy-gateway) and no envoyGateway.version: the controller reads the release
#     from that Service, a LIST of Services in every namespace (releases.c). Under istio.mode off
#     the chart granted no `services`, and under watchNamespaces there are only RoleBindings:
#     a 403 and a silent fallback to the default release. Now the chart grants the list in the
#     first case, and under --namespace the controller does not try and says to set
#     --envoy-gateway-version.
#   - watchNamespaces, with a cross-namespace PropertyOverride (tenancy.allowCrossNamespaceFrom)
#     into a namespace not watched: the controller created the ServiceDefaults there (no cache of
#     that namespace: "absent"), refused 403 over and over. Now refused without a request, the
#     status saying the namespace is not watched.
#   - watchNamespaces without Istio's root namespace: the chart bound the whole ClusterRole there,
#     where a Mesh target's EnvoyFilter is all the controller touches. Now a Role of EnvoyFilters
#     alone, and a Mesh PropertyOverride is programmed under it. That Role first left out the list
#     of Services istiod's release is read with at start when istio.version is not set (a 403,
#     and Istio judged and written as 1.31): it grants that list then too (mesh-root-detect).
#   t_rbac_chart.sh BUILD_DIR        (PO_APISERVER=real only)
. "$(dirname "$0")/lib.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real API server only"; exit 77; }
H=$(cd "$build" && pwd)/tests/deploy/helmrender
"$top/tests/deploy/build-helmrender.sh" "$H" >/dev/null || { bad "building tests/deploy/helmrender"; finish; exit 1; }

one() { # label values-yaml [targetRef-yaml]
  local label=$1 values=$2 target=${3:-} dir=$e2e_work/$1 webhook_port probe_port
  mkdir -p "$dir"
  printf '%s\n' "$values" >"$dir/values.yaml"
  "$H" --chart "$top/helm/propertyoverride" --namespace propertyoverride-system -f "$dir/values.yaml" >"$dir/chart.yaml" ||
    { bad "$label: the chart does not render"; return; }
  "$H" yaml2json "$dir/chart.yaml" >"$dir/chart.json"
  webhook_port=$(lc_free_port)
  lc_start "$build" "$dir/cluster" --webhook-service "propertyoverride-system/propertyoverride-webhook=127.0.0.1:$webhook_port" ||
    { bad "$label: the API server did not start"; return; }
  eg_crds || { bad "$label: Envoy Gateway's CRDs"; return; }
  if [ "$target" = mesh ]; then
    kubectl apply -f "$top/crds/istio/networking.istio.io_envoyfilters.yaml" >/dev/null &&
      lc_crds_ready envoyfilters.networking.istio.io || { bad "$label: Istio's EnvoyFilter CRD"; return; }
  fi
  local ns
  for ns in propertyoverride-system shop istio-system envoy-gateway-system; do kubectl create namespace "$ns" >/dev/null; done
  kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: envoy-gateway
  namespace: envoy-gateway-system
  labels: {control-plane: envoy-gateway, app.kubernetes.io/version: "v1.6.0"}
spec:
  ports: [{name: grpc, port: 18000}]
EOF
  if [ "$target" = mesh ]; then # istiod's Service: where the controller reads Istio's release without istio.version
    kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: istiod
  namespace: istio-system
  labels: {app: istiod, app.kubernetes.io/version: "1.30.2"}
spec:
  ports: [{name: grpc-xds, port: 15010}]
EOF
  fi
  jq -c '.[]' "$dir/chart.json" | kubectl apply -f - >"$dir/apply.log" 2>&1 || { bad "$label: applying the chart: $(tail -3 "$dir/apply.log")"; return; }
  local token
  token=$(kubectl -n propertyoverride-system create token propertyoverride-controller --duration 1h) || { bad "$label: token"; return; }
  kubectl config view --raw --minify -o json |
    jq --arg t "$token" '.users[0].user = {token: $t} | .contexts[0].context.namespace = "propertyoverride-system"' >"$dir/sa.kubeconfig"
  probe_port=$(lc_free_port)
  local args=() a
  while read -r a; do
    case "$a" in
      --webhook-bind-address=*) a="--webhook-bind-address=127.0.0.1:$webhook_port" ;;
      --health-probe-bind-address=*) a="--health-probe-bind-address=127.0.0.1:$probe_port" ;;
      --webhook-cert-dir=*) a="--webhook-cert-dir=$dir/certs" ;;
      --consul-sync-status=*) a="--consul-sync-status=ignore" ;; # no consul-k8s here
    esac
    args+=("$a")
  done < <(jq -r '.[] | select(.kind=="Deployment") | .spec.template.spec.containers[0].args[]' "$dir/chart.json")
  args=("${args[@]//\$(POD_NAMESPACE)/propertyoverride-system}")
  "$build/propertyoverride" "${args[@]}" --kubeconfig "$dir/sa.kubeconfig" >"$dir/controller.log" 2>&1 &
  local pid=$! i ready=0
  lc_pids+=($pid)
  for ((i = 0; i < 600; i++)); do
    curl -sf "http://127.0.0.1:$probe_port/readyz" >/dev/null 2>&1 && { ready=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [ "$ready" = 1 ] && ok "$label: the controller with the chart's arguments, as its ServiceAccount, is ready" ||
    { bad "$label: not ready: $(tail -3 "$dir/controller.log")"; return; }
  # something to do: a PropertyOverride in a watched namespace
  if [ "$target" = mesh ]; then # a Mesh target: its EnvoyFilter goes into Istio's root namespace, not watched
    sed 's/^  namespace: .*/  namespace: shop/' "$top/examples/istio/mesh-wide-timeouts.yaml" | kubectl apply -f - >/dev/null
    kubectl -n shop wait --for=condition=Programmed propertyoverride/mesh-defaults --timeout=60s >/dev/null 2>&1 &&
      ok "$label: a Mesh PropertyOverride is programmed" || bad "$label: the Mesh PropertyOverride is not programmed"
    check "$label: its EnvoyFilter is in Istio's root namespace" kubectl -n istio-system get envoyfilter propertyoverride.shop.mesh-defaults -o name
  elif [ -z "$target" ]; then
    sed 's/^  name: .*/  name: api-connect-timeout/' "$top/examples/valid/connect-timeout.yaml" | kubectl -n shop apply -f - >/dev/null
    kubectl -n shop wait --for=condition=Programmed propertyoverride/api-connect-timeout --timeout=60s >/dev/null 2>&1 &&
      ok "$label: a PropertyOverride is programmed" || bad "$label: not programmed"
    sleep 2
  else
    kubectl create namespace other >/dev/null
    kubectl -n shop apply -f - >/dev/null <<EOF
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: cross}
spec:
  targetRef: $target
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /connect_timeout
      value: 2s
EOF
    # (waited for, not slept on: a busy machine reconciles late)
    eventually "$label: its status says the namespace is not watched" 60 yes sh -c \
      "kubectl -n shop get pov cross -o jsonpath='{.status.conditions[?(@.type==\"Programmed\")].message}' | grep -q 'is not watched by this controller' && echo yes"
    echo "  $label: cross's Programmed condition: $(kubectl -n shop get pov cross -o jsonpath='{.status.conditions[?(@.type=="Programmed")].reason}: {.status.conditions[?(@.type=="Programmed")].message}')"
    check "$label: no ServiceDefaults created in the unwatched namespace" test -z "$(kubectl -n other get servicedefaults -o name 2>/dev/null)"
  fi
  local refused
  refused=$(lc_audit_refused "$dir/cluster")
  check "$label: the API server refused no request of the controller under the chart's RBAC${refused:+:$refused}" test -z "$refused"
  if [ "$label" = mesh-root-detect ]; then # no istio.version: read from istiod's Service in the root namespace
    contains "$label: the Istio release is read from istiod's Service in the root namespace" \
      "$(grep '"msg":"mesh release","mesh":"Istio"' "$dir/controller.log" | head -1)" '"release":"1.30","envoy_api":'
  fi
  local eg
  eg=$(grep '"msg":"mesh release","mesh":"Envoy Gateway"' "$dir/controller.log" | head -1)
  if [ -n "$target" ]; then
    : # envoyGateway.version given
  elif [ "$label" = namespaced ]; then # the Services of every namespace cannot be read: it says what to set
    contains "$label: the Envoy Gateway release: not read (no permission), says to set --envoy-gateway-version" "$eg" 'set --envoy-gateway-version'
  else
    contains "$label: the Envoy Gateway release is read from its control plane's Service" "$eg" '"source":"detected"'
  fi
  lc_stop
}

one defaults ''
one istio-off 'istio: {mode: "off"}'
one namespaced 'watchNamespaces: [shop]'
# A single replica without leader election: the Role in the release namespace grants the Secret
# alone (self-managed certificate), no Lease; the controller must ask for none.
one single 'replicaCount: 1
leaderElection: {enabled: false}'
# Istio's root namespace not watched: the chart's Role there grants EnvoyFilters alone, and a Mesh
# target's EnvoyFilter is all the controller writes there.
one mesh-root 'watchNamespaces: [shop]
tenancy: {proxyDefaultsNamespaces: [shop]}
istio: {mode: "on", version: "1.31"}
envoyGateway: {version: "1.6"}' mesh
# The same without istio.version: the release is read at start from istiod's Service, a list of
# Services in the root namespace, which the Role there must allow too (a 403, and Istio judged and
# written as 1.31, MERGE_AND_REPLACE_LIST that an older Istio refuses, without it).
one mesh-root-detect 'watchNamespaces: [shop]
tenancy: {proxyDefaultsNamespaces: [shop]}
istio: {mode: "on"}
envoyGateway: {version: "1.6"}' mesh
# A platform team's cross-namespace PropertyOverride (tenancy.allowCrossNamespaceFrom) into a
# namespace the controller does not watch (nor may write: only watched namespaces are bound).
one cross-unwatched 'watchNamespaces: [shop]
tenancy: {allowCrossNamespaceFrom: [shop]}
envoyGateway: {version: "1.6"}' '{name: api, namespace: other}'
finish
