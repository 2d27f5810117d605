#!/usr/bin/env bash
# Istio targets with the real kubectl against po-apiserver: the EnvoyFilter CRD
# (crds/istio) and the PropertyOverride CRD's targetRef {group, kind, name}; the EnvoyFilters
# `propertyoverride render` prints for examples/istio applied client-side and server-side and
# read back unchanged; the CRD's schema refusing a bad applyTo; kubectl explain.
#   t_istio.sh PO_APISERVER PROPERTYOVERRIDE
APISERVER=$1
PO=$2
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "kubectl missing: skipped"; exit 77; }
top=$(cd "$(dirname "$0")/../.." && pwd)
start_server api

k apply -f "$top/crds/istio/networking.istio.io_envoyfilters.yaml" -f "$top/crds/propertyoverride.io_propertyoverrides.yaml" >/dev/null
k wait --for=condition=Established crd/envoyfilters.networking.istio.io crd/propertyoverrides.propertyoverride.io --timeout=20s >/dev/null
pass "EnvoyFilter and PropertyOverride CRDs established"
k create namespace shop >/dev/null
k create namespace istio-system >/dev/null
k create namespace platform >/dev/null

for f in "$top"/examples/istio/*.yaml; do
  # shellcheck disable=SC2046
  "$PO" render -f "$f" $(sed -n 's/^# render-args: //p' "$f") >"$T/ef.yaml" || fail "render $f"
  name=$(sed -n 's/^  name: //p' "$T/ef.yaml" | head -1)
  ns=$(sed -n 's/^  namespace: //p' "$T/ef.yaml" | head -1)
  k apply -f "$T/ef.yaml" >/dev/null || fail "kubectl apply of the EnvoyFilter rendered from $f"
  k apply --server-side --field-manager=po-test -f "$T/ef.yaml" >/dev/null || fail "server-side apply of $f's EnvoyFilter"
  # Read back: the configPatches are what render printed (the API server kept every field).
  k -n "$ns" get envoyfilter "$name" -o json | jq -S '.spec' >"$T/got.json"
  "$PO" render -f "$f" $(sed -n 's/^# render-args: //p' "$f") | sed -n '/^spec:/,$p' >"$T/want.yaml"
  got_ops=$(jq -r '[.configPatches[].patch.operation] | join(",")' "$T/got.json")
  want_ops=$(grep -o 'operation: [A-Z_]*' "$T/want.yaml" | sed 's/operation: //' | paste -sd, -)
  expect_eq "$got_ops" "$want_ops" "operations of $name"
  expect_eq "$(jq -r '.configPatches | length' "$T/got.json")" "$(grep -c 'applyTo:' "$T/want.yaml")" "patch count of $name"
  # The PropertyOverride itself passes the CRD's schema and rules (targetRef group/kind).
  sed -n '/^apiVersion: propertyoverride.io/,/^---$/p' "$f" | sed '/^---$/d' >"$T/po.yaml"
  k apply -f "$T/po.yaml" >/dev/null || fail "kubectl apply of the PropertyOverride of $f"
done
pass "rendered EnvoyFilters applied and read back"

expect_eq "$(k -n istio-system get envoyfilter propertyoverride.platform.mesh-defaults -o jsonpath='{.spec.configPatches[0].patch.value.connect_timeout}')" \
  "3s" "a Duration stays a protojson string"
expect_eq "$(k -n shop get envoyfilter propertyoverride-api-payments-outlier-detection -o jsonpath='{.spec.workloadSelector.labels.app}')" \
  "api" "the Service's selector is the workloadSelector"

# The schema refuses what Istio's does: an applyTo outside its enum.
"$PO" render -f "$top/examples/istio/mesh-wide-timeouts.yaml" | sed 's/applyTo: CLUSTER/applyTo: ENDPOINT/' >"$T/bad.yaml"
if out=$(k apply -f "$T/bad.yaml" 2>&1); then fail "an applyTo ENDPOINT was accepted: $out"; fi
grep -q 'applyTo' <<<"$out" || fail "the refusal names applyTo: $out"
pass "schema refuses applyTo ENDPOINT"

# targetRef: a Service target with Consul's group is refused by the CRD (or, where its CEL rule
# is outside the server's subset, accepted by the schema and refused by the webhook: both say
# which groups go with which kinds).
sed 's/^  name: .*/  name: wrong-group/; s/^    group: ""/    group: consul.hashicorp.com/' "$T/po.yaml" >"$T/po-bad.yaml"
grep -q 'group: consul.hashicorp.com' "$T/po-bad.yaml" || sed -i 's/^    kind: Service/    group: consul.hashicorp.com\n    kind: Service/' "$T/po-bad.yaml"
if out=$(k apply -f "$T/po-bad.yaml" 2>&1); then
  grep -q 'unchanged\|created\|configured' <<<"$out" || fail "unexpected: $out"
  echo "note: CEL group/kind rule not evaluated by this server (the webhook refuses it)"
else
  grep -q 'group and kind do not match' <<<"$out" || fail "the refusal names the rule: $out"
  pass "CRD refuses a Service target with group consul.hashicorp.com"
fi

out=$(k explain envoyfilter.spec.configPatches.patch.operation)
grep -q 'MERGE_AND_REPLACE_LIST' <<<"$out" || fail "explain lists MERGE_AND_REPLACE_LIST: $out"
out=$(k explain propertyoverride.spec.targetRef.group)
grep -q 'networking.istio.io' <<<"$out" || fail "explain targetRef.group: $out"
pass "kubectl explain"
