/* The client's writes and joined lists with their Nth allocation failing, for every N until a run
 * meets none, against a scripted HTTP/1.1 server on loopback (a process of its own: its
 * allocations are never failed nor counted). What must hold at every N:
 *   - po_KubeClient_Delete: every DeleteOptions the server gets is exactly the one asked for (its
 *     preconditions whole), or none is sent; no crash (a double free aborts in glibc);
 *   - po_KubeClient_ListAll over three pages: a list returned as read holds every item of every page;
 *   - po_KubeClient_Update / po_KubeClient_Create: every body the server gets is exactly the object
 *     (json-c's serializer must not drop a chunk it could not append: a Lease whose holderIdentity
 *     text was lost reads as released, a Secret whose tls.key was lost breaks the webhook's TLS).
 * Each armed run is a child process: a crash fails the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "po/kube/client.h"
#include "po/kube/config.h"

#include "fail_alloc.h"
#include "scripted_server.h"

static int failures;

static const char *const kPage[3] = {
    "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\",\"continue\":\"tokA\"},"
    "\"items\":[{\"metadata\":{\"name\":\"n0\"}},{\"metadata\":{\"name\":\"n1\"}},{\"metadata\":{\"name\":\"n2\"}}]}",
    "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\",\"continue\":\"tokB\"},"
    "\"items\":[{\"metadata\":{\"name\":\"n3\"}},{\"metadata\":{\"name\":\"n4\"}},{\"metadata\":{\"name\":\"n5\"}}]}",
    "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"},"
    "\"items\":[{\"metadata\":{\"name\":\"n6\"}},{\"metadata\":{\"name\":\"n7\"}},{\"metadata\":{\"name\":\"n8\"}}]}",
};

/* The server's answers: a list's pages by their continue token, an empty object to any write. */
static void route(int fd, const char *line) {
  if (!strncmp(line, "GET ", 4))
    scripted_answer(fd, 200, strstr(line, "continue=tokB") ? kPage[2] : strstr(line, "continue=tokA") ? kPage[1] : kPage[0]);
  else
    scripted_answer(fd, !strncmp(line, "POST ", 5) ? 201 : 200, "{}");
}

/* Requests with another method than method or GET (a DELETE sent as a POST, say): counted in *ctx. */
typedef struct {
  const char *method;
  int n;
} Other;
static void other_line(const char *line, char *body, void *ctx) {
  (void)body;
  Other *o = ctx;
  if (strncmp(line, "GET ", 4) && (strncmp(line, o->method, strlen(o->method)) || line[strlen(o->method)] != ' ')) {
    fprintf(stderr, "  sent %s", line);
    o->n++;
  }
}
static int logged_other(const char *method) {
  Other o = {method, 0};
  scripted_lines(other_line, &o);
  return o.n;
}

/* The requests the server got (their method and target), for a failure's report. */
static void dump_line(const char *line, char *body, void *ctx) { (void)body, (void)ctx, fprintf(stderr, "    got %s", line); }
static void dump_requests(void) { scripted_lines(dump_line, NULL); }

enum { kExitDone = 0, kExitMet = 1, kExitShort = 3, kExitNoStatus = 4 };

typedef enum { kOpDelete, kOpList, kOpUpdate, kOpCreate } Op;

static const char *g_uid, *g_rvs;
static const char *g_obj_text;

/* The child's one armed call. */
static int armed(Op op, long n) {
  po_KubeClient *c = scripted_client();
  json_object *obj = g_obj_text ? json_tokener_parse(g_obj_text) : NULL;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_KubeRef cm = {.version = "v1", .resource = "configmaps", .ns = "default", .name = "x"};
  po_KubeDeleteOptions d = {.propagation_policy = "Background", .precondition_uid = g_uid, .precondition_resource_version = g_rvs};
  json_object *out = NULL;
  g_count = 0;
  g_fail_at = n;
  bool ok = op == kOpDelete   ? po_KubeClient_Delete(c, &cm, &d, &out, &st)
            : op == kOpList   ? (cm.name = NULL, po_KubeClient_ListAll(c, &cm, NULL, &out, &st))
            : op == kOpUpdate ? po_KubeClient_Update(c, &cm, obj, &out, &st)
                              : po_KubeClient_Create(c, &cm, obj, &out, &st);
  g_fail_at = -1;
  bool met = g_count >= n;
  if (!ok && st.code == kPo_Ctl_Ok) {
    fprintf(stderr, "  allocation %ld: failed with no status\n", n);
    return kExitNoStatus;
  }
  if (ok && op == kOpList) {
    json_object *its = NULL;
    size_t len = json_object_object_get_ex(out, "items", &its) ? json_object_array_length(its) : 0;
    bool whole = len == 9;
    for (size_t i = 0; whole && i < len; i++) {
      char want[32];
      snprintf(want, sizeof want, "n%zu", i);
      whole = !strcmp(json_object_get_string(json_object_object_get(json_object_object_get(json_object_array_get_idx(its, i), "metadata"), "name")), want);
    }
    if (!whole) {
      fprintf(stderr, "  allocation %ld: ListAll succeeded with %zu of 9 items\n", n, len);
      return kExitShort;
    }
  }
  json_object_put(out);
  json_object_put(obj);
  po_KubeClient_Free(c);
  return met ? kExitMet : kExitDone;
}

/* Every N until a run meets no failure; each body the server got checked against want. */
static void sweep(const char *what, Op op, const char *method, json_object *want) {
  int bad = 0, crashes = 0;
  long n, only = getenv("PO_OOM_AT") ? atol(getenv("PO_OOM_AT")) : 0; /* one allocation, to trace it */
  for (n = only ? only : 1; n < 200000; n++) {
    scripted_clear();
    pid_t pid = fail_alloc_fork();
    if (pid == 0) _exit(armed(op, n));
    int rc = fail_alloc_wait(pid);
    if (rc == -1) {
      crashes++;
      fprintf(stderr, "  allocation %ld: the child crashed\n", n);
    } else if (rc != kExitDone && rc != kExitMet) {
      bad++;
      dump_requests();
    }
    if (want) {
      json_object *got[16] = {0};
      if (logged_other(method)) bad++;
      size_t k = scripted_logged(method, got, 16);
      for (size_t i = 0; i < k; i++) {
        if (!got[i] || !json_object_equal(got[i], want)) {
          bad++;
          if (got[i]) fprintf(stderr, "  allocation %ld: sent %.400s\n", n, json_object_to_json_string(got[i]));
        }
        json_object_put(got[i]);
      }
      if (rc == kExitDone && k == 0) { /* the run that met no failure sent it: else nothing above was checked */
        bad++;
        fprintf(stderr, "  the run that met no failure sent no %s\n", method);
      }
    }
    if (rc == kExitDone || only) break;
  }
  printf("%s %s: %ld allocations failed in turn, %d wrong, %d crashes\n", bad || crashes ? "FAIL" : "ok  ", what, n - 1, bad,
         crashes);
  if (bad || crashes) failures++;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  scripted_start(route);

  g_uid = "0b6a7c9e-4f3d-4e21-9a5b-6c7d8e9f0a1b";
  g_rvs = "123456789";
  json_object *want = json_tokener_parse(
      "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"Background\","
      "\"preconditions\":{\"uid\":\"0b6a7c9e-4f3d-4e21-9a5b-6c7d8e9f0a1b\",\"resourceVersion\":\"123456789\"}}");
  sweep("Delete: DeleteOptions sent whole or not at all", kOpDelete, "DELETE", want);
  json_object_put(want);

  sweep("ListAll over 3 pages: every item or a failure", kOpList, "GET", NULL);

  /* A Lease as the leader elector writes it (renewal) and a Secret as selfcert writes it. */
  static const char kLease[] =
      "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"propertyoverride-leader\","
      "\"namespace\":\"propertyoverride-system\",\"resourceVersion\":\"4242\",\"uid\":\"6f1b2c3d-aaaa-bbbb-cccc-0123456789ab\"},"
      "\"spec\":{\"holderIdentity\":\"propertyoverride-controller-7d9f8b6c4-x2x9z_4e2a1b3c-5d6e-7f80-9a1b-2c3d4e5f6a7b\","
      "\"leaseDurationSeconds\":15,\"acquireTime\":\"2026-01-01T00:00:00.000000Z\",\"renewTime\":\"2026-01-01T00:00:10.000000Z\","
      "\"leaseTransitions\":3}}";
  g_obj_text = kLease;
  want = json_tokener_parse(kLease);
  sweep("Update of a Lease: the body is the object", kOpUpdate, "PUT", want);
  sweep("Create of a Lease: the body is the object", kOpCreate, "POST", want);
  json_object_put(want);

  static char secret[8192];
  char pem[2400];
  for (size_t i = 0; i < sizeof pem - 1; i++) pem[i] = (char)('A' + (char)(i % 26));
  pem[sizeof pem - 1] = 0;
  snprintf(secret, sizeof secret,
           "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"webhook-tls\",\"namespace\":\"ops\"},"
           "\"type\":\"kubernetes.io/tls\",\"data\":{\"ca.crt\":\"%.700s\",\"ca.key\":\"%.300s\",\"tls.crt\":\"%.900s\",\"tls.key\":\"%.300s\"}}",
           pem, pem + 1, pem + 2, pem + 3);
  g_obj_text = secret;
  want = json_tokener_parse(secret);
  sweep("Update of a TLS Secret: the body is the object", kOpUpdate, "PUT", want);
  json_object_put(want);

  scripted_stop(true);
  return failures ? 1 : 0;
}
