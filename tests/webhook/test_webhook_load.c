/* Many concurrent maximal AdmissionReviews against the real webhook server on loopback, its
 * memory measured: the server runs in a child process (plain HTTP: the bodies and decoding are
 * what is measured, not TLS), N clients send the 2.9 MB review of tests/webhook/reviews.h at
 * once from up to 200 addresses (127.0.0.2...), each on its own connection, and wait for the
 * answer. The child reports its peak resident memory (VmHWM) when the clients are done.
 *
 * As a test (no arguments): 128 clients under the default budget (kPo_WebhookMemoryBudgetMiB),
 * 8 server threads (a node's CPUs), each 429 retried after its Retry-After as the API server's
 * client does, for 10 s; every attempt must be answered, 200 or 429, within 5 s, and the
 * server's peak must stay under the budget plus kSteadyMiB (what it holds without requests: the
 * engine's schemas, libraries, thread stacks; about 10 MiB). Before the budget (2 threads, one
 * burst): 479 MiB, median answer after 10 s, 92 of 128 closed without one. Without the trim after large requests (http.c):
 * each thread's malloc arena kept its high-water mark: 261 MiB with 8 threads (125 with 2).
 * 32 typical reviews sent at the same moment must all be answered 200 (not starved).
 * As a benchmark: test_webhook_load CLIENTS [BUDGET_MiB [THREADS [TYPICAL [RETRY]]]] prints the
 * figures (THREADS 0: the server's default, one per CPU; RETRY 1: a 429 is retried after its
 * Retry-After, at most 10 times within 10 s, as the API server's client-go does). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "po/webhook/server.h"
#include "reviews.h"

enum { kTestClients = 128, kTestSmall = 32, kTestThreads = 8, kSteadyMiB = 32, kAnswerSeconds = 5, kAddresses = 200 };

typedef struct {
  int index;
  uint16_t port;
  const char *body;
  size_t len;
  bool small;   /* a typical review, sent among the maximal ones */
  bool retry;   /* as the API server's client does: after a 429's Retry-After, within 10 s */
  int status;   /* the last answer; 0: closed without one */
  int attempts;
  double seconds;       /* from the first attempt to the last answer */
  double slowest;       /* the longest single attempt */
  bool retry_after;
} Client;

static pthread_barrier_t g_start;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One attempt: the status (0: closed without an answer). */
static int attempt(Client *c) {
  int status = 0;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct timeval tv = {.tv_sec = 30};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002u + (uint32_t)(c->index % kAddresses))};
  bind(fd, (struct sockaddr *)&src, sizeof src);
  struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(c->port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  char head[256];
  int hl = snprintf(head, sizeof head,
                    "POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n"
                    "Content-Length: %zu\r\nConnection: close\r\n\r\n", c->len);
  if (connect(fd, (struct sockaddr *)&dst, sizeof dst) == 0) {
    /* An early answer (429 before the body) may cut the upload: read the answer all the same. */
    bool sent = send(fd, head, (size_t)hl, MSG_NOSIGNAL) == hl;
    for (size_t off = 0; sent && off < c->len;) {
      ssize_t n = send(fd, c->body + off, c->len - off, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += (size_t)n;
    }
    char buf[4096];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof buf - 1 && (n = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0) got += (size_t)n;
    buf[got] = '\0';
    if (got > 12 && strncmp(buf, "HTTP/1.", 7) == 0) {
      status = atoi(buf + 9);
      if (status == 429) c->retry_after = strstr(buf, "\r\nRetry-After: 1\r\n") != NULL;
    }
  }
  close(fd);
  return status;
}

static void *client(void *arg) {
  Client *c = arg;
  pthread_barrier_wait(&g_start);
  double t0 = now();
  for (;;) {
    c->attempts++;
    double t1 = now();
    c->status = attempt(c);
    if (now() - t1 > c->slowest) c->slowest = now() - t1;
    /* client-go: up to 10 retries, each after Retry-After, within the webhook's timeout (10 s) */
    if (!c->retry || c->status != 429 || c->attempts > 10 || now() - t0 + 1 > 10) break;
    sleep(1);
  }
  c->seconds = now() - t0;
  return NULL;
}

/* The server process: serves until its stdin closes, then writes its VmHWM in kB there. */
static void serve(int to_parent, int from_parent, size_t budget_mib, unsigned threads) {
  po_CtlStatus st;
  po_WebhookServer *s = po_WebhookServer_Start(
      &(po_WebhookOptions){.address = "127.0.0.1:0", .threads = threads, .memory_budget = budget_mib << 20}, &st);
  uint16_t port = s ? po_WebhookServer_Port(s) : 0;
  if (write(to_parent, &port, sizeof port) != sizeof port || !s) _exit(1);
  char c;
  while (read(from_parent, &c, 1) > 0) {}
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  unsigned long kb = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (!strncmp(line, "VmHWM:", 6)) kb = strtoul(line + 6, NULL, 10);
  }
  if (f) fclose(f);
  if (write(to_parent, &kb, sizeof kb) != sizeof kb) _exit(1);
  po_WebhookServer_Stop(s);
  _exit(0);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  unsigned long peak_kb;
  int ok, busy, other, closed;
  int small_ok; /* typical reviews answered 200 */
  double median, p99, max;
  int late; /* an attempt answered after kAnswerSeconds, or the last not at all */
  int without_retry_after; /* 429s */
} Figures;

static bool run(int clients, int small, bool retry, size_t budget_mib, unsigned threads, Figures *fig) {
  int up[2], down[2];
  if (pipe(up) || pipe(down)) return false;
  pid_t pid = fork();
  if (pid == 0) {
    close(up[0]);
    close(down[1]);
    serve(up[1], down[0], budget_mib, threads);
  }
  close(up[1]);
  close(down[0]);
  uint16_t port = 0;
  if (read(up[0], &port, sizeof port) != sizeof port || !port) return false;
  size_t len, small_len;
  char *body = po_TestReview_Body(kReview_Maximal, &len), *small_body = po_TestReview_Body(kReview_Typical, &small_len);
  int all = clients + small;
  Client *cs = calloc((size_t)all, sizeof *cs);
  pthread_t *ts = calloc((size_t)all, sizeof *ts);
  pthread_barrier_init(&g_start, NULL, (unsigned)all);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 << 10);
  for (int i = 0; i < all; i++) {
    bool is_small = i >= clients;
    cs[i] = (Client){.index = i, .port = port, .body = is_small ? small_body : body, .len = is_small ? small_len : len,
                     .small = is_small, .retry = retry};
    pthread_create(&ts[i], &attr, client, &cs[i]);
  }
  for (int i = 0; i < all; i++) pthread_join(ts[i], NULL);
  pthread_barrier_destroy(&g_start);
  close(down[1]);
  unsigned long kb = 0;
  bool got = read(up[0], &kb, sizeof kb) == sizeof kb;
  close(up[0]);
  waitpid(pid, NULL, 0);
  *fig = (Figures){.peak_kb = kb};
  double *lat = calloc((size_t)clients, sizeof *lat);
  for (int i = clients; i < all; i++) fig->small_ok += cs[i].status == 200;
  for (int i = 0; i < clients; i++) {
    lat[i] = cs[i].seconds;
    if (cs[i].status == 200) fig->ok++;
    else if (cs[i].status == 429) fig->busy++, fig->without_retry_after += !cs[i].retry_after;
    else if (cs[i].status == 0) fig->closed++;
    else fig->other++;
    if (cs[i].status == 0 || cs[i].slowest > kAnswerSeconds) fig->late++;
  }
  qsort(lat, (size_t)clients, sizeof *lat, cmp);
  fig->median = lat[clients / 2];
  fig->p99 = lat[(clients * 99) / 100 < clients ? (clients * 99) / 100 : clients - 1];
  fig->max = lat[clients - 1];
  printf("%d maximal reviews at once%s, budget %zu MiB, %u threads: server peak RSS %.1f MiB; latency median %.2f s, "
         "p99 %.2f s, max %.2f s; %d answered 200, %d refused 429, %d other, %d closed without an answer",
         clients, retry ? " (429 retried after Retry-After as client-go does, within 10 s)" : "", budget_mib, threads,
         (double)kb / 1024, fig->median, fig->p99, fig->max, fig->ok, fig->busy, fig->other, fig->closed);
  if (small) printf("; %d typical reviews beside them: %d answered 200", small, fig->small_ok);
  printf("\n");
  free(lat);
  free(cs);
  free(ts);
  free(body);
  free(small_body);
  return got;
}

static void test_concurrent_maximal_reviews_bounded(void **state) {
  (void)state;
  if (po_TestSanitized()) skip();
  Figures f;
  assert_true(run(kTestClients, kTestSmall, true, kPo_WebhookMemoryBudgetMiB, kTestThreads, &f));
  unsigned long bound_kb = (unsigned long)(kPo_WebhookMemoryBudgetMiB + kSteadyMiB) << 10;
  if (f.peak_kb > bound_kb) fail_msg("server peak RSS %lu KiB, over the budget plus steady state (%lu KiB)", f.peak_kb, bound_kb);
  if (f.late) fail_msg("%d of %d requests not answered within %d s (or not at all)", f.late, kTestClients, kAnswerSeconds);
  assert_int_equal(f.other, 0);
  assert_int_equal(f.without_retry_after, 0);
  assert_true(f.ok >= 1); /* the budget admits a maximal review: they are refused only while others hold it */
  /* Small reviews are not starved behind the maximal ones: the last eighth of the budget is theirs. */
  assert_int_equal(f.small_ok, kTestSmall);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc >= 2) {
    Figures f;
    int clients = atoi(argv[1]);
    size_t budget = argc >= 3 ? strtoul(argv[2], NULL, 10) : kPo_WebhookMemoryBudgetMiB;
    unsigned threads = argc >= 4 ? (unsigned)atoi(argv[3]) : 0;
    int small = argc >= 5 ? atoi(argv[4]) : 0;
    bool retry = argc >= 6 && atoi(argv[5]) != 0;
    return clients > 0 && run(clients, small, retry, budget, threads, &f) ? 0 : 1;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_concurrent_maximal_reviews_bounded)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
