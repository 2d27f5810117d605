#!/usr/bin/env bash
# upgrade-check of a cluster's objects (issue 24), as its usage and docs/gitops.md say to run it:
#   kubectl get propertyoverrides,envoyfilters,envoypatchpolicies,... -A -o yaml |
#     propertyoverride upgrade-check -f - --from ... --to ...
# with the real kubectl against po-apiserver. The one-shot CLI links no HTTP client (ARCHITECTURE.md
# section 2: every `validate -f` would pay libcurl's start-up), so kubectl reads the cluster, with
# whatever authentication the kubeconfig uses. Each case of the upgrade corpus
# (tests/cli/testdata/upgrade) is applied and read back through that pipeline: the verdict
# (exit status) and every finding (its kind, object, patch and message; not the file position,
# which a List from the API server does not have) must be those of the manifest read as a file,
# although the API server added uid, resourceVersion, generation, creationTimestamp and
# managedFields to each object. Then one List holding every kind at once.
#   t_upgrade.sh PO_APISERVER PROPERTYOVERRIDE
APISERVER=$1
PO=$2
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "kubectl missing: skipped"; exit 77; }
top=$(cd "$(dirname "$0")/../.." && pwd)
u=$top/tests/cli/testdata/upgrade
start_server api

k apply -f "$top/crds/propertyoverride.io_propertyoverrides.yaml" -f "$top/crds/istio/networking.istio.io_envoyfilters.yaml" \
  -f "$top/crds/envoygateway/gateway.envoyproxy.io_envoypatchpolicies.yaml" \
  -f "$top/crds/consul/consul.hashicorp.com_servicedefaults.yaml" -f "$top/crds/consul/consul.hashicorp.com_proxydefaults.yaml" >/dev/null
k wait --for=condition=Established crd --all --timeout=20s >/dev/null
kinds=propertyoverrides.propertyoverride.io,envoyfilters.networking.istio.io,envoypatchpolicies.gateway.envoyproxy.io,servicedefaults.consul.hashicorp.com,proxydefaults.consul.hashicorp.com
pass "CRDs established"

# findings FILE: each finding line without its file:line:col and document number, sorted
findings() { sed -n 's/^[^ ]*: \(error\|warning\): document [0-9]*\( items\[[0-9]*\]\)\?: /\1: /p' "$1" | sort; }

n=0
for f in "$u"/*.yaml; do
  name=$(basename "$f" .yaml)
  args=$(sed -n 's/^# args: //p' "$f" | head -1)
  want=$(sed -n 's/^# exit: //p' "$f" | head -1)
  for ns in $(sed -n 's/.*namespace: \([a-z0-9-]*\).*/\1/p' "$f" | sort -u); do
    k create namespace "$ns" >/dev/null 2>&1 || true
  done
  k apply -f "$f" >/dev/null || fail "$name: kubectl apply"
  # shellcheck disable=SC2086
  rc_file=0
  "$PO" upgrade-check $args -f "$f" >"$T/file.out" 2>&1 || rc_file=$?
  k get "$kinds" -A -o yaml >"$T/list.yaml" || fail "$name: kubectl get"
  # shellcheck disable=SC2086
  rc=0
  "$PO" upgrade-check $args -f - <"$T/list.yaml" >"$T/cluster.out" 2>&1 || rc=$?
  expect_eq "$rc" "$want" "$name: exit status of the cluster's objects"
  expect_eq "$rc_file" "$want" "$name: exit status of the file"
  findings "$T/file.out" >"$T/file.f" || true
  findings "$T/cluster.out" >"$T/cluster.f" || true
  [ -s "$T/file.f" ] || [ "$want" = 0 ] || fail "$name: no finding read from the file's report"
  diff "$T/file.f" "$T/cluster.f" >"$T/diff" || { cat "$T/diff" >&2; fail "$name: the cluster's findings differ from the file's"; }
  expect_eq "$(tail -1 "$T/cluster.out")" "$(tail -1 "$T/file.out")" "$name: summary"
  k delete -f "$f" --wait=true >/dev/null || fail "$name: kubectl delete"
  n=$((n + 1))
done
pass "$n cases of the upgrade corpus: the same verdict and findings read from the cluster as from the file"

# Every kind at once, from every namespace: one List, each item judged by its own mesh's releases
# (objects of another mesh than --to's skipped, as for files).
for f in "$u"/ef-removed.yaml "$u"/po-deprecated.yaml "$u"/epp-moved.yaml "$u"/clean.yaml; do k apply -f "$f" >/dev/null; done
k get "$kinds" -A -o yaml >"$T/list.yaml"
rc=0
"$PO" upgrade-check --from istio@1.26 --to istio@1.28 -f - <"$T/list.yaml" >"$T/out" 2>&1 || rc=$?
expect_eq "$rc" 1 "every kind at once: exit status"
grep -q 'removed: @type envoy.config.grpc_credential.v3.AwsIamConfig is not in v1.37.0' "$T/out" || fail "every kind at once: the removed Any not found: $(cat "$T/out")"
grep -q 'skipped' "$T/out" || fail "every kind at once: no summary"
pass "every kind at once"
