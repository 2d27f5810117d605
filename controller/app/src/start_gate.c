/* The controller as a leader runnable: its workers start once every cache has synced, never
 * before (controller-runtime's rule), with no timer that lets them start early.
 *
 * A reconcile against a partial PropertyOverride index takes the missing ones for deleted; the
 * reconcile's own gate (po_KubeIO_Synced) refuses to read or write then, but every refusal is a
 * requeue: a bounded wait that expired at 100,000 PropertyOverrides started the workers into
 * 5,000 requeues (issue 26). So the wait has no deadline. It runs on a thread of its own, not in
 * the runnable's start, because the manager holds its lock while runnables start and a stop (a
 * signal, a lost lease) must not wait for a list that may never end; the stop wakes and joins
 * it. Nothing but the caches bounds the wait: a list of 100,000 objects on a loaded server takes
 * minutes, and starting early only trades the wait for requeues. Every 10 s it says which cache
 * it waits for and why (the last list or watch error), so a cache that can never sync (RBAC, a
 * missing CRD) is visible instead of silent; /readyz says the same. */
#include <stdlib.h>
#include <time.h>

#include "app_internal.h"
#include "po/runtime/clock.h"

enum { kGatePollMs = 20, kGateSayS = 10 };

/* Waits until synced (true) or stopped (false), with the lock held between looks. */
static bool wait_synced(po_App *app, po_StartGate *g) {
  int64_t start = po_RtClock_Now(po_RtClock_Real()), said = start;
  while (!g->stopping) {
    if (po_KubeIO_Synced(&app->io, NULL, 0)) return true;
    int64_t now = po_RtClock_Now(po_RtClock_Real());
    if (now - said >= kGateSayS * PO_NS_PER_S) {
      char why[600];
      po_KubeIO_Synced(&app->io, why, sizeof why);
      po_Log_Warn(app->log, "the workers still wait for the caches to sync", po_Str("reason", why),
                  po_Int("waitedMs", (now - start) / PO_NS_PER_MS));
      said = now;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += kGatePollMs * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&g->cond, &g->mu, &until);
  }
  return false;
}

static void *gate_main(void *arg) {
  po_App *app = arg;
  po_StartGate *g = &app->gate;
  int64_t start = po_RtClock_Now(po_RtClock_Real());
  pthread_mutex_lock(&g->mu);
  if (wait_synced(app, g)) {
    double waited = (double)(po_RtClock_Now(po_RtClock_Real()) - start) / 1e9;
    po_CtlStatus st;
    po_CtlStatus_Clear(&st);
    /* Live before the walk of the caches: an event the walk may miss (its object put after the
     * walk passed) finds live set and enqueues itself; one that found it clear was put (and
     * indexed) before, and the walk enqueues it. The walk fills the queue before the workers
     * start: a target is named by its PropertyOverrides and by its own informer, and a worker
     * that had begun its reconcile would run it again for the second name. Every key once, not
     * once per event of the initial lists and again here (issue 26: 721 reconciles of 400
     * targets at a restart of 20,000). Under the lock: a stop either comes before (nothing
     * started) or waits for the start. */
    bool ready = po_Controller_Prepare(app->controller, &st);
    if (ready) {
      atomic_store(&g->live, true);
      po_App_EnqueueAll(app);
    }
    if (ready && po_Controller_Start(app->controller, &st)) {
      g->workers = true;
      po_Series_Set(g->m_wait, waited);
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      po_Series_Set(g->m_started, (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) / 1e6);
      po_Log_Info(app->log, "reconciling as leader: caches synced", po_Int("waitedMs", (int64_t)(waited * 1000)),
                  po_Int("overrides", (int64_t)po_TargetIndex_Count(app->index)));
    } else {
      atomic_store(&g->live, false);
      po_Log_Error(app->log, "the workers did not start: stopping", po_Str("error", st.message));
      po_Manager_RequestStop(app->manager);
    }
  }
  pthread_mutex_unlock(&g->mu);
  return NULL;
}

static bool gate_start(void *ctx, po_CtlStatus *st) {
  po_App *app = ctx;
  po_StartGate *g = &app->gate;
  pthread_mutex_lock(&g->mu);
  g->stopping = false;
  g->workers = false;
  atomic_store(&g->live, false);
  po_Series_Set(g->m_started, 0);
  pthread_mutex_unlock(&g->mu);
  if (pthread_create(&g->thread, NULL, gate_main, app) != 0)
    return po_CtlStatus_Set(st, kPo_Ctl_System, "controller: cannot start the thread that waits for the caches");
  g->running = true;
  return true;
}

static bool gate_stop(void *ctx, int64_t deadline) {
  po_App *app = ctx;
  po_StartGate *g = &app->gate;
  if (!g->running) return true;
  pthread_mutex_lock(&g->mu);
  g->stopping = true;
  atomic_store(&g->live, false);
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->mu);
  pthread_join(g->thread, NULL);
  g->running = false;
  bool ok = !g->workers || po_Controller_Stop(app->controller, deadline);
  g->workers = false;
  return ok;
}

bool po_StartGate_Init(po_StartGate *g, po_Metrics *metrics) {
  *g = (po_StartGate){0};
  atomic_init(&g->live, false);
  po_MetricFamily *wait = po_Metrics_Register(
      metrics, kPo_Metric_Gauge, "propertyoverride_cache_sync_wait_seconds",
      "How long the workers waited, at the last start as leader, for every cache to sync (none starts before).", 0,
      NULL, 0, NULL);
  po_MetricFamily *started = po_Metrics_Register(
      metrics, kPo_Metric_Gauge, "propertyoverride_workers_start_time_seconds",
      "When the workers last started (Unix time), all caches synced; 0 while they wait.", 0, NULL, 0, NULL);
  if (!wait || !started || !(g->m_wait = po_Family_WithLabels(wait)) || !(g->m_started = po_Family_WithLabels(started)))
    return false;
  if (pthread_mutex_init(&g->mu, NULL) != 0) return false;
  if (pthread_cond_init(&g->cond, NULL) != 0) {
    pthread_mutex_destroy(&g->mu);
    return false;
  }
  g->ready = true;
  return true;
}

void po_StartGate_Destroy(po_StartGate *g) {
  if (!g->ready) return;
  pthread_cond_destroy(&g->cond);
  pthread_mutex_destroy(&g->mu);
  g->ready = false;
}

po_Runnable po_App_ControllerRunnable(po_App *app) {
  return (po_Runnable){.name = "controller", .start = gate_start, .stop = gate_stop, .ctx = app, .needs_leader = true};
}
