#!/usr/bin/env bash
# Webhook matchConditions (admissionregistration.k8s.io/v1, Kubernetes 1.28+): checked when a
# configuration is written (names, expressions inside the CEL subset); evaluated after the rules
# and selectors with object, oldObject and request; any false condition skips the webhook, an
# evaluation error refuses the request (403) under failurePolicy Fail and skips it under Ignore.
APISERVER=$1
HOOK=$2
source "$(dirname "$0")/lib.sh"
start_server gen --tls-dir "$T/tls" --tls-san hook.test.svc
stop_server
"$HOOK" --cert "$T/tls/tls.crt" --key "$T/tls/tls.key" --ready-file "$T/hook.ready" --log "$T/hook.calls" 2>"$T/hook.log" &
HOOK_PID=$!
PIDS+=("$HOOK_PID")
wait_file "$T/hook.ready"
HP=$(cat "$T/hook.ready")
start_server api --crd "$TESTDATA/widgets-crd.yaml" --webhook-service "test/hook=127.0.0.1:$HP"
CA=$(base64 -w0 "$T/tls/ca.crt")
SVC="{\"service\":{\"namespace\":\"test\",\"name\":\"hook\",\"path\":\"/validate\"},\"caBundle\":\"$CA\"}"
V=/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations
W=/apis/example.com/v1/namespaces/default/widgets

# The same shape as deploy/'s ServiceDefaults webhook: a list entry with a given name, and a
# spec that changed.
HOLDS="has(object.spec.extra) && has(object.spec.extra.hooks) && object.spec.extra.hooks.exists(e, has(e.name) && e.name == 'checked')"
CHANGED="oldObject == null || !has(oldObject.spec) || object.spec != oldObject.spec"
vwc() { # name policy conditions-json
  cat <<JSON
{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"$1"},
 "webhooks":[{"name":"widgets.hook.test","admissionReviewVersions":["v1"],"sideEffects":"None",
   "failurePolicy":"$2","timeoutSeconds":5,"clientConfig":$SVC,"matchConditions":$3,
   "rules":[{"operations":["CREATE","UPDATE"],"apiGroups":["example.com"],"apiVersions":["*"],"resources":["widgets"]}]}]}
JSON
}
cond() { jq -cn --arg n "$1" --arg e "$2" '{name: $n, expression: $e}'; }
widget() { # name labels [hooks-json]
  local extra=""
  [ -n "${3:-}" ] && extra=",\"extra\":{\"hooks\":$3}"
  echo "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"$1\",\"labels\":{$2}},\"spec\":{\"size\":1$extra}}"
}
called() { grep -qsx "$1" "$T/hook.calls"; }

# --- the configuration is validated ---------------------------------------------------------
http POST $V "$(vwc bad Fail "[$(cond a true),$(cond a false)]")"
expect_code 422 "duplicate condition names"
jbody .message | grep -qF 'webhooks[0].matchConditions[1].name: Duplicate value: "a"' || fail "duplicate text: $BODY"
http POST $V "$(vwc bad Fail "[$(cond a 'object.spec.size.exists(')]")"
expect_code 422 "an expression this server cannot evaluate"
jbody .message | grep -qF 'webhooks[0].matchConditions[0].expression: Invalid value: "object.spec.size.exists(": compilation failed' ||
  fail "compile text: $BODY"
pass "matchConditions validated on write"

# --- only what the conditions select is reviewed --------------------------------------------
http POST $V "$(vwc scoped Fail "[$(cond holds "$HOLDS"),$(cond spec-changed "$CHANGED")]")"
expect_code 201 "create the scoped webhook"
http POST $W "$(widget plain '"deny":"1"')"
expect_code 201 "no entry: the webhook is skipped (it would deny)"
called 'CREATE default/plain' && fail "the webhook was called for plain"
http POST $W "$(widget unnamed '"deny":"1"' '[{"required":true}]')"
expect_code 201 "an entry without a name: skipped, no evaluation error"
http POST $W "$(widget held '"deny":"1"' '[{"name":"other"},{"name":"checked"}]')"
expect_code 403 "an entry named checked: reviewed and denied"
http POST $W "$(widget held '' '[{"name":"checked"}]')"
expect_code 201 "reviewed and allowed"
called 'CREATE default/held' || fail "the webhook was not called for held"
http PATCH $W/held '{"metadata":{"labels":{"deny":"1"},"finalizers":["example.com/f"]}}' application/merge-patch+json
expect_code 200 "metadata-only update of an object holding an entry: spec-changed is false, skipped"
called 'UPDATE default/held' && fail "the webhook was called for a metadata-only update"
http PATCH $W/held '{"spec":{"size":2}}' application/merge-patch+json
expect_code 403 "a spec change is reviewed (and denied: the label)"
http PATCH $W/held '{"spec":{"size":2,"extra":{"hooks":[]}}}' application/merge-patch+json
expect_code 200 "an update removing the last entry is not reviewed"
pass "false conditions skip the webhook; true ones call it"

# --- the webhook down, failurePolicy Fail -----------------------------------------------------
kill "$HOOK_PID"; wait "$HOOK_PID" 2>/dev/null || true
http POST $W "$(widget down-plain '')"
expect_code 201 "webhook down: an unselected write passes"
http PATCH $W/plain '{"metadata":{"finalizers":["example.com/f"]}}' application/merge-patch+json
expect_code 200 "webhook down: a finalizer-only patch passes"
http POST $W "$(widget down-held '' '[{"name":"checked"}]')"
expect_code 500 "webhook down: a selected write fails closed"
jbody .message | grep -q '^Internal error occurred: failed calling webhook "widgets.hook.test": ' || fail "failure text: $BODY"
if command -v kubectl >/dev/null; then
  widget kd '' >"$T/kd.json"
  k apply -f "$T/kd.json" >/dev/null 2>"$T/err" || fail "kubectl apply of an unselected widget with the webhook down: $(cat "$T/err")"
  widget kd2 '' '[{"name":"checked"}]' >"$T/kd2.json"
  if k apply -f "$T/kd2.json" 2>"$T/err"; then fail "kubectl apply of a selected widget with the webhook down passed"; fi
  grep -q 'failed calling webhook "widgets.hook.test"' "$T/err" || fail "kubectl: $(cat "$T/err")"
fi
pass "webhook down: only selected writes are refused"

# --- evaluation errors: Fail refuses (403), Ignore skips; a false condition wins ------------------
NOHAS="object.spec.extra.hooks.exists(e, e.name == 'checked')"
http DELETE $V/scoped
http POST $V "$(vwc erring Fail "[$(cond no-has "$NOHAS")]")"
expect_code 201 "create a webhook whose condition can fail to evaluate"
http POST $W "$(widget err1 '')"
expect_code 403 "evaluation error under Fail"
expect_eq "$(jbody .reason)" Forbidden "reason"
expect_eq "$(jbody .message)" "widgets.example.com \"err1\" is forbidden: expression '$NOHAS' resulted in error: no such key: extra" "message"
http POST $W "$(widget err2 '' '[{"name":"checked"}]')"
expect_code 500 "no error: called (and the webhook is down)"
http PUT $V/erring "$(vwc erring Fail "[$(cond no-has "$NOHAS"),$(cond never 'request.operation == "DELETE"')]")"
expect_code 200 "add a condition that is false for writes"
http POST $W "$(widget err3 '')"
expect_code 201 "a false condition skips the webhook despite another's error"
http PUT $V/erring "$(vwc erring Ignore "[$(cond no-has "$NOHAS")]")"
http POST $W "$(widget err4 '')"
expect_code 201 "evaluation error under Ignore: skipped"
pass "evaluation errors and failurePolicy"
stop_server
