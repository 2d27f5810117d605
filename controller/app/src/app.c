/* Building the controller process from its options: client, metrics, informers, controller,
 * leader election, webhook, certificate renewal and ops server, each registered with the
 * manager in the order it starts. */
#include "po/app/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_internal.h"
#include "po/base/json.h"
#include "po/meshes/eg.h"

void po_AppOptions_Init(po_AppOptions *o) {
  *o = (po_AppOptions){.workers = 8, .target_batch_window_s = 2, .target_burst_quiet_s = 0.25,
                       .target_burst_max_s = 3, .consul_sync_require = true,
                       .consul_sync_timeout_s = 120, .qps = 500, .burst = 1000, .webhook_address = ":9443",
                       .secret = "propertyoverride-webhook-cert", .service = "propertyoverride-webhook",
                       .webhook_config = "propertyoverride", .cert_dir = "/tmp/propertyoverride-webhook",
                       .probe_address = ":8081", .leader_elect = true, .lease_name = "propertyoverride-controller",
                       .lease_s = 15, .renew_deadline_s = 10, .retry_period_s = 2, .grace_s = 30, .istio_recheck_s = 60,
                       .log_level = kPo_LogLevel_Info};
}

/* ---- observers: the client's requests and the webhook's answers, into this app's registry ---- */

static void observe_request(void *ctx, const char *method, long code, double seconds) {
  (void)seconds;
  po_App *app = ctx;
  po_Metrics_ObserveRequestIn(app->metrics, (int)code, method, po_KubeConfig_Server(app->cfg));
}

static void observe_webhook(void *ctx, int status, bool allowed, double seconds) {
  po_App *app = ctx;
  char code[16];
  snprintf(code, sizeof code, "%d", status);
  po_Series_Inc(po_Family_WithLabels(app->wh_requests, code, allowed ? "true" : "false"));
  po_Series_Observe(po_Family_WithLabels(app->wh_latency), seconds);
}

/* Called with the budget's lock held: only the series are touched. */
static void observe_budget(void *ctx, size_t in_flight, bool refusal) {
  po_App *app = ctx;
  if (refusal) po_Series_Inc(app->wh_refusals);
  else po_Series_Set(app->wh_inflight, (double)in_flight);
}

static void observe_mutate(void *ctx, const char *outcome) {
  po_App *app = ctx;
  po_Series_Inc(po_Family_WithLabels(app->wh_mutations, outcome));
}

/* Whether a PropertyOverride is one this controller claims (po/webhook/mutate.h): in a namespace
 * it watches (any other it never reconciles, so a finalizer there would hold the deletion for
 * good); a new one by the reconcile's own rule over the tenancy policy, one that holds the
 * finalizer when it names a target at all (its reconcile releases the finalizer of a deleted
 * one, refused or not). No cache is read. */
static bool claims(void *ctx, const json_object *object, bool held) {
  po_App *app = ctx;
  const char *ns = po_Json_Meta(object, "namespace");
  bool watched = false;
  for (size_t i = 0; i < app->io.ns_count && !watched; i++)
    watched = !app->io.namespaces[i][0] || !strcmp(app->io.namespaces[i], ns);
  if (!watched) return false;
  if (!held) return po_Reconcile_Claims(&app->tenancy, object);
  char key[600];
  po_Reconcile_OverrideKey(object, key, sizeof key);
  return key[0] != '\0';
}

/* The mutating webhook's question (po/webhook/mutate.h), answered by the reconciler's own load
 * and plan over this replica's caches: every replica runs the informers and keeps the index
 * and the compiled forms, leader or not, so any replica the API server calls can answer. */
static po_MutateDecision desired(void *ctx, po_TargetKind kind, const json_object *object, json_object **extensions,
                                 po_CtlStatus *st) {
  po_App *app = ctx;
  switch (po_Reconcile_Desired(&app->table, app->index, kind, object, extensions, st)) {
    case kPo_Desired_Set: return kPo_Mutate_Set;
    case kPo_Desired_Keep: return kPo_Mutate_Keep;
    case kPo_Desired_NotSynced: return kPo_Mutate_NotReady;
    case kPo_Desired_Error: break;
  }
  return kPo_Mutate_Error;
}

static bool synced(void *ctx, char *reason, size_t cap) {
  po_App *app = ctx;
  return po_KubeIO_Synced(&app->io, reason, cap);
}

/* ---- runnables over other modules' objects ---- */

static bool informer_start(void *ctx, po_CtlStatus *st) {
  po_CtlStatus ks; /* the client's code is kept; the message says which runnable */
  po_CtlStatus_Clear(&ks);
  if (po_Informer_Start(ctx, &ks)) return true;
  return po_CtlStatus_Set(st, ks.code, "informer: %s", ks.message);
}
static bool informer_stop(void *ctx, int64_t deadline) {
  (void)deadline;
  po_Informer_Stop(ctx);
  return true;
}

/* The server is started (bound) by po_App_New, so that a port in use is a failure to start;
 * its runnable only stops (and frees) it, and po_App_Free does that when the manager never ran. */
static bool webhook_start(void *ctx, po_CtlStatus *st) { (void)ctx; (void)st; return true; }
static bool webhook_stop(void *ctx, int64_t deadline) {
  (void)deadline;
  po_App *app = ctx;
  po_WebhookServer_Stop(app->webhook);
  app->webhook = NULL;
  return true;
}

/* ---- building ---- */

static bool add(po_App *app, po_Runnable r, po_CtlStatus *st) { return po_Manager_Add(app->manager, &r, st); }

static bool register_metrics(po_App *app, po_CtlStatus *st) {
  static const char *const fl[] = {"kind"}, *const wl[] = {"code", "allowed"};
  app->io.foreign_markers = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_foreign_markers_total",
      "Look-alike PropertyOverride markers (kind entry or object) found in targets and left alone, once per target revision.",
      1, fl, 0, NULL);
  app->wh_requests = po_Metrics_Register(app->metrics, kPo_Metric_Counter, "propertyoverride_webhook_requests_total",
                                         "AdmissionReviews answered, by HTTP status and decision.", 2, wl, 0, NULL);
  static const char *const ml[] = {"outcome"};
  app->wh_mutations = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_webhook_mutations_total",
      "Writes the mutating webhook answered, by outcome: patched (a target's entries put back), finalized (a new "
      "PropertyOverride given the finalizer), finalizer-kept (an update's drop of it undone), unchanged, not-synced "
      "(caches incomplete: passed unchanged), exempt (the controller's own write), error (passed unchanged).",
      1, ml, 0, NULL);
  app->wh_latency = po_Metrics_Register(app->metrics, kPo_Metric_Histogram, "propertyoverride_webhook_request_duration_seconds",
                                        "Time to answer an AdmissionReview.", 0, NULL, po_kReconcileTimeBucketsLen,
                                        po_kReconcileTimeBuckets);
  po_MetricFamily *inflight = po_Metrics_Register(
      app->metrics, kPo_Metric_Gauge, "propertyoverride_webhook_memory_inflight_bytes",
      "Bytes the webhook's requests in flight hold on its memory budget: declared bodies and what deciding them costs.",
      0, NULL, 0, NULL);
  po_MetricFamily *budget = po_Metrics_Register(
      app->metrics, kPo_Metric_Gauge, "propertyoverride_webhook_memory_budget_bytes",
      "The webhook's memory budget (--webhook-memory-budget): requests beyond it are answered 429 with Retry-After.", 0,
      NULL, 0, NULL);
  po_MetricFamily *refusals = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_webhook_memory_refusals_total",
      "Requests the webhook answered 429 (Retry-After: 1) because those in flight held its memory budget.", 0, NULL, 0,
      NULL);
  app->wh_inflight = inflight ? po_Family_WithLabels(inflight) : NULL;
  app->wh_budget = budget ? po_Family_WithLabels(budget) : NULL;
  app->wh_refusals = refusals ? po_Family_WithLabels(refusals) : NULL;
  static const char *const wl2[] = {"resource"};
  app->io.writes = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_writes_total",
      "Writes the reconciles made and the API server accepted, by resource: servicedefaults, proxydefaults, envoyfilters, "
      "envoypatchpolicies (creates, updates, deletes), propertyoverrides/status (status patches), propertyoverrides "
      "(finalizer and annotation patches). Events are counted in propertyoverride_events_total.",
      1, wl2, 0, NULL);
  app->io.patches_resent = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_target_patches_resent_total",
      "Target updates sent as a JSON Patch of the entries that changed and refused as Invalid (422: the operations "
      "failed on an object that moved on), then sent whole over the same version, by what that answered: conflict (it "
      "had moved on: retried), written (the patch was wrong for an unchanged object: a bug to report), refused (the "
      "object itself is invalid), failed.",
      1, ml, 0, NULL);
  po_MetricFamily *last = po_Metrics_Register(
      app->metrics, kPo_Metric_Gauge, "propertyoverride_last_write_time_seconds",
      "When the reconciles last wrote (Unix time, to the microsecond; 0 before the first write): with "
      "propertyoverride_writes_total, what tells that the controller has settled.",
      0, NULL, 0, NULL);
  app->io.last_write = last ? po_Family_WithLabels(last) : NULL;
  app->istio_enabled = po_Metrics_Register(
      app->metrics, kPo_Metric_Gauge, "propertyoverride_istio_enabled",
      "1 when Istio targets (Service, Mesh) are programmed: --istio=on, or --istio=auto and the API server serves "
      "EnvoyFilters (checked again every --istio-recheck-interval until it does); 0 otherwise.",
      0, NULL, 0, NULL);
  if (!po_App_RegisterEnqueueMetrics(app)) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory registering metrics");
  if (app->io.foreign_markers && app->io.writes && app->io.patches_resent && app->io.last_write && app->wh_requests && app->wh_latency && app->wh_mutations && app->istio_enabled &&
      app->wh_inflight && app->wh_budget && app->wh_refusals)
    return true;
  return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "cannot register the metrics");
}

static bool build_client(po_App *app, po_CtlStatus *st) {
  const po_AppOptions *o = &app->o;
  /* One status family: the client's errors reach the caller as they are. */
  if (!po_KubeConfig_Load(&(po_KubeConfigOptions){.kubeconfig = o->kubeconfig, .context = o->context}, &app->cfg, st)) {
    return false;
  }
  po_KubeClientOptions co = {.qps = o->qps, .burst = o->burst, .observer = observe_request, .observer_ctx = app,
                             .http2 = o->kube_http2};
  return po_KubeClient_New(app->cfg, &co, &app->io.client, st);
}

static const char *own_namespace(po_App *app) {
  return app->o.lease_namespace ? app->o.lease_namespace : po_KubeConfig_Namespace(app->cfg);
}

void po_App_TextOptions(po_AppWatch what, po_InformerOptions *o) {
  switch (what) {
    /* PropertyOverrides kept compressed against a dictionary of their shape: ~2.5 KB of text each
     * on a real API server (managedFields cut), mostly the same keys and sentences as the next
     * one's, and at 100,000 the largest part of the controller's memory (docs/benchmarks.md,
     * "Memory per PropertyOverride, the cached text"). */
    case kPo_AppWatch_Overrides:
      o->compress_text = true;
      o->text_dictionary = kPo_App_OverrideDictionary;
      o->text_dictionary_len = kPo_App_OverrideDictionaryLen;
      /* A new PropertyOverride's text comes three times in a few seconds (created, then our
       * finalizer, then our status: its target's reconcile waits up to --target-burst-max, 3 s,
       * in a burst), and each was packed (about 65,000 instructions): only the last is now,
       * 5 s after it came (at 120 creates a second about 1.5 MB of texts wait). */
      o->text_pack_delay_ms = 5000;
      break;
    /* Consul targets kept compressed, without a dictionary: a ServiceDefaults of 50 entries is
     * ~20 KB of text that repeats itself (one entry's keys and marker 50 times). Each is stored
     * once per write of the target and read once per reconcile, so speed counts more than for
     * PropertyOverrides: zstd's level -3 against 1, measured on a 50-entry target, a store 127 K
     * instructions against 210 K and a read 58 K against 89 K, for 2.9 KB kept against 1.7 KB
     * (0.02 KB more per PropertyOverride at 50 to a target; docs/benchmarks.md, "Targets' texts
     * compressed" and "The process's own hash"). */
    case kPo_AppWatch_ServiceDefaults:
    case kPo_AppWatch_ProxyDefaults:
      o->compress_text = true;
      o->text_level = -3;
      break;
    default:
      break;
  }
}

static bool build_informers(po_App *app, po_CtlStatus *st) {
  po_InformerHandlers ho = po_App_Handlers(app, kPo_AppWatch_Overrides), hs = po_App_Handlers(app, kPo_AppWatch_ServiceDefaults),
                      hp = po_App_Handlers(app, kPo_AppWatch_ProxyDefaults);
  for (size_t i = 0; i < app->io.ns_count; i++) {
    const char *ns = app->io.namespaces[i][0] ? app->io.namespaces[i] : NULL;
    po_InformerOptions io = {.ref = kPo_OverridesRef}, is = {.ref = kPo_ServiceDefaultsRef}, ip = {.ref = kPo_ProxyDefaultsRef};
    io.ref.ns = is.ref.ns = ip.ref.ns = ns;
    /* Every informer keeps text (po_InformerOptions.keep_parsed false), measured: parsed
     * targets cost 52 MB more peak RSS at 10,000 PropertyOverrides (178.5 MB against 126.0 MB:
     * 200 targets of 50 entries, a tree about 10 times its text) and saved no measurable CPU
     * (79.1 s against 71.8 s, within this machine's noise): with the echoes skipped a target is
     * parsed about once per reconcile, ~2% of the CPU. PropertyOverrides kept as trees cost
     * 13 times their text (docs/benchmarks.md, "Parsed targets, texts from the stream"). */
    is.keep_parsed = ip.keep_parsed = io.keep_parsed = false;
    po_App_TextOptions(kPo_AppWatch_Overrides, &io);
    po_App_TextOptions(kPo_AppWatch_ServiceDefaults, &is);
    po_App_TextOptions(kPo_AppWatch_ProxyDefaults, &ip);
    io.page_size = is.page_size = ip.page_size = app->o.list_page_size;
    if (!po_Informer_New(app->io.client, &io, &ho, &app->io.overrides[i], st) ||
        !po_Informer_New(app->io.client, &is, &hs, &app->io.service_defaults[i], st) ||
        !po_Informer_New(app->io.client, &ip, &hp, &app->io.proxy_defaults[i], st)) {
      return false;
    }
    if (app->io.eg) {
      po_InformerOptions ig = {.ref = kPo_GatewaysRef}, ir = {.ref = kPo_HTTPRoutesRef}, ie = {.ref = kPo_EnvoyPatchPoliciesRef};
      ig.ref.ns = ir.ref.ns = ie.ref.ns = ns;
      /* A route is cached trimmed to what is read of it (name, parentRefs, rules' backendRefs):
       * a tenant's routes cost their text whole otherwise (1,100 routes of 235 KiB of header
       * matches: 382 MiB, over the 256 MiB limit), and every Gateway reconcile parsed them all. */
      ir.transform = po_EG_RouteTrim;
      po_InformerHandlers hg = po_App_Handlers(app, kPo_AppWatch_Gateways), hr = po_App_Handlers(app, kPo_AppWatch_Routes),
                          he = po_App_Handlers(app, kPo_AppWatch_Policies);
      if (!po_Informer_New(app->io.client, &ig, &hg, &app->io.gateways[i], st) ||
          !po_Informer_New(app->io.client, &ir, &hr, &app->io.routes[i], st) ||
          !po_Informer_New(app->io.client, &ie, &he, &app->io.policies[i], st)) {
        return false;
      }
    }
    po_Informer *all[6] = {app->io.overrides[i], app->io.service_defaults[i], app->io.proxy_defaults[i],
                           app->io.gateways[i], app->io.routes[i], app->io.policies[i]};
    for (int k = 0; k < 6; k++) {
      if (!all[k]) continue;
      po_Runnable r = {.name = "informer", .start = informer_start, .stop = informer_stop, .ctx = all[k], .stop_early = true};
      if (!add(app, r, st)) return false;
    }
  }
  return !atomic_load(&app->io.istio) || po_App_NewIstioInformers(app, true, st);
}

bool po_App_NewIstioInformers(po_App *app, bool manage, po_CtlStatus *st) {
  po_InformerHandlers hv = po_App_Handlers(app, kPo_AppWatch_Services), hf = po_App_Handlers(app, kPo_AppWatch_Filters);
  for (size_t i = 0; i < app->io.ns_count; i++) {
    po_InformerOptions isv = {.ref = kPo_ServicesRef}, ief = {.ref = kPo_EnvoyFiltersRef};
    isv.ref.ns = ief.ref.ns = app->io.namespaces[i][0] ? app->io.namespaces[i] : NULL;
    if (!po_Informer_New(app->io.client, &isv, &hv, &app->io.services[i], st) ||
        !po_Informer_New(app->io.client, &ief, &hf, &app->io.filters[i], st)) {
      return false;
    }
  }
  /* Mesh targets write into Istio's root namespace: watched for its EnvoyFilters alone when the
   * controller watches a list of namespaces without it. */
  bool root_watched = false;
  for (size_t i = 0; i < app->io.ns_count; i++) {
    root_watched |= !app->io.namespaces[i][0] || !strcmp(app->io.namespaces[i], app->io.root_ns);
  }
  if (!root_watched) {
    po_InformerOptions ief = {.ref = kPo_EnvoyFiltersRef};
    ief.ref.ns = app->io.root_ns;
    if (!po_Informer_New(app->io.client, &ief, &hf, &app->io.root_filters, st)) return false;
  }
  for (size_t i = 0; manage && i < app->io.ns_count + 1; i++) {
    po_Informer *two[2] = {i < app->io.ns_count ? app->io.services[i] : app->io.root_filters,
                           i < app->io.ns_count ? app->io.filters[i] : NULL};
    for (int k = 0; k < 2; k++) {
      if (!two[k]) continue;
      po_Runnable r = {.name = "informer", .start = informer_start, .stop = informer_stop, .ctx = two[k], .stop_early = true};
      if (!add(app, r, st)) return false;
    }
  }
  return true;
}

/* --istio: on, off, or auto: on when the API server serves EnvoyFilters (istio_detect.c: now,
 * and, when not yet or when it could not tell, again every --istio-recheck-interval). */
static bool detect_istio(po_App *app) {
  if (app->o.istio != kPo_IstioMode_Auto) return app->o.istio == kPo_IstioMode_On;
  po_CtlStatus st;
  po_Served s = po_App_IstioServed(app, &st);
  if (s == kPo_Served_Yes) {
    po_Log_Info(app->log, "Istio targets programmed: EnvoyFilters are served", po_Str("reason", "--istio=auto"));
  } else if (s == kPo_Served_No) {
    po_Log_Info(app->log, "Istio targets not programmed: EnvoyFilters are not served", po_Str("reason", st.message));
  } else {
    po_Log_Warn(app->log, "Istio targets not programmed yet: could not tell whether EnvoyFilters are served; asking "
                "again every --istio-recheck-interval", po_Str("error", st.message));
  }
  return s == kPo_Served_Yes;
}

/* --envoy-gateway: on, off, or auto: on when the API server serves EnvoyPatchPolicies, and the
 * Gateways and HTTPRoutes their names come from, at start (an informer of a kind not served never
 * syncs, and the controller would never be ready). Off only on the server's word (a 404): an API
 * server that could not be asked, after the client's retries, fails the start, since nothing
 * would ask again and every Envoy Gateway target would say MeshNotEnabled for the process's life. */
static bool detect_eg(po_App *app, po_CtlStatus *st) {
  app->io.eg = app->o.envoy_gateway == kPo_IstioMode_On;
  if (app->o.envoy_gateway != kPo_IstioMode_Auto) return true;
  static const struct {
    const po_KubeRef *ref;
    const char *what;
  } kinds[] = {{&kPo_EnvoyPatchPoliciesRef, "EnvoyPatchPolicies"}, {&kPo_GatewaysRef, "Gateways"},
               {&kPo_HTTPRoutesRef, "HTTPRoutes"}};
  po_CtlStatus ks;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    po_Served s = po_App_KindServed(app, *kinds[i].ref, &ks);
    if (s == kPo_Served_Unknown) {
      char http[32] = "";
      if (ks.http_status > 0) snprintf(http, sizeof http, "HTTP %ld: ", (long)ks.http_status);
      return po_CtlStatus_Set(st, kPo_Ctl_Start,
                              "--envoy-gateway=auto: could not tell whether the API server serves %s (%s%.400s); "
                              "not starting rather than running without Envoy Gateway targets (start again once "
                              "the API server answers, or pass --envoy-gateway=on or off)",
                              kinds[i].what, http, ks.message);
    }
    if (s == kPo_Served_No) {
      po_Log_Info(app->log, "Envoy Gateway targets not programmed", po_Str("reason", ks.message));
      return true;
    }
  }
  app->io.eg = true;
  po_Log_Info(app->log, "Envoy Gateway targets programmed: EnvoyPatchPolicies, Gateways and HTTPRoutes are served",
              po_Str("reason", "--envoy-gateway=auto"));
  return true;
}

static bool build_elector(po_App *app, po_CtlStatus *st) {
  const po_AppOptions *o = &app->o;
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  snprintf(app->identity, sizeof app->identity, "%s_%ld", host, (long)getpid());
  po_LeaderElectionOptions lo = {.ns = own_namespace(app), .name = o->lease_name, .identity = app->identity,
                                 .lease_duration_ns = (int64_t)(o->lease_s * 1e9),
                                 .renew_deadline_ns = (int64_t)(o->renew_deadline_s * 1e9),
                                 .retry_period_ns = (int64_t)(o->retry_period_s * 1e9), .client = app->io.client};
  po_App_LeaderCallbacks(app, &lo);
  po_CtlStatus ks;
  po_CtlStatus_Clear(&ks);
  if (po_LeaderElector_New(&lo, &app->elector, &ks)) return true;
  return po_CtlStatus_Set(st, ks.code, "leader election: %s", ks.message);
}

/* Self-managed mode: the certificates exist (made or loaded) before the server binds, and a
 * runnable keeps them fresh. */
static bool build_certificates(po_App *app, po_CtlStatus *st) {
  const po_AppOptions *o = &app->o;
  po_SelfCertOptions sc = {.ns = own_namespace(app), .secret = o->secret, .service = o->service,
                           .webhook_config = o->webhook_config, .dir = o->cert_dir, .extra_sans = o->sans,
                           .n_sans = o->n_sans};
  po_CtlStatus cst;
  bool changed;
  if (!po_SelfCert_Ensure(app->io.client, &sc, &changed, &cst)) {
    return po_CtlStatus_Set(st, kPo_Ctl_Start, "webhook certificates: %.600s", cst.message);
  }
  po_Log_Info(app->log, changed ? "webhook certificates generated" : "webhook certificates loaded", po_Str("secret", sc.secret),
              po_Str("namespace", sc.ns));
  snprintf(app->cert_path, sizeof app->cert_path, "%s/tls.crt", sc.dir);
  snprintf(app->key_path, sizeof app->key_path, "%s/tls.key", sc.dir);
  int64_t every = o->renew_interval_s > 0 ? (int64_t)(o->renew_interval_s * 1e9) : 12 * 3600 * INT64_C(1000000000);
  if (!po_Renewal_Init(&app->renewal, app->io.client, &sc, app->log, every)) {
    return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot make the renewal's lock");
  }
  app->renewal_ready = true;
  return add(app, po_Renewal_Runnable(&app->renewal), st);
}

static bool build_webhook(po_App *app, po_CtlStatus *st) {
  const po_AppOptions *o = &app->o;
  const char *cert = o->cert_file, *key = o->key_file;
  if (o->cert_mode == kPo_CertMode_SelfManaged) {
    if (!build_certificates(app, st)) return false;
    cert = app->cert_path;
    key = app->key_path;
  }
  po_CtlStatus wst;
  app->webhook = po_WebhookServer_Start(
      &(po_WebhookOptions){.address = o->webhook_address, .cert_file = o->webhook_insecure ? NULL : cert,
                           .key_file = o->webhook_insecure ? NULL : key, .observe = observe_webhook, .observe_ctx = app,
                           .tenancy = &app->tenancy, .targets = &app->target_options,
                           .mutate = {.desired = desired, .ctx = app, .controller_user = o->controller_user,
                                      .finalizer = PO_FINALIZER, .claims = claims},
                           .observe_mutate = observe_mutate, .log = app->log,
                           .memory_budget = o->webhook_memory_budget, .observe_budget = observe_budget},
      &wst);
  if (!app->webhook) return po_CtlStatus_Set(st, kPo_Ctl_Start, "webhook: %.600s", wst.message);
  po_Series_Set(app->wh_budget, (double)po_WebhookServer_MemoryBudget(app->webhook));
  po_Log_Info(app->log, "webhook serving", po_Int("port", po_WebhookServer_Port(app->webhook)), po_Bool("tls", !o->webhook_insecure),
              po_Int("memory_budget_bytes", (int64_t)po_WebhookServer_MemoryBudget(app->webhook)));
  return add(app, (po_Runnable){.name = "webhook", .start = webhook_start, .stop = webhook_stop, .ctx = app}, st);
}

static bool build_ops(po_App *app, po_CtlStatus *st) {
  app->ops = po_OpsServer_New(&(po_OpsOptions){.address = app->o.probe_address, .metrics = app->metrics, .log = app->log}, st);
  if (!app->ops || !po_OpsServer_AddReadyCheck(app->ops, "informers-synced", synced, app, st)) return false;
  return add(app, po_OpsServer_Runnable(app->ops), st);
}

/* The burst hold (po_AppOptions.target_burst_*): with no batching window, no hold either (every
 * event at once, as that window's 0 says). */
static po_WorkqueueOptions burst_options(const po_AppOptions *o) {
  if (o->target_batch_window_s <= 0 || o->target_burst_quiet_s <= 0 || o->target_burst_max_s <= 0) return (po_WorkqueueOptions){0};
  return (po_WorkqueueOptions){.burst_quiet_ns = (int64_t)(o->target_burst_quiet_s * 1e9),
                               .burst_max_ns = (int64_t)(o->target_burst_max_s * 1e9)};
}

static bool build(po_App *app, po_CtlStatus *st) {
  const po_AppOptions *o = &app->o;
  if (!(app->metrics = po_Metrics_New()) || !(app->index = po_TargetIndex_New()) || !(app->names = po_TargetNames_New())) {
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  }
  if (!register_metrics(app, st) || !build_client(app, st)) return false;
  for (size_t i = 0; i < o->n_proxydefaults_from; i++) {
    if (!po_Tenancy_AllowProxyDefaults(&app->tenancy, o->proxydefaults_from[i])) {
      return po_CtlStatus_Set(st, kPo_Ctl_Usage, "--allow-proxydefaults-from takes a namespace or *, at most 64 times");
    }
  }
  /* Without the flag only the controller's own namespace (where the operator runs it, next to
   * Consul's own ProxyDefaults) may target ProxyDefaults. */
  if (app->tenancy.n == 0) po_Tenancy_AllowProxyDefaults(&app->tenancy, own_namespace(app));
  for (size_t i = 0; i < o->n_cross_namespace_from; i++) {
    if (!po_Tenancy_AllowCrossNamespace(&app->tenancy, o->cross_namespace_from[i], st)) return false;
  }
  app->io.tenancy = &app->tenancy;
  app->target_options = (po_TargetOptions){.cluster_domain = o->cluster_domain ? o->cluster_domain : "cluster.local",
                                            .istio_minor = o->istio_minor,
                                            .istio_root_namespace = o->istio_root_namespace ? o->istio_root_namespace : "istio-system"};
  /* a configured release without a snapshot fails the start before the cluster is asked anything */
  if (!po_App_CheckReleases(app, st)) return false;
  app->io.root_ns = app->target_options.istio_root_namespace;
  atomic_store(&app->io.istio, detect_istio(app));
  app->io.istio_later = app->o.istio == kPo_IstioMode_Auto && !atomic_load(&app->io.istio);
  po_Series_Set(po_Family_WithLabels(app->istio_enabled), atomic_load(&app->io.istio) ? 1 : 0);
  if (!detect_eg(app, st)) return false;
  /* the releases (configured, or read from the meshes found just above) before anything compiles */
  po_App_MeshReleases(app);
  po_TargetIndex_SetOptions(app->index, &app->target_options);
  app->sync = (po_SyncPolicy){.mode = o->consul_sync_require ? kPo_SyncMode_Require : kPo_SyncMode_Ignore,
                              .timeout_s = (int64_t)o->consul_sync_timeout_s};
  po_KubeIO_Init(&app->io);
  app->table = po_KubeIO_Table(&app->io);
  app->table.sync = &app->sync;
  app->table.names = o->consul_namespace_mirroring ? NULL : app->names;
  app->table.enqueue = po_App_EnqueueKey;
  app->table.enqueue_ctx = app;

  app->controller = po_Controller_New(&(po_ControllerOptions){.name = "propertyoverride", .reconcile = po_App_Reconcile,
                                                              .ctx = app, .workers = o->workers, .metrics = app->metrics,
                                                              .log = app->log, .queue = burst_options(o)},
                                      st);
  if (!app->controller) return false;
  if (o->leader_elect && !build_elector(app, st)) return false;
  /* The manager releases the lease after the leader runnables stopped. */
  app->manager = po_Manager_New(&(po_ManagerOptions){.log = app->log, .metrics = app->metrics,
                                                     .lease_name = o->leader_elect ? o->lease_name : NULL,
                                                     .stop_timeout_ns = (int64_t)(o->grace_s * 1e9),
                                                     .release_lease = app->elector ? po_App_ReleaseLease : NULL,
                                                     .release_ctx = app, .exit_process_on_timeout = true},
                                st);
  if (!app->manager) return false;
  /* Registered before the informers: stopped after the workers drained, it posts their last
   * Events. */
  static const char *const rl[] = {"result"};
  po_MetricFamily *events = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_events_total",
      "Events by what became of them: recorded, posted, patched (a series count), coalesced (a repeat counted), "
      "superseded (a pending Normal replaced by a newer one), dropped (queue full), failed.",
      1, rl, 0, NULL);
  if (!events || !(app->io.recorder = po_EventRecorder_New(app->io.client, &(po_EventRecorderOptions){.metric = events}))) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  if (!add(app, po_EventRecorder_Runnable(app->io.recorder), st)) return false;
  if (!po_StartGate_Init(&app->gate, app->metrics)) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  if (!build_informers(app, st) || !add(app, po_App_ControllerRunnable(app), st)) return false;
  /* --istio=auto without EnvoyFilters yet: checked again until they are served */
  if (app->io.istio_later) {
    int64_t every = (int64_t)((app->o.istio_recheck_s > 0 ? app->o.istio_recheck_s : 60) * 1e9);
    if (!po_IstioDetect_Init(&app->istio_detect, app, every)) return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot make the Istio check's lock");
    app->istio_detect_ready = true;
    if (!add(app, po_IstioDetect_Runnable(&app->istio_detect), st)) return false;
  }
  if (strcmp(o->webhook_address, "0") != 0 && !build_webhook(app, st)) return false;
  if (strcmp(o->probe_address, "0") != 0 && !build_ops(app, st)) return false;
  if (!add(app, po_App_LeadershipRunnable(app), st)) return false;
  po_Log_Info(app->log, "starting", po_Str("server", po_KubeConfig_Server(app->cfg)), po_Int("workers", o->workers),
              po_Bool("leaderElection", o->leader_elect));
  return true;
}

po_App *po_App_New(const po_AppOptions *o, po_CtlStatus *st) {
  po_App *app = calloc(1, sizeof *app);
  if (!app) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
    return NULL;
  }
  app->o = *o;
  app->sync_timeout_ms = 10000;
  for (size_t i = 0; i < o->n_namespaces && i < kPo_MaxNamespaces; i++) app->io.namespaces[app->io.ns_count++] = o->namespaces[i];
  if (app->io.ns_count == 0) app->io.namespaces[app->io.ns_count++] = ""; /* all namespaces */
  app->log = po_Logger_New(&(po_LoggerOptions){.level = o->log_level, .name = "propertyoverride"});
  if (!build(app, st)) {
    po_App_Free(app);
    return NULL;
  }
  return app;
}

int po_App_Run(po_App *app) {
  int rc = po_Manager_Run(app->manager);
  po_Log_Info(app->log, "stopped", po_Int("exitCode", rc));
  return rc;
}

void po_App_Free(po_App *app) {
  if (!app) return;
  /* The manager first: its stop (when it ran) ended every runnable's threads. Then what the
   * runnables used, users before what they use. */
  po_Manager_Free(app->manager);
  po_App_JoinLeadAlone(app);
  po_StartGate_Destroy(&app->gate);
  po_WebhookServer_Stop(app->webhook);
  if (app->renewal_ready) po_Renewal_Destroy(&app->renewal);
  if (app->istio_detect_ready) po_IstioDetect_Destroy(&app->istio_detect);
  po_OpsServer_Free(app->ops);
  po_LeaderElector_Free(app->elector);
  po_Controller_Free(app->controller);
  for (size_t i = 0; i < app->io.ns_count; i++) {
    po_Informer_Free(app->io.overrides[i]);
    po_Informer_Free(app->io.service_defaults[i]);
    po_Informer_Free(app->io.proxy_defaults[i]);
    po_Informer_Free(app->io.services[i]);
    po_Informer_Free(app->io.filters[i]);
    po_Informer_Free(app->io.gateways[i]);
    po_Informer_Free(app->io.routes[i]);
    po_Informer_Free(app->io.policies[i]);
  }
  po_Informer_Free(app->io.root_filters);
  po_KubeIO_Free(&app->io);
  po_EventRecorder_Free(app->io.recorder);
  po_KubeClient_Free(app->io.client);
  po_KubeConfig_Free(app->cfg);
  po_TargetIndex_Free(app->index);
  po_TargetNames_Free(app->names);
  po_Metrics_Free(app->metrics);
  po_Logger_Free(app->log);
  free(app);
}
