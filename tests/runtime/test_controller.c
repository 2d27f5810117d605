/* Controller workers: result handling, metrics, restart, stop deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "po/runtime/controller.h"

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int calls;
  int per_key[8];
  bool block; /* "ns/stuck" waits while set */
} Ctx;

static const char *const kKeys[] = {"ns/ok", "ns/err2", "ns/term", "ns/after", "ns/req", "ns/stuck"};

static int key_index(const char *key) {
  for (int i = 0; i < 6; i++)
    if (strcmp(kKeys[i], key) == 0) return i;
  return 7;
}

static po_Result reconcile(void *arg, const char *key, po_Logger *log) {
  Ctx *c = arg;
  pthread_mutex_lock(&c->mu);
  int i = key_index(key);
  int n = ++c->per_key[i];
  c->calls++;
  pthread_cond_broadcast(&c->cv);
  while (i == 5 && c->block) pthread_cond_wait(&c->cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
  po_Log_Debug(log, "reconciling");
  switch (i) {
    case 1: return n <= 2 ? po_Result_Error("boom %d", n) : po_Result_Success();
    case 2: return po_Result_Terminal("spec is invalid");
    case 3: return n == 1 ? po_Result_RequeueAfter(10 * S) : po_Result_Success();
    case 4: return n == 1 ? po_Result_Requeue() : po_Result_Success();
    default: return po_Result_Success();
  }
}

static void wait_calls(Ctx *c, int n) {
  pthread_mutex_lock(&c->mu);
  while (c->calls < n) pthread_cond_wait(&c->cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
}

/* wait_calls, giving up after 10 s of real time (false): a test that fails rather than hangs. */
static bool wait_calls_for(Ctx *c, int n) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&c->mu);
  int rc = 0;
  while (c->calls < n && rc == 0) rc = pthread_cond_timedwait(&c->cv, &c->mu, &until);
  bool done = c->calls >= n;
  pthread_mutex_unlock(&c->mu);
  return done;
}

static double metric(po_Metrics *m, const char *family, const char *l1, const char *l2) {
  return po_Series_Value(po_Family_WithLabels(po_Metrics_Find(m, family), l1, l2));
}

static void results_requeue_like_controller_runtime(void **state) {
  Ctx c = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, false};
  po_RtClock *clock = po_FakeClock_New(0);
  po_Metrics *m = po_Metrics_New();
  FILE *logf = tmpfile();
  po_Logger *log = po_Logger_New(&(po_LoggerOptions){.out = logf, .level = kPo_LogLevel_Info});
  po_ControllerOptions o = {.name = "po", .reconcile = reconcile, .ctx = &c, .workers = 2,
                            .clock = clock, .metrics = m, .log = log};
  po_CtlStatus st;
  po_Controller *ctl = po_Controller_New(&o, &st);
  assert_non_null(ctl);
  for (int i = 0; i < 5; i++) po_Controller_Enqueue(ctl, kKeys[i]);
  assert_true(po_Controller_Start(ctl, &st));
  /* Both workers idle on the clock means every result was handled. */
  wait_calls(&c, 5);
  po_FakeClock_AwaitWaiters(clock, 2);
  assert_int_equal(po_Workqueue_WaitingLen(po_Controller_Queue(ctl)), 3); /* err2, req, after */
  assert_int_equal(po_Workqueue_NumRequeues(po_Controller_Queue(ctl), "ns/term"), 0);
  po_FakeClock_Advance(clock, 5 * MS); /* first backoff: err2 (fails again) and req */
  wait_calls(&c, 7);
  po_FakeClock_AwaitWaiters(clock, 2);
  po_FakeClock_Advance(clock, 10 * MS); /* second backoff: err2 succeeds */
  wait_calls(&c, 8);
  po_FakeClock_AwaitWaiters(clock, 2);
  assert_int_equal(po_Workqueue_NumRequeues(po_Controller_Queue(ctl), "ns/err2"), 0); /* forgotten */
  po_FakeClock_Advance(clock, 10 * S); /* the timed requeue */
  wait_calls(&c, 9);
  po_FakeClock_AwaitWaiters(clock, 2);
  assert_true(po_Controller_Stop(ctl, PO_FOREVER));
  assert_int_equal(c.per_key[0], 1);
  assert_int_equal(c.per_key[1], 3);
  assert_int_equal(c.per_key[2], 1);
  assert_int_equal(c.per_key[3], 2);
  assert_int_equal(c.per_key[4], 2);
  assert_true(metric(m, PO_M_RECONCILE_TOTAL, "po", "success") == 4);
  assert_true(metric(m, PO_M_RECONCILE_TOTAL, "po", "error") == 3);
  assert_true(metric(m, PO_M_RECONCILE_TOTAL, "po", "requeue") == 1);
  assert_true(metric(m, PO_M_RECONCILE_TOTAL, "po", "requeue_after") == 1);
  assert_true(metric(m, PO_M_RECONCILE_ERRORS, "po", NULL) == 3);
  assert_true(metric(m, PO_M_TERMINAL_ERRORS, "po", NULL) == 1);
  assert_true(metric(m, PO_M_WQ_RETRIES, "po", NULL) == 4);
  assert_true(metric(m, PO_M_MAX_CONCURRENT, "po", NULL) == 2);
  assert_true(metric(m, PO_M_ACTIVE_WORKERS, "po", NULL) == 0);
  assert_int_equal(po_Series_Count(po_Family_WithLabels(po_Metrics_Find(m, PO_M_RECONCILE_TIME), "po")), 9);
  /* The failures were logged with controller and key. */
  rewind(logf);
  char line[1024];
  int errors = 0;
  while (fgets(line, sizeof line, logf)) {
    if (strstr(line, "\"msg\":\"reconcile failed, will retry\"")) {
      assert_non_null(strstr(line, "\"controller\":\"po\""));
      assert_non_null(strstr(line, "\"key\":\"ns/err2\""));
      errors++;
    }
  }
  assert_int_equal(errors, 2);
  po_Controller_Free(ctl);
  po_Logger_Free(log);
  fclose(logf);
  po_Metrics_Free(m);
  po_FakeClock_Free(clock);
}

/* Fails 24 times with max_backoff_ns 10 s, then succeeds. */
static po_Result reconcile_capped(void *arg, const char *key, po_Logger *log) {
  (void)key;
  (void)log;
  Ctx *c = arg;
  pthread_mutex_lock(&c->mu);
  int n = ++c->calls;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  if (n > 24) return po_Result_Success();
  po_Result r = po_Result_Error("failed calling webhook %d", n);
  r.max_backoff_ns = 10 * S;
  return r;
}

/* An error result with max_backoff_ns: the retries double as usual but never wait longer than
 * that (without it the 24th would wait 5 ms * 2^23, the queue's 1000 s). */
static void error_backoff_capped_by_the_result(void **state) {
  (void)state;
  Ctx c = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, false};
  po_RtClock *clock = po_FakeClock_New(0);
  FILE *logf = tmpfile();
  po_Logger *log = po_Logger_New(&(po_LoggerOptions){.out = logf, .level = kPo_LogLevel_Info});
  po_ControllerOptions o = {.name = "cap", .reconcile = reconcile_capped, .ctx = &c, .clock = clock, .log = log};
  po_CtlStatus st;
  po_Controller *ctl = po_Controller_New(&o, &st);
  assert_non_null(ctl);
  po_Controller_Enqueue(ctl, "ns/cap");
  assert_true(po_Controller_Start(ctl, &st));
  for (int i = 1; i <= 25; i++) {
    if (!wait_calls_for(&c, i)) fail_msg("call %d did not come 10 s after the last failure", i);
    po_FakeClock_AwaitWaiters(clock, 1);
    po_FakeClock_Advance(clock, 10 * S);
  }
  assert_true(po_Controller_Stop(ctl, PO_FOREVER));
  assert_int_equal(c.calls, 25);
  rewind(logf);
  char line[1024];
  long last = -1, most = 0;
  while (fgets(line, sizeof line, logf)) {
    const char *p = strstr(line, "\"retry_in_ms\":");
    if (!p) continue;
    last = strtol(p + 14, NULL, 10);
    if (last > most) most = last;
  }
  assert_int_equal(last, 10000);
  assert_int_equal(most, 10000);
  po_Controller_Free(ctl);
  po_Logger_Free(log);
  fclose(logf);
  po_FakeClock_Free(clock);
}

static void restart_after_stop_uses_a_fresh_queue(void **state) {
  Ctx c = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, false};
  po_Metrics *m = po_Metrics_New();
  po_ControllerOptions o = {.name = "re", .reconcile = reconcile, .ctx = &c, .metrics = m};
  po_CtlStatus st;
  po_Controller *ctl = po_Controller_New(&o, &st);
  assert_true(po_Controller_Start(ctl, &st));
  po_Controller_Enqueue(ctl, "ns/ok");
  wait_calls(&c, 1);
  assert_true(po_Controller_Stop(ctl, PO_FOREVER));
  po_Controller_Enqueue(ctl, "ns/ok"); /* stopped: dropped */
  assert_true(po_Controller_Start(ctl, &st));
  po_Controller_Enqueue(ctl, "ns/ok");
  wait_calls(&c, 2);
  assert_true(po_Controller_Stop(ctl, PO_FOREVER));
  assert_int_equal(c.per_key[0], 2);
  po_Controller_Free(ctl);
  po_Metrics_Free(m);
}

/* Keys queued between Prepare and Start are each reconciled once however often queued (the
 * start after a cache sync names a target once per PropertyOverride and once more by its own
 * informer); queued to running workers, a key whose reconcile had begun runs again. After a
 * Stop, Prepare makes the fresh queue the keys go to. */
static void prepare_queues_keys_once_before_the_workers(void **state) {
  (void)state;
  Ctx c = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, false};
  po_Metrics *m = po_Metrics_New();
  po_ControllerOptions o = {.name = "prep", .reconcile = reconcile, .ctx = &c, .metrics = m, .workers = 2};
  po_CtlStatus st;
  po_Controller *ctl = po_Controller_New(&o, &st);
  for (int round = 0; round < 2; round++) {
    assert_true(po_Controller_Prepare(ctl, &st));
    for (int i = 0; i < 50; i++) po_Controller_Enqueue(ctl, i % 2 ? "ns/ok" : "ns/other");
    assert_true(po_Controller_Start(ctl, &st));
    assert_true(wait_calls_for(&c, 2 * (round + 1)));
    struct timespec pause = {0, 200 * 1000000L};
    nanosleep(&pause, NULL); /* time for a second reconcile, were there one */
    assert_true(po_Controller_Stop(ctl, PO_FOREVER));
    assert_int_equal(c.per_key[0], round + 1);
    assert_int_equal(c.per_key[7], round + 1);
    assert_int_equal(c.calls, 2 * (round + 1));
  }
  po_Controller_Free(ctl);
  po_Metrics_Free(m);
}

static void *advance_past_deadline(void *arg) {
  po_RtClock *clock = arg;
  po_FakeClock_AwaitWaiters(clock, 1); /* the stop is waiting */
  po_FakeClock_Advance(clock, 30 * S);
  return NULL;
}

static void stop_gives_up_at_the_deadline_then_waits_again(void **state) {
  Ctx c = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, true};
  po_RtClock *clock = po_FakeClock_New(0);
  po_Metrics *m = po_Metrics_New();
  po_ControllerOptions o = {.name = "stuck", .reconcile = reconcile, .ctx = &c, .clock = clock,
                            .metrics = m};
  po_CtlStatus st;
  po_Controller *ctl = po_Controller_New(&o, &st);
  po_Controller_Enqueue(ctl, "ns/stuck");
  assert_true(po_Controller_Start(ctl, &st));
  wait_calls(&c, 1);
  /* The stop waits on the fake clock: advance it past the deadline from another thread. */
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, advance_past_deadline, clock), 0);
  assert_false(po_Controller_Stop(ctl, 30 * S));
  pthread_join(t, NULL);
  assert_false(po_Controller_Start(ctl, &st)); /* the stuck worker still runs */
  assert_int_equal(st.code, kPo_Ctl_Start);
  pthread_mutex_lock(&c.mu);
  c.block = false;
  pthread_cond_broadcast(&c.cv);
  pthread_mutex_unlock(&c.mu);
  assert_true(po_Controller_Stop(ctl, PO_FOREVER));
  po_Controller_Free(ctl);
  po_Metrics_Free(m);
  po_FakeClock_Free(clock);
}

static void new_validates_options(void **state) {
  po_CtlStatus st;
  po_ControllerOptions o = {.name = "", .reconcile = reconcile};
  assert_null(po_Controller_New(&o, &st));
  assert_int_equal(st.code, kPo_Ctl_Usage);
  assert_string_equal(st.message, "controller: name and reconcile are required");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(results_requeue_like_controller_runtime),
      cmocka_unit_test(error_backoff_capped_by_the_result),
      cmocka_unit_test(restart_after_stop_uses_a_fresh_queue),
      cmocka_unit_test(prepare_queues_keys_once_before_the_workers),
      cmocka_unit_test(stop_gives_up_at_the_deadline_then_waits_again),
      cmocka_unit_test(new_validates_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
