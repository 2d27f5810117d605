/* Issue 26 (adv-s15): the burst hold's edges, single-threaded on a fake clock (the last test:
 * real clock, worker and producer threads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "po/runtime/workqueue.h"

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)

typedef struct {
  po_RtClock *clock;
  po_Workqueue *q;
  po_Metrics *metrics;
} Fixture;

/* The controller's defaults: quiet 250 ms, max 3 s (and a 2 s spacing in the calls). */
static int setup(void **state) {
  static Fixture f;
  f.clock = po_FakeClock_New(1000 * MS);
  f.metrics = po_Metrics_New();
  f.q = po_Workqueue_New(&(po_WorkqueueOptions){.name = "adv", .clock = f.clock, .metrics = f.metrics,
                                                .burst_quiet_ns = 250 * MS, .burst_max_ns = 3 * S});
  *state = &f;
  return f.q && f.metrics ? 0 : -1;
}

static int teardown(void **state) {
  Fixture *f = *state;
  po_Workqueue_Free(f->q);
  po_Metrics_Free(f->metrics);
  po_FakeClock_Free(f->clock);
  return 0;
}

static double value(po_Metrics *m, const char *family) {
  return po_Series_Value(po_Family_WithLabels(po_Metrics_Find(m, family), "adv"));
}

/* Takes the ready key (there must be one) and finishes it; returns it. */
static const char *run(po_Workqueue *q) {
  static char buf[64];
  const char *k;
  if (!po_Workqueue_TryGet(q, &k)) return NULL;
  snprintf(buf, sizeof buf, "%s", k);
  po_Workqueue_Done(q, k);
  return buf;
}

/* workqueue_retries_total counts AddAfter and AddRateLimited (README: "as client-go counts"):
 * the e2e cold start checks it stays 0 with no failure. A burst of events on one target that
 * waits for its spacing is no retry, nor is each event that finds it already waiting: before,
 * every one of them counted (100 events, 100 "retries", no failure). */
static void spaced_waits_and_holds_are_not_retries(void **state) {
  Fixture *f = *state;
  po_Workqueue_AddSpaced(f->q, "ns/t", 2 * S);
  assert_string_equal(run(f->q), "ns/t"); /* quiet: at once; its spacing runs from now */
  po_FakeClock_Advance(f->clock, 500 * MS);
  for (int i = 0; i < 100; i++) { /* 100 creates against it, 10 ms apart: a burst */
    po_Workqueue_AddSpaced(f->q, "ns/t", 2 * S);
    po_Workqueue_AddSpaced(f->q, "ns/other", 2 * S);
    po_FakeClock_Advance(f->clock, 10 * MS);
  }
  assert_true(value(f->metrics, PO_M_WQ_RETRIES) == 0);
  /* a real retry still counts */
  po_Workqueue_AddRateLimited(f->q, "ns/fails");
  po_Workqueue_AddAfter(f->q, "ns/later", 5 * S);
  assert_true(value(f->metrics, PO_M_WQ_RETRIES) == 2);
}

/* A hostile tenant changes its own PropertyOverrides every 100 ms, forever: there is never a
 * pause. Another tenant's lone change, to a target quiet or just reconciled, still starts
 * within burst_max (3 s) of it, never later; and the hostile target itself runs once per
 * burst_max, not once per event. */
static void a_stream_that_never_pauses_delays_others_at_most_burst_max(void **state) {
  Fixture *f = *state;
  int64_t victim_at = -1, victim_ran = -1, hostile_runs = 0, now = 0;
  int64_t victim2_at = -1, victim2_ran = -1;
  for (int tick = 0; tick < 200; tick++, now += 100 * MS) { /* 20 s */
    po_Workqueue_AddSpaced(f->q, "hostile/t", 2 * S);
    if (tick == 37) victim_at = now, po_Workqueue_AddSpaced(f->q, "victim/t", 2 * S);
    if (victim_ran >= 0 && victim2_at < 0 && now >= victim_ran + 500 * MS) { /* within its spacing */
      victim2_at = now;
      po_Workqueue_AddSpaced(f->q, "victim/t", 2 * S);
    }
    const char *k;
    while (po_Workqueue_TryGet(f->q, &k)) {
      if (strcmp(k, "hostile/t") == 0) hostile_runs++;
      else if (victim_ran < 0) victim_ran = now;
      else if (victim2_ran < 0) victim2_ran = now;
      po_Workqueue_Done(f->q, k);
    }
    po_FakeClock_Advance(f->clock, 100 * MS);
  }
  assert_true(victim_ran >= victim_at && victim_ran - victim_at <= 3 * S);
  assert_true(victim2_ran >= victim2_at && victim2_ran - victim2_at <= 3 * S);
  assert_true(hostile_runs >= 6 && hostile_runs <= 8); /* 20 s / 3 s, plus the first */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(spaced_waits_and_holds_are_not_retries, setup, teardown),
      cmocka_unit_test_setup_teardown(a_stream_that_never_pauses_delays_others_at_most_burst_max, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
