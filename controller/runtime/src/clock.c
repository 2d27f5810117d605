/* The real monotonic clock and the fake one tests drive. */
#include "po/runtime/clock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  pthread_cond_t *cond;
  pthread_mutex_t *mu;
} Watched;

struct po_RtClock {
  bool fake;
  po_Clock source; /* fake clocks: this clock's time as a po_Clock (po_RtClock_Source) */
  /* Fake clock state. `mu` guards now/watched/waiters; `advance_mu` serialises Advance against
   * Unwatch so a watched condition variable is never signalled after it was unregistered. */
  pthread_mutex_t mu;
  pthread_mutex_t advance_mu;
  pthread_cond_t waiters_cv;
  int64_t now;
  Watched *watched;
  size_t n_watched, cap_watched;
  int waiters;
};

/* Read-only after compile time: the real clock has no state of its own. */
static po_RtClock real_clock = {.fake = false};

po_RtClock *po_RtClock_Real(void) { return &real_clock; }

int po_RtClock_InitCond(pthread_cond_t *cond) {
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc) return rc;
  rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (!rc) rc = pthread_cond_init(cond, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

/* One clock: the real one reads the same CLOCK_MONOTONIC source as everything else, through
 * po_Clock_System. (Its condition variables time out on CLOCK_MONOTONIC too: InitCond.) */
static int64_t monotonic_ns(void) {
  const po_Clock *k = po_Clock_System();
  return k->monotonic_ns(k->ctx);
}

int64_t po_RtClock_Now(po_RtClock *c) {
  if (!c || !c->fake) return monotonic_ns();
  pthread_mutex_lock(&c->mu);
  int64_t now = c->now;
  pthread_mutex_unlock(&c->mu);
  return now;
}

void po_RtClock_WaitUntil(po_RtClock *c, pthread_cond_t *cond, pthread_mutex_t *mu, int64_t deadline) {
  if (!c || !c->fake) {
    if (deadline == PO_FOREVER) {
      pthread_cond_wait(cond, mu);
      return;
    }
    struct timespec ts = {.tv_sec = (time_t)(deadline / PO_NS_PER_S),
                          .tv_nsec = (long)(deadline % PO_NS_PER_S)};
    if (deadline < 0) ts = (struct timespec){0, 0};
    pthread_cond_timedwait(cond, mu, &ts);
    return;
  }
  pthread_mutex_lock(&c->mu);
  if (c->now >= deadline) {
    pthread_mutex_unlock(&c->mu);
    return;
  }
  c->waiters++;
  pthread_cond_broadcast(&c->waiters_cv);
  pthread_mutex_unlock(&c->mu);
  /* No lost wake-up: Advance changes `now` first, then takes `mu` before broadcasting, and we hold
   * `mu` from our caller's check of the time until pthread_cond_wait releases it. */
  pthread_cond_wait(cond, mu);
  pthread_mutex_lock(&c->mu);
  c->waiters--;
  pthread_mutex_unlock(&c->mu);
}

void po_RtClock_Watch(po_RtClock *c, pthread_cond_t *cond, pthread_mutex_t *mu) {
  if (!c || !c->fake) return;
  pthread_mutex_lock(&c->mu);
  if (c->n_watched == c->cap_watched) {
    size_t cap = c->cap_watched ? c->cap_watched * 2 : 8;
    Watched *w = realloc(c->watched, cap * sizeof *w);
    if (!w) abort(); /* a test clock: running out of memory here is not worth a code path */
    c->watched = w;
    c->cap_watched = cap;
  }
  c->watched[c->n_watched++] = (Watched){cond, mu};
  pthread_mutex_unlock(&c->mu);
}

void po_RtClock_Unwatch(po_RtClock *c, pthread_cond_t *cond) {
  if (!c || !c->fake) return;
  pthread_mutex_lock(&c->advance_mu);
  pthread_mutex_lock(&c->mu);
  for (size_t i = 0; i < c->n_watched; i++) {
    if (c->watched[i].cond == cond) {
      c->watched[i] = c->watched[--c->n_watched];
      break;
    }
  }
  pthread_mutex_unlock(&c->mu);
  pthread_mutex_unlock(&c->advance_mu);
}

/* ---- a fake clock as a po_Clock: the client and the lease elector run on test time too ---- */

static int64_t fake_now(void *ctx) { return po_RtClock_Now(ctx); }

/* Waits until the test has advanced the clock by ns (as a real sleep waits for real time). */
static void fake_sleep(void *ctx, int64_t ns) {
  po_RtClock *c = ctx;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  pthread_mutex_init(&mu, NULL);
  pthread_cond_init(&cond, NULL);
  po_RtClock_Watch(c, &cond, &mu);
  pthread_mutex_lock(&mu);
  int64_t until = po_RtClock_Now(c) + ns;
  while (po_RtClock_Now(c) < until) po_RtClock_WaitUntil(c, &cond, &mu, until);
  pthread_mutex_unlock(&mu);
  po_RtClock_Unwatch(c, &cond);
  pthread_cond_destroy(&cond);
  pthread_mutex_destroy(&mu);
}

const po_Clock *po_RtClock_Source(po_RtClock *c) {
  return c && c->fake ? &c->source : po_Clock_System();
}

po_RtClock *po_FakeClock_New(int64_t start_ns) {
  po_RtClock *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fake = true;
  c->source = (po_Clock){.monotonic_ns = fake_now, .wall_ns = fake_now, .sleep_ns = fake_sleep, .ctx = c};
  c->now = start_ns;
  pthread_mutex_init(&c->mu, NULL);
  pthread_mutex_init(&c->advance_mu, NULL);
  pthread_cond_init(&c->waiters_cv, NULL);
  return c;
}

void po_FakeClock_Free(po_RtClock *c) {
  if (!c || !c->fake) return;
  pthread_mutex_destroy(&c->mu);
  pthread_mutex_destroy(&c->advance_mu);
  pthread_cond_destroy(&c->waiters_cv);
  free(c->watched);
  free(c);
}

void po_FakeClock_Advance(po_RtClock *c, int64_t delta_ns) {
  pthread_mutex_lock(&c->advance_mu);
  pthread_mutex_lock(&c->mu);
  c->now += delta_ns;
  size_t n = c->n_watched;
  Watched *copy = n ? malloc(n * sizeof *copy) : NULL;
  if (n && !copy) abort();
  if (n) memcpy(copy, c->watched, n * sizeof *copy);
  pthread_mutex_unlock(&c->mu);
  for (size_t i = 0; i < n; i++) {
    pthread_mutex_lock(copy[i].mu);
    pthread_cond_broadcast(copy[i].cond);
    pthread_mutex_unlock(copy[i].mu);
  }
  free(copy);
  pthread_mutex_unlock(&c->advance_mu);
}

void po_FakeClock_AwaitWaiters(po_RtClock *c, int n) {
  pthread_mutex_lock(&c->mu);
  while (c->waiters < n) pthread_cond_wait(&c->waiters_cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
}
