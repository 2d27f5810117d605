/* controller/app: the process is built, run and freed without globals, and every thread it
 * starts is stopped by the manager (the certificate renewal used to be a detached thread that
 * slept 12 hours at a time and that nothing stopped). The API server is an address where
 * nothing listens (127.0.0.1:1): every request fails at once, which is all these tests need. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_internal.h"
#include "po/runtime/clock.h"
#include "po/runtime/controller.h"
#include "po/runtime/workqueue.h"
#include <json-c/json.h>

static char kubeconfig[64];

static int write_kubeconfig(void **state) {
  (void)state;
  snprintf(kubeconfig, sizeof kubeconfig, "/tmp/po-test-app-XXXXXX");
  int fd = mkstemp(kubeconfig);
  if (fd < 0) return -1;
  static const char text[] =
      "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
      "clusters: [{name: t, cluster: {server: 'http://127.0.0.1:1'}}]\n"
      "users: [{name: t, user: {token: x}}]\n"
      "contexts: [{name: t, context: {cluster: t, user: t, namespace: ops}}]\n";
  ssize_t n = write(fd, text, sizeof text - 1);
  close(fd);
  return n == (ssize_t)(sizeof text - 1) ? 0 : -1;
}

static int remove_kubeconfig(void **state) {
  (void)state;
  unlink(kubeconfig);
  return 0;
}

static int64_t now_ns(void) { return po_RtClock_Now(po_RtClock_Real()); }

static size_t count(FILE *f, const char *needle) {
  fflush(f);
  long end = ftell(f);
  char *buf = calloc(1, (size_t)end + 1);
  rewind(f);
  size_t got = fread(buf, 1, (size_t)end, f);
  fseek(f, end, SEEK_SET);
  size_t n = 0;
  for (const char *p = buf; got && (p = strstr(p, needle)); p++) n++;
  free(buf);
  return n;
}

static po_KubeClient *client(po_KubeConfig **cfg) {
  po_CtlStatus ks;
  po_CtlStatus_Clear(&ks);
  assert_true(po_KubeConfig_Load(&(po_KubeConfigOptions){.kubeconfig = kubeconfig}, cfg, &ks));
  po_KubeClient *c = NULL;
  assert_true(po_KubeClient_New(*cfg, &(po_KubeClientOptions){0}, &c, &ks));
  return c;
}

/* The renewal checks every interval and its stop ends the thread at once, mid-wait. */
static void test_renewal_runs_and_stops(void **state) {
  (void)state;
  po_KubeConfig *cfg;
  po_KubeClient *c = client(&cfg);
  FILE *out = tmpfile();
  po_Logger *log = po_Logger_New(&(po_LoggerOptions){.out = out, .level = kPo_LogLevel_Debug});
  po_SelfCertOptions sc = {.ns = "ops", .secret = "s", .service = "svc", .webhook_config = "vwc", .dir = "/nonexistent"};
  po_Renewal r;
  assert_true(po_Renewal_Init(&r, c, &sc, log, 20 * PO_NS_PER_MS));
  po_Runnable run = po_Renewal_Runnable(&r);
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_true(run.start(run.ctx, &st));
  int64_t give_up = now_ns() + 60 * PO_NS_PER_S; /* generous: a busy machine */
  while (count(out, "renewing the webhook certificates") < 2 && now_ns() < give_up) usleep(10000);
  assert_true(count(out, "renewing the webhook certificates") >= 2);
  assert_true(run.stop(run.ctx, now_ns() + 10 * PO_NS_PER_S));
  size_t after = count(out, "renewing the webhook certificates");
  usleep(100000); /* five intervals: nothing runs any more */
  assert_int_equal(count(out, "renewing the webhook certificates"), after);
  po_Renewal_Destroy(&r);
  po_Logger_Free(log);
  fclose(out);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
}

/* With the default 12 hours the stop does not wait for the next check. */
static void test_renewal_stop_interrupts_the_wait(void **state) {
  (void)state;
  po_KubeConfig *cfg;
  po_KubeClient *c = client(&cfg);
  po_SelfCertOptions sc = {.ns = "ops", .secret = "s", .service = "svc", .webhook_config = "vwc", .dir = "/nonexistent"};
  po_Renewal r;
  assert_true(po_Renewal_Init(&r, c, &sc, NULL, 12 * 3600 * PO_NS_PER_S));
  po_Runnable run = po_Renewal_Runnable(&r);
  assert_true(run.stop_early);
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_true(run.start(run.ctx, &st));
  usleep(20000);
  int64_t t0 = now_ns();
  assert_true(run.stop(run.ctx, t0 + 10 * PO_NS_PER_S));
  assert_true(now_ns() - t0 < 10 * PO_NS_PER_S);
  assert_true(run.stop(run.ctx, now_ns())); /* idempotent */
  po_Renewal_Destroy(&r);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
}

/* A configuration that cannot work is a failure to start that names the cause. */
static void test_new_reports_bad_configuration(void **state) {
  (void)state;
  po_AppOptions o;
  po_AppOptions_Init(&o);
  o.kubeconfig = "/nonexistent/kubeconfig";
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_null(po_App_New(&o, &st));
  assert_true(st.code == kPo_Ctl_Io || st.code == kPo_Ctl_Config); /* the client's code, kept */
  assert_non_null(strstr(st.message, "/nonexistent/kubeconfig"));

  po_AppOptions_Init(&o);
  o.kubeconfig = kubeconfig;
  o.webhook_address = "0";
  o.probe_address = "not-an-address";
  po_CtlStatus_Clear(&st);
  assert_null(po_App_New(&o, &st)); /* everything built so far is freed again (ASan, valgrind) */
  assert_int_not_equal(st.code, kPo_Ctl_Ok);

  /* a mesh release without an Envoy API snapshot: the start fails naming those there are */
  static const struct {
    const char *consul;
    int istio;
    const char *eg;
    const char *want;
  } kReleases[] = {
      {"1.19", 0, NULL, "--consul-version '1.19': not a release this build knows; Consul releases with an Envoy API "
                        "snapshot in this build: 1.21, 1.22 (default 1.22)"},
      {NULL, 25, NULL, "--istio-version '1.25': not a release this build knows; Istio releases with an Envoy API "
                       "snapshot in this build: 1.26, 1.27, 1.28, 1.29, 1.30, 1.31 (default 1.31)"},
      {NULL, 0, "v1.4.2", "--envoy-gateway-version 'v1.4.2': not a release this build knows; Envoy Gateway releases with "
                          "an Envoy API snapshot in this build: 1.5, 1.6, 1.7, 1.8, 1.9 (default 1.9)"},
      {"one", 0, NULL, "--consul-version 'one': a release such as 1.22 or 1.22.3 is expected; Consul releases with an "
                       "Envoy API snapshot in this build: 1.21, 1.22 (default 1.22)"},
  };
  for (size_t i = 0; i < sizeof kReleases / sizeof kReleases[0]; i++) {
    po_AppOptions_Init(&o);
    o.kubeconfig = kubeconfig;
    o.webhook_address = "0";
    o.probe_address = "0";
    o.istio = o.envoy_gateway = kPo_IstioMode_Off;
    o.consul_version = kReleases[i].consul;
    o.istio_minor = kReleases[i].istio;
    o.envoy_gateway_version = kReleases[i].eg;
    po_CtlStatus_Clear(&st);
    assert_null(po_App_New(&o, &st));
    assert_int_equal(st.code, kPo_Ctl_Usage);
    assert_string_equal(st.message, kReleases[i].want);
  }
}

/* Issue 27: --envoy-gateway=auto with an API server that cannot be asked (nothing listens at the
 * kubeconfig's address: connection refused, after the client's retries) is no answer about
 * EnvoyPatchPolicies: the start fails saying so, where Envoy Gateway was silently turned off for
 * the process's life. --istio=auto only logs it (istio-detection asks again). */
static void test_eg_auto_unreachable_fails_start(void **state) {
  (void)state;
  po_AppOptions o;
  po_AppOptions_Init(&o);
  o.kubeconfig = kubeconfig;
  o.webhook_address = "0";
  o.probe_address = "0";
  o.log_level = kPo_LogLevel_Error;
  o.envoy_gateway = kPo_IstioMode_Auto;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_null(po_App_New(&o, &st));
  assert_int_equal(st.code, kPo_Ctl_Start);
  assert_non_null(strstr(st.message, "--envoy-gateway=auto: could not tell whether the API server serves "
                                     "EnvoyPatchPolicies (GET http://127.0.0.1:1/apis/gateway.envoyproxy.io/"));
  assert_non_null(strstr(st.message, "Couldn't connect to server); not starting"));
  assert_non_null(strstr(st.message, "pass --envoy-gateway=on or off"));
}

static void *send_sigterm(void *arg) {
  (void)arg;
  usleep(200000);
  kill(getpid(), SIGTERM);
  return NULL;
}

/* Two apps in one process, one after the other (nothing static survives the first), each built,
 * run until SIGTERM, stopped in order and freed. The caches never sync here: the leader waits
 * for them at most 10 s in all (it was 10 s per informer, 30 s, past the 20 s stop deadline),
 * and without leader election the replica leads at
 * once from a thread that Free joins. */
static void test_two_apps_run_and_stop(void **state) {
  (void)state;
  for (int round = 0; round < 2; round++) {
    po_AppOptions o;
    po_AppOptions_Init(&o);
    o.kubeconfig = kubeconfig;
    o.webhook_address = "0";
    o.probe_address = "127.0.0.1:0";
    o.leader_elect = round == 1;
    o.log_level = kPo_LogLevel_Error;
    o.grace_s = 20;
    o.envoy_gateway = kPo_IstioMode_Off; /* no API server: auto would fail the start (test_eg_auto_unreachable_fails_start) */
    po_CtlStatus st;
    po_CtlStatus_Clear(&st);
    po_App *app = po_App_New(&o, &st);
    assert_non_null(app);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, send_sigterm, NULL), 0);
    assert_int_equal(po_App_Run(app), 0);
    pthread_join(t, NULL);
    po_App_Free(app);
  }
}

/* Issue 10: informer events on one target within the batching window are one queued key, not
 * one reconcile each (a burst of N PropertyOverrides re-planned the whole target N times). The
 * controller is never started, so the queue shows what the events did: with a window the key
 * waits (once, however many events), without one it is ready at once. The window is 60 s so a
 * busy machine cannot let it pass during the test. */
static po_App *batching_app(double window_s, double burst_max_s) {
  po_AppOptions o;
  po_AppOptions_Init(&o);
  o.kubeconfig = kubeconfig;
  o.webhook_address = "0";
  o.probe_address = "0";
  o.leader_elect = false;
  o.log_level = kPo_LogLevel_Error;
  o.target_batch_window_s = window_s;
  o.target_burst_quiet_s = 60; /* every event of a test is in one burst */
  o.target_burst_max_s = burst_max_s;
  o.envoy_gateway = kPo_IstioMode_Off; /* no API server: auto would fail the start */
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_App *app = po_App_New(&o, &st);
  assert_non_null(app);
  atomic_store(&app->gate.live, true); /* as once its workers started: the handlers queue */
  return app;
}

static json_object *override_obj(const char *name, const char *target) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"u-%s\",\"generation\":1},"
           "\"spec\":{\"targetRef\":{\"name\":\"%s\"},\"patches\":[]}}",
           name, name, target);
  json_object *o = json_tokener_parse(text);
  assert_non_null(o);
  return o;
}

static size_t drain(po_Workqueue *q, char keys[][128], size_t cap);
static void deliver_update(const po_InformerHandlers *h, json_object *old, json_object *now);

/* A copy of o whose status someone else wrote (n): an update its target's reconcile must see. */
static json_object *restatused(json_object *o, int n) {
  json_object *c = NULL;
  assert_int_equal(json_object_deep_copy(o, &c, NULL), 0);
  json_object *st = json_object_new_object();
  json_object_object_add(st, "by", json_object_new_int(n));
  json_object_object_add(c, "status", st);
  return c;
}

static void test_events_on_one_target_batch(void **state) {
  (void)state;
  po_App *app = batching_app(60, 0);
  po_InformerHandlers h = po_App_Handlers(app, kPo_AppWatch_Overrides);
  po_InformerHandlers sd = po_App_Handlers(app, kPo_AppWatch_ServiceDefaults);
  for (int i = 0; i < 50; i++) {
    char name[32];
    snprintf(name, sizeof name, "po-%d", i);
    json_object *o = override_obj(name, i % 2 ? "web" : "api"), *o2 = restatused(o, 1);
    h.on_add(h.ctx, o);
    deliver_update(&h, o, o2);
    json_object_put(o);
    json_object_put(o2);
  }
  po_Workqueue *q = po_Controller_Queue(app->controller);
  /* 100 events, two quiet targets: each queued at once, once (the events after the first find
   * it waiting) */
  assert_int_equal(po_Workqueue_Len(q), 2);
  assert_int_equal(po_Workqueue_WaitingLen(q), 0);
  char keys[4][128];
  assert_int_equal(drain(q, keys, 4), 2);
  /* Just run: the next events wait for the window after that run's start, all of them one key. */
  for (int i = 0; i < 10; i++) {
    json_object *o = override_obj("po-1", "web"), *o2 = restatused(o, 2 + i);
    deliver_update(&h, o, o2);
    json_object_put(o);
    json_object_put(o2);
  }
  assert_int_equal(po_Workqueue_Len(q), 0);
  assert_int_equal(po_Workqueue_WaitingLen(q), 1);
  /* A change of the target itself (drift) is not batched: repaired at once. */
  json_object *target = json_tokener_parse("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"web\"}}");
  sd.on_update(sd.ctx, target, target);
  assert_int_equal(po_Workqueue_Len(q), 1);
  /* Nor is its deletion: the PropertyOverrides pointing at it re-create it. */
  assert_int_equal(drain(q, keys, 4), 1);
  sd.on_delete(sd.ctx, target);
  json_object_put(target);
  assert_int_equal(drain(q, keys, 4), 1);
  assert_string_equal(keys[0], "ServiceDefaults/ns/web");
  po_App_Free(app);

  app = batching_app(0, 0); /* off: every event queues its target at once (deduplicated) */
  h = po_App_Handlers(app, kPo_AppWatch_Overrides);
  json_object *o = override_obj("po-0", "api");
  h.on_add(h.ctx, o);
  json_object_put(o);
  q = po_Controller_Queue(app->controller);
  assert_int_equal(po_Workqueue_Len(q), 1);
  assert_int_equal(po_Workqueue_WaitingLen(q), 0);
  po_App_Free(app);
}

/* What the informer hands the handlers for an update: with on_update_version, what its cache
 * recorded of the old object (as the informer's entry_of reads it); else the old object only when
 * the handlers ask for it (po_InformerHandlers.no_old_object). */
static void deliver_update(const po_InformerHandlers *h, json_object *old, json_object *now) {
  if (h->on_update_version) {
    json_object *m = NULL, *g = NULL, *d = NULL, *rv = NULL, *uid = NULL;
    json_object_object_get_ex(old, "metadata", &m);
    json_object_object_get_ex(m, "generation", &g);
    json_object_object_get_ex(m, "resourceVersion", &rv);
    json_object_object_get_ex(m, "uid", &uid);
    po_InformerVersion v = {.generation = g && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0,
                            .deleting = json_object_object_get_ex(m, "deletionTimestamp", &d)};
    snprintf(v.rv, sizeof v.rv, "%s", rv && json_object_is_type(rv, json_type_string) ? json_object_get_string(rv) : "");
    snprintf(v.uid, sizeof v.uid, "%s", uid && json_object_is_type(uid, json_type_string) ? json_object_get_string(uid) : "");
    h->on_update_version(h->ctx, &v, now);
    return;
  }
  h->on_update(h->ctx, h->no_old_object ? NULL : old, now);
}

static size_t drain(po_Workqueue *q, char keys[][128], size_t cap) {
  size_t n = 0;
  const char *k;
  while (po_Workqueue_TryGet(q, &k)) {
    if (n < cap) snprintf(keys[n], sizeof keys[n], "%s", k);
    n++;
    po_Workqueue_Done(q, k);
  }
  return n;
}

/* Part 2 of issue 11: the other side of a ProxyDefaults overlap is refreshed when what takes part
 * in overlaps changes (a new generation, a deletion), and only then: an update that changes
 * neither (a label, an annotation, a status written by someone else) queues its own target alone.
 * Each ProxyDefaults PropertyOverride's update queued every ServiceDefaults key with
 * PropertyOverrides, and each ServiceDefaults one's queued the ProxyDefaults, whose reconcile
 * reads every ServiceDefaults PropertyOverride: the overrides' informer never parsed the old
 * object, so the check for a changed generation always saw none and said "changed". */
/* The burst hold (--target-burst-quiet/--target-burst-max) reaches the queue: the first event
 * queues its target at once, the other target's events, within the burst, hold it (once);
 * a drift of the target itself is still repaired at once; no batching window, no hold. */
static void test_events_in_a_burst_hold_their_targets(void **state) {
  (void)state;
  po_App *app = batching_app(2, 60);
  po_InformerHandlers h = po_App_Handlers(app, kPo_AppWatch_Overrides);
  po_InformerHandlers sd = po_App_Handlers(app, kPo_AppWatch_ServiceDefaults);
  for (int i = 0; i < 20; i++) {
    char name[32];
    snprintf(name, sizeof name, "po-%d", i);
    json_object *o = override_obj(name, i % 2 ? "web" : "api");
    h.on_add(h.ctx, o);
    json_object_put(o);
  }
  po_Workqueue *q = po_Controller_Queue(app->controller);
  assert_int_equal(po_Workqueue_Len(q), 1);
  assert_int_equal(po_Workqueue_WaitingLen(q), 1);
  char keys[4][128];
  assert_int_equal(drain(q, keys, 4), 1);
  assert_string_equal(keys[0], "ServiceDefaults/ns/api");
  json_object *target = json_tokener_parse("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"web\"}}");
  sd.on_update(sd.ctx, target, target);
  json_object_put(target);
  assert_int_equal(drain(q, keys, 4), 1);
  assert_string_equal(keys[0], "ServiceDefaults/ns/web");
  assert_int_equal(po_Workqueue_WaitingLen(q), 0); /* the drift's run was the held one's */
  po_App_Free(app);
  app = batching_app(0, 60);
  h = po_App_Handlers(app, kPo_AppWatch_Overrides);
  for (int i = 0; i < 4; i++) {
    json_object *o = override_obj(i % 2 ? "b" : "a", i % 2 ? "web" : "api");
    h.on_add(h.ctx, o);
    json_object_put(o);
  }
  q = po_Controller_Queue(app->controller);
  assert_int_equal(po_Workqueue_Len(q), 2);
  assert_int_equal(po_Workqueue_WaitingLen(q), 0);
  po_App_Free(app);
}

static void test_related_targets_only_on_generation_or_deletion(void **state) {
  (void)state;
  po_App *app = batching_app(0, 0);
  po_InformerHandlers h = po_App_Handlers(app, kPo_AppWatch_Overrides);
  json_object *tune = json_tokener_parse(
      "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"tune\",\"uid\":\"u-tune\",\"generation\":1},"
      "\"spec\":{\"targetRef\":{\"kind\":\"ProxyDefaults\",\"name\":\"global\"},\"patches\":[]}}");
  json_object *web = override_obj("web-po", "web"), *api = override_obj("api-po", "api");
  h.on_add(h.ctx, tune);
  h.on_add(h.ctx, web);
  h.on_add(h.ctx, api);
  po_Workqueue *q = po_Controller_Queue(app->controller);
  char keys[8][128];
  assert_int_equal(drain(q, keys, 8), 3);
  /* a status someone else wrote on tune: same generation */
  json_object *tune2 = restatused(tune, 1), *web2 = NULL;
  deliver_update(&h, tune, tune2);
  size_t n = drain(q, keys, 8);
  for (size_t i = 0; i < n && i < 8; i++) printf("queued: %s\n", keys[i]);
  assert_int_equal(n, 1);
  assert_string_equal(keys[0], "ProxyDefaults/ns/global");
  /* the same on web's */
  web2 = restatused(web, 1);
  deliver_update(&h, web, web2);
  n = drain(q, keys, 8);
  assert_int_equal(n, 1);
  assert_string_equal(keys[0], "ServiceDefaults/ns/web");
  /* a new generation of tune: every ServiceDefaults side is refreshed */
  json_object_object_add(json_object_object_get(tune2, "metadata"), "generation", json_object_new_int(2));
  json_object *tune3 = NULL;
  json_object_deep_copy(tune2, &tune3, NULL);
  json_object_object_add(json_object_object_get(tune2, "metadata"), "generation", json_object_new_int(1));
  deliver_update(&h, tune2, tune3);
  assert_int_equal(drain(q, keys, 8), 3);
  /* web's deleted (same generation): its side of the overlap changes, the ProxyDefaults is
   * refreshed too; the informer gives the handler the old deletion from its cache
   * (po_InformerVersion.deleting), not by parsing the old object. */
  json_object *web3 = NULL;
  json_object_deep_copy(web2, &web3, NULL);
  json_object_object_add(json_object_object_get(web3, "metadata"), "deletionTimestamp",
                         json_object_new_string("2026-12-02T08:00:00Z"));
  deliver_update(&h, web2, web3);
  n = drain(q, keys, 8);
  assert_int_equal(n, 2);
  assert_true(strcmp(keys[0], "ProxyDefaults/ns/global") == 0 || strcmp(keys[1], "ProxyDefaults/ns/global") == 0);
  /* and a later update of the deleted object (same generation, still deleting) does not */
  json_object *web4 = restatused(web3, 2);
  deliver_update(&h, web3, web4);
  n = drain(q, keys, 8);
  assert_int_equal(n, 1);
  assert_string_equal(keys[0], "ServiceDefaults/ns/web");
  json_object_put(web3);
  json_object_put(web4);
  json_object_put(tune);
  json_object_put(tune2);
  json_object_put(tune3);
  json_object_put(web);
  json_object_put(web2);
  json_object_put(api);
  po_App_Free(app);
}

/* Issue 26: a PropertyOverride's update that changes nothing its target's reconcile reads (a
 * label, an annotation, managedFields, a new resourceVersion) queues nothing, and is counted in
 * propertyoverride_watch_events_ignored_total{reason="unchanged"}; its status written by someone
 * else does queue its target. */
static void test_unchanged_update_queues_nothing(void **state) {
  (void)state;
  po_App *app = batching_app(0, 0);
  po_InformerHandlers h = po_App_Handlers(app, kPo_AppWatch_Overrides);
  json_object *o = override_obj("po-0", "web"), *labelled = NULL;
  json_object_object_add(json_object_object_get(o, "metadata"), "resourceVersion", json_object_new_string("1"));
  h.on_add(h.ctx, o);
  po_Workqueue *q = po_Controller_Queue(app->controller);
  char keys[4][128];
  assert_int_equal(drain(q, keys, 4), 1);
  json_object_deep_copy(o, &labelled, NULL);
  json_object *meta = json_object_object_get(labelled, "metadata");
  json_object_object_add(meta, "labels", json_tokener_parse("{\"team\":\"x\"}"));
  json_object_object_add(meta, "annotations", json_tokener_parse("{\"note\":\"y\"}"));
  json_object_object_add(meta, "managedFields", json_tokener_parse("[{\"manager\":\"kubectl\"}]"));
  json_object_object_add(meta, "resourceVersion", json_object_new_string("2"));
  deliver_update(&h, o, labelled);
  assert_int_equal(drain(q, keys, 4), 0);
  assert_true(po_Series_Value(app->ignored[kPo_AppIgnored_Unchanged]) == 1);
  assert_true(po_Series_Value(app->enqueues[kPo_AppEnqueue_Override]) == 1); /* the add's */
  json_object *st = restatused(labelled, 1);
  deliver_update(&h, labelled, st);
  assert_int_equal(drain(q, keys, 4), 1);
  assert_string_equal(keys[0], "ServiceDefaults/ns/web");
  json_object_put(o);
  json_object_put(labelled);
  json_object_put(st);
  po_App_Free(app);
}

/* A canary upgrade has one istiod Service per revision: the oldest release among them judges
 * (adv-24: the first one listed won, here the canary's 1.31), whatever the order; every one seen
 * is said; a Service without the label or with an unknown release does not count. */
static void test_oldest_istiod_release(void **state) {
  (void)state;
  static const char kItems[] =
      "[{\"metadata\":{\"name\":\"istio-canary\",\"labels\":{\"app\":\"istiod\",\"app.kubernetes.io/version\":\"1.31.0\"}}},"
      "{\"metadata\":{\"name\":\"istiod\",\"labels\":{\"app\":\"istiod\",\"app.kubernetes.io/version\":\"1.28.2\"}}},"
      "{\"metadata\":{\"name\":\"istiod-bare\",\"labels\":{\"app\":\"istiod\"}}},"
      "{\"metadata\":{\"name\":\"istiod-1-40\",\"labels\":{\"app\":\"istiod\",\"app.kubernetes.io/version\":\"1.40.0-beta.1\"}}},"
      "{\"metadata\":{\"name\":\"istiod-1-30\",\"labels\":{\"app\":\"istiod\",\"app.kubernetes.io/version\":\"1.30.0-beta.0\"}}}]";
  json_object *items = json_tokener_parse(kItems);
  char why[768], seen[512];
  const po_MeshRelease *r = po_App_OldestRelease(kPo_Mesh_Istio, items, "app=istiod", why, sizeof why, seen, sizeof seen);
  assert_non_null(r);
  assert_string_equal(r->release, "1.28");
  assert_string_equal(seen, "istio-canary 1.31.0, istiod 1.28.2, istiod-bare (no label app.kubernetes.io/version), "
                            "istiod-1-40 1.40.0-beta.1 (not a release this build knows), istiod-1-30 1.30.0-beta.0");
  /* the same Services in the other order: the same answer */
  json_object *reversed = json_object_new_array();
  for (size_t i = json_object_array_length(items); i-- > 0;) {
    json_object_array_add(reversed, json_object_get(json_object_array_get_idx(items, i)));
  }
  r = po_App_OldestRelease(kPo_Mesh_Istio, reversed, "app=istiod", why, sizeof why, seen, sizeof seen);
  assert_non_null(r);
  assert_string_equal(r->release, "1.28");
  /* none usable: NULL, and why */
  json_object *bare = json_tokener_parse("[{\"metadata\":{\"name\":\"istiod\",\"labels\":{\"app\":\"istiod\"}}}]");
  assert_null(po_App_OldestRelease(kPo_Mesh_Istio, bare, "app=istiod", why, sizeof why, seen, sizeof seen));
  assert_string_equal(why, "the Service labelled app=istiod has no label app.kubernetes.io/version");
  assert_null(po_App_OldestRelease(kPo_Mesh_Istio, NULL, "app=istiod", why, sizeof why, seen, sizeof seen));
  assert_string_equal(why, "no Service labelled app=istiod");
  assert_string_equal(seen, "");
  json_object_put(items);
  json_object_put(reversed);
  json_object_put(bare);
}

/* Before the workers start, the handlers only index (the initial lists' 100,000 events used to
 * queue 100,000 times, each with a batching window's delayed copy that reconciled its target
 * again after the start's); the start then queues each target once, from the target informers'
 * keys and the index, before any worker runs. */
static void test_initial_list_indexes_then_start_queues_each_target_once(void **state) {
  (void)state;
  po_App *app = batching_app(60, 0);
  atomic_store(&app->gate.live, false); /* the caches are listing: no worker yet */
  po_InformerHandlers h = po_App_Handlers(app, kPo_AppWatch_Overrides);
  for (int i = 0; i < 50; i++) {
    char name[32];
    snprintf(name, sizeof name, "po-%02d", i);
    json_object *o = override_obj(name, i % 2 ? "web" : "api");
    h.on_add(h.ctx, o);
    json_object_put(o);
  }
  po_Workqueue *q = po_Controller_Queue(app->controller);
  assert_int_equal(po_Workqueue_Len(q), 0);
  assert_int_equal(po_Workqueue_WaitingLen(q), 0);
  assert_int_equal(po_TargetIndex_Count(app->index), 50);
  /* nothing hashed for the unchanged check: nothing reads it before each one's next event */
  assert_int_equal(po_TargetIndex_Stats(app->index).event_hashes, 0);
  atomic_store(&app->gate.live, true);
  po_App_EnqueueAll(app);
  char keys[4][128];
  assert_int_equal(drain(q, keys, 4), 2);
  assert_int_equal(po_Workqueue_WaitingLen(q), 0);
  assert_true((!strcmp(keys[0], "ServiceDefaults/ns/api") && !strcmp(keys[1], "ServiceDefaults/ns/web")) ||
              (!strcmp(keys[0], "ServiceDefaults/ns/web") && !strcmp(keys[1], "ServiceDefaults/ns/api")));
  /* so the first update after the start queues its target, even one that changed nothing a
   * reconcile reads (a label: judged against nothing recorded), and only the next is unchanged */
  json_object *o = override_obj("po-01", "web"), *labelled = NULL;
  json_object_deep_copy(o, &labelled, NULL);
  json_object_object_add(json_object_object_get(labelled, "metadata"), "labels", json_tokener_parse("{\"team\":\"x\"}"));
  deliver_update(&h, o, labelled);
  assert_true(po_Series_Value(app->enqueues[kPo_AppEnqueue_Override]) == 1);
  deliver_update(&h, labelled, o);
  assert_true(po_Series_Value(app->enqueues[kPo_AppEnqueue_Override]) == 1);
  assert_true(po_Series_Value(app->ignored[kPo_AppIgnored_Unchanged]) == 1);
  json_object_put(o);
  json_object_put(labelled);
  po_App_Free(app);
}

/* adv-guard: the live read before a finalizer goes (po_ReconcileIO.read_target) treats a
 * namespace this controller does not watch (--namespace) as get_target does: absent. It never
 * writes there (write_ref refuses it) and its cache never shows it, so an entry found there could
 * never be removed: the finalizer waited for good, a GET each retry. A watched namespace's target
 * is asked for (here the request fails: nothing listens). */
static void test_read_target_unwatched_namespace_absent(void **state) {
  (void)state;
  po_AppOptions o;
  po_AppOptions_Init(&o);
  o.kubeconfig = kubeconfig;
  o.webhook_address = "0";
  o.probe_address = "0";
  o.leader_elect = false;
  o.log_level = kPo_LogLevel_Error;
  o.envoy_gateway = kPo_IstioMode_Off;
  o.namespaces[0] = "ops";
  o.n_namespaces = 1;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_App *app = po_App_New(&o, &st);
  assert_non_null(app);
  po_ReconcileIO io = po_KubeIO_Table(&app->io);
  assert_non_null(io.read_target);
  assert_null(io.read_target(io.ctx, kPo_TargetKind_ServiceDefaults, "shop", "web", &st));
  assert_int_equal(st.code, kPo_Ctl_NotFound);
  assert_non_null(strstr(st.message, "namespace 'shop' is not watched"));
  assert_null(io.read_target(io.ctx, kPo_TargetKind_ProxyDefaults, "ops", "global", &st));
  assert_true(st.code != kPo_Ctl_Ok && st.code != kPo_Ctl_NotFound); /* asked: nothing answered */
  po_App_Free(app);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oldest_istiod_release),
      cmocka_unit_test(test_initial_list_indexes_then_start_queues_each_target_once),
      cmocka_unit_test(test_renewal_runs_and_stops),
      cmocka_unit_test(test_renewal_stop_interrupts_the_wait),
      cmocka_unit_test(test_new_reports_bad_configuration),
      cmocka_unit_test(test_eg_auto_unreachable_fails_start),
      cmocka_unit_test(test_two_apps_run_and_stop),
      cmocka_unit_test(test_events_on_one_target_batch),
      cmocka_unit_test(test_events_in_a_burst_hold_their_targets),
      cmocka_unit_test(test_related_targets_only_on_generation_or_deletion),
      cmocka_unit_test(test_unchanged_update_queues_nothing),
      cmocka_unit_test(test_read_target_unwatched_namespace_absent),
  };
  return cmocka_run_group_tests(tests, write_kubeconfig, remove_kubeconfig);
}
