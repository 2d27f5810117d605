#!/usr/bin/env bash
# adv27: the finalizer at admission (overrides.mutate.propertyoverride.io) on a PropertyOverride the
# controller never reconciles. A controller that watches only some namespaces (--namespace) never
# sees a PropertyOverride elsewhere, so it never removes a finalizer there; the webhook (this
# binary's /mutate, the configuration as deploy/ registers it) still gives one its finalizer, and
# its deletion then waits forever (a namespace deletion behind it too). Before e3b2f1f0 such a
# PropertyOverride got no finalizer and was deleted at once. po_Reconcile_Claims ("the reconcile's
# own rule") asks the tenancy policy only, not whether this controller watches the namespace; only
# the chart's namespaceSelector (watchNamespaces) keeps such creates from the webhook.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
lc_controller --namespace default || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1
kubectl create namespace other >/dev/null
override() { # name
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata:\n  name: %s\nspec:\n  targetRef: {kind: ServiceDefaults, name: web}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: 10\n' "$1"
}

# a watched namespace: the finalizer at the create, and the deletion waits for the controller
override a | kubectl create -f - >/dev/null || bad "a: create"
check "a (watched namespace): the finalizer at its create" \
  test "$(kubectl get propertyoverride a -o json | jq -c '.metadata.finalizers')" = '["propertyoverride.io/finalizer"]'
check "a: deleted (the controller removed the finalizer)" kubectl delete propertyoverride a --wait=true --timeout=20s

# a namespace this controller does not watch: nothing will ever remove a finalizer there
override x | kubectl create -n other -f - >/dev/null || bad "x: create"
got=$(kubectl get propertyoverride -n other x -o json | jq -c '.metadata.finalizers // []')
check "x (namespace other, not watched): no finalizer the controller would never remove ($got)" test "$got" = '[]'
kubectl delete -n other propertyoverride x --wait=false >/dev/null
eventually "x: its deletion is not stuck" 20 "" kubectl get propertyoverride -n other x -o name
finish
