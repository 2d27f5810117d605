/* Backoff values and the token bucket, as client-go's DefaultControllerRateLimiter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "po/runtime/ratelimit.h"

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)

static void backoff_doubles_from_5ms_to_the_cap(void **state) {
  int64_t want = 5 * MS;
  for (int i = 0; i < 40; i++) {
    int64_t got = po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, i);
    int64_t expect = want > 1000 * S ? 1000 * S : want;
    assert_int_equal(got, expect);
    if (want < 1000 * S) want *= 2;
  }
  assert_int_equal(po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, 0), 5 * MS);
  assert_int_equal(po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, 1), 10 * MS);
  assert_int_equal(po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, 2), 20 * MS);
  assert_int_equal(po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, 17), 655360 * MS);
  /* 5 ms * 2^18 = 1310.72 s > 1000 s */
  assert_int_equal(po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, 18), 1000 * S);
  assert_int_equal(po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, 1000000), 1000 * S);
  assert_int_equal(po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, -3), 5 * MS);
}

static void bucket_bursts_100_then_10_per_second(void **state) {
  po_TokenBucket b;
  po_TokenBucket_Init(&b, PO_BUCKET_QPS, PO_BUCKET_BURST);
  int64_t now = 42 * S;
  for (int i = 0; i < 100; i++) assert_int_equal(po_TokenBucket_Reserve(&b, now), 0);
  /* Beyond the burst each reservation gets the next 100 ms slot. */
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 100 * MS);
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 200 * MS);
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 300 * MS);
  /* 1 s later 10 tokens were earned, but 3 were already promised: slot 4 is at +400 ms. */
  now += 1 * S;
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 0 * MS);
  for (int i = 0; i < 6; i++) assert_int_equal(po_TokenBucket_Reserve(&b, now), 0);
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 100 * MS);
  /* After a long idle period the bucket is full again, never fuller. */
  now += 3600 * S;
  for (int i = 0; i < 100; i++) assert_int_equal(po_TokenBucket_Reserve(&b, now), 0);
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 100 * MS);
}

static void bucket_refills_at_the_rate(void **state) {
  po_TokenBucket b;
  po_TokenBucket_Init(&b, 10.0, 1);
  int64_t now = 0;
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 0);
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 100 * MS);
  now += 150 * MS; /* the promised slot is at 100 ms; the next at 200 ms */
  assert_int_equal(po_TokenBucket_Reserve(&b, now), 50 * MS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(backoff_doubles_from_5ms_to_the_cap),
      cmocka_unit_test(bucket_bursts_100_then_10_per_second),
      cmocka_unit_test(bucket_refills_at_the_rate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
