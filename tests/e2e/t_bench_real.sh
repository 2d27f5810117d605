#!/usr/bin/env bash
# The controller benchmark on the real kube-apiserver as a user deploys it (issue 26; no figure is
# judged): the validating and mutating webhooks registered with deploy/'s matchConditions and
# the controller under deploy/'s username (bench_controller.sh --webhook on --mutating on, the
# default), 30 PropertyOverrides each tuning its own upstream (--patches distinct: none overlap).
# It converges; each webhook answered each create once and none of the controller's own target
# writes (not-the-controller); every create got the finalizer from the mutating webhook, so the
# controller wrote no PropertyOverride; a create simply programmed posts no Event (the one POST
# is the target's create).
. "$(dirname "$0")/lib.sh"
build=$1
report=$e2e_work/report.jsonl
out=$(LC_AUDIT=1 bash "$top/tests/e2e/bench_controller.sh" "$build" --server real --points 30 --rate 50 --capped none --patches distinct \
  --quiet 3 --timeout 180 --out "$report" 2>&1)
check "the bench ran to the end" test $? = 0
printf '%s\n' "$out" | tail -8
j() { grep '^{' "$report" | jq -r "$1"; }
check "one report line" test "$(grep -c '^{' "$report")" = 1
check "converged, on the real server with the webhook, distinct patches" \
  test "$(j '[.converged, .label, .patches, .targets] | @tsv')" = "$(printf 'true\treal+webhook+mutating\tdistinct\t1')"
check "the webhooks answered the 30 creates, each once, and none of the controller's target writes" test "$(j .admissions)" = 60
check "the mutating webhook gave each create the finalizer" test "$(j .mutations.finalized)" = 30
check "so the controller wrote no PropertyOverride" test "$(j .override_writes_per_po)" = 0
check "the controller wrote the target (so there were writes to leave out)" test "$(j '.writes > 30')" = true
check "no Event for a create simply programmed: one POST, the target's create" test "$(j '(.requests_per_po.POST * 30 | round)')" = 1
finish
