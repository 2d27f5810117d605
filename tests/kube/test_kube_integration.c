/* Integration tests of controller/kube against po-apiserver (label integration).
 *   test_kube_integration APISERVER rest|churn|restart|failover
 * Each scenario starts its own server on a loopback port with TLS and a bearer token. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "po/kube/client.h"
#include "po/kube/config.h"
#include "po/kube/informer.h"
#include "po/kube/lease.h"
#include "client_internal.h" /* po_KubeClient_HeaderBuilds_ */

#ifdef PO_COUNT_ALLOCS
/* ---- every allocation of this process counted ---------------------------------------------
 * malloc, calloc and realloc are interposed (the informer's, the client's, curl's and json-c's
 * alike): the cold list's work per object is counted, not timed. dlsym may itself calloc before
 * the real calloc is known: that comes from a static buffer, never freed. */
static atomic_ulong g_allocs;
static void *(*g_real_malloc)(size_t);
static void *(*g_real_calloc)(size_t, size_t);
static void *(*g_real_realloc)(void *, size_t);
static void (*g_real_free)(void *);
static _Alignas(16) char g_boot[8192];
static size_t g_boot_used;
static bool g_resolving;
/* One thread's allocations failed on purpose (test_informer_get_unreadable): the Nth while armed. */
static _Thread_local long t_fail_at = -1, t_count;
static bool t_fails(void) { return t_fail_at > 0 && ++t_count == t_fail_at; }

static void resolve_allocator(void) {
  g_resolving = true;
  g_real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  g_real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  g_real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  g_real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  g_resolving = false;
  if (!g_real_malloc || !g_real_calloc || !g_real_realloc || !g_real_free) abort();
}

void *malloc(size_t n) {
  if (t_fails()) return NULL;
  if (!g_real_malloc) resolve_allocator();
  atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
  return g_real_malloc(n);
}

void *calloc(size_t a, size_t b) {
  if (!g_real_calloc && g_resolving) {
    size_t n = (a * b + 15) & ~(size_t)15;
    if (n > sizeof g_boot - g_boot_used) return NULL;
    g_boot_used += n;
    return g_boot + g_boot_used - n; /* static: already zero */
  }
  if (t_fails()) return NULL;
  if (!g_real_calloc) resolve_allocator();
  atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
  return g_real_calloc(a, b);
}

void *realloc(void *p, size_t n) {
  if (t_fails()) return NULL;
  if (!g_real_realloc) resolve_allocator();
  atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
  return g_real_realloc(p, n);
}

void free(void *p) {
  if ((char *)p >= g_boot && (char *)p < g_boot + sizeof g_boot) return;
  if (!g_real_free) resolve_allocator();
  g_real_free(p);
}
#endif

static const char *g_bin;
static po_TestServer g_srv;
static po_KubeConfig *g_cfg;
static po_KubeClient *g_client;

static const po_KubeRef kCm = {"", "v1", "configmaps", NULL, NULL, NULL};
static const po_KubeRef kNs = {"", "v1", "namespaces", NULL, NULL, NULL};

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static po_KubeClient *new_client(double qps) {
  po_KubeClientOptions o = {0};
  o.qps = qps;
  o.burst = 1000;
  po_KubeClient *c;
  po_CtlStatus st;
  if (!po_KubeClient_New(g_cfg, &o, &c, &st)) {
    print_error("client: %s\n", st.message);
    fail();
  }
  return c;
}

static int start_server(const char *const *extra, bool state) {
  if (!po_TestServer_Start(&g_srv, g_bin, extra, state)) return -1;
  po_CtlStatus st;
  if (!po_KubeConfig_LoadFiles(g_srv.kubeconfig, NULL, &g_cfg, &st)) {
    fprintf(stderr, "kubeconfig: %s\n", st.message);
    return -1;
  }
  g_client = new_client(-1);
  return 0;
}

static int stop_server(void **state) {
  po_KubeClient_Free(g_client);
  po_KubeConfig_Free(g_cfg);
  g_client = NULL;
  g_cfg = NULL;
  po_TestServer_Cleanup(&g_srv);
  return 0;
}

static json_object *configmap(const char *ns, const char *name, const char *label, const char *value) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
           "\"labels\":{\"app\":\"%s\"}},\"data\":{\"v\":\"%s\"}}",
           name, ns, label, value);
  return json_tokener_parse(text);
}

static const char *meta(json_object *o, const char *k) {
  json_object *m, *v;
  if (!json_object_object_get_ex(o, "metadata", &m) || !json_object_object_get_ex(m, k, &v)) return NULL;
  return json_object_get_string(v);
}

static void make_ns(po_KubeClient *c, const char *name) {
  char text[256];
  snprintf(text, sizeof text, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", name);
  json_object *o = json_tokener_parse(text);
  po_CtlStatus st;
  bool ok = po_KubeClient_Create(c, &kNs, o, NULL, &st) || st.code == kPo_Ctl_AlreadyExists;
  if (!ok) print_error("namespace %s: %s\n", name, st.message);
  assert_true(ok);
  json_object_put(o);
}

/* ---- rest ---------------------------------------------------------------------------------- */

static atomic_int g_observed;
static void observer(void *ctx, const char *method, long code, double secs) { atomic_fetch_add(&g_observed, 1); }

static void test_rest_verbs(void **state) {
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  json_object *o = NULL, *got = NULL;
  po_KubeRef ns = {"", "v1", "namespaces", NULL, "default", NULL};
  assert_true(po_KubeClient_Get(c, &ns, &o, &st));
  assert_string_equal(meta(o, "name"), "default");
  json_object_put(o);

  po_KubeRef cm = kCm;
  cm.ns = "default";
  o = configmap("default", "cm1", "rest", "1");
  assert_true(po_KubeClient_Create(c, &cm, o, &got, &st));
  char uid[64], rv1[32];
  snprintf(uid, sizeof uid, "%s", meta(got, "uid"));
  snprintf(rv1, sizeof rv1, "%s", meta(got, "resourceVersion"));
  json_object_put(got);
  assert_false(po_KubeClient_Create(c, &cm, o, NULL, &st));
  assert_int_equal(st.code, kPo_Ctl_AlreadyExists);
  assert_int_equal(st.http_status, 409);
  assert_string_equal(st.reason, "AlreadyExists");
  json_object_put(o);

  /* Update with the current resourceVersion, then again with the stale one: Conflict. */
  cm.name = "cm1";
  assert_true(po_KubeClient_Get(c, &cm, &o, &st));
  json_object *data;
  json_object_object_get_ex(o, "data", &data);
  json_object_object_add(data, "v", json_object_new_string("2"));
  assert_true(po_KubeClient_Update(c, &cm, o, &got, &st));
  assert_string_not_equal(meta(got, "resourceVersion"), rv1);
  json_object_put(got);
  assert_false(po_KubeClient_Update(c, &cm, o, NULL, &st));
  assert_int_equal(st.code, kPo_Ctl_Conflict);
  assert_non_null(strstr(st.message, "the object has been modified"));
  json_object_put(o);

  /* Merge patch and server-side apply. */
  po_KubePatchOptions mp = {.type = kPo_KubePatch_Merge};
  const char *patch = "{\"data\":{\"m\":\"merged\"}}";
  assert_true(po_KubeClient_Patch(c, &cm, &mp, patch, strlen(patch), &got, &st));
  json_object_object_get_ex(got, "data", &data);
  json_object *v;
  assert_true(json_object_object_get_ex(data, "m", &v));
  assert_string_equal(json_object_get_string(v), "merged");
  json_object_put(got);
  po_KubePatchOptions ap = {.type = kPo_KubePatch_Apply, .field_manager = "po-test", .force = true};
  const char *apply = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm1\",\"namespace\":\"default\"},"
                      "\"data\":{\"applied\":\"yes\"}}";
  assert_true(po_KubeClient_Patch(c, &cm, &ap, apply, strlen(apply), &got, &st));
  json_object_object_get_ex(got, "data", &data);
  assert_true(json_object_object_get_ex(data, "applied", &v));
  json_object_put(got);
  po_KubePatchOptions bad = {.type = kPo_KubePatch_Apply};
  assert_false(po_KubeClient_Patch(c, &cm, &bad, apply, strlen(apply), NULL, &st));
  assert_int_equal(st.code, kPo_Ctl_Usage);
  /* PatchVersion: the answer's uid, resourceVersion and generation, read without a parse, are
   * the object's; a patch that fails says none. */
  po_KubeWritten w;
  patch = "{\"data\":{\"m\":\"versioned\"}}";
  assert_true(po_KubeClient_PatchVersion(c, &cm, &mp, patch, strlen(patch), &w, &st));
  assert_true(po_KubeClient_Get(c, &cm, &got, &st));
  assert_string_equal(w.uid, meta(got, "uid"));
  assert_string_equal(w.rv, meta(got, "resourceVersion"));
  const char *gen = meta(got, "generation");
  assert_int_equal(w.generation, gen ? atoll(gen) : 0);
  json_object_put(got);
  /* asked whether the answer lists a finalizer: by its metadata.finalizers, added then taken out */
  po_KubePatchOptions fin = {.type = kPo_KubePatch_Merge, .answer_finalizer = "example.com/po-test"};
  patch = "{\"metadata\":{\"finalizers\":[\"example.com/other\",\"example.com/po-test\"]}}";
  assert_true(po_KubeClient_PatchVersion(c, &cm, &fin, patch, strlen(patch), &w, &st));
  assert_true(w.has_finalizer);
  patch = "{\"metadata\":{\"finalizers\":[\"example.com/other\"]}}";
  assert_true(po_KubeClient_PatchVersion(c, &cm, &fin, patch, strlen(patch), &w, &st));
  assert_false(w.has_finalizer);
  patch = "{\"metadata\":{\"finalizers\":null}}";
  assert_true(po_KubeClient_PatchVersion(c, &cm, &fin, patch, strlen(patch), &w, &st));
  assert_false(w.has_finalizer);
  po_KubeRef gone = cm;
  gone.name = "no-such-configmap";
  assert_false(po_KubeClient_PatchVersion(c, &gone, &mp, patch, strlen(patch), &w, &st));
  assert_int_equal(st.code, kPo_Ctl_NotFound);
  assert_string_equal(w.rv, "");
  assert_int_equal(w.generation, 0);
  assert_false(po_KubeClient_PatchVersion(c, &cm, &bad, apply, strlen(apply), &w, &st));
  assert_int_equal(st.code, kPo_Ctl_Usage);

  /* Delete with a wrong uid precondition: Conflict; with the right one: gone. */
  po_KubeDeleteOptions d = {"Background", "00000000-0000-0000-0000-000000000000", NULL, false, 0};
  assert_false(po_KubeClient_Delete(c, &cm, &d, NULL, &st));
  assert_int_equal(st.code, kPo_Ctl_Conflict);
  d.precondition_uid = uid;
  assert_true(po_KubeClient_Delete(c, &cm, &d, NULL, &st));
  assert_false(po_KubeClient_Get(c, &cm, &o, &st));
  assert_int_equal(st.code, kPo_Ctl_NotFound);
  assert_non_null(strstr(st.message, "cm1"));

  /* Cluster-scoped create and delete. */
  make_ns(c, "rest-tmp");
  po_KubeRef tmp = {"", "v1", "namespaces", NULL, "rest-tmp", NULL};
  assert_true(po_KubeClient_Delete(c, &tmp, NULL, NULL, &st));
}

static void test_rest_list_pagination_selectors(void **state) {
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  make_ns(c, "pages");
  po_KubeRef cm = kCm;
  cm.ns = "pages";
  for (int i = 0; i < 25; i++) {
    char name[32];
    snprintf(name, sizeof name, "p%02d", i);
    json_object *o = configmap("pages", name, i % 2 ? "odd" : "even", "x");
    assert_true(po_KubeClient_Create(c, &cm, o, NULL, &st));
    json_object_put(o);
  }
  po_KubeListOptions lo = {NULL, NULL, 7, NULL, NULL, NULL};
  json_object *l, *items;
  assert_true(po_KubeClient_List(c, &cm, &lo, &l, &st));
  json_object_object_get_ex(l, "items", &items);
  assert_int_equal(json_object_array_length(items), 7);
  assert_non_null(meta(l, "continue"));
  json_object_put(l);
  assert_true(po_KubeClient_ListAll(c, &cm, &lo, &l, &st));
  json_object_object_get_ex(l, "items", &items);
  assert_int_equal(json_object_array_length(items), 25);
  assert_non_null(meta(l, "resourceVersion"));
  assert_null(meta(l, "continue"));
  json_object_put(l);
  po_KubeListOptions sel = {"app in (odd)", NULL, 5, NULL, NULL, NULL};
  assert_true(po_KubeClient_ListAll(c, &cm, &sel, &l, &st));
  json_object_object_get_ex(l, "items", &items);
  assert_int_equal(json_object_array_length(items), 12);
  json_object_put(l);
  po_KubeListOptions fs = {NULL, "metadata.name=p03", 0, NULL, NULL, NULL};
  assert_true(po_KubeClient_List(c, &cm, &fs, &l, &st));
  json_object_object_get_ex(l, "items", &items);
  assert_int_equal(json_object_array_length(items), 1);
  json_object_put(l);
  /* All namespaces. */
  po_KubeRef all = kCm;
  po_KubeListOptions allsel = {"app=even", NULL, 0, NULL, NULL, NULL};
  assert_true(po_KubeClient_List(c, &all, &allsel, &l, &st));
  json_object_object_get_ex(l, "items", &items);
  assert_int_equal(json_object_array_length(items), 13);
  json_object_put(l);
}

static void test_rest_status_subresource(void **state) {
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  po_KubeRef w = {"example.com", "v1", "widgets", "default", NULL, NULL};
  json_object *o = json_tokener_parse(
      "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w1\"},\"spec\":{\"size\":3}}");
  json_object *got;
  assert_true(po_KubeClient_Create(c, &w, o, &got, &st));
  json_object_put(o);
  json_object_object_add(got, "status", json_tokener_parse("{\"observedGeneration\":7}"));
  w.name = "w1";
  w.subresource = "status";
  json_object *after;
  assert_true(po_KubeClient_Update(c, &w, got, &after, &st));
  json_object *s, *p;
  assert_true(json_object_object_get_ex(after, "status", &s) && json_object_object_get_ex(s, "observedGeneration", &p));
  assert_int_equal(json_object_get_int(p), 7);
  json_object_put(got);
  json_object_put(after);
  /* Invalid spec: 422 Invalid with the server's message. */
  w.name = NULL;
  w.subresource = NULL;
  o = json_tokener_parse(
      "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w2\"},\"spec\":{\"size\":99}}");
  assert_false(po_KubeClient_Create(c, &w, o, NULL, &st));
  assert_int_equal(st.code, kPo_Ctl_Invalid);
  json_object_put(o);
}

static void test_rest_retries_and_auth(void **state) {
  po_CtlStatus st;
  po_KubeClientOptions oo = {0};
  oo.qps = -1;
  oo.observer = observer;
  po_KubeClient *c;
  assert_true(po_KubeClient_New(g_cfg, &oo, &c, &st));
  po_KubeRef ns = {"", "v1", "namespaces", NULL, "default", NULL};
  json_object *o;
  /* 429 with Retry-After: 0, twice: a GET gets through on the third try. */
  atomic_store(&g_observed, 0);
  assert_true(po_TestServer_Faults(&g_srv, "{\"throttle\":2,\"retryAfterSeconds\":0}"));
  assert_true(po_KubeClient_Get(c, &ns, &o, &st));
  json_object_put(o);
  assert_int_equal(atomic_load(&g_observed), 3);
  /* 503 twice: GET retried. */
  atomic_store(&g_observed, 0);
  assert_true(po_TestServer_Faults(&g_srv, "{\"serverErrors\":2,\"serverErrorCode\":503}"));
  assert_true(po_KubeClient_Get(c, &ns, &o, &st));
  json_object_put(o);
  assert_int_equal(atomic_load(&g_observed), 3);
  /* 500 once on a POST: not retried (it may have been applied). */
  assert_true(po_TestServer_Faults(&g_srv, "{\"serverErrors\":1,\"serverErrorCode\":500}"));
  po_KubeRef cm = kCm;
  cm.ns = "default";
  json_object *obj = configmap("default", "retry-post", "r", "1");
  atomic_store(&g_observed, 0);
  assert_false(po_KubeClient_Create(c, &cm, obj, NULL, &st));
  assert_int_equal(st.code, kPo_Ctl_Internal);
  assert_int_equal(atomic_load(&g_observed), 1);
  /* 429 on a POST is retried: the server refused it before doing anything. */
  assert_true(po_TestServer_Faults(&g_srv, "{\"throttle\":1,\"retryAfterSeconds\":0}"));
  assert_true(po_KubeClient_Create(c, &cm, obj, NULL, &st));
  json_object_put(obj);
  po_KubeClient_Free(c);

  /* A wrong token: 401 Unauthorized. */
  char text[4096];
  snprintf(text, sizeof text,
           "current-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\n"
           "clusters:\n- name: k\n  cluster: {server: '%s', insecure-skip-tls-verify: true}\n"
           "users:\n- name: u\n  user: {token: wrong}\n",
           g_srv.url);
  po_KubeConfig *bad;
  assert_true(po_KubeConfig_ParseYaml(text, strlen(text), "bad", NULL, &bad, &st));
  assert_true(po_KubeClient_New(bad, NULL, &c, &st));
  assert_false(po_KubeClient_Get(c, &ns, &o, &st));
  assert_int_equal(st.code, kPo_Ctl_Unauthorized);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(bad);
  /* Nobody listening: a transport error, after the retries. */
  snprintf(text, sizeof text,
           "current-context: x\ncontexts:\n- name: x\n  context: {cluster: k}\n"
           "clusters:\n- name: k\n  cluster: {server: 'http://127.0.0.1:1'}\n");
  assert_true(po_KubeConfig_ParseYaml(text, strlen(text), "closed", NULL, &bad, &st));
  po_KubeClientOptions quick = {0};
  quick.max_retries = 1;
  assert_true(po_KubeClient_New(bad, &quick, &c, &st));
  assert_false(po_KubeClient_Get(c, &ns, &o, &st));
  assert_int_equal(st.code, kPo_Ctl_Transport);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(bad);
}

/* The client's waits go through its po_Clock: with a fake one, Retry-After and the rate
 * limiter's delays can be checked exactly, without sleeping. */
typedef struct {
  int64_t now;
  int64_t sleeps[64];
  int n;
} RecClock;
static int64_t rc_now(void *c) { return ((RecClock *)c)->now; }
static void rc_sleep(void *c, int64_t ns) {
  RecClock *r = c;
  if (r->n < 64) r->sleeps[r->n++] = ns;
  r->now += ns;
}

static void test_rest_fake_clock_delays(void **state) {
  RecClock rc = {1000000000000LL, {0}, 0};
  po_Clock clk = {rc_now, rc_now, rc_sleep, &rc};
  po_KubeClientOptions o = {0};
  o.qps = 10;
  o.burst = 2;
  o.clock = &clk;
  po_KubeClient *c;
  po_CtlStatus st;
  assert_true(po_KubeClient_New(g_cfg, &o, &c, &st));
  po_KubeRef ns = {"", "v1", "namespaces", NULL, "default", NULL};
  json_object *obj;
  /* Burst 2, then one token per 100 ms of (fake) time. */
  for (int i = 0; i < 4; i++) {
    assert_true(po_KubeClient_Get(c, &ns, &obj, &st));
    json_object_put(obj);
  }
  assert_int_equal(rc.n, 2);
  assert_int_equal(rc.sleeps[0], 100000000);
  assert_int_equal(rc.sleeps[1], 100000000);
  /* 429 with Retry-After: 2 twice: two 2 s waits (plus the limiter's). */
  rc.n = 0;
  rc.now += 10000000000LL; /* refill */
  assert_true(po_TestServer_Faults(&g_srv, "{\"throttle\":2,\"retryAfterSeconds\":2}"));
  assert_true(po_KubeClient_Get(c, &ns, &obj, &st));
  json_object_put(obj);
  int64_t waited = 0;
  int twos = 0;
  for (int i = 0; i < rc.n; i++) {
    waited += rc.sleeps[i];
    twos += rc.sleeps[i] == 2000000000LL;
  }
  assert_int_equal(twos, 2);
  assert_true(waited >= 4000000000LL && waited < 4300000000LL);
  /* 503 without Retry-After: our backoff, 0.1 s then 0.2 s (each +0..50 % jitter). */
  rc.n = 0;
  rc.now += 10000000000LL;
  assert_true(po_TestServer_Faults(&g_srv, "{\"serverErrors\":2,\"serverErrorCode\":503,\"retryAfterSeconds\":0}"));
  assert_true(po_KubeClient_Get(c, &ns, &obj, &st));
  json_object_put(obj);
  int backoffs = 0;
  for (int i = 0; i < rc.n; i++) {
    if (rc.sleeps[i] >= 100000000 && rc.sleeps[i] <= 150000000 && backoffs == 0) backoffs = 1;
    else if (rc.sleeps[i] >= 200000000 && rc.sleeps[i] <= 300000000 && backoffs == 1) backoffs = 2;
  }
  assert_int_equal(backoffs, 2);
  po_KubeClient_Free(c);
}

typedef struct {
  int id;
  int ok;
} Worker;

static void *worker(void *arg) {
  Worker *w = arg;
  po_KubeRef cm = kCm;
  cm.ns = "threads";
  for (int i = 0; i < 40; i++) {
    char name[32];
    snprintf(name, sizeof name, "t%d-%d", w->id, i);
    json_object *o = configmap("threads", name, "t", "v");
    po_CtlStatus st;
    json_object *got = NULL;
    if (po_KubeClient_Create(g_client, &cm, o, NULL, &st)) {
      po_KubeRef r = cm;
      r.name = name;
      if (po_KubeClient_Get(g_client, &r, &got, &st)) w->ok++;
      json_object_put(got);
    }
    json_object_put(o);
  }
  return NULL;
}

/* Eight threads of requests reuse a handful of connections: one each at most, and a few for
 * the ones a thread's burst overlaps (with curl's default idle limit of 4 for the shared cache,
 * nearly every request opened a new TLS connection). */
static void test_rest_threads(void **state) {
  make_ns(g_client, "threads");
  uint64_t connections = po_KubeClient_Connections(g_client);
  pthread_t t[8];
  Worker w[8];
  for (int i = 0; i < 8; i++) {
    w[i] = (Worker){i, 0};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].ok, 40);
  }
  connections = po_KubeClient_Connections(g_client) - connections;
  printf("8 threads x 40 requests: %llu new connections\n", (unsigned long long)connections);
  assert_true(connections <= 16);
}

/* One handle, kept set up between requests: each verb after another (a GET after a PATCH with a
 * body, a POST after a GET, a DELETE after a POST) does what it says, and the header lists are
 * not built again for every request (once per bearer token). */
/* po_InformerOptions.transform (issue 21 item 2, F9): the cache keeps what the transform
 * returns, not the object sent: a ConfigMap of 200 KB kept as its metadata only costs its name,
 * from the list and from a watch event (the server's text is then not cached either). */
static json_object *metadata_only(const json_object *o) {
  json_object *md = NULL, *out = json_object_new_object(), *c = NULL;
  if (!out || !json_object_object_get_ex((json_object *)o, "metadata", &md) || json_object_deep_copy(md, &c, NULL) != 0) {
    json_object_put(out);
    return NULL;
  }
  json_object_object_add(out, "metadata", c);
  return out;
}
static void count_data(void *ctx, const char *key, const json_object *o, const char *rv) {
  (void)key; (void)rv;
  json_object *d;
  *(int *)ctx += json_object_object_get_ex((json_object *)o, "data", &d) ? 100 : 1;
}
static void test_informer_transform(void **state) {
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  make_ns(c, "trim");
  po_KubeRef cm = kCm;
  cm.ns = "trim";
  char *big = malloc(200001);
  memset(big, 'x', 200000);
  big[200000] = 0;
  json_object *o = configmap("trim", "fat", "t", "1");
  json_object_object_add(json_object_object_get(o, "data"), "big", json_object_new_string(big));
  assert_true(po_KubeClient_Create(c, &cm, o, NULL, &st));
  json_object_put(o);
  po_InformerOptions io = {0};
  io.ref = kCm;
  io.ref.ns = "trim";
  io.transform = metadata_only;
  po_InformerHandlers h = {0};
  po_Informer *inf;
  assert_true(po_Informer_New(c, &io, &h, &inf, &st));
  assert_true(po_Informer_Start(inf, &st));
  assert_true(po_Informer_WaitForSync(inf, 10000));
  size_t listed = po_Informer_CacheBytes(inf);
  /* a watch event: a second one, then the cache holds both trimmed */
  o = configmap("trim", "fat2", "t", "2");
  json_object_object_add(json_object_object_get(o, "data"), "big", json_object_new_string(big));
  assert_true(po_KubeClient_Create(c, &cm, o, NULL, &st));
  json_object_put(o);
  for (int i = 0; i < 200 && po_Informer_Count(inf) < 2; i++) sleep_ms(50);
  assert_int_equal(po_Informer_Count(inf), 2);
  size_t watched = po_Informer_CacheBytes(inf);
  int seen = 0;
  po_Informer_ForEach(inf, count_data, &seen);
  print_message("transform: cache %zu bytes after the list, %zu after a watch event (objects of 200 KB)\n", listed,
                watched);
  assert_int_equal(seen, 2); /* neither has data */
  assert_true(watched < 4096);
  po_Informer_Free(inf);
  free(big);
}

/* Our own write's echo costs no parse (issue 26): an update whose uid and resourceVersion are
 * those po_KubeClient_UpdateVersion's answer said is cached from the event's bytes (managedFields
 * cut) and not delivered; an update by anyone else is parsed and delivered as before. Counted
 * (po_InformerStats.events_parsed), not timed: with every watch event parsed, the echo is one. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char uid[128], rv[64]; /* the version our write's answer said; "" until it came */
  int updates, asked;
  po_Informer *inf;
  int told;              /* own_cached calls */
  char cached_rv[128];   /* the cache's version of the key when own_cached was told */
} OwnEcho;

/* Told after own_version took the echo: what the cache holds then (a handler woken from here,
 * as the controller's held-gone reconciles are, reads that). */
static void own_cached_of(void *ctx, const char *key, const po_InformerVersion *v) {
  OwnEcho *o = ctx;
  (void)v;
  char ns[64] = "";
  const char *slash = strchr(key, '/');
  snprintf(ns, sizeof ns, "%.*s", slash ? (int)(slash - key) : 0, key);
  po_InformerVersion now = {.generation = 0};
  bool got = po_Informer_Version(o->inf, ns, slash ? slash + 1 : key, &now);
  pthread_mutex_lock(&o->mu);
  o->told++;
  snprintf(o->cached_rv, sizeof o->cached_rv, "%s", got ? now.rv : "(none)");
  pthread_cond_broadcast(&o->cv);
  pthread_mutex_unlock(&o->mu);
}

static bool own_version_of(void *ctx, const char *key, const po_InformerVersion *v) {
  OwnEcho *o = ctx;
  (void)key;
  pthread_mutex_lock(&o->mu);
  o->asked++;
  /* the echo can come before the answer: wait for it, as the controller's index does */
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  while (!*o->rv && pthread_cond_timedwait(&o->cv, &o->mu, &until) == 0) {
  }
  bool own = strcmp(o->rv, v->rv) == 0 && strcmp(o->uid, v->uid) == 0;
  pthread_mutex_unlock(&o->mu);
  return own;
}
static void own_update(void *ctx, json_object *old_obj, json_object *obj) {
  (void)old_obj; (void)obj;
  OwnEcho *o = ctx;
  pthread_mutex_lock(&o->mu);
  o->updates++;
  pthread_mutex_unlock(&o->mu);
}
static void cached_value(void *ctx, const char *key, const json_object *o, const char *rv) {
  (void)key; (void)rv;
  json_object *md = NULL, *d = NULL, *v = NULL;
  if (json_object_object_get_ex((json_object *)o, "metadata", &md) && json_object_object_get_ex(md, "managedFields", NULL))
    fail_msg("cached %s still has managedFields", key);
  if (json_object_object_get_ex((json_object *)o, "data", &d) && json_object_object_get_ex(d, "v", &v))
    snprintf(ctx, 32, "%s", json_object_get_string(v));
}
static void wait_rv(po_Informer *inf, const char *ns, const char *name, const char *rv) {
  po_InformerVersion v;
  for (int i = 0; i < 400; i++) {
    if (po_Informer_Version(inf, ns, name, &v) && strcmp(v.rv, rv) == 0) return;
    sleep_ms(25);
  }
  fail_msg("the cache never reached resourceVersion %s of %s/%s", rv, ns, name);
}

static void test_informer_own_version(void **state) {
  (void)state;
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  const char *ns = "own";
  make_ns(c, ns);
  po_KubeRef cm = kCm;
  cm.ns = ns;
  json_object *o = configmap(ns, "mine", "t", "1");
  assert_true(po_KubeClient_Create(c, &cm, o, NULL, &st));
  json_object_put(o);
  OwnEcho own = {.updates = 0};
  pthread_mutex_init(&own.mu, NULL);
  pthread_cond_init(&own.cv, NULL);
  po_InformerOptions io = {0};
  io.ref = cm;
  po_InformerHandlers h = {.on_update = own_update, .own_version = own_version_of, .own_cached = own_cached_of,
                           .ctx = &own, .no_old_object = true};
  po_Informer *inf;
  assert_true(po_Informer_New(c, &io, &h, &inf, &st));
  own.inf = inf;
  assert_true(po_Informer_Start(inf, &st));
  assert_true(po_Informer_WaitForSync(inf, 10000));
  /* ours: the answer's version, then its echo */
  cm.name = "mine";
  assert_true(po_KubeClient_Get(c, &cm, &o, &st));
  json_object_object_add(json_object_object_get(o, "data"), "v", json_object_new_string("ours"));
  po_KubeWritten w;
  assert_true(po_KubeClient_UpdateVersion(c, &cm, o, &w, &st));
  json_object_put(o);
  assert_true(*w.uid && *w.rv);
  pthread_mutex_lock(&own.mu);
  memcpy(own.uid, w.uid, sizeof w.uid);
  memcpy(own.rv, w.rv, sizeof w.rv);
  pthread_cond_broadcast(&own.cv);
  pthread_mutex_unlock(&own.mu);
  wait_rv(inf, ns, "mine", w.rv);
  po_InformerStats s = po_Informer_Stats(inf);
  char value[32] = "";
  po_Informer_ForEach(inf, cached_value, value);
  print_message("own echo: %llu events, %llu parsed, %llu own versions, %d delivered\n", (unsigned long long)s.events,
                (unsigned long long)s.events_parsed, (unsigned long long)s.own_versions, own.updates);
  assert_string_equal(value, "ours");
  /* told once, with the cache holding the echo already (told before the put, it held the
   * version written over) */
  pthread_mutex_lock(&own.mu);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  while (!own.told && pthread_cond_timedwait(&own.cv, &own.mu, &until) == 0) {
  }
  pthread_mutex_unlock(&own.mu);
  assert_int_equal(own.told, 1);
  assert_string_equal(own.cached_rv, w.rv);
  assert_int_equal(s.own_versions, 1);
  assert_int_equal(s.events_parsed, 0);
  assert_int_equal(own.updates, 0);
  /* someone else's: parsed and delivered */
  assert_true(po_KubeClient_Get(c, &cm, &o, &st));
  json_object_object_add(json_object_object_get(o, "data"), "v", json_object_new_string("theirs"));
  json_object *out = NULL;
  assert_true(po_KubeClient_Update(c, &cm, o, &out, &st));
  json_object_put(o);
  wait_rv(inf, ns, "mine", meta(out, "resourceVersion"));
  json_object_put(out);
  s = po_Informer_Stats(inf);
  po_Informer_ForEach(inf, cached_value, value);
  assert_string_equal(value, "theirs");
  assert_int_equal(s.own_versions, 1);
  assert_int_equal(s.events_parsed, 1);
  assert_int_equal(own.updates, 1);
  assert_int_equal(own.asked, 2);
  assert_int_equal(own.told, 1); /* someone else's update: not own, not told */
  po_Informer_Free(inf);
  pthread_cond_destroy(&own.cv);
  pthread_mutex_destroy(&own.mu);
}

/* The text cache's memory per object is bounded by the object's JSON (issue 26): 1,000 ConfigMaps
 * of ~1.3 KB written by server-side apply (so the server records managedFields, as a real API
 * server does for every write), half listed and half from the watch. The cache's own accounting
 * (po_Informer_CacheBytes: entries, keys, texts and the slot array) stays within 1.05 times the
 * objects' JSON without managedFields plus 160 bytes each, and no cached object has
 * managedFields. A cache that kept them (they are ~30% of these objects), or kept parsed trees
 * (~13 times the text), fails. Not timed, not RSS: the count is exact. */
/* ConfigMap cm-<i> applied, its values made of i and salt (another salt: another version). */
static void apply_cm_salted(po_KubeClient *c, const char *ns, int i, int salt) {
  char body[4096];
  int n = snprintf(body, sizeof body,
                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%04d\",\"namespace\":\"%s\","
                   "\"labels\":{\"app\":\"bounded\",\"shard\":\"s%d\"}},\"data\":{",
                   i, ns, i % 7);
  for (int k = 0; k < 12; k++)
    n += snprintf(body + n, sizeof body - (size_t)n, "%s\"key-%02d\":\"%070d\"", k ? "," : "", k, i * 100 + k + salt * 7);
  n += snprintf(body + n, sizeof body - (size_t)n, "}}");
  po_KubeRef r = kCm;
  r.ns = ns;
  char name[32];
  snprintf(name, sizeof name, "cm-%04d", i);
  r.name = name;
  po_KubePatchOptions po = {.type = kPo_KubePatch_Apply, .field_manager = "bounded-test", .force = true};
  po_CtlStatus st;
  if (!po_KubeClient_Patch(c, &r, &po, body, (size_t)n, NULL, &st)) fail_msg("apply %s: %s", name, st.message);
}

static void apply_cm(po_KubeClient *c, const char *ns, int i) { apply_cm_salted(c, ns, i, 0); }

static void no_managed_fields(void *ctx, const char *key, const json_object *o, const char *rv) {
  (void)rv;
  json_object *md = NULL;
  if (json_object_object_get_ex((json_object *)o, "metadata", &md) && json_object_object_get_ex(md, "managedFields", NULL))
    fail_msg("cached %s still has managedFields", key);
  (*(size_t *)ctx)++;
}

static void test_informer_store_bounded(void **state) {
  (void)state;
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  const char *ns = "bounded";
  make_ns(c, ns);
  enum { kObjects = 1000 };
  for (int i = 0; i < kObjects / 2; i++) apply_cm(c, ns, i);
  po_InformerOptions io = {0};
  io.ref = kCm;
  io.ref.ns = ns;
  po_InformerHandlers h = {0};
  po_Informer *inf;
  assert_true(po_Informer_New(c, &io, &h, &inf, &st));
  assert_true(po_Informer_Start(inf, &st));
  assert_true(po_Informer_WaitForSync(inf, 10000));
  for (int i = kObjects / 2; i < kObjects; i++) apply_cm(c, ns, i);
  for (int i = 0; i < 400 && po_Informer_Count(inf) < kObjects; i++) sleep_ms(50);
  assert_int_equal(po_Informer_Count(inf), kObjects);
  /* What the server holds: each object with its managedFields (the premise), and its JSON
   * without them (the yardstick). */
  po_KubeRef r = kCm;
  r.ns = ns;
  json_object *list = NULL;
  assert_true(po_KubeClient_ListAll(c, &r, NULL, &list, &st));
  json_object *items = json_object_object_get(list, "items");
  assert_int_equal(json_object_array_length(items), kObjects);
  size_t with = 0, without = 0;
  for (size_t i = 0; i < kObjects; i++) {
    json_object *it = json_object_array_get_idx(items, i), *md = json_object_object_get(it, "metadata");
    assert_true(json_object_object_get_ex(md, "managedFields", NULL));
    with += strlen(json_object_to_json_string_ext(it, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_object_del(md, "managedFields");
    without += strlen(json_object_to_json_string_ext(it, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  }
  json_object_put(list);
  size_t bytes = po_Informer_CacheBytes(inf), limit = without + without / 20 + 160 * (size_t)kObjects, seen = 0;
  print_message("store: %zu objects, %zu bytes of JSON (%zu with managedFields); the cache %zu bytes (%.0f per "
                "object; limit %zu)\n", (size_t)kObjects, without, with, bytes, (double)bytes / kObjects, limit);
  po_Informer_ForEach(inf, no_managed_fields, &seen);
  assert_int_equal(seen, kObjects);
  assert_true(bytes <= limit);
  po_Informer_Free(inf);
}

/* Each object the compressed informer has (half listed, half watched as they were created) reads
 * back equal to the plain informer's, and the cache is smaller: the compressed texts are whole to
 * every reader (Get, ForEach). */
typedef struct {
  po_Informer *plain;
  size_t seen;
} SameCtx;

static void same_as_plain(void *ctx, const char *key, const json_object *o, const char *rv) {
  SameCtx *s = ctx;
  const char *slash = strchr(key, '/');
  assert_non_null(slash);
  char ns[64];
  snprintf(ns, sizeof ns, "%.*s", (int)(slash - key), key);
  po_InformerRef *ref = NULL;
  po_CtlStatus st;
  const json_object *p = po_Informer_Get(s->plain, ns, slash + 1, &ref, &st);
  if (!p || !json_object_equal((json_object *)p, (json_object *)o)) fail_msg("cached %s at %s differs from the plain cache's", key, rv);
  po_InformerRef_Release(ref);
  s->seen++;
}

static void test_informer_compressed(void **state) {
  (void)state;
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  const char *ns = "compressed";
  make_ns(c, ns);
  enum { kObjects = 300 };
  for (int i = 0; i < kObjects / 2; i++) apply_cm(c, ns, i);
  static const char dict[] = "{\"apiVersion\":\"v1\",\"data\":{\"key-00\":\"0000000000\"},\"kind\":\"ConfigMap\","
                             "\"metadata\":{\"labels\":{\"app\":\"bounded\",\"shard\":\"s0\"},\"name\":\"cm-0000\"}}";
  po_InformerOptions io = {.ref = kCm, .compress_text = true, .text_dictionary = dict, .text_dictionary_len = sizeof dict - 1},
                     ip = {.ref = kCm};
  io.ref.ns = ip.ref.ns = ns;
  po_InformerHandlers h = {0};
  po_Informer *z, *p;
  assert_true(po_Informer_New(c, &io, &h, &z, &st));
  assert_true(po_Informer_New(c, &ip, &h, &p, &st));
  assert_true(po_Informer_Start(z, &st) && po_Informer_Start(p, &st));
  assert_true(po_Informer_WaitForSync(z, 10000) && po_Informer_WaitForSync(p, 10000));
  for (int i = kObjects / 2; i < kObjects; i++) apply_cm(c, ns, i);
  for (int i = 0; i < 400 && (po_Informer_Count(z) < kObjects || po_Informer_Count(p) < kObjects); i++) sleep_ms(50);
  assert_int_equal(po_Informer_Count(z), kObjects);
  SameCtx s = {.plain = p};
  po_Informer_ForEach(z, same_as_plain, &s);
  assert_int_equal(s.seen, kObjects);
  size_t zb = po_Informer_CacheBytes(z), pb = po_Informer_CacheBytes(p);
  print_message("compressed: %d ConfigMaps cached in %zu bytes, %zu plain\n", kObjects, zb, pb);
  assert_true(zb < pb / 2);
  po_Informer_Free(z);
  po_Informer_Free(p);
}

/* Watch events' texts kept unpacked for text_pack_delay_ms (pack_later.h), beside an informer
 * that packs at once and a plain one: every object reads back equal to the plain informer's at
 * every point. With a delay of an hour nothing is packed late (the texts stay as they came, more
 * bytes than packed at once); with a delay of a millisecond each object's last version is packed
 * at the first event after it (earlier versions too when their next event came later than that). */
static size_t events_of(po_Informer *inf) {
  po_InformerStats s = po_Informer_Stats(inf);
  return (size_t)(s.adds + s.updates);
}

static void test_informer_packs_late(void **state) {
  (void)state;
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  const char *ns = "late";
  make_ns(c, ns);
  static const char dict[] = "{\"apiVersion\":\"v1\",\"data\":{\"key-00\":\"0000000000\"},\"kind\":\"ConfigMap\","
                             "\"metadata\":{\"labels\":{\"app\":\"bounded\",\"shard\":\"s0\"},\"name\":\"cm-0000\"}}";
  po_InformerOptions z = {.ref = kCm, .compress_text = true, .text_dictionary = dict, .text_dictionary_len = sizeof dict - 1};
  z.ref.ns = ns;
  po_InformerOptions io[4] = {z, z, z, {.ref = z.ref}}; /* an hour, a millisecond, at once, plain */
  io[0].text_pack_delay_ms = 3600 * 1000;
  io[1].text_pack_delay_ms = 1;
  po_InformerHandlers h = {0};
  po_Informer *inf[4];
  for (int k = 0; k < 4; k++) {
    assert_true(po_Informer_New(c, &io[k], &h, &inf[k], &st));
    assert_true(po_Informer_Start(inf[k], &st));
    assert_true(po_Informer_WaitForSync(inf[k], 10000));
  }
  enum { kObjects = 20, kVersions = 3 };
  for (int v = 0; v < kVersions; v++)
    for (int i = 0; i < kObjects; i++) apply_cm_salted(c, ns, i, v);
  for (int k = 0; k < 4; k++) {
    for (int t = 0; t < 400 && events_of(inf[k]) < kObjects * kVersions; t++) sleep_ms(25);
    assert_int_equal(events_of(inf[k]), kObjects * kVersions);
  }
  for (int k = 0; k < 3; k++) {
    SameCtx s = {.plain = inf[3]};
    po_Informer_ForEach(inf[k], same_as_plain, &s);
    assert_int_equal(s.seen, kObjects);
  }
  size_t hour = po_Informer_CacheBytes(inf[0]), now = po_Informer_CacheBytes(inf[2]);
  assert_int_equal(po_Informer_Stats(inf[0]).texts_packed_late, 0);
  assert_int_equal(po_Informer_Stats(inf[2]).texts_packed_late, 0);
  assert_true(hour > now + now / 2);
  /* a millisecond later, one more event: every object's last version is due */
  sleep_ms(50);
  apply_cm_salted(c, ns, kObjects, 0);
  for (int k = 0; k < 4; k++) {
    for (int t = 0; t < 400 && events_of(inf[k]) < kObjects * kVersions + 1; t++) sleep_ms(25);
    assert_int_equal(events_of(inf[k]), kObjects * kVersions + 1);
  }
  uint64_t late = po_Informer_Stats(inf[1]).texts_packed_late;
  size_t ms = po_Informer_CacheBytes(inf[1]);
  print_message("packs late: %d ConfigMaps, %d versions each: an hour's delay holds %zu bytes, packing at once %zu, a "
                "millisecond's %zu after %llu packed late\n", kObjects, kVersions, hour, now, ms, (unsigned long long)late);
  assert_true(late >= kObjects && late <= (uint64_t)kObjects * kVersions);
  assert_true(ms < hour);
  for (int k = 0; k < 3; k++) {
    SameCtx s = {.plain = inf[3]};
    po_Informer_ForEach(inf[k], same_as_plain, &s);
    assert_int_equal(s.seen, kObjects + 1);
  }
  assert_int_equal(po_Informer_Stats(inf[0]).texts_packed_late, 0);
  for (int k = 0; k < 4; k++) po_Informer_Free(inf[k]);
}


/* The texts kept unpacked stay within text_pack_pending_bytes whatever their delay: 400 distinct
 * ConfigMaps from the watch, then one of them rewritten 600 times, through an informer that
 * waits an hour under a bound of 16 KB. Its cache holds at most the bound and one text more than
 * an informer packing at once (po_Informer_CacheBytes), and every object reads back as a plain
 * informer's. */
static void test_informer_packs_late_bounded(void **state) {
  (void)state;
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  const char *ns = "latebound";
  make_ns(c, ns);
  static const char dict[] = "{\"apiVersion\":\"v1\",\"data\":{\"key-00\":\"0000000000\"},\"kind\":\"ConfigMap\"}";
  po_InformerOptions z = {.ref = kCm, .compress_text = true, .text_dictionary = dict, .text_dictionary_len = sizeof dict - 1};
  z.ref.ns = ns;
  enum { kBound = 16384 };
  po_InformerOptions io[3] = {z, z, {.ref = z.ref}}; /* an hour under the bound, at once, plain */
  io[0].text_pack_delay_ms = 3600 * 1000;
  io[0].text_pack_pending_bytes = kBound;
  po_InformerHandlers h = {0};
  po_Informer *inf[3];
  for (int k = 0; k < 3; k++) {
    assert_true(po_Informer_New(c, &io[k], &h, &inf[k], &st));
    assert_true(po_Informer_Start(inf[k], &st));
    assert_true(po_Informer_WaitForSync(inf[k], 10000));
  }
  enum { kObjects = 400, kRewrites = 600 };
  size_t want = 0;
  for (int round = 0; round < 2; round++) {
    if (round == 0)
      for (int i = 0; i < kObjects; i++) apply_cm_salted(c, ns, i, 0);
    else
      for (int v = 1; v <= kRewrites; v++) apply_cm_salted(c, ns, 7, v);
    want += round == 0 ? kObjects : kRewrites;
    for (int k = 0; k < 3; k++) {
      for (int t = 0; t < 800 && events_of(inf[k]) < want; t++) sleep_ms(25);
      assert_int_equal(events_of(inf[k]), want);
    }
    size_t late = po_Informer_CacheBytes(inf[0]), now = po_Informer_CacheBytes(inf[1]);
    print_message("packs late, bounded: after %s: %zu bytes waiting an hour under %d, %zu packed at once, %llu packed "
                  "late\n", round ? "the rewrites" : "the creates", late, (int)kBound, now,
                  (unsigned long long)po_Informer_Stats(inf[0]).texts_packed_late);
    assert_true(late <= now + kBound + 2048);
    SameCtx s = {.plain = inf[2]};
    po_Informer_ForEach(inf[0], same_as_plain, &s);
    assert_int_equal(s.seen, kObjects);
  }
  for (int k = 0; k < 3; k++) po_Informer_Free(inf[k]);
}

#ifdef PO_COUNT_ALLOCS
/* po_Informer_Get of a compressed entry on a thread of its own (its decompression context, text
 * buffer and tokener made by the read), that thread's Nth allocation failing, for every N until a
 * read runs through: the object whole, or NULL with kPo_Ctl_NoMemory naming the resource and key;
 * never NULL said Ok, which is "absent" (tests/kube/test_kube_unreadable.c sweeps the entry's read
 * itself, in children). */
typedef struct {
  po_Informer *inf;
  long n, reached;
  const json_object *o;
  po_InformerRef *ref;
  po_CtlStatus st;
} GetArmed;

static void *get_armed(void *arg) {
  GetArmed *g = arg;
  t_count = 0;
  t_fail_at = g->n;
  g->o = po_Informer_Get(g->inf, "unreadable", "cm-0001", &g->ref, &g->st);
  g->reached = t_count;
  t_fail_at = -1;
  return NULL;
}

static void test_informer_get_unreadable(void **state) {
  (void)state;
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  make_ns(c, "unreadable");
  for (int i = 0; i < 3; i++) apply_cm(c, "unreadable", i);
  static const char dict[] = "{\"apiVersion\":\"v1\",\"data\":{\"key-00\":\"0000000000\"},\"kind\":\"ConfigMap\"}";
  po_InformerOptions io = {.ref = kCm, .compress_text = true, .text_dictionary = dict, .text_dictionary_len = sizeof dict - 1};
  io.ref.ns = "unreadable";
  po_InformerHandlers h = {0};
  po_Informer *inf;
  assert_true(po_Informer_New(c, &io, &h, &inf, &st));
  assert_true(po_Informer_Start(inf, &st));
  assert_true(po_Informer_WaitForSync(inf, 10000));
  po_InformerRef *ref = NULL;
  const json_object *whole = po_Informer_Get(inf, "unreadable", "cm-0001", &ref, &st);
  assert_non_null(whole);
  long unreadable = 0, n;
  for (n = 1; n < 100000; n++) {
    GetArmed g = {.inf = inf, .n = n};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, get_armed, &g), 0);
    pthread_join(t, NULL);
    if (g.o) assert_true(json_object_equal((json_object *)g.o, (json_object *)whole));
    else if (g.st.code != kPo_Ctl_NoMemory || !strstr(g.st.message, "configmaps unreadable/cm-0001"))
      fail_msg("allocation %ld failed: NULL with code %d (%s): taken for absent", n, g.st.code, g.st.message);
    else unreadable++;
    po_InformerRef_Release(g.ref);
    if (g.reached < n) break;
  }
  print_message("po_Informer_Get of a compressed entry, each of its %ld allocations failing in turn: %ld said out "
                "of memory, none absent\n", n - 1, unreadable);
  assert_true(unreadable >= 3);
  po_InformerRef_Release(ref);
  po_Informer_Free(inf);
}
#endif

static void test_rest_pooled_handle_verbs(void **state) {
  po_KubeClient *c = g_client;
  po_CtlStatus st;
  json_object *o = NULL, *got = NULL;
  po_KubeRef cm = kCm;
  cm.ns = "default";
  uint64_t builds = po_KubeClient_HeaderBuilds_(c);
  for (int round = 0; round < 3; round++) {
    cm.name = NULL;
    o = configmap("default", "pooled", "rest", "1");
    assert_true(po_KubeClient_Create(c, &cm, o, NULL, &st));
    json_object_put(o);
    cm.name = "pooled";
    const char *patch = "{\"data\":{\"v\":\"patched\"}}";
    po_KubePatchOptions mp = {.type = kPo_KubePatch_Merge};
    assert_true(po_KubeClient_Patch(c, &cm, &mp, patch, strlen(patch), NULL, &st));
    assert_true(po_KubeClient_Get(c, &cm, &got, &st)); /* a GET, not the PATCH again */
    json_object *data = NULL, *v = NULL;
    assert_true(json_object_object_get_ex(got, "data", &data) && json_object_object_get_ex(data, "v", &v));
    assert_string_equal(json_object_get_string(v), "patched");
    json_object_put(got);
    assert_true(po_KubeClient_Delete(c, &cm, NULL, NULL, &st));
    assert_false(po_KubeClient_Get(c, &cm, &got, &st));
    assert_int_equal(st.code, kPo_Ctl_NotFound);
  }
  assert_true(po_KubeClient_HeaderBuilds_(c) - builds <= 1); /* 15 requests, one token */
}

static int setup_rest(void **state) {
  const char *extra[] = {"--crd", PO_APISERVER_TESTDATA "/widgets-crd.yaml", NULL};
  return start_server(extra, false);
}

/* ---- churn: the cache equals the server after drops, 410s and 5xx bursts ------------------ */

typedef struct {
  pthread_mutex_t lock;
  /* What the handlers were told, as key -> rv, to check deletions after relists arrive. */
  json_object *mirror;
  int adds, updates, deletes;
  bool no_old;  /* the handlers say they never read the old object */
  int olds;     /* updates that came with it */
  bool parsed;  /* the informer keeps parsed trees, and the handlers take the old version */
  int versions; /* updates that came with the old version, of the same object, older */
  long pack_delay_ms;  /* compressed texts, watch events' kept unpacked this long (0: plain) */
  size_t pack_pending; /* text_pack_pending_bytes */
} Mirror;

static void key_of(json_object *o, char *buf, size_t n) { snprintf(buf, n, "%s/%s", meta(o, "namespace"), meta(o, "name")); }

static void m_add(void *ctx, json_object *o) {
  Mirror *m = ctx;
  char k[256];
  key_of(o, k, sizeof k);
  pthread_mutex_lock(&m->lock);
  json_object_object_add(m->mirror, k, json_object_new_string(meta(o, "resourceVersion")));
  m->adds++;
  pthread_mutex_unlock(&m->lock);
}
static void m_update(void *ctx, json_object *old, json_object *o) {
  Mirror *m = ctx;
  char k[256];
  key_of(o, k, sizeof k);
  pthread_mutex_lock(&m->lock);
  json_object_object_add(m->mirror, k, json_object_new_string(meta(o, "resourceVersion")));
  m->updates++;
  if (old) {
    char ok[256];
    key_of(old, ok, sizeof ok);
    assert_string_equal(ok, k);
    m->olds++;
  }
  pthread_mutex_unlock(&m->lock);
}
static void m_update_version(void *ctx, const po_InformerVersion *old, json_object *o) {
  Mirror *m = ctx;
  char k[256];
  key_of(o, k, sizeof k);
  pthread_mutex_lock(&m->lock);
  json_object_object_add(m->mirror, k, json_object_new_string(meta(o, "resourceVersion")));
  m->updates++;
  if (strcmp(old->uid, meta(o, "uid")) == 0 && strcmp(old->rv, meta(o, "resourceVersion")) != 0 && *old->rv) m->versions++;
  pthread_mutex_unlock(&m->lock);
}
static void m_delete(void *ctx, json_object *o) {
  Mirror *m = ctx;
  char k[256];
  key_of(o, k, sizeof k);
  pthread_mutex_lock(&m->lock);
  json_object_object_del(m->mirror, k);
  m->deletes++;
  pthread_mutex_unlock(&m->lock);
}

static void collect(void *ctx, const char *key, const json_object *obj, const char *rv) {
  (void)obj;
  json_object_object_add(ctx, key, json_object_new_string(rv));
}

/* An object's resourceVersion and data.v, what the content checks compare. */
static json_object *content_of(const json_object *o) {
  json_object *data = NULL, *v = NULL;
  json_object_object_get_ex(o, "data", &data);
  json_object_object_get_ex(data, "v", &v);
  char buf[256];
  snprintf(buf, sizeof buf, "%s|%s", meta((json_object *)o, "resourceVersion"),
           v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "-");
  return json_object_new_string(buf);
}
static void collect_content(void *ctx, const char *key, const json_object *obj, const char *rv) {
  (void)rv;
  json_object_object_add(ctx, key, content_of(obj));
}

/* The server's state as key -> rv (retrying through injected faults). */
static json_object *server_state(const char *ns) {
  po_KubeRef cm = kCm;
  cm.ns = ns;
  po_KubeListOptions lo = {NULL, NULL, 250, NULL, NULL, NULL};
  json_object *l = NULL;
  po_CtlStatus st;
  for (int i = 0; i < 50 && !po_KubeClient_ListAll(g_client, &cm, &lo, &l, &st); i++) sleep_ms(100);
  assert_non_null(l);
  json_object *items, *out = json_object_new_object();
  json_object_object_get_ex(l, "items", &items);
  for (size_t i = 0; i < json_object_array_length(items); i++) {
    json_object *it = json_object_array_get_idx(items, i);
    char k[256];
    key_of(it, k, sizeof k);
    json_object_object_add(out, k, json_object_new_string(meta(it, "resourceVersion")));
  }
  json_object_put(l);
  return out;
}

static bool same(json_object *a, json_object *b) {
  return json_object_equal(a, b) != 0;
}

/* The same from the server, key -> content_of. */
static json_object *server_content(const char *ns) {
  po_KubeRef cm = kCm;
  cm.ns = ns;
  po_KubeListOptions lo = {NULL, NULL, 250, NULL, NULL, NULL};
  json_object *l = NULL;
  po_CtlStatus st;
  for (int i = 0; i < 50 && !po_KubeClient_ListAll(g_client, &cm, &lo, &l, &st); i++) sleep_ms(100);
  assert_non_null(l);
  json_object *items, *out = json_object_new_object();
  json_object_object_get_ex(l, "items", &items);
  for (size_t i = 0; i < json_object_array_length(items); i++) {
    json_object *it = json_object_array_get_idx(items, i);
    char k[256];
    key_of(it, k, sizeof k);
    json_object_object_add(out, k, content_of(it));
  }
  json_object_put(l);
  return out;
}

/* After convergence: what the cache holds is the server's objects (their data, not only their
 * versions: texts taken from the stream, trees kept), by ForEach and by Get. */
static void expect_same_content(po_Informer *inf, const char *ns, bool parsed) {
  json_object *srv = server_content(ns), *cache = json_object_new_object();
  assert_true(po_Informer_ForEach(inf, collect_content, cache));
  assert_true(same(srv, cache));
  json_object_object_foreach(srv, k, want) {
    const char *slash = strchr(k, '/');
    po_InformerRef *ref = NULL;
    po_CtlStatus st;
    const json_object *o = po_Informer_Get(inf, ns, slash + 1, &ref, &st);
    assert_non_null(o);
    assert_int_equal(st.code, kPo_Ctl_Ok);
    json_object *got = content_of(o);
    assert_string_equal(json_object_get_string(got), json_object_get_string(want));
    json_object_put(got);
    po_InformerVersion v;
    assert_true(po_Informer_Version(inf, ns, slash + 1, &v));
    assert_string_equal(v.rv, meta((json_object *)o, "resourceVersion"));
    assert_false(v.deleting);
    /* A kept tree is handed out by reference: a second Get gives the same object, not a parse. */
    po_InformerRef *ref2 = NULL;
    const json_object *o2 = po_Informer_Get(inf, ns, slash + 1, &ref2, &st);
    if (parsed) assert_ptr_equal(o2, o);
    else assert_ptr_not_equal(o2, o);
    po_InformerRef_Release(ref2);
    po_InformerRef_Release(ref);
  }
  po_InformerRef *ref = (po_InformerRef *)1;
  po_CtlStatus st = {.code = kPo_Ctl_Internal};
  assert_null(po_Informer_Get(inf, ns, "no-such-object", &ref, &st));
  assert_null(ref);
  assert_int_equal(st.code, kPo_Ctl_Ok); /* absent, not unreadable */
  json_object_put(srv);
  json_object_put(cache);
}


/* Waits (bounded) for informer cache == handler mirror == server. */
static void expect_converged(po_Informer *inf, Mirror *m, const char *ns, double timeout_s) {
  double end = now_s() + timeout_s;
  json_object *srv = NULL, *cache = NULL;
  bool ok = false;
  while (!ok && now_s() < end) {
    json_object_put(srv);
    json_object_put(cache);
    srv = server_state(ns);
    cache = json_object_new_object();
    po_Informer_ForEach(inf, collect, cache);
    pthread_mutex_lock(&m->lock);
    ok = same(srv, cache) && same(cache, m->mirror);
    pthread_mutex_unlock(&m->lock);
    if (!ok) sleep_ms(200);
  }
  if (!ok)
    print_error("not converged: server %d objects, cache %d, mirror %d\n", json_object_object_length(srv),
                json_object_object_length(cache), json_object_object_length(m->mirror));
  json_object_put(srv);
  json_object_put(cache);
  assert_true(ok);
}

static bool retry_create(po_KubeClient *c, const po_KubeRef *r, json_object *o) {
  po_CtlStatus st;
  for (int i = 0; i < 100; i++) {
    if (po_KubeClient_Create(c, r, o, NULL, &st) || st.code == kPo_Ctl_AlreadyExists) return true;
    sleep_ms(20);
  }
  print_error("create: %s\n", st.message);
  return false;
}

static bool retry_update(po_KubeClient *c, const po_KubeRef *r, const char *value) {
  po_CtlStatus st;
  for (int i = 0; i < 100; i++) {
    json_object *o = NULL;
    if (po_KubeClient_Get(c, r, &o, &st)) {
      json_object *data;
      json_object_object_get_ex(o, "data", &data);
      json_object_object_add(data, "v", json_object_new_string(value));
      bool ok = po_KubeClient_Update(c, r, o, NULL, &st);
      json_object_put(o);
      if (ok) return true;
    }
    if (st.code == kPo_Ctl_NotFound) return true;
    sleep_ms(20);
  }
  print_error("update: %s\n", st.message);
  return false;
}

static bool retry_delete(po_KubeClient *c, const po_KubeRef *r) {
  po_CtlStatus st;
  for (int i = 0; i < 100; i++) {
    if (po_KubeClient_Delete(c, r, NULL, NULL, &st) || st.code == kPo_Ctl_NotFound) return true;
    sleep_ms(20);
  }
  print_error("delete: %s\n", st.message);
  return false;
}

static po_Informer *start_informer(const char *ns, Mirror *m) {
  pthread_mutex_init(&m->lock, NULL);
  m->mirror = json_object_new_object();
  po_InformerOptions io = {0};
  io.ref = kCm;
  io.ref.ns = ns;
  io.page_size = 100;
  io.min_watch_timeout_s = 5;         /* exercise watch renewal too */
  io.backoff_initial_ns = 50000000LL; /* keep the test quick; the default is 0.8 s */
  io.backoff_max_ns = 1000000000LL;
  io.keep_parsed = m->parsed;
  io.compress_text = m->pack_delay_ms != 0;
  io.text_pack_delay_ms = m->pack_delay_ms;
  io.text_pack_pending_bytes = m->pack_pending;
  po_InformerHandlers h = {.on_add = m_add, .on_update = m_update, .on_delete = m_delete, .ctx = m, .no_old_object = m->no_old};
  if (m->parsed) h.on_update_version = m_update_version;
  po_Informer *inf;
  po_CtlStatus st;
  assert_true(po_Informer_New(g_client, &io, &h, &inf, &st));
  assert_true(po_Informer_Start(inf, &st));
  return inf;
}

static void stop_informer(po_Informer *inf, Mirror *m) {
  po_Informer_Free(inf);
  json_object_put(m->mirror);
  pthread_mutex_destroy(&m->lock);
}

static void test_churn(void **state) {
  make_ns(g_client, "churn");
  po_KubeRef cm = kCm;
  cm.ns = "churn";
  /* Some objects before the informer starts: they arrive through the first list. */
  for (int i = 0; i < 100; i++) {
    char name[32];
    snprintf(name, sizeof name, "c%04d", i);
    json_object *o = configmap("churn", name, "churn", "0");
    assert_true(retry_create(g_client, &cm, o));
    json_object_put(o);
  }
  /* Taken by each watch when it starts. */
  assert_true(po_TestServer_Faults(&g_srv, "{\"dropWatchEvery\":37}"));
  Mirror m = {0};
  po_Informer *inf = start_informer("churn", &m);
  assert_true(po_Informer_WaitForSync(inf, 30000));
  uint64_t x = 12345;
  for (int i = 100; i < 1000; i++) {
    char name[32];
    snprintf(name, sizeof name, "c%04d", i);
    json_object *o = configmap("churn", name, "churn", "0");
    assert_true(retry_create(g_client, &cm, o));
    json_object_put(o);
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    po_KubeRef r = cm;
    char other[32];
    snprintf(other, sizeof other, "c%04d", (int)(x % (uint64_t)i));
    r.name = other;
    if (i % 2 == 0) assert_true(retry_update(g_client, &r, name));
    if (i % 3 == 0) assert_true(retry_delete(g_client, &r));
    if (i % 150 == 0) assert_true(po_TestServer_Faults(&g_srv, "{\"force410\":1}"));
    if (i % 170 == 0) assert_true(po_TestServer_Faults(&g_srv, "{\"serverErrors\":6,\"serverErrorCode\":503}"));
    if (i % 230 == 0) assert_true(po_TestServer_Faults(&g_srv, "{\"throttle\":3,\"retryAfterSeconds\":0}"));
  }
  /* Deletions while no watch is up must still reach the handlers: cut watches, force a 410 and
   * delete a batch in between. */
  assert_true(po_TestServer_Faults(&g_srv, "{\"force410\":3,\"dropWatchEvery\":5}"));
  for (int i = 0; i < 1000; i += 7) {
    char name[32];
    snprintf(name, sizeof name, "c%04d", i);
    po_KubeRef r = cm;
    r.name = name;
    assert_true(retry_delete(g_client, &r));
  }
  assert_true(po_TestServer_Faults(&g_srv, "{\"dropWatchEvery\":0,\"force410\":0,\"serverErrors\":0,\"throttle\":0}"));
  expect_converged(inf, &m, "churn", 60);
  po_InformerStats s = po_Informer_Stats(inf);
  print_message("churn: %llu lists (%llu after 410), %llu watches, %llu events, %llu watch errors; handlers "
                "add %d update %d delete %d\n",
                (unsigned long long)s.lists, (unsigned long long)s.relists_gone, (unsigned long long)s.watches,
                (unsigned long long)s.events, (unsigned long long)s.watch_errors, m.adds, m.updates, m.deletes);
  assert_true(s.relists_gone >= 1);
  assert_true(s.watches >= 3);
  assert_true(m.updates > 0);
  assert_int_equal(m.olds, m.updates); /* every update came with the old object */
  expect_same_content(inf, "churn", false);
  stop_informer(inf, &m);
}


/* The churn with texts packed late (pack_later.h): informers that keep watch events' texts
 * unpacked for a millisecond, for an hour under a bound of 8 KB, and for an hour under the
 * default bound, beside readers on other threads (po_Informer_Get of the keys churned, and
 * ForEach) while the watch thread packs, and the same keys rewritten, deleted and created
 * again, watches dropped and relists after 410s with texts pending. Each converges to the server
 * and reads back as it has it; the informers are freed with texts pending. */
typedef struct {
  po_Informer *inf[3];
  const char *ns;
  atomic_bool stop;
  atomic_size_t gets, absent, wrong; /* wrong: told by the main thread (cmocka's fail is its own) */
} Readers;

static void count_each(void *ctx, const char *key, const json_object *o, const char *rv) {
  (void)rv;
  Readers *r = ctx;
  const char *name = meta((json_object *)o, "name"), *slash = strchr(key, '/');
  if (!name || !slash || strcmp(name, slash + 1) != 0) {
    print_error("ForEach: %s holds %s\n", key, name ? name : "(none)");
    atomic_fetch_add(&r->wrong, 1);
  }
}

static void *read_churned(void *arg) {
  Readers *r = arg;
  uint64_t x = 99;
  while (!atomic_load(&r->stop)) {
    for (int k = 0; k < 3; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      char name[32];
      snprintf(name, sizeof name, "h%02d", (int)(x % 24));
      po_InformerRef *ref = NULL;
      po_CtlStatus st;
      const json_object *o = po_Informer_Get(r->inf[k], r->ns, name, &ref, &st);
      json_object *data = NULL;
      const char *got = o ? meta((json_object *)o, "name") : NULL;
      if (o && (!got || strcmp(got, name) != 0 || !json_object_object_get_ex((json_object *)o, "data", &data))) {
        print_error("Get %s: %s\n", name, got ? got : "(no name)");
        atomic_fetch_add(&r->wrong, 1);
      } else if (!o && st.code != kPo_Ctl_Ok) {
        print_error("Get %s: %s\n", name, st.message);
        atomic_fetch_add(&r->wrong, 1);
      }
      atomic_fetch_add(o ? &r->gets : &r->absent, 1);
      po_InformerRef_Release(ref);
      if (x % 64 == 0) po_Informer_ForEach(r->inf[k], count_each, r);
    }
  }
  return NULL;
}

static void test_churn_packs_late(void **state) {
  (void)state;
  const char *ns = "churnlate";
  make_ns(g_client, ns);
  po_KubeRef cm = kCm;
  cm.ns = ns;
  Mirror m[3] = {{.pack_delay_ms = 1}, {.pack_delay_ms = 3600 * 1000, .pack_pending = 8192},
                 {.pack_delay_ms = 3600 * 1000}};
  po_Informer *inf[3];
  /* taken by each watch when it starts */
  assert_true(po_TestServer_Faults(&g_srv, "{\"dropWatchEvery\":13}"));
  for (int k = 0; k < 3; k++) inf[k] = start_informer(ns, &m[k]);
  for (int k = 0; k < 3; k++) assert_true(po_Informer_WaitForSync(inf[k], 30000));
  Readers r = {.inf = {inf[0], inf[1], inf[2]}, .ns = ns};
  atomic_init(&r.stop, false);
  atomic_init(&r.gets, 0), atomic_init(&r.absent, 0), atomic_init(&r.wrong, 0);
  pthread_t th[2];
  for (int t = 0; t < 2; t++) assert_int_equal(pthread_create(&th[t], NULL, read_churned, &r), 0);
  uint64_t x = 4242;
  char big[820];
  for (int i = 0; i < 600; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    char name[32];
    snprintf(name, sizeof name, "h%02d", (int)(x % 24));
    po_KubeRef one = cm;
    one.name = name;
    /* a value long enough that texts are worth packing, another at every write */
    snprintf(big, sizeof big, "%0*d", 600 + (int)(x % 200), i);
    switch (x % 5) {
      case 0: assert_true(retry_delete(g_client, &one)); break;
      default: {
        json_object *o = configmap(ns, name, "churn", big);
        po_CtlStatus st;
        if (!po_KubeClient_Create(g_client, &cm, o, NULL, &st)) assert_true(retry_update(g_client, &one, big));
        json_object_put(o);
      }
    }
    /* every informer's watch ends now and then, and its next start is a 410: a relist with
     * texts pending */
    if (i % 97 == 0) assert_true(po_TestServer_Faults(&g_srv, "{\"force410\":3}"));
  }
  assert_true(po_TestServer_Faults(&g_srv, "{\"dropWatchEvery\":0,\"force410\":0}"));
  for (int k = 0; k < 3; k++) expect_converged(inf[k], &m[k], ns, 60);
  atomic_store(&r.stop, true);
  for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
  for (int k = 0; k < 3; k++) {
    expect_same_content(inf[k], ns, false);
    po_InformerStats s = po_Informer_Stats(inf[k]);
    print_message("churn packs late (%ld ms, bound %zu): %llu lists (%llu after 410), %llu watches, %llu events, %llu "
                  "packed late, cache %zu bytes\n", m[k].pack_delay_ms, m[k].pack_pending, (unsigned long long)s.lists,
                  (unsigned long long)s.relists_gone, (unsigned long long)s.watches, (unsigned long long)s.events,
                  (unsigned long long)s.texts_packed_late, po_Informer_CacheBytes(inf[k]));
  }
  print_message("churn packs late: readers %zu gets, %zu absent\n", atomic_load(&r.gets), atomic_load(&r.absent));
  assert_int_equal(atomic_load(&r.wrong), 0);
  assert_true(atomic_load(&r.gets) > 0);
  for (int k = 0; k < 3; k++) stop_informer(inf[k], &m[k]);
}

static int setup_churn(void **state) {
  const char *extra[] = {"--compaction-window", "300", "--bookmark-interval-ms", "200", NULL};
  return start_server(extra, false);
}

/* ---- restart: the server goes away mid-watch and comes back with its state ---------------- */

static void test_restart(void **state) {
  make_ns(g_client, "rs");
  po_KubeRef cm = kCm;
  cm.ns = "rs";
  for (int i = 0; i < 50; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%02d", i);
    json_object *o = configmap("rs", name, "rs", "0");
    assert_true(retry_create(g_client, &cm, o));
    json_object_put(o);
  }
  /* Here the informer keeps parsed trees, and the handlers take the old object's version. */
  Mirror m = {.parsed = true};
  po_Informer *inf = start_informer("rs", &m);
  assert_true(po_Informer_WaitForSync(inf, 30000));
  expect_converged(inf, &m, "rs", 30);
  sleep_ms(300); /* let the state file flush (every 50 ms) */
  /* Down long enough that the informer's reconnects fail a few times, then back. */
  po_TestServer_Stop(&g_srv);
  sleep_ms(1500);
  assert_true(po_TestServer_Restart(&g_srv, NULL));
  for (int i = 50; i < 70; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%02d", i);
    json_object *o = configmap("rs", name, "rs", "0");
    assert_true(retry_create(g_client, &cm, o));
    json_object_put(o);
  }
  for (int i = 0; i < 10; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%02d", i * 3);
    po_KubeRef r = cm;
    r.name = name;
    assert_true(retry_delete(g_client, &r));
  }
  for (int i = 0; i < 5; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%02d", i * 3 + 1);
    po_KubeRef r = cm;
    r.name = name;
    assert_true(retry_update(g_client, &r, "changed"));
  }
  expect_converged(inf, &m, "rs", 60);
  assert_true(m.updates > 0);
  assert_int_equal(m.olds, 0);
  assert_int_equal(m.versions, m.updates); /* every update came with the old version */
  expect_same_content(inf, "rs", true);
  po_InformerStats s = po_Informer_Stats(inf);
  print_message("restart: %llu lists, %llu watches, %llu watch errors\n", (unsigned long long)s.lists,
                (unsigned long long)s.watches, (unsigned long long)s.watch_errors);
  assert_int_equal(po_Informer_Count(inf), 60);
  assert_true(s.watch_errors >= 1);
  stop_informer(inf, &m);
}

static int setup_restart(void **state) { return start_server(NULL, true); }

/* ---- failover: two processes, one Lease ------------------------------------------------------ */

/* Child: runs an elector; writes "leader" / "follower" into file on every change; on SIGTERM
 * stops and releases. Durations are short so the test is quick: 3 s / 2 s / 0.4 s. */
static volatile sig_atomic_t g_term;
static void on_term(int sig) { g_term = 1; }
static const char *g_state_file;
static void write_state(const char *s) {
  char tmp[512];
  snprintf(tmp, sizeof tmp, "%s.tmp", g_state_file);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  fprintf(f, "%s\n", s);
  fclose(f);
  rename(tmp, g_state_file);
}
static void el_start(void *ctx) { write_state("leader"); }
static void el_stop(void *ctx) { write_state("follower"); }

static int run_elector(const char *kubeconfig, const char *identity, const char *file) {
  g_state_file = file;
  signal(SIGTERM, on_term);
  po_KubeConfig *cfg;
  po_KubeClient *c;
  po_CtlStatus st;
  if (!po_KubeConfig_LoadFiles(kubeconfig, NULL, &cfg, &st) || !po_KubeClient_New(cfg, NULL, &c, &st)) {
    fprintf(stderr, "elector: %s\n", st.message);
    return 2;
  }
  po_LeaderElectionOptions o = {0};
  o.ns = "default";
  o.name = "po-failover";
  o.identity = identity;
  o.lease_duration_ns = 3000000000LL;
  o.renew_deadline_ns = 2000000000LL;
  o.retry_period_ns = 400000000LL;
  o.client = c;
  o.on_started_leading = el_start;
  o.on_stopped_leading = el_stop;
  po_LeaderElector *le;
  if (!po_LeaderElector_New(&o, &le, &st)) return 2;
  write_state("follower");
  po_LeaderElector_Start(le, &st);
  while (!g_term) sleep_ms(20);
  po_LeaderElector_Stop(le, true);
  po_LeaderElector_Free(le);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
  return 0;
}

static char g_self[512];

static pid_t spawn_elector(const char *identity, const char *file) {
  pid_t p = fork();
  if (p == 0) {
    execl(g_self, g_self, g_bin, "elect", g_srv.kubeconfig, identity, file, (char *)NULL);
    _exit(127);
  }
  return p;
}

static bool is_state(const char *file, const char *want) {
  FILE *f = fopen(file, "r");
  if (!f) return false;
  char b[32] = "";
  bool ok = fgets(b, sizeof b, f) && strncmp(b, want, strlen(want)) == 0;
  fclose(f);
  return ok;
}

static double wait_state(const char *file, const char *want, double timeout_s) {
  double t0 = now_s();
  while (now_s() - t0 < timeout_s) {
    if (is_state(file, want)) return now_s() - t0;
    sleep_ms(20);
  }
  return -1;
}

static void test_failover(void **state) {
  char fa[400], fb[400], fc[400];
  snprintf(fa, sizeof fa, "%s/a.state", g_srv.dir);
  snprintf(fb, sizeof fb, "%s/b.state", g_srv.dir);
  snprintf(fc, sizeof fc, "%s/c.state", g_srv.dir);
  pid_t a = spawn_elector("replica-a", fa);
  assert_true(wait_state(fa, "leader", 20) >= 0);
  pid_t b = spawn_elector("replica-b", fb);
  assert_true(wait_state(fb, "follower", 20) >= 0);
  sleep_ms(1000); /* a renews; b waits */
  /* a dies without releasing: b takes over once the lease (3 s) expires. */
  kill(a, SIGKILL);
  waitpid(a, NULL, 0);
  double t = wait_state(fb, "leader", 20);
  print_message("failover after a crash: b leads %.2f s after a died (lease 3 s)\n", t);
  assert_true(t >= 0);
  /* c waits; b shuts down cleanly and releases: c leads well before a lease duration. */
  pid_t c = spawn_elector("replica-c", fc);
  assert_true(wait_state(fc, "follower", 20) >= 0);
  sleep_ms(500);
  kill(b, SIGTERM);
  double t0 = now_s();
  int status;
  waitpid(b, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  t = wait_state(fc, "leader", 20);
  print_message("handover after a release: c leads %.2f s after b's SIGTERM\n", t >= 0 ? now_s() - t0 : t);
  assert_true(t >= 0);
  kill(c, SIGTERM);
  waitpid(c, NULL, 0);
}

static int setup_failover(void **state) { return start_server(NULL, false); }

/* ---- the cold start's list (issue 26) ------------------------------------------------------ */

#ifdef PO_COUNT_ALLOCS

typedef struct {
  po_KubeClient *c;
  const char *ns;
  int from, to;
} CmRange;

static void *apply_range(void *arg) {
  CmRange *r = arg;
  for (int i = r->from; i < r->to; i++) apply_cm(r->c, r->ns, i);
  return NULL;
}

static void apply_many(po_KubeClient *c, const char *ns, int n) {
  enum { kThreads = 4 };
  pthread_t t[kThreads];
  CmRange r[kThreads];
  for (int k = 0; k < kThreads; k++) {
    r[k] = (CmRange){c, ns, n * k / kThreads, n * (k + 1) / kThreads};
    assert_int_equal(pthread_create(&t[k], NULL, apply_range, &r[k]), 0);
  }
  for (int k = 0; k < kThreads; k++) pthread_join(t[k], NULL);
}

static void count_add(void *ctx, json_object *obj) {
  (void)obj;
  atomic_fetch_add((atomic_int *)ctx, 1);
}

/* Allocations from an informer's start until its cache has synced: the initial list of ns (and
 * the start of its watch, a few hundred at most). */
static uint64_t cold_list_allocs(po_KubeClient *c, const char *ns, int n) {
  atomic_int adds = 0;
  po_InformerOptions io = {0};
  io.ref = kCm;
  io.ref.ns = ns;
  po_InformerHandlers h = {.on_add = count_add, .ctx = &adds};
  po_Informer *inf;
  po_CtlStatus st;
  assert_true(po_Informer_New(c, &io, &h, &inf, &st));
  uint64_t before = atomic_load(&g_allocs);
  assert_true(po_Informer_Start(inf, &st));
  assert_true(po_Informer_WaitForSync(inf, 60000));
  uint64_t used = atomic_load(&g_allocs) - before;
  assert_int_equal(atomic_load(&adds), n);
  assert_int_equal(po_Informer_Count(inf), (size_t)n);
  po_Informer_Free(inf);
  return used;
}

/* A cold start's list costs the same per object at 5,000 as at 500 (counted, not timed: its
 * allocations, malloc and free having been 41% of a cold start's CPU), and about one parse of
 * the object as cached (without its managedFields) each: the page is read item by item from the
 * server's bytes, managedFields cut before the parse, and each item goes to the cache and the
 * handlers with that one tree. It was parsed whole (managedFields too) in the page's tree,
 * serialised for the cache, then parsed once more for the handlers: 4-5 such parses' worth. */
static void test_informer_cold_list_flat(void **state) {
  (void)state;
  po_KubeClient *c = g_client;
  enum { kSmall = 500, kLarge = 5000 };
  make_ns(c, "cold-small");
  make_ns(c, "cold-large");
  apply_many(c, "cold-small", kSmall);
  apply_many(c, "cold-large", kLarge);
  /* The yardstick: one parse of an object as the cache keeps it. */
  po_KubeRef r = kCm;
  r.ns = "cold-small";
  r.name = "cm-0001";
  json_object *one = NULL, *md = NULL;
  po_CtlStatus st;
  assert_true(po_KubeClient_Get(c, &r, &one, &st));
  assert_true(json_object_object_get_ex(one, "metadata", &md));
  assert_true(json_object_object_get_ex(md, "managedFields", NULL)); /* the premise */
  json_object_object_del(md, "managedFields");
  const char *text = json_object_to_json_string_ext(one, JSON_C_TO_STRING_PLAIN);
  uint64_t before = atomic_load(&g_allocs);
  json_object *again = json_tokener_parse(text);
  assert_non_null(again);
  json_object_put(again);
  double parse = (double)(atomic_load(&g_allocs) - before);
  json_object_put(one);
  double small = (double)cold_list_allocs(c, "cold-small", kSmall) / kSmall;
  double large = (double)cold_list_allocs(c, "cold-large", kLarge) / kLarge;
  print_message("cold list: %.1f allocations per object at %d, %.1f at %d; one parse of an object as cached %.0f\n",
                small, kSmall, large, kLarge, parse);
  assert_true(large <= small * 1.10 && large >= small * 0.90);
  /* That parse, the cache entry, a share of each page's buffer: under one and a half parses. */
  assert_true(large <= parse * 1.5);
}

#endif

/* A stop while the informer waits for the client's rate limiter (a low --kube-api-qps) ends that
 * wait: it used to wait out the token (a minute here) before the thread could be joined. */
static void test_informer_stop_in_rate_limit(void **state) {
  (void)state;
  po_KubeClientOptions o = {0};
  o.qps = 1.0 / 60; /* one token a minute */
  o.burst = 1;
  po_KubeClient *c;
  po_CtlStatus st;
  assert_true(po_KubeClient_New(g_cfg, &o, &c, &st));
  po_InformerOptions io = {0};
  io.ref = kCm;
  io.ref.ns = "kube-system";
  po_InformerHandlers h = {0};
  po_Informer *inf;
  assert_true(po_Informer_New(c, &io, &h, &inf, &st));
  assert_true(po_Informer_Start(inf, &st));
  assert_true(po_Informer_WaitForSync(inf, 10000)); /* the list took the one token */
  sleep_ms(300);                                    /* the watch waits for the next */
  double t0 = now_s();
  po_Informer_Stop(inf);
  double took = now_s() - t0;
  print_message("stopped in %.3f s while waiting for a token\n", took);
  assert_true(took < 5.0);
  po_Informer_Free(inf);
  po_KubeClient_Free(c);
}

int main(int argc, char **argv) {
  if (argc >= 6 && strcmp(argv[2], "elect") == 0) return run_elector(argv[3], argv[4], argv[5]);
  if (argc < 3) {
    fprintf(stderr, "usage: %s PO_APISERVER rest|churn|restart|failover\n", argv[0]);
    return 2;
  }
  g_bin = argv[1];
  if (!realpath(argv[0], g_self)) snprintf(g_self, sizeof g_self, "%s", argv[0]);
  signal(SIGPIPE, SIG_IGN);
  const char *which = argv[2];
  if (strcmp(which, "rest") == 0) {
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_rest_verbs), cmocka_unit_test(test_rest_list_pagination_selectors),
        cmocka_unit_test(test_rest_status_subresource), cmocka_unit_test(test_rest_retries_and_auth), cmocka_unit_test(test_rest_fake_clock_delays),
        cmocka_unit_test(test_rest_threads), cmocka_unit_test(test_rest_pooled_handle_verbs),
        cmocka_unit_test(test_informer_transform), cmocka_unit_test(test_informer_store_bounded),
        cmocka_unit_test(test_informer_compressed), cmocka_unit_test(test_informer_packs_late),
        cmocka_unit_test(test_informer_packs_late_bounded),
        cmocka_unit_test(test_informer_own_version),
#ifdef PO_COUNT_ALLOCS
        cmocka_unit_test(test_informer_cold_list_flat),
        cmocka_unit_test(test_informer_get_unreadable),
#endif
        cmocka_unit_test(test_informer_stop_in_rate_limit),
    };
    return cmocka_run_group_tests_name("rest", t, setup_rest, stop_server);
  }
  if (strcmp(which, "churn") == 0) {
    const struct CMUnitTest t[] = {cmocka_unit_test(test_churn), cmocka_unit_test(test_churn_packs_late)};
    return cmocka_run_group_tests_name("churn", t, setup_churn, stop_server);
  }
  if (strcmp(which, "restart") == 0) {
    const struct CMUnitTest t[] = {cmocka_unit_test(test_restart)};
    return cmocka_run_group_tests_name("restart", t, setup_restart, stop_server);
  }
  if (strcmp(which, "failover") == 0) {
    const struct CMUnitTest t[] = {cmocka_unit_test(test_failover)};
    return cmocka_run_group_tests_name("failover", t, setup_failover, stop_server);
  }
  fprintf(stderr, "unknown scenario %s\n", which);
  return 2;
}
