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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"
#include "po/runtime/clock.h"

po_Served po_App_IstioServed(po_App *app, po_CtlStatus *st) {
  return po_App_KindServed(app, kPo_EnvoyFiltersRef, st);
}

po_Served po_App_KindServed(po_App *app, po_KubeRef ref, po_CtlStatus *st) {
  ref.ns = app->io.namespaces[0][0] ? app->io.namespaces[0] : NULL;
  po_KubeListOptions lo = {.limit = 1};
  json_object *out = NULL;
  po_CtlStatus_Clear(st);
  bool ok = po_KubeClient_List(app->io.client, &ref, &lo, &out, st);
  json_object_put(out);
  if (ok) return kPo_Served_Yes;
  /* a List of a served kind answers 200 even in a namespace that does not exist: a 404 is
   * discovery's "no such resource" */
  return st->code == kPo_Ctl_NotFound ? kPo_Served_No : kPo_Served_Unknown;
}

/* Every target of an Istio kind the index links a PropertyOverride to. */
static void enqueue_istio_targets(po_App *app) {
  static const po_TargetKind kinds[] = {kPo_TargetKind_Service, kPo_TargetKind_IstioMesh};
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
  for (size_t i = 0; i < n && !po_Periodic_Stopping(&d->every); i++) {
    int64_t left_ms = (deadline - po_RtClock_Now(po_RtClock_Real())) / PO_NS_PER_MS;
    po_Informer_WaitForSync(all[i], left_ms > 0 ? (long)left_ms : 0);
  }
  atomic_store_explicit(&app->io.istio, true, memory_order_release);
  po_Series_Set(po_Family_WithLabels(app->istio_enabled), 1);
  po_Log_Info(app->log, "Istio targets programmed: EnvoyFilters are served now", po_Str("reason", "--istio=auto"));
  enqueue_istio_targets(app);
}

/* One check: false (done) once EnvoyFilters are served, whether turning on worked or not (it
 * said why; the informers it made stay stopped). */
static bool check(void *ctx) {
  po_IstioDetect *d = ctx;
  po_CtlStatus st;
  po_Served s = po_App_IstioServed(d->app, &st);
  if (s != kPo_Served_Yes) {
    po_Log_Debug(d->app->log, s == kPo_Served_No ? "Istio targets still not programmed: EnvoyFilters are not served"
                                                 : "Istio targets still not programmed: could not tell whether EnvoyFilters are served",
                 po_Str("reason", st.message));
    return true;
  }
  turn_on(d);
  return false;
}

static void after_stop(void *ctx) {
  po_IstioDetect *d = ctx;
  if (d->started) stop_informers(d->app);
}

bool po_IstioDetect_Init(po_IstioDetect *d, po_App *app, int64_t interval_ns) {
  *d = (po_IstioDetect){.app = app};
  return po_Periodic_Init(&d->every, "istio-detection", interval_ns, check, after_stop, d);
}

void po_IstioDetect_Destroy(po_IstioDetect *d) { po_Periodic_Destroy(&d->every); }

/* Its stop (periodic.c) joins the thread, then stops the informers it started; po_App_Free frees
 * them with the others. */
po_Runnable po_IstioDetect_Runnable(po_IstioDetect *d) { return po_Periodic_Runnable(&d->every); }
