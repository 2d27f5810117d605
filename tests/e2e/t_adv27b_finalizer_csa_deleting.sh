#!/usr/bin/env bash
# adv27b: "Deleting a PropertyOverride still waits until its entries are cleaned up" (docs/gitops.md,
# "The finalizer"), through a client-side `kubectl apply` of the git version. t_adv27_finalizer_
# ssa_deleting.sh's case, client-side: a manifest that listed a finalizer of its own
# (`finalizers: [example.com/keep]`, applied with plain `kubectl apply`: the
# last-applied-configuration annotation remembers it) and no longer does is sent as a JSON merge
# patch `{"metadata":{"finalizers":null}}` (kubectl's three-way patch of a custom resource), which
# replaces the whole list, ours too. On a live object the webhook keeps ours (an update dropping
# it); on one being deleted it leaves every write but a server-side apply alone, so this apply,
# which is no hand removal (manager kubectl-client-side-apply, the annotation listing finalizers),
# ends the deletion before the cleanup: the PropertyOverride is gone while its entry is still in
# the ServiceDefaults. A controller that restarts before the cleanup ran then finds an entry whose
# PropertyOverride no longer exists (someone else's to it) and never removes it. Not new with
# e3b2f1f0 (the merge patch replaced the controller's own finalizer too), but the same loss the
# server-side case was fixed for. The cleanup is held back by a ValidatingAdmissionPolicy refusing
# ServiceDefaults updates, as in t_adv27_finalizer_ssa_deleting.sh. Real kube-apiserver only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
fin_start "$build"
fin_po a "finalizers: [example.com/keep]" >"$e2e_work/a.yaml"
sed '/finalizers:/d' "$e2e_work/a.yaml" >"$e2e_work/a2.yaml"
finalizers() { kubectl get propertyoverride a -o json 2>/dev/null | jq -c '.metadata.finalizers'; }
kubectl apply -f "$e2e_work/a.yaml" >/dev/null || bad "a: client-side apply (create)"
eventually "a: ours after the writer's" 30 '["example.com/keep","propertyoverride.io/finalizer"]' finalizers
eventually "a live in web" 30 "a@1" entries servicedefaults web

# the cleanup cannot happen for now: ServiceDefaults updates are refused
fin_freeze

kubectl delete propertyoverride a --wait=false >/dev/null
check "a: its deletion waits for the cleanup" \
  test "$(kubectl get propertyoverride a -o json | jq -c '.metadata.deletionTimestamp != null')" = true
# the pipeline applies the git version (client-side), which no longer lists its own finalizer
kubectl apply -f "$e2e_work/a2.yaml" >/dev/null 2>&1 || bad "a: client-side apply of a2"
sleep 1
got=$(finalizers)
check "a: still waiting for its cleanup after the client-side apply (got '${got:-gone}', entry in web: '$(entries servicedefaults web)')" \
  test "$got" = '["propertyoverride.io/finalizer"]'

# a controller restart before the cleanup could run
fin_restart_unfreeze
eventually "a: gone once its entry is removed" 60 "" kubectl get propertyoverride a -o name
eventually "web: a's entry removed (none left behind for good)" 60 "" entries servicedefaults web
finish
