/* The in-memory API server the reconcile tests run against (fake_api.h). */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"

#include "apiserver.h" /* po_As_JsonPatch: the local API server's RFC 6902 */

#include "po/base/json.h"
#include "po/meshes/eg.h"

/* ---- a tiny API server in memory ---- */

json_object *get(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* Not strcmp: test_reconcile_scale counts the reconciler's strcmp calls, and this fixture's
 * linear search is not the reconciler's. */
static bool same_key(const char *a, const char *b) {
  size_t n = strlen(a);
  return n == strlen(b) && memcmp(a, b, n) == 0;
}

Slot *slot(Fake *fx, const char *key, bool create) {
  for (int i = 0; i < kMax; i++) if (fx->slots[i].obj && same_key(fx->slots[i].key, key)) return &fx->slots[i];
  if (!create) return NULL;
  for (int i = 0; i < kMax; i++) if (!fx->slots[i].obj) { snprintf(fx->slots[i].key, sizeof fx->slots[i].key, "%s", key); fx->slots[i].hidden = false; return &fx->slots[i]; }
  return NULL;
}

void bump(Fake *fx, json_object *o) {
  char rv[32];
  snprintf(rv, sizeof rv, "%d", ++fx->rv);
  json_object_object_add(get(o, "metadata"), "resourceVersion", json_object_new_string(rv));
}

void put(Fake *fx, const char *key, json_object *o) {
  if (!get(get(o, "metadata"), "uid")) { /* every stored object has one */
    char uid[32];
    snprintf(uid, sizeof uid, "uid-%d", ++fx->uids);
    json_object_object_add(get(o, "metadata"), "uid", json_object_new_string(uid));
  }
  Slot *s = slot(fx, key, true);
  json_object_put(s->obj);
  s->obj = o;
  bump(fx, o);
}

json_object *copy(json_object *o) {
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

/* The copies are made with the process' allocator, as the cache's parse for a reader is: under
 * test_reconcile_oom's failing allocator a failed one reports the object unreadable (st
 * kPo_Ctl_NoMemory), as po_Informer_Get does, and so does a read of fx->unreadable. */
static const json_object *lend(Fake *fx, Slot *s, void **ref, po_CtlStatus *st) {
  *ref = NULL;
  po_CtlStatus_Clear(st);
  if (!s || s->hidden) return NULL;
  if (fx->unreadable && same_key(fx->unreadable, s->key)) {
    fx->unreadable_reads++;
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory decompressing the cached text of %s", s->key);
    return NULL;
  }
  Lent *l = malloc(sizeof *l);
  json_object *given = l ? copy(s->obj) : NULL, *snapshot = given ? copy(s->obj) : NULL;
  if (!snapshot) {
    json_object_put(given);
    free(l);
    fx->unreadable_reads++;
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory parsing the cached text of %s", s->key);
    return NULL;
  }
  l->given = given;
  l->snapshot = snapshot;
  *ref = l;
  fx->lent++;
  return l->given;
}

static void f_release(void *ctx, void *ref) {
  Fake *fx = ctx;
  Lent *l = ref;
  assert_non_null(l);
  assert_true(json_object_equal(l->given, l->snapshot)); /* never changed */
  json_object_put(l->given);
  json_object_put(l->snapshot);
  free(l);
  fx->lent--;
}

static const json_object *f_get_override(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  char k[300];
  snprintf(k, sizeof k, "po/%s/%s", ns, name);
  fx->override_reads++;
  return lend(fx, slot(fx, k, false), ref, st);
}

/* The mesh objects live in slots "<Kind>/<ns>/<name>" (EnvoyFilter, EnvoyPatchPolicy); their
 * writes count as target writes. HTTPRoutes are in "HTTPRoute/<ns>/<name>", Gateways in
 * "Gateway/<ns>/<name>" (get_target's slots). */
static po_WriteResult write_slot(Fake *fx, const char *k, json_object *obj, bool create, const char *rv, json_object **written,
                                 po_CtlStatus *st);
static const json_object *lend_kind(Fake *fx, const char *kind, const char *ns, const char *name, void **ref,
                                    po_CtlStatus *st) {
  char k[300];
  snprintf(k, sizeof k, "%s/%s/%s", kind, ns, name);
  return lend(fx, slot(fx, k, false), ref, st);
}
static po_WriteResult write_kind(Fake *fx, const char *kind, const char *ns, const char *name, json_object *obj, bool create,
                                 const char *rv, json_object **written, po_CtlStatus *st) {
  char k[300];
  snprintf(k, sizeof k, "%s/%s/%s", kind, ns, name);
  return write_slot(fx, k, obj, create, rv, written, st);
}
/* The server's copy: a lagged update's echo is what the server holds (the slot is what the cache
 * shows). */
static json_object *f_read_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, po_CtlStatus *st) {
  Fake *fx = ctx;
  char k[300];
  snprintf(k, sizeof k, "%s/%s/%s", po_TargetKind_Name(kind), ns, name);
  fx->live_reads++;
  po_CtlStatus_Clear(st);
  if (fx->echo && !strcmp(fx->echo_key, k)) return copy(fx->echo);
  Slot *s = slot(fx, k, false);
  if (!s) po_CtlStatus_Set(st, kPo_Ctl_NotFound, "not found");
  return s ? copy(s->obj) : NULL;
}

static bool own_echo(Fake *fx, Slot *s) {
  json_object *md = get(s->obj, "metadata");
  return po_TargetIndex_IsOwnTargetEcho(fx->ix, s->key, json_object_get_string(get(md, "uid")),
                                        json_object_get_string(get(md, "resourceVersion")));
}
static const json_object *f_get_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, void **ref,
                                       po_CtlStatus *st) {
  Fake *fx = ctx;
  Slot *s = fx->echo_due ? slot(fx, fx->echo_key, false) : NULL;
  if (s) own_echo(fx, s); /* the last write's echo, come before this read */
  fx->echo_due = false;
  return lend_kind(fx, po_TargetKind_Name(kind), ns, name, ref, st);
}

/* A target's version without a copy (off: fx->no_digest, every reconcile reads the object). */
static bool f_target_version(void *ctx, po_TargetKind kind, const char *ns, const char *name, po_OverrideVersion *out) {
  Fake *fx = ctx;
  Slot *e = fx->echo_due ? slot(fx, fx->echo_key, false) : NULL;
  if (e) own_echo(fx, e); /* as f_get_target: the watch brings the echo before the cache is read */
  fx->echo_due = false;
  char k[300];
  snprintf(k, sizeof k, "%s/%s/%s", po_TargetKind_Name(kind), ns, name);
  Slot *s = fx->no_digest ? NULL : slot(fx, k, false);
  if (s && s->hidden) s = NULL;
  json_object *meta = s ? get(s->obj, "metadata") : NULL, *v = get(meta, "resourceVersion"), *uid = get(meta, "uid");
  *out = (po_OverrideVersion){.generation = json_object_get_int64(get(meta, "generation"))};
  snprintf(out->rv, sizeof out->rv, "%s", v ? json_object_get_string(v) : "");
  snprintf(out->uid, sizeof out->uid, "%s", uid ? json_object_get_string(uid) : "");
  return v != NULL;
}

/* The resourceVersion without a copy; tests that change a stored object in place bump it, as
 * any change on a server does. */
static bool f_override_version(void *ctx, const char *ns, const char *name, po_OverrideVersion *out) {
  Fake *fx = ctx;
  char k[300];
  snprintf(k, sizeof k, "po/%s/%s", ns, name);
  Slot *s = slot(fx, k, false);
  json_object *meta = s ? get(s->obj, "metadata") : NULL, *v = get(meta, "resourceVersion"), *uid = get(meta, "uid");
  *out = (po_OverrideVersion){.generation = json_object_get_int64(get(meta, "generation"))};
  snprintf(out->rv, sizeof out->rv, "%s", v ? json_object_get_string(v) : "");
  snprintf(out->uid, sizeof out->uid, "%s", uid ? json_object_get_string(uid) : "");
  return v != NULL;
}

static po_WriteResult write_slot(Fake *fx, const char *k, json_object *obj, bool create, const char *rv, json_object **written,
                                 po_CtlStatus *st) {
  Slot *s = slot(fx, k, false);
  fx->attempts++;
  if (fx->conflict_next || fx->attempts == fx->conflict_at) {
    fx->conflict_next = false;
    po_CtlStatus_Set(st, kPo_Ctl_Conflict, "the object has been modified");
    return kPo_WriteResult_Conflict;
  }
  if (fx->attempts == fx->fail_at) return po_CtlStatus_Set(st, kPo_Ctl_Internal, "injected failure"), kPo_WriteResult_Failed;
  if (create && s) {
    fx->create_conflicts++;
    return po_CtlStatus_Set(st, kPo_Ctl_AlreadyExists, "already exists"), kPo_WriteResult_Conflict;
  }
  if (!create && !s) return po_CtlStatus_Set(st, kPo_Ctl_NotFound, "not found"), kPo_WriteResult_NotFound;
  if (s && rv && strcmp(rv, json_object_get_string(get(get(s->obj, "metadata"), "resourceVersion")))) {
    po_CtlStatus_Set(st, kPo_Ctl_Conflict, "stale resourceVersion");
    return kPo_WriteResult_Conflict;
  }
  fx->target_writes++;
  if (fx->check_write) fx->check_write(fx, obj);
  if (!obj) {
    json_object_put(s->obj);
    s->obj = NULL;
    return kPo_WriteResult_Ok;
  }
  json_object *stored = copy(obj);
  if (create) { /* the server assigns the uid; a client's is ignored */
    char uid[32];
    snprintf(uid, sizeof uid, "uid-%d", ++fx->uids);
    json_object_object_add(get(stored, "metadata"), "uid", json_object_new_string(uid));
  } else if (s && get(get(s->obj, "metadata"), "uid")) {
    json_object_object_add(get(stored, "metadata"), "uid", copy(get(get(s->obj, "metadata"), "uid")));
  }
  if (!strncmp(k, "EnvoyPatchPolicy/", 17)) {
    /* a CRD with a status subresource: metadata.generation counts spec changes, and a write of
     * the object never changes its status (Envoy Gateway's) */
    json_object *old_md = s ? get(s->obj, "metadata") : NULL;
    int64_t gen = old_md ? json_object_get_int64(get(old_md, "generation")) : 0;
    if (!s || !json_object_equal(get(s->obj, "spec"), get(stored, "spec"))) gen++;
    json_object_object_add(get(stored, "metadata"), "generation", json_object_new_int64(gen));
    json_object_object_del(stored, "status");
    if (s && get(s->obj, "status")) json_object_object_add(stored, "status", copy(get(s->obj, "status")));
  }
  put(fx, k, stored);
  if (written) *written = copy(stored);
  return kPo_WriteResult_Ok;
}

static po_WriteResult f_write_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                     bool create, const char *rv, json_object **written, po_CtlStatus *st) {
  Fake *fx = ctx;
  if (fx->target_fails > 0) {
    fx->target_fails--;
    return po_CtlStatus_Set(st, kPo_Ctl_Internal, "%s", fx->fail_text ? fx->fail_text : "injected failure"), kPo_WriteResult_Failed;
  }
  po_WriteResult w = write_kind(fx, po_TargetKind_Name(kind), ns, name, obj, create, rv, written, st);
  if (w == kPo_WriteResult_Ok && create && fx->create_lags) {
    char k[300];
    snprintf(k, sizeof k, "%s/%s/%s", po_TargetKind_Name(kind), ns, name);
    Slot *s = slot(fx, k, false);
    if (s) s->hidden = true;
  }
  return w;
}

/* An update that says the version it made, as the API server's answer does. */
/* A JSON Patch of a target, applied by the local API server's code to the object the reconcile
 * read (the slot: what the cache shows) must make exactly the object planned: every reconcile
 * test that updates a target checks the delta against the plan. */
int fake_checking;

/* obj NULL (a reconcile from the target's digest sends the patch alone): what it makes is returned
 * (a new reference), for the write; else NULL. */
static json_object *check_json_patch(Fake *fx, Slot *s, json_object *obj, const char *patch, size_t len) {
  fake_checking++;
  fx->target_json_patches++;
  json_object *ops = json_tokener_parse(patch);
  assert_int_equal(strlen(patch), len);
  if (!ops) fail_msg("the target's JSON Patch is not JSON: %s", patch);
  fx->last_json_patch_ops = (int)json_object_array_length(ops);
  if (!s) fail_msg("a JSON Patch of a target that does not exist: %s", patch);
  char msg[512] = "";
  json_object *made = po_As_JsonPatch(copy(s->obj), ops, msg, sizeof msg);
  if (!made) fail_msg("the target's JSON Patch does not apply (%s): %s", msg, patch);
  if (obj && !json_object_equal(made, obj))
    fail_msg("the target's JSON Patch makes\n%s\nnot the planned\n%s\n(patch %s)",
             json_object_to_json_string_ext(made, JSON_C_TO_STRING_PLAIN), json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN),
             patch);
  if (!obj) fx->digest_patches++;
  json_object_put(ops);
  fake_checking--;
  if (obj) json_object_put(made);
  return obj ? NULL : made;
}

static po_WriteResult f_update_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                      const char *patch, size_t patch_len, po_WrittenVersion *written, po_CtlStatus *st) {
  Fake *fx = ctx;
  char k[300];
  snprintf(k, sizeof k, "%s/%s/%s", po_TargetKind_Name(kind), ns, name);
  Slot *s = slot(fx, k, false);
  json_object *patched = patch ? check_json_patch(fx, s, obj, patch, patch_len) : NULL;
  if (!obj && !patched) fail_msg("a target update with neither an object nor a patch");
  json_object *over = fx->target_lags && s ? copy(s->obj) : NULL;
  json_object *made = NULL;
  po_WriteResult w = f_write_target(ctx, kind, ns, name, obj ? obj : patched, false, NULL, &made, st);
  json_object_put(patched);
  if (over && w == kPo_WriteResult_Ok && (s = slot(fx, k, false))) { /* written; the cache shows it later */
    json_object_put(fx->echo);
    fx->echo = s->obj;
    s->obj = over;
    snprintf(fx->echo_key, sizeof fx->echo_key, "%s", k);
  } else {
    json_object_put(over);
  }
  bool echo_now = !over && w == kPo_WriteResult_Ok && made;
  *written = (po_WrittenVersion){.uid = {0}};
  if (made) {
    snprintf(written->uid, sizeof written->uid, "%s", po_Json_Meta(made, "uid"));
    snprintf(written->rv, sizeof written->rv, "%s", po_Json_Meta(made, "resourceVersion"));
  }
  json_object_put(made);
  if (w == kPo_WriteResult_Ok && fx->answer_lost) { /* applied; the answer never reached us */
    *written = (po_WrittenVersion){.uid = {0}};
    return po_CtlStatus_Set(st, kPo_Ctl_Internal, "timeout waiting for the answer"), kPo_WriteResult_Failed;
  }
  /* Not lagging: the cache holds the write at once. Its echo is asked about at the target's next
   * read (echo_due), as the watch's event would be before it: the reconcile notes the version
   * only after this returns. */
  if (echo_now) snprintf(fx->echo_key, sizeof fx->echo_key, "%s", k), fx->echo_due = true;
  return w;
}

static const json_object *f_get_filter(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  return lend_kind(fx, "EnvoyFilter", ns, name, ref, st);
}
static po_WriteResult f_write_filter(void *ctx, const char *ns, const char *name, json_object *obj, bool create,
                                     const char *rv, json_object **written, po_CtlStatus *st) {
  Fake *fx = ctx;
  return write_kind(fx, "EnvoyFilter", ns, name, obj, create, rv, written, st);
}
static const json_object *f_get_policy(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  return lend_kind(fx, "EnvoyPatchPolicy", ns, name, ref, st);
}
static po_WriteResult f_write_policy(void *ctx, const char *ns, const char *name, json_object *obj, bool create,
                                     const char *rv, json_object **written, po_CtlStatus *st) {
  Fake *fx = ctx;
  return write_kind(fx, "EnvoyPatchPolicy", ns, name, obj, create, rv, written, st);
}

/* As the app's: one route whole, when the bound lets its rules in. */
static json_object *f_route(void *ctx, const char *ns, const char *name) {
  Fake *fx = ctx;
  char key[400];
  snprintf(key, sizeof key, "HTTPRoute/%s/%s", ns, name);
  for (int i = 0; i < kMax; i++) {
    if (!fx->slots[i].obj || strcmp(fx->slots[i].key, key)) continue;
    if (fx->unreadable && !strcmp(fx->unreadable, key)) return NULL; /* cached, not readable: not gone */
    return po_EG_RouteCopy(fx->slots[i].obj, true);
  }
  return json_object_new_object(); /* gone */
}

/* As the app's: whole when a namespace of `whole` holds it, else its stub. */
static json_object *f_gateway_routes(void *ctx, const char *ns, const char *gateway, const char *const *whole,
                                     size_t n_whole) {
  Fake *fx = ctx;
  json_object *out = json_object_new_array();
  for (int i = 0; out && i < kMax; i++) {
    json_object *r = fx->slots[i].obj;
    if (!r || strncmp(fx->slots[i].key, "HTTPRoute/", 10) != 0) continue;
    if (fx->unreadable && !strcmp(fx->unreadable, fx->slots[i].key)) { /* not read: none of them (kube_io.c) */
      json_object_put(out);
      return NULL;
    }
    if (po_EG_RouteNamesGateway(r, ns, gateway)) {
      bool full = po_EG_NamespaceIn(whole, n_whole, json_object_get_string(get(get(r, "metadata"), "namespace")));
      json_object *c = po_EG_RouteCopy(r, full);
      if (!c || json_object_array_add(out, c) != 0) { /* out of memory: none, as kube_io.c's */
        json_object_put(c);
        json_object_put(out);
        return NULL;
      }
    }
  }
  return out;
}

static void merge(json_object *dst, json_object *patch) {
  json_object_object_foreach(patch, k, v) {
    json_object *d = get(dst, k);
    if (!v) json_object_object_del(dst, k); /* RFC 7386: null removes the member, as the API server does */
    else if (json_object_is_type(v, json_type_object) && d && json_object_is_type(d, json_type_object)) merge(d, v);
    else json_object_object_add(dst, k, copy(v));
  }
}

static po_WriteResult f_patch_override(void *ctx, const char *ns, const char *name, bool status, json_object *patch,
                                       po_WrittenVersion *written, po_CtlStatus *st) {
  if (written) *written = (po_WrittenVersion){.generation = 0};
  Fake *fx = ctx;
  char k[300];
  snprintf(k, sizeof k, "po/%s/%s", ns, name);
  Slot *s = slot(fx, k, false);
  if (!s) return po_CtlStatus_Set(st, kPo_Ctl_NotFound, "not found"), kPo_WriteResult_NotFound;
  if (status && fx->status_fails > 0) {
    fx->status_fails--;
    return po_CtlStatus_Set(st, kPo_Ctl_Internal, "injected failure"), kPo_WriteResult_Failed;
  }
  if (!status && fx->overrides_gone > 0) {
    fx->overrides_gone--;
    return po_CtlStatus_Set(st, kPo_Ctl_NotFound, "propertyoverrides.propertyoverride.io \"%s\" not found", name),
           kPo_WriteResult_NotFound;
  }
  if (!status && fx->override_fails > 0) {
    fx->override_fails--;
    return po_CtlStatus_Set(st, kPo_Ctl_Internal, "%s", fx->fail_text ? fx->fail_text : "injected failure"), kPo_WriteResult_Failed;
  }
  if (status) fx->status_patches++;
  else fx->override_patches++;
  if (status && fx->status_lags) return kPo_WriteResult_Ok; /* written; the cache does not show it yet */
  merge(s->obj, patch);
  bump(fx, s->obj);
  if (written) { /* what the server's answer says of the object made */
    json_object *md = get(s->obj, "metadata"), *g = get(md, "generation");
    snprintf(written->uid, sizeof written->uid, "%s", json_object_get_string(get(md, "uid")) ?: "");
    snprintf(written->rv, sizeof written->rv, "%s", json_object_get_string(get(md, "resourceVersion")) ?: "");
    written->generation = g ? json_object_get_int64(g) : 0;
    json_object *fin = get(md, "finalizers");
    for (size_t i = 0; !status && !fx->answer_unfinalized && fin && i < json_object_array_length(fin); i++)
      written->finalized |= strcmp(json_object_get_string(json_object_array_get_idx(fin, i)), PO_FINALIZER) == 0;
  }
  /* an object being deleted goes when its finalizers are gone */
  json_object *fin = get(get(s->obj, "metadata"), "finalizers");
  if (get(get(s->obj, "metadata"), "deletionTimestamp") && (!fin || json_object_array_length(fin) == 0)) {
    json_object_put(s->obj);
    s->obj = NULL;
  }
  return kPo_WriteResult_Ok;
}

static void f_now(void *ctx, char buf[32]) {
  Fake *fx = ctx;
  snprintf(buf, 32, "%s", fx->now ? fx->now : "2026-12-01T00:00:00Z");
}

static void f_event(void *ctx, json_object *about, const char *type, const char *reason, const char *message) {
  Fake *fx = ctx; (void)about; (void)message;
  fx->events++;
  snprintf(fx->last_event_reason, sizeof fx->last_event_reason, "%s", reason);
  if (!strcmp(type, "Warning")) fx->warnings++;
}

static bool f_synced(void *ctx) {
  Fake *fx = ctx;
  return !fx->unsynced;
}

static void f_target_event(void *ctx, po_TargetKind kind, json_object *about, const char *type, const char *reason,
                           const char *message) {
  Fake *fx = ctx; (void)kind; (void)about; (void)type; (void)message;
  fx->target_events++;
  snprintf(fx->last_target_reason, sizeof fx->last_target_reason, "%s", reason);
}

Fake *fake_new(void) {
  Fake *fx = calloc(1, sizeof *fx);
  assert_non_null(fx);
  fx->ix = po_TargetIndex_New();
  assert_non_null(fx->ix);
  fx->tenancy = (po_Tenancy){.proxy_defaults_from = {"mesh"}, .n = 1};
  fx->io = (po_ReconcileIO){f_get_override, f_get_target, f_write_target, f_patch_override, f_now, f_event, NULL,
                            f_synced, f_target_event, &fx->tenancy, f_release, f_override_version, NULL, NULL,
                            f_get_filter, f_write_filter, f_get_policy, f_write_policy, f_gateway_routes, NULL, NULL, f_route, f_update_target,
                            f_read_target, f_target_version};
  fx->io.ctx = fx;
  return fx;
}

bool fake_deliver_echo(Fake *fx) {
  Slot *s = slot(fx, fx->echo_key, false);
  assert_non_null(s);
  assert_non_null(fx->echo);
  json_object_put(s->obj);
  s->obj = fx->echo;
  fx->echo = NULL;
  return own_echo(fx, s); /* the slot's key is the index's key of a target: "<Kind>/<ns>/<name>" */
}

void fake_delete(Fake *fx, const char *key) {
  Slot *s = slot(fx, key, false);
  if (!s) return;
  json_object_put(s->obj);
  s->obj = NULL;
  s->hidden = false;
  const char *a = strchr(key, '/'), *b = a ? strchr(a + 1, '/') : NULL;
  if (!b || !strncmp(key, "po/", 3)) return;
  char kind[64], ns[254];
  snprintf(kind, sizeof kind, "%.*s", (int)(a - key), key);
  snprintf(ns, sizeof ns, "%.*s", (int)(b - a - 1), a + 1);
  po_TargetIndex_ObjectSeen(fx->ix, kind, ns, b + 1, NULL);
}

void fake_show_created(Fake *fx) {
  for (int i = 0; i < kMax; i++) fx->slots[i].hidden = false;
}

void fake_free(Fake *fx) {
  assert_int_equal(fx->lent, 0); /* every read was handed back */
  json_object_put(fx->echo);
  for (int i = 0; i < kMax; i++) json_object_put(fx->slots[i].obj);
  po_TargetIndex_Free(fx->ix);
  free(fx);
}

int setup(void **s) {
  *s = fake_new();
  return 0;
}

int teardown(void **s) {
  fake_free(*s);
  return 0;
}

void apply_override(Fake *fx, const char *name, int gen, const char *target, const char *patches) {
  apply_override_ns(fx, "default", name, gen, target, NULL, patches);
}

void apply_override_ns(Fake *fx, const char *ns, const char *name, int gen, const char *target, const char *target_ns,
                       const char *patches) {
  size_t size = strlen(patches) + 1024; /* big lists of patches too */
  char *text = malloc(size), tref[200];
  assert_non_null(text);
  if (target_ns) snprintf(tref, sizeof tref, ",\"namespace\":\"%s\"", target_ns);
  else tref[0] = '\0';
  /* uids differ per namespace (as the API server's do) but stay "uid-po-NAME" in default */
  char uid[300];
  if (!strcmp(ns, "default")) snprintf(uid, sizeof uid, "uid-po-%s", name);
  else snprintf(uid, sizeof uid, "uid-po-%s-%s", ns, name);
  snprintf(text, size,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"generation\":%d,\"uid\":\"%s\"},"
           "\"spec\":{\"targetRef\":{\"name\":\"%s\"%s},\"patches\":%s}}",
           name, ns, gen, uid, target, tref, patches);
  json_object *o = json_tokener_parse(text);
  free(text);
  assert_non_null(o);
  store_override(fx, ns, name, o);
}

void store_override(Fake *fx, const char *ns, const char *name, json_object *o) {
  char k[300];
  snprintf(k, sizeof k, "po/%s/%s", ns, name);
  Slot *s = slot(fx, k, false);
  if (s) { /* keep what the server keeps: finalizers, annotations and status */
    json_object *fin = get(get(s->obj, "metadata"), "finalizers"), *st = get(s->obj, "status");
    json_object *ann = get(get(s->obj, "metadata"), "annotations");
    if (fin) json_object_object_add(get(o, "metadata"), "finalizers", copy(fin));
    if (ann) json_object_object_add(get(o, "metadata"), "annotations", copy(ann));
    if (st) json_object_object_add(o, "status", copy(st));
  }
  put(fx, k, o);
  char key[300], old[300];
  po_Reconcile_OverrideKey(o, key, sizeof key);
  po_TargetIndex_Set(fx->ix, ns, name, key, old, sizeof old);
  char held[300];
  po_Reconcile_HeldKey(o, held, sizeof held); /* as the informer handler does */
  po_TargetIndex_SetHeld(fx->ix, ns, name, held, old, sizeof old);
}


json_object *slot_obj(Fake *fx, const char *key) {
  Slot *s = slot(fx, key, false);
  return s ? s->obj : NULL;
}

json_object *override_condition(Fake *fx, const char *ns, const char *name, const char *type) {
  char k[300];
  snprintf(k, sizeof k, "po/%s/%s", ns, name);
  json_object *list = get(get(slot_obj(fx, k), "status"), "conditions");
  for (size_t i = 0; list && i < json_object_array_length(list); i++) {
    json_object *c = json_object_array_get_idx(list, i);
    if (!strcmp(json_object_get_string(get(c, "type")), type)) return c;
  }
  return NULL;
}

po_ReconcileResult reconcile_key(Fake *fx, const char *key) {
  po_ReconcileResult r = po_Reconcile(&fx->io, fx->ix, key);
  if (!r.ok) print_message("%s: %s\n", key, r.error);
  assert_int_equal(fx->lent, 0); /* every object read was handed back */
  return r;
}

const char *annotation_of(json_object *o, const char *k) {
  return json_object_get_string(get(get(get(o, "metadata"), "annotations"), k));
}
