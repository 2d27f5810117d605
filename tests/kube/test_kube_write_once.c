/* A write on a kept-alive connection that the server closes after reading it, without an answer
 * (kube-apiserver killed between storing a PATCH and answering it), is sent once: the client fails
 * with a transport error that says it may have been applied, and never sends it again by itself
 * (libcurl retries any request on a fresh connection when a reused one gave no answer; with
 * HTTP/1.1 keep-alive every request after the first is on a reused connection). A GET treated
 * the same way is repeated and succeeds. A scripted HTTP/1.1 server on loopback, in a thread. */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "po/kube/client.h"
#include "po/kube/config.h"

static int failures;

static void expect(bool ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

typedef struct {
  int lfd;
  int port;
  bool listener_gone; /* after the drop, stop listening for 700 ms (the server restarting) */
  const char *drop_method;
  int requests[2]; /* of drop_method: [0] the dropped one and any repeat, [1] GETs */
  int writes_seen;
  volatile bool done; /* the client finished: stop serving */
} Server;

static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0) {
    perror("bind/listen");
    exit(1);
  }
  return fd;
}

/* One whole request (head and Content-Length body) into buf; false at EOF or after 3 s. */
static bool read_request(int fd, char *buf, size_t size, volatile bool *done) {
  size_t n = 0;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int w = 0;
    while (!*done && (w = poll(&p, 1, 50)) == 0) {
    }
    if (w <= 0) return false;
    ssize_t r = read(fd, buf + n, size - n - 1);
    if (r <= 0) return false;
    n += (size_t)r;
    buf[n] = 0;
    char *end = strstr(buf, "\r\n\r\n");
    if (!end) continue;
    size_t body = 0;
    char *cl = strcasestr(buf, "\r\nContent-Length:");
    if (cl && cl < end) body = strtoul(cl + 17, NULL, 10);
    if (n >= (size_t)(end + 4 - buf) + body) return true;
  }
}

static void answer(int fd, int code) {
  char out[256];
  int n = snprintf(out, sizeof out, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", code);
  if (write(fd, out, (size_t)n) != n) perror("write");
}

/* Serves connections until the client is done: each request is answered, but the first request of drop_method is
 * read whole and its connection closed without a byte of answer. */
static void *serve(void *arg) {
  Server *s = arg;
  bool dropped = false;
  char buf[65536];
  while (!s->done) {
    struct pollfd p = {.fd = s->lfd, .events = POLLIN};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0) continue;
    while (read_request(fd, buf, sizeof buf, &s->done)) {
      bool is_drop = strncmp(buf, s->drop_method, strlen(s->drop_method)) == 0 && buf[strlen(s->drop_method)] == ' ';
      if (is_drop) s->writes_seen++;
      /* A GET is dropped the second time: the first opened the connection. */
      if (is_drop && !dropped && s->writes_seen == (strcmp(s->drop_method, "GET") ? 1 : 2)) {
        dropped = true;
        close(fd);
        fd = -1;
        if (s->listener_gone) {
          close(s->lfd);
          usleep(700 * 1000);
          s->lfd = listen_on(s->port);
        }
        break;
      }
      answer(fd, strncmp(buf, "POST", 4) == 0 ? 201 : 200);
    }
    if (fd >= 0) close(fd);
  }
  return NULL;
}

static void run(const char *method, bool listener_gone) {
  Server s = {.drop_method = method, .listener_gone = listener_gone};
  s.lfd = listen_on(0);
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  getsockname(s.lfd, (struct sockaddr *)&a, &al);
  s.port = ntohs(a.sin_port);
  pthread_t t;
  pthread_create(&t, NULL, serve, &s);

  char yaml[512];
  snprintf(yaml, sizeof yaml,
           "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
           "http://127.0.0.1:%d\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  "
           "user:\n    token: t\n",
           s.port);
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st;
  if (!po_KubeConfig_ParseYaml(yaml, strlen(yaml), "/tmp/kubeconfig", NULL, &cfg, &st)) {
    fprintf(stderr, "kubeconfig: %s\n", st.message);
    exit(1);
  }
  po_KubeClientOptions o = {.qps = -1};
  po_KubeClient *c = NULL;
  if (!po_KubeClient_New(cfg, &o, &c, &st)) exit(1);
  po_KubeRef ns = {.version = "v1", .resource = "namespaces", .name = "default"};
  json_object *got = NULL;
  /* The first request opens the connection the next one reuses. */
  expect(po_KubeClient_Get(c, &ns, &got, &st), "a GET opens a kept-alive connection");
  json_object_put(got);
  got = NULL;
  char what[1024];
  po_KubeRef cm = {.version = "v1", .resource = "configmaps", .ns = "default", .name = "x"};
  bool ok;
  if (!strcmp(method, "GET")) {
    ok = po_KubeClient_Get(c, &ns, &got, &st);
    snprintf(what, sizeof what, "%s: a GET whose connection closed unanswered is repeated and succeeds (%s)",
             listener_gone ? "server restarting" : "server up", ok ? "ok" : st.message);
    expect(ok && s.writes_seen >= 3, what);
  } else {
    const char *body = "{\"data\":{\"k\":\"v\"}}";
    po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
    json_object *obj = json_tokener_parse("{\"metadata\":{\"name\":\"x\"},\"data\":{\"k\":\"v\"}}");
    if (!strcmp(method, "PATCH"))
      ok = po_KubeClient_Patch(c, &cm, &po, body, strlen(body), &got, &st);
    else if (!strcmp(method, "POST"))
      ok = po_KubeClient_Create(c, &cm, obj, &got, &st);
    else if (!strcmp(method, "PUT"))
      ok = po_KubeClient_Update(c, &cm, obj, &got, &st);
    else
      ok = po_KubeClient_Delete(c, &cm, NULL, &got, &st);
    json_object_put(obj);
    snprintf(what, sizeof what, "%s, %s dropped unanswered: the server got it %d time(s) (want 1), the call %s: %s",
             listener_gone ? "server restarting" : "server up", method, s.writes_seen, ok ? "succeeded" : "failed",
             ok ? "-" : st.message);
    expect(s.writes_seen == 1 && !ok && st.code == kPo_Ctl_Transport, what);
  }
  json_object_put(got);
  s.done = true;
  pthread_join(t, NULL);
  close(s.lfd);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
}

/* The real kube-apiserver behind drop_answer_proxy.py (t_write_once_real.sh): a create with
 * generateName on a kept-alive connection whose answer the proxy swallows. Sent twice, it makes
 * two ConfigMaps. */
static int real(const char *arm) {
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st;
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !po_KubeConfig_LoadFiles(kc, NULL, &cfg, &st)) {
    fprintf(stderr, "test_kube_write_once: no kubeconfig in KUBECONFIG\n");
    return 1;
  }
  for (int http2 = 0; http2 < 2; http2++) {
    po_KubeClientOptions o = {.qps = -1, .http2 = http2};
    po_KubeClient *c = NULL;
    if (!po_KubeClient_New(cfg, &o, &c, &st)) return 1;
    po_KubeRef ns = {.version = "v1", .resource = "namespaces", .name = "default"};
    json_object *got = NULL;
    expect(po_KubeClient_Get(c, &ns, &got, &st), "a GET opens a kept-alive connection");
    json_object_put(got);
    got = NULL;
    usleep(1000 * 1000);
    FILE *f = fopen(arm, "w");
    if (f) fclose(f);
    char label[32];
    snprintf(label, sizeof label, "write-once-%d", http2);
    char text[256];
    snprintf(text, sizeof text, "{\"metadata\":{\"generateName\":\"wo-\",\"labels\":{\"%s\":\"1\"}},\"data\":{\"k\":\"v\"}}",
             label);
    json_object *obj = json_tokener_parse(text);
    po_KubeRef cms = {.version = "v1", .resource = "configmaps", .ns = "default"};
    bool ok = po_KubeClient_Create(c, &cms, obj, &got, &st);
    json_object_put(obj);
    json_object_put(got);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", ok ? "-" : st.message);
    got = NULL;
    po_KubeListOptions lo = {.label_selector = label};
    bool listed = po_KubeClient_List(c, &cms, &lo, &got, &st);
    json_object *items = NULL;
    size_t n = listed && json_object_object_get_ex(got, "items", &items) ? json_object_array_length(items) : 0;
    char what[1400];
    snprintf(what, sizeof what, "%s: a create whose answer was lost made %zu ConfigMap(s) (want 1); the call %s: %s",
             http2 ? "HTTP/2" : "HTTP/1.1", n, ok ? "succeeded" : "failed", msg);
    expect(listed && n == 1 && !ok, what);
    json_object_put(got);
    po_KubeClient_Free(c);
  }
  po_KubeConfig_Free(cfg);
  return failures ? 1 : 0;
}

/* The real kube-apiserver closes a kept-alive HTTP/1.1 connection idle for 90 s: a write after
 * that long must find it closed and open another (libcurl's liveness check before reuse), not
 * send into it and fail as maybe applied. */
static int idle(long seconds) {
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st;
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !po_KubeConfig_LoadFiles(kc, NULL, &cfg, &st)) return 1;
  po_KubeClientOptions o = {.qps = -1};
  po_KubeClient *c = NULL;
  if (!po_KubeClient_New(cfg, &o, &c, &st)) return 1;
  po_KubeRef cm = {.version = "v1", .resource = "configmaps", .ns = "default", .name = "write-once-idle"};
  const char *body = "{\"data\":{\"k\":\"v\"}}";
  po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
  bool ok = po_KubeClient_Patch(c, &cm, &po, body, strlen(body), NULL, &st);
  expect(ok, ok ? "a PATCH opens a kept-alive connection" : st.message);
  sleep((unsigned)seconds);
  ok = po_KubeClient_Patch(c, &cm, &po, body, strlen(body), NULL, &st);
  char what[1200];
  snprintf(what, sizeof what, "a PATCH after %ld s idle: %s (%llu connections)", seconds, ok ? "ok" : st.message,
           (unsigned long long)po_KubeClient_Connections(c));
  expect(ok, what);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "real")) return real(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "idle")) return idle(atol(argv[2]));
  const char *methods[] = {"PATCH", "POST", "PUT", "DELETE", "GET"};
  for (int i = 0; i < 5; i++) {
    run(methods[i], false);
    run(methods[i], true);
  }
  return failures ? 1 : 0;
}
