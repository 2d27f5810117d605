#!/usr/bin/env bash
# The README's run command (make run): the controller against the bundled local API server,
# with the examples, applied the way `kubectl apply` does it, then what happened, then stop.
set -uo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/lib/local-cluster.sh
work=$(mktemp -d /tmp/propertyoverride-run.XXXXXX)
trap 'lc_stop; echo; echo "logs kept in $work"' EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "local API server (tests/apiserver), with its fake consul-k8s setting Synced on targets and its fake Envoy Gateway setting EnvoyPatchPolicies' status"
LC_NO_CRDS=1 lc_start "$build" "$work" --fake-consul-k8s-delay-ms 500 --fake-envoy-gateway || exit 1
echo "serving $LC_URL; kubeconfig $KUBECONFIG"

say "kubectl apply -k crds/ -f crds/consul/   (ours, and ServiceDefaults/ProxyDefaults from consul-k8s's schema)"
kubectl apply -k crds/
kubectl apply -f crds/consul/
say "kubectl apply -f crds/envoygateway/   (Envoy Gateway's EnvoyPatchPolicy, the Gateway API's Gateway and HTTPRoute)"
kubectl apply -f crds/envoygateway/
kubectl wait --for=condition=Established crd --all --timeout=30s
kubectl get crd

say "propertyoverride controller with its admission webhook"
LC_CONSUL_SYNC=require lc_controller || exit 1
lc_register_webhook Fail
echo "webhook https://127.0.0.1:$LC_WEBHOOK_PORT/validate registered (failurePolicy Fail)"

say "kubectl apply -f examples/consul/   (Consul objects that exist before us)"
kubectl apply -f examples/consul/
say "kubectl apply -f examples/valid/ -f examples/overlap/"
kubectl apply -f examples/valid/ -f examples/overlap/

say "kubectl apply -f examples/invalid/   (each one refused, with the reason)"
for f in examples/invalid/*.yaml; do
  printf -- '--- %s\n' "$f"
  kubectl apply -f "$f" 2>&1 | sed 's/^/    /'
done

say "waiting for every PropertyOverride to be Programmed"
kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=30s >/dev/null && echo "all programmed"

say "kubectl get propertyoverrides"
kubectl get propertyoverrides -o wide
say "Programmed messages"
kubectl get propertyoverrides -o jsonpath='{range .items[*]}{.metadata.name}{": "}{.status.conditions[?(@.type=="Programmed")].message}{"\n"}{end}'

say "the resulting ServiceDefaults api (its own builtin/lua extension kept)"
kubectl get servicedefaults api -o yaml
say "the ServiceDefaults frontend (created by the controller)"
kubectl get servicedefaults frontend -o yaml | head -60

say "an invalid update is refused at admission"
kubectl patch propertyoverride api-payments-outlier-detection --type=json \
  -p '[{"op":"replace","path":"/spec/patches/3/value","value":150}]' 2>&1 | sed 's/^/    /'

say "with the webhook down, the controller still refuses it and keeps the last good generation live"
kubectl delete validatingwebhookconfiguration propertyoverride
kubectl patch propertyoverride api-payments-outlier-detection --type=json \
  -p '[{"op":"replace","path":"/spec/patches/3/value","value":150}]'
for i in $(seq 1 50); do
  [ "$(kubectl get propertyoverride api-payments-outlier-detection -o jsonpath='{.status.observedGeneration}')" = 2 ] && break
  sleep 0.1
done
kubectl get propertyoverride api-payments-outlier-detection \
  -o jsonpath='{range .status.conditions[*]}{.type}={.status} ({.reason}): {.message}{"\n"}{end}'
echo "live in ServiceDefaults api: generation $(kubectl get servicedefaults api -o json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["spec"]["envoyExtensions"]:
    src = e.get("arguments", {}).get("PropertyOverride", {})
    if src.get("name") == "api-payments-outlier-detection": print(src["generation"])')"

say "Envoy Gateway: kubectl apply -f examples/envoy-gateway/   (Gateways, HTTPRoutes, PropertyOverrides)"
kubectl create namespace shop
kubectl create namespace edge
kubectl apply -f examples/envoy-gateway/
kubectl -n shop wait --for=condition=Programmed propertyoverride/payments-outlier-detection --timeout=30s
kubectl -n edge wait --for=condition=Programmed propertyoverride/gateway-defaults --timeout=30s
say "the EnvoyPatchPolicy the controller wrote for shop/payments-outlier-detection, and Envoy Gateway's status of it"
kubectl -n shop get envoypatchpolicy propertyoverride-payments-outlier-detection -o yaml

say "done"
