/* The reconcile of one target against an in-memory API (the IO table): create, preserve other
 * extensions, invalid updates keep the last good entry, drift repair, deletion with the
 * finalizer, overlaps, conflicts, idempotence. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/reconcile/reconcile.h"
#include "po/targets/consul.h"

/* ---- a tiny API server in memory ---- */
enum { kMax = 160 };
typedef struct {
  char key[300];
  json_object *obj;
} Slot;
typedef struct {
  Slot slots[kMax];
  int rv;
  int target_writes, override_patches, status_patches, uids;
  bool conflict_next;
  int conflict_at; /* the target write attempt (1-based) that meets a conflict; 0: none */
  int attempts;
  bool unsynced;
  int target_events;
  char last_target_reason[64];
  int lent; /* objects read and not released yet */
} Fake;

static Fake F;

static json_object *get(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static Slot *slot(const char *key, bool create) {
  for (int i = 0; i < kMax; i++) if (F.slots[i].obj && !strcmp(F.slots[i].key, key)) return &F.slots[i];
  if (!create) return NULL;
  for (int i = 0; i < kMax; i++) if (!F.slots[i].obj) { snprintf(F.slots[i].key, sizeof F.slots[i].key, "%s", key); return &F.slots[i]; }
  return NULL;
}

static void bump(json_object *o) {
  char rv[32];
  snprintf(rv, sizeof rv, "%d", ++F.rv);
  json_object_object_add(get(o, "metadata"), "resourceVersion", json_object_new_string(rv));
}

static void put(const char *key, json_object *o) {
  if (!get(get(o, "metadata"), "uid")) { /* every stored object has one */
    char uid[32];
    snprintf(uid, sizeof uid, "uid-%d", ++F.uids);
    json_object_object_add(get(o, "metadata"), "uid", json_object_new_string(uid));
  }
  Slot *s = slot(key, true);
  json_object_put(s->obj);
  s->obj = o;
  bump(o);
}

static json_object *copy(json_object *o) {
  json_object *c = NULL;
  if (o) json_object_deep_copy(o, &c, NULL);
  return c;
}

/* Reads hand out a copy as the cache would hand out its own object, and a second copy to check,
 * when it comes back, that the reconcile did not change it (the cache's objects are shared
 * between threads: read only). */
typedef struct {
  json_object *given, *snapshot;
} Lent;

static const json_object *lend(Slot *s, void **ref) {
  *ref = NULL;
  if (!s) return NULL;
  Lent *l = malloc(sizeof *l);
  assert_non_null(l);
  l->given = copy(s->obj);
  l->snapshot = copy(s->obj);
  *ref = l;
  F.lent++;
  return l->given;
}

static void f_release(void *ctx, void *ref) {
  (void)ctx;
  Lent *l = ref;
  assert_non_null(l);
  assert_true(json_object_equal(l->given, l->snapshot)); /* never changed */
  json_object_put(l->given);
  json_object_put(l->snapshot);
  free(l);
  F.lent--;
}

static const json_object *f_get_override(void *ctx, const char *ns, const char *name, void **ref) {
  (void)ctx;
  char k[300];
  snprintf(k, sizeof k, "po/%s/%s", ns, name);
  return lend(slot(k, false), ref);
}

static const json_object *f_get_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, void **ref) {
  (void)ctx;
  char k[300];
  snprintf(k, sizeof k, "%s/%s/%s", po_TargetKind_Name(kind), ns, name);
  return lend(slot(k, false), ref);
}

static po_WriteResult f_write_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                     bool create, const char *rv, json_object **written, char *err, size_t size) {
  (void)ctx;
  char k[300];
  snprintf(k, sizeof k, "%s/%s/%s", po_TargetKind_Name(kind), ns, name);
  Slot *s = slot(k, false);
  F.attempts++;
  if (F.conflict_next || F.attempts == F.conflict_at) {
    F.conflict_next = false;
    snprintf(err, size, "the object has been modified");
    return kPo_WriteConflict;
  }
  if (create && s) return snprintf(err, size, "already exists"), kPo_WriteConflict;
  if (!create && !s) return snprintf(err, size, "not found"), kPo_WriteNotFound;
  if (s && rv && strcmp(rv, json_object_get_string(get(get(s->obj, "metadata"), "resourceVersion")))) {
    snprintf(err, size, "stale resourceVersion");
    return kPo_WriteConflict;
  }
  F.target_writes++;
  if (!obj) {
    json_object_put(s->obj);
    s->obj = NULL;
    return kPo_WriteOk;
  }
  json_object *stored = copy(obj);
  if (create) { /* the server assigns the uid; a client's is ignored */
    char uid[32];
    snprintf(uid, sizeof uid, "uid-%d", ++F.uids);
    json_object_object_add(get(stored, "metadata"), "uid", json_object_new_string(uid));
  } else if (s && get(get(s->obj, "metadata"), "uid")) {
    json_object_object_add(get(stored, "metadata"), "uid", copy(get(get(s->obj, "metadata"), "uid")));
  }
  put(k, stored);
  if (written) *written = copy(stored);
  return kPo_WriteOk;
}

static void merge(json_object *dst, json_object *patch) {
  json_object_object_foreach(patch, k, v) {
    json_object *d = get(dst, k);
    if (v && json_object_is_type(v, json_type_object) && d && json_object_is_type(d, json_type_object)) merge(d, v);
    else json_object_object_add(dst, k, copy(v));
  }
}

static po_WriteResult f_patch_override(void *ctx, const char *ns, const char *name, bool status, json_object *patch,
                                       char *err, size_t size) {
  (void)ctx;
  char k[300];
  snprintf(k, sizeof k, "po/%s/%s", ns, name);
  Slot *s = slot(k, false);
  if (!s) return snprintf(err, size, "not found"), kPo_WriteNotFound;
  if (status) F.status_patches++;
  else F.override_patches++;
  merge(s->obj, patch);
  bump(s->obj);
  /* an object being deleted goes when its finalizers are gone */
  json_object *fin = get(get(s->obj, "metadata"), "finalizers");
  if (get(get(s->obj, "metadata"), "deletionTimestamp") && (!fin || json_object_array_length(fin) == 0)) {
    json_object_put(s->obj);
    s->obj = NULL;
  }
  return kPo_WriteOk;
}

static void f_now(void *ctx, char buf[32]) {
  (void)ctx;
  snprintf(buf, 32, "2026-12-01T00:00:00Z");
}

static int g_warnings;
static void f_event(void *ctx, json_object *about, const char *type, const char *reason, const char *message) {
  (void)ctx; (void)about; (void)reason; (void)message;
  if (!strcmp(type, "Warning")) g_warnings++;
}

static bool f_synced(void *ctx) {
  (void)ctx;
  return !F.unsynced;
}

static void f_target_event(void *ctx, po_TargetKind kind, json_object *about, const char *type, const char *reason,
                           const char *message) {
  (void)ctx; (void)kind; (void)about; (void)type; (void)message;
  F.target_events++;
  snprintf(F.last_target_reason, sizeof F.last_target_reason, "%s", reason);
}

static po_Tenancy g_tenancy = {.proxy_defaults_from = {"mesh"}, .n = 1};
static const po_ReconcileIO IO = {f_get_override, f_get_target, f_write_target, f_patch_override, f_now, f_event, NULL,
                                  f_synced, f_target_event, &g_tenancy, f_release};
static po_TargetIndex *IX;

static int setup(void **s) {
  (void)s;
  memset(&F, 0, sizeof F);
  g_warnings = 0;
  IX = po_TargetIndex_New();
  return 0;
}

static int teardown(void **s) {
  (void)s;
  assert_int_equal(F.lent, 0); /* every read was handed back */
  for (int i = 0; i < kMax; i++) json_object_put(F.slots[i].obj);
  po_TargetIndex_Free(IX);
  return 0;
}

static void apply_override(const char *name, int gen, const char *target, const char *patches) {
  char text[4096];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":%d,\"uid\":\"uid-po-%s\"},"
           "\"spec\":{\"targetRef\":{\"name\":\"%s\"},\"patches\":%s}}",
           name, gen, name, target, patches);
  json_object *o = json_tokener_parse(text);
  assert_non_null(o);
  char k[300];
  snprintf(k, sizeof k, "po/default/%s", name);
  Slot *s = slot(k, false);
  if (s) { /* keep what the server keeps: finalizers, annotations and status */
    json_object *fin = get(get(s->obj, "metadata"), "finalizers"), *st = get(s->obj, "status");
    json_object *ann = get(get(s->obj, "metadata"), "annotations");
    if (fin) json_object_object_add(get(o, "metadata"), "finalizers", copy(fin));
    if (ann) json_object_object_add(get(o, "metadata"), "annotations", copy(ann));
    if (st) json_object_object_add(o, "status", copy(st));
  }
  put(k, o);
  char key[300], old[300];
  po_Reconcile_OverrideKey(o, key, sizeof key);
  po_TargetIndex_Set(IX, "default", name, key, old, sizeof old);
  char held[300];
  po_Reconcile_HeldKey(o, held, sizeof held); /* as the informer handler does */
  po_TargetIndex_SetHeld(IX, "default", name, held, old, sizeof old);
}

static const char *kGood = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";
static const char *kGood2 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":30}]";
static const char *kBad = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                          "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":150}]";

static json_object *target(void) {
  Slot *s = slot("ServiceDefaults/default/web", false);
  return s ? s->obj : NULL;
}

static const char *cond(const char *po, const char *type, const char *field) {
  char k[300];
  snprintf(k, sizeof k, "po/default/%s", po);
  json_object *list = get(get(slot(k, false)->obj, "status"), "conditions");
  for (size_t i = 0; list && i < json_object_array_length(list); i++) {
    json_object *c = json_object_array_get_idx(list, i);
    if (!strcmp(json_object_get_string(get(c, "type")), type)) return json_object_get_string(get(c, field));
  }
  return "";
}

static po_ReconcileResult run(void) { return po_Reconcile(&IO, IX, "ServiceDefaults/default/web"); }

static void test_create_then_idempotent(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  po_ReconcileResult r = run();
  assert_true(r.ok);
  json_object *t = target();
  assert_non_null(t);
  assert_string_equal(json_object_get_string(get(get(get(t, "metadata"), "labels"), "app.kubernetes.io/managed-by")), "propertyoverride");
  json_object *ext = get(get(t, "spec"), "envoyExtensions");
  assert_int_equal(json_object_array_length(ext), 1);
  json_object *args = get(json_object_array_get_idx(ext, 0), "arguments");
  assert_int_equal(json_object_get_int(get(get(args, "PropertyOverride"), "generation")), 1);
  assert_string_equal(cond("a", "Accepted", "status"), "True");
  assert_string_equal(cond("a", "Programmed", "status"), "True");
  assert_string_equal(cond("a", "Programmed", "reason"), "Programmed");
  assert_int_equal(F.override_patches, 1); /* the finalizer (the last-valid record goes into status) */
  int writes = F.target_writes, statuses = F.status_patches;
  r = run();
  assert_true(r.ok);
  assert_int_equal(F.target_writes, writes);
  assert_int_equal(F.status_patches, statuses);
}

static void test_other_extensions_kept_and_drift_repaired(void **state) {
  (void)state;
  put("ServiceDefaults/default/web",
      json_tokener_parse("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                         "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"protocol\":\"http\","
                         "\"envoyExtensions\":[{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}}]}}"));
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  json_object *ext = get(get(target(), "spec"), "envoyExtensions");
  assert_int_equal(json_object_array_length(ext), 2);
  assert_string_equal(json_object_get_string(get(json_object_array_get_idx(ext, 0), "name")), "builtin/lua");
  assert_string_equal(json_object_get_string(get(get(target(), "spec"), "protocol")), "http");
  /* someone drops our entry */
  json_object_array_del_idx(ext, 1, 1);
  assert_true(run().ok);
  assert_int_equal(json_object_array_length(get(get(target(), "spec"), "envoyExtensions")), 2);
  /* deleting the override removes only ours, and keeps the object we did not create */
  char k[] = "po/default/a";
  json_object_object_add(get(slot(k, false)->obj, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  assert_true(run().ok);
  assert_non_null(target());
  assert_int_equal(json_object_array_length(get(get(target(), "spec"), "envoyExtensions")), 1);
  assert_null(slot(k, false)); /* the finalizer was removed, so the object went */
}

static void test_invalid_update_keeps_last_good(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  apply_override("a", 2, "web", kBad);
  assert_true(run().ok);
  json_object *args = get(json_object_array_get_idx(get(get(target(), "spec"), "envoyExtensions"), 0), "arguments");
  assert_int_equal(json_object_get_int(get(get(args, "PropertyOverride"), "generation")), 1);
  assert_string_equal(cond("a", "Accepted", "status"), "False");
  assert_non_null(strstr(cond("a", "Accepted", "message"), "150 violates uint32 lte 100"));
  assert_string_equal(cond("a", "Programmed", "reason"), "Invalid");
  assert_int_equal(g_warnings, 2); /* Accepted and Programmed both turned: one event each */
  assert_non_null(strstr(cond("a", "Programmed", "message"), "generation 1 is still live"));
  /* the target loses our entry (edited by hand) while the override is invalid: the generation
   * recorded on the override comes back, not nothing */
  json_object_object_del(get(target(), "spec"), "envoyExtensions");
  assert_true(run().ok);
  args = get(json_object_array_get_idx(get(get(target(), "spec"), "envoyExtensions"), 0), "arguments");
  assert_int_equal(json_object_get_int(get(get(args, "PropertyOverride"), "generation")), 1);
  apply_override("a", 3, "web", kGood2);
  assert_true(run().ok);
  args = get(json_object_array_get_idx(get(get(target(), "spec"), "envoyExtensions"), 0), "arguments");
  assert_int_equal(json_object_get_int(get(get(args, "PropertyOverride"), "generation")), 3);
  assert_string_equal(cond("a", "Programmed", "status"), "True");
}

static void test_overlap_named_both_ways_and_delete_removes_created(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  apply_override("b", 1, "web", kGood2);
  assert_true(run().ok);
  assert_int_equal(json_object_array_length(get(get(target(), "spec"), "envoyExtensions")), 2);
  assert_string_equal(cond("a", "Programmed", "reason"), "Overlapping");
  assert_non_null(strstr(cond("a", "Programmed", "message"), "PropertyOverride b"));
  assert_non_null(strstr(cond("b", "Programmed", "message"), "PropertyOverride a"));
  for (const char *n = "a"; n; n = strcmp(n, "a") == 0 ? "b" : NULL) {
    char k[32];
    snprintf(k, sizeof k, "po/default/%s", n);
    json_object_object_add(get(slot(k, false)->obj, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  }
  assert_true(run().ok);
  assert_null(target()); /* we created it and nothing else is left */
}

static void test_conflict_is_reported_for_retry(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  F.conflict_next = true;
  po_ReconcileResult r = run();
  assert_false(r.ok);
  assert_true(r.conflict);
  assert_string_equal(cond("a", "Programmed", "reason"), "TargetError");
  assert_true(run().ok);
  assert_string_equal(cond("a", "Programmed", "status"), "True");
}

/* ---- trust: each of these failed on the controller that owned entries by name ---- */

static json_object *entry(size_t i) { return json_object_array_get_idx(get(get(target(), "spec"), "envoyExtensions"), i); }
static size_t entries(void) {
  json_object *l = get(get(target(), "spec"), "envoyExtensions");
  return l ? json_object_array_length(l) : 0;
}
static json_object *marker(size_t i) { return get(get(entry(i), "arguments"), "PropertyOverride"); }
static json_object *po(const char *name) {
  char k[300];
  snprintf(k, sizeof k, "po/default/%s", name);
  Slot *sl = slot(k, false);
  return sl ? sl->obj : NULL;
}

static void test_nothing_before_the_caches_synced(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  int writes = F.target_writes, patches = F.override_patches, statuses = F.status_patches;
  /* a restart: the index is empty and the caches are not complete */
  po_TargetIndex_Free(IX);
  IX = po_TargetIndex_New();
  F.unsynced = true;
  po_ReconcileResult r = run();
  assert_false(r.ok);
  assert_true(r.not_synced);
  assert_int_equal(F.target_writes, writes);
  assert_int_equal(F.override_patches, patches);
  assert_int_equal(F.status_patches, statuses);
  assert_non_null(target());
  assert_int_equal(entries(), 1);
}

static void test_created_target_and_markers_bound_to_uids(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  po_ReconcileResult r = run();
  assert_true(r.ok);
  assert_int_equal(r.targets_written, 2); /* created empty, then the entry bound to its uid */
  const char *tuid = json_object_get_string(get(get(target(), "metadata"), "uid"));
  assert_string_equal(json_object_get_string(get(get(get(target(), "metadata"), "annotations"), "propertyoverride.io/created")), tuid);
  assert_string_equal(json_object_get_string(get(marker(0), "targetUID")), tuid);
  assert_string_equal(json_object_get_string(get(marker(0), "uid")), "uid-po-a");
  assert_string_equal(json_object_get_string(get(marker(0), "name")), "a");
}

static void put_target(const char *text) { put("ServiceDefaults/default/web", json_tokener_parse(text)); }

static void test_lookalike_entries_left_alone_and_reported(void **state) {
  (void)state;
  /* a hand-written marker with an unknown name, and a copy from another object (its targetUID
   * is that object's) */
  put_target("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
             "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"uid-web\"},\"spec\":{\"envoyExtensions\":["
             "{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"ghost\",\"generation\":1},"
             "\"Patches\":[]}},"
             "{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"a\",\"generation\":1,"
             "\"uid\":\"uid-po-a\",\"targetUID\":\"uid-elsewhere\"},\"Patches\":[]}}]}}");
  json_object *before = copy(target());
  po_TargetIndex_Set(IX, "default", "ghost", "ServiceDefaults/default/web", (char[300]){0}, 300);
  po_ReconcileResult r = run();
  assert_true(r.ok);
  assert_int_equal(r.foreign_entries, 2);
  assert_string_equal(F.last_target_reason, "ForeignEntry");
  assert_true(json_object_equal(before, target())); /* not a byte changed */
  /* with a PropertyOverride of the copied name: ours is added after them, theirs stay */
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  assert_int_equal(entries(), 3);
  assert_string_equal(json_object_get_string(get(marker(2), "targetUID")), "uid-web");
  /* and when it goes, only ours goes */
  json_object_object_add(get(po("a"), "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  assert_true(run().ok);
  assert_true(json_object_equal(get(before, "spec"), get(target(), "spec")));
  json_object_put(before);
}

static void test_lookalike_created_annotation_never_deleted(void **state) {
  (void)state;
  /* applied by a user from `kubectl get -o yaml` of an object we created elsewhere */
  put_target("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
             "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"uid-web\",\"annotations\":"
             "{\"propertyoverride.io/created\":\"true\"},\"labels\":{\"app.kubernetes.io/managed-by\":\"propertyoverride\"}},"
             "\"spec\":{}}");
  po_ReconcileResult r = run();
  assert_true(r.ok);
  assert_true(r.foreign_object);
  assert_string_equal(F.last_target_reason, "ForeignObject");
  assert_non_null(target());
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  assert_int_equal(entries(), 1);
  json_object_object_add(get(po("a"), "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  assert_true(run().ok);
  assert_non_null(target()); /* emptied of our entry, but never deleted */
  assert_int_equal(entries(), 0);
}

static void test_forged_last_valid_annotation_programs_nothing(void **state) {
  (void)state;
  apply_override("a", 1, "web", kBad);
  json_object *meta = get(po("a"), "metadata"), *ann = json_object_new_object();
  json_object_object_add(ann, "propertyoverride.io/last-valid",
                         json_object_new_string("{\"generation\":1,\"arguments\":{\"Patches\":[{\"ResourceFilter\":{"
                                                "\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"add\","
                                                "\"Path\":\"/outlier_detection/max_ejection_percent\",\"Value\":150}],"
                                                "\"Forged\":true}}"));
  json_object_object_add(meta, "annotations", ann);
  assert_true(run().ok);
  assert_null(target());
  assert_string_equal(cond("a", "Programmed", "reason"), "Invalid");
  assert_non_null(strstr(cond("a", "Programmed", "message"), "nothing is live"));
}

static void test_last_valid_record_is_recompiled_not_trusted(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  assert_int_equal(json_object_get_int(get(get(get(po("a"), "status"), "lastValid"), "generation")), 1);
  apply_override("a", 2, "web", kBad);
  /* someone with access to the status forges the record, and the live entry is lost */
  json_object *rec = get(get(po("a"), "status"), "lastValid");
  json_object_object_add(json_object_array_get_idx(get(get(rec, "spec"), "patches"), 0), "value", json_object_new_int(150));
  json_object_object_del(get(target(), "spec"), "envoyExtensions");
  assert_true(run().ok);
  assert_int_equal(entries(), 0);
  assert_non_null(strstr(cond("a", "Programmed", "message"), "nothing is live"));
}

static void test_tampered_live_entry_is_not_kept(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  json_object_object_del(get(po("a"), "status"), "lastValid"); /* as if that status write failed */
  apply_override("a", 2, "web", kBad);
  /* intact, the live entry stays */
  assert_true(run().ok);
  assert_int_equal(entries(), 1);
  assert_int_equal(json_object_get_int(get(marker(0), "generation")), 1);
  /* edited in the target (marker kept), it is re-checked and not written back */
  json_object *p0 = json_object_array_get_idx(get(get(entry(0), "arguments"), "Patches"), 0);
  json_object_object_add(p0, "Value", json_object_new_int(150));
  json_object_object_del(get(po("a"), "status"), "lastValid");
  assert_true(run().ok);
  assert_int_equal(entries(), 0);
}

static void test_tenancy_refuses_proxydefaults_from_other_namespaces(void **state) {
  (void)state;
  const char *text = "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                     "\"metadata\":{\"name\":\"mesh-wide\",\"namespace\":\"default\",\"generation\":1,\"uid\":\"uid-po-m\"},"
                     "\"spec\":{\"targetRef\":{\"kind\":\"ProxyDefaults\",\"name\":\"global\"},\"patches\":%s}}";
  char buf[2048];
  snprintf(buf, sizeof buf, text, kGood);
  put("po/default/mesh-wide", json_tokener_parse(buf));
  po_TargetIndex_Set(IX, "default", "mesh-wide", "ProxyDefaults/default/global", (char[300]){0}, 300);
  po_ReconcileResult r = po_Reconcile(&IO, IX, "ProxyDefaults/default/global");
  assert_true(r.ok);
  assert_int_equal(F.target_writes, 0);
  assert_null(slot("ProxyDefaults/default/global", false));
  assert_string_equal(cond("mesh-wide", "Accepted", "status"), "False");
  assert_string_equal(cond("mesh-wide", "Accepted", "reason"), "TargetNotAllowed");
  assert_non_null(strstr(cond("mesh-wide", "Accepted", "message"), "may not target ProxyDefaults"));
  assert_non_null(strstr(cond("mesh-wide", "Accepted", "message"), "'mesh'"));
  assert_string_equal(cond("mesh-wide", "Programmed", "reason"), "TargetNotAllowed");
  assert_null(get(get(po("mesh-wide"), "metadata"), "finalizers"));
}

static void test_index_read_once_for_many_overrides(void **state) {
  (void)state;
  /* more PropertyOverrides than the first lookup's table holds */
  for (int i = 0; i < 20; i++) {
    char n[16];
    snprintf(n, sizeof n, "o%02d", i);
    apply_override(n, 1, "web", i % 2 ? kGood : kGood2);
  }
  assert_true(run().ok);
  assert_int_equal(entries(), 20);
}

static void test_target_full_is_said_not_written(void **state) {
  (void)state;
  /* one entry of someone else's plus 100 of ours would pass the webhook's limit of 100 */
  put_target("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
             "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"envoyExtensions\":["
             "{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":[]}}]}}");
  for (int i = 0; i < 100; i++) {
    char n[16];
    snprintf(n, sizeof n, "o%03d", i);
    apply_override(n, 1, "web", kGood);
  }
  po_ReconcileResult r = run();
  assert_true(r.ok);
  assert_int_equal(entries(), 100);
  assert_string_equal(cond("o098", "Programmed", "status"), "True");
  assert_string_equal(cond("o099", "Programmed", "status"), "False");
  assert_string_equal(cond("o099", "Programmed", "reason"), "TargetFull");
  assert_non_null(strstr(cond("o099", "Programmed", "message"), "at most 100"));
  /* a newcomer that sorts first does not evict a live one */
  apply_override("a-new", 1, "web", kGood);
  assert_true(run().ok);
  assert_string_equal(cond("o000", "Programmed", "status"), "True");
  assert_string_equal(cond("o098", "Programmed", "status"), "True");
  assert_string_equal(cond("a-new", "Programmed", "reason"), "TargetFull");
}

/* A marker bound to this target's uid is still not ours unless it names a PropertyOverride of
 * the target by name and uid: anyone who can read the target can copy its uid. */
static void test_marker_with_target_uid_but_unknown_owner_is_foreign(void **state) {
  (void)state;
  put_target("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
             "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"uid-web\"},\"spec\":{\"envoyExtensions\":["
             "{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"hand-written\","
             "\"generation\":1,\"uid\":\"000\",\"targetUID\":\"uid-web\"},\"Patches\":[]}}]}}");
  apply_override("a", 1, "web", kGood);
  po_ReconcileResult r = run();
  assert_true(r.ok);
  assert_int_equal(r.foreign_entries, 1);
  assert_int_equal(entries(), 2);
  assert_string_equal(json_object_get_string(get(marker(0), "name")), "hand-written");
}

/* With a forged marker naming the right uids but a generation the object never had, an invalid
 * PropertyOverride without a record does not adopt it. */
static void test_forged_generation_not_adopted(void **state) {
  (void)state;
  apply_override("a", 1, "web", kBad);
  assert_true(run().ok);
  assert_null(target());
  put_target("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
             "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"uid-web\"},\"spec\":{\"envoyExtensions\":["
             "{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"a\","
             "\"generation\":7,\"uid\":\"uid-po-a\",\"targetUID\":\"uid-web\"},\"Patches\":[{\"ResourceFilter\":{"
             "\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"add\",\"Path\":"
             "\"/outlier_detection/max_ejection_percent\",\"Value\":100}]}}]}}");
  assert_true(run().ok);
  assert_int_equal(entries(), 0);
  assert_non_null(strstr(cond("a", "Programmed", "message"), "nothing is live"));
}

/* The write after the create fails (consul-k8s adds its finalizer: 409): the next reconcile
 * still binds the created annotation, so the object is deleted when its PropertyOverride goes. */
static void test_created_target_annotated_after_a_failed_second_write(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  F.conflict_at = 2;
  po_ReconcileResult r = run();
  assert_false(r.ok);
  assert_true(r.conflict);
  assert_non_null(target());
  assert_null(get(get(target(), "metadata"), "annotations"));
  assert_true(run().ok);
  const char *tuid = json_object_get_string(get(get(target(), "metadata"), "uid"));
  assert_string_equal(json_object_get_string(get(get(get(target(), "metadata"), "annotations"), "propertyoverride.io/created")), tuid);
  assert_int_equal(entries(), 1);
  json_object_object_add(get(po("a"), "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  assert_true(run().ok);
  assert_null(target());
}

/* Retargeted: the old target's entry is still ours (its PropertyOverride exists with that uid)
 * and goes; an entry naming a PropertyOverride that does not exist stays. */
static void test_retargeted_entry_removed_from_the_old_target(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  assert_int_equal(entries(), 1);
  apply_override("a", 2, "api", kGood);
  po_ReconcileResult r = po_Reconcile(&IO, IX, "ServiceDefaults/default/api");
  assert_true(r.ok);
  r = run();
  assert_true(r.ok);
  assert_int_equal(r.foreign_entries, 0);
  assert_null(target()); /* it was ours, created for a, and is now empty */
  Slot *api = slot("ServiceDefaults/default/api", false);
  assert_non_null(api);
  assert_int_equal(json_object_array_length(get(get(api->obj, "spec"), "envoyExtensions")), 1);
}

/* An invalid update that also moves targetRef: the last valid generation stays live where it
 * is; deleting the PropertyOverride then waits for that target to drop it. */
static void test_invalid_update_moving_targetref_keeps_the_live_entry(void **state) {
  (void)state;
  apply_override("a", 1, "web", kGood);
  assert_true(run().ok);
  assert_int_equal(entries(), 1);
  apply_override("a", 2, "api", kBad);
  assert_true(po_Reconcile(&IO, IX, "ServiceDefaults/default/api").ok);
  assert_true(run().ok);
  assert_int_equal(entries(), 1);
  assert_int_equal(json_object_get_int(get(marker(0), "generation")), 1);
  assert_null(slot("ServiceDefaults/default/api", false));
  /* deleted: the finalizer stays until web has dropped the entry */
  json_object_object_add(get(po("a"), "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  po_ReconcileResult r = po_Reconcile(&IO, IX, "ServiceDefaults/default/api");
  assert_false(r.ok);
  assert_non_null(strstr(r.error, "waiting for ServiceDefaults/default/web"));
  assert_non_null(po("a"));
  assert_true(run().ok);
  assert_null(target()); /* created for a, now empty */
  assert_true(po_Reconcile(&IO, IX, "ServiceDefaults/default/api").ok);
  assert_null(po("a"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_create_then_idempotent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_extensions_kept_and_drift_repaired, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invalid_update_keeps_last_good, setup, teardown),
      cmocka_unit_test_setup_teardown(test_overlap_named_both_ways_and_delete_removes_created, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conflict_is_reported_for_retry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nothing_before_the_caches_synced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_created_target_and_markers_bound_to_uids, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookalike_entries_left_alone_and_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookalike_created_annotation_never_deleted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_last_valid_annotation_programs_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_last_valid_record_is_recompiled_not_trusted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tampered_live_entry_is_not_kept, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tenancy_refuses_proxydefaults_from_other_namespaces, setup, teardown),
      cmocka_unit_test_setup_teardown(test_index_read_once_for_many_overrides, setup, teardown),
      cmocka_unit_test_setup_teardown(test_target_full_is_said_not_written, setup, teardown),
      cmocka_unit_test_setup_teardown(test_marker_with_target_uid_but_unknown_owner_is_foreign, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_generation_not_adopted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_created_target_annotated_after_a_failed_second_write, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retargeted_entry_removed_from_the_old_target, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invalid_update_moving_targetref_keeps_the_live_entry, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
