/* --istio=auto: Istio targets are programmed once the API server serves EnvoyFilters. Checked at
 * start (app.c) and, while not served, again every interval by a thread of this runnable (a List
 * of at most one item: cheap, and bounded by the client's timeouts), so Istio installed after the
 * controller started is picked up without a restart. Once served: the Istio informers are made
 * and started here (and stopped by this runnable's stop), the flag every reader loads first is
 * set (po_KubeIO.istio), the gauge propertyoverride_istio_enabled says 1, a log line says so,
 * and every Istio target is enqueued: its PropertyOverrides said MeshNotEnabled until then.
 * The check then ends; Istio going away again is not followed (its informers say why in the
 * log, and nothing is written where nothing is served). */
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"
#include "po/runtime/clock.h"

bool po_App_IstioServed(po_App *app, char *why, size_t size) {
  po_KubeRef ref = kPo_EnvoyFiltersRef;
  ref.ns = app->io.namespaces[0][0] ? app->io.namespaces[0] : NULL;
  po_KubeListOptions lo = {.limit = 1};
  json_object *out = NULL;
  po_CtlStatus ks;
  po_CtlStatus_Clear(&ks);
  bool ok = po_KubeClient_List(app->io.client, &ref, &lo, &out, &ks);
  json_object_put(out);
  if (!ok && why) snprintf(why, size, "%s", ks.message);
  return ok;
}

/* Every target of an Istio kind the index links a PropertyOverride to. */
static void enqueue_istio_targets(po_App *app) {
  static const po_TargetKind kinds[] = {kPo_TargetService, kPo_TargetIstioMesh};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    size_t n;
    char *block = po_TargetIndex_LinksOfKind(app->index, kinds[k], &n);
    const char *p = block;
    for (size_t i = 0; block && i < n; i++) {
      const char *key = p, *who = key + strlen(key) + 1;
      p = who + strlen(who) + 1;
      if (app->controller) po_Controller_Enqueue(app->controller, key);
    }
    free(block);
  }
}

static bool stopping(po_IstioDetect *d) {
  pthread_mutex_lock(&d->mu);
  bool s = d->stopping;
  pthread_mutex_unlock(&d->mu);
  return s;
}

static bool start_informers(po_IstioDetect *d, po_CtlStatus *st) {
  po_App *app = d->app;
  if (!po_App_NewIstioInformers(app, false, st)) return false;
  d->started = true; /* from here on stop stops whichever of them exist */
  for (size_t i = 0; i < app->io.ns_count; i++) {
    if (!po_Informer_Start(app->io.services[i], st) || !po_Informer_Start(app->io.filters[i], st)) return false;
  }
  return !app->io.root_filters || po_Informer_Start(app->io.root_filters, st);
}

static void stop_informers(po_App *app) {
  for (size_t i = 0; i < app->io.ns_count; i++) {
    if (app->io.services[i]) po_Informer_Stop(app->io.services[i]);
    if (app->io.filters[i]) po_Informer_Stop(app->io.filters[i]);
  }
  if (app->io.root_filters) po_Informer_Stop(app->io.root_filters);
}

/* Served now: informers, then the flag (release: a reader that sees it sees them), then the
 * targets. The caches get a bounded wait first so the first reconciles find them filled; past it
 * the reconcile's own gate (po_KubeIO_Synced) requeues until they are. */
static void turn_on(po_IstioDetect *d) {
  po_App *app = d->app;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  if (!start_informers(d, &st)) {
    po_Log_Error(app->log, "Istio targets not programmed: the EnvoyFilter and Service watches did not start (restart "
                 "the controller to try again)", po_Str("error", st.message));
    return;
  }
  int64_t deadline = po_RtClock_Now(po_RtClock_Real()) + app->sync_timeout_ms * PO_NS_PER_MS;
  po_Informer *all[2 * kPo_MaxNamespaces + 1];
  size_t n = 0;
  for (size_t i = 0; i < app->io.ns_count; i++) all[n++] = app->io.services[i], all[n++] = app->io.filters[i];
  if (app->io.root_filters) all[n++] = app->io.root_filters;
  for (size_t i = 0; i < n && !stopping(d); i++) {
    int64_t left_ms = (deadline - po_RtClock_Now(po_RtClock_Real())) / PO_NS_PER_MS;
    po_Informer_WaitForSync(all[i], left_ms > 0 ? (long)left_ms : 0);
  }
  atomic_store_explicit(&app->io.istio, true, memory_order_release);
  po_Series_Set(po_Family_WithLabels(app->istio_enabled), 1);
  po_Log_Info(app->log, "Istio targets programmed: EnvoyFilters are served now", po_Str("reason", "--istio=auto"));
  enqueue_istio_targets(app);
}

static void *detect_loop(void *arg) {
  po_IstioDetect *d = arg;
  po_RtClock *clock = po_RtClock_Real();
  pthread_mutex_lock(&d->mu);
  for (;;) {
    int64_t due = po_RtClock_Now(clock) + d->interval_ns;
    while (!d->stopping && po_RtClock_Now(clock) < due) po_RtClock_WaitUntil(clock, &d->cond, &d->mu, due);
    if (d->stopping) break;
    pthread_mutex_unlock(&d->mu);
    char why[512];
    bool served = po_App_IstioServed(d->app, why, sizeof why);
    if (served) {
      turn_on(d); /* done either way: on, or said why not (the informers made stay stopped) */
      return NULL;
    }
    po_Log_Debug(d->app->log, "Istio targets still not programmed", po_Str("reason", why));
    pthread_mutex_lock(&d->mu);
  }
  pthread_mutex_unlock(&d->mu);
  return NULL;
}

bool po_IstioDetect_Init(po_IstioDetect *d, po_App *app, int64_t interval_ns) {
  *d = (po_IstioDetect){.app = app, .interval_ns = interval_ns};
  if (pthread_mutex_init(&d->mu, NULL) != 0) return false;
  if (po_RtClock_InitCond(&d->cond) != 0) {
    pthread_mutex_destroy(&d->mu);
    return false;
  }
  return true;
}

void po_IstioDetect_Destroy(po_IstioDetect *d) {
  pthread_cond_destroy(&d->cond);
  pthread_mutex_destroy(&d->mu);
}

static bool detect_start(void *ctx, po_CtlStatus *st) {
  po_IstioDetect *d = ctx;
  d->stopping = false;
  if (pthread_create(&d->thread, NULL, detect_loop, d) != 0) return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot start a thread");
  d->running = true;
  return true;
}

/* Wakes the wait, joins the thread (a check in flight is bounded by the client's timeouts), then
 * stops the informers it started; po_App_Free frees them with the others. */
static bool detect_stop(void *ctx, int64_t deadline) {
  (void)deadline;
  po_IstioDetect *d = ctx;
  if (!d->running) return true;
  pthread_mutex_lock(&d->mu);
  d->stopping = true;
  pthread_cond_broadcast(&d->cond);
  pthread_mutex_unlock(&d->mu);
  pthread_join(d->thread, NULL);
  d->running = false;
  if (d->started) stop_informers(d->app);
  return true;
}

po_Runnable po_IstioDetect_Runnable(po_IstioDetect *d) {
  /* stop_early, as the informers it may start: nothing waits on it */
  return (po_Runnable){.name = "istio-detection", .start = detect_start, .stop = detect_stop, .ctx = d, .stop_early = true};
}
