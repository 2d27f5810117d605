#!/usr/bin/env bash
# The webhook's memory budget against the API server's webhook client (issue 21): with the
# budget held by 64 requests (and 8 standing by) whose bodies (all but their last byte) take all of it
# (tests/e2e/hold_budget.py: headers alone hold nothing, adv F4), a
# PropertyOverride write is answered 429 with Retry-After: 1; the API server retries it after
# that second (client-go's rest client, within the webhook's 5 s timeout), so the write passes
# once the budget is free again; held past the timeout, failurePolicy Fail refuses the write
# ("context deadline exceeded": it was still retrying). The budget and refusals are in the metrics.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
kubectl create namespace shop >/dev/null
out=$("$LC_BUILD/propertyoverride" controller --webhook-memory-budget 4 2>&1)
contains "a budget under 8 MiB is refused, saying what is valid" "$out" "--webhook-memory-budget takes MiB from 8 to 65536, e.g. 96 (a maximal review needs 82)"
lc_controller --webhook-memory-budget 8 || exit 1
lc_register_webhook Fail
metric() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
check "the budget is exported" awk -v n="$(metric propertyoverride_webhook_memory_budget_bytes)" 'BEGIN { exit !(n == 8388608) }'
# Each holder: 64 KiB of buffers and a 64 KiB body, a small reservation (budget/64); 64 of them
# are the whole 8 MiB (8 more stand by).
hold=65535 holders=72
pov() { # name
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: shop}\nspec:\n  targetRef: {kind: ServiceDefaults, name: api}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /connect_timeout\n      value: 2s\n' "$1"
}

/usr/bin/python3 tests/e2e/hold_budget.py 127.0.0.1 "$LC_WEBHOOK_PORT" "$LC_WORK/tls/ca.crt" "$hold" 2.5 "$holders" >"$e2e_work/hold1" &
holder=$!
eventually "the budget is held" 10 held cat "$e2e_work/hold1"
t0=$(date +%s.%N)
out=$(pov retried | kubectl apply -f - 2>&1)
t1=$(date +%s.%N)
contains "a write while the budget is held passes once it is free (the API server retried the 429)" "$out" "propertyoverride.propertyoverride.io/retried created"
check "it waited for the retry (at least 1 s)" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1) }'
check "the refusal is counted" awk -v n="$(metric propertyoverride_webhook_memory_refusals_total)" 'BEGIN { exit !(n >= 1) }'
wait "$holder"

/usr/bin/python3 tests/e2e/hold_budget.py 127.0.0.1 "$LC_WEBHOOK_PORT" "$LC_WORK/tls/ca.crt" "$hold" 8 "$holders" >"$e2e_work/hold2" &
holder=$!
eventually "the budget is held again" 10 held cat "$e2e_work/hold2"
out=$(pov refused | kubectl apply -f - 2>&1)
contains "held past the webhook's timeout: failurePolicy Fail refuses the write" "$out" "failed calling webhook"
contains "it was still retrying the 429 when the timeout came" "$out" "context deadline exceeded"
check "nothing was written" sh -c "! kubectl get propertyoverride refused -n shop >/dev/null 2>&1"
wait "$holder"
free_again() { awk -v n="$(metric propertyoverride_webhook_memory_inflight_bytes)" 'BEGIN { print (n == 0) ? "free" : "held" }'; }
eventually "the budget is free again" 15 free free_again
finish
