/* propertyoverride controller: the flags, turned into po_AppOptions for the controller process
 * (controller/app), which does everything else. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"
#include "po/app/app.h"
#include "po/targets/tenancy.h"

static const char kUsage[] =
    "usage: propertyoverride controller [OPTIONS]\n"
    "\n"
    "Watches PropertyOverrides, validates them with Consul's property-override semantics and the\n"
    "Envoy v3 schema, and writes them into Consul ServiceDefaults/ProxyDefaults envoyExtensions,\n"
    "or Istio EnvoyFilters (targets Service and Mesh).\n"
    "Serves the validating and mutating admission webhooks on every replica; only the leader\n"
    "reconciles.\n"
    "\n"
    "  --kubeconfig FILE              kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
    "  --context NAME                 kubeconfig context (default: current-context)\n"
    "  --namespace NS                 watch only NS (repeatable, up to 16; default: all namespaces)\n"
    "  --allow-proxydefaults-from NS  a namespace whose PropertyOverrides may target the mesh-wide\n"
    "                                 ProxyDefaults (repeatable; * for any; default: only the\n"
    "                                 controller's own namespace)\n"
    "  --allow-cross-namespace-from NS[,NS...]  namespaces (platform teams) whose PropertyOverrides\n"
    "                                 may set targetRef.namespace to any namespace for ServiceDefaults\n"
    "                                 targets (repeatable; DNS labels, no *; default: none)\n"
    "  --consul-sync-status MODE      require (default): Programmed=True only once consul-k8s reports\n"
    "                                 the target Synced after our write (Pending, SyncFailed until\n"
    "                                 then); ignore: written is programmed (no consul-k8s installed)\n"
    "  --consul-sync-timeout S        Pending this long after a write raises one Warning Event\n"
    "                                 SyncTimeout (default 120; 0: never)\n"
    "  --consul-namespace-mirroring   Consul namespaces with mirroring are on: a ServiceDefaults\n"
    "                                 name may exist in several namespaces (default off: none is\n"
    "                                 created where that name exists in another namespace)\n"
    "  --istio MODE                   auto (default): program Istio targets (Service, Mesh) once the\n"
    "                                 API server serves EnvoyFilters (checked at start, then every\n"
    "                                 --istio-recheck-interval until it does); on; off (their\n"
    "                                 PropertyOverrides say Programmed=False MeshNotEnabled until on)\n"
    "  --istio-recheck-interval S     --istio=auto without EnvoyFilters served: check again every S\n"
    "                                 seconds (default 60)\n"
    "  --istio-version 1.N            the Istio release the mesh runs (1.26 to 1.31): its Envoy API\n"
    "                                 judges Service and Mesh targets, and arrays become\n"
    "                                 MERGE_AND_REPLACE_LIST from 1.31 (default: read from the istiod\n"
    "                                 Service's app.kubernetes.io/version label; else unknown:\n"
    "                                 arrays refused, judged as 1.31)\n"
    "  --consul-version 1.N           the Consul release the mesh runs: its Envoy API (go-control-plane\n"
    "                                 envoy snapshot) judges Consul targets (1.21, 1.22; default 1.22)\n"
    "  --envoy-gateway-version 1.N    the Envoy Gateway release: its Envoy API judges Gateway targets\n"
    "                                 (1.5 to 1.9; default: read from the envoy-gateway Service's\n"
    "                                 app.kubernetes.io/version label, else 1.9)\n"
    "  --istio-root-namespace NS      Istio's root namespace, for Mesh targets (default istio-system)\n"
    "  --cluster-domain D             Kubernetes' DNS domain in Istio's service names (cluster.local)\n"
    "  --envoy-gateway MODE           auto (default): program Envoy Gateway targets (Gateway) when the\n"
    "                                 API server serves EnvoyPatchPolicies, Gateways and HTTPRoutes\n"
    "                                 at start; on; off (then\n"
    "                                 their PropertyOverrides say Programmed=False MeshNotEnabled)\n"
    "  --workers N                    concurrent reconciles (default 8)\n"
    "  --target-batch-window S        a target's reconciles start at least S seconds apart: a change\n"
    "                                 to a quiet target at once, later ones together when the S\n"
    "                                 seconds after the last start end (default 2; 0: each at once)\n"
    "  --target-burst-quiet S         events less than S seconds apart (any target) are a burst\n"
    "                                 (default 0.25)\n"
    "  --target-burst-max S           within a burst a target's reconcile waits until the burst\n"
    "                                 pauses, at most S seconds (default 3; 0: no wait)\n"
    "  --webhook-bind-address ADDR    webhook HTTPS address (default :9443; 0 disables the webhook)\n"
    "  --webhook-cert-file FILE       serving certificate (PEM; re-read when it changes)\n"
    "  --webhook-key-file FILE        its private key (PEM)\n"
    "  --webhook-insecure             serve the webhook over plain HTTP (tests only)\n"
    "  --webhook-memory-budget MiB    what the webhook's requests in flight may hold together,\n"
    "                                 bodies and decoding (default 96: with the 256 MiB limit of\n"
    "                                 deploy/ and the chart); beyond it 429 with Retry-After: 1\n"
    "  --webhook-cert-mode MODE       files (the two flags above) or self-managed: a CA and serving\n"
    "                                 certificate kept in a Secret, the caBundle put into the\n"
    "                                 Validating- and MutatingWebhookConfiguration, renewed 30 days\n"
    "                                 before expiry\n"
    "  --webhook-secret NAME          self-managed: the Secret (default propertyoverride-webhook-cert)\n"
    "  --webhook-service NAME         self-managed: the webhook Service, for the certificate's names\n"
    "                                 (default propertyoverride-webhook)\n"
    "  --webhook-configuration NAME   self-managed: the ValidatingWebhookConfiguration,\n"
    "                                 and the MutatingWebhookConfiguration of that name, if any\n"
    "                                 (default propertyoverride)\n"
    "  --webhook-cert-dir DIR         self-managed: where the files go (default\n"
    "                                 /tmp/propertyoverride-webhook)\n"
    "  --webhook-cert-san NAME        self-managed: a further DNS name or IP (repeatable)\n"
    "  --controller-username NAME     the API server's username for this controller (its\n"
    "                                 ServiceAccount's, system:serviceaccount:NS:NAME): its own\n"
    "                                 target writes pass the mutating webhook (POST /mutate) unchanged\n"
    "                                 and the validating one (POST /validate) unread\n"
    "  --health-probe-bind-address A  /healthz, /readyz and /metrics (default :8081)\n"
    "  --leader-elect=BOOL            leader election on a Lease (default true)\n"
    "  --leader-election-namespace NS the Lease's namespace (default: the kubeconfig's namespace)\n"
    "  --leader-election-id NAME      the Lease's name (default propertyoverride-controller)\n"
    "  --lease-duration S, --renew-deadline S, --retry-period S   (defaults 15, 10, 2 seconds)\n"
    "  --kube-api-qps N, --kube-api-burst N  client-side rate limit (default 500 and 1000)\n"
    "  --kube-api-http2=BOOL          HTTP/2 to the API server (default false: HTTP/1.1, a third\n"
    "                                 less CPU per request)\n"
    "  --kube-list-page-size N        objects per page of the PropertyOverride and target lists\n"
    "                                 (default 5000; 0: one unpaginated list)\n"
    "  --log-level LEVEL              debug, info, warn, error (default info)\n"
    "  --graceful-shutdown-timeout S  the whole orderly stop (default 30)\n"
    "\n"
    "Exit status: 0 after an orderly stop; 1 when the stop did not finish in time; 2 bad usage or\n"
    "a failure to start.\n";

static bool parse_bool(const char *s, bool *out) {
  if (!strcmp(s, "true") || !strcmp(s, "1")) return *out = true, true;
  if (!strcmp(s, "false") || !strcmp(s, "0")) return *out = false, true;
  return false;
}

/* --istio, --envoy-gateway: auto, on or off. */
static bool mesh_mode(const char *s, po_MeshEnableMode *m) {
  static const struct { const char *name; po_MeshEnableMode mode; } kModes[] = {
      {"auto", kPo_IstioMode_Auto}, {"on", kPo_IstioMode_On}, {"off", kPo_IstioMode_Off}};
  for (size_t i = 0; i < sizeof kModes / sizeof kModes[0]; i++) {
    if (!strcmp(s, kModes[i].name)) return *m = kModes[i].mode, true;
  }
  return false;
}

/* A number of seconds from lo to hi, the whole of arg (NaN is in no range). */
static bool seconds_in(const char *arg, double lo, double hi, double *out) {
  char *end = NULL;
  *out = strtod(arg, &end);
  return end != arg && !*end && *out >= lo && *out <= hi;
}

static int usage_error(const char *msg) {
  fprintf(stderr, "propertyoverride controller: %s\n\n%s", msg, kUsage);
  return kPo_Exit_Usage;
}

enum { kKubeconfig = 256, kContext, kNamespace, kWorkers, kBatch, kBurstQuiet, kBurstMax, kWebhookAddr, kCert, kKey, kInsecure, kProbe, kElect, kElectNs,
       kElectId, kLease, kRenew, kRetry, kLogLevel, kGrace, kQps, kBurst, kHttp2, kPageSize, kCertMode, kSecret, kService, kVwc,
       kCertDir, kSan, kMemBudget, kAllowPd, kAllowXns, kCtlUser, kSyncMode, kSyncTimeout, kMirroring, kIstio, kIstioRecheck, kEnvoyGateway, kConsulVersion, kEgVersion, kHelp };
static const struct option kOpts[] = {
    {"kubeconfig", required_argument, 0, kKubeconfig}, {"context", required_argument, 0, kContext},
    {"namespace", required_argument, 0, kNamespace}, {"workers", required_argument, 0, kWorkers},
    {"target-batch-window", required_argument, 0, kBatch},
    {"target-burst-quiet", required_argument, 0, kBurstQuiet},
    {"target-burst-max", required_argument, 0, kBurstMax},
    {"webhook-bind-address", required_argument, 0, kWebhookAddr}, {"webhook-cert-file", required_argument, 0, kCert},
    {"webhook-key-file", required_argument, 0, kKey}, {"webhook-insecure", no_argument, 0, kInsecure},
    {"health-probe-bind-address", required_argument, 0, kProbe}, {"leader-elect", optional_argument, 0, kElect},
    {"leader-election-namespace", required_argument, 0, kElectNs}, {"leader-election-id", required_argument, 0, kElectId},
    {"lease-duration", required_argument, 0, kLease}, {"renew-deadline", required_argument, 0, kRenew},
    {"retry-period", required_argument, 0, kRetry}, {"log-level", required_argument, 0, kLogLevel},
    {"graceful-shutdown-timeout", required_argument, 0, kGrace}, {"kube-api-qps", required_argument, 0, kQps},
    {"kube-api-burst", required_argument, 0, kBurst}, {"kube-api-http2", optional_argument, 0, kHttp2},
    {"kube-list-page-size", required_argument, 0, kPageSize}, {"webhook-cert-mode", required_argument, 0, kCertMode},
    {"webhook-secret", required_argument, 0, kSecret}, {"webhook-service", required_argument, 0, kService},
    {"webhook-configuration", required_argument, 0, kVwc}, {"webhook-cert-dir", required_argument, 0, kCertDir},
    {"webhook-cert-san", required_argument, 0, kSan}, {"webhook-memory-budget", required_argument, 0, kMemBudget}, {"allow-proxydefaults-from", required_argument, 0, kAllowPd},
    {"allow-cross-namespace-from", required_argument, 0, kAllowXns},
    {"controller-username", required_argument, 0, kCtlUser},
    {"consul-sync-status", required_argument, 0, kSyncMode}, {"consul-sync-timeout", required_argument, 0, kSyncTimeout},
    {"consul-namespace-mirroring", no_argument, 0, kMirroring}, {"istio", required_argument, 0, kIstio},
    {"envoy-gateway", required_argument, 0, kEnvoyGateway},
    {"istio-recheck-interval", required_argument, 0, kIstioRecheck},
    {"consul-version", required_argument, 0, kConsulVersion},
    {"envoy-gateway-version", required_argument, 0, kEgVersion},
    {"cluster-domain", required_argument, 0, kPo_CliOpt_ClusterDomain},
    {"istio-version", required_argument, 0, kPo_CliOpt_IstioVersion},
    {"istio-root-namespace", required_argument, 0, kPo_CliOpt_IstioRootNamespace},
    {"help", no_argument, 0, kHelp}, {0, 0, 0, 0}};

/* What a flag's step returns when it took the flag and the parse goes on, and when the flag is
 * another step's; anything else is the exit status the command ends with. */
enum { kFlagTaken = -1, kFlagNotMine = -2 };

/* The flags of what the controller programs: which meshes, how they are named, how Consul's
 * sync is awaited, and which namespaces may target beyond their own. */
static int mesh_flag(int c, const char *arg, po_AppOptions *o, po_TargetOptions *targets) {
  switch (c) {
    case kMirroring: o->consul_namespace_mirroring = true; break;
    case kIstio:
      if (!mesh_mode(arg, &o->istio)) return usage_error("--istio takes auto (when EnvoyFilters are served), on or off");
      break;
    case kEnvoyGateway:
      if (!mesh_mode(arg, &o->envoy_gateway)) {
        return usage_error("--envoy-gateway takes auto (when EnvoyPatchPolicies are served), on or off");
      }
      break;
    case kIstioRecheck:
      if (!seconds_in(arg, 1, 86400, &o->istio_recheck_s)) {
        return usage_error("--istio-recheck-interval takes seconds from 1 to 86400, e.g. 60");
      }
      break;
    case kPo_CliOpt_ClusterDomain: case kPo_CliOpt_IstioVersion: case kPo_CliOpt_IstioRootNamespace:
      if (!po_Cli_TargetOption(c, arg, "controller", targets, NULL)) return kPo_Exit_Usage;
      break;
    /* a release whose Envoy API snapshot is embedded, else the start fails naming those that
     * are: po_App_New checks it against the mesh's table (controller/app/src/releases.c) */
    case kConsulVersion:
      if (o->consul_version) return usage_error("--consul-version is given twice: name the one release the mesh runs");
      o->consul_version = arg;
      break;
    case kEgVersion:
      if (o->envoy_gateway_version) return usage_error("--envoy-gateway-version is given twice: name the one release the mesh runs");
      o->envoy_gateway_version = arg;
      break;
    case kSyncMode:
      if (!strcmp(arg, "require")) o->consul_sync_require = true;
      else if (!strcmp(arg, "ignore")) o->consul_sync_require = false;
      else return usage_error("--consul-sync-status takes require (wait for consul-k8s's Synced) or ignore");
      break;
    case kSyncTimeout:
      if (!seconds_in(arg, 0, 86400, &o->consul_sync_timeout_s)) {
        return usage_error("--consul-sync-timeout takes seconds from 0 (never) to 86400, e.g. 120");
      }
      break;
    case kAllowPd:
      if (!*arg || o->n_proxydefaults_from == kPo_AppMaxProxyDefaultsFrom) {
        return usage_error("--allow-proxydefaults-from takes a namespace or *, at most 64 times");
      }
      o->proxydefaults_from[o->n_proxydefaults_from++] = arg;
      break;
    case kAllowXns: {
      /* parsed here, strictly, so a typo fails the start instead of allowing nobody */
      po_CtlStatus st;
      po_Tenancy probe = {0};
      if (!po_Tenancy_AllowCrossNamespace(&probe, arg, &st)) return usage_error(st.message);
      if (o->n_cross_namespace_from == kPo_AppMaxProxyDefaultsFrom) {
        return usage_error("--allow-cross-namespace-from: at most 64 times");
      }
      o->cross_namespace_from[o->n_cross_namespace_from++] = arg;
      break;
    }
    default: return kFlagNotMine;
  }
  return kFlagTaken;
}

/* The webhook's flags: where it listens, its certificate (files or self-managed), its memory. */
static int webhook_flag(int c, const char *arg, po_AppOptions *o) {
  char *end = NULL;
  switch (c) {
    case kWebhookAddr: o->webhook_address = arg; break;
    case kCert: o->cert_file = arg; break;
    case kKey: o->key_file = arg; break;
    case kInsecure: o->webhook_insecure = true; break;
    case kMemBudget: {
      long mib = strtol(arg, &end, 10);
      if (end == arg || *end || mib < 8 || mib > 65536) {
        return usage_error("--webhook-memory-budget takes MiB from 8 to 65536, e.g. 96 (a maximal review needs 82)");
      }
      o->webhook_memory_budget = (size_t)mib << 20;
      break;
    }
    case kCertMode:
      if (!strcmp(arg, "self-managed")) o->cert_mode = kPo_CertMode_SelfManaged;
      else if (!strcmp(arg, "files")) o->cert_mode = kPo_CertMode_Files;
      else return usage_error("--webhook-cert-mode takes files or self-managed");
      break;
    case kSecret: o->secret = arg; break;
    case kService: o->service = arg; break;
    case kVwc: o->webhook_config = arg; break;
    case kCertDir: o->cert_dir = arg; break;
    case kSan:
      if (o->n_sans == kPo_AppMaxSans) return usage_error("at most 16 --webhook-cert-san flags");
      o->sans[o->n_sans++] = arg;
      break;
    case kCtlUser: o->controller_user = arg; break;
    default: return kFlagNotMine;
  }
  return kFlagTaken;
}

/* The process's own flags: the API server and its rate, the workers, the lease, the stop. */
static int process_flag(int c, const char *arg, po_AppOptions *o, const char **level) {
  char *end = NULL;
  switch (c) {
    case kKubeconfig: o->kubeconfig = arg; break;
    case kContext: o->context = arg; break;
    case kNamespace:
      if (o->n_namespaces == kPo_AppMaxNamespaces) return usage_error("at most 16 --namespace flags");
      o->namespaces[o->n_namespaces++] = arg;
      break;
    case kWorkers: {
      long workers = strtol(arg, &end, 10);
      if (*end || workers < 1 || workers > 256) return usage_error("--workers takes 1 to 256");
      o->workers = (int)workers;
      break;
    }
    case kBatch:
      if (!seconds_in(arg, 0, 60, &o->target_batch_window_s)) {
        return usage_error("--target-batch-window takes seconds from 0 (off) to 60, e.g. 0.5");
      }
      break;
    case kBurstQuiet:
      if (!seconds_in(arg, 0.01, 10, &o->target_burst_quiet_s)) {
        return usage_error("--target-burst-quiet takes seconds from 0.01 to 10, e.g. 0.25");
      }
      break;
    case kBurstMax:
      if (!seconds_in(arg, 0, 60, &o->target_burst_max_s)) {
        return usage_error("--target-burst-max takes seconds from 0 (off) to 60, e.g. 3");
      }
      break;
    case kProbe: o->probe_address = arg; break;
    case kElect:
      if (arg && !parse_bool(arg, &o->leader_elect)) return usage_error("--leader-elect takes true or false");
      if (!arg) o->leader_elect = true;
      break;
    case kElectNs: o->lease_namespace = arg; break;
    case kElectId: o->lease_name = arg; break;
    case kLease: case kRenew: case kRetry: case kGrace: {
      double v = strtod(arg, &end);
      if (*end || v <= 0) return usage_error("durations are positive numbers of seconds");
      if (c == kLease) o->lease_s = v; else if (c == kRenew) o->renew_deadline_s = v; else if (c == kRetry) o->retry_period_s = v; else o->grace_s = v;
      break;
    }
    case kQps:
      o->qps = strtod(arg, &end);
      if (*end || o->qps <= 0) return usage_error("--kube-api-qps takes a positive number");
      break;
    case kBurst: {
      long burst = strtol(arg, &end, 10);
      if (*end || burst < 1 || burst > 1000000) return usage_error("--kube-api-burst takes a positive number");
      o->burst = (int)burst;
      break;
    }
    case kHttp2:
      if (arg && !parse_bool(arg, &o->kube_http2)) return usage_error("--kube-api-http2 takes true or false");
      if (!arg) o->kube_http2 = true;
      break;
    case kPageSize: {
      long n = strtol(arg, &end, 10);
      if (*end || end == arg || n < 0 || n > 1000000) return usage_error("--kube-list-page-size takes a count from 0 (unpaginated) to 1000000");
      o->list_page_size = n ? n : -1;
      break;
    }
    case kLogLevel: *level = arg; break;
    default: return kFlagNotMine;
  }
  return kFlagTaken;
}

/* Every flag into *o; kFlagTaken when the command goes on, else the exit status (--help, a
 * refusal). What one flag cannot check alone (the webhook's certificate) is checked after. */
static int parse_flags(int argc, char **argv, po_AppOptions *o) {
  const char *level_s = "info";
  po_TargetOptions targets = {0};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", kOpts, NULL)) != -1) {
    if (c == kHelp) return fputs(kUsage, stdout), kPo_Exit_Ok;
    int rc = mesh_flag(c, optarg, o, &targets);
    if (rc == kFlagNotMine) rc = webhook_flag(c, optarg, o);
    if (rc == kFlagNotMine) rc = process_flag(c, optarg, o, &level_s);
    if (rc == kFlagNotMine) return usage_error(optopt ? "an option is missing its argument" : "unknown option");
    if (rc != kFlagTaken) return rc;
  }
  if (optind < argc) return usage_error("unexpected argument");
  o->cluster_domain = targets.cluster_domain;
  o->istio_minor = targets.istio_minor;
  o->istio_root_namespace = targets.istio_root_namespace;
  if (!po_LogLevel_Parse(level_s, &o->log_level)) return usage_error("--log-level takes debug, info, warn or error");
  if (strcmp(o->webhook_address, "0") != 0 && !o->webhook_insecure && o->cert_mode == kPo_CertMode_Files &&
      (!o->cert_file || !o->key_file)) {
    return usage_error("the webhook needs --webhook-cert-file and --webhook-key-file, or --webhook-cert-mode "
                       "self-managed (or --webhook-bind-address 0)");
  }
  return kFlagTaken;
}

int po_Cmd_Controller(int argc, char **argv) {
  po_AppOptions o;
  po_AppOptions_Init(&o);
  int rc = parse_flags(argc, argv, &o);
  if (rc != kFlagTaken) return rc;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_App *app = po_App_New(&o, &st);
  if (!app) {
    fprintf(stderr, "propertyoverride controller: %s\n", st.message);
    return kPo_Exit_Usage;
  }
  rc = po_App_Run(app);
  po_App_Free(app);
  return rc;
}
