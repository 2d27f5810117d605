#!/usr/bin/env bash
# preview (issue 13): config dumps built from the meshes' naming rules (testdata/preview: a
# Consul sidecar with upstreams in two partitions, a subset, a peer and failover targets in two
# datacenters; an Istio sidecar) and their expected output as golden files (NAME.out, and
# NAME.err with the exit status when the run wrote to stderr or failed). PO_UPDATE_GOLDEN=1
# rewrites them. Then the admin-URL path against a small HTTP server on loopback, and errors.
#   t_preview.sh BIN
set -u
. "$(dirname "$0")/lib.sh"
pv=$data/preview
update=${PO_UPDATE_GOLDEN:-0}

# case NAME ARGS...: one run, stdout and (stderr + exit) against the golden files.
case_() {
  local name=$1; shift
  "$bin" preview "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ -s "$work/err" ] || [ $rc != 0 ]; then printf 'exit %d\n' $rc >>"$work/err"; else : >"$work/err"; fi
  if [ "$update" = 1 ]; then
    cp "$work/out" "$pv/$name.out"
    if [ -s "$work/err" ]; then cp "$work/err" "$pv/$name.err"; else rm -f "$pv/$name.err"; fi
  fi
  golden "preview $name" 0 0 "$work/out" "$pv/$name.out"
  : >"$work/none"
  golden "preview $name (stderr, exit)" 0 0 "$work/err" "$( [ -f "$pv/$name.err" ] && echo "$pv/$name.err" || echo "$work/none")"
}

consul=(-f $pv/consul-po.yaml --config-dump $pv/consul-dump.json)
istio=(-f $pv/istio-po.yaml --config-dump $pv/istio-dump.json --mesh istio)
case_ consul "${consul[@]}" --datacenter dc1
case_ consul-json "${consul[@]}" --datacenter dc1 -o json
case_ consul-bootstrap-datacenter "${consul[@]}"
case_ other-service "${consul[@]}" -f $pv/other-service-po.yaml
case_ consul-no-datacenter -f $pv/consul-po.yaml --config-dump $pv/consul-no-bootstrap-dump.json
case_ consul-other-datacenter "${consul[@]}" --datacenter dc2
case_ consul-inbound-route -f $pv/consul-inbound-route-po.yaml --config-dump $pv/consul-inbound-route-dump.json
case_ apply-order -f $pv/apply-order-po.yaml --config-dump $pv/consul-dump.json
case_ control-chars -f $pv/control-chars-po.yaml --config-dump $pv/control-chars-dump.json
if grep -qE '^(~~~|\+\+\+ b/cluster/x|# Approved)' "$work/out" || grep -q $'\e' "$work/out"; then
  echo "FAIL preview control-chars: a name from the dump printed lines (or an ESC) of its own"; fail=$((fail+1))
else pass=$((pass+1)); fi
case_ inline-cla -f $pv/inline-cla-po.yaml --config-dump $pv/consul-dump.json
case_ created-parent -f $pv/created-parent-po.yaml --config-dump $pv/consul-dump.json --datacenter dc1
case_ istio "${istio[@]}"
case_ istio-json "${istio[@]}" -o json
# an array under an Istio target: without the Istio release (the dump's bootstrap names none),
# taken as the newest listed (1.31) and applied, with a warning that the release was assumed;
# applied from 1.31 on (the release decides as for render: MERGE_AND_REPLACE_LIST)
case_ istio-array-noversion -f $pv/istio-array-po.yaml --config-dump $pv/istio-dump.json --mesh istio
case_ istio-array -f $pv/istio-array-po.yaml --config-dump $pv/istio-dump.json --mesh istio --istio-version 1.31
# the release the dump's bootstrap names (ISTIO_VERSION 1.26.3) is the one its targets are judged
# as, features included: the array refused as on 1.26, not accepted as the newest release assumed
case_ istio126-array -f $pv/istio-array-po.yaml --config-dump $pv/istio126-dump.json --mesh istio
case_ istio-bad-version -f $pv/istio-array-po.yaml --config-dump $pv/istio-dump.json --mesh istio --istio-version 2.1
case_ invalid-override -f $pv/invalid-po.yaml --config-dump $pv/consul-dump.json
case_ unknown-type -f $pv/consul-po.yaml --config-dump $pv/unknown-type-dump.json --datacenter dc1
case_ not-a-dump -f $pv/consul-po.yaml --config-dump $pv/consul-po.yaml
case_ usage-both "${consul[@]}" --envoy-admin http://127.0.0.1:1
case_ usage-mesh -f $pv/consul-po.yaml --config-dump $pv/consul-dump.json --mesh linkerd

# ---- version-exact (issue 24): the dump read with the newest snapshot (fields current proxies
# carry were "No such field" and refused the whole dump), the overrides judged and applied with
# the snapshot of the proxy's release: --mesh MESH@RELEASE or --envoy-api, else its bootstrap's
# ISTIO_VERSION (Istio), else Consul's one snapshot, else the bootstrap's Envoy version, else the
# mesh's default; each report names it and why.
# An Istio 1.26 sidecar whose DNS clusters carry dns_jitter (Istio sets it since 1.24):
# ISTIO_VERSION 1.26.3 -> v1.32.4; --mesh istio@1.30 -> v1.37.0.
i126=(-f $pv/istio126-po.yaml --config-dump $pv/istio126-dump.json)
case_ istio126 "${i126[@]}" --mesh istio
contains "preview istio126: dns_jitter read and kept" "$work/out" '   "dns_jitter": "0.100s",'
case_ istio126-json "${i126[@]}" --mesh istio -o json
case_ istio126-flag "${i126[@]}" --mesh istio@1.30
# ISTIO_VERSION with a tag (a beta, a dev build, a vendor's: "1.26.3-asm.1") is its release line's:
# it was no release at all, and the proxy's Envoy 1.34 chose v1.37.0 for an Istio 1.26 (adv-24)
for v in 1.26.3-beta.0 1.26-dev 1.26.3-asm.1; do
  sed "s/\"ISTIO_VERSION\": \"1.26.3\"/\"ISTIO_VERSION\": \"$v\"/" $pv/istio126-dump.json >"$work/tagged.json"
  "$bin" preview --mesh istio -f $pv/istio126-po.yaml --config-dump "$work/tagged.json" >"$work/out" 2>&1
  check "preview: ISTIO_VERSION $v" 0 $? "$work/out"
  contains "preview: ISTIO_VERSION $v is Istio 1.26's" "$work/out" \
    "judged with go-control-plane envoy v1.32.4, from the dump's bootstrap: ISTIO_VERSION $v;"
  # ... and its targets as Istio 1.26's, features too (an array refused, not assumed 1.31's)
  "$bin" preview --mesh istio -f $pv/istio-array-po.yaml --config-dump "$work/tagged.json" >"$work/out" 2>&1
  check "preview: ISTIO_VERSION $v, an array" 1 $? "$work/out"
  contains "preview: ISTIO_VERSION $v, an array refused as 1.26's" "$work/out" "needs Istio 1.31 or later (the target runs 1.26)"
done
# an Envoy Gateway 1.9 proxy (Envoy 1.39.1 -> v1.40.0 as Istio's naming reads it): its route's
# direct_response.body_format (Envoy Gateway 1.8 and later); judged with v1.32.4, which lacks
# body_format: kept, with a warning naming where it is, never a refusal of the dump
case_ eg19 -f $pv/eg19-po.yaml --config-dump $pv/eg19-dump.json --mesh istio -o json
contains "preview eg19: body_format read and kept" "$work/out" '"body_format": {'
case_ eg19-older -f $pv/eg19-po.yaml --config-dump $pv/eg19-dump.json --mesh istio --envoy-api v1.32.4
# a Consul sidecar on Envoy 1.40: two fields only v1.40.0 has, at the top and nested. Every Consul
# release is judged with v1.32.4 (Consul applies the patches with the go-control-plane it pins,
# whatever Envoy runs), which warns of both and keeps them (text and JSON); a patch setting one is
# refused as an invalid override there, and valid with --envoy-api v1.40.0
e140=(--config-dump $pv/envoy140-dump.json)
case_ envoy140-lacked -f $pv/envoy140-po.yaml "${e140[@]}"
case_ envoy140-lacked-json -f $pv/envoy140-po.yaml "${e140[@]}" --mesh consul@1.22 -o json
case_ envoy140-set -f $pv/envoy140-set-po.yaml "${e140[@]}" --envoy-api v1.40.0
case_ envoy140-set-older -f $pv/envoy140-set-po.yaml "${e140[@]}"
case_ usage-mesh-release -f $pv/consul-po.yaml --config-dump $pv/consul-dump.json --mesh istio@1.25
# An Envoy Gateway proxy (issue 24; refused before as "not modelled"): every resource outbound and
# of no service; a Gateway PropertyOverride reaches the clusters of its followed namespaces'
# HTTPRoutes (team-a's does not reach default's: said why), the Gateway's listeners and routes;
# judged with the Envoy Gateway release's snapshot (the default 1.9's, v1.37.0, not the proxy's
# Envoy 1.39's v1.40.0), or the one --mesh envoy-gateway@1.5 names (v1.32.4).
eg=(-f $pv/eg-po.yaml --config-dump $pv/eg19-dump.json)
case_ eg "${eg[@]}" --mesh envoy-gateway
contains "preview eg: judged by the release" "$work/out" "envoy api: judged with go-control-plane envoy v1.37.0, the default release of mesh envoy-gateway, 1.9"
case_ eg-json "${eg[@]}" --mesh envoy-gateway -o json
case_ eg-release "${eg[@]}" --mesh envoy-gateway@1.5
case_ usage-envoy-api -f $pv/consul-po.yaml --config-dump $pv/consul-dump.json --envoy-api v1.33.0

# Without --mesh the mesh is the dump's (issue 24): an Istio proxy was previewed with Consul's
# naming, every resource "matched by no patch". Its bootstrap (ISTIO_VERSION; Consul's stats
# tags), else its clusters' names (no bootstrap: istio-dump.json, consul-no-bootstrap-dump.json;
# Envoy Gateway's route clusters), said in the report with why; --mesh still decides.
case_ istio126-detected -f $pv/istio126-po.yaml --config-dump $pv/istio126-dump.json
contains "preview: an Istio dump's mesh detected from its bootstrap" "$work/out" \
  "preview: mesh istio (detected from the dump: its bootstrap's node metadata ISTIO_VERSION 1.26.3; --mesh names another); 3 active resources: 1 changed"
"$bin" preview -f $pv/istio-po.yaml --config-dump $pv/istio-dump.json >"$work/out" 2>&1
check "preview: an Istio dump without bootstrap" 0 $? "$work/out"
contains "preview: an Istio dump's mesh detected from its cluster names" "$work/out" \
  "preview: mesh istio (detected from the dump: 6 of its 7 clusters named as istio names them (the first: outbound|9080||reviews.default.svc.cluster.local)"
"$bin" preview "${eg[@]}" >"$work/out" 2>&1
check "preview: an Envoy Gateway dump" 0 $? "$work/out"
contains "preview: an Envoy Gateway dump's mesh detected from its cluster names" "$work/out" \
  "preview: mesh envoy-gateway (detected from the dump: 1 of its 1 cluster named as envoy-gateway names them (the first: httproute/default/backend/rule/0)"
"$bin" preview -f $pv/consul-po.yaml --config-dump $pv/consul-dump.json >"$work/out" 2>&1
contains "preview: a Consul dump's mesh detected from its bootstrap" "$work/out" \
  "preview: mesh consul (detected from the dump: its bootstrap's stats tag consul.source.service web"
"$bin" preview -f $pv/consul-po.yaml --config-dump $pv/consul-no-bootstrap-dump.json >"$work/out" 2>&1
contains "preview: a Consul dump's mesh detected from its cluster names" "$work/out" \
  "preview: mesh consul (detected from the dump: 8 of its 9 clusters named as consul names them (the first: local_app)"
printf '{"configs":[]}' >"$work/empty-dump.json"
"$bin" preview -f $pv/consul-po.yaml --config-dump "$work/empty-dump.json" >"$work/out" 2>&1
contains "preview: a dump that names no mesh: consul, said assumed" "$work/out" "preview: mesh consul (assumed: nothing in the dump names its mesh"
"$bin" preview -f $pv/istio126-po.yaml --config-dump $pv/istio126-dump.json --mesh consul >"$work/out" 2>&1
contains "preview: --mesh overrides what the dump says" "$work/out" "preview: mesh consul; 3 active resources: 0 changed, 3 matched by no patch"
"$bin" preview -f $pv/istio126-po.yaml --config-dump $pv/istio126-dump.json -o json >"$work/out" 2>/dev/null
jqcheck "preview -o json: how the mesh was chosen" "$work/out" \
  '.mesh == "istio" and .mesh_choice.chosen_by == "dump" and (.mesh_choice.reason | test("ISTIO_VERSION 1.26.3"))'
"$bin" preview -f $pv/istio126-po.yaml --config-dump $pv/istio126-dump.json --datacenter dc1 >"$work/out" 2>&1
check "preview: --datacenter on a dump detected as Istio's is bad usage" 2 $? "$work/out"
contains "preview: --datacenter on an Istio dump: said why" "$work/out" "--datacenter is Consul's, and the dump is istio's proxy"

# ---- hostile dumps (adversarial review of issue 13's speed work)
# A bytes field's base64 with a non-ASCII character (here a BytesValue in a cluster's Any, as a
# \u escape: the text is pure ASCII): upb's base64 table was indexed 4 GB away and preview died
# of SIGSEGV/SIGBUS; upb's own error now (proto/upb-patches/json-base64-index.patch). The same
# decoder reads a hand-written EnvoyFilter's patch value under validate -f.
printf '%s' '{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"api.default.dc1.internal.t.consul","upstream_config":{"name":"x","typed_config":{"@type":"type.googleapis.com/google.protobuf.BytesValue","value":"\u00e9AAA"}}}}]}]}' >"$work/b64.json"
"$bin" preview -f $pv/consul-po.yaml --config-dump "$work/b64.json" --datacenter dc1 >"$work/out" 2>&1
check "preview: non-ASCII base64 in a dump is an error, not a crash" 2 $? "$work/out"
contains "preview: non-ASCII base64 says upb's words" "$work/out" "Corrupt base64"
printf '%s\n' 'apiVersion: networking.istio.io/v1alpha3' 'kind: EnvoyFilter' 'metadata: {name: ef, namespace: default}' \
  'spec:' '  configPatches:' '    - applyTo: CLUSTER' '      patch:' '        operation: MERGE' '        value:' \
  '          upstream_config: {name: x, typed_config: {"@type": type.googleapis.com/google.protobuf.BytesValue, value: "é"}}' >"$work/ef.yaml"
"$bin" validate -f "$work/ef.yaml" >"$work/out" 2>&1
check "validate -f: EnvoyFilter with non-ASCII base64 is refused, not a crash" 1 $? "$work/out"
contains "validate -f: non-ASCII base64 says upb's words" "$work/out" "Corrupt base64"

# A resource of a type no embedded snapshot has (an xDS v2 Cluster) is refused naming that type:
# the placeholder standing in for it was named instead ("found google.protobuf.StringValue").
# A real StringValue there is still named as such (adv-24).
printf '%s' '{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v2.Cluster","name":"api.default.dc1.internal.t.consul"}}]}]}' >"$work/v2.json"
"$bin" preview -f $pv/consul-po.yaml --config-dump "$work/v2.json" --datacenter dc1 >"$work/out" 2>&1
check "preview: a v2 Cluster in a dump is refused" 2 $? "$work/out"
contains "preview: a v2 Cluster is named as what it is" "$work/out" \
  "dynamic_active_clusters[0].cluster: expected a Cluster, ClusterLoadAssignment, Listener or RouteConfiguration, found (a type.googleapis.com/envoy.config.cluster.v2.Cluster: a type the Envoy API this build has lacks)"
printf '%s' '{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/google.protobuf.StringValue","value":"(a fake)"}}]}]}' >"$work/sv.json"
"$bin" preview -f $pv/consul-po.yaml --config-dump "$work/sv.json" --datacenter dc1 >"$work/out" 2>&1
contains "preview: a StringValue in a dump is named as one" "$work/out" "RouteConfiguration, found google.protobuf.StringValue"

# Known issue, not fixed (PO_KNOWN_ISSUES=1 runs it): since resources are decoded only when a
# patch matches them, a dump whose unmatched cluster holds a string that is not UTF-8 (upb's
# JSON reader lets it through; only the binary decode of the resource checks) is previewed,
# where the full decode refused it (879b6f7: "a string is not valid UTF-8"); the same dump is
# refused under an override that matches that cluster (or has any cluster-load-assignment
# patch: then every cluster is decoded for its load_assignment). Fixing it means validating every
# resource (a binary decode each, the cost the lazy decode removed). The same for nesting the JSON
# reader and the Any's encoder take but upb's binary decoder does not (a Struct 21 deep in a
# cluster's metadata: 3 binary levels per JSON object): refused only when a patch matches.
if [ "${PO_KNOWN_ISSUES:-0}" = 1 ]; then
  printf '{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"api.default.dc1.internal.t.consul"}},{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"other.default.dc1.internal.t.consul","alt_stat_name":"bad\xff"}}]}]}' >"$work/utf8.json"
  "$bin" preview -f $pv/created-parent-po.yaml --config-dump "$work/utf8.json" --datacenter dc1 >"$work/out" 2>&1
  check "preview: a dump with a non-UTF-8 string in an unmatched cluster is refused as the full decode refused it" 2 $? "$work/out"
fi

# ---- cost: one PropertyOverride of 100 patches (the most one may have) matching all of 1,000
# clusters. Each resource's list of what applied was rebuilt per patch in the long-lived arena
# (quadratic: 300 MB and 3.5 s here, 3 GB and 42 s on the benchmark's 10,000 clusters); now about
# 20 MB. Peak RSS from GNU time (a count, not a clock: steady on a busy machine).
if [ -x /usr/bin/time ]; then
  { printf 'apiVersion: propertyoverride.io/v1alpha1\nkind: PropertyOverride\nmetadata: {name: p100, namespace: default}\n'
    printf 'spec:\n  targetRef: {kind: ServiceDefaults, name: web}\n  patches:\n'
    for i in $(seq 1 100); do
      printf '    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}\n      op: add\n'
      printf '      path: /per_connection_buffer_limit_bytes\n      value: %d\n' "$i"
    done; } >"$work/p100.yaml"
  awk 'BEGIN { printf "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":[";
    for (i = 0; i < 1000; i++) printf "%s{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"svc-%04d.default.dc1.internal.t.consul\",\"connect_timeout\":\"5s\"}}", (i ? "," : ""), i;
    printf "]}]}\n" }' >"$work/c1000.json"
  /usr/bin/time -f '%M' -o "$work/rss" "$bin" preview -f "$work/p100.yaml" --config-dump "$work/c1000.json" >"$work/out" 2>&1
  check "preview 100 patches x 1,000 clusters" 0 $? "$work/out"
  rss=$(tail -1 "$work/rss")
  # peak RSS means nothing under ASan (shadow memory, quarantine): PO_SANITIZED=1 there
  if [ "${PO_SANITIZED:-0}" = 1 ]; then :; elif [ "${rss:-999999}" -lt 100000 ]; then pass=$((pass+1)); else echo "FAIL preview 100 patches x 1,000 clusters: peak RSS $rss KB (bound 100000)"; fail=$((fail+1)); fi
fi

# ---- --envoy-admin: a loopback HTTP server serving the dump at /config_dump (and a 404, and
# a body over the size limit is not tried: 256 MiB is too slow a test; the limit is the write
# callback's, shared with every size). /usr/bin/python3, never the PATH shim (tests/README).
cat >"$work/server.py" <<'PY'
import http.server, sys
dump = open(sys.argv[1], 'rb').read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == '/config_dump?include_eds':
            self.send_response(200); self.send_header('Content-Length', str(len(dump))); self.end_headers(); self.wfile.write(dump)
        else:
            self.send_response(404); self.send_header('Content-Length', '0'); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(('127.0.0.1', 0), H)
open(sys.argv[2] + '.tmp', 'w').write(str(s.server_address[1])); __import__('os').rename(sys.argv[2] + '.tmp', sys.argv[2])
s.serve_forever()
PY
/usr/bin/python3 "$work/server.py" "$pv/consul-dump.json" "$work/port" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port" 2>/dev/null)
if [ -z "$port" ]; then
  echo "FAIL preview --envoy-admin: the test's HTTP server did not start"; fail=$((fail+1))
else
  "$bin" preview -f $pv/consul-po.yaml --envoy-admin "http://127.0.0.1:$port" --datacenter dc1 >"$work/out" 2>"$work/err"
  check "preview --envoy-admin (same as the file)" 0 $? "$work/err"
  cmp -s "$work/out" "$pv/consul.out" && pass=$((pass+1)) || { echo "FAIL preview --envoy-admin: output differs from $pv/consul.out"; diff "$pv/consul.out" "$work/out" | head; fail=$((fail+1)); }
  "$bin" preview -f $pv/consul-po.yaml --envoy-admin "http://127.0.0.1:$port/" --datacenter dc1 >"$work/out2" 2>&1
  check "preview --envoy-admin with a trailing /" 0 $?
  "$bin" preview -f $pv/consul-po.yaml --envoy-admin "http://127.0.0.1:$port/stats" --datacenter dc1 >"$work/out" 2>&1
  check "preview --envoy-admin 404" 2 $?
  contains "preview --envoy-admin 404 says so" "$work/out" "HTTP status 404, expected 200 (is this Envoy's admin port?)"
fi
kill $server 2>/dev/null
wait $server 2>/dev/null
# a port nothing listens on (the server's, now closed): a clear connection error, no wait
"$bin" preview -f $pv/consul-po.yaml --envoy-admin "http://127.0.0.1:${port:-1}" >"$work/out" 2>&1
check "preview --envoy-admin refused" 2 $?
contains "preview --envoy-admin refused names the URL" "$work/out" "http://127.0.0.1:${port:-1}/config_dump?include_eds: "
"$bin" preview -f $pv/consul-po.yaml --envoy-admin "https://127.0.0.1:19000" >"$work/out" 2>&1
check "preview --envoy-admin https refused" 2 $?
contains "preview --envoy-admin https says what is valid" "$work/out" "expected an http:// URL of Envoy's admin endpoint"
finish
