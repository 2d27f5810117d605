#!/usr/bin/env bash
# Issue 26's PropertyOverride finalizer echo, known by the version its PATCH's answer said and never
# parsed (po_TargetIndex_IsOwnOverrideEcho), against writes racing it (adv-echo). adv_echo_racer.py
# watches and, for each new PropertyOverride, annotates it at once (racing our finalizer patch: the
# patch then conflicts), strips our finalizer the moment it shows (the event right after the echo,
# which was never recorded as seen) and edits a label; a Programmed one's finalizer is stripped twice. Then: deletes at every moment around the
# finalizer patch, and the same names deleted and created again. Every PropertyOverride ends with
# our finalizer, Programmed, its entry in its target (of its own uid), and every entry goes with
# it. PO_APISERVER=real runs it on the real kube-apiserver (no fault injection used).
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
lc_controller --log-level warn || exit 1
N=${ADV_ECHO_N:-60} T=3 D=${ADV_ECHO_DELETES:-30}
for t in $(seq 1 $T); do
  printf '{"apiVersion":"consul.hashicorp.com/v1alpha1","kind":"ServiceDefaults","metadata":{"name":"t%s"},"spec":{"protocol":"http"}}' "$t" |
    kubectl create -f - >/dev/null
done
P=/apis/propertyoverride.io/v1alpha1/namespaces/default/propertyoverrides
po_json() { # name target seconds
  printf '{"apiVersion":"propertyoverride.io/v1alpha1","kind":"PropertyOverride","metadata":{"name":"%s"},"spec":{"targetRef":{"name":"%s"},"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/connect_timeout","value":{"seconds":%s}}]}}' "$1" "$2" "$3"
}
create() { lc_curl "$P" -X POST -H 'Content-Type: application/json' -d "$(po_json "$@")" -o /dev/null -w '%{http_code}'; }
count_entries() { local n=0 t; for t in $(seq 1 $T); do n=$((n + $(entries servicedefaults t$t | wc -w))); done; echo $n; }
ours() { lc_curl "$P" | jq '[.items[] | select(((.metadata.finalizers // []) | index("propertyoverride.io/finalizer")) and
  any(.status.conditions[]?; .type == "Programmed" and .status == "True" and .observedGeneration == 1))] | length'; }

# 1. the racer against N creates, 8 at a time
/usr/bin/python3 "$top/tests/e2e/adv_echo_racer.py" "$LC_URL" "$(lc_token)" "$LC_WORK/tls/ca.crt" default "$N" \
  >"$e2e_work/racer.out" 2>&1 &
racer=$!
for _ in $(seq 100); do [ -e "$e2e_work/racer.out" ] && grep -q watching "$e2e_work/racer.out" && break; sleep 0.05; done
pids=()
for i in $(seq 1 $N); do
  create "s-$i" "t$((i % T + 1))" "$i" >/dev/null &
  pids+=($!)
  (( i % 8 == 0 )) && { wait "${pids[@]}"; pids=(); }
done
[ ${#pids[@]} = 0 ] || wait "${pids[@]}"
eventually "the racer stripped our finalizer once from each" 60 "$N" sh -c "tail -1 '$e2e_work/racer.out' | jq -r .strip 2>/dev/null"
wait $racer
cat "$e2e_work/racer.out"
eventually "each has our finalizer again and is Programmed" 60 "$N" ours
eventually "each has its entry" 60 "$N" count_entries
# Whether an echo or its write's answer comes first is the API server's race (about half each on an
# idle machine, fewer known under load): an echo before its answer is parsed and judged by content.
# So: some known by version, and never more than the finalizer and annotation writes we made.
echo "finalizer echoes known by version: $(metric 'propertyoverride_watch_events_ignored_total{reason="own-override-version"}'), our propertyoverrides writes: $(metric 'propertyoverride_writes_total{resource="propertyoverrides"}')"
check "our finalizer echoes known by their version (not parsed), at most one per write of ours" \
  awk -v v="$(metric 'propertyoverride_watch_events_ignored_total{reason="own-override-version"}')" \
  -v w="$(metric 'propertyoverride_writes_total{resource="propertyoverrides"}')" -v n="$N" \
  'BEGIN { exit !(v >= 1 && w >= 2 * n && v <= w) }'

# 1b. a Programmed one's finalizer stripped, again the moment it is back: no status write follows
# either re-add (the status is current), so only that the echo was not recorded as seen makes the
# second strip, identical to the first, a change
fin() { lc_curl "$P/$1" | jq -r '(.metadata.finalizers // []) | join(",")'; }
strip() { lc_curl "$P/$1" -X PATCH -H 'Content-Type: application/json-patch+json' \
  -d '[{"op":"test","path":"/metadata/finalizers/0","value":"propertyoverride.io/finalizer"},{"op":"remove","path":"/metadata/finalizers/0"}]' >/dev/null; }
for i in 1 2 3; do
  strip "s-$i"
  for _ in $(seq 400); do [ "$(fin "s-$i")" = propertyoverride.io/finalizer ] && break; sleep 0.025; done
  strip "s-$i"
  eventually "s-$i: stripped twice, our finalizer is back" 30 propertyoverride.io/finalizer fin "s-$i"
done

# 2. deleted at every moment around the finalizer patch: nothing left
pids=()
for i in $(seq 1 $D); do
  (create "d-$i" t1 "$i" >/dev/null; sleep "0.$(((i * 7) % 10))$((i % 10))"; lc_curl "$P/d-$i" -X DELETE >/dev/null) &
  pids+=($!)
  (( i % 6 == 0 )) && { wait "${pids[@]}"; pids=(); }
done
[ ${#pids[@]} = 0 ] || wait "${pids[@]}"
eventually "the deleted ones are gone" 60 0 sh -c "kubectl get propertyoverrides -o name | grep -c '/d-'"

# 3. the same name deleted and created again (a new uid) at once, as soon as the old is gone
for i in 1 2 3 4 5; do
  create "r-$i" t2 1 >/dev/null
  sleep "0.$((i * 15))"
  lc_curl "$P/r-$i" -X DELETE >/dev/null
  for _ in $(seq 200); do [ "$(create "r-$i" t2 2)" = 201 ] && break; sleep 0.05; done
done
entry_uid() { kubectl get servicedefaults t2 -o json | jq -r --arg n "$1" '[.spec.envoyExtensions[]? | select(.arguments.PropertyOverride.name == $n) | .arguments.PropertyOverride.uid] | join(",")'; }
for i in 1 2 3 4 5; do
  eventually "r-$i: its entry names the new object" 30 "$(lc_curl "$P/r-$i" | jq -r .metadata.uid)" entry_uid "r-$i"
done
eventually "every entry is of a live PropertyOverride" 60 "$((N + 5))" count_entries

# 4. all deleted: every entry goes
lc_curl "$P" -X DELETE >/dev/null
eventually "all gone" 90 0 sh -c "kubectl get propertyoverrides -o name | wc -l"
eventually "no entry left" 60 0 count_entries
finish
