/* Load generator for the webhook peer benchmark (tests/bench/bench_crpeer.sh): POSTs one
 * AdmissionReview, read from a file, to a webhook URL over TLS from N threads with keep-alive
 * connections for a fixed time, and prints throughput and latency percentiles. The same program
 * and the same bytes drive both servers, so only the server differs. HTTP/1.1 for both: our
 * server speaks only HTTP/1.1, and a client that negotiated HTTP/2 with one of them would
 * measure a different protocol.
 *   webhook_load URL CA REVIEW_FILE [seconds] [threads] */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const char *url, *ca, *body;
  double seconds;
  double *lat;
  size_t n, cap;
  long errors, denied;
} Load;

typedef struct {
  char buf[4096];
  size_t len;
} Reply;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t keep(char *p, size_t s, size_t n, void *u) {
  Reply *r = u;
  size_t k = s * n, room = sizeof r->buf - 1 - r->len;
  memcpy(r->buf + r->len, p, k < room ? k : room);
  r->len += k < room ? k : room;
  r->buf[r->len] = 0;
  return k;
}

static void *run(void *arg) {
  Load *c = arg;
  CURL *h = curl_easy_init();
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  Reply reply;
  curl_easy_setopt(h, CURLOPT_URL, c->url);
  curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &reply);
  double end = now() + c->seconds;
  while (now() < end) {
    reply.len = 0;
    reply.buf[0] = 0;
    double t0 = now();
    long code = 0;
    if (curl_easy_perform(h) != CURLE_OK || (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code), code != 200)) {
      c->errors++;
      continue;
    }
    double t = now() - t0;
    /* both servers must allow this review: a denial means they did not do the same work */
    if (!strstr(reply.buf, "\"allowed\":true")) c->denied++;
    if (c->n == c->cap) {
      c->cap = c->cap ? c->cap * 2 : 4096;
      double *grown = realloc(c->lat, c->cap * sizeof *c->lat);
      if (!grown) break;
      c->lat = grown;
    }
    c->lat[c->n++] = t;
  }
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = NULL;
  size_t cap = 0, n = 0, k;
  char tmp[4096];
  while ((k = fread(tmp, 1, sizeof tmp, f)) > 0) {
    if (n + k + 1 > cap) {
      cap = (n + k + 1) * 2;
      char *grown = realloc(s, cap);
      if (!grown) break;
      s = grown;
    }
    memcpy(s + n, tmp, k);
    n += k;
  }
  fclose(f);
  if (!s) return NULL;
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
  s[n] = 0;
  *len = n;
  return s;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: webhook_load URL CA REVIEW_FILE [seconds] [threads]\n");
    return 2;
  }
  size_t len = 0;
  char *body = slurp(argv[3], &len);
  if (!body || !len) {
    fprintf(stderr, "webhook_load: cannot read %s\n", argv[3]);
    return 2;
  }
  double seconds = argc > 4 ? atof(argv[4]) : 5;
  int threads = argc > 5 ? atoi(argv[5]) : 2;
  if (seconds <= 0 || threads < 1 || threads > 256) {
    fprintf(stderr, "webhook_load: seconds must be > 0 and threads 1..256\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  Load *ls = calloc((size_t)threads, sizeof *ls);
  pthread_t *ts = calloc((size_t)threads, sizeof *ts);
  double t0 = now();
  for (int i = 0; i < threads; i++) {
    ls[i] = (Load){.url = argv[1], .ca = argv[2], .body = body, .seconds = seconds};
    pthread_create(&ts[i], NULL, run, &ls[i]);
  }
  size_t total = 0;
  long errors = 0, denied = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(ts[i], NULL);
    total += ls[i].n;
    errors += ls[i].errors;
    denied += ls[i].denied;
  }
  double wall = now() - t0;
  double *all = malloc((total ? total : 1) * sizeof *all);
  size_t k = 0;
  for (int i = 0; i < threads; i++) {
    if (ls[i].n) memcpy(all + k, ls[i].lat, ls[i].n * sizeof *all);
    k += ls[i].n;
    free(ls[i].lat);
  }
  qsort(all, total, sizeof *all, cmp);
  printf("%s: %d threads, %.1f s, %zu-byte AdmissionReview, HTTP/1.1 keep-alive\n", argv[1], threads, wall, len);
  printf("  reviews/s  %.0f\n", total / wall);
  printf("  p50        %.3f ms\n", total ? all[total / 2] * 1e3 : 0);
  printf("  p99        %.3f ms\n", total ? all[(size_t)((double)total * 0.99)] * 1e3 : 0);
  printf("  max        %.3f ms\n", total ? all[total - 1] * 1e3 : 0);
  printf("  errors     %ld, denied %ld\n", errors, denied);
  free(all);
  free(ls);
  free(ts);
  free(body);
  curl_global_cleanup();
  return errors || denied || !total ? 1 : 0;
}
