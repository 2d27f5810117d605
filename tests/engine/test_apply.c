/* Compiled overrides applied to payloads: filter matching (type, direction, services with
 * namespace and partition), order, error collection and the patched flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"

static po_Arena *A;
static int setup(void **s) { (void)s; A = po_Arena_New(); return A ? 0 : -1; }
static int teardown(void **s) { (void)s; po_Arena_Free(A); return 0; }

static po_Override *compile(const char *args_json) {
  po_Status st;
  po_Status_Clear(&st);
  po_Value *v = po_Value_ParseJson(args_json, strlen(args_json), A, &st);
  assert_non_null(v);
  po_Diagnostics *d = po_Diagnostics_New(A);
  po_Override *o = po_Constructor(NULL, v, NULL, A, d);
  if (!o) fail_msg("%s", po_Diagnostics_ConsulText(d, true, A));
  return o;
}

static const char *patched_json(po_Override *o, const char *type, const char *in, po_Payload *p, bool *patched,
                                bool *ok) {
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_ParseJson(NULL, type, in, strlen(in), A, &st);
  assert_non_null(m);
  *ok = po_Override_Apply(o, m, p, patched, &st);
  return po_Message_ToJson(m, A, NULL, &st);
}

static const char kArgs[] =
    "{\"Patches\": ["
    " {\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\","
    "   \"Services\": [{\"Name\": \"db\"}, {\"Name\": \"api\", \"Namespace\": \"team\"}]},"
    "  \"Op\": \"add\", \"Path\": \"/outlier_detection/max_ejection_percent\", \"Value\": 20},"
    " {\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
    "  \"Op\": \"add\", \"Path\": \"/alt_stat_name\", \"Value\": \"all-outbound\"},"
    " {\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"inbound\"},"
    "  \"Op\": \"remove\", \"Path\": \"/alt_stat_name\"},"
    " {\"ResourceFilter\": {\"ResourceType\": \"listener\", \"TrafficDirection\": \"outbound\"},"
    "  \"Op\": \"add\", \"Path\": \"/per_connection_buffer_limit_bytes\", \"Value\": 32768}]}";

static void test_matching(void **state) {
  (void)state;
  po_Override *o = compile(kArgs);
  assert_int_equal(po_Override_PatchCount(o), 4);
  /* Constructor normalised the services */
  assert_string_equal(po_Override_Arguments(o)->patches[0].resource_filter.services[0].namespace_, "default");
  assert_string_equal(po_Override_Arguments(o)->proxy_type, "connect-proxy");
  bool patched, ok;
  po_ServiceName db = {"db", "default", "default"}, api = {"api", "team", "default"},
                 api_default = {"api", "default", "default"};
  po_Payload p = {kPo_ResourceType_Cluster, kPo_TrafficDirection_Outbound, &db};
  const char *c = "envoy.config.cluster.v3.Cluster";
  assert_string_equal(patched_json(o, c, "{\"name\":\"db\"}", &p, &patched, &ok),
                      "{\"name\":\"db\",\"alt_stat_name\":\"all-outbound\",\"outlier_detection\":{\"max_ejection_percent\":20}}");
  assert_true(patched && ok);
  p.service = &api;
  assert_non_null(strstr(patched_json(o, c, "{}", &p, &patched, &ok), "max_ejection_percent"));
  p.service = &api_default; /* namespace differs: only the unfiltered patch applies */
  assert_string_equal(patched_json(o, c, "{}", &p, &patched, &ok), "{\"alt_stat_name\":\"all-outbound\"}");
  p.service = NULL; /* no known service never matches a Services list */
  assert_string_equal(patched_json(o, c, "{}", &p, &patched, &ok), "{\"alt_stat_name\":\"all-outbound\"}");
  p.direction = kPo_TrafficDirection_Inbound;
  assert_string_equal(patched_json(o, c, "{\"alt_stat_name\":\"x\"}", &p, &patched, &ok), "{}");
  assert_true(patched);
  p.resource_type = kPo_ResourceType_Route; /* nothing matches: not patched, no error */
  assert_string_equal(patched_json(o, "envoy.config.route.v3.RouteConfiguration", "{\"name\":\"r\"}", &p, &patched, &ok),
                      "{\"name\":\"r\"}");
  assert_false(patched);
  assert_true(ok);
}

static void test_compiled_once_applies_many(void **state) {
  (void)state;
  po_Override *o = compile(kArgs);
  po_ServiceName db = {"db", "default", "default"};
  po_Payload p = {kPo_ResourceType_Cluster, kPo_TrafficDirection_Outbound, &db};
  for (int i = 0; i < 100; i++) {
    bool patched, ok;
    char in[64];
    snprintf(in, sizeof in, "{\"name\":\"c%d\",\"outlier_detection\":{\"consecutive_5xx\":3}}", i);
    const char *out = patched_json(o, "envoy.config.cluster.v3.Cluster", in, &p, &patched, &ok);
    assert_true(ok && patched);
    /* the add replaces the wrapper only; the sibling stays */
    assert_non_null(strstr(out, "\"consecutive_5xx\":3"));
    assert_non_null(strstr(out, "\"max_ejection_percent\":20"));
  }
}

static void test_wrong_message_for_type_is_an_error(void **state) {
  (void)state;
  po_Override *o = compile(kArgs);
  po_Payload p = {kPo_ResourceType_Cluster, kPo_TrafficDirection_Outbound, NULL};
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_New(NULL, "envoy.config.listener.v3.Listener", A, &st);
  bool patched = true;
  assert_false(po_Override_Apply(o, m, &p, &patched, &st));
  assert_false(patched);
  assert_non_null(strstr(st.message, "1 error occurred:\n\t* patch 1 compiled for envoy.config.cluster.v3.Cluster"));
}

static void test_patchstruct_unknown_message(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  assert_null(po_Message_New(NULL, "envoy.config.cluster.v3.Nope", A, &st));
  assert_int_equal(st.code, kPo_Status_NotFound);
  char want[256];
  snprintf(want, sizeof want, "unknown message type 'envoy.config.cluster.v3.Nope': not in the Envoy v3 schema (%s)",
           po_EnvoyApi_Name(NULL));
  assert_string_equal(st.message, want);
}

static void test_unknown_op_after_path(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_New(NULL, "envoy.config.cluster.v3.Cluster", A, &st);
  po_Patch p = {.op = "replace", .path = "/name"};
  assert_false(po_PatchStruct(m, &p, false, kPo_Convention_Typed, &st));
  assert_string_equal(st.message, "unexpected error: no op implementation found");
  po_Patch q = {.op = "replace", .path = "/nope"};
  assert_false(po_PatchStruct(m, &q, false, kPo_Convention_Typed, &st));
  assert_true(strncmp(st.message, "no match for field 'nope'!", 26) == 0);
}

/* The IR: po_Override_Build returns the compiled form even with errors, which then cannot be
 * applied; po_Override_BuildFor compiles bare patches against one message, and its apply
 * applies every patch whatever the payload says. */
static void test_ir_invalid_is_not_applied(void **state) {
  (void)state;
  static const char args_json[] =
      "{\"Patches\": [{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/alt_stat_name\", \"Value\": \"x\"},"
      " {\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/nope\", \"Value\": 1}]}";
  po_Status st;
  po_Status_Clear(&st);
  po_Value *v = po_Value_ParseJson(args_json, sizeof args_json - 1, A, &st);
  po_Arguments args;
  assert_true(po_Arguments_Decode(v, A, &args, &st));
  po_Diagnostics *d = po_Diagnostics_New(A);
  po_Override *o = po_Override_Build(&args, NULL, A, d);
  assert_non_null(o);
  assert_false(po_Override_Valid(o));
  assert_null(po_Override_Compile(&args, NULL, A, po_Diagnostics_New(A)));
  assert_true(po_Override_Verdict(o, 0, kPo_Convention_Typed).ok);
  assert_false(po_Override_Verdict(o, 1, kPo_Convention_Wire).ok);
  assert_int_equal(po_Override_SegmentCount(o, 0), 1);
  assert_int_equal(po_Override_SegmentCount(o, 1), 0);
  assert_false(po_Override_Verdict(o, 2, kPo_Convention_Typed).ok); /* no such patch */
  po_PathSegment seg;
  assert_false(po_Override_Segment(o, 0, 1, &seg));
  po_Message *m = po_Message_New(NULL, "envoy.config.cluster.v3.Cluster", A, &st);
  assert_non_null(m);
  po_Status_Clear(&st);
  assert_false(po_Override_Apply(o, m, NULL, NULL, &st));
  assert_int_equal(st.code, kPo_Status_Invalid);
}

/* What target adapters read of an add: the shape of the value, whether it is the field's proto3
 * default (a proto merge would not copy it), and each segment's message type. */
static void test_ir_set_info(void **state) {
  (void)state;
  static const char args_json[] =
      "{\"Patches\": ["
      "{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/outlier_detection/enforcing_consecutive_5xx\", \"Value\": 0},"
      "{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/lb_policy\", \"Value\": \"ROUND_ROBIN\"},"
      "{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/lb_policy\", \"Value\": \"RING_HASH\"},"
      "{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/connect_timeout\", \"Value\": {\"seconds\": 5}},"
      "{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/alt_stat_name\", \"Value\": \"\"},"
      "{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"remove\", \"Path\": \"/alt_stat_name\"},"
      "{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/type\", \"Value\": \"STATIC\"}]}";
  po_Status st;
  po_Status_Clear(&st);
  po_Value *v = po_Value_ParseJson(args_json, sizeof args_json - 1, A, &st);
  po_Arguments args;
  assert_true(po_Arguments_Decode(v, A, &args, &st));
  po_Override *o = po_Override_Build(&args, NULL, A, po_Diagnostics_New(A));
  assert_non_null(o);
  po_SetInfo si;
  assert_true(po_Override_Set(o, 0, &si));
  assert_int_equal(si.shape, kPo_SetShape_Wrapper);
  assert_true(si.zero);
  assert_true(po_Override_Set(o, 1, &si));
  assert_int_equal(si.shape, kPo_SetShape_Scalar);
  assert_true(si.zero); /* ROUND_ROBIN is the enum's 0 */
  assert_true(po_Override_Set(o, 2, &si));
  assert_false(si.zero);
  assert_string_equal(po_Value_String(si.value, NULL), "RING_HASH");
  assert_true(po_Override_Set(o, 3, &si));
  assert_int_equal(si.shape, kPo_SetShape_Message);
  assert_false(si.zero);
  assert_true(po_Override_Set(o, 4, &si));
  assert_true(si.zero);
  assert_true(po_Override_Set(o, 5, &si));
  assert_int_equal(si.shape, kPo_SetShape_None);
  assert_true(po_Override_Set(o, 6, &si)); /* STATIC is 0, but /type is a oneof member: a merge copies it */
  assert_int_equal(si.shape, kPo_SetShape_Scalar);
  assert_false(si.zero);
  assert_false(po_Override_Set(o, 7, &si));
  po_PathSegment seg;
  assert_true(po_Override_Segment(o, 0, 0, &seg));
  assert_string_equal(seg.message_type, "envoy.config.cluster.v3.OutlierDetection");
  assert_false(seg.repeated);
  assert_true(po_Override_Segment(o, 0, 1, &seg));
  assert_string_equal(seg.message_type, "google.protobuf.UInt32Value");
  assert_true(po_Override_Segment(o, 1, 0, &seg));
  assert_null(seg.message_type);
  assert_true(po_Override_Segment(o, 3, 0, &seg));
  assert_string_equal(seg.message_type, "google.protobuf.Duration");
  /* protojson of the converted values: wrappers bare, enums by name, Durations as strings */
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 0, A), A), "0");
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 2, A), A), "\"RING_HASH\"");
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 3, A), A), "\"5s\"");
  assert_null(po_Override_SetJson(o, 5, A));
}

/* issue 23 A and D: objects for well-known types in protojson's form, which Envoy Gateway's
 * unmarshal of the patched resource needs: an object for a wrapper is its bare value ({} the
 * wrapper's zero, set), with the shape and zero of the scalar it stands for (a MERGE copies
 * {value: 1024} as Consul sets it); an Any in Consul's {type_url: u} form is {"@type": u}. */
static void test_ir_set_json_well_known(void **state) {
  (void)state;
#define PATCH(rt, path, value)                                                                          \
  "{\"ResourceFilter\": {\"ResourceType\": \"" rt "\", \"TrafficDirection\": \"outbound\"}, \"Op\": \"add\"," \
  " \"Path\": \"" path "\", \"Value\": " value "}"
  static const char args_json[] =
      "{\"Patches\": [" PATCH("cluster", "/outlier_detection/consecutive_5xx", "{}") ","
      PATCH("cluster", "/per_connection_buffer_limit_bytes", "{\"value\": 1024}") ","
      PATCH("listener", "/bind_to_port", "{}") ","
      PATCH("cluster", "/transport_socket/typed_config",
            "{\"type_url\": \"type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer\"}") ","
      PATCH("cluster", "/transport_socket/typed_config", "{}") ","
      PATCH("cluster", "/upstream_config/typed_config", "{\"type_url\": \"type.googleapis.com/google.protobuf.Duration\"}") ","
      PATCH("cluster", "/upstream_config/typed_config", "{\"type_url\": \"type.googleapis.com/google.protobuf.BoolValue\"}") "]}";
#undef PATCH
  po_Override *o = compile(args_json);
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 0, A), A), "0");
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 1, A), A), "1024");
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 2, A), A), "false");
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 3, A), A),
                      "{\"@type\":\"type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer\"}");
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 4, A), A), "{}");
  /* a well-known type with a JSON form of its own: that form of the empty message under "value" */
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 5, A), A),
                      "{\"@type\":\"type.googleapis.com/google.protobuf.Duration\",\"value\":\"0s\"}");
  assert_string_equal(po_Value_ToJson(po_Override_SetJson(o, 6, A), A),
                      "{\"@type\":\"type.googleapis.com/google.protobuf.BoolValue\",\"value\":false}");
  po_SetInfo si;
  assert_true(po_Override_Set(o, 0, &si));
  assert_int_equal(si.shape, kPo_SetShape_Wrapper);
  assert_true(si.zero);
  assert_true(po_Override_Set(o, 1, &si));
  assert_int_equal(si.shape, kPo_SetShape_Wrapper);
  assert_false(si.zero);
  assert_true(po_Override_Set(o, 3, &si));
  assert_int_equal(si.shape, kPo_SetShape_Message);
}

/* issue 23 C2: one object that sets two members of one oneof is refused for every target (Consul
 * keeps whichever Go's map order sets last), naming the oneof and both members; one member of
 * it beside a field outside it is fine. */
static void test_oneof_pair_refused(void **state) {
  (void)state;
  static const char two[] =
      "{\"Patches\": [{\"ResourceFilter\": {\"ResourceType\": \"listener\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/address/socket_address\","
      " \"Value\": {\"address\": \"0.0.0.0\", \"named_port\": \"http\", \"port_value\": 8080}}]}";
  po_Status st;
  po_Status_Clear(&st);
  po_Value *v = po_Value_ParseJson(two, sizeof two - 1, A, &st);
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_null(po_Constructor(NULL, v, NULL, A, d));
  assert_int_equal(po_Diagnostics_ErrorCount(d), 1);
  const po_Diagnostic *x = po_Diagnostics_At(d, 0);
  assert_int_equal(x->patch_index, 0);
  assert_non_null(strstr(x->message, "sets 'named_port' and 'port_value', two members of oneof 'port_specifier' of "
                                     "envoy.config.core.v3.SocketAddress"));
  static const char one[] =
      "{\"Patches\": [{\"ResourceFilter\": {\"ResourceType\": \"listener\", \"TrafficDirection\": \"outbound\"},"
      " \"Op\": \"add\", \"Path\": \"/address/socket_address\","
      " \"Value\": {\"address\": \"0.0.0.0\", \"port_value\": 8080}}]}";
  assert_non_null(compile(one));
}

static void test_ir_bare_applies_every_patch(void **state) {
  (void)state;
  po_Patch patches[2] = {{.op = "add", .path = "/alt_stat_name", .value = po_Value_NewString(A, "a", 1)},
                         {.op = "remove", .path = "/name"}};
  po_Arguments args = {.patches = patches, .patch_count = 2, .proxy_type = ""};
  po_CompileOptions co = po_CompileOptions_Default();
  co.envoy_rules = false; /* a cluster without its name breaks Envoy's min_len 1: this is about applying */
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_null(po_Override_BuildFor("envoy.config.cluster.v3.Nope", &args, &co, A, d));
  assert_int_equal(po_Diagnostics_ErrorCount(d), 1);
  po_Override *o = po_Override_BuildFor("envoy.config.cluster.v3.Cluster", &args, &co, A, po_Diagnostics_New(A));
  assert_non_null(o);
  assert_true(po_Override_Valid(o));
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_ParseJson(NULL, "envoy.config.cluster.v3.Cluster", "{\"name\":\"db\"}", 13, A, &st);
  assert_non_null(m);
  /* A payload of another resource type: a bare override does not read filters. */
  po_Payload p = {kPo_ResourceType_Listener, kPo_TrafficDirection_Inbound, NULL};
  bool patched = false;
  assert_true(po_Override_Apply(o, m, &p, &patched, &st));
  assert_true(patched);
  assert_string_equal(po_Message_ToJson(m, A, NULL, &st), "{\"alt_stat_name\":\"a\"}");
}

/* po_Override_ApplyChecked judges the value a patch sets as it ends up in the resource, not only
 * the parents it creates (issue 22, class 4): `/transport_socket {}` lacks the name Envoy requires;
 * a Duration part is judged with the resource's other part. Compiled without Envoy's rules, so
 * only the result says so. */
static void test_apply_checked_judges_the_value(void **state) {
  (void)state;
  po_Value *empty = po_Value_NewMap(A);
  po_Patch patches[3] = {{.op = "add", .path = "/transport_socket", .value = empty},
                         {.op = "add", .path = "/connect_timeout/nanos", .value = po_Value_NewInt(A, 0)},
                         {.op = "add", .path = "/cleanup_interval/nanos", .value = po_Value_NewInt(A, 0)}};
  po_Arguments args = {.patches = patches, .patch_count = 3, .proxy_type = ""};
  po_CompileOptions co = po_CompileOptions_Default();
  co.envoy_rules = false;
  po_Override *o = po_Override_BuildFor("envoy.config.cluster.v3.Cluster", &args, &co, A, po_Diagnostics_New(A));
  assert_non_null(o);
  po_Status st;
  po_Status_Clear(&st);
  /* connect_timeout exists (seconds 0 after the patch: 0s); cleanup_interval is 5s: left valid */
  const char *in = "{\"name\":\"db\",\"connect_timeout\":\"0.5s\",\"cleanup_interval\":\"5s\"}";
  po_Message *m = po_Message_ParseJson(NULL, "envoy.config.cluster.v3.Cluster", in, strlen(in), A, &st);
  assert_non_null(m);
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_true(po_Override_ApplyChecked(o, m, NULL, NULL, d, &st));
  assert_int_equal(po_Diagnostics_Count(d), 2);
  assert_string_equal(po_Diagnostics_At(d, 0)->message,
                      "the envoy.config.core.v3.TransportSocket this patch sets at /transport_socket breaks Envoy's rule on "
                      "'name': \"\" violates string min_len 1 (it has 0)");
  assert_string_equal(po_Diagnostics_At(d, 1)->message,
                      "the google.protobuf.Duration this patch sets at /connect_timeout breaks Envoy's rules: 0s violates "
                      "duration gt 0s");
  assert_int_equal(po_Diagnostics_At(d, 1)->patch_index, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matching),
      cmocka_unit_test(test_apply_checked_judges_the_value),
      cmocka_unit_test(test_compiled_once_applies_many),
      cmocka_unit_test(test_wrong_message_for_type_is_an_error),
      cmocka_unit_test(test_patchstruct_unknown_message),
      cmocka_unit_test(test_unknown_op_after_path),
      cmocka_unit_test(test_ir_invalid_is_not_applied),
      cmocka_unit_test(test_ir_bare_applies_every_patch),
      cmocka_unit_test(test_ir_set_info),
      cmocka_unit_test(test_ir_set_json_well_known),
      cmocka_unit_test(test_oneof_pair_refused),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
