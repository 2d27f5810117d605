#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/targets/consul.h"
#include "status.h"


typedef struct {
  char name[254];
  json_object *obj;            /* cached object (owned) */
  po_CompiledOverride c;
  bool deleting;
  bool has_finalizer;
  json_object *entry_args;     /* what we write for it: its own, or the live one (borrowed) */
  json_object *own_args;       /* owned, when accepted */
  json_object *recorded_args;  /* owned: the last-programmed annotation's arguments */
  int64_t recorded_generation;
  int64_t entry_generation;
} Item;

static json_object *get(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

#define LAST_VALID "propertyoverride.io/last-valid"

/* The newest valid generation, as recorded on the PropertyOverride itself: what keeps an
 * invalid update from removing it even when the target lost our entry meanwhile (an edit by
 * hand, a recreated ServiceDefaults). {"generation": N, "arguments": {...}} as annotation text. */
static json_object *last_programmed(json_object *obj, int64_t *gen) {
  json_object *ann = get(get(get(obj, "metadata"), "annotations"), LAST_VALID);
  if (!ann || !json_object_is_type(ann, json_type_string)) return NULL;
  json_object *v = json_tokener_parse(json_object_get_string(ann));
  json_object *args = get(v, "arguments");
  if (!args || !json_object_is_type(args, json_type_object)) {
    json_object_put(v);
    return NULL;
  }
  *gen = json_object_get_int64(get(v, "generation"));
  json_object_get(args);
  json_object_put(v);
  return args;
}

static json_object *finalizer_patch(json_object *obj, bool add);

/* metadata: the finalizer added (with the resourceVersion as precondition, since a merge patch
 * replaces the whole list) and/or the last-valid record (gen > 0). */
static json_object *metadata_patch(json_object *obj, bool add_finalizer, int64_t gen, json_object *args) {
  json_object *patch = add_finalizer ? finalizer_patch(obj, true) : json_object_new_object();
  if (gen > 0) {
    json_object *m = get(patch, "metadata");
    if (!m) {
      m = json_object_new_object();
      json_object_object_add(patch, "metadata", m);
    }
    json_object *v = json_object_new_object();
    json_object_object_add(v, "generation", json_object_new_int64(gen));
    json_object_object_add(v, "arguments", json_object_get(args));
    json_object *ann = json_object_new_object();
    json_object_object_add(ann, LAST_VALID, json_object_new_string(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN)));
    json_object_put(v);
    json_object_object_add(m, "annotations", ann);
  }
  return patch;
}

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

po_ReconcileResult po_Reconcile(const po_ReconcileIO *io, po_TargetIndex *ix, const char *key) {
  po_ReconcileResult r = {.ok = true};
  char kind_s[32], ns[254], name[254];
  const char *s1 = strchr(key, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  if (!s1 || !s2 || (size_t)(s1 - key) >= sizeof kind_s || (size_t)(s2 - s1 - 1) >= sizeof ns || strlen(s2 + 1) >= sizeof name) {
    snprintf(r.error, sizeof r.error, "malformed key '%s'", key);
    r.ok = false;
    return r;
  }
  memcpy(kind_s, key, (size_t)(s1 - key));
  kind_s[s1 - key] = '\0';
  memcpy(ns, s1 + 1, (size_t)(s2 - s1 - 1));
  ns[s2 - s1 - 1] = '\0';
  strcpy(name, s2 + 1);
  po_TargetKind kind = strcmp(kind_s, "ProxyDefaults") == 0 ? kPo_TargetProxyDefaults : kPo_TargetServiceDefaults;

  /* Tables sized to this target: a reconcile runs on every change, so nothing fixed-size and
   * large is allocated (and zeroed) per call. */
  po_Arena *ar = po_Arena_New();
  json_object *target = io->get_target(io->ctx, kind, ns, name);
  size_t cap = po_TargetIndex_Lookup(ix, key, NULL, 0), live_cap = po_Consul_OwnedEntries(target, NULL, 0);
  char(*names)[254] = malloc((cap ? cap : 1) * sizeof *names);
  Item *items = calloc(cap ? cap : 1, sizeof *items);
  po_ConsulEntry *live = malloc((live_cap ? live_cap : 1) * sizeof *live), *want = malloc((cap ? cap : 1) * sizeof *want);
  if (!ar || !names || !items || !live || !want) {
    snprintf(r.error, sizeof r.error, "out of memory");
    r.ok = false;
    goto done;
  }
  /* An override added to the index since the count is reconciled by its own event. */
  size_t n = po_TargetIndex_Lookup(ix, key, names, cap);
  if (n > cap) n = cap;
  size_t nlive = po_Consul_OwnedEntries(target, live, live_cap);
  if (nlive > live_cap) nlive = live_cap;

  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    json_object *obj = io->get_override(io->ctx, ns, names[i]);
    if (!obj) continue;
    char k[600];
    po_Reconcile_OverrideKey(obj, k, sizeof k);
    if (strcmp(k, key) != 0) { /* the cache moved on since the index was read */
      json_object_put(obj);
      continue;
    }
    Item *it = &items[m++];
    snprintf(it->name, sizeof it->name, "%s", names[i]);
    it->obj = obj;
    it->deleting = get(get(obj, "metadata"), "deletionTimestamp") != NULL;
    it->has_finalizer = has_finalizer(obj);
    if (!po_CompiledOverride_FromObject(obj, ar, &it->c)) {
      snprintf(r.error, sizeof r.error, "out of memory compiling %s", names[i]);
      r.ok = false;
      goto done;
    }
    if (it->deleting) continue;
    it->recorded_args = last_programmed(obj, &it->recorded_generation);
    if (it->c.accepted) {
      it->own_args = po_Consul_Arguments(&it->c);
      it->entry_args = it->own_args;
      it->entry_generation = it->c.generation;
    } else {
      /* An invalid generation never removes what is live: keep the last valid one's entry. */
      for (size_t l = 0; l < nlive; l++) {
        if (strcmp(live[l].owner, it->name) == 0) {
          it->entry_args = live[l].arguments;
          it->entry_generation = live[l].generation;
          break;
        }
      }
      if (!it->entry_args && it->recorded_args) {
        it->entry_args = it->recorded_args;
        it->entry_generation = it->recorded_generation;
      }
    }
  }

  /* One metadata patch per PropertyOverride that needs one, before the target is written: the
   * finalizer (once it can reach the target, its deletion must wait for the cleanup) and the
   * record of its newest valid generation (what stays live while later ones are invalid). */
  for (size_t i = 0; i < m; i++) {
    Item *it = &items[i];
    if (it->deleting) continue;
    bool record = it->c.accepted && it->own_args && it->recorded_generation != it->c.generation;
    if (it->has_finalizer && !record) continue;
    json_object *patch = metadata_patch(it->obj, !it->has_finalizer, record ? it->c.generation : 0, it->own_args);
    char err[256];
    po_WriteResult w = io->patch_override(io->ctx, ns, it->name, false, patch, err, sizeof err);
    json_object_put(patch);
    if (w != kPo_WriteOk && w != kPo_WriteNotFound) set_error(&r, w, "updating the PropertyOverride's metadata", err);
  }
  if (!r.ok) goto done;

  size_t nwant = 0;
  for (size_t i = 0; i < m; i++) {
    if (items[i].entry_args) want[nwant++] = (po_ConsulEntry){items[i].name, items[i].entry_generation, items[i].entry_args};
  }
  po_ConsulPlan plan = po_Consul_Plan(target, kind, ns, name, want, nwant);
  bool target_ok = true;
  char target_err[512] = "";
  if (plan.changed) {
    const char *rv = json_object_get_string(get(get(target, "metadata"), "resourceVersion"));
    po_WriteResult w = io->write_target(io->ctx, kind, ns, name, plan.remove ? NULL : plan.object, plan.create,
                                        rv, target_err, sizeof target_err);
    if (w == kPo_WriteNotFound && plan.remove) w = kPo_WriteOk;
    if (w != kPo_WriteOk) {
      target_ok = false;
      set_error(&r, w, po_Arena_Printf(ar, "writing %s %s/%s", po_TargetKind_Name(kind), ns, name), target_err);
    } else {
      r.targets_written = 1;
    }
  }
  json_object_put(plan.object);

  char now[32];
  io->now(io->ctx, now);
  for (size_t i = 0; i < m; i++) {
    Item *it = &items[i];
    if (it->deleting) {
      /* Its entry is gone from the target once the write above succeeded. */
      if (target_ok && it->has_finalizer) {
        json_object *patch = finalizer_patch(it->obj, false);
        char err[256];
        po_WriteResult w = io->patch_override(io->ctx, ns, it->name, false, patch, err, sizeof err);
        json_object_put(patch);
        if (w != kPo_WriteOk && w != kPo_WriteNotFound) set_error(&r, w, "removing the finalizer", err);
      }
      continue;
    }
    po_OverrideStatus s = {.ns = ns, .generation = it->c.generation, .target_kind = kind, .target_name = name};
    int64_t live_gen = target_ok ? it->entry_generation : 0;
    if (!target_ok) {
      for (size_t l = 0; l < nlive; l++) if (!strcmp(live[l].owner, it->name)) live_gen = live[l].generation;
    }
    s.live_generation = live_gen;
    size_t errors = po_Diagnostics_ErrorCount(it->c.diags);
    s.accepted = (po_Condition){.type = "Accepted", .status = it->c.accepted ? "True" : "False",
                                .reason = it->c.accepted ? "Accepted" : "Invalid"};
    if (it->c.accepted) {
      snprintf(s.accepted.message, sizeof s.accepted.message, "%zu patch%s valid for Consul and Envoy",
               it->c.args->patch_count, it->c.args->patch_count == 1 ? " is" : "es are");
    } else {
      const char *d = po_CompiledOverride_Describe(&it->c, false, false, sizeof s.accepted.message - 128, ar);
      snprintf(s.accepted.message, sizeof s.accepted.message, "%zu error%s: %s", errors, errors == 1 ? "" : "s", d ? d : "");
    }
    char where[600];
    snprintf(where, sizeof where, "%s %s/%s", po_TargetKind_Name(kind), ns, name);
    s.programmed.type = "Programmed";
    if (!target_ok) {
      s.programmed.status = "False";
      s.programmed.reason = "TargetError";
      snprintf(s.programmed.message, sizeof s.programmed.message, "%s (retrying); %s", target_err,
               live_gen ? po_Arena_Printf(ar, "generation %lld is live", (long long)live_gen) : "nothing is live");
    } else if (!it->c.accepted) {
      s.programmed.status = "False";
      s.programmed.reason = "Invalid";
      snprintf(s.programmed.message, sizeof s.programmed.message, "generation %lld is invalid; %s", (long long)it->c.generation,
               live_gen ? po_Arena_Printf(ar, "generation %lld is still live in %s", (long long)live_gen, where)
                        : po_Arena_Printf(ar, "nothing is live in %s", where));
    } else {
      char ov[1024];
      overlap_of(items, m, i, ar, ov, sizeof ov);
      s.programmed.status = "True";
      s.programmed.reason = ov[0] ? "Overlapping" : "Programmed";
      snprintf(s.programmed.message, sizeof s.programmed.message, "generation %lld is live in %s%s%s", (long long)live_gen,
               where, ov[0] ? "; " : "", ov);
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
  for (size_t i = 0; items && i < cap && items[i].obj; i++) {
    json_object_put(items[i].obj);
    json_object_put(items[i].own_args);
    json_object_put(items[i].recorded_args);
  }
  json_object_put(target);
  free(live);
  free(want);
  free(items);
  free(names);
  po_Arena_Free(ar);
  return r;
}
