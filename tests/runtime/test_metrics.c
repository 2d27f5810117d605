/* Metrics registry and the exact text exposition (golden strings). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/metrics.h"

__attribute__((noinline)) static char *expose(po_Metrics *m) {
  char *text;
  size_t len;
  assert_true(po_Metrics_Write(m, &text, &len));
  assert_int_equal(strlen(text), len);
  return text;
}

static void counters_and_gauges_sorted_and_escaped(void **state) {
  po_Metrics *m = po_Metrics_NewEmpty();
  const char *labels[] = {"controller", "result"};
  po_MetricFamily *c = po_Metrics_Register(m, kPo_Metric_Counter, "zz_total", "Z things\nsecond line \\ ok",
                                           2, labels, 0, NULL);
  po_MetricFamily *g = po_Metrics_Register(m, kPo_Metric_Gauge, "aa_gauge", "A gauge", 0, NULL, 0, NULL);
  assert_non_null(c);
  assert_non_null(g);
  po_MetricFamily *empty =
      po_Metrics_Register(m, kPo_Metric_Counter, "mm_unused_total", "never set", 0, NULL, 0, NULL);
  assert_non_null(empty);
  po_Series_Add(po_Family_WithLabels(c, "b", "success"), 3);
  po_Series_Inc(po_Family_WithLabels(c, "a\"q\\x\ny", "error"));
  po_Series_Inc(po_Family_WithLabels(c, "a", "success"));
  po_Series_Add(po_Family_WithLabels(c, "a", "success"), -5); /* counters never go down */
  po_Series_Set(po_Family_With(g, NULL), 1234567);
  char *text = expose(m);
  assert_string_equal(text,
                      "# HELP aa_gauge A gauge\n"
                      "# TYPE aa_gauge gauge\n"
                      "aa_gauge 1.234567e+06\n"
                      "# HELP zz_total Z things\\nsecond line \\\\ ok\n"
                      "# TYPE zz_total counter\n"
                      "zz_total{controller=\"a\",result=\"success\"} 1\n"
                      "zz_total{controller=\"a\\\"q\\\\x\\ny\",result=\"error\"} 1\n"
                      "zz_total{controller=\"b\",result=\"success\"} 3\n");
  free(text);
  /* Same shape: the existing family; another shape: refused. */
  assert_ptr_equal(po_Metrics_Register(m, kPo_Metric_Counter, "zz_total", "x", 2, labels, 0, NULL), c);
  assert_null(po_Metrics_Register(m, kPo_Metric_Gauge, "zz_total", "x", 2, labels, 0, NULL));
  assert_null(po_Metrics_Register(m, kPo_Metric_Counter, "zz_total", "x", 1, labels, 0, NULL));
  /* Invalid names. */
  const char *bad[] = {"__reserved"};
  assert_null(po_Metrics_Register(m, kPo_Metric_Counter, "9lives", "x", 0, NULL, 0, NULL));
  assert_null(po_Metrics_Register(m, kPo_Metric_Counter, "has-dash", "x", 0, NULL, 0, NULL));
  assert_null(po_Metrics_Register(m, kPo_Metric_Counter, "ok_name", "x", 1, bad, 0, NULL));
  po_Metrics_Free(m);
}

static void histogram_buckets_are_cumulative_with_inf_sum_count(void **state) {
  po_Metrics *m = po_Metrics_NewEmpty();
  const char *labels[] = {"name"};
  const double buckets[] = {0.005, 0.1, 1, 10};
  po_MetricFamily *h =
      po_Metrics_Register(m, kPo_Metric_Histogram, "x_seconds", "X", 1, labels, 4, buckets);
  assert_non_null(h);
  po_Series *s = po_Family_WithLabels(h, "q");
  po_Series_Observe(s, 0.005); /* on the bound: counted in that bucket (le) */
  po_Series_Observe(s, 0.05);
  po_Series_Observe(s, 0.5);
  po_Series_Observe(s, 100);
  char *text = expose(m);
  assert_string_equal(text,
                      "# HELP x_seconds X\n"
                      "# TYPE x_seconds histogram\n"
                      "x_seconds_bucket{name=\"q\",le=\"0.005\"} 1\n"
                      "x_seconds_bucket{name=\"q\",le=\"0.1\"} 2\n"
                      "x_seconds_bucket{name=\"q\",le=\"1\"} 3\n"
                      "x_seconds_bucket{name=\"q\",le=\"10\"} 3\n"
                      "x_seconds_bucket{name=\"q\",le=\"+Inf\"} 4\n"
                      "x_seconds_sum{name=\"q\"} 100.555\n"
                      "x_seconds_count{name=\"q\"} 4\n");
  free(text);
  const char *le[] = {"le"};
  assert_null(po_Metrics_Register(m, kPo_Metric_Histogram, "y_seconds", "Y", 1, le, 4, buckets));
  const double unsorted[] = {1, 0.5};
  assert_null(po_Metrics_Register(m, kPo_Metric_Histogram, "z_seconds", "Z", 0, NULL, 2, unsorted));
  po_Metrics_Free(m);
}

static void standard_families_and_buckets(void **state) {
  po_Metrics *m = po_Metrics_New();
  /* Nothing observed yet: client_golang prints nothing for empty vectors. */
  char *text = expose(m);
  assert_string_equal(text, "");
  free(text);
  po_Series_Observe(po_Family_WithLabels(po_Metrics_Find(m, PO_M_WQ_QUEUE_DURATION), "c"), 2e-8);
  po_Series_Observe(po_Family_WithLabels(po_Metrics_Find(m, PO_M_RECONCILE_TIME), "c"), 0.2);
  po_Metrics_ObserveRequestIn(m, 200, "GET", "127.0.0.1:6443");
  po_Metrics_ObserveRequestIn(m, 200, "GET", "127.0.0.1:6443");
  po_Metrics_ObserveRequestIn(m, 0, "PUT", "127.0.0.1:6443");
  char *full = expose(m);
  const char *wq =
      "# HELP workqueue_queue_duration_seconds How long in seconds an item stays in workqueue "
      "before being requested\n"
      "# TYPE workqueue_queue_duration_seconds histogram\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"1e-08\"} 0\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"1e-07\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"1e-06\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"1e-05\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"0.0001\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"0.001\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"0.01\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"0.1\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"1\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"10\"} 1\n"
      "workqueue_queue_duration_seconds_bucket{name=\"c\",le=\"+Inf\"} 1\n"
      "workqueue_queue_duration_seconds_sum{name=\"c\"} 2e-08\n"
      "workqueue_queue_duration_seconds_count{name=\"c\"} 1\n";
  assert_non_null(strstr(full, wq));
  assert_non_null(strstr(full,
                         "# TYPE rest_client_requests_total counter\n"
                         "rest_client_requests_total{code=\"200\",method=\"GET\",host=\"127.0.0.1:6443\"} 2\n"
                         "rest_client_requests_total{code=\"<error>\",method=\"PUT\",host=\"127.0.0.1:6443\"} 1\n"));
  /* controller-runtime's 40 bounds, from 0.005 to 60. */
  assert_int_equal(po_kReconcileTimeBucketsLen, 40);
  assert_non_null(strstr(full, "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"0.15\"} 0\n"
                               "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"0.2\"} 1\n"));
  assert_non_null(strstr(full, "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"60\"} 1\n"
                               "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"+Inf\"} 1\n"));
  /* Families appear in name order. */
  const char *a = strstr(full, "controller_runtime_reconcile_time_seconds");
  const char *b = strstr(full, "rest_client");
  const char *c = strstr(full, "workqueue_queue");
  assert_true(a && b && c && a < b && b < c);
  free(full);
  po_Metrics_Free(m);
}

static void values_format_like_go(void **state) {
  char buf[32];
  assert_string_equal(po_Metrics_FormatValue(0, buf), "0");
  assert_string_equal(po_Metrics_FormatValue(1, buf), "1");
  assert_string_equal(po_Metrics_FormatValue(-2.5, buf), "-2.5");
  assert_string_equal(po_Metrics_FormatValue(0.1, buf), "0.1");
  assert_string_equal(po_Metrics_FormatValue(0.0001, buf), "0.0001");
  assert_string_equal(po_Metrics_FormatValue(0.00001, buf), "1e-05");
  assert_string_equal(po_Metrics_FormatValue(123456, buf), "123456");
  assert_string_equal(po_Metrics_FormatValue(1e6, buf), "1e+06");
  assert_string_equal(po_Metrics_FormatValue(1.6170302e9, buf), "1.6170302e+09");
  assert_string_equal(po_Metrics_FormatValue(1.0 / 3, buf), "0.3333333333333333");
  assert_string_equal(po_Metrics_FormatValue(INFINITY, buf), "+Inf");
  assert_string_equal(po_Metrics_FormatValue(-INFINITY, buf), "-Inf");
  assert_string_equal(po_Metrics_FormatValue(NAN, buf), "NaN");
  assert_string_equal(po_Metrics_FormatValue(999999, buf), "999999");
  assert_string_equal(po_Metrics_FormatValue(-999999, buf), "-999999");
  assert_string_equal(po_Metrics_FormatValue(1234567, buf), "1.234567e+06");
  assert_string_equal(po_Metrics_FormatValue(-2e6, buf), "-2e+06");
  assert_string_equal(po_Metrics_FormatValue(9007199254740991.0, buf), "9.007199254740991e+15");
  assert_string_equal(po_Metrics_FormatValue(9007199254740992.0, buf), "9.007199254740992e+15");
  assert_string_equal(po_Metrics_FormatValue(1e20, buf), "1e+20");
}

/* The search for the shortest digits that read back, as Go's 'g' -1 (the general path, before
 * integers had their own): the oracle the integers' path is checked against. */
static void shortest_g(double v, char buf[40]) {
  int digits = 1;
  char tmp[40];
  for (; digits <= 17; digits++) {
    snprintf(tmp, sizeof tmp, "%.*e", digits - 1, v);
    if (strtod(tmp, NULL) == v) break;
  }
  int exp10 = atoi(strchr(tmp, 'e') + 1);
  if (exp10 < -4 || exp10 >= 6) snprintf(buf, 40, "%s", tmp);
  else snprintf(buf, 40, "%.*f", digits - 1 - exp10 > 0 ? digits - 1 - exp10 : 0, v);
}

/* Integers of every magnitude to 2^53, either sign, trailing zeros or not (seeded): the same
 * text as the general search gives. */
static void integers_format_as_the_search(void **state) {
  (void)state;
  char buf[32], want[40];
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (int k = 0; k < 20000; k++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int mag = (int)(x % 54);
    long long i = mag ? (long long)(x >> 11) % (1LL << mag) : 0;
    if (x & 1) i = -i;
    if ((x >> 1) % 3 == 0) i -= i % 1000; /* trailing zeros */
    double v = (double)i;
    if (v == 0) continue;
    shortest_g(v, want);
    po_Metrics_FormatValue(v, buf);
    if (strcmp(buf, want) != 0) fail_msg("%lld: %s, the search says %s", i, buf, want);
  }
}

static int calls;
static void collector(void *ctx) {
  calls++;
  po_Series_Set(ctx, calls);
}

static void collectors_run_before_each_exposition(void **state) {
  po_Metrics *m = po_Metrics_NewEmpty();
  po_Series *s = po_Family_With(
      po_Metrics_Register(m, kPo_Metric_Gauge, "g", "G", 0, NULL, 0, NULL), NULL);
  assert_true(po_Metrics_AddCollector(m, collector, s));
  char *text = expose(m);
  assert_string_equal(text, "# HELP g G\n# TYPE g gauge\ng 1\n");
  free(text);
  po_Metrics_RemoveCollector(m, collector, s);
  text = expose(m);
  assert_string_equal(text, "# HELP g G\n# TYPE g gauge\ng 1\n");
  free(text);
  po_Metrics_Free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(counters_and_gauges_sorted_and_escaped),
      cmocka_unit_test(histogram_buckets_are_cumulative_with_inf_sum_count),
      cmocka_unit_test(standard_families_and_buckets),
      cmocka_unit_test(values_format_like_go), cmocka_unit_test(integers_format_as_the_search),
      cmocka_unit_test(collectors_run_before_each_exposition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
