#!/usr/bin/env bash
# The real kube-apiserver killed (SIGKILL, mid-request and mid-watch) and started again on its
# port three times while chaos.py creates, edits and deletes PropertyOverrides and the controller
# (HTTP/1.1 keep-alive, 8 workers) writes: when the edits stop, every target holds exactly the
# entries the PropertyOverrides call for and every status says so, and the never-regress observer
# saw nothing lost. Real server only (run by run_real.sh: PO_APISERVER=real).
. "$(dirname "$0")/lib.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real kube-apiserver only"; exit 77; }
count=${PO_KILL_COUNT:-1500}
lc_start "$build" "$e2e_work" || exit 1
obs_start || exit 1
lc_controller ${PO_KILL_FLAGS:-} || exit 1
token=$(lc_token)
api_pid() { # this run's kube-apiserver: the one on its port
  if [ -f "$e2e_work/api.pid" ]; then cat "$e2e_work/api.pid"; else pgrep -f -n "kube-apiserver .*--secure-port ${LC_URL##*:}( |$)"; fi
}
killer() {
  for i in 1 2 3; do
    sleep "${PO_KILL_EVERY:-2}"
    local t0=$SECONDS pid cmd
    pid=$(api_pid) || return 1
    mapfile -d '' cmd <"/proc/$pid/cmdline"
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    "${cmd[@]}" >>"$e2e_work/apiserver.log" 2>&1 &
    echo $! >"$e2e_work/api.pid"
    for _ in $(seq 300); do
      curl -sf --cacert "$e2e_work/tls/ca.crt" -H "Authorization: Bearer $token" "$LC_URL/readyz" >/dev/null && break
      sleep 0.1
    done
    echo "kube-apiserver killed and back ($i, $((SECONDS - t0)) s)"
  done
}
api0=$(api_pid)
killer &
kpid=$!
/usr/bin/python3 "$(dirname "$0")/chaos.py" --url "$LC_URL" --token "$token" --ca "$e2e_work/tls/ca.crt" --count "$count" \
  --targets 20 --seed "${PO_CHAOS_SEED:-11}" --timeout 240 --no-faults --quick-deletes 50
rc=$?
wait $kpid
if [ -f "$e2e_work/api.pid" ]; then # lc_stop stops the last one in the first one's place
  for i in "${!lc_pids[@]}"; do [ "${lc_pids[i]}" = "$api0" ] && lc_pids[i]=$(cat "$e2e_work/api.pid"); done
fi
[ $rc = 0 ] && ok "kube-apiserver killed 3 times: $count overrides converged" || bad "kube-apiserver killed 3 times: no convergence"
check "observer: no revision lost a live entry or target, none carries an invalid entry" obs_stop
grep -c "may have been applied" "$e2e_work/controller.log" | sed 's/^/writes that may have been applied (logged): /'
finish
