/* Workqueue semantics, single-threaded with a fake clock (one test with a worker thread asleep
 * in Get): dedup, dirty-while-processing, timed requeues and their order, rate limiting,
 * forget, shutdown, metrics, spacing, bursts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/workqueue.h"

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)

typedef struct {
  po_RtClock *clock;
  po_Workqueue *q;
  po_Metrics *metrics;
} Fixture;

static int setup(void **state) {
  static Fixture f;
  f.clock = po_FakeClock_New(1000 * MS);
  f.metrics = po_Metrics_New();
  po_WorkqueueOptions o = {.name = "test", .clock = f.clock, .metrics = f.metrics};
  f.q = po_Workqueue_New(&o);
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

/* Takes the next ready key into buf ("" when none). */
static const char *next(po_Workqueue *q, char *buf) {
  const char *key;
  if (!po_Workqueue_TryGet(q, &key)) return strcpy(buf, "");
  return strcpy(buf, key);
}

static void dedups_queued_keys(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_Add(f->q, "ns/a");
  po_Workqueue_Add(f->q, "ns/a");
  po_Workqueue_Add(f->q, "ns/b");
  po_Workqueue_Add(f->q, "ns/a");
  assert_int_equal(po_Workqueue_Len(f->q), 2);
  assert_string_equal(next(f->q, k), "ns/a");
  assert_string_equal(next(f->q, k), "ns/b");
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_Done(f->q, "ns/a");
  po_Workqueue_Done(f->q, "ns/b");
  assert_int_equal(po_Workqueue_Len(f->q), 0);
}

static void key_added_while_processing_runs_again_after_done(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_Add(f->q, "ns/a");
  assert_string_equal(next(f->q, k), "ns/a");
  po_Workqueue_Add(f->q, "ns/a"); /* dirty, but not handed out while in flight */
  po_Workqueue_Add(f->q, "ns/a");
  assert_int_equal(po_Workqueue_Len(f->q), 1);
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_Add(f->q, "ns/b");
  assert_string_equal(next(f->q, k), "ns/b");
  po_Workqueue_Done(f->q, "ns/a"); /* now it is queued again, once */
  assert_string_equal(next(f->q, k), "ns/a");
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_Done(f->q, "ns/a");
  po_Workqueue_Done(f->q, "ns/b");
  assert_string_equal(next(f->q, k), "");
}

static void add_after_releases_in_time_order(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_AddAfter(f->q, "ns/c", 30 * MS);
  po_Workqueue_AddAfter(f->q, "ns/a", 10 * MS);
  po_Workqueue_AddAfter(f->q, "ns/b", 20 * MS);
  po_Workqueue_AddAfter(f->q, "ns/d", 10 * MS);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 4);
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 9 * MS);
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 1 * MS);
  assert_string_equal(next(f->q, k), "ns/a"); /* equal times keep AddAfter order */
  assert_string_equal(next(f->q, k), "ns/d");
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 10 * MS);
  assert_string_equal(next(f->q, k), "ns/b");
  po_FakeClock_Advance(f->clock, 100 * MS);
  assert_string_equal(next(f->q, k), "ns/c");
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 0);
  po_Workqueue_Done(f->q, "ns/a");
  po_Workqueue_Done(f->q, "ns/b");
  po_Workqueue_Done(f->q, "ns/c");
  po_Workqueue_Done(f->q, "ns/d");
}

/* AddSpaced: a quiet key runs at once; its runs then start at least the spacing apart, every
 * add meanwhile (during the run or after it) one run at the spacing's end; once the spacing is
 * over, at once again; entries kept only for their spacing go before the table grows. */
static void spaced_keys_run_at_once_then_a_spacing_apart(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_AddSpaced(f->q, "ns/a", 1000 * MS);
  assert_string_equal(next(f->q, k), "ns/a"); /* quiet: no wait */
  po_FakeClock_Advance(f->clock, 10 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/a", 1000 * MS); /* during the run */
  po_Workqueue_Done(f->q, "ns/a");
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 300 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/a", 1000 * MS); /* after it, within the spacing */
  po_Workqueue_AddSpaced(f->q, "ns/a", 1000 * MS);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 1);
  po_FakeClock_Advance(f->clock, 689 * MS);
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 1 * MS); /* 1000 ms after the run's start */
  assert_string_equal(next(f->q, k), "ns/a");
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_Done(f->q, "ns/a");
  /* A spacing after this run's start too... */
  po_FakeClock_Advance(f->clock, 500 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/a", 1000 * MS);
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 500 * MS);
  assert_string_equal(next(f->q, k), "ns/a");
  po_Workqueue_Done(f->q, "ns/a");
  /* ...and none once it is over. */
  po_FakeClock_Advance(f->clock, 1000 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/a", 1000 * MS);
  assert_string_equal(next(f->q, k), "ns/a");
  po_Workqueue_Done(f->q, "ns/a");
  /* Spacing 0 is Add; other keys are not held by a's spacing. */
  po_Workqueue_AddSpaced(f->q, "ns/b", 0);
  po_Workqueue_AddSpaced(f->q, "ns/c", 1000 * MS);
  assert_string_equal(next(f->q, k), "ns/b");
  assert_string_equal(next(f->q, k), "ns/c");
  po_Workqueue_Done(f->q, "ns/b");
  po_Workqueue_Done(f->q, "ns/c");
  /* Many keys run once, their spacings over: the table does not keep them all. */
  for (int i = 0; i < 1000; i++) {
    char key[32];
    snprintf(key, sizeof key, "ns/many-%d", i);
    po_Workqueue_AddSpaced(f->q, key, 1000 * MS);
    assert_string_equal(next(f->q, k), key);
    po_Workqueue_Done(f->q, key);
    po_FakeClock_Advance(f->clock, 10 * MS);
  }
  assert_int_equal(po_Workqueue_Len(f->q), 0);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 0);
}

static void earliest_add_after_wins_and_ready_keys_dedup(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_AddAfter(f->q, "ns/a", 100 * MS);
  po_Workqueue_AddAfter(f->q, "ns/a", 10 * MS);
  po_Workqueue_AddAfter(f->q, "ns/a", 50 * MS);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 1);
  po_FakeClock_Advance(f->clock, 10 * MS);
  po_Workqueue_Add(f->q, "ns/a"); /* also added directly: still one run */
  assert_string_equal(next(f->q, k), "ns/a");
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 1000 * MS);
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_Done(f->q, "ns/a");
  /* A zero or negative delay is an immediate add. */
  po_Workqueue_AddAfter(f->q, "ns/z", 0);
  assert_string_equal(next(f->q, k), "ns/z");
  po_Workqueue_Done(f->q, "ns/z");
}

static void rate_limited_adds_back_off_and_forget_resets(void **state) {
  Fixture *f = *state;
  char k[64];
  assert_int_equal(po_Workqueue_AddRateLimited(f->q, "ns/a"), 5 * MS);
  assert_int_equal(po_Workqueue_AddRateLimited(f->q, "ns/a"), 10 * MS);
  assert_int_equal(po_Workqueue_AddRateLimited(f->q, "ns/a"), 20 * MS);
  assert_int_equal(po_Workqueue_NumRequeues(f->q, "ns/a"), 3);
  /* The earliest of the three timed requeues (5 ms) wins. */
  po_FakeClock_Advance(f->clock, 4 * MS);
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 1 * MS);
  assert_string_equal(next(f->q, k), "ns/a");
  po_Workqueue_Forget(f->q, "ns/a");
  assert_int_equal(po_Workqueue_NumRequeues(f->q, "ns/a"), 0);
  po_Workqueue_Done(f->q, "ns/a");
  assert_int_equal(po_Workqueue_AddRateLimited(f->q, "ns/a"), 5 * MS);
  po_Workqueue_Forget(f->q, "ns/a");
  assert_int_equal(po_Workqueue_NumRequeues(f->q, "ns/unknown"), 0);
  po_Workqueue_Forget(f->q, "ns/unknown");
}

/* A capped backoff (a failure whose end no event reports: a webhook reachable again) still
 * counts the failures and doubles from the base, but never waits longer than the cap; the
 * uncapped call afterwards picks up the full backoff of all the failures. */
static void rate_limited_up_to_caps_the_key_backoff(void **state) {
  Fixture *f = *state;
  int64_t d = 0;
  for (int i = 0; i < 30; i++) d = po_Workqueue_AddRateLimitedUpTo(f->q, "ns/a", 10 * S);
  assert_int_equal(d, 10 * S);
  assert_int_equal(po_Workqueue_NumRequeues(f->q, "ns/a"), 30);
  assert_int_equal(po_Workqueue_AddRateLimitedUpTo(f->q, "ns/a", 0), 1000 * S); /* 0: the queue's maximum */
  po_Workqueue_Forget(f->q, "ns/a");
  assert_int_equal(po_Workqueue_AddRateLimitedUpTo(f->q, "ns/a", 10 * S), 5 * MS);
  assert_int_equal(po_Workqueue_AddRateLimitedUpTo(f->q, "ns/a", 10 * S), 10 * MS);
  /* a cap under the base delay is the wait */
  assert_int_equal(po_Workqueue_AddRateLimitedUpTo(f->q, "ns/b", 1 * MS), 1 * MS);
  po_Workqueue_Forget(f->q, "ns/a");
  po_Workqueue_Forget(f->q, "ns/b");
}

static void overall_bucket_limits_many_failing_keys(void **state) {
  Fixture *f = *state;
  char key[32];
  /* 100 distinct keys fail once: the burst covers them, each waits its own 5 ms. */
  for (int i = 0; i < 100; i++) {
    snprintf(key, sizeof key, "ns/k%d", i);
    assert_int_equal(po_Workqueue_AddRateLimited(f->q, key), 5 * MS);
  }
  /* The 101st waits for the bucket (100 ms), more than its own backoff; then 200 ms. */
  assert_int_equal(po_Workqueue_AddRateLimited(f->q, "ns/k100"), 100 * MS);
  assert_int_equal(po_Workqueue_AddRateLimited(f->q, "ns/k101"), 200 * MS);
  for (int i = 0; i < 102; i++) {
    snprintf(key, sizeof key, "ns/k%d", i);
    po_Workqueue_Forget(f->q, key);
  }
}

static void shutdown_stops_handing_out_keys(void **state) {
  Fixture *f = *state;
  char k[64];
  const char *key;
  po_Workqueue_Add(f->q, "ns/a");
  po_Workqueue_Add(f->q, "ns/b");
  po_Workqueue_AddAfter(f->q, "ns/c", 10 * MS);
  assert_string_equal(next(f->q, k), "ns/a");
  po_Workqueue_ShutDown(f->q);
  assert_true(po_Workqueue_ShuttingDown(f->q));
  assert_int_equal(po_Workqueue_Get(f->q, &key), kPo_Workqueue_ShuttingDown);
  assert_null(key);
  po_Workqueue_Add(f->q, "ns/d");
  po_Workqueue_Add(f->q, "ns/a"); /* in flight: not queued again after shutdown */
  po_FakeClock_Advance(f->clock, 20 * MS);
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_Done(f->q, "ns/a");
  assert_int_equal(po_Workqueue_Len(f->q), 0);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 0);
  /* Nothing in flight: the drain returns at once. */
  assert_true(po_Workqueue_ShutDownWithDrain(f->q, PO_FOREVER));
}

static double value(po_Metrics *m, const char *family) {
  return po_Series_Value(po_Family_WithLabels(po_Metrics_Find(m, family), "test"));
}

static uint64_t count(po_Metrics *m, const char *family) {
  return po_Series_Count(po_Family_WithLabels(po_Metrics_Find(m, family), "test"));
}

static void metrics_follow_client_go(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_Add(f->q, "ns/a");
  po_Workqueue_Add(f->q, "ns/a");
  po_Workqueue_Add(f->q, "ns/b");
  assert_true(value(f->metrics, PO_M_WQ_ADDS) == 2);
  assert_true(value(f->metrics, PO_M_WQ_DEPTH) == 2);
  po_FakeClock_Advance(f->clock, 3 * MS);
  assert_string_equal(next(f->q, k), "ns/a");
  assert_true(value(f->metrics, PO_M_WQ_DEPTH) == 1);
  assert_int_equal(count(f->metrics, PO_M_WQ_QUEUE_DURATION), 1);
  assert_true(value(f->metrics, PO_M_WQ_QUEUE_DURATION) == 0.003);
  po_FakeClock_Advance(f->clock, 2000 * MS);
  /* A scrape computes the in-flight gauges. */
  char *text;
  assert_true(po_Metrics_Write(f->metrics, &text, NULL));
  assert_non_null(strstr(text, "workqueue_unfinished_work_seconds{name=\"test\"} 2\n"));
  assert_non_null(strstr(text, "workqueue_longest_running_processor_seconds{name=\"test\"} 2\n"));
  free(text);
  po_Workqueue_Done(f->q, "ns/a");
  assert_int_equal(count(f->metrics, PO_M_WQ_WORK_DURATION), 1);
  assert_true(value(f->metrics, PO_M_WQ_WORK_DURATION) == 2);
  po_Workqueue_AddRateLimited(f->q, "ns/a");
  po_Workqueue_AddAfter(f->q, "ns/c", 5 * MS);
  assert_true(value(f->metrics, PO_M_WQ_RETRIES) == 2);
  po_Workqueue_Forget(f->q, "ns/a");
  assert_true(po_Metrics_Write(f->metrics, &text, NULL));
  assert_non_null(strstr(text, "workqueue_unfinished_work_seconds{name=\"test\"} 0\n"));
  free(text);
}


/* Bursts (options burst_quiet 250 ms, burst_max 6 s): AddSpaced less than 250 ms after the one
 * before it holds its key until the adds pause for 250 ms, however many keys and adds; the
 * first add after a pause runs at once; at the pause every held key runs, its spacing or not. */
static int setup_burst(void **state) {
  static Fixture f;
  f.clock = po_FakeClock_New(1000 * MS);
  f.metrics = NULL;
  po_WorkqueueOptions o = {.name = "burst", .clock = f.clock, .burst_quiet_ns = 250 * MS, .burst_max_ns = 6 * S};
  f.q = po_Workqueue_New(&o);
  *state = &f;
  return f.q ? 0 : -1;
}

static void burst_holds_keys_until_it_pauses(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_AddSpaced(f->q, "ns/a", 2 * S);
  assert_string_equal(next(f->q, k), "ns/a"); /* the first: no wait */
  po_Workqueue_Done(f->q, "ns/a");
  po_FakeClock_Advance(f->clock, 10 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/b", 2 * S);
  po_FakeClock_Advance(f->clock, 10 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/c", 2 * S);
  po_FakeClock_Advance(f->clock, 10 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/b", 2 * S); /* held once */
  po_Workqueue_AddSpaced(f->q, "ns/a", 2 * S); /* held; its spacing runs to 2 s */
  assert_int_equal(po_Workqueue_Len(f->q), 0);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 3);
  po_FakeClock_Advance(f->clock, 249 * MS);
  assert_string_equal(next(f->q, k), "");
  po_FakeClock_Advance(f->clock, 1 * MS); /* 250 ms after the last add */
  /* all three, a too: the pause ends the burst, so its spacing has nothing left to gather */
  assert_string_equal(next(f->q, k), "ns/b");
  assert_string_equal(next(f->q, k), "ns/c");
  assert_string_equal(next(f->q, k), "ns/a");
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_Done(f->q, "ns/b");
  po_Workqueue_Done(f->q, "ns/c");
  po_Workqueue_Done(f->q, "ns/a");
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 0);
  /* after the pause, the next add waits for nothing */
  po_FakeClock_Advance(f->clock, 3 * S);
  po_Workqueue_AddSpaced(f->q, "ns/d", 2 * S);
  assert_string_equal(next(f->q, k), "ns/d");
  po_Workqueue_Done(f->q, "ns/d");
}

/* A burst that never pauses: each held key runs burst_max after it was held, not later, and a
 * key added again after that run is held again. */
static void burst_holds_at_most_burst_max(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_AddSpaced(f->q, "ns/noise", 2 * S);
  assert_string_equal(next(f->q, k), "ns/noise");
  po_Workqueue_Done(f->q, "ns/noise");
  po_FakeClock_Advance(f->clock, 100 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/x", 2 * S); /* held at t = 100 ms */
  int x_runs = 0;
  for (int t = 200; t <= 12000; t += 100) {
    po_FakeClock_Advance(f->clock, 100 * MS);
    po_Workqueue_AddSpaced(f->q, "ns/noise", 2 * S);
    for (;;) {
      next(f->q, k);
      if (!*k) break;
      if (!strcmp(k, "ns/x")) {
        x_runs++;
        assert_int_equal(t, 6100); /* 6 s after its hold, not before */
        po_Workqueue_AddSpaced(f->q, "ns/x", 2 * S);
      }
      po_Workqueue_Done(f->q, k);
    }
  }
  assert_int_equal(x_runs, 1); /* held again at 6.1 s: due at 12.1 s */
  po_FakeClock_Advance(f->clock, 100 * MS);
  po_Workqueue_AddSpaced(f->q, "ns/noise", 2 * S);
  assert_string_equal(next(f->q, k), "ns/x");
  po_Workqueue_Done(f->q, "ns/x");
  assert_string_equal(next(f->q, k), ""); /* noise: held again at 6.3 s */
  po_FakeClock_Advance(f->clock, 250 * MS); /* the pause, 250 ms after the last add */
  assert_string_equal(next(f->q, k), "ns/noise");
  po_Workqueue_Done(f->q, "ns/noise");
  assert_string_equal(next(f->q, k), "");
}

/* Add (or AddAfter 0) of a held key: at once, and the hold does not run it a second time;
 * ShutDown drops held keys. */
static void add_takes_a_held_key_out_of_its_hold(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_AddSpaced(f->q, "ns/a", 2 * S);
  assert_string_equal(next(f->q, k), "ns/a");
  po_Workqueue_Done(f->q, "ns/a");
  po_Workqueue_AddSpaced(f->q, "ns/b", 2 * S);
  po_Workqueue_AddSpaced(f->q, "ns/c", 2 * S);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 2);
  po_Workqueue_Add(f->q, "ns/b");
  po_Workqueue_AddAfter(f->q, "ns/c", 0);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 0);
  assert_string_equal(next(f->q, k), "ns/b");
  assert_string_equal(next(f->q, k), "ns/c");
  po_Workqueue_Done(f->q, "ns/b");
  po_Workqueue_Done(f->q, "ns/c");
  po_FakeClock_Advance(f->clock, 7 * S);
  assert_string_equal(next(f->q, k), "");
  po_Workqueue_AddSpaced(f->q, "ns/d", 2 * S);
  po_Workqueue_AddSpaced(f->q, "ns/e", 2 * S); /* held */
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 1);
  po_Workqueue_ShutDown(f->q);
  assert_int_equal(po_Workqueue_WaitingLen(f->q), 0);
}

typedef struct {
  po_Workqueue *q;
  char key[64];
} Getter;

static void *get_one(void *arg) {
  Getter *g = arg;
  const char *key;
  if (po_Workqueue_Get(g->q, &key) == kPo_Workqueue_Item) {
    strcpy(g->key, key);
    po_Workqueue_Done(g->q, key);
  }
  return NULL;
}

/* A worker asleep in Get wakes at the pause, with nothing else due (the heap's head is the
 * hold's 6 s). */
static void waiting_worker_wakes_at_the_pause(void **state) {
  Fixture *f = *state;
  char k[64];
  po_Workqueue_AddSpaced(f->q, "ns/a", 2 * S);
  assert_string_equal(next(f->q, k), "ns/a");
  po_Workqueue_Done(f->q, "ns/a");
  po_Workqueue_AddSpaced(f->q, "ns/b", 2 * S); /* held */
  Getter g = {.q = f->q};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, get_one, &g), 0);
  po_FakeClock_Advance(f->clock, 250 * MS);
  pthread_join(t, NULL);
  assert_string_equal(g.key, "ns/b");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(dedups_queued_keys, setup, teardown),
      cmocka_unit_test_setup_teardown(key_added_while_processing_runs_again_after_done, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(add_after_releases_in_time_order, setup, teardown),
      cmocka_unit_test_setup_teardown(earliest_add_after_wins_and_ready_keys_dedup, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(rate_limited_adds_back_off_and_forget_resets, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(rate_limited_up_to_caps_the_key_backoff, setup, teardown),
      cmocka_unit_test_setup_teardown(overall_bucket_limits_many_failing_keys, setup, teardown),
      cmocka_unit_test_setup_teardown(shutdown_stops_handing_out_keys, setup, teardown),
      cmocka_unit_test_setup_teardown(metrics_follow_client_go, setup, teardown),
      cmocka_unit_test_setup_teardown(spaced_keys_run_at_once_then_a_spacing_apart, setup, teardown),
      cmocka_unit_test_setup_teardown(burst_holds_keys_until_it_pauses, setup_burst, teardown),
      cmocka_unit_test_setup_teardown(burst_holds_at_most_burst_max, setup_burst, teardown),
      cmocka_unit_test_setup_teardown(add_takes_a_held_key_out_of_its_hold, setup_burst, teardown),
      cmocka_unit_test_setup_teardown(waiting_worker_wakes_at_the_pause, setup_burst, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
