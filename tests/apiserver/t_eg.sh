#!/usr/bin/env bash
# Envoy Gateway targets with the real kubectl against po-apiserver: the EnvoyPatchPolicy CRD
# (crds/envoygateway, written from Envoy Gateway's API types) is the oracle for the objects
# `propertyoverride render` prints for examples/envoy-gateway: `kubectl create --dry-run=server`
# accepts each, then it is applied client-side and server-side and read back unchanged. The
# minimal Gateway and HTTPRoute CRDs take the examples' own Gateways and HTTPRoutes. Then the
# oracle's teeth: a type URL outside the enum, an unknown op and a missing targetRef are refused;
# kubectl explain reads the schema.
#   t_eg.sh PO_APISERVER PROPERTYOVERRIDE
APISERVER=$1
PO=$2
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "kubectl missing: skipped"; exit 77; }
command -v jq >/dev/null || { echo "jq missing: skipped"; exit 77; }
top=$(cd "$(dirname "$0")/../.." && pwd)
start_server api

k apply -f "$top/crds/envoygateway/" -f "$top/crds/propertyoverride.io_propertyoverrides.yaml" >/dev/null
k wait --for=condition=Established crd/envoypatchpolicies.gateway.envoyproxy.io crd/gateways.gateway.networking.k8s.io \
  crd/httproutes.gateway.networking.k8s.io crd/propertyoverrides.propertyoverride.io --timeout=20s >/dev/null
pass "EnvoyPatchPolicy, Gateway, HTTPRoute and PropertyOverride CRDs established"
for ns in shop edge; do k create namespace "$ns" >/dev/null; done

n=0
for f in "$top"/examples/envoy-gateway/*.yaml; do
  "$PO" render -f "$f" >"$T/epp.yaml" || fail "render $f"
  name=$(sed -n 's/^  name: //p' "$T/epp.yaml" | head -1)
  ns=$(sed -n 's/^  namespace: //p' "$T/epp.yaml" | head -1)
  k create --dry-run=server -f "$T/epp.yaml" >"$T/dry.out" 2>&1 || fail "the schema refuses the EnvoyPatchPolicy rendered from $f: $(cat "$T/dry.out")"
  k apply -f "$T/epp.yaml" >/dev/null || fail "kubectl apply of the EnvoyPatchPolicy rendered from $f"
  k apply --server-side --field-manager=po-test -f "$T/epp.yaml" >/dev/null || fail "server-side apply of $f's EnvoyPatchPolicy"
  # Read back: the jsonPatches are what render printed (the API server kept every field).
  k -n "$ns" get envoypatchpolicy "$name" -o json | jq -S '.spec' >"$T/got.json"
  "$PO" render -f "$f" | sed -n '/^spec:/,$p' >"$T/want.yaml"
  expect_eq "$(jq -r '.jsonPatches | length' "$T/got.json")" "$(grep -c '^  - name: ' "$T/want.yaml")" "patch count of $name"
  expect_eq "$(jq -r '[.jsonPatches[].name] | join(",")' "$T/got.json")" \
    "$(sed -n 's/^  - name: //p' "$T/want.yaml" | paste -sd, -)" "resource names of $name"
  # The example's Gateway, HTTPRoutes and PropertyOverride pass their CRDs too.
  k apply -f "$f" >/dev/null || fail "kubectl apply of $f (PropertyOverride, Gateway, HTTPRoutes)"
  n=$((n+1))
done
[ "$n" -ge 2 ] || fail "only $n examples"
pass "rendered EnvoyPatchPolicies pass the schema (dry-run=server), applied and read back"

expect_eq "$(k -n shop get epp propertyoverride-payments-outlier-detection -o jsonpath='{.spec.jsonPatches[2].operation.value}')" \
  "10s" "a Duration stays a protojson string"
expect_eq "$(k -n edge get epp propertyoverride-gateway-defaults -o jsonpath='{.spec.priority}')" "10" "priority"

# The oracle can fail: each broken rendering is refused, naming the field.
"$PO" render -f "$top/examples/envoy-gateway/gateway-wide-timeouts.yaml" >"$T/good.yaml"
bad() { # NAME SED FIELD
  sed -e "$2" -e "s/^  name: propertyoverride-gateway-defaults/  name: broken/" "$T/good.yaml" >"$T/bad.yaml"
  if out=$(k create --dry-run=server -f "$T/bad.yaml" 2>&1); then fail "$1 was accepted: $out"; fi
  grep -q "$3" <<<"$out" || fail "the refusal of $1 names $3: $out"
  pass "schema refuses $1"
}
bad "a type URL outside the enum" 's|envoy.config.cluster.v3.Cluster|envoy.config.cluster.v3.Clusters|' 'type'
bad "an unknown op" 's|op: add|op: merge|' 'op'
bad "type other than JSONPatch" 's|^  type: JSONPatch|  type: MergePatch|' 'type'
bad "no targetRef" '/^  targetRef:/,/^    name: /d' 'targetRef'

out=$(k explain envoypatchpolicy.spec.jsonPatches.type)
grep -q 'envoy.config.endpoint.v3.ClusterLoadAssignment' <<<"$out" || fail "explain lists the type URLs: $out"
out=$(k explain epp.spec.priority)
grep -q 'lower is applied first' <<<"$out" || fail "explain priority: $out"
pass "kubectl explain"
