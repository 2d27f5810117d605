/* The texts a cache keeps unpacked for a while (white-box: src/pack_later.h): due in the order
 * they were noted, by age or while their sizes together are over the bound, each once; a text
 * over the bound by itself never waits; the ring grows past its first room in order; freeing
 * with items pending frees their keys. Against a model over seeded sequences
 * (PO_PACK_LATER_SEED=N replays one). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../seeded.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pack_later.h"

static void test_due_by_age_and_by_bound(void **state) {
  (void)state;
  po_PackLater_ p;
  po_PackLater_Init_(&p, 1000, 100);
  assert_true(po_PackLater_Fits_(&p, 100));
  assert_false(po_PackLater_Fits_(&p, 101)); /* over the bound by itself: packed at once */
  int a, b, c;
  assert_true(po_PackLater_Note_(&p, "ns/a", &a, 60, 0));
  assert_true(po_PackLater_Note_(&p, "ns/b", &b, 30, 10));
  po_PackLaterItem_ it;
  assert_false(po_PackLater_Next_(&p, 999, &it)); /* 90 bytes, a is 999 old */
  assert_true(po_PackLater_Next_(&p, 1000, &it)); /* a's delay has passed */
  assert_string_equal(it.key, "ns/a");
  assert_ptr_equal(it.entry, &a);
  free(it.key);
  assert_false(po_PackLater_Next_(&p, 1009, &it));
  assert_true(po_PackLater_Note_(&p, "ns/c", &c, 80, 1009)); /* 110 bytes: over */
  assert_true(po_PackLater_Next_(&p, 1009, &it)); /* b, the oldest, by the bound */
  assert_string_equal(it.key, "ns/b");
  free(it.key);
  assert_false(po_PackLater_Next_(&p, 1009, &it)); /* 80 bytes, c is new */
  po_PackLater_Free_(&p); /* c's key freed (valgrind, the sanitizers) */
  po_PackLater_Init_(&p, 0, 100);
  assert_false(po_PackLater_Fits_(&p, 1)); /* no delay: nothing waits */
  po_PackLater_Free_(&p);
}

/* Seeded notes and takes against a queue kept here: the same items, in the same order, due
 * exactly when the model says, through many growths and wraps of the ring. */
static void test_matches_the_model(void **state) {
  (void)state;
  uint64_t seed = po_Seeded_Env("PO_PACK_LATER_SEED", (uint64_t)time(NULL)), rng = seed;
  print_message("test_kube_pack_later: PO_PACK_LATER_SEED=%" PRIu64 "\n", seed);
  enum { kSteps = 20000, kMax = 4096 };
  static struct {
    int id;
    size_t bytes;
    int64_t at;
  } model[kSteps];
  size_t head = 0, tail = 0, bytes = 0;
  const int64_t delay = 50;
  const size_t bound = 2000;
  po_PackLater_ p;
  po_PackLater_Init_(&p, delay, bound);
  int64_t now = 0;
  for (int step = 0; step < kSteps; step++) {
    now += po_Seeded_Pick(&rng, 8);
    if (po_Seeded_Pick(&rng, 3)) {
      size_t n = 1 + po_Seeded_Pick(&rng, 300);
      char key[32];
      snprintf(key, sizeof key, "ns/o-%d", step);
      assert_true(po_PackLater_Note_(&p, key, (void *)(intptr_t)(step + 1), n, now));
      model[tail].id = step, model[tail].bytes = n, model[tail].at = now;
      tail++, bytes += n;
    }
    /* take what is due, as the informer does before each event */
    for (;;) {
      bool due = head < tail && (now - model[head].at >= delay || bytes > bound);
      po_PackLaterItem_ it;
      bool got = po_PackLater_Next_(&p, now, &it);
      assert_int_equal(got, due);
      if (!got) break;
      char want[32];
      snprintf(want, sizeof want, "ns/o-%d", model[head].id);
      assert_string_equal(it.key, want);
      assert_ptr_equal(it.entry, (void *)(intptr_t)(model[head].id + 1));
      assert_int_equal(it.bytes, model[head].bytes);
      free(it.key);
      bytes -= model[head].bytes;
      head++;
    }
    assert_true(bytes <= bound);
    assert_true(tail - head <= kMax);
  }
  po_PackLater_Free_(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_due_by_age_and_by_bound), cmocka_unit_test(test_matches_the_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
