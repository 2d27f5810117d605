#!/usr/bin/env bash
# A cold restart at scale (issue 26): PropertyOverrides programmed, the controller stopped and
# started again with its lists slowed down (--kube-api-qps 0.5, burst 1, pages of 500: every list
# page waits for a token) so that its caches take longer to sync than the 10 s after which the
# workers used to start anyway. Asserted: no worker starts before every cache has synced (none of
# the reconcile gate's requeues, no retry, the wait long enough to have mattered), no requeue
# storm (one reconcile per target), and zero writes: nothing changed while it was down.
. "$(dirname "$0")/lib.sh"
build=$1
count=${PO_COLDSTART_COUNT:-2000} targets=${PO_COLDSTART_TARGETS:-400}
lc_start "$build" "$e2e_work" --compaction-window 500000 || exit 1
# No leader election: no lease writes, so every write counted is the reconciles'.
flags=(--workers 4 --log-level info --leader-elect=false)
lc_controller "${flags[@]}" --kube-api-qps 2000 --kube-api-burst 4000 || exit 1
load() { /usr/bin/python3 "$top/tests/e2e/load.py" "$@" --url "$LC_URL" --token "$(lc_token)" --ca "$LC_WORK/tls/ca.crt" --count "$count" --targets "$targets"; }
load create || { bad "creating the PropertyOverrides"; finish; exit 1; }
if load wait --timeout 300; then ok "converged: $count PropertyOverrides in $targets targets"; else bad "did not converge"; finish; exit 1; fi

old=$LC_CONTROLLER_PID
kill -TERM "$old"
for ((i = 0; i < 400; i++)); do kill -0 "$old" 2>/dev/null || break; sleep 0.05; done
check "the old controller exited" sh -c "! kill -0 $old 2>/dev/null"
mark=$(wc -l <"$LC_WORK/controller.log")
t0=$SECONDS
LC_READY_TIMEOUT=120 lc_controller "${flags[@]}" --kube-api-qps 0.5 --kube-api-burst 1 --kube-list-page-size 500 || { bad "the new controller did not become ready"; finish; exit 1; }
echo "     ready after $((SECONDS - t0)) s with its lists slowed down"
started() { metric propertyoverride_workers_start_time_seconds | awk '{print ($1 > 0) ? "yes" : "no"}'; }
eventually "the workers started" 120 yes started
if load wait --timeout 120; then ok "still converged"; else bad "not converged after the restart"; fi
# Settled: the reconciles of every enqueued key are done (the workqueue empty for 3 s).
# The sum of a family's samples whose line matches a pattern (0 when none).
msum() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk -v re="$1" '$0 ~ re {n += $NF} END {printf "%d", n}'; }
depth_zero() { [ "$(msum '^workqueue_depth[{]')" = 0 ]; }
# The restart's reconciles (one a target, most of them no-ops) may still run when the targets
# already read as converged: a slow build (the ASan stage) takes seconds for 400. So first until
# the queue is empty, then that it stays so; the counts below are read after.
drained() {
  local end=$((SECONDS + 120))
  until depth_zero && holds 3 depth_zero; do [ "$SECONDS" -ge "$end" ] && return 1; sleep 0.5; done
}
check "the workqueue drained (within 120 s) and stayed empty for 3 s" drained
wait_s=$(metric propertyoverride_cache_sync_wait_seconds)
echo "     workers waited $wait_s s for the caches"
# Below 10 s this run would not tell the old bounded wait from the new one.
check "the caches took longer than the old 10 s bound ($wait_s s)" awk -v w="$wait_s" 'BEGIN { exit !(w > 10) }'
early=$(tail -n +"$((mark + 1))" "$LC_WORK/controller.log" | grep -c 'before the caches synced')
check "no worker started before the caches synced (the log says none did)" test "$early" = 0
requeues=$(msum '^controller_runtime_reconcile_total[{].*result="requeue(_after)?"')
retries=$(msum '^workqueue_retries_total[{]')
reconciles=$(msum '^controller_runtime_reconcile_total[{]')
writes=$(msum '^rest_client_requests_total[{].*method="(POST|PUT|PATCH|DELETE)"')
echo "     after the restart: $reconciles reconciles, $requeues requeues, $retries retries, $writes writes"
check "no requeue (the reconcile gate never refused)" test "$requeues" = 0
check "no retry" test "$retries" = 0
# Every key is a target's, and each is queued once before the workers start (the initial lists'
# events queue nothing, the start's walk names a target by its PropertyOverrides and by its own
# informer into a queue no worker takes from yet): one reconcile per target, none twice.
check "no requeue storm: one reconcile per target ($reconciles for $targets)" test "$reconciles" -le "$targets"
check "zero writes after the restart" test "$writes" = 0
check "zero writes counted by the reconciles" test "$(msum '^propertyoverride_writes_total[{]')" = 0

# A stop while the workers wait for the caches: the waiting thread is woken and joined, and the
# process exits 0 (past --graceful-shutdown-timeout the manager would exit 1). The informers stop
# first; a stop ends their waits for the rate limiter (kube_integration_rest's
# test_informer_stop_in_rate_limit), which used to be waited out, seconds per informer at this
# QPS: the timeout stays at 120 s so that this run tells the gate's stop, not that one.
kill -TERM "$LC_CONTROLLER_PID"
for ((i = 0; i < 400; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
mark=$(wc -l <"$LC_WORK/controller.log")
LC_READY_TIMEOUT=2 lc_controller "${flags[@]}" --kube-api-qps 0.5 --kube-api-burst 1 --kube-list-page-size 500 --graceful-shutdown-timeout 120 2>/dev/null # not ready yet: expected
waiting() { metric propertyoverride_workers_start_time_seconds; }
eventually "started again, its workers waiting for the caches" 20 0 waiting
pid=$LC_CONTROLLER_PID
kill -TERM "$pid"
for ((i = 0; i < 2600; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
check "a SIGTERM while the workers wait: the process exited" sh -c "! kill -0 $pid 2>/dev/null"
log=$(tail -n +"$((mark + 1))" "$LC_WORK/controller.log")
contains "... with code 0" "$log" '"msg":"stopped","exitCode":0'
check "... its workers never started" test "$(grep -c 'reconciling as leader' <<<"$log")" = 0
finish
