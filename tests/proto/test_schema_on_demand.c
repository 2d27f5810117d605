/* Every embedded snapshot loaded on demand (po_Schema_LoadOnDemand, what the one-shot command
 * uses): each lookup loads the piece that defines the name and the pieces it uses, and nothing
 * more (each set is cut into pieces of a message or a cycle of them: proto/tools/trim.c); what it
 * finds is what the same snapshot loaded whole has; rules, Anys in JSON (also with an escaped
 * "@type" the scan cannot read) and names no file defines behave as with the whole schema; and
 * each snapshot's on-demand pool is its own (a message only a newer snapshot has is not found in
 * an older one). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/schema.h"
#include "upb/reflection.h"

/* proto/src/schema_internal.h: snapshot i's embedded set, reassembled from the shared pieces. */
unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size);

enum { kMax = 8 };
static const po_Schema *g_lazy[kMax];
static po_Schema *g_whole[kMax];
static size_t g_count;
/* The snapshot under test: each test runs its checks once per snapshot. */
static const po_Schema *lazy, *whole;

static int setup(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  assert_true(po_Schema_LoadOnDemand());
  assert_true(po_Schema_LoadOnDemand()); /* asking again for the same mode is fine */
  g_count = po_Schema_SnapshotCount();
  if (g_count < 3 || g_count > kMax) return fprintf(stderr, "%zu snapshots\n", g_count), -1;
  for (size_t i = 0; i < g_count; i++) {
    size_t n = 0;
    unsigned char *set = po_Schema_SnapshotSet_(i, &n);
    g_lazy[i] = po_Schema_GetSnapshot(i, &st);
    g_whole[i] = set ? po_Schema_New(set, n, &st) : NULL;
    free(set);
    if (!g_lazy[i] || !g_whole[i]) return fprintf(stderr, "snapshot %zu: %s\n", i, st.message), -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (size_t i = 0; i < g_count; i++) po_Schema_Free(g_whole[i]);
  return 0;
}

/* Variadic: the body's own commas (initializer lists) are not macro arguments. */
#define EACH_SNAPSHOT(...)                                                     \
  for (size_t snap = 0; snap < g_count; snap++) {                              \
    lazy = g_lazy[snap], whole = g_whole[snap];                                \
    __VA_ARGS__                                                                \
  }

static void test_loads_only_what_is_looked_up(void **state) {
  (void)state;
  EACH_SNAPSHOT({
  const upb_DefPool *pool = po_Schema_Pool(lazy);
  /* Nothing yet: the first lookup comes below (the tests run in order, this one first). */
  assert_null(upb_DefPool_FindMessageByName(pool, "envoy.config.cluster.v3.Cluster"));
  assert_null(upb_DefPool_FindMessageByName(pool, "google.protobuf.Any"));
  /* on demand, a snapshot still names its version; po_Schema_New's schema is no snapshot */
  assert_string_equal(po_Schema_Version(lazy), po_Schema_SnapshotVersion(snap));
  assert_null(po_Schema_Version(whole));
  const upb_MessageDef *c = po_Schema_ResourceMessage(lazy, "cluster");
  assert_non_null(c);
  assert_string_equal(upb_MessageDef_FullName(c), "envoy.config.cluster.v3.Cluster");
  assert_non_null(upb_DefPool_FindFileByName(pool, "envoy/config/cluster/v3/cluster.proto#Cluster"));
  assert_non_null(upb_DefPool_FindMessageByName(pool, "google.protobuf.Any")); /* a field's type */
  /* Listener is not a type Cluster uses: still not loaded. Nor are the messages of files Cluster
   * imports that it does not use: core/v3/base.proto's Node (Cluster uses its Metadata). */
  assert_null(upb_DefPool_FindMessageByName(pool, "envoy.config.listener.v3.Listener"));
  assert_non_null(upb_DefPool_FindMessageByName(pool, "envoy.config.core.v3.Metadata"));
  assert_null(upb_DefPool_FindMessageByName(pool, "envoy.config.core.v3.Node"));
  assert_true(po_Schema_FileCount(lazy) == po_Schema_FileCount(whole));
  })
  assert_ptr_equal(po_Schema_Get(NULL), g_lazy[po_Schema_SnapshotDefault()]);
}

static void test_same_defs_as_whole(void **state) {
  (void)state;
  EACH_SNAPSHOT({
  static const char *const names[] = {"envoy.config.cluster.v3.Cluster", "envoy.config.listener.v3.Listener",
                                      "envoy.config.route.v3.RouteConfiguration",
                                      "envoy.config.endpoint.v3.ClusterLoadAssignment",
                                      "envoy.config.cluster.v3.Cluster.CommonLbConfig", /* nested */
                                      "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const upb_MessageDef *l = po_Schema_FindMessage(lazy, names[i]), *w = po_Schema_FindMessage(whole, names[i]);
    assert_non_null(l);
    assert_non_null(w);
    assert_int_equal(upb_MessageDef_FieldCount(l), upb_MessageDef_FieldCount(w));
    for (int k = 0; k < upb_MessageDef_FieldCount(w); k++) {
      assert_string_equal(upb_FieldDef_Name(upb_MessageDef_Field(l, k)), upb_FieldDef_Name(upb_MessageDef_Field(w, k)));
    }
  }
  assert_null(po_Schema_FindMessage(lazy, "envoy.config.cluster.v3.Nope"));
  assert_null(po_Schema_FindMessage(lazy, "envoy.config.cluster.v3")); /* a package, not a message */
  assert_null(po_Schema_FindMessage(lazy, ""));
  })
}

static void test_rules(void **state) {
  (void)state;
  EACH_SNAPSHOT({
  const upb_MessageDef *od = po_Schema_FindMessage(lazy, "envoy.config.cluster.v3.OutlierDetection");
  upb_Arena *a = upb_Arena_New();
  const upb_MessageDef *rd = NULL;
  const upb_Message *r = po_Schema_FieldRules(lazy, upb_MessageDef_FindFieldByName(od, "max_ejection_percent"), a, &rd);
  assert_non_null(r);
  assert_string_equal(upb_MessageDef_FullName(rd), "validate.FieldRules");
  upb_Arena_Free(a);
  })
}

/* An Any names a type in a file nothing else loaded; with "@type" written plainly and escaped. */
static void test_any_in_json(void **state) {
  (void)state;
  static const char *const inputs[] = {
      "{\"name\":\"db\",\"transport_socket\":{\"name\":\"tls\",\"typed_config\":{\"@type\":"
      "\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"sni\":\"db\"}}}",
      "{\"name\":\"db\",\"transport_socket\":{\"name\":\"q\",\"typed_config\":{\"\\u0040type\":"
      "\"type.googleapis.com/envoy.extensions.transport_sockets.quic.v3.QuicUpstreamTransport\"}}}"};
  static const char *const types[] = {"envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
                                      "envoy.extensions.transport_sockets.quic.v3.QuicUpstreamTransport"};
  EACH_SNAPSHOT({
  const upb_DefPool *pool = po_Schema_Pool(lazy);
  for (int i = 0; i < 2; i++) {
    assert_null(upb_DefPool_FindMessageByName(pool, types[i]));
    upb_Arena *a = upb_Arena_New();
    po_Status st;
    po_Status_Clear(&st);
    const upb_MessageDef *c = po_Schema_FindMessage(lazy, "envoy.config.cluster.v3.Cluster");
    upb_Message *m = po_Json_Decode(lazy, c, inputs[i], strlen(inputs[i]), a, &st);
    if (!m) fail_msg("decode %d: %s", i, st.message);
    assert_non_null(upb_DefPool_FindMessageByName(pool, types[i]));
    char *out = po_Json_Encode(lazy, c, m, a, NULL, &st);
    assert_non_null(out);
    assert_non_null(strstr(out, i == 0 ? "\"sni\":\"db\"" : "QuicUpstreamTransport"));
    upb_Arena_Free(a);
  }
  })
}

/* Each snapshot's pool is its own: a message a newer snapshot added is found only there (on
 * demand as whole), and the schema looked up is the snapshot asked for. */
static void test_snapshots_apart(void **state) {
  (void)state;
  static const struct {
    const char *message;
    const char *since; /* the oldest embedded snapshot that has it */
  } kNewer[] = {
      {"envoy.config.core.v3.CelExpressionConfig", "v1.37.0"},
      {"envoy.extensions.clusters.original_dst.v3.OriginalDstCluster", "v1.40.0"},
  };
  for (size_t k = 0; k < sizeof kNewer / sizeof *kNewer; k++) {
    bool seen = false;
    EACH_SNAPSHOT(
      seen = seen || strcmp(po_Schema_Version(lazy), kNewer[k].since) == 0;
      if (seen) {
        if (!po_Schema_FindMessage(lazy, kNewer[k].message)) fail_msg("%s: %s missing on demand", po_Schema_Version(lazy), kNewer[k].message);
        assert_non_null(po_Schema_FindMessage(whole, kNewer[k].message));
      } else {
        if (po_Schema_FindMessage(lazy, kNewer[k].message)) fail_msg("%s: %s found on demand", po_Schema_Version(lazy), kNewer[k].message);
        assert_null(po_Schema_FindMessage(whole, kNewer[k].message));
        assert_false(po_Schema_OutOfMemory(lazy)); /* a real "no such name" */
      }
    )
    assert_true(seen);
  }
  /* grpc_credential's AwsIamConfig left the API before v1.40.0 */
  assert_non_null(po_Schema_FindMessage(g_lazy[0], "envoy.config.grpc_credential.v3.AwsIamConfig"));
  assert_null(po_Schema_FindMessage(g_lazy[g_count - 1], "envoy.config.grpc_credential.v3.AwsIamConfig"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loads_only_what_is_looked_up),
      cmocka_unit_test(test_same_defs_as_whole),
      cmocka_unit_test(test_rules),
      cmocka_unit_test(test_any_in_json),
      cmocka_unit_test(test_snapshots_apart),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
