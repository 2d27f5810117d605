/* A thread that does one thing every interval until its runnable stops it (or the thing says it
 * is done): the certificate renewal (renewal.c) and the Istio check (istio_detect.c). The stop
 * wakes the wait and joins the thread, so nothing outlives the app; a tick in flight is bounded
 * by the client's timeouts. */
#include <pthread.h>

#include "app_internal.h"
#include "po/runtime/clock.h"

static void *loop(void *arg) {
  po_Periodic *p = arg;
  po_RtClock *clock = po_RtClock_Real();
  pthread_mutex_lock(&p->mu);
  for (;;) {
    int64_t due = po_RtClock_Now(clock) + p->interval_ns;
    while (!p->stopping && po_RtClock_Now(clock) < due) po_RtClock_WaitUntil(clock, &p->cond, &p->mu, due);
    if (p->stopping) break;
    pthread_mutex_unlock(&p->mu);
    bool again = p->tick(p->ctx);
    pthread_mutex_lock(&p->mu);
    if (!again) break;
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

bool po_Periodic_Init(po_Periodic *p, const char *name, int64_t interval_ns, bool (*tick)(void *ctx),
                      void (*after_stop)(void *ctx), void *ctx) {
  *p = (po_Periodic){.name = name, .interval_ns = interval_ns, .tick = tick, .after_stop = after_stop, .ctx = ctx};
  if (pthread_mutex_init(&p->mu, NULL) != 0) return false;
  if (po_RtClock_InitCond(&p->cond) != 0) {
    pthread_mutex_destroy(&p->mu);
    return false;
  }
  return true;
}

void po_Periodic_Destroy(po_Periodic *p) {
  pthread_cond_destroy(&p->cond);
  pthread_mutex_destroy(&p->mu);
}

bool po_Periodic_Stopping(po_Periodic *p) {
  pthread_mutex_lock(&p->mu);
  bool s = p->stopping;
  pthread_mutex_unlock(&p->mu);
  return s;
}

static bool periodic_start(void *ctx, po_CtlStatus *st) {
  po_Periodic *p = ctx;
  p->stopping = false;
  if (pthread_create(&p->thread, NULL, loop, p) != 0) return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot start a thread");
  p->running = true;
  return true;
}

static bool periodic_stop(void *ctx, int64_t deadline) {
  (void)deadline;
  po_Periodic *p = ctx;
  if (!p->running) return true;
  pthread_mutex_lock(&p->mu);
  p->stopping = true;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  p->running = false;
  if (p->after_stop) p->after_stop(p->ctx);
  return true;
}

po_Runnable po_Periodic_Runnable(po_Periodic *p) {
  /* stop_early: nothing waits on it, and no tick should start while the process drains */
  return (po_Runnable){.name = p->name, .start = periodic_start, .stop = periodic_stop, .ctx = p, .stop_early = true};
}
