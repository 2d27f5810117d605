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
expect_eq "$(jq -c . <<<"$BODY")" '{"dropWatchEvery":0,"force410":0,"throttle":0,"retryAfterSeconds":3,"serverErrors":0,"serverErrorCode":503,"latencyMs":0,"serverErrorPercent":0,"force410Percent":0,"holdWatchMs":0,"holdWatchResource":""}' "faults readback"
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
http POST /admin/faults '{"holdWatchResource":7}'
expect_code 400 "holdWatchResource not a string"
pass "faults through /admin/faults; stats"

# holdWatchMs: a held resource's watch events come no sooner than that after the write (a lower
# bound only); another resource's are not held; a stream whose timeout comes first ends without it.
http POST /admin/faults '{"holdWatchMs":1500,"holdWatchResource":"configmaps"}'
expect_eq "$(jbody .holdWatchMs) $(jbody .holdWatchResource)" "1500 configmaps" "hold readback"
rv=$(curl -sS "$URL/api/v1/namespaces/default/configmaps" | jq -r .metadata.resourceVersion)
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=$rv&timeoutSeconds=1" >"$T/short" &
short=$!
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=$rv&timeoutSeconds=6" >"$T/held" &
held=$!
curl -sS -N "$URL/api/v1/namespaces/default/secrets?watch=true&resourceVersion=$rv&timeoutSeconds=1" >"$T/other" &
other=$!
sleep 0.3
start=$(date +%s%N)
http POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held"}}'
expect_code 201 "configmap created"
http POST /api/v1/namespaces/default/secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"free"}}'
expect_code 201 "secret created"
for ((i = 0; i < 100; i++)); do grep -q '"held"' "$T/held" && break; sleep 0.05; done
end=$(date +%s%N)
grep -q '"held"' "$T/held" || fail "the held event never came"
[ $(( (end - start) / 1000000 )) -ge 1500 ] || fail "the event came $(( (end - start) / 1000000 )) ms after the write, before the hold"
wait $short $other || true
expect_eq "$(grep -c '"held"' "$T/short")" 0 "a stream that ends first does not send the held event"
expect_eq "$(jq -r .object.metadata.name "$T/other")" free "another resource's watch is not held"
kill $held 2>/dev/null || true; wait $held 2>/dev/null || true
http POST /admin/faults '{"holdWatchMs":0,"holdWatchResource":""}'
expect_code 200 "hold off"
http GET /admin/stats
[ "$(jbody .requests)" -gt 5 ] || fail "stats: $BODY"
pass "holdWatchMs; stats"
stop_server
