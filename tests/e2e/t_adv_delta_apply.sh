#!/usr/bin/env bash
# adv-delta: does the API server apply po_Consul_Delta's patches as the local server's code in the
# unit tests does? test_consul_delta's seeded random edits (PO_DELTA_DUMP), lists of up to 12
# entries and the longest of up to 400, each sent to one ServiceDefaults holding the old list over
# the version just read (adv_delta_apply.py): the list must become exactly the new one; every
# tenth, over a version a tenant's edit moved on, must be refused (409, or 422 when an operation
# no longer applies) and change nothing. PO_APISERVER=real: the real kube-apiserver's RFC 6902.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
PO_DELTA_DUMP=$e2e_work/cases.jsonl "$build/tests/meshes/test_consul_delta" >/dev/null 2>&1
check "test_consul_delta wrote its cases" test -s "$e2e_work/cases.jsonl"
{ head -n "${PO_ADV_DELTA_APPLY_N:-300}" "$e2e_work/cases.jsonl"; tail -n 40 "$e2e_work/cases.jsonl"; } >"$e2e_work/some.jsonl"
out=$(/usr/bin/python3 "$top/tests/e2e/adv_delta_apply.py" "$LC_URL" "$(lc_token)" "$LC_WORK/tls/ca.crt" "$e2e_work/some.jsonl" 100000)
echo "$out"
check "every patch made exactly the planned list; every one over a moved version refused" test "$(echo "$out" | jq .bad_count)" = 0
check "most were applied" test "$(echo "$out" | jq .applied)" -gt 250
finish
