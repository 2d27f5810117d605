#include "po/meshes/consul.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "po/targets/owned.h"

#define SOURCE_KEY "PropertyOverride"


/* Adds a member, false when it (or the object) could not be made. */
static bool add(json_object *o, const char *k, json_object *v) {
  if (!o || !v || json_object_object_add(o, k, v) != 0) {
    json_object_put(v);
    return false;
  }
  return true;
}

json_object *po_Consul_Marker(const char *ns, const char *name, int64_t generation, int32_t priority, const char *uid,
                              const char *target_uid) {
  json_object *src = json_object_new_object();
  /* All or nothing: a marker missing its name or uids would make the entry someone else's. */
  bool ok = add(src, "name", json_object_new_string(name)) && add(src, "generation", json_object_new_int64(generation));
  if (ok && ns && *ns) ok = add(src, "namespace", json_object_new_string(ns));
  /* The priority the entry was written at, so an entry kept verbatim (an invalid generation
   * without a usable record) keeps its place. Only when not 0: the markers of entries at the
   * default priority stay as older versions wrote them (no rewrite of every entry on upgrade). */
  if (ok && priority != 0) ok = add(src, "priority", json_object_new_int(priority));
  /* Offline (render) no uid is known: the fields are left out rather than shown empty. */
  if (ok && uid && *uid) ok = add(src, "uid", json_object_new_string(uid));
  if (ok && target_uid && *target_uid) ok = add(src, "targetUID", json_object_new_string(target_uid));
  if (!ok) {
    json_object_put(src);
    return NULL;
  }
  return src;
}

json_object *po_Consul_Arguments(const po_CompiledOverride *c, const char *uid, const char *target_uid) {
  json_object *args = po_Value_ToJsonC(c->consul_arguments);
  if (!args) return NULL;
  if (!add(args, SOURCE_KEY, po_Consul_Marker(c->target_ns && *c->target_ns && strcmp(c->target_ns, c->ns) != 0 ? c->ns : NULL, c->name,
                                             c->generation, c->priority, uid, target_uid))) {
    json_object_put(args);
    return NULL;
  }
  return args;
}

/* What an entry says about itself: not ours at all (another extension, or a property-override
 * entry with no marker), ours (the marker is bound to this very object's uid, which only the API
 * server assigns, so only a write of ours into this object can carry it), or a look-alike: a
 * marker copied from elsewhere, restored from a backup, written by hand, or from a version that
 * did not bind markers. Look-alikes are someone else's and are left exactly as they are. */
typedef enum { kNotMarked, kOurs, kLookAlike } Mark;

/* The PropertyOverrides an entry may name, sorted by (name, uid) for a lookup in log time: a
 * target holds up to 100 entries, and each was looked for among all its PropertyOverrides in
 * turn (a reconcile cost their number squared in name compares). A list of a few, or one whose
 * sorted copy cannot be allocated, is searched as it is: the same answer, slower. */
typedef struct {
  const po_ConsulOwner *owners;
  size_t n;
  const po_ConsulOwner **sorted; /* NULL: search owners in turn */
} Owners;

static int owner_cmp(const char *name, const char *uid, const po_ConsulOwner *o) {
  int c = strcmp(name, o->name);
  return c ? c : strcmp(uid, o->uid);
}

static int by_owner_key(const void *a, const void *b) {
  const po_ConsulOwner *x = *(const po_ConsulOwner *const *)a;
  return owner_cmp(x->name, x->uid, *(const po_ConsulOwner *const *)b);
}

static Owners owners_of(const po_ConsulOwner *owners, size_t n) {
  Owners o = {owners, n, NULL};
  if (!owners || n <= 8) return o;
  o.sorted = malloc(n * sizeof *o.sorted);
  if (!o.sorted) return o;
  for (size_t i = 0; i < n; i++) o.sorted[i] = &owners[i];
  qsort(o.sorted, n, sizeof *o.sorted, by_owner_key);
  return o;
}

static void owners_free(Owners *o) { free(o->sorted); }

static bool known(const Owners *o, const char *name, const char *uid) {
  if (!o->sorted) {
    for (size_t i = 0; i < o->n; i++) {
      if (!strcmp(o->owners[i].name, name) && !strcmp(o->owners[i].uid, uid)) return true;
    }
    return false;
  }
  size_t lo = 0, hi = o->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = owner_cmp(name, uid, o->sorted[mid]);
    if (c == 0) return true;
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return false;
}

int32_t po_Consul_MarkerPriority(const json_object *src) {
  json_object *p = po_Json_Get(src, "priority");
  if (!p || !json_object_is_type(p, json_type_int)) return 0;
  int64_t v = json_object_get_int64(p);
  return v < INT32_MIN || v > INT32_MAX ? 0 : (int32_t)v;
}

static Mark mark_of(json_object *entry, const char *target_uid, const Owners *owners, po_ConsulEntry *out) {
  const char *name = po_Json_String(entry, "name");
  json_object *src = po_Json_Get(po_Json_Get(entry, "arguments"), SOURCE_KEY);
  if (!name || strcmp(name, PO_EXTENSION_NAME) != 0 || !src) return kNotMarked;
  const char *owner = po_Json_String(src, "name"), *uid = po_Json_String(src, "uid"), *tuid = po_Json_String(src, "targetUID");
  if (!owner || !uid || !*uid || !tuid || !*target_uid || strcmp(tuid, target_uid) != 0) return kLookAlike;
  if (owners->owners && !known(owners, owner, uid)) return kLookAlike;
  json_object *req = po_Json_Get(entry, "required");
  if (out) {
    *out = (po_ConsulEntry){owner, uid, json_object_get_int64(po_Json_Get(src, "generation")), po_Json_Get(entry, "arguments"),
                            po_Consul_MarkerPriority(src), req && json_object_is_type(req, json_type_boolean) && json_object_get_boolean(req),
                            po_Json_String(src, "namespace"), 0};
  }
  return kOurs;
}

po_ConsulMark po_Consul_MarkOf(const json_object *entry, const char *target_uid, po_ConsulEntry *out) {
  Owners any = {NULL, 0, NULL};
  Mark m = mark_of((json_object *)entry, target_uid ? target_uid : "", &any, out);
  return m == kOurs ? kPo_ConsulMark_Bound : m == kLookAlike ? kPo_ConsulMark_LookAlike : kPo_ConsulMark_None;
}

size_t po_Consul_OwnedEntries(const json_object *target, const po_ConsulOwner *owners, size_t nowners, po_ConsulEntry *out,
                              size_t cap, size_t *foreign) {
  json_object *list = po_Json_Get(po_Json_Get(target, "spec"), "envoyExtensions");
  const char *tuid = po_Json_Meta(target, "uid");
  size_t n = 0, f = 0;
  Owners known_owners = owners_of(owners, nowners);
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    po_ConsulEntry e;
    Mark m = mark_of(json_object_array_get_idx(list, i), tuid, &known_owners, &e);
    if (m == kLookAlike) f++;
    if (m != kOurs) continue;
    if (n < cap) out[n] = e;
    n++;
  }
  owners_free(&known_owners);
  if (foreign) *foreign = f;
  return n;
}

po_ConsulRecheck po_Consul_Recheck(const json_object *arguments, po_Arena *a) {
  json_object *args = NULL;
  if (!arguments) return kPo_ConsulRecheck_Refused;
  /* Each step's failure for want of memory is no verdict on the entry (an invalid generation's
   * live entry would be dropped for it). */
  if (json_object_deep_copy((json_object *)arguments, &args, NULL) != 0) return kPo_ConsulRecheck_NoMemory;
  json_object_object_del(args, SOURCE_KEY);
  po_Status st;
  po_Status_Clear(&st);
  po_Value *v = po_Value_FromJsonC(args, a, &st);
  json_object_put(args);
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!v || !d) return kPo_ConsulRecheck_NoMemory; /* a json-c tree always converts: only memory fails it */
  po_CompileOptions co = po_CompileOptions_Default();
  co.convention = kPo_Convention_Wire; /* what Consul's HTTP API hands its Constructor */
  if (po_Constructor(PO_EXTENSION_NAME, v, &co, a, d) != NULL && po_Diagnostics_ErrorCount(d) == 0) return kPo_ConsulRecheck_Accepted;
  return po_Engine_OutOfMemory(a) ? kPo_ConsulRecheck_NoMemory : kPo_ConsulRecheck_Refused;
}

/* The apply order of our entries: priority ascending (Istio's and Envoy Gateway's convention),
 * then name, so the order is total and the same on every reconcile. */
int po_ConsulEntry_Order(const void *x, const void *y) {
  const po_ConsulEntry *a = x, *b = y;
  if (a->priority != b->priority) return a->priority < b->priority ? -1 : 1;
  int c = strcmp(a->owner, b->owner);
  /* one name from two namespaces: the target's own ("" or no namespace) first, then by namespace */
  return c ? c : strcmp(a->ns ? a->ns : "", b->ns ? b->ns : "");
}

/* A deep copy (json-c has one: json_object_deep_copy). */
static json_object *copy(const json_object *o) {
  json_object *c = NULL;
  return json_object_deep_copy((json_object *)o, &c, NULL) == 0 ? c : NULL;
}

static bool only_extensions_left(json_object *spec) {
  json_object_object_foreach(spec, k, v) {
    if (strcmp(k, "envoyExtensions") == 0) {
      if (json_object_array_length(v) > 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

json_object *po_Consul_NewTarget(po_TargetKind kind, const char *ns, const char *name) {
  json_object *obj = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object();
  bool ok = add(obj, "apiVersion", json_object_new_string(PO_CONSUL_GROUP "/" PO_CONSUL_VERSION)) &&
            add(obj, "kind", json_object_new_string(po_TargetKind_Name(kind))) &&
            add(meta, "name", json_object_new_string(name)) &&
            (!ns || !*ns || add(meta, "namespace", json_object_new_string(ns))) &&
            add(labels, "app.kubernetes.io/managed-by", json_object_new_string("propertyoverride"));
  if (ok) ok = add(meta, "labels", labels), labels = NULL;
  if (ok) ok = add(obj, "metadata", meta), meta = NULL;
  if (ok) ok = add(obj, "spec", json_object_new_object());
  json_object_put(labels);
  json_object_put(meta);
  if (!ok) {
    json_object_put(obj);
    return NULL;
  }
  return obj;
}

/* One of our entries, {name, required, arguments (a reference)}; NULL when out of memory. */
static json_object *new_entry(const json_object *arguments, bool required) {
  json_object *e = json_object_new_object();
  if (add(e, "name", json_object_new_string(PO_EXTENSION_NAME)) && add(e, "required", json_object_new_boolean(required)) &&
      add(e, "arguments", json_object_get((json_object *)arguments))) {
    return e;
  }
  json_object_put(e);
  return NULL;
}

/* The object to write: a new top level and a new spec over the current object's own members
 * (references), with metadata copied (a write record or the created annotation goes there). The
 * plan then replaces spec.envoyExtensions: the old list, about 25 KB at 50 entries, and the
 * rest of the target are never copied (a deep copy of the whole target was 3.7% of the
 * controller's CPU at 2,000 PropertyOverrides). NULL when out of memory. */
static json_object *writable(const json_object *current) {
  json_object *obj = json_object_new_object();
  json_object_object_foreach((json_object *)current, k, v) {
    json_object *c = NULL;
    if (!obj) break;
    if (strcmp(k, "metadata") == 0) {
      c = copy(v);
    } else if (strcmp(k, "spec") == 0 && json_object_is_type(v, json_type_object)) {
      c = json_object_new_object();
      json_object_object_foreach(v, sk, sv) {
        if (c && json_object_object_add(c, sk, json_object_get(sv)) != 0) {
          json_object_put(sv);
          json_object_put(c);
          c = NULL;
        }
      }
    } else {
      c = json_object_get(v);
    }
    if ((v && !c) || json_object_object_add(obj, k, c) != 0) {
      json_object_put(c);
      json_object_put(obj);
      obj = NULL;
    }
  }
  return obj;
}

static po_ConsulPlan out_of_memory(json_object *obj, json_object *list) {
  json_object_put(obj);
  json_object_put(list);
  return (po_ConsulPlan){.out_of_memory = true};
}

po_ConsulPlan po_Consul_Plan(const json_object *current, po_TargetKind kind, const char *ns, const char *name,
                             const po_ConsulOwner *owners, size_t nowners, const po_ConsulEntry *entries, size_t n) {
  po_ConsulPlan plan = {0};
  json_object *obj = NULL;
  if (current && !(obj = writable(current))) return out_of_memory(NULL, NULL);
  if (!obj) {
    if (n == 0) return plan; /* nothing there, nothing wanted */
    plan.create = true;
    if (!(obj = po_Consul_NewTarget(kind, ns, name))) return out_of_memory(NULL, NULL);
  }
  json_object *spec = po_Json_Get(obj, "spec");
  if (!spec || !json_object_is_type(spec, json_type_object)) {
    if (!add(obj, "spec", spec = json_object_new_object())) return out_of_memory(obj, NULL);
  }
  const char *tuid = po_Json_Meta(obj, "uid");
  json_object *old = po_Json_Get(spec, "envoyExtensions");
  json_object *list = json_object_new_array();
  if (!list) return out_of_memory(obj, NULL);
  /* A plan is all or nothing: one missing entry would be written as removed. */
  Owners known_owners = owners_of(owners, nowners);
  for (size_t i = 0; old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
    json_object *e = json_object_array_get_idx(old, i);
    if (mark_of(e, tuid, &known_owners, NULL) != kOurs && json_object_array_add(list, json_object_get(e)) != 0) {
      json_object_put(e);
      owners_free(&known_owners);
      return out_of_memory(obj, list);
    }
  }
  owners_free(&known_owners);
  po_ConsulEntry *sorted = malloc((n ? n : 1) * sizeof *sorted);
  if (!sorted) return out_of_memory(obj, list);
  memcpy(sorted, entries, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, po_ConsulEntry_Order);
  for (size_t i = 0; i < n; i++) {
    json_object *e = new_entry(sorted[i].arguments, sorted[i].required);
    if (!e || json_object_array_add(list, e) != 0) {
      json_object_put(e);
      free(sorted);
      return out_of_memory(obj, list);
    }
  }
  free(sorted);
  bool changed = !old ? json_object_array_length(list) > 0 : !json_object_equal(old, list);
  if (old || json_object_array_length(list) > 0) {
    if (!add(spec, "envoyExtensions", list)) return out_of_memory(obj, NULL); /* add put the list */
  } else {
    json_object_put(list);
  }
  /* Deleted only when provably ours: the created annotation bound to the object's own uid (a
   * copy or a restore has another uid), and nothing but our (now removed) entries left in it. */
  if (!plan.create && po_Owned_CreatedBy(obj) == kPo_OwnedCreated_Us && only_extensions_left(spec)) {
    plan.remove = true;
    plan.changed = true;
    json_object_put(obj);
    return plan;
  }
  plan.changed = plan.create || changed;
  plan.object = obj;
  return plan;
}
