#!/usr/bin/env bash
# adv-22 (issue 22, Envoy-exact admission): native values where validate -f and Envoy's own
# validators (go-control-plane v1.32.3 ValidateAll, after Envoy Gateway's protojson) disagree.
. "$(dirname "$0")/lib.sh"
epp() { # epp PATH VALUE-YAML: an EnvoyPatchPolicy JSON Patch add on a Cluster
  printf 'apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyPatchPolicy\nmetadata: {name: x, namespace: d}\nspec:\n  type: JSONPatch\n  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: edge}\n  jsonPatches:\n    - type: type.googleapis.com/envoy.config.cluster.v3.Cluster\n      name: c\n      operation:\n        op: add\n        path: "%s"\n        value: %s\n' "$1" "$2" >"$work/epp.yaml"
  "$bin" validate -f "$work/epp.yaml" >"$work/out" 2>&1
}
# Hole: the path's last token is the empty map key; Metadata.filter_metadata's keys have
# min_len 1 (ValidateAll: "/metadata/filter_metadata/: value length must be at least 1 runes").
# The same key inside an object value is refused; through the path it was admitted.
epp /metadata/filter_metadata/ '{}'
check "an empty map key through the path breaks keys.min_len 1" 1 $? "$work/out"
# False denial: protojson (Envoy Gateway's decoder) reads a quoted integer in exponent form,
# "1e1" as 10, and ValidateAll accepts it; upb's decoder refused it ("Non-number characters").
epp /outlier_detection/consecutive_5xx '"1e1"'
check "a quoted exponent integer is read as protojson reads it" 0 $? "$work/out"
# Hole: a JSON Patch remove of a field Envoy requires. If the generated resource lacks it the
# policy fails (said as a warning); if it has it, the result breaks the rule (ValidateAll:
# "/health_checks/0/timeout: value is required"): no outcome is valid. The same remove in a
# PropertyOverride is refused ("removing 'cluster_name' leaves it empty").
printf 'apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyPatchPolicy\nmetadata: {name: x, namespace: d}\nspec:\n  type: JSONPatch\n  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: edge}\n  jsonPatches:\n    - type: type.googleapis.com/envoy.config.cluster.v3.Cluster\n      name: c\n      operation: {op: remove, path: %s}\n' /health_checks/0/timeout >"$work/epp.yaml"
"$bin" validate -f "$work/epp.yaml" >"$work/out" 2>&1
check "a remove of a required field is refused" 1 $? "$work/out"
finish
