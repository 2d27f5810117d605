/* po_Message_CheckRules (issue 12, "Validate native objects too"): Envoy's protoc-gen-validate
 * rules on a native patch value, decoded. Rows: the message, the value as JSON, its depth below
 * the root (an EnvoyPatchPolicy path's steps), its scope, and every finding the walk must give,
 * one a line: "E|W <pointer from the value>: <violation>". What each scope judges is the point:
 * the same value is clean merged and invalid whole (a required field, an empty name), a list's
 * min_items is judged only when the value replaces the list, the scaffold a path nests the value
 * in is never judged, an Any is unpacked and its message judged in its place. */
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

#define CLUSTER "envoy.config.cluster.v3.Cluster"
#define ROUTE "envoy.config.route.v3.Route"
#define LFILTER "envoy.config.listener.v3.ListenerFilter"
#define FILTER "envoy.config.listener.v3.Filter"
#define CLA "envoy.config.endpoint.v3.ClusterLoadAssignment"
#define W kPo_ValueScope_Whole
#define M kPo_ValueScope_Merge
#define R kPo_ValueScope_MergeReplaceLists
/* a ListenerFilter disabled by an or_match of one rule: Envoy's min_items is 2 */
#define OR1 "{\"filter_disabled\": {\"or_match\": {\"rules\": [{\"any_match\": true}]}}}"
#define HCM "\"@type\": \"type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\""

typedef struct {
  const char *type, *json;
  size_t depth;
  const char *field; /* the field at `depth` (an EnvoyPatchPolicy path's last step), or NULL */
  po_ValueScope scope;
  const char *want; /* every finding, in order */
} Row;

static const Row kRows[] = {
    /* numeric bounds: a Duration, a wrapper, in merged sub-messages and list items */
    {CLUSTER, "{\"connect_timeout\": \"0s\"}", 0, NULL, M, "E /connect_timeout: 0s violates duration gt 0s\n"},
    {CLUSTER, "{\"connect_timeout\": \"0.25s\"}", 0, NULL, M, ""},
    {CLUSTER, "{\"connect_timeout\": \"-1s\"}", 0, NULL, M,
     "E /connect_timeout: Envoy refuses a negative Duration (seconds -1, nanos 0): \"Expected positive duration\"; "
     "seconds and nanos must both be >= 0\n"},
    {CLUSTER, "{\"outlier_detection\": {\"max_ejection_percent\": 150}}", 0, NULL, M,
     "E /outlier_detection/max_ejection_percent: 150 violates uint32 lte 100\n"},
    {CLUSTER, "{\"outlier_detection\": {\"max_ejection_percent\": 100}}", 0, NULL, M, ""},
    /* enums: a number no value has (defined_only), a value not_in allows */
    {CLUSTER, "{\"lb_policy\": 42}", 0, NULL, M,
     "E /lb_policy: 42 violates enum defined_only (no value of envoy.config.cluster.v3.Cluster.LbPolicy has that "
     "number)\n"},
    {CLUSTER, "{\"lb_policy\": \"MAGLEV\"}", 0, NULL, M, ""},
    {CLUSTER,
     "{\"health_checks\": [{\"timeout\": \"1s\", \"interval\": \"1s\", \"unhealthy_threshold\": 1, \"healthy_threshold\": "
     "1, \"http_health_check\": {\"path\": \"/h\", \"method\": \"CONNECT\"}}]}",
     0, NULL, M, "E /health_checks/0/http_health_check/method: 6 violates enum not_in (CONNECT)\n"},
    /* a list's message item is put in whole even by MERGE: its required fields apply */
    {CLUSTER, "{\"health_checks\": [{\"timeout\": \"1s\", \"interval\": \"1s\", \"healthy_threshold\": 1}]}", 0, NULL, M,
     "E /health_checks/0: the new envoy.config.core.v3.HealthCheck lacks 'unhealthy_threshold', which Envoy "
     "requires\n"},
    /* string min_len: an absent proto3 string is "" in a whole value, unset in a merged one */
    {CLUSTER, "{\"type\": \"STATIC\"}", 0, NULL, W, "E /name: \"\" violates string min_len 1 (it has 0)\n"},
    {CLUSTER, "{\"type\": \"STATIC\"}", 0, NULL, M, ""},
    {CLUSTER, "{\"name\": \"c\", \"type\": \"STATIC\"}", 0, NULL, W, ""},
    /* ignore_empty: an empty header name in a whole value is not judged, a bad one is */
    {CLUSTER, "{\"name\": \"c\", \"upstream_http_protocol_options\": {\"auto_sni\": true}}", 0, NULL, W, ""},
    {CLUSTER, "{\"name\": \"c\", \"upstream_http_protocol_options\": {\"override_auto_sni_header\": \"a b\"}}", 0, NULL, W,
     "E /upstream_http_protocol_options/override_auto_sni_header: \"a b\" violates string well_known_regex "
     "HTTP_HEADER_NAME\n"},
    /* message.required: whole (ADD, INSERT_*, REPLACE) yes, merged no */
    {ROUTE, "{\"name\": \"r\", \"route\": {\"cluster\": \"x\"}}", 0, NULL, W,
     "E : the new envoy.config.route.v3.Route lacks 'match', which Envoy requires\n"},
    {ROUTE, "{\"name\": \"r\", \"route\": {\"cluster\": \"x\"}}", 0, NULL, M, ""},
    {ROUTE, "{\"match\": {\"prefix\": \"/\"}, \"route\": {\"cluster\": \"x\"}}", 0, NULL, W, ""},
    /* repeated min_items on a list the value holds: judged when the list is replaced */
    {LFILTER, OR1, 0, NULL, M, ""},
    {LFILTER, OR1, 0, NULL, R, "E /filter_disabled/or_match/rules: 1 items violate repeated min_items 2\n"},
    {LFILTER, "{\"name\": \"f\", \"filter_disabled\": {\"or_match\": {\"rules\": [{\"any_match\": true}]}}}", 0, NULL, W,
     "E /filter_disabled/or_match/rules: 1 items violate repeated min_items 2\n"},
    /* a map's message value, its key escaped in the pointer (RFC 6901) */
    {CLUSTER,
     "{\"load_assignment\": {\"cluster_name\": \"c\", \"named_endpoints\": {\"a/b~c\": {\"health_check_config\": "
     "{\"port_value\": 70000}}}}}",
     0, NULL, M, "E /load_assignment/named_endpoints/a~1b~0c/health_check_config/port_value: 70000 violates uint32 lte 65535\n"},
    /* an Any is entered: its message judged in its place (HttpConnectionManager's stat_prefix
     * has min_len 1), under the Any's field in the pointer */
    {FILTER, "{\"name\": \"\", \"typed_config\": {" HCM ", \"stat_prefix\": \"\"}}", 0, NULL, W,
     "E /name: \"\" violates string min_len 1 (it has 0)\nE /typed_config: the new "
     "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager sets none of its oneof "
     "'route_specifier', which Envoy requires: set one of rds, route_config, scoped_routes\nE /typed_config/stat_prefix: "
     "\"\" violates string min_len 1 (it has 0)\n"},
    /* under MERGE only what the Any's message sets */
    {FILTER, "{\"typed_config\": {" HCM ", \"max_request_headers_kb\": 9000}}", 0, NULL, M,
     "E /typed_config/max_request_headers_kb: 9000 violates uint32 lte 8192\n"},
    /* a value nested along a path (EnvoyPatchPolicy): only the value is judged, from itself */
    {CLUSTER, "{\"outlier_detection\": {\"max_ejection_percent\": 101}}", 2, "max_ejection_percent", W,
     "E : 101 violates uint32 lte 100\n"},
    /* the field a path names is judged at its default too, by its proto or JSON name; a
     * sibling the scaffold leaves absent is not */
    {CLUSTER, "{\"name\": \"\"}", 1, "name", W, "E : \"\" violates string min_len 1 (it has 0)\n"},
    {CLUSTER, "{\"outlier_detection\": {}}", 2, "interval", W, ""},
    {CLUSTER, "{\"connect_timeout\": \"0s\"}", 1, "connectTimeout", W, "E : 0s violates duration gt 0s\n"},
    {CLUSTER, "{\"name\": \"\"}", 1, NULL, W, ""},
    {CLUSTER, "{\"circuit_breakers\": {\"thresholds\": [{\"priority\": 9}]}}", 3, NULL, W,
     "E /priority: 9 violates enum defined_only (no value of envoy.config.core.v3.RoutingPriority has that number)\n"},
    /* the scaffold's list keeps its other items: its min_items is not judged, nor the item's
     * siblings in the scaffold (ListenerFilter's empty name) */
    {LFILTER, OR1, 4, NULL, W, ""},
    {LFILTER, "{\"filter_disabled\": {\"or_match\": {\"rules\": [{\"not_match\": {\"or_match\": {\"rules\": []}}}]}}}",
     4, NULL, W, "E /not_match/or_match/rules: 0 items violate repeated min_items 2\n"},
    /* the value at a path is whole: a list it sets, its count included */
    {CLA, "{\"named_endpoints\": {\"ep\": {\"health_check_config\": {\"port_value\": 65536}}}}", 2, NULL, W,
     "E /health_check_config/port_value: 65536 violates uint32 lte 65535\n"},
};

static const char *run(const Row *r) {
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_ParseJson(NULL, r->type, r->json, strlen(r->json), A, &st);
  if (!m) return po_Arena_Printf(A, "decode: %s", st.message);
  po_Diagnostics *d = po_Diagnostics_New(A);
  if (!po_Message_CheckRules(m, r->depth, r->field, r->scope, 7, d, &st)) return po_Arena_Printf(A, "failed: %s", st.message);
  po_TextBuf t = {.a = A};
  po_TextBuf_Puts(&t, "");
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, i);
    if (x->kind != kPo_DiagKind_EnvoyRule || x->patch_index != 7) return "wrong kind or patch index";
    po_TextBuf_Puts(&t, po_Arena_Printf(A, "%s %s: %s\n", x->severity == kPo_Severity_Error ? "E" : "W", x->path,
                                        x->message));
  }
  return t.buf;
}

static void test_rows(void **state) {
  (void)state;
  int failed = 0;
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; i++) {
    const char *got = run(&kRows[i]);
    if (strcmp(got, kRows[i].want) != 0) {
      failed++;
      fprintf(stderr, "row %zu (%s %s, depth %zu, scope %d):\n  got:  %s\n  want: %s\n", i, kRows[i].type,
              kRows[i].json, kRows[i].depth, (int)kRows[i].scope, got, kRows[i].want);
    }
  }
  assert_int_equal(failed, 0);
}

/* Depth: upb's JSON decoder refuses a value nested deeper than 64 objects and arrays, and a
 * walk step is at least one of those, so the walk's own bound (64 levels below the value, a
 * warning) is a backstop; just under the decoder's bound the walk reaches the innermost field.
 * ListenerFilterChainMatchPredicate nests itself through not_match. */
static const char *nested(int levels) {
  po_TextBuf t = {.a = A};
  po_TextBuf_Puts(&t, "{\"name\": \"f\", \"filter_disabled\": ");
  for (int i = 0; i < levels; i++) po_TextBuf_Puts(&t, "{\"not_match\": ");
  po_TextBuf_Puts(&t, "{\"or_match\": {\"rules\": []}}");
  for (int i = 0; i <= levels; i++) po_TextBuf_Puts(&t, "}");
  return t.buf;
}

static void test_depth(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const char *deep = nested(61);
  assert_null(po_Message_ParseJson(NULL, LFILTER, deep, strlen(deep), A, &st));
  assert_int_not_equal(st.code, kPo_Status_NoMemory);
  po_Status_Clear(&st);
  const char *ok = nested(60);
  po_Message *m = po_Message_ParseJson(NULL, LFILTER, ok, strlen(ok), A, &st);
  assert_non_null(m);
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_true(po_Message_CheckRules(m, 0, NULL, M, 0, d, &st));
  assert_int_equal(po_Diagnostics_Count(d), 0); /* merged: the empty list is not judged */
  assert_true(po_Message_CheckRules(m, 0, NULL, W, 0, d, &st));
  assert_int_equal(po_Diagnostics_Count(d), 1);
  const po_Diagnostic *x = po_Diagnostics_At(d, 0);
  assert_int_equal(x->severity, kPo_Severity_Error);
  assert_string_equal(x->message, "0 items violate repeated min_items 2");
  size_t n = 0;
  for (const char *p = strstr(x->path, "/not_match"); p; p = strstr(p + 1, "/not_match")) n++;
  assert_int_equal(n, 60);
}

/* A path deeper than the scaffold bound is refused, not walked. */
static void test_value_depth_limit(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_ParseJson(NULL, CLUSTER, "{}", 2, A, &st);
  assert_non_null(m);
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_false(po_Message_CheckRules(m, 65, NULL, W, 0, d, &st));
  assert_int_equal(st.code, kPo_Status_Limit);
  assert_int_equal(po_Diagnostics_Count(d), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows),
      cmocka_unit_test(test_depth),
      cmocka_unit_test(test_value_depth_limit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
