#!/usr/bin/env bash
# bench_preview.sh BUILD_DIR [CLUSTERS [KEEP_DIR]]: `propertyoverride preview` of a generated Consul sidecar
# /config_dump with CLUSTERS (default 10,000) upstream clusters, each with its listener, plus
# local_app and the public listener (docs/benchmarks.md, "preview"). Two overrides: one patch
# for one upstream service (the usual review), and one for every outbound cluster (each of the
# 10,000 diffed: the worst case); then both on a dump of the clusters alone. Prints best wall of 3, CPU, peak RSS, page
# faults (a fault per 4 KB page touched costs microseconds of sys time; preview's arena takes huge pages), and instructions
# (callgrind) when valgrind is installed. Never fails on speed. KEEP_DIR keeps the generated
# dump and overrides (for a profiler).
set -u
build=${1:?usage: bench_preview.sh BUILD_DIR [CLUSTERS]} n=${2:-10000}
bin=$build/propertyoverride
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
td=11111111-2222-3333-4444-555555555555.consul
gen() { # CLUSTERS LISTENERS(0|1)
awk -v n="$1" -v listeners="$2" -v td="$td" 'BEGIN {
  printf "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"version_info\":\"1\",\"dynamic_active_clusters\":[";
  printf "{\"version_info\":\"1\",\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"local_app\",\"type\":\"STATIC\",\"connect_timeout\":\"5s\"}}";
  for (i = 0; i < n; i++) {
    sni = sprintf("svc-%05d.default.dc1.internal.%s", i, td);
    printf ",{\"version_info\":\"1\",\"last_updated\":\"2026-12-01T10:00:00Z\",\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"%s\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{},\"resource_api_version\":\"V3\"}},\"connect_timeout\":\"5s\",\"outlier_detection\":{\"consecutive_5xx\":5},\"circuit_breakers\":{\"thresholds\":[{\"max_connections\":1024,\"max_pending_requests\":1024,\"max_requests\":1024}]},\"common_lb_config\":{\"healthy_panic_threshold\":{}},\"transport_socket\":{\"name\":\"tls\",\"typed_config\":{\"@type\":\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"common_tls_context\":{\"tls_params\":{},\"validation_context\":{\"trusted_ca\":{\"inline_string\":\"-----BEGIN CERTIFICATE-----\\nMIIC...\\n-----END CERTIFICATE-----\\n\"}}},\"sni\":\"%s\"}}}}", sni, sni;
  }
  if (!listeners) { printf "]}]}\n"; exit }
  printf "]},{\"@type\":\"type.googleapis.com/envoy.admin.v3.ListenersConfigDump\",\"dynamic_listeners\":[";
  printf "{\"name\":\"public_listener:10.0.0.5:20000\",\"active_state\":{\"listener\":{\"@type\":\"type.googleapis.com/envoy.config.listener.v3.Listener\",\"name\":\"public_listener:10.0.0.5:20000\",\"address\":{\"socket_address\":{\"address\":\"10.0.0.5\",\"port_value\":20000}}}}}";
  for (i = 0; i < n; i++) {
    printf ",{\"name\":\"svc-%05d:127.0.0.1:%d\",\"active_state\":{\"listener\":{\"@type\":\"type.googleapis.com/envoy.config.listener.v3.Listener\",\"name\":\"svc-%05d:127.0.0.1:%d\",\"address\":{\"socket_address\":{\"address\":\"127.0.0.1\",\"port_value\":%d}},\"filter_chains\":[{\"filters\":[{\"name\":\"envoy.filters.network.tcp_proxy\",\"typed_config\":{\"@type\":\"type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy\",\"stat_prefix\":\"upstream.svc-%05d\",\"cluster\":\"svc-%05d.default.dc1.internal.%s\"}}]}]}}}", i, 10000 + i % 50000, i, 10000 + i % 50000, 10000 + i % 50000, i, i, td;
  }
  printf "]}]}\n";
}'
}
gen "$n" 1 >"$work/dump.json"
gen "$n" 0 >"$work/clusters.json"
one_po() { # NAME SERVICES-YAML
  cat >"$work/$1.yaml" <<YAML
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata:
  name: $1
spec:
  targetRef:
    kind: ServiceDefaults
    name: web
  patches:
    - resourceFilter:
        resourceType: cluster
        trafficDirection: outbound
$2
      op: add
      path: /outlier_detection/max_ejection_percent
      value: 50
YAML
}
one_po one-service "        services:
          - name: svc-00042"
one_po every-cluster ""
echo "== preview of a $n-cluster, $n-listener Consul dump ($(wc -c <"$work/dump.json") bytes)"
run() { # OVERRIDE [DUMP]
  local name=$1 dump=${2:-$work/dump.json} best=999999999999 t0 t1 us ir=n/a cpu=n/a rss=n/a faults=n/a lines
  for _ in 1 2 3; do
    t0=$(date +%s%N); "$bin" preview -f "$work/$name.yaml" --config-dump "$dump" >"$work/out" 2>&1; t1=$(date +%s%N)
    us=$(( (t1 - t0) / 1000 )); [ $us -lt $best ] && best=$us
  done
  lines=$(wc -l <"$work/out")
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S %M %R' -o "$work/t" "$bin" preview -f "$work/$name.yaml" --config-dump "$dump" >/dev/null 2>&1
    read -r u s m f <"$work/t"; cpu="${u}s user + ${s}s sys"; rss="$m KB"; faults=$f
  fi
  if command -v valgrind >/dev/null && [ "${PO_BENCH_CALLGRIND:-1}" = 1 ]; then
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" preview -f "$work/$name.yaml" --config-dump "$dump" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
  fi
  printf '%-14s best wall %d.%03d s  CPU %s  peak RSS %s  %s page faults  %s instructions  (%s output lines)\n' "$name" $((best / 1000000)) $(((best / 1000) % 1000)) "$cpu" "$rss" "$faults" "$ir" "$lines"
}
run one-service
run every-cluster
echo "== the same clusters alone ($(wc -c <"$work/clusters.json") bytes)"
run one-service "$work/clusters.json"
run every-cluster "$work/clusters.json"
if [ -n "${3:-}" ]; then mkdir -p "$3" && cp "$work"/dump.json "$work"/clusters.json "$work"/*.yaml "$3"/; fi
