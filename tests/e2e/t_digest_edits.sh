#!/usr/bin/env bash
# e2e_digest_edits_real: targets read from their digests, on the real API server (PO_APISERVER=real). A ServiceDefaults with a lua
# extension and three PropertyOverrides; then other clients edit it (kubectl patch: our entry
# dropped, the lua entry moved after ours, another extension added; kubectl replace of the whole
# object with the lua entry alone; deleted and created again with our old entries copied in): the
# controller repairs each, and its reconciles read digests (propertyoverride_target_reads_total).
#   PO_APISERVER=real bash tests/e2e/t_digest_edits.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1

cat >"$e2e_work/web.yaml" <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web}
spec:
  protocol: http
  envoyExtensions:
    - name: builtin/lua
      required: false
      arguments: {ProxyType: connect-proxy, Listener: inbound, Script: "function envoy_on_request(r) end"}
YAML
override() { # name target value [priority]
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s}\nspec:\n  targetRef: {name: %s}\n  priority: %s\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n---\n' "$1" "$2" "${4:-0}" "$3"
}
kubectl apply -f "$e2e_work/web.yaml" >/dev/null
{ override a web 10; override b web 20; override c web 30; } | kubectl apply -f - >/dev/null
check "programmed" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s
want="builtin/lua a@1 b@1 c@1"
eventually "web: lua, then ours" 30 "$want" entries servicedefaults web
reads() { metric "propertyoverride_target_reads_total{from=\"$1\"}"; }
programmed_all() { [ "$(kubectl get propertyoverrides -o json | jq -r '[.items[].status.conditions[] | select(.type=="Programmed") | .status] | unique | join(",")')" = True ]; }

# one more PropertyOverride: its reconcile from the digest (one JSON Patch add)
d0=$(reads digest)
override d web 40 | kubectl apply -f - >/dev/null
want="builtin/lua a@1 b@1 c@1 d@1"
eventually "d added" 30 "$want" entries servicedefaults web
sleep 1
d1=$(reads digest)
check "reconciles read the digest ($d0 -> $d1)" test "${d1%.*}" -gt "${d0%.*}"

# ---- others' edits ----
kubectl patch servicedefaults web --type=json -p '[{"op":"remove","path":"/spec/envoyExtensions/2"}]' >/dev/null
eventually "b's dropped entry restored" 30 "$want" entries servicedefaults web
kubectl patch servicedefaults web --type=json -p '[{"op":"move","from":"/spec/envoyExtensions/0","path":"/spec/envoyExtensions/4"}]' >/dev/null
eventually "lua moved after ours: ours moved after it again" 30 "$want" entries servicedefaults web
kubectl patch servicedefaults web --type=json -p '[{"op":"add","path":"/spec/envoyExtensions/-","value":{"name":"builtin/aws/lambda","required":false,"arguments":{"ARN":"arn:aws:lambda:us-east-1:1:function:f"}}}]' >/dev/null
eventually "an extension added after ours: ours moved after it" 30 "builtin/lua builtin/aws/lambda a@1 b@1 c@1 d@1" entries servicedefaults web
kubectl patch servicedefaults web --type=json -p '[{"op":"replace","path":"/spec/envoyExtensions/3/arguments/Patches/0/Value","value":99}]' >/dev/null
eventually "b's drifted value repaired" 30 "10 20 30 40" sh -c "kubectl get servicedefaults web -o json | jq -r '[.spec.envoyExtensions[] | select(.arguments.PropertyOverride) | .arguments.Patches[0].Value] | join(\" \")'"
kubectl patch servicedefaults web --type=json -p '[{"op":"replace","path":"/spec/envoyExtensions/2/required","value":true}]' >/dev/null
eventually "a's required repaired" 30 "false" kubectl get servicedefaults web -o jsonpath='{.spec.envoyExtensions[2].required}'
kubectl replace -f "$e2e_work/web.yaml" >/dev/null
eventually "kubectl replace: ours back" 30 "$want" entries servicedefaults web

# ---- deleted and created again with our old entries in it (a copy: bound to the old uid) ----
kubectl get servicedefaults web -o json | jq 'del(.metadata.uid,.metadata.resourceVersion,.metadata.creationTimestamp,.metadata.generation,.metadata.managedFields)' >"$e2e_work/copy.json"
old_uid=$(kubectl get servicedefaults web -o jsonpath='{.metadata.uid}')
# the controller paused meanwhile (else it creates web again itself, between the two)
kill -STOP "$LC_CONTROLLER_PID"
kubectl delete servicedefaults web --wait=true >/dev/null
kubectl create -f "$e2e_work/copy.json" >/dev/null || bad "the copy not created"
kill -CONT "$LC_CONTROLLER_PID"
new_uid=$(kubectl get servicedefaults web -o jsonpath='{.metadata.uid}')
bound() { kubectl get servicedefaults web -o json | jq -r --arg u "$new_uid" '[.spec.envoyExtensions[] | select(.arguments.PropertyOverride.targetUID == $u) | .arguments.PropertyOverride.name] | join(" ")'; }
eventually "re-created ($old_uid -> $new_uid): our entries bound to the new uid" 30 "a b c d" bound
stale() { kubectl get servicedefaults web -o json | jq -r --arg u "$old_uid" '[.spec.envoyExtensions[] | select(.arguments.PropertyOverride.targetUID == $u)] | length'; }
echo "entries still bound to the old uid (look-alikes, left as they are): $(stale); entries: $(entries servicedefaults web)"
# one more PropertyOverride on the re-created target, and one deleted
override e web 50 | kubectl apply -f - >/dev/null
kubectl delete propertyoverride a --wait=false >/dev/null
eventually "e added and a removed on the re-created target" 30 "b c d e" bound

eventually "every PropertyOverride Programmed" 30 "" sh -c "kubectl get propertyoverrides -o json | jq -r '.items[] | select([.status.conditions[] | select(.type==\"Programmed\" and .status!=\"True\")] | length > 0) | .metadata.name'"
echo "target reads: digest $(reads digest), digest-then-object $(reads digest-then-object), object $(reads object)"
errs=$(grep -c '"level":"error"\|TargetError' "$LC_WORK/controller.log" || true)
echo "controller log errors/TargetError lines: $errs"
grep -m5 'error\|TargetError' "$LC_WORK/controller.log" | cut -c1-300
finish
