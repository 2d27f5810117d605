#!/usr/bin/env bash
# adv27: removing the finalizer by hand from a PropertyOverride being deleted is always possible
# (docs/gitops.md, "The finalizer"; controller/webhook/README.md: "An update of an object being
# deleted is never changed"). The webhook decides "being deleted" by the incoming object's
# metadata.deletionTimestamp, and so does the matchCondition created-or-dropping-it; but the
# kube-apiserver keeps the stored deletionTimestamp whatever an update's body says
# (rest.BeforeUpdate, after mutating admission: "an update can never remove/change a deletion
# timestamp"). A PUT whose body leaves deletionTimestamp out (a manifest's shape: `kubectl neat`,
# an object rebuilt from a typed struct) or a merge patch that nulls it along with the finalizers
# is such an update of an object being deleted: the webhook puts the finalizer back (with its
# "was kept" warning) and the deletion stays stuck. The oracle is the real kube-apiserver
# (PO_APISERVER=real): the local server (tests/apiserver) lets the PUT through.
#
# Stuck deletions modelled by a leader that never comes (the Lease held by another identity, and
# this replica waiting --lease-duration 3600 before it takes a lease nobody renews): the webhook
# answers on every replica, leader or not, and nothing cleans up, as when the controller can never
# finish a cleanup.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
kubectl apply -f - >/dev/null <<YAML || exit 1
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: propertyoverride-controller, namespace: default}
spec: {holderIdentity: elsewhere, leaseDurationSeconds: 3600, acquireTime: "$now", renewTime: "$now", leaseTransitions: 0}
YAML
lc_controller --lease-duration 3600 || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1
override() { # name
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata:\n  name: %s\nspec:\n  targetRef: {kind: ServiceDefaults, name: web}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: 10\n' "$1"
}
stuck() { # name: created with the finalizer, deleted, still there
  override "$1" | kubectl create -f - >/dev/null 2>"$e2e_work/$1.create" || { bad "$1: create: $(cat "$e2e_work/$1.create")"; return 1; }
  check "$1: the finalizer at its create" \
    test "$(kubectl get propertyoverride "$1" -o json | jq -c '.metadata.finalizers')" = '["propertyoverride.io/finalizer"]'
  kubectl delete propertyoverride "$1" --wait=false >/dev/null
  sleep 2
  check "$1: its deletion waits (nothing cleans up)" \
    test "$(kubectl get propertyoverride "$1" -o json | jq -c '[.metadata.deletionTimestamp != null, .metadata.finalizers]')" = \
    '[true,["propertyoverride.io/finalizer"]]'
}

# the documented way (docs/install.md, "Stuck PropertyOverrides"): a merge patch, the stored
# deletionTimestamp in the object the webhook sees
stuck by-merge
kubectl patch propertyoverride by-merge --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || bad "by-merge: patch"
eventually "by-merge: gone once its finalizer was removed by hand (merge patch)" 20 "" kubectl get propertyoverride by-merge -o name

# a PUT of the object without deletionTimestamp and without the finalizer
stuck by-put
kubectl get propertyoverride by-put -o json |
  jq 'del(.metadata.finalizers, .metadata.deletionTimestamp, .metadata.deletionGracePeriodSeconds, .status)' |
  kubectl replace -f - >/dev/null 2>"$e2e_work/by-put.err" || bad "by-put: replace"
check "by-put: the removal is not answered with 'was kept' ($(head -c 200 "$e2e_work/by-put.err"))" \
  sh -c "! grep -q 'was kept' '$e2e_work/by-put.err'"
eventually "by-put: gone once its finalizer was removed by hand (PUT)" 20 "" kubectl get propertyoverride by-put -o name

# a merge patch that also nulls deletionTimestamp (the server keeps it all the same)
stuck by-null
kubectl patch propertyoverride by-null --type=merge -p '{"metadata":{"finalizers":null,"deletionTimestamp":null}}' >/dev/null 2>&1 ||
  bad "by-null: patch"
check "nobody took the lease (the test's premise)" \
  test "$(kubectl get lease -n default propertyoverride-controller -o jsonpath='{.spec.holderIdentity}')" = elsewhere
eventually "by-null: gone once its finalizer was removed by hand (merge patch nulling deletionTimestamp)" 20 "" \
  kubectl get propertyoverride by-null -o name
finish
