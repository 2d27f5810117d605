#!/usr/bin/env bash
# adv27c: "Deleting a PropertyOverride still waits until its entries are cleaned up" (docs/gitops.md,
# "The finalizer"), through server-side applies that 30ed1954's apply_stops_listing() misses
# because it asks the manager's Apply entry to have "moved on" by a changed `time`, which the
# API server writes to the second:
#  g: `kubectl apply --server-side --field-manager=git` of a git version (spec changed, still
#     listing example.com/keep) and, within the same second, the next git version that no longer
#     lists finalizers (a pipeline applying two commits back to back): both entries say the same
#     second, so the second apply counts as a hand removal and takes the whole list, ours too;
#  e: plain `kubectl apply --server-side` of an object so far applied client-side (the migration
#     kubectl does: it first rewrites the kubectl-client-side-apply entry into a "kubectl" Apply
#     entry listing finalizers, then applies, within the same second), of a version that no longer
#     lists finalizers. The last-applied annotation is not changed by it, so the client-side test
#     does not see it either.
# Both end the deletion before the cleanup; after a controller restart the entries stay in web
# for good. Cleanup frozen as in t_adv27b_finalizer_csa_deleting.sh. Real kube-apiserver only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
fin_start "$build"
fin_po g "finalizers: [example.com/keep]" | kubectl apply --server-side --field-manager=git -f - >/dev/null || bad "g: create"
fin_po e "finalizers: [example.com/keep]" 11 | kubectl apply -f - >/dev/null || bad "e: create"
eventually "g: ours after the writer's" 30 '["example.com/keep","propertyoverride.io/finalizer"]' fin_finalizers g
eventually "e: ours after the writer's" 30 '["example.com/keep","propertyoverride.io/finalizer"]' fin_finalizers e
eventually "e and g live in web" 30 "e@1 g@1" entries servicedefaults web
fin_freeze
kubectl delete propertyoverride g e --wait=false >/dev/null
sleep 1.2 # the next applies are in a later second than the creations

fin_po g "finalizers: [example.com/keep]" 12 >"$e2e_work/g1.yaml"
fin_po g "" 12 >"$e2e_work/g2.yaml"
for try in 1 2 3; do # two applies within one wall-clock second (they take ~0.3 s)
  /usr/bin/python3 -c 'import time; time.sleep(1 - time.time() % 1 + 0.02)'
  s0=$(date +%s)
  kubectl apply --server-side --field-manager=git -f "$e2e_work/g1.yaml" >/dev/null 2>&1 || bad "g: apply g1"
  kubectl apply --server-side --field-manager=git -f "$e2e_work/g2.yaml" >/dev/null 2>&1 || bad "g: apply g2"
  [ "$(date +%s)" = "$s0" ] && break
  echo "note: the two applies straddled a second; g's result is not the same-second case (try $try)"
done
got=$(fin_finalizers g)
check "g: still waiting for its cleanup after two server-side applies in one second (got '${got:-gone}')" \
  test "$got" = '["propertyoverride.io/finalizer"]'

fin_po e "" 11 | kubectl apply --server-side -f - >/dev/null 2>&1 || bad "e: kubectl apply --server-side"
got=$(fin_finalizers e)
check "e: still waiting for its cleanup after kubectl apply --server-side migrated it from client-side apply (got '${got:-gone}')" \
  test "$got" = '["propertyoverride.io/finalizer"]'

fin_restart_unfreeze
eventually "e and g: gone once their entries are removed" 60 "" kubectl get propertyoverride e g -o name
eventually "web: e's and g's entries removed (none left behind for good)" 60 "" entries servicedefaults web
finish
