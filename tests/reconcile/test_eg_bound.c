/* Envoy Gateway under a shared Gateway (issue 21, item 2): what other namespaces' HTTPRoutes can
 * add to a platform's EnvoyPatchPolicy is bounded.
 *
 * - routes followed: a PropertyOverride follows the HTTPRoutes of its own namespace and of the
 *   namespaces spec.routeNamespaces names; a tenant's routes attached through a listener that
 *   admits every namespace are left out (and said in Programmed);
 * - the bound: a policy's jsonPatches stay within kPo_EGMaxPolicyBytes, the Gateway's policies
 *   together within kPo_EGMaxGatewayBytes (every listener and route patch set aside first);
 *   routes get room own namespace first, then spec.routeNamespaces' in its order, then "*"'s,
 *   so a tenant's route never displaces the platform's; Programmed says the bound and that
 *   routes were left out, naming none (reason PolicyFull);
 * - memory: the write path's peak heap, counted by replacing the allocator in this binary (glibc
 *   lets a program define malloc and friends), stays within a few times the policy's size.
 *
 * Against the in-memory API server (fake_api.h); its own copies of what is written are not
 * counted (a real API server's memory is not ours), the client's serialization of it is. */
#include <json-c/json.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"
#include "mesh_test.h"
#include "po/meshes/eg.h"
#include "po/meshes/mesh.h"

/* ---- the allocator, counted ---- */

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static _Atomic long g_live, g_peak;
static _Atomic int g_paused;

static void note(long d) {
  if (atomic_load(&g_paused)) return;
  long now = atomic_fetch_add(&g_live, d) + d;
  long peak = atomic_load(&g_peak);
  while (now > peak && !atomic_compare_exchange_weak(&g_peak, &peak, now)) {
  }
}
static long usable(void *p) { return p ? (long)malloc_usable_size(p) : 0; }

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  note(usable(p));
  return p;
}
void *calloc(size_t n, size_t size) {
  void *p = __libc_calloc(n, size);
  note(usable(p));
  return p;
}
void *realloc(void *p, size_t n) {
  long before = usable(p);
  void *q = __libc_realloc(p, n);
  if (q || !n) note(usable(q) - before);
  return q;
}
void free(void *p) {
  note(-usable(p));
  __libc_free(p);
}

/* ---- the API server: what it stores is not ours; what the client sends is ---- */

static long g_sent; /* bytes of the last policy the client serialized */
static po_WriteResult counted_write(void *ctx, const char *ns, const char *name, json_object *o, bool create,
                                    const char *rv, json_object **written, po_CtlStatus *st) {
  Fake *fx = ctx;
  /* the client's cost: the request body (json-c keeps it in the object until it goes) */
  if (o) g_sent = (long)strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  atomic_fetch_add(&g_paused, 1);
  po_WriteResult w = fx->io.write_policy(ctx, ns, name, o, create, rv, written, st);
  atomic_fetch_sub(&g_paused, 1);
  /* the answer, parsed when asked for: a real client's tree of it, counted */
  if (written && *written) {
    json_object *mine = json_tokener_parse(json_object_to_json_string_ext(*written, JSON_C_TO_STRING_PLAIN));
    atomic_fetch_add(&g_paused, 1);
    json_object_put(*written);
    atomic_fetch_sub(&g_paused, 1);
    *written = mine;
  }
  return w;
}
static size_t g_whole, g_fetched; /* routes given whole by gateway_routes; routes fetched whole one at a time */
static json_object *counted_route(void *ctx, const char *ns, const char *name) {
  Fake *fx = ctx;
  g_fetched++;
  return fx->io.route(ctx, ns, name); /* the controller's cost: counted */
}
static json_object *counted_routes(void *ctx, const char *ns, const char *gateway, const char *const *whole, size_t n_whole) {
  Fake *fx = ctx;
  /* the stubs stand for the informer's cache (the same with or without a policy): not counted */
  atomic_fetch_add(&g_paused, 1);
  json_object *r = fx->io.gateway_routes(ctx, ns, gateway, whole, n_whole);
  for (size_t i = 0; r && i < json_object_array_length(r); i++) {
    g_whole += json_object_object_get(json_object_object_get(json_object_array_get_idx(r, i), "spec"), "rules") != NULL;
  }
  atomic_fetch_sub(&g_paused, 1);
  return r;
}
/* The fake lends a copy of what it reads (to check that nothing changes it); an informer lends
 * its own tree: neither copy nor its release is the controller's cost. */
static const json_object *lent_policy(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  atomic_fetch_add(&g_paused, 1);
  const json_object *o = fx->io.get_policy(ctx, ns, name, ref, st);
  atomic_fetch_sub(&g_paused, 1);
  return o;
}
static const json_object *lent_override(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  atomic_fetch_add(&g_paused, 1);
  const json_object *o = fx->io.get_override(ctx, ns, name, ref, st);
  atomic_fetch_sub(&g_paused, 1);
  return o;
}
static const json_object *lent_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  atomic_fetch_add(&g_paused, 1);
  const json_object *o = fx->io.get_target(ctx, kind, ns, name, ref, st);
  atomic_fetch_sub(&g_paused, 1);
  return o;
}
static void released(void *ctx, void *ref) {
  Fake *fx = ctx;
  atomic_fetch_add(&g_paused, 1);
  fx->io.release(ctx, ref);
  atomic_fetch_sub(&g_paused, 1);
}
static po_ReconcileIO g_io;
static po_ReconcileResult measured(Fake *fx, const char *key, long *peak) {
  g_io = fx->io;
  g_io.write_policy = counted_write;
  g_io.gateway_routes = counted_routes;
  g_io.route = fx->io.route ? counted_route : NULL;
  g_io.get_policy = lent_policy;
  g_io.get_override = lent_override;
  g_io.get_target = lent_target;
  g_io.release = released;
  long base = atomic_load(&g_live);
  atomic_store(&g_peak, base);
  po_ReconcileResult r = po_Reconcile(&g_io, fx->ix, key);
  *peak = atomic_load(&g_peak) - base;
  assert_int_equal(fx->lent, 0);
  return r;
}

/* ---- objects ---- */

static json_object *parse(const char *text) {
  json_object *o = json_tokener_parse(text);
  assert_non_null(o);
  return o;
}

/* Gateway default/eg: one HTTP listener admitting HTTPRoutes of every namespace. */
static void shared_gateway(Fake *fx) {
  put(fx, "Gateway/default/eg",
      parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"Gateway\",\"metadata\":{\"name\":\"eg\","
            "\"namespace\":\"default\"},\"spec\":{\"gatewayClassName\":\"eg\",\"listeners\":[{\"name\":\"http\","
            "\"protocol\":\"HTTP\",\"port\":80,\"allowedRoutes\":{\"namespaces\":{\"from\":\"All\"}}}]}}"));
}

/* HTTPRoute ns/name on Gateway default/eg with `rules` rules, each to its own backend. */
static void http_route(Fake *fx, const char *ns, const char *name, int rules) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\",\"metadata\":{\"name\":\"%s\","
           "\"namespace\":\"%s\"},\"spec\":{\"parentRefs\":[{\"name\":\"eg\",\"namespace\":\"default\"}]}}",
           name, ns);
  json_object *r = parse(text), *rs = json_object_new_array();
  for (int i = 0; i < rules; i++) {
    snprintf(text, sizeof text, "{\"backendRefs\":[{\"name\":\"svc-%d\",\"port\":8080}]}", i);
    json_object_array_add(rs, parse(text));
  }
  json_object_object_add(get(r, "spec"), "rules", rs);
  char key[300];
  snprintf(key, sizeof key, "HTTPRoute/%s/%s", ns, name);
  put(fx, key, r);
}

/* `n` cluster patches of every followed rule (no services), one value each. */
static const char *cluster_patches(int n) {
  static char buf[4096];
  size_t len = 0;
  len += (size_t)snprintf(buf + len, sizeof buf - len, "[");
  static const char *const kPaths[] = {"/connect_timeout\",\"value\":\"3s\"",
                                       "/per_connection_buffer_limit_bytes\",\"value\":65536",
                                       "/outlier_detection/max_ejection_percent\",\"value\":50",
                                       "/outlier_detection/consecutive_5xx\",\"value\":7"};
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "%s{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                            "\"op\":\"add\",\"path\":\"%s}",
                            i ? "," : "", kPaths[i % 4]);
  }
  snprintf(buf + len, sizeof buf - len, "]");
  return buf;
}

/* PropertyOverride default/<name> of Gateway eg; route_namespaces a JSON array or NULL. */
static void platform(Fake *fx, const char *name, const char *route_namespaces, const char *patches) {
  static char text[1 << 17]; /* a patch value may be 64 KB */
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":1,\"uid\":\"uid-po-%s\"},"
           "\"spec\":{\"targetRef\":{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"eg\"},"
           "%s%s%s\"patches\":%s}}",
           name, name, route_namespaces ? "\"routeNamespaces\":" : "", route_namespaces ? route_namespaces : "",
           route_namespaces ? "," : "", patches);
  store_override(fx, "default", name, parse(text));
}

static json_object *policy(Fake *fx, const char *name) {
  char k[300];
  snprintf(k, sizeof k, "EnvoyPatchPolicy/default/propertyoverride-%s", name);
  return obj(fx, k);
}
static json_object *patches_of(Fake *fx, const char *name) { return get(get(policy(fx, name), "spec"), "jsonPatches"); }
static size_t patch_count(Fake *fx, const char *name) { return json_object_array_length(patches_of(fx, name)); }
static size_t patches_bytes(Fake *fx, const char *name) {
  return strlen(json_object_to_json_string_ext(patches_of(fx, name), JSON_C_TO_STRING_PLAIN));
}
/* How many entries name a cluster of namespace ns's routes. */
static size_t entries_of(Fake *fx, const char *name, const char *ns) {
  char prefix[128];
  snprintf(prefix, sizeof prefix, "httproute/%s/", ns);
  size_t n = 0;
  for (size_t i = 0; i < patch_count(fx, name); i++) {
    const char *e = json_object_get_string(get(json_object_array_get_idx(patches_of(fx, name), i), "name"));
    n += !strncmp(e, prefix, strlen(prefix));
  }
  return n;
}
static void eg_programs(Fake *fx, const char *name) {
  json_object *epp = policy(fx, name);
  assert_non_null(epp);
  long long g = json_object_get_int64(get(get(epp, "metadata"), "generation"));
  char text[1024];
  snprintf(text, sizeof text,
           "{\"ancestors\":[{\"ancestorRef\":{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"eg\","
           "\"namespace\":\"default\"},\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\",\"reason\":\"Accepted\","
           "\"message\":\"m\",\"observedGeneration\":%lld},{\"type\":\"Programmed\",\"status\":\"True\",\"reason\":"
           "\"Programmed\",\"message\":\"m\",\"observedGeneration\":%lld}]}]}", g, g);
  json_object_object_add(epp, "status", parse(text));
  bump(fx, epp);
}

static po_ReconcileResult gw(Fake *fx) { return rec(fx, "Gateway/default/eg"); }

/* The tenant's attack of the issue: 16-rule HTTPRoutes from another namespace through a listener
 * that admits All. Before, every one of them added 16 entries to the platform's policy; now the
 * platform follows only its own namespace's routes, and says that the others are not followed. */
static void test_tenant_routes_not_followed(void **state) {
  Fake *fx = *state;
  shared_gateway(fx);
  http_route(fx, "default", "site", 2);
  for (int i = 0; i < 100; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    http_route(fx, "tenant", name, 16);
  }
  platform(fx, "edge", NULL, cluster_patches(1));
  assert_true(gw(fx).ok);
  assert_int_equal(patch_count(fx, "edge"), 2);
  assert_int_equal(entries_of(fx, "edge", "tenant"), 0);
  eg_programs(fx, "edge");
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "edge"), "Programmed");
  assert_non_null(strstr(message(fx, "edge"), "HTTPRoutes attached from namespaces spec.routeNamespaces does not name"));
  assert_null(strstr(message(fx, "edge"), "tenant/")); /* no route named: a tenant's churn rewrites nothing */
  /* a route more of the tenant's changes neither the policy nor the status */
  int writes = fx->target_writes, statuses = fx->status_patches;
  http_route(fx, "tenant", "r100", 16);
  assert_true(gw(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(fx->status_patches, statuses);
}

/* Opted in, the tenant's routes are followed, within the bound: the platform's own routes come
 * first whatever their names, the tenant's by name while they fit; the status names the bound,
 * and that routes were left out (no names, no counts: a tenant's churn changes neither). Named
 * namespaces get room in spec.routeNamespaces' order: a route of "aaa", named after "tenant",
 * displaces nothing of tenant's however it sorts. */
static void test_opted_in_routes_bounded(void **state) {
  Fake *fx = *state;
  shared_gateway(fx);
  http_route(fx, "default", "zz-site", 16); /* last by name: still first, as the own namespace's */
  for (int i = 0; i < 140; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    http_route(fx, "tenant", name, 16);
  }
  platform(fx, "edge", "[\"tenant\",\"aaa\"]", cluster_patches(4));
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "edge"));
  assert_true(patches_bytes(fx, "edge") <= kPo_EGMaxPolicyBytes);
  assert_true(patches_bytes(fx, "edge") > kPo_EGMaxPolicyBytes * 9 / 10); /* filled, not emptied */
  assert_int_equal(entries_of(fx, "edge", "default"), 16 * 4);
  size_t tenant = entries_of(fx, "edge", "tenant");
  assert_true(tenant > 0 && tenant < 140 * 16 * 4);
  assert_int_equal(tenant % (16 * 4), 0); /* whole routes */
  eg_programs(fx, "edge");
  assert_true(gw(fx).ok);
  assert_string_equal(json_object_get_string(get(condition(fx, "edge", "Programmed"), "status")), "True");
  assert_string_equal(reason(fx, "edge"), "PolicyFull");
  char want[512];
  snprintf(want, sizeof want, "HTTPRoutes past the bound of %d bytes on the policy's jsonPatches are left out",
           (int)kPo_EGMaxPolicyBytes);
  assert_non_null(strstr(message(fx, "edge"), want));
  assert_non_null(strstr(message(fx, "edge"), "room goes to namespace 'default' first, then to those spec.routeNamespaces "
                                          "names in its order"));
  assert_null(strstr(message(fx, "edge"), "tenant/"));

  /* a newcomer sorting first by name, in a namespace named after "tenant": nothing moves */
  int writes = fx->target_writes, statuses = fx->status_patches;
  http_route(fx, "aaa", "first", 16);
  assert_true(gw(fx).ok);
  assert_int_equal(entries_of(fx, "edge", "default"), 16 * 4);
  assert_int_equal(entries_of(fx, "edge", "aaa"), 0);
  assert_int_equal(entries_of(fx, "edge", "tenant"), tenant);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(fx->status_patches, statuses);
}

/* The Gateway's bound: its PropertyOverrides' policies together hold at most
 * kPo_EGMaxGatewayBytes, given out by name; the one that got what was left says so. */
static const char *const kFillers[] = {"p1", "p2", "p3", "p4", "p5"};
/* Gateway eg with 140 16-rule routes of default and five PropertyOverrides p1..p5 of 4 cluster
 * patches each: together more than the Gateway's bound. */
static void fill_gateway(Fake *fx) {
  shared_gateway(fx);
  for (int i = 0; i < 140; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    http_route(fx, "default", name, 16);
  }
  for (int i = 0; i < 5; i++) platform(fx, kFillers[i], NULL, cluster_patches(4));
}

static void test_gateway_bound(void **state) {
  Fake *fx = *state;
  fill_gateway(fx);
  const char *const *names = kFillers;
  assert_true(gw(fx).ok);
  size_t total = 0;
  for (int i = 0; i < 5; i++) {
    assert_non_null(policy(fx, names[i]));
    assert_true(patches_bytes(fx, names[i]) <= kPo_EGMaxPolicyBytes);
    total += patches_bytes(fx, names[i]);
  }
  assert_true(total <= kPo_EGMaxGatewayBytes);
  assert_true(patches_bytes(fx, "p5") < patches_bytes(fx, "p4")); /* p5 got what p1..p4 left */
  for (int i = 0; i < 5; i++) eg_programs(fx, names[i]);
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "p5"), "PolicyFull");
  char want[256];
  snprintf(want, sizeof want, "HTTPRoutes past its share of the %d bytes all the policies of Gateway default/eg may "
           "hold together are left out", (int)kPo_EGMaxGatewayBytes);
  assert_non_null(strstr(message(fx, "p5"), want));
  assert_null(strstr(message(fx, "p1"), "all the policies of"));
}

/* Listener and route patches are set aside before any route gets room (F3): a PropertyOverride
 * coming after the Gateway's bound is used up by route clusters still gets its listener patch
 * of 64 KB (before, it was refused and its policy deleted); those before it give up routes. */
static char *listener_patch(size_t bytes) {
  char *p = malloc(bytes + 256);
  int n = snprintf(p, 256, "[{\"resourceFilter\":{\"resourceType\":\"listener\",\"trafficDirection\":"
                           "\"outbound\"},\"op\":\"add\",\"path\":\"/stat_prefix\",\"value\":\"");
  memset(p + n, 's', bytes);
  snprintf(p + n + bytes, 256, "\"}]");
  return p;
}
static void test_gateway_bound_sets_listener_patches_aside(void **state) {
  Fake *fx = *state;
  fill_gateway(fx);
  char *p6 = listener_patch(65536);
  platform(fx, "p6", NULL, p6);
  free(p6);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "p6"));
  assert_int_equal(patch_count(fx, "p6"), 1);
  size_t total = 0;
  for (int i = 0; i < 5; i++) total += patches_bytes(fx, kFillers[i]);
  assert_true(total + patches_bytes(fx, "p6") <= kPo_EGMaxGatewayBytes);
}

/* Listener patches alone over the Gateway's bound (5 of 16 listeners x 60 KB): the one last by
 * name finds no room; its policy, programmed before, is left as it is, and its status says why
 * (before: refused, the policy deleted). */
static void test_gateway_bound_no_room_keeps_policy(void **state) {
  Fake *fx = *state;
  char gw16[4096];
  size_t n = (size_t)snprintf(gw16, sizeof gw16,
                              "{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"Gateway\",\"metadata\":{"
                              "\"name\":\"eg\",\"namespace\":\"default\"},\"spec\":{\"gatewayClassName\":\"eg\","
                              "\"listeners\":[");
  for (int i = 0; i < 16; i++) {
    n += (size_t)snprintf(gw16 + n, sizeof gw16 - n, "%s{\"name\":\"l%d\",\"protocol\":\"HTTP\",\"port\":%d}",
                          i ? "," : "", i, 80 + i);
  }
  snprintf(gw16 + n, sizeof gw16 - n, "]}}");
  put(fx, "Gateway/default/eg", parse(gw16));
  http_route(fx, "default", "site", 1);
  char *big = listener_patch(60000);
  platform(fx, "q5", NULL, big);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "q5"));
  eg_programs(fx, "q5");
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "q5"), "Programmed");
  const char *others[] = {"q1", "q2", "q3", "q4"};
  for (int i = 0; i < 4; i++) platform(fx, others[i], NULL, big);
  free(big);
  assert_true(gw(fx).ok);
  for (int i = 0; i < 4; i++) assert_non_null(policy(fx, others[i]));
  assert_non_null(policy(fx, "q5")); /* kept */
  assert_int_equal(patch_count(fx, "q5"), 16);
  assert_string_equal(reason(fx, "q5"), "TargetFull");
  char want[256];
  snprintf(want, sizeof want, "of the %d bytes all the EnvoyPatchPolicies of Gateway 'eg' may hold together",
           (int)kPo_EGMaxGatewayBytes);
  assert_non_null(strstr(message(fx, "q5"), want));
  assert_non_null(strstr(message(fx, "q5"), "is left as it is (generation 1 stays programmed)"));
}

/* spec.routeNamespaces is a Gateway target's; elsewhere, and malformed, it is refused. */
static void test_route_namespaces_checked(void **state) {
  (void)state;
  const char *bad[][2] = {
      {"{\"targetRef\":{\"name\":\"api\"},\"routeNamespaces\":[\"x\"],",
       "spec.routeNamespaces: only for a Gateway target (it names the namespaces whose HTTPRoutes an Envoy Gateway "
       "target's cluster patches follow); this one targets a ServiceDefaults"},
      {"{\"targetRef\":{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"eg\"},"
       "\"routeNamespaces\":[\"Not_A_Label\"],",
       "spec.routeNamespaces[0]: \"Not_A_Label\" is not a namespace name"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[8192];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":"
             "\"x\",\"namespace\":\"default\",\"generation\":1},\"spec\":%s\"patches\":%s}}",
             bad[i][0], cluster_patches(1));
    json_object *o = parse(text);
    po_Arena *a = po_Arena_New();
    po_CompiledOverride c;
    assert_int_equal(po_CompiledOverride_FromObject(o, NULL, a, &c), kPo_CompileOutcome_Refused);
    assert_false(c.accepted);
    const char *d = po_CompiledOverride_Describe(&c, true, false, 0, a);
    if (!strstr(d, bad[i][1])) fail_msg("want '%s' in '%s'", bad[i][1], d);
    po_Arena_Free(a);
    json_object_put(o);
  }
}

/* The write path's memory: the peak heap of a reconcile that creates, then one that updates, a
 * policy of N bytes stays within a few N (issue 21: it was about 100 N, and a 1.58 MB policy
 * took the controller past 256 MiB). The routes are the platform's own (followed before and
 * after this change), the policy near its bound. */
enum { kBudgetTimesPolicy = 8 };
static void test_write_memory_budget(void **state) {
  Fake *fx = *state;
  shared_gateway(fx);
  for (int i = 0; i < 130; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    http_route(fx, "default", name, 16);
  }
  platform(fx, "edge", NULL, cluster_patches(4));
  long peak = 0;
  assert_true(measured(fx, "Gateway/default/eg", &peak).ok);
  long n = g_sent;
  print_message("create: policy %ld bytes, %zu patches; peak heap of the reconcile %ld bytes (%.1f x)\n", n,
                patch_count(fx, "edge"), peak, (double)peak / (double)n);
  assert_true(n > 500000);
  assert_true(peak <= kBudgetTimesPolicy * n);
  /* an update: the first route loses half its rules */
  http_route(fx, "default", "r000", 8);
  assert_true(measured(fx, "Gateway/default/eg", &peak).ok);
  n = g_sent;
  print_message("update: policy %ld bytes, %zu patches; peak heap of the reconcile %ld bytes (%.1f x)\n", n,
                patch_count(fx, "edge"), peak, (double)peak / (double)n);
  assert_true(peak <= kBudgetTimesPolicy * n);
}

/* F8: opted in to 900 tenant routes of 16 rules ("*"; the fake holds 1,024 objects), a reconcile copies whole only the routes
 * the bound lets in, one at a time: none whole from gateway_routes, a few fetches per route in
 * the policy; the routes past the cut are neither copied nor walked (before: every followed
 * route copied whole per reconcile: 1 PropertyOverride, 4,000 routes, 360 MiB). */
static void test_routes_past_the_bound_not_copied(void **state) {
  Fake *fx = *state;
  shared_gateway(fx);
  http_route(fx, "default", "site", 1);
  for (int i = 0; i < 900; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%04d", i);
    http_route(fx, "tenant", name, 16);
  }
  platform(fx, "edge", "[\"*\"]", cluster_patches(1));
  g_whole = g_fetched = 0;
  long peak = 0;
  assert_true(measured(fx, "Gateway/default/eg", &peak).ok);
  size_t in = (patch_count(fx, "edge") - 1) / 16;
  print_message("F8: %zu of 900 tenant routes in; %zu routes given whole, %zu fetched one at a time; peak heap %ld "
                "bytes for a %ld-byte policy\n", in, g_whole, g_fetched, peak, g_sent);
  assert_true(in > 100 && in < 900);
  assert_int_equal(g_whole, 0);
  assert_true(g_fetched <= 3 * (in + 2));
}

/* F9: the route informer caches po_EG_RouteTrim of each route: what is read (name, namespace,
 * parentRefs, rules' backendRefs) and the informer's metadata, none of a tenant's matches,
 * filters or annotations (235 KiB routes: 382 MiB of cache before). */
static void test_route_trim_keeps_what_is_read(void **state) {
  (void)state;
  json_object *r = json_tokener_parse(
      "{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\",\"metadata\":{\"name\":\"r\","
      "\"namespace\":\"t\",\"uid\":\"u1\",\"resourceVersion\":\"7\",\"generation\":3,\"annotations\":{\"a\":\"b\"}},"
      "\"spec\":{\"parentRefs\":[{\"name\":\"eg\",\"namespace\":\"default\",\"sectionName\":\"http\"}],"
      "\"rules\":[{\"matches\":[{\"headers\":[{\"name\":\"x\",\"value\":\"yyyyyyyyyyyyyyyyyyyyyyyy\"}]}],"
      "\"backendRefs\":[{\"name\":\"s\",\"port\":80}]},{\"filters\":[]}]},\"status\":{\"parents\":[]}}");
  assert_non_null(r);
  json_object *t = po_EG_RouteTrim(r);
  assert_non_null(t);
  json_object *want = json_tokener_parse(
      "{\"metadata\":{\"name\":\"r\",\"namespace\":\"t\",\"uid\":\"u1\",\"resourceVersion\":\"7\",\"generation\":3},"
      "\"spec\":{\"parentRefs\":[{\"name\":\"eg\",\"namespace\":\"default\",\"sectionName\":\"http\"}],"
      "\"rules\":[{\"backendRefs\":[{\"name\":\"s\",\"port\":80}]},{}]}}");
  if (!json_object_equal(t, want)) fail_msg("trimmed: %s", json_object_to_json_string(t));
  json_object_put(want);
  json_object_put(t);
  json_object_put(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_route_trim_keeps_what_is_read),
      cmocka_unit_test_setup_teardown(test_routes_past_the_bound_not_copied, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tenant_routes_not_followed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_opted_in_routes_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gateway_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gateway_bound_sets_listener_patches_aside, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gateway_bound_no_room_keeps_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_route_namespaces_checked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_memory_budget, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
