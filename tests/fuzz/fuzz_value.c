/* libFuzzer target: value conversion. The input is one JSON value, added at fixed paths that
 * cover every kind of target the engine converts to (scalars of each width, wrappers, enums,
 * repeated scalars and enums, Durations, maps, oneof members, Any, bytes, deep paths creating
 * parents), with PatchStruct under both conventions and with the Constructor (Envoy's rules
 * on), whose compiled override is then applied. Nothing may crash, assert, leak or hang; every
 * failure carries a message; a patched message encodes to JSON that reads back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CLUSTER "envoy.config.cluster.v3.Cluster"
#define CLA "envoy.config.endpoint.v3.ClusterLoadAssignment"
#define ROUTE "envoy.config.route.v3.RouteConfiguration"
#define LISTENER "envoy.config.listener.v3.Listener"

typedef struct {
  const char *message;
  const char *path;
} Target;

static const Target kTargets[] = {
    /* scalars */
    {CLUSTER, "/name"},
    {CLUSTER, "/respect_dns_ttl"},
    {LISTENER, "/address/socket_address/port_value"},
    {CLA, "/policy/overprovisioning_factor"},
    {"envoy.config.route.v3.RetryPolicy", "/num_retries"},
    {"envoy.config.core.v3.RuntimeFractionalPercent", "/default_value/numerator"},
    {"envoy.type.v3.Percent", "/value"},
    {"envoy.config.core.v3.SocketOption", "/int_value"},
    /* wrappers */
    {CLUSTER, "/outlier_detection/max_ejection_percent"},
    {CLUSTER, "/per_connection_buffer_limit_bytes"},
    {CLUSTER, "/preconnect_policy/per_upstream_preconnect_ratio"},
    {CLUSTER, "/ring_hash_lb_config/minimum_ring_size"},
    {ROUTE, "/validate_clusters"},
    {LISTENER, "/tcp_backlog_size"},
    /* enums, singular and repeated */
    {CLUSTER, "/lb_policy"},
    {CLUSTER, "/type"},
    {CLUSTER, "/dns_lookup_family"},
    {LISTENER, "/traffic_direction"},
    {CLUSTER, "/common_lb_config/override_host_status/statuses"},
    {"envoy.config.core.v3.HealthStatusSet", "/statuses"},
    /* repeated scalars */
    {CLUSTER, "/lrs_report_endpoint_metrics"},
    {ROUTE, "/internal_only_headers"},
    {ROUTE, "/response_headers_to_remove"},
    {"envoy.config.route.v3.RetryPolicy", "/retriable_status_codes"},
    {"envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", "/common_tls_context/alpn_protocols"},
    /* Durations and other well-known messages */
    {CLUSTER, "/connect_timeout"},
    {CLUSTER, "/outlier_detection/interval"},
    {CLA, "/policy/endpoint_stale_after"},
    {LISTENER, "/listener_filters_timeout"},
    {CLUSTER, "/common_lb_config/healthy_panic_threshold"},
    /* messages, replaced by objects */
    {CLUSTER, "/outlier_detection"},
    {CLUSTER, "/circuit_breakers"},
    {CLUSTER, "/upstream_connection_options"},
    {LISTENER, "/address"},
    /* repeated messages and maps */
    {CLUSTER, "/circuit_breakers/thresholds"},
    {CLUSTER, "/health_checks"},
    {CLUSTER, "/metadata/filter_metadata"},
    {CLUSTER, "/typed_extension_protocol_options"},
    {CLA, "/named_endpoints"},
    /* oneof members */
    {CLUSTER, "/cluster_type"},
    {CLUSTER, "/least_request_lb_config/choice_count"},
    {CLUSTER, "/eds_cluster_config/eds_config/ads"},
    {CLUSTER, "/eds_cluster_config/eds_config/path"},
    /* Any, as target and as parent */
    {CLUSTER, "/transport_socket/typed_config"},
    {CLUSTER, "/transport_socket/typed_config/type_url"},
    /* bytes (and the string member of the same oneof) */
    {"envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
     "/common_tls_context/validation_context/trusted_ca/inline_bytes"},
    {"envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
     "/common_tls_context/validation_context/trusted_ca/inline_string"},
    /* deep paths creating parents */
    {CLUSTER, "/upstream_connection_options/tcp_keepalive/keepalive_time"},
    {CLUSTER, "/upstream_bind_config/source_address/port_value"},
    {CLUSTER, "/eds_cluster_config/eds_config/api_config_source/refresh_delay"},
    {CLUSTER, "/load_assignment/policy/overprovisioning_factor"},
    {"envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
     "/common_http_protocol_options/idle_timeout"},
};
enum { kTargetCount = sizeof kTargets / sizeof kTargets[0] };

static const char *resource_type_of(const char *message) {
  if (!strcmp(message, CLUSTER)) return "cluster";
  if (!strcmp(message, CLA)) return "cluster-load-assignment";
  if (!strcmp(message, ROUTE)) return "route";
  if (!strcmp(message, LISTENER)) return "listener";
  return NULL;
}

static void check_failure(const po_Status *st) {
  if (po_Status_IsOk(st) || st->message[0] == '\0') abort();
}

static void check_message(const po_Message *m, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  char *json = po_Message_ToJson(m, a, &len, &st);
  if (!json) {
    check_failure(&st);
    return;
  }
  po_Status_Clear(&st);
  if (!po_Message_ParseJson(NULL, po_Message_FullName(m), json, len, a, &st)) abort();
}

static void patch_struct(const Target *t, const po_Value *value, po_Convention conv) {
  po_Arena *a = po_Arena_New();
  if (!a) return;
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_New(NULL, t->message, a, &st);
  if (!m) abort();
  po_Patch p = {.op = "add", .path = t->path, .value = value};
  if (po_PatchStruct(m, &p, false, conv, &st)) {
    check_message(m, a);
  } else {
    check_failure(&st);
  }
  po_Arena_Free(a);
}

static po_Value *str(po_Arena *a, const char *s) { return po_Value_NewString(a, s, strlen(s)); }

/* Every resource target in one arguments object, so the Constructor aggregates the errors of
 * all of them; what compiles is applied to an empty resource of each type. */
static void construct(const po_Value *value, po_Convention conv) {
  po_Arena *a = po_Arena_New();
  if (!a) return;
  po_Value *patches = po_Value_NewList(a);
  po_Value *args = po_Value_NewMap(a);
  if (!patches || !args) abort();
  for (size_t i = 0; i < kTargetCount; i++) {
    const char *rt = resource_type_of(kTargets[i].message);
    if (!rt) continue;
    po_Value *filter = po_Value_NewMap(a), *patch = po_Value_NewMap(a);
    if (!filter || !patch) abort();
    po_Value_MapPut(a, filter, "ResourceType", str(a, rt));
    po_Value_MapPut(a, filter, "TrafficDirection", str(a, "outbound"));
    po_Value_MapPut(a, patch, "ResourceFilter", filter);
    po_Value_MapPut(a, patch, "Op", str(a, "add"));
    po_Value_MapPut(a, patch, "Path", str(a, kTargets[i].path));
    po_Value_MapPut(a, patch, "Value", (po_Value *)value);
    po_Value_ListAppend(a, patches, patch);
  }
  po_Value_MapPut(a, args, "Patches", patches);
  po_CompileOptions opts = po_CompileOptions_Default();
  opts.convention = conv;
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!d) abort();
  po_Override *o = po_Constructor(NULL, args, &opts, a, d);
  if (!o) {
    /* Nearly always: one value cannot suit every target. The text must be there. */
    if (!po_Diagnostics_ConsulText(d, true, a)) abort();
  } else {
    static const po_ResourceType kTypes[] = {kPo_ResourceType_Cluster, kPo_ResourceType_ClusterLoadAssignment,
                                             kPo_ResourceType_Route, kPo_ResourceType_Listener};
    for (size_t i = 0; i < 4; i++) {
      po_Status st;
      po_Status_Clear(&st);
      po_Message *m = po_Message_New(NULL, po_ResourceType_Message(kTypes[i]), a, &st);
      if (!m) abort();
      po_Payload pl = {.resource_type = kTypes[i], .direction = kPo_TrafficDirection_Outbound};
      bool patched;
      if (po_Override_Apply(o, m, &pl, &patched, &st)) check_message(m, a);
      else check_failure(&st);
    }
  }
  /* Whatever compiled or not, the diagnostics must be printable both ways. */
  po_Diagnostics_ConsulText(d, false, a);
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, i);
    if (!x || !x->message) abort();
  }
  po_Arena_Free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  po_Arena *a = po_Arena_New();
  if (!a) return 0;
  po_Status st;
  po_Status_Clear(&st);
  po_Value *value = po_Value_ParseJson((const char *)data, size, a, &st);
  if (!value) {
    check_failure(&st);
    po_Arena_Free(a);
    return 0;
  }
  for (size_t i = 0; i < kTargetCount; i++) {
    patch_struct(&kTargets[i], value, kPo_Convention_Typed);
    patch_struct(&kTargets[i], value, kPo_Convention_Wire);
  }
  construct(value, kPo_Convention_Typed);
  construct(value, kPo_Convention_Wire);
  po_Arena_Free(a);
  return 0;
}
