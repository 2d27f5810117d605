#!/usr/bin/env bash
# adv-delta: a target's update sent as a JSON Patch (po_Consul_Delta) over a cache that is behind a
# tenant's edit. The patch's operations are applied to the object as the server holds it BEFORE its
# resourceVersion precondition is compared (the real kube-apiserver's patch handler and the local
# server alike): an operation whose index is past the end of the tenant's shorter list, or whose
# path the tenant removed, fails the patch with 422 Invalid, not 409 Conflict. A whole PUT over the
# same stale version is a 409, a silent retry; a 422 is a failed write: TargetError on every
# PropertyOverride of the target (two status writes and two Events each, there and back) and a
# backoff. The target's ServiceDefaults watch is held (holdWatchMs) so the controller's cache is
# behind the tenant's edit for a few seconds: every case below is a race the precondition must turn
# into a conflict. Then: the target converges to exactly what the PropertyOverrides want, foreign
# extensions as the tenant left them. Local only (fault injection).
. "$(dirname "$0")/lib.sh"
build=$1
hold=${PO_ADV_DELTA_HOLD_MS:-3000}
[ "${LC_KIND:-local}" = local ] || { echo "skipped: holdWatchMs is the local server's fault"; exit 0; }
lc_start "$build" "$e2e_work" || exit 1
lc_controller --log-level info || exit 1
faults() { lc_curl /admin/faults -X POST -H 'Content-Type: application/json' -d "$1" >/dev/null; }
SD=/apis/consul.hashicorp.com/v1alpha1/namespaces/default/servicedefaults
P=/apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides
po() { # name target value
  printf '{"apiVersion":"propertyoverride.io/v1alpha1","kind":"PropertyOverride","metadata":{"name":"%s"},"spec":{"targetRef":{"name":"%s"},"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/outlier_detection/max_ejection_percent","value":%s}]}}' "$1" "$2" "$3" |
    lc_curl "$P" -X POST -H 'Content-Type: application/json' -d @- -o /dev/null -w '%{http_code}'
}
jpatch() { # target json-patch -> http code
  lc_curl "$SD/$1" -X PATCH -H 'Content-Type: application/json-patch+json' -d "$2" -o /dev/null -w '%{http_code}'
}
LUA='{"name":"builtin/lua","arguments":{"ProxyType":"connect-proxy","Listener":"inbound","Script":"function envoy_on_request(r) end"}}'
target() { # name extensions-json
  printf '{"apiVersion":"consul.hashicorp.com/v1alpha1","kind":"ServiceDefaults","metadata":{"name":"%s"},"spec":{"protocol":"http","envoyExtensions":%s}}' "$1" "$2" |
    kubectl create -f - >/dev/null
}
reason() { kubectl get propertyoverride "$1" -o jsonpath='{.status.conditions[?(@.type=="Programmed")].reason}' 2>/dev/null; }
# Watches the Programmed reasons of the named PropertyOverrides for that many seconds: prints each
# one seen saying TargetError (none: nothing). Overlapping (their patches touch one field) is fine.
watch_reasons() { # seconds names...
  local end=$((SECONDS + $1)) p r seen=""
  shift
  while [ "$SECONDS" -lt "$end" ]; do
    for p in "$@"; do
      r=$(reason "$p")
      [ "$r" = TargetError ] || continue
      case " $seen " in *" $p:$r "*) ;; *) seen="$seen $p:$r" ;; esac
    done
    sleep 0.1
  done
  echo "${seen# }"
}
settle() { sleep $((hold / 1000 + 2)); }

# 1. web = [lua, a]; the tenant removes lua (its own extension) while the watch is held; b is
#    created: the plan over the cache is [lua, a, b], the patch "add at 2" on the server's [a]
target web "[$LUA]"
po a web 1 >/dev/null
eventually "set-up: web holds lua then a" 30 "builtin/lua a@1" entries servicedefaults web
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"servicedefaults\"}"
check "the tenant removes lua from web" test "$(jpatch web '[{"op":"remove","path":"/spec/envoyExtensions/0"}]')" = 200
po b web 2 >/dev/null
got=$(watch_reasons $((hold / 1000 + 2)) a b)
check "1: lua removed behind the cache, b joins: no TargetError on a or b (got '$got')" test -z "$got"
faults '{"holdWatchMs":0,"holdWatchResource":""}'
eventually "1: web converges to a, b (lua stays removed)" 30 "a@1 b@1" entries servicedefaults web

# 2. api = [a2, lua, b2] (lua after a2: the plan moves ours after it); the tenant empties the list
#    (envoyExtensions: []) behind the cache; b2 is deleted: the plan is [lua, a2], a remove by index
#    on the server's empty list
target api "[]"
po a2 api 3 >/dev/null
po b2 api 4 >/dev/null
eventually "set-up: api holds a2, b2" 30 "a2@1 b2@1" entries servicedefaults api
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"servicedefaults\"}"
check "the tenant empties api's envoyExtensions" test "$(jpatch api '[{"op":"replace","path":"/spec/envoyExtensions","value":[]}]')" = 200
lc_curl "$P/b2" -X DELETE -o /dev/null
got=$(watch_reasons $((hold / 1000 + 2)) a2)
check "2: list emptied behind the cache, b2 deleted: no TargetError on a2 (got '$got')" test -z "$got"
faults '{"holdWatchMs":0,"holdWatchResource":""}'
eventually "2: api converges to a2 alone" 30 "a2@1" entries servicedefaults api
b2_gone() { [ "$(lc_curl "$P/b2" | jq -r .code)" = 404 ] && echo gone; }
eventually "2: b2's deletion finished" 30 gone b2_gone

# 3. shop = [a3]; the tenant removes spec.envoyExtensions altogether behind the cache; b3 joins:
#    "add at 1" under a member that is gone
target shop "[]"
po a3 shop 5 >/dev/null
eventually "set-up: shop holds a3" 30 "a3@1" entries servicedefaults shop
faults "{\"holdWatchMs\":$hold,\"holdWatchResource\":\"servicedefaults\"}"
check "the tenant removes shop's envoyExtensions" test "$(jpatch shop '[{"op":"remove","path":"/spec/envoyExtensions"}]')" = 200
po b3 shop 6 >/dev/null
got=$(watch_reasons $((hold / 1000 + 2)) a3 b3)
check "3: list removed behind the cache, b3 joins: no TargetError (got '$got')" test -z "$got"
faults '{"holdWatchMs":0,"holdWatchResource":""}'
eventually "3: shop converges to a3, b3" 30 "a3@1 b3@1" entries servicedefaults shop

# a conflict is retried (its text starts "conflict: "); any other failure is the 422 above
failed=$(grep '"reconcile failed' "$LC_WORK/controller.log" | grep -vc '"error":"conflict: ')
check "no reconcile failed but by a conflict (got $failed; the first: $(grep '"reconcile failed' "$LC_WORK/controller.log" | grep -v '"error":"conflict: ' | grep -m1 -o '"error":"[^"]*'))" test "$failed" = 0
finish
