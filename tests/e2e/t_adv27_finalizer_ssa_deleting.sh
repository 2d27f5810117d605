#!/usr/bin/env bash
# adv27: "Deleting a PropertyOverride still waits until its entries are cleaned up" (docs/gitops.md,
# "The finalizer"). A server-side apply that created a PropertyOverride listing a finalizer of its
# own (a manifest with `finalizers: [example.com/keep]`, as t_admission_finalizer.sh's b) owns the
# finalizer admission added (the webhook's own account of the real kube-apiserver), and its apply
# of a git version without `finalizers` removes it. The webhook keeps it on a live object, but not
# on one being deleted; so such an apply while the deletion waits for the cleanup removes our
# finalizer and the PropertyOverride is gone before its entry left the ServiceDefaults. Before
# e3b2f1f0 the controller's own finalizer PATCH made the controller its owner, and the same apply
# left it: the deletion waited (PO_ADV27_MUTATING=off runs this without the mutating webhook:
# passes). The cleanup is held back by a ValidatingAdmissionPolicy refusing ServiceDefaults
# updates, as a consul-k8s webhook outage or any refusal would. Real kube-apiserver only (its
# server-side apply and admission policies are the oracle).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
fin_start "$build" "${PO_ADV27_MUTATING:-on}"
fin_po a "finalizers: [example.com/keep]" >"$e2e_work/a.yaml"
sed '/finalizers:/d' "$e2e_work/a.yaml" >"$e2e_work/a2.yaml"
kubectl apply --server-side --field-manager=flux -f "$e2e_work/a.yaml" >/dev/null || bad "a: server-side apply (create)"
eventually "a: ours after the writer's" 30 '["example.com/keep","propertyoverride.io/finalizer"]' \
  sh -c "kubectl get propertyoverride a -o json | jq -c .metadata.finalizers"
eventually "a live in web" 30 "a@1" entries servicedefaults web

# the cleanup cannot happen for now: ServiceDefaults updates are refused
fin_freeze

kubectl delete propertyoverride a --wait=false >/dev/null
check "a: its deletion waits for the cleanup" \
  test "$(kubectl get propertyoverride a -o json | jq -c '.metadata.deletionTimestamp != null')" = true
# the GitOps tool applies the git version, which no longer lists its own finalizer
kubectl apply --server-side --field-manager=flux -f "$e2e_work/a2.yaml" >/dev/null 2>&1 || bad "a: server-side apply of a2"
sleep 1
check "a: still waiting for its cleanup after the apply (not gone with its entry still in web)" \
  test "$(kubectl get propertyoverride a -o json 2>/dev/null | jq -c '.metadata.finalizers')" = '["propertyoverride.io/finalizer"]'
check "web still holds a's entry (the cleanup has not run)" test "$(entries servicedefaults web)" = "a@1"

fin_unfreeze
eventually "a: gone once its entry is removed" 60 "" kubectl get propertyoverride a -o name
eventually "web: a's entry removed" 60 "" entries servicedefaults web
finish
