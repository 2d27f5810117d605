/* po-apiserver: flags, startup (state, CRD preload, TLS, listener, ready file), shutdown. */
#include <curl/curl.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "apiserver.h"

static void usage(void) {
  fprintf(stderr,
          "usage: po-apiserver [--listen HOST:PORT] [--ready-file F] [--tls-dir DIR] [--tls-san DNS]... [--kubeconfig F]\n"
          "  [--token T]... [--state FILE] [--crd FILE]... [--compaction-window N] [--bookmark-interval-ms MS]\n"
          "  [--webhook-host-override HOST:PORT] [--webhook-service NS/NAME=HOST:PORT]...\n"
          "  [--fault-drop-watch-every N] [--fault-410-next N] [--fault-429-next N] [--fault-retry-after S]\n"
          "  [--fault-5xx-next N] [--fault-5xx-code C] [--fault-latency-ms MS] [--fault-5xx-percent P]\n"
          "  [--fault-410-percent P] [--fault-seed S] [--log-level error|warn|info|debug]\n"
          "  [--fake-consul-k8s] [--fake-consul-k8s-delay-ms MS]   (a test double of consul-k8s's Synced status)\n"
          "  [--fake-envoy-gateway[=disabled]]   (a test double of Envoy Gateway's EnvoyPatchPolicy status)\n"
          "see tests/apiserver/README.md\n");
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  size_t got = fread(b, 1, (size_t)n, f);
  fclose(f);
  b[got] = 0;
  if (len) *len = got;
  return b;
}

static bool write_atomic(const char *path, const char *text) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  ok = fflush(f) == 0 && ok;
  ok = fsync(fileno(f)) == 0 && ok;
  fclose(f);
  return ok && rename(tmp, path) == 0;
}

static bool int_flag(const char *name, const char *v, int *out) {
  char *end;
  long x = v ? strtol(v, &end, 10) : -1;
  if (!v || *end || x < 0 || x > 1000000000L) {
    fprintf(stderr, "po-apiserver: %s needs a non-negative integer, got \"%s\"\n", name, v ? v : "");
    return false;
  }
  *out = (int)x;
  return true;
}

/* Preload one YAML file: CRDs first so the documents after them can use their kinds. */
static bool preload(const char *path) {
  size_t len;
  char *text = read_all(path, &len);
  if (!text) {
    fprintf(stderr, "po-apiserver: --crd %s: %s\n", path, strerror(errno));
    return false;
  }
  char msg[1024] = "";
  json_object *docs = po_As_Yaml_Parse(text, len, msg, sizeof msg);
  free(text);
  if (!docs) {
    fprintf(stderr, "po-apiserver: --crd %s: %s\n", path, msg);
    return false;
  }
  bool ok = true;
  pthread_mutex_lock(&po_as.mu);
  for (int pass = 0; pass < 2 && ok; pass++) {
    for (size_t i = 0; i < json_object_array_length(docs) && ok; i++) {
      json_object *d = json_object_array_get_idx(docs, i);
      const char *av = po_As_GetStr(d, "apiVersion"), *kind = po_As_GetStr(d, "kind");
      if (!av || !kind) {
        fprintf(stderr, "po-apiserver: --crd %s: document %zu has no apiVersion or kind\n", path, i + 1);
        ok = false;
        break;
      }
      bool is_crd = !strcmp(kind, "CustomResourceDefinition");
      if ((pass == 0) != is_crd) continue;
      const char *slash = strchr(av, '/');
      char group[256];
      snprintf(group, sizeof group, "%.*s", slash ? (int)(slash - av) : 0, av);
      po_As_Resource *r = po_As_Registry_FindKind(group, kind);
      if (!r) {
        fprintf(stderr, "po-apiserver: --crd %s: document %zu: no resource for %s %s\n", path, i + 1, av, kind);
        ok = false;
        break;
      }
      if (!po_As_Objects_CreateLocked(r, po_As_Copy(d), msg, sizeof msg)) {
        fprintf(stderr, "po-apiserver: --crd %s: document %zu: %s\n", path, i + 1, msg);
        ok = false;
      }
    }
  }
  pthread_mutex_unlock(&po_as.mu);
  json_object_put(docs);
  return ok;
}

static char *make_kubeconfig(const char *url, const char *ca_pem, const char *token) {
  char *ca = ca_pem ? po_As_Base64((const unsigned char *)ca_pem, strlen(ca_pem)) : NULL;
  char *s = po_As_Printf(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: po-apiserver\n  cluster:\n    server: %s\n%s%s%s"
      "users:\n- name: po-apiserver\n  user:%s%s%s\ncontexts:\n- name: po-apiserver\n  context:\n"
      "    cluster: po-apiserver\n    user: po-apiserver\n    namespace: default\ncurrent-context: po-apiserver\n",
      url, ca ? "    certificate-authority-data: " : "", ca ? ca : "", ca ? "\n" : "", token ? "\n    token: " : " {}",
      token ? token : "", "");
  free(ca);
  return s;
}

int main(int argc, char **argv) {
  const char *listen = "127.0.0.1:0", *ready = NULL, *tls_dir = NULL, *state = NULL, *kubeconfig = NULL;
  const char *crds[64];
  int ncrds = 0, window = 1000;
  char *tokens[32];
  int ntokens = 0;
  char *sans[16];
  int nsans = 0;
  po_as.bookmark_ms = 1000;
  po_as.log_level = kPo_As_LogInfo;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKE() (i++, v)
    if (!strcmp(a, "--listen") && v) listen = TAKE();
    else if (!strcmp(a, "--ready-file") && v) ready = TAKE();
    else if (!strcmp(a, "--tls-dir") && v) tls_dir = TAKE();
    else if (!strcmp(a, "--kubeconfig") && v) kubeconfig = TAKE();
    else if (!strcmp(a, "--tls-san") && v && nsans < 16) sans[nsans++] = (char *)TAKE();
    else if (!strcmp(a, "--token") && v && ntokens < 32) tokens[ntokens++] = strdup(TAKE());
    else if (!strcmp(a, "--state") && v) state = TAKE();
    else if (!strcmp(a, "--crd") && v && ncrds < 64) crds[ncrds++] = TAKE();
    else if (!strcmp(a, "--compaction-window")) { if (!int_flag(a, TAKE(), &window)) return 2; }
    else if (!strcmp(a, "--bookmark-interval-ms")) { if (!int_flag(a, TAKE(), &po_as.bookmark_ms)) return 2; }
    else if (!strcmp(a, "--webhook-host-override") && v) po_as.webhook_override = strdup(TAKE());
    else if (!strcmp(a, "--webhook-service") && v && po_as.nsvc_map < 32) po_as.svc_map[po_as.nsvc_map++] = strdup(TAKE());
    else if (!strcmp(a, "--fake-consul-k8s")) po_As_FakeConsulK8s_Enable(0);
    else if (!strcmp(a, "--fake-envoy-gateway")) po_As_FakeEnvoyGateway_Enable(false);
    else if (!strcmp(a, "--fake-envoy-gateway=disabled")) po_As_FakeEnvoyGateway_Enable(true);
    else if (!strcmp(a, "--fake-consul-k8s-delay-ms")) {
      int ms;
      if (!int_flag(a, TAKE(), &ms)) return 2;
      po_As_FakeConsulK8s_Enable(ms);
    }
    else if (!strcmp(a, "--fault-drop-watch-every")) { if (!int_flag(a, TAKE(), &po_as.faults.drop_watch_every)) return 2; }
    else if (!strcmp(a, "--fault-410-next")) { if (!int_flag(a, TAKE(), &po_as.faults.force_410)) return 2; }
    else if (!strcmp(a, "--fault-429-next")) { if (!int_flag(a, TAKE(), &po_as.faults.throttle)) return 2; }
    else if (!strcmp(a, "--fault-retry-after")) { if (!int_flag(a, TAKE(), &po_as.faults.retry_after)) return 2; }
    else if (!strcmp(a, "--fault-5xx-next")) { if (!int_flag(a, TAKE(), &po_as.faults.server_errors)) return 2; }
    else if (!strcmp(a, "--fault-5xx-code")) { if (!int_flag(a, TAKE(), &po_as.faults.server_error_code)) return 2; }
    else if (!strcmp(a, "--fault-latency-ms")) { if (!int_flag(a, TAKE(), &po_as.faults.latency_ms)) return 2; }
    else if (!strcmp(a, "--fault-5xx-percent")) { if (!int_flag(a, TAKE(), &po_as.faults.server_error_percent)) return 2; }
    else if (!strcmp(a, "--fault-410-percent")) { if (!int_flag(a, TAKE(), &po_as.faults.force_410_percent)) return 2; }
    else if (!strcmp(a, "--fault-seed")) {
      int seed;
      if (!int_flag(a, TAKE(), &seed)) return 2;
      po_as.faults.seed = (uint64_t)seed;
    }
    else if (!strcmp(a, "--log-level") && v) {
      const char *l = TAKE();
      po_as.log_level = !strcmp(l, "error") ? 0 : !strcmp(l, "warn") ? 1 : !strcmp(l, "debug") ? 3 : 2;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage();
      return 0;
    } else {
      fprintf(stderr, "po-apiserver: unknown flag or missing value: %s\n", a);
      usage();
      return 2;
    }
#undef TAKE
  }
  char host[128];
  int port = 0;
  const char *colon = strrchr(listen, ':');
  if (!colon || !int_flag("--listen port", colon + 1, &port) || port > 65535) {
    fprintf(stderr, "po-apiserver: --listen wants HOST:PORT, got \"%s\"\n", listen);
    return 2;
  }
  snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
  if (host[0] == '[') { /* [::1] */
    memmove(host, host + 1, strlen(host));
    char *rb = strchr(host, ']');
    if (rb) *rb = 0;
  }
  /* Signals are taken by sigwait in this thread only. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  gnutls_global_init();

  po_as.ring_cap = (size_t)window;
  po_as.ring = calloc(po_as.ring_cap + 1, sizeof *po_as.ring);
  pthread_mutex_lock(&po_as.mu);
  po_As_Registry_AddBuiltins();
  pthread_mutex_unlock(&po_as.mu);
  char msg[1024] = "";
  if (state && !po_As_Persist_Load(state, msg, sizeof msg)) {
    fprintf(stderr, "po-apiserver: --state: %s\n", msg);
    return 1;
  }
  pthread_mutex_lock(&po_as.mu);
  static const char *const kNamespaces[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
  po_As_Resource *nsr = po_As_Registry_FindGR("", "namespaces");
  for (size_t i = 0; i < 4; i++) {
    if (po_As_Store_Get(nsr, NULL, kNamespaces[i])) continue;
    json_object *ns = json_object_new_object();
    json_object_object_add(ns, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(ns, "kind", json_object_new_string("Namespace"));
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", json_object_new_string(kNamespaces[i]));
    json_object_object_add(ns, "metadata", meta);
    po_As_Objects_CreateLocked(nsr, ns, msg, sizeof msg);
  }
  pthread_mutex_unlock(&po_as.mu);
  for (int i = 0; i < ncrds; i++)
    if (!preload(crds[i])) return 1;

  char *cert = NULL, *key = NULL, *ca = NULL;
  if (tls_dir) {
    if (!po_As_Tls_Ensure(tls_dir, sans, nsans, msg, sizeof msg)) {
      fprintf(stderr, "po-apiserver: --tls-dir: %s\n", msg);
      return 1;
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/tls.crt", tls_dir);
    cert = read_all(p, NULL);
    snprintf(p, sizeof p, "%s/tls.key", tls_dir);
    key = read_all(p, NULL);
    snprintf(p, sizeof p, "%s/ca.crt", tls_dir);
    ca = read_all(p, NULL);
    if (!cert || !key || !ca) {
      fprintf(stderr, "po-apiserver: --tls-dir %s: cannot read ca.crt, tls.crt or tls.key\n", tls_dir);
      return 1;
    }
    if (ntokens == 0) { /* TLS always authenticates: make a token for the kubeconfig */
      unsigned char rnd[16];
      if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) memset(rnd, 7, sizeof rnd);
      char t[40];
      for (int i = 0; i < 16; i++) snprintf(t + 2 * i, 3, "%02x", rnd[i]);
      tokens[ntokens++] = strdup(t);
    }
  }
  if (state) po_As_Persist_Start(state);
  po_As_FakeConsulK8s_Start();
  po_As_FakeEnvoyGateway_Start();
  po_As_Listen l = {.host = host, .port = port, .cert_pem = cert, .key_pem = key, .tokens = tokens, .ntokens = ntokens};
  int bound = 0;
  struct MHD_Daemon *d = po_As_Router_Start(&l, &bound, msg, sizeof msg);
  if (!d) {
    fprintf(stderr, "po-apiserver: %s\n", msg);
    return 1;
  }
  bool v6 = strchr(host, ':') != NULL;
  snprintf(po_as.host_port, sizeof po_as.host_port, v6 ? "[%s]:%d" : "%s:%d", host[0] ? host : "127.0.0.1", bound);
  snprintf(po_as.base_url, sizeof po_as.base_url, "%s://%s", tls_dir ? "https" : "http", po_as.host_port);
  char *kc = make_kubeconfig(po_as.base_url, ca, ntokens ? tokens[0] : NULL);
  if (tls_dir) {
    char p[4096];
    snprintf(p, sizeof p, "%s/kubeconfig", tls_dir);
    if (!write_atomic(p, kc)) fprintf(stderr, "po-apiserver: cannot write %s\n", p);
  }
  if (kubeconfig && !write_atomic(kubeconfig, kc)) fprintf(stderr, "po-apiserver: cannot write %s\n", kubeconfig);
  free(kc);
  if (ready) {
    char line[200];
    snprintf(line, sizeof line, "%s\n", po_as.base_url);
    if (!write_atomic(ready, line)) {
      fprintf(stderr, "po-apiserver: cannot write --ready-file %s\n", ready);
      return 1;
    }
  }
  po_As_Log(kPo_As_LogInfo, "serving on %s (compaction window %d, %d token(s))", po_as.base_url, window, ntokens);
  int sig = 0;
  sigwait(&sigs, &sig);
  po_As_Log(kPo_As_LogInfo, "signal %d: shutting down", sig);
  pthread_mutex_lock(&po_as.mu);
  po_as.stopping = true;
  pthread_cond_broadcast(&po_as.cond);
  pthread_mutex_unlock(&po_as.mu);
  MHD_stop_daemon(d);
  po_As_FakeConsulK8s_Stop();
  po_As_FakeEnvoyGateway_Stop();
  po_As_Persist_Stop();
  /* release everything so leak checkers see a clean exit */
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    for (size_t j = 0; j < r->nitems; j++) {
      free(r->items[j].key);
      json_object_put(r->items[j].obj);
    }
    free(r->items);
    json_object_put(r->schemas);
    json_object_put(r->columns);
    for (int k = 0; k < r->nversions; k++) free(r->versions[k]);
    for (int k = 0; k < r->nshort; k++) free(r->short_names[k]);
    for (int k = 0; k < r->ncategories; k++) free(r->categories[k]);
    free(r->group);
    free(r->plural);
    free(r->singular);
    free(r->kind);
    free(r->list_kind);
    free(r->storage_version);
    free(r);
  }
  free(po_as.res);
  for (size_t i = 0; i < po_as.ring_len; i++) {
    po_As_Event *e = &po_as.ring[(po_as.ring_head + i) % po_as.ring_cap];
    json_object_put(e->obj);
    json_object_put(e->old);
  }
  free(po_as.ring);
  for (int i = 0; i < ntokens; i++) free(tokens[i]);
  for (int i = 0; i < po_as.nsvc_map; i++) free(po_as.svc_map[i]);
  free(po_as.webhook_override);
  free(cert);
  free(key);
  free(ca);
  gnutls_global_deinit();
  curl_global_cleanup();
  return 0;
}
