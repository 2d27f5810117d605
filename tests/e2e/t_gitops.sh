#!/usr/bin/env bash
# GitOps: the services' own ServiceDefaults (user fields such as protocol) are applied from files
# again and again, client-side and --server-side, also with a changed field, while
# PropertyOverrides (applied from files too, and edited meanwhile) program entries into them and
# into targets the controller created. The never-regress observer must never fire, the user's
# fields must be exactly as last applied and every target must hold exactly its entries.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
obs_start || exit 1
lc_controller || exit 1
lc_register_webhook Fail
targets() { # protocol
  for i in $(seq -w 0 19); do
    printf 'apiVersion: consul.hashicorp.com/v1alpha1\nkind: ServiceDefaults\nmetadata: {name: git-%s}\nspec:\n  protocol: %s\n  balanceInboundConnections: exact_balance\n---\n' "$i" "$1"
  done
}
overrides() { # value
  for i in $(seq -w 0 39); do
    local t
    printf -v t 'git-%02d' $((10#$i % 20))
    [ "$i" -ge 30 ] && t=made-$((10#$i % 5))
    printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: gpo-%s}\nspec:\n  targetRef: {name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n---\n' "$i" "$t" "$1"
  done
}
targets http >"$e2e_work/targets-http.yaml"
targets grpc >"$e2e_work/targets-grpc.yaml"
overrides 10 >"$e2e_work/overrides-1.yaml"
overrides 20 >"$e2e_work/overrides-2.yaml"
kubectl apply -f "$e2e_work/targets-http.yaml" >/dev/null
kubectl apply -f "$e2e_work/overrides-1.yaml" >/dev/null
check "programmed" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s

# the expected entries of a target, from the objects themselves
want() { kubectl get propertyoverrides -o json | jq -r --arg t "$1" '[.items[] | select(.spec.targetRef.name == $t) | "\(.metadata.name)@\(.metadata.generation)"] | sort | join(" ")'; }
all_entries_right() {
  local t
  for t in $(seq -f 'git-%02g' 0 19) made-0 made-1 made-2 made-3 made-4; do
    [ "$(entries servicedefaults "$t" | tr ' ' '\n' | sort | xargs)" = "$(want "$t")" ] || { echo "$t: $(entries servicedefaults "$t") want $(want "$t")"; return 1; }
  done
  echo yes
}
eventually "every target holds exactly its entries" 30 yes all_entries_right

obs_mark "re-applies"
for round in 1 2 3; do
  kubectl apply -f "$e2e_work/targets-http.yaml" >/dev/null || bad "round $round: client-side apply"
  kubectl apply --server-side -f "$e2e_work/targets-http.yaml" >/dev/null || bad "round $round: server-side apply"
  # a change in git while PropertyOverrides change too
  kubectl apply -f "$e2e_work/overrides-$((round % 2 + 1)).yaml" >/dev/null
  kubectl apply -f "$e2e_work/targets-grpc.yaml" >/dev/null || bad "round $round: client-side apply of a change"
  kubectl apply --server-side --force-conflicts -f "$e2e_work/targets-grpc.yaml" >/dev/null || bad "round $round: server-side apply of a change"
  kubectl apply -f "$e2e_work/overrides-$((round % 2 + 1)).yaml" >/dev/null # again: no change
  kubectl apply --server-side -f "$e2e_work/targets-grpc.yaml" >/dev/null || bad "round $round: server-side re-apply"
  kubectl apply -f "$e2e_work/targets-http.yaml" >/dev/null || bad "round $round: back to http"
done
check "programmed after the re-applies" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=60s
eventually "every target holds exactly its entries after the re-applies" 30 yes all_entries_right
check "the user's fields are as last applied" test "$(kubectl get servicedefaults -o json | jq -r '[.items[] | select(.metadata.name | startswith("git-")) | .spec.protocol + "/" + .spec.balanceInboundConnections] | unique | join(" ")')" = "http/exact_balance"

# the PropertyOverrides pruned from git: their entries go, the services' own objects stay
obs_mark "pruned"
kubectl delete -f "$e2e_work/overrides-1.yaml" --wait=true --timeout=60s >/dev/null
eventually "the services' own objects stay, without entries" 30 "20" sh -c "kubectl get servicedefaults -o json | jq '[.items[] | select((.metadata.name | startswith(\"git-\")) and ((.spec.envoyExtensions // []) | length == 0))] | length'"
eventually "the targets the controller made are gone" 30 "" sh -c "kubectl get servicedefaults -o name | grep made-"
check "observer: no revision lost a live entry or target, none carries an invalid entry" obs_stop
check "re-applies: no target DELETED" test "$(obs_figure re-applies deleted)" = 0
finish
