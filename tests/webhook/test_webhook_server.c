/* The webhook's HTTPS server under hostile clients, on loopback (127.0.0.0/8, so clients can
 * come from distinct addresses):
 *   - 1,500 idle connections, from one address and then spread over eight, do not keep another
 *     client from an answer (per-client limit, enough slots);
 *   - connections that do not finish the TLS handshake or the request headers are closed after
 *     the short handshake timeout; a keep-alive connection after a request is not;
 *   - `Expect: 100-continue` with a huge Content-Length gets 413, never 100;
 *   - a client offering only TLS 1.1, or only CBC suites, is refused; TLS 1.2 and 1.3 work.
 * Bounds are generous (a busy 2-core machine): "promptly" is 10 s, against the 25-30 s stall
 * the old defaults gave; waits poll for the condition. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "po/webhook/certgen.h"
#include "po/runtime/log.h"
#include "po/webhook/server.h"

enum { kIdle = 1500, kPromptSeconds = 10 };

static char g_dir[64], g_cert[128], g_key[128];

static const char kReview[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"operation\":\"CREATE\",\"object\":{}}}";

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/po-webhook-test-XXXXXX");
  if (!mkdtemp(g_dir)) return -1;
  po_CertPair ca = {0}, serving = {0};
  po_CtlStatus st;
  const char *names[] = {"127.0.0.1"};
  if (!po_Cert_GenerateCA("test-ca", 1, &ca, &st) ||
      !po_Cert_GenerateServing(&ca, names, 1, 1, &serving, &st)) {
    fprintf(stderr, "certificates: %s\n", st.message);
    return -1;
  }
  snprintf(g_cert, sizeof g_cert, "%s/tls.crt", g_dir);
  snprintf(g_key, sizeof g_key, "%s/tls.key", g_dir);
  write_file(g_cert, serving.cert_pem);
  write_file(g_key, serving.key_pem);
  po_CertPair_Free(&ca);
  po_CertPair_Free(&serving);
  /* 3,000 client sockets and as many server-side ones live in this one process. */
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 8192) {
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 8192 ? 8192 : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  gnutls_global_init();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(g_cert);
  unlink(g_key);
  rmdir(g_dir);
  gnutls_global_deinit();
  return 0;
}

static po_WebhookServer *start(bool tls, unsigned handshake_timeout) {
  po_WebhookOptions o = {.address = "127.0.0.1:0", .handshake_timeout = handshake_timeout, .threads = 2};
  if (tls) {
    o.cert_file = g_cert;
    o.key_file = g_key;
  }
  po_CtlStatus st;
  po_WebhookServer *s = po_WebhookServer_Start(&o, &st);
  if (!s) fail_msg("start: %s", st.message);
  return s;
}

/* A TCP connection from `src` (an address in 127.0.0.0/8) to the server; -1 on failure. */
static int connect_from(const char *src, uint16_t port, bool nonblocking) {
  int fd = socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET};
  inet_pton(AF_INET, src, &a.sin_addr);
  struct sockaddr_in d = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &d.sin_addr);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* as curl and Go's net/http do */
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      (connect(fd, (struct sockaddr *)&d, sizeof d) != 0 && errno != EINPROGRESS)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* A TLS session over `fd` with the client priorities `prio`; the handshake's result. */
typedef struct {
  gnutls_session_t s;
  gnutls_certificate_credentials_t cred;
  int fd;
} Tls;

static int tls_open(Tls *t, int fd, const char *prio) {
  t->fd = fd;
  gnutls_certificate_allocate_credentials(&t->cred);
  gnutls_init(&t->s, GNUTLS_CLIENT);
  const char *where = NULL;
  int rc = gnutls_priority_set_direct(t->s, prio, &where);
  if (rc < 0) fail_msg("client priorities '%s' at '%s': %s", prio, where ? where : "", gnutls_strerror(rc));
  gnutls_credentials_set(t->s, GNUTLS_CRD_CERTIFICATE, t->cred);
  gnutls_transport_set_int(t->s, fd);
  gnutls_handshake_set_timeout(t->s, kPromptSeconds * 1000);
  do rc = gnutls_handshake(t->s);
  while (rc < 0 && !gnutls_error_is_fatal(rc));
  return rc;
}

static void tls_close(Tls *t) {
  gnutls_deinit(t->s);
  gnutls_certificate_free_credentials(t->cred);
  close(t->fd);
}

/* Sends `req` and reads the response's status code (0 when none came within the bound). */
static int tls_exchange(Tls *t, const char *req) {
  size_t off = 0, n = strlen(req);
  while (off < n) {
    ssize_t w = gnutls_record_send(t->s, req + off, n - off);
    if (w < 0 && gnutls_error_is_fatal((int)w)) return 0;
    if (w > 0) off += (size_t)w;
  }
  gnutls_record_set_timeout(t->s, kPromptSeconds * 1000);
  char buf[4096];
  size_t have = 0;
  while (have < sizeof buf - 1) {
    ssize_t r = gnutls_record_recv(t->s, buf + have, sizeof buf - 1 - have);
    if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) continue;
    if (r <= 0) break;
    have += (size_t)r;
    buf[have] = '\0';
    const char *body = strstr(buf, "\r\n\r\n"), *cl = strstr(buf, "Content-Length: ");
    if (body && cl && have >= (size_t)(body + 4 - buf) + strtoul(cl + 16, NULL, 10)) break;
  }
  buf[have] = '\0';
  int code = 0;
  return sscanf(buf, "HTTP/1.1 %d", &code) == 1 ? code : 0;
}

static char *review_request(char *buf, size_t size) {
  snprintf(buf, size, "POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
           strlen(kReview), kReview);
  return buf;
}

/* A whole review over TLS 1.3 from 127.0.0.1; its seconds, or a failure. */
static double answered_in(uint16_t port) {
  double t0 = now();
  Tls t;
  int fd = connect_from("127.0.0.1", port, false);
  assert_true(fd >= 0);
  int rc = tls_open(&t, fd, "NORMAL");
  if (rc < 0) fail_msg("handshake after %.1f s: %s", now() - t0, gnutls_strerror(rc));
  char req[1024];
  int code = tls_exchange(&t, review_request(req, sizeof req));
  tls_close(&t);
  if (code != 200) fail_msg("status %d after %.1f s", code, now() - t0);
  return now() - t0;
}

/* Opens `n` idle connections spread over `sources` addresses 127.0.0.<first+i>. */
static int open_idle(int *fds, int n, uint16_t port, int first, int sources) {
  int opened = 0;
  for (int i = 0; i < n; i++) {
    char src[32];
    snprintf(src, sizeof src, "127.0.0.%d", first + i % sources);
    fds[i] = connect_from(src, port, true);
    opened += fds[i] >= 0;
  }
  return opened;
}

static void close_all(int *fds, int n) {
  for (int i = 0; i < n; i++) if (fds[i] >= 0) close(fds[i]);
}

/* How many of the sockets the server has closed (EOF or reset), polling until all are or until
 * `seconds` passed. */
static int wait_closed(int *fds, int n, double seconds) {
  double end = now() + seconds;
  int closed = 0;
  bool *done = calloc((size_t)n, sizeof *done);
  assert_non_null(done);
  struct pollfd *p = calloc((size_t)n, sizeof *p);
  assert_non_null(p);
  while (closed < n && now() < end) {
    int m = 0;
    int map[kIdle];
    for (int i = 0; i < n; i++) {
      if (done[i] || fds[i] < 0) continue;
      p[m] = (struct pollfd){.fd = fds[i], .events = POLLIN};
      map[m++] = i;
    }
    if (poll(p, (nfds_t)m, 200) > 0) {
      for (int k = 0; k < m; k++) {
        if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char c;
        ssize_t r = recv(fds[map[k]], &c, 1, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          done[map[k]] = true;
          closed++;
        }
      }
    }
    closed = 0;
    for (int i = 0; i < n; i++) closed += done[i] || fds[i] < 0;
  }
  free(done);
  free(p);
  return closed;
}

static void test_idle_connections_do_not_starve_others(void **state) {
  (void)state;
  /* A long handshake timeout here, so that only the limits (not timeouts) can explain an answer. */
  po_WebhookServer *s = start(true, 120);
  uint16_t port = po_WebhookServer_Port(s);
  int *fds = calloc(kIdle, sizeof *fds);
  assert_non_null(fds);

  /* 1,500 from one address: the per-client limit leaves room for everyone else. */
  assert_true(open_idle(fds, kIdle, port, 2, 1) > 1000);
  double t = answered_in(port);
  print_message("1,500 idle from one address: another client answered in %.3f s\n", t);
  assert_true(t < kPromptSeconds);
  close_all(fds, kIdle);

  /* 1,500 from eight addresses, each under the per-client limit: there are slots for them all. */
  assert_true(open_idle(fds, kIdle, port, 10, 8) > 1000);
  t = answered_in(port);
  print_message("1,500 idle from eight addresses: another client answered in %.3f s\n", t);
  assert_true(t < kPromptSeconds);
  close_all(fds, kIdle);
  free(fds);
  po_WebhookServer_Stop(s);
}

static void test_short_timeout_until_headers(void **state) {
  (void)state;
  po_WebhookServer *s = start(true, 2);
  uint16_t port = po_WebhookServer_Port(s);
  enum { kN = 50 };
  int fds[kN + 1];
  /* Idle before the handshake. */
  assert_int_equal(open_idle(fds, kN, port, 20, 1), kN);
  /* Handshaken, but no request headers. */
  Tls t;
  int fd = connect_from("127.0.0.1", port, false);
  assert_true(fd >= 0);
  assert_int_equal(tls_open(&t, fd, "NORMAL"), 0);
  fds[kN] = fd;
  double t0 = now();
  int closed = wait_closed(fds, kN + 1, 25);
  print_message("%d of %d idle connections closed by the server after %.1f s (timeout 2 s)\n", closed, kN + 1, now() - t0);
  assert_int_equal(closed, kN + 1);
  tls_close(&t);
  close_all(fds, kN);

  /* After a request, the connection may idle longer than that (keep-alive). */
  fd = connect_from("127.0.0.1", port, false);
  assert_true(fd >= 0);
  assert_int_equal(tls_open(&t, fd, "NORMAL"), 0);
  char req[1024];
  assert_int_equal(tls_exchange(&t, review_request(req, sizeof req)), 200);
  sleep(4);
  assert_int_equal(tls_exchange(&t, req), 200);
  tls_close(&t);
  po_WebhookServer_Stop(s);
}

/* The status line the server sends first after `head` on a plain connection (no TLS: the
 * server's test mode). */
static int first_status(uint16_t port, const char *head) {
  int fd = connect_from("127.0.0.1", port, false);
  assert_true(fd >= 0);
  assert_int_equal(send(fd, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
  struct pollfd p = {.fd = fd, .events = POLLIN};
  char buf[512] = "";
  ssize_t r = poll(&p, 1, kPromptSeconds * 1000) > 0 ? recv(fd, buf, sizeof buf - 1, 0) : -1;
  close(fd);
  if (r <= 0) return 0;
  buf[r] = '\0';
  int code = 0;
  return sscanf(buf, "HTTP/1.1 %d", &code) == 1 ? code : 0;
}

/* A body trickled a byte at a time is never silent for the inactivity timeout: the request as a
 * whole is cut at request_timeout; and a body that never comes is cut at the short timeout,
 * not the keep-alive one. */
static void test_trickled_or_missing_body_is_cut(void **state) {
  (void)state;
  po_WebhookOptions o = {.address = "127.0.0.1:0", .handshake_timeout = 2, .request_timeout = 3, .threads = 2};
  po_CtlStatus st;
  po_WebhookServer *s = po_WebhookServer_Start(&o, &st);
  if (!s) fail_msg("start: %s", st.message);
  uint16_t port = po_WebhookServer_Port(s);
  const char *head = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
  int trickle = connect_from("127.0.0.1", port, false), silent = connect_from("127.0.0.1", port, false);
  assert_true(trickle >= 0 && silent >= 0);
  assert_int_equal(send(trickle, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
  assert_int_equal(send(silent, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
  double t0 = now(), trickle_closed = 0, silent_closed = 0;
  while (now() - t0 < 25 && (!trickle_closed || !silent_closed)) {
    if (!trickle_closed && send(trickle, "{", 1, MSG_NOSIGNAL) != 1) trickle_closed = now() - t0;
    struct pollfd p[2] = {{.fd = trickle, .events = POLLIN}, {.fd = silent, .events = POLLIN}};
    poll(p, 2, 500);
    char b[64];
    if (!trickle_closed && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) && recv(trickle, b, sizeof b, MSG_DONTWAIT) <= 0) {
      trickle_closed = now() - t0;
    }
    if (!silent_closed && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && recv(silent, b, sizeof b, MSG_DONTWAIT) <= 0) {
      silent_closed = now() - t0;
    }
  }
  print_message("trickled body cut after %.1f s (request timeout 3 s), silent body after %.1f s (timeout 2 s)\n",
                trickle_closed, silent_closed);
  assert_true(trickle_closed > 0 && trickle_closed < 15);
  assert_true(silent_closed > 0 && silent_closed < 15);
  close(trickle);
  close(silent);
  po_WebhookServer_Stop(s);
}

static void test_expect_continue_with_huge_body_gets_413(void **state) {
  (void)state;
  po_WebhookServer *s = start(false, 0);
  uint16_t port = po_WebhookServer_Port(s);
  assert_int_equal(first_status(port, "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                      "Content-Length: 1000000000000\r\nExpect: 100-continue\r\n\r\n"),
                   413);
  assert_int_equal(first_status(port, "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 4194304\r\n\r\n"), 413);
  /* A chunked body is refused at once (chunk sizes and trailers can be trickled with no data to
   * check a deadline on; the API server always sends a Content-Length). */
  double t0 = now();
  assert_int_equal(first_status(port, "POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;e="), 0);
  assert_true(now() - t0 < kPromptSeconds);
  /* Within the limit, 100 Continue as usual. */
  assert_int_equal(first_status(port, "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n"),
                   100);
  po_WebhookServer_Stop(s);
}

static void test_tls_versions_and_suites(void **state) {
  (void)state;
  po_WebhookServer *s = start(true, 0);
  uint16_t port = po_WebhookServer_Port(s);
  static const struct {
    const char *prio;
    gnutls_protocol_t version; /* 0: refused */
  } cases[] = {
      {"NORMAL:-VERS-ALL:+VERS-TLS1.1", 0},
      {"NORMAL:-VERS-ALL:+VERS-TLS1.0:+VERS-TLS1.1", 0},
      {"NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-CBC:+AES-256-CBC:-MAC-ALL:+SHA1:+SHA256", 0},
      {"NORMAL:-VERS-ALL:+VERS-TLS1.2", GNUTLS_TLS1_2},
      {"NORMAL:-VERS-ALL:+VERS-TLS1.3", GNUTLS_TLS1_3},
      {"NORMAL", GNUTLS_TLS1_3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Tls t;
    int fd = connect_from("127.0.0.1", port, false);
    assert_true(fd >= 0);
    int rc = tls_open(&t, fd, cases[i].prio);
    if (cases[i].version == 0) {
      /* Refused by the server, which hangs up or sends an alert: either means the client did send
       * its hello (a client that could not offer what it was told fails locally, otherwise). */
      if (rc >= 0) fail_msg("%s: negotiated %s", cases[i].prio, gnutls_protocol_get_name(gnutls_protocol_get_version(t.s)));
      if (rc == GNUTLS_E_FATAL_ALERT_RECEIVED) {
        gnutls_alert_description_t alert = gnutls_alert_get(t.s);
        print_message("%s: refused (alert %s)\n", cases[i].prio, gnutls_alert_get_name(alert));
        assert_true(alert == GNUTLS_A_PROTOCOL_VERSION || alert == GNUTLS_A_HANDSHAKE_FAILURE ||
                    alert == GNUTLS_A_INSUFFICIENT_SECURITY);
      } else if (rc == GNUTLS_E_PREMATURE_TERMINATION || rc == GNUTLS_E_PULL_ERROR) {
        print_message("%s: refused (%s)\n", cases[i].prio, gnutls_strerror(rc));
      } else {
        fail_msg("%s: %s, want the server to refuse", cases[i].prio, gnutls_strerror(rc));
      }
    } else {
      if (rc < 0) fail_msg("%s: %s", cases[i].prio, gnutls_strerror(rc));
      assert_int_equal(gnutls_protocol_get_version(t.s), cases[i].version);
      gnutls_cipher_algorithm_t c = gnutls_cipher_get(t.s);
      assert_true(c == GNUTLS_CIPHER_AES_128_GCM || c == GNUTLS_CIPHER_AES_256_GCM || c == GNUTLS_CIPHER_CHACHA20_POLY1305);
      char req[1024];
      assert_int_equal(tls_exchange(&t, review_request(req, sizeof req)), 200);
    }
    tls_close(&t);
  }
  po_WebhookServer_Stop(s);
}

/* The webhook takes listen addresses as the ops server does (one parser, po/runtime/listen.h):
 * the same syntax (":PORT" is every interface, IPv4 and IPv6 where there is IPv6), the same
 * messages, and "0" is refused here since the caller disables the webhook before starting it. */
static void test_listen_addresses_as_the_ops_server(void **state) {
  (void)state;
  static const struct {
    const char *address, *error;
  } bad[] = {
      {"9443", "listen address \"9443\": expected host:port, :port or 0 (disabled)"},
      {"::1:9443", "listen address \"::1:9443\": an IPv6 host must be written [addr]:port"},
      {"127.0.0.1:70000", "listen address \"127.0.0.1:70000\": port \"70000\" is not a number from 0 to 65535"},
      {"0", "listen address \"0\" disables the webhook: there is nothing to start"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    po_CtlStatus st;
    po_WebhookOptions o = {.address = bad[i].address, .threads = 1};
    assert_null(po_WebhookServer_Start(&o, &st));
    assert_string_equal(st.message, bad[i].error);
    assert_int_equal(st.code, kPo_Ctl_Usage); /* the caller's mistake, said as such */
  }
  static const char *const good[] = {":0", "localhost:0", "127.0.0.1:0"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    po_CtlStatus st;
    po_WebhookOptions o = {.address = good[i], .threads = 1};
    po_WebhookServer *s = po_WebhookServer_Start(&o, &st);
    if (!s) fail_msg("%s: %s", good[i], st.message);
    assert_true(po_WebhookServer_Port(s) > 0);
    po_WebhookServer_Stop(s);
  }
}

/* The HTTP layer's messages go to the logger the options give (the process's, so --log-level
 * applies): a failed handshake is an info line, dropped at warn and written at info. */
static size_t log_bytes_after_bad_handshake(po_LogLevel level) {
  FILE *f = tmpfile();
  assert_non_null(f);
  po_Logger *log = po_Logger_New(&(po_LoggerOptions){.out = f, .level = level, .name = "test"});
  assert_non_null(log);
  po_WebhookOptions o = {.address = "127.0.0.1:0", .handshake_timeout = 2, .threads = 1, .cert_file = g_cert,
                         .key_file = g_key, .log = log};
  po_CtlStatus st;
  po_WebhookServer *s = po_WebhookServer_Start(&o, &st);
  if (!s) fail_msg("start: %s", st.message);
  int fd = connect_from("127.0.0.1", po_WebhookServer_Port(s), false);
  assert_true(fd >= 0);
  const char *plain = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"; /* no TLS: the handshake fails */
  assert_int_equal(send(fd, plain, strlen(plain), MSG_NOSIGNAL), (ssize_t)strlen(plain));
  int closed = wait_closed(&fd, 1, 25);
  assert_int_equal(closed, 1);
  close(fd);
  po_WebhookServer_Stop(s); /* joins the server's threads: every line is written */
  fflush(f);
  long n = ftell(f);
  po_Logger_Free(log);
  fclose(f);
  return n > 0 ? (size_t)n : 0;
}

/* A CA that does not parse is said as such, with the caller's code (it read as a GnuTLS error). */
static void test_serving_certificate_from_a_bad_ca(void **state) {
  (void)state;
  po_CertPair bad = {.cert_pem = "not a certificate", .key_pem = "not a key"}, out = {0};
  const char *names[] = {"127.0.0.1"};
  po_CtlStatus st;
  assert_false(po_Cert_GenerateServing(&bad, names, 1, 1, &out, &st));
  assert_string_equal(st.message, "the webhook CA does not parse");
  assert_int_equal(st.code, kPo_Ctl_Usage);
  assert_null(out.cert_pem);
}

static void test_http_messages_follow_the_given_log_level(void **state) {
  (void)state;
  assert_true(log_bytes_after_bad_handshake(kPo_LogLevel_Info) > 0);
  assert_int_equal(log_bytes_after_bad_handshake(kPo_LogLevel_Warn), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_listen_addresses_as_the_ops_server),
      cmocka_unit_test(test_serving_certificate_from_a_bad_ca),
      cmocka_unit_test(test_tls_versions_and_suites),
      cmocka_unit_test(test_trickled_or_missing_body_is_cut),
      cmocka_unit_test(test_expect_continue_with_huge_body_gets_413),
      cmocka_unit_test(test_short_timeout_until_headers),
      cmocka_unit_test(test_http_messages_follow_the_given_log_level),
      cmocka_unit_test(test_idle_connections_do_not_starve_others),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
