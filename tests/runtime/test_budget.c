/* The memory budget (po/runtime/budget.h): reservations fit or are refused at once and counted;
 * releases give the bytes back; large reservations leave the last eighth to small ones (but one
 * alone may take it all); the callbacks see every change and refusal; threads never take more
 * than the budget together. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "po/runtime/budget.h"

enum { kMiB = 1 << 20 };

typedef struct {
  size_t last;
  int changes, refusals;
  size_t refused_asked;
} Seen;

static void changed(void *ctx, size_t in_flight) {
  Seen *s = ctx;
  s->last = in_flight;
  s->changes++;
}

static void refused(void *ctx, size_t asked) {
  Seen *s = ctx;
  s->refusals++;
  s->refused_asked = asked;
}

static void test_acquire_release_refuse(void **state) {
  (void)state;
  Seen seen = {0};
  po_Budget *b = po_Budget_New(&(po_BudgetOptions){.bytes = 64 * kMiB, .changed = changed, .refused = refused, .ctx = &seen}, NULL);
  assert_non_null(b);
  assert_int_equal(po_Budget_Bytes(b), 64 * kMiB);
  assert_true(po_Budget_TryAcquire(b, 0)); /* nothing asked: nothing counted */
  assert_int_equal(seen.changes, 0);
  assert_true(po_Budget_TryAcquire(b, 30 * kMiB));
  assert_true(po_Budget_TryAcquire(b, 26 * kMiB)); /* 56 MiB = 7/8: still fits */
  assert_int_equal(po_Budget_InFlight(b), 56 * kMiB);
  assert_int_equal(seen.last, 56 * kMiB);
  assert_int_equal(seen.changes, 2);
  /* A large one (over 1 MiB = 64/64) would pass 7/8: refused, counted, nothing taken. */
  assert_false(po_Budget_TryAcquire(b, 2 * kMiB));
  assert_int_equal(po_Budget_Refusals(b), 1);
  assert_int_equal(seen.refusals, 1);
  assert_int_equal(seen.refused_asked, 2 * kMiB);
  assert_int_equal(po_Budget_InFlight(b), 56 * kMiB);
  /* Small ones (at most 1 MiB) fill the last eighth, and no further. */
  for (int i = 0; i < 8; i++) assert_true(po_Budget_TryAcquire(b, kMiB));
  assert_int_equal(po_Budget_InFlight(b), 64 * kMiB);
  assert_false(po_Budget_TryAcquire(b, 1));
  assert_int_equal(po_Budget_Refusals(b), 2);
  po_Budget_Release(b, 8 * kMiB);
  po_Budget_Release(b, 26 * kMiB);
  assert_int_equal(po_Budget_InFlight(b), 30 * kMiB);
  assert_int_equal(seen.last, 30 * kMiB);
  assert_true(po_Budget_TryAcquire(b, 2 * kMiB)); /* room again */
  po_Budget_Release(b, 32 * kMiB);
  assert_int_equal(po_Budget_InFlight(b), 0);
  assert_int_equal(po_Budget_Peak(b), 64 * kMiB);
  /* One alone may take more than 7/8, never more than all. */
  assert_true(po_Budget_TryAcquire(b, 63 * kMiB));
  assert_false(po_Budget_TryAcquire(b, 2 * kMiB));
  po_Budget_Release(b, 63 * kMiB);
  assert_false(po_Budget_TryAcquire(b, 64 * kMiB + 1));
  assert_int_equal(po_Budget_InFlight(b), 0);
  po_Budget_Free(b);
}

/* A request that holds part of its reservation and grows it (the webhook: its body, then its
 * decoding) is alone when nothing else is in flight: it may then take the whole budget, past the
 * 7/8 of large ones. Before, its own part counted as another's: one priced between 7/8 and all
 * of the budget was refused (429) on an idle server, every time. */
static void test_grow_alone_takes_it_all(void **state) {
  (void)state;
  size_t all = 8u << 20;
  po_Budget *b = po_Budget_New(&(po_BudgetOptions){.bytes = all}, NULL);
  assert_non_null(b);
  size_t held = 1u << 20, more = all - held - 4096; /* the whole over 7/8 */
  assert_true(po_Budget_TryAcquire(b, held));
  assert_true(po_Budget_TryGrow(b, held, more));
  assert_int_equal(po_Budget_InFlight(b), all - 4096);
  po_Budget_Release(b, held + more);
  /* Beside another's 64 KiB, the same is refused (7/8), and so is growing past the whole. */
  assert_true(po_Budget_TryAcquire(b, 64u << 10));
  assert_true(po_Budget_TryAcquire(b, held));
  assert_false(po_Budget_TryGrow(b, held, more));
  po_Budget_Release(b, 64u << 10);
  assert_false(po_Budget_TryGrow(b, held, all - held + 1));
  assert_true(po_Budget_TryGrow(b, held, all - held));
  po_Budget_Release(b, all);
  assert_int_equal(po_Budget_InFlight(b), 0);
  po_Budget_Free(b);
}

static void test_too_small_refused_with_message(void **state) {
  (void)state;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_null(po_Budget_New(&(po_BudgetOptions){.bytes = 1000}, &st));
  assert_int_equal(st.code, kPo_Ctl_Usage);
  assert_string_equal(st.message, "memory budget: 1000 bytes is under the smallest, 1 MiB (1048576)");
}

/* Eight threads taking and giving back random amounts: never more than the budget in flight. */
static po_Budget *g_b;
static atomic_int g_over;

static void watch(void *ctx, size_t in_flight) {
  (void)ctx;
  if (in_flight > 16 * (size_t)kMiB) atomic_store(&g_over, 1);
}

static void *churn(void *arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  for (int i = 0; i < 20000; i++) {
    seed = seed * 1103515245u + 12345u;
    size_t n = (seed >> 8) % (3 * kMiB) + 1;
    if (po_Budget_TryAcquire(g_b, n)) po_Budget_Release(g_b, n);
  }
  return NULL;
}

static void test_threads_stay_within(void **state) {
  (void)state;
  g_b = po_Budget_New(&(po_BudgetOptions){.bytes = 16 * kMiB, .changed = watch}, NULL);
  assert_non_null(g_b);
  pthread_t t[8];
  for (uintptr_t i = 0; i < 8; i++) pthread_create(&t[i], NULL, churn, (void *)(i + 1));
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&g_over), 0);
  assert_true(po_Budget_Peak(g_b) <= 16 * (size_t)kMiB);
  assert_int_equal(po_Budget_InFlight(g_b), 0);
  po_Budget_Free(g_b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_acquire_release_refuse),
      cmocka_unit_test(test_too_small_refused_with_message),
      cmocka_unit_test(test_grow_alone_takes_it_all),
      cmocka_unit_test(test_threads_stay_within),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
