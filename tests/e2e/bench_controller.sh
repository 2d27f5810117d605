#!/usr/bin/env bash
# Controller benchmark (not a test): N PropertyOverrides (default 10,000) over 200 targets,
# created as fast as one client can, against the local API server; reports the time until every
# target holds exactly its entries and every status is current, the controller's CPU (in all and
# per PropertyOverride) and its peak RSS.
#   PO_BENCH_CONTROLLER_FLAGS  further controller flags (e.g. --target-batch-window 0 to compare)
#   PO_BENCH_PERF=<file>  also records a perf profile of the controller there (PO_BENCH_PERF_HZ, default
#                         999 samples/s; PO_BENCH_PERF_GRAPH fp or dwarf, default fp)
. "$(dirname "$0")/lib.sh"
build=$1
count=${2:-10000}
lc_start "$build" "$e2e_work" --compaction-window 100000 || exit 1
lc_controller --workers 4 --log-level warn --kube-api-qps ${PO_BENCH_QPS:-2000} --kube-api-burst ${PO_BENCH_BURST:-4000} ${PO_BENCH_CONTROLLER_FLAGS:-} || exit 1
# Other processes on the machine slow the client, which spreads the creates and so changes how
# much the batching window can gather: the load is part of the result.
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "controller: --workers 4 --kube-api-qps ${PO_BENCH_QPS:-2000} --kube-api-burst ${PO_BENCH_BURST:-4000} ${PO_BENCH_CONTROLLER_FLAGS:-}"
perf_pid=
if [ -n "${PO_BENCH_PERF:-}" ]; then
  perf record -q -F ${PO_BENCH_PERF_HZ:-999} --call-graph ${PO_BENCH_PERF_GRAPH:-fp} -o "$PO_BENCH_PERF" -p "$LC_CONTROLLER_PID" >/dev/null 2>&1 &
  perf_pid=$!
fi
token=$(kubectl config view --raw -o jsonpath='{.users[0].user.token}')
/usr/bin/python3 "$(dirname "$0")/chaos.py" --bench --url "$LC_URL" --token "$token" --ca "$e2e_work/tls/ca.crt" \
  --count "$count" --targets 200 --timeout 600 || bad "did not converge"
# Settled, not only converged: writes held back on purpose (Events are posted after a 1 s hold;
# earlier builds held overlap counts up to 45 s) are part of the cost, so the wait is kept
# comparable: 32 s, then until no PATCH or POST for 4 s (the leader's lease renewals, a GET and a
# PUT a second, go on; bounded at 120 s in all).
requests_total() { curl -sf "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk '/^rest_client_requests_total\{.*method="(PATCH|POST)"/ {n += $2} END {printf "%d", n}'; }
settle_start=$SECONDS at_converged=$(requests_total) last=-1 quiet=0
while [ $((SECONDS - settle_start)) -lt 120 ]; do
  sleep 2
  now=$(requests_total)
  if [ "$now" = "$last" ]; then quiet=$((quiet + 2)); else quiet=0; fi
  last=$now
  [ $((SECONDS - settle_start)) -ge 32 ] && [ $quiet -ge 4 ] && break
done
echo "settled $((SECONDS - settle_start)) s after convergence ($((last - at_converged)) PATCH and POST requests after it)"
[ -n "$perf_pid" ] && { kill -INT "$perf_pid"; wait "$perf_pid"; }
# What the CPU bought: reconciles by result and API requests by method.
curl -sf "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk '
  /^controller_runtime_reconcile_total\{/ { split($1, a, "result=\""); split(a[2], b, "\""); r[b[1]] += $2 }
  /^rest_client_requests_total\{/ { split($1, a, "method=\""); split(a[2], b, "\""); m[b[1]] += $2 }
  /^propertyoverride_events_total\{/ { split($1, a, "result=\""); split(a[2], b, "\""); e[b[1]] += $2 }
  END { printf "reconciles:"; for (k in r) printf " %s %d", k, r[k]; printf "\nrequests:"; for (k in m) printf " %s %d", k, m[k];
        printf "\nevents:"; for (k in e) printf " %s %d", k, e[k]; print "" }'

echo "controller CPU: $(awk -v n="$count" '{t = ($14+$15)/100; printf "%.1f s, %.3f ms per PropertyOverride", t, t*1000/n}' /proc/$LC_CONTROLLER_PID/stat)"
echo "controller peak RSS: $(awk '/VmHWM/ {printf "%.1f MB", $2/1024}' /proc/$LC_CONTROLLER_PID/status)"
echo "api server peak RSS: $(awk '/VmHWM/ {printf "%.1f MB", $2/1024}' /proc/${lc_pids[0]}/status)"
finish
