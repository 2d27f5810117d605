/* libFuzzer target: patch paths (and the values that go with them) through PatchStruct and the
 * Constructor. Nothing may crash, assert (upb asserts on misuse), leak or hang; a failure always
 * carries a message, and a message that patched cleanly still encodes to JSON that reads back.
 *
 * Input layout (so the seed corpus stays readable):
 *   byte 0        root message, an index into kRoots
 *   byte 1        bits 0-1 op (add, remove, "", "Add"); bit 2 wire convention; bit 3 debug;
 *                 bit 4 no value even when one follows; bit 5 inbound instead of outbound
 *   bytes 2..     the path, up to the first NUL (paths are C strings), then the value as JSON
 *                 (a value that does not parse is passed as absent). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  const char *message;
  const char *resource_type; /* the Consul resource type the Constructor patches, or NULL */
  const char *populated;     /* a small message of this type in proto3 JSON */
} Root;

static const Root kRoots[] = {
    {"envoy.config.cluster.v3.Cluster", "cluster",
     "{\"name\":\"db\",\"type\":\"EDS\",\"connect_timeout\":\"5s\",\"lb_policy\":\"RING_HASH\","
     "\"outlier_detection\":{\"consecutive_5xx\":5,\"max_ejection_percent\":50},"
     "\"circuit_breakers\":{\"thresholds\":[{\"max_connections\":100}]},"
     "\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}},"
     "\"common_lb_config\":{\"healthy_panic_threshold\":{\"value\":40}},"
     "\"metadata\":{\"filter_metadata\":{\"envoy.lb\":{\"canary\":true}}},"
     "\"transport_socket\":{\"name\":\"tls\",\"typed_config\":{\"@type\":"
     "\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\","
     "\"sni\":\"db.example\"}}}"},
    {"envoy.config.endpoint.v3.ClusterLoadAssignment", "cluster-load-assignment",
     "{\"cluster_name\":\"db\",\"endpoints\":[{\"lb_endpoints\":[{\"endpoint\":{\"address\":"
     "{\"socket_address\":{\"address\":\"10.0.0.1\",\"port_value\":8080}}}}]}],"
     "\"policy\":{\"overprovisioning_factor\":140}}"},
    {"envoy.config.route.v3.RouteConfiguration", "route",
     "{\"name\":\"web\",\"virtual_hosts\":[{\"name\":\"web\",\"domains\":[\"*\"],\"routes\":"
     "[{\"match\":{\"prefix\":\"/\"},\"route\":{\"cluster\":\"web\",\"timeout\":\"3s\"}}]}],"
     "\"validate_clusters\":false,\"internal_only_headers\":[\"x-internal\"]}"},
    {"envoy.config.listener.v3.Listener", "listener",
     "{\"name\":\"public\",\"address\":{\"socket_address\":{\"address\":\"0.0.0.0\","
     "\"port_value\":20000}},\"traffic_direction\":\"INBOUND\",\"per_connection_buffer_limit_bytes\":"
     "32768,\"filter_chains\":[{\"filters\":[{\"name\":\"envoy.filters.network.tcp_proxy\","
     "\"typed_config\":{\"@type\":\"type.googleapis.com/"
     "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy\",\"stat_prefix\":\"s\","
     "\"cluster\":\"local\"}}]}]}"},
    {"envoy.config.endpoint.v3.Endpoint", NULL,
     "{\"address\":{\"socket_address\":{\"address\":\"10.0.0.2\",\"port_value\":9090}},"
     "\"hostname\":\"h\"}"},
    {"envoy.config.route.v3.RetryPolicy", NULL,
     "{\"retry_on\":\"5xx\",\"num_retries\":3,\"retriable_status_codes\":[503],"
     "\"per_try_timeout\":\"1s\"}"},
    {"envoy.config.core.v3.HealthStatusSet", NULL, "{\"statuses\":[\"HEALTHY\",\"DEGRADED\"]}"},
    {"envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", NULL,
     "{\"sni\":\"a\",\"common_tls_context\":{\"tls_params\":{\"tls_minimum_protocol_version\":"
     "\"TLSv1_2\"},\"validation_context\":{\"trusted_ca\":{\"inline_bytes\":\"AAEC\"}}}}"},
    {"envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager", NULL,
     "{\"stat_prefix\":\"h\",\"codec_type\":\"AUTO\",\"route_config\":{\"name\":\"r\"},"
     "\"common_http_protocol_options\":{\"idle_timeout\":\"60s\"}}"},
};
enum { kRootCount = sizeof kRoots / sizeof kRoots[0] };

static const char *const kOps[] = {"add", "remove", "", "Add"};

/* A failure must say what failed. */
static void check_failure(const po_Status *st) {
  if (po_Status_IsOk(st) || st->message[0] == '\0') abort();
}

/* PO_FUZZ_STRICT=1 also fails on the engine issues known and reported but not yet fixed. */
static bool strict(void) {
  static int on = -1;
  if (on < 0) on = getenv("PO_FUZZ_STRICT") != NULL;
  return on;
}

/* A patched message encodes (or says why not), and what it encodes to reads back.
 * Known: paths through recursive messages (Listener /filter_chain_matcher/on_no_match/matcher/
 * on_no_match/matcher/...) are not bounded, so a patch can nest messages deeper than upb's JSON
 * reader accepts (64; 100 for Envoy's own parser) and, with a path of megabytes, deeper than
 * the stack holds while printing; the read-back then fails with "Recursion limit exceeded". */
static void check_message(const po_Message *m, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  char *json = po_Message_ToJson(m, a, &len, &st);
  if (!json) {
    check_failure(&st);
    return;
  }
  if (strlen(json) != len) abort();
  po_Status_Clear(&st);
  if (!po_Message_ParseJson(NULL, po_Message_FullName(m), json, len, a, &st)) {
    if (!strict() && strstr(st.message, "Recursion limit exceeded")) return;
    fprintf(stderr, "fuzz_path: the patched message's JSON does not read back: %s\n", st.message);
    abort();
  }
}

static void patch_one(const Root *r, const char *json, const po_Patch *p, bool debug,
                      po_Convention conv) {
  po_Arena *a = po_Arena_New();
  if (!a) return;
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = json ? po_Message_ParseJson(NULL, r->message, json, strlen(json), a, &st)
                       : po_Message_New(NULL, r->message, a, &st);
  if (!m) abort(); /* the fixed inputs always parse */
  po_Status_Clear(&st);
  if (po_PatchStruct(m, p, debug, conv, &st)) {
    if (!po_Status_IsOk(&st)) abort();
    check_message(m, a);
  } else {
    check_failure(&st);
  }
  po_Arena_Free(a);
}

/* {"Patches":[{"ResourceFilter":{...},"Op":..,"Path":..,"Value":..}],"Debug":..} */
static void construct(const char *resource_type, const po_Patch *p, bool debug, bool inbound,
                      po_Convention conv, const char *value_json, size_t value_len) {
  po_Arena *a = po_Arena_New();
  if (!a) return;
  po_Status st;
  po_Status_Clear(&st);
  /* The value is parsed again into this arena: it must outlive nothing but this call. */
  po_Value *value = value_json ? po_Value_ParseJson(value_json, value_len, a, &st) : NULL;
  po_Value *filter = po_Value_NewMap(a);
  po_Value *patch = po_Value_NewMap(a);
  po_Value *patches = po_Value_NewList(a);
  po_Value *args = po_Value_NewMap(a);
  if (!filter || !patch || !patches || !args) abort();
  po_Value_MapPut(a, filter, "ResourceType", po_Value_NewString(a, resource_type, strlen(resource_type)));
  const char *dir = inbound ? "inbound" : "outbound";
  po_Value_MapPut(a, filter, "TrafficDirection", po_Value_NewString(a, dir, strlen(dir)));
  po_Value_MapPut(a, patch, "ResourceFilter", filter);
  po_Value_MapPut(a, patch, "Op", po_Value_NewString(a, p->op, strlen(p->op)));
  po_Value_MapPut(a, patch, "Path", po_Value_NewString(a, p->path, strlen(p->path)));
  if (value) po_Value_MapPut(a, patch, "Value", value);
  po_Value_ListAppend(a, patches, patch);
  po_Value_MapPut(a, args, "Patches", patches);
  po_Value_MapPut(a, args, "Debug", po_Value_NewBool(a, debug));

  po_CompileOptions opts = po_CompileOptions_Default();
  opts.convention = conv;
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!d) abort();
  po_Override *o = po_Constructor(NULL, args, &opts, a, d);
  const char *text = po_Diagnostics_ConsulText(d, true, a);
  if (!o && (!text || po_Diagnostics_ErrorCount(d) == 0)) abort();
  if (o && po_Diagnostics_ErrorCount(d) != 0) abort();
  if (o) {
    /* Apply the compiled override to an empty resource of its type, as a proxy would. */
    po_ResourceType t = po_ResourceType_Parse(resource_type);
    po_Message *m = po_Message_New(NULL, po_ResourceType_Message(t), a, &st);
    if (!m) abort();
    po_Payload pl = {.resource_type = t,
                     .direction = inbound ? kPo_TrafficDirection_Inbound : kPo_TrafficDirection_Outbound};
    bool patched = false;
    po_Status_Clear(&st);
    if (po_Override_Apply(o, m, &pl, &patched, &st)) {
      if (!patched) abort(); /* the one patch matches this payload by construction */
      check_message(m, a);
    } else {
      check_failure(&st);
    }
    /* A payload that claims the type but carries another message is an error, not a crash. */
    po_ResourceType other = t == kPo_ResourceType_Listener ? kPo_ResourceType_Cluster : kPo_ResourceType_Listener;
    po_Message *wrong = po_Message_New(NULL, po_ResourceType_Message(other), a, &st);
    if (!wrong) abort();
    po_Status_Clear(&st);
    if (po_Override_Apply(o, wrong, &pl, &patched, &st) || patched) abort();
    check_failure(&st);
  }
  po_Arena_Free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const Root *r = &kRoots[data[0] % kRootCount];
  uint8_t flags = data[1];
  const char *rest = (const char *)data + 2;
  size_t rest_len = size - 2;
  const char *nul = memchr(rest, '\0', rest_len);
  size_t path_len = nul ? (size_t)(nul - rest) : rest_len;
  /* Copies, so that nothing reads past the fuzzer's buffer and the path is a C string. */
  char *path = malloc(path_len + 1);
  if (!path) return 0;
  memcpy(path, rest, path_len);
  path[path_len] = '\0';
  const char *value_json = nul ? nul + 1 : NULL;
  size_t value_len = nul ? rest_len - path_len - 1 : 0;
  if (flags & 0x10) value_json = NULL;

  po_Arena *va = po_Arena_New();
  if (!va) {
    free(path);
    return 0;
  }
  po_Status st;
  po_Status_Clear(&st);
  po_Value *value = value_json ? po_Value_ParseJson(value_json, value_len, va, &st) : NULL;
  if (!value) value_json = NULL;
  po_Patch p = {.op = kOps[flags & 3], .path = path, .value = value};
  bool debug = flags & 0x08;
  po_Convention conv = flags & 0x04 ? kPo_Convention_Wire : kPo_Convention_Typed;

  patch_one(r, NULL, &p, debug, conv);
  patch_one(r, r->populated, &p, debug, conv);
  construct(r->resource_type ? r->resource_type : "cluster", &p, debug, flags & 0x20, conv,
            value_json, value_len);
  po_Arena_Free(va);
  free(path);
  return 0;
}
