#!/usr/bin/env bash
# adv1 (issue 12): validate -f warns about a zero value under MERGE in a hand-written
# EnvoyFilter (it is unset in proto3, not copied: the patch silently does nothing) only when
# the JSON itself is 0, false or "": an enum's first value given by name (lb_policy:
# ROUND_ROBIN, the common way to write it) passes without a word.
. "$(dirname "$0")/lib.sh"
# merge_ef NAME VALUE: an EnvoyFilter MERGE-ing VALUE into the outbound clusters, validated
# into $work/NAME.out (exit code in $rc).
merge_ef() {
  cat >"$work/$1.yaml" <<YAML
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: $1, namespace: shop}
spec:
  configPatches:
    - applyTo: CLUSTER
      match: {context: SIDECAR_OUTBOUND}
      patch: {operation: MERGE, value: $2}
YAML
  "$bin" validate -f "$work/$1.yaml" >"$work/$1.out" 2>&1
  rc=$?
}
merge_ef enum-zero '{lb_policy: ROUND_ROBIN}'
check "validates (a warning, not an error)" 0 $rc "$work/enum-zero.out"
contains "an enum's first value by name is warned about" "$work/enum-zero.out" "spec.configPatches[0].patch.value/lb_policy: a zero value under MERGE"
# another value by name, and the zero inside a oneof (presence: it is copied), are not warned about
merge_ef enum-other '{lb_policy: LEAST_REQUEST, type: STATIC}'
check "a non-zero enum by name, and a oneof's zero by name: valid" 0 $rc "$work/enum-other.out"
if grep -q "zero value" "$work/enum-other.out"; then echo "FAIL no zero-value warning for them:"; cat "$work/enum-other.out"; fail=$((fail+1)); else pass=$((pass+1)); fi
finish
