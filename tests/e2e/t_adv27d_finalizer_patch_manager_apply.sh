#!/usr/bin/env bash
# adv27d: "Every other removal from a PropertyOverride being deleted is the hand removal ... and is
# never changed: kubectl patch --type=merge -p '{"metadata":{"finalizers":null}}'" (docs/gitops.md,
# "The finalizer"). 454e1cc3 dropped the Apply entry's time check on the ground that the API server
# leaves another manager's Apply entry as it was under someone else's patch. It does not: an
# Update's removed fields are taken from every manager's set (structured-merge-diff), and an entry
# is dropped only once its set is empty. t_adv27b_finalizer_forged_apply's entries own finalizers
# only, so they vanish (no entry in the incoming object: no apply). An Apply entry for
# kubectl-patch that owns finalizers and anything else loses f:finalizers under the admin's
# `kubectl patch` (field manager kubectl-patch) and stays: "listed finalizers, lists none" - the
# webhook takes the hand removal for an apply and puts ours back, with a warning naming the very
# command that was just undone. The tenant needs no forgery:
#  a: `kubectl apply --server-side --field-manager=kubectl-patch` of its own manifest listing a
#     finalizer of its own (a real Apply entry owning f:finalizers and f:spec);
#  f: managedFields written by the tenant, as in t_adv27b_finalizer_forged_apply.sh, with f:spec too.
# The deletion is stuck (cleanup frozen as in adv27c); the documented way out does not work.
# Real kube-apiserver only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
fin_start "$build"
fin_po a "finalizers: [example.com/tenant]" | kubectl apply --server-side --field-manager=kubectl-patch -f - >/dev/null ||
  bad "a: the tenant's apply as kubectl-patch"
fin_po f "" 11 | kubectl create -f - >/dev/null || bad "f: create"
eventually "a: ours after the tenant's" 30 '["example.com/tenant","propertyoverride.io/finalizer"]' fin_finalizers a
eventually "a and f live in web" 30 "a@1 f@1" entries servicedefaults web
kubectl get propertyoverride f -o json --show-managed-fields |
  jq '.metadata.managedFields += [{"manager":"kubectl-patch","operation":"Apply","apiVersion":"propertyoverride.io/v1alpha1",
        "fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"propertyoverride.io/finalizer\"":{}}},
        "f:spec":{"f:targetRef":{}}}}]' |
  kubectl replace -f - >/dev/null || bad "f: the tenant's update of its managedFields"
fin_freeze
kubectl delete propertyoverride a f --wait=false >/dev/null
for n in a f; do
  check "$n: its deletion is stuck (waits for a cleanup that cannot happen)" \
    test "$(kubectl get propertyoverride $n -o json | jq -c '.metadata.deletionTimestamp != null')" = true
done
for n in a f; do
  kubectl patch propertyoverride $n --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>"$e2e_work/$n.err" ||
    bad "$n: kubectl patch"
  eventually "$n: the cluster admin's documented hand removal is left alone: deleted (finalizers '$(fin_finalizers $n)'; $(tr '\n' ' ' <"$e2e_work/$n.err"))" \
    10 "" kubectl get propertyoverride $n -o name
done
fin_unfreeze
finish
