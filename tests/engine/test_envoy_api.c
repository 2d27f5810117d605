/* po_EnvoyApi: the embedded snapshots as the engine hands them out (oldest first, found by
 * version with or without its 'v', chosen for an Envoy version), and every schema lookup taking
 * its snapshot explicitly: a compile keeps its snapshot, a message is of the one it was decoded
 * with, and applying an override to a message of another snapshot is refused, both named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"
#include "po/schema.h"

static po_Arena *A;

static int setup(void **state) {
  (void)state;
  A = po_Arena_New();
  return A ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  po_Arena_Free(A);
  return 0;
}

/* "v1.37.0" -> 1, 37; false for a snapshot not named by a module version */
static bool parse(const char *v, int *major, int *minor) {
  int n = 0;
  return sscanf(v, "v%d.%d.%*d%n", major, minor, &n) == 2 && n > 0 && v[n] == '\0';
}

static void test_table(void **state) {
  (void)state;
  size_t n = po_EnvoyApi_Count();
  assert_true(n >= 1);
  assert_null(po_EnvoyApi_At(n));
  assert_ptr_equal(po_EnvoyApi_Newest(), po_EnvoyApi_At(n - 1));
  assert_non_null(po_EnvoyApi_Default());
  assert_string_equal(po_EnvoyApi_Version(NULL), po_EnvoyApi_Version(po_EnvoyApi_Default()));
  assert_null(po_EnvoyApi_Find("v0.0.1"));
  assert_null(po_EnvoyApi_Find(""));
  assert_null(po_EnvoyApi_Find(NULL));
  int pmaj = -1, pmin = -1;
  for (size_t i = 0; i < n; i++) {
    const po_EnvoyApi *api = po_EnvoyApi_At(i);
    const char *v = po_EnvoyApi_Version(api);
    assert_ptr_equal(po_EnvoyApi_Find(v), api);
    int major, minor;
    if (!parse(v, &major, &minor)) continue;
    assert_ptr_equal(po_EnvoyApi_Find(v + 1), api); /* "1.37.0" names "v1.37.0" */
    char name[64];
    snprintf(name, sizeof name, "go-control-plane envoy %s", v);
    assert_string_equal(po_EnvoyApi_Name(api), name);
    /* oldest first */
    assert_true(major > pmaj || (major == pmaj && minor > pmin));
    pmaj = major;
    pmin = minor;
    /* a proxy of exactly that Envoy minor is judged by it */
    assert_ptr_equal(po_EnvoyApi_ForEnvoy(major, minor), api);
  }
  assert_ptr_equal(po_EnvoyApi_ForEnvoy(99, 0), po_EnvoyApi_Newest());
}

/* With the three snapshots of issue 24: which, in which order, and the Envoy versions between
 * them (an Envoy 1.33 proxy: the oldest snapshot at least that new, v1.37.0). */
static void test_three(void **state) {
  (void)state;
  assert_int_equal(po_EnvoyApi_Count(), 3);
  assert_string_equal(po_EnvoyApi_Version(po_EnvoyApi_At(0)), "v1.32.4");
  assert_string_equal(po_EnvoyApi_Version(po_EnvoyApi_At(1)), "v1.37.0");
  assert_string_equal(po_EnvoyApi_Version(po_EnvoyApi_At(2)), "v1.40.0");
  assert_ptr_equal(po_EnvoyApi_Default(), po_EnvoyApi_At(0));
  assert_ptr_equal(po_EnvoyApi_Find("1.40.0"), po_EnvoyApi_Newest());
  assert_ptr_equal(po_EnvoyApi_ForEnvoy(1, 31), po_EnvoyApi_At(0));
  assert_ptr_equal(po_EnvoyApi_ForEnvoy(1, 33), po_EnvoyApi_At(1));
  assert_ptr_equal(po_EnvoyApi_ForEnvoy(1, 38), po_EnvoyApi_At(2));
  assert_ptr_equal(po_EnvoyApi_ForEnvoy(2, 0), po_EnvoyApi_At(2));
}

static po_Override *compile(const po_EnvoyApi *api, const char *path, const char *json, po_Diagnostics **d) {
  po_Status st;
  po_Status_Clear(&st);
  po_Value *v = po_Value_ParseJson(json, strlen(json), A, &st);
  assert_non_null(v);
  po_Patch p = {.resource_filter = {.present = true, .resource_type = "cluster", .traffic_direction = "outbound"},
                .op = "add",
                .path = path,
                .value = v};
  po_Arguments args = {.patches = &p, .patch_count = 1, .proxy_type = ""};
  po_CompileOptions o = po_CompileOptions_Default();
  o.api = api;
  *d = po_Diagnostics_New(A);
  return po_Override_Build(&args, &o, A, *d);
}

/* Every snapshot compiles under itself and keeps it; its messages are of it. */
static void test_each_snapshot_keeps_itself(void **state) {
  (void)state;
  for (size_t i = 0; i < po_EnvoyApi_Count(); i++) {
    const po_EnvoyApi *api = po_EnvoyApi_At(i);
    po_Diagnostics *d;
    po_Override *o = compile(api, "/connect_timeout", "{\"seconds\": 5}", &d);
    assert_non_null(o);
    assert_true(po_Override_Valid(o));
    assert_ptr_equal(po_Override_Api(o), api);
    po_Status st;
    po_Status_Clear(&st);
    po_Message *m = po_Message_New(api, "envoy.config.cluster.v3.Cluster", A, &st);
    assert_non_null(m);
    assert_ptr_equal(po_Message_Api(m), api);
    po_Payload p = {kPo_ResourceType_Cluster, kPo_TrafficDirection_Outbound, NULL};
    bool patched = false;
    assert_true(po_Override_Apply(o, m, &p, &patched, &st));
    assert_true(patched);
    po_Explanation x;
    assert_true(po_Explain(&(po_ExplainOptions){.api = api}, "cluster/connect_timeout", A, &x, &st));
    po_PointerSeg seg[2];
    assert_int_equal(po_Pointer_Segments(api, "envoy.config.cluster.v3.Cluster", "/connect_timeout", seg, 2), 1);
    assert_int_equal(seg[0].kind, kPo_PointerSeg_Field);
  }
  /* NULL is the default's */
  po_Diagnostics *d;
  po_Override *o = compile(NULL, "/connect_timeout", "{\"seconds\": 5}", &d);
  assert_ptr_equal(po_Override_Api(o), po_EnvoyApi_Default());
}

/* An override of one snapshot applied to a message of another: refused, saying both, the
 * message left alone (the chain's field definitions are the other pool's). */
static void test_apply_other_snapshot_refused(void **state) {
  (void)state;
  const po_EnvoyApi *x = po_EnvoyApi_At(0), *y = po_EnvoyApi_Newest();
  po_Diagnostics *d;
  po_Override *o = compile(x, "/connect_timeout", "{\"seconds\": 5}", &d);
  assert_true(o && po_Override_Valid(o));
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_New(y, "envoy.config.cluster.v3.Cluster", A, &st);
  assert_non_null(m);
  po_Payload p = {kPo_ResourceType_Cluster, kPo_TrafficDirection_Outbound, NULL};
  bool patched = true;
  assert_false(po_Override_Apply(o, m, &p, &patched, &st));
  assert_false(patched);
  assert_int_equal(st.code, kPo_Status_Invalid);
  char want[256];
  snprintf(want, sizeof want, "the override was compiled under %s; this envoy.config.cluster.v3.Cluster is of %s",
           po_EnvoyApi_Name(x), po_EnvoyApi_Name(y));
  assert_non_null(strstr(st.message, want));
  size_t len;
  char *json = po_Message_ToJson(m, A, &len, &st);
  assert_string_equal(json, "{}");
}

/* Fields one snapshot has and an older one lacks, each refused under the older with Consul's
 * text and a hint naming the snapshots that have it, and accepted (judged by Envoy's rules) under
 * those (and judged by their rules): RouteConfiguration.vhost_header (v1.37.0 on), Cluster.per_connection_buffer_high_watermark
 * _timeout and DnsCluster.dns_min_refresh_rate (v1.40.0 only). Cluster.dns_jitter is in all three
 * (v1.32.4, Consul 1.22's own, included). */
static po_Override *compile_on(const po_EnvoyApi *api, const char *rt, const char *path, const char *json,
                               po_Diagnostics **d) {
  po_Status st;
  po_Status_Clear(&st);
  po_Value *v = po_Value_ParseJson(json, strlen(json), A, &st);
  assert_non_null(v);
  po_Patch p = {.resource_filter = {.present = true, .resource_type = rt, .traffic_direction = "outbound"},
                .op = "add",
                .path = path,
                .value = v};
  po_Arguments args = {.patches = &p, .patch_count = 1, .proxy_type = ""};
  /* a mesh whose 1.0 is built on v1.32.4 and 1.1, 1.2 on v1.37.0: the hint names those accepting */
  static po_ApiRelease rows[3];
  static po_ApiReleases releases = {.mesh = "mesh", .rows = rows, .count = 3};
  rows[0] = (po_ApiRelease){"mesh", "1.0", po_EnvoyApi_Find("v1.32.4")};
  rows[1] = (po_ApiRelease){"mesh", "1.1", po_EnvoyApi_Find("v1.37.0")};
  rows[2] = (po_ApiRelease){"mesh", "1.2", po_EnvoyApi_Find("v1.37.0")};
  po_CompileOptions o = po_CompileOptions_Default();
  o.api = api;
  o.judged_for = "mesh@1.0";
  o.releases = &releases;
  *d = po_Diagnostics_New(A);
  return po_Override_Build(&args, &o, A, *d);
}

static void test_fields_by_snapshot(void **state) {
  (void)state;
  const po_EnvoyApi *v32 = po_EnvoyApi_Find("v1.32.4"), *v37 = po_EnvoyApi_Find("v1.37.0"),
                    *v40 = po_EnvoyApi_Find("v1.40.0");
  po_Diagnostics *d;
  po_Override *o = compile_on(v32, "route", "/vhost_header", "\"x-vhost\"", &d);
  assert_false(po_Override_Valid(o));
  const po_Diagnostic *e = po_Diagnostics_At(d, 0);
  assert_non_null(strstr(e->message, "no match for field 'vhost_header'!"));
  assert_string_equal(e->hint,
                      "'vhost_header' is a field of envoy.config.route.v3.RouteConfiguration in go-control-plane envoy "
                      "v1.37.0 and v1.40.0 but not in go-control-plane envoy v1.32.4, the Envoy API judging mesh@1.0; "
                      "mesh@1.1 and mesh@1.2 accept it");
  assert_true(po_Override_Valid(compile_on(v37, "route", "/vhost_header", "\"x-vhost\"", &d)));
  const char *path = "/per_connection_buffer_high_watermark_timeout";
  o = compile_on(v37, "cluster", path, "{\"seconds\": 5}", &d);
  assert_false(po_Override_Valid(o));
  assert_string_equal(po_Diagnostics_At(d, 0)->hint,
                      "'per_connection_buffer_high_watermark_timeout' is a field of envoy.config.cluster.v3.Cluster in "
                      "go-control-plane envoy v1.40.0 but not in go-control-plane envoy v1.37.0, the Envoy API judging "
                      "mesh@1.0; no mesh release this build supports accepts it yet");
  /* adv-24: the sentence said "a mesh release built on one of those accepts it" of a field only
   * v1.40.0 has. The same sentence for a decoder's "No such field" (a hand-written EnvoyFilter's),
   * without a release judged, and without releases to name: the snapshots alone */
  po_ApiRelease one = {"istio", "1.31", v37};
  po_ApiReleases istio = {.mesh = "istio", .rows = &one, .count = 1};
  assert_string_equal(po_Hint_FieldOfOtherApis(v32, "envoy.config.route.v3.RouteConfiguration", "vhost_header", NULL,
                                               &istio, A),
                      "'vhost_header' is a field of envoy.config.route.v3.RouteConfiguration in go-control-plane envoy "
                      "v1.37.0 and v1.40.0 but not in go-control-plane envoy v1.32.4, the Envoy API used here; "
                      "istio@1.31 accepts it");
  assert_string_equal(po_Hint_FieldOfOtherApis(v37, "envoy.config.cluster.v3.Cluster", path + 1, "istio@1.31", NULL, A),
                      "'per_connection_buffer_high_watermark_timeout' is a field of envoy.config.cluster.v3.Cluster in "
                      "go-control-plane envoy v1.40.0 but not in go-control-plane envoy v1.37.0, the Envoy API judging "
                      "istio@1.31");
  assert_null(po_Hint_FieldOfOtherApis(v37, "envoy.config.cluster.v3.Cluster", "conect_timeout", NULL, &istio, A));
  assert_true(po_Override_Valid(compile_on(v40, "cluster", path, "{\"seconds\": 5}", &d)));
  /* judged as a value of that field (a Duration Envoy refuses when negative) */
  assert_false(po_Override_Valid(compile_on(v40, "cluster", path, "{\"seconds\": -1}", &d)));
  assert_non_null(strstr(po_Diagnostics_At(d, 0)->message, "/per_connection_buffer_high_watermark_timeout: "));
  assert_true(po_Override_Valid(compile_on(po_EnvoyApi_ForEnvoy(1, 38), "cluster", path, "{\"seconds\": 5}", &d)));
  /* dns_jitter: in each, deprecated in each (a warning, not an error) */
  for (size_t i = 0; i < po_EnvoyApi_Count(); i++) {
    o = compile_on(po_EnvoyApi_At(i), "cluster", "/dns_jitter", "{\"seconds\": 1}", &d);
    assert_true(po_Override_Valid(o));
    assert_int_equal(po_Diagnostics_Count(d), 1);
    assert_int_equal(po_Diagnostics_At(d, 0)->kind, kPo_DiagKind_Deprecated);
  }
  po_Status st;
  static const char kDns[] = "{\"dns_min_refresh_rate\": \"2s\"}";
  po_Status_Clear(&st);
  assert_non_null(po_Message_ParseJson(v32, "envoy.extensions.clusters.dns.v3.DnsCluster", "{}", 2, A, &st));
  assert_null(po_Message_ParseJson(v37, "envoy.extensions.clusters.dns.v3.DnsCluster", kDns, strlen(kDns), A, &st));
  po_Status_Clear(&st);
  assert_non_null(po_Message_ParseJson(v40, "envoy.extensions.clusters.dns.v3.DnsCluster", kDns, strlen(kDns), A, &st));
}

/* The hint about a field only other snapshots have reads their embedded pieces, not their
 * schemas: a process judging under one snapshot loads no other to say so (loading them cost a
 * controller's first unknown field 63 M instructions and 16 MB; docs/benchmarks.md). Runs first,
 * before the other tests load every snapshot. */
static void test_hint_loads_no_other_snapshot(void **state) {
  (void)state;
  const po_EnvoyApi *v32 = po_EnvoyApi_Find("v1.32.4");
  for (size_t i = 0; i < po_Schema_SnapshotCount(); i++) assert_false(po_Schema_SnapshotLoaded(i));
  po_Diagnostics *d;
  assert_false(po_Override_Valid(compile_on(v32, "route", "/vhost_header", "\"x-vhost\"", &d)));
  assert_non_null(strstr(po_Diagnostics_At(d, 0)->hint, "in go-control-plane envoy v1.37.0 and v1.40.0 but not in"));
  assert_false(po_Override_Valid(compile_on(v32, "cluster", "/per_connection_buffer_high_watermark_timeout", "{}", &d)));
  assert_non_null(strstr(po_Diagnostics_At(d, 0)->hint, "in go-control-plane envoy v1.40.0 but not in"));
  for (size_t i = 0; i < po_Schema_SnapshotCount(); i++) {
    if (i == po_Schema_SnapshotDefault()) assert_true(po_Schema_SnapshotLoaded(i));
    else assert_false(po_Schema_SnapshotLoaded(i));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hint_loads_no_other_snapshot),
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_three),
      cmocka_unit_test(test_each_snapshot_keeps_itself),
      cmocka_unit_test(test_apply_other_snapshot_refused),
      cmocka_unit_test(test_fields_by_snapshot),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
