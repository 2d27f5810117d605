/* Informer benchmark against po-apiserver (reported, never a timed test):
 *   bench_informer PO_APISERVER [objects=10000]
 * 1. initial sync of N ConfigMaps (list in pages of 500 + cache fill),
 * 2. watch events per second through the informer (writers updating, the informer's handlers
 *    counting), and the parser alone on an in-memory stream,
 * 3. bytes of memory per cached object (the cache's own accounting, and RSS growth). */
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "po/kube/client.h"
#include "po/kube/informer.h"
#include "po/kube/watch_parser.h"

static po_KubeClient *g_client;
static int g_n;
static atomic_int g_updates_seen;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kb = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
  fclose(f);
  return kb;
}

static json_object *configmap(int i, int gen) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"bench-%05d\",\"namespace\":"
           "\"bench\",\"labels\":{\"app\":\"bench\",\"shard\":\"s%d\"},\"annotations\":{\"example.com/owner\":"
           "\"team-%d\"}},\"data\":{\"gen\":\"%d\",\"config\":\"key=value\\nother=thing\\n\"}}",
           i, i % 16, i % 7, gen);
  return json_tokener_parse(text);
}

typedef struct {
  int from, to, gen;
} Range;

static void *create_range(void *arg) {
  Range *r = arg;
  po_KubeRef cm = {"", "v1", "configmaps", "bench", NULL, NULL};
  for (int i = r->from; i < r->to; i++) {
    json_object *o = configmap(i, 0);
    po_CtlStatus st;
    if (!po_KubeClient_Create(g_client, &cm, o, NULL, &st) && st.code != kPo_Ctl_AlreadyExists)
      fprintf(stderr, "create %d: %s\n", i, st.message);
    json_object_put(o);
  }
  return NULL;
}

static void *patch_range(void *arg) {
  Range *r = arg;
  for (int i = r->from; i < r->to; i++) {
    char name[32], body[128];
    snprintf(name, sizeof name, "bench-%05d", i % g_n);
    snprintf(body, sizeof body, "{\"data\":{\"gen\":\"%d-%d\"}}", r->gen, i);
    po_KubeRef cm = {"", "v1", "configmaps", "bench", name, NULL};
    po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
    po_CtlStatus st;
    if (!po_KubeClient_Patch(g_client, &cm, &po, body, strlen(body), NULL, &st))
      fprintf(stderr, "patch %s: %s\n", name, st.message);
  }
  return NULL;
}

static void run_threads(void *(*fn)(void *), int total, int gen) {
  enum { kThreads = 8 };
  pthread_t t[kThreads];
  Range r[kThreads];
  for (int i = 0; i < kThreads; i++) {
    r[i] = (Range){total * i / kThreads, total * (i + 1) / kThreads, gen};
    pthread_create(&t[i], NULL, fn, &r[i]);
  }
  for (int i = 0; i < kThreads; i++) pthread_join(t[i], NULL);
}

static void on_update(void *ctx, json_object *old, json_object *o) { atomic_fetch_add(&g_updates_seen, 1); }

static bool count_event(void *ctx, po_KubeWatchEventType t, json_object *o) {
  (*(long *)ctx)++;
  return true;
}

typedef struct {
  long *n;
  long want;
} ReplayCtx;

static bool replay_event(void *ctx, po_KubeWatchEventType t, json_object *o) {
  ReplayCtx *r = ctx;
  return ++*r->n < r->want;
}

static void bench_parser(void) {
  /* 20,000 MODIFIED events of ~500 bytes, fed in 16 KiB chunks (curl's usual size). */
  size_t cap = 20000 * 700, len = 0;
  char *buf = malloc(cap);
  for (int i = 0; i < 20000; i++) {
    json_object *o = configmap(i, 1);
    len += (size_t)snprintf(buf + len, cap - len, "{\"type\":\"MODIFIED\",\"object\":%s}\n",
                            json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
  }
  po_WatchParser *p = po_WatchParser_New(0);
  long events = 0;
  po_CtlStatus st;
  double t0 = now_s();
  for (size_t at = 0; at < len; at += 16384)
    po_WatchParser_Feed(p, buf + at, len - at < 16384 ? len - at : 16384, count_event, &events, &st);
  double dt = now_s() - t0;
  po_WatchParser_Free(p);
  printf("parser alone: %ld events (%.1f MB) in %.3f s = %.0f events/s, %.1f MB/s\n", events, (double)len / 1e6, dt,
         (double)events / dt, (double)len / 1e6 / dt);
  free(buf);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PO_APISERVER [objects]\n", argv[0]);
    return 2;
  }
  g_n = argc > 2 ? atoi(argv[2]) : 10000;
  po_TestServer srv;
  const char *extra[] = {"--compaction-window", "1000000", NULL};
  if (!po_TestServer_Start(&srv, argv[1], extra, false)) return 1;
  po_KubeConfig *cfg;
  po_CtlStatus st;
  if (!po_KubeConfig_LoadFiles(srv.kubeconfig, NULL, &cfg, &st)) {
    fprintf(stderr, "%s\n", st.message);
    return 1;
  }
  po_KubeClientOptions co = {0};
  co.qps = -1;
  po_KubeClient_New(cfg, &co, &g_client, &st);
  json_object *ns = json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bench\"}}");
  po_KubeRef nsr = {"", "v1", "namespaces", NULL, NULL, NULL};
  po_KubeClient_Create(g_client, &nsr, ns, NULL, &st);
  json_object_put(ns);

  double t0 = now_s();
  run_threads(create_range, g_n, 0);
  double dt = now_s() - t0;
  printf("setup: created %d ConfigMaps with 8 threads over TLS in %.2f s (%.0f creates/s)\n", g_n, dt, g_n / dt);

  long rss0 = rss_kb();
  po_InformerOptions io = {0};
  io.ref = (po_KubeRef){"", "v1", "configmaps", "bench", NULL, NULL};
  po_InformerHandlers h = {.on_update = on_update}; /* it counts updates, not old objects */
  po_Informer *inf;
  po_Informer_New(g_client, &io, &h, &inf, &st);
  t0 = now_s();
  po_Informer_Start(inf, &st);
  if (!po_Informer_WaitForSync(inf, 600000)) {
    fprintf(stderr, "no sync\n");
    return 1;
  }
  dt = now_s() - t0;
  size_t count = po_Informer_Count(inf), bytes = po_Informer_CacheBytes(inf);
  long rss1 = rss_kb();
  printf("initial sync: %zu objects in %.3f s (%.0f objects/s; pages of 500)\n", count, dt, (double)count / dt);
  printf("memory: cache holds %zu bytes = %.0f bytes/object (compact JSON + key + rv + entry); RSS grew %ld kB = "
         "%.0f bytes/object\n",
         bytes, (double)bytes / (double)count, rss1 - rss0, (double)(rss1 - rss0) * 1024.0 / (double)count);

  char rv_before[128];
  po_Informer_LastResourceVersion(inf, rv_before, sizeof rv_before);
  int updates = g_n;
  t0 = now_s();
  run_threads(patch_range, updates, 1);
  double t_written = now_s() - t0;
  while (atomic_load(&g_updates_seen) < updates && now_s() - t0 < 300) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  dt = now_s() - t0;
  printf("watch: %d updates written in %.2f s by 8 threads; the informer delivered %d update events in %.2f s "
         "(%.0f events/s end to end, bound by the server's write rate)\n",
         updates, t_written, atomic_load(&g_updates_seen), dt, atomic_load(&g_updates_seen) / dt);
  /* The same events replayed from the server's history as fast as it sends them: the client's
   * watch path (TLS, curl, parser) without the writers' pace. */
  long replayed = 0;
  ReplayCtx rc = {&replayed, updates};
  po_KubeRef cm = {"", "v1", "configmaps", "bench", NULL, NULL};
  po_KubeWatchOptions wo = {.resource_version = rv_before, .timeout_seconds = 60};
  t0 = now_s();
  po_KubeClient_Watch(g_client, &cm, &wo, replay_event, &rc, NULL, &st);
  dt = now_s() - t0;
  printf("watch replay: %ld events from resourceVersion %s in %.3f s = %.0f events/s (client watch path)\n", replayed,
         rv_before, dt, (double)replayed / dt);
  bench_parser();
  po_Informer_Free(inf);
  po_KubeClient_Free(g_client);
  po_KubeConfig_Free(cfg);
  po_TestServer_Cleanup(&srv);
  return 0;
}
