/* Generated inputs: realistic, distinct Clusters (what Consul's xDS server sends for an
 * upstream with TLS, limits and outlier detection) and a config dump of many of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Certificates are random base64 of a plausible size: no code here parses them, but they make
 * the Any and the dump as large as real ones. */
static void pem_body(char *out, size_t lines, uint32_t seed) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t x = seed * 2654435761u + 1;
  char *p = out;
  for (size_t l = 0; l < lines; l++) {
    for (int c = 0; c < 64; c++) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      *p++ = b64[x & 63];
    }
    *p++ = '\\';
    *p++ = 'n';
  }
  *p = '\0';
}

size_t po_Bench_ClusterJson(char *buf, size_t size, unsigned i) {
  char cert[4 * 66 + 1], key[2 * 66 + 1], ca[3 * 66 + 1];
  pem_body(cert, 4, i * 3 + 1);
  pem_body(key, 2, i * 3 + 2);
  pem_body(ca, 3, 7); /* one CA for the whole mesh */
  const char *services[] = {"payments", "orders", "users", "search", "inventory", "billing", "auth", "cart"};
  const char *svc = services[i % 8];
  unsigned n = i;
  int len = snprintf(
      buf, size,
      "{\"name\":\"%s-%05u.default.dc1.internal.5f2c1e0a-2b3d-4c5e-8f90-a1b2c3d4e5f6.consul\","
      "\"alt_stat_name\":\"%s-%05u.default.dc1\","
      "\"type\":\"EDS\","
      "\"eds_cluster_config\":{\"eds_config\":{\"ads\":{},\"resource_api_version\":\"V3\"},"
      "\"service_name\":\"%s-%05u.default.dc1\"},"
      "\"connect_timeout\":\"%us\","
      "\"per_connection_buffer_limit_bytes\":%u,"
      "\"lb_policy\":\"LEAST_REQUEST\","
      "\"least_request_lb_config\":{\"choice_count\":2},"
      "\"circuit_breakers\":{\"thresholds\":["
      "{\"priority\":\"DEFAULT\",\"max_connections\":%u,\"max_pending_requests\":%u,"
      "\"max_requests\":%u,\"max_retries\":3,\"track_remaining\":true},"
      "{\"priority\":\"HIGH\",\"max_connections\":%u,\"max_requests\":%u}]},"
      "\"outlier_detection\":{\"consecutive_5xx\":%u,\"interval\":\"10s\",\"base_ejection_time\":\"30s\","
      "\"max_ejection_percent\":%u,\"enforcing_consecutive_5xx\":100,\"enforcing_success_rate\":0,"
      "\"consecutive_gateway_failure\":5,\"enforcing_consecutive_gateway_failure\":0},"
      "\"common_lb_config\":{\"healthy_panic_threshold\":{\"value\":%u}},"
      "\"transport_socket\":{\"name\":\"tls\",\"typed_config\":{"
      "\"@type\":\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\","
      "\"common_tls_context\":{\"tls_params\":{\"tls_minimum_protocol_version\":\"TLSv1_2\"},"
      "\"tls_certificates\":[{\"certificate_chain\":{\"inline_string\":"
      "\"-----BEGIN CERTIFICATE-----\\n%s-----END CERTIFICATE-----\\n\"},"
      "\"private_key\":{\"inline_string\":\"-----BEGIN EC PRIVATE KEY-----\\n%s-----END EC PRIVATE KEY-----\\n\"}}],"
      "\"validation_context\":{\"trusted_ca\":{\"inline_string\":"
      "\"-----BEGIN CERTIFICATE-----\\n%s-----END CERTIFICATE-----\\n\"},"
      "\"match_typed_subject_alt_names\":[{\"san_type\":\"URI\",\"matcher\":{\"exact\":"
      "\"spiffe://5f2c1e0a.consul/ns/default/dc/dc1/svc/%s-%05u\"}}]},"
      "\"alpn_protocols\":[\"h2\",\"http/1.1\"]},"
      "\"sni\":\"%s-%05u.default.dc1.internal.5f2c1e0a-2b3d-4c5e-8f90-a1b2c3d4e5f6.consul\"}},"
      "\"typed_extension_protocol_options\":{\"envoy.extensions.upstreams.http.v3.HttpProtocolOptions\":{"
      "\"@type\":\"type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions\","
      "\"explicit_http_config\":{\"http2_protocol_options\":{\"max_concurrent_streams\":%u}},"
      "\"common_http_protocol_options\":{\"idle_timeout\":\"3600s\"}}},"
      "\"load_assignment\":{\"cluster_name\":\"%s-%05u.default.dc1\",\"endpoints\":[{"
      "\"locality\":{\"region\":\"us-east-1\",\"zone\":\"us-east-1%c\"},\"lb_endpoints\":["
      "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"10.%u.%u.%u\",\"port_value\":%u}}},"
      "\"health_status\":\"HEALTHY\",\"load_balancing_weight\":1},"
      "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"10.%u.%u.%u\",\"port_value\":%u}}},"
      "\"health_status\":\"HEALTHY\",\"load_balancing_weight\":1},"
      "{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"10.%u.%u.%u\",\"port_value\":%u}}},"
      "\"health_status\":\"DRAINING\",\"load_balancing_weight\":1}]}],"
      "\"policy\":{\"overprovisioning_factor\":140}},"
      "\"metadata\":{\"filter_metadata\":{\"consul\":{\"service\":\"%s-%05u\",\"namespace\":\"default\","
      "\"partition\":\"default\",\"datacenter\":\"dc1\"}}}}",
      svc, n, svc, n, svc, n, 1 + n % 10, 16384 + 1024 * (n % 48), 512 + n % 1536, 256 + n % 768,
      1024 + n % 4096, 2048 + n % 1024, 2048 + n % 4096, 3 + n % 7, 10 + n % 40, 30 + n % 40,
      cert, key, ca, svc, n, svc, n, 64 + n % 192, svc, n, (char)('a' + n % 3),
      n / 65536 % 256, n / 256 % 256, n % 256, 20000 + n % 5000,
      (n + 1) / 65536 % 256, (n + 1) / 256 % 256, (n + 1) % 256, 20000 + (n + 1) % 5000,
      (n + 2) / 65536 % 256, (n + 2) / 256 % 256, (n + 2) % 256, 20000 + (n + 2) % 5000,
      svc, n);
  return len < 0 ? 0 : (size_t)len;
}

char *po_Bench_ConfigDumpJson(unsigned count, size_t *len_out) {
  static const char head[] =
      "{\"version_info\":\"dc1-7f3a\",\"static_clusters\":[],\"dynamic_active_clusters\":[";
  static const char tail[] = "],\"dynamic_warming_clusters\":[]}";
  size_t cap = sizeof head + sizeof tail + (size_t)count * 4096;
  char *out = malloc(cap);
  if (!out) return NULL;
  size_t at = 0;
  memcpy(out, head, sizeof head - 1);
  at += sizeof head - 1;
  char cluster[4096];
  for (unsigned i = 0; i < count; i++) {
    size_t n = po_Bench_ClusterJson(cluster, sizeof cluster, i);
    if (n >= sizeof cluster) {
      free(out);
      return NULL;
    }
    /* {"version_info":..,"cluster":{"@type":..., <the cluster's fields>},"last_updated":..} */
    int w = snprintf(out + at, cap - at,
                     "%s{\"version_info\":\"v%u\",\"cluster\":{\"@type\":"
                     "\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",%s,"
                     "\"last_updated\":\"2026-12-01T20:%02u:%02u.%03uZ\"}",
                     i ? "," : "", 1 + i % 97, cluster + 1, i / 60 % 60, i % 60, i % 1000);
    if (w < 0 || (size_t)w >= cap - at) {
      free(out);
      return NULL;
    }
    at += (size_t)w;
  }
  memcpy(out + at, tail, sizeof tail);
  at += sizeof tail - 1;
  *len_out = at;
  return out;
}
