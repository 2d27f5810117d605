/* Self-managed webhook certificates, checked every interval (12 hours by default; they are
 * renewed 30 days before expiry, so a missed check costs nothing). The webhook server re-reads
 * the files itself. A runnable of every replica: the manager's stop wakes the wait and joins the
 * thread, so nothing outlives the app. */
#include <pthread.h>

#include "app_internal.h"
#include "po/runtime/clock.h"

static void *renew_loop(void *arg) {
  po_Renewal *r = arg;
  po_RtClock *clock = po_RtClock_Real();
  pthread_mutex_lock(&r->mu);
  for (;;) {
    int64_t due = po_RtClock_Now(clock) + r->interval_ns;
    while (!r->stopping && po_RtClock_Now(clock) < due) po_RtClock_WaitUntil(clock, &r->cond, &r->mu, due);
    if (r->stopping) break;
    pthread_mutex_unlock(&r->mu);
    char err[512];
    bool changed;
    if (!po_SelfCert_Ensure(r->client, &r->opt, &changed, err, sizeof err)) {
      po_Log_Error(r->log, "renewing the webhook certificates", po_Str("error", err));
    } else if (changed) {
      po_Log_Info(r->log, "webhook certificates renewed");
    }
    pthread_mutex_lock(&r->mu);
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

bool po_Renewal_Init(po_Renewal *r, po_KubeClient *c, const po_SelfCertOptions *o, po_Logger *log, int64_t interval_ns) {
  *r = (po_Renewal){.client = c, .opt = *o, .log = log, .interval_ns = interval_ns};
  if (pthread_mutex_init(&r->mu, NULL) != 0) return false;
  if (po_RtClock_InitCond(&r->cond) != 0) {
    pthread_mutex_destroy(&r->mu);
    return false;
  }
  return true;
}

void po_Renewal_Destroy(po_Renewal *r) {
  pthread_cond_destroy(&r->cond);
  pthread_mutex_destroy(&r->mu);
}

static bool renewal_start(void *ctx, po_CtlStatus *st) {
  po_Renewal *r = ctx;
  r->stopping = false;
  if (pthread_create(&r->thread, NULL, renew_loop, r) != 0) return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot start a thread");
  r->running = true;
  return true;
}

/* Waits for a renewal in flight (its API calls are bounded by the client's timeouts). */
static bool renewal_stop(void *ctx, int64_t deadline) {
  (void)deadline;
  po_Renewal *r = ctx;
  if (!r->running) return true;
  pthread_mutex_lock(&r->mu);
  r->stopping = true;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->mu);
  pthread_join(r->thread, NULL);
  r->running = false;
  return true;
}

po_Runnable po_Renewal_Runnable(po_Renewal *r) {
  /* stop_early: nothing waits on it, and a renewal should not start while the process drains. */
  return (po_Runnable){.name = "certificate-renewal", .start = renewal_start, .stop = renewal_stop, .ctx = r, .stop_early = true};
}
