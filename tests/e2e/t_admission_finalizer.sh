#!/usr/bin/env bash
# The finalizer at admission (deploy/'s overrides.mutate.propertyoverride.io, controller/webhook
# README): a new PropertyOverride gets the controller's finalizer in its create, as the API server
# stores it, and the controller then writes no finalizer PATCH of its own. Asked of the API
# server itself (on the real kube-apiserver the JSONPatch and the field ownership are its own):
# - the create's answer already holds the finalizer, after any the writer listed;
# - a later apply of the git version keeps it: client-side, server-side (no manager owns it), and
#   a server-side apply whose manifest listed a finalizer of its own and no longer does (the real
#   kube-apiserver then drops the whole list, ours too: the webhook keeps it in that update), and
#   a PUT without it;
# - the controller programs them with no PATCH of a PropertyOverride (writes_total), and the
#   deletion waits for its cleanup as before;
# - what the controller would not claim gets nothing: one the tenancy policy refuses (the
#   validating webhook off, as when a user runs without it), deleted at once, never stuck;
# - the webhook down (failurePolicy Ignore): created without it, the controller adds it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
fin_start "$build"
override() { # name [finalizers as a flow list] [value] [target kind]
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata:\n  name: %s\n' "$1"
  [ -n "${2:-}" ] && printf '  finalizers: %s\n' "$2"
  printf 'spec:\n  targetRef: {kind: %s, name: web}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' \
    "${4:-ServiceDefaults}" "${3:-10}"
}
finalizers() { kubectl get propertyoverride "$1" -o json | jq -c '.metadata.finalizers // []'; }
po_writes() { metric 'propertyoverride_writes_total{resource="propertyoverrides"}'; }

# ---- the create's answer holds it ----
override a >"$e2e_work/a.yaml"
check "a: the create's answer holds the finalizer" \
  test "$(kubectl create -f "$e2e_work/a.yaml" -o json | jq -c '.metadata.finalizers')" = '["propertyoverride.io/finalizer"]'
override b '[example.com/keep]' 20 >"$e2e_work/b.yaml"
check "b: the writer's finalizer first, ours appended" \
  test "$(kubectl apply --server-side --field-manager=flux -f "$e2e_work/b.yaml" -o json | jq -c '.metadata.finalizers')" = \
  '["example.com/keep","propertyoverride.io/finalizer"]'
# listed by the writer: nothing to add (the webhook is not even called: matchConditions)
override c '[propertyoverride.io/finalizer]' 30 >"$e2e_work/c.yaml"
check "c: a finalizer the writer listed is not added again" \
  test "$(kubectl create -f "$e2e_work/c.yaml" -o json | jq -c '.metadata.finalizers')" = '["propertyoverride.io/finalizer"]'
check "programmed" kubectl wait --for=condition=Programmed propertyoverrides a b c --timeout=60s
eventually "web holds the three entries" 30 "a@1 b@1 c@1" entries servicedefaults web
check "the webhook gave two PropertyOverrides the finalizer (metric)" \
  test "$(metric 'propertyoverride_webhook_mutations_total{outcome="finalized"}')" = 2
check "the controller wrote no PropertyOverride (only statuses)" test "$(po_writes)" = 0

# ---- applies of the git version keep it ----
# The server-side apply managers that own our finalizer (fieldsV1 v:"..." entries: the real
# server's; the local one keeps a list whole, tests/apiserver/README.md).
appliers() {
  kubectl get propertyoverride "$1" -o json --show-managed-fields |
    jq -c '[.metadata.managedFields[]? | select(.operation == "Apply" and .fieldsV1["f:metadata"]["f:finalizers"]["v:\"propertyoverride.io/finalizer\""] != null) | .manager]'
}
if [ "$LC_KIND" = real ]; then
  got=$(appliers b)
  check "b: the creating apply owns its own finalizer, not the one admission added ($got)" test "$got" = '[]'
fi
sed 's/value: 10/value: 11/' "$e2e_work/a.yaml" >"$e2e_work/a2.yaml"
kubectl apply --server-side --force-conflicts -f "$e2e_work/a2.yaml" >/dev/null || bad "a: server-side apply"
kubectl apply --server-side --field-manager=flux -f "$e2e_work/b.yaml" >/dev/null || bad "b: server-side apply again"
# flux's apply of b's manifest without its own finalizer: the real kube-apiserver drops the whole
# list, ours too, though flux never owned ours; the webhook keeps it, and says so
sed 's/  finalizers: .*//' "$e2e_work/b.yaml" >"$e2e_work/b2.yaml"
kubectl apply --server-side --field-manager=flux -f "$e2e_work/b2.yaml" >/dev/null 2>"$e2e_work/b2.err" ||
  bad "b: server-side apply without finalizers"
contains "b: the apply is told why the finalizer stays" "$(cat "$e2e_work/b2.err")" \
  "metadata.finalizers: propertyoverride.io/finalizer was kept"
kubectl apply -f "$e2e_work/a2.yaml" >/dev/null 2>&1 || bad "a: client-side apply"
kubectl get propertyoverride c -o json | jq 'del(.metadata.finalizers)' | kubectl replace -f - >/dev/null 2>&1 ||
  bad "c: replace without finalizers"
check "a: kept through both applies" test "$(finalizers a)" = '["propertyoverride.io/finalizer"]'
got=$(finalizers b)
check "b: the manager's own finalizer dropped with its apply, ours kept ($got)" test "$got" = '["propertyoverride.io/finalizer"]'
check "c: kept through a replace (PUT) without it" test "$(finalizers c)" = '["propertyoverride.io/finalizer"]'
kubectl apply --server-side --field-manager=flux -f "$e2e_work/b2.yaml" >/dev/null 2>"$e2e_work/b2.err" || bad "b: apply again"
check "b: the next apply is not even sent (nobody owns it now)" test ! -s "$e2e_work/b2.err"
if [ "$LC_KIND" = real ]; then
  got=$(appliers b)
  check "b: still no apply owns it ($got)" test "$got" = '[]'
fi
# b2's apply and c's replace; the local server's server-side apply owns a list whole
# (tests/apiserver/README.md), so b's apply with its own finalizer listed replaced the list there
# too
want=2
[ "$LC_KIND" = local ] && want=3
got=$(metric 'propertyoverride_webhook_mutations_total{outcome="finalizer-kept"}')
check "the webhook kept it $want times (metric: $got)" test "$got" = "$want"
eventually "a's new generation programmed" 30 "a@2 b@1 c@1" entries servicedefaults web
got=$(po_writes)
check "still no PropertyOverride write ($got)" test "$got" = 0

# ---- deletion waits for the cleanup, as before ----
kubectl delete propertyoverride a --wait=true --timeout=30s >/dev/null || bad "a: deletion did not complete"
check "a: gone" test -z "$(kubectl get propertyoverride a -o name 2>/dev/null)"
check "a: its entry removed before it went" test "$(entries servicedefaults web)" = "b@1 c@1"

# ---- what the controller does not claim gets nothing (validating webhook off) ----
lc_unregister_webhook
kubectl create namespace team >/dev/null
override mesh '' 10 ProxyDefaults | sed 's/name: web/name: global/' >"$e2e_work/mesh.yaml"
check "a ProxyDefaults PropertyOverride from a namespace the policy refuses: created without the finalizer" \
  test "$(kubectl create -n team -f "$e2e_work/mesh.yaml" -o json | jq -c '.metadata.finalizers // []')" = '[]'
eventually "the refused one says so" 30 TargetNotAllowed cond mesh Accepted reason team
check "the refused one is not stuck: deleted at once" kubectl delete -n team propertyoverride mesh --wait=true --timeout=10s

# ---- the webhook down (the validating one still off: it fails closed): created without it, the
# controller adds it ----
kill "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
override d '' 40 >"$e2e_work/d.yaml"
check "webhook down: created without the finalizer (failurePolicy Ignore)" \
  test "$(kubectl create -f "$e2e_work/d.yaml" -o json | jq -c '.metadata.finalizers // []')" = '[]'
lc_controller || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1
eventually "webhook down: the controller added it" 30 '["propertyoverride.io/finalizer"]' finalizers d
eventually "d programmed" 30 "b@1 c@1 d@1" entries servicedefaults web
check "the controller wrote that one finalizer" test "$(po_writes)" = 1
finish
