/* One clock: the runtime's clock hands its time out as the controller's po_Clock, so a fake one
 * drives the Kubernetes client and the lease elector as it drives the workqueue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "po/runtime/clock.h"

static void real_clock_is_the_system_clock(void **state) {
  (void)state;
  const po_Clock *k = po_RtClock_Source(po_RtClock_Real());
  assert_ptr_equal(k, po_Clock_System());
  int64_t a = k->monotonic_ns(k->ctx), b = po_RtClock_Now(po_RtClock_Real()), c = k->monotonic_ns(k->ctx);
  assert_true(a <= b && b <= c); /* the same time line */
}

typedef struct {
  const po_Clock *k;
  atomic_bool done;
} Sleeper;

static void *sleeper(void *arg) {
  Sleeper *s = arg;
  s->k->sleep_ns(s->k->ctx, PO_NS_PER_S);
  atomic_store(&s->done, true);
  return NULL;
}

static void fake_clock_as_a_po_clock(void **state) {
  (void)state;
  po_RtClock *fake = po_FakeClock_New(1000 * PO_NS_PER_S);
  const po_Clock *k = po_RtClock_Source(fake);
  assert_int_equal(k->monotonic_ns(k->ctx), 1000 * PO_NS_PER_S);
  assert_int_equal(k->wall_ns(k->ctx), 1000 * PO_NS_PER_S);
  po_FakeClock_Advance(fake, 5 * PO_NS_PER_MS);
  assert_int_equal(k->monotonic_ns(k->ctx), 1000 * PO_NS_PER_S + 5 * PO_NS_PER_MS);

  /* A sleep of one second ends when the test has moved time by one second, not before. */
  Sleeper s = {.k = k};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, sleeper, &s), 0);
  po_FakeClock_AwaitWaiters(fake, 1);
  po_FakeClock_Advance(fake, PO_NS_PER_S / 2);
  po_FakeClock_AwaitWaiters(fake, 1);
  assert_false(atomic_load(&s.done));
  po_FakeClock_Advance(fake, PO_NS_PER_S / 2);
  pthread_join(t, NULL);
  assert_true(atomic_load(&s.done));
  po_FakeClock_Free(fake);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(real_clock_is_the_system_clock),
      cmocka_unit_test(fake_clock_as_a_po_clock),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
