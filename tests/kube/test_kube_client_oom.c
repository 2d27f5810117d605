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
#include <unistd.h>

#include <json-c/json.h>

#include "po/kube/client.h"
#include "po/kube/config.h"

#include "fail_alloc.h"

static int failures;
static char g_log[64] = "/tmp/po-client-oom-XXXXXX";

/* ---- the scripted server: a child process; each request logged as "METHOD TARGET\nBODY\n" ---- */

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

static const char *const kPage[3] = {
    "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\",\"continue\":\"tokA\"},"
    "\"items\":[{\"metadata\":{\"name\":\"n0\"}},{\"metadata\":{\"name\":\"n1\"}},{\"metadata\":{\"name\":\"n2\"}}]}",
    "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\",\"continue\":\"tokB\"},"
    "\"items\":[{\"metadata\":{\"name\":\"n3\"}},{\"metadata\":{\"name\":\"n4\"}},{\"metadata\":{\"name\":\"n5\"}}]}",
    "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"},"
    "\"items\":[{\"metadata\":{\"name\":\"n6\"}},{\"metadata\":{\"name\":\"n7\"}},{\"metadata\":{\"name\":\"n8\"}}]}",
};

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
      if (!strncmp(buf, "GET ", 4))
        answer(fd, 200, strstr(buf, "continue=tokB") ? kPage[2] : strstr(buf, "continue=tokA") ? kPage[1] : kPage[0]);
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

/* Requests with another method than method or GET (a DELETE sent as a POST, say). */
static int logged_other(const char *method) {
  FILE *f = fopen(g_log, "r");
  int n = 0;
  static char line[1 << 20], body[1 << 20];
  while (f && fgets(line, sizeof line, f) && fgets(body, sizeof body, f))
    if (strncmp(line, "GET ", 4) && (strncmp(line, method, strlen(method)) || line[strlen(method)] != ' ')) {
      fprintf(stderr, "  sent %s", line);
      n++;
    }
  if (f) fclose(f);
  return n;
}

/* The requests the server got (their method and target), for a failure's report. */
static void dump_requests(void) {
  FILE *f = fopen(g_log, "r");
  static char line[1 << 20], body[1 << 20];
  while (f && fgets(line, sizeof line, f) && fgets(body, sizeof body, f)) fprintf(stderr, "    got %s", line);
  if (f) fclose(f);
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
  /* one request unarmed: the connection and curl's lazily made state exist before the sweep */
  po_KubeRef ns = {.version = "v1", .resource = "namespaces", .name = "default"};
  json_object *got = NULL;
  if (!po_KubeClient_Get(c, &ns, &got, &st)) _exit(2);
  json_object_put(got);
  return c;
}

enum { kExitDone = 0, kExitMet = 1, kExitShort = 3, kExitNoStatus = 4 };

typedef enum { kOpDelete, kOpList, kOpUpdate, kOpCreate } Op;

static const char *g_uid, *g_rvs;
static const char *g_obj_text;

/* The child's one armed call. */
static int armed(Op op, long n) {
  po_KubeClient *c = client();
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
    clear_log();
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
      size_t k = logged(method, got, 16);
      for (size_t i = 0; i < k; i++) {
        if (!got[i] || !json_object_equal(got[i], want)) {
          bad++;
          if (got[i]) fprintf(stderr, "  allocation %ld: sent %.400s\n", n, json_object_to_json_string(got[i]));
        }
        json_object_put(got[i]);
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
  start_server();

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

  kill(g_server, SIGKILL);
  waitpid(g_server, NULL, 0);
  unlink(g_log);
  return failures ? 1 : 0;
}
