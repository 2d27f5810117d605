#!/usr/bin/env bash
# The never-regress observer judged: legitimate transitions (a new valid generation replacing an
# entry, a PropertyOverride moved to another target, one deleted, an invalid update) pass; with the
# controller stopped, each regression made by hand is reported with its revision: a target
# deleted under a live PropertyOverride (a), a live entry dropped (b), an entry missing for one
# revision and then restored (b), an entry the engine refuses (c); its watches resumed every
# 3 s, some of them expired (410) in between.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
faults() { lc_curl /admin/faults -X POST -H 'Content-Type: application/json' -d "$1" >/dev/null; }
# its watches end every 3 s: it resumes each from where it was
obs_start --watch-seconds 3 || exit 1
lc_controller || exit 1
po() { # name target value
  cat <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: $1}
spec:
  targetRef: {name: $2}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: $3
---
YAML
}
{ po keep obs-a 10; po moved obs-a 20; po gone obs-a 30; po victim obs-c 40; po flicker obs-b 50; } | kubectl apply -f - >/dev/null
check "programmed" kubectl wait --for=condition=Programmed propertyoverrides --all --timeout=30s
obs_mark "legitimate"
kubectl patch propertyoverride keep --type=merge -p '{"spec":{"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/outlier_detection/max_ejection_percent","value":11}]}}' >/dev/null
kubectl patch propertyoverride moved --type=merge -p '{"spec":{"targetRef":{"name":"obs-b"}}}' >/dev/null
kubectl delete propertyoverride gone --wait=true --timeout=20s >/dev/null
kubectl patch propertyoverride victim --type=merge -p '{"spec":{"patches":[{"resourceFilter":{"resourceType":"cluster","trafficDirection":"outbound"},"op":"add","path":"/outlier_detection/max_ejection_percent","value":150}]}}' >/dev/null
eventually "a new generation replaces keep's entry" 15 "keep@2" entries servicedefaults obs-a
eventually "moved left obs-a for obs-b" 15 "flicker@1 moved@2" entries servicedefaults obs-b
eventually "victim's invalid update keeps generation 1" 15 "False" cond victim Accepted status
check "victim's entry stays" test "$(entries servicedefaults obs-c)" = "victim@1"

# resumed watches expired (410): the observer lists again and goes on judging afterwards. The
# 410s are injected, a local-server feature: on the real server the rest runs without this part.
if [ "$LC_KIND" = local ]; then
  faults '{"force410":20}'
fi
po extra obs-e 60 | kubectl apply -f - >/dev/null
if [ "$LC_KIND" = local ]; then
  eventually "the observer met a 410" 20 yes sh -c "test -s '$obs_dir/relists' && echo yes"
  faults '{"force410":0}'
fi
check "extra programmed meanwhile" kubectl wait --for=condition=Programmed propertyoverride/extra --timeout=30s

# the controller stopped, so nothing repairs what is done by hand below
kill -TERM "$LC_CONTROLLER_PID"
for ((i = 0; i < 200; i++)); do kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break; sleep 0.05; done
obs_mark "by hand"
kubectl patch servicedefaults obs-a --type=merge -p '{"spec":{"envoyExtensions":[]}}' >/dev/null
kubectl delete servicedefaults obs-c >/dev/null
saved=$(kubectl get servicedefaults obs-b -o json | jq -c '{spec: {envoyExtensions: .spec.envoyExtensions}}')
kubectl patch servicedefaults obs-b --type=merge -p '{"spec":{"envoyExtensions":[]}}' >/dev/null
kubectl patch servicedefaults obs-b --type=merge -p "$saved" >/dev/null
check "obs-b restored" test "$(entries servicedefaults obs-b)" = "flicker@1 moved@2"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: obs-d}
spec:
  envoyExtensions:
    - name: builtin/property-override
      arguments:
        Patches:
          - {ResourceFilter: {ResourceType: cluster, TrafficDirection: outbound}, Op: add, Path: /outlier_detection/max_ejection_percent, Value: 150}
YAML

obs_stop >"$e2e_work/report"
rc=$?
out=$(cat "$e2e_work/report")
printf '%s\n' "$out"
check "the observer fails the run" test "$rc" = 1
check "legitimate transitions: no violation" test "$(obs_figure legitimate violations)" = 0
[ "$LC_KIND" = local ] && check "the observer relisted after a 410" test "$(jq '[.relists[]] | add // 0' "$obs_dir/summary.json")" -gt 0
check "by hand: four violations" test "$(obs_figure "by hand" violations)" = 4
contains "(a) the deleted target and what it lost" "$out" "ServiceDefaults default/obs-c DELETED while 1 PropertyOverride(s) point at it with a live generation (victim@1); entries lost: victim@1"
contains "(b) the dropped entry" "$out" "ServiceDefaults default/obs-a lost live entries: keep@2 dropped (status: generation 2 live)"
contains "(b) the entry missing for one revision" "$out" "ServiceDefaults default/obs-b lost live entries: flicker@1 dropped (status: generation 1 live); moved@2 dropped"
contains "(c) the entry the engine refuses" "$out" "ServiceDefaults default/obs-d carries an entry the engine refuses: invalid Patches[0]: /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100"
check "each violation names its revision" test "$(printf '%s\n' "$out" | grep -c '^VIOLATION ([abc]) rv=[0-9]')" = 4
finish
