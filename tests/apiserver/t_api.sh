#!/usr/bin/env bash
# The REST semantics through curl: create/get/update/delete, AlreadyExists, NotFound, 409 on a
# stale resourceVersion, generation, status isolation, finalizers, selectors, pagination,
# JSON patch, strict field validation, server-side apply conflicts.
APISERVER=$1
source "$(dirname "$0")/lib.sh"
start_server api --crd "$TESTDATA/widgets-crd.yaml"
W=/apis/example.com/v1/namespaces/default/widgets

http GET /apis "" "" -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json'
grep -qi '^Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' <<<"$HEADERS" || fail "aggregated content type: $HEADERS"
expect_eq "$(jbody '.items[] | select(.metadata.name == "example.com") | [.versions[].version, .versions[0].resources[0].resource, .versions[0].resources[0].subresources[0].subresource] | join(",")')" "v1,v1beta1,widgets,status" "aggregated discovery"
http GET /apis "" "" -H 'Accept: application/json'
expect_eq "$(jbody .kind)" APIGroupList "legacy discovery"
http GET /api/v1
expect_eq "$(jbody '.resources[] | select(.name == "configmaps") | .shortNames[0]')" cm "legacy resource list"
pass "discovery: aggregated (v2) and legacy"

http POST $W '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","labels":{"app":"x"}},"spec":{"size":1},"status":{"observedGeneration":9}}'
expect_code 201 "create"
expect_eq "$(jbody .metadata.generation)" 1 "generation on create"
expect_eq "$(jbody .spec.color)" red "schema default applied"
expect_eq "$(jbody .status)" null "status dropped on create (status subresource)"
uid=$(jbody .metadata.uid)
rv1=$(jbody .metadata.resourceVersion)
[[ "$uid" =~ ^[0-9a-f-]{36}$ ]] || fail "uid $uid"
jbody .metadata.creationTimestamp | grep -Eq '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' || fail "creationTimestamp"
pass "create sets uid, creationTimestamp, resourceVersion, generation; drops status"

http POST $W '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1}}'
expect_code 409 "create existing"
expect_eq "$(jbody .reason)" AlreadyExists "reason"
expect_eq "$(jbody .message)" 'widgets.example.com "w1" already exists' "message"
http GET $W/nope
expect_code 404 "get missing"
expect_eq "$(jbody .message)" 'widgets.example.com "nope" not found' "404 message"
expect_eq "$(jbody .details.kind)" widgets "404 details"
http POST /api/v1/namespaces/ghost/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}'
expect_code 404 "create in a missing namespace"
expect_eq "$(jbody .message)" 'namespaces "ghost" not found' "missing namespace message"
pass "AlreadyExists and NotFound"

obj=$(jq -c '.spec.size=2' <<<"$BODY")
http GET $W/w1
cur=$BODY
http PUT $W/w1 "$(jq -c '.spec.size=2' <<<"$cur")"
expect_code 200 "update"
expect_eq "$(jbody .metadata.generation)" 2 "generation after spec change"
rv2=$(jbody .metadata.resourceVersion)
[ "$rv2" -gt "$rv1" ] || fail "resourceVersion did not grow"
http PUT $W/w1 "$(jq -c '.spec.size=3' <<<"$cur")"
expect_code 409 "update with a stale resourceVersion"
expect_eq "$(jbody .reason)" Conflict "conflict reason"
expect_eq "$(jbody .message)" 'Operation cannot be fulfilled on widgets.example.com "w1": the object has been modified; please apply your changes to the latest version and try again' "conflict message"
http GET $W/w1
http PUT $W/w1 "$(jq -c '.metadata.labels.more="y"' <<<"$BODY")"
expect_eq "$(jbody .metadata.generation)" 2 "generation after a metadata change"
rv3=$(jbody .metadata.resourceVersion)
http PUT $W/w1 "$BODY"
expect_eq "$(jbody .metadata.resourceVersion)" "$rv3" "no-op update keeps the resourceVersion"
pass "update: 409 on stale resourceVersion, generation on spec only, no-op"

http GET $W/w1
http PUT $W/w1/status "$(jq -c '.status.observedGeneration=2 | .spec.size=9' <<<"$BODY")"
expect_code 200 "status update"
expect_eq "$(jbody '.status.observedGeneration') $(jbody .spec.size) $(jbody .metadata.generation)" "2 2 2" "status write ignores spec"
http PUT $W/w1 "$(jq -c '.status.observedGeneration=7 | .spec.size=4' <<<"$BODY")"
expect_eq "$(jbody '.status.observedGeneration') $(jbody .spec.size)" "2 4" "main write ignores status"
http PATCH $W/w1/status '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}' application/merge-patch+json
expect_eq "$(jbody '.status.conditions[0].type')" Ready "status merge patch"
pass "status subresource isolation"

http PATCH $W/w1 '{"spec":{"size":"big","color":"purple"}}' application/merge-patch+json
expect_code 422 "invalid patch"
expect_eq "$(jbody .reason)" Invalid "reason"
expect_eq "$(jbody '.details.causes | length')" 3 "two causes, and CEL rules blocked"
expect_eq "$(jbody '.details.causes[0].field')" spec.size "cause field"
expect_eq "$(jbody '.details.causes[2].message')" "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation" "blocked CEL"
http PATCH $W/w1 '{"spec":{"tags":["a","b","c","d"]}}' application/merge-patch+json
expect_code 422 "maxItems"
jbody .message | grep -q 'spec.tags: Too many: 4: must have at most 3 items' || fail "maxItems text: $BODY"
http PATCH $W/w1 '{"spec":{"size":null}}' application/merge-patch+json
expect_code 422 "required"
jbody .message | grep -q 'spec.size: Required value' || fail "required text: $BODY"
http PATCH "$W/w1?fieldValidation=Strict" '{"spec":{"bogus":1}}' application/merge-patch+json
expect_code 400 "strict unknown field"
expect_eq "$(jbody .message)" 'strict decoding error: unknown field "spec.bogus"' "strict message"
http PATCH $W/w1 '{"spec":{"bogus":1}}' application/merge-patch+json
expect_code 200 "unknown field pruned by default"
grep -qi '^Warning: 299 - "unknown field \\"spec.bogus\\""' <<<"$HEADERS" || fail "warning header: $HEADERS"
expect_eq "$(jbody .spec.bogus)" null "pruned"
http PATCH $W/w1 '{"spec":{"size":1,"tags":["a","b"]}}' application/merge-patch+json
expect_code 422 "CEL rule"
expect_eq "$(jbody .message)" 'Widget.example.com "w1" is invalid: spec: Invalid value: "object": a widget has at most size tags' "CEL message"
http PATCH $W/w1 '{"spec":{"size":2,"color":"green"}}' application/merge-patch+json
expect_code 422 "CEL rule with fieldPath"
expect_eq "$(jbody '.details.causes[0].field') $(jbody '.details.causes[0].message')" 'spec.color Invalid value: "string": green widgets are bigger than 2' "fieldPath"
http PATCH $W/w1 '{"spec":{"legacy":"x"}}' application/merge-patch+json
expect_code 422 "not"
expect_eq "$(jbody '.details.causes[0].message')" 'Invalid value: "object": must not validate the schema (not)' "not message"
pass "422 Invalid causes, strict and warned unknown fields, CEL rules, not"

http PATCH $W/w1 '[{"op":"replace","path":"/spec/size","value":6},{"op":"add","path":"/spec/tags","value":["t1"]},{"op":"add","path":"/spec/tags/0","value":"t0"}]' application/json-patch+json
expect_code 200 "json patch"
expect_eq "$(jbody '.spec.size') $(jbody '.spec.tags|join(",")')" "6 t0,t1" "json patch result"
http PATCH $W/w1 '[{"op":"test","path":"/spec/size","value":1}]' application/json-patch+json
expect_code 422 "failed json patch test"
http PATCH $W/w1 "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"size\":2}}" application/merge-patch+json
expect_code 409 "patch with a stale resourceVersion precondition"
pass "JSON patch and patch preconditions"

for i in $(seq 2 7); do
  http POST $W "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w$i\",\"labels\":{\"app\":\"$([ $((i % 2)) = 0 ] && echo x || echo y)\"}},\"spec\":{\"size\":$i}}"
  expect_code 201 "create w$i"
done
http GET "$W?labelSelector=app%3Dx"
expect_eq "$(jbody '[.items[].metadata.name]|join(",")')" "w1,w2,w4,w6" "label selector ="
http GET "$W?labelSelector=app%20in%20(y),app!%3Dz"
expect_eq "$(jbody '[.items[].metadata.name]|join(",")')" "w3,w5,w7" "label selector in, !="
http GET "$W?fieldSelector=metadata.name%3Dw3"
expect_eq "$(jbody '[.items[].metadata.name]|join(",")')" "w3" "field selector"
http GET "/apis/example.com/v1/widgets?fieldSelector=metadata.namespace%3Ddefault&limit=100"
expect_eq "$(jbody '.items|length')" 7 "all-namespaces list with a namespace field selector"
names=""
tok=""
pages=0
while :; do
  http GET "$W?limit=3${tok:+&continue=$tok}"
  expect_code 200 "page"
  names+="$(jbody '[.items[].metadata.name]|join(",")'),"
  tok=$(jbody '.metadata.continue // empty')
  pages=$((pages + 1))
  [ -n "$tok" ] || break
  [ $pages -lt 10 ] || fail "pagination does not end"
  if [ $pages = 1 ]; then
    expect_eq "$(jbody .metadata.remainingItemCount)" 4 "remainingItemCount"
    http DELETE $W/w2   # the token stays valid across changes
  fi
done
expect_eq "$names" "w1,w2,w3,w4,w5,w6,w7," "pages"
expect_eq "$pages" 3 "page count"
pass "label and field selectors, limit/continue"

http PATCH $W/w3 '{"metadata":{"finalizers":["example.com/f"]}}' application/merge-patch+json
http DELETE $W/w3
expect_code 200 "delete with finalizer"
http GET $W/w3
expect_code 200 "still there while finalizers remain"
jbody .metadata.deletionTimestamp | grep -q T || fail "deletionTimestamp: $BODY"
http PATCH $W/w3 '{"metadata":{"finalizers":["example.com/f","example.com/new"]}}' application/merge-patch+json
expect_code 422 "adding finalizers while deleting"
http PATCH $W/w3 '{"metadata":{"finalizers":[]}}' application/merge-patch+json
expect_code 200 "finalizers cleared"
http GET $W/w3
expect_code 404 "gone once finalizers are empty"
http DELETE $W/w4 '{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}'
expect_code 409 "delete precondition"
http DELETE "$W?labelSelector=app%3Dy"
expect_code 200 "deletecollection"
http GET $W
expect_eq "$(jbody '[.items[].metadata.name]|join(",")')" "w1,w4,w6" "deletecollection by label"
http GET /api/v1/namespaces/default/configmaps
http POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner"}}'
ouid=$(jbody .metadata.uid)
dep() { echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"owner\",\"uid\":\"$2\"}]}}"; }
http POST /api/v1/namespaces/default/configmaps "$(dep dep1 "$ouid")"
http POST /api/v1/namespaces/default/configmaps "$(dep dep2 "$ouid")"
http DELETE "/api/v1/namespaces/default/configmaps/dep2?propagationPolicy=Orphan"
http POST /api/v1/namespaces/default/configmaps "$(dep dep3 "$ouid")"
http DELETE "/api/v1/namespaces/default/configmaps/owner"
http GET /api/v1/namespaces/default/configmaps/dep1
expect_code 404 "dependent collected with its owner"
http GET /api/v1/namespaces/default/configmaps/dep3
expect_code 404 "second dependent collected"
http POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner2"}}'
o2=$(jbody .metadata.uid)
http POST /api/v1/namespaces/default/configmaps "$(dep kept "$o2")"
http DELETE /api/v1/namespaces/default/configmaps/owner2 '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Orphan"}'
http GET /api/v1/namespaces/default/configmaps/kept
expect_code 200 "orphaned dependent kept"
pass "finalizers, deletionTimestamp, delete preconditions, deletecollection, ownerReferences GC"

A='apiVersion: example.com/v1
kind: Widget
metadata:
  name: s1
spec:
  size: 2
  tags: [a]'
http PATCH "$W/s1?fieldManager=one" "$A" application/apply-patch+yaml
expect_code 201 "apply create"
B='apiVersion: example.com/v1
kind: Widget
metadata:
  name: s1
spec:
  size: 3'
http PATCH "$W/s1?fieldManager=two" "$B" application/apply-patch+yaml
expect_code 409 "apply conflict"
expect_eq "$(jbody .message)" 'Apply failed with 1 conflict: conflict with "one" using example.com/v1: .spec.size' "conflict text"
http PATCH "$W/s1?fieldManager=two&force=true" "$B" application/apply-patch+yaml
expect_code 200 "forced apply"
http PATCH "$W/s1?fieldManager=one" 'apiVersion: example.com/v1
kind: Widget
metadata:
  name: s1
spec:
  size: 3' application/apply-patch+yaml
expect_code 200 "re-apply without tags"
expect_eq "$(jbody .spec.tags)" null "fields a manager stops applying are removed"
pass "server-side apply: create, conflict, force, removal"

CM=/api/v1/namespaces/default/configmaps
http POST $CM '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"1","b":"2"}}'
expect_code 201 "configmap"
expect_eq "$(jbody .metadata.generation)" null "no generation for configmaps"
http PATCH $CM/c1 '{"data":{"a":null,"c":"3"}}' application/strategic-merge-patch+json
expect_eq "$(jbody '.data|keys|join(",")')" "b,c" "strategic merge patch on a configmap"
http POST /api/v1/namespaces/default/secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"k":"hello"}}'
expect_eq "$(jbody .data.k) $(jbody .type)" "aGVsbG8= Opaque" "secret stringData"
http GET "$CM" "" "" -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io'
expect_eq "$(jbody .kind) $(jbody '.columnDefinitions|map(.name)|join(",")')" "Table Name,Data,Age" "configmap table"
http GET "$W" "" "" -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json'
expect_eq "$(jbody '.columnDefinitions|map(.name)|join(",")')" "Name,Size,Color,Ready,Age" "CRD table columns"
expect_eq "$(jbody '.rows[0].cells[0:4]|map(tostring)|join(",")')" "s1,3,red,null" "CRD table row"
pass "built-ins: configmaps, secrets, Table format"

http GET /apis/example.com/v1beta1/namespaces/default/widgets/w1
expect_eq "$(jbody .apiVersion)" example.com/v1beta1 "served at the other version"
http DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com
expect_code 200 "delete CRD"
http GET $W
expect_code 404 "resource gone with its CRD"
http POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tmp"}}'
http POST /api/v1/namespaces/tmp/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}'
http DELETE /api/v1/namespaces/tmp
http GET /api/v1/namespaces/tmp/configmaps/c
expect_code 404 "namespace deletion removes its objects"
pass "multi-version CRDs, CRD deletion, namespace deletion"

# A Deployment's spec.selector is immutable (as on the real server: docs/real-apiserver.md)
D=/apis/apps/v1/namespaces/default/deployments
dep='{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d1"},"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}'
http POST $D "$dep"
expect_code 201 "create a Deployment"
http GET $D/d1
cur=$BODY
http PUT $D/d1 "$(jq -c '.spec.template.metadata.labels.extra = "x"' <<<"$cur")"
expect_code 200 "a Deployment's template labels may change"
http PUT $D/d1 "$(jq -c '.metadata.resourceVersion = null | .spec.selector.matchLabels.tier = "b" | .spec.template.metadata.labels.tier = "b"' <<<"$cur")"
expect_code 422 "a Deployment's selector may not change"
expect_eq "$(jbody '.details.causes[0].field')" spec.selector "immutable selector: field"
expect_eq "$(jbody .message)" 'Deployment.apps "d1" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"a","tier":"b"}}: field is immutable' "immutable selector: message"
http PATCH $D/d1 '{"spec":{"selector":{"matchLabels":{"app":"z"}}}}' application/merge-patch+json
expect_code 422 "nor through a merge patch"
pass "Deployment selector immutability"
stop_server
