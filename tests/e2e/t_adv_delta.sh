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
# extensions as the tenant left them. Local only (fault injection). Then, on either server
# (PO_APISERVER=real too): a tenant (adv_delta_racer.py) editing the other extensions of one target
# as fast as it can while PropertyOverrides join, leave and change priority there: the same races,
# as the timing brings them.
. "$(dirname "$0")/lib.sh"
build=$1
hold=${PO_ADV_DELTA_HOLD_MS:-3000}
lc_start "$build" "$e2e_work" || exit 1
lc_controller --log-level info || exit 1
faults() { lc_curl /admin/faults -X POST -H 'Content-Type: application/json' -d "$1" >/dev/null; }
SD=/apis/consul.hashicorp.com/v1alpha1/namespaces/default/servicedefaults
P=/apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides
po() { # name target value [priority]
  printf '{"apiVersion":"propertyoverride.io/v1alpha1","kind":"PropertyOverride","metadata":{"name":"%s"},"spec":{"targetRef":{"name":"%s"},"priority":%s,"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/outlier_detection/max_ejection_percent","value":%s}]}}' "$1" "$2" "${4:-0}" "$3" |
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

if [ "${LC_KIND:-local}" = local ]; then
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
# each case's 422 was sent again whole and answered 409; none was a patch wrong for an unchanged object
check "1-3: patches refused 422 were resent whole and met a conflict (got $(metric 'propertyoverride_target_patches_resent_total{outcome="conflict"}'))" \
  test "$(metric 'propertyoverride_target_patches_resent_total{outcome="conflict"}')" -ge 1
check "1-3: no patch was wrong for an unchanged object" \
  test "$(metric 'propertyoverride_target_patches_resent_total{outcome="written"}')" = 0
else
  echo "skipped cases 1-3: holdWatchMs is the local server's fault"
fi

# 4. the tenant racing: the other extensions added (between ours too), removed, moved, swapped
#    for RACE_S seconds while 12 PropertyOverrides join, 4 leave, 4 change priority, and the
#    patches of the others change as fast as curl sends them (each a write of the target). Then
#    race holds exactly the tenant's extensions as it left them (in its order), then ours by
#    priority and name, each at its last generation.
RACE_S=${PO_ADV_DELTA_RACE_S:-20}
log_mark=$(wc -l <"$LC_WORK/controller.log")
target race "[]"
# local: every request 25 ms late (the controller's patch lands well after its read: the races
# come often; the real server is slow enough by itself)
[ "${LC_KIND:-local}" = local ] && faults '{"latencyMs":25}'

/usr/bin/python3 "$top/tests/e2e/adv_delta_racer.py" "$LC_URL" "$(lc_token)" "$LC_WORK/tls/ca.crt" default race "$RACE_S" \
  "${PO_SEED:-7}" >"$e2e_work/racer.out" 2>&1 &
racer=$!
race_end=$((SECONDS + RACE_S))
prio() { echo $(( ($1 * 7) % 5 )); }
for i in $(seq 1 12); do po "r$i" race "$((20 + i))" "$(prio "$i")" >/dev/null; sleep 0.2; done
for i in 2 5 8 11; do lc_curl "$P/r$i" -X DELETE -o /dev/null; sleep 0.2; done
for i in 1 4 7 10; do lc_curl "$P/r$i" -X PATCH -H 'Content-Type: application/merge-patch+json' -d "{\"spec\":{\"priority\":$((9 - i))}}" -o /dev/null; sleep 0.2; done
k=0
while [ $SECONDS -lt $race_end ]; do
  k=$((k + 1))
  i=$(( (k * 5) % 12 + 1 ))
  case $i in 2 | 5 | 8 | 11) continue ;; esac
  lc_curl "$P/r$i" -X PATCH -H 'Content-Type: application/json-patch+json' \
    -d "[{\"op\":\"replace\",\"path\":\"/spec/patches/0/value\",\"value\":$((k % 90 + 1))}]" -o /dev/null
  sleep 0.05
done
wait $racer
[ "${LC_KIND:-local}" = local ] && faults '{"latencyMs":0}'
cat "$e2e_work/racer.out"
echo "PropertyOverride edits: $k; the controller's conflicts so far: $(grep -c '"error":"conflict: ' "$LC_WORK/controller.log")"
# the wanted list: the tenant's Scripts in its order, then ours sorted by (priority, name), at the
# generation each has on the server
want=$( { jq -r '.foreign[]' "$e2e_work/racer.out"; lc_curl "$P" | jq -r '[.items[] | select(.metadata.name | test("^r[0-9]+$")) |
  {p: (.spec.priority // 0), n: .metadata.name, g: .metadata.generation}] | sort_by(.p, .n) | .[] | "\(.n)@\(.g)"'; } | paste -sd' ')
scripts() { kubectl get servicedefaults race -o json | jq -r '[.spec.envoyExtensions // [] | .[] |
  if .name == "builtin/lua" then .arguments.Script else "\(.arguments.PropertyOverride.name)@\(.arguments.PropertyOverride.generation)" end] | join(" ")'; }
check "4: the racer made edits" test "$(jq -r .edits "$e2e_work/racer.out")" -gt 20
eventually "4: race holds the tenant's extensions as it left them, then ours in order" 60 "$want" scripts
reasons() { kubectl get propertyoverrides -o json | jq -r '[.items[] | select(.metadata.name | test("^r[0-9]+$")) |
  .status.conditions[]? | select(.type == "Programmed") | .reason | select(. != "Programmed" and . != "Overlapping")] | length'; }
eventually "4: the 8 left are Programmed (or Overlapping)" 30 0 reasons
gone() { kubectl get propertyoverrides -o name | grep -c '/r\(2\|5\|8\|11\)$'; }
eventually "4: the deleted ones are gone" 30 0 gone
race_right() { [ "$(scripts)" = "$want" ]; }
check "4: still right 3 s later" holds 3 race_right
failed4=$(tail -n +"$((log_mark + 1))" "$LC_WORK/controller.log" | grep '"reconcile failed' | grep -vc '"error":"conflict: ')
check "4: no reconcile failed but by a conflict while the tenant raced (got $failed4)" test "$failed4" = 0

# a conflict is retried (its text starts "conflict: "); any other failure is the 422 above
failed=$(grep '"reconcile failed' "$LC_WORK/controller.log" | grep -vc '"error":"conflict: ')
check "no reconcile failed but by a conflict (got $failed; the first: $(grep '"reconcile failed' "$LC_WORK/controller.log" | grep -v '"error":"conflict: ' | grep -m1 -o '"error":"[^"]*'))" test "$failed" = 0
finish
