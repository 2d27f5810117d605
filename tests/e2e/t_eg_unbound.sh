#!/usr/bin/env bash
# adv3 (issue 12): an EnvoyPatchPolicy is created, then bound (its propertyoverride.io/created
# annotation set to the uid the create returned) by a second write. When that second write fails
# (here: a webhook at a dead URL refuses every UPDATE of EnvoyPatchPolicies; in life: a conflict
# with Envoy Gateway's first status write, then a crash, a SIGKILL or a leader change before the
# retry) only the process that created it remembers it is its own. A restarted controller sees
# an unbound policy carrying our owner-uid and treats it as a look-alike "this controller did not
# create": the PropertyOverride is never programmed again, and deleting it leaves the policy.
# Fixed: the reconcile whose binding write failed records the created object in the
# PropertyOverride's status (status.created: namespace, name, uid); a restarted controller binds
# an unbound policy only when its uid is that record's. The kill waits for that record (a crash
# before the status write is the one window left, docs/crd.md).
. "$(dirname "$0")/lib.sh"
PO_NS=shop PO_NAME=unused
. "$(dirname "$0")/move_lib.sh"
build=$1
lc_start "$build" "$e2e_work" --fake-envoy-gateway || exit 1
eg_crds || exit 1
kubectl create namespace shop >/dev/null
lc_controller --envoy-gateway on || exit 1
po=payments-outlier-detection
epp=propertyoverride-$po
reason() { kubectl -n shop get propertyoverride "$po" -o jsonpath='{.status.conditions[?(@.type=="Programmed")].reason}' 2>/dev/null; }

refuse UPDATE envoypatchpolicies gateway.envoyproxy.io
kubectl apply -f examples/envoy-gateway/backend-outlier-detection.yaml >/dev/null
eventually "created, the binding write refused" 30 "$epp" kubectl -n shop get envoypatchpolicy "$epp" -o jsonpath='{.metadata.name}'
check "unbound: no created annotation" test -z "$(kubectl -n shop get envoypatchpolicy "$epp" -o json | jq -r '.metadata.annotations["propertyoverride.io/created"] // empty')"
eventually "the unbound create recorded in the status" 30 "$(kubectl -n shop get envoypatchpolicy "$epp" -o jsonpath='{.metadata.uid}')" \
  kubectl -n shop get propertyoverride "$po" -o jsonpath='{.status.created.uid}'
kill -KILL "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
allow
lc_controller --envoy-gateway on || exit 1
eventually "after the restart the policy is bound to its own uid" 60 \
  "$(kubectl -n shop get envoypatchpolicy "$epp" -o jsonpath='{.metadata.uid}')" \
  sh -c "kubectl -n shop get envoypatchpolicy $epp -o json | jq -r '.metadata.annotations[\"propertyoverride.io/created\"] // empty'"
eventually "after the restart: Programmed" 60 "Programmed" reason
check "delete: kubectl delete returns" kubectl -n shop delete propertyoverride "$po" --timeout=60s
check "delete: the policy is gone" test -z "$(kubectl -n shop get envoypatchpolicy "$epp" -o name 2>/dev/null)"
finish
