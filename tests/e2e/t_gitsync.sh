#!/usr/bin/env bash
# GitOps with the target itself in git (docs/gitops.md, issue 11 part 3): a ServiceDefaults whose
# git version lists its own envoyExtensions (a builtin/lua entry) is re-applied 20 times,
# client-side and --server-side --force-conflicts, while PropertyOverrides program entries into
# it. envoyExtensions is an atomic list, so each apply of the git version replaces it; the
# mutating webhook (deploy/'s own MutatingWebhookConfiguration, dialled at the local controller)
# must put our entries back within the same write. The never-regress observer watches every
# revision: none may lack a live entry. Then: `kubectl diff` shows no drift; an entry the
# controller removes (its PropertyOverride deleted) is not put back by later applies; with the
# controller (and so the webhook) down, applies strip the entries (failurePolicy Ignore lets
# them through) and the controller's repair restores them once it is back.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
obs_start || exit 1
lc_controller || exit 1
lc_register_webhook Fail
e2e_register_mutating || exit 1

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
# the same object after a change in git (protocol)
sed 's/protocol: http/protocol: grpc/' "$e2e_work/web.yaml" >"$e2e_work/web-grpc.yaml"
# a target whose git version never listed envoyExtensions, then does (the first apply that lists
# them replaces the controller's list)
printf 'apiVersion: consul.hashicorp.com/v1alpha1\nkind: ServiceDefaults\nmetadata: {name: api}\nspec:\n  protocol: http\n' >"$e2e_work/api.yaml"
sed 's/metadata: {name: web}/metadata: {name: api}/' "$e2e_work/web.yaml" >"$e2e_work/api-ext.yaml"
override() { # name target value
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n---\n' "$1" "$2" "$3"
}
{ override a-web web 10; override b-web web 20; override a-api api 30; } >"$e2e_work/overrides.yaml"

kubectl apply -f "$e2e_work/web.yaml" >/dev/null
kubectl apply -f "$e2e_work/api.yaml" >/dev/null
kubectl apply -f "$e2e_work/overrides.yaml" >/dev/null
check "programmed" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s
eventually "web holds the lua entry, then ours" 30 "builtin/lua a-web@1 b-web@1" entries servicedefaults web
eventually "api holds ours" 30 "a-api@1" entries servicedefaults api
gen0=$(kubectl get servicedefaults web -o jsonpath='{.metadata.generation}')

# ---- 20 re-applies of the git version, both ways; the webhook keeps the entries in each write ----
obs_mark "re-applies"
rounds=${PO_GITSYNC_ROUNDS:-20}
for ((i = 1; i <= rounds; i++)); do
  kubectl apply -f "$e2e_work/web.yaml" >/dev/null 2>"$e2e_work/apply.err" || bad "round $i: client-side apply: $(cat "$e2e_work/apply.err")"
  kubectl apply --server-side --force-conflicts -f "$e2e_work/web.yaml" >/dev/null 2>"$e2e_work/apply.err" ||
    bad "round $i: server-side apply: $(cat "$e2e_work/apply.err")"
done
check "web: still exactly the lua entry and ours after $rounds rounds" test "$(entries servicedefaults web)" = "builtin/lua a-web@1 b-web@1"
check "web: the unchanged git version made no new generation" test "$(kubectl get servicedefaults web -o jsonpath='{.metadata.generation}')" = "$gen0"

obs_mark "changes"
for ((i = 1; i <= rounds / 4; i++)); do
  kubectl apply -f "$e2e_work/web-grpc.yaml" >/dev/null || bad "change $i: client-side apply"
  kubectl apply --server-side --force-conflicts -f "$e2e_work/web.yaml" >/dev/null || bad "change $i: server-side apply"
done
kubectl apply -f "$e2e_work/api-ext.yaml" >/dev/null || bad "api: the git version with envoyExtensions"
kubectl apply --server-side --force-conflicts -f "$e2e_work/api-ext.yaml" >/dev/null || bad "api: server-side"
check "api: the lua entry from git, ours kept" test "$(entries servicedefaults api)" = "builtin/lua a-api@1"
check "web: the user's field is as last applied" test "$(kubectl get servicedefaults web -o jsonpath='{.spec.protocol}')" = http

# ---- kubectl diff: no drift for our entries ----
kubectl diff -f "$e2e_work/web.yaml" >"$e2e_work/diff.txt" 2>&1
rc=$?
check "kubectl diff (client-side) of the git version: no drift (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || head -30 "$e2e_work/diff.txt"
kubectl diff --server-side --force-conflicts -f "$e2e_work/web.yaml" >"$e2e_work/diff.txt" 2>&1
rc=$?
check "kubectl diff --server-side of the git version: no drift (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || head -30 "$e2e_work/diff.txt"
# Flux's drift detection: a server-side apply dry run as kustomize-controller
kubectl diff --server-side --field-manager=kustomize-controller --force-conflicts -f "$e2e_work/web.yaml" >"$e2e_work/diff.txt" 2>&1
rc=$?
check "kubectl diff as Flux's field manager: no drift (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || head -30 "$e2e_work/diff.txt"
# Argo CD's ignoreDifferences: docs/gitops.md's jq expression, run as Argo CD runs it (del of the
# paths it selects) on the live object, leaves exactly the git version's spec
sel=$(sed -n "s/^ *- *'\(\.spec\.envoyExtensions\[\].*\)'$/\1/p" "$top/docs/gitops.md" | head -1)
check "docs/gitops.md holds the jq expression" test -n "$sel"
live_spec=$(kubectl get servicedefaults web -o json | jq -c "del($sel) | .spec")
git_spec=$(kubectl create --dry-run=client -o json -f "$e2e_work/web.yaml" | jq -c .spec)
check "Argo CD's jq expression selects exactly our entries ($sel)" test "$live_spec" = "$git_spec"
check "... and selects nothing in the git version" test "$(kubectl create --dry-run=client -o json -f "$e2e_work/web.yaml" | jq -c "del($sel) | .spec")" = "$git_spec"
kubectl diff -f "$e2e_work/web-grpc.yaml" >"$e2e_work/diff.txt" 2>&1
contains "kubectl diff still shows a real change in git" "$(cat "$e2e_work/diff.txt")" "+  protocol: grpc"

# ---- an entry the controller removes stays removed ----
obs_mark "removal"
kubectl delete propertyoverride a-web --wait=true --timeout=60s >/dev/null
eventually "a-web's entry is gone" 30 "builtin/lua b-web@1" entries servicedefaults web
for ((i = 1; i <= 3; i++)); do
  kubectl apply -f "$e2e_work/web.yaml" >/dev/null
  kubectl apply --server-side --force-conflicts -f "$e2e_work/web.yaml" >/dev/null
done
check "re-applies do not bring a-web's entry back" holds 2 sh -c "[ \"\$(kubectl get servicedefaults web -o json | jq -r '[.spec.envoyExtensions[] | .arguments.PropertyOverride.name // .name] | join(\" \")')\" = 'builtin/lua b-web' ]"
check "observer: no revision lost a live entry" obs_stop
check "re-applies: no write dropped an entry" test "$(obs_figure re-applies dropping_writes)" = 0
check "changes: no write dropped an entry" test "$(obs_figure changes dropping_writes)" = 0
echo "re-applies: $(obs_figure re-applies target_writes) target revisions for $((2 * rounds)) applies"

# ---- the webhook down: failurePolicy Ignore lets the apply through, the repair restores ----
kill "$LC_CONTROLLER_PID"
wait "$LC_CONTROLLER_PID" 2>/dev/null
kubectl apply -f "$e2e_work/web.yaml" >/dev/null 2>"$e2e_work/apply.err" || bad "webhook down: the apply was refused: $(cat "$e2e_work/apply.err")"
check "webhook down: the apply stripped our entry (nothing puts it back yet)" test "$(entries servicedefaults web)" = "builtin/lua"
lc_controller || exit 1
lc_register_webhook Fail # both at the new webhook port
e2e_register_mutating || exit 1
eventually "webhook down: the controller's repair restores the entry" 30 "builtin/lua b-web@1" entries servicedefaults web
kubectl apply -f "$e2e_work/web.yaml" >/dev/null
check "webhook back: the next apply keeps it" test "$(entries servicedefaults web)" = "builtin/lua b-web@1"
check "the mutating webhook answered (metric)" test "$(metric 'propertyoverride_webhook_mutations_total{outcome="patched"}')" != 0
finish
