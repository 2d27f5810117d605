#!/usr/bin/env bash
# adv27c: "Deleting a PropertyOverride still waits until its entries are cleaned up" (docs/gitops.md,
# "The finalizer"), through a client-side `kubectl apply` (or Argo CD's, the same three-way JSON
# merge patch for a custom resource) of a git version whose finalizers CHANGED rather than
# vanished. A JSON merge patch replaces a list whole, so `finalizers: [example.com/other]` (was
# [example.com/keep, example.com/other]) or `finalizers: []` (was [example.com/keep]) takes ours
# as surely as the `finalizers: null` that 30ed1954 guards against. apply_stops_listing()'s
# client-side test asks only whether the new last-applied annotation lists no finalizers, so
# these applies count as hand removals and ours goes before the cleanup: "b" is gone at once,
# "a" as soon as example.com/other is released, both with their entry left in web for good
# (after a controller restart; the cleanup is frozen as in t_adv27b_finalizer_csa_deleting.sh).
# Real kube-apiserver only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
fin_start "$build"
fin_po a "finalizers: [example.com/keep, example.com/other]" | kubectl apply -f - >/dev/null || bad "a: create"
fin_po b "finalizers: [example.com/keep]" 11 | kubectl apply -f - >/dev/null || bad "b: create"
eventually "a: ours after the writer's" 30 '["example.com/keep","example.com/other","propertyoverride.io/finalizer"]' fin_finalizers a
eventually "b: ours after the writer's" 30 '["example.com/keep","propertyoverride.io/finalizer"]' fin_finalizers b
eventually "a and b live in web" 30 "a@1 b@1" entries servicedefaults web
fin_freeze
kubectl delete propertyoverride a b --wait=false >/dev/null
# the pipeline applies the git versions (client-side): a's list changed, b's is now empty
fin_po a "finalizers: [example.com/other]" | kubectl apply -f - >/dev/null 2>&1 || bad "a: client-side apply"
fin_po b "finalizers: []" 11 | kubectl apply -f - >/dev/null 2>&1 || bad "b: client-side apply"
sleep 1
got=$(fin_finalizers a)
check "a: still waiting for its cleanup after the client-side apply (got '${got:-gone}')" \
  test "$got" = '["example.com/other","propertyoverride.io/finalizer"]'
got=$(fin_finalizers b)
check "b: still waiting for its cleanup after the client-side apply of finalizers: [] (got '${got:-gone}')" \
  test "$got" = '["propertyoverride.io/finalizer"]'
fin_restart_unfreeze
# example.com/other's owner releases it (by value, as a finalizer's owner does)
kubectl get propertyoverride a -o json | jq '.metadata.finalizers -= ["example.com/other"]' |
  kubectl replace -f - >/dev/null 2>&1
eventually "a and b: gone once their entries are removed" 60 "" kubectl get propertyoverride a b -o name
eventually "web: a's and b's entries removed (none left behind for good)" 60 "" entries servicedefaults web
finish
