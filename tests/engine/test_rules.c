/* What Envoy would refuse, and messages a user can act on (issue 9, items 6 and 7): Duration
 * validity on every Duration a patch sets (Envoy's validateDurationFields), did-you-mean and the
 * valid names for enums, the accepted forms of a Duration, the warning for a fraction Consul
 * truncates. Rows: a Cluster patch (path and value as JSON), then what the diagnostics must say. */
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

typedef struct {
  const char *path, *value; /* value: JSON text */
  bool spec;                /* through the PropertyOverride spec (friendly values) */
  po_Severity severity;
  po_DiagKind kind;
  const char *message;      /* the one diagnostic's exact message; NULL: none at all */
  const char *hint;         /* its exact hint, or NULL */
} Row;

#define OUT "Duration out of range (seconds %s, nanos %s): Envoy refuses it (\"Duration out-of-range\"); seconds must be at most 315576000000 and nanos at most 999999999"
#define NEG "Envoy refuses a negative Duration (seconds %s, nanos %s): \"Expected positive duration\"; seconds and nanos must both be >= 0"
#define FORMS "a Duration is written {\"seconds\": 5, \"nanos\": 0} (a PropertyOverride also takes \"5s\", \"1.5s\", \"250ms\", \"1h30m\")"
#define LB "ROUND_ROBIN, LEAST_REQUEST, RING_HASH, RANDOM, MAGLEV, CLUSTER_PROVIDED, LOAD_BALANCING_POLICY_CONFIG"

static const Row kRows[] = {
    /* item 6: Envoy's Duration checks */
    {"/connect_timeout", "{\"seconds\": 315576000001}", false, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/connect_timeout: Duration out of range (seconds 315576000001, nanos 0): Envoy refuses it (\"Duration out-of-range\"); seconds must be at most 315576000000 and nanos at most 999999999", NULL},
    {"/connect_timeout", "{\"seconds\": 1, \"nanos\": 1000000000}", false, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/connect_timeout: Duration out of range (seconds 1, nanos 1000000000): Envoy refuses it (\"Duration out-of-range\"); seconds must be at most 315576000000 and nanos at most 999999999", NULL},
    {"/connect_timeout", "{\"seconds\": 1, \"nanos\": -1}", false, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/connect_timeout: Envoy refuses a negative Duration (seconds 1, nanos -1): \"Expected positive duration\"; seconds and nanos must both be >= 0", NULL},
    {"/outlier_detection/interval", "{\"seconds\": -5}", false, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/outlier_detection/interval: Envoy refuses a negative Duration (seconds -5, nanos 0): \"Expected positive duration\"; seconds and nanos must both be >= 0", NULL},
    {"/connect_timeout/seconds", "-1", false, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/connect_timeout/seconds: Envoy refuses a negative Duration (seconds -1, nanos (as set)): \"Expected positive duration\"; seconds and nanos must both be >= 0", NULL},
    {"/connect_timeout/nanos", "1000000000", false, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/connect_timeout/nanos: Duration out of range (seconds (as set), nanos 1000000000): Envoy refuses it (\"Duration out-of-range\"); seconds must be at most 315576000000 and nanos at most 999999999", NULL},
    {"/connect_timeout", "{\"seconds\": 315576000000, \"nanos\": 999999999}", false, 0, 0, NULL, NULL},
    {"/outlier_detection/interval", "\"315576000001s\"", true, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/outlier_detection/interval: Duration out of range (seconds 315576000001, nanos 0): Envoy refuses it (\"Duration out-of-range\"); seconds must be at most 315576000000 and nanos at most 999999999", NULL},
    {"/outlier_detection/interval", "\"-2s\"", true, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
     "/outlier_detection/interval: Envoy refuses a negative Duration (seconds -2, nanos 0): \"Expected positive duration\"; seconds and nanos must both be >= 0", NULL},
    {"/outlier_detection/interval", "\"1.5s\"", true, 0, 0, NULL, NULL},
    /* item 7: enums */
    {"/lb_policy", "\"LEAST_REQUESTS\"", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "patch value type string could not be applied to target field type 'enum'",
     "did you mean 'LEAST_REQUEST'? envoy.config.cluster.v3.Cluster.LbPolicy values: " LB},
    {"/lb_policy", "\"round_robin\"", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "patch value type string could not be applied to target field type 'enum'",
     "did you mean 'ROUND_ROBIN'? envoy.config.cluster.v3.Cluster.LbPolicy values: " LB},
    {"/lb_policy", "\"FASTEST\"", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "patch value type string could not be applied to target field type 'enum'",
     "'FASTEST' is no value of envoy.config.cluster.v3.Cluster.LbPolicy; valid: " LB},
    {"/lb_policy", "1.5", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "patch value type float64 could not be applied to target field type 'enum'",
     "envoy.config.cluster.v3.Cluster.LbPolicy takes one of its names: " LB},
    /* item 7: Durations in a form that does not work */
    {"/connect_timeout", "5", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "unsupported target field type 'google.protobuf.Duration'", "a number is not a Duration (which unit?): " FORMS},
    {"/connect_timeout", "\"5 seconds\"", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "unsupported target field type 'google.protobuf.Duration'", "\"5 seconds\" is not a duration: " FORMS},
    {"/connect_timeout", "\"5x\"", true, kPo_Severity_Error, kPo_DiagKind_Consul,
     "unsupported target field type 'google.protobuf.Duration'", "\"5x\" is not a duration: " FORMS},
    {"/connect_timeout", "\"5s\"", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "unsupported target field type 'google.protobuf.Duration'", FORMS},
    {"/connect_timeout", "\"400000000000s\"", false, kPo_Severity_Error, kPo_DiagKind_Consul,
     "unsupported target field type 'google.protobuf.Duration'",
     "\"400000000000s\" is out of range: a Duration is at most 315576000000s (10000 years); " FORMS},
    /* item 7: a fraction Consul truncates */
    {"/outlier_detection/max_ejection_percent", "50.5", false, kPo_Severity_Warning, kPo_DiagKind_Consul,
     "/outlier_detection/max_ejection_percent: 50.5 is not a whole number; Consul truncates it to 50 for this uint32 field", NULL},
    {"/outlier_detection", "{\"consecutive_5xx\": 3.25}", false, kPo_Severity_Warning, kPo_DiagKind_Consul,
     "/outlier_detection/consecutive_5xx: 3.25 is not a whole number; Consul truncates it to 3 for this uint32 field", NULL},
    {"/outlier_detection/max_ejection_percent", "50.0", false, 0, 0, NULL, NULL},
    {"/outlier_detection/max_ejection_percent", "-0.5", false, kPo_Severity_Warning, kPo_DiagKind_Consul,
     "/outlier_detection/max_ejection_percent: -0.5 is not a whole number; Consul truncates it to 0 for this uint32 field", NULL},
};

static po_Diagnostics *run(const Row *r, po_Override **out) {
  char text[1024];
  po_Status st;
  po_Status_Clear(&st);
  po_Diagnostics *d = po_Diagnostics_New(A);
  po_Arguments args;
  if (r->spec) {
    snprintf(text, sizeof text,
             "{\"patches\": [{\"resourceFilter\": {\"resourceType\": \"cluster\", \"trafficDirection\": \"outbound\"},"
             " \"op\": \"add\", \"path\": \"%s\", \"value\": %s}]}", r->path, r->value);
    po_Value *spec = po_Value_ParseJson(text, strlen(text), A, &st);
    assert_non_null(spec);
    assert_true(po_Arguments_DecodeSpec(spec, A, &args, d));
    assert_true(po_Arguments_Friendly(NULL, &args, A));
    *out = po_Override_Compile(&args, NULL, A, d);
  } else {
    snprintf(text, sizeof text,
             "{\"Patches\": [{\"ResourceFilter\": {\"ResourceType\": \"cluster\", \"TrafficDirection\": \"outbound\"},"
             " \"Op\": \"add\", \"Path\": \"%s\", \"Value\": %s}]}", r->path, r->value);
    po_Value *v = po_Value_ParseJson(text, strlen(text), A, &st);
    assert_non_null(v);
    *out = po_Constructor(NULL, v, NULL, A, d);
  }
  return d;
}

static void test_rows(void **state) {
  (void)state;
  int failed = 0;
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; i++) {
    const Row *r = &kRows[i];
    po_Override *o;
    po_Diagnostics *d = run(r, &o);
    size_t n = po_Diagnostics_Count(d);
    const po_Diagnostic *x = po_Diagnostics_At(d, 0);
    bool ok;
    if (!r->message) {
      ok = n == 0 && o;
    } else {
      ok = n == 1 && x->severity == r->severity && x->kind == r->kind && !strcmp(x->message, r->message) &&
           ((!r->hint && !x->hint) || (r->hint && x->hint && !strcmp(r->hint, x->hint))) &&
           (o != NULL) == (r->severity == kPo_Severity_Warning);
    }
    if (!ok) {
      failed++;
      fprintf(stderr, "row %zu (%s %s): %zu diagnostics; first: %s\n  hint: %s\n  want: %s\n  hint: %s\n", i, r->path,
              r->value, n, x ? x->message : "(none)", x && x->hint ? x->hint : "(none)",
              r->message ? r->message : "(none)", r->hint ? r->hint : "(none)");
    }
  }
  assert_int_equal(failed, 0);
}

/* The same Duration checks apply where Consul's own checks pass: Consul's text is then empty and
 * ours stands alone in its block. */
static void test_duration_block_text(void **state) {
  (void)state;
  po_Override *o;
  po_Diagnostics *d = run(&kRows[0], &o);
  assert_null(po_Diagnostics_ConsulText(d, false, A));
  const char *t = po_Diagnostics_ConsulText(d, true, A);
  assert_non_null(t);
  assert_true(strncmp(t, "1 more error, beyond Consul's checks:\n\t* invalid Patches[0]: /connect_timeout: Duration out of range", 100) == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows),
      cmocka_unit_test(test_duration_block_text),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
