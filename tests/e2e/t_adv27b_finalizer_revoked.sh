#!/usr/bin/env bash
# adv27b: the finalizer at admission after the tenancy policy changed. A PropertyOverride the policy
# allowed when it was created has the finalizer and an entry in its target; the operator then
# revokes the permission (here --allow-cross-namespace-from, on a controller restart). The
# reconcile refuses it (Accepted=False TargetNotAllowed) and removes its entry, and when it is
# deleted it still releases the finalizer once the entry is gone (release_finalizer runs for every
# PropertyOverride being deleted, refused or not). The webhook, though, judges an update by
# po_Reconcile_Claims over the current policy: "one the tenancy policy refuses ... is not kept
# one, since nothing would ever remove it" (docs/gitops.md). So while the entry's removal has not
# happened yet (the target's writes refused, as a consul-k8s webhook outage would), a PUT of the
# git version drops the finalizer, the deletion that follows does not wait for the cleanup, and a
# controller that restarts before it ran never removes the entry (its PropertyOverride no longer
# exists: someone else's to it). Before e3b2f1f0 no update kept the finalizer, so this is not
# new; it is the gap in the keeping the webhook now promises. The ServiceDefaults writes are held
# back by a ValidatingAdmissionPolicy. Real kube-apiserver only (admission policies).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_finalizer.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
lc_start "$build" "$e2e_work" || exit 1
lc_controller --allow-cross-namespace-from default || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1
restart() { # controller flags...
  kill "$LC_CONTROLLER_PID"
  wait "$LC_CONTROLLER_PID" 2>/dev/null
  lc_controller "$@" || exit 1
  lc_register_webhook Fail
  e2e_register_mutating || exit 1
}
kubectl create namespace other >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web, namespace: other}
spec: {protocol: http}
YAML
cat >"$e2e_work/x.yaml" <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata:
  name: x
  namespace: default
spec:
  targetRef: {kind: ServiceDefaults, name: web, namespace: other}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: 10
YAML
finalizers() { kubectl get propertyoverride x -o json 2>/dev/null | jq -c '.metadata.finalizers'; }
kubectl create -f "$e2e_work/x.yaml" >/dev/null || bad "x: create"
check "x: the finalizer at its create" test "$(finalizers)" = '["propertyoverride.io/finalizer"]'
eventually "x live in other/web" 30 "x@1" entries servicedefaults web other

# the target's writes are refused for now
fin_freeze other

# the operator revokes the cross-namespace permission
restart
eventually "x: refused now" 30 TargetNotAllowed cond x Accepted reason
check "x: its entry still in other/web (the removal refused for now)" test "$(entries servicedefaults web other)" = "x@1"
# the pipeline's PUT of the git version (no finalizers listed)
kubectl replace -f "$e2e_work/x.yaml" >/dev/null 2>&1 || bad "x: replace"
got=$(finalizers)
check "x: the finalizer kept through the PUT while its entry is live (got '$got')" \
  test "$got" = '["propertyoverride.io/finalizer"]'
kubectl delete propertyoverride x --wait=false >/dev/null 2>&1
sleep 1
check "x: its deletion waits for the cleanup (entry in other/web: '$(entries servicedefaults web other)')" \
  test -n "$(kubectl get propertyoverride x -o name 2>/dev/null)"

# a restart before the cleanup could run, then the target writable again
fin_restart_unfreeze
eventually "x: gone" 60 "" kubectl get propertyoverride x -o name
eventually "other/web: x's entry removed (none left behind for good)" 60 "" entries servicedefaults web other
finish
