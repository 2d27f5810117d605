/* A scripted HTTP/1.1 server on loopback, for tests that check every request a client sends
 * (include once, in one file; it is a process of its own, so a failing allocator in the test
 * never fails nor counts its allocations):
 *   - scripted_start(route) forks it on an ephemeral port (scripted_port); each request is logged
 *     to a file as "METHOD TARGET\nBODY\n", then route(fd, "METHOD TARGET") answers it with
 *     scripted_answer;
 *   - scripted_logged(method, out, max) gives the bodies logged for method, parsed (NULL for one
 *     that does not parse); scripted_clear() empties the log; scripted_lines(fn) walks it;
 *   - scripted_stop() ends the server and removes the log. The server also dies with the test,
 *     however the test ends: left running, it would hold ctest's output pipe until the timeout.
 *   - scripted_client() (with po_kube): a client of the server, one request made unarmed so that
 *     the connection and libcurl's lazily made state exist before a sweep.
 * Answers go out in one write: in two, the client's delayed ACK of the head held the body back
 * (Nagle's algorithm), 40 ms an answer. */
#ifndef PO_TESTS_SCRIPTED_SERVER_H
#define PO_TESTS_SCRIPTED_SERVER_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*scripted_route)(int fd, const char *line);

static pid_t scripted_pid;
static int scripted_port;
static char scripted_log[64] = "/tmp/po-scripted-XXXXXX";

/* Case-insensitive search for a header name in the head (strcasestr is a GNU extension). */
static const char *scripted_header(const char *head, const char *end, const char *name) {
  size_t n = strlen(name);
  for (const char *p = head; p + n <= end; p++)
    if (strncasecmp(p, name, n) == 0) return p;
  return NULL;
}

/* One request whole into buf (head, then body by Content-Length); false at the connection's end. */
static bool scripted_read(int fd, char *buf, size_t size, size_t *head_len, size_t *body_len) {
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
    const char *cl = scripted_header(buf, end, "\r\nContent-Length:");
    if (cl) body = strtoul(cl + 17, NULL, 10);
    if (n >= (size_t)(end + 4 - buf) + body) {
      *head_len = (size_t)(end + 4 - buf);
      *body_len = body;
      return true;
    }
  }
}

static void scripted_answer(int fd, int code, const char *body) {
  static char out[1 << 15];
  int n = snprintf(out, sizeof out, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                   code, strlen(body), body);
  if (n < 0 || (size_t)n >= sizeof out || write(fd, out, (size_t)n) != n) perror("scripted_answer");
}

static void scripted_serve(int lfd, scripted_route route) {
  static char buf[1 << 20];
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) continue;
    size_t hl, bl;
    while (scripted_read(fd, buf, sizeof buf, &hl, &bl)) {
      char *sp = strchr(buf, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
      if (!sp2) break;
      int log = open(scripted_log, O_WRONLY | O_APPEND | O_CREAT, 0600);
      if (write(log, buf, (size_t)(sp2 - buf)) < 0 || write(log, "\n", 1) < 0 || write(log, buf + hl, bl) < 0 ||
          write(log, "\n", 1) < 0)
        perror("scripted log");
      close(log);
      *sp2 = 0;
      route(fd, buf);
    }
    close(fd);
  }
}

static void scripted_start(scripted_route route) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 || getsockname(fd, (struct sockaddr *)&a, &al)) {
    perror("scripted_start");
    exit(1);
  }
  scripted_port = ntohs(a.sin_port);
  if (strstr(scripted_log, "XXXXXX")) { /* one log for all the servers a test starts */
    int lf = mkstemp(scripted_log);
    if (lf < 0) {
      perror("scripted_start: mkstemp");
      exit(1);
    }
    close(lf);
  }
  fflush(NULL);
  if ((scripted_pid = fork()) == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(0); /* the test ended before the line above */
    scripted_serve(fd, route);
  }
  close(fd);
}

static void scripted_stop(bool remove_log) {
  if (scripted_pid > 0) {
    kill(scripted_pid, SIGKILL);
    waitpid(scripted_pid, NULL, 0);
    scripted_pid = 0;
  }
  if (remove_log) unlink(scripted_log);
}

static void scripted_clear(void) {
  int fd = open(scripted_log, O_WRONLY | O_TRUNC);
  if (fd >= 0) close(fd);
}

/* Each logged request: fn(request line "METHOD TARGET\n", body without its newline, ctx). */
static void scripted_lines(void (*fn)(const char *line, char *body, void *ctx), void *ctx) {
  FILE *f = fopen(scripted_log, "r");
  static char line[1 << 20], body[1 << 20];
  while (f && fgets(line, sizeof line, f) && fgets(body, sizeof body, f)) {
    body[strcspn(body, "\n")] = 0;
    fn(line, body, ctx);
  }
  if (f) fclose(f);
}

typedef struct {
  const char *method;
  json_object **out;
  size_t max, n;
} scripted_Bodies;

static void scripted_body_of(const char *line, char *body, void *ctx) {
  scripted_Bodies *b = ctx;
  size_t ml = strlen(b->method);
  if (strncmp(line, b->method, ml) || line[ml] != ' ' || b->n >= b->max) return;
  json_object *o = json_tokener_parse(body);
  if (!o) fprintf(stderr, "  unparsable %s body: %.300s\n", b->method, body);
  b->out[b->n++] = o;
}

/* The bodies the server got for method, parsed (the caller puts them); NULL for one that does not parse. */
static size_t scripted_logged(const char *method, json_object **out, size_t max) {
  scripted_Bodies b = {method, out, max, 0};
  scripted_lines(scripted_body_of, &b);
  return b.n;
}

#ifdef PO_KUBE_CLIENT_H
/* A client of the server (a token user), one GET made unarmed; _exit(2) when it cannot be made. */
static po_KubeClient *scripted_client(void) {
  char yaml[512];
  snprintf(yaml, sizeof yaml,
           "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
           "http://127.0.0.1:%d\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  "
           "user:\n    token: t\n",
           scripted_port);
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
#endif

#endif
