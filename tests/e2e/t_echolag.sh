#!/usr/bin/env bash
# A target's watch lagging our own writes (the local server's holdWatchMs fault: every
# ServiceDefaults or ProxyDefaults event sent 3 s after its write), and a PropertyOverride deleted
# right after the write that added its entry was answered: the reconcile its deletion queues finds
# the cache at the version that write replaced, without the entry. Judged there, the target looked
# current, the finalizer went, and the echo (the entry in it) was skipped as our own write: the
# entry stayed for good (CI's e2e_chaos seed 7, po-0768). Every deleted PropertyOverride's entry
# must leave its target, and its deletion finish; the ones kept, stay. The same shape on Istio: an
# EnvoyFilter created, its ADDED event held, its PropertyOverride deleted at once: the EnvoyFilter
# must go. Local only (fault injection).
. "$(dirname "$0")/lib.sh"
build=$1
hold=${PO_ECHOLAG_HOLD_MS:-3000}
[ "${LC_KIND:-local}" = local ] || { echo "skipped: holdWatchMs is the local server's fault"; exit 0; }
lc_start "$build" "$e2e_work" || exit 1
kubectl apply -f crds/istio/networking.istio.io_envoyfilters.yaml >/dev/null
lc_crds_ready envoyfilters.networking.istio.io || exit 1
for ns in shop istio-system; do kubectl create namespace "$ns" >/dev/null; done
lc_controller --workers 2 --istio auto || exit 1
faults() { lc_curl /admin/faults -X POST -H 'Content-Type: application/json' -d "$1" >/dev/null; }
po() { # name kind target value
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: %s}\nspec:\n  targetRef: {group: consul.hashicorp.com, kind: %s, name: %s}\n  patches:\n    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n      path: /outlier_detection/max_ejection_percent\n      value: %s\n' "$1" "$2" "$3" "$4"
}
path_of() { # kind name -> the target's API path
  case $1 in
    ServiceDefaults) echo "/apis/consul.hashicorp.com/v1alpha1/namespaces/default/servicedefaults/$2" ;;
    ProxyDefaults) echo "/apis/consul.hashicorp.com/v1alpha1/namespaces/default/proxydefaults/$2" ;;
  esac
}
has_entry() { # kind name po: the target (read from the server, not a cache) holds po's entry
  lc_curl "$(path_of "$1" "$2")" | jq -e --arg p "$3" \
    '[.spec.envoyExtensions // [] | .[] | .arguments.PropertyOverride.name // empty] | index($p) != null' >/dev/null
}
po_gone() { [ "$(lc_curl "/apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides/$1" | jq -r .code)" = 404 ]; }
# create po, wait (reading the server) until the controller's write added its entry, delete po
# at once: its echo is still held, the controller's cache at the version before that write
create_then_delete() { # kind target po value
  local i
  po "$3" "$1" "$2" "$4" | kubectl apply -f - >/dev/null || return 1
  for ((i = 0; i < 400; i++)); do has_entry "$1" "$2" "$3" && break; sleep 0.025; done
  has_entry "$1" "$2" "$3" || { echo "the entry of $3 never came" >&2; return 1; }
  lc_curl "/apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides/$3" -X DELETE >/dev/null
}

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: web}
spec: {protocol: http}
---
apiVersion: consul.hashicorp.com/v1alpha1
kind: ProxyDefaults
metadata: {name: global}
spec: {}
YAML
{ po keep ServiceDefaults web 10; echo ---; po pkeep ProxyDefaults global 11; } | kubectl apply -f - >/dev/null
eventually "set-up: web holds keep's entry" 30 "keep@1" entries servicedefaults web
eventually "set-up: global holds pkeep's entry" 30 "pkeep@1" entries proxydefaults global

# the targets' events held: the hold (and the controller's batching of PropertyOverride events)
# over before the next case, so that nothing else queues the target meanwhile
settle() { sleep $((hold / 1000 + 3)); }
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"servicedefaults\"}"
# 1. the chaos run's case: deleted right after the write that added its entry was answered
check "ServiceDefaults: gone created, its entry written, deleted at once" create_then_delete ServiceDefaults web gone 67
settle
# 2. one after the other, each deleted once its entry is in: gone3's create is queued with gone2's
# deletion, its write judged (by then) on the version before gone2's
two_in_a_row() { create_then_delete ServiceDefaults web gone2 68 && create_then_delete ServiceDefaults web gone3 69; }
check "ServiceDefaults: two more, one after the other, each deleted at once" two_in_a_row
settle
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"proxydefaults\"}"
# 3. case 1 on the ProxyDefaults
check "ProxyDefaults: pgone created, its entry written, deleted at once" create_then_delete ProxyDefaults global pgone 70
settle
# 4. an Istio Service target: the EnvoyFilter's ADDED event held, the reconcile of the deletion
# found no EnvoyFilter in the cache, nothing to delete, released the finalizer; the event, once
# in, names a PropertyOverride that is gone: the EnvoyFilter stayed for good
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {selector: {app: api}, ports: [{port: 80}]}
YAML
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"envoyfilters\"}"
ef_path=/apis/networking.istio.io/v1alpha3/namespaces/shop/envoyfilters/propertyoverride-igone
ef_made() { [ "$(lc_curl "$ef_path" | jq -r .kind)" = EnvoyFilter ]; }
istio_create_then_delete() {
  local i
  po igone ServiceDefaults x 71 | sed 's/targetRef: {group: consul.hashicorp.com, kind: ServiceDefaults, name: x}/targetRef: {group: "", kind: Service, name: api}/; s/name: igone}/name: igone, namespace: shop}/' |
    kubectl apply -f - >/dev/null || return 1
  for ((i = 0; i < 400; i++)); do ef_made && break; sleep 0.025; done
  ef_made || { echo "the EnvoyFilter of igone never came" >&2; return 1; }
  lc_curl /apis/propertyoverride.io/v1alpha1/namespaces/shop/propertyoverrides/igone -X DELETE >/dev/null
}
check "Istio: igone created, its EnvoyFilter created, deleted at once" istio_create_then_delete
settle
# 5. a ServiceDefaults the controller created, its ADDED event held: a second PropertyOverride of
# it, queued at once, found no target in the cache and created it again: answered 409
# AlreadyExists and retried with backoff until the event came. It now waits for the event.
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"servicedefaults\"}"
conflicts() { curl -s "http://127.0.0.1:$LC_PROBE_PORT/metrics" |
  awk '/^rest_client_requests_total\{/ && /code="409"/ && /method="POST"/ {n += $2} END {print n + 0}'; }
before=$(conflicts)
create_twice() {
  local i
  po fresh1 ServiceDefaults fresh 72 | kubectl apply -f - >/dev/null || return 1
  for ((i = 0; i < 400; i++)); do has_entry ServiceDefaults fresh fresh1 && break; sleep 0.025; done
  has_entry ServiceDefaults fresh fresh1 || { echo "fresh was never created with fresh1's entry" >&2; return 1; }
  po fresh2 ServiceDefaults fresh 73 | kubectl apply -f - >/dev/null
}
check "ServiceDefaults: fresh created for fresh1, fresh2 applied before fresh's event came" create_twice
eventually "fresh: both entries in" 30 "fresh1@1 fresh2@1" entries servicedefaults fresh
check "fresh: created once (no create answered 409 AlreadyExists)" test "$(conflicts)" = "$before"
settle
faults '{"holdWatchMs":0,"holdWatchResource":""}'
ef_state() { [ "$(lc_curl "$ef_path" | jq -r .code)" = 404 ] && echo deleted || echo present; }
eventually "Istio: igone's EnvoyFilter deleted" 30 deleted ef_state
igone_state() { [ "$(lc_curl /apis/propertyoverride.io/v1alpha1/namespaces/shop/propertyoverrides/igone | jq -r .code)" = 404 ] && echo deleted || echo present; }
eventually "Istio: igone's deletion finished" 30 deleted igone_state
eventually "web: the deleted ones' entries left it, keep's stays" 30 "keep@1" entries servicedefaults web
eventually "global: pgone's entry left it, pkeep's stays" 30 "pkeep@1" entries proxydefaults global
po_state() { po_gone "$1" && echo deleted || echo present; }
for p in gone gone2 gone3 pgone; do
  eventually "$p: its deletion finished (finalizer released)" 30 deleted po_state "$p"
done
names() { kubectl get "$1" "$2" -o json | jq -c '[.spec.envoyExtensions // [] | .[].arguments.PropertyOverride.name]'; }
both_right() { [ "$(names servicedefaults web)" = '["keep"]' ] && [ "$(names proxydefaults global)" = '["pkeep"]' ]; }
# nothing left to do: a while later the targets are still right
check "web and global still right 3 s later" holds 3 both_right
finish
