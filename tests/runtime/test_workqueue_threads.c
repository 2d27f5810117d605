/* Workqueue with threads: blocking Get woken by time, shutdown with drain, and no key processed
 * by two workers at once under concurrent adds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/workqueue.h"

#define MS INT64_C(1000000)

/* A gate the workers wait on until the test opens it. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int started;
  bool open;
} Gate;

static Gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};

typedef struct {
  po_Workqueue *q;
  char got[64];
  int processed;
} Worker;

static void *gated_worker(void *arg) {
  Worker *w = arg;
  const char *key;
  while (po_Workqueue_Get(w->q, &key) == kPo_Workqueue_Item) {
    snprintf(w->got, sizeof w->got, "%s", key);
    pthread_mutex_lock(&gate.mu);
    gate.started++;
    pthread_cond_broadcast(&gate.cv);
    while (!gate.open) pthread_cond_wait(&gate.cv, &gate.mu);
    pthread_mutex_unlock(&gate.mu);
    w->processed++;
    po_Workqueue_Done(w->q, key);
  }
  return NULL;
}

static void wait_started(int n) {
  pthread_mutex_lock(&gate.mu);
  while (gate.started < n) pthread_cond_wait(&gate.cv, &gate.mu);
  pthread_mutex_unlock(&gate.mu);
}

static void open_gate(void) {
  pthread_mutex_lock(&gate.mu);
  gate.open = true;
  pthread_cond_broadcast(&gate.cv);
  pthread_mutex_unlock(&gate.mu);
}

static void reset_gate(void) {
  gate.started = 0;
  gate.open = false;
}

static void blocking_get_wakes_when_the_fake_clock_passes_the_delay(void **state) {
  reset_gate();
  po_RtClock *clock = po_FakeClock_New(0);
  po_WorkqueueOptions o = {.clock = clock};
  po_Workqueue *q = po_Workqueue_New(&o);
  Worker w = {.q = q};
  pthread_t t;
  open_gate();
  po_Workqueue_AddAfter(q, "ns/later", 5000 * MS);
  assert_int_equal(pthread_create(&t, NULL, gated_worker, &w), 0);
  po_FakeClock_AwaitWaiters(clock, 1); /* the worker sleeps until the requeue is due */
  assert_int_equal(w.processed, 0);
  po_FakeClock_Advance(clock, 5000 * MS);
  wait_started(1);
  po_Workqueue_ShutDownWithDrain(q, PO_FOREVER);
  pthread_join(t, NULL);
  assert_string_equal(w.got, "ns/later");
  assert_int_equal(w.processed, 1);
  po_Workqueue_Free(q);
  po_FakeClock_Free(clock);
}

typedef struct {
  po_Workqueue *q;
  int64_t deadline;
  atomic_bool done;
  bool drained;
} Drainer;

static void *drainer(void *arg) {
  Drainer *d = arg;
  d->drained = po_Workqueue_ShutDownWithDrain(d->q, d->deadline);
  atomic_store(&d->done, true);
  return NULL;
}

static void shutdown_drains_in_flight_items(void **state) {
  reset_gate();
  po_Workqueue *q = po_Workqueue_New(NULL);
  Worker w[2] = {{.q = q}, {.q = q}};
  pthread_t t[2], d;
  po_Workqueue_Add(q, "ns/a");
  po_Workqueue_Add(q, "ns/b");
  po_Workqueue_Add(q, "ns/c"); /* never started: dropped by the shutdown */
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, gated_worker, &w[i]), 0);
  wait_started(2);
  po_Workqueue_ShutDown(q);
  Drainer dr = {.q = q, .deadline = PO_FOREVER};
  assert_int_equal(pthread_create(&d, NULL, drainer, &dr), 0);
  /* Shut down: Get reports it, while the two in flight still run. */
  const char *key;
  assert_int_equal(po_Workqueue_Get(q, &key), kPo_Workqueue_ShuttingDown);
  assert_false(atomic_load(&dr.done)); /* cannot be drained: both workers hold their key */
  open_gate();
  pthread_join(d, NULL);
  assert_true(dr.drained);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  assert_int_equal(w[0].processed + w[1].processed, 2);
  po_Workqueue_Free(q);
}

static void drain_gives_up_at_its_deadline(void **state) {
  reset_gate();
  po_RtClock *clock = po_FakeClock_New(0);
  po_WorkqueueOptions o = {.clock = clock};
  po_Workqueue *q = po_Workqueue_New(&o);
  Worker w = {.q = q};
  pthread_t t, d;
  po_Workqueue_Add(q, "ns/stuck");
  assert_int_equal(pthread_create(&t, NULL, gated_worker, &w), 0);
  wait_started(1);
  Drainer dr = {.q = q, .deadline = 30000 * MS};
  assert_int_equal(pthread_create(&d, NULL, drainer, &dr), 0);
  po_FakeClock_AwaitWaiters(clock, 1);
  po_FakeClock_Advance(clock, 30000 * MS);
  pthread_join(d, NULL);
  assert_false(dr.drained);
  open_gate();
  pthread_join(t, NULL);
  po_Workqueue_Free(q);
  po_FakeClock_Free(clock);
}

/* Stress: producers add 50 keys over and over; two workers check that no key is ever processed
 * twice at once and that every key's last add is followed by a run. */
#define N_KEYS 50
static atomic_int in_flight[N_KEYS];
static atomic_int runs[N_KEYS];
static atomic_bool overlap;

static void *checking_worker(void *arg) {
  po_Workqueue *q = arg;
  const char *key;
  while (po_Workqueue_Get(q, &key) == kPo_Workqueue_Item) {
    int i = atoi(key + 3);
    if (atomic_fetch_add(&in_flight[i], 1) != 0) atomic_store(&overlap, true);
    sched_yield();
    atomic_fetch_sub(&in_flight[i], 1);
    atomic_fetch_add(&runs[i], 1);
    po_Workqueue_Done(q, key);
  }
  return NULL;
}

static void *producer(void *arg) {
  po_Workqueue *q = arg;
  char key[16];
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < N_KEYS; i++) {
      snprintf(key, sizeof key, "ns/%d", i);
      po_Workqueue_Add(q, key);
    }
  }
  return NULL;
}

static void concurrent_adds_never_overlap_a_key(void **state) {
  po_Workqueue *q = po_Workqueue_New(NULL);
  pthread_t w[2], p[3];
  for (int i = 0; i < 2; i++) pthread_create(&w[i], NULL, checking_worker, q);
  for (int i = 0; i < 3; i++) pthread_create(&p[i], NULL, producer, q);
  for (int i = 0; i < 3; i++) pthread_join(p[i], NULL);
  /* Let the workers empty the queue (bounded: nothing adds any more), then stop them. */
  while (po_Workqueue_Len(q) > 0) sched_yield();
  po_Workqueue_ShutDownWithDrain(q, PO_FOREVER);
  for (int i = 0; i < 2; i++) pthread_join(w[i], NULL);
  assert_false(atomic_load(&overlap));
  for (int i = 0; i < N_KEYS; i++) assert_true(atomic_load(&runs[i]) >= 1);
  po_Workqueue_Free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(blocking_get_wakes_when_the_fake_clock_passes_the_delay),
      cmocka_unit_test(shutdown_drains_in_flight_items),
      cmocka_unit_test(drain_gives_up_at_its_deadline),
      cmocka_unit_test(concurrent_adds_never_overlap_a_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
