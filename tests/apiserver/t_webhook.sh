#!/usr/bin/env bash
# ValidatingWebhookConfigurations: AdmissionReview v1 over HTTPS to a service (mapped with
# --webhook-service) or a URL, caBundle, rules, namespaceSelector, denial text and code,
# warnings, failurePolicy Fail/Ignore, timeoutSeconds.
APISERVER=$1
HOOK=$2
source "$(dirname "$0")/lib.sh"
# first run only generates the certificates (with the hook's service name)
start_server gen --tls-dir "$T/tls" --tls-san hook.test.svc
stop_server
"$HOOK" --cert "$T/tls/tls.crt" --key "$T/tls/tls.key" --ready-file "$T/hook.ready" --log "$T/hook.calls" 2>"$T/hook.log" &
HOOK_PID=$!
PIDS+=("$HOOK_PID")
wait_file "$T/hook.ready"
HP=$(cat "$T/hook.ready")
start_server api --crd "$TESTDATA/widgets-crd.yaml" --webhook-service "test/hook=127.0.0.1:$HP"
CA=$(base64 -w0 "$T/tls/ca.crt")

vwc() { # name policy timeout clientConfig
  cat <<JSON
{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"$1"},
 "webhooks":[{"name":"widgets.hook.test","admissionReviewVersions":["v1"],"sideEffects":"None",
   "failurePolicy":"$2","timeoutSeconds":$3,"clientConfig":$4,
   "rules":[{"operations":["CREATE","UPDATE"],"apiGroups":["example.com"],"apiVersions":["*"],"resources":["widgets"]}]},
  {"name":"cms.hook.test","admissionReviewVersions":["v1"],"sideEffects":"None","failurePolicy":"Fail",
   "clientConfig":$4,"namespaceSelector":{"matchLabels":{"hooked":"yes"}},
   "rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]}]}
JSON
}
SVC="{\"service\":{\"namespace\":\"test\",\"name\":\"hook\",\"path\":\"/validate\"},\"caBundle\":\"$CA\"}"
V=/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations
http POST $V "$(vwc hooks Fail 2 "$SVC")"
expect_code 201 "create the webhook configuration"
W=/apis/example.com/v1/namespaces/default/widgets
widget() { echo "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"$1\",\"labels\":{$2}},\"spec\":{\"size\":1}}"; }

http POST $W "$(widget ok '')"
expect_code 201 "allowed create"
grep -qx 'CREATE default/ok' "$T/hook.calls" || fail "webhook not called: $(cat "$T/hook.calls")"
http POST $W "$(widget bad '"deny":"1"')"
expect_code 403 "denied"
expect_eq "$(jbody .message)" 'admission webhook "widgets.hook.test" denied the request: label deny is set' "denial message"
http GET $W/bad
expect_code 404 "a denied object is not stored"
http POST $W "$(widget warned '"warn":"1"')"
expect_code 201 "warned"
grep -q '^Warning: 299 - "this object is warned"' <<<"$HEADERS" || fail "warning header: $HEADERS"
http PATCH $W/ok '{"spec":{"size":2}}' application/merge-patch+json
grep -qx 'UPDATE default/ok' "$T/hook.calls" || fail "update not reviewed"
http PATCH $W/ok '{"metadata":{"labels":{"deny":"1"}}}' application/merge-patch+json
expect_code 403 "update denied"
pass "service webhook: allow, deny, warnings, update"

if command -v kubectl >/dev/null; then
  sed 's/name: a/name: kd/; s/tier: front/deny: "yes"/' "$TESTDATA/widget-a.yaml" >"$T/kd.yaml"
  if k apply -f "$T/kd.yaml" 2>"$T/err"; then fail "kubectl apply should be denied"; fi
  grep -q 'admission webhook "widgets.hook.test" denied the request: label deny is set' "$T/err" || fail "kubectl denial: $(cat "$T/err")"
  pass "kubectl shows the denial"
fi

http POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"}}'
grep -q 'default/c1' "$T/hook.calls" && fail "namespaceSelector ignored"
http POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"h","labels":{"hooked":"yes"}}}'
http POST /api/v1/namespaces/h/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c2","labels":{"deny":"x"}}}'
expect_code 403 "namespaceSelector match"
pass "namespaceSelector"

http POST $W "$(widget br '"broken":"1"')"
expect_code 500 "webhook failure with failurePolicy Fail"
jbody .message | grep -q '^Internal error occurred: failed calling webhook "widgets.hook.test": ' || fail "failure text: $BODY"
http POST $W "$(widget slow '"slow":"1"')"
expect_code 500 "timeout"
jbody .message | grep -q 'context deadline exceeded' || fail "timeout text: $BODY"
http PUT $V/hooks "$(vwc hooks Ignore 1 "$SVC" | jq -c '.metadata.resourceVersion = ""')"
expect_code 200 "switch to Ignore"
http POST $W "$(widget br '"broken":"1"')"
expect_code 201 "webhook failure ignored"
pass "failurePolicy Fail and Ignore, timeoutSeconds"

URLCFG="{\"url\":\"https://localhost:$HP/validate\",\"caBundle\":\"$CA\"}"
http DELETE $V/hooks
http POST $V "$(vwc byurl Fail 2 "$URLCFG")"
http POST $W "$(widget u '"deny":"1"')"
expect_code 403 "url webhook"
kill "$HOOK_PID"; wait "$HOOK_PID" 2>/dev/null || true
http POST $W "$(widget down '')"
expect_code 500 "webhook down with Fail"
pass "url webhook; webhook down"
stop_server
