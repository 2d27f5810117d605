#!/usr/bin/env bash
# adv1 (issue 12): validate -f of a hand-written EnvoyPatchPolicy nests the value along the
# path with every all-digit segment taken for an array index, so a map key that is all digits
# (/metadata/filter_metadata/0, valid: filter_metadata is a map<string, Struct>) is reported
# as an invalid value, where Envoy Gateway applies it.
. "$(dirname "$0")/lib.sh"
cat >"$work/mapkey.yaml" <<'YAML'
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata: {name: mapkey, namespace: shop}
spec:
  type: JSONPatch
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  jsonPatches:
    - type: type.googleapis.com/envoy.config.cluster.v3.Cluster
      name: httproute/shop/api/rule/0
      operation: {op: add, path: /metadata/filter_metadata/0, value: {a: 1}}
YAML
"$bin" validate -f "$work/mapkey.yaml" >"$work/out" 2>&1
check "an all-digit map key is a key" 0 $? "$work/out"
finish
