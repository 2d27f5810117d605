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
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube_io.h"
#include "po/kube/client.h"
#include "po/kube/config.h"
#include "selfcert.h"

#include "fail_alloc.h"
#include "scripted_server.h"

static int failures;

static const char kNotFound[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}";
static const char kVwc[] =
    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"ValidatingWebhookConfiguration\","
    "\"metadata\":{\"name\":\"vwc\",\"resourceVersion\":\"5\"},\"webhooks\":["
    "{\"name\":\"a.propertyoverride.io\",\"clientConfig\":{\"service\":{\"name\":\"svc\",\"namespace\":\"ops\"}}},"
    "{\"name\":\"b.propertyoverride.io\",\"clientConfig\":{\"service\":{\"name\":\"svc\",\"namespace\":\"ops\"},\"caBundle\":\"b2xk\"}}]}";
static char g_secret_answer[16384]; /* "" : the Secret is absent */

/* The server's answers: the Secret (or 404), the webhook configurations, and any write taken. */
static void route(int fd, const char *line) {
  if (!strncmp(line, "GET ", 4) && strstr(line, "/secrets/"))
    g_secret_answer[0] ? scripted_answer(fd, 200, g_secret_answer) : scripted_answer(fd, 404, kNotFound);
  else if (!strncmp(line, "GET ", 4) && strstr(line, "/validatingwebhookconfigurations/"))
    scripted_answer(fd, 200, kVwc);
  else if (!strncmp(line, "GET ", 4) && strstr(line, "/mutatingwebhookconfigurations/"))
    scripted_answer(fd, 404, kNotFound);
  else if (!strncmp(line, "GET ", 4))
    scripted_answer(fd, 200, "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"default\"}}");
  else if (!strncmp(line, "PATCH ", 6))
    scripted_answer(fd, 200, "{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\",\"resourceVersion\":\"9\",\"generation\":2}}");
  else
    scripted_answer(fd, !strncmp(line, "POST ", 5) ? 201 : 200, "{}");
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
  po_KubeClient *c = scripted_client();
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
typedef struct {
  long n;
  int bad, writes;
  char ca[8192];
} SelfCertRun;

static void selfcert_line(const char *line, char *body, void *ctx) {
  SelfCertRun *r = ctx;
  if (!strncmp(line, "GET ", 4)) return;
  r->writes++;
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
    if (ok) snprintf(r->ca, sizeof r->ca, "%s", json_object_get_string(json_object_object_get(data, "ca.crt")));
  } else if (ok && strstr(line, "webhookconfigurations")) {
    ok = json_object_object_get_ex(o, "webhooks", &hooks) && json_object_array_length(hooks) == 2;
    for (size_t i = 0; ok && i < 2; i++) {
      json_object *cc = json_object_object_get(json_object_array_get_idx(hooks, i), "clientConfig");
      const char *b = json_object_get_string(json_object_object_get(cc, "caBundle"));
      ok = b && *b && !strcmp(b, r->ca);
    }
  } else {
    ok = false;
  }
  if (!ok) {
    r->bad++;
    fprintf(stderr, "  allocation %ld: sent %.*s %.300s\n", r->n, (int)strcspn(line, "\n"), line, body);
  }
  json_object_put(o);
}

/* The bad writes of the run that failed allocation n; *writes, how many writes it sent. */
static int check_selfcert(long n, int *writes) {
  SelfCertRun r = {.n = n};
  if (g_secret_answer[0]) {
    json_object *s = json_tokener_parse(g_secret_answer);
    snprintf(r.ca, sizeof r.ca, "%s", json_object_get_string(json_object_object_get(json_object_object_get(s, "data"), "ca.crt")));
    json_object_put(s);
  }
  scripted_lines(selfcert_line, &r);
  *writes = r.writes;
  return r.bad;
}

/* selfcert's certificate work is GnuTLS's: libtasn1 dereferences a failed allocation and GMP
 * aborts on one (GNU MP: Cannot allocate memory), so its children may crash where no code of ours
 * runs. Those crashes are counted and printed, not failed on (PO_OOM_STRICT=1 fails on them). */
static void sweep(const char *what, Op op, const char *want, long step) {
  int bad = 0, crashes = 0;
  bool lenient = op == kOpSelfCert && !getenv("PO_OOM_STRICT");
  long n, only = getenv("PO_OOM_AT") ? atol(getenv("PO_OOM_AT")) : 0;
  for (n = only ? only : 1; n < 2000000; n += step) {
    scripted_clear();
    pid_t pid = fail_alloc_fork();
    if (pid == 0) _exit(armed(op, n));
    int rc = fail_alloc_wait(pid);
    if (rc == -1) {
      if (crashes++ < 3 || !lenient) fprintf(stderr, "  allocation %ld: the child crashed\n", n);
    } else if (rc != kExitDone && rc != kExitMet) {
      bad++;
    }
    size_t sent = 0; /* the run that met no failure must have written: else nothing here was checked */
    if (op == kOpSelfCert) {
      int writes = 0;
      bad += check_selfcert(n, &writes);
      sent = (size_t)writes;
    } else {
      json_object *got[16] = {0}, *w = json_tokener_parse(want);
      size_t k = scripted_logged("PATCH", got, 16);
      for (size_t i = 0; i < k; i++) {
        if (!got[i] || !json_object_equal(got[i], w)) {
          bad++;
          if (got[i]) fprintf(stderr, "  allocation %ld: sent %.400s\n", n, json_object_to_json_string(got[i]));
        }
        json_object_put(got[i]);
      }
      json_object_put(w);
      sent = k;
    }
    if (rc == kExitDone && !sent) {
      bad++;
      fprintf(stderr, "  the run that met no failure wrote nothing\n");
    }
    if (rc == kExitDone || only) break;
  }
  bool failed = bad || (crashes && !lenient);
  printf("%s %s: allocations up to %ld failed in turn (every %ld), %d wrong, %d crashes%s\n", failed ? "FAIL" : "ok  ",
         what, n - 1, step, bad, crashes, lenient && crashes ? " (in GnuTLS, libtasn1 or GMP: not failed on)" : "");
  if (failed) failures++;
}

/* The Secret the unarmed run created, kept to be served. */
static void keep_secret(const char *line, char *body, void *ctx) {
  (void)ctx;
  if (!strncmp(line, "POST ", 5)) snprintf(g_secret_answer, sizeof g_secret_answer, "%s", body);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  if (!mkdtemp(g_dir)) return 1;
  /* A usable Secret, made once unarmed and served: the caBundle path alone. */
  {
    scripted_start(route);
    po_KubeClient *c = scripted_client();
    po_SelfCertOptions o = {.ns = "ops", .secret = "s", .service = "svc", .webhook_config = "vwc", .dir = g_dir};
    bool changed;
    po_CtlStatus st;
    scripted_clear();
    if (!po_SelfCert_Ensure(c, &o, &changed, &st)) {
      fprintf(stderr, "selfcert unarmed: %s\n", st.message);
      return 1;
    }
    po_KubeClient_Free(c);
    scripted_lines(keep_secret, NULL);
    scripted_stop(false);
  }
  scripted_start(route); /* serves that Secret now (its copy of g_secret_answer) */
  sweep("kube_io patch_override, status: the patch sent whole or not at all, no crash", kOpStatusPatch, kStatusPatch, 1);
  sweep("kube_io patch_override, finalizers: the patch sent whole or not at all, no crash", kOpFinalizerPatch, kFinalizerPatch, 1);
  sweep("selfcert, the Secret usable: every caBundle sent is its CA", kOpSelfCert, NULL, 1);
  scripted_stop(false);
  g_secret_answer[0] = 0;
  scripted_start(route);
  long step = getenv("PO_OOM_STEP") ? atol(getenv("PO_OOM_STEP")) : 1;
  sweep("selfcert, the Secret absent: every Secret sent whole, every caBundle its CA", kOpSelfCert, NULL, step);
  scripted_stop(true);
  static const char *const kFiles[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"}; /* what selfcert writes there */
  for (size_t i = 0; i < sizeof kFiles / sizeof kFiles[0]; i++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", g_dir, kFiles[i]);
    unlink(path);
  }
  rmdir(g_dir);
  return failures ? 1 : 0;
}
