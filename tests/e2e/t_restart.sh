#!/usr/bin/env bash
# Restarts at scale: 2,000 PropertyOverrides over 1,000 ServiceDefaults the controller creates,
# then a SIGTERM restart and a kill -9 restart, each while edits are in flight. The never-regress
# observer (observer.py) watches every revision: no target may be DELETED and no live entry
# dropped, even for one revision, across either restart (a controller that reconciles before its
# informers have synced sees a partial index and does both). The figures are printed per restart.
. "$(dirname "$0")/lib.sh"
build=$1
count=${PO_RESTART_COUNT:-2000} targets=${PO_RESTART_TARGETS:-1000}
# a compaction window larger than the run: the observer never misses a revision to a 410
lc_start "$build" "$e2e_work" --compaction-window 500000 || exit 1
obs_start || exit 1
flags=(--workers 4 --log-level warn --kube-api-qps 2000 --kube-api-burst 4000)
lc_controller "${flags[@]}" || exit 1
load() { /usr/bin/python3 "$top/tests/e2e/load.py" "$@" --url "$LC_URL" --token "$(lc_token)" --ca "$LC_WORK/tls/ca.crt" --count "$count" --targets "$targets"; }
load create || { bad "creating the PropertyOverrides"; finish; exit 1; }
if load wait --timeout 240; then ok "converged: $count PropertyOverrides in $targets targets"; else bad "did not converge"; finish; exit 1; fi
check "every target was created by the controller" test "$(kubectl get servicedefaults -l app.kubernetes.io/managed-by=propertyoverride -o name | wc -l)" = "$targets"
holder() { kubectl get lease propertyoverride-controller -n default -o jsonpath='{.spec.holderIdentity}' 2>/dev/null | sed 's/.*_//'; }

restart() { # label signal seconds-down [extra controller flags...]
  local label=$1 sig=$2 down=$3
  shift 3
  local old=$LC_CONTROLLER_PID churn i
  obs_mark "$label"
  rm -f "$e2e_work/churn.stop"
  load churn --stop-file "$e2e_work/churn.stop" >"$e2e_work/churn.out" 2>&1 &
  churn=$!
  sleep 1 # edits in flight when the signal lands
  kill "-$sig" "$old"
  for ((i = 0; i < 400; i++)); do kill -0 "$old" 2>/dev/null || break; sleep 0.05; done
  check "$label: the old controller exited" sh -c "! kill -0 $old 2>/dev/null"
  sleep "$down" # down for a while, the edits going on
  lc_controller "${flags[@]}" "$@" || { bad "$label: the new controller did not start"; return 1; }
  case " $* " in *" --leader-elect=false "*) ;; *) eventually "$label: the new controller leads" 20 "$LC_CONTROLLER_PID" holder ;; esac
  sleep 3 # more edits, now reconciled by the new leader
  touch "$e2e_work/churn.stop"
  wait "$churn" && ok "$label: $(cat "$e2e_work/churn.out")" || bad "$label: edits failed: $(cat "$e2e_work/churn.out")"
  if load wait --timeout 120; then ok "$label: converged again"; else bad "$label: did not converge"; fi
  obs_mark "after $label"
}
# a clean restart: the lease is released, the new process leads at once
restart "SIGTERM restart" TERM 0
# a crash of the single replica that runs without leader election (as the chart allows): back at
# once, nothing to wait for (with leader election the new process first waits out the old lease,
# by which time its informers have long synced)
restart "kill -9 restart" KILL 0 --leader-elect=false

check "observer: no revision lost a live entry or target, none carries an invalid entry" obs_stop
for phase in "SIGTERM restart" "kill -9 restart"; do
  echo "     $phase: $(obs_figure "$phase" deleted) targets DELETED, $(obs_figure "$phase" dropping_writes) writes dropped a live entry, $(obs_figure "$phase" dropped_entries) live entries lost in all (deleted or dropped), $(obs_figure "$phase" target_writes) target writes"
  check "$phase: no target DELETED" test "$(obs_figure "$phase" deleted)" = 0
  check "$phase: no live entry dropped" test "$(obs_figure "$phase" dropped_entries)" = 0
done
finish
