#!/usr/bin/env bash
# adv1 (issue 12): validate -f warns about a zero value under MERGE in a hand-written
# EnvoyFilter (it is unset in proto3, not copied: the patch silently does nothing) only when
# the JSON itself is 0, false or "": an enum's first value given by name (lb_policy:
# ROUND_ROBIN, the common way to write it) passes without a word.
. "$(dirname "$0")/lib.sh"
cat >"$work/ef.yaml" <<'YAML'
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: enum-zero, namespace: shop}
spec:
  configPatches:
    - applyTo: CLUSTER
      match: {context: SIDECAR_OUTBOUND}
      patch: {operation: MERGE, value: {lb_policy: ROUND_ROBIN}}
YAML
"$bin" validate -f "$work/ef.yaml" >"$work/out" 2>&1
check "validates (a warning, not an error)" 0 $? "$work/out"
contains "an enum's first value by name is warned about" "$work/out" "spec.configPatches[0].patch.value/lb_policy: a zero value under MERGE"
# another value by name, and the zero inside a oneof (presence: it is copied), are not warned about
cat >"$work/ef2.yaml" <<'YAML'
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: enum-other, namespace: shop}
spec:
  configPatches:
    - applyTo: CLUSTER
      match: {context: SIDECAR_OUTBOUND}
      patch: {operation: MERGE, value: {lb_policy: LEAST_REQUEST, type: STATIC}}
YAML
"$bin" validate -f "$work/ef2.yaml" >"$work/out2" 2>&1
check "a non-zero enum by name, and a oneof's zero by name: valid" 0 $? "$work/out2"
if grep -q "zero value" "$work/out2"; then echo "FAIL no zero-value warning for them:"; cat "$work/out2"; fail=$((fail+1)); else pass=$((pass+1)); fi
finish
