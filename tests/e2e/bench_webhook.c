/* Webhook benchmark (not a test): AdmissionReviews per second and latency percentiles over TLS
 * with keep-alive connections, server and clients in one process on this machine.
 *   bench_webhook CERT KEY CA [seconds] [client-threads]
 * The review is a realistic PropertyOverride (4 patches: wrapper, Duration, enum, map value). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "po/webhook/server.h"
#include "reviews.h"

/* The review sent: tests/webhook/reviews.c's typical one (set once in main, read by the clients). */
static char *g_review;
static size_t g_review_len;

typedef struct {
  const char *url, *ca;
  double seconds;
  double *lat;
  size_t n, cap;
  long errors;
} Client;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t sink(char *p, size_t s, size_t n, void *u) { (void)p; (void)u; return s * n; }

static void *client(void *arg) {
  Client *c = arg;
  CURL *h = curl_easy_init();
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, c->url);
  curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, g_review);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
  double end = now() + c->seconds;
  while (now() < end) {
    double t0 = now();
    long code = 0;
    if (curl_easy_perform(h) != CURLE_OK || (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code), code != 200)) {
      c->errors++;
      continue;
    }
    if (c->n == c->cap) {
      c->cap = c->cap ? c->cap * 2 : 4096;
      c->lat = realloc(c->lat, c->cap * sizeof *c->lat);
    }
    c->lat[c->n++] = now() - t0;
  }
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_webhook CERT KEY CA [seconds] [client-threads]\n");
    return 2;
  }
  double seconds = argc > 4 ? atof(argv[4]) : 5;
  int threads = argc > 5 ? atoi(argv[5]) : 2;
  if (!(g_review = po_TestReview_Body(kReview_Typical, &g_review_len))) return 1;
  po_CtlStatus st;
  po_WebhookServer *s = po_WebhookServer_Start(&(po_WebhookOptions){.address = "127.0.0.1:0", .cert_file = argv[1], .key_file = argv[2]},
                                               &st);
  if (!s) {
    fprintf(stderr, "%s\n", st.message);
    return 1;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  char url[128];
  snprintf(url, sizeof url, "https://127.0.0.1:%u/validate", po_WebhookServer_Port(s));
  Client *cs = calloc((size_t)threads, sizeof *cs);
  pthread_t *ts = calloc((size_t)threads, sizeof *ts);
  double t0 = now();
  for (int i = 0; i < threads; i++) {
    cs[i] = (Client){.url = url, .ca = argv[3], .seconds = seconds};
    pthread_create(&ts[i], NULL, client, &cs[i]);
  }
  size_t total = 0;
  long errors = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(ts[i], NULL);
    total += cs[i].n;
    errors += cs[i].errors;
  }
  double wall = now() - t0;
  double *all = malloc((total ? total : 1) * sizeof *all);
  size_t k = 0;
  for (int i = 0; i < threads; i++) {
    memcpy(all + k, cs[i].lat, cs[i].n * sizeof *all);
    k += cs[i].n;
  }
  qsort(all, total, sizeof *all, cmp);
  printf("webhook over TLS, keep-alive, %d client threads, %.1f s, %zu-byte AdmissionReview (4 patches)\n", threads, wall,
         g_review_len);
  printf("  reviews/s  %.0f\n", total / wall);
  printf("  p50        %.3f ms\n", total ? all[total / 2] * 1e3 : 0);
  printf("  p99        %.3f ms\n", total ? all[(size_t)(total * 0.99)] * 1e3 : 0);
  printf("  max        %.3f ms\n", total ? all[total - 1] * 1e3 : 0);
  printf("  errors     %ld\n", errors);
  po_WebhookServer_Stop(s);
  free(g_review);
  return errors ? 1 : 0;
}
