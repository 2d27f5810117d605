/* The HTTP server layer (po/runtime/http.h) over loopback with raw sockets, plain HTTP (TLS is
 * tested through the webhook, tests/webhook/test_webhook_server.c):
 *   - the handler gets the whole body (past the first 16 KiB buffer), the method, the path and
 *     the query; every answer says nosniff;
 *   - the layer's own refusals reach `refused` and never the handler: 413 for a declared body
 *     over max_body (answered), 411 for a chunked body and 408 for a body trickled past
 *     request_timeout (both closed);
 *   - over a memory budget, 429 with Retry-After before the body; 413 over the whole budget;
 *   - libmicrohttpd's messages reach the logger, at most 5 a second;
 *   - options and addresses are checked with clear messages; "0" disables; the runnable starts,
 *     stops and starts again.
 * Waits poll for their condition with generous bounds (a busy 2-core machine). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "po/runtime/http.h"

enum { kPromptSeconds = 15 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct {
  atomic_int calls;
  atomic_int refused[600]; /* by HTTP status */
} Seen;

/* FNV-1a, so the test can tell that every byte of the body arrived in order. */
static uint32_t hash(const char *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
  return h;
}

static bool echo(void *ctx, po_HttpRequest *rq) {
  Seen *seen = ctx;
  atomic_fetch_add(&seen->calls, 1);
  size_t len;
  const char *body = po_HttpRequest_Body(rq, &len);
  /* /reserve/N: the handler's work is N MiB (po_HttpRequest_Reserve) */
  if (strncmp(po_HttpRequest_Path(rq), "/reserve/", 9) == 0) {
    unsigned over = po_HttpRequest_Reserve(rq, strtoul(po_HttpRequest_Path(rq) + 9, NULL, 10) << 20);
    if (over == 429) return po_HttpRequest_Busy(rq, "busy\n");
    if (over) return po_HttpRequest_Text(rq, over, "never\n");
  }
  char out[512];
  snprintf(out, sizeof out, "%s %s len=%zu hash=%08x nul=%d verbose=%d exclude-a=%d seconds-ok=%d",
           po_HttpRequest_Method(rq), po_HttpRequest_Path(rq), len, hash(body, len),
           body[len] == '\0', po_HttpRequest_HasArg(rq, "verbose"),
           po_HttpRequest_HasArgValue(rq, "exclude", "a"),
           po_HttpRequest_Seconds(rq) >= 0 && po_HttpRequest_Seconds(rq) < kPromptSeconds);
  if (strcmp(po_HttpRequest_Path(rq), "/owned") == 0)
    return po_HttpRequest_RespondOwned(rq, 201, "text/x-owned", strdup(out), strlen(out));
  return po_HttpRequest_Text(rq, 200, out);
}

static void on_refused(void *ctx, int status, double seconds) {
  Seen *seen = ctx;
  assert_true(status >= 0 && status < 600 && seconds >= 0);
  atomic_fetch_add(&seen->refused[status], 1);
}

static po_HttpServer *start(po_HttpOptions o, Seen *seen) {
  o.name = o.name ? o.name : "test server";
  o.address = o.address ? o.address : "127.0.0.1:0";
  o.threads = o.threads ? o.threads : 2;
  o.handler = echo;
  o.ctx = seen;
  o.refused = on_refused;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_HttpServer *s = po_HttpServer_New(&o, &st);
  if (!s) fail_msg("new: %s", st.message);
  if (!po_HttpServer_Start(s, &st)) fail_msg("start: %s", st.message);
  assert_true(po_HttpServer_Port(s) > 0);
  return s;
}

static int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0) return; /* the server may close early: the reply (or its absence) says why */
    p += k;
    n -= (size_t)k;
  }
}

/* Reads until the server closes or kPromptSeconds pass; returns the bytes read (0: closed with
 * no answer). */
static size_t read_reply(int fd, char *buf, size_t cap) {
  size_t len = 0;
  double t0 = now();
  while (len + 1 < cap && now() - t0 < kPromptSeconds) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t k = recv(fd, buf + len, cap - 1 - len, 0);
    if (k <= 0) break;
    len += (size_t)k;
  }
  buf[len] = '\0';
  return len;
}

/* One request on a fresh connection ("Connection: close" in it), the whole reply. */
static size_t exchange(uint16_t port, const char *req, size_t req_len, char *buf, size_t cap) {
  int fd = connect_to(port);
  assert_true(fd >= 0);
  send_all(fd, req, req_len);
  size_t n = read_reply(fd, buf, cap);
  close(fd);
  return n;
}

static void test_handler_gets_whole_body_and_query(void **state) {
  (void)state;
  static Seen seen;
  po_HttpServer *s = start((po_HttpOptions){.max_body = 65536}, &seen);
  enum { kBody = 40000 }; /* past the first 16 KiB buffer */
  char *req = malloc(kBody + 256);
  assert_non_null(req);
  int head = snprintf(req, 256, "POST /echo?verbose&exclude=b&exclude=a HTTP/1.1\r\nHost: x\r\n"
                                "Connection: close\r\nContent-Length: %d\r\n\r\n", kBody);
  for (int i = 0; i < kBody; i++) req[head + i] = (char)('a' + (i * 7) % 26);
  char want[128], reply[4096];
  snprintf(want, sizeof want, "POST /echo len=%d hash=%08x nul=1 verbose=1 exclude-a=1 seconds-ok=1",
           kBody, hash(req + head, kBody));
  exchange(po_HttpServer_Port(s), req, (size_t)head + kBody, reply, sizeof reply);
  free(req);
  assert_non_null(strstr(reply, "HTTP/1.1 200"));
  assert_non_null(strstr(reply, "Content-Type: text/plain; charset=utf-8"));
  assert_non_null(strstr(reply, "X-Content-Type-Options: nosniff"));
  if (!strstr(reply, want)) fail_msg("reply %s\nwanted %s", reply, want);

  const char *get = "GET /owned?exclude=ab HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  exchange(po_HttpServer_Port(s), get, strlen(get), reply, sizeof reply);
  assert_non_null(strstr(reply, "HTTP/1.1 201"));
  assert_non_null(strstr(reply, "Content-Type: text/x-owned"));
  assert_non_null(strstr(reply, "GET /owned len=0 hash=811c9dc5 nul=1 verbose=0 exclude-a=0"));
  assert_int_equal(atomic_load(&seen.calls), 2);
  po_HttpServer_Free(s);
}

static void test_refusals_reach_refused_not_the_handler(void **state) {
  (void)state;
  static Seen seen;
  po_HttpServer *s = start((po_HttpOptions){.max_body = 100, .request_timeout = 1, .header_timeout = 5}, &seen);
  uint16_t port = po_HttpServer_Port(s);
  char reply[4096];

  const char *big = "POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 101\r\n"
                    "Expect: 100-continue\r\n\r\n";
  exchange(port, big, strlen(big), reply, sizeof reply);
  assert_non_null(strstr(reply, "HTTP/1.1 413"));
  assert_null(strstr(reply, "100 Continue"));
  assert_non_null(strstr(reply, "request body over 100 bytes"));
  assert_int_equal(atomic_load(&seen.refused[413]), 1);

  const char *chunked = "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
  assert_int_equal(exchange(port, chunked, strlen(chunked), reply, sizeof reply), 0);
  assert_int_equal(atomic_load(&seen.refused[411]), 1);

  /* A body trickled a byte every 200 ms is never silent for header_timeout (5 s), but is cut
   * once request_timeout (1 s) has passed since the headers. */
  int fd = connect_to(port);
  assert_true(fd >= 0);
  const char *head = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n";
  send_all(fd, head, strlen(head));
  double t0 = now();
  while (atomic_load(&seen.refused[408]) == 0 && now() - t0 < kPromptSeconds) {
    send(fd, "{", 1, MSG_NOSIGNAL);
    usleep(200 * 1000);
  }
  close(fd);
  assert_int_equal(atomic_load(&seen.refused[408]), 1);

  /* Within the limit, the same server answers. */
  const char *ok = "POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 100\r\n\r\n";
  char req[256];
  snprintf(req, sizeof req, "%s%0100d", ok, 0);
  exchange(port, req, strlen(req), reply, sizeof reply);
  assert_non_null(strstr(reply, "POST /x len=100"));
  assert_int_equal(atomic_load(&seen.calls), 1);
  po_HttpServer_Free(s);
}

/* A body's deadline is 5 s plus 1 s per MiB declared (the API server sends a body at once), not
 * all of request_timeout: a body of 100 bytes trickled a byte every 200 ms, never silent, is cut
 * (408) after about 5 s though request_timeout is 10 s, and what it held is given back. */
static void test_body_deadline_by_size(void **state) {
  (void)state;
  static Seen seen;
  po_Budget *b = po_Budget_New(&(po_BudgetOptions){.bytes = 8u << 20}, NULL);
  assert_non_null(b);
  po_HttpServer *s = start((po_HttpOptions){.max_body = 1000, .request_timeout = 10, .header_timeout = 5, .budget = b},
                           &seen);
  int fd = connect_to(po_HttpServer_Port(s));
  assert_true(fd >= 0);
  const char *head = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n";
  send_all(fd, head, strlen(head));
  double t0 = now();
  while (atomic_load(&seen.refused[408]) == 0 && now() - t0 < kPromptSeconds) {
    send(fd, "{", 1, MSG_NOSIGNAL);
    usleep(200 * 1000);
  }
  double took = now() - t0;
  close(fd);
  assert_int_equal(atomic_load(&seen.refused[408]), 1);
  if (took < 4.9 || took > 6.5) fail_msg("cut after %.2f s, want about 5", took);
  t0 = now();
  while (po_Budget_InFlight(b) != 0 && now() - t0 < kPromptSeconds) usleep(10000);
  assert_int_equal(po_Budget_InFlight(b), 0);
  po_HttpServer_Free(s);
  po_Budget_Free(b);
}

/* The memory budget: a request reserves nothing before its body arrives (a client that sends
 * headers and then nothing, or a byte every few seconds, held the whole budget: F4), then its
 * bytes as they arrive, within half the budget for all bodies being read, and its handler's
 * work (decode_factor times the body) once the body is complete. A body that does not fit while
 * others are being read is answered 429 with Retry-After: 1 once it is in, never reaching the
 * handler; a small one still fits; one over the whole budget is 413; once the holder is gone
 * every byte is back and the large one passes. The handler's own reservation: the exact figure
 * replaces the estimate, 413 past the whole budget; an estimate past the budget is cut to it (a
 * body that fits is never refused for its estimate alone). */
static void test_budget_refuses_with_retry_after(void **state) {
  (void)state;
  Seen seen = {0};
  po_Budget *b = po_Budget_New(&(po_BudgetOptions){.bytes = 8u << 20}, NULL);
  assert_non_null(b);
  po_HttpServer *s = start((po_HttpOptions){.max_body = 16u << 20, .budget = b, .decode_factor = 1}, &seen);
  uint16_t port = po_HttpServer_Port(s);
  char reply[4096];
  /* Headers alone (3.7 MB declared) reserve nothing, however many: a large one passes beside
   * 20 of them. */
  int silent[20];
  const char *hold = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3700000\r\n\r\n";
  for (int i = 0; i < 20; i++) {
    silent[i] = connect_to(port);
    assert_true(silent[i] >= 0);
    send_all(silent[i], hold, strlen(hold));
  }
  usleep(200000);
  assert_int_equal(po_Budget_InFlight(b), 0);
  char *big = malloc(300000 + 200);
  int n = sprintf(big, "POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 300000\r\n\r\n");
  memset(big + n, 'b', 300000);
  exchange(port, big, (size_t)n + 300000, reply, sizeof reply);
  if (!strstr(reply, "HTTP/1.1 200 ")) fail_msg("reply %s", reply);
  for (int i = 0; i < 20; i++) close(silent[i]);
  /* The holder sends 900 KB of its body: that is reserved (in 64 KiB steps, with request_cost),
   * within the eighth of the budget (1 MiB) that large bodies being read share. */
  int holder = connect_to(port);
  assert_true(holder >= 0);
  send_all(holder, hold, strlen(hold));
  char *part = malloc(900000);
  memset(part, 'h', 900000);
  send_all(holder, part, 900000);
  free(part);
  double t0 = now();
  while (po_Budget_InFlight(b) < 900000 && now() - t0 < kPromptSeconds) usleep(10000);
  usleep(100000);
  assert_true(po_Budget_InFlight(b) >= (64u << 10) + 900000);
  assert_true(po_Budget_InFlight(b) <= (64u << 10) + 900000 + (64u << 10));
  /* Another large body (300 KB, over budget/64) does not fit beside it in that eighth: 429 once
   * it is in, never reaching the handler. */
  exchange(port, big, (size_t)n + 300000, reply, sizeof reply);
  if (!strstr(reply, "HTTP/1.1 429 ")) fail_msg("reply %s", reply);
  assert_non_null(strstr(reply, "\r\nRetry-After: 1\r\n"));
  assert_non_null(strstr(reply, "test server: the requests in flight hold its memory budget; retry in a second"));
  assert_int_equal(atomic_load(&seen.refused[429]), 1);
  assert_int_equal(atomic_load(&seen.calls), 1);
  /* A small one fits beside it. */
  const char *small = "POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello";
  exchange(port, small, strlen(small), reply, sizeof reply);
  if (!strstr(reply, "HTTP/1.1 200 ")) fail_msg("reply %s", reply);
  assert_non_null(strstr(reply, "len=5 "));
  /* Over the whole budget (within max_body): 413, whatever is in flight. */
  const char *huge = "POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 9000000\r\n\r\n";
  exchange(port, huge, strlen(huge), reply, sizeof reply);
  assert_non_null(strstr(reply, "HTTP/1.1 413 "));
  assert_non_null(strstr(reply, "request of 9000000 bytes over the whole memory budget of this server (8388608 bytes)"));
  /* The holder leaves: everything is given back (at once: the close is seen), the large one
   * passes. */
  close(holder);
  t0 = now();
  while (po_Budget_InFlight(b) != 0 && now() - t0 < kPromptSeconds) usleep(10000);
  assert_int_equal(po_Budget_InFlight(b), 0);
  exchange(port, big, (size_t)n + 300000, reply, sizeof reply);
  if (!strstr(reply, "HTTP/1.1 200 ")) fail_msg("reply %s", reply);
  assert_non_null(strstr(reply, "len=300000 "));
  assert_int_equal(atomic_load(&seen.calls), 3);
  /* The handler's exact figure: 2 MiB on a 300 KB body (estimate 300 KB) fits, 9 MiB never. */
  n = sprintf(big, "POST /reserve/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 300000\r\n\r\n");
  memset(big + n, 'b', 300000);
  exchange(port, big, (size_t)n + 300000, reply, sizeof reply);
  if (!strstr(reply, "HTTP/1.1 200 ")) fail_msg("reply %s", reply);
  assert_true(po_Budget_Peak(b) >= (64u << 10) + 300001 + (2u << 20));
  const char *never = "POST /reserve/9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx";
  exchange(port, never, strlen(never), reply, sizeof reply);
  assert_non_null(strstr(reply, "HTTP/1.1 413 "));
  t0 = now();
  while (po_Budget_InFlight(b) != 0 && now() - t0 < kPromptSeconds) usleep(10000);
  assert_int_equal(po_Budget_InFlight(b), 0);
  po_HttpServer_Free(s);
  /* An estimate past the budget (300 KB x 100) is cut to what is left beside the body: the
   * request waits to be alone, it is not refused as if it could never fit. */
  s = start((po_HttpOptions){.max_body = 16u << 20, .budget = b, .decode_factor = 100}, &seen);
  n = sprintf(big, "POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 300000\r\n\r\n");
  memset(big + n, 'b', 300000);
  exchange(po_HttpServer_Port(s), big, (size_t)n + 300000, reply, sizeof reply);
  if (!strstr(reply, "HTTP/1.1 200 ")) fail_msg("reply %s", reply);
  assert_int_equal(po_Budget_Peak(b), 8u << 20);
  free(big);
  po_HttpServer_Free(s);
  assert_int_equal(po_Budget_InFlight(b), 0);
  po_Budget_Free(b);
}

/* Headers trickled a byte every 300 ms are never silent for header_timeout (2 s); the request
 * must still be cut once request_timeout (1 s, here) has passed since its first byte, or one
 * client holds a connection for as long as it likes (slowloris on the headers). */
static void test_trickled_headers_are_cut(void **state) {
  (void)state;
  static Seen seen;
  po_HttpServer *s = start((po_HttpOptions){.request_timeout = 1, .header_timeout = 2}, &seen);
  int fd = connect_to(po_HttpServer_Port(s));
  assert_true(fd >= 0);
  const char *head = "GET /x HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  send_all(fd, head, strlen(head));
  double t0 = now();
  bool open = true;
  while (open && now() - t0 < kPromptSeconds) {
    open = send(fd, "a", 1, MSG_NOSIGNAL) == 1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 300) > 0) {
      char b[256];
      open = recv(fd, b, sizeof b, MSG_DONTWAIT) > 0 && open;
    }
  }
  double held = now() - t0;
  close(fd);
  po_HttpServer_Free(s);
  if (held >= kPromptSeconds - 1) fail_msg("a connection trickling its headers was held %.1f s", held);
}

/* libmicrohttpd closes connections over the per-client limit and says so once per connection;
 * the logger gets at most 5 of those messages a second. */
static void test_messages_logged_at_most_five_a_second(void **state) {
  (void)state;
  static Seen seen;
  char *logged = NULL;
  size_t logged_len = 0;
  FILE *out = open_memstream(&logged, &logged_len);
  assert_non_null(out);
  po_Logger *log = po_Logger_New(&(po_LoggerOptions){.out = out, .name = "t"});
  po_HttpServer *s = start((po_HttpOptions){.max_per_client = 1, .threads = 1, .log = log}, &seen);
  uint16_t port = po_HttpServer_Port(s);
  int idle = connect_to(port); /* takes this client's one slot */
  assert_true(idle >= 0);
  usleep(300 * 1000);
  enum { kRefused = 40 };
  double t0 = now();
  for (int i = 0; i < kRefused; i++) {
    int fd = connect_to(port);
    if (fd < 0) continue;
    char b[16];
    read_reply(fd, b, sizeof b); /* closed by the server at once */
    close(fd);
  }
  double seconds = now() - t0;
  close(idle);
  po_HttpServer_Free(s);
  po_Logger_Free(log);
  fclose(out);
  int lines = 0;
  for (const char *p = logged; p && (p = strchr(p, '\n')); p++) lines++;
  print_message("%d refused connections in %.2f s: %d lines logged\n", kRefused, seconds, lines);
  assert_true(lines >= 1);
  assert_true(lines <= 5 * ((int)seconds + 2));
  assert_non_null(strstr(logged, "\"logger\":\"t\""));
  if (strstr(logged, "pool")) fail_msg("%s", logged); /* one thread is no pool: nothing to warn about */
  assert_non_null(strstr(logged, "\"server\":\"test server\""));
  free(logged);
}

static void test_options_and_addresses(void **state) {
  (void)state;
  static const struct {
    po_HttpOptions o;
    po_CtlCode code;
    const char *message;
  } bad[] = {
      {{.name = "probe", .address = ":0"}, kPo_Ctl_Usage, "probe: an address and a handler are required"},
      {{.address = "9443", .handler = echo}, kPo_Ctl_Usage,
       "listen address \"9443\": expected host:port, :port or 0 (disabled)"},
      {{.address = ":0", .handler = echo, .cert_file = "/x.pem"}, kPo_Ctl_Usage,
       "both a certificate and a key file are needed for TLS"},
      {{.address = ":0", .handler = echo, .cert_file = "/nonexistent/c.pem", .key_file = "/nonexistent/k.pem"},
       kPo_Ctl_System, "/nonexistent/c.pem: cannot read the certificate"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    po_CtlStatus st;
    po_CtlStatus_Clear(&st);
    assert_null(po_HttpServer_New(&bad[i].o, &st));
    assert_int_equal(st.code, bad[i].code);
    assert_string_equal(st.message, bad[i].message);
  }
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_HttpServer *off = po_HttpServer_New(&(po_HttpOptions){.address = "0", .handler = echo}, &st);
  assert_non_null(off);
  assert_true(po_HttpServer_Disabled(off));
  assert_true(po_HttpServer_Start(off, &st));
  assert_int_equal(po_HttpServer_Port(off), 0);
  po_HttpServer_Free(off);

  /* A port in use: the name, the address and what may be wrong. */
  static Seen seen;
  po_HttpServer *a = start((po_HttpOptions){0}, &seen);
  char taken[64];
  snprintf(taken, sizeof taken, "127.0.0.1:%u", po_HttpServer_Port(a));
  po_HttpServer *b = po_HttpServer_New(&(po_HttpOptions){.name = "second", .address = taken, .handler = echo}, &st);
  assert_non_null(b);
  assert_false(po_HttpServer_Start(b, &st));
  assert_int_equal(st.code, kPo_Ctl_System);
  char want[160];
  snprintf(want, sizeof want, "second: cannot listen on \"%s\" (address in use or not local?)", taken);
  assert_string_equal(st.message, want);
  po_HttpServer_Free(b);
  po_HttpServer_Free(a);
}

static void test_runnable_starts_stops_and_restarts(void **state) {
  (void)state;
  static Seen seen;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_HttpServer *s = po_HttpServer_New(&(po_HttpOptions){.name = "ops", .address = "127.0.0.1:0",
                                                         .threads = 1, .handler = echo, .ctx = &seen},
                                       &st);
  assert_non_null(s);
  po_Runnable r = po_HttpServer_Runnable(s);
  assert_string_equal(r.name, "ops");
  assert_false(r.needs_leader);
  assert_int_equal(po_HttpServer_Port(s), 0);
  const char *get = "GET /r HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  char reply[1024];
  for (int round = 0; round < 2; round++) {
    assert_true(r.start(r.ctx, &st));
    uint16_t port = po_HttpServer_Port(s);
    assert_true(port > 0);
    exchange(port, get, strlen(get), reply, sizeof reply);
    assert_non_null(strstr(reply, "GET /r len=0"));
    assert_true(r.stop(r.ctx, 0));
    assert_int_equal(po_HttpServer_Port(s), 0);
    int fd = connect_to(port);
    assert_true(fd < 0);
  }
  assert_int_equal(atomic_load(&seen.calls), 2);
  po_HttpServer_Free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_handler_gets_whole_body_and_query),
      cmocka_unit_test(test_refusals_reach_refused_not_the_handler),
      cmocka_unit_test(test_budget_refuses_with_retry_after),
      cmocka_unit_test(test_body_deadline_by_size),
      cmocka_unit_test(test_messages_logged_at_most_five_a_second),
      cmocka_unit_test(test_trickled_headers_are_cut),
      cmocka_unit_test(test_options_and_addresses),
      cmocka_unit_test(test_runnable_starts_stops_and_restarts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
