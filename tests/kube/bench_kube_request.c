/* The client's own CPU per request (numbers, not a test): T threads each PATCH their own ConfigMap
 * ("bench-<thread>" in namespace default, made by bench_request.sh) N times, answers discarded as
 * the controller's finalizer and status PATCHes discard theirs. Prints user and system CPU per
 * request (getrusage), requests a second, context switches per request and the HTTP versions the
 * answers came in. bench_request.sh runs it against the real kube-apiserver (docs/benchmarks.md).
 *   bench_kube_request THREADS REQUESTS_PER_THREAD [http2]   (KUBECONFIG names the cluster) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "po/kube/client.h"
#include "po/kube/config.h"

enum { kMaxThreads = 64 };

typedef struct {
  po_KubeClient *client;
  long id, n, failed;
} Worker;

static void *run(void *arg) {
  Worker *w = arg;
  char name[32];
  snprintf(name, sizeof name, "bench-%ld", w->id);
  po_KubeRef ref = {.version = "v1", .resource = "configmaps", .ns = "default", .name = name};
  po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
  for (long i = 0; i < w->n; i++) {
    char body[64];
    int len = snprintf(body, sizeof body, "{\"data\":{\"k\":\"v%ld\"}}", i);
    po_CtlStatus st;
    if (!po_KubeClient_Patch(w->client, &ref, &po, body, (size_t)len, NULL, &st)) {
      if (w->failed++ == 0) fprintf(stderr, "bench_kube_request: %s\n", st.message);
    }
  }
  return NULL;
}

static double secs(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

int main(int argc, char **argv) {
  long threads = argc > 2 ? strtol(argv[1], NULL, 10) : 0, per = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
  bool http2 = argc > 3 && strcmp(argv[3], "http2") == 0;
  if (threads < 1 || threads > kMaxThreads || per < 1) {
    fprintf(stderr, "usage: bench_kube_request THREADS(1-%d) REQUESTS_PER_THREAD [http2]\n", kMaxThreads);
    return 2;
  }
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st;
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !po_KubeConfig_LoadFiles(kc, NULL, &cfg, &st)) {
    fprintf(stderr, "bench_kube_request: no kubeconfig in KUBECONFIG\n");
    return 1;
  }
  po_KubeClientOptions o = {.qps = -1, .http2 = http2};
  po_KubeClient *c = NULL;
  if (!po_KubeClient_New(cfg, &o, &c, &st)) {
    fprintf(stderr, "bench_kube_request: %s\n", st.message);
    return 1;
  }
  Worker w[kMaxThreads];
  pthread_t t[kMaxThreads];
  struct rusage r0, r1;
  struct timespec t0, t1;
  getrusage(RUSAGE_SELF, &r0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < threads; i++) {
    w[i] = (Worker){c, i, per, 0};
    pthread_create(&t[i], NULL, run, &w[i]);
  }
  long failed = 0;
  for (long i = 0; i < threads; i++) {
    pthread_join(t[i], NULL);
    failed += w[i].failed;
  }
  getrusage(RUSAGE_SELF, &r1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double n = (double)(threads * per), wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  double user = secs(r1.ru_utime) - secs(r0.ru_utime), sys = secs(r1.ru_stime) - secs(r0.ru_stime);
  uint64_t v[2];
  po_KubeClient_HttpVersions(c, v);
  printf("%s, %ld thread%s x %ld PATCHes: user %.1f us + system %.1f us = %.1f us of CPU a request; %.0f a second; "
         "%.2f voluntary context switches a request; answers HTTP/1.1 %llu, HTTP/2 %llu; %ld failed\n",
         http2 ? "HTTP/2" : "HTTP/1.1", threads, threads == 1 ? "" : "s", per, user * 1e6 / n, sys * 1e6 / n,
         (user + sys) * 1e6 / n, n / wall, (double)(r1.ru_nvcsw - r0.ru_nvcsw) / n, (unsigned long long)v[0],
         (unsigned long long)v[1], failed);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
  return failed ? 1 : 0;
}
