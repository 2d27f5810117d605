#!/usr/bin/env bash
# Two replicas with leader election: only the leader reconciles, both serve the webhook; the
# leader killed mid-flight (kill -9, no release) is replaced within the lease duration and
# nothing is lost; a clean restart loses nothing either. The never-regress observer watches every
# revision throughout (observer.py): no target deleted, no live entry dropped even for a moment.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
obs_start || exit 1
lc_controller || exit 1
first=$LC_CONTROLLER_PID first_hook=$LC_WEBHOOK_PORT
lc_controller || exit 1
second=$LC_CONTROLLER_PID second_hook=$LC_WEBHOOK_PORT
lc_register_webhook Fail

holder() { kubectl get lease propertyoverride-controller -n default -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
eventually "one replica holds the lease" 10 "yes" sh -c "[ -n \"\$(kubectl get lease propertyoverride-controller -n default -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)\" ] && echo yes"
leader_pid=$(holder | sed 's/.*_//')
case "$leader_pid" in "$first") follower=$second follower_hook=$second_hook ;; "$second") follower=$first follower_hook=$first_hook ;; *) bad "holder '$(holder)' is neither replica"; finish; exit 1 ;; esac
ok "leader is pid $leader_pid"

kubectl apply -f examples/consul/ -f examples/valid/ >/dev/null
check "programmed by the leader" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=30s

# both replicas answer the webhook (the registered one may be either)
out=$(curl -s --cacert "$e2e_work/tls/ca.crt" "https://127.0.0.1:$first_hook/healthz")
contains "the first replica's webhook serves" "$out" "ok"

# kill -9 the leader while changes are in flight
for i in 1 2 3 4 5; do
  kubectl patch propertyoverride api-listener-buffer-limits --type=json \
    -p "[{\"op\":\"replace\",\"path\":\"/spec/patches/0/value\",\"value\":$((16384 * i))}]" >/dev/null 2>&1
done
obs_mark "kill -9 failover"
kill -9 "$leader_pid"
start=$(date +%s.%N)
eventually "the follower takes over" 15 "$follower" sh -c "kubectl get lease propertyoverride-controller -n default -o jsonpath='{.spec.holderIdentity}' | sed 's/.*_//'"
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "     (failover in ${took}s; lease duration 4s)"
# (a Service would route the webhook to the live replica; here the configuration is pointed at it)
LC_WEBHOOK_PORT=$follower_hook lc_register_webhook Fail
gen=$(kubectl get propertyoverride api-listener-buffer-limits -o jsonpath='{.metadata.generation}')
eventually "the last edit before the kill is live" 15 "$gen" \
  sh -c "kubectl get propertyoverride api-listener-buffer-limits -o jsonpath='{.status.programmedGeneration}'"
out=$(kubectl get servicedefaults api -o json)
contains "its value is in the target" "$out" '"Value": 81920'

# a clean restart of the new leader: the lease is released, a new process takes over, nothing changes
obs_mark "SIGTERM restart"
kill -TERM "$follower"
for i in $(seq 1 100); do kill -0 "$follower" 2>/dev/null || break; sleep 0.05; done
check "the leader stopped cleanly" sh -c "! kill -0 $follower 2>/dev/null"
before=$(entries servicedefaults api)
lc_controller || exit 1
lc_register_webhook Fail
eventually "a restarted controller leads" 15 "$LC_CONTROLLER_PID" sh -c "kubectl get lease propertyoverride-controller -n default -o jsonpath='{.spec.holderIdentity}' | sed 's/.*_//'"
sleep 1
check "nothing changed in the target across the restart" test "$(entries servicedefaults api)" = "$before"
obs_mark "after the restart"
kubectl delete propertyoverride api-connect-timeout --wait=true --timeout=20s >/dev/null
eventually "the restarted leader reconciles" 10 "builtin/lua api-billing-db-tcp-keepalive@1 api-listener-buffer-limits@$gen api-payments-outlier-detection@1" entries servicedefaults api
check "observer: no revision lost a live entry or target, none carries an invalid entry" obs_stop
for phase in "kill -9 failover" "SIGTERM restart"; do
  check "observer: $phase: no target DELETED" test "$(obs_figure "$phase" deleted)" = 0
  check "observer: $phase: no live entry dropped" test "$(obs_figure "$phase" dropped_entries)" = 0
done
finish
