#!/usr/bin/env bash
# Watches: events from a resourceVersion, initial ADDED for resourceVersion 0, bookmarks,
# timeoutSeconds, selector transitions, 410 after the compaction window (as an ERROR event and
# as HTTP 410 for an exact list), dropped connections and forced 410s (faults).
APISERVER=$1
source "$(dirname "$0")/lib.sh"
start_server api --compaction-window 8 --bookmark-interval-ms 200
CM=/api/v1/namespaces/default/configmaps
mk() { http POST $CM "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\",\"labels\":{\"app\":\"$2\"}}}"; expect_code 201 "create $1"; }

mk c0 a
http GET $CM
rv=$(jbody .metadata.resourceVersion)
# Streams are read until the expected last event arrives (bounded poll), then closed.
curl -sS -N "$URL$CM?watch=true&resourceVersion=$rv&allowWatchBookmarks=true" >"$T/w1" &
w1=$!
curl -sS -N "$URL$CM?watch=1&labelSelector=app%3Da" >"$T/w2" &
w2=$!
wait_watches() { # N: until the server has N watches open
  local i
  for i in $(seq 1 400); do
    http GET /admin/stats
    [ "$(jbody .watches)" = "$1" ] && return 0
    sleep 0.05
  done
  fail "server never had $1 watches"
}
wait_grep() { # FILE PATTERN
  local i
  for i in $(seq 1 400); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "no $2 in $1: $(cat "$1")"
}
# complete lines only: a stream closed by kill may end in a partial line
events() { jq -cR 'fromjson? // empty' "$1"; }
wait_watches 2
mk c1 a
http PATCH $CM/c1 '{"data":{"k":"v"}}' application/merge-patch+json
http PATCH $CM/c1 '{"metadata":{"labels":{"app":"b"}}}' application/merge-patch+json
http DELETE $CM/c1
expect_code 200 "delete"
wait_grep "$T/w1" '"type":"DELETED"'
wait_grep "$T/w1" '"type":"BOOKMARK"'
wait_grep "$T/w2" '"type":"DELETED"'
kill $w1 $w2
wait $w1 $w2 2>/dev/null || true
curl -sS -N "$URL$CM?watch=true&timeoutSeconds=1" >/dev/null || fail "timeoutSeconds ends the stream"
got=$(events "$T/w1" | jq -r 'select(.type != "BOOKMARK") | .type + " " + .object.metadata.name' | paste -sd, -)
expect_eq "$got" "ADDED c1,MODIFIED c1,MODIFIED c1,DELETED c1" "events from a resourceVersion"
events "$T/w1" | jq -se 'map(select(.type == "BOOKMARK")) | length > 0 and all(.object.kind == "ConfigMap" and (.object.metadata.resourceVersion | tonumber) > 0)' >/dev/null ||
  fail "no bookmark: $(cat "$T/w1")"
last=$(events "$T/w1" | jq -r 'select(.type == "DELETED") | .object.metadata.resourceVersion')
http GET $CM
[ "$last" = "$(jbody .metadata.resourceVersion)" ] || fail "DELETED carries the newest resourceVersion"
pass "watch from a resourceVersion, bookmarks, timeoutSeconds"
got=$(events "$T/w2" | jq -r '.type + " " + .object.metadata.name' | paste -sd, -)
# c0 exists (initial ADDED), c1 comes, changes, and leaves the selector (DELETED)
expect_eq "$got" "ADDED c0,ADDED c1,MODIFIED c1,DELETED c1" "selector watch with initial state"
curl -sS -N "$URL$CM?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1" >"$T/wl"
expect_eq "$(events "$T/wl" | jq -r 'select(.type != "BOOKMARK" or .object.metadata.annotations["k8s.io/initial-events-end"] == "true") | .type' | head -2 | paste -sd, -)" "ADDED,BOOKMARK" "sendInitialEvents ends the initial state with a bookmark"
pass "watch from resourceVersion 0 sends the current objects; leaving a selector is DELETED; sendInitialEvents"

for i in $(seq 1 12); do http PATCH $CM/c0 "{\"data\":{\"i\":\"$i\"}}" application/merge-patch+json; done
curl -sS -N "$URL$CM?watch=true&resourceVersion=$rv&timeoutSeconds=5" >"$T/w3"
expect_eq "$(events "$T/w3" | jq -r '.type + " " + (.object.code|tostring) + " " + .object.reason')" "ERROR 410 Expired" "watch from a compacted resourceVersion"
http GET "$CM?resourceVersion=$rv&resourceVersionMatch=Exact"
expect_code 410 "exact list of an old resourceVersion"
http GET $CM
rv=$(jbody .metadata.resourceVersion)
curl -sS -N "$URL$CM?watch=true&resourceVersion=$((rv - 3))&timeoutSeconds=1" >"$T/w4"
expect_eq "$(events "$T/w4" | jq -r .type | paste -sd, -)" "MODIFIED,MODIFIED,MODIFIED" "a resourceVersion inside the window still works"
pass "410 Gone after the compaction window"

http POST /admin/faults '{"dropWatchEvery":2}'
expect_code 200 "set faults"
curl -sS -N "$URL$CM?watch=true&timeoutSeconds=20" >"$T/w5" 2>/dev/null &   # c0, then c2: cut
w5=$!
mk c2 a
wait $w5 && fail "a cut stream should end with an error for curl"
expect_eq "$(events "$T/w5" | jq -r .type | wc -l)" 2 "the stream is cut after 2 events"
http POST /admin/faults '{"dropWatchEvery":0,"force410":1}'
curl -sS -N "$URL$CM?watch=true&resourceVersion=$rv&timeoutSeconds=5" >"$T/w6"
expect_eq "$(events "$T/w6" | jq -r '.type + " " + (.object.code|tostring)')" "ERROR 410" "forced 410"
http GET /admin/faults
expect_eq "$(jbody .force410)" 0 "force410 counted down"
pass "fault injection: dropped watches and forced 410"

curl -sS -N "$URL$CM?watch=true&resourceVersion=$rv" >/dev/null &
idle=$!
wait_watches 1
kill $idle
wait $idle 2>/dev/null || true
wait_watches 0
pass "an abandoned idle watch is closed by the server"
stop_server
