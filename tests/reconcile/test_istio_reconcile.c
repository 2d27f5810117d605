/* The reconciler programming Istio targets (issue 12): a PropertyOverride of a Service (or of
 * the Mesh) gets its EnvoyFilter created, updated and deleted through po_Istio_Plan, over the
 * same load, plan and status phases as Consul's targets, against the in-memory API server. */
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

static const char *kP50 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                          "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";
static const char *kP30 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                          "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":30}]";
static const char *kBad = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                          "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":150}]";
/* valid for Envoy, refused by the Istio adapter (MERGE cannot remove a field) */
static const char *kRemove = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                             "\"op\":\"remove\",\"path\":\"/outlier_detection\"}]";

/* A PropertyOverride of namespace ns targeting `kind` `target` (uid "uid-po-<name>" in default,
 * else "uid-po-<ns>-<name>": one per object, as a server gives), stored and
 * indexed as the informer handlers would; finalizers and status kept as a server keeps them. */
static void apply_istio(Fake *fx, const char *ns, const char *name, int gen, const char *kind, const char *target,
                        const char *patches) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"generation\":%d,\"uid\":\"uid-po-%s%s%s\"},"
           "\"spec\":{\"targetRef\":{\"group\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\"},\"patches\":%s}}",
           name, ns, gen, strcmp(ns, "default") ? ns : "", strcmp(ns, "default") ? "-" : "", name, strcmp(kind, "Mesh") ? "" : "networking.istio.io", kind, target, patches);
  json_object *o = json_tokener_parse(text);
  assert_non_null(o);
  store_override(fx, ns, name, o);
}

static void service(Fake *fx, const char *name, const char *selector_json) {
  char text[1024], k[300];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
           "\"spec\":{\"selector\":%s,\"ports\":[{\"port\":8080}]}}",
           name, selector_json);
  snprintf(k, sizeof k, "Service/default/%s", name);
  put(fx, k, json_tokener_parse(text));
}

static json_object *filter(Fake *fx, const char *ns, const char *name) {
  char k[300];
  snprintf(k, sizeof k, "EnvoyFilter/%s/propertyoverride-%s", ns, name);
  return obj(fx, k);
}
/* A Mesh PropertyOverride's EnvoyFilter in the root namespace (istio-system). */
static json_object *mesh_filter(Fake *fx, const char *po_ns, const char *name) {
  char k[300];
  snprintf(k, sizeof k, "EnvoyFilter/istio-system/propertyoverride.%s.%s", po_ns, name);
  return obj(fx, k);
}
static int64_t max_percent(json_object *ef) {
  json_object *cp = json_object_array_get_idx(get(get(ef, "spec"), "configPatches"), 0);
  return json_object_get_int64(get(get(get(get(cp, "patch"), "value"), "outlier_detection"), "max_ejection_percent"));
}

static po_ReconcileResult web(Fake *fx) { return rec(fx, "Service/default/web"); }

/* Create, idempotence, the status naming the EnvoyFilter, an update, an invalid update keeping
 * the last good EnvoyFilter, then valid again. */
static void test_service_lifecycle(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kP50);
  char key[300];
  po_Reconcile_OverrideKey(po_of(fx, "a"), key, sizeof key);
  assert_string_equal(key, "Service/default/web");
  po_ReconcileResult r = web(fx);
  assert_true(r.ok);
  json_object *ef = filter(fx, "default", "a");
  assert_non_null(ef);
  assert_string_equal(json_object_get_string(get(get(get(get(ef, "spec"), "workloadSelector"), "labels"), "app")), "web");
  assert_int_equal(max_percent(ef), 50);
  assert_string_equal(annotation(ef, "propertyoverride.io/owner-uid"), "uid-po-a");
  assert_non_null(annotation(ef, "propertyoverride.io/created")); /* bound to its own uid */
  assert_string_equal(reason(fx, "a"), "Programmed");
  assert_non_null(strstr(message(fx, "a"), "written is programmed"));
  json_object *t = get(get(po_of(fx, "a"), "status"), "target");
  assert_string_equal(json_object_get_string(get(t, "kind")), "EnvoyFilter");
  assert_string_equal(json_object_get_string(get(t, "apiVersion")), "networking.istio.io/v1alpha3");
  assert_string_equal(json_object_get_string(get(t, "name")), "propertyoverride-a");
  assert_string_equal(json_object_get_string(json_object_array_get_idx(get(get(po_of(fx, "a"), "metadata"), "finalizers"), 0)),
                      PO_FINALIZER);
  int writes = fx->target_writes;
  r = web(fx);
  assert_true(r.ok);
  assert_int_equal(fx->target_writes, writes); /* nothing to do */

  apply_istio(fx, "default", "a", 2, "Service", "web", kP30);
  assert_true(web(fx).ok);
  assert_int_equal(max_percent(filter(fx, "default", "a")), 30);
  assert_int_equal(json_object_get_int64(get(get(po_of(fx, "a"), "status"), "programmedGeneration")), 2);

  apply_istio(fx, "default", "a", 3, "Service", "web", kBad);
  writes = fx->target_writes;
  assert_true(web(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(max_percent(filter(fx, "default", "a")), 30); /* the last good one */
  assert_string_equal(reason(fx, "a"), "Invalid");
  assert_non_null(strstr(message(fx, "a"), "generation 2 is live in EnvoyFilter default/propertyoverride-a"));
  assert_string_equal(json_object_get_string(get(condition(fx, "a", "Accepted"), "status")), "False");

  /* refused by the Istio adapter: invalid too, and the last good one stays */
  apply_istio(fx, "default", "a", 4, "Service", "web", kRemove);
  assert_true(web(fx).ok);
  assert_int_equal(max_percent(filter(fx, "default", "a")), 30);
  assert_non_null(strstr(json_object_get_string(get(condition(fx, "a", "Accepted"), "message")), "Istio"));

  apply_istio(fx, "default", "a", 5, "Service", "web", kP50);
  assert_true(web(fx).ok);
  assert_int_equal(max_percent(filter(fx, "default", "a")), 50);
  assert_string_equal(reason(fx, "a"), "Programmed");
}

/* issue 21: status.lastValid is programmed only when the EnvoyFilter holds what the controller
 * wrote for it (its content and propertyoverride.io/generation), or this process recorded it.
 * The only generation invalid, the record forged to a valid spec: no EnvoyFilter, and the status
 * says the record does not match. */
static void test_forged_last_valid_never_admitted(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kBad);
  assert_true(web(fx).ok);
  forge_last_valid(fx, "a", 1, kP30);
  assert_true(web(fx).ok);
  assert_null(filter(fx, "default", "a"));
  assert_string_equal(reason(fx, "a"), "Invalid");
  assert_null(strstr(message(fx, "a"), "is live"));
  assert_non_null(strstr(message(fx, "a"), "status.lastValid (generation 1) does not match what this controller wrote to "
                                       "EnvoyFilter default/propertyoverride-a"));
  assert_string_equal(fx->last_event_reason, "LastValidMismatch");
}

/* Generation 2 (50) live, generation 3 invalid, the record forged to generation 2 with 30, a
 * restart: the EnvoyFilter keeps 50. The legitimate record is honoured after a restart (nothing
 * written), and one forged to generation 1 with generation 2's very patches is not (the
 * EnvoyFilter says generation 2). */
static void test_forged_last_valid_after_restart(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kP30);
  assert_true(web(fx).ok);
  apply_istio(fx, "default", "a", 2, "Service", "web", kP50);
  assert_true(web(fx).ok);
  assert_string_equal(annotation(filter(fx, "default", "a"), "propertyoverride.io/generation"), "2");
  apply_istio(fx, "default", "a", 3, "Service", "web", kBad);
  assert_true(web(fx).ok);
  restart_with(fx, "a");
  int writes = fx->target_writes;
  assert_true(web(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_non_null(strstr(message(fx, "a"), "generation 2 is live in EnvoyFilter default/propertyoverride-a"));
  assert_null(strstr(message(fx, "a"), "does not match"));

  forge_last_valid(fx, "a", 2, kP30);
  restart_with(fx, "a");
  assert_true(web(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(max_percent(filter(fx, "default", "a")), 50);
  assert_non_null(strstr(message(fx, "a"), "EnvoyFilter default/propertyoverride-a is left as it is (generation 2 is live in it); "
                                       "status.lastValid (generation 2) does not match what this controller wrote to EnvoyFilter "
                                       "default/propertyoverride-a (it holds generation 2 of this PropertyOverride with other "
                                       "patches): it is ignored"));
  assert_int_equal(json_object_get_int64(get(get(po_of(fx, "a"), "status"), "programmedGeneration")), 2);
  forge_last_valid(fx, "a", 1, kP50);
  restart_with(fx, "a");
  assert_true(web(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  assert_non_null(strstr(message(fx, "a"), "status.lastValid (generation 1) does not match what this controller wrote to "
                                       "EnvoyFilter default/propertyoverride-a (it holds generation 2 of this PropertyOverride)"));
}

/* The Service's selector changes: the EnvoyFilter follows; the Service goes: ours goes too, and
 * the status says so; it comes back: so does ours. */
static void test_selector_change_and_service_deleted(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kP50);
  assert_true(web(fx).ok);
  service(fx, "web", "{\"app\":\"web2\",\"tier\":\"x\"}");
  assert_true(web(fx).ok);
  json_object *labels = get(get(get(filter(fx, "default", "a"), "spec"), "workloadSelector"), "labels");
  assert_string_equal(json_object_get_string(get(labels, "app")), "web2");
  assert_string_equal(json_object_get_string(get(labels, "tier")), "x");

  json_object_put(slot(fx, "Service/default/web", false)->obj);
  slot(fx, "Service/default/web", false)->obj = NULL;
  assert_true(web(fx).ok);
  assert_null(filter(fx, "default", "a"));
  assert_string_equal(reason(fx, "a"), "TargetNotFound");
  assert_non_null(strstr(message(fx, "a"), "Service default/web does not exist"));

  service(fx, "web", "{\"app\":\"web\"}");
  assert_true(web(fx).ok);
  assert_non_null(filter(fx, "default", "a"));
  assert_string_equal(reason(fx, "a"), "Programmed");

  /* a Service without a selector: a filter without one would patch the whole namespace */
  service(fx, "web", "{}");
  assert_true(web(fx).ok);
  assert_null(filter(fx, "default", "a"));
  assert_string_equal(reason(fx, "a"), "TargetError");
  assert_non_null(strstr(message(fx, "a"), "no spec.selector"));
}

/* An EnvoyFilter of that name we did not create (by hand, a copy) is never changed or deleted,
 * and the status says so; drift in ours is repaired. */
static void test_foreign_left_alone_and_drift_repaired(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  put(fx, "EnvoyFilter/default/propertyoverride-a",
      json_tokener_parse("{\"apiVersion\":\"networking.istio.io/v1alpha3\",\"kind\":\"EnvoyFilter\","
                         "\"metadata\":{\"name\":\"propertyoverride-a\",\"namespace\":\"default\","
                         "\"annotations\":{\"propertyoverride.io/owner-uid\":\"uid-po-a\"}},\"spec\":{\"configPatches\":[]}}"));
  json_object *before = copy(filter(fx, "default", "a"));
  apply_istio(fx, "default", "a", 1, "Service", "web", kP50);
  assert_true(web(fx).ok);
  assert_true(json_object_equal(before, filter(fx, "default", "a")));
  json_object_put(before);
  assert_string_equal(reason(fx, "a"), "TargetError");
  assert_non_null(strstr(message(fx, "a"), "left alone"));
  /* deleting the PropertyOverride leaves it too */
  json_object_object_add(get(po_of(fx, "a"), "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:00Z"));
  bump(fx, po_of(fx, "a"));
  assert_true(web(fx).ok);
  assert_non_null(filter(fx, "default", "a"));
  assert_null(po_of(fx, "a"));

  /* ours, edited by someone: put back */
  apply_istio(fx, "default", "b", 1, "Service", "web", kP50);
  assert_true(web(fx).ok);
  json_object *cp = json_object_array_get_idx(get(get(filter(fx, "default", "b"), "spec"), "configPatches"), 0);
  json_object_object_add(get(get(get(cp, "patch"), "value"), "outlier_detection"), "max_ejection_percent",
                         json_object_new_int(99));
  bump(fx, filter(fx, "default", "b"));
  assert_true(web(fx).ok);
  assert_int_equal(max_percent(filter(fx, "default", "b")), 50);
}

/* The EnvoyFilter's cache behind our create of it (its watch lagging: the e2e_echolag case) when
 * its PropertyOverride is deleted: absent there, the reconcile found nothing to delete and
 * released the finalizer; holding the create's version (before the binding write), it took it for
 * a look-alike and did the same. Either way the EnvoyFilter stayed for good. */
static void test_cache_behind_own_create(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kP50);
  assert_true(web(fx).ok);
  Slot *s = slot(fx, "EnvoyFilter/default/propertyoverride-a", false);
  assert_non_null(s);
  json_object *made = s->obj; /* the create's version: without the created annotation bound */
  json_object_object_del(get(get(made, "metadata"), "annotations"), "propertyoverride.io/created");
  s->obj = NULL; /* not in the cache yet */
  json_object_object_add(get(po_of(fx, "a"), "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:00Z"));
  bump(fx, po_of(fx, "a"));
  po_ReconcileResult r = web(fx);
  assert_false(r.ok); /* retried soon, as after a conflict */
  assert_true(r.conflict);
  assert_non_null(strstr(r.error, "not in the cache yet"));
  assert_non_null(po_of(fx, "a")); /* the finalizer stays */
  assert_int_equal(po_TargetIndex_Stats(fx->ix).cache_behind, 1);
  s->obj = made; /* its ADDED event in: the create's version */
  assert_true(web(fx).ok);
  assert_null(filter(fx, "default", "a")); /* ours: deleted */
  assert_null(po_of(fx, "a"));             /* then the finalizer */
}

/* A create whose binding write fails (a 409) is still ours on the next reconcile (noted in the
 * index), never taken for a look-alike. */
static void test_unbound_create_still_ours(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kP50);
  fx->conflict_at = fx->attempts + 2; /* the create passes, the binding update meets a conflict */
  po_ReconcileResult r = web(fx);
  assert_false(r.ok);
  assert_true(r.conflict);
  assert_null(annotation(filter(fx, "default", "a"), "propertyoverride.io/created"));
  assert_true(web(fx).ok);
  assert_non_null(annotation(filter(fx, "default", "a"), "propertyoverride.io/created"));
  assert_string_equal(reason(fx, "a"), "Programmed");
}

/* issue 12 (adv1): the binding write fails (a refusing webhook, not a conflict) and the
 * controller restarts before it succeeds. The uid the create returned is in the
 * PropertyOverride's status (status.created), which only the controller writes: the new
 * process binds the EnvoyFilter by it instead of leaving it as a look-alike forever. */
static void unbound_then_restart(Fake *fx) {
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kP50);
  fx->fail_at = fx->attempts + 2; /* the create passes, the binding update fails */
  po_ReconcileResult r = web(fx);
  assert_false(r.ok);
  assert_false(r.conflict);
  assert_null(annotation(filter(fx, "default", "a"), "propertyoverride.io/created"));
  json_object *cr = get(get(po_of(fx, "a"), "status"), "created");
  assert_string_equal(json_object_get_string(get(cr, "uid")), json_object_get_string(get(get(filter(fx, "default", "a"), "metadata"), "uid")));
  assert_string_equal(json_object_get_string(get(cr, "namespace")), "default");
  assert_string_equal(json_object_get_string(get(cr, "name")), "propertyoverride-a");
  po_TargetIndex_Free(fx->ix); /* a new process: nothing in memory */
  fx->ix = po_TargetIndex_New();
  assert_non_null(fx->ix);
  apply_istio(fx, "default", "a", 2, "Service", "web", kP30);
}

static void test_unbound_create_bound_after_a_restart(void **state) {
  Fake *fx = *state;
  unbound_then_restart(fx);
  char fuid[64];
  snprintf(fuid, sizeof fuid, "%s", json_object_get_string(get(get(filter(fx, "default", "a"), "metadata"), "uid")));
  assert_true(web(fx).ok);
  assert_string_equal(annotation(filter(fx, "default", "a"), "propertyoverride.io/created"), fuid);
  assert_int_equal(max_percent(filter(fx, "default", "a")), 30);
  assert_string_equal(reason(fx, "a"), "Programmed");
}

/* The record names a uid: one at that name with another uid (ours deleted by a tenant and a
 * look-alike written in its place, a copy, a restore) is never adopted by it. */
static void test_unbound_record_adopts_no_look_alike(void **state) {
  Fake *fx = *state;
  unbound_then_restart(fx);
  json_object *look = copy(filter(fx, "default", "a"));
  json_object_object_add(get(look, "metadata"), "uid", json_object_new_string("uid-by-hand"));
  put(fx, "EnvoyFilter/default/propertyoverride-a", look);
  json_object *before = copy(look);
  assert_true(web(fx).ok);
  assert_true(json_object_equal(before, filter(fx, "default", "a")));
  json_object_put(before);
  assert_string_equal(reason(fx, "a"), "TargetError");
  assert_non_null(strstr(message(fx, "a"), "left alone"));
}

/* Without Istio enabled (no EnvoyFilter IO) nothing is written and the status says why. */
static void test_not_enabled(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "default", "a", 1, "Service", "web", kP50);
  po_ReconcileIO io = fx->io;
  io.get_filter = NULL;
  io.write_filter = NULL;
  assert_true(po_Reconcile(&io, fx->ix, "Service/default/web").ok);
  assert_null(filter(fx, "default", "a"));
  assert_string_equal(reason(fx, "a"), "MeshNotEnabled");
}

/* The mesh options reach the compile: the cluster domain and the root namespace. */
static void test_options_reach_the_compile(void **state) {
  Fake *fx = *state;
  po_TargetOptions o = {.cluster_domain = "corp.example", .istio_root_namespace = "mesh-root"};
  po_TargetIndex_SetOptions(fx->ix, &o);
  const char *svc = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\","
                    "\"services\":[{\"name\":\"db\"}]},\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\","
                    "\"value\":50}]";
  apply_istio(fx, "mesh", "m", 1, "Mesh", "global", svc);
  assert_true(rec(fx, "Mesh/mesh/global").ok);
  json_object *ef = obj(fx, "EnvoyFilter/mesh-root/propertyoverride.mesh.m");
  assert_non_null(ef);
  json_object *cp = json_object_array_get_idx(get(get(ef, "spec"), "configPatches"), 0);
  assert_string_equal(json_object_get_string(get(get(get(cp, "match"), "cluster"), "service")), "db.default.svc.corp.example");
}

/* A PropertyOverride moving between targets: its EnvoyFilter goes from where it no longer
 * belongs, whichever mesh the new target is (the old target's reconcile no longer lists it). */
static void test_retarget_sweeps_the_old_filter(void **state) {
  Fake *fx = *state;
  service(fx, "web", "{\"app\":\"web\"}");
  apply_istio(fx, "mesh", "m", 1, "Service", "web", kP50);
  /* namespace "mesh" has no Service web: create one there */
  put(fx, "Service/mesh/web", json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
                                             "\"namespace\":\"mesh\"},\"spec\":{\"selector\":{\"app\":\"web\"}}}"));
  assert_true(rec(fx, "Service/mesh/web").ok);
  assert_non_null(filter(fx, "mesh", "m"));
  /* Service -> Mesh: the root namespace gets it, the namespace's goes */
  apply_istio(fx, "mesh", "m", 2, "Mesh", "global", kP50);
  assert_true(rec(fx, "Mesh/mesh/global").ok);
  assert_non_null(mesh_filter(fx, "mesh", "m"));
  assert_null(filter(fx, "mesh", "m"));
  /* an invalid move back keeps the Mesh one (its last valid generation is held there) */
  apply_istio(fx, "mesh", "m", 3, "Service", "web", kBad);
  assert_true(rec(fx, "Service/mesh/web").ok);
  assert_true(rec(fx, "Mesh/mesh/global").ok);
  assert_non_null(mesh_filter(fx, "mesh", "m"));
  /* to a Consul target: the Consul reconcile removes the EnvoyFilter */
  Slot *sl = slot(fx, "po/mesh/m", false);
  json_object *spec = get(sl->obj, "spec");
  json_object_object_add(spec, "targetRef", json_tokener_parse("{\"kind\":\"ServiceDefaults\",\"name\":\"web\"}"));
  json_object_object_add(spec, "patches", json_tokener_parse(kP50));
  json_object_object_add(get(sl->obj, "metadata"), "generation", json_object_new_int(4));
  bump(fx, sl->obj);
  char key[300], old[300], held[300];
  po_Reconcile_OverrideKey(sl->obj, key, sizeof key);
  assert_string_equal(key, "ServiceDefaults/mesh/web");
  po_TargetIndex_Set(fx->ix, "mesh", "m", key, old, sizeof old);
  po_Reconcile_HeldKey(sl->obj, held, sizeof held);
  po_TargetIndex_SetHeld(fx->ix, "mesh", "m", held, old, sizeof old);
  assert_true(rec(fx, "ServiceDefaults/mesh/web").ok);
  assert_null(mesh_filter(fx, "mesh", "m"));
  assert_non_null(obj(fx, "ServiceDefaults/mesh/web"));
}

/* Mesh PropertyOverrides of one name in two namespaces (both allowed Mesh): one EnvoyFilter
 * each in the root namespace, both programmed (one name for both made the second Foreign). */
static void test_mesh_same_name_two_namespaces(void **state) {
  Fake *fx = *state;
  fx->tenancy.proxy_defaults_from[1] = "mesh2";
  fx->tenancy.n = 2;
  apply_istio(fx, "mesh", "m", 1, "Mesh", "global", kP50);
  apply_istio(fx, "mesh2", "m", 1, "Mesh", "global", kP30);
  bool a = rec(fx, "Mesh/mesh/global").ok, b = rec(fx, "Mesh/mesh2/global").ok;
  fx->tenancy.n = 1;
  assert_true(a && b);
  assert_int_equal(max_percent(mesh_filter(fx, "mesh", "m")), 50);
  assert_int_equal(max_percent(mesh_filter(fx, "mesh2", "m")), 30);
  assert_string_equal(annotation(mesh_filter(fx, "mesh2", "m"), "propertyoverride.io/owner-uid"), "uid-po-mesh2-m");
  json_object *st = get(obj(fx, "po/mesh2/m"), "status");
  assert_non_null(st);
  assert_string_equal(json_object_get_string(get(get(st, "target"), "name")), "propertyoverride.mesh2.m");
}

static bool g_new_live_at_legacy_delete = true;
static int g_legacy_deletes;
/* Sees every write: a deletion while the new-named EnvoyFilter is not there yet would leave
 * the mesh without the patches. */
static void watch_upgrade(Fake *fx, json_object *o) {
  if (o) return;
  g_legacy_deletes++;
  if (!mesh_filter(fx, "mesh", "m")) g_new_live_at_legacy_delete = false;
}

/* Upgrade: a Mesh EnvoyFilter written by an earlier version under the old name (ours: owner and
 * created annotations) is replaced by the new name, created first, the old deleted after; one
 * of the old name owned by another PropertyOverride stays. A failed deletion is retried. */
static void test_mesh_upgrade_from_old_name(void **state) {
  Fake *fx = *state;
  apply_istio(fx, "mesh", "m", 1, "Mesh", "global", kP50);
  assert_true(rec(fx, "Mesh/mesh/global").ok);
  /* what the earlier version wrote: the same object under the old name */
  json_object *old = copy(mesh_filter(fx, "mesh", "m"));
  json_object_object_add(get(old, "metadata"), "name", json_object_new_string("propertyoverride-m"));
  put(fx, "EnvoyFilter/istio-system/propertyoverride-m", old);
  Slot *fresh = slot(fx, "EnvoyFilter/istio-system/propertyoverride.mesh.m", false);
  json_object_put(fresh->obj);
  fresh->obj = NULL;
  /* its deletion's watch event, as the informer's handler tells the index (filter_event) */
  po_TargetIndex_ObjectSeen(fx->ix, "EnvoyFilter", "istio-system", "propertyoverride.mesh.m", NULL);
  /* and another PropertyOverride's of the old name */
  put(fx, "EnvoyFilter/istio-system/propertyoverride-other",
      json_tokener_parse("{\"apiVersion\":\"networking.istio.io/v1alpha3\",\"kind\":\"EnvoyFilter\","
                         "\"metadata\":{\"name\":\"propertyoverride-other\",\"namespace\":\"istio-system\","
                         "\"annotations\":{\"propertyoverride.io/owner-uid\":\"uid-po-someone\"}},\"spec\":{}}"));
  apply_istio(fx, "mesh", "other", 1, "Mesh", "global", kP50);

  /* the create of the new one fails: the old one stays live */
  fx->conflict_at = fx->attempts + 1;
  assert_false(po_Reconcile(&fx->io, fx->ix, "Mesh/mesh/global").ok);
  assert_non_null(obj(fx, "EnvoyFilter/istio-system/propertyoverride-m"));

  fx->check_write = watch_upgrade;
  po_ReconcileResult r = rec(fx, "Mesh/mesh/global");
  fx->check_write = NULL;
  assert_true(r.ok);
  assert_true(g_new_live_at_legacy_delete);
  assert_int_equal(g_legacy_deletes, 1);
  assert_null(obj(fx, "EnvoyFilter/istio-system/propertyoverride-m"));
  assert_int_equal(max_percent(mesh_filter(fx, "mesh", "m")), 50);
  assert_non_null(obj(fx, "EnvoyFilter/istio-system/propertyoverride-other")); /* not ours: stays */
  assert_non_null(mesh_filter(fx, "mesh", "other"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_service_lifecycle, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_last_valid_never_admitted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_last_valid_after_restart, setup, teardown),
      cmocka_unit_test_setup_teardown(test_selector_change_and_service_deleted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreign_left_alone_and_drift_repaired, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_behind_own_create, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unbound_create_still_ours, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unbound_create_bound_after_a_restart, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unbound_record_adopts_no_look_alike, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_enabled, setup, teardown),
      cmocka_unit_test_setup_teardown(test_options_reach_the_compile, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retarget_sweeps_the_old_filter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mesh_same_name_two_namespaces, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mesh_upgrade_from_old_name, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
