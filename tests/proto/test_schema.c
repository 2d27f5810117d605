/* The embedded schema: it loads, names the four resource types, keeps declaration order,
 * round-trips JSON and binary, and exposes Envoy's validation rules and deprecations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "po/schema.h"
#include "upb/reflection.h"

static const po_Schema *schema(void) {
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  if (!s) fail_msg("schema did not load: %s", st.message);
  return s;
}

static void test_loads_once_with_every_resource(void **state) {
  (void)state;
  const po_Schema *s = schema();
  assert_ptr_equal(s, po_Schema_Get(NULL));
  assert_true(po_Schema_FileCount(s) > 300);
  /* Loaded whole: the mode is fixed, asking for on demand now is refused and changes nothing. */
  assert_false(po_Schema_LoadOnDemand());
  assert_ptr_equal(s, po_Schema_Get(NULL));
  static const char *const types[][2] = {{"cluster", "envoy.config.cluster.v3.Cluster"},
                                         {"cluster-load-assignment", "envoy.config.endpoint.v3.ClusterLoadAssignment"},
                                         {"route", "envoy.config.route.v3.RouteConfiguration"},
                                         {"listener", "envoy.config.listener.v3.Listener"}};
  for (int i = 0; i < 4; i++) {
    const upb_MessageDef *m = po_Schema_ResourceMessage(s, types[i][0]);
    assert_non_null(m);
    assert_string_equal(upb_MessageDef_FullName(m), types[i][1]);
    assert_string_equal(po_Schema_ResourceTypeOf(m), types[i][0]);
  }
  assert_null(po_Schema_ResourceMessage(s, "endpoint"));
  assert_null(po_Schema_ResourceMessage(s, NULL));
  /* extensions resolve, so any @type inside an Any does */
  assert_non_null(po_Schema_FindMessage(s, "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"));
  assert_non_null(po_Schema_FindMessage(s, "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"));
  assert_non_null(po_Schema_FindMessage(s, "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"));
  assert_non_null(po_Schema_FindMessage(s, "envoy.extensions.filters.http.rbac.v3.RBAC"));
  assert_non_null(po_Schema_FindMessage(s, "envoy.admin.v3.ClustersConfigDump"));
  assert_null(po_Schema_FindMessage(s, "envoy.config.cluster.v3.Nope"));
}

/* The snapshot table: each snapshot loads once, names its version, and the default is the one
 * po_Schema_Get gives; past the end is an error, not a crash. */
static void test_snapshots(void **state) {
  (void)state;
  size_t n = po_Schema_SnapshotCount(), d = po_Schema_SnapshotDefault();
  assert_true(n >= 1);
  assert_true(d < n);
  for (size_t i = 0; i < n; i++) {
    po_Status st;
    po_Status_Clear(&st);
    const po_Schema *s = po_Schema_GetSnapshot(i, &st);
    if (!s) fail_msg("snapshot %zu did not load: %s", i, st.message);
    assert_ptr_equal(s, po_Schema_GetSnapshot(i, NULL));
    const char *v = po_Schema_SnapshotVersion(i);
    assert_non_null(v);
    assert_string_equal(po_Schema_Version(s), v);
    assert_non_null(strstr(po_Schema_Snapshot(), v));
    assert_non_null(po_Schema_ResourceMessage(s, "cluster"));
    for (size_t j = 0; j < i; j++) {
      assert_ptr_not_equal(s, po_Schema_GetSnapshot(j, NULL));
      assert_string_not_equal(v, po_Schema_SnapshotVersion(j));
    }
  }
  assert_ptr_equal(po_Schema_GetSnapshot(d, NULL), po_Schema_Get(NULL));
  assert_null(po_Schema_SnapshotVersion(n));
  po_Status st;
  po_Status_Clear(&st);
  assert_null(po_Schema_GetSnapshot(n, &st));
  assert_int_equal(st.code, kPo_Status_NotFound);
  assert_non_null(strstr(st.message, "no snapshot"));
  assert_null(po_Schema_Version(NULL));
}

static void test_fields_in_declaration_order(void **state) {
  (void)state;
  const upb_MessageDef *m = po_Schema_FindMessage(schema(), "envoy.config.cluster.v3.Cluster");
  /* Consul prints fields in .proto order; the first few of Cluster: */
  static const char *const first[] = {"transport_socket_matches", "name", "alt_stat_name", "type", "cluster_type"};
  for (int i = 0; i < 5; i++) assert_string_equal(upb_FieldDef_Name(upb_MessageDef_Field(m, i)), first[i]);
}

static void test_json_round_trip_with_any(void **state) {
  (void)state;
  const po_Schema *s = schema();
  const upb_MessageDef *m = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  upb_Arena *a = upb_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  /* JSON names in, proto names out */
  const char *in = "{\"name\":\"c\",\"connectTimeout\":\"1.5s\",\"transportSocket\":{\"name\":\"t\",\"typedConfig\":"
                   "{\"@type\":\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"sni\":\"x\"}}}";
  upb_Message *msg = po_Json_Decode(s, m, in, strlen(in), a, &st);
  assert_non_null(msg);
  size_t len;
  char *out = po_Json_Encode(s, m, msg, a, &len, &st);
  assert_non_null(out);
  assert_string_equal(out, "{\"name\":\"c\",\"connect_timeout\":\"1.500s\",\"transport_socket\":{\"name\":\"t\",\"typed_config\":"
                           "{\"@type\":\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"sni\":\"x\"}}}");
  size_t blen;
  char *bin = po_Binary_Encode(m, msg, a, &blen, &st);
  assert_non_null(bin);
  upb_Message *back = po_Binary_Decode(s, m, bin, blen, a, &st);
  assert_non_null(back);
  assert_string_equal(po_Json_Encode(s, m, back, a, NULL, &st), out);
  upb_Arena_Free(a);
}

static void test_decode_errors(void **state) {
  (void)state;
  const po_Schema *s = schema();
  const upb_MessageDef *m = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  upb_Arena *a = upb_Arena_New();
  po_Status st;
  static const char *const bad[] = {
      "{\"name\":", "{\"nope\":1}", "{\"connect_timeout\":\"forever\"}",
      "{\"transport_socket\":{\"typed_config\":{\"@type\":\"type.googleapis.com/not.a.Type\"}}}", "[]", "",
      "\x01\x02", "{\"name\":\"\\ud800\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    po_Status_Clear(&st);
    assert_null(po_Json_Decode(s, m, bad[i], strlen(bad[i]), a, &st));
    assert_int_equal(st.code, kPo_Status_Parse);
    assert_non_null(strstr(st.message, "invalid envoy.config.cluster.v3.Cluster JSON: "));
  }
  po_Status_Clear(&st);
  assert_null(po_Binary_Decode(s, m, "\xff\xff\xff", 3, a, &st));
  assert_int_equal(st.code, kPo_Status_Parse);
  upb_Arena_Free(a);
}

static void test_rules_and_deprecation(void **state) {
  (void)state;
  const po_Schema *s = schema();
  const upb_MessageDef *od = po_Schema_FindMessage(s, "envoy.config.cluster.v3.OutlierDetection");
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(od, "max_ejection_percent");
  upb_Arena *a = upb_Arena_New();
  const upb_MessageDef *rd = NULL;
  const upb_Message *r = po_Schema_FieldRules(s, f, a, &rd);
  assert_non_null(r);
  assert_string_equal(upb_MessageDef_FullName(rd), "validate.FieldRules");
  const upb_FieldDef *u32 = upb_MessageDef_FindFieldByName(rd, "uint32");
  assert_true(upb_Message_Has(r, u32));
  const upb_Message *u = upb_Message_Get(r, u32).msg_val;
  const upb_MessageDef *ud = upb_FieldDef_MessageSubDef(u32);
  assert_int_equal(upb_Message_Get(u, upb_MessageDef_FindFieldByName(ud, "lte")).uint32_val, 100);
  /* a field without rules */
  const upb_MessageDef *c = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  assert_null(po_Schema_FieldRules(s, upb_MessageDef_FindFieldByName(c, "alt_stat_name"), a, &rd));
  assert_true(po_Schema_FieldDeprecated(upb_MessageDef_FindFieldByName(c, "use_tcp_for_dns_lookups")));
  assert_false(po_Schema_FieldDeprecated(upb_MessageDef_FindFieldByName(c, "name")));
  upb_Arena_Free(a);
}

/* google.protobuf.Duration and Timestamp through the JSON and binary codecs, as Go's protojson
 * prints them: one sign before the magnitudes, nanos in 3, 6 or 9 digits. Each row: the JSON a
 * Listener's listener_filters_timeout (or a Timestamp's) is written as, the seconds and nanos it
 * decodes to, and the JSON it encodes back to (NULL: the same text). */
typedef struct {
  const char *json;
  int64_t seconds;
  int32_t nanos;
  const char *back;
} DurationRow;

static const DurationRow kDurations[] = {
    {"\"0s\"", 0, 0, NULL},
    {"\"-0s\"", 0, 0, "\"0s\""},
    {"\"1s\"", 1, 0, NULL},
    {"\"-1s\"", -1, 0, NULL},
    {"\"0.500s\"", 0, 500000000, NULL},
    {"\"-0.500s\"", 0, -500000000, NULL},
    {"\"-0.5s\"", 0, -500000000, "\"-0.500s\""},
    {"\"0.000000001s\"", 0, 1, NULL},
    {"\"-0.000000001s\"", 0, -1, NULL},
    {"\"-0.000001s\"", 0, -1000, NULL},
    {"\"1.500s\"", 1, 500000000, NULL},
    {"\"-1.500s\"", -1, -500000000, NULL},
    {"\"-1.999999999s\"", -1, -999999999, NULL},
    {"\"315576000000.999999999s\"", 315576000000, 999999999, NULL},
    {"\"-315576000000.999999999s\"", -315576000000, -999999999, NULL},
    {"\"315576000000s\"", 315576000000, 0, NULL},
    {"\"-315576000000s\"", -315576000000, 0, NULL},
};

static const upb_MessageDef *listener(void) {
  return po_Schema_FindMessage(schema(), "envoy.config.listener.v3.Listener");
}

static void check_duration(const upb_MessageDef *ld, const upb_Message *l, int64_t sec, int32_t nanos,
                           const char *what) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(ld, "listener_filters_timeout");
  const upb_MessageDef *dd = upb_FieldDef_MessageSubDef(f);
  const upb_Message *d = upb_Message_Get(l, f).msg_val;
  if (!d) fail_msg("%s: no duration", what);
  int64_t s = upb_Message_Get(d, upb_MessageDef_FindFieldByName(dd, "seconds")).int64_val;
  int32_t n = upb_Message_Get(d, upb_MessageDef_FindFieldByName(dd, "nanos")).int32_val;
  if (s != sec || n != nanos) {
    fail_msg("%s: got {%lld, %d}, want {%lld, %d}", what, (long long)s, n, (long long)sec, nanos);
  }
}

static void test_duration_round_trips(void **state) {
  (void)state;
  const po_Schema *s = schema();
  const upb_MessageDef *ld = listener();
  for (size_t i = 0; i < sizeof kDurations / sizeof kDurations[0]; i++) {
    const DurationRow *r = &kDurations[i];
    upb_Arena *arena = upb_Arena_New();
    char in[128], want[128];
    snprintf(in, sizeof in, "{\"listener_filters_timeout\":%s}", r->json);
    snprintf(want, sizeof want, "{\"listener_filters_timeout\":%s}", r->back ? r->back : r->json);
    po_Status st;
    po_Status_Clear(&st);
    upb_Message *l = po_Json_Decode(s, ld, in, strlen(in), arena, &st);
    if (!l) fail_msg("%s: decode: %s", r->json, st.message);
    check_duration(ld, l, r->seconds, r->nanos, r->json);
    char *out = po_Json_Encode(s, ld, l, arena, NULL, &st);
    if (!out) fail_msg("%s: encode: %s", r->json, st.message);
    if (strcmp(out, want) != 0) fail_msg("%s: encoded %s, want %s", r->json, out, want);
    /* binary keeps both fields and their signs */
    size_t n;
    char *bin = po_Binary_Encode(ld, l, arena, &n, &st);
    assert_non_null(bin);
    upb_Message *back = po_Binary_Decode(s, ld, bin, n, arena, &st);
    assert_non_null(back);
    check_duration(ld, back, r->seconds, r->nanos, r->json);
    upb_Arena_Free(arena);
  }
}

/* Set directly (as a patch does) rather than parsed: what Envoy would refuse must not print. */
static void test_duration_encode_refuses_invalid(void **state) {
  (void)state;
  const po_Schema *s = schema();
  const upb_MessageDef *ld = listener();
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(ld, "listener_filters_timeout");
  const upb_MessageDef *dd = upb_FieldDef_MessageSubDef(f);
  static const struct { int64_t s; int32_t n; const char *want; } rows[] = {
      {-1, 0, "\"-1s\""}, {0, -500000000, "\"-0.500s\""}, {-2, -1, "\"-2.000000001s\""},
      {1, -1, NULL}, {-1, 1, NULL}, {0, 1000000000, NULL}, {0, -1000000000, NULL},
      {315576000001, 0, NULL}, {-315576000001, 0, NULL}, {INT64_MIN, 0, NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    upb_Arena *arena = upb_Arena_New();
    upb_Message *l = upb_Message_New(ld, arena);
    upb_Message *d = upb_Message_Mutable(l, f, arena).msg;
    upb_Message_Set(d, upb_MessageDef_FindFieldByName(dd, "seconds"), (upb_MessageValue){.int64_val = rows[i].s}, arena);
    upb_Message_Set(d, upb_MessageDef_FindFieldByName(dd, "nanos"), (upb_MessageValue){.int32_val = rows[i].n}, arena);
    po_Status st;
    po_Status_Clear(&st);
    char *out = po_Json_Encode(s, ld, l, arena, NULL, &st);
    if (rows[i].want) {
      char want[128];
      snprintf(want, sizeof want, "{\"listener_filters_timeout\":%s}", rows[i].want);
      if (!out || strcmp(out, want)) fail_msg("{%lld, %d}: got %s, want %s", (long long)rows[i].s, rows[i].n, out ? out : st.message, want);
    } else if (out) {
      fail_msg("{%lld, %d}: encoded as %s, want an error", (long long)rows[i].s, rows[i].n, out);
    } else {
      /* the field named, and the rule it breaks */
      if (!strstr(st.message, "/listener_filters_timeout: google.protobuf.Duration {seconds: ") ||
          !strstr(st.message, "has no JSON form")) {
        fail_msg("{%lld, %d}: %s", (long long)rows[i].s, rows[i].n, st.message);
      }
    }
    upb_Arena_Free(arena);
  }
}

/* google.protobuf.Timestamp (the well-known message itself) before and after the epoch, at both
 * ends of its range, with and without nanos. */
static void test_timestamp_round_trips(void **state) {
  (void)state;
  const po_Schema *s = schema();
  const upb_MessageDef *td = po_Schema_FindMessage(s, "google.protobuf.Timestamp");
  if (!td) skip();
  static const char *const rows[] = {"\"1970-01-01T00:00:00Z\"", "\"1969-12-31T23:59:59.500Z\"",
                                     "\"0001-01-01T00:00:00Z\"", "\"9999-12-31T23:59:59.999999999Z\"",
                                     "\"2026-02-28T12:00:00.000001Z\""};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    upb_Arena *arena = upb_Arena_New();
    po_Status st;
    po_Status_Clear(&st);
    upb_Message *t = po_Json_Decode(s, td, rows[i], strlen(rows[i]), arena, &st);
    if (!t) fail_msg("%s: %s", rows[i], st.message);
    char *out = po_Json_Encode(s, td, t, arena, NULL, &st);
    if (!out || strcmp(out, rows[i])) fail_msg("%s: encoded %s", rows[i], out ? out : st.message);
    upb_Arena_Free(arena);
  }
}

static void test_bad_descriptor_set(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  assert_null(po_Schema_New("\x0a\x05hello", 7, &st));
  assert_int_not_equal(st.code, kPo_Status_Ok);
  po_Status_Clear(&st);
  assert_null(po_Schema_New("", 0, &st)); /* an empty set has no Cluster */
  assert_int_equal(st.code, kPo_Status_NotFound);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loads_once_with_every_resource), cmocka_unit_test(test_snapshots),
      cmocka_unit_test(test_fields_in_declaration_order),
      cmocka_unit_test(test_json_round_trip_with_any),      cmocka_unit_test(test_decode_errors),
      cmocka_unit_test(test_rules_and_deprecation),         cmocka_unit_test(test_bad_descriptor_set),
      cmocka_unit_test(test_duration_round_trips), cmocka_unit_test(test_duration_encode_refuses_invalid),
      cmocka_unit_test(test_timestamp_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
