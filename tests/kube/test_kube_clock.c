/* Token bucket and backoff with a fake clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "po/base/rate.h"

#define MS 1000000LL
#define S 1000000000LL

static void test_bucket_burst_then_rate(void **state) {
  po_TokenBucket b;
  po_TokenBucket_Init(&b, 10, 3); /* 10 qps, burst 3 */
  int64_t t = 1000 * S;
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 0);
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 0);
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 0);
  /* Fourth in the same instant waits one token's time, the fifth two. */
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 100 * MS);
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 200 * MS);
  /* After the debt is paid and 100 ms more, exactly one token is there. */
  t += 300 * MS;
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 0);
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 100 * MS);
  /* A long idle period refills to burst, never beyond. */
  t += 3600 * S;
  for (int i = 0; i < 3; i++) assert_int_equal(po_TokenBucket_Reserve(&b, t), 0);
  assert_int_equal(po_TokenBucket_Reserve(&b, t), 100 * MS);
}

static void test_bucket_sustained_rate(void **state) {
  po_TokenBucket b;
  po_TokenBucket_Init(&b, 20, 30);
  int64_t t = 0, waited = 0;
  /* 1030 requests, each acting when told: the last acts at (1030 - 30) / 20 = 50 s. */
  for (int i = 0; i < 1030; i++) {
    int64_t w = po_TokenBucket_Reserve(&b, t);
    waited = t + w;
    t += w;
  }
  assert_true(waited >= 50 * S - MS && waited <= 50 * S + MS);
  po_TokenBucket off;
  po_TokenBucket_Init(&off, -1, 0);
  for (int i = 0; i < 1000; i++) assert_int_equal(po_TokenBucket_Reserve(&off, 0), 0);
}

static void test_backoff_sequence_and_reset(void **state) {
  po_Backoff b;
  po_Backoff_Init(&b, 800 * MS, 30 * S, 2.0, 0.0, 120 * S);
  int64_t t = 0;
  int64_t want[] = {800 * MS, 1600 * MS, 3200 * MS, 6400 * MS, 12800 * MS, 25600 * MS, 30 * S, 30 * S};
  for (int i = 0; i < 8; i++) {
    assert_int_equal(po_Backoff_Next(&b, t, NULL), want[i]);
    t += S;
  }
  /* Healthy for longer than reset_after: back to the start. */
  t += 121 * S;
  assert_int_equal(po_Backoff_Next(&b, t, NULL), 800 * MS);
  assert_int_equal(po_Backoff_Next(&b, t, NULL), 1600 * MS);
  po_Backoff_Reset(&b);
  assert_int_equal(po_Backoff_Next(&b, t, NULL), 800 * MS);
}

static void test_backoff_jitter_bounds(void **state) {
  po_Backoff b;
  po_Rand r;
  po_Rand_Seed(&r, 42);
  po_Backoff_Init(&b, 800 * MS, 30 * S, 2.0, 1.0, 0);
  int64_t base = 800 * MS;
  bool differs = false;
  int64_t prev = -1;
  for (int i = 0; i < 12; i++) {
    int64_t d = po_Backoff_Next(&b, 0, &r);
    int64_t hi = 2 * base > 30 * S ? 30 * S : 2 * base;
    assert_true(d >= (base < 30 * S ? base : 30 * S) && d <= hi);
    if (prev >= 0 && d != 2 * prev) differs = true;
    prev = d;
    base = base * 2 > 30 * S ? 30 * S : base * 2;
  }
  assert_true(differs);
  for (int i = 0; i < 10000; i++) {
    double u = po_Rand_Unit(&r);
    assert_true(u >= 0.0 && u < 1.0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bucket_burst_then_rate), cmocka_unit_test(test_bucket_sustained_rate),
      cmocka_unit_test(test_backoff_sequence_and_reset), cmocka_unit_test(test_backoff_jitter_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
