/* Benchmark (not a test): the webhook server (TLS, default limits) while idle connections are
 * held open, on loopback. For each load: how long a client from another address takes for a
 * whole review on a fresh connection (TLS handshake included; best, median and worst of N), how
 * many of the idle connections the server kept, and how long until it had closed them all (the
 * handshake timeout). Clients come from distinct 127.0.0.0/8 addresses.
 *   bench_idle [--samples N] */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "po/webhook/certgen.h"
#include "po/webhook/server.h"

static const char kReview[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"operation\":\"CREATE\",\"object\":{}}}";

static void die(const char *what, const char *why) {
  fprintf(stderr, "bench_idle: %s: %s\n", what, why);
  exit(1);
}

static int connect_from(const char *src, uint16_t port, bool nonblocking) {
  int fd = socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET}, d = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, src, &a.sin_addr);
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

/* One review on a fresh TLS connection from 127.0.0.1: seconds, or -1 when it failed or took
 * over 30 s. */
static double review_seconds(uint16_t port) {
  uint64_t t0 = po_Bench_Now();
  int fd = connect_from("127.0.0.1", port, false);
  if (fd < 0) return -1;
  gnutls_certificate_credentials_t cred;
  gnutls_session_t s;
  gnutls_certificate_allocate_credentials(&cred);
  gnutls_init(&s, GNUTLS_CLIENT);
  gnutls_set_default_priority(s);
  gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
  gnutls_transport_set_int(s, fd);
  gnutls_handshake_set_timeout(s, 30000);
  gnutls_record_set_timeout(s, 30000);
  int rc;
  do rc = gnutls_handshake(s);
  while (rc < 0 && !gnutls_error_is_fatal(rc));
  double out = -1;
  if (rc == 0) {
    char req[1024], buf[2048];
    int n = snprintf(req, sizeof req, "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     strlen(kReview), kReview);
    ssize_t r = gnutls_record_send(s, req, (size_t)n) == n ? gnutls_record_recv(s, buf, sizeof buf - 1) : -1;
    if (r > 0 && strncmp(buf, "HTTP/1.1 200", 12) == 0) out = (double)(po_Bench_Now() - t0) / 1e9;
  }
  gnutls_deinit(s);
  gnutls_certificate_free_credentials(cred);
  close(fd);
  return out;
}

/* Polls until the server has closed every socket of `fds` (EOF or reset) or 60 s passed. */
static double all_closed_after(int *fds, int n, int *kept_at_start) {
  uint64_t t0 = po_Bench_Now();
  bool *done = calloc((size_t)n, sizeof *done);
  struct pollfd *p = calloc((size_t)n, sizeof *p);
  int *map = calloc((size_t)n, sizeof *map);
  if (!done || !p || !map) die("memory", "out of memory");
  int open = n;
  *kept_at_start = -1;
  while (open > 0 && po_Bench_Now() - t0 < 60000000000ull) {
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (done[i]) continue;
      p[m] = (struct pollfd){.fd = fds[i], .events = POLLIN};
      map[m++] = i;
    }
    if (poll(p, (nfds_t)m, 100) > 0) {
      for (int k = 0; k < m; k++) {
        if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char c;
        ssize_t r = recv(fds[map[k]], &c, 1, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          done[map[k]] = true;
          open--;
        }
      }
    }
    /* The per-client limit closes the excess at once: what is still open after a moment is
     * what the server kept. */
    if (*kept_at_start < 0 && po_Bench_Now() - t0 > 1000000000ull) *kept_at_start = open;
  }
  if (*kept_at_start < 0) *kept_at_start = open;
  free(done);
  free(p);
  free(map);
  return open ? -1 : (double)(po_Bench_Now() - t0) / 1e9;
}

static void measure(const char *what, uint16_t port, int idle, int sources, int samples) {
  int *fds = calloc((size_t)(idle ? idle : 1), sizeof *fds);
  if (!fds) die("memory", "out of memory");
  int opened = 0;
  for (int i = 0; i < idle; i++) {
    char src[32];
    snprintf(src, sizeof src, "127.0.%d.%d", 1 + (i % sources) / 250, 2 + (i % sources) % 250);
    fds[opened] = connect_from(src, port, true);
    opened += fds[opened] >= 0;
  }
  po_Bench_Stats st = {0};
  double worst = 0;
  int failed = 0;
  for (int k = 0; k < samples; k++) {
    double s = review_seconds(port);
    if (s < 0) {
      failed++;
      continue;
    }
    po_Bench_Stats_Add(&st, s * 1e9);
    if (s > worst) worst = s;
  }
  int kept = 0;
  double closed = opened ? all_closed_after(fds, opened, &kept) : 0;
  for (int i = 0; i < opened; i++) close(fds[i]);
  free(fds);
  char b1[32], b2[32], b3[32], c[32];
  if (!opened) snprintf(c, sizeof c, "-");
  else if (closed < 0) snprintf(c, sizeof c, "> 60 s");
  else snprintf(c, sizeof c, "%.1f s", closed);
  printf("%-44s %6d %6d %10s %10s %10s %6d %12s\n", what, opened, kept, st.count ? po_Bench_FormatNs(po_Bench_Stats_Best(&st), b1, sizeof b1) : "-",
         st.count ? po_Bench_FormatNs(po_Bench_Stats_Median(&st), b2, sizeof b2) : "-", st.count ? po_Bench_FormatNs(worst * 1e9, b3, sizeof b3) : "-",
         failed, c);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int samples = 20;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--samples") && i + 1 < argc) samples = atoi(argv[++i]);
    else die("usage", "bench_idle [--samples N]");
  }
  if (samples < 1 || samples > 64) samples = 20;
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 16384 ? 16384 : rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  gnutls_global_init();
  char dir[] = "/tmp/po-bench-idle-XXXXXX", cert[64], key[64];
  po_CtlStatus st;
  if (!mkdtemp(dir)) die("mkdtemp", strerror(errno));
  po_CertPair ca = {0}, serving = {0};
  const char *names[] = {"127.0.0.1"};
  if (!po_Cert_GenerateCA("bench-ca", 1, &ca, &st) || !po_Cert_GenerateServing(&ca, names, 1, 1, &serving, &st)) {
    die("certificates", st.message);
  }
  snprintf(cert, sizeof cert, "%s/tls.crt", dir);
  snprintf(key, sizeof key, "%s/tls.key", dir);
  FILE *f = fopen(cert, "w"), *g = fopen(key, "w");
  if (!f || !g) die("certificate files", strerror(errno));
  fputs(serving.cert_pem, f);
  fputs(serving.key_pem, g);
  fclose(f);
  fclose(g);
  po_CertPair_Free(&ca);
  po_CertPair_Free(&serving);
  po_WebhookOptions o = {.address = "127.0.0.1:0", .cert_file = cert, .key_file = key};
  po_WebhookServer *s = po_WebhookServer_Start(&o, &st);
  if (!s) die("start", st.message);
  uint16_t port = po_WebhookServer_Port(s);
  printf("webhook server, default limits; a review on a fresh TLS connection from another address, %d samples\n", samples);
  printf("%-44s %6s %6s %10s %10s %10s %6s %12s\n", "idle connections", "opened", "open@1s", "best", "median", "worst", "failed",
         "all closed");
  measure("none", port, 0, 1, samples);
  measure("1,500 from one address", port, 1500, 1, samples);
  measure("1,500 from 8 addresses", port, 1500, 8, samples);
  measure("3,000 from 16 addresses", port, 3000, 16, samples);
  measure("6,000 from 600 addresses (over the slots)", port, 6000, 600, samples);
  po_WebhookServer_Stop(s);
  unlink(cert);
  unlink(key);
  rmdir(dir);
  gnutls_global_deinit();
  return 0;
}
