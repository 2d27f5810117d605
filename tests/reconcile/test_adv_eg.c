/* Adversarial reproducers against the Envoy Gateway bound (issue 21, item 2), fixed on h-eg2.
 * Each test states what a hostile tenant (who may only create HTTPRoutes in its own namespaces)
 * can do to the platform's PropertyOverrides of Gateway default/eg, and asserts the behaviour
 * the issue asks for; F1-F7 each failed on the change as merged (1bb7fe9), H1-H3 held. Against
 * the in-memory API server (fake_api.h). */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"
#include "mesh_test.h"
#include "po/meshes/eg.h"

static json_object *parse(const char *text) {
  json_object *o = json_tokener_parse(text);
  assert_non_null(o);
  return o;
}

/* Gateway default/eg: listener "http" (port 80) admits HTTPRoutes of every namespace; `extra`
 * more HTTP listeners (ports 81..) of the Gateway's namespace only; `selector`: one more listener
 * "team" (port 8080) that admits by a namespace selector. */
static void gateway(Fake *fx, int extra, bool selector) {
  char text[8192];
  size_t n = (size_t)snprintf(text, sizeof text,
                              "{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"Gateway\",\"metadata\":{"
                              "\"name\":\"eg\",\"namespace\":\"default\"},\"spec\":{\"gatewayClassName\":\"eg\","
                              "\"listeners\":[{\"name\":\"http\",\"protocol\":\"HTTP\",\"port\":80,\"allowedRoutes\":"
                              "{\"namespaces\":{\"from\":\"All\"}}}");
  for (int i = 0; i < extra; i++) {
    n += (size_t)snprintf(text + n, sizeof text - n, ",{\"name\":\"l%d\",\"protocol\":\"HTTP\",\"port\":%d}", i, 81 + i);
  }
  if (selector) {
    n += (size_t)snprintf(text + n, sizeof text - n,
                          ",{\"name\":\"team\",\"protocol\":\"HTTP\",\"port\":8080,\"allowedRoutes\":{\"namespaces\":"
                          "{\"from\":\"Selector\",\"selector\":{\"matchLabels\":{\"team\":\"platform\"}}}}}");
  }
  snprintf(text + n, sizeof text - n, "]}}");
  put(fx, "Gateway/default/eg", parse(text));
}

/* HTTPRoute ns/name on Gateway default/eg (section: sectionName or NULL) with `rules` rules, each
 * to backend svc-<i> (or, `backends` non-NULL, to those backendRefs). */
static void route(Fake *fx, const char *ns, const char *name, int rules, const char *section, const char *backends) {
  char text[1024];
  char sec[128] = "";
  if (section) snprintf(sec, sizeof sec, ",\"sectionName\":\"%s\"", section);
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\",\"metadata\":{\"name\":\"%s\","
           "\"namespace\":\"%s\"},\"spec\":{\"parentRefs\":[{\"name\":\"eg\",\"namespace\":\"default\"%s}]}}",
           name, ns, sec);
  json_object *r = parse(text), *rs = json_object_new_array();
  for (int i = 0; i < rules; i++) {
    if (backends) snprintf(text, sizeof text, "{\"backendRefs\":%s}", backends);
    else snprintf(text, sizeof text, "{\"backendRefs\":[{\"name\":\"svc-%d\",\"port\":8080}]}", i);
    json_object_array_add(rs, parse(text));
  }
  json_object_object_add(get(r, "spec"), "rules", rs);
  char key[300];
  snprintf(key, sizeof key, "HTTPRoute/%s/%s", ns, name);
  put(fx, key, r);
}
static void unroute(Fake *fx, const char *ns, const char *name) {
  char key[300];
  snprintf(key, sizeof key, "HTTPRoute/%s/%s", ns, name);
  Slot *s = slot(fx, key, false);
  assert_non_null(s);
  json_object_put(s->obj);
  s->obj = NULL;
}

static const char kCluster[] =
    "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":"
    "\"/connect_timeout\",\"value\":\"3s\"}]";
static const char kListener[] =
    "[{\"resourceFilter\":{\"resourceType\":\"listener\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":"
    "\"/per_connection_buffer_limit_bytes/value\",\"value\":65536}]";

static void platform(Fake *fx, const char *name, const char *route_namespaces, const char *patches) {
  char text[8192];
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
static size_t patch_count(Fake *fx, const char *name) {
  return json_object_array_length(get(get(policy(fx, name), "spec"), "jsonPatches"));
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

/* F1. The "no count, so a tenant's new route rewrites no status" promise (docs/crd.md) does not
 * hold: the message names the FIRST unfollowed route by namespace/name, so a tenant route that
 * sorts first ("tenant/0", or any namespace "a...") rewrites the platform's status; a
 * create/delete loop of it rewrites the status twice per cycle. */
static void test_adv_unfollowed_first_name_churn(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, false);
  route(fx, "default", "site", 2, NULL, NULL);
  route(fx, "tenant", "r000", 16, NULL, NULL);
  platform(fx, "edge", NULL, kCluster);
  assert_true(gw(fx).ok);
  eg_programs(fx, "edge");
  assert_true(gw(fx).ok);
  /* what is not followed is said, without naming a route (the name was the rewrite) */
  assert_non_null(strstr(message(fx, "edge"), "HTTPRoutes attached from namespaces spec.routeNamespaces does not name"));
  assert_null(strstr(message(fx, "edge"), "tenant/r000"));
  int statuses = fx->status_patches, writes = fx->target_writes;
  for (int i = 0; i < 10; i++) {
    route(fx, "a", "0", 1, NULL, NULL); /* sorts before tenant/r000 */
    assert_true(gw(fx).ok);
    unroute(fx, "a", "0");
    assert_true(gw(fx).ok);
  }
  print_message("F1: 10 create/delete cycles of tenant route a/0: %d status patches of default/edge, %d policy writes\n",
                fx->status_patches - statuses, fx->target_writes - writes);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(fx->status_patches, statuses); /* fails: 20 */
}

/* F2. Opted in and full (PolicyFull), the message carries counts of what was left out: every
 * tenant route created or deleted after the cut (it changes nothing in the policy) rewrites the
 * platform's status. */
static void test_adv_policyfull_count_churn(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, false);
  route(fx, "default", "site", 2, NULL, NULL);
  for (int i = 0; i < 600; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    route(fx, "tenant", name, 16, NULL, NULL);
  }
  platform(fx, "edge", "[\"tenant\"]", kCluster);
  assert_true(gw(fx).ok);
  eg_programs(fx, "edge");
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "edge"), "PolicyFull");
  size_t entries = patch_count(fx, "edge");
  int statuses = fx->status_patches, writes = fx->target_writes;
  for (int i = 0; i < 10; i++) {
    route(fx, "tenant", "zz-churn", 16, NULL, NULL); /* after the cut: never in the policy */
    assert_true(gw(fx).ok);
    unroute(fx, "tenant", "zz-churn");
    assert_true(gw(fx).ok);
  }
  print_message("F2: 10 create/delete cycles of a left-out route: %d status patches, %d policy writes, %zu entries\n",
                fx->status_patches - statuses, fx->target_writes - writes, patch_count(fx, "edge"));
  assert_int_equal(patch_count(fx, "edge"), entries);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(fx->status_patches, statuses); /* fails: 20 */
}

/* F3. The Gateway's 4 MiB is given out by PropertyOverride name, and the opted-in policies fill
 * it with TENANT routes: a platform PropertyOverride whose patches do not follow routes at all (a
 * listener patch, programmed before) sorting after them is then refused (its policy deleted),
 * with a message naming a bound of a few bytes "on the EnvoyPatchPolicy's jsonPatches" and
 * advising "patch fewer listeners". The tenant's routes displaced the platform's listener patch. */
static void test_adv_gateway_bound_starves_listener_patch(void **state) {
  Fake *fx = *state;
  gateway(fx, 7, false); /* 8 listeners: a listener patch is 8 entries */
  route(fx, "default", "site", 1, NULL, NULL);
  const char *fillers[] = {"p1", "p2", "p3", "p4"};
  for (int i = 0; i < 4; i++) platform(fx, fillers[i], "[\"tenant\"]", kCluster);
  platform(fx, "zz-listener", NULL, kListener);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "zz-listener"));
  assert_int_equal(patch_count(fx, "zz-listener"), 8);
  eg_programs(fx, "zz-listener");
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "zz-listener"), "Programmed");
  /* the tenant: big routes, then 1-rule ones (16-rule routes in many namespaces do the same) */
  for (int i = 0; i < 60; i++) {
    char name[32];
    snprintf(name, sizeof name, "b%03d", i);
    route(fx, "tenant", name, 100, NULL, NULL);
  }
  for (int i = 0; i < 900; i++) {
    char name[32];
    snprintf(name, sizeof name, "s%03d", i);
    route(fx, "tenant", name, 1, NULL, NULL);
  }
  assert_true(gw(fx).ok);
  const char *m = json_object_get_string(get(override_condition(fx, "default", "zz-listener", "Programmed"), "message"));
  const char *rsn = json_object_get_string(get(override_condition(fx, "default", "zz-listener", "Programmed"), "reason"));
  print_message("F3: zz-listener policy %s; Programmed reason %s: %.400s\n", policy(fx, "zz-listener") ? "kept" : "DELETED",
                rsn ? rsn : "?", m ? m : "?");
  for (int i = 0; i < 4; i++) print_message("F3: %s holds %zu entries\n", fillers[i], patch_count(fx, fillers[i]));
  assert_non_null(policy(fx, "zz-listener"));          /* fails: deleted */
  assert_int_equal(patch_count(fx, "zz-listener"), 8);
}

/* F4. A listener that admits by a namespace selector: with routeNamespaces ["*"], ANY tenant's
 * route naming that listener (sectionName) - even from a namespace the selector does not admit -
 * makes the platform's whole policy refused ("render cannot tell which routes"), and the policy
 * programmed before is deleted: one HTTPRoute takes out every cluster patch. */
static void test_adv_selector_listener_kills_policy(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, true);
  route(fx, "default", "site", 2, NULL, NULL);
  route(fx, "tenant", "ok", 2, NULL, NULL);
  platform(fx, "edge", "[\"*\"]", kCluster);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "edge"));
  eg_programs(fx, "edge");
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "edge"), "Programmed");
  route(fx, "evil", "x", 1, "team", NULL); /* namespace evil: not labelled team=platform */
  assert_true(gw(fx).ok);
  const char *m = message(fx, "edge");
  print_message("F4: policy %s; Programmed %s: %.300s\n", policy(fx, "edge") ? "kept" : "DELETED", reason(fx, "edge"), m ? m : "?");
  assert_non_null(policy(fx, "edge")); /* fails: deleted */
  assert_int_equal(patch_count(fx, "edge"), 4);
}

/* F5. With routeNamespaces naming a tenant namespace and a cluster patch limited to a Service of
 * it, one rule of the tenant that sends to that Service and another backend refuses the WHOLE
 * PropertyOverride (all its patches, the platform's own Service's too; its policy deleted). By
 * eg.c step 2 the check runs over every followed route, those the bound leaves out too. */
static void test_adv_tenant_mixed_backend_refuses_policy(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, false);
  route(fx, "default", "site", 1, NULL, "[{\"name\":\"api\",\"port\":80}]");
  route(fx, "tenant", "web", 1, NULL, "[{\"name\":\"web\",\"port\":80}]");
  platform(fx, "edge", "[\"tenant\"]",
           "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\",\"services\":"
           "[{\"name\":\"web\",\"namespace\":\"tenant\"}]},\"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"3s\"},"
           "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\",\"services\":"
           "[{\"name\":\"api\",\"namespace\":\"default\"}]},\"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"4s\"}]");
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "edge"));
  assert_int_equal(patch_count(fx, "edge"), 2);
  route(fx, "tenant", "zzz", 1, NULL, "[{\"name\":\"web\",\"port\":80},{\"name\":\"other\",\"port\":80}]");
  assert_true(gw(fx).ok);
  print_message("F5: policy %s; Programmed %s: %.300s\n", policy(fx, "edge") ? "kept" : "DELETED", reason(fx, "edge"),
                message(fx, "edge") ? message(fx, "edge") : "?");
  assert_non_null(policy(fx, "edge")); /* fails: the platform's own api patch goes too */
}

/* F6. routeNamespaces ["payments", "*"]: the namespace the platform named explicitly gets no
 * precedence over those "*" admits; routes are ordered by namespace name only, so a tenant that
 * creates namespace "a-evil" (any name sorting before "payments") and floods it displaces every
 * route of "payments" from the platform's policy. */
static size_t entries_of(Fake *fx, const char *name, const char *ns) {
  char prefix[128];
  snprintf(prefix, sizeof prefix, "httproute/%s/", ns);
  json_object *ps = get(get(policy(fx, name), "spec"), "jsonPatches");
  size_t n = 0;
  for (size_t i = 0; ps && i < json_object_array_length(ps); i++) {
    const char *e = json_object_get_string(get(json_object_array_get_idx(ps, i), "name"));
    n += !strncmp(e, prefix, strlen(prefix));
  }
  return n;
}
static void test_adv_star_displaces_named_namespace(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, false);
  route(fx, "default", "site", 1, NULL, NULL);
  for (int i = 0; i < 40; i++) {
    char name[32];
    snprintf(name, sizeof name, "p%03d", i);
    route(fx, "payments", name, 16, NULL, NULL);
  }
  platform(fx, "edge", "[\"payments\",\"*\"]", kCluster);
  assert_true(gw(fx).ok);
  assert_int_equal(entries_of(fx, "edge", "payments"), 40 * 16);
  for (int i = 0; i < 600; i++) {
    char name[32];
    snprintf(name, sizeof name, "x%03d", i);
    route(fx, "a-evil", name, 16, NULL, NULL);
  }
  assert_true(gw(fx).ok);
  print_message("F6: payments entries %zu (was 640), a-evil entries %zu\n", entries_of(fx, "edge", "payments"),
                entries_of(fx, "edge", "a-evil"));
  assert_int_equal(entries_of(fx, "edge", "payments"), 40 * 16); /* fails: 0 */
}

/* F7. The bound counts json-c's bytes; the API server (Go's encoding/json, EscapeHTML) stores
 * '<', '>' and '&' as \\u003c etc. (6 bytes) and '/' unescaped. A platform value with such
 * characters, opted in to a tenant's routes: the policy computed under 1 MiB is ~2.3 MiB as the
 * API server sends it to etcd (measured on the real kube-apiserver, adv_eg_memory.sh phase A:
 * "trying to send message larger than max (2423261 vs. 2097152)", the policy left with 0 entries,
 * the Gateway's reconcile failing and retrying). */
static size_t go_bytes(json_object *o) {
  const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  size_t n = 0;
  for (const char *p = t; *p; p++) n += (*p == '<' || *p == '>' || *p == '&') ? 6 : 1;
  return n;
}
static void test_adv_bound_ignores_stored_encoding(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, false);
  route(fx, "default", "site", 1, NULL, NULL);
  for (int i = 0; i < 600; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    route(fx, "tenant", name, 16, NULL, NULL);
  }
  char v[80];
  memset(v, '<', 60);
  v[60] = '\0';
  char patches[512];
  snprintf(patches, sizeof patches,
           "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\","
           "\"path\":\"/alt_stat_name\",\"value\":\"%s\"}]", v);
  platform(fx, "edge", "[\"tenant\"]", patches);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "edge"));
  size_t stored = go_bytes(get(get(policy(fx, "edge"), "spec"), "jsonPatches"));
  print_message("F7: %zu entries; jsonPatches as the API server encodes them: %zu bytes (bound %d)\n", patch_count(fx, "edge"),
                stored, (int)kPo_EGMaxPolicyBytes);
  assert_true(stored <= kPo_EGMaxPolicyBytes); /* fails: ~2.3 MiB */
}

/* H3 (expected to hold): a restarted controller (a new index) over a full opted-in policy
 * rewrites neither the policy nor the status. */
static void test_adv_restart_rewrites_nothing(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, false);
  route(fx, "default", "site", 1, NULL, NULL);
  for (int i = 0; i < 600; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    route(fx, "tenant", name, 16, NULL, NULL);
  }
  platform(fx, "edge", "[\"tenant\"]", kCluster);
  assert_true(gw(fx).ok);
  eg_programs(fx, "edge");
  assert_true(gw(fx).ok);
  assert_true(gw(fx).ok);
  int writes = fx->target_writes, statuses = fx->status_patches;
  restart_with(fx, "edge");
  assert_true(gw(fx).ok);
  print_message("H3: after a restart: %d policy writes, %d status patches\n", fx->target_writes - writes,
                fx->status_patches - statuses);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(fx->status_patches, statuses);
}

/* H2 (expected to hold): a tenant route naming the Gateway 32 times (no sectionName, 8
 * listeners) with a 253-character name counts once: one entry per rule. */
static void test_adv_many_parent_refs_count_once(void **state) {
  Fake *fx = *state;
  gateway(fx, 7, false);
  route(fx, "default", "site", 1, NULL, NULL);
  char name[254];
  memset(name, 'a', 253);
  name[253] = '\0';
  char text[16384];
  size_t n = (size_t)snprintf(text, sizeof text,
                              "{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\",\"metadata\":{"
                              "\"name\":\"%s\",\"namespace\":\"tenant\"},\"spec\":{\"parentRefs\":[", name);
  for (int i = 0; i < 32; i++) n += (size_t)snprintf(text + n, sizeof text - n, "%s{\"name\":\"eg\",\"namespace\":\"default\"}", i ? "," : "");
  n += (size_t)snprintf(text + n, sizeof text - n, "],\"rules\":[");
  for (int i = 0; i < 16; i++) n += (size_t)snprintf(text + n, sizeof text - n, "%s{\"backendRefs\":[{\"name\":\"s%d\",\"port\":80}]}", i ? "," : "", i);
  snprintf(text + n, sizeof text - n, "]}}");
  char key[400];
  snprintf(key, sizeof key, "HTTPRoute/tenant/%s", name);
  put(fx, key, parse(text));
  platform(fx, "edge", "[\"tenant\"]", kCluster);
  assert_true(gw(fx).ok);
  print_message("H2: %zu entries (want 17)\n", patch_count(fx, "edge"));
  assert_int_equal(patch_count(fx, "edge"), 17);
}

/* H1 (expected to hold): a left-out route comes back when room is made. */
static void test_adv_left_out_comes_back(void **state) {
  Fake *fx = *state;
  gateway(fx, 0, false);
  route(fx, "default", "site", 1, NULL, NULL);
  for (int i = 0; i < 600; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    route(fx, "tenant", name, 16, NULL, NULL);
  }
  platform(fx, "edge", "[\"tenant\"]", kCluster);
  assert_true(gw(fx).ok);
  size_t full = patch_count(fx, "edge");
  for (int i = 0; i < 300; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%03d", i);
    unroute(fx, "tenant", name);
  }
  assert_true(gw(fx).ok);
  print_message("H1: full %zu entries; after deleting 300 routes %zu entries (want %d)\n", full, patch_count(fx, "edge"),
                1 + 300 * 16);
  assert_int_equal(patch_count(fx, "edge"), 1 + 300 * 16);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_adv_unfollowed_first_name_churn, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_policyfull_count_churn, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_gateway_bound_starves_listener_patch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_selector_listener_kills_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_tenant_mixed_backend_refuses_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_star_displaces_named_namespace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_bound_ignores_stored_encoding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_restart_rewrites_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_left_out_comes_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_many_parent_refs_count_once, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
