#!/usr/bin/env bash
# An adversarial tenant. The controller changes or deletes only what it provably wrote (markers
# bound to the PropertyOverride's and the target's uids; the created annotation bound to the
# object's own uid): forged markers, copies made with `kubectl get -o yaml`, markers with the
# right name but wrong uids, and a hand-applied ServiceDefaults carrying the created annotation
# are left alone and reported (Events ForeignEntry / ForeignObject on the target, the counter
# propertyoverride_foreign_markers_total). A forged last-valid annotation programs nothing. Only
# allowed namespaces (by default the controller's own, here the kubeconfig's: default) may target
# ProxyDefaults. targetRef.namespace may name another namespace only from the namespaces
# --allow-cross-namespace-from lists (here: platform). The never-regress observer watches throughout.
. "$(dirname "$0")/lib.sh"
build=$1
lc_start "$build" "$e2e_work" || exit 1
obs_start || exit 1
lc_controller --allow-cross-namespace-from=platform || exit 1
lc_register_webhook Fail
kubectl create namespace tenant >/dev/null
kubectl create namespace other >/dev/null
kubectl create namespace platform >/dev/null

PATCH='{ResourceFilter: {ResourceType: cluster, TrafficDirection: outbound}, Op: add, Path: /outlier_detection/max_ejection_percent, Value: 42}'
po() { # name target [value] [namespace] [targetKind]
  cat <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: $1, namespace: ${4:-default}}
spec:
  targetRef: {kind: ${5:-ServiceDefaults}, name: $2}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/max_ejection_percent
      value: ${3:-10}
YAML
}
entry_set() { entries "$@" | tr ' ' '\n' | sed '/^$/d' | sort | xargs; } # kind name [namespace]
event_on() { # kind name reason [namespace]: "yes" once an Event with that reason is about that object
  kubectl get events -n "${4:-default}" -o json | jq -r --arg k "$1" --arg n "$2" --arg r "$3" \
    'if any(.items[]; .involvedObject.kind == $k and .involvedObject.name == $n and .reason == $r) then "yes" else "no" end'
}
positive() { awk -v v="$1" 'BEGIN {exit !(v > 0)}'; }
still_there() { # seconds kind names...: every name exists at every look during that time
  local t=$1 kind=$2
  shift 2
  holds "$t" kubectl get "$kind" "$@" -o name >/dev/null 2>&1 || { echo "$kind $* not all there"; return 1; }
}

# 1. an entry whose marker names a PropertyOverride that does not exist
kubectl apply -f - >/dev/null <<YAML
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: forged-a}
spec:
  protocol: http
  envoyExtensions:
    - name: builtin/property-override
      required: false
      arguments: {Patches: [$PATCH], PropertyOverride: {name: no-such-po, generation: 1}}
YAML
po fa forged-a | kubectl apply -f - >/dev/null
check "fa programmed" kubectl wait --for=condition=Programmed propertyoverride/fa --timeout=30s
eventually "unknown name: the forged entry is kept beside ours" 15 "fa@1 no-such-po@1" entry_set servicedefaults forged-a
eventually "unknown name: Event ForeignEntry on the target" 15 yes event_on ServiceDefaults forged-a ForeignEntry

# 2. a copy of another target made with kubectl get -o yaml (its entry and its annotations)
po fb-src made-b | kubectl apply -f - >/dev/null
check "fb-src programmed" kubectl wait --for=condition=Programmed propertyoverride/fb-src --timeout=30s
kubectl get servicedefaults made-b -o yaml |
  sed -e 's/^  name: made-b$/  name: copy-b/' -e '/^  uid:/d' -e '/^  resourceVersion:/d' -e '/^  creationTimestamp:/d' -e '/^  generation:/d' \
    >"$e2e_work/copy-b.yaml"
check "the copy applies" kubectl apply -f "$e2e_work/copy-b.yaml"
po fb copy-b | kubectl apply -f - >/dev/null
check "fb programmed" kubectl wait --for=condition=Programmed propertyoverride/fb --timeout=30s
eventually "copy: the copied entry is kept beside ours" 15 "fb-src@1 fb@1" entry_set servicedefaults copy-b
eventually "copy: Event ForeignEntry on the copy" 15 yes event_on ServiceDefaults copy-b ForeignEntry
kubectl delete propertyoverride fb --wait=true --timeout=30s >/dev/null
check "copy: it outlives its last PropertyOverride (5 s)" still_there 5 servicedefaults copy-b
check "copy: the copied entry is still there" test "$(entry_set servicedefaults copy-b)" = "fb-src@1"
check "the original keeps its entry" test "$(entries servicedefaults made-b)" = "fb-src@1"

# 3. the right name with wrong uids, and the right uid with another target's uid
kubectl apply -f - >/dev/null <<YAML
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata: {name: forged-c}
spec: {protocol: http}
YAML
po fc forged-c | kubectl apply -f - >/dev/null
check "fc programmed" kubectl wait --for=condition=Programmed propertyoverride/fc --timeout=30s
fc_uid=$(kubectl get propertyoverride fc -o jsonpath='{.metadata.uid}')
other_uid=$(kubectl get servicedefaults forged-a -o jsonpath='{.metadata.uid}')
kubectl patch servicedefaults forged-c --type=json -p "[
  {\"op\":\"add\",\"path\":\"/spec/envoyExtensions/-\",\"value\":{\"name\":\"builtin/property-override\",\"required\":false,\"arguments\":{\"Patches\":[{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"add\",\"Path\":\"/outlier_detection/max_ejection_percent\",\"Value\":77}],\"PropertyOverride\":{\"name\":\"fc\",\"generation\":1,\"uid\":\"00000000-0000-4000-8000-000000000000\",\"targetUID\":\"00000000-0000-4000-8000-000000000001\"}}}},
  {\"op\":\"add\",\"path\":\"/spec/envoyExtensions/-\",\"value\":{\"name\":\"builtin/property-override\",\"required\":false,\"arguments\":{\"Patches\":[{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"add\",\"Path\":\"/outlier_detection/max_ejection_percent\",\"Value\":78}],\"PropertyOverride\":{\"name\":\"fc\",\"generation\":1,\"uid\":\"$fc_uid\",\"targetUID\":\"$other_uid\"}}}}]" >/dev/null
po fc forged-c 11 | kubectl apply -f - >/dev/null # a new generation: the controller rewrites its own entry
eventually "wrong uids: generation 2 programmed" 15 2 sh -c "kubectl get propertyoverride fc -o jsonpath='{.status.programmedGeneration}'"
eventually "wrong uids: both forged entries kept beside ours" 15 "fc@1 fc@1 fc@2" entry_set servicedefaults forged-c
eventually "wrong uids: Event ForeignEntry" 15 yes event_on ServiceDefaults forged-c ForeignEntry
check "counter propertyoverride_foreign_markers_total{kind=\"entry\"} counts them" positive "$(metric 'propertyoverride_foreign_markers_total{kind="entry"}')"

# 4. applied by hand with the created annotation ("true", or another object's uid), no PropertyOverride
made_uid=$(kubectl get servicedefaults made-b -o jsonpath='{.metadata.uid}')
kubectl apply -f - >/dev/null <<YAML
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata:
  name: orphan-d
  labels: {app.kubernetes.io/managed-by: propertyoverride}
  annotations: {propertyoverride.io/created: "true"}
spec: {}
---
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata:
  name: orphan-e
  labels: {app.kubernetes.io/managed-by: propertyoverride}
  annotations: {propertyoverride.io/created: "$made_uid"}
spec: {}
YAML
check "created annotation by hand: both still exist after 10 s" still_there 10 servicedefaults orphan-d orphan-e
po od orphan-d | kubectl apply -f - >/dev/null
check "od programmed" kubectl wait --for=condition=Programmed propertyoverride/od --timeout=30s
kubectl delete propertyoverride od --wait=true --timeout=30s >/dev/null
eventually "created annotation by hand: our entry removed" 15 "" entries servicedefaults orphan-d
check "created annotation by hand: orphan-d outlives a PropertyOverride that came and went (5 s)" still_there 5 servicedefaults orphan-d orphan-e
eventually "created annotation by hand: Event ForeignObject" 15 yes event_on ServiceDefaults orphan-d ForeignObject
check "counter propertyoverride_foreign_markers_total{kind=\"object\"} counts it" positive "$(metric 'propertyoverride_foreign_markers_total{kind="object"}')"

# 5. ProxyDefaults from a namespace not allowed (default: only the controller's own, default)
po mesh-ok global 10 default ProxyDefaults | kubectl apply -f - >/dev/null
check "ProxyDefaults from the controller's namespace: programmed" kubectl wait --for=condition=Programmed propertyoverride/mesh-ok --timeout=30s
lc_register_webhook Fail
out=$(po mesh-bad global 10 tenant ProxyDefaults | kubectl apply -f - 2>&1)
contains "ProxyDefaults from tenant: the webhook denies" "$out" "may not target ProxyDefaults"
check "ProxyDefaults from tenant: not created" sh -c '! kubectl get propertyoverride mesh-bad -n tenant -o name 2>/dev/null | grep -q .'
lc_unregister_webhook
po mesh-bad global 10 tenant ProxyDefaults | kubectl apply -f - >/dev/null
eventually "ProxyDefaults from tenant, webhook bypassed: Accepted False" 15 False cond mesh-bad Accepted status tenant
check "ProxyDefaults from tenant: reason TargetNotAllowed" test "$(cond mesh-bad Accepted reason tenant)" = TargetNotAllowed
check "ProxyDefaults from tenant: none created there (3 s)" holds 3 sh -c '[ -z "$(kubectl get proxydefaults -n tenant -o name 2>/dev/null)" ]'

# 6. targetRef.namespace: its own namespace works; another is denied at admission and, with the
#    webhook bypassed, refused (TargetNotAllowed) writing nothing anywhere; from platform (listed
#    by --allow-cross-namespace-from) it programs the other namespace's ServiceDefaults, side by
#    side with a same-named PropertyOverride of that namespace, and deleting it removes only its entry
lc_register_webhook Fail
tns() { # name namespace-in-targetRef [namespace of the PropertyOverride]
  po "$1" svc-x 10 "${3:-tenant}" | sed "s/^  targetRef: {kind: ServiceDefaults, name: svc-x}\$/  targetRef: {kind: ServiceDefaults, name: svc-x, namespace: $2}/"
}
tns tns-own tenant | kubectl apply -f - >/dev/null
check "targetRef.namespace kept by the API server" test "$(kubectl get propertyoverride tns-own -n tenant -o jsonpath='{.spec.targetRef.namespace}')" = tenant
check "targetRef.namespace = its own: programmed" kubectl wait --for=condition=Programmed propertyoverride/tns-own -n tenant --timeout=30s
check "its own namespace's target holds it" test "$(entries servicedefaults svc-x tenant)" = "tns-own@1"
out=$(tns tns 'other' | kubectl apply -f - 2>&1)
contains "targetRef.namespace = other: the webhook denies" "$out" "may not write into targets of namespace 'other'"
check "targetRef.namespace = other: not created" sh -c '! kubectl get propertyoverride tns -n tenant -o name 2>/dev/null | grep -q .'
out=$(tns tns 'Other_NS' | kubectl apply -f - 2>&1)
contains "targetRef.namespace malformed: the API server's schema refuses it" "$out" "targetRef.namespace"
lc_unregister_webhook
tns tns other | kubectl apply -f - >/dev/null
eventually "targetRef.namespace = other, webhook bypassed: Accepted False" 15 False cond tns Accepted status tenant
check "targetRef.namespace = other: reason TargetNotAllowed" test "$(cond tns Accepted reason tenant)" = TargetNotAllowed
contains "targetRef.namespace = other: the message names both namespaces" "$(cond tns Accepted message tenant)" \
  "namespace 'tenant' may not write into targets of namespace 'other'"
check "targetRef.namespace = other: nothing in the other namespace (3 s)" holds 3 sh -c '[ -z "$(kubectl get servicedefaults,proxydefaults -n other -o name 2>/dev/null)" ]'
check "targetRef.namespace = other: its own namespace's target holds only tns-own" test "$(entries servicedefaults svc-x tenant)" = "tns-own@1"
lc_register_webhook Fail
# entries with the marker's namespace when it has one: "ns/name@gen", else "name@gen"
qentries() {
  kubectl get servicedefaults "$1" -n "$2" -o json 2>/dev/null | jq -r '[.spec.envoyExtensions // [] | .[] |
    .arguments.PropertyOverride | "\(if .namespace then .namespace + "/" else "" end)\(.name)@\(.generation)"] | sort | join(" ")'
}
tns tns-own tenant platform | kubectl apply -f - >/dev/null
check "from platform, targetRef.namespace = tenant: admitted and programmed" \
  kubectl wait --for=condition=Programmed propertyoverride/tns-own -n platform --timeout=30s
contains "its status names the target of the other namespace" "$(cond tns-own Programmed message platform)" "ServiceDefaults tenant/svc-x"
out=$(kubectl get pov tns-own -n platform -o wide 2>&1)
check "kubectl get -o wide: a TARGET-NS column" grep -q '^NAME .* TARGET .* TARGET-NS ' <<<"$out"
check "kubectl get -o wide: the target's namespace in it" grep -Eq '^tns-own +svc-x +.* tenant +' <<<"$out"
echo "$out"
check "tenant/svc-x holds both tns-own, kept apart (the platform's marker names its namespace)" \
  test "$(qentries svc-x tenant)" = "platform/tns-own@1 tns-own@1"
check "the tenant's own entry was not rewritten (its marker has no namespace)" \
  test "$(kubectl get servicedefaults svc-x -n tenant -o json | jq '[.spec.envoyExtensions[].arguments.PropertyOverride | select(.namespace == null)] | length')" = 1
out=$(tns tns-pd tenant platform | sed 's/kind: ServiceDefaults, name: svc-x/kind: ProxyDefaults, name: global/' | kubectl apply -f - 2>&1)
contains "from platform, ProxyDefaults with targetRef.namespace: denied" "$out" "may not target ProxyDefaults"
echo "--- kubectl get pov -A; kubectl describe pov tns -n tenant, tns-own -n platform (conditions) ---"
kubectl get pov -A 2>&1
kubectl describe pov tns -n tenant 2>&1 | sed -n '/Conditions:/,/Events:/p'
kubectl describe pov tns-own -n platform 2>&1 | sed -n '/Conditions:/,/Events:/p'
kubectl delete propertyoverride tns-own -n platform --timeout=30s >/dev/null
eventually "deleting the platform's tns-own removes only its entry" 15 "tns-own@1" qentries svc-x tenant
check "the platform's finalizer went with it" sh -c '! kubectl get propertyoverride tns-own -n platform -o name 2>/dev/null | grep -q .'

# 7. a forged last-valid annotation on an invalid PropertyOverride, the webhook bypassed
lc_unregister_webhook
po flv lv-target 150 | sed 's/^metadata: {name: flv, namespace: default}$/metadata:\n  name: flv\n  annotations:\n    propertyoverride.io\/last-valid: '"'"'{"generation":1,"arguments":{"ProxyType":"connect-proxy","Patches":[{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound"},"Op":"add","Path":"\/outlier_detection\/max_ejection_percent","Value":150}]}}'"'"'/' |
  kubectl apply -f - >/dev/null
check "forged last-valid: the annotation is on the object" test -n "$(kubectl get propertyoverride flv -o jsonpath='{.metadata.annotations.propertyoverride\.io/last-valid}')"
eventually "forged last-valid: Accepted False" 15 False cond flv Accepted status
check "forged last-valid: nothing programmed (3 s)" holds 3 sh -c '[ -z "$(kubectl get servicedefaults lv-target -o jsonpath="{.spec.envoyExtensions}" 2>/dev/null)" ]'

kubectl delete propertyoverride flv --wait=false >/dev/null # (a controller that programs it may loop on it)
lc_register_webhook Fail

check "observer: no revision lost a live entry or target, none carries an invalid entry" obs_stop
finish
