#!/usr/bin/env bash
# The real kubectl against po-apiserver: discovery, CRD and CR apply (client-side and
# server-side), printer columns, -o yaml, patch, explain, finalizers with wait --for=delete.
APISERVER=$1
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "kubectl missing: skipped"; exit 77; }
start_server api

out=$(k api-resources)
grep -q '^configmaps  *cm  *v1  *true  *ConfigMap' <<<"$out" || fail "api-resources lacks configmaps: $out"
grep -q '^leases  .*coordination.k8s.io/v1  *true  *Lease' <<<"$out" || fail "api-resources lacks leases"
pass "kubectl api-resources"

k apply -f "$TESTDATA/widgets-crd.yaml" >/dev/null
k wait --for=condition=Established crd/widgets.example.com --timeout=20s >/dev/null
out=$(k api-resources --api-group=example.com)
grep -q '^widgets  *wdg  *example.com/v1  *true  *Widget' <<<"$out" || fail "CRD not discovered: $out"
pass "CRD registered and discovered"

out=$(k apply -f "$TESTDATA/widget-a.yaml")
expect_eq "$out" "widget.example.com/a created" "client-side apply create"
out=$(k apply -f "$TESTDATA/widget-a.yaml")
expect_eq "$out" "widget.example.com/a unchanged" "client-side apply again"
out=$(k get wdg)
head -1 <<<"$out" | grep -q '^NAME  *SIZE  *COLOR  *READY  *AGE$' || fail "printer columns header: $out"
sed -n 2p <<<"$out" | grep -Eq '^a  *3  *blue  *[0-9]+s$' || fail "printer columns row: $out"
pass "kubectl get shows printer columns"

y=$(k get widget a -o yaml)
grep -q '^  generation: 1$' <<<"$y" || fail "generation 1: $y"
grep -q '^  uid: ' <<<"$y" || fail "uid: $y"
grep -q 'kubectl.kubernetes.io/last-applied-configuration' <<<"$y" || fail "last-applied: $y"
pass "kubectl get -o yaml"

k patch wdg a --type=merge -p '{"spec":{"size":5}}' >/dev/null
expect_eq "$(k get wdg a -o jsonpath='{.spec.size} {.metadata.generation}')" "5 2" "merge patch bumps generation"
k patch wdg a --type=merge -p '{"metadata":{"labels":{"x":"y"}}}' >/dev/null
expect_eq "$(k get wdg a -o jsonpath='{.metadata.generation}')" "2" "metadata change keeps generation"
k patch wdg a --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
sed -n 2p <<<"$(k get wdg)" | grep -Eq '^a  *5  *blue  *True ' || fail "Ready column from the status: $(k get wdg)"
expect_eq "$(k get wdg a -o jsonpath='{.metadata.generation}')" "2" "status change keeps generation"
pass "kubectl patch (merge, status subresource)"

if k patch wdg a -p '{"spec":{"size":6}}' 2>"$T/err"; then fail "strategic merge patch on a CR must fail"; fi
grep -q 'UnsupportedMediaType\|unknown format\|not supported' "$T/err" || fail "SMP on CR error text: $(cat "$T/err")"
pass "strategic merge patch on a CR is refused as on a cluster"

out=$(k apply --server-side -f "$TESTDATA/widget-b.yaml")
expect_eq "$out" "widget.example.com/b serverside-applied" "server-side apply create"
expect_eq "$(k get wdg b -o jsonpath='{.metadata.managedFields[0].manager} {.metadata.managedFields[0].operation}')" "kubectl Apply" "managedFields"
sed 's/size: 2/size: 4/' "$TESTDATA/widget-b.yaml" | k apply --server-side -f - >/dev/null
expect_eq "$(k get wdg b -o jsonpath='{.spec.size}')" "4" "server-side apply update"
if sed 's/size: 2/size: 7/' "$TESTDATA/widget-b.yaml" | k apply --server-side --field-manager=other -f - 2>"$T/err"; then
  fail "a second manager changing an owned field must conflict"
fi
grep -q 'conflict' "$T/err" || fail "conflict text: $(cat "$T/err")"
sed 's/size: 2/size: 7/' "$TESTDATA/widget-b.yaml" | k apply --server-side --field-manager=other --force-conflicts -f - >/dev/null
expect_eq "$(k get wdg b -o jsonpath='{.spec.size}')" "7" "forced apply"
pass "kubectl apply --server-side (create, update, conflict, force)"

out=$(k explain widgets.spec.size)
grep -q 'How big the widget is' <<<"$out" || fail "explain: $out"
pass "kubectl explain on a CRD kind"

if k apply -f "$TESTDATA/widget-bad.yaml" 2>"$T/err"; then fail "invalid widget accepted"; fi
grep -q 'spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"' "$T/err" || fail "enum error: $(cat "$T/err")"
grep -q 'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"' "$T/err" || fail "type error: $(cat "$T/err")"
pass "422 Invalid from the CRD schema"

k describe wdg a | grep -q '^Name:  *a$' || fail "describe: $(k describe wdg a)"
k label wdg a team=blue >/dev/null
expect_eq "$(k get wdg -l team=blue -o name)" "widget.example.com/a" "label and label selector"
k diff -f "$TESTDATA/widget-a.yaml" >/dev/null || true   # (labels differ: exit 1 is fine)
sed 's/size: 3/size: 9/' "$TESTDATA/widget-a.yaml" >"$T/a9.yaml"
if k diff -f "$T/a9.yaml" >"$T/diff" 2>&1; then fail "kubectl diff found no change"; fi
grep -q '^+  size: 9' "$T/diff" || fail "diff output: $(cat "$T/diff")"
expect_eq "$(k get wdg a -o jsonpath='{.spec.size}')" 5 "diff (dry-run) stored nothing"
pass "kubectl describe, label, diff (server-side dry run)"

k patch wdg a --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
k delete wdg a --wait=false >/dev/null
k get wdg a -o jsonpath='{.metadata.deletionTimestamp}' | grep -q . || fail "deletionTimestamp not set"
k wait --for=delete wdg/a --timeout=20s >/dev/null 2>&1 &
waiter=$!
k patch wdg a --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
wait $waiter || fail "kubectl wait --for=delete"
if k get wdg a 2>/dev/null; then fail "a still exists"; fi
pass "finalizers, deletionTimestamp, kubectl wait --for=delete"

# kubectl's typed generators send protobuf bodies
k create configmap cm1 --from-literal=a=1 >/dev/null
k create namespace ns1 >/dev/null
k create secret generic s1 -n ns1 --from-literal=p=hello >/dev/null
expect_eq "$(k get secret s1 -n ns1 -o jsonpath='{.type} {.data.p}')" "Opaque aGVsbG8=" "kubectl create secret (protobuf body)"
k create serviceaccount robot -n ns1 >/dev/null
k delete namespace ns1 >/dev/null
if k get sa robot -n ns1 2>/dev/null; then fail "namespace deletion"; fi
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: cm2}
data: {k: v}
YAML
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: cm2}
data: {k: v2, k2: x}
YAML
expect_eq "$(k get cm cm2 -o jsonpath='{.data.k} {.data.k2}')" "v2 x" "client-side apply of a ConfigMap (strategic merge patch)"
sed -n 2p <<<"$(k get cm cm1)" | grep -Eq '^cm1  *1  *[0-9]+s$' || fail "configmap columns: $(k get cm cm1)"
k delete cm cm1 >/dev/null
pass "built-in kinds with kubectl"

k delete crd widgets.example.com >/dev/null
if k get widgets 2>/dev/null; then fail "widgets still served after CRD deletion"; fi
pass "deleting the CRD unregisters its resource"
stop_server
