#!/usr/bin/env bash
# Fault injection by flags and by /admin/faults: 429 with Retry-After, 5xx bursts, latency.
APISERVER=$1
source "$(dirname "$0")/lib.sh"
start_server api --fault-429-next 2 --fault-retry-after 3
http GET /api/v1/namespaces
expect_code 429 "first request throttled"
expect_eq "$(jbody .reason) $(jbody .details.retryAfterSeconds)" "TooManyRequests 3" "429 Status"
grep -qi '^Retry-After: 3' <<<"$HEADERS" || fail "Retry-After header: $HEADERS"
http GET /api/v1/namespaces
expect_code 429 "second request throttled"
http GET /api/v1/namespaces
expect_code 200 "burst over"
pass "429 burst from flags"

http POST /admin/faults '{"serverErrors":2,"serverErrorCode":500}'
expect_code 200 "admin"
http GET /api/v1/namespaces/default
expect_code 500 "5xx burst"
expect_eq "$(jbody .reason)" InternalError "500 reason"
http GET /api/v1/namespaces/default
expect_code 500 "5xx burst 2"
http GET /api/v1/namespaces/default
expect_code 200 "5xx burst over"
http POST /admin/faults '{"serverErrors":1,"serverErrorCode":503}'
http GET /api/v1/namespaces/default
expect_code 503 "503 burst"
expect_eq "$(jbody .reason)" ServiceUnavailable "503 reason"
http POST /admin/faults '{"latencyMs":300}'
start=$(date +%s%N)
http GET /api/v1/namespaces/default
end=$(date +%s%N)
[ $(( (end - start) / 1000000 )) -ge 300 ] || fail "latency not added"   # a lower bound only
http POST /admin/faults '{"latencyMs":0}'
http GET /admin/faults
expect_eq "$(jq -c . <<<"$BODY")" '{"dropWatchEvery":0,"force410":0,"throttle":0,"retryAfterSeconds":3,"serverErrors":0,"serverErrorCode":503,"latencyMs":0,"serverErrorPercent":0,"force410Percent":0}' "faults readback"
http POST /admin/faults '{"serverErrorPercent":100}'
http GET /api/v1/namespaces/default
expect_code 503 "random 5xx at 100 percent"
http POST /admin/faults '{"serverErrorPercent":0,"force410Percent":100}'
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5" >"$T/w"
expect_eq "$(jq -r '.object.code' "$T/w")" 410 "random 410 at 100 percent"
http POST /admin/faults '{"force410Percent":0}'
http GET /api/v1/namespaces/default
expect_code 200 "percentages off"
http POST /admin/faults '{"bogus":1}'
expect_code 400 "unknown fault"
http GET /admin/stats
[ "$(jbody .requests)" -gt 5 ] || fail "stats: $BODY"
pass "faults through /admin/faults; stats"
stop_server
