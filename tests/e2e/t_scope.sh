#!/usr/bin/env bash
# A webhook that outlives its controller (issue 21 item 4), with the ValidatingWebhookConfiguration
# exactly as deploy/ and the chart ship it (rules, failurePolicy Fail, matchConditions), only its
# clientConfig pointed at this run's controller or at a dead loopback port:
#   - the controller up, its webhook unreachable: a PropertyOverride alone in its target is deleted
#     at once (the entry's removal and the finalizer's are never sent to the webhook); one whose
#     target keeps another entry waits (that write is judged), and finishes within seconds of the
#     webhook's return however long it was down (the retry's backoff is capped);
#   - the controller down: label, annotation and finalizer patches of a PropertyOverride pass, and
#     so does the documented removal of a stuck one's finalizer; a spec change or a create is
#     refused; a ServiceDefaults holding our entries takes a protocol change, another extension
#     inserted before ours or removed, labels, while a change of our entry, a new entry or a new
#     object holding one is refused; a protocol change of one 5,000 extensions long passes (the
#     conditions' cost);
#   - lc_register_webhook's copy (what the other suites run under) has deploy/'s matchConditions.
# Also on the real kube-apiserver (e2e_scope_real).
. "$(dirname "$0")/lib.sh"
build=$1
outage=${PO_SCOPE_OUTAGE:-45} # seconds the webhook stays unreachable under a pending deletion
lc_start "$build" "$e2e_work" || exit 1
lc_controller || exit 1
lc_register_webhook Fail
dead=$(lc_free_port) # nothing ever listens there

# --- lc_register_webhook's copy is deploy/'s --------------------------------------------------------
# The ValidatingWebhookConfiguration of a render, as JSON.
vwc_of_render() { awk 'function out() { if (doc ~ /\nkind: ValidatingWebhookConfiguration\n/) printf "%s", doc } /^---$/ { out(); doc = "\n"; next } { doc = doc $0 "\n" } END { out() }' |
  kubectl create --dry-run=client -o json -f -; }
kubectl kustomize "$top/deploy" | vwc_of_render >"$e2e_work/deploy-vwc.json"
"$top/tests/deploy/build-helmrender.sh" "$LC_BUILD/tests/deploy/helmrender" >/dev/null ||
  { bad "building tests/deploy/helmrender"; finish; exit 1; }
"$LC_BUILD/tests/deploy/helmrender" --chart "$top/helm/propertyoverride" --namespace propertyoverride-system |
  vwc_of_render >"$e2e_work/chart-vwc.json"
conds='[.webhooks[] | {name, matchConditions}]'
check "lc_register_webhook registers deploy/'s matchConditions" test \
  "$(kubectl get validatingwebhookconfiguration propertyoverride -o json | jq -c "$conds")" = "$(jq -c "$conds" "$e2e_work/deploy-vwc.json")"
check "the chart renders deploy/'s webhooks" test \
  "$(jq -c '.webhooks | map(del(.clientConfig))' "$e2e_work/chart-vwc.json")" = "$(jq -c '.webhooks | map(del(.clientConfig))' "$e2e_work/deploy-vwc.json")"

# register deploy|chart PORT: that configuration, created afresh, calling https://127.0.0.1:PORT.
register() {
  local ca
  ca=$(base64 -w0 <"$LC_WORK/tls/ca.crt")
  kubectl delete validatingwebhookconfiguration propertyoverride --ignore-not-found >/dev/null
  jq -c --arg url "https://127.0.0.1:$2/validate" --arg ca "$ca" '.webhooks[] |= (.clientConfig = {url: $url, caBundle: $ca})' \
    "$e2e_work/$1-vwc.json" | kubectl create -f - >/dev/null || bad "registering $1's configuration"
  # the API server's admission picks a new configuration up from its informer: wait until a write
  # it selects reaches the port it names (a create refused by the dead one, admitted by the live one)
  local i out
  for ((i = 0; i < 100; i++)); do
    out=$(override probe-$RANDOM gone 1 | kubectl create --dry-run=server -f - 2>&1)
    if [ "$2" = "$dead" ]; then grep -q "127.0.0.1:$dead" <<<"$out" && return 0
    else grep -q "created (server dry run)" <<<"$out" && return 0; fi
    sleep 0.1
  done
  bad "$1's configuration at port $2 did not take effect: $out"
}
override() { # name target value
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' "$1" "$2" "$3"
}
sd() { # name protocol extensions-json
  jq -cn --arg n "$1" --arg p "$2" --argjson x "$3" \
    '{apiVersion: "consul.hashicorp.com/v1alpha1", kind: "ServiceDefaults", metadata: {name: $n, namespace: "default"}, spec: {protocol: $p, envoyExtensions: $x}}'
}
lua='{"name":"builtin/lua","arguments":{"ProxyType":"connect-proxy","Listener":"inbound","Script":"function envoy_on_request(r) end"}}'
present() { kubectl get propertyoverride "$1" -o name >/dev/null 2>&1; }
gone() { ! present "$1"; }
refused_by() { # name webhook output
  case "$3" in
    *"failed calling webhook \"$2\""*) ok "$1" ;;
    *) bad "$1: not refused by the unreachable $2: $3" ;;
  esac
}

# --- set up with the webhook answering ------------------------------------------------------------
register deploy "$LC_WEBHOOK_PORT"
sd web http "[$lua]" | kubectl apply -f - >/dev/null
sd solo http '[]' | kubectl apply -f - >/dev/null
{ for p in keep del stuck1 stuck2 meta; do override "$p" web 10; echo ---; done; override alone solo 20; } | kubectl apply -f - >/dev/null
check "set up: every PropertyOverride programmed" sh -c 'kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s >/dev/null'
eventually "set up: web holds the lua entry and ours" 30 "builtin/lua del@1 keep@1 meta@1 stuck1@1 stuck2@1" entries servicedefaults web
eventually "set up: solo holds alone's" 30 "alone@1" entries servicedefaults solo
# (a valid entry of no PropertyOverride's, judged by the webhook on create)
jq -c --argjson l "$lua" '[range(5000) | {name: "x\(.)"}] + [$l, {name: "builtin/property-override", arguments: {Patches: [{ResourceFilter: {ResourceType: "cluster", TrafficDirection: "outbound"}, Op: "add", Path: "/outlier_detection/max_ejection_percent", Value: 10}]}}]' <<<null >"$e2e_work/big.json"
sd big http "$(cat "$e2e_work/big.json")" | kubectl create -f - >/dev/null 2>"$e2e_work/big.err" ||
  bad "creating big: $(head -c 300 "$e2e_work/big.err")"

# --- the controller up, its webhook unreachable -----------------------------------------------------
register deploy "$dead"
kubectl delete propertyoverride alone --wait=false >/dev/null
eventually "webhook unreachable: a PropertyOverride alone in its target is deleted (entry and finalizer not sent)" 30 "" \
  entries servicedefaults solo
check "webhook unreachable: ... and gone" holds 1 gone alone
kubectl delete propertyoverride del --wait=false >/dev/null
sleep "$outage"
check "webhook unreachable for ${outage} s: del, whose target keeps other entries, still waits (that write is judged)" present del
grep -q 'failed calling webhook' "$LC_WORK/controller.log" && ok "the controller's write was refused by the unreachable webhook" ||
  bad "the controller log shows no refusal: $(grep -c reconcile "$LC_WORK/controller.log") lines"
register deploy "$LC_WEBHOOK_PORT"
back=$SECONDS
for ((i = 0; i < 600; i++)); do gone del && break; sleep 0.1; done
took=$((SECONDS - back))
echo "figure: del deleted $took s after the webhook came back (outage ${outage} s)"
check "webhook back: the deletion finishes within 15 s (the retry's backoff is capped at 10 s), took $took s" \
  test "$(gone del && echo yes)" = yes -a "$took" -le 15
eventually "webhook back: web lost del's entry only" 30 "builtin/lua keep@1 meta@1 stuck1@1 stuck2@1" entries servicedefaults web

# --- the controller down: deploy/'s configuration, then the chart's ---------------------------------
kill "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
n=0
for config in deploy chart; do
  n=$((n + 1))
  register "$config" "$dead"
  # PropertyOverrides: metadata passes, spec is judged (refused: fail closed)
  out=$(kubectl label propertyoverride meta "pass=$n" --overwrite 2>&1)
  contains "$config, controller down: a label on a PropertyOverride passes" "$out" "labeled"
  out=$(kubectl annotate propertyoverride meta "pass=$n" --overwrite 2>&1)
  contains "$config, controller down: an annotation passes" "$out" "annotated"
  out=$(kubectl patch propertyoverride meta --type=json -p '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/hold"}]' 2>&1)
  contains "$config, controller down: a finalizer added by JSON patch passes" "$out" "patched"
  out=$(kubectl patch propertyoverride meta --type=merge -p '{"metadata":{"finalizers":["propertyoverride.io/finalizer"]}}' 2>&1)
  contains "$config, controller down: ... and removed by merge patch" "$out" "patched"
  out=$(kubectl patch propertyoverride meta --type=merge -p '{"spec":{"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/outlier_detection/max_ejection_percent","value":150}]}}' 2>&1)
  refused_by "$config, controller down: a spec change of a PropertyOverride is refused" validate.propertyoverride.io "$out"
  out=$(override "new$n" web 30 | kubectl create -f - 2>&1)
  refused_by "$config, controller down: a new PropertyOverride is refused" validate.propertyoverride.io "$out"
  # the stuck PropertyOverride and docs/install.md's fix, as written there
  kubectl delete propertyoverride "stuck$n" --wait=false >/dev/null
  check "$config, controller down: stuck$n hangs in Terminating" holds 1 present "stuck$n"
  fix=$(sed -n 's/^ *\(kubectl patch pov NAME -n NS --type=merge -p .*\)$/\1/p' "$top/docs/install.md" | head -1)
  check "$config: docs/install.md holds the fix for stuck PropertyOverrides" test -n "$fix"
  fix=${fix//NAME/stuck$n}
  out=$(eval "${fix//NS/default}" 2>&1)
  contains "$config, controller down: the documented fix passes ($fix)" "$out" "patched"
  check "$config, controller down: ... and stuck$n is gone" holds 1 gone "stuck$n"
  # ServiceDefaults holding our entries: everything but our entries passes
  protocol=grpc
  [ "$n" = 1 ] || protocol=http2
  out=$(kubectl patch servicedefaults web --type=merge -p "{\"spec\":{\"protocol\":\"$protocol\"}}" 2>&1)
  contains "$config, controller down: a protocol change of a ServiceDefaults holding our entries passes" "$out" "patched"
  out=$(kubectl patch servicedefaults web --type=json -p "[{\"op\":\"add\",\"path\":\"/spec/envoyExtensions/0\",\"value\":$lua}]" 2>&1)
  contains "$config, controller down: another extension inserted before ours (our entries move) passes" "$out" "patched"
  out=$(kubectl patch servicedefaults web --type=json -p '[{"op":"remove","path":"/spec/envoyExtensions/0"}]' 2>&1)
  contains "$config, controller down: ... and removed again passes" "$out" "patched"
  out=$(kubectl label servicedefaults web "pass=$n" --overwrite 2>&1)
  contains "$config, controller down: a label passes" "$out" "labeled"
  at=$(kubectl get servicedefaults web -o json | jq '[.spec.envoyExtensions[].name] | index("builtin/property-override")')
  out=$(kubectl patch servicedefaults web --type=json \
    -p "[{\"op\":\"replace\",\"path\":\"/spec/envoyExtensions/$at/arguments/Patches/0/Value\",\"value\":90}]" 2>&1)
  refused_by "$config, controller down: a change of our entry is refused" targets.validate.propertyoverride.io "$out"
  entry=$(kubectl get servicedefaults web -o json | jq -c ".spec.envoyExtensions[$at] | del(.arguments.PropertyOverride)")
  out=$(kubectl patch servicedefaults web --type=json -p "[{\"op\":\"add\",\"path\":\"/spec/envoyExtensions/-\",\"value\":$entry}]" 2>&1)
  refused_by "$config, controller down: a new builtin/property-override entry is refused" targets.validate.propertyoverride.io "$out"
  out=$(sd "other$n" http "[$entry]" | kubectl create -f - 2>&1)
  refused_by "$config, controller down: a new ServiceDefaults holding one is refused" targets.validate.propertyoverride.io "$out"
done
check "controller down: web still holds exactly the entries it had" test \
  "$(entries servicedefaults web)" = "builtin/lua keep@1 meta@1 stuck1@1 stuck2@1"
# The conditions' cost: 5,000 extensions beside an entry, the one CEL walk of
# holds-property-override and one list comparison (deploy/base/webhook.yaml says more).
t0=$SECONDS
out=$(kubectl patch servicedefaults big --type=merge -p '{"spec":{"protocol":"grpc"}}' 2>&1)
contains "controller down: a protocol change of a ServiceDefaults 5,000 extensions long passes (in $((SECONDS - t0)) s)" "$out" "patched"

# --- the controller back: it converges over what was written meanwhile --------------------------------
lc_controller || exit 1
register deploy "$LC_WEBHOOK_PORT"
check "back: keep and meta programmed" sh -c 'kubectl wait --for=condition=Programmed propertyoverride/keep propertyoverride/meta --timeout=60s >/dev/null'
check "back: meta kept its label and annotation" test \
  "$(kubectl get propertyoverride meta -o jsonpath='{.metadata.labels.pass}/{.metadata.annotations.pass}')" = "2/2"
finish
