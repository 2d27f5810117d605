#!/usr/bin/env bash
# Istio targets and targetRef, as data: every testdata/istio-refusals/*.yaml and
# testdata/targetref/*.yaml is one PropertyOverride that validate -f must refuse (exit 1) with
# the text of its `# reason:` header (run with the flags of its `# args:` header). Then render's
# own needs for a Service target (the Service among the inputs, with a selector) and the mesh
# flags' checks.
. "$(dirname "$0")/lib.sh"

hdr() { sed -n "s/^# $2: //p" "$1"; }

for f in "$data"/istio-refusals/*.yaml "$data"/targetref/*.yaml; do
  reason=$(hdr "$f" reason)
  [ -n "$reason" ] || { echo "FAIL $f: no '# reason:' header"; fail=$((fail+1)); continue; }
  # shellcheck disable=SC2046 # the header's words are flags
  "$bin" validate -f "$f" $(hdr "$f" args) >"$work/out" 2>&1
  check "refused $f" 1 $? "$work/out"
  contains "reason $f" "$work/out" "$reason"
done

# targetRef.namespace naming the PropertyOverride's own namespace is fine, and render writes there.
sed -e 's/namespace: team-b}/namespace: team-a}/' "$data/targetref/namespace-other.yaml" >"$work/own.yaml"
"$bin" validate -f "$work/own.yaml" >"$work/out" 2>&1
check "targetRef.namespace = its own namespace is fine" 0 $? "$work/out"
"$bin" render -f "$work/own.yaml" >"$work/out" 2>&1
check "render of it" 0 $?
contains "rendered into its own namespace" "$work/out" "namespace: team-a"

# A namespace the policy lists may name another one (validate takes the controller's flag); the
# flag is parsed strictly, naming the bad item.
"$bin" validate -f "$data/targetref/namespace-other.yaml" --allow-cross-namespace-from=infra,team-a >"$work/out" 2>&1
check "targetRef.namespace allowed by --allow-cross-namespace-from" 0 $? "$work/out"
"$bin" validate -f "$data/targetref/namespace-other.yaml" --allow-cross-namespace-from='team-a,*' >"$work/out" 2>&1
check "--allow-cross-namespace-from with *" 2 $? "$work/out"
contains "bad item named" "$work/out" "item 2 '*' is not a namespace name"
"$bin" validate -f "$data/targetref/namespace-other.yaml" --allow-cross-namespace-from='team-a,' >"$work/out" 2>&1
check "--allow-cross-namespace-from with an empty item" 2 $? "$work/out"
contains "empty item named" "$work/out" "item 2 is empty"
# preview and render apply it in its own namespace: another is refused whatever the policy.
"$bin" preview -f "$data/targetref/namespace-other.yaml" --config-dump "$data/preview/consul-dump.json" >"$work/out" 2>&1
check "preview refuses targetRef.namespace = another" 1 $? "$work/out"
contains "preview: the reason" "$work/out" "may not write into targets of namespace 'team-b'"

# The controller parses its flag the same way, before it connects anywhere: a typo fails the start.
"$bin" controller --allow-cross-namespace-from='platform,*' >"$work/out" 2>&1
check "controller --allow-cross-namespace-from with *" 2 $? "$work/out"
contains "controller: bad item named" "$work/out" "--allow-cross-namespace-from 'platform,*': item 2 '*' is not a namespace name"

# The same patches are fine for Consul where Consul can express them: the refusals are Istio's.
sed -e 's/kind: Service$/kind: ServiceDefaults/' "$data/istio-refusals/remove.yaml" >"$work/consul.yaml"
"$bin" validate -f "$work/consul.yaml" >"$work/out" 2>&1
check "remove is fine on a Consul target" 0 $? "$work/out"

# issue 23 B: the same rename after the patch naming services keeps Consul's meaning (each
# configPatch found the cluster by its generated name first): accepted.
awk '/^  patches:/{print; p=1; next} !p{print; next} /^    - resourceFilter:/{n++} {b[n]=b[n] $0 "\n"} END{printf "%s%s", b[2], b[1]}' \
  "$data/istio-refusals/rename-before-service-patch.yaml" >"$work/rename-last.yaml"
"$bin" validate -f "$work/rename-last.yaml" >"$work/out" 2>&1
check "a cluster rename after the patches naming services" 0 $? "$work/out"

# An array becomes MERGE_AND_REPLACE_LIST from Istio 1.31 on (refused on 1.30: its # args:).
"$bin" validate -f "$data/istio-refusals/array-before-1-31.yaml" --istio-version 1.31 >"$work/out" 2>&1
check "array on 1.31" 0 $? "$work/out"
# No release named: taken as the newest listed (1.31), so the array is accepted, with a warning
# that says the release was assumed and what an older Istio does with it; the report's Envoy API
# line says "assumed" too (issue 24).
"$bin" validate -f "$data/istio-refusals/array-before-1-31.yaml" >"$work/out" 2>&1
check "array, release not known" 0 $? "$work/out"
contains "array, release not known: the warning" "$work/out" "warning: document 1: PropertyOverride shop/array-before-1-31: Patches[0] /internal_only_headers: the Istio release is not known (neither --istio-version nor istiod's version label): taken as 1.31, the newest listed, so this array becomes MERGE_AND_REPLACE_LIST, which Istio before 1.31 refuses; set --istio-version"
contains "array, release not known: the Envoy API line" "$work/out" "Envoy API: go-control-plane envoy v1.37.0 (istio@1.31 assumed)"
"$bin" validate -f "$data/istio-refusals/array-before-1-31.yaml" -o json >"$work/out" 2>&1
contains "array, release not known: JSON" "$work/out" '"release_assumed":true'
"$bin" render -f "$data/istio-refusals/array-before-1-31.yaml" -f examples/istio/outlier-detection.yaml >"$work/out" 2>"$work/err"
check "render array, release not known" 0 $? "$work/err"
contains "render array, release not known: operation" "$work/out" "operation: MERGE_AND_REPLACE_LIST"
contains "render array, release not known: warned" "$work/err" "the Istio release is not known"
"$bin" validate -f "$data/istio-refusals/array-before-1-31.yaml" --mesh istio@1.31 >"$work/out" 2>&1
if grep -q 'assumed\|not known' "$work/out"; then echo "FAIL array with --mesh istio@1.31: said assumed"; fail=$((fail+1)); else pass=$((pass+1)); fi
"$bin" render -f "$data/istio-refusals/array-before-1-31.yaml" -f examples/istio/outlier-detection.yaml \
  --istio-version 1.32.0 >"$work/out" 2>"$work/err"
check "render array on 1.32" 0 $? "$work/err"
contains "render array operation" "$work/out" "operation: MERGE_AND_REPLACE_LIST"

# What the IR says reaches the value: a path through a wrapper to its `value`, or an object for
# the wrapper, is the bare
# wrapper (protojson has no {"value": v} form); an enum's first value on a oneof member is
# copied by a merge (it has presence), so it is not a zero-value refusal; an enum given by
# number is written by name.
cat >"$work/ir.yaml" <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: ir, namespace: shop}
spec:
  targetRef: {group: networking.istio.io, kind: Mesh, name: global}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /max_requests_per_connection/value
      value: 7
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /type
      value: STATIC
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /lb_policy
      value: 2
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /per_connection_buffer_limit_bytes
      value: {value: 1024}
YAML
"$bin" render -f "$work/ir.yaml" >"$work/out" 2>"$work/err"
check "render the IR cases" 0 $? "$work/err"
"$yaml2json" "$work/out" >"$work/got.json"
jqcheck "wrapper value written bare" "$work/got.json" '.[0].spec.configPatches[0].patch.value == {"max_requests_per_connection": 7}'
jqcheck "oneof enum 0 kept" "$work/got.json" '.[0].spec.configPatches[1].patch.value == {"type": "STATIC"}'
jqcheck "enum by number written by name" "$work/got.json" '.[0].spec.configPatches[2].patch.value == {"lb_policy": "RING_HASH"}'
# issue 23 A: an object for a wrapper ({value: v}) sets the wrapper to v, which a MERGE does too
# (the wrapper's one field): not an "object value" refusal, and written bare as protojson wants.
jqcheck "wrapper object written bare" "$work/got.json" '.[0].spec.configPatches[3].patch.value == {"per_connection_buffer_limit_bytes": 1024}'

# render needs the target Service (its selector); it says so and renders the others.
sed -n '1,/^---$/p' examples/istio/outlier-detection.yaml | sed '$d' >"$work/po.yaml"
"$bin" render -f "$work/po.yaml" -f examples/istio/mesh-wide-timeouts.yaml >"$work/out" 2>"$work/err"
check "render without the Service" 1 $? "$work/err"
contains "render names the Service" "$work/err" "render needs the target Service 'shop/api' among the inputs: its spec.selector becomes the EnvoyFilter's workloadSelector"
contains "render still renders the others" "$work/out" "name: propertyoverride.platform.mesh-defaults"
printf -- '---\napiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: shop}\nspec: {type: ExternalName, externalName: x.example}\n' >"$work/svc.yaml"
"$bin" render -f "$work/po.yaml" -f "$work/svc.yaml" >"$work/out" 2>"$work/err"
check "render with a Service without selector" 1 $? "$work/err"
contains "render says no selector" "$work/err" "the Service has no spec.selector"

# The flags: cluster domain and root namespace reach the objects; bad values are usage errors.
"$bin" render -f examples/istio/outlier-detection.yaml -f examples/istio/mesh-wide-timeouts.yaml \
  --cluster-domain corp.example --istio-root-namespace mesh-root >"$work/out" 2>"$work/err"
check "render with flags" 0 $? "$work/err"
contains "cluster domain" "$work/out" "service: payments.default.svc.corp.example"
contains "root namespace" "$work/out" "namespace: mesh-root"
for bad in "--istio-version 2.0" "--istio-version 1.x" "--cluster-domain .local" "--cluster-domain cluster..local" "--istio-root-namespace Istio_System"; do
  # shellcheck disable=SC2086
  "$bin" render -f examples/istio/mesh-wide-timeouts.yaml $bad >"$work/out" 2>&1
  check "bad flag $bad" 2 $? "$work/out"
done
# EnvoyFilters checked as objects: one written by hand with an unknown field (an error), a zero
# value and a list under MERGE and INSERT_FIRST on CLUSTER (warnings); every EnvoyFilter render
# prints passes clean.
"$bin" validate -f "$data/envoyfilter/hand-written.yaml" >"$work/out" 2>&1
check "hand-written EnvoyFilter" 1 $? "$work/out"
contains "unknown field" "$work/out" "error: document 1: EnvoyFilter shop/hand: Patches[1]: spec.configPatches[1].patch.value/conect_timeout: not a valid envoy.config.cluster.v3.Cluster for applyTo CLUSTER: No such field"
contains "unknown field named" "$work/out" "conect_timeout"
contains "zero under MERGE" "$work/out" "spec.configPatches[0].patch.value/outlier_detection/consecutive_5xx: a zero value under MERGE"
contains "INSERT_FIRST" "$work/out" "INSERT_FIRST on CLUSTER is treated as ADD"
contains "list under MERGE" "$work/out" "spec.configPatches[3].patch.value/internal_only_headers: a list under MERGE is appended"
contains "counted" "$work/out" "0 valid, 1 invalid, 0 skipped"
for f in examples/istio/*.yaml; do
  # shellcheck disable=SC2046
  "$bin" render -f "$f" $(sed -n 's/^# render-args: //p' "$f") | "$bin" validate -f - >"$work/out" 2>&1
  check "rendered EnvoyFilter of $f validates clean" 0 $? "$work/out" "${api_istio}
1 valid, 0 invalid, 0 skipped"
done
# adv1: an EnvoyFilter has a configPatch per patch and service (100 patches x 64 services is 6,400
# of them): one that cannot be stored (etcd's default limit, 1.5 MiB, for its configPatches
# alone) is refused at admission, before the controller builds hundreds of megabytes of it on
# every retry of a create the API server refuses; 10 x 64 small ones are fine.
big_po() { # patches, value length
  local svcs v i
  svcs=$(for ((i = 0; i < 64; i++)); do printf '{name: service-%02d}, ' "$i"; done)
  v=$(head -c "$2" /dev/zero | tr '\0' x)
  printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: big, namespace: platform}\n'
  printf 'spec:\n  targetRef: {group: networking.istio.io, kind: Mesh, name: global}\n  patches:\n'
  for ((i = 0; i < $1; i++)); do
    printf '    - {resourceFilter: {resourceType: cluster, trafficDirection: outbound, services: [%s]}, op: add, path: /alt_stat_name, value: %s}\n' "${svcs%, }" "$v"
  done
}
big_po 100 300 >"$work/big.yaml"
"$bin" validate -f "$work/big.yaml" >"$work/out" 2>&1
check "an EnvoyFilter too large to store is refused" 1 $? "$work/out"
contains "too large: the reason" "$work/out" "configPatches of at least"
big_po 10 20 >"$work/big.yaml"
"$bin" validate -f "$work/big.yaml" >"$work/out" 2>&1
check "10 patches x 64 services are fine" 0 $? "$work/out"
finish
