#!/usr/bin/env bash
# --state: objects, CRDs and the resourceVersion counter survive a restart.
APISERVER=$1
source "$(dirname "$0")/lib.sh"
start_server api --state "$T/state.json" --crd "$TESTDATA/widgets-crd.yaml"
W=/apis/example.com/v1/namespaces/default/widgets
http POST $W '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"p1"},"spec":{"size":4}}'
expect_code 201 "create"
uid=$(jbody .metadata.uid)
http POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"keep"}}'
http POST /api/v1/namespaces/keep/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"}}'
expect_code 201 "configmap"
rv=$(jbody .metadata.resourceVersion)
stop_server
[ -s "$T/state.json" ] || fail "no state file"
ls "$T"/state.json.tmp* 2>/dev/null && fail "temporary state file left behind"

start_server api --state "$T/state.json"
http GET $W/p1
expect_code 200 "widget after restart"
expect_eq "$(jbody .metadata.uid) $(jbody .spec.size)" "$uid 4" "same object"
http GET /api/v1/namespaces/keep/configmaps/c
expect_eq "$(jbody .data.a)" b "configmap after restart"
http PUT /api/v1/namespaces/keep/configmaps/c "$(jq -c '.data.a="c"' <<<"$BODY")"
expect_code 200 "update after restart"
[ "$(jbody .metadata.resourceVersion)" -gt "$rv" ] || fail "resourceVersion counter went back"
curl -sS -N "$URL/api/v1/namespaces/keep/configmaps?watch=true&resourceVersion=1&timeoutSeconds=3" >"$T/w"
expect_eq "$(jq -r '.type + " " + (.object.code|tostring)' "$T/w")" "ERROR 410" "events before the restart are compacted"
pass "state survives a restart"
kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
jq -e '.objects | length > 5' "$T/state.json" >/dev/null || fail "state file unreadable after SIGKILL"
start_server api --state "$T/state.json"
http GET /api/v1/namespaces/keep/configmaps/c
expect_code 200 "after SIGKILL"
pass "state file valid after SIGKILL"
stop_server
