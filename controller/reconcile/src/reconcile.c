#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/targets/consul.h"
#include "po/targets/consul_check.h"
#include "status.h"


typedef struct {
  char name[254];
  const char *uid;             /* metadata.uid (in obj) */
  json_object *obj;            /* cached object (owned) */
  po_CompiledOverride c;
  bool deleting;
  bool held;                   /* listed here for its last valid generation; its spec points elsewhere */
  char held_key[600];          /* where its last valid generation is live, when not here */
  bool has_finalizer;
  bool refused;                /* the tenancy policy does not let it write this target */
  bool over_limit;             /* no room left in the target (kPo_MaxExtensionsPerConsulObject) */
  char refusal[512];
  json_object *entry_args;     /* the arguments to write (owned; the marker is set when planned) */
  int64_t entry_generation;
  json_object *last_valid;     /* owned: the status.lastValid to record, when accepted */
} Item;

static json_object *get(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static json_object *copy(json_object *o) {
  json_object *c = NULL;
  return o && json_object_deep_copy(o, &c, NULL) == 0 ? c : NULL;
}

/* The last valid generation of an invalid PropertyOverride, from its status.lastValid record
 * ({generation, spec}), compiled again now: the record is data anyone with access to the status
 * could have written, so only what the engine accepts today, for this very target, is used. */
static json_object *recompile_record(json_object *obj, const char *key, po_Arena *ar, int64_t *gen) {
  json_object *rec = get(get(obj, "status"), "lastValid"), *spec = get(rec, "spec"), *g = get(rec, "generation");
  if (!spec || !json_object_is_type(spec, json_type_object) || !g || !json_object_is_type(g, json_type_int)) return NULL;
  json_object *meta = get(obj, "metadata");
  json_object *syn = json_object_new_object(), *m = json_object_new_object();
  json_object_object_add(syn, "apiVersion", json_object_new_string("propertyoverride.io/v1alpha1"));
  json_object_object_add(syn, "kind", json_object_new_string("PropertyOverride"));
  json_object_object_add(m, "name", copy(get(meta, "name")));
  json_object_object_add(m, "namespace", copy(get(meta, "namespace")));
  json_object_object_add(m, "generation", json_object_new_int64(json_object_get_int64(g)));
  json_object_object_add(syn, "metadata", m);
  json_object_object_add(syn, "spec", copy(spec));
  json_object *args = NULL;
  char k[600];
  po_Reconcile_OverrideKey(syn, k, sizeof k);
  po_CompiledOverride c;
  if (strcmp(k, key) == 0 && po_CompiledOverride_FromObject(syn, ar, &c) && c.accepted) {
    args = po_Value_ToJsonC(c.consul_arguments);
    *gen = c.generation;
  }
  json_object_put(syn);
  return args;
}

static json_object *finalizer_patch(json_object *obj, bool add);

static bool has_finalizer(json_object *obj) {
  json_object *f = get(get(obj, "metadata"), "finalizers");
  for (size_t i = 0; f && json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++) {
    if (strcmp(json_object_get_string(json_object_array_get_idx(f, i)), PO_FINALIZER) == 0) return true;
  }
  return false;
}

/* metadata.finalizers with ours added or removed, as a merge patch with the resourceVersion
 * as precondition (a merge patch replaces the whole list). */
static json_object *finalizer_patch(json_object *obj, bool add) {
  json_object *meta = get(obj, "metadata"), *old = get(meta, "finalizers");
  json_object *list = json_object_new_array();
  for (size_t i = 0; old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
    const char *f = json_object_get_string(json_object_array_get_idx(old, i));
    if (strcmp(f, PO_FINALIZER) != 0) json_object_array_add(list, json_object_new_string(f));
  }
  if (add) json_object_array_add(list, json_object_new_string(PO_FINALIZER));
  json_object *m = json_object_new_object(), *patch = json_object_new_object();
  json_object_object_add(m, "finalizers", list);
  json_object *rv = get(meta, "resourceVersion");
  if (rv) json_object_object_add(m, "resourceVersion", json_object_get(rv));
  json_object_object_add(patch, "metadata", m);
  return patch;
}

static void set_error(po_ReconcileResult *r, po_WriteResult w, const char *what, const char *err) {
  if (w == kPo_WriteConflict) r->conflict = true;
  if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s: %s", what, err);
  r->ok = false;
}

/* ---- overlaps ---- */

static const char *norm(const char *s) { return s && *s ? s : "default"; }

static bool services_overlap(const po_ResourceFilter *a, const po_ResourceFilter *b) {
  if (a->service_count == 0 || b->service_count == 0) return true;
  for (size_t i = 0; i < a->service_count; i++) {
    for (size_t j = 0; j < b->service_count; j++) {
      const po_ServiceName *x = &a->services[i], *y = &b->services[j];
      if (!strcmp(x->name, y->name) && !strcmp(norm(x->namespace_), norm(y->namespace_)) &&
          !strcmp(norm(x->partition), norm(y->partition))) {
        return true;
      }
    }
  }
  return false;
}

static bool same_effect(const po_Patch *a, const po_Patch *b, po_Arena *ar) {
  if (strcmp(a->op, b->op) != 0) return false;
  if (!a->value || !b->value) return !a->value && !b->value;
  return strcmp(po_Value_ToJson(a->value, ar), po_Value_ToJson(b->value, ar)) == 0;
}

/* The first overlap of item i with any other accepted item, as a sentence; "" when none. */
static void overlap_of(Item *items, size_t n, size_t i, po_Arena *ar, char *out, size_t size) {
  out[0] = '\0';
  const po_Arguments *x = items[i].c.accepted ? items[i].c.args : NULL;
  for (size_t j = 0; x && j < n; j++) {
    const po_Arguments *y = items[j].c.accepted && j != i && !items[j].deleting ? items[j].c.args : NULL;
    for (size_t p = 0; y && p < x->patch_count; p++) {
      for (size_t q = 0; q < y->patch_count; q++) {
        const po_Patch *a = &x->patches[p], *b = &y->patches[q];
        if (strcmp(a->path, b->path) || strcmp(a->resource_filter.resource_type, b->resource_filter.resource_type) ||
            strcmp(a->resource_filter.traffic_direction, b->resource_filter.traffic_direction) ||
            !services_overlap(&a->resource_filter, &b->resource_filter) || same_effect(a, b, ar)) {
          continue;
        }
        snprintf(out, size,
                 "patches[%zu] %s overlaps PropertyOverride %s patches[%zu], which sets it differently; %s is "
                 "applied %s, so where both match its value %s",
                 p, a->path, items[j].name, q, items[j].name, strcmp(items[j].name, items[i].name) > 0 ? "after" : "before",
                 strcmp(items[j].name, items[i].name) > 0 ? "wins" : "is overridden by this one");
        return;
      }
    }
  }
}

/* ---- the reconcile ---- */

/* The property-override entries (and their patches) in the target, ours included: others' use
 * up the per-object limits the webhook enforces (po/targets/consul_check.h) as much as ours. */
static void others_usage(json_object *target, size_t *entries, size_t *patches) {
  json_object *list = get(get(target, "spec"), "envoyExtensions");
  size_t e = 0, p = 0;
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *x = json_object_array_get_idx(list, i), *n = get(x, "name");
    if (!n || !json_object_is_type(n, json_type_string) || strcmp(json_object_get_string(n), PO_EXTENSION_NAME) != 0) continue;
    e++;
    p += po_ConsulEntry_PatchCount(get(x, "arguments"));
  }
  *entries = e;
  *patches = p;
}

/* "Kind/ns/name" split; false when malformed. */
static bool parse_key(const char *key, po_TargetKind *kind, char ns[254], char name[254]) {
  char kind_s[32];
  const char *s1 = strchr(key, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  if (!s1 || !s2 || (size_t)(s1 - key) >= sizeof kind_s || (size_t)(s2 - s1 - 1) >= 254 || strlen(s2 + 1) >= 254) return false;
  memcpy(kind_s, key, (size_t)(s1 - key));
  kind_s[s1 - key] = '\0';
  memcpy(ns, s1 + 1, (size_t)(s2 - s1 - 1));
  ns[s2 - s1 - 1] = '\0';
  strcpy(name, s2 + 1);
  *kind = strcmp(kind_s, "ProxyDefaults") == 0 ? kPo_TargetProxyDefaults : kPo_TargetServiceDefaults;
  return true;
}

/* Whether the target at `it->held_key` still holds an entry of this PropertyOverride. */
static bool held_elsewhere(const po_ReconcileIO *io, const Item *it) {
  po_TargetKind kind;
  char ns[254], name[254];
  if (!parse_key(it->held_key, &kind, ns, name)) return false;
  json_object *t = io->get_target(io->ctx, kind, ns, name);
  po_ConsulOwner me = {it->name, it->uid};
  bool held = t && po_Consul_OwnedEntries(t, &me, 1, NULL, 0, NULL) > 0;
  json_object_put(t);
  return held;
}

/* The entry's arguments with our marker for the target it goes into (a new reference). */
static json_object *marked(const Item *it, const char *target_uid) {
  json_object *args = copy(it->entry_args);
  if (args) json_object_object_add(args, "PropertyOverride", po_Consul_Marker(it->name, it->entry_generation, it->uid, target_uid));
  return args;
}

static const char *uid_of(json_object *o) {
  json_object *u = get(get(o, "metadata"), "uid");
  return u && json_object_is_type(u, json_type_string) ? json_object_get_string(u) : "";
}

/* The PropertyOverride names of a target, read in one consistent call: the index may grow
 * between a count and a second read, and a name missing from the list would look deleted. */
static size_t lookup(po_TargetIndex *ix, const char *key, char (**names)[254]) {
  size_t cap = 16;
  for (;;) {
    char(*buf)[254] = malloc(cap * sizeof *buf);
    if (!buf) return (size_t)-1;
    size_t n = po_TargetIndex_Lookup(ix, key, buf, cap);
    if (n <= cap) {
      *names = buf;
      return n;
    }
    free(buf);
    cap = n + 16;
  }
}

static void report_foreign(const po_ReconcileIO *io, po_TargetKind kind, json_object *target, po_ReconcileResult *r) {
  if (r->foreign_entries && io->target_event) {
    char msg[512];
    snprintf(msg, sizeof msg,
             "%zu builtin/property-override entr%s carr%s a PropertyOverride marker that this controller did not write "
             "into this object (a copy, a restore, or written by hand); left as %s",
             r->foreign_entries, r->foreign_entries == 1 ? "y" : "ies", r->foreign_entries == 1 ? "ies" : "y",
             r->foreign_entries == 1 ? "it is" : "they are");
    io->target_event(io->ctx, kind, target, "Warning", "ForeignEntry", msg);
  }
  if (r->foreign_object && io->target_event) {
    io->target_event(io->ctx, kind, target, "Warning", "ForeignObject",
                     "the annotation propertyoverride.io/created does not name this object's uid: it was not created by "
                     "this controller (a copy or a restore), so the controller will never delete it");
  }
}

po_ReconcileResult po_Reconcile(const po_ReconcileIO *io, po_TargetIndex *ix, const char *key) {
  po_ReconcileResult r = {.ok = true};
  char ns[254], name[254];
  po_TargetKind kind;
  if (!parse_key(key, &kind, ns, name)) {
    snprintf(r.error, sizeof r.error, "malformed key '%s'", key);
    r.ok = false;
    return r;
  }
  if (io->synced && !io->synced(io->ctx)) {
    r.ok = false;
    r.not_synced = true;
    snprintf(r.error, sizeof r.error, "caches not synced yet: nothing read or written");
    return r;
  }

  /* Tables sized to this target: a reconcile runs on every change, so nothing fixed-size and
   * large is allocated (and zeroed) per call. */
  po_Arena *ar = po_Arena_New();
  json_object *target = io->get_target(io->ctx, kind, ns, name);
  char(*names)[254] = NULL;
  size_t n = lookup(ix, key, &names);
  if (n == (size_t)-1) n = 0; /* out of memory: names is NULL, reported below */
  Item *items = calloc(n ? n : 1, sizeof *items);
  po_ConsulOwner *owners = malloc((n ? n : 1) * sizeof *owners);
  po_ConsulEntry *live = NULL, *bound = NULL, *want = malloc((n ? n : 1) * sizeof *want);
  if (!ar || !names || !items || !owners || !want) {
    snprintf(r.error, sizeof r.error, "out of memory");
    r.ok = false;
    goto done;
  }
  /* The PropertyOverrides of this target, as the cache has them: their names and uids are what
   * an entry's marker must name (with this target's uid) to be ours. */
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    json_object *obj = io->get_override(io->ctx, ns, names[i]);
    if (!obj) continue;
    char k[600], hk[600];
    po_Reconcile_OverrideKey(obj, k, sizeof k);
    po_Reconcile_HeldKey(obj, hk, sizeof hk);
    if (strcmp(k, key) != 0 && strcmp(hk, key) != 0) { /* the cache moved on since the index was read */
      json_object_put(obj);
      continue;
    }
    Item *it = &items[m];
    it->held = strcmp(k, key) != 0;
    snprintf(it->held_key, sizeof it->held_key, "%s", it->held ? "" : hk);
    snprintf(it->name, sizeof it->name, "%s", names[i]);
    it->obj = obj;
    it->uid = uid_of(obj);
    owners[m++] = (po_ConsulOwner){it->name, it->uid};
  }
  /* Entries bound to this target for PropertyOverrides that point elsewhere now (retargeted):
   * still ours, as long as the PropertyOverride they name exists with that uid, so they are
   * removed here. One that names no existing PropertyOverride is someone else's. */
  size_t nowners = m, nbound = po_Consul_OwnedEntries(target, NULL, 0, NULL, 0, NULL);
  bound = nbound ? malloc(nbound * sizeof *bound) : NULL;
  po_ConsulOwner *all = malloc((m + nbound + 1) * sizeof *all);
  if (!all || (nbound && !bound)) {
    free(all);
    snprintf(r.error, sizeof r.error, "out of memory");
    r.ok = false;
    goto done;
  }
  memcpy(all, owners, m * sizeof *all);
  free(owners);
  owners = all;
  nbound = po_Consul_OwnedEntries(target, NULL, 0, bound, nbound, NULL);
  for (size_t b = 0; b < nbound; b++) {
    bool listed = false;
    for (size_t o = 0; o < nowners && !listed; o++) listed = !strcmp(owners[o].name, bound[b].owner) && !strcmp(owners[o].uid, bound[b].uid);
    if (listed) continue;
    json_object *other = io->get_override(io->ctx, ns, bound[b].owner);
    if (other && !strcmp(uid_of(other), bound[b].uid)) owners[nowners++] = (po_ConsulOwner){bound[b].owner, bound[b].uid};
    json_object_put(other);
  }
  size_t live_cap = po_Consul_OwnedEntries(target, owners, nowners, NULL, 0, &r.foreign_entries);
  live = malloc((live_cap ? live_cap : 1) * sizeof *live);
  if (!live) {
    snprintf(r.error, sizeof r.error, "out of memory");
    r.ok = false;
    goto done;
  }
  size_t nlive = po_Consul_OwnedEntries(target, owners, nowners, live, live_cap, NULL);
  r.foreign_object = target && po_Consul_CreatedBy(target) == kPo_ConsulCreatedForeign;
  report_foreign(io, kind, target, &r);

  for (size_t i = 0; i < m; i++) {
    Item *it = &items[i];
    json_object *obj = it->obj;
    it->deleting = get(get(obj, "metadata"), "deletionTimestamp") != NULL;
    it->has_finalizer = has_finalizer(obj);
    if (!po_CompiledOverride_FromObject(obj, ar, &it->c)) {
      snprintf(r.error, sizeof r.error, "out of memory compiling %s", it->name);
      r.ok = false;
      goto done;
    }
    if (it->deleting) continue;
    if (!po_Tenancy_Allows(io->tenancy, kind, ns, it->refusal, sizeof it->refusal)) {
      it->refused = true;
      continue;
    }
    if (it->held && it->c.accepted) continue; /* valid where it points now: its entry moves there */
    if (it->c.accepted) {
      it->entry_args = po_Value_ToJsonC(it->c.consul_arguments);
      it->entry_generation = it->c.generation;
      it->last_valid = json_object_new_object();
      json_object_object_add(it->last_valid, "generation", json_object_new_int64(it->c.generation));
      json_object_object_add(it->last_valid, "spec", copy(get(obj, "spec")));
      continue;
    }
    /* An invalid generation never removes what is live: the last valid one stays, recompiled
     * from the status record, or (no usable record: a status write that failed) the entry
     * written for this very PropertyOverride, if Consul's check still accepts it. */
    it->entry_args = recompile_record(obj, key, ar, &it->entry_generation);
    for (size_t l = 0; !it->entry_args && l < nlive; l++) {
      /* ours (bound to both uids), and no newer than the object itself: a marker claiming a
       * generation the PropertyOverride never had was not written by us */
      if (strcmp(live[l].owner, it->name) != 0 || strcmp(live[l].uid, it->uid) != 0) continue;
      if (live[l].generation < 1 || live[l].generation > it->c.generation) break;
      if (!po_Consul_Recheck(live[l].arguments, ar)) break;
      it->entry_args = copy(live[l].arguments);
      json_object_object_del(it->entry_args, "PropertyOverride");
      it->entry_generation = live[l].generation;
    }
  }

  /* Our finalizer on each PropertyOverride that can reach the target, before the target is
   * written: its deletion must wait for the cleanup. */
  for (size_t i = 0; i < m; i++) {
    Item *it = &items[i];
    if (it->deleting || it->has_finalizer || it->refused || it->held) continue;
    json_object *patch = finalizer_patch(it->obj, true);
    char err[256];
    po_WriteResult w = io->patch_override(io->ctx, ns, it->name, false, patch, err, sizeof err);
    json_object_put(patch);
    if (w != kPo_WriteOk && w != kPo_WriteNotFound) set_error(&r, w, "adding the finalizer", err);
  }
  if (!r.ok) goto done;

  /* Room in the target: the webhook refuses an object over the per-object limits, so the
   * PropertyOverrides that do not fit (the last ones by name) are not written and say so,
   * rather than every write to the target failing. */
  size_t used_e, used_p, own_p = 0;
  others_usage(target, &used_e, &used_p);
  for (size_t l = 0; l < nlive; l++) own_p += po_ConsulEntry_PatchCount(live[l].arguments);
  used_e -= nlive < used_e ? nlive : used_e;
  used_p -= own_p < used_p ? own_p : used_p;
  /* Two passes: entries already live keep their place, so a newcomer never evicts one (first
   * come, first placed); newcomers then by name. */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < m; i++) {
      Item *it = &items[i];
      bool is_live = false;
      for (size_t l = 0; l < nlive && !is_live; l++) is_live = !strcmp(live[l].owner, it->name) && !strcmp(live[l].uid, it->uid);
      if (!it->entry_args || is_live != (pass == 0)) continue;
      size_t p = po_ConsulEntry_PatchCount(it->entry_args);
      if (used_e + 1 > kPo_MaxExtensionsPerConsulObject || used_p + p > kPo_MaxPatchesPerConsulObject) {
        it->over_limit = true;
        json_object_put(it->entry_args);
        it->entry_args = NULL;
        continue;
      }
      used_e++;
      used_p += p;
    }
  }
  size_t nwant = 0;
  for (size_t i = 0; i < m; i++) nwant += items[i].entry_args != NULL;
  bool target_ok = true;
  char target_err[512] = "";
  const char *where_s = po_Arena_Printf(ar, "%s %s/%s", po_TargetKind_Name(kind), ns, name);
  if (!target && nwant > 0) {
    /* Created empty first: its uid, which only the API server assigns, is what binds our
     * markers and the created annotation to it. */
    json_object *skel = po_Consul_NewTarget(kind, ns, name), *made = NULL;
    po_WriteResult w = io->write_target(io->ctx, kind, ns, name, skel, true, NULL, &made, target_err, sizeof target_err);
    json_object_put(skel);
    if (w != kPo_WriteOk || !made || !*uid_of(made)) {
      json_object_put(made);
      target_ok = false;
      if (w == kPo_WriteOk) {
        w = kPo_WriteFailed;
        snprintf(target_err, sizeof target_err, "the server returned no uid for the created object");
      }
      set_error(&r, w, po_Arena_Printf(ar, "creating %s", where_s), target_err);
    } else {
      po_TargetIndex_NoteCreated(ix, uid_of(made));
      target = made;
      r.targets_written++;
    }
  }
  /* Created by this process and not annotated yet (the write after the create failed): the
   * annotation goes into this reconcile's write. */
  bool annotate = target && po_Consul_CreatedBy(target) == kPo_ConsulCreatedNo && po_TargetIndex_WasCreated(ix, uid_of(target), false);
  if (annotate) po_Consul_MarkCreated(target);
  const char *tuid = uid_of(target);
  if (target_ok && target && !*tuid) {
    /* Without a uid nothing can be bound to it: writing would add an unbound entry each time. */
    target_ok = false;
    snprintf(target_err, sizeof target_err, "the object has no metadata.uid");
    set_error(&r, kPo_WriteFailed, po_Arena_Printf(ar, "reading %s", where_s), target_err);
  }
  nwant = 0;
  for (size_t i = 0; target_ok && i < m; i++) {
    Item *it = &items[i];
    if (!it->entry_args) continue;
    json_object *args = marked(it, tuid);
    if (args) want[nwant++] = (po_ConsulEntry){it->name, it->uid, it->entry_generation, args};
  }
  if (target_ok) {
    po_ConsulPlan plan = po_Consul_Plan(target, kind, ns, name, owners, nowners, want, nwant);
    if (annotate && !plan.remove && plan.object) plan.changed = true; /* the annotation alone is a change */
    if (plan.changed) {
      const char *rv = json_object_get_string(get(get(target, "metadata"), "resourceVersion"));
      po_WriteResult w = io->write_target(io->ctx, kind, ns, name, plan.remove ? NULL : plan.object, plan.create, rv, NULL,
                                          target_err, sizeof target_err);
      if (w == kPo_WriteNotFound && plan.remove) w = kPo_WriteOk;
      if (w != kPo_WriteOk) {
        target_ok = false;
        set_error(&r, w, po_Arena_Printf(ar, "writing %s", where_s), target_err);
      } else {
        r.targets_written++;
        if (annotate) po_TargetIndex_WasCreated(ix, uid_of(target), true);
      }
    }
    json_object_put(plan.object);
  }
  for (size_t i = 0; i < nwant; i++) json_object_put(want[i].arguments);

  char now[32];
  io->now(io->ctx, now);
  for (size_t i = 0; i < m; i++) {
    Item *it = &items[i];
    if (it->held) continue; /* its own target's reconcile writes its status and finalizer */
    if (it->deleting) {
      /* Its entry is gone from the target once the write above succeeded; where its last valid
       * generation was held (another target) it must be gone too before the finalizer goes. */
      if (target_ok && it->has_finalizer && *it->held_key && held_elsewhere(io, it)) {
        set_error(&r, kPo_WriteConflict, po_Arena_Printf(ar, "deleting %s", it->name),
                  po_Arena_Printf(ar, "waiting for %s to drop its entry", it->held_key));
        continue;
      }
      if (target_ok && it->has_finalizer) {
        json_object *patch = finalizer_patch(it->obj, false);
        char err[256];
        po_WriteResult w = io->patch_override(io->ctx, ns, it->name, false, patch, err, sizeof err);
        json_object_put(patch);
        if (w != kPo_WriteOk && w != kPo_WriteNotFound) set_error(&r, w, "removing the finalizer", err);
      }
      continue;
    }
    po_OverrideStatus s = {.ns = ns, .generation = it->c.generation, .target_kind = kind, .target_name = name,
                           .last_valid = it->last_valid};
    int64_t live_gen = target_ok ? it->entry_generation : 0;
    if (!target_ok) {
      for (size_t l = 0; l < nlive; l++) if (!strcmp(live[l].owner, it->name) && !strcmp(live[l].uid, it->uid)) live_gen = live[l].generation;
    }
    s.live_generation = live_gen;
    size_t errors = po_Diagnostics_ErrorCount(it->c.diags);
    s.accepted = (po_Condition){.type = "Accepted", .status = it->c.accepted && !it->refused ? "True" : "False",
                                .reason = it->refused ? "TargetNotAllowed" : it->c.accepted ? "Accepted" : "Invalid"};
    if (it->refused) {
      snprintf(s.accepted.message, sizeof s.accepted.message, "%s", it->refusal);
    } else if (it->c.accepted) {
      snprintf(s.accepted.message, sizeof s.accepted.message, "%zu patch%s valid for Consul and Envoy",
               it->c.args->patch_count, it->c.args->patch_count == 1 ? " is" : "es are");
    } else {
      const char *d = po_CompiledOverride_Describe(&it->c, false, false, sizeof s.accepted.message - 128, ar);
      snprintf(s.accepted.message, sizeof s.accepted.message, "%zu error%s: %s", errors, errors == 1 ? "" : "s", d ? d : "");
    }
    s.programmed.type = "Programmed";
    if (it->refused) {
      s.programmed.status = "False";
      s.programmed.reason = "TargetNotAllowed";
      snprintf(s.programmed.message, sizeof s.programmed.message, "nothing is written to %s", where_s);
    } else if (it->over_limit) {
      s.programmed.status = "False";
      s.programmed.reason = "TargetFull";
      snprintf(s.programmed.message, sizeof s.programmed.message,
               "%s has no room for this entry: at most %d builtin/property-override entries and %d patches per object; "
               "entries already live keep their place, newcomers are placed by name, and this one comes after the limit",
               where_s, (int)kPo_MaxExtensionsPerConsulObject, (int)kPo_MaxPatchesPerConsulObject);
    } else if (!target_ok) {
      s.programmed.status = "False";
      s.programmed.reason = "TargetError";
      snprintf(s.programmed.message, sizeof s.programmed.message, "%s (retrying); %s", target_err,
               live_gen ? po_Arena_Printf(ar, "generation %lld is live", (long long)live_gen) : "nothing is live");
    } else if (!it->c.accepted) {
      s.programmed.status = "False";
      s.programmed.reason = "Invalid";
      snprintf(s.programmed.message, sizeof s.programmed.message, "generation %lld is invalid; %s", (long long)it->c.generation,
               live_gen ? po_Arena_Printf(ar, "generation %lld is still live in %s", (long long)live_gen, where_s)
                        : po_Arena_Printf(ar, "nothing is live in %s", where_s));
    } else {
      char ov[1024];
      overlap_of(items, m, i, ar, ov, sizeof ov);
      s.programmed.status = "True";
      s.programmed.reason = ov[0] ? "Overlapping" : "Programmed";
      snprintf(s.programmed.message, sizeof s.programmed.message, "generation %lld is live in %s%s%s", (long long)live_gen,
               where_s, ov[0] ? "; " : "", ov);
    }
    json_object *old_status = get(it->obj, "status");
    json_object *st = po_Status_Build(old_status, &s, now);
    if (io->event) {
      const po_Condition *cs[2] = {&s.accepted, &s.programmed};
      for (int k = 0; k < 2; k++) {
        if (!po_Status_ReasonChanged(old_status, cs[k])) continue;
        bool warn = strcmp(cs[k]->status, "True") != 0;
        io->event(io->ctx, it->obj, warn ? "Warning" : "Normal", cs[k]->reason, cs[k]->message);
      }
    }
    if (!po_Status_Same(old_status, st)) {
      json_object *patch = json_object_new_object();
      json_object_object_add(patch, "status", st);
      char err[256];
      po_WriteResult w = io->patch_override(io->ctx, ns, it->name, true, patch, err, sizeof err);
      json_object_put(patch);
      if (w == kPo_WriteOk) r.statuses_written++;
      else if (w != kPo_WriteNotFound) set_error(&r, w, po_Arena_Printf(ar, "status of %s", it->name), err);
    } else {
      json_object_put(st);
    }
  }
done:
  for (size_t i = 0; items && i < n && items[i].obj; i++) {
    json_object_put(items[i].obj);
    json_object_put(items[i].entry_args);
    json_object_put(items[i].last_valid);
  }
  json_object_put(target);
  free(live);
  free(bound);
  free(owners);
  free(want);
  free(items);
  free(names);
  po_Arena_Free(ar);
  return r;
}
