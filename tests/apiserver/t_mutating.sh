#!/usr/bin/env bash
# MutatingWebhookConfigurations: called before the validating webhooks, in order, each seeing the
# object the previous ones made; the response's JSONPatch applied (and the object validated
# again); the validating webhooks see the patched object; an update the webhook puts back is a
# no-op (no new resourceVersion or generation); dry runs patched too; a patch that cannot apply
# fails the request under Fail and is skipped under Ignore; webhook down under Ignore.
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
cfg() { # kind name policy path
  cat <<JSON
{"apiVersion":"admissionregistration.k8s.io/v1","kind":"$1","metadata":{"name":"$2"},
 "webhooks":[{"name":"$2.hook.test","admissionReviewVersions":["v1"],"sideEffects":"None","failurePolicy":"$3",
   "timeoutSeconds":2,"clientConfig":{"service":{"namespace":"test","name":"hook","path":"$4"},"caBundle":"$CA"},
   "rules":[{"operations":["CREATE","UPDATE"],"apiGroups":["example.com"],"apiVersions":["*"],"resources":["widgets"]}]}]}
JSON
}
M=/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations
V=/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations
http POST $M "$(cfg MutatingWebhookConfiguration mut Fail /mutate)"
expect_code 201 "create the mutating configuration"
http POST $V "$(cfg ValidatingWebhookConfiguration val Fail /validate)"
expect_code 201 "create the validating configuration"
W=/apis/example.com/v1/namespaces/default/widgets
widget() { echo "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"$1\",\"labels\":{$2}},\"spec\":{\"size\":${3:-1}}}"; }

http POST $W "$(widget plain '')"
expect_code 201 "no patch: stored as sent"
[ "$(jbody '.metadata.labels.mutated // "none"')" = none ] || fail "unpatched object changed: $BODY"
[ "$(grep -c 'default/plain' "$T/hook.calls")" = 2 ] || fail "both webhooks called once each: $(cat "$T/hook.calls")"
[ "$(grep 'default/plain' "$T/hook.calls" | head -1)" = "MUTATE default/plain" ] || fail "mutating webhook first: $(cat "$T/hook.calls")"
http POST $W "$(widget p '"patch":"v1"')"
expect_code 201 "patched create"
[ "$(jbody .metadata.labels.mutated)" = v1 ] || fail "the reply lacks the patch: $BODY"
http GET $W/p
[ "$(jbody .metadata.labels.mutated)" = v1 ] || fail "the stored object lacks the patch: $BODY"
pass "the JSONPatch is applied to what is stored and returned, mutating before validating"

http POST $W "$(widget d '"patch":"deny"')"
expect_code 403 "the validating webhook sees the patched object"
http POST "$W?dryRun=All" "$(widget dry '"patch":"v2"')"
expect_code 201 "dry run"
[ "$(jbody .metadata.labels.mutated)" = v2 ] || fail "the dry run lacks the patch: $BODY"
http GET $W/dry
expect_code 404 "a dry run stores nothing"
pass "validating after mutating; dry runs patched"

http POST $W "$(widget pinned '"pin":"1"')"
rv=$(jbody .metadata.resourceVersion) gen=$(jbody .metadata.generation)
http PATCH $W/pinned '{"spec":{"size":5}}' application/merge-patch+json
expect_code 200 "an update the webhook puts back"
[ "$(jbody .spec.size)/$(jbody .metadata.resourceVersion)/$(jbody .metadata.generation)" = "1/$rv/$gen" ] ||
  fail "put back: want size 1 at rv $rv generation $gen: $BODY"
http PATCH $W/pinned '{"spec":{"color":"blue"}}' application/merge-patch+json
[ "$(jbody .metadata.generation)" = $((gen + 1)) ] || fail "a spec change the webhook keeps is a new generation: $BODY"
pass "an update the webhook reverts is a no-op; the generation follows the patched object"

http POST $W "$(widget b '"patch":"bad"')"
expect_code 500 "a patch that cannot apply, under Fail"
jbody .message | grep -q 'failed calling webhook "mut.hook.test": JSONPatch could not be applied' || fail "text: $BODY"
http PUT $M/mut "$(cfg MutatingWebhookConfiguration mut Ignore /mutate)"
expect_code 200 "switch to Ignore"
http POST $W "$(widget b '"patch":"bad"')"
expect_code 201 "a patch that cannot apply, under Ignore: admitted unpatched"
kill "$HOOK_PID"; wait "$HOOK_PID" 2>/dev/null || true
http DELETE $V/val
http POST $W "$(widget down '"patch":"v3"')"
expect_code 201 "mutating webhook down under Ignore"
[ "$(jbody '.metadata.labels.mutated // "none"')" = none ] || fail "down: $BODY"
pass "failurePolicy Fail and Ignore for the mutating webhook"
stop_server
