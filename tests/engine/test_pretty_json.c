/* po_Message_ToPrettyJson (engine/src/pretty_json.c) against the text route it replaces in
 * preview: po_Message_ToJson, parsed by po_Value_ParseJson, indented by po_Value_ToPrettyJson.
 * The two must agree byte for byte on every kind of value upb writes: fields out of name order,
 * maps (string keys, Struct values), nested Anys (plain and well-known payloads), Durations,
 * wrappers, int64 and uint64 (quoted), doubles (integral, fractional, exponent, negative zero),
 * floats, bytes (each padding), enums (named and unnamed numbers), repeated fields, escapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"

typedef struct {
  const char *type, *json;
} Row;

static const Row kRows[] = {
    {"envoy.config.cluster.v3.Cluster",
     "{\"name\":\"db\\t\\\"x\\u0001é\",\"type\":\"EDS\",\"connect_timeout\":\"5.000000001s\",\"lb_policy\":\"RING_HASH\","
     "\"per_connection_buffer_limit_bytes\":32768,\"eds_cluster_config\":{\"service_name\":\"db\",\"eds_config\":{\"ads\":{}}},"
     "\"outlier_detection\":{\"consecutive_5xx\":5,\"interval\":\"10s\",\"max_ejection_percent\":100},"
     "\"circuit_breakers\":{\"thresholds\":[{\"max_connections\":1024},{\"priority\":\"HIGH\",\"max_retries\":3}]},"
     "\"metadata\":{\"filter_metadata\":{\"zeta\":{\"b\":[1,2.5,\"s\",null,true,{\"y\":1,\"x\":-0.25}]},\"alpha\":{\"k\":1e21}}},"
     "\"common_lb_config\":{\"healthy_panic_threshold\":{\"value\":12.5}},"
     "\"transport_socket\":{\"name\":\"tls\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
     "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"sni\":\"db.default.dc1.internal.x.consul\","
     "\"common_tls_context\":{\"alpn_protocols\":[\"h2\",\"http/1.1\"],\"tls_params\":{\"tls_minimum_protocol_version\":\"TLSv1_2\"},"
     "\"validation_context\":{\"trusted_ca\":{\"inline_bytes\":\"YWJj\"}},\"tls_certificates\":[{\"certificate_chain\":{\"inline_bytes\":\"YQ==\"},"
     "\"private_key\":{\"inline_bytes\":\"YWI=\"}}]}}},"
     "\"typed_extension_protocol_options\":{\"envoy.extensions.upstreams.http.v3.HttpProtocolOptions\":{\"@type\":"
     "\"type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions\",\"explicit_http_config\":"
     "{\"http2_protocol_options\":{\"max_concurrent_streams\":100}}},\"a.wkt\":{\"@type\":\"type.googleapis.com/"
     "google.protobuf.Duration\",\"value\":\"1.5s\"}}}"},
    /* unnamed enum number, a negative int64, uint64 beyond int64, doubles of every shape */
    {"envoy.config.cluster.v3.Cluster", "{\"name\":\"e\",\"lb_policy\":99,\"dns_lookup_family\":\"V4_ONLY\"}"},
    {"envoy.type.v3.Int64Range", "{\"start\":\"-9223372036854775808\",\"end\":\"9223372036854775807\"}"},
    {"envoy.type.v3.Percent", "{\"value\":100}"},
    {"envoy.type.v3.Percent", "{\"value\":0.1}"},
    {"envoy.type.v3.Percent", "{\"value\":-0.0}"},
    {"envoy.type.v3.Percent", "{\"value\":1e300}"},
    {"envoy.type.v3.Percent", "{\"value\":123456789012345678}"},
    {"envoy.type.v3.Percent", "{\"value\":\"NaN\"}"},
    {"envoy.type.v3.Percent", "{\"value\":\"-Infinity\"}"},
    {"google.protobuf.UInt64Value", "\"18446744073709551615\""},
    {"google.protobuf.Duration", "\"0s\""},
    {"google.protobuf.Duration", "\"-315576000000.000000001s\""},
    {"google.protobuf.Duration", "\"1.000100s\""},
    {"google.protobuf.Duration", "\"-3.5s\""},
    {"google.protobuf.Duration", "\"7.000000020s\""},
    {"google.protobuf.Timestamp", "\"2026-12-01T10:00:00.5Z\""},
    {"google.protobuf.BoolValue", "false"},
    {"google.protobuf.Int64Value", "\"-5\""},
    {"google.protobuf.BytesValue", "\"YWJjZA==\""},
    {"google.protobuf.StringValue", "\"\\u001f\""},
    {"google.protobuf.DoubleValue", "2.5e-300"},
    {"google.protobuf.FloatValue", "0.1"},
    {"google.protobuf.Struct", "{\"b\":{},\"a\":[]}"},
    {"envoy.config.core.v3.DataSource", "{\"inline_bytes\":\"\"}"},
    {"envoy.config.core.v3.DataSource", "{\"inline_bytes\":\"AAEC/w==\"}"},
    {"envoy.config.cluster.v3.Cluster", "{}"},
    /* an Any with no payload fields, and one with a float inside (RuntimeFractionalPercent's
     * neighbours have none: a Struct payload is a well-known one) */
    {"envoy.config.core.v3.TransportSocket", "{\"name\":\"t\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
                                             "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\"}}"},
    {"envoy.config.core.v3.TransportSocket", "{\"name\":\"t\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
                                             "google.protobuf.Struct\",\"value\":{\"z\":1,\"a\":{\"q\":\"r\"}}}}"},
};

static void test_pretty_matches_text_route(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; i++) {
    po_Arena *a = po_Arena_New();
    po_Status st;
    po_Status_Clear(&st);
    po_Message *m = po_Message_ParseJson(NULL, kRows[i].type, kRows[i].json, strlen(kRows[i].json), a, &st);
    if (!m) fail_msg("row %zu: %s", i, st.message);
    size_t len = 0;
    char *text = po_Message_ToJson(m, a, &len, &st);
    assert_non_null(text);
    const po_Value *v = po_Value_ParseJson(text, len, a, &st);
    assert_non_null(v);
    const char *want = po_Value_ToPrettyJson(v, a);
    size_t plen = 0;
    const char *got = po_Message_ToPrettyJson(m, a, &plen, &st);
    if (!got) fail_msg("row %zu: %s", i, st.message);
    if (strcmp(want, got)) fail_msg("row %zu differs:\n--- text route\n%s--- reflection\n%s", i, want, got);
    assert_int_equal(plen, strlen(got));
    po_Arena_Free(a);
  }
}

/* Keys sorted at every level, whatever the proto's field numbers: a fixed expectation, so the
 * test also fails if both routes were to change together. */
static void test_pretty_sorted(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  static const char kIn[] = "{\"name\":\"c\",\"connect_timeout\":\"1s\",\"metadata\":{\"filter_metadata\":{\"b\":{},\"a\":{\"y\":2,\"x\":1}}}}";
  po_Message *m = po_Message_ParseJson(NULL, "envoy.config.cluster.v3.Cluster", kIn, sizeof kIn - 1, a, &st);
  assert_non_null(m);
  assert_string_equal(po_Message_ToPrettyJson(m, a, NULL, &st),
                      "{\n  \"connect_timeout\": \"1s\",\n  \"metadata\": {\n    \"filter_metadata\": {\n      \"a\": {\n"
                      "        \"x\": 1,\n        \"y\": 2\n      },\n      \"b\": {}\n    }\n  },\n  \"name\": \"c\"\n}\n");
  po_Arena_Free(a);
}

/* A value with no JSON form fails both routes alike, with upb's reason naming the field: a
 * Duration whose nanos a patch set beyond a second (Consul's PatchStruct checks no range),
 * which upb's encoder refuses. */
static void test_pretty_error_is_upbs(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  po_Status st, want;
  po_Status_Clear(&st);
  po_Status_Clear(&want);
  static const char kIn[] =
      "{\"name\":\"c\",\"connect_timeout\":\"1s\",\"transport_socket\":{\"name\":\"t\",\"typed_config\":{\"@type\":"
      "\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"sni\":\"x\"}}}";
  po_Message *m = po_Message_ParseJson(NULL, "envoy.config.cluster.v3.Cluster", kIn, sizeof kIn - 1, a, &st);
  if (!m) fail_msg("%s", st.message);
  po_Patch p = {.op = "add", .path = "/connect_timeout/nanos", .value = po_Value_NewInt(a, 2000000000)};
  if (!po_PatchStruct(m, &p, false, kPo_Convention_Typed, &st)) fail_msg("%s", st.message);
  assert_null(po_Message_ToJson(m, a, NULL, &want));
  assert_null(po_Message_ToPrettyJson(m, a, NULL, &st));
  assert_int_equal(st.code, want.code);
  assert_string_equal(st.message, want.message);
  assert_non_null(strstr(st.message, "connect_timeout"));
  po_Arena_Free(a);
}

/* po_Value_PrettyJsonPointerAt: every line of the indented text names the value it starts or
 * the container it closes, with RFC 6901 escapes; lines outside the text have none. */
static void test_pointer_at_each_line(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  static const char kIn[] = "{\"b\":{\"c\":1,\"a\":[1,{\"x~/\":2}]},\"a\":[]}";
  po_Value *v = po_Value_ParseJson(kIn, sizeof kIn - 1, a, &st);
  assert_non_null(v);
  assert_string_equal(po_Value_ToPrettyJson(v, a),
                      "{\n  \"a\": [],\n  \"b\": {\n    \"a\": [\n      1,\n      {\n        \"x~/\": 2\n      }\n"
                      "    ],\n    \"c\": 1\n  }\n}\n");
  static const char *const kWant[] = {NULL,      "",      "/a",     "/b", "/b/a", "/b/a/0", "/b/a/1",
                                      "/b/a/1/x~0~1", "/b/a/1", "/b/a", "/b/c", "/b",     "",     NULL};
  for (int line = 0; line < (int)(sizeof kWant / sizeof *kWant); line++) {
    const char *got = po_Value_PrettyJsonPointerAt(v, line, a);
    if (!kWant[line]) {
      assert_null(got);
    } else {
      if (!got) fail_msg("line %d: no pointer, want '%s'", line, kWant[line]);
      assert_string_equal(got, kWant[line]);
    }
  }
  po_Value *scalar = po_Value_NewInt(a, 3);
  assert_string_equal(po_Value_PrettyJsonPointerAt(scalar, 1, a), "");
  assert_null(po_Value_PrettyJsonPointerAt(scalar, 2, a));
  po_Arena_Free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_pretty_matches_text_route), cmocka_unit_test(test_pretty_sorted),
                                     cmocka_unit_test(test_pretty_error_is_upbs),
                                     cmocka_unit_test(test_pointer_at_each_line)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
