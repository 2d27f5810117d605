/* po_Reconcile in four phases over one Run: load (the target, its PropertyOverrides, their
 * compiled forms, the entries live in it), plan (what each contributes), write (finalizers, then
 * the target), status. The phases are in the order of reconcile.h's contract; each returns false
 * when the reconcile must end there (the reason is in run->r). */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "eg_write.h"
#include "istio_write.h"
#include "overlap.h"
#include "po/base/json.h"
#include "po/meshes/consul.h"
#include "po/meshes/consul_check.h"
#include "po/meshes/istio.h"
#include "status.h"
#include "sync.h"

typedef struct {
  char ns[254];                  /* its namespace: the target's, or another (spec.targetRef.namespace) */
  bool other_ns;                 /* ns is not the target's: its marker names it */
  char name[254];
  const char *uid;               /* metadata.uid (uid_buf) */
  char uid_buf[128];
  char rv[128];                  /* the resourceVersion everything here was learnt at */
  bool from_memo;                /* learnt from the index's memo: obj is read only when needed */
  po_OverrideMemo memo;
  const json_object *obj;        /* the cached object (lent: read only), or NULL until needed */
  void *ref;                     /* what io->release takes back */
  const po_CompiledEntry *ce;    /* its current spec compiled (a reference) */
  bool deleting;
  bool held;                     /* listed here for its last valid generation; its spec points elsewhere */
  char held_key[600];            /* where its last valid generation is live, when not here */
  char home_key[600];            /* held here: the target its spec points at */
  bool has_finalizer;
  bool refused;                  /* the tenancy policy does not let it write this target */
  bool over_limit;               /* no room left in the target (kPo_MaxExtensionsPerConsulObject) */
  bool is_live;                  /* an entry of it is in the target now */
  bool record;                   /* its current generation is the last valid one (status.lastValid) */
  char refusal[1024];
  /* The entry to write: the compiled arguments of `entry` (a reference), or, for an invalid
   * generation without a usable record, a copy of the live entry Consul's check still accepts. */
  const po_CompiledEntry *entry;
  json_object *entry_copy;       /* owned */
  int64_t entry_generation;
  int32_t entry_priority;        /* where the entry goes among ours (spec.priority of its generation) */
  size_t entry_patches;
  po_JsonHash entry_hash;        /* po_Json_Hash of the entry's arguments (without our marker) */
  bool entry_required;           /* the entry's `required` (spec.required of that generation) */
  /* status.lastValid, compiled valid for this target, not yet shown to be ours (record_bound):
   * an Istio or Envoy Gateway record, which its write phase programs only where the object
   * already holds exactly it (po_IstioItem.verify, po_EGItem.verify) */
  bool unverified;
  /* status.lastValid ignored, because it does not match what this controller wrote: the sentence
   * the Programmed message and the LastValidMismatch Event carry ("" otherwise) */
  char mismatch[512];
} Item;

typedef struct {
  const po_ReconcileIO *io;
  po_TargetIndex *ix;
  const char *key;
  po_TargetKind kind;
  char ns[254], name[254];
  const char *where;             /* "ServiceDefaults ns/name", for messages */
  po_Arena *ar;
  const json_object *read;       /* the target as the cache has it (shared, read only), or NULL */
  void *read_ref;
  const json_object *target;     /* `read`, or `own` once we have our own */
  json_object *own;              /* the target after our create, or our annotated copy (owned) */
  char (*names)[320];            /* "namespace/name" of each PropertyOverride the index lists */
  Item *items;
  size_t n, m;                   /* names listed, items loaded */
  po_ConsulOwner *owners;        /* the target's PropertyOverrides, then those of entries bound to it */
  size_t nowners;
  po_ConsulEntry *live, *bound, *want;
  size_t nlive, nwant;
  bool target_ok;
  char target_err[512];
  bool target_conflict; /* the target write met a 409: the statuses wait for the retry */
  bool dry;             /* po_Reconcile_Desired: plan over a given object, no Event, no write */
  bool deferred;        /* the target write was put off by a second (sync.h): the statuses wait too */
  bool recorded;        /* `record` is the one just written into the target */
  char elsewhere[254];  /* the namespace holding a target of this name, where we would create one */
  po_WriteRecord record; /* our last write into the target (require mode, sync.h) */
  po_SyncVerdict sync;  /* consul-k8s's word on that write */
  po_IstioItem *istio;  /* an Istio target: each item's EnvoyFilter (istio_write.h), else NULL */
  char unbound_uid[128]; /* created by us, the write binding the created annotation failed: for status.created */
  po_EGItem *eg;        /* an Envoy Gateway target: each item's EnvoyPatchPolicy (eg_write.h), else NULL */
  po_ReconcileResult r;
} Run;

/* The mesh's part of a reconcile (po_TargetOps, below: write_target for Consul, write_istio for
 * Istio); load, plan and status are the same for every mesh. */
typedef struct po_TargetOps po_TargetOps;
/* Per mesh: phase 3's write of the target's objects after the finalizers, and what differs in
 * the status. Consul: every PropertyOverride's entry in one object (shared room, consul-k8s's
 * Synced); Istio: one EnvoyFilter each (istio_write.h), written is programmed. */
struct po_TargetOps {
  const char *mesh;                              /* for Accepted's message */
  bool (*write)(Run *run);                       /* false: the reconcile ends (run->r says why) */
  bool shared_room;                              /* one object for all: plan_room */
  bool consul_sync;                              /* Programmed may wait for consul-k8s */
};
static const po_TargetOps *target_ops(const Run *run);

static json_object *copy(const json_object *o) {
  json_object *c = NULL;
  return o && json_object_deep_copy((json_object *)o, &c, NULL) == 0 ? c : NULL;
}

static void fail(Run *run, po_WriteResult w, const char *what, const char *err) {
  if (w == kPo_WriteConflict) run->r.conflict = true;
  /* An admission webhook that could not be reached (nothing answered: webhook_error.c): its
   * return is no event of ours, so the retry must come soon (kPo_ReconcileWebhookRetryMaxS), not
   * after a backoff grown while it was down. An answer (any status code) or a timeout keeps the
   * normal backoff. */
  if (po_Reconcile_WebhookUnreachable(err)) run->r.webhook_unreachable = true;
  /* The first error wins; long texts are cut (the status conditions carry the whole of them). */
  if (!run->r.error[0]) {
    int k = snprintf(run->r.error, sizeof run->r.error, "%.200s: ", what);
    if (k > 0 && (size_t)k < sizeof run->r.error) snprintf(run->r.error + k, sizeof run->r.error - (size_t)k, "%.300s", err);
  }
  run->r.ok = false;
}

/* Nothing is written after memory ran out: a plan made with a missing piece would drop entries. */
static bool oom(Run *run, const char *where) {
  run->r.out_of_memory = true;
  fail(run, kPo_WriteFailed, "out of memory", where);
  return false;
}

static void release(Run *run, const json_object *obj, void *ref) {
  if (obj && run->io->release) run->io->release(run->io->ctx, ref);
}

/* ---- finalizers ---- */

static bool has_finalizer(const json_object *obj) {
  json_object *f = po_Json_Get(po_Json_Get(obj, "metadata"), "finalizers");
  for (size_t i = 0; f && json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(f, i));
    if (s && strcmp(s, PO_FINALIZER) == 0) return true;
  }
  return false;
}

/* metadata.finalizers with ours added or removed, as a merge patch with the resourceVersion
 * as precondition (a merge patch replaces the whole list). Metadata only, never spec: the
 * shipped webhook configurations do not send such an update to our webhook (matchCondition
 * spec-changed), so a deletion never waits for a webhook that cannot be reached. New strings
 * only: the cached object's are shared. NULL when out of memory. */
static json_object *finalizer_patch(const json_object *obj, bool add) {
  json_object *meta = po_Json_Get(obj, "metadata"), *old = po_Json_Get(meta, "finalizers"), *rv = po_Json_Get(meta, "resourceVersion");
  json_object *list = json_object_new_array(), *m = json_object_new_object(), *patch = json_object_new_object();
  bool ok = list && m && patch;
  for (size_t i = 0; ok && old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
    const char *f = json_object_get_string(json_object_array_get_idx(old, i));
    if (f && strcmp(f, PO_FINALIZER) != 0) ok = json_object_array_add(list, json_object_new_string(f)) == 0;
  }
  if (ok && add) ok = json_object_array_add(list, json_object_new_string(PO_FINALIZER)) == 0;
  if (ok) ok = json_object_object_add(m, "finalizers", list) == 0, list = NULL;
  if (ok && rv) ok = json_object_object_add(m, "resourceVersion", json_object_new_string(json_object_get_string(rv))) == 0;
  if (ok) ok = json_object_object_add(patch, "metadata", m) == 0, m = NULL;
  json_object_put(list);
  json_object_put(m);
  if (!ok) {
    json_object_put(patch);
    return NULL;
  }
  return patch;
}

/* ---- keys ---- */

/* "Kind/ns/name" split; false when malformed: an unknown kind, a missing part, or a part too long
 * for a Kubernetes name. */
static bool parse_key(const char *key, po_TargetKind *kind, char ns[254], char name[254]) {
  const char *s1 = strchr(key, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  if (!s1 || !s2 || s2 == s1 + 1 || !s2[1] || strchr(s2 + 1, '/')) return false;
  size_t kl = (size_t)(s1 - key);
  static const po_TargetKind kKinds[] = {kPo_TargetProxyDefaults, kPo_TargetServiceDefaults, kPo_TargetService,
                                         kPo_TargetIstioMesh, kPo_TargetGateway};
  bool known = false;
  for (size_t i = 0; i < sizeof kKinds / sizeof kKinds[0] && !known; i++) {
    const char *n = po_TargetKind_Name(kKinds[i]);
    if (kl == strlen(n) && !strncmp(key, n, kl)) *kind = kKinds[i], known = true;
  }
  if (!known) return false;
  if ((size_t)(s2 - s1 - 1) >= 254 || strlen(s2 + 1) >= 254) return false;
  memcpy(ns, s1 + 1, (size_t)(s2 - s1 - 1));
  ns[s2 - s1 - 1] = '\0';
  strcpy(name, s2 + 1);
  return true;
}

/* The generation of this PropertyOverride's entry in the target at `it->held_key`, 0 when that
 * target holds none. */
static int64_t held_generation(Run *run, const Item *it) {
  po_TargetKind kind;
  char ns[254], name[254];
  if (!parse_key(it->held_key, &kind, ns, name)) return 0;
  void *ref = NULL;
  const json_object *t = run->io->get_target(run->io->ctx, kind, ns, name, &ref);
  po_ConsulOwner me = {it->name, it->uid};
  po_ConsulEntry e;
  int64_t gen = t && po_Consul_OwnedEntries(t, &me, 1, &e, 1, NULL) > 0 ? (e.generation > 0 ? e.generation : 1) : 0;
  release(run, t, ref);
  return gen;
}

/* Whether the target at `it->held_key` still holds an entry of this PropertyOverride. */
static bool held_elsewhere(Run *run, const Item *it) { return held_generation(run, it) > 0; }

/* The PropertyOverride names of a target, read in one consistent call: the index may grow
 * between a count and a second read, and a name missing from the list would look deleted. */
static size_t lookup(po_TargetIndex *ix, const char *key, char (**names)[320]) {
  size_t cap = 16;
  for (;;) {
    char(*buf)[320] = malloc(cap * sizeof *buf);
    if (!buf) return (size_t)-1;
    size_t n = po_TargetIndex_LookupQualified(ix, key, buf, cap);
    if (n <= cap) {
      *names = buf;
      return n;
    }
    free(buf);
    cap = n + 16;
  }
}

static void report_foreign(Run *run) {
  const po_ReconcileIO *io = run->io;
  if (!io->target_event || !run->target) return;
  json_object *about = (json_object *)run->target; /* read only by the callee */
  size_t f = run->r.foreign_entries;
  if (f) {
    char msg[512];
    snprintf(msg, sizeof msg,
             "%zu builtin/property-override entr%s carr%s a PropertyOverride marker that this controller did not write "
             "into this object (a copy, a restore, or written by hand); left as %s",
             f, f == 1 ? "y" : "ies", f == 1 ? "ies" : "y", f == 1 ? "it is" : "they are");
    io->target_event(io->ctx, run->kind, about, "Warning", "ForeignEntry", msg);
  }
  if (run->r.foreign_object) {
    io->target_event(io->ctx, run->kind, about, "Warning", "ForeignObject",
                     "the annotation propertyoverride.io/created does not name this object's uid: it was not created by "
                     "this controller (a copy or a restore), so the controller will never delete it");
  }
}

/* ---- phase 1: load ---- */

static Item *new_item(Run *run, const char *ns, const char *name, const char *k, const char *hk) {
  Item *it = &run->items[run->m++];
  it->held = strcmp(k, run->key) != 0;
  snprintf(it->held_key, sizeof it->held_key, "%s", it->held ? "" : hk);
  snprintf(it->home_key, sizeof it->home_key, "%s", it->held ? k : "");
  snprintf(it->ns, sizeof it->ns, "%s", ns && *ns ? ns : run->ns);
  it->other_ns = strcmp(it->ns, run->ns) != 0;
  snprintf(it->name, sizeof it->name, "%s", name);
  it->uid = it->uid_buf;
  return it;
}

/* One PropertyOverride of the key as an item (taking obj and ref), compiled; false when
 * memory ran out. k and hk are its current and held keys. */
static bool add_item(Run *run, const json_object *obj, void *ref, const char *ns, const char *name, const char *k,
                     const char *hk) {
  Item *it = new_item(run, ns, name, k, hk);
  it->obj = obj;
  it->ref = ref;
  snprintf(it->uid_buf, sizeof it->uid_buf, "%s", po_Json_Meta(obj, "uid"));
  json_object *rv = po_Json_Get(po_Json_Get(obj, "metadata"), "resourceVersion");
  snprintf(it->rv, sizeof it->rv, "%s", rv ? json_object_get_string(rv) : "");
  it->deleting = po_Json_Get(po_Json_Get(obj, "metadata"), "deletionTimestamp") != NULL;
  it->has_finalizer = has_finalizer(obj);
  run->owners[run->nowners++] = (po_ConsulOwner){it->name, it->uid};
  bool out_of_memory;
  it->ce = po_TargetIndex_Compiled(run->ix, obj, kPo_CompileCurrent, &out_of_memory);
  if (!it->ce) return oom(run, po_Arena_Printf(run->ar, "compiling %s", it->name));
  if (!it->deleting && it->has_finalizer && *it->rv && strlen(it->uid) < sizeof it->memo.uid) {
    po_OverrideMemo m = {.generation = it->ce->generation, .spec_hash = it->ce->hash};
    snprintf(m.rv, sizeof m.rv, "%s", it->rv);
    snprintf(m.uid, sizeof m.uid, "%s", it->uid);
    po_TargetIndex_MemoSet(run->ix, it->ns, name, &m, k, hk);
  }
  return true;
}

/* From the memo of an unchanged PropertyOverride (not being deleted, finalizer in place): no
 * read. False when its compiled form is no longer cached: then it is read. */
static bool add_memo_item(Run *run, const char *ns, const char *name, const po_OverrideMemo *m, const char *k,
                          const char *hk) {
  const po_CompiledEntry *ce = po_TargetIndex_CompiledFor(run->ix, ns, name, m->uid, m->generation, m->spec_hash);
  if (!ce) return false;
  Item *it = new_item(run, ns, name, k, hk);
  it->from_memo = true;
  it->memo = *m;
  snprintf(it->uid_buf, sizeof it->uid_buf, "%s", m->uid);
  snprintf(it->rv, sizeof it->rv, "%s", m->rv);
  it->has_finalizer = true;
  it->ce = ce;
  run->owners[run->nowners++] = (po_ConsulOwner){it->name, it->uid};
  return true;
}

/* The object of an item learnt from its memo, read now that it is needed; the reconcile ends
 * (to run again) when it changed meanwhile. */
static bool need_obj(Run *run, Item *it) {
  if (it->obj) return true;
  const json_object *obj = run->io->get_override(run->io->ctx, it->ns, it->name, &it->ref);
  json_object *rv = po_Json_Get(po_Json_Get(obj, "metadata"), "resourceVersion");
  if (!obj || !rv || strcmp(json_object_get_string(rv), it->rv) != 0) {
    release(run, obj, it->ref);
    it->ref = NULL;
    fail(run, kPo_WriteConflict, po_Arena_Printf(run->ar, "reading %s", it->name), "it changed during the reconcile");
    return false;
  }
  it->obj = obj;
  return true;
}

/* The PropertyOverrides the index lists for the key, as the cache has them: their names and uids
 * are what an entry's marker must name (with this target's uid) to be ours. */
static bool load_overrides(Run *run) {
  const po_ReconcileIO *io = run->io;
  for (size_t i = 0; i < run->n; i++) {
    char k[600], hk[600], ns[254];
    const char *slash = strchr(run->names[i], '/'), *name = slash ? slash + 1 : run->names[i];
    snprintf(ns, sizeof ns, "%.*s", slash ? (int)(slash - run->names[i]) : 0, run->names[i]);
    po_OverrideVersion v;
    po_OverrideMemo m;
    if (io->override_version && io->override_version(io->ctx, ns, name, &v) &&
        po_TargetIndex_MemoGet(run->ix, ns, name, &v, &m, k, hk, sizeof k)) {
      if (strcmp(k, run->key) != 0 && strcmp(hk, run->key) != 0) continue; /* points elsewhere now */
      if (add_memo_item(run, ns, name, &m, k, hk)) continue;
    }
    void *ref = NULL;
    const json_object *obj = io->get_override(io->ctx, ns, name, &ref);
    if (!obj) continue;
    po_Reconcile_OverrideKey(obj, k, sizeof k);
    po_Reconcile_HeldKey(obj, hk, sizeof hk);
    if (strcmp(k, run->key) != 0 && strcmp(hk, run->key) != 0) { /* the cache moved on since the index was read */
      release(run, obj, ref);
      continue;
    }
    if (!add_item(run, obj, ref, ns, name, k, hk)) return false;
  }
  return true;
}

/* Entries bound to this target for PropertyOverrides that point elsewhere now (retargeted):
 * still ours, as long as the PropertyOverride they name exists with that uid, so they are
 * removed here. One that names no existing PropertyOverride is someone else's. */
static bool load_bound_owners(Run *run) {
  const po_ReconcileIO *io = run->io;
  size_t nbound = po_Consul_OwnedEntries(run->target, NULL, 0, NULL, 0, NULL);
  po_ConsulOwner *all = malloc((run->nowners + nbound + 1) * sizeof *all);
  run->bound = malloc((nbound ? nbound : 1) * sizeof *run->bound);
  if (!all || !run->bound) {
    free(all);
    return oom(run, "reading the target's entries");
  }
  memcpy(all, run->owners, run->nowners * sizeof *all);
  free(run->owners);
  run->owners = all;
  nbound = po_Consul_OwnedEntries(run->target, NULL, 0, run->bound, nbound, NULL);
  for (size_t b = 0; b < nbound; b++) {
    bool listed = false;
    for (size_t o = 0; o < run->nowners && !listed; o++) {
      listed = !strcmp(run->owners[o].name, run->bound[b].owner) && !strcmp(run->owners[o].uid, run->bound[b].uid);
    }
    if (listed) continue;
    void *ref = NULL;
    /* the marker's namespace only says where to look: the uid must match all the same */
    const char *bns = run->bound[b].ns && *run->bound[b].ns ? run->bound[b].ns : run->ns;
    const json_object *other = io->get_override(io->ctx, bns, run->bound[b].owner, &ref);
    if (!other || strcmp(po_Json_Meta(other, "uid"), run->bound[b].uid) != 0) {
      release(run, other, ref);
      continue;
    }
    char k[600], hk[600];
    po_Reconcile_OverrideKey(other, k, sizeof k);
    po_Reconcile_HeldKey(other, hk, sizeof hk);
    if (strcmp(k, run->key) == 0 || strcmp(hk, run->key) == 0) {
      /* It points here, but the index did not list it: an index update that failed (out of
       * memory). It is one of ours all the same, never taken for deleted; the index is repaired. */
      char old[600];
      run->r.index_repaired++;
      po_TargetIndex_Set(run->ix, bns, run->bound[b].owner, k, old, sizeof old);
      po_TargetIndex_SetHeld(run->ix, bns, run->bound[b].owner, hk, old, sizeof old);
      if (!add_item(run, other, ref, bns, run->bound[b].owner, k, hk)) return false;
      continue;
    }
    run->owners[run->nowners++] = (po_ConsulOwner){run->bound[b].owner, run->bound[b].uid};
    release(run, other, ref);
  }
  return true;
}

static bool load(Run *run) {
  const po_ReconcileIO *io = run->io;
  if (!run->dry) run->read = io->get_target(io->ctx, run->kind, run->ns, run->name, &run->read_ref);
  run->target = run->read;
  run->n = lookup(run->ix, run->key, &run->names);
  if (run->n == (size_t)-1) {
    run->n = 0;
    return oom(run, "listing the PropertyOverrides of the target");
  }
  /* Tables sized to this target: a reconcile runs on every change, so nothing fixed-size and
   * large is allocated (and zeroed) per call. */
  size_t cap = run->n ? run->n : 1;
  run->items = calloc(cap, sizeof *run->items);
  run->owners = malloc(cap * sizeof *run->owners); /* grown in load_bound_owners */
  run->want = malloc(cap * sizeof *run->want);
  if (!run->items || !run->owners || !run->want) return oom(run, "loading the PropertyOverrides of the target");
  /* Room for PropertyOverrides the index missed, found through their entries (load_bound_owners). */
  size_t nbound = po_Consul_OwnedEntries(run->target, NULL, 0, NULL, 0, NULL);
  if (nbound) {
    Item *items = realloc(run->items, (cap + nbound) * sizeof *items);
    po_ConsulEntry *want = realloc(run->want, (cap + nbound) * sizeof *want);
    if (items) run->items = items;
    if (want) run->want = want;
    if (!items || !want) return oom(run, "loading the PropertyOverrides of the target");
    memset(run->items + cap, 0, nbound * sizeof *items);
  }
  if (!load_overrides(run) || !load_bound_owners(run)) return false;
  size_t live_cap = po_Consul_OwnedEntries(run->target, run->owners, run->nowners, NULL, 0, &run->r.foreign_entries);
  run->live = malloc((live_cap ? live_cap : 1) * sizeof *run->live);
  if (!run->live) return oom(run, "reading the target's entries");
  run->nlive = po_Consul_OwnedEntries(run->target, run->owners, run->nowners, run->live, live_cap, NULL);
  run->r.foreign_object = run->target && po_Owned_CreatedBy(run->target) == kPo_OwnedCreated_Foreign;
  for (size_t i = 0; i < run->m; i++) {
    Item *it = &run->items[i];
    for (size_t l = 0; l < run->nlive && !it->is_live; l++) {
      it->is_live = !strcmp(run->live[l].owner, it->name) && !strcmp(run->live[l].uid, it->uid);
    }
  }
  if (!run->dry) report_foreign(run);
  return true;
}

/* ---- phase 2: plan ---- */

static const char *or_oom(const char *s) { return s ? s : "out of memory"; }

/* Whether one of `live` (a target's entries of ours) is the entry the controller wrote for `rec`:
 * this PropertyOverride's, its marker naming rec's generation and priority, `required` and the
 * arguments exactly rec's compiled ones. *seen gets the generation of its entry otherwise. */
static bool proves(const po_ConsulEntry *live, size_t n, const Item *it, const po_CompiledEntry *rec, int64_t *seen) {
  for (size_t l = 0; l < n; l++) {
    const po_ConsulEntry *e = &live[l];
    if (strcmp(e->owner, it->name) != 0 || strcmp(e->uid, it->uid) != 0) continue;
    if (e->generation == rec->generation && e->priority == rec->c.priority && e->required == rec->c.required &&
        po_JsonHash_Equal(po_Json_HashExcept(e->arguments, "PropertyOverride"), rec->arguments_hash)) {
      return true;
    }
    *seen = e->generation > 0 ? e->generation : 1;
  }
  return false;
}

/* Whether status.lastValid, compiled valid for this very target (`rec`), is a record this
 * controller made. The status subresource can be written by others than the controller (a CI
 * robot, a namespace admin granted it), and a record is only a claim: it is honoured when it names
 * no generation above metadata.generation and either this process recorded exactly it (same
 * generation, same spec: po_TargetIndex_IsOwnLastValid), or the target holds what the controller
 * wrote for it, which survives a restart: for Consul the entry of this PropertyOverride bound to
 * this target, whose marker names that generation and priority and whose arguments are exactly the
 * record's compiled ones (the keyed hash: no collision can be aimed). An Istio or Envoy Gateway
 * record is compared with its object by the write phase (it->unverified: written only where the
 * object already holds exactly it). Else it->mismatch says why it is ignored. */
static bool record_bound(Run *run, Item *it, const po_CompiledEntry *rec) {
  int64_t g = rec->generation, now = it->ce->c.generation;
  if (g < 1 || g > now) {
    snprintf(it->mismatch, sizeof it->mismatch,
             "status.lastValid names generation %lld, but metadata.generation is %lld: it was not written by this "
             "controller and is ignored", (long long)g, (long long)now);
    return false;
  }
  bool consul = po_TargetKind_Mesh(run->kind) == kPo_Mesh_Consul;
  int64_t live = 0;
  if (consul && proves(run->live, run->nlive, it, rec, &live)) return true;
  /* This process's memory of its own record, unless the target proves a newer generation: then
   * another replica (leading while this one did not) superseded it, and the record is a replay. */
  if (live <= g && po_TargetIndex_IsOwnLastValid(run->ix, it->ns, it->name, it->uid, g, rec->hash)) return true;
  if (!consul) {
    it->unverified = true;
    return true;
  }
  if (run->dry) {
    /* the admission view: the incoming object replaces the stored one (a re-apply from git may
     * carry none of our entries), and the stored one holds what the controller wrote */
    void *ref = NULL;
    const json_object *stored = run->io->get_target(run->io->ctx, run->kind, run->ns, run->name, &ref);
    po_ConsulOwner me = {it->name, it->uid};
    po_ConsulEntry e;
    bool yes = stored && po_Consul_OwnedEntries(stored, &me, 1, &e, 1, NULL) > 0 && proves(&e, 1, it, rec, &live);
    release(run, stored, ref);
    if (yes) return true;
  }
  snprintf(it->mismatch, sizeof it->mismatch,
           "status.lastValid (generation %lld) does not match what this controller wrote to %s (%s): it is ignored",
           (long long)g, run->where,
           !live ? "it holds no entry of this PropertyOverride"
                 : or_oom(po_Arena_Printf(run->ar, "its entry of this PropertyOverride is generation %lld%s",
                                          (long long)live, live == g ? " with other patches" : "")));
  return false;
}

/* An invalid generation never removes what is live: the last valid one stays, recompiled from
 * the status record (never taken verbatim: the engine judges it again, for this very target) when
 * the record is one this controller made (record_bound), or, without a usable record (a status
 * write that failed, a record that does not match), the entry written for this very
 * PropertyOverride, if Consul's check still accepts it. */
static bool keep_last_valid(Run *run, Item *it) {
  if (!need_obj(run, it)) return false;
  bool out_of_memory = false;
  const po_CompiledEntry *rec = po_TargetIndex_Compiled(run->ix, it->obj, kPo_CompileRecord, &out_of_memory);
  if (out_of_memory) return oom(run, po_Arena_Printf(run->ar, "compiling the last valid record of %s", it->name));
  if (rec && rec->c.accepted && strcmp(rec->target_key, run->key) == 0 && record_bound(run, it, rec)) {
    it->entry = rec;
    it->entry_generation = rec->c.generation;
    it->entry_priority = rec->c.priority;
    it->entry_patches = rec->patch_count;
    it->entry_hash = rec->arguments_hash;
    it->entry_required = rec->c.required;
    return true;
  }
  po_CompiledEntry_Release(rec);
  for (size_t l = 0; l < run->nlive; l++) {
    /* ours (bound to both uids), and no newer than the object itself: a marker claiming a
     * generation the PropertyOverride never had was not written by us */
    const po_ConsulEntry *e = &run->live[l];
    if (strcmp(e->owner, it->name) != 0 || strcmp(e->uid, it->uid) != 0) continue;
    if (e->generation < 1 || e->generation > it->ce->c.generation) break;
    if (!po_Consul_Recheck(e->arguments, run->ar)) break;
    if (!(it->entry_copy = copy(e->arguments))) return oom(run, po_Arena_Printf(run->ar, "keeping the entry of %s", it->name));
    json_object_object_del(it->entry_copy, "PropertyOverride");
    it->entry_generation = e->generation;
    /* the priority it was live at (its marker's), never the current spec's: an invalid
     * generation must not move the entry it keeps */
    it->entry_priority = e->priority;
    it->entry_patches = po_ConsulEntry_PatchCount(it->entry_copy);
    it->entry_hash = po_Json_Hash(it->entry_copy);
    it->entry_required = e->required;
    break;
  }
  return true;
}

static bool has_entry(const Item *it) { return it->entry || it->entry_copy; }

static void drop_entry(Item *it) {
  po_CompiledEntry_Release(it->entry);
  json_object_put(it->entry_copy);
  it->entry = NULL;
  it->entry_copy = NULL;
}

/* Room in the target: the webhook refuses an object over the per-object limits, so the
 * PropertyOverrides that do not fit (the last ones by name) are not written and say so, rather
 * than every write to the target failing. Two passes: entries already live keep their place,
 * so a newcomer never evicts one (first come, first placed); newcomers then by name. */
static void plan_room(Run *run) {
  size_t used_e = 0, used_p = 0, own_p = 0;
  json_object *list = po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *x = json_object_array_get_idx(list, i), *n = po_Json_Get(x, "name");
    if (!n || !json_object_is_type(n, json_type_string) || strcmp(json_object_get_string(n), PO_EXTENSION_NAME) != 0) continue;
    used_e++;
    used_p += po_ConsulEntry_PatchCount(po_Json_Get(x, "arguments"));
  }
  for (size_t l = 0; l < run->nlive; l++) own_p += po_ConsulEntry_PatchCount(run->live[l].arguments);
  used_e -= run->nlive < used_e ? run->nlive : used_e;
  used_p -= own_p < used_p ? own_p : used_p;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < run->m; i++) {
      Item *it = &run->items[i];
      if (!has_entry(it) || it->is_live != (pass == 0)) continue;
      if (used_e + 1 > kPo_MaxExtensionsPerConsulObject || used_p + it->entry_patches > kPo_MaxPatchesPerConsulObject) {
        it->over_limit = true;
        drop_entry(it);
        continue;
      }
      used_e++;
      used_p += it->entry_patches;
    }
  }
}

/* A valid PropertyOverride moved away from this Consul target (listed here by its last valid
 * record, status.lastValid): its entry stays until the target it points at now holds its patches.
 * That target's reconcile records the new generation as lastValid only once its own write
 * succeeded (write_status), and the record moving away is what lets this target drop the entry
 * (the index's held key goes, and the watch enqueues this target). So the patches are never live
 * nowhere while the new target's write fails, across restarts too (the record is in the status).
 * Not kept: when the new target is one the tenancy policy refuses this PropertyOverride (it
 * would never be written there, and the move was asked for: the entry goes now, Accepted=False
 * TargetNotAllowed says why), when its spec names nothing this reconciler writes, and on Istio
 * targets (write_istio keeps or deletes its EnvoyFilter by its own rule). plan's tenancy check
 * has already dropped it when this target, or the namespace it points at now, is refused. */
static bool move_waits(Run *run, const Item *it) {
  char why[1024];
  po_TargetKind now = it->ce->c.target_kind;
  return po_TargetKind_Mesh(run->kind) == kPo_Mesh_Consul && *it->ce->target_key &&
         po_Tenancy_Allows(run->io->tenancy, now, it->ns, why, sizeof why);
}

static bool plan(Run *run) {
  for (size_t i = 0; i < run->m; i++) {
    Item *it = &run->items[i];
    if (it->deleting) continue;
    /* the PropertyOverride's own namespace is asked about, not the target's: they differ when
     * targetRef.namespace names another (the key put it here) */
    /* and the namespace of this very target too: an item held here by its last valid record (an
     * invalid generation pointing elsewhere) is judged by where its entry would be written, not
     * by its current spec, so a revoked policy or a forged status.lastValid reaches nothing */
    if (!po_Tenancy_Allows(run->io->tenancy, run->kind, it->ns, it->refusal, sizeof it->refusal) ||
        !po_Tenancy_AllowsNamespace(run->io->tenancy, it->ce->c.target_kind, it->ns, it->ce->c.target_ns, it->refusal,
                                    sizeof it->refusal) ||
        !po_Tenancy_AllowsNamespace(run->io->tenancy, run->kind, it->ns, run->ns, it->refusal, sizeof it->refusal)) {
      it->refused = true;
      continue;
    }
    if (it->held && it->ce->c.accepted) {
      /* valid where it points now: its entry moves there, and stays here (the generation last
       * written here) until the new target holds its patches (move_waits) */
      if (move_waits(run, it) && !keep_last_valid(run, it)) return false;
      continue;
    }
    if (it->ce->c.accepted) {
      it->record = true;
      it->entry = po_CompiledEntry_Ref(it->ce);
      it->entry_generation = it->ce->c.generation;
      it->entry_priority = it->ce->c.priority;
      it->entry_patches = it->ce->patch_count;
      it->entry_hash = it->ce->arguments_hash;
      it->entry_required = it->ce->c.required;
      continue;
    }
    if (!keep_last_valid(run, it)) return false;
  }
  /* The admission view adds nothing for a PropertyOverride the controller has not claimed yet
   * (no finalizer): its entry could outlive it, since its deletion would not wait for the
   * cleanup. The reconciler adds the finalizer, then the entry. */
  for (size_t i = 0; run->dry && i < run->m; i++) {
    if (!run->items[i].has_finalizer) drop_entry(&run->items[i]);
  }
  if (target_ops(run)->shared_room) plan_room(run); /* Istio: an EnvoyFilter each, no shared room */
  return true;
}

/* ---- phase 3: write ---- */

/* The version of an item, as our writes to it are noted (po_TargetIndex_NoteOverrideWrite). */
static po_OverrideMemo own_version(const Item *it) {
  po_OverrideMemo m = {.generation = it->ce->generation, .spec_hash = it->ce->hash};
  snprintf(m.uid, sizeof m.uid, "%s", it->uid);
  return m;
}

/* Our finalizer on each PropertyOverride that can reach the target, before the target is
 * written: its deletion must wait for the cleanup. */
static bool write_finalizers(Run *run) {
  for (size_t i = 0; i < run->m; i++) {
    Item *it = &run->items[i];
    if (it->deleting || it->has_finalizer || it->refused || it->held) continue;
    if (!need_obj(run, it)) return false;
    json_object *patch = finalizer_patch(it->obj, true);
    if (!patch) return oom(run, po_Arena_Printf(run->ar, "the finalizer of %s", it->name));
    char err[256];
    po_OverrideMemo m = own_version(it);
    /* noted before the write: its echo can come through the watch before the answer does */
    po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 0, po_Json_Get(it->obj, "status"), 0, false);
    po_WriteResult w = run->io->patch_override(run->io->ctx, it->ns, it->name, false, patch, err, sizeof err);
    json_object_put(patch);
    if (w != kPo_WriteOk) po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 0, NULL, 0, true);
    if (w != kPo_WriteOk && w != kPo_WriteNotFound) fail(run, w, "adding the finalizer", err);
  }
  return run->r.ok;
}

/* Created empty first: its uid, which only the API server assigns, is what binds our markers
 * and the created annotation to it. */
static bool create_target(Run *run) {
  json_object *skel = po_Consul_NewTarget(run->kind, run->ns, run->name), *made = NULL;
  if (!skel) return oom(run, "a new target");
  po_WriteResult w = run->io->write_target(run->io->ctx, run->kind, run->ns, run->name, skel, true, NULL, &made,
                                           run->target_err, sizeof run->target_err);
  json_object_put(skel);
  if (w != kPo_WriteOk || !made || !*po_Json_Meta(made, "uid")) {
    json_object_put(made);
    run->target_ok = false;
    if (w == kPo_WriteOk) {
      w = kPo_WriteFailed;
      snprintf(run->target_err, sizeof run->target_err, "the server returned no uid for the created object");
    }
    run->target_conflict = w == kPo_WriteConflict;
    fail(run, w, po_Arena_Printf(run->ar, "creating %s", run->where), run->target_err);
    return false;
  }
  po_TargetIndex_NoteCreated(run->ix, po_Json_Meta(made, "uid"));
  run->own = made;
  run->target = made;
  run->r.targets_written++;
  return true;
}

/* The entry's arguments with our marker for the target it goes into (a new reference). */
/* The marker's namespace: the PropertyOverride's when not the target's, else none (as older
 * versions wrote it, so their markers are not rewritten). */
static const char *marker_ns(const Item *it, const char *target_ns) { return strcmp(it->ns, target_ns) != 0 ? it->ns : ""; }

static json_object *marked(const Item *it, const char *target_ns, const char *target_uid) {
  json_object *args = it->entry ? po_Json_Parse(it->entry->arguments, it->entry->arguments_len) : copy(it->entry_copy);
  json_object *marker = args ? po_Consul_Marker(marker_ns(it, target_ns), it->name, it->entry_generation, it->entry_priority,
                                                it->uid, target_uid)
                             : NULL;
  if (!marker || json_object_object_add(args, "PropertyOverride", marker) != 0) {
    json_object_put(marker);
    json_object_put(args);
    return NULL;
  }
  return args;
}

/* po_Consul_Plan's order of our entries: priority, then name. */
static int by_order(const void *a, const void *b) {
  const Item *x = *(const Item *const *)a, *y = *(const Item *const *)b;
  if (x->entry_priority != y->entry_priority) return x->entry_priority < y->entry_priority ? -1 : 1;
  int c = strcmp(x->name, y->name);
  /* one name from two namespaces: the marker's namespace ("" for the target's own) decides, as
   * po_Consul_Plan orders them */
  return c ? c : strcmp(x->other_ns ? x->ns : "", y->other_ns ? y->ns : "");
}

/* Whether one of our entries in the target is exactly what po_Consul_Plan would write for it:
 * {name, required (spec.required), arguments} with our marker {name, generation, uid, targetUID, and
 * priority when not 0} and the same arguments (by hash). */
static bool entry_current(const json_object *e, const po_ConsulEntry *live, const Item *it, const char *target_ns) {
  const char *mns = marker_ns(it, target_ns);
  json_object *args = po_Json_Get(e, "arguments"), *marker = po_Json_Get(args, "PropertyOverride"), *req = po_Json_Get(e, "required");
  json_object *gen = po_Json_Get(marker, "generation");
  return json_object_object_length(e) == 3 && req && json_object_is_type(req, json_type_boolean) &&
         json_object_get_boolean(req) == it->entry_required && strcmp(live->owner, it->name) == 0 && strcmp(live->uid, it->uid) == 0 &&
         json_object_object_length(marker) == 4 + (it->entry_priority != 0) + (*mns != 0) &&
         live->priority == it->entry_priority && strcmp(live->ns ? live->ns : "", mns) == 0 &&
         gen && json_object_is_type(gen, json_type_int) &&
         json_object_get_int64(gen) == it->entry_generation &&
         po_JsonHash_Equal(po_Json_HashExcept(args, "PropertyOverride"), it->entry_hash);
}

/* Whether the target already holds exactly our entries as po_Consul_Plan would place them (after
 * every other extension, sorted by priority, then owner), so there is nothing to plan or write: the usual case
 * when a target is reconciled for a status change of one of its PropertyOverrides. Costs a walk
 * of the list and a hash per entry, where a plan copies the whole target and builds every entry. */
static bool target_current(Run *run, size_t nwant) {
  if (!run->target || nwant == 0 || run->nlive != nwant) return false;
  const Item **sorted = po_Arena_Malloc(run->ar, nwant * sizeof *sorted);
  if (!sorted) return false; /* the plan decides */
  size_t k = 0;
  for (size_t i = 0; i < run->m; i++) if (has_entry(&run->items[i])) sorted[k++] = &run->items[i];
  qsort(sorted, nwant, sizeof *sorted, by_order);
  json_object *list = po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  k = 0;
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *e = json_object_array_get_idx(list, i);
    if (k < run->nlive && po_Json_Get(e, "arguments") == run->live[k].arguments) {
      if (!entry_current(e, &run->live[k], sorted[k], run->ns)) return false;
      k++;
    } else if (k > 0) {
      return false; /* another extension after ours: the plan moves ours to the end */
    }
  }
  return k == nwant;
}


/* The item's entry in the target when it is already exactly what marked() would build for it
 * (entry_current, bound to this target's uid): its arguments, marker included, are what to write,
 * taken by reference. A target that gains one PropertyOverride keeps all the others: without
 * this each reconcile parsed every entry's arguments again (50 per write at 10,000 on 200
 * targets). NULL: build it. */
static json_object *current_args(Run *run, const Item *it, const char *tuid) {
  json_object *list = po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  if (!list || !json_object_is_type(list, json_type_array)) return NULL;
  for (size_t l = 0; l < run->nlive; l++) {
    const po_ConsulEntry *live = &run->live[l];
    if (strcmp(live->owner, it->name) != 0 || strcmp(live->uid, it->uid) != 0) continue;
    json_object *marker = po_Json_Get(live->arguments, "PropertyOverride");
    const char *bound = po_Json_String(marker, "targetUID");
    if (!bound || strcmp(bound, tuid) != 0) return NULL;
    /* the entry holding these arguments: one of this very target (an annotated copy has none) */
    for (size_t i = 0; i < json_object_array_length(list); i++) {
      json_object *e = json_object_array_get_idx(list, i);
      if (po_Json_Get(e, "arguments") == live->arguments) return entry_current(e, live, it, run->ns) ? live->arguments : NULL;
    }
    return NULL;
  }
  return NULL;
}

/* Our entries as the plan wants them, bound to the target's uid: one list for the reconcile's
 * write and the mutating webhook's answer (po_Reconcile_Desired), so the two cannot differ. */
static bool wanted(Run *run, const char *tuid) {
  for (size_t i = 0; i < run->m; i++) {
    Item *it = &run->items[i];
    if (!has_entry(it)) continue;
    json_object *args = it->entry ? current_args(run, it, tuid) : NULL;
    args = args ? json_object_get(args) : marked(it, run->ns, tuid);
    if (!args) return oom(run, po_Arena_Printf(run->ar, "the entry of %s", it->name));
    run->want[run->nwant++] =
        (po_ConsulEntry){it->name, it->uid, it->entry_generation, args, it->entry_priority, it->entry_required,
                         marker_ns(it, run->ns)};
  }
  return true;
}

/* consul-k8s's Synced status exists for Consul targets only. */
static bool requires_sync(const Run *run) {
  return target_ops(run)->consul_sync && run->io->sync && run->io->sync->mode == kPo_SyncRequire;
}

static int64_t now_s(Run *run) {
  char now[32];
  run->io->now(run->io->ctx, now);
  return po_Sync_ParseTime(now);
}

/* A day: far beyond any --consul-sync-timeout, far below an overflow of int64 nanoseconds. */
enum { kPo_ReconcileRecheckMaxS = 86400 };

static void recheck_in(Run *run, int64_t s) {
  if (s > kPo_ReconcileRecheckMaxS) s = kPo_ReconcileRecheckMaxS; /* RequeueAfter counts nanoseconds */
  if (s > 0 && (run->r.recheck_in_s == 0 || s < run->r.recheck_in_s)) run->r.recheck_in_s = s;
}

/* Under require, the write record (sync.h) goes into the object written: kept when the spec is
 * the one last recorded (consul-k8s may see nothing new and write no status), else new. False
 * when the write is put off: the status it would record was written this very second, and
 * consul-k8s's next one could look the same. */
static bool record_write(Run *run, json_object *object) {
  if (!requires_sync(run) || !object) return true;
  uint64_t spec = po_Json_HashStable(po_Json_Get(object, "spec"));
  po_WriteRecord cur = po_Sync_ReadRecord(run->target);
  if (cur.present && cur.spec_hash == spec) return true;
  int64_t now = now_s(run);
  /* The second of the last status write, or the one either side of it: the two clocks are never
   * exactly together, and a skew of a fraction of a second puts consul-k8s's "this second" on
   * our last or next one (its answer to our write, in its same second, would look exactly like
   * the status recorded, and the write would never look synced). Further out: a status time far
   * ahead of our clock (consul-k8s's clock runs ahead) would otherwise put the write off for as
   * long as the skew. */
  int64_t last = po_Sync_LastStatusTime(run->target);
  if (last >= 0 && last >= now - 1 && last <= now + 1) {
    run->deferred = true;
    recheck_in(run, 1);
    return false;
  }
  po_WriteRecord r = {.present = true, .at = now, .spec_hash = spec, .status_hash = po_Sync_StatusHash(run->target)};
  if (!po_Sync_SetRecord(object, &r)) return oom(run, "recording the write");
  run->record = r;
  run->recorded = true;
  return true;
}

/* Whether one of the target's PropertyOverrides recorded in its status that the controller
 * created this very object (status.created: its namespace, name and uid) and could not bind the
 * created annotation: a restart before that write succeeded. The uid is the API server's for our
 * own create and the status is the controller's to write, so a copy, a restore or a look-alike
 * (another uid) is never bound by this. Looked for only in an object labelled as ours and not
 * annotated, until it is; read through the IO table, no memo touched. */
static bool created_recorded(Run *run) {
  const char *managed = po_Json_String(po_Json_Get(po_Json_Get(run->target, "metadata"), "labels"), "app.kubernetes.io/managed-by");
  const char *tuid = po_Json_Meta(run->target, "uid");
  if (!managed || strcmp(managed, "propertyoverride") != 0 || !*tuid) return false;
  bool yes = false;
  for (size_t i = 0; i < run->m && !yes; i++) {
    const Item *it = &run->items[i];
    void *ref = NULL;
    const json_object *po = run->io->get_override(run->io->ctx, it->ns, it->name, &ref);
    json_object *cr = po_Json_Get(po_Json_Get(po, "status"), "created");
    const char *u = po_Json_String(cr, "uid"), *cns = po_Json_String(cr, "namespace"), *cn = po_Json_String(cr, "name");
    yes = po && !strcmp(po_Json_Meta(po, "uid"), it->uid) && u && !strcmp(u, tuid) && cns && !strcmp(cns, run->ns) && cn &&
          !strcmp(cn, run->name);
    release(run, po, ref);
  }
  return yes;
}

static bool write_target(Run *run) {
  size_t nwant = 0;
  for (size_t i = 0; i < run->m; i++) nwant += has_entry(&run->items[i]);
  run->target_ok = true;
  if (!run->target && nwant > 0 && run->io->names &&
      po_TargetNames_Elsewhere(run->io->names, run->kind, run->name, run->ns, run->elsewhere, sizeof run->elsewhere)) {
    /* Not created: consul-k8s would sync both into one Consul config entry (refusing ours, or
     * overwriting theirs). Looked at again now and then: that one may go away. */
    run->target_ok = false;
    recheck_in(run, kPo_ReconcileElsewhereRecheckS);
    return true;
  }
  if (!run->target && nwant > 0 && !create_target(run)) return true; /* the statuses say why */
  /* Created by this process and not annotated yet (the write after the create failed): the
   * annotation goes into this reconcile's write, on our own copy (the cached one is shared). */
  bool annotate = run->target && po_Owned_CreatedBy(run->target) == kPo_OwnedCreated_No &&
                  (po_TargetIndex_WasCreated(run->ix, po_Json_Meta(run->target, "uid"), false) || created_recorded(run));
  if (annotate && !run->own) {
    if (!(run->own = copy(run->target))) return oom(run, "annotating the target");
    run->target = run->own;
  }
  if (annotate) po_Owned_MarkCreated(run->own);
  const char *tuid = po_Json_Meta(run->target, "uid");
  if (run->target && !*tuid) {
    /* Without a uid nothing can be bound to it: writing would add an unbound entry each time. */
    run->target_ok = false;
    snprintf(run->target_err, sizeof run->target_err, "the object has no metadata.uid");
    fail(run, kPo_WriteFailed, po_Arena_Printf(run->ar, "reading %s", run->where), run->target_err);
    return true;
  }
  if (!annotate && target_current(run, nwant)) return true;
  if (!wanted(run, tuid)) return false;
  po_ConsulPlan p = po_Consul_Plan(run->target, run->kind, run->ns, run->name, run->owners, run->nowners, run->want,
                                   run->nwant);
  if (p.out_of_memory) return oom(run, po_Arena_Printf(run->ar, "planning %s", run->where));
  if (annotate && !p.remove && p.object) p.changed = true; /* the annotation alone is a change */
  if (p.changed && !p.remove && !record_write(run, p.object)) {
    json_object_put(p.object);
    return !run->r.out_of_memory;
  }
  if (p.changed) {
    /* Type-checked: the target is the informer's shared tree, and json_object_get_string on a
     * non-string writes its serialisation into the object. */
    const char *rv = po_Json_Meta(run->target, "resourceVersion");
    /* Noted before the write: its echo can come through the watch before the answer does. */
    bool note = !p.remove && !p.create && p.object;
    if (note) po_TargetIndex_NoteTargetWrite(run->ix, run->key, p.object);
    po_WriteResult w = run->io->write_target(run->io->ctx, run->kind, run->ns, run->name, p.remove ? NULL : p.object,
                                             p.create, rv, NULL, run->target_err, sizeof run->target_err);
    if (w == kPo_WriteNotFound && p.remove) w = kPo_WriteOk;
    if (w != kPo_WriteOk) {
      if (note) po_TargetIndex_NoteTargetWrite(run->ix, run->key, NULL); /* nothing of ours to come back */
      run->target_ok = false;
      run->target_conflict = w == kPo_WriteConflict;
      /* not bound yet: the statuses record it (status.created), in case this process goes first */
      if (annotate) snprintf(run->unbound_uid, sizeof run->unbound_uid, "%s", po_Json_Meta(run->target, "uid"));
      fail(run, w, po_Arena_Printf(run->ar, "writing %s", run->where), run->target_err);
    } else {
      run->r.targets_written++;
      if (annotate) po_TargetIndex_WasCreated(run->ix, po_Json_Meta(run->target, "uid"), true);
      /* A generation held here and now gone: its own target's reconcile says so in its status. */
      for (size_t i = 0; i < run->m && run->io->enqueue; i++) {
        const Item *it = &run->items[i];
        if (it->held && it->is_live && !has_entry(it) && *it->home_key) run->io->enqueue(run->io->enqueue_ctx, it->home_key);
      }

    }
  }
  json_object_put(p.object);
  return true;
}

/* One mesh object's outcome (Istio's, Envoy Gateway's) into the run: a look-alike is reported, a
 * failed write fails the reconcile (retried; a 409 soon). */
static void owned_outcome(Run *run, bool foreign, bool failed, bool conflict, const char *err) {
  if (foreign) run->r.foreign_object = true;
  if (!failed) return;
  run->target_ok = false;
  run->target_conflict |= conflict;
  fail(run, conflict ? kPo_WriteConflict : kPo_WriteFailed, po_Arena_Printf(run->ar, "writing %s", run->where), err);
}

/* A record the write phase found not held by its object (po_IstioItem.verify): ignored, and its
 * compiled form takes no part in the overlaps (nothing of it is live). */
static void owned_mismatch(Run *run, Item *it, const char *kind, const char *ns, const char *name, int64_t live) {
  snprintf(it->mismatch, sizeof it->mismatch,
           "status.lastValid (generation %lld) does not match what this controller wrote to %s %s/%s (%s): it is ignored",
           (long long)it->entry_generation, kind, ns, name,
           live ? or_oom(po_Arena_Printf(run->ar, "it holds generation %lld of this PropertyOverride%s", (long long)live,
                                         live == it->entry_generation ? " with other patches" : ""))
                : "it holds nothing this controller wrote for this PropertyOverride, or does not exist");
  drop_entry(it);
  it->entry_generation = 0;
}

/* Whether the reconcile of the target a PropertyOverride points at now looks at where its mesh
 * object of this target is, and removes it after its own write succeeded (sweep): every Istio and
 * Gateway target's does (the PropertyOverride's namespace, Istio's root namespace), and a Consul
 * target's of the PropertyOverride's own namespace. */
static bool swept_there(const Item *it) {
  po_Mesh mesh = po_TargetKind_Mesh(it->ce->c.target_kind);
  const char *tns = it->ce->c.target_ns;
  return mesh == kPo_Mesh_Istio || mesh == kPo_Mesh_EnvoyGateway ||
         (mesh == kPo_Mesh_Consul && (!tns || !*tns || !strcmp(tns, it->ns)));
}

/* The Istio target: each PropertyOverride's EnvoyFilter (istio_write.h) from the generation the
 * plan chose; the outcome per item is what its status says. */
static bool write_istio(Run *run) {
  if (!(run->istio = po_Arena_Malloc(run->ar, (run->m ? run->m : 1) * sizeof *run->istio))) return oom(run, "the EnvoyFilters");
  for (size_t i = 0; i < run->m; i++) {
    Item *it = &run->items[i];
    /* valid where it points now: that target's reconcile owns its EnvoyFilter when it is the
     * same one (Service to Service: one name, one namespace), and removes ours here only after
     * its own write succeeded (sweep) when it looks here (swept_there). So the patches stay live
     * here until they are live there. Else ours here goes now. */
    bool valid_elsewhere = it->held && it->ce->c.accepted && swept_there(it);
    run->istio[i] = (po_IstioItem){.name = it->name, .uid = it->uid, .program = it->entry ? &it->entry->c : NULL,
                                   /* invalid, nothing valid recorded for here: left as it is */
                                   .keep = !it->deleting && !it->refused && !it->entry && !it->ce->c.accepted,
                                   .skip = valid_elsewhere, .verify = it->unverified && it->entry};
  }
  int writes = 0;
  const po_TargetOptions *opts = po_TargetIndex_Options(run->ix);
  bool ok = po_Istio_Write(run->io, run->ix, run->kind, run->ns, run->read, opts, run->istio, run->m, run->ar, &writes);
  run->r.targets_written += writes;
  if (!ok) return oom(run, po_Arena_Printf(run->ar, "the EnvoyFilters of %s", run->where));
  run->target_ok = true;
  for (size_t i = 0; i < run->m; i++) {
    const po_IstioItem *x = &run->istio[i];
    owned_outcome(run, x->outcome == kPo_IstioOutcome_Foreign, x->outcome == kPo_IstioOutcome_Failed, x->conflict, x->err);
    if (x->mismatch) owned_mismatch(run, &run->items[i], "EnvoyFilter", x->filter_ns, x->filter_name, x->live_generation);
  }
  return true;
}

/* The Envoy Gateway target: each PropertyOverride's EnvoyPatchPolicy (eg_write.h), as for Istio. */
static bool write_eg(Run *run) {
  if (!(run->eg = po_Arena_Malloc(run->ar, (run->m ? run->m : 1) * sizeof *run->eg))) return oom(run, "the EnvoyPatchPolicies");
  for (size_t i = 0; i < run->m; i++) {
    Item *it = &run->items[i];
    /* valid where it points now: another Gateway's reconcile rewrites the same policy (one name
     * per PropertyOverride, in its namespace); an Istio or Consul target's removes it after its
     * own write succeeded (swept_there). Else ours here goes now. */
    bool valid_elsewhere = it->held && it->ce->c.accepted && swept_there(it);
    run->eg[i] = (po_EGItem){.name = it->name, .uid = it->uid, .program = it->entry ? &it->entry->c : NULL,
                             .keep = !it->deleting && !it->refused && !it->entry && !it->ce->c.accepted,
                             .skip = valid_elsewhere, .verify = it->unverified && it->entry};
  }
  int writes = 0;
  bool ok = po_EG_Write(run->io, run->ix, run->ns, run->name, run->read, run->eg, run->m, run->ar, &writes);
  run->r.targets_written += writes;
  if (!ok) return oom(run, po_Arena_Printf(run->ar, "the EnvoyPatchPolicies of %s", run->where));
  run->target_ok = true;
  for (size_t i = 0; i < run->m; i++) {
    const po_EGItem *x = &run->eg[i];
    owned_outcome(run, x->outcome == kPo_EGOutcome_Foreign, x->outcome == kPo_EGOutcome_Failed, x->conflict, x->err);
    if (x->mismatch) owned_mismatch(run, &run->items[i], "EnvoyPatchPolicy", x->policy_ns, x->policy_name, x->live_generation);
  }
  return true;
}

/* EnvoyFilters and EnvoyPatchPolicies of this target's PropertyOverrides left where they pointed
 * before (another mesh, or the other Istio place): po_Istio_Sweep, po_EG_Sweep. A failure is retried before
 * any status is written (one that said Programmed could hide the leftover). */
static bool sweep(Run *run) {
  for (size_t i = 0; i < run->m && run->r.ok; i++) {
    const Item *it = &run->items[i];
    /* held here: this target's write decides; invalid with its last valid generation live
     * elsewhere: kept there */
    if (it->held || (*it->held_key && !it->ce->c.accepted)) continue;
    bool mine = run->istio && run->istio[i].outcome != kPo_IstioOutcome_Disabled;
    const char *at = mine ? run->istio[i].filter_ns : NULL, *at_name = mine ? run->istio[i].filter_name : NULL;
    int writes = 0;
    char err[512];
    if (!po_Istio_Sweep(run->io, run->ix, it->ns, it->name, it->uid, at, at_name, run->ar, &writes, err, sizeof err)) {
      run->target_conflict = true; /* no status this time: the retry writes it */
      fail(run, kPo_WriteFailed, po_Arena_Printf(run->ar, "removing the old EnvoyFilter of %s", it->name), err);
    } else if (!run->eg && !po_EG_Sweep(run->io, run->ix, it->ns, it->name, it->uid, run->ar, &writes, err, sizeof err)) {
      /* a Gateway target's own write owns the one EnvoyPatchPolicy name */
      run->target_conflict = true;
      fail(run, kPo_WriteFailed, po_Arena_Printf(run->ar, "removing the old EnvoyPatchPolicy of %s", it->name), err);
    }
    run->r.targets_written += writes;
  }
  return true;
}

static const po_TargetOps kTargetOps[] = {
    [kPo_Mesh_Consul] = {"Consul", write_target, true, true},
    [kPo_Mesh_Istio] = {"Istio", write_istio, false, false},
    [kPo_Mesh_EnvoyGateway] = {"Envoy Gateway", write_eg, false, false},
};
static const po_TargetOps *target_ops(const Run *run) {
  po_Mesh m = po_TargetKind_Mesh(run->kind);
  /* parse_key admits only the kinds of the meshes in the table */
  return (unsigned)m < sizeof kTargetOps / sizeof kTargetOps[0] && kTargetOps[m].write ? &kTargetOps[m] : &kTargetOps[0];
}

static bool write(Run *run) { return write_finalizers(run) && target_ops(run)->write(run) && sweep(run); }

/* ---- phase 4: status ---- */

/* Its entry is gone from the target once the write succeeded; where its last valid generation
 * was held (another target) it must be gone too before the finalizer goes. */
static bool release_finalizer(Run *run, Item *it) {
  /* Istio: this one's own EnvoyFilter is gone (another's failed write does not hold it) */
  bool gone = run->istio ? run->istio[it - run->items].outcome != kPo_IstioOutcome_Failed
              : run->eg  ? run->eg[it - run->items].outcome != kPo_EGOutcome_Failed
                         : run->target_ok;
  if (!gone || !it->has_finalizer) return true;
  if (*it->held_key && held_elsewhere(run, it)) {
    fail(run, kPo_WriteConflict, po_Arena_Printf(run->ar, "deleting %s", it->name),
         po_Arena_Printf(run->ar, "waiting for %s to drop its entry", it->held_key));
    return true;
  }
  if (!need_obj(run, it)) return false;
  json_object *patch = finalizer_patch(it->obj, false);
  if (!patch) return oom(run, po_Arena_Printf(run->ar, "the finalizer of %s", it->name));
  char err[256];
  po_WriteResult w = run->io->patch_override(run->io->ctx, it->ns, it->name, false, patch, err, sizeof err);
  json_object_put(patch);
  if (w != kPo_WriteOk && w != kPo_WriteNotFound) fail(run, w, "removing the finalizer", err);
  return true;
}

/* A mesh this controller does not program (flag --<flag>: on, or auto when the API server serves
 * the kind `crd`). Always true (said). */
static bool mesh_not_enabled(Run *run, const char *mesh, const char *flag, const char *crd, po_Condition *p) {
  p->reason = "MeshNotEnabled";
  snprintf(p->message, sizeof p->message,
           "%s is not enabled in this controller (--%s=on, or --%s=auto with the %s CRD installed); nothing is "
           "written to %s", mesh, flag, flag, crd, run->where);
  return true;
}

/* The target object (a Service, a Gateway: `kind`) is gone, and with it our object `obj`. */
static bool target_gone(Run *run, const char *obj, const char *kind, po_Condition *p) {
  p->reason = "TargetNotFound";
  snprintf(p->message, sizeof p->message, "%s does not exist: %s is deleted (written again when the %s is created)",
           run->where, obj, kind);
  return true;
}

/* What every one-object-per-PropertyOverride mesh says alike about its object `obj` ("EnvoyFilter
 * ns/name"): a look-alike (why), a failed write (err), an invalid generation without a record
 * (kept), an invalid one. True when said; else p is untouched. */
static bool programmed_owned(Run *run, const Item *it, int64_t live_gen, const char *obj, const char *why,
                             const char *err, bool kept, po_Condition *p) {
  if (why || err) {
    p->reason = "TargetError";
    if (why) snprintf(p->message, sizeof p->message, "%s: %s", obj, why);
    else snprintf(p->message, sizeof p->message, "%s (retrying)", err);
  } else if (kept && it->mismatch[0]) {
    p->reason = "Invalid";
    snprintf(p->message, sizeof p->message, "generation %lld is invalid; %s is left as it is%s",
             (long long)it->ce->c.generation, obj,
             live_gen ? or_oom(po_Arena_Printf(run->ar, " (generation %lld is live in it)", (long long)live_gen)) : "");
  } else if (kept) {
    p->reason = "Invalid";
    snprintf(p->message, sizeof p->message,
             "generation %lld is invalid; %s is left as it is (no valid generation of this PropertyOverride for "
             "%s is recorded in its status)", (long long)it->ce->c.generation, obj, run->where);
  } else if (!it->ce->c.accepted) {
    p->reason = "Invalid";
    snprintf(p->message, sizeof p->message, "generation %lld is invalid; %s", (long long)it->ce->c.generation,
             live_gen ? po_Arena_Printf(run->ar, "generation %lld is live in %s", (long long)live_gen, obj)
                      : po_Arena_Printf(run->ar, "nothing is live in %s", obj));
  } else {
    return false;
  }
  return true;
}

/* Programmed for an Istio target: written is programmed (Istio reports no status per
 * EnvoyFilter). True when returned false; else p says why not. */
static bool programmed_istio(Run *run, size_t i, int64_t live_gen, po_Condition *p) {
  const Item *it = &run->items[i];
  const po_IstioItem *x = &run->istio[i];
  const char *ef = po_Arena_Printf(run->ar, "EnvoyFilter %s/%s", x->filter_ns, x->filter_name);
  switch (x->outcome) {
    case kPo_IstioOutcome_Disabled:
      p->reason = "MeshNotEnabled";
      snprintf(p->message, sizeof p->message,
               "Istio is not enabled in this controller: --istio=off, or --istio=auto and the API server does not "
               "serve EnvoyFilters (checked again every --istio-recheck-interval, 60 s by default: once the "
               "EnvoyFilter CRD is installed this is programmed, no restart needed); nothing is written to %s",
               run->where);
      return true;
    case kPo_IstioOutcome_NoService: return target_gone(run, ef, "Service", p);
    case kPo_IstioOutcome_NoSelector:
      p->reason = "TargetError";
      snprintf(p->message, sizeof p->message, "%s: %s; %s is deleted", run->where, x->why, ef);
      return true;
    default: break;
  }
  return programmed_owned(run, it, live_gen, ef, x->outcome == kPo_IstioOutcome_Foreign ? x->why : NULL,
                          x->outcome == kPo_IstioOutcome_Failed ? x->err : NULL, x->outcome == kPo_IstioOutcome_Kept, p);
}

/* What an Envoy Gateway policy left out ("" when nothing), in words no tenant's route churn
 * changes: no route names, no counts (a tenant creating and deleting a route that sorts first
 * rewrote the platform's status twice a cycle, 2,505 status writes in 60 s). The bound, only
 * when it is the policy's own (the Gateway's share moves with the other policies' routes), and
 * where to see what is in: `propertyoverride render` of the Gateway, its HTTPRoutes and this
 * PropertyOverride writes the policy. */
static const char *eg_left_out(Run *run, const po_EGItem *x) {
  if (!x->built) return "";
  const po_EGFit *f = &x->fit;
  const char *cut = "", *other = "";
  if (f->cut_routes) {
    cut = x->gateway_bound
              ? po_Arena_Printf(run->ar, "; HTTPRoutes past its share of the %d bytes all the policies of %s may "
                                         "hold together are left out",
                                (int)kPo_EGMaxGatewayBytes, run->where)
              : po_Arena_Printf(run->ar, "; HTTPRoutes past the bound of %zu bytes on the policy's jsonPatches are "
                                         "left out", f->max_bytes);
    cut = po_Arena_Printf(run->ar, "%s (room goes to namespace '%s' first, then to those spec.routeNamespaces names "
                                   "in its order, then to those \"*\" admits, each by namespace and name)", cut, run->ns);
  }
  if (f->unfollowed || f->uncertain || f->mixed) {
    other = "; HTTPRoutes attached from namespaces spec.routeNamespaces does not name, attached only through a "
            "listener admitting by a namespace selector (Namespace labels are not read), or of other namespaces "
            "with a rule sending to a patched Service and another backend are not followed";
  }
  if (!*cut && !*other) return "";
  const char *s = cut && other ? po_Arena_Printf(run->ar, "%s%s; `propertyoverride render` of the Gateway, its "
                                                          "HTTPRoutes and this PropertyOverride shows what the policy "
                                                          "holds", cut, other) : NULL;
  return s ? s : "";
}

/* Programmed for an Envoy Gateway target: Envoy Gateway's own conditions on the policy for its
 * current generation (po_EG_ReadStatus). True when returned false; else p says why not. */
static bool programmed_eg(Run *run, size_t i, int64_t live_gen, po_Condition *p) {
  const Item *it = &run->items[i];
  const po_EGItem *x = &run->eg[i];
  const char *epp = po_Arena_Printf(run->ar, "EnvoyPatchPolicy %s/%s", x->policy_ns, x->policy_name);
  switch (x->outcome) {
    case kPo_EGOutcome_Disabled: return mesh_not_enabled(run, "Envoy Gateway", "envoy-gateway", "EnvoyPatchPolicy", p);
    case kPo_EGOutcome_NoGateway: return target_gone(run, epp, "Gateway", p);
    case kPo_EGOutcome_Refused:
      p->reason = "TargetError";
      snprintf(p->message, sizeof p->message, "%s: %s; %s is deleted", run->where, x->why, epp);
      return true;
    case kPo_EGOutcome_NoRoom:
      p->reason = "TargetFull";
      snprintf(p->message, sizeof p->message, "%s: %s; %s is left as it is (%s)", run->where, x->why, epp,
               live_gen ? po_Arena_Printf(run->ar, "generation %lld stays programmed", (long long)live_gen)
                        : "nothing of this PropertyOverride is programmed");
      return true;
    default: break;
  }
  if (programmed_owned(run, it, live_gen, epp, x->outcome == kPo_EGOutcome_Foreign ? x->why : NULL,
                       x->outcome == kPo_EGOutcome_Failed ? x->err : NULL, x->outcome == kPo_EGOutcome_Kept, p)) {
    return true;
  }
  if (x->written || x->eg.state == kPo_EGState_Pending) {
    p->reason = "Pending";
    snprintf(p->message, sizeof p->message,
             "generation %lld is written to %s for %s; waiting for Envoy Gateway to program it (its status, for the "
             "policy's current generation)%s", (long long)live_gen, epp, run->where, eg_left_out(run, x));
    return true;
  }
  switch (x->eg.state) {
    case kPo_EGState_Disabled:
      p->reason = "Disabled";
      snprintf(p->message, sizeof p->message,
               "Envoy Gateway did not accept %s (reason Disabled): EnvoyPatchPolicies are disabled in its configuration; "
               "set extensionApis.enableEnvoyPatchPolicy: true in the EnvoyGateway config (the envoy-gateway-config "
               "ConfigMap) and restart Envoy Gateway", epp);
      return true;
    case kPo_EGState_NotAccepted:
    case kPo_EGState_NotProgrammed:
      p->reason = *x->eg.reason ? x->eg.reason : "NotProgrammed";
      snprintf(p->message, sizeof p->message, "Envoy Gateway did not %s %s (reason %s): %s",
               x->eg.state == kPo_EGState_NotAccepted ? "accept" : "program", epp, p->reason,
               *x->eg.message ? x->eg.message : "no message");
      return true;
    default: break;
  }
  return false;
}

static void programmed(Run *run, size_t i, int64_t live_gen, const po_OverlapIndex *peers, po_Condition *p) {
  const Item *it = &run->items[i];
  p->type = "Programmed";
  p->status = "False";
  if (it->refused) {
    p->reason = "TargetNotAllowed";
    const char *tns = it->ce->c.target_ns;
    if (tns && *tns && strcmp(tns, run->ns) != 0) { /* the status' target is this namespace's: say both */
      snprintf(p->message, sizeof p->message, "nothing is written into namespace '%s', nor to %s", tns, run->where);
    } else {
      snprintf(p->message, sizeof p->message, "nothing is written to %s", run->where);
    }
  } else if (it->over_limit) {
    p->reason = "TargetFull";
    snprintf(p->message, sizeof p->message,
             "%s has no room for this entry: at most %d builtin/property-override entries and %d patches per object; "
             "entries already live keep their place, newcomers are placed by name, and this one comes after the limit",
             run->where, (int)kPo_MaxExtensionsPerConsulObject, (int)kPo_MaxPatchesPerConsulObject);
  } else if (run->istio && programmed_istio(run, i, live_gen, p)) {
    /* said */
  } else if (run->eg && programmed_eg(run, i, live_gen, p)) {
    /* said */
  } else if (*run->elsewhere && it->ce->c.accepted) {
    p->reason = "TargetInOtherNamespace";
    snprintf(p->message, sizeof p->message,
             "%s %s exists in namespace '%s', not in '%s': consul-k8s syncs the %s of every Kubernetes namespace "
             "into one Consul config entry per name (unless Consul namespaces with mirroring are enabled: "
             "--consul-namespace-mirroring), so a second one here would be refused by consul-k8s or overwrite the "
             "one of '%s'; nothing is written. %s '%s'",
             po_TargetKind_Name(run->kind), run->name, run->elsewhere, run->ns, po_TargetKind_Name(run->kind),
             run->elsewhere,
             /* one of another namespace (a platform team's) points there by targetRef.namespace */
             it->other_ns ? "Set spec.targetRef.namespace to" : "Create this PropertyOverride in namespace", run->elsewhere);
  } else if (!run->istio && !run->eg && !run->target_ok && !*run->elsewhere) {
    p->reason = "TargetError";
    snprintf(p->message, sizeof p->message, "%s (retrying); %s", run->target_err,
             live_gen ? po_Arena_Printf(run->ar, "generation %lld is live", (long long)live_gen) : "nothing is live");
  } else if (!it->ce->c.accepted) {
    p->reason = "Invalid";
    snprintf(p->message, sizeof p->message, "generation %lld is invalid; %s", (long long)it->ce->c.generation,
             live_gen ? po_Arena_Printf(run->ar, "generation %lld is still live in %s", (long long)live_gen, run->where)
                      : po_Arena_Printf(run->ar, "nothing is live in %s", run->where));
  } else {
    char ov[1024];
    bool overlapping = po_Overlap_Of(peers, i, ov, sizeof ov);
    p->status = "True";
    p->reason = overlapping ? "Overlapping" : "Programmed";
    if (run->istio) {
      const po_IstioItem *x = &run->istio[i];
      snprintf(p->message, sizeof p->message,
               "generation %lld is written to EnvoyFilter %s/%s for %s (Istio reports no status per EnvoyFilter: "
               "written is programmed)%s", (long long)live_gen, x->filter_ns, x->filter_name, run->where,
               ov[0] ? "; " : "");
    } else if (run->eg) {
      const po_EGItem *x = &run->eg[i];
      /* what fits is programmed; what the bound left out is said by the reason and message */
      if (x->built && x->fit.cut_routes) p->reason = "PolicyFull";
      snprintf(p->message, sizeof p->message,
               "generation %lld is programmed by Envoy Gateway from EnvoyPatchPolicy %s/%s for %s%s%s",
               (long long)live_gen, x->policy_ns, x->policy_name, run->where, eg_left_out(run, x), ov[0] ? "; " : "");
    } else {
      snprintf(p->message, sizeof p->message, "generation %lld is live in %s%s%s", (long long)live_gen, run->where,
               requires_sync(run) ? ", synced into Consul by consul-k8s" : "", ov[0] ? "; " : "");
    }
    size_t len = strlen(p->message);
    snprintf(p->message + len, sizeof p->message - len, "%s", ov);
  }
  if (it->mismatch[0]) { /* what is live was said: now why the record is not */
    size_t len = strlen(p->message);
    snprintf(p->message + len, sizeof p->message - len, "; %s", it->mismatch);
  }
}

/* Whether the old status already says this very generation is programmed: consul-k8s synced it
 * after an earlier write, and a write for another PropertyOverride's entry since (the record
 * covers the whole target) leaves this one as Consul has it; a refused update leaves Consul's
 * copy as it was too. */
static bool already_live(const json_object *obj, int64_t live_gen) {
  json_object *st = po_Json_Get(obj, "status"), *g = po_Json_Get(st, "programmedGeneration");
  json_object *list = po_Json_Get(st, "conditions");
  if (!g || !json_object_is_type(g, json_type_int) || json_object_get_int64(g) != live_gen) return false;
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *c = json_object_array_get_idx(list, i);
    if (!strcmp(po_Json_StringOr(c, "type", ""), "Programmed")) return !strcmp(po_Json_StringOr(c, "status", ""), "True");
  }
  return false;
}

/* Programmed under --consul-sync-status=require: a written entry is programmed once consul-k8s
 * synced it (sync.h); until then Pending, or SyncFailed with consul-k8s's own words. *event gets
 * whether the timeout's one Warning Event is due. False when the reconcile must end. */
static bool apply_sync(Run *run, Item *it, int64_t live_gen, po_Condition *p, bool *event) {
  *event = false;
  if (!requires_sync(run) || strcmp(p->status, "True") != 0 || run->sync.state == kPo_SyncLive) return true;
  if (!need_obj(run, it)) return false;
  if (already_live(it->obj, live_gen)) return true;
  bool failed = run->sync.state == kPo_SyncFailed;
  p->status = "False";
  p->reason = failed ? "SyncFailed" : "Pending";
  snprintf(p->message, sizeof p->message, "%s; generation %lld is written, not yet live", run->sync.message, (long long)live_gen);
  if (failed) return true;
  recheck_in(run, run->sync.recheck_in_s);
  if (run->sync.timed_out) {
    json_object *list = po_Json_Get(po_Json_Get(it->obj, "status"), "conditions");
    bool said = false;
    for (size_t k = 0; list && json_object_is_type(list, json_type_array) && k < json_object_array_length(list); k++) {
      json_object *c = json_object_array_get_idx(list, k);
      said |= !strcmp(po_Json_StringOr(c, "type", ""), "Programmed") && !strcmp(po_Json_StringOr(c, "reason", ""), "Pending") &&
              !strncmp(po_Json_StringOr(c, "message", ""), PO_SYNC_TIMEOUT_PREFIX, strlen(PO_SYNC_TIMEOUT_PREFIX));
    }
    *event = !said;
  }
  return true;
}

/* The Programmed condition's message in a status ("" when none). */
static const char *old_programmed_message(json_object *status) {
  json_object *list = po_Json_Get(status, "conditions");
  for (size_t k = 0; list && json_object_is_type(list, json_type_array) && k < json_object_array_length(list); k++) {
    json_object *c = json_object_array_get_idx(list, k);
    if (!strcmp(po_Json_StringOr(c, "type", ""), "Programmed")) return po_Json_StringOr(c, "message", "");
  }
  return "";
}

/* The Events of a status change, raised once the status saying it is stored: a failed write is
 * retried, and the retry finds the same old status, so Events raised before the write would be
 * raised again on every retry. (A crash between the write and the Events loses them: Events are
 * best effort, the status is the record.) */
static void say(Run *run, const Item *it, json_object *old_status, const po_OverrideStatus *s, bool timeout_event) {
  const po_ReconcileIO *io = run->io;
  if (!io->event) return;
  const po_Condition *cs[2] = {&s->accepted, &s->programmed};
  for (int k = 0; k < 2; k++) {
    if (!po_Status_ReasonChanged(old_status, cs[k])) continue;
    /* Pending is news, not a fault: waiting for consul-k8s follows every write. */
    bool warn = strcmp(cs[k]->status, "True") != 0 && strcmp(cs[k]->reason, "Pending") != 0;
    io->event(io->ctx, (json_object *)it->obj, warn ? "Warning" : "Normal", cs[k]->reason, cs[k]->message);
  }
  if (it->mismatch[0] && !strstr(old_programmed_message(old_status), it->mismatch)) {
    io->event(io->ctx, (json_object *)it->obj, "Warning", "LastValidMismatch", it->mismatch);
  }
  if (timeout_event) {
    io->event(io->ctx, (json_object *)it->obj, "Warning", "SyncTimeout", s->programmed.message);
    run->r.sync_timeouts++;
  }
}

static bool write_status(Run *run, size_t i, const po_OverlapIndex *peers, const char *now) {
  Item *it = &run->items[i];
  const po_CompiledOverride *c = &it->ce->c;
  po_OverrideStatus s = {.ns = run->ns, .generation = c->generation, .target_kind = run->kind, .target_name = run->name};
  int64_t live_gen = run->target_ok ? it->entry_generation : 0;
  if (run->istio) {
    const po_IstioItem *x = &run->istio[i];
    /* a record that does not match: what is live is the generation the EnvoyFilter says */
    live_gen = x->outcome == kPo_IstioOutcome_Ok ? it->entry_generation : x->mismatch ? x->live_generation : 0;
    s.target_api_version = PO_ISTIO_API_VERSION;
    s.target_kind_name = "EnvoyFilter";
    s.target_ns = x->filter_ns;
    s.target_name = x->filter_name;
    /* created and not bound: recorded, so that a restart before the binding write succeeds
     * still knows it for ours (istio_write.h) */
    if (*x->unbound_uid) s.created_ns = x->filter_ns, s.created_name = x->filter_name, s.created_uid = x->unbound_uid;
  }
  if (*run->unbound_uid && has_entry(it)) s.created_ns = run->ns, s.created_name = run->name, s.created_uid = run->unbound_uid;
  if (run->eg) {
    const po_EGItem *x = &run->eg[i];
    live_gen = x->outcome == kPo_EGOutcome_Ok                            ? it->entry_generation
               : x->mismatch || x->outcome == kPo_EGOutcome_NoRoom ? x->live_generation
                                                                    : 0;
    s.target_api_version = PO_EG_API_VERSION;
    s.target_kind_name = "EnvoyPatchPolicy";
    s.target_ns = x->policy_ns;
    s.target_name = x->policy_name;
    if (*x->unbound_uid) s.created_ns = x->policy_ns, s.created_name = x->policy_name, s.created_uid = x->unbound_uid;
  }
  for (size_t l = 0; !run->target_ok && l < run->nlive; l++) {
    if (!strcmp(run->live[l].owner, it->name) && !strcmp(run->live[l].uid, it->uid)) live_gen = run->live[l].generation;
  }
  s.live_generation = live_gen;
  /* Moved here (its last valid record points at another target): the record moves only once
   * this target holds its patches. Until then the target it came from keeps the generation
   * last written there (move_waits), and a record naming this target would let it drop that. */
  bool record = it->record && (!*it->held_key || live_gen > 0);
  if (record) s.last_valid_generation = c->generation;
  /* the proof a later invalid generation's record is checked against (record_bound): this process
   * saw this generation admitted and wrote it */
  if (record && live_gen > 0) po_TargetIndex_NoteLastValid(run->ix, it->ns, it->name, it->uid, c->generation, it->ce->hash);
  /* A PropertyOverride moved here (an invalid generation, or a valid one not written here yet)
   * while its last valid one stays live in the target it came from: programmedGeneration says
   * that one (it is live), as that target's reconcile last wrote it; left out, the stored one
   * never matched and every reconcile here sent the same status again
   * (test_adv_invalid_move_status_settles). */
  if (live_gen <= 0 && *it->held_key) s.live_generation = held_generation(run, it);
  s.accepted = (po_Condition){.type = "Accepted", .status = c->accepted && !it->refused ? "True" : "False",
                              .reason = it->refused ? "TargetNotAllowed" : c->accepted ? "Accepted" : "Invalid"};
  if (it->refused) {
    snprintf(s.accepted.message, sizeof s.accepted.message, "%s", it->refusal);
  } else if (c->accepted) {
    snprintf(s.accepted.message, sizeof s.accepted.message, "%zu patch%s valid for %s and Envoy", c->args->patch_count,
             c->args->patch_count == 1 ? " is" : "es are", target_ops(run)->mesh);
  } else {
    snprintf(s.accepted.message, sizeof s.accepted.message, "%s", it->ce->errors);
  }
  programmed(run, i, live_gen, peers, &s.programmed);
  bool timeout_event;
  if (!apply_sync(run, it, live_gen, &s.programmed, &timeout_event)) return false;
  /* Found current at this very version by an earlier reconcile: nothing to read or compare. */
  uint64_t h = po_Status_Hash(&s, record ? it->ce->hash.lo ^ it->ce->hash.hi : 0);
  if (it->from_memo && it->memo.status_hash == h) return true;
  /* Written by us over this very version: the cache has not caught up yet. */
  if (it->from_memo && it->memo.written_hash == h) return true;
  if (!need_obj(run, it)) return false;
  if (record) s.last_valid_spec = po_Json_Get(it->obj, "spec");
  json_object *old_status = po_Json_Get(it->obj, "status");
  /* The cached status at this version is one our own later write replaced (the watch lags): it
   * says nothing of what the server has, so the wanted one is written. */
  bool replaced = it->from_memo && it->memo.written_hash != 0;
  if (!replaced && po_Status_Matches(old_status, &s)) { /* current: no reason changed, nothing to write */
    po_TargetIndex_MemoStatus(run->ix, it->ns, it->name, it->rv, h);
    return true;
  }
  json_object *st = po_Status_Build(old_status, &s, now);
  if (!st) return oom(run, po_Arena_Printf(run->ar, "the status of %s", it->name));
  const po_ReconcileIO *io = run->io;
  if (!replaced && po_Status_Same(old_status, st)) {
    json_object_put(st);
    say(run, it, old_status, &s, timeout_event);
    return true;
  }
  json_object *patch = json_object_new_object(), *sent = st;
  /* A merge patch keeps what it leaves out: a programmedGeneration nothing is live at any more
   * (its entry removed, e.g. refused, and not held in another target either) is removed
   * explicitly, else the status claims a live generation that is gone. */
  if (s.live_generation <= 0 && po_Json_Get(old_status, "programmedGeneration") &&
      !(*it->held_key && held_elsewhere(run, it))) {
    sent = NULL;
    if (json_object_deep_copy(st, &sent, NULL) != 0 || json_object_object_add(sent, "programmedGeneration", NULL) != 0) {
      json_object_put(sent);
      sent = NULL;
    }
  }
  if (!patch || !sent || json_object_object_add(patch, "status", sent) != 0) {
    json_object_put(patch);
    if (sent != st) json_object_put(sent);
    json_object_put(st);
    return oom(run, po_Arena_Printf(run->ar, "the status of %s", it->name));
  }
  char err[256];
  po_OverrideMemo m = own_version(it);
  po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 1, st, h, false);
  po_WriteResult w = io->patch_override(io->ctx, it->ns, it->name, true, patch, err, sizeof err);
  json_object_put(patch);
  if (sent != st) json_object_put(st); /* ours alone: the patch held its copy */
  if (w != kPo_WriteOk) po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 1, NULL, 0, true);
  if (w == kPo_WriteOk) {
    run->r.statuses_written++;
    po_TargetIndex_MemoWritten(run->ix, it->ns, it->name, it->rv, h);
    say(run, it, old_status, &s, timeout_event);
  }
  else if (w != kPo_WriteNotFound) fail(run, w, po_Arena_Printf(run->ar, "status of %s", it->name), err);
  return true;
}

static void status(Run *run) {
  /* A conflict is optimistic concurrency, not news: the retry follows at once and writes the
   * outcome. Said as TargetError, each one cost two status writes and two Events per
   * PropertyOverride of the target (there and back), 50 of them per target at 10,000. */
  if (run->target_conflict || run->deferred) return;
  if (requires_sync(run)) {
    if (!run->recorded) {
      run->record = po_Sync_ReadRecord(run->target);
      /* The annotation is on an object tenants may update: when this process wrote the spec the
       * target has now, its own memory of the record it wrote wins over an edited or removed one
       * (a forged record could otherwise say "synced" for a write Consul never got). */
      po_WriteRecord mine;
      if (run->target && po_TargetIndex_OwnRecord(run->ix, run->key, &mine) &&
          mine.spec_hash == po_Json_HashStable(po_Json_Get(run->target, "spec")) &&
          (!run->record.present || mine.at != run->record.at || mine.status_hash != run->record.status_hash ||
           mine.spec_hash != run->record.spec_hash)) {
        run->record = mine;
      }
    }
    po_Sync_Judge(run->io->sync, run->target, &run->record, now_s(run), run->where, &run->sync);
  }
  /* with those of the other kind whose entries reach the same proxies (cross.c) */
  po_CrossPeers cross;
  if (!po_CrossPeers_Load(run->io, run->ix, run->kind, run->m, run->ar, &cross)) {
    po_CrossPeers_Release(&cross);
    oom(run, "the PropertyOverrides of other targets");
    return;
  }
  po_OverlapPeer *peers = cross.peers;
  po_OverlapTier tier =
      po_TargetKind_MeshWide(run->kind) ? kPo_OverlapTierProxyDefaults : kPo_OverlapTierServiceDefaults;
  for (size_t i = 0; i < run->m; i++) {
    const Item *it = &run->items[i];
    /* What is in the target for it, not what its current spec says: an invalid generation keeps
     * its last valid one live (compiled from the record, at that generation's priority), and that
     * entry still conflicts with the others; one with no entry here (deleted, refused, over the
     * limit, moved to another target) reaches no proxy through this target. A live entry kept
     * without a record has no compiled form: it takes no part. */
    const po_CompiledEntry *e = it->entry;
    peers[i] = (po_OverlapPeer){.ns = it->ns, .name = it->name, .override = e && e->c.accepted ? e->c.override : NULL,
                                .tier = tier, .priority = e ? it->entry_priority : it->ce->c.priority,
                                .target = run->key, .where = run->where, .own = !it->held};
    /* Istio's order needs where its EnvoyFilter is and when it was created */
    if (target_ops(run) == &kTargetOps[kPo_Mesh_Istio] && peers[i].override &&
        !(peers[i].istio = po_OverlapIstio_Of(run->io, run->ix, run->kind, run->ns, it->name, run->ar))) {
      po_CrossPeers_Release(&cross);
      oom(run, "the EnvoyFilters of the overlaps");
      return;
    }
  }
  po_OverlapIndex *overlaps = po_OverlapIndex_New(peers, run->m + cross.n, run->ar);
  if (!overlaps) {
    oom(run, "the overlaps of the statuses");
  } else {
    char now[32];
    run->io->now(run->io->ctx, now);
    for (size_t i = 0; i < run->m; i++) {
      Item *it = &run->items[i];
      if (it->held) continue; /* its own target's reconcile writes its status and finalizer */
      bool go = it->deleting ? release_finalizer(run, it) : write_status(run, i, overlaps, now);
      if (!go) break;
    }
  }
  po_CrossPeers_Release(&cross);
}

/* ---- the reconcile ---- */

static void finish(Run *run) {
  for (size_t i = 0; i < run->m; i++) {
    Item *it = &run->items[i];
    release(run, it->obj, it->ref);
    po_CompiledEntry_Release(it->ce);
    drop_entry(it);
  }
  for (size_t i = 0; i < run->nwant; i++) json_object_put(run->want[i].arguments);
  release(run, run->read, run->read_ref);
  json_object_put(run->own);
  free(run->live);
  free(run->bound);
  free(run->owners);
  free(run->want);
  free(run->items);
  free(run->names);
  po_Arena_Free(run->ar);
}

static po_Result outcome(const po_ReconcileResult *r) {
  if (r->terminal) return po_Result_Terminal("%s", r->error);
  if (r->not_synced) return po_Result_RequeueAfter(kPo_ReconcileNotSyncedRetryNs); /* nothing was written */
  if (!r->ok) {
    po_Result e = po_Result_Error("%s%s", r->conflict ? "conflict: " : "", r->error);
    if (r->webhook_unreachable) e.max_backoff_ns = kPo_ReconcileWebhookRetryMaxS * INT64_C(1000000000);
    return e;
  }
  /* Waiting for consul-k8s: its status write requeues the target anyway; this is the timeout. */
  if (r->recheck_in_s > 0) return po_Result_RequeueAfter(r->recheck_in_s * INT64_C(1000000000));
  return po_Result_Success();
}

po_ReconcileResult po_Reconcile(const po_ReconcileIO *io, po_TargetIndex *ix, const char *key) {
  Run run = {.io = io, .ix = ix, .key = key, .r = {.ok = true}};
  if (!parse_key(key, &run.kind, run.ns, run.name)) {
    /* A key no event handler makes: retrying cannot help, so it is dropped and said. */
    snprintf(run.r.error, sizeof run.r.error,
             "malformed key '%.200s': want ServiceDefaults/<namespace>/<name>, ProxyDefaults/<namespace>/global, "
             "Service/<namespace>/<name>, Mesh/<namespace>/global or Gateway/<namespace>/<name>", key);
    run.r.ok = false;
    run.r.terminal = true;
    run.r.result = outcome(&run.r);
    return run.r;
  }
  if (io->synced && !io->synced(io->ctx)) {
    run.r.ok = false;
    run.r.not_synced = true;
    snprintf(run.r.error, sizeof run.r.error, "caches not synced yet: nothing read or written");
    run.r.result = outcome(&run.r);
    return run.r;
  }
  run.ar = po_Arena_New();
  if (!run.ar) {
    oom(&run, "starting the reconcile");
  } else {
    run.where = po_Arena_Printf(run.ar, "%s %s/%s", po_TargetKind_Name(run.kind), run.ns, run.name);
    if (!run.where) oom(&run, "starting the reconcile");
    else if (load(&run) && plan(&run) && write(&run)) status(&run);
  }
  finish(&run);
  run.r.result = outcome(&run.r);
  return run.r;
}

/* ---- the admission view: the same load and plan over an incoming object ---- */

po_DesiredResult po_Reconcile_Desired(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind,
                                      const struct json_object *incoming, json_object **extensions, char *err,
                                      size_t size) {
  *extensions = NULL;
  char key[600];
  const char *ns = po_Json_Meta(incoming, "namespace"), *name = po_Json_Meta(incoming, "name");
  po_Reconcile_TargetKey(kind, ns, name, key, sizeof key);
  Run run = {.io = io, .ix = ix, .key = key, .dry = true, .r = {.ok = true}};
  if (!parse_key(key, &run.kind, run.ns, run.name)) {
    snprintf(err, size, "the object has no usable namespace and name");
    return kPo_Desired_Error;
  }
  if (!*po_Json_Meta(incoming, "uid")) {
    snprintf(err, size, "the object has no metadata.uid: nothing can be bound to it yet");
    return kPo_Desired_Keep;
  }
  if (io->synced && !io->synced(io->ctx)) {
    snprintf(err, size, "caches not synced yet");
    return kPo_Desired_NotSynced;
  }
  po_DesiredResult res = kPo_Desired_Keep;
  run.read = incoming; /* read only: po_Consul_Plan works on its own copy */
  run.target = incoming;
  if (!(run.ar = po_Arena_New())) {
    snprintf(err, size, "out of memory");
    return kPo_Desired_Error;
  }
  run.where = po_Arena_Printf(run.ar, "%s %s/%s", po_TargetKind_Name(run.kind), run.ns, run.name);
  if (run.where && load(&run) && plan(&run)) {
    if (wanted(&run, po_Json_Meta(incoming, "uid"))) {
      po_ConsulPlan p = po_Consul_Plan(incoming, run.kind, run.ns, run.name, run.owners, run.nowners, run.want, run.nwant);
      json_object *list = po_Json_Get(po_Json_Get(p.object, "spec"), "envoyExtensions");
      if (p.out_of_memory) {
        oom(&run, "the plan");
      } else if (p.object && !p.create && p.changed && list) {
        *extensions = json_object_get(list);
        res = kPo_Desired_Set;
      }
      json_object_put(p.object);
    }
  }
  if (!run.where || !run.r.ok) {
    snprintf(err, size, "%s", run.r.error[0] ? run.r.error : "out of memory");
    res = kPo_Desired_Error;
  }
  run.read = NULL; /* the caller's: finish releases nothing of it */
  finish(&run);
  return res;
}
