#!/usr/bin/env bash
# The controller benchmark checked at a tiny size (issue 26; no figure is judged, only that the
# bench tells the truth): bench_controller.sh on the local server at 50 PropertyOverrides, 150 on
# one target (the 100-entry cap hit: 50 TargetFull) and a restart of each; its report parses and
# says what happened. Then its convergence check (bench.py) on states made by hand: a
# PropertyOverride without a status, an entry missing from a target, a controller that cannot
# answer are not convergence.
. "$(dirname "$0")/lib.sh"
build=$1
report=$e2e_work/report.jsonl
out=$(bash "$top/tests/e2e/bench_controller.sh" "$build" --server local --points 50 --rate 200 --capped 150:1 --restart --quiet 3 \
  --timeout 120 --out "$report" 2>&1)
check "the bench ran to the end" test $? = 0
printf '%s\n' "$out" | tail -12
check "four report lines (two runs, two restarts)" test "$(grep -c '^{' "$report")" = 4
line() { grep '^{' "$report" | jq -c "select($1)"; }
j() { jq -r "$2" <<<"$(line "$1")"; }
run50='.mode == "run" and .n == 50' run150='.mode == "run" and .n == 150'
check "50: converged on the state and the last write" test "$(j "$run50" '[.converged, .why, .last_write_from] | @tsv')" = "$(printf 'true\t\tgauge')"
check "50: every field measured" test "$(j "$run50" '[.cpu_s, .reconciles, .writes, .rss_peak_mb, .convergence_s, .last_create_to_last_write_s, .load_mean] | map(. != null) | all')" = true
check "50: one status write at least per PropertyOverride" awk -v w="$(j "$run50" .writes_per_po)" 'BEGIN { exit !(w >= 1) }'
check "50: paced at 200 creates a second (--rate), recorded" test "$(j "$run50" '[.rate, .create_s >= 0.24] | @tsv')" = "$(printf '200\ttrue')"
check "50: our finalizer writes' echoes known by their version, not parsed" \
  awk -v v="$(j "$run50" '.ignored_per_po["own-override-version"]')" 'BEGIN { exit !(v > 0) }'
check "50: reconciled, with no requeue" test "$(j "$run50" '(.reconciles > 0) and (.requeues == 0)')" = true
check "50: the last write after the last create, convergence after it" test "$(j "$run50" '(.last_create_to_last_write_s >= 0) and (.convergence_s >= .create_s)')" = true
check "50: one target of 50 (--per-target 50): nothing capped" test "$(j "$run50" '[.targets, .capped, .target_full] | @tsv')" = "$(printf '1\tfalse\t0')"
check "150 on 1 target: capped, 50 TargetFull, converged" test "$(j "$run150" '[.capped, .target_full, .converged] | @tsv')" = "$(printf 'true\t50\ttrue')"
for n in 50 150; do
  check "restart at $n: ready, workers after sync, zero writes, no requeue" \
    test "$(j ".mode == \"restart\" and .n == $n" '[.converged, .ready_s != null, .workers_start_s != null, .writes, .writes_from, .requeues, .retries, .unsynced_start_warned] | @tsv')" = \
    "$(printf 'true\ttrue\ttrue\t0\tpropertyoverride_writes_total\t0\t0\tfalse')"
done
contains "the table" "$out" "| 150 | 1 (capped) | local |"

# The convergence check on states made by hand (a cluster of its own, the controller started later).
lc_start "$build" "$e2e_work/check" || exit 1
bench() { /usr/bin/python3 "$top/tests/e2e/bench.py" "$@" --url "$LC_URL" --token "$(lc_token)" --ca "$LC_WORK/tls/ca.crt" --count 5 --targets 1; }
/usr/bin/python3 "$top/tests/e2e/load.py" create --url "$LC_URL" --token "$(lc_token)" --ca "$LC_WORK/tls/ca.crt" --count 5 --targets 1 >/dev/null
contains "no controller yet: not converged" "$(bench check)" "not converged: po-0000: status for generation None"
lc_controller --leader-elect=false || exit 1
eventually "the controller ran: converged" 60 "converged (0 TargetFull)" bench check
# An entry taken out of the target behind the controller's back (the controller stopped first).
kill -STOP "$LC_CONTROLLER_PID"
kubectl patch servicedefaults svc-0000 --type json -p '[{"op": "remove", "path": "/spec/envoyExtensions/0"}]' >/dev/null
contains "an entry missing: not converged" "$(bench check)" "svc-0000 holds 4 of the 5 pointing at it"
# A controller that does not answer (stopped) never counts as quiet, however still its writes.
out=$(bench run --metrics "http://127.0.0.1:$LC_PROBE_PORT/metrics" --pid "$LC_CONTROLLER_PID" --quiet 1 --timeout 8 2>&1)
check "a stopped controller: the run is refused or not converged" test $? != 0
kill -CONT "$LC_CONTROLLER_PID"
eventually "the controller back: the entry restored, converged" 60 "converged (0 TargetFull)" bench check
finish
