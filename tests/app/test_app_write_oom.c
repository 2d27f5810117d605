/* controller/app's writes with their Nth allocation failing, for every N until a run meets none,
 * against a scripted HTTP/1.1 server on loopback (a process of its own: its allocations are never
 * failed nor counted):
 *   - kube_io's patch_override (the status and finalizer patches of a PropertyOverride): the patch
 *     sent is the one built, or none, and a failure is reported, never a crash;
 *   - po_SelfCert_Ensure, the Secret present (the caBundle path) and absent (the Secret written):
 *     every Secret sent holds its four keys, each non-empty, and every webhook's caBundle sent is
 *     the CA of that Secret (never empty, never the old one beside the new one).
 * Each armed run is a child process. A crash fails the test, but in selfcert's runs: there GnuTLS's
 * certificate work crashes on failed allocations of its own (libtasn1, GMP), so those are counted
 * and the first few printed (PO_OOM_STRICT=1 fails on them too). Every allocation is failed
 * (PO_OOM_STEP=k: every kth; PO_OOM_AT=n: that one alone). */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "kube_io.h"
#include "po/kube/client.h"
#include "po/kube/config.h"
#include "selfcert.h"

#include "fail_alloc.h"

static int failures;
static char g_log[64] = "/tmp/po-app-oom-XXXXXX";

static bool read_request(int fd, char *buf, size_t size, size_t *head_len, size_t *body_len) {
  size_t n = 0;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 5000) <= 0) return false;
    ssize_t r = read(fd, buf + n, size - n - 1);
    if (r <= 0) return false;
    n += (size_t)r;
    buf[n] = 0;
    char *end = strstr(buf, "\r\n\r\n");
    if (!end) continue;
    size_t body = 0;
    char *cl = strcasestr(buf, "\r\nContent-Length:");
    if (cl && cl < end) body = strtoul(cl + 17, NULL, 10);
    if (n >= (size_t)(end + 4 - buf) + body) {
      *head_len = (size_t)(end + 4 - buf);
      *body_len = body;
      return true;
    }
  }
}

/* Head and body in one write: in two, the client's delayed ACK of the first held the second back
 * (Nagle's algorithm), 40 ms an answer. */
static void answer(int fd, int code, const char *body) {
  static char out[1 << 15];
  int n = snprintf(out, sizeof out, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", code,
                   strlen(body), body);
  if (n < 0 || (size_t)n >= sizeof out || write(fd, out, (size_t)n) != n) perror("write");
}

static const char kNotFound[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}";
static const char kVwc[] =
    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"ValidatingWebhookConfiguration\","
    "\"metadata\":{\"name\":\"vwc\",\"resourceVersion\":\"5\"},\"webhooks\":["
    "{\"name\":\"a.propertyoverride.io\",\"clientConfig\":{\"service\":{\"name\":\"svc\",\"namespace\":\"ops\"}}},"
    "{\"name\":\"b.propertyoverride.io\",\"clientConfig\":{\"service\":{\"name\":\"svc\",\"namespace\":\"ops\"},\"caBundle\":\"b2xk\"}}]}";
static char g_secret_answer[16384]; /* "" : the Secret is absent */

static void serve(int lfd) {
  static char buf[1 << 20];
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) continue;
    size_t hl, bl;
    while (read_request(fd, buf, sizeof buf, &hl, &bl)) {
      char *sp = strchr(buf, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
      if (!sp2) break;
      int log = open(g_log, O_WRONLY | O_APPEND | O_CREAT, 0600);
      if (write(log, buf, (size_t)(sp2 - buf)) < 0 || write(log, "\n", 1) < 0 || write(log, buf + hl, bl) < 0 ||
          write(log, "\n", 1) < 0)
        perror("log");
      close(log);
      *sp2 = 0;
      if (!strncmp(buf, "GET ", 4) && strstr(buf, "/secrets/"))
        g_secret_answer[0] ? answer(fd, 200, g_secret_answer) : answer(fd, 404, kNotFound);
      else if (!strncmp(buf, "GET ", 4) && strstr(buf, "/validatingwebhookconfigurations/"))
        answer(fd, 200, kVwc);
      else if (!strncmp(buf, "GET ", 4) && strstr(buf, "/mutatingwebhookconfigurations/"))
        answer(fd, 404, kNotFound);
      else if (!strncmp(buf, "GET ", 4))
        answer(fd, 200, "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"default\"}}");
      else if (!strncmp(buf, "PATCH ", 6))
        answer(fd, 200, "{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\",\"resourceVersion\":\"9\",\"generation\":2}}");
      else
        answer(fd, !strncmp(buf, "POST ", 5) ? 201 : 200, "{}");
    }
    close(fd);
  }
}

static pid_t g_server;
static int g_port;

static void start_server(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 || getsockname(fd, (struct sockaddr *)&a, &al)) {
    perror("bind/listen");
    exit(1);
  }
  g_port = ntohs(a.sin_port);
  int lf = mkstemp(g_log);
  close(lf);
  fflush(NULL);
  /* the server goes with the test, however it ends (an _exit, a failed assert): left running it
   * would hold ctest's output pipe open until the timeout */
  if ((g_server = fork()) == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(0);
    serve(fd);
  }
  close(fd);
}

static void clear_log(void) {
  int fd = open(g_log, O_WRONLY | O_TRUNC);
  if (fd >= 0) close(fd);
}

/* The bodies the server got for method, parsed; NULL entries for bodies that do not parse. */
static size_t logged(const char *method, json_object **out, size_t max) {
  FILE *f = fopen(g_log, "r");
  size_t n = 0;
  static char line[1 << 20], body[1 << 20];
  while (f && fgets(line, sizeof line, f) && fgets(body, sizeof body, f)) {
    if (strncmp(line, method, strlen(method)) || line[strlen(method)] != ' ') continue;
    body[strcspn(body, "\n")] = 0;
    if (n < max) out[n++] = json_tokener_parse(body);
    if (!out[n - 1]) fprintf(stderr, "  unparsable %s body: %.300s\n", method, body);
  }
  if (f) fclose(f);
  return n;
}

static po_KubeClient *client(void) {
  char yaml[512];
  snprintf(yaml, sizeof yaml,
           "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
           "http://127.0.0.1:%d\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  "
           "user:\n    token: t\n",
           g_port);
  static po_KubeConfig *cfg;
  po_CtlStatus st;
  if (!po_KubeConfig_ParseYaml(yaml, strlen(yaml), "/tmp/kubeconfig", NULL, &cfg, &st)) _exit(2);
  po_KubeClientOptions o = {.qps = -1, .max_retries = -1};
  po_KubeClient *c = NULL;
  if (!po_KubeClient_New(cfg, &o, &c, &st)) _exit(2);
  po_KubeRef ns = {.version = "v1", .resource = "namespaces", .name = "default"};
  json_object *got = NULL;
  if (!po_KubeClient_Get(c, &ns, &got, &st)) _exit(2);
  json_object_put(got);
  return c;
}

enum { kExitDone = 0, kExitMet = 1, kExitNoStatus = 4 };
typedef enum { kOpStatusPatch, kOpFinalizerPatch, kOpSelfCert } Op;

static const char kStatusPatch[] =
    "{\"status\":{\"observedGeneration\":2,\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\",\"observedGeneration\":2,"
    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"reason\":\"Accepted\",\"message\":\"the spec is valid\"},"
    "{\"type\":\"Programmed\",\"status\":\"True\",\"observedGeneration\":2,\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
    "\"reason\":\"Programmed\",\"message\":\"written to ServiceDefaults ns/web\"}],\"target\":{\"apiVersion\":"
    "\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\",\"namespace\":\"ns\",\"name\":\"web\"}}}";
static const char kFinalizerPatch[] =
    "{\"metadata\":{\"finalizers\":[\"example.com/other\",\"propertyoverride.io/finalizer\"],\"resourceVersion\":\"41\"}}";
static char g_dir[64] = "/tmp/po-app-oom-dir-XXXXXX";

static int armed(Op op, long n) {
  po_KubeClient *c = client();
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  bool ok;
  if (op == kOpSelfCert) {
    po_SelfCertOptions o = {.ns = "ops", .secret = "s", .service = "svc", .webhook_config = "vwc", .dir = g_dir};
    bool changed = false;
    g_count = 0;
    g_fail_at = n;
    ok = po_SelfCert_Ensure(c, &o, &changed, &st);
  } else {
    po_KubeIO k = {.client = c, .ns_count = 1, .namespaces = {""}};
    po_ReconcileIO t = po_KubeIO_Table(&k);
    json_object *patch = json_tokener_parse(op == kOpStatusPatch ? kStatusPatch : kFinalizerPatch);
    po_WrittenVersion w;
    g_count = 0;
    g_fail_at = n;
    ok = t.patch_override(t.ctx, "ns", "p", op == kOpStatusPatch, patch, &w, &st) == kPo_WriteResult_Ok;
    g_fail_at = -1;
    json_object_put(patch);
  }
  g_fail_at = -1;
  if (!ok && st.code == kPo_Ctl_Ok) {
    fprintf(stderr, "  allocation %ld: failed with no status\n", n);
    return kExitNoStatus;
  }
  po_KubeClient_Free(c);
  return g_count >= n ? kExitMet : kExitDone;
}

/* The Secret and caBundle writes of one run: each Secret has its four keys non-empty, and each
 * caBundle sent is the ca.crt of the Secret (the one sent in this run, or the one served). */
static int check_selfcert(long n) {
  FILE *f = fopen(g_log, "r");
  static char line[1 << 20], body[1 << 20];
  char ca[8192] = "";
  int bad = 0;
  if (g_secret_answer[0]) {
    json_object *s = json_tokener_parse(g_secret_answer);
    snprintf(ca, sizeof ca, "%s", json_object_get_string(json_object_object_get(json_object_object_get(s, "data"), "ca.crt")));
    json_object_put(s);
  }
  while (f && fgets(line, sizeof line, f) && fgets(body, sizeof body, f)) {
    body[strcspn(body, "\n")] = 0;
    if (!strncmp(line, "GET ", 4)) continue;
    json_object *o = json_tokener_parse(body), *data = NULL, *hooks = NULL;
    bool ok = o != NULL;
    if (ok && strstr(line, "/secrets")) {
      static const char *const keys[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
      ok = json_object_object_get_ex(o, "data", &data) &&
           !strcmp(json_object_get_string(json_object_object_get(o, "type")), "kubernetes.io/tls");
      for (size_t i = 0; ok && i < 4; i++) {
        json_object *v = json_object_object_get(data, keys[i]);
        ok = json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0;
      }
      if (ok) snprintf(ca, sizeof ca, "%s", json_object_get_string(json_object_object_get(data, "ca.crt")));
    } else if (ok && strstr(line, "webhookconfigurations")) {
      ok = json_object_object_get_ex(o, "webhooks", &hooks) && json_object_array_length(hooks) == 2;
      for (size_t i = 0; ok && i < 2; i++) {
        json_object *cc = json_object_object_get(json_object_array_get_idx(hooks, i), "clientConfig");
        const char *b = json_object_get_string(json_object_object_get(cc, "caBundle"));
        ok = b && *b && !strcmp(b, ca);
      }
    } else {
      ok = false;
    }
    if (!ok) {
      bad++;
      fprintf(stderr, "  allocation %ld: sent %.*s %.300s\n", n, (int)strcspn(line, "\n"), line, body);
    }
    json_object_put(o);
  }
  if (f) fclose(f);
  return bad;
}

/* selfcert's certificate work is GnuTLS's: libtasn1 dereferences a failed allocation and GMP
 * aborts on one (GNU MP: Cannot allocate memory), so its children may crash where no code of ours
 * runs. Those crashes are counted and printed, not failed on (PO_OOM_STRICT=1 fails on them). */
static void sweep(const char *what, Op op, const char *want, long step) {
  int bad = 0, crashes = 0;
  bool lenient = op == kOpSelfCert && !getenv("PO_OOM_STRICT");
  long n, only = getenv("PO_OOM_AT") ? atol(getenv("PO_OOM_AT")) : 0;
  for (n = only ? only : 1; n < 2000000; n += step) {
    clear_log();
    pid_t pid = fail_alloc_fork();
    if (pid == 0) _exit(armed(op, n));
    int rc = fail_alloc_wait(pid);
    if (rc == -1) {
      if (crashes++ < 3 || !lenient) fprintf(stderr, "  allocation %ld: the child crashed\n", n);
    } else if (rc != kExitDone && rc != kExitMet) {
      bad++;
    }
    if (op == kOpSelfCert) {
      bad += check_selfcert(n);
    } else {
      json_object *got[16] = {0}, *w = json_tokener_parse(want);
      size_t k = logged("PATCH", got, 16);
      for (size_t i = 0; i < k; i++) {
        if (!got[i] || !json_object_equal(got[i], w)) {
          bad++;
          if (got[i]) fprintf(stderr, "  allocation %ld: sent %.400s\n", n, json_object_to_json_string(got[i]));
        }
        json_object_put(got[i]);
      }
      json_object_put(w);
    }
    if (rc == kExitDone || only) break;
  }
  bool failed = bad || (crashes && !lenient);
  printf("%s %s: allocations up to %ld failed in turn (every %ld), %d wrong, %d crashes%s\n", failed ? "FAIL" : "ok  ",
         what, n - 1, step, bad, crashes, lenient && crashes ? " (in GnuTLS, libtasn1 or GMP: not failed on)" : "");
  if (failed) failures++;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  if (!mkdtemp(g_dir)) return 1;
  /* A usable Secret, made once unarmed and served: the caBundle path alone. */
  {
    start_server();
    po_KubeClient *c = client();
    po_SelfCertOptions o = {.ns = "ops", .secret = "s", .service = "svc", .webhook_config = "vwc", .dir = g_dir};
    bool changed;
    po_CtlStatus st;
    clear_log();
    if (!po_SelfCert_Ensure(c, &o, &changed, &st)) {
      fprintf(stderr, "selfcert unarmed: %s\n", st.message);
      return 1;
    }
    po_KubeClient_Free(c);
    FILE *f = fopen(g_log, "r");
    static char line[1 << 20], body[1 << 20];
    while (f && fgets(line, sizeof line, f) && fgets(body, sizeof body, f))
      if (!strncmp(line, "POST ", 5)) snprintf(g_secret_answer, sizeof g_secret_answer, "%.*s", (int)strcspn(body, "\n"), body);
    if (f) fclose(f);
    kill(g_server, SIGKILL);
    waitpid(g_server, NULL, 0);
  }
  start_server(); /* serves that Secret now (its copy of g_secret_answer) */
  sweep("kube_io patch_override, status: the patch sent whole or not at all, no crash", kOpStatusPatch, kStatusPatch, 1);
  sweep("kube_io patch_override, finalizers: the patch sent whole or not at all, no crash", kOpFinalizerPatch, kFinalizerPatch, 1);
  sweep("selfcert, the Secret usable: every caBundle sent is its CA", kOpSelfCert, NULL, 1);
  kill(g_server, SIGKILL);
  waitpid(g_server, NULL, 0);
  g_secret_answer[0] = 0;
  start_server();
  long step = getenv("PO_OOM_STEP") ? atol(getenv("PO_OOM_STEP")) : 1;
  sweep("selfcert, the Secret absent: every Secret sent whole, every caBundle its CA", kOpSelfCert, NULL, step);
  kill(g_server, SIGKILL);
  waitpid(g_server, NULL, 0);
  unlink(g_log);
  static const char *const kFiles[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"}; /* what selfcert writes there */
  for (size_t i = 0; i < sizeof kFiles / sizeof kFiles[0]; i++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", g_dir, kFiles[i]);
    unlink(path);
  }
  rmdir(g_dir);
  return failures ? 1 : 0;
}
