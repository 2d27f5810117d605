/* The reconciler programming Envoy Gateway targets (issue 12): a PropertyOverride of a Gateway
 * gets one EnvoyPatchPolicy, created, updated and deleted through po_EG_Plan over the same load,
 * plan and status phases as the other meshes, its cluster names from the Gateway's HTTPRoutes,
 * and Programmed from Envoy Gateway's own status of the policy; against the in-memory API
 * server (fake_api.h), with Envoy Gateway's answer written by hand (eg_answer). */
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

/* outbound clusters of the rules that send to Service payments */
static const char *kPay50 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\","
                            "\"services\":[{\"name\":\"payments\"}]},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";
static const char *kPay30 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\","
                            "\"services\":[{\"name\":\"payments\"}]},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":30}]";
static const char *kBad = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                          "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":150}]";
/* valid for Envoy and the adapter, but no HTTPRoute rule sends to Service nowhere */
static const char *kNowhere = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\","
                              "\"services\":[{\"name\":\"nowhere\"}]},"
                              "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";

/* A PropertyOverride of namespace default (uid "uid-po-<name>") of `kind` `target`, stored and
 * indexed as the informer handlers would; finalizers and status kept as a server keeps them. */
static void apply(Fake *fx, const char *name, int gen, const char *group, const char *kind, const char *target,
                  const char *patches) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":%d,\"uid\":\"uid-po-%s\"},"
           "\"spec\":{\"targetRef\":{\"group\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\"},\"patches\":%s}}",
           name, gen, name, group, kind, target, patches);
  json_object *o = json_tokener_parse(text);
  assert_non_null(o);
  store_override(fx, "default", name, o);
}
static void apply_gw(Fake *fx, const char *name, int gen, const char *patches) {
  apply(fx, name, gen, "gateway.networking.k8s.io", "Gateway", "eg", patches);
}

static void gateway(Fake *fx) {
  put(fx, "Gateway/default/eg",
      json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"Gateway\",\"metadata\":{\"name\":"
                         "\"eg\",\"namespace\":\"default\"},\"spec\":{\"gatewayClassName\":\"eg\",\"listeners\":[{\"name\":"
                         "\"http\",\"protocol\":\"HTTP\",\"port\":80}]}}"));
}
/* HTTPRoute default/api on Gateway eg, one rule per backend named in `backends` (a JSON array
 * of Service names). */
static void route(Fake *fx, const char *backends) {
  json_object *names = json_tokener_parse(backends), *rules = json_object_new_array();
  for (size_t i = 0; i < json_object_array_length(names); i++) {
    char rule[256];
    snprintf(rule, sizeof rule, "{\"backendRefs\":[{\"name\":\"%s\",\"port\":8080}]}",
             json_object_get_string(json_object_array_get_idx(names, i)));
    json_object_array_add(rules, json_tokener_parse(rule));
  }
  json_object_put(names);
  json_object *r = json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\","
                                      "\"metadata\":{\"name\":\"api\",\"namespace\":\"default\"},"
                                      "\"spec\":{\"parentRefs\":[{\"name\":\"eg\"}]}}");
  json_object_object_add(get(r, "spec"), "rules", rules);
  put(fx, "HTTPRoute/default/api", r);
}

static json_object *policy(Fake *fx, const char *name) {
  char k[300];
  snprintf(k, sizeof k, "EnvoyPatchPolicy/default/propertyoverride-%s", name);
  return obj(fx, k);
}
/* The policy stored under its own name (what the PropertyOverride's status.target.name says). */
static json_object *policy_named(Fake *fx, const char *pname) {
  char k[300];
  snprintf(k, sizeof k, "EnvoyPatchPolicy/default/%s", pname);
  return obj(fx, k);
}
static const char *status_of(Fake *fx, const char *name) { return json_object_get_string(get(condition(fx, name, "Programmed"), "status")); }
static json_object *patch_at(json_object *epp, size_t i) {
  return json_object_array_get_idx(get(get(epp, "spec"), "jsonPatches"), i);
}
static size_t patch_count(json_object *epp) { return json_object_array_length(get(get(epp, "spec"), "jsonPatches")); }
static const char *patch_name(json_object *epp, size_t i) { return json_object_get_string(get(patch_at(epp, i), "name")); }
static int64_t patch_value(json_object *epp, size_t i) {
  return json_object_get_int64(get(get(patch_at(epp, i), "operation"), "value"));
}

/* Envoy Gateway's answer for a policy, as it writes it: status.ancestors[0] for the Gateway with
 * Accepted and Programmed conditions at `observed` (0: the policy's current generation). */
static void eg_answer_on(Fake *fx, const char *gateway, const char *name, const char *acc, const char *acc_reason,
                         const char *prog, const char *prog_reason, const char *prog_message, int64_t observed) {
  json_object *epp = policy(fx, name);
  assert_non_null(epp);
  if (!observed) observed = json_object_get_int64(get(get(epp, "metadata"), "generation"));
  char text[2048];
  snprintf(text, sizeof text,
           "{\"ancestors\":[{\"ancestorRef\":{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"%s\","
           "\"namespace\":\"default\"},\"controllerName\":\"gateway.envoyproxy.io/gatewayclass-controller\","
           "\"conditions\":[{\"type\":\"Accepted\",\"status\":\"%s\",\"reason\":\"%s\",\"message\":\"m\","
           "\"observedGeneration\":%lld},{\"type\":\"Programmed\",\"status\":\"%s\",\"reason\":\"%s\",\"message\":\"%s\","
           "\"observedGeneration\":%lld}]}]}",
           gateway, acc, acc_reason, (long long)observed, prog, prog_reason, prog_message, (long long)observed);
  json_object_object_add(epp, "status", json_tokener_parse(text));
  bump(fx, epp);
}
static void eg_answer(Fake *fx, const char *name, const char *acc, const char *acc_reason, const char *prog, const char *prog_reason,
                      const char *prog_message, int64_t observed) {
  eg_answer_on(fx, "eg", name, acc, acc_reason, prog, prog_reason, prog_message, observed);
}
static void eg_programs(Fake *fx, const char *name) { eg_answer(fx, name, "True", "Accepted", "True", "Programmed", "ok", 0); }

static po_ReconcileResult gw(Fake *fx) { return rec(fx, "Gateway/default/eg"); }

/* Create (Pending until Envoy Gateway answers, then Programmed), idempotence, an update (Pending
 * again: the answer was about the old generation), an invalid update keeping the last good
 * policy, valid again. */
static void test_lifecycle(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\",\"orders\"]");
  apply_gw(fx, "a", 1, kPay50);
  char key[300];
  po_Reconcile_OverrideKey(po_of(fx, "a"), key, sizeof key);
  assert_string_equal(key, "Gateway/default/eg");
  assert_true(gw(fx).ok);
  json_object *epp = policy(fx, "a");
  assert_non_null(epp);
  assert_string_equal(json_object_get_string(get(get(get(epp, "spec"), "targetRef"), "name")), "eg");
  assert_int_equal(patch_count(epp), 1);
  assert_string_equal(patch_name(epp, 0), "httproute/default/api/rule/0"); /* payments only, not orders */
  assert_int_equal(patch_value(epp, 0), 50);
  assert_string_equal(annotation(epp, "propertyoverride.io/owner-uid"), "uid-po-a");
  assert_non_null(annotation(epp, "propertyoverride.io/created"));
  assert_string_equal(reason(fx, "a"), "Pending");
  assert_string_equal(status_of(fx, "a"), "False");
  json_object *t = get(get(po_of(fx, "a"), "status"), "target");
  assert_string_equal(json_object_get_string(get(t, "kind")), "EnvoyPatchPolicy");
  assert_string_equal(json_object_get_string(get(t, "apiVersion")), "gateway.envoyproxy.io/v1alpha1");
  assert_string_equal(json_object_get_string(get(t, "name")), "propertyoverride-a");

  assert_true(gw(fx).ok); /* no answer yet: still Pending, nothing written */
  assert_string_equal(reason(fx, "a"), "Pending");
  eg_programs(fx, "a");
  int writes = fx->target_writes;
  assert_true(gw(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_string_equal(reason(fx, "a"), "Programmed");
  assert_string_equal(status_of(fx, "a"), "True");
  assert_non_null(strstr(message(fx, "a"), "EnvoyPatchPolicy default/propertyoverride-a"));

  apply_gw(fx, "a", 2, kPay30);
  assert_true(gw(fx).ok);
  assert_int_equal(patch_value(policy(fx, "a"), 0), 30);
  assert_string_equal(reason(fx, "a"), "Pending");
  assert_true(gw(fx).ok); /* EG's conditions are for the previous generation of the policy */
  assert_string_equal(reason(fx, "a"), "Pending");
  eg_programs(fx, "a");
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "a"), "Programmed");
  assert_int_equal(json_object_get_int64(get(get(po_of(fx, "a"), "status"), "programmedGeneration")), 2);

  apply_gw(fx, "a", 3, kBad);
  writes = fx->target_writes;
  assert_true(gw(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_non_null(policy(fx, "a"));
  assert_int_equal(patch_value(policy(fx, "a"), 0), 30); /* the last good one */
  assert_string_equal(reason(fx, "a"), "Invalid");
  assert_non_null(strstr(message(fx, "a"), "generation 2 is live in EnvoyPatchPolicy default/propertyoverride-a"));

  apply_gw(fx, "a", 4, kPay50);
  assert_true(gw(fx).ok);
  assert_int_equal(patch_value(policy(fx, "a"), 0), 50);
}

/* issue 21 on Envoy Gateway: a forged status.lastValid is never programmed; the legitimate one
 * is honoured after a restart (the policy holds it, propertyoverride.io/generation says which). */
static void test_forged_last_valid(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "b", 1, kBad);
  assert_true(gw(fx).ok);
  forge_last_valid(fx, "b", 1, kPay30);
  assert_true(gw(fx).ok);
  assert_null(policy(fx, "b"));
  assert_non_null(strstr(message(fx, "b"), "does not match what this controller wrote to EnvoyPatchPolicy "
                                       "default/propertyoverride-b"));

  apply_gw(fx, "a", 1, kPay30);
  assert_true(gw(fx).ok);
  apply_gw(fx, "a", 2, kPay50);
  assert_true(gw(fx).ok);
  assert_string_equal(annotation(policy(fx, "a"), "propertyoverride.io/generation"), "2");
  eg_programs(fx, "a");
  apply_gw(fx, "a", 3, kBad);
  assert_true(gw(fx).ok);
  restart_with(fx, "a");
  int writes = fx->target_writes;
  assert_true(gw(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_non_null(strstr(message(fx, "a"), "generation 2 is live in EnvoyPatchPolicy default/propertyoverride-a"));
  forge_last_valid(fx, "a", 2, kPay30);
  restart_with(fx, "a");
  assert_true(gw(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(patch_value(policy(fx, "a"), 0), 50);
  assert_non_null(strstr(message(fx, "a"), "status.lastValid (generation 2) does not match what this controller wrote"));
}

/* A policy of that name we did not create is never changed or deleted; drift in ours is
 * repaired. */
static void test_lookalike_untouched_and_drift_repaired(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  put(fx, "EnvoyPatchPolicy/default/propertyoverride-a",
      json_tokener_parse("{\"apiVersion\":\"gateway.envoyproxy.io/v1alpha1\",\"kind\":\"EnvoyPatchPolicy\","
                         "\"metadata\":{\"name\":\"propertyoverride-a\",\"namespace\":\"default\","
                         "\"annotations\":{\"propertyoverride.io/owner-uid\":\"uid-po-a\"}},"
                         "\"spec\":{\"type\":\"JSONPatch\",\"jsonPatches\":[]}}"));
  json_object *before = copy(policy(fx, "a"));
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  assert_true(json_object_equal(before, policy(fx, "a")));
  assert_string_equal(reason(fx, "a"), "TargetError");
  assert_non_null(strstr(message(fx, "a"), "an EnvoyPatchPolicy of this name exists"));
  json_object_object_add(get(po_of(fx, "a"), "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:00Z"));
  bump(fx, po_of(fx, "a"));
  assert_true(gw(fx).ok);
  assert_true(json_object_equal(before, policy(fx, "a")));
  assert_null(po_of(fx, "a"));
  json_object_put(before);

  apply_gw(fx, "b", 1, kPay50);
  assert_true(gw(fx).ok);
  json_object_object_add(get(patch_at(policy(fx, "b"), 0), "operation"), "value", json_object_new_int(99));
  bump(fx, policy(fx, "b"));
  assert_true(gw(fx).ok);
  assert_int_equal(patch_value(policy(fx, "b"), 0), 50);
}

/* The Gateway goes: ours goes, the status says so; it comes back: so does ours. */
static void test_gateway_gone(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  json_object_put(slot(fx, "Gateway/default/eg", false)->obj);
  slot(fx, "Gateway/default/eg", false)->obj = NULL;
  assert_true(gw(fx).ok);
  assert_null(policy(fx, "a"));
  assert_string_equal(reason(fx, "a"), "TargetNotFound");
  assert_non_null(strstr(message(fx, "a"), "Gateway default/eg does not exist"));
  gateway(fx);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
  assert_string_equal(reason(fx, "a"), "Pending");
}

/* An HTTPRoute change moves the payments backend to another rule: the cluster names follow. */
static void test_route_change_renames_clusters(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  assert_string_equal(patch_name(policy(fx, "a"), 0), "httproute/default/api/rule/0");
  route(fx, "[\"orders\",\"payments\",\"payments\"]");
  assert_true(gw(fx).ok);
  assert_int_equal(patch_count(policy(fx, "a")), 2);
  assert_string_equal(patch_name(policy(fx, "a"), 0), "httproute/default/api/rule/1");
  assert_string_equal(patch_name(policy(fx, "a"), 1), "httproute/default/api/rule/2");
}

/* A patch Envoy Gateway's names cannot carry (no rule sends to its service) is a status with
 * the adapter's reason, not a crash or a silent skip; ours is deleted meanwhile. */
static void test_refusal_is_a_status(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  apply_gw(fx, "a", 2, kNowhere);
  assert_true(gw(fx).ok);
  assert_null(policy(fx, "a"));
  assert_string_equal(reason(fx, "a"), "TargetError");
  assert_non_null(strstr(message(fx, "a"), "would touch nothing"));
  assert_non_null(strstr(message(fx, "a"), "nowhere"));
}

/* Gateway eg with HTTPRoute api, Service web, and PropertyOverride a of eg programmed: the start
 * of a move. Returns patches valid for an Istio or Consul target too. */
static const char *programmed_before_move(Fake *fx) {
  gateway(fx);
  route(fx, "[\"payments\"]");
  put(fx, "Service/default/web", json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
                                                "\"web\",\"namespace\":\"default\"},\"spec\":{\"selector\":{\"app\":\"web\"}}}"));
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
  const char *p50 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                    "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";
  return p50;
}

/* A PropertyOverride moving Gateway -> Istio Service -> Gateway -> Consul leaves nothing behind. */
static void test_move_sweeps(void **state) {
  Fake *fx = *state;
  const char *p50 = programmed_before_move(fx);
  apply(fx, "a", 2, "", "Service", "web", p50);
  assert_true(rec(fx, "Service/default/web").ok);
  assert_null(policy(fx, "a"));
  assert_non_null(obj(fx, "EnvoyFilter/default/propertyoverride-a"));
  assert_true(gw(fx).ok); /* the old target: nothing of it left to write */
  assert_null(policy(fx, "a"));

  apply_gw(fx, "a", 3, kPay50);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
  assert_null(obj(fx, "EnvoyFilter/default/propertyoverride-a"));

  apply(fx, "a", 4, "consul.hashicorp.com", "ServiceDefaults", "web", p50);
  assert_true(rec(fx, "ServiceDefaults/default/web").ok);
  assert_null(policy(fx, "a"));
  assert_non_null(obj(fx, "ServiceDefaults/default/web"));
}

/* Without Envoy Gateway enabled (no policy IO) nothing is written and the status says why. */
static void test_not_enabled(void **state) {
  Fake *fx = *state;
  gateway(fx);
  apply_gw(fx, "a", 1, kPay50);
  po_ReconcileIO io = fx->io;
  io.get_policy = NULL;
  io.write_policy = NULL;
  assert_true(po_Reconcile(&io, fx->ix, "Gateway/default/eg").ok);
  assert_null(policy(fx, "a"));
  assert_string_equal(reason(fx, "a"), "MeshNotEnabled");
  assert_non_null(strstr(message(fx, "a"), "--envoy-gateway"));
}

/* A create whose binding write fails is still ours on the next reconcile. */
static void test_unbound_create_still_ours(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  fx->conflict_at = fx->attempts + 2;
  po_ReconcileResult r = gw(fx);
  assert_false(r.ok);
  assert_null(annotation(policy(fx, "a"), "propertyoverride.io/created"));
  assert_true(gw(fx).ok);
  assert_non_null(annotation(policy(fx, "a"), "propertyoverride.io/created"));
}

/* adv3 (e2e_eg_unbound): the binding write meets a conflict (Envoy Gateway's first status write
 * of the new policy), so no status is written that time; the retry's binding write is then
 * refused (a webhook, not a conflict). That retry must record the created policy in
 * status.created as the first failure would have: it was left out (only a failed binding right
 * after the create recorded it), and a restarted controller took its own policy for a
 * look-alike (TargetError, left behind on delete). */
static void test_unbound_after_conflict_bound_after_a_restart(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  fx->conflict_at = fx->attempts + 2; /* the create passes, the binding update meets a conflict */
  po_ReconcileResult r = gw(fx);
  assert_false(r.ok);
  assert_true(r.conflict);
  fx->fail_at = fx->attempts + 1; /* the retry's binding update is refused */
  r = gw(fx);
  assert_false(r.ok);
  assert_false(r.conflict);
  assert_null(annotation(policy(fx, "a"), "propertyoverride.io/created"));
  char uid[64];
  snprintf(uid, sizeof uid, "%s", json_object_get_string(get(get(policy(fx, "a"), "metadata"), "uid")));
  json_object *cr = get(get(po_of(fx, "a"), "status"), "created");
  assert_non_null(cr);
  assert_string_equal(json_object_get_string(get(cr, "uid")), uid);
  assert_string_equal(json_object_get_string(get(cr, "namespace")), "default");
  assert_string_equal(json_object_get_string(get(cr, "name")), "propertyoverride-a");
  po_TargetIndex_Free(fx->ix); /* a new process: nothing in memory */
  fx->ix = po_TargetIndex_New();
  assert_non_null(fx->ix);
  apply_gw(fx, "a", 2, kPay30); /* indexed again, as the new process's informer does */
  assert_true(gw(fx).ok);
  assert_string_equal(annotation(policy(fx, "a"), "propertyoverride.io/created"), uid);
  assert_int_equal(patch_value(policy(fx, "a"), 0), 30);
  eg_programs(fx, "a");
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "a"), "Programmed");
}

/* Envoy Gateway answers while the cache still shows the status from before our Pending write (a
 * lagging watch: found Programmed, then Pending written over it): Programmed is written again,
 * not taken as current from the stale cache (which left Pending for good, seen end to end). */
static void test_answer_while_status_lags(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  eg_programs(fx, "a");
  assert_true(gw(fx).ok);
  assert_true(gw(fx).ok); /* found current: remembered at this version */
  assert_string_equal(reason(fx, "a"), "Programmed");
  fx->status_lags = true;
  route(fx, "[\"payments\",\"payments\"]");
  int patches = fx->status_patches;
  assert_true(gw(fx).ok); /* the policy renamed: Pending written (the cache still says Programmed) */
  assert_int_equal(fx->status_patches, patches + 1);
  eg_programs(fx, "a");
  assert_true(gw(fx).ok);
  assert_int_equal(fx->status_patches, patches + 2); /* Programmed written over our Pending */
  assert_true(gw(fx).ok);
  assert_int_equal(fx->status_patches, patches + 2); /* and not again */
}

/* adv3: a move Gateway -> Service whose EnvoyFilter cannot be created (a refusing webhook, here
 * a failed write): the EnvoyPatchPolicy of the last valid generation stays until the new target
 * is written, whichever target reconciles first. */
static void test_adv_move_keeps_policy_until_written(void **state) {
  Fake *fx = *state;
  const char *p50 = programmed_before_move(fx);
  apply(fx, "a", 2, "", "Service", "web", p50);
  assert_true(gw(fx).ok); /* the old target first */
  assert_non_null(policy(fx, "a"));
  fx->conflict_at = fx->attempts + 1;
  (void)rec(fx, "Service/default/web");
  assert_null(obj(fx, "EnvoyFilter/default/propertyoverride-a"));
  assert_non_null(policy(fx, "a"));
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
  assert_true(rec(fx, "Service/default/web").ok);
  assert_non_null(obj(fx, "EnvoyFilter/default/propertyoverride-a"));
  assert_null(policy(fx, "a"));
}

/* Whether s is well-formed UTF-8 (enough for the test: lead byte, then its continuation bytes). */
static bool utf8_ok(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) return false;
    p++;
    for (int k = 0; k < n; k++, p++) {
      if ((*p & 0xC0) != 0x80) return false;
    }
  }
  return true;
}

/* adv3: Envoy Gateway's message is cut to fit our status; a cut inside a multi-byte character
 * leaves invalid UTF-8 that the API server rewrites (U+FFFD), so the status never reads back as
 * written. The cut must fall on a character boundary. */
static void test_adv_long_message_cut_on_utf8_boundary(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  char msg[1400];
  memset(msg, 'x', 599);
  size_t n = 599;
  for (int i = 0; i < 300; i++) n += (size_t)snprintf(msg + n, sizeof msg - n, "\xc3\xa9");
  eg_answer(fx, "a", "True", "Accepted", "False", "Invalid", msg, 0);
  assert_true(gw(fx).ok);
  assert_string_equal(reason(fx, "a"), "Invalid");
  assert_non_null(strstr(message(fx, "a"), "xxxxxxxx"));
  assert_true(utf8_ok(message(fx, "a")));
}

/* Gateway eg with listener "shared" (routes admitted by a namespace selector) and plain "http",
 * HTTPRoute api through it, and PropertyOverride a of eg programmed. */
static void selector_gateway_programmed(Fake *fx) {
  put(fx, "Gateway/default/eg",
      json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"Gateway\",\"metadata\":{\"name\":"
                         "\"eg\",\"namespace\":\"default\"},\"spec\":{\"gatewayClassName\":\"eg\",\"listeners\":["
                         "{\"name\":\"shared\",\"protocol\":\"HTTP\",\"port\":8080,\"allowedRoutes\":{\"namespaces\":"
                         "{\"from\":\"Selector\",\"selector\":{\"matchLabels\":{\"shared\":\"yes\"}}}}},"
                         "{\"name\":\"http\",\"protocol\":\"HTTP\",\"port\":80}]}}"));
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
}

/* adv3: Gateway eg has a listener admitting routes by a namespace selector beside a plain one;
 * HTTPRoute default/api attaches through the plain one (same namespace), whatever the selector
 * says. Its clusters are known, so a cluster patch is not refused ("admits HTTPRoutes by a
 * namespace selector") and our policy is not deleted. */
static void test_adv_selector_listener_beside_attaching_one(void **state) {
  Fake *fx = *state;
  selector_gateway_programmed(fx);
  assert_int_equal(patch_count(policy(fx, "a")), 1);
  assert_string_equal(patch_name(policy(fx, "a"), 0), "httproute/default/api/rule/0");
}

/* adv3: a tenant of another namespace, whose HTTPRoute may attach to
 * Gateway eg (allowedRoutes from All), names Service default/payments in a rule beside its own
 * backend. Without a ReferenceGrant in default Envoy Gateway never sends to payments for that
 * rule (the backendRef is not permitted), so the rule's cluster is the tenant's alone; yet the
 * adapter counts the rule as a payments one, refuses the patch ("would apply to that backend
 * too") and deleted our EnvoyPatchPolicy: any tenant could switch off a Gateway owner's patches.
 * Now a backendRef into another namespace than its route's is not followed (eg.c backend_is). */
static void test_adv_foreign_route_cannot_delete_policy(void **state) {
  Fake *fx = *state;
  put(fx, "Gateway/default/eg",
      json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"Gateway\",\"metadata\":{\"name\":"
                         "\"eg\",\"namespace\":\"default\"},\"spec\":{\"gatewayClassName\":\"eg\",\"listeners\":[{\"name\":"
                         "\"http\",\"protocol\":\"HTTP\",\"port\":80,\"allowedRoutes\":{\"namespaces\":{\"from\":\"All\"}}}]}}"));
  route(fx, "[\"payments\"]");
  apply_gw(fx, "a", 1, kPay50);
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
  put(fx, "HTTPRoute/evil/grab",
      json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\",\"metadata\":{\"name\":"
                         "\"grab\",\"namespace\":\"evil\"},\"spec\":{\"parentRefs\":[{\"name\":\"eg\",\"namespace\":"
                         "\"default\"}],\"rules\":[{\"backendRefs\":[{\"name\":\"payments\",\"namespace\":\"default\","
                         "\"port\":8080},{\"name\":\"mine\",\"port\":8080}]}]}}"));
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
  assert_int_equal(patch_count(policy(fx, "a")), 1);
  assert_string_equal(patch_name(policy(fx, "a"), 0), "httproute/default/api/rule/0");
}
/* adv3: any tenant may create an HTTPRoute naming Gateway eg; when it names
 * a listener that admits routes by a namespace selector (and no other admits it), the adapter
 * cannot tell whether it attaches (no Namespace labels at hand) and refuses every cluster patch
 * of the Gateway: our policy was deleted, though the tenant's namespace may well not match. Now
 * only a route that may attach and has a rule the patch would touch (a backendRef to one of its
 * services, or any rule with backends for a patch without services: tests/cli/testdata/
 * eg-render-refusals/namespace-selector.yaml) stops it (eg.c uncertain_matters). */
static void test_adv_foreign_selector_route_cannot_delete_policy(void **state) {
  Fake *fx = *state;
  selector_gateway_programmed(fx);
  put(fx, "HTTPRoute/evil/grab",
      json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\",\"metadata\":{\"name\":"
                         "\"grab\",\"namespace\":\"evil\"},\"spec\":{\"parentRefs\":[{\"name\":\"eg\",\"namespace\":"
                         "\"default\",\"sectionName\":\"shared\"}],\"rules\":[{\"backendRefs\":[{\"name\":\"mine\","
                         "\"port\":8080}]}]}}"));
  assert_true(gw(fx).ok);
  assert_non_null(policy(fx, "a"));
}
/* adv3, once a known failure (issue 25): a PropertyOverride's name may be 253 characters, and its
 * EnvoyPatchPolicy was named "propertyoverride-<name>" with no bound: past 236 characters the
 * name was over the API server's 253 and the PropertyOverride was refused. A long name is now
 * cut and hashed (po_EG_PolicyName): programmed, under a name of at most 253 characters, and two
 * long names that share their first 236 characters get two policies. */
static void test_adv_long_name_policy_name_valid(void **state) {
  Fake *fx = *state;
  gateway(fx);
  route(fx, "[\"payments\"]");
  char name[254], other[254];
  memset(name, 'n', 253);
  name[253] = '\0';
  memcpy(other, name, sizeof other);
  other[252] = 'm';
  apply_gw(fx, name, 1, kPay50);
  apply_gw(fx, other, 1, kPay50);
  assert_true(gw(fx).ok);
  const char *pname = json_object_get_string(get(get(get(po_of(fx, name), "status"), "target"), "name"));
  const char *oname = json_object_get_string(get(get(get(po_of(fx, other), "status"), "target"), "name"));
  assert_non_null(pname);
  assert_non_null(oname);
  assert_true(strlen(pname) <= 253);
  assert_string_not_equal(pname, oname);
  assert_non_null(policy_named(fx, pname));
  assert_non_null(policy_named(fx, oname));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_last_valid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_foreign_route_cannot_delete_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_foreign_selector_route_cannot_delete_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookalike_untouched_and_drift_repaired, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gateway_gone, setup, teardown),
      cmocka_unit_test_setup_teardown(test_route_change_renames_clusters, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refusal_is_a_status, setup, teardown),
      cmocka_unit_test_setup_teardown(test_move_sweeps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_enabled, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unbound_create_still_ours, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unbound_after_conflict_bound_after_a_restart, setup, teardown),
      cmocka_unit_test_setup_teardown(test_answer_while_status_lags, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_move_keeps_policy_until_written, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_long_message_cut_on_utf8_boundary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_selector_listener_beside_attaching_one, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_long_name_policy_name_valid, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
