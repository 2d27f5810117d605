#!/usr/bin/env bash
# The controller under exactly deploy/'s RBAC (a real ServiceAccount token, no system:masters) on
# the real kube-apiserver, while a PropertyOverride's Programmed reason flaps (Overlapping <->
# Programmed, as another team's PropertyOverride comes and goes). The Event recorder turns the
# second sighting of an Event it posted into a series update: a merge PATCH of the Event
# (controller/app/src/recorder.c, send), which deploy/base/rbac.yaml once did not allow (only
# `create` on events): every repeat was refused 403 and the Event's count lost, counted only in
# propertyoverride_events_total{result="failed"}. Other suites repeat an Event only by timing, so
# the audit check (lc_audit_rbac) could miss it; this one always does.
#   t_rbac_events.sh BUILD_DIR        (PO_APISERVER=real only)
. "$(dirname "$0")/lib.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real API server only"; exit 77; }
lc_start "$build" "$e2e_work" || exit 1

# deploy/'s ServiceAccount and RBAC, as `kubectl apply -k deploy/` creates them.
kubectl create namespace propertyoverride-system >/dev/null
kubectl -n propertyoverride-system create serviceaccount propertyoverride-controller >/dev/null
kubectl apply -f "$top/deploy/base/rbac.yaml" >/dev/null || { bad "applying deploy/base/rbac.yaml"; finish; exit 1; }
sa_token=$(kubectl -n propertyoverride-system create token propertyoverride-controller --duration 1h) ||
  { bad "kubectl create token"; finish; exit 1; }
sa_kubeconfig=$e2e_work/sa.kubeconfig
kubectl config view --raw --minify -o json |
  jq --arg t "$sa_token" '.users[0].user = {token: $t} | .contexts[0].context.namespace = "propertyoverride-system"' >"$sa_kubeconfig"
KUBECONFIG=$sa_kubeconfig lc_controller --leader-election-namespace propertyoverride-system --istio off --envoy-gateway off ||
  { bad "the controller under deploy/'s RBAC did not become ready"; finish; exit 1; }

kubectl apply -f - >/dev/null <<'EOF'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: checkout-a}
spec:
  targetRef: {name: checkout}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: 50
EOF
eventually "a: Programmed" 30 "Programmed" cond checkout-a Programmed reason
z() {
  kubectl "$1" -f - >/dev/null <<'EOF'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: checkout-z}
spec:
  targetRef: {name: checkout}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection
      value: {consecutive_5xx: 7}
EOF
}
# Each state held past the recorder's 1 s hold, so each Event is posted before the next.
for round in 1 2; do
  z apply
  eventually "round $round: a Overlapping (z came)" 30 "Overlapping" cond checkout-a Programmed reason
  sleep 3
  z delete
  eventually "round $round: a Programmed (z went)" 30 "Programmed" cond checkout-a Programmed reason
  sleep 3
done
# The recorder sends a repeat after its hold: wait for it to be sent or refused (a busy machine
# sends late), then judge.
for ((i = 0; i < 300; i++)); do
  [ "$(metric 'propertyoverride_events_total{result="patched"}')" != 0 ] && break
  [ "$(metric 'propertyoverride_events_total{result="failed"}')" != 0 ] && break
  sleep 0.1
done
patched=$(metric 'propertyoverride_events_total{result="patched"}')
failed=$(metric 'propertyoverride_events_total{result="failed"}')
posted=$(metric 'propertyoverride_events_total{result="posted"}')
echo "events: posted $posted, patched $patched, failed $failed"
check "a repeated Event was sent as a series update, and none failed (posted $posted, patched $patched, failed $failed)" \
  sh -c "[ '$failed' = 0 ] && [ '$patched' != 0 ]"
# The API server's own word: no request of the controller was refused.
refused=$(lc_audit_refused "$e2e_work")
check "the API server refused no request of the controller under deploy/'s RBAC${refused:+: $refused}" test -z "$refused"
count=$(kubectl get events -o json | jq '[.items[] | select(.involvedObject.name == "checkout-a" and .reason == "Overlapping")] | .[0].count // 0')
check "the Overlapping Event on checkout-a counts both sightings (count $count)" test "$count" = 2
finish
