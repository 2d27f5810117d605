/* Benchmark (not a test): items per second through Add / Get / Done with 2 worker threads.
 *   bench_workqueue [adds=500000] [distinct=adds]
 * One producer adds `adds` keys cycling over `distinct` names; two workers take and finish them.
 * With distinct = adds every add is one full add/get/done; with fewer names dedup folds adds
 * of a key still queued, so runs <= adds. Run once without and once with metrics. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "po/runtime/metrics.h"
#include "po/runtime/workqueue.h"

static atomic_long runs;

static void *worker(void *arg) {
  po_Workqueue *q = arg;
  const char *key;
  while (po_Workqueue_Get(q, &key) == kPo_Workqueue_Item) {
    atomic_fetch_add(&runs, 1);
    po_Workqueue_Done(q, key);
  }
  return NULL;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  long keys = argc > 1 ? atol(argv[1]) : 500000;
  long distinct = argc > 2 ? atol(argv[2]) : keys;
  if (keys < 1 || distinct < 1) {
    fprintf(stderr, "usage: bench_workqueue [adds>0] [distinct>0]\n");
    return 2;
  }
  for (int with_metrics = 0; with_metrics < 2; with_metrics++) {
    po_Metrics *m = with_metrics ? po_Metrics_New() : NULL;
    po_Workqueue *q = po_Workqueue_New(&(po_WorkqueueOptions){.name = "bench", .metrics = m});
    atomic_store(&runs, 0);
    char **names = malloc((size_t)distinct * sizeof *names);
    for (long i = 0; i < distinct; i++) {
      names[i] = malloc(64);
      snprintf(names[i], 64, "namespace-%ld/object-%ld", i % 10, i);
    }
    pthread_t t[2];
    double start = now_s();
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, q);
    for (long i = 0; i < keys; i++) po_Workqueue_Add(q, names[i % distinct]);
    /* Wait for the workers to empty the queue, then stop them. */
    while (po_Workqueue_Len(q) > 0) {
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
    po_Workqueue_ShutDownWithDrain(q, PO_FOREVER);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    double secs = now_s() - start;
    long r = atomic_load(&runs);
    printf("workqueue%s: %ld adds, %ld runs (add+get+done) in %.3f s: %.0f adds/s, %.0f runs/s\n",
           with_metrics ? " with metrics" : "", keys, r, secs, (double)keys / secs,
           (double)r / secs);
    for (long i = 0; i < distinct; i++) free(names[i]);
    free(names);
    po_Workqueue_Free(q);
    po_Metrics_Free(m);
  }
  return 0;
}
