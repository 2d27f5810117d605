/* Manager: start/stop ordering, leadership hooks, signals, the stop deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/clock.h"
#include "po/runtime/manager.h"

static char events[1024];
static pthread_mutex_t events_mu = PTHREAD_MUTEX_INITIALIZER;

static void record(const char *what, const char *name) {
  pthread_mutex_lock(&events_mu);
  size_t n = strlen(events);
  snprintf(events + n, sizeof events - n, "%s%s:%s", n ? " " : "", what, name);
  pthread_mutex_unlock(&events_mu);
}

typedef struct {
  const char *name;
  bool fail_start;
  bool raise_on_stop; /* a second SIGTERM while stopping */
  bool raise_sigterm; /* on start: as if the orchestrator sent SIGTERM */
  /* stop blocks until released */
  bool block_stop;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool released;
  struct po_Manager *other; /* on start: run this second manager while ours runs */
  int other_rc;
} Fake;

static bool fake_start(void *ctx, po_CtlStatus *st) {
  Fake *f = ctx;
  if (f->fail_start) return po_CtlStatus_Set(st, kPo_Ctl_System, "port in use");
  record("start", f->name);
  if (f->other) f->other_rc = po_Manager_Run(f->other);
  if (f->raise_sigterm) raise(SIGTERM);
  return true;
}

static bool fake_stop(void *ctx, int64_t deadline) {
  Fake *f = ctx;
  record("stop", f->name);
  if (f->raise_on_stop) raise(SIGTERM);
  if (f->block_stop) {
    pthread_mutex_lock(&f->mu);
    while (!f->released) pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
  }
  return true;
}

static bool release_lease(void *ctx, int64_t deadline) {
  record("release", "lease");
  return true;
}

static po_Runnable runnable(Fake *f, bool leader) {
  return (po_Runnable){.name = f->name, .start = fake_start, .stop = fake_stop, .ctx = f,
                       .needs_leader = leader};
}

#define FAKE(n) {.name = (n), .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER}

static double leader_gauge(po_Metrics *m) {
  return po_Series_Value(po_Family_WithLabels(po_Metrics_Find(m, PO_M_LEADER), "po-lock"));
}

static void start_stop_order_and_leadership(void **state) {
  events[0] = '\0';
  Fake informers = FAKE("informers"), ctrl = FAKE("controller"), ops = FAKE("ops"),
       ctrl2 = FAKE("controller2");
  po_Metrics *m = po_Metrics_New();
  po_CtlStatus st;
  po_Manager *mgr = po_Manager_New(&(po_ManagerOptions){.metrics = m, .lease_name = "po-lock",
                                                        .release_lease = release_lease},
                                   &st);
  assert_non_null(mgr);
  po_Runnable r[] = {runnable(&informers, false), runnable(&ctrl, true), runnable(&ops, false),
                     runnable(&ctrl2, true)};
  r[0].stop_early = true; /* watches stop before the workers drain */
  for (int i = 0; i < 4; i++) assert_true(po_Manager_Add(mgr, &r[i], &st));
  assert_true(po_Manager_Start(mgr, &st));
  assert_string_equal(events, "start:informers start:ops");
  assert_false(po_Manager_IsLeader(mgr));
  assert_true(leader_gauge(m) == 0);
  assert_false(po_Manager_Add(mgr, &r[0], &st)); /* too late */

  assert_true(po_Manager_BecameLeader(mgr, &st));
  assert_true(po_Manager_IsLeader(mgr));
  assert_true(leader_gauge(m) == 1);
  assert_string_equal(events, "start:informers start:ops start:controller start:controller2");
  events[0] = '\0';
  po_Manager_LostLeadership(mgr);
  assert_string_equal(events, "stop:controller2 stop:controller");
  assert_true(leader_gauge(m) == 0);
  events[0] = '\0';
  assert_true(po_Manager_BecameLeader(mgr, &st));
  assert_true(po_Manager_Stop(mgr));
  assert_string_equal(events,
                      "start:controller start:controller2 stop:informers stop:controller2 "
                      "stop:controller release:lease stop:ops");
  assert_true(leader_gauge(m) == 0);
  /* After Stop, becoming leader does nothing. */
  events[0] = '\0';
  assert_true(po_Manager_BecameLeader(mgr, &st));
  assert_string_equal(events, "");
  po_Manager_Free(mgr);
  po_Metrics_Free(m);
}

static void a_failed_start_stops_what_started(void **state) {
  events[0] = '\0';
  Fake a = FAKE("a"), b = FAKE("b");
  b.fail_start = true;
  po_Metrics *m = po_Metrics_New();
  po_CtlStatus st;
  po_Manager *mgr = po_Manager_New(&(po_ManagerOptions){.metrics = m}, &st);
  po_Runnable r[] = {runnable(&a, false), runnable(&b, false)};
  for (int i = 0; i < 2; i++) assert_true(po_Manager_Add(mgr, &r[i], &st));
  assert_false(po_Manager_Start(mgr, &st));
  assert_int_equal(st.code, kPo_Ctl_Start);
  assert_string_equal(st.message, "runnable \"b\" failed to start: port in use");
  assert_string_equal(events, "start:a stop:a");
  /* The same for a leader runnable: BecameLeader reports it. */
  events[0] = '\0';
  po_Manager *mgr2 = po_Manager_New(&(po_ManagerOptions){.metrics = m}, &st);
  po_Runnable r2[] = {runnable(&a, true), runnable(&b, true)};
  for (int i = 0; i < 2; i++) assert_true(po_Manager_Add(mgr2, &r2[i], &st));
  assert_true(po_Manager_Start(mgr2, &st));
  assert_false(po_Manager_BecameLeader(mgr2, &st));
  assert_string_equal(events, "start:a stop:a");
  po_Manager_Free(mgr2);
  po_Manager_Free(mgr);
  po_Metrics_Free(m);
}

static void run_stops_on_request_and_on_sigterm(void **state) {
  po_Metrics *m = po_Metrics_New();
  po_CtlStatus st;
  for (int signal_it = 0; signal_it < 2; signal_it++) {
    events[0] = '\0';
    Fake a = FAKE("a");
    a.raise_sigterm = signal_it;
    po_Manager *mgr = po_Manager_New(&(po_ManagerOptions){.metrics = m}, &st);
    po_Runnable r = runnable(&a, false);
    assert_true(po_Manager_Add(mgr, &r, &st));
    if (!signal_it) po_Manager_RequestStop(mgr); /* already pending when Run starts waiting */
    assert_int_equal(po_Manager_Run(mgr), 0);
    assert_string_equal(events, "start:a stop:a");
    po_Manager_Free(mgr);
  }
  /* The handlers were restored: SIGTERM is back to its default disposition. */
  struct sigaction sa;
  sigaction(SIGTERM, NULL, &sa);
  assert_true(sa.sa_handler == SIG_DFL);
  po_Metrics_Free(m);
}

static void *release_later(void *arg) {
  Fake *f = arg;
  pthread_mutex_lock(&f->mu);
  f->released = true;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

static void run_exits_non_zero_after_the_deadline(void **state) {
  events[0] = '\0';
  Fake stuck = FAKE("stuck");
  stuck.block_stop = true;
  po_Metrics *m = po_Metrics_New();
  po_CtlStatus st;
  po_Manager *mgr = po_Manager_New(
      &(po_ManagerOptions){.metrics = m, .stop_timeout_ns = 50 * PO_NS_PER_MS}, &st);
  po_Runnable r = runnable(&stuck, false);
  assert_true(po_Manager_Add(mgr, &r, &st));
  po_Manager_RequestStop(mgr);
  assert_int_equal(po_Manager_Run(mgr), 1);
  /* Let the stuck stop finish; a second Stop returns once the stopper is done with mgr. */
  pthread_t t;
  pthread_create(&t, NULL, release_later, &stuck);
  pthread_join(t, NULL);
  po_Manager_Stop(mgr);
  assert_string_equal(events, "start:stuck stop:stuck");
  po_Manager_Free(mgr);
  po_Metrics_Free(m);
}

static void a_second_signal_exits_at_once(void **state) {
  events[0] = '\0';
  Fake stuck = FAKE("stuck");
  stuck.block_stop = true;
  stuck.raise_on_stop = true;
  po_Metrics *m = po_Metrics_New();
  po_CtlStatus st;
  /* A long deadline: only the second signal can end Run early. */
  po_Manager *mgr = po_Manager_New(
      &(po_ManagerOptions){.metrics = m, .stop_timeout_ns = 3600 * PO_NS_PER_S}, &st);
  po_Runnable r = runnable(&stuck, false);
  assert_true(po_Manager_Add(mgr, &r, &st));
  po_Manager_RequestStop(mgr);
  assert_int_equal(po_Manager_Run(mgr), 1);
  pthread_t t;
  pthread_create(&t, NULL, release_later, &stuck);
  pthread_join(t, NULL);
  po_Manager_Stop(mgr);
  assert_string_equal(events, "start:stuck stop:stuck");
  po_Manager_Free(mgr);
  po_Metrics_Free(m);
}

/* SIGTERM belongs to the process: while one manager runs, a second Run is refused (and starts
 * nothing) rather than taking the signal pipe, so the first still stops on SIGTERM. */
static void a_second_run_is_refused_and_signals_stay_with_the_first(void **state) {
  events[0] = '\0';
  po_Metrics *m = po_Metrics_New();
  po_CtlStatus st;
  po_Manager *first = po_Manager_New(&(po_ManagerOptions){.metrics = m}, &st);
  po_Manager *second = po_Manager_New(&(po_ManagerOptions){.metrics = m}, &st);
  Fake a = FAKE("a"), b = FAKE("b");
  a.other = second;
  a.raise_sigterm = true; /* after the second Run returned: must reach the first manager */
  po_Runnable ra = runnable(&a, false), rb = runnable(&b, false);
  assert_true(po_Manager_Add(first, &ra, &st));
  assert_true(po_Manager_Add(second, &rb, &st));
  po_Manager_RequestStop(second); /* were it let run, it would return at once */
  assert_int_equal(po_Manager_Run(first), 0);
  assert_int_equal(a.other_rc, 1);
  assert_string_equal(events, "start:a stop:a");
  /* Once the first has returned, the second may run. */
  assert_int_equal(po_Manager_Run(second), 0);
  assert_string_equal(events, "start:a stop:a start:b stop:b");
  po_Manager_Free(second);
  po_Manager_Free(first);
  po_Metrics_Free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(start_stop_order_and_leadership),
      cmocka_unit_test(a_failed_start_stops_what_started),
      cmocka_unit_test(run_stops_on_request_and_on_sigterm),
      cmocka_unit_test(run_exits_non_zero_after_the_deadline),
      cmocka_unit_test(a_second_signal_exits_at_once),
      cmocka_unit_test(a_second_run_is_refused_and_signals_stay_with_the_first),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
