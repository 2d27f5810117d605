/* An injectable monotonic clock, so that tests drive time instead of sleeping.
 *
 * Everything in the runtime that waits (the workqueue's timed requeues, the manager's stop
 * deadline) waits on its own condition variable through po_RtClock_WaitUntil, never in a polling
 * loop. The real clock uses pthread_cond_timedwait on CLOCK_MONOTONIC; the fake clock waits
 * without a timeout and wakes every watched condition variable when a test advances it. */
#ifndef PO_RUNTIME_CLOCK_H
#define PO_RUNTIME_CLOCK_H

#include <pthread.h>
#include <stdint.h>

#include "po/base/clock.h"

#define PO_NS_PER_MS INT64_C(1000000)
#define PO_NS_PER_S INT64_C(1000000000)
#define PO_FOREVER INT64_MAX

typedef struct po_RtClock po_RtClock;

/* The process's monotonic clock (shared, never freed). */
po_RtClock *po_RtClock_Real(void);

/* Nanoseconds on this clock's monotonic time line. */
int64_t po_RtClock_Now(po_RtClock *c);

/* This clock's time as the controller's po_Clock, for the Kubernetes client and the lease
 * elector: the system clock for the real one; for a fake one its time (wall = monotonic), and a
 * sleep that returns once the test has advanced it that far. Valid as long as the clock. */
const po_Clock *po_RtClock_Source(po_RtClock *c);

/* Waits on cond (mu held, as for pthread_cond_wait) until woken or until the clock reaches
 * deadline (absolute, PO_FOREVER for none). May return early: callers re-check their predicate. */
void po_RtClock_WaitUntil(po_RtClock *c, pthread_cond_t *cond, pthread_mutex_t *mu, int64_t deadline);

/* A condition variable that waits on this clock is registered while it may wait, so a fake
 * clock can wake it when time moves. cond must have been made by po_RtClock_InitCond. */
void po_RtClock_Watch(po_RtClock *c, pthread_cond_t *cond, pthread_mutex_t *mu);
void po_RtClock_Unwatch(po_RtClock *c, pthread_cond_t *cond);

/* Initialises cond for timed waits on the monotonic clock. Returns 0 or an errno value. */
int po_RtClock_InitCond(pthread_cond_t *cond);

/* A fake clock for tests: starts at start_ns and moves only when advanced. */
po_RtClock *po_FakeClock_New(int64_t start_ns);
void po_FakeClock_Free(po_RtClock *c);
/* Moves time forward by delta_ns and wakes every watched condition variable. */
void po_FakeClock_Advance(po_RtClock *c, int64_t delta_ns);
/* Blocks until at least n threads wait on this fake clock (tests use it to know a worker has
 * gone to sleep before advancing time). */
void po_FakeClock_AwaitWaiters(po_RtClock *c, int n);

#endif
