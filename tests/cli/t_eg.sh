#!/usr/bin/env bash
# Envoy Gateway targets, as data: every testdata/eg-refusals/*.yaml is one PropertyOverride that
# validate -f must refuse (exit 1) with the text of its `# reason:` header; every
# testdata/eg-render-refusals/*.yaml is one PropertyOverride (with the Gateway and HTTPRoutes it
# has) that validate accepts and render refuses (exit 1) with its reason, rendering nothing.
# Then what the IR says reaches the EnvoyPatchPolicy (paths, values, names, priority), and
# EnvoyPatchPolicies written by hand (validate -f).
. "$(dirname "$0")/lib.sh"

hdr() { sed -n "s/^# $2: //p" "$1"; }

n=0
for f in "$data"/eg-refusals/*.yaml; do
  reason=$(hdr "$f" reason)
  [ -n "$reason" ] || { echo "FAIL $f: no '# reason:' header"; fail=$((fail+1)); continue; }
  "$bin" validate -f "$f" >"$work/out" 2>&1
  check "refused $f" 1 $? "$work/out"
  contains "reason $f" "$work/out" "$reason"
  n=$((n+1))
done
for f in "$data"/eg-render-refusals/*.yaml; do
  reason=$(hdr "$f" reason)
  [ -n "$reason" ] || { echo "FAIL $f: no '# reason:' header"; fail=$((fail+1)); continue; }
  "$bin" validate -f "$f" >"$work/out" 2>&1
  check "valid before render $f" 0 $? "$work/out"
  "$bin" render -f "$f" >"$work/out" 2>"$work/err"
  check "render refused $f" 1 $? "$work/err"
  contains "render reason $f" "$work/err" "$reason"
  [ -s "$work/out" ] && { echo "FAIL render of $f printed:"; cat "$work/out"; fail=$((fail+1)); }
  n=$((n+1))
done
[ $n -ge 12 ] && pass=$((pass+1)) || { echo "FAIL only $n refusal cases"; fail=$((fail+1)); }

# Oneof members Envoy Gateway's generated resources leave room for (issue 23 C1; the refused ones
# are eg-refusals/oneof-*.yaml): every testdata/eg-oneof/*.yaml is accepted, with no word of a
# oneof when its `# oneof:` header is `none`, else with the warning text after `warning: `.
n=0
for f in "$data"/eg-oneof/*.yaml; do
  want=$(hdr "$f" oneof)
  "$bin" validate -f "$f" >"$work/out" 2>&1
  check "accepted $f" 0 $? "$work/out"
  case "$want" in
    # (a message about a oneof names it, "oneof 'address'"; the file's and the object's own names,
    # eg-oneof/..., oneof-..., are in a finding's location and say nothing)
    none) grep -q "oneof '" "$work/out" && { echo "FAIL $f: a oneof named:"; cat "$work/out"; fail=$((fail+1)); } || pass=$((pass+1)) ;;
    "warning: "*) contains "warned $f" "$work/out" "${want#warning: }" ;;
    *) echo "FAIL $f: no '# oneof: none' or '# oneof: warning: TEXT' header"; fail=$((fail+1)) ;;
  esac
  n=$((n+1))
done
[ $n -ge 6 ] && pass=$((pass+1)) || { echo "FAIL only $n oneof cases"; fail=$((fail+1)); }

# Envoy Gateway validates the resource after each entry (eg_steps.c; the refused sequences and
# created parents are eg-refusals/steps-*.yaml): every testdata/eg-steps/*.yaml is accepted, with
# no word of it when its `# steps:` header is `none`, else with the warning text after `warning: `.
n=0
for f in "$data"/eg-steps/*.yaml; do
  want=$(hdr "$f" steps)
  "$bin" validate -f "$f" >"$work/out" 2>&1
  check "accepted $f" 0 $? "$work/out"
  case "$want" in
    none) grep -q "after each jsonPatches entry" "$work/out" && { echo "FAIL $f: judged by step:"; cat "$work/out"; fail=$((fail+1)); } || pass=$((pass+1)) ;;
    "warning: "*) contains "warned $f" "$work/out" "${want#warning: }" ;;
    *) echo "FAIL $f: no '# steps: none' or '# steps: warning: TEXT' header"; fail=$((fail+1)) ;;
  esac
  n=$((n+1))
done
[ $n -ge 4 ] && pass=$((pass+1)) || { echo "FAIL only $n step cases"; fail=$((fail+1)); }
# The step's rules are the Gateway's release's Envoy API: runtime-key.yaml creates a RuntimeDouble
# without runtime_key, which v1.32.4 (Envoy Gateway 1.5) requires non-empty and v1.37.0 (1.6 to
# 1.9) no longer judges, so 1.5 refuses the entry and 1.9 (the default, above) says nothing.
"$bin" validate -f "$data/eg-steps/runtime-key.yaml" --mesh envoy-gateway@1.5 >"$work/out" 2>&1
check "runtime-key.yaml refused on Envoy Gateway 1.5" 1 $? "$work/out"
contains "runtime-key.yaml's step on 1.5" "$work/out" "breaks Envoy's rule at /round_robin_lb_config/slow_start_config/aggression/runtime_key"
"$bin" validate -f "$data/eg-steps/runtime-key.yaml" --mesh envoy-gateway@1.9 >"$work/out" 2>&1
check "runtime-key.yaml accepted on Envoy Gateway 1.9" 0 $? "$work/out"
# The step judgment is Envoy Gateway's: the same sequence is fine for Consul (which judges only
# the final result), with no word of Envoy Gateway's entries.
sed -e 's/kind: Gateway$/kind: ServiceDefaults/; s/group: gateway.networking.k8s.io/group: consul.hashicorp.com/' \
  "$data/eg-refusals/steps-sequence-bind-address.yaml" >"$work/consul.yaml"
"$bin" validate -f "$work/consul.yaml" >"$work/out" 2>&1
check "a sequence is fine on a Consul target" 0 $? "$work/out"
grep -q "jsonPatches entry" "$work/out" && { echo "FAIL the Consul target judged by Envoy Gateway's steps:"; cat "$work/out"; fail=$((fail+1)); } || pass=$((pass+1))

# The refusals are Envoy Gateway's: the same remove and inbound patch are fine for Consul.
for c in remove inbound; do
  sed -e 's/kind: Gateway$/kind: ServiceDefaults/; s/group: gateway.networking.k8s.io/group: consul.hashicorp.com/' \
    "$data/eg-refusals/$c.yaml" >"$work/consul.yaml"
  "$bin" validate -f "$work/consul.yaml" >"$work/out" 2>&1
  check "$c is fine on a Consul target" 0 $? "$work/out"
done

# What the IR says reaches the value and the path: a path through a wrapper to its `value` is
# the bare wrapper; an enum given by number is written by name; a Duration is a string; an
# object value replaces the message whole (an add of the object, as Consul replaces it); the
# priority is the PropertyOverride's; /type on every cluster is a warning (a Backend of hostnames' cluster
# holds cluster_type instead: eg-oneof/type-every-cluster.yaml).
cat >"$work/ir.yaml" <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: ir, namespace: shop}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  priority: -5
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /per_connection_buffer_limit_bytes/value
      value: 7
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /lb_policy
      value: 2
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /common_lb_config/update_merge_window
      value: 1.5s
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection
      value: {consecutive_5xx: 3}
    - resourceFilter: {resourceType: cluster-load-assignment, trafficDirection: outbound, services: [{name: web}]}
      op: add
      path: /policy/overprovisioning_factor
      value: 150
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /type
      value: STRICT_DNS
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: shop}
spec:
  gatewayClassName: eg
  listeners:
    - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: eg}]
  rules:
    - backendRefs: [{name: web, namespace: default, port: 80}]
YAML
"$bin" validate -f "$work/ir.yaml" >"$work/out" 2>&1
check "IR cases valid" 0 $? "$work/out"
contains "oneof member warned" "$work/out" "/type is a member of oneof 'cluster_discovery_type'"
"$bin" render -f "$work/ir.yaml" >"$work/out" 2>"$work/err"
check "render the IR cases" 0 $? "$work/err"
"$yaml2json" "$work/out" >"$work/got.json"
op() { echo ".[0].spec.jsonPatches[$1].operation"; }
jqcheck "wrapper written bare" "$work/got.json" "$(op 0) == {\"op\": \"add\", \"path\": \"/per_connection_buffer_limit_bytes\", \"value\": 7}"
jqcheck "enum by number written by name" "$work/got.json" "$(op 1).value == \"RING_HASH\""
jqcheck "Duration a string" "$work/got.json" "$(op 2) == {\"op\": \"add\", \"path\": \"/common_lb_config/update_merge_window\", \"value\": \"1.5s\"}"
jqcheck "object value whole" "$work/got.json" "$(op 3).value == {\"consecutive_5xx\": 3}"
jqcheck "CLA named as its cluster" "$work/got.json" '.[0].spec.jsonPatches[4] | .type == "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment" and .name == "httproute/shop/web/rule/0"'
jqcheck "priority" "$work/got.json" '.[0].spec.priority == -5 and .[0].spec.type == "JSONPatch"'
jqcheck "targetRef" "$work/got.json" '.[0].spec.targetRef == {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "eg"}'
jqcheck "one entry per patch and resource" "$work/got.json" '(.[0].spec.jsonPatches | length) == 6'

# Objects for well-known types, as protojson (what Envoy Gateway unmarshals the patched resource
# with) writes them (issue 23 A and D): an object for a wrapper is its bare value ({} its zero,
# {value: v} v); an Any in Consul's {type_url: u} form is {"@type": u}, with the empty message's
# JSON form under "value" for a well-known type that has one (protojson requires it). The
# TransportSocket is named first: Envoy Gateway validates the cluster after each entry, and one
# without its name breaks Envoy's rules (eg-refusals/steps-*.yaml).
cat >"$work/wkt.yaml" <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: wkt, namespace: shop}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /outlier_detection/consecutive_5xx
      value: {}
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /per_connection_buffer_limit_bytes
      value: {value: 1024}
    - resourceFilter: {resourceType: listener, trafficDirection: outbound}
      op: add
      path: /bind_to_port
      value: {}
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /transport_socket/name
      value: envoy.transport_sockets.raw_buffer
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /transport_socket/typed_config
      value: {type_url: type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer}
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /transport_socket/typed_config
      value: {}
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /transport_socket/typed_config
      value: {type_url: type.googleapis.com/google.protobuf.Duration}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: shop}
spec:
  gatewayClassName: eg
  listeners:
    - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: eg}]
  rules:
    - backendRefs: [{name: web, namespace: default, port: 80}]
YAML
"$bin" render -f "$work/wkt.yaml" >"$work/out" 2>"$work/err"
check "render the well-known-type cases" 0 $? "$work/err"
"$yaml2json" "$work/out" >"$work/got.json"
jqcheck "wrapper {} is its zero, bare" "$work/got.json" "$(op 0).value == 0"
jqcheck "wrapper {value: v} is v, bare" "$work/got.json" "$(op 1).value == 1024"
jqcheck "BoolValue {} is false" "$work/got.json" "$(op 2).value == false"
jqcheck "Any in protojson's form" "$work/got.json" "$(op 4).value == {\"@type\": \"type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer\"}"
jqcheck "the empty Any is {}" "$work/got.json" "$(op 5).value == {}"
jqcheck "an Any of a well-known type: its JSON form under value" "$work/got.json" "$(op 6).value == {\"@type\": \"type.googleapis.com/google.protobuf.Duration\", \"value\": \"0s\"}"
# Every such policy passes the hand-written checker too (it decodes each value with protojson's rules).
"$bin" render -f "$work/wkt.yaml" | "$bin" validate -f - >"$work/out" 2>&1
check "rendered well-known-type policy validates clean" 0 $? "$work/out" "${api_eg}
1 valid, 0 invalid, 0 skipped"

# A PropertyOverride name of 237-253 characters (issue 25): once refused, as its policy's name
# would pass 253; now cut and hashed: the policy's name is 253 characters, a valid subdomain.
long=$(head -c 253 /dev/zero | tr '\0' a)
sed "s/name: wkt, namespace: shop/name: $long, namespace: shop/" "$work/wkt.yaml" >"$work/long.yaml"
"$bin" validate -f "$work/long.yaml" >"$work/out" 2>&1
check "a 253-character name is valid for a Gateway target" 0 $? "$work/out"
"$bin" render -f "$work/long.yaml" | "$yaml2json" /dev/stdin >"$work/got.json"
jqcheck "its policy's name: 253 characters, prefix then hash" "$work/got.json" \
  '.[0].metadata.name | length == 253 and startswith("propertyoverride-aaaa") and test("-[0-9a-f]{16}$")'

# Names: listeners sharing a port share the first one's listener and (plain HTTP) route
# configuration, HTTPS has its own; a route of another namespace attaches only where the
# listener allows all namespaces and its sectionName names it; a redirect rule has no cluster.
"$bin" render -f examples/envoy-gateway/gateway-wide-timeouts.yaml >"$work/out" 2>"$work/err"
check "render gateway-wide" 0 $? "$work/err"
"$yaml2json" "$work/out" >"$work/got.json"
names() { jq -r "[.[0].spec.jsonPatches[] | select(.type | endswith(\"$1\")) | .name] | unique | join(\",\")" "$work/got.json"; }
[ "$(names Listener)" = "edge/public/http,edge/public/https" ] && pass=$((pass+1)) || { echo "FAIL listener names: $(names Listener)"; fail=$((fail+1)); }
[ "$(names RouteConfiguration)" = "edge/public/http,edge/public/https" ] && pass=$((pass+1)) || { echo "FAIL route names: $(names RouteConfiguration)"; fail=$((fail+1)); }
[ "$(names Cluster)" = "httproute/edge/site/rule/0,httproute/shop/store/rule/0" ] && pass=$((pass+1)) || { echo "FAIL cluster names: $(names Cluster)"; fail=$((fail+1)); }
# The same route with a sectionName naming a listener that admits only its own namespace: gone.
sed 's/sectionName: https/sectionName: http/' examples/envoy-gateway/gateway-wide-timeouts.yaml >"$work/section.yaml"
"$bin" render -f "$work/section.yaml" | "$yaml2json" /dev/stdin >"$work/got.json"
[ "$(names Cluster)" = "httproute/edge/site/rule/0" ] && pass=$((pass+1)) || { echo "FAIL sectionName: $(names Cluster)"; fail=$((fail+1)); }

# An HTTPRoute given twice: the last one counts, as kubectl apply of the inputs in order leaves it.
cat >"$work/site2.yaml" <<'YAML'
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: site, namespace: edge}
spec:
  parentRefs: [{name: public}]
  rules:
    - backendRefs: [{name: web, port: 80}]
    - backendRefs: [{name: web-canary, port: 80}]
YAML
"$bin" render -f examples/envoy-gateway/gateway-wide-timeouts.yaml -f "$work/site2.yaml" | "$yaml2json" /dev/stdin >"$work/got.json"
[ "$(names Cluster)" = "httproute/edge/site/rule/0,httproute/edge/site/rule/1,httproute/shop/store/rule/0" ] && pass=$((pass+1)) ||
  { echo "FAIL the last HTTPRoute of a name: $(names Cluster)"; fail=$((fail+1)); }

# EnvoyPatchPolicies written by hand: each finding of testdata/envoypatchpolicy/hand-written.yaml.
"$bin" validate -f "$data/envoypatchpolicy/hand-written.yaml" >"$work/out" 2>&1
check "hand-written EnvoyPatchPolicy" 1 $? "$work/out"
contains "unknown field" "$work/out" "Patches[0]: spec.jsonPatches[0].operation.value: not a valid value at /conect_timeout of envoy.config.cluster.v3.Cluster"
contains "unknown field named" "$work/out" "No such field: conect_timeout"
contains "wrapper /value" "$work/out" "Patches[1]: spec.jsonPatches[1].operation.value: not a valid value at /per_connection_buffer_limit_bytes of envoy.config.cluster.v3.Cluster (protojson, proto field names; wrappers are bare, Durations strings such as \"5s\"): Expected number or string"
contains "remove warned" "$work/out" "warning: document 1: EnvoyPatchPolicy shop/hand: Patches[2]: spec.jsonPatches[2]: op remove fails"
contains "test warned" "$work/out" "Patches[3]: spec.jsonPatches[3]: op test changes nothing"
contains "Any not checked" "$work/out" "Patches[4]: spec.jsonPatches[4].operation.value at /default_filter_chain/filters/0/typed_config/stat_prefix: not checked"
contains "enum name" "$work/out" "Unknown enumerator: 'RING_HASHH'"
contains "add without value" "$work/out" "Patches[7]: spec.jsonPatches[7].operation.value: required with op add"
if grep -q 'jsonPatches\[5\]' "$work/out"; then echo "FAIL the valid array-index add was flagged"; fail=$((fail+1)); else pass=$((pass+1)); fi
contains "counted" "$work/out" "0 valid, 1 invalid, 0 skipped"
# Every EnvoyPatchPolicy render prints for the examples passes clean.
for f in examples/envoy-gateway/*.yaml; do
  "$bin" render -f "$f" | "$bin" validate -f - >"$work/out" 2>&1
  check "rendered EnvoyPatchPolicy of $f validates clean" 0 $? "$work/out" "${api_eg}
1 valid, 0 invalid, 0 skipped"
done
# adv1: an add of JSON null is a value (RFC 6902: any JSON value; protojson reads null as the
# field unset, so it clears a field without failing when it is absent): not "required".
"$bin" validate -f "$data/envoypatchpolicy/null-value.yaml" >"$work/out" 2>&1
check "add of null" 1 $? "$work/out"
if grep -q 'jsonPatches\[0\]' "$work/out"; then echo "FAIL add of null was flagged"; cat "$work/out"; fail=$((fail+1)); else pass=$((pass+1)); fi
contains "replace without value still required" "$work/out" "Patches[1]: spec.jsonPatches[1].operation.value: required with op replace"
# adv1: Envoy Gateway builds the xDS listeners of HTTP and HTTPS Gateway listeners before those
# of TLS and TCP ones (internal/xds/translator: HTTP, then TCP, then UDP), so a port shared by a
# TLS passthrough listener listed first and an HTTPS one is the HTTPS listener's xDS listener.
"$bin" render -f "$data/eg-listeners/tls-listed-first.yaml" >"$work/out" 2>"$work/err"
check "mixed listeners render" 0 $? "$work/err"
contains "the shared port's xDS listener is the HTTPS listener's" "$work/out" "name: shop/eg/https"
if grep -q "name: shop/eg/passthrough" "$work/out"; then echo "FAIL the TLS listener named the shared xDS listener"; fail=$((fail+1)); else pass=$((pass+1)); fi
contains "a TCP listener alone on its port names its own" "$work/out" "name: shop/eg/raw"
finish
