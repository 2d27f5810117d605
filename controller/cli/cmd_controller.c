/* propertyoverride controller: informers, the reconciler (leader only), the admission webhook
 * (every replica), probes and metrics, leader election, graceful SIGTERM. */
#include <getopt.h>
#include <pthread.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kube_io.h"
#include "po/kube/config.h"
#include "po/kube/lease.h"
#include "po/runtime/controller.h"
#include "po/runtime/log.h"
#include "po/runtime/manager.h"
#include "po/runtime/metrics.h"
#include "po/runtime/ops.h"
#include "po/webhook/server.h"
#include "selfcert.h"

static const char kUsage[] =
    "usage: propertyoverride controller [OPTIONS]\n"
    "\n"
    "Watches PropertyOverrides, validates them with Consul's property-override semantics and the\n"
    "Envoy v3 schema, and writes them into Consul ServiceDefaults/ProxyDefaults envoyExtensions.\n"
    "Serves the validating admission webhook on every replica; only the leader reconciles.\n"
    "\n"
    "  --kubeconfig FILE              kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
    "  --context NAME                 kubeconfig context (default: current-context)\n"
    "  --namespace NS                 watch only NS (repeatable, up to 16; default: all namespaces)\n"
    "  --allow-proxydefaults-from NS  a namespace whose PropertyOverrides may target the mesh-wide\n"
    "                                 ProxyDefaults (repeatable; * for any; default: only the\n"
    "                                 controller's own namespace)\n"
    "  --workers N                    concurrent reconciles (default 4)\n"
    "  --webhook-bind-address ADDR    webhook HTTPS address (default :9443; 0 disables the webhook)\n"
    "  --webhook-cert-file FILE       serving certificate (PEM; re-read when it changes)\n"
    "  --webhook-key-file FILE        its private key (PEM)\n"
    "  --webhook-insecure             serve the webhook over plain HTTP (tests only)\n"
    "  --webhook-cert-mode MODE       files (the two flags above) or self-managed: a CA and serving\n"
    "                                 certificate kept in a Secret, the caBundle put into the\n"
    "                                 ValidatingWebhookConfiguration, renewed 30 days before expiry\n"
    "  --webhook-secret NAME          self-managed: the Secret (default propertyoverride-webhook-cert)\n"
    "  --webhook-service NAME         self-managed: the webhook Service, for the certificate's names\n"
    "                                 (default propertyoverride-webhook)\n"
    "  --webhook-configuration NAME   self-managed: the ValidatingWebhookConfiguration (default\n"
    "                                 propertyoverride)\n"
    "  --webhook-cert-dir DIR         self-managed: where the files go (default\n"
    "                                 /tmp/propertyoverride-webhook)\n"
    "  --webhook-cert-san NAME        self-managed: a further DNS name or IP (repeatable)\n"
    "  --health-probe-bind-address A  /healthz, /readyz and /metrics (default :8081)\n"
    "  --leader-elect=BOOL            leader election on a Lease (default true)\n"
    "  --leader-election-namespace NS the Lease's namespace (default: the kubeconfig's namespace)\n"
    "  --leader-election-id NAME      the Lease's name (default propertyoverride-controller)\n"
    "  --lease-duration S, --renew-deadline S, --retry-period S   (defaults 15, 10, 2 seconds)\n"
    "  --kube-api-qps N, --kube-api-burst N  client-side rate limit (default 500 and 1000)\n"
    "  --log-level LEVEL              debug, info, warn, error (default info)\n"
    "  --graceful-shutdown-timeout S  the whole orderly stop (default 30)\n"
    "\n"
    "Exit status: 0 after an orderly stop; 1 when the stop did not finish in time; 2 bad usage or\n"
    "a failure to start.\n";

typedef struct {
  po_KubeIO io;
  po_Tenancy tenancy;
  po_ReconcileIO table;
  po_TargetIndex *index;
  po_Controller *controller;
  po_Manager *manager;
  po_LeaderElector *elector;
  po_Logger *log;
  po_MetricFamily *wh_requests, *wh_latency;
  long sync_timeout_ms;
  bool releasing;
} App;

/* ---- informer handlers: keep the index and enqueue targets ---- */

static void enqueue(App *app, const char *key) {
  if (key && *key && app->controller) po_Controller_Enqueue(app->controller, key);
}

static const char *meta(const json_object *o, const char *k) {
  json_object *m = NULL, *v = NULL;
  if (!json_object_object_get_ex(o, "metadata", &m) || !json_object_object_get_ex(m, k, &v)) return "";
  return json_object_get_string(v);
}

static void override_changed(void *ctx, json_object *obj) {
  App *app = ctx;
  char key[600], old[600];
  po_Reconcile_OverrideKey(obj, key, sizeof key);
  if (!po_TargetIndex_Set(app->index, meta(obj, "namespace"), meta(obj, "name"), key, old, sizeof old)) {
    /* Said, not dropped silently: its target's reconcile still finds it by its entry there. */
    po_Log_Error(app->log, "out of memory: the PropertyOverride is missing from the target index",
                 po_Str("namespace", meta(obj, "namespace")), po_Str("name", meta(obj, "name")));
  }
  char held[600], old_held[600];
  po_Reconcile_HeldKey(obj, held, sizeof held);
  if (!po_TargetIndex_SetHeld(app->index, meta(obj, "namespace"), meta(obj, "name"), held, old_held, sizeof old_held)) {
    po_Log_Error(app->log, "out of memory: the target holding the PropertyOverride's last valid generation is not indexed",
                 po_Str("namespace", meta(obj, "namespace")), po_Str("name", meta(obj, "name")));
  }
  enqueue(app, key);
  if (strcmp(old, key) != 0) enqueue(app, old); /* targetRef moved: the old target drops it */
  if (*held) enqueue(app, held);                /* where its last valid generation is live */
  if (*old_held && strcmp(old_held, held) != 0) enqueue(app, old_held);
}

static void override_added(void *ctx, json_object *obj) { override_changed(ctx, obj); }
static void override_updated(void *ctx, json_object *old_obj, json_object *obj) {
  (void)old_obj;
  override_changed(ctx, obj);
}
static void override_deleted(void *ctx, json_object *obj) {
  App *app = ctx;
  char old[600];
  po_TargetIndex_Remove(app->index, meta(obj, "namespace"), meta(obj, "name"), old, sizeof old);
  enqueue(app, old);
}

static void target_event(App *app, po_TargetKind kind, json_object *obj) {
  char key[600];
  po_Reconcile_TargetKey(kind, meta(obj, "namespace"), meta(obj, "name"), key, sizeof key);
  enqueue(app, key); /* drift: our entries are restored, stale ones dropped */
}
static void sd_add(void *ctx, json_object *o) { target_event(ctx, kPo_TargetServiceDefaults, o); }
static void sd_update(void *ctx, json_object *a, json_object *o) { (void)a; target_event(ctx, kPo_TargetServiceDefaults, o); }
static void pd_add(void *ctx, json_object *o) { target_event(ctx, kPo_TargetProxyDefaults, o); }
static void pd_update(void *ctx, json_object *a, json_object *o) { (void)a; target_event(ctx, kPo_TargetProxyDefaults, o); }

/* Everything the caches know, enqueued: at leadership, since keys are dropped while no
 * controller runs. */
typedef struct {
  App *app;
  po_TargetKind kind;
  bool targets;
} EnqueueAll;

static void enqueue_cached(void *ctx, const char *key, const json_object *o, const char *rv) {
  (void)key; (void)rv;
  EnqueueAll *e = ctx;
  char k[600];
  if (e->targets) po_Reconcile_TargetKey(e->kind, meta(o, "namespace"), meta(o, "name"), k, sizeof k);
  else po_Reconcile_OverrideKey(o, k, sizeof k);
  enqueue(e->app, k);
}

static void enqueue_all(App *app) {
  for (size_t i = 0; i < app->io.ns_count; i++) {
    EnqueueAll po = {app, kPo_TargetServiceDefaults, false}, sd = {app, kPo_TargetServiceDefaults, true},
               pd = {app, kPo_TargetProxyDefaults, true};
    po_Informer_ForEach(app->io.overrides[i], enqueue_cached, &po);
    po_Informer_ForEach(app->io.service_defaults[i], enqueue_cached, &sd);
    po_Informer_ForEach(app->io.proxy_defaults[i], enqueue_cached, &pd);
  }
}

/* ---- reconcile ---- */

static po_Result reconcile(void *ctx, const char *key, po_Logger *log) {
  App *app = ctx;
  po_ReconcileResult r = po_Reconcile(&app->table, app->index, key);
  if (r.ok && (r.targets_written || r.statuses_written)) {
    po_Log_Info(log, "reconciled", po_Int("targetWrites", r.targets_written), po_Int("statusWrites", r.statuses_written));
  }
  if (r.conflict) po_Log_Debug(log, "conflict; retrying", po_Str("error", r.error));
  return r.result;
}

/* ---- runnables ---- */

static bool informer_start(void *ctx, po_RtStatus *st) {
  po_KubeStatus ks;
  po_KubeStatus_Clear(&ks);
  if (po_Informer_Start(ctx, &ks)) return true;
  return po_RtStatus_Set(st, kPo_RtErr_Start, "informer: %s", ks.message);
}
static bool informer_stop(void *ctx, int64_t deadline) {
  (void)deadline;
  po_Informer_Stop(ctx);
  return true;
}

static bool controller_start(void *ctx, po_RtStatus *st) {
  App *app = ctx;
  /* No worker before every cache has synced (controller-runtime's rule): a reconcile against a
   * partial PropertyOverride index takes the missing ones for deleted, and removes their entries
   * and the targets it created. The wait is bounded (the manager's lock is held meanwhile, and a
   * stop must not hang); past it the workers start, and every reconcile refuses to read or write
   * until the caches are complete (po_Reconcile's gate), requeueing itself. */
  for (size_t i = 0; i < app->io.ns_count; i++) {
    po_Informer_WaitForSync(app->io.overrides[i], app->sync_timeout_ms);
    po_Informer_WaitForSync(app->io.service_defaults[i], app->sync_timeout_ms);
    po_Informer_WaitForSync(app->io.proxy_defaults[i], app->sync_timeout_ms);
  }
  char why[128];
  if (!po_KubeIO_Synced(&app->io, why, sizeof why)) {
    po_Log_Warn(app->log, "starting to reconcile before the caches synced: reconciles wait for them", po_Str("reason", why));
  }
  if (!po_Controller_Start(app->controller, st)) return false;
  enqueue_all(app);
  po_Log_Info(app->log, "reconciling as leader", po_Int("overrides", (int64_t)po_TargetIndex_Count(app->index)));
  return true;
}
static bool controller_stop(void *ctx, int64_t deadline) {
  App *app = ctx;
  return po_Controller_Stop(app->controller, deadline);
}

static bool webhook_start(void *ctx, po_RtStatus *st) { (void)ctx; (void)st; return true; }
static bool webhook_stop(void *ctx, int64_t deadline) {
  (void)deadline;
  po_WebhookServer_Stop(ctx);
  return true;
}

static bool elector_start(void *ctx, po_RtStatus *st) {
  po_KubeStatus ks;
  po_KubeStatus_Clear(&ks);
  if (po_LeaderElector_Start(ctx, &ks)) return true;
  return po_RtStatus_Set(st, kPo_RtErr_Start, "leader election: %s", ks.message);
}
static bool elector_stop(void *ctx, int64_t deadline) { (void)ctx; (void)deadline; return true; }
static bool release_lease(void *ctx, int64_t deadline) {
  (void)deadline;
  App *app = ctx;
  /* Releasing fires on_stopped_leading from inside the manager's own stop: it must not call
   * back into the manager then. */
  __atomic_store_n(&app->releasing, true, __ATOMIC_SEQ_CST);
  po_LeaderElector_Stop(app->elector, true);
  return true;
}

static void started_leading(void *ctx) {
  App *app = ctx;
  po_RtStatus st;
  po_RtStatus_Clear(&st);
  if (!po_Manager_BecameLeader(app->manager, &st)) po_Log_Error(app->log, "could not start as leader", po_Str("error", st.message));
}
static void stopped_leading(void *ctx) {
  App *app = ctx;
  if (__atomic_load_n(&app->releasing, __ATOMIC_SEQ_CST)) {
    po_Log_Info(app->log, "lease released");
    return;
  }
  po_Log_Warn(app->log, "leadership lost: reconciling stops");
  po_Manager_LostLeadership(app->manager);
}
static void new_leader(void *ctx, const char *who) {
  App *app = ctx;
  po_Log_Info(app->log, "leader", po_Str("identity", *who ? who : "(none)"));
}

/* Self-managed certificates are checked twice a day; the webhook server re-reads the files. */
typedef struct {
  po_KubeClient *client;
  const po_SelfCertOptions *opt;
  po_Logger *log;
} RenewCtx;

static void *renew_loop(void *arg) {
  RenewCtx *r = arg;
  for (;;) {
    sleep(12 * 3600);
    char err[512];
    bool changed;
    if (!po_SelfCert_Ensure(r->client, r->opt, &changed, err, sizeof err)) po_Log_Error(r->log, "renewing the webhook certificates", po_Str("error", err));
    else if (changed) po_Log_Info(r->log, "webhook certificates renewed");
  }
  return NULL;
}

/* Without leader election this replica leads at once. BecameLeader is called from a thread of
 * its own: the manager is still inside Start when this runnable starts. */
static void *lead_alone(void *ctx) {
  started_leading(ctx);
  return NULL;
}
static bool lead_alone_start(void *ctx, po_RtStatus *st) {
  pthread_t t;
  if (pthread_create(&t, NULL, lead_alone, ctx) != 0) return po_RtStatus_Set(st, kPo_RtErr_System, "cannot start a thread");
  pthread_detach(t);
  return true;
}
static bool lead_alone_stop(void *ctx, int64_t deadline) { (void)ctx; (void)deadline; return true; }

static bool synced(void *ctx, char *reason, size_t cap) {
  App *app = ctx;
  return po_KubeIO_Synced(&app->io, reason, cap);
}

static void observe_request(void *ctx, const char *method, long code, double seconds) {
  (void)seconds;
  po_Metrics_ObserveRequest((int)code, method, ctx);
}

static void observe_webhook(void *ctx, int status, bool allowed, double seconds) {
  App *app = ctx;
  char code[16];
  snprintf(code, sizeof code, "%d", status);
  po_Series_Inc(po_Family_WithLabels(app->wh_requests, code, allowed ? "true" : "false"));
  po_Series_Observe(po_Family_WithLabels(app->wh_latency), seconds);
}

static bool parse_bool(const char *s, bool *out) {
  if (!strcmp(s, "true") || !strcmp(s, "1")) return *out = true, true;
  if (!strcmp(s, "false") || !strcmp(s, "0")) return *out = false, true;
  return false;
}

static int usage_error(const char *msg) {
  fprintf(stderr, "propertyoverride controller: %s\n\n%s", msg, kUsage);
  return kPo_ExitUsage;
}

int po_Cmd_Controller(int argc, char **argv) {
  enum { kKubeconfig = 256, kContext, kNamespace, kWorkers, kWebhookAddr, kCert, kKey, kInsecure, kProbe, kElect, kElectNs,
         kElectId, kLease, kRenew, kRetry, kLogLevel, kGrace, kQps, kBurst, kCertMode, kSecret, kService, kVwc,
         kCertDir, kSan, kAllowPd, kHelp };
  static const struct option opts[] = {
      {"kubeconfig", required_argument, 0, kKubeconfig}, {"context", required_argument, 0, kContext},
      {"namespace", required_argument, 0, kNamespace}, {"workers", required_argument, 0, kWorkers},
      {"webhook-bind-address", required_argument, 0, kWebhookAddr}, {"webhook-cert-file", required_argument, 0, kCert},
      {"webhook-key-file", required_argument, 0, kKey}, {"webhook-insecure", no_argument, 0, kInsecure},
      {"health-probe-bind-address", required_argument, 0, kProbe}, {"leader-elect", optional_argument, 0, kElect},
      {"leader-election-namespace", required_argument, 0, kElectNs}, {"leader-election-id", required_argument, 0, kElectId},
      {"lease-duration", required_argument, 0, kLease}, {"renew-deadline", required_argument, 0, kRenew},
      {"retry-period", required_argument, 0, kRetry}, {"log-level", required_argument, 0, kLogLevel},
      {"graceful-shutdown-timeout", required_argument, 0, kGrace}, {"kube-api-qps", required_argument, 0, kQps},
      {"kube-api-burst", required_argument, 0, kBurst}, {"webhook-cert-mode", required_argument, 0, kCertMode},
      {"webhook-secret", required_argument, 0, kSecret}, {"webhook-service", required_argument, 0, kService},
      {"webhook-configuration", required_argument, 0, kVwc}, {"webhook-cert-dir", required_argument, 0, kCertDir},
      {"webhook-cert-san", required_argument, 0, kSan}, {"allow-proxydefaults-from", required_argument, 0, kAllowPd},
      {"help", no_argument, 0, kHelp}, {0, 0, 0, 0}};
  const char *kubeconfig = NULL, *context = NULL, *webhook_addr = ":9443", *cert = NULL, *key = NULL, *probe = ":8081";
  const char *elect_ns = NULL, *elect_id = "propertyoverride-controller", *level_s = "info";
  bool elect = true, insecure = false;
  long workers = 4;
  double lease = 15, renew = 10, retry = 2, grace = 30, qps = 500;
  long burst = 1000;
  bool self_managed = false;
  static const char *sans[16];
  static po_SelfCertOptions sc = {.secret = "propertyoverride-webhook-cert", .service = "propertyoverride-webhook",
                                  .webhook_config = "propertyoverride", .dir = "/tmp/propertyoverride-webhook",
                                  .extra_sans = sans};
  static App app;
  memset(&app, 0, sizeof app);
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    char *end = NULL;
    switch (c) {
      case kKubeconfig: kubeconfig = optarg; break;
      case kContext: context = optarg; break;
      case kNamespace:
        if (app.io.ns_count == kPo_MaxNamespaces) return usage_error("at most 16 --namespace flags");
        app.io.namespaces[app.io.ns_count++] = optarg;
        break;
      case kWorkers:
        workers = strtol(optarg, &end, 10);
        if (*end || workers < 1 || workers > 256) return usage_error("--workers takes 1 to 256");
        break;
      case kWebhookAddr: webhook_addr = optarg; break;
      case kCert: cert = optarg; break;
      case kKey: key = optarg; break;
      case kInsecure: insecure = true; break;
      case kProbe: probe = optarg; break;
      case kElect:
        if (optarg && !parse_bool(optarg, &elect)) return usage_error("--leader-elect takes true or false");
        if (!optarg) elect = true;
        break;
      case kElectNs: elect_ns = optarg; break;
      case kElectId: elect_id = optarg; break;
      case kLease: case kRenew: case kRetry: case kGrace: {
        double v = strtod(optarg, &end);
        if (*end || v <= 0) return usage_error("durations are positive numbers of seconds");
        if (c == kLease) lease = v; else if (c == kRenew) renew = v; else if (c == kRetry) retry = v; else grace = v;
        break;
      }
      case kQps:
        qps = strtod(optarg, &end);
        if (*end || qps <= 0) return usage_error("--kube-api-qps takes a positive number");
        break;
      case kBurst:
        burst = strtol(optarg, &end, 10);
        if (*end || burst < 1) return usage_error("--kube-api-burst takes a positive number");
        break;
      case kCertMode:
        if (!strcmp(optarg, "self-managed")) self_managed = true;
        else if (strcmp(optarg, "files") != 0) return usage_error("--webhook-cert-mode takes files or self-managed");
        break;
      case kSecret: sc.secret = optarg; break;
      case kService: sc.service = optarg; break;
      case kVwc: sc.webhook_config = optarg; break;
      case kCertDir: sc.dir = optarg; break;
      case kSan:
        if (sc.n_sans == 16) return usage_error("at most 16 --webhook-cert-san flags");
        sans[sc.n_sans++] = optarg;
        break;
      case kAllowPd:
        if (!po_Tenancy_AllowProxyDefaults(&app.tenancy, optarg)) {
          return usage_error("--allow-proxydefaults-from takes a namespace or *, at most 64 times");
        }
        break;
      case kLogLevel: level_s = optarg; break;
      case kHelp: fputs(kUsage, stdout); return kPo_ExitOk;
      default: return usage_error(optopt ? "an option is missing its argument" : "unknown option");
    }
  }
  if (optind < argc) return usage_error("unexpected argument");
  po_LogLevel level;
  if (!po_LogLevel_Parse(level_s, &level)) return usage_error("--log-level takes debug, info, warn or error");
  bool webhook_on = strcmp(webhook_addr, "0") != 0;
  if (webhook_on && !insecure && !self_managed && (!cert || !key)) {
    return usage_error("the webhook needs --webhook-cert-file and --webhook-key-file, or --webhook-cert-mode "
                       "self-managed (or --webhook-bind-address 0)");
  }
  if (app.io.ns_count == 0) app.io.namespaces[app.io.ns_count++] = "";

  po_Logger *root = po_Logger_New(&(po_LoggerOptions){.level = level, .name = "propertyoverride"});
  app.log = root;
  po_KubeConfig *cfg = NULL;
  po_KubeStatus ks;
  po_KubeStatus_Clear(&ks);
  if (!po_KubeConfig_Load(&(po_KubeConfigOptions){.kubeconfig = kubeconfig, .context = context}, &cfg, &ks)) {
    fprintf(stderr, "propertyoverride controller: %s\n", ks.message);
    return kPo_ExitUsage;
  }
  po_KubeClientOptions co = {.qps = qps, .burst = (int)burst, .observer = observe_request,
                             .observer_ctx = (void *)po_KubeConfig_Server(cfg)};
  if (!po_KubeClient_New(cfg, &co, &app.io.client, &ks)) {
    fprintf(stderr, "propertyoverride controller: %s\n", ks.message);
    return kPo_ExitUsage;
  }
  /* Without the flag only the controller's own namespace (where the operator runs it, next to
   * Consul's own ProxyDefaults) may target ProxyDefaults. */
  if (app.tenancy.n == 0) po_Tenancy_AllowProxyDefaults(&app.tenancy, elect_ns ? elect_ns : po_KubeConfig_Namespace(cfg));
  app.io.tenancy = &app.tenancy;
  app.index = po_TargetIndex_New();
  app.sync_timeout_ms = 10000;
  po_Metrics *metrics = po_Metrics_Default();
  static const char *const fl[] = {"kind"};
  app.io.foreign_markers = po_Metrics_Register(
      metrics, kPo_Metric_Counter, "propertyoverride_foreign_markers_total",
      "Look-alike PropertyOverride markers (kind entry or object) found in targets and left alone, once per target revision.",
      1, fl, 0, NULL);
  po_KubeIO_Init(&app.io);
  app.table = po_KubeIO_Table(&app.io);
  static const char *const wl[] = {"code", "allowed"};
  app.wh_requests = po_Metrics_Register(metrics, kPo_Metric_Counter, "propertyoverride_webhook_requests_total",
                                        "AdmissionReviews answered, by HTTP status and decision.", 2, wl, 0, NULL);
  app.wh_latency = po_Metrics_Register(metrics, kPo_Metric_Histogram, "propertyoverride_webhook_request_duration_seconds",
                                       "Time to answer an AdmissionReview.", 0, NULL, po_kReconcileTimeBucketsLen,
                                       po_kReconcileTimeBuckets);

  po_RtStatus rs;
  po_RtStatus_Clear(&rs);
  app.controller = po_Controller_New(&(po_ControllerOptions){.name = "propertyoverride", .reconcile = reconcile, .ctx = &app,
                                                             .workers = (int)workers, .metrics = metrics, .log = root},
                                     &rs);
  if (!app.controller) {
    fprintf(stderr, "propertyoverride controller: %s\n", rs.message);
    return kPo_ExitUsage;
  }
  if (elect) {
    char identity[300], host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    snprintf(identity, sizeof identity, "%s_%ld", host, (long)getpid());
    po_LeaderElectionOptions lo = {.ns = elect_ns ? elect_ns : po_KubeConfig_Namespace(cfg), .name = elect_id,
                                   .identity = identity, .lease_duration_ns = (int64_t)(lease * 1e9),
                                   .renew_deadline_ns = (int64_t)(renew * 1e9), .retry_period_ns = (int64_t)(retry * 1e9),
                                   .client = app.io.client, .on_started_leading = started_leading,
                                   .on_stopped_leading = stopped_leading, .on_new_leader = new_leader, .ctx = &app};
    if (!po_LeaderElector_New(&lo, &app.elector, &ks)) {
      fprintf(stderr, "propertyoverride controller: leader election: %s\n", ks.message);
      return kPo_ExitUsage;
    }
  }
  /* The manager releases the lease after the leader runnables stopped. */
  app.manager = po_Manager_New(&(po_ManagerOptions){.log = root, .metrics = metrics, .lease_name = elect ? elect_id : NULL,
                                                    .stop_timeout_ns = (int64_t)(grace * 1e9),
                                                    .release_lease = app.elector ? release_lease : NULL,
                                                    .release_ctx = &app, .exit_process_on_timeout = true},
                               &rs);
  if (!app.manager) {
    fprintf(stderr, "propertyoverride controller: %s\n", rs.message);
    return kPo_ExitUsage;
  }
  po_InformerHandlers ho = {override_added, override_updated, override_deleted, &app};
  po_InformerHandlers hs = {sd_add, sd_update, NULL, &app};
  po_InformerHandlers hp = {pd_add, pd_update, NULL, &app};
  for (size_t i = 0; i < app.io.ns_count; i++) {
    const char *ns = app.io.namespaces[i][0] ? app.io.namespaces[i] : NULL;
    po_InformerOptions io = {.ref = kPo_OverridesRef}, is = {.ref = kPo_ServiceDefaultsRef}, ip = {.ref = kPo_ProxyDefaultsRef};
    io.ref.ns = is.ref.ns = ip.ref.ns = ns;
    if (!po_Informer_New(app.io.client, &io, &ho, &app.io.overrides[i], &ks) ||
        !po_Informer_New(app.io.client, &is, &hs, &app.io.service_defaults[i], &ks) ||
        !po_Informer_New(app.io.client, &ip, &hp, &app.io.proxy_defaults[i], &ks)) {
      fprintf(stderr, "propertyoverride controller: %s\n", ks.message);
      return kPo_ExitUsage;
    }
    po_Informer *all[3] = {app.io.overrides[i], app.io.service_defaults[i], app.io.proxy_defaults[i]};
    for (int k = 0; k < 3; k++) {
      po_Runnable r = {.name = "informer", .start = informer_start, .stop = informer_stop, .ctx = all[k], .stop_early = true};
      po_Manager_Add(app.manager, &r, &rs);
    }
  }
  po_Runnable rc = {.name = "controller", .start = controller_start, .stop = controller_stop, .ctx = &app, .needs_leader = true};
  po_Manager_Add(app.manager, &rc, &rs);
  if (webhook_on && self_managed) {
    char err[512];
    bool changed;
    sc.ns = elect_ns ? elect_ns : po_KubeConfig_Namespace(cfg);
    if (!po_SelfCert_Ensure(app.io.client, &sc, &changed, err, sizeof err)) {
      fprintf(stderr, "propertyoverride controller: webhook certificates: %s\n", err);
      return kPo_ExitUsage;
    }
    po_Log_Info(root, changed ? "webhook certificates generated" : "webhook certificates loaded", po_Str("secret", sc.secret),
                po_Str("namespace", sc.ns));
    static char cert_path[4200], key_path[4200];
    snprintf(cert_path, sizeof cert_path, "%s/tls.crt", sc.dir);
    snprintf(key_path, sizeof key_path, "%s/tls.key", sc.dir);
    cert = cert_path;
    key = key_path;
    static RenewCtx rctx;
    rctx = (RenewCtx){app.io.client, &sc, root};
    pthread_t t;
    if (pthread_create(&t, NULL, renew_loop, &rctx) == 0) pthread_detach(t);
  }
  if (webhook_on) {
    char err[256];
    po_WebhookServer *wh = po_WebhookServer_Start(
        &(po_WebhookOptions){.address = webhook_addr, .cert_file = insecure ? NULL : cert, .key_file = insecure ? NULL : key,
                             .observe = observe_webhook, .observe_ctx = &app, .tenancy = &app.tenancy},
        err, sizeof err);
    if (!wh) {
      fprintf(stderr, "propertyoverride controller: webhook: %s\n", err);
      return kPo_ExitUsage;
    }
    po_Log_Info(root, "webhook serving", po_Int("port", po_WebhookServer_Port(wh)), po_Bool("tls", !insecure));
    po_Runnable rw = {.name = "webhook", .start = webhook_start, .stop = webhook_stop, .ctx = wh};
    po_Manager_Add(app.manager, &rw, &rs);
  }
  if (strcmp(probe, "0") != 0) {
    po_OpsServer *ops = po_OpsServer_New(&(po_OpsOptions){.address = probe, .metrics = metrics, .log = root}, &rs);
    if (!ops || !po_OpsServer_AddReadyCheck(ops, "informers-synced", synced, &app, &rs)) {
      fprintf(stderr, "propertyoverride controller: %s\n", rs.message);
      return kPo_ExitUsage;
    }
    po_Runnable ro = po_OpsServer_Runnable(ops);
    po_Manager_Add(app.manager, &ro, &rs);
  }
  po_Runnable rl = {.name = "leadership", .start = app.elector ? elector_start : lead_alone_start,
                    .stop = app.elector ? elector_stop : lead_alone_stop, .ctx = app.elector ? (void *)app.elector : (void *)&app};
  po_Manager_Add(app.manager, &rl, &rs);
  po_Log_Info(root, "starting", po_Str("server", po_KubeConfig_Server(cfg)), po_Int("workers", workers),
              po_Bool("leaderElection", elect));
  int rc_exit = po_Manager_Run(app.manager);
  po_Log_Info(root, "stopped", po_Int("exitCode", rc_exit));
  /* Process exit frees the rest; the stop above already ended every thread. */
  return rc_exit;
}
