/* Objects nested as deep as the API server stores them (kPo_KubeMaxObjectDepth: 10,000 levels,
 * Go's encoding/json limit, which sigs.k8s.io/json keeps) go through every parser of the API
 * server's answers: a list's body (po_Kube_ParseJson_), a watch stream (po_WatchParser) and the
 * informer's cache. Before issue 21 (F1) the parsers stopped at 256: one PropertyOverride whose
 * status.lastValid.spec was patched 300 deep failed the list and watch of every PropertyOverride,
 * and a restarted controller never became ready. Then json-c's recursive walkers (serialize, deep
 * copy, equal, put) on a thread with the workers' stack (kPo_ControllerWorkerStackBytes): they
 * must not overflow it. */
#include <json-c/json.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "client_internal.h"
#include "po/kube/client.h"
#include "po/kube/config.h"
#include "po/kube/informer.h"
#include "po/kube/watch_parser.h"

/* {"a":{"a":...1...}} nested `depth` levels (the outermost object counts) */
static char *nested(int depth) {
  size_t n = (size_t)depth * 6 + 16;
  char *s = malloc(n), *p = s;
  assert_non_null(s);
  for (int i = 0; i < depth; i++) p += sprintf(p, "{\"a\":");
  p += sprintf(p, "1");
  for (int i = 0; i < depth; i++) *p++ = '}';
  *p = 0;
  return s;
}

/* A PropertyOverride whose whole text nests `depth` levels: its status.lastValid.spec.x holds the
 * rest (the object, status, lastValid, spec: four levels). */
static char *deep_po(const char *name, int depth) {
  char *x = nested(depth - 4);
  size_t n = strlen(x) + 256;
  char *s = malloc(n);
  assert_non_null(s);
  snprintf(s, n, "{\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"%s\"},\"status\":{\"lastValid\":{\"spec\":{\"x\":%s}}}}", name, x);
  free(x);
  return s;
}

static void test_list_at_the_api_servers_depth(void **state) {
  (void)state;
  char *deep = deep_po("deep", kPo_KubeMaxObjectDepth);
  size_t n = strlen(deep) + 256;
  char *body = malloc(n);
  assert_non_null(body);
  snprintf(body, n, "{\"kind\":\"PropertyOverrideList\",\"items\":[%s,{\"metadata\":{\"name\":\"other\"}}]}", deep);
  json_object *o = NULL;
  po_CtlStatus st = {0};
  assert_true(po_Kube_ParseJson_(body, strlen(body), &o, "GET", &st));
  json_object *items = json_object_object_get(o, "items");
  assert_int_equal(json_object_array_length(items), 2);
  json_object_put(o);
  free(body);
  free(deep);
}

static int g_events;
static bool count(void *ctx, po_KubeWatchEventType type, struct json_object *object) {
  (void)ctx;
  (void)type;
  if (object) g_events++;
  return true;
}

static void test_watch_at_the_api_servers_depth(void **state) {
  (void)state;
  char *deep = deep_po("deep", kPo_KubeMaxObjectDepth);
  size_t n = strlen(deep) + 256;
  char *ev = malloc(n);
  assert_non_null(ev);
  int k = snprintf(ev, n, "{\"type\":\"MODIFIED\",\"object\":%s}\n{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"other\"}}}\n", deep);
  po_WatchParser *p = po_WatchParser_New(0);
  assert_non_null(p);
  po_CtlStatus st = {0};
  g_events = 0;
  assert_int_equal(po_WatchParser_Feed(p, ev, (size_t)k, count, NULL, &st), kPo_WatchFeed_More);
  assert_int_equal(g_events, 2);
  po_WatchParser_Free(p);
  free(ev);
  free(deep);
}

/* The walkers a reconcile uses on a cached object, at the API server's depth, on a stack the size
 * of a worker's. */
static void *walk(void *arg) {
  const char *text = arg;
  json_tokener *t = json_tokener_new_ex(kPo_KubeMaxJsonDepth);
  json_object *o = t ? json_tokener_parse_ex(t, text, (int)strlen(text)) : NULL;
  bool ok = o && json_tokener_get_error(t) == json_tokener_success;
  json_object *c = NULL;
  ok = ok && json_object_deep_copy(o, &c, NULL) == 0 && json_object_equal(o, c);
  const char *s = ok ? json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN) : NULL;
  ok = ok && s && strcmp(s, text) == 0;
  json_object_put(c);
  json_object_put(o);
  json_tokener_free(t);
  return ok ? arg : NULL;
}

static void test_walkers_on_a_workers_stack(void **state) {
  (void)state;
  char *deep = deep_po("deep", kPo_KubeMaxObjectDepth);
  pthread_attr_t a;
  assert_int_equal(pthread_attr_init(&a), 0);
  /* the workers' stack, which the controller sets (controller/runtime/src/controller.c) */
  assert_int_equal(pthread_attr_setstacksize(&a, (size_t)8 << 20), 0);
  pthread_t th;
  void *ret = NULL;
  assert_int_equal(pthread_create(&th, &a, walk, deep), 0);
  assert_int_equal(pthread_join(th, &ret), 0);
  assert_ptr_equal(ret, deep);
  pthread_attr_destroy(&a);
  free(deep);
}

/* Deeper than the API server stores: refused with the tokener's words, not a crash. */
static void test_deeper_than_the_api_server_is_refused(void **state) {
  (void)state;
  char *deep = nested(kPo_KubeMaxJsonDepth + 1);
  json_object *o = NULL;
  po_CtlStatus st = {0};
  assert_false(po_Kube_ParseJson_(deep, strlen(deep), &o, "GET", &st));
  assert_null(o);
  assert_non_null(strstr(st.message, "nesting too deep"));
  free(deep);
}

/* An informer whose list keeps failing says why (po_Informer_LastError, which the readiness
 * reason shows), where before it retried silently: a controller that never became ready logged
 * nothing. The list is refused here by a port nothing listens on. */
static void test_failed_list_says_why(void **state) {
  (void)state;
  static const char kConfig[] =
      "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster: {server: 'http://127.0.0.1:1'}\n"
      "contexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user: {token: t}\n";
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st = {0};
  assert_true(po_KubeConfig_ParseYaml(kConfig, sizeof kConfig - 1, "test", NULL, &cfg, &st));
  po_KubeClientOptions co = {.max_retries = -1, .connect_timeout_ms = 1000, .timeout_ms = 2000};
  po_KubeClient *c = NULL;
  assert_true(po_KubeClient_New(cfg, &co, &c, &st));
  po_InformerOptions io = {.ref = {"propertyoverride.io", "v1alpha1", "propertyoverrides", NULL, NULL, NULL},
                           .backoff_initial_ns = 50000000, .backoff_max_ns = 100000000};
  po_InformerHandlers h = {0};
  po_Informer *inf = NULL;
  assert_true(po_Informer_New(c, &io, &h, &inf, &st));
  char why[400] = "";
  assert_false(po_Informer_LastError(inf, why, sizeof why));
  assert_true(po_Informer_Start(inf, &st));
  bool said = false;
  for (int i = 0; i < 100 && !said; i++) {
    said = po_Informer_LastError(inf, why, sizeof why);
    if (!said) nanosleep(&(struct timespec){0, 50000000}, NULL);
  }
  po_Informer_Stop(inf);
  assert_true(said);
  assert_false(po_Informer_HasSynced(inf));
  assert_non_null(strstr(why, "list propertyoverrides: "));
  po_Informer_Free(inf);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_at_the_api_servers_depth),
      cmocka_unit_test(test_watch_at_the_api_servers_depth),
      cmocka_unit_test(test_walkers_on_a_workers_stack),
      cmocka_unit_test(test_deeper_than_the_api_server_is_refused),
      cmocka_unit_test(test_failed_list_says_why),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
