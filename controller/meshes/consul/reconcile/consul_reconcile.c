/* Consul's part of a reconcile (po_ReconcileMesh, controller/reconcile/src/run.h): every
 * PropertyOverride of a ServiceDefaults or ProxyDefaults (keys ServiceDefaults/<ns>/<name>,
 * ProxyDefaults/<ns>/global) is one builtin/property-override entry in that one object
 * (po/meshes/consul.h), so the entries share its room (plan_room) and one write; the entries live
 * in it are what proves a record and what an invalid generation keeps; consul-k8s's Synced status
 * says when a write is live in Consul (sync.h, --consul-sync-status=require). Compiled into the
 * reconciler (po_reconcile), listed by po/meshes/list.h. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "po/base/text.h"
#include "po/meshes/consul.h"
#include "po/meshes/consul_check.h"
#include "consul_digest.h"
#include "po/targets/owned.h"
#include "run.h"

/* ---- load ---- */

/* consul-k8s's Synced status exists for Consul targets only. */
static bool requires_sync(const po_Run *run) {
  return run->io->sync && run->io->sync->mode == kPo_SyncMode_Require;
}

/* Whether a digest kept now would ever be read: only reconciles under ignore that may update
 * through a JSON Patch read one (from_digest). */
static bool digests_read(const po_Run *run) {
  return !run->dry && !requires_sync(run) && run->io->target_version && run->io->update_target;
}

/* The target's extensions: room for its entries of ours, whichever they are, without a walk that
 * counts them first (each walk reads every entry's marker, about 900 instructions an entry). */
static size_t extensions_of(const po_Run *run) {
  if (run->digest) return run->digest->n;
  json_object *list = po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  return list && json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
}

/* The target's entries bound to it, whoever they name (run->bound, in the list's order), read in
 * one walk per reconcile: extra_items, load_bound_owners and load each walked every entry's
 * marker (three walks, about 0.2 M instructions a reconcile at 25 entries). load takes those of
 * its owners from these, as po_Consul_OwnedEntries would with the owners given. */
static bool bound_entries(po_Run *run) {
  const void *of = run->digest ? (const void *)run->digest : (const void *)run->target;
  if (run->bound_of == of && run->bound) return true;
  size_t cap = extensions_of(run);
  po_ConsulEntry *b = realloc(run->bound, (cap ? cap : 1) * sizeof *b);
  if (!b) return po_Run_Oom(run, "reading the target's entries");
  run->bound = b;
  if (run->digest) { /* as po_Consul_OwnedEntries reads them from the object */
    run->nbound = run->unbound_entries = 0;
    for (size_t i = 0; i < run->digest->n; i++) {
      const po_TargetSlot *s = &run->digest->slots[i];
      if (s->mark == kPo_Slot_LookAlike) run->unbound_entries++;
      if (s->mark != kPo_Slot_Bound) continue;
      b[run->nbound++] = (po_ConsulEntry){s->owner, s->uid, s->generation, NULL, s->priority, s->required, s->ns, i + 1};
    }
  } else {
    run->nbound = po_Consul_OwnedEntries(run->target, NULL, 0, run->bound, cap, &run->unbound_entries);
  }
  run->bound_of = of;
  return true;
}

/* Room for PropertyOverrides the index missed, found through their entries (load_bound_owners). */
static size_t extra_items(po_Run *run) { return bound_entries(run) ? run->nbound : 0; }

static int by_owner(const void *a, const void *b) {
  const po_ConsulOwner *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->uid, y->uid);
}

/* Entries bound to this target for PropertyOverrides that point elsewhere now (retargeted):
 * still ours, as long as the PropertyOverride they name exists with that uid, so they are
 * removed here. One that names no existing PropertyOverride is someone else's. */
static bool load_bound_owners(po_Run *run) {
  const po_ReconcileIO *io = run->io;
  if (!bound_entries(run)) return false;
  size_t nbound = run->nbound;
  po_ConsulOwner *all = malloc((run->nowners + nbound + 1) * sizeof *all);
  if (!all) return po_Run_Oom(run, "reading the target's entries");
  memcpy(all, run->owners, run->nowners * sizeof *all);
  free(run->owners);
  run->owners = all;
  /* The target's own PropertyOverrides sorted, for a lookup per entry in log time; those this
   * loop adds (a few: entries of PropertyOverrides pointing elsewhere now) are looked at in turn. */
  size_t nlisted = run->nowners;
  po_ConsulOwner *sorted = nlisted > 1 ? po_Arena_Malloc(run->ar, nlisted * sizeof *sorted) : NULL;
  if (sorted) {
    memcpy(sorted, run->owners, nlisted * sizeof *sorted);
    qsort(sorted, nlisted, sizeof *sorted, by_owner);
  }
  for (size_t b = 0; b < nbound; b++) {
    bool listed = sorted && bsearch(&(po_ConsulOwner){run->bound[b].owner, run->bound[b].uid}, sorted, nlisted,
                                    sizeof *sorted, by_owner);
    for (size_t o = sorted ? nlisted : 0; o < run->nowners && !listed; o++) {
      listed = !strcmp(run->owners[o].name, run->bound[b].owner) && !strcmp(run->owners[o].uid, run->bound[b].uid);
    }
    if (listed) continue;
    void *ref = NULL;
    /* the marker's namespace only says where to look: the uid must match all the same */
    const char *bns = run->bound[b].ns && *run->bound[b].ns ? run->bound[b].ns : run->ns;
    po_CtlStatus st;
    const json_object *other = io->get_override(io->ctx, bns, run->bound[b].owner, &ref, &st);
    if (!other && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st); /* its entry is not a stranger's */
    if (!other || strcmp(po_Json_Meta(other, "uid"), run->bound[b].uid) != 0) {
      po_Run_Release(run, other, ref);
      /* Gone, and released by us or gone with our finalizer on (kube-apiserver's delete race,
       * po_TargetIndex_OverrideVanished): its entry is ours to remove, not someone else's (a uid
       * is never reused, so no copy or restore is taken for it). */
      if (!other && po_TargetIndex_WasReleased(run->ix, bns, run->bound[b].owner, run->bound[b].uid)) {
        run->owners[run->nowners++] = (po_ConsulOwner){run->bound[b].owner, run->bound[b].uid};
      }
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
      if (!po_Run_AddItem(run, other, ref, bns, run->bound[b].owner, k, hk)) return false;
      continue;
    }
    run->owners[run->nowners++] = (po_ConsulOwner){run->bound[b].owner, run->bound[b].uid};
    po_Run_Release(run, other, ref);
  }
  return true;
}

/* ---- a PropertyOverride's live entries, found by (owner, uid) ---- */

/* Each item's entries were looked for among all live ones in turn, in load, plan, write and
 * status: a target of k PropertyOverrides cost k*k name compares per reconcile. */
static int live_cmp(const po_Run *run, const char *owner, const char *uid, size_t at) {
  const po_ConsulEntry *e = &run->live[at];
  int c = strcmp(owner, e->owner);
  return c ? c : strcmp(uid, e->uid);
}

typedef struct { /* qsort has no context: each element carries the run */
  const po_Run *run;
  size_t at;
} LiveRef;

static int by_live(const void *a, const void *b) {
  const LiveRef *x = a, *y = b;
  int c = live_cmp(x->run, x->run->live[x->at].owner, x->run->live[x->at].uid, y->at);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}

static void order_live(po_Run *run) {
  run->live_order = NULL;
  LiveRef *refs = run->nlive > 1 ? po_Arena_Malloc(run->ar, run->nlive * sizeof *refs) : NULL;
  size_t *order = refs ? po_Arena_Malloc(run->ar, run->nlive * sizeof *order) : NULL;
  if (!order) return;
  for (size_t l = 0; l < run->nlive; l++) refs[l] = (LiveRef){run, l};
  qsort(refs, run->nlive, sizeof *refs, by_live);
  for (size_t l = 0; l < run->nlive; l++) order[l] = refs[l].at;
  run->live_order = order;
}

/* The live entries of owner/uid, in the target's order: *n of them from the index returned
 * (an index into live_order, or into live itself when unordered: then every entry is a
 * candidate and live_next skips the others). */
typedef struct {
  const po_Run *run;
  const char *owner, *uid;
  size_t at, end;
} LiveIter;

static LiveIter live_of(const po_Run *run, const char *owner, const char *uid) {
  LiveIter it = {run, owner, uid, 0, run->nlive};
  if (!run->live_order) return it;
  size_t lo = 0, hi = run->nlive;
  while (lo < hi) { /* the first at or after (owner, uid) */
    size_t mid = (lo + hi) / 2;
    if (live_cmp(run, owner, uid, run->live_order[mid]) > 0) lo = mid + 1;
    else hi = mid;
  }
  it.at = lo;
  return it;
}

/* The next live entry of the iterator's owner/uid, or NULL. */
static const po_ConsulEntry *live_next(LiveIter *it) {
  const po_Run *run = it->run;
  while (it->at < it->end) {
    size_t l = run->live_order ? run->live_order[it->at] : it->at;
    it->at++;
    if (live_cmp(run, it->owner, it->uid, l) == 0) return &run->live[l];
    if (run->live_order) break; /* sorted: past the run of equals */
  }
  it->at = it->end;
  return NULL;
}

/* Held here (its spec points at another target, its home) and this write changes whether it is
 * live here: gone (live before, not after), or back (this target deleted by its owner and written
 * again with it, the home's reconcile having said meanwhile that nothing was live). The home's
 * status says which. */
static bool held_changed(const po_RunItem *it) { return it->held && it->is_live != po_Run_HasEntry(it) && *it->home_key; }

/* The entries bound to the target that name one of run->owners, in the list's order, into
 * run->live; the others count as look-alikes with those bound elsewhere (what
 * po_Consul_OwnedEntries gives with the owners: test_reconcile's
 * test_one_walk_reads_what_owned_entries_reads). */
static bool live_of_owners(po_Run *run) {
  free(run->live); /* read again from the object (need_tree) */
  run->live = malloc((run->nbound ? run->nbound : 1) * sizeof *run->live);
  po_ConsulOwner *sorted = run->nowners > 1 ? po_Arena_Malloc(run->ar, run->nowners * sizeof *sorted) : NULL;
  if (!run->live || (run->nowners > 1 && !sorted)) return po_Run_Oom(run, "reading the target's entries");
  if (sorted) {
    memcpy(sorted, run->owners, run->nowners * sizeof *sorted);
    qsort(sorted, run->nowners, sizeof *sorted, by_owner);
  }
  size_t n = 0;
  for (size_t b = 0; b < run->nbound; b++) {
    po_ConsulOwner key = {run->bound[b].owner, run->bound[b].uid};
    bool known = sorted ? bsearch(&key, sorted, run->nowners, sizeof key, by_owner) != NULL
                        : run->nowners == 1 && by_owner(&key, &run->owners[0]) == 0;
    if (known) run->live[n++] = run->bound[b];
  }
  run->nlive = n;
  run->r.foreign_entries = run->unbound_entries + (run->nbound - n);
  return true;
}

/* ---- the target read from its digest (digest.h) ---- */

/* Whether the target is read from its digest: the index keeps one for the very version the cache
 * holds. Not under --consul-sync-status=require (the write record and consul-k8s's status are
 * read from the object), nor for the admission view (it plans over the incoming object). */
static bool from_digest(po_Run *run) {
  const po_ReconcileIO *io = run->io;
  if (!digests_read(run)) return false;
  po_OverrideVersion v;
  if (!io->target_version(io->ctx, run->kind, run->ns, run->name, &v) || !*v.uid || !*v.rv) return false;
  po_TargetDigest *d = po_Arena_Malloc(run->ar, sizeof *d);
  if (!d || !po_TargetIndex_Digest(run->ix, run->key, v.uid, v.rv, run->ar, d)) return false;
  run->digest = d;
  run->r.from_digest = true;
  return true;
}

/* The object after all, in a reconcile begun from the digest, where it needs more than the digest
 * says (an entry's arguments, an annotation to write, a look-alike to report): the version the
 * digest describes, and the entries read again from it (the same ones: items keep what the load
 * found). The cache moved on meanwhile: a conflict, retried. False when the reconcile ends (run->r
 * says why). */
static bool need_tree(po_Run *run) {
  const po_TargetDigest *d = run->digest;
  if (!d) return true;
  const po_ReconcileIO *io = run->io;
  po_CtlStatus st;
  run->read = io->get_target(io->ctx, run->kind, run->ns, run->name, &run->read_ref, &st);
  if (!run->read && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st);
  run->target = run->read;
  run->digest = NULL;
  run->r.digest_object = true;
  if (!run->read || strcmp(po_Json_Meta(run->read, "uid"), d->uid) != 0 ||
      strcmp(po_Json_Meta(run->read, "resourceVersion"), d->rv) != 0) {
    run->target_ok = false;
    run->target_conflict = true;
    po_Run_Fail(run, kPo_WriteResult_Conflict, po_Arena_Printf(run->ar, "reading %s", run->where),
                "the object changed while it was reconciled");
    return false;
  }
  if (!bound_entries(run)) return false;
  if (run->live && !live_of_owners(run)) return false;
  if (run->live) order_live(run);
  return true;
}

/* Whether every entry bound to the target names one of its PropertyOverrides, and the object is
 * not someone else's: else the load looks further (load_bound_owners) and the reconcile reports
 * look-alikes (ForeignEntry, ForeignObject), which needs the object. */
static bool digest_suffices(po_Run *run) {
  if (run->unbound_entries || run->digest->created == kPo_OwnedCreated_Foreign) return false;
  po_ConsulOwner *sorted = run->nowners > 1 ? po_Arena_Malloc(run->ar, run->nowners * sizeof *sorted) : NULL;
  if (run->nowners > 1 && !sorted) return false;
  if (sorted) {
    memcpy(sorted, run->owners, run->nowners * sizeof *sorted);
    qsort(sorted, run->nowners, sizeof *sorted, by_owner);
  }
  for (size_t b = 0; b < run->nbound; b++) {
    po_ConsulOwner key = {run->bound[b].owner, run->bound[b].uid};
    bool known = sorted ? bsearch(&key, sorted, run->nowners, sizeof key, by_owner) != NULL
                        : run->nowners == 1 && by_owner(&key, &run->owners[0]) == 0;
    if (!known) return false;
  }
  return true;
}

/* The PropertyOverrides the entries of the target name, then the entries of ours live in it. */
static bool load(po_Run *run) {
  if (run->digest && !digest_suffices(run) && !need_tree(run)) return false;
  if (!load_bound_owners(run) || !live_of_owners(run)) return false;
  order_live(run);
  for (size_t i = 0; i < run->m; i++) {
    po_RunItem *it = &run->items[i];
    LiveIter li = live_of(run, it->name, it->uid);
    it->is_live = live_next(&li) != NULL;
  }
  return true;
}

/* The generation of this PropertyOverride's entry in the Consul target ns/name, 0 when it holds
 * none. */
static int64_t held_generation(po_Run *run, const po_RunItem *it, po_TargetKind kind, const char *ns, const char *name) {
  void *ref = NULL;
  po_CtlStatus st;
  const json_object *t = run->io->get_target(run->io->ctx, kind, ns, name, &ref, &st);
  if (!t && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st), -1;
  po_ConsulOwner me = {it->name, it->uid};
  po_ConsulEntry e;
  int64_t gen = t && po_Consul_OwnedEntries(t, &me, 1, &e, 1, NULL) > 0 ? (e.generation > 0 ? e.generation : 1) : 0;
  po_Run_Release(run, t, ref);
  return gen;
}

/* ---- plan ---- */

/* A live entry's arguments hashed without our marker: the digest's, or hashed now. */
static po_JsonHash args_hash(const po_Run *run, const po_ConsulEntry *e) {
  if (e->slot && run->digest) return run->digest->slots[e->slot - 1].hash;
  return po_Json_HashExcept(e->arguments, "PropertyOverride");
}

/* Whether one of `live` (a target's entries of ours) is the entry the controller wrote for `rec`:
 * this PropertyOverride's, its marker naming rec's generation and priority, `required` and the
 * arguments exactly rec's compiled ones. *seen gets the generation of its entry otherwise. */
static bool proves_entry(const po_Run *run, const po_ConsulEntry *e, const po_CompiledEntry *rec, int64_t *seen) {
  if (e->generation == rec->generation && e->priority == rec->c.priority && e->required == rec->c.required &&
      po_JsonHash_Equal(args_hash(run, e), rec->arguments_hash)) {
    return true;
  }
  *seen = e->generation > 0 ? e->generation : 1;
  return false;
}

static bool proves(const po_Run *run, const po_RunItem *it, const po_CompiledEntry *rec, int64_t *seen) {
  LiveIter li = live_of(run, it->name, it->uid);
  for (const po_ConsulEntry *e; (e = live_next(&li));) {
    if (proves_entry(run, e, rec, seen)) return true;
  }
  return false;
}

/* A record is proved by the target: the entry of this PropertyOverride bound to this target,
 * whose marker names that generation and priority and whose arguments are exactly the record's
 * compiled ones (the keyed hash: no collision can be aimed); or this process recorded exactly it
 * (po_TargetIndex_IsOwnLastValid), unless the target proves a newer generation: then another
 * replica (leading while this one did not) superseded it, and the record is a replay. */
static bool record_bound(po_Run *run, po_RunItem *it, const po_CompiledEntry *rec) {
  int64_t g = rec->generation, live = 0;
  if (proves(run, it, rec, &live)) return true;
  if (live <= g && po_TargetIndex_IsOwnLastValid(run->ix, it->ns, it->name, it->uid, g, rec->hash)) return true;
  if (run->dry) {
    /* the admission view: the incoming object replaces the stored one (a re-apply from git may
     * carry none of our entries), and the stored one holds what the controller wrote */
    void *ref = NULL;
    po_CtlStatus st;
    const json_object *stored = run->io->get_target(run->io->ctx, run->kind, run->ns, run->name, &ref, &st);
    if (!stored && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st); /* not proof of anything */
    po_ConsulOwner me = {it->name, it->uid};
    po_ConsulEntry e;
    bool yes = stored && po_Consul_OwnedEntries(stored, &me, 1, &e, 1, NULL) > 0 && proves_entry(run, &e, rec, &live);
    po_Run_Release(run, stored, ref);
    if (yes) return true;
  }
  po_Run_Mismatch(run, it,
                  "status.lastValid (generation %lld) does not match what this controller wrote to %s (%s): it is ignored",
                  (long long)g, run->where,
                  !live ? "it holds no entry of this PropertyOverride"
                        : po_Run_OrOom(po_Arena_Printf(run->ar, "its entry of this PropertyOverride is generation %lld%s",
                                                       (long long)live, live == g ? " with other patches" : "")));
  return false; /* out of memory: run->r says so */
}

/* Without a usable record: the entry written for this very PropertyOverride, if Consul's check
 * still accepts it. */
static bool keep_live(po_Run *run, po_RunItem *it) {
  if (!need_tree(run)) return false; /* the live entry's arguments */
  LiveIter li = live_of(run, it->name, it->uid);
  const po_ConsulEntry *e = live_next(&li); /* its first entry */
  /* ours (bound to both uids), and no newer than the object itself: a marker claiming a
   * generation the PropertyOverride never had was not written by us */
  if (!e || e->generation < 1 || e->generation > it->ce->c.generation) return true;
  po_ConsulRecheck verdict = po_Consul_Recheck(e->arguments, run->ar);
  if (verdict == kPo_ConsulRecheck_NoMemory) {
    return po_Run_Oom(run, po_Arena_Printf(run->ar, "checking the live entry of %s", it->name));
  }
  if (verdict != kPo_ConsulRecheck_Accepted) return true;
  if (!(it->entry_copy = po_Run_Copy(e->arguments))) {
    return po_Run_Oom(run, po_Arena_Printf(run->ar, "keeping the entry of %s", it->name));
  }
  json_object_object_del(it->entry_copy, "PropertyOverride");
  it->entry_generation = e->generation;
  /* the priority it was live at (its marker's), never the current spec's: an invalid
   * generation must not move the entry it keeps */
  it->entry_priority = e->priority;
  it->entry_patches = po_ConsulEntry_PatchCount(it->entry_copy);
  it->entry_hash = po_Json_Hash(it->entry_copy);
  it->entry_required = e->required;
  return true;
}

/* The patches of a live entry: the digest's count, or counted now. */
static size_t live_patches(const po_Run *run, const po_ConsulEntry *e) {
  if (e->slot && run->digest) return run->digest->slots[e->slot - 1].patches;
  return po_ConsulEntry_PatchCount(e->arguments);
}

/* Room in the target: the webhook refuses an object over the per-object limits, so the
 * PropertyOverrides that do not fit (the last ones by name) are not written and say so, rather
 * than every write to the target failing. Two passes: entries already live keep their place,
 * so a newcomer never evicts one (first come, first placed); newcomers then by name. */
static void plan_room(po_Run *run) {
  size_t used_e = 0, used_p = 0, own_p = 0;
  json_object *list = run->digest ? NULL : po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  for (size_t i = 0; run->digest && i < run->digest->n; i++) {
    used_e += run->digest->slots[i].ext;
    used_p += run->digest->slots[i].patches;
  }
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *x = json_object_array_get_idx(list, i), *n = po_Json_Get(x, "name");
    if (!n || !json_object_is_type(n, json_type_string) || strcmp(json_object_get_string(n), PO_EXTENSION_NAME) != 0) continue;
    used_e++;
    used_p += po_ConsulEntry_PatchCount(po_Json_Get(x, "arguments"));
  }
  for (size_t l = 0; l < run->nlive; l++) own_p += live_patches(run, &run->live[l]);
  used_e -= run->nlive < used_e ? run->nlive : used_e;
  used_p -= own_p < used_p ? own_p : used_p;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < run->m; i++) {
      po_RunItem *it = &run->items[i];
      if (!po_Run_HasEntry(it) || it->is_live != (pass == 0)) continue;
      if (used_e + 1 > kPo_MaxExtensionsPerConsulObject || used_p + it->entry_patches > kPo_MaxPatchesPerConsulObject) {
        it->over_limit = true;
        po_Run_DropEntry(it);
        continue;
      }
      used_e++;
      used_p += it->entry_patches;
    }
  }
}

/* ---- write ---- */

/* Created empty first: its uid, which only the API server assigns, is what binds our markers
 * and the created annotation to it. */
static bool create_target(po_Run *run) {
  json_object *skel = po_Consul_NewTarget(run->kind, run->ns, run->name), *made = NULL;
  if (!skel) return po_Run_Oom(run, "a new target");
  po_CtlStatus st;
  po_WriteResult w = run->io->write_target(run->io->ctx, run->kind, run->ns, run->name, skel, true, NULL, &made, &st);
  if (w != kPo_WriteResult_Ok) snprintf(run->target_err, sizeof run->target_err, "%.500s", st.message);
  json_object_put(skel);
  if (w != kPo_WriteResult_Ok || !made || !*po_Json_Meta(made, "uid")) {
    json_object_put(made);
    run->target_ok = false;
    if (w == kPo_WriteResult_Ok) {
      w = kPo_WriteResult_Failed;
      snprintf(run->target_err, sizeof run->target_err, "the server returned no uid for the created object");
    }
    run->target_conflict = w == kPo_WriteResult_Conflict;
    po_Run_Fail(run, w, po_Arena_Printf(run->ar, "creating %s", run->where), run->target_err);
    return false;
  }
  po_TargetIndex_NoteCreated(run->ix, po_Json_Meta(made, "uid"));
  /* until the cache holds it (or an event says it went), a reconcile that finds no target waits
   * for the create's event instead of creating it again (write_target) */
  po_TargetIndex_NoteObjectCreated(run->ix, po_TargetKind_Name(run->kind), run->ns, run->name, po_Json_Meta(made, "uid"));
  run->own = made;
  run->target = made;
  run->r.targets_written++;
  return true;
}

/* The entry's arguments with our marker for the target it goes into (a new reference). */
/* The marker's namespace: the PropertyOverride's when not the target's, else none (as older
 * versions wrote it, so their markers are not rewritten). */
static const char *marker_ns(const po_RunItem *it, const char *target_ns) { return strcmp(it->ns, target_ns) != 0 ? it->ns : ""; }

static json_object *marked(const po_RunItem *it, const char *target_ns, const char *target_uid) {
  json_object *args = it->entry ? po_Json_Parse(it->entry->arguments, it->entry->arguments_len) : po_Run_Copy(it->entry_copy);
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
  const po_RunItem *x = *(const po_RunItem *const *)a, *y = *(const po_RunItem *const *)b;
  if (x->entry_priority != y->entry_priority) return x->entry_priority < y->entry_priority ? -1 : 1;
  int c = strcmp(x->name, y->name);
  /* one name from two namespaces: the marker's namespace ("" for the target's own) decides, as
   * po_Consul_Plan orders them */
  return c ? c : strcmp(x->other_ns ? x->ns : "", y->other_ns ? y->ns : "");
}

/* Whether one of our entries in the target is exactly what po_Consul_Plan would write for it:
 * {name, required (spec.required), arguments} with our marker {name, generation, uid, targetUID, and
 * priority when not 0} and the same arguments (by hash). */
static bool entry_current(const json_object *e, const po_ConsulEntry *live, const po_RunItem *it, const char *target_ns) {
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

/* entry_current over a digest's slot: what it reads of the element, the digest says. */
static bool slot_current(const po_TargetSlot *s, const po_RunItem *it, const char *target_ns) {
  return s->mark == kPo_Slot_Bound && s->exact && s->required == it->entry_required && strcmp(s->owner, it->name) == 0 &&
         strcmp(s->uid, it->uid) == 0 && s->priority == it->entry_priority && strcmp(s->ns, marker_ns(it, target_ns)) == 0 &&
         s->generation == it->entry_generation && po_JsonHash_Equal(s->hash, it->entry_hash);
}

/* Whether the target already holds exactly our entries as po_Consul_Plan would place them (after
 * every other extension, sorted by priority, then owner), so there is nothing to plan or write: the usual case
 * when a target is reconciled for a status change of one of its PropertyOverrides. Costs a walk
 * of the list and a hash per entry, where a plan copies the whole target and builds every entry
 * (from a digest: a walk of its slots, the hashes in them). item_of (may be NULL; one per element
 * of the list) gets the item whose entry each element is, when current. */
static bool target_current(po_Run *run, size_t nwant, const po_RunItem **item_of) {
  if (!(run->target || run->digest) || nwant == 0 || run->nlive != nwant) return false;
  const po_RunItem **sorted = po_Arena_Malloc(run->ar, nwant * sizeof *sorted);
  if (!sorted) return false; /* the plan decides */
  size_t k = 0;
  for (size_t i = 0; i < run->m; i++) if (po_Run_HasEntry(&run->items[i])) sorted[k++] = &run->items[i];
  qsort(sorted, nwant, sizeof *sorted, by_order);
  k = 0;
  for (size_t i = 0; run->digest && i < run->digest->n; i++) {
    if (k < run->nlive && run->live[k].slot == i + 1) {
      if (!slot_current(&run->digest->slots[i], sorted[k], run->ns)) return false;
      k++;
    } else if (k > 0) {
      return false;
    }
  }
  json_object *list = run->digest ? NULL : po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *e = json_object_array_get_idx(list, i);
    if (item_of) item_of[i] = NULL;
    if (k < run->nlive && po_Json_Get(e, "arguments") == run->live[k].arguments) {
      if (!entry_current(e, &run->live[k], sorted[k], run->ns)) return false;
      if (item_of) item_of[i] = sorted[k];
      k++;
    } else if (k > 0) {
      return false; /* another extension after ours: the plan moves ours to the end */
    }
  }
  return k == nwant;
}

/* The target's entries by their arguments object, sorted by address: an item's live entry is
 * found by its arguments in log time (one walk of the list per reconcile, where each item walked
 * it again: k*k/2 lookups at k PropertyOverrides). */
typedef struct {
  uintptr_t args;
  json_object *entry;
} EntryOf;
static int by_args(const void *a, const void *b) {
  uintptr_t x = ((const EntryOf *)a)->args, y = ((const EntryOf *)b)->args;
  return x < y ? -1 : x > y;
}
typedef struct {
  EntryOf *at;
  size_t n;
} EntriesOf;

static bool entries_of(po_Run *run, EntriesOf *out) {
  *out = (EntriesOf){0};
  json_object *list = po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  if (!list || !json_object_is_type(list, json_type_array)) return true;
  size_t n = json_object_array_length(list);
  if (!n) return true;
  if (!(out->at = po_Arena_Malloc(run->ar, n * sizeof *out->at))) return false;
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(list, i), *args = po_Json_Get(e, "arguments");
    if (args) out->at[out->n++] = (EntryOf){(uintptr_t)args, e};
  }
  qsort(out->at, out->n, sizeof *out->at, by_args);
  return true;
}

/* The item's entry in the target when it is already exactly what marked() would build for it
 * (entry_current, bound to this target's uid): its arguments, marker included, are what to write,
 * taken by reference. A target that gains one PropertyOverride keeps all the others: without
 * this each reconcile parsed every entry's arguments again (50 per write at 10,000 on 200
 * targets). NULL: build it. */
static json_object *current_args(po_Run *run, const po_RunItem *it, const char *tuid, const EntriesOf *entries) {
  LiveIter li = live_of(run, it->name, it->uid);
  const po_ConsulEntry *live = live_next(&li); /* its first entry */
  const char *bound = live ? po_Json_String(po_Json_Get(live->arguments, "PropertyOverride"), "targetUID") : NULL;
  if (!bound || strcmp(bound, tuid) != 0) return NULL;
  /* the entry holding these arguments: one of this very target (an annotated copy has none) */
  EntryOf key = {(uintptr_t)live->arguments, NULL};
  const EntryOf *e = entries->n ? bsearch(&key, entries->at, entries->n, sizeof key, by_args) : NULL;
  return e && entry_current(e->entry, live, it, run->ns) ? live->arguments : NULL;
}

/* From a digest: the slot (1 + its index) of the item's entry when it is already exactly what
 * marked() would build for it (slot_current), else 0: as current_args from the object. */
static size_t current_slot(po_Run *run, const po_RunItem *it) {
  LiveIter li = live_of(run, it->name, it->uid);
  const po_ConsulEntry *live = live_next(&li); /* its first entry */
  return live && live->slot && slot_current(&run->digest->slots[live->slot - 1], it, run->ns) ? live->slot : 0;
}

/* Our entries as the plan wants them, bound to the target's uid: one list for the reconcile's
 * write and the mutating webhook's answer (po_Reconcile_Desired), so the two cannot differ. */
static bool wanted(po_Run *run, const char *tuid) {
  EntriesOf entries = {0};
  if (!run->digest && !entries_of(run, &entries)) return po_Run_Oom(run, "the entries of the target");
  run->want_item = po_Arena_Malloc(run->ar, (run->m ? run->m : 1) * sizeof *run->want_item);
  if (!run->want_item) return po_Run_Oom(run, "the entries of the target");
  for (size_t i = 0; i < run->m; i++) {
    po_RunItem *it = &run->items[i];
    if (!po_Run_HasEntry(it)) continue;
    /* from a digest, a current entry is kept where it is by its slot, its arguments never read */
    size_t slot = run->digest && it->entry ? current_slot(run, it) : 0;
    json_object *args = !run->digest && it->entry ? current_args(run, it, tuid, &entries) : NULL;
    args = slot ? NULL : args ? json_object_get(args) : marked(it, run->ns, tuid);
    if (!slot && !args) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the entry of %s", it->name));
    run->want_item[run->nwant] = i;
    run->want[run->nwant++] = (po_ConsulEntry){it->name,          it->uid,           it->entry_generation,   args,
                                               it->entry_priority, it->entry_required, marker_ns(it, run->ns), slot};
  }
  return true;
}

/* Under require, the write record (sync.h) goes into the object written: kept when the spec is
 * the one last recorded (consul-k8s may see nothing new and write no status), else new. False
 * when the write is put off: the status it would record was written this very second, and
 * consul-k8s's next one could look the same. */
static bool record_write(po_Run *run, json_object *object) {
  if (!requires_sync(run) || !object) return true;
  uint64_t spec = po_Json_HashStable(po_Json_Get(object, "spec"));
  po_WriteRecord cur = po_Sync_ReadRecord(run->target);
  if (cur.present && cur.spec_hash == spec) return true;
  int64_t now = po_Run_NowS(run);
  /* The second of the last status write, or the one either side of it: the two clocks are never
   * exactly together, and a skew of a fraction of a second puts consul-k8s's "this second" on
   * our last or next one (its answer to our write, in its same second, would look exactly like
   * the status recorded, and the write would never look synced). Further out: a status time far
   * ahead of our clock (consul-k8s's clock runs ahead) would otherwise put the write off for as
   * long as the skew. */
  int64_t last = po_Sync_LastStatusTime(run->target);
  if (last >= 0 && last >= now - 1 && last <= now + 1) {
    run->deferred = true;
    po_Run_RecheckIn(run, 1);
    return false;
  }
  po_WriteRecord r = {.present = true, .at = now, .spec_hash = spec, .status_hash = po_Sync_StatusHash(run->target)};
  if (!po_Sync_SetRecord(object, &r)) return po_Run_Oom(run, "recording the write");
  run->record = r;
  run->recorded = true;
  return true;
}

/* Whether one of the target's PropertyOverrides recorded in its status that the controller
 * created this very object (status.created: its namespace, name and uid) and could not bind the
 * created annotation: a restart before that write succeeded. The uid is the API server's for our
 * own create and the status is the controller's to write, so a copy, a restore or a look-alike
 * (another uid) is never bound by this. Looked for only in an object labelled as ours and not
 * annotated, until it is; read through the IO table, no memo touched. False too when one could
 * not be read (po_Run_ReadFailed: the reconcile ends). */
static bool created_recorded(po_Run *run) {
  const char *managed = po_Json_String(po_Json_Get(po_Json_Get(run->target, "metadata"), "labels"), "app.kubernetes.io/managed-by");
  const char *tuid = po_Json_Meta(run->target, "uid");
  if (!managed || strcmp(managed, "propertyoverride") != 0 || !*tuid) return false;
  bool yes = false;
  for (size_t i = 0; i < run->m && !yes; i++) {
    const po_RunItem *it = &run->items[i];
    void *ref = NULL;
    po_CtlStatus st;
    const json_object *po = run->io->get_override(run->io->ctx, it->ns, it->name, &ref, &st);
    if (!po && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st);
    json_object *cr = po_Json_Get(po_Json_Get(po, "status"), "created");
    const char *u = po_Json_String(cr, "uid"), *cns = po_Json_String(cr, "namespace"), *cn = po_Json_String(cr, "name");
    yes = po && !strcmp(po_Json_Meta(po, "uid"), it->uid) && u && !strcmp(u, tuid) && cns && !strcmp(cns, run->ns) && cn &&
          !strcmp(cn, run->name);
    po_Run_Release(run, po, ref);
  }
  return yes;
}

/* The index's note of which PropertyOverrides this target holds an entry of
 * (po_TargetIndex_NoteEntries): a deleted one's finalizer waits for every target holding one,
 * not only the one it points at (reconcile.c, release_finalizer). The owners of `n` entries. */
static bool note_entries(po_Run *run, const po_ConsulEntry *e, size_t n, bool exact) {
  const char **strs = n ? po_Arena_Malloc(run->ar, 3 * n * sizeof *strs) : NULL;
  if (n && !strs) return false;
  for (size_t i = 0; i < n; i++) strs[i] = e[i].owner, strs[n + i] = e[i].uid, strs[2 * n + i] = e[i].ns;
  return po_TargetIndex_NoteEntries(run->ix, run->key, strs ? strs + 2 * n : NULL, strs, strs ? strs + n : NULL, n, exact);
}

/* Nothing to write: the target holds our entries as the cache has them (the cache holds our last
 * write: po_TargetIndex_CacheBehind). An entry of a PropertyOverride that moved here and was
 * never noted (a note that ran out of memory) is added, or the reconcile ends there. */
static bool note_live(po_Run *run) {
  if (note_entries(run, run->live, run->nlive, true)) return true;
  return po_Run_Oom(run, po_Arena_Printf(run->ar, "noting the entries of %s", run->where));
}

/* What the write puts into the target: after it, exactly. */
static bool note_wanted(po_Run *run, bool exact) { return note_entries(run, run->want, run->nwant, exact); }

/* Before the write, what it adds (exact false), unless one of them was released meanwhile (moved
 * and deleted since this plan, another target's reconcile let its finalizer go:
 * po_TargetIndex_NoteWriting): then no write, retried as a conflict, whose plan sees the deletion.
 * False when the reconcile ends here (run->r says why). */
static bool note_writing(po_Run *run) {
  size_t n = run->nwant;
  const char **strs = n ? po_Arena_Malloc(run->ar, 3 * n * sizeof *strs) : NULL;
  if (n && !strs) return po_Run_Oom(run, po_Arena_Printf(run->ar, "noting the entries of %s", run->where));
  for (size_t i = 0; i < n; i++) strs[i] = run->want[i].owner, strs[n + i] = run->want[i].uid, strs[2 * n + i] = run->want[i].ns;
  int noted = po_TargetIndex_NoteWriting(run->ix, run->key, strs ? strs + 2 * n : NULL, strs, strs ? strs + n : NULL, n);
  if (noted > 0) return true;
  if (noted == 0) return po_Run_Oom(run, po_Arena_Printf(run->ar, "noting the entries of %s", run->where));
  run->target_ok = false;
  run->target_conflict = true;
  po_Run_Fail(run, kPo_WriteResult_Conflict, po_Arena_Printf(run->ar, "writing %s", run->where),
              "a PropertyOverride planned here was deleted and released meanwhile");
  return false;
}

/* After a successful write of the target (removed, when `removed`), over version rv. */
static void written(po_Run *run, bool removed, bool annotate, const char *rv) {
  run->r.targets_written++;
  /* exactly what it holds now; out of memory here keeps the superset noted before the
   * write (a release waits for one more reconcile of this target, never for too little) */
  if (removed) po_TargetIndex_NoteEntries(run->ix, run->key, NULL, NULL, NULL, 0, true);
  else note_wanted(run, true);
  if (annotate) po_TargetIndex_WasCreated(run->ix, po_Json_Meta(run->target, "uid"), true);
  /* A generation held here and now gone, or back: its own target's reconcile says so in its
   * status, reading this target from the cache. Queued now, that reconcile may still read the
   * version written over (the echo not in yet, CI's e2e_revoke under load): the target's next
   * event queues it again (po_TargetIndex_TakeHeldGone). Noted before the queueing, so
   * whichever comes later reads the written version. */
  size_t changed = 0;
  for (size_t i = 0; i < run->m && run->io->enqueue; i++) changed += held_changed(&run->items[i]);
  if (changed) po_TargetIndex_NoteHeldGone(run->ix, run->key, rv);
  for (size_t i = 0; i < run->m && changed; i++) {
    if (held_changed(&run->items[i])) run->io->enqueue(run->io->enqueue_ctx, run->items[i].home_key);
  }
}

/* The update as a JSON Patch of the entries that changed (po_Consul_Delta), and of the
 * annotations when the plan set ours (created by us: `annotate`; the write record under
 * --consul-sync-status=require, sync.h: every write that changes the entries), the map sent
 * whole. Not when the plan added the spec itself. NULL: the whole object is written (out of
 * memory building the patch too: the update does not depend on it). The patch carries `rv` as
 * its precondition, as the object would. */
static const char *delta_of(po_Run *run, json_object *object, bool annotate, const char *rv, size_t *len) {
  json_object *spec = po_Json_Get(run->target, "spec");
  if (!spec || !json_object_is_type(spec, json_type_object)) return NULL;
  json_object *ann = annotate || run->recorded ? po_Json_Get(po_Json_Get(object, "metadata"), "annotations") : NULL;
  if ((annotate || run->recorded) && (!ann || !json_object_is_type(ann, json_type_object))) return NULL;
  return po_Consul_Delta(po_Json_Get(spec, "envoyExtensions"), po_Json_Get(po_Json_Get(object, "spec"), "envoyExtensions"),
                         rv, ann, run->ar, len);
}

/* ---- the digest kept for the next reconcile ---- */

/* The slot of our entry planned for want[k] (its item's compiled entry, as marked() builds it). */
static po_TargetSlot planned_slot(const po_Run *run, size_t k) {
  const po_RunItem *it = &run->items[run->want_item[k]];
  return (po_TargetSlot){.mark = kPo_Slot_Bound,
                         .ext = true,
                         .exact = true,
                         .required = it->entry_required,
                         .priority = it->entry_priority,
                         .patches = (uint32_t)it->entry_patches,
                         .generation = it->entry_generation,
                         .hash = it->entry_hash,
                         .owner = it->name,
                         .uid = it->uid,
                         .ns = marker_ns(it, run->ns)};
}

/* Keeps the digest of `obj` (the object read, or the one a write made: then (uid, rv) is the
 * version its answer named) for the next reconcile. item_of[i] is the item whose entry the i-th
 * element is (NULL: not ours), known current, so its hash is the item's; want_of[i] (when
 * item_of is NULL) the same as an index into want. None is kept when an element is a look-alike
 * or names no PropertyOverride of the target: every reconcile reads the object then (to report
 * it), and the one before it is dropped. */
static void keep_digest(po_Run *run, const json_object *obj, const char *uid, const char *rv, const po_RunItem *const *item_of,
                        const size_t *want_of) {
  po_TargetDigest d = {0};
  po_ConsulDigest_Meta(obj, &d);
  snprintf(d.uid, sizeof d.uid, "%s", uid);
  snprintf(d.rv, sizeof d.rv, "%s", rv);
  json_object *list = po_Json_Get(po_Json_Get(obj, "spec"), "envoyExtensions");
  d.n = d.list ? json_object_array_length(list) : 0;
  d.slots = d.n ? po_Arena_Malloc(run->ar, d.n * sizeof *d.slots) : NULL;
  bool ok = *uid && *rv && (!d.n || d.slots);
  for (size_t i = 0; ok && i < d.n; i++) {
    po_TargetSlot *sl = &d.slots[i];
    po_ConsulDigest_Slot(json_object_array_get_idx(list, i), d.uid, sl);
    const po_RunItem *it = item_of ? item_of[i] : want_of[i] != SIZE_MAX ? &run->items[run->want_item[want_of[i]]] : NULL;
    if (it) {
      /* ours, as planned or found current: what the plan wrote for the item */
      ok = sl->mark == kPo_Slot_Bound && sl->exact;
      sl->hash = it->entry_hash;
    } else {
      ok = sl->mark == kPo_Slot_Unmarked;
    }
  }
  po_TargetIndex_SetDigest(run->ix, run->key, ok ? &d : NULL);
}

/* For keep_digest over the plan's object: the index into want of each element of its list that is
 * one of ours (its arguments are want's, by reference), SIZE_MAX for the others. NULL when out
 * of memory. */
static size_t *want_of_list(po_Run *run, const json_object *list) {
  size_t n = list && json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
  size_t *of = po_Arena_Malloc(run->ar, (n ? n : 1) * sizeof *of);
  EntryOf *by = po_Arena_Malloc(run->ar, (run->nwant ? run->nwant : 1) * sizeof *by);
  if (!of || !by) return NULL;
  for (size_t k = 0; k < run->nwant; k++) by[k] = (EntryOf){(uintptr_t)run->want[k].arguments, (json_object *)(uintptr_t)k};
  qsort(by, run->nwant, sizeof *by, by_args);
  for (size_t i = 0; i < n; i++) {
    EntryOf key = {(uintptr_t)po_Json_Get(json_object_array_get_idx(list, i), "arguments"), NULL};
    const EntryOf *e = key.args && run->nwant ? bsearch(&key, by, run->nwant, sizeof key, by_args) : NULL;
    of[i] = e ? (size_t)(uintptr_t)e->entry : SIZE_MAX;
  }
  return of;
}

/* keep_digest of the plan's object at version (uid, rv). */
static void keep_planned(po_Run *run, const json_object *object, const char *uid, const char *rv) {
  if (!digests_read(run) || !object) return;
  size_t *want_of = want_of_list(run, po_Json_Get(po_Json_Get(object, "spec"), "envoyExtensions"));
  if (want_of) keep_digest(run, object, uid, rv, NULL, want_of);
  else po_TargetIndex_SetDigest(run->ix, run->key, NULL);
}

/* ---- the write from a digest ---- */

/* What write_target does below, from the digest: the same plan (the other extensions in their
 * order, then ours sorted: po_Consul_Plan's list) over its slots, sent as the JSON Patch of the
 * change (po_ConsulDigest_Delta); the digest of the version written kept for the next one. 1 or
 * 0: done (0: the reconcile ends); -1: the object is needed after all (to annotate it, to add its
 * spec or list, to delete it, or entries out of order), and the write plans over it. */
static int write_from_digest(po_Run *run, size_t nwant) {
  const po_TargetDigest *d = run->digest;
  /* one to annotate, or labelled ours and not annotated (created_recorded reads the object) */
  bool maybe_annotate = d->created == kPo_OwnedCreated_No && (d->managed || po_TargetIndex_WasCreated(run->ix, d->uid, false));
  if (maybe_annotate || !d->spec_object || !d->list) return -1;
  if (po_TargetIndex_CacheBehind(run->ix, run->key, d->uid, d->rv)) {
    run->deferred = true; /* as below */
    po_Run_RecheckIn(run, 1);
    return 1;
  }
  if (target_current(run, nwant, NULL)) return note_live(run);
  if (!wanted(run, d->uid)) return 0;
  po_ConsulPlanned *planned = po_Arena_Malloc(run->ar, (d->n + run->nwant + 1) * sizeof *planned);
  po_ConsulEntry *sorted = po_Arena_Malloc(run->ar, (run->nwant + 1) * sizeof *sorted);
  if (!planned || !sorted) return po_Run_Oom(run, po_Arena_Printf(run->ar, "planning %s", run->where));
  size_t n = 0;
  /* every bound entry names one of the target's PropertyOverrides (digest_suffices): the others
   * are the other extensions */
  for (size_t i = 0; i < d->n; i++) {
    if (d->slots[i].mark == kPo_Slot_Unmarked) planned[n++] = (po_ConsulPlanned){.from = i + 1};
  }
  /* ours in po_Consul_Plan's order; `generation` carries each one's index into want through the sort */
  for (size_t k = 0; k < run->nwant; k++) sorted[k] = run->want[k], sorted[k].generation = (int64_t)k;
  qsort(sorted, run->nwant, sizeof *sorted, po_ConsulEntry_Order);
  for (size_t k = 0; k < run->nwant; k++) {
    size_t w = (size_t)sorted[k].generation;
    planned[n++] = (po_ConsulPlanned){.from = run->want[w].slot, .required = run->want[w].required,
                                      .arguments = run->want[w].arguments, .want = w};
  }
  bool changed = n != d->n;
  for (size_t j = 0; j < n && !changed; j++) changed = planned[j].from != j + 1;
  if (!changed) return note_live(run);
  if (n == 0 && d->created == kPo_OwnedCreated_Us && !d->spec_other) return -1; /* the plan deletes it */
  size_t len = 0;
  const char *delta = po_ConsulDigest_Delta(d->n, planned, n, d->rv, run->ar, &len);
  if (!delta) return -1;
  if (!note_writing(run)) return !run->r.out_of_memory; /* as below */
  po_TargetIndex_NoteTargetWriteOver(run->ix, run->key, d->rv);
  po_CtlStatus st;
  po_WrittenVersion made = {.uid = {0}};
  po_WriteResult w = run->io->update_target(run->io->ctx, run->kind, run->ns, run->name, NULL, delta, len, &made, &st);
  if (w == kPo_WriteResult_Ok) po_TargetIndex_NoteTargetWritten(run->ix, run->key, made.uid, made.rv);
  run->target_wrote = w == kPo_WriteResult_Ok;
  /* Refused as Invalid (422): the API server applies a patch's operations before it compares the
   * version, so one over an object that moved on (a tenant's edit the cache has not seen) can
   * fail them first. The write below sends the object whole over the same version to tell a
   * conflict from a refusal; without the object, it is retried as a conflict, and the retry reads
   * the object (test_digest_adv's test_stale_cache_patch_refused_is_a_conflict). */
  if (w == kPo_WriteResult_Failed && st.code == kPo_Ctl_Invalid) w = kPo_WriteResult_Conflict;
  if (w != kPo_WriteResult_Ok) {
    /* the next reconcile reads the object (a refusal it alone can tell from a conflict: below) */
    po_TargetIndex_SetDigest(run->ix, run->key, NULL);
    snprintf(run->target_err, sizeof run->target_err, "%.500s", st.message);
    po_TargetIndex_NoteTargetWrite(run->ix, run->key, NULL);
    run->target_ok = false;
    run->target_conflict = w == kPo_WriteResult_Conflict;
    po_Run_Fail(run, w, po_Arena_Printf(run->ar, "writing %s", run->where), run->target_err);
    return 1;
  }
  written(run, false, false, d->rv);
  /* the version written: the digest's other extensions, and ours as planned */
  po_TargetDigest next = *d;
  snprintf(next.uid, sizeof next.uid, "%s", made.uid);
  snprintf(next.rv, sizeof next.rv, "%s", made.rv);
  next.n = n;
  next.slots = po_Arena_Malloc(run->ar, (n ? n : 1) * sizeof *next.slots);
  for (size_t j = 0; next.slots && j < n; j++) {
    next.slots[j] = planned[j].from ? d->slots[planned[j].from - 1] : planned_slot(run, planned[j].want);
  }
  po_TargetIndex_SetDigest(run->ix, run->key, next.slots && *made.uid && *made.rv ? &next : NULL);
  return 1;
}

/* The write from the digest (write_from_digest), when it suffices: 1 or 0, done (0: the reconcile
 * ends); -1: go on with the object (read now, the entries wanted anew from it). */
static int write_digest_first(po_Run *run, size_t nwant) {
  if (!run->digest) return -1;
  int done = write_from_digest(run, nwant);
  if (done >= 0) return done;
  if (!need_tree(run)) return 0;
  for (size_t k = 0; k < run->nwant; k++) json_object_put(run->want[k].arguments);
  run->nwant = 0;
  return -1;
}

/* target_current over the object; where digests are read, the digest of the version found current
 * is kept for the next reconcile. */
static bool current_kept(po_Run *run, size_t nwant, const char *tuid) {
  if (!digests_read(run) || !run->target) return target_current(run, nwant, NULL);
  json_object *list = po_Json_Get(po_Json_Get(run->target, "spec"), "envoyExtensions");
  size_t n = list && json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
  const po_RunItem **item_of = po_Arena_Malloc(run->ar, (n ? n : 1) * sizeof *item_of);
  if (!item_of || !target_current(run, nwant, item_of)) return false;
  keep_digest(run, run->target, tuid, po_Json_Meta(run->target, "resourceVersion"), item_of, NULL);
  return true;
}

/* The plan sent: the update of an existing target (a JSON Patch of the change when delta_of can
 * make one), else the object's create, replacement or deletion; the version it made noted, and
 * its digest kept. */
static void send_plan(po_Run *run, const po_ConsulPlan *p, bool annotate) {
  /* Type-checked: the target is the informer's shared tree, and json_object_get_string on a
   * non-string writes its serialisation into the object. */
  const char *rv = po_Json_Meta(run->target, "resourceVersion");
  /* Noted before the write: its echo can come through the watch before the answer does. */
  bool note = !p->remove && !p->create && p->object;
  if (note) po_TargetIndex_NoteTargetWrite(run->ix, run->key, p->object);
  po_CtlStatus st;
  po_WrittenVersion made = {.uid = {0}};
  size_t delta_len = 0;
  const char *delta = note && run->io->update_target ? delta_of(run, p->object, annotate, rv, &delta_len) : NULL;
  po_WriteResult w = note && run->io->update_target
                         ? run->io->update_target(run->io->ctx, run->kind, run->ns, run->name, p->object, delta, delta_len,
                                                  &made, &st)
                         : run->io->write_target(run->io->ctx, run->kind, run->ns, run->name, p->remove ? NULL : p->object,
                                                 p->create, rv, NULL, &st);
  /* the version the echo will carry ("" unknown: the echo is reconciled) */
  if (note && w == kPo_WriteResult_Ok) po_TargetIndex_NoteTargetWritten(run->ix, run->key, made.uid, made.rv);
  if (note && w == kPo_WriteResult_Ok) keep_planned(run, p->object, made.uid, made.rv);
  else if (w != kPo_WriteResult_Ok) po_TargetIndex_SetDigest(run->ix, run->key, NULL);
  run->target_wrote = w == kPo_WriteResult_Ok;
  if (w != kPo_WriteResult_Ok) snprintf(run->target_err, sizeof run->target_err, "%.500s", st.message);
  if (w == kPo_WriteResult_NotFound && p->remove) w = kPo_WriteResult_Ok;
  /* deleted by us: a reconcile that finds no target must not wait for our create's event */
  if (w == kPo_WriteResult_Ok && p->remove) po_TargetIndex_ObjectSeen(run->ix, po_TargetKind_Name(run->kind), run->ns, run->name, NULL);
  if (w != kPo_WriteResult_Ok) {
    if (note) po_TargetIndex_NoteTargetWrite(run->ix, run->key, NULL); /* nothing of ours to come back */
    run->target_ok = false;
    run->target_conflict = w == kPo_WriteResult_Conflict;
    /* not bound yet: the statuses record it (status.created), in case this process goes first */
    if (annotate) snprintf(run->unbound_uid, sizeof run->unbound_uid, "%s", po_Json_Meta(run->target, "uid"));
    po_Run_Fail(run, w, po_Arena_Printf(run->ar, "writing %s", run->where), run->target_err);
  } else {
    written(run, p->remove, annotate, rv);
  }
}

static bool write_target(po_Run *run) {
  size_t nwant = 0;
  for (size_t i = 0; i < run->m; i++) nwant += po_Run_HasEntry(&run->items[i]);
  run->target_ok = true;
  int from_digest_done = write_digest_first(run, nwant);
  if (from_digest_done >= 0) return from_digest_done;
  if (!run->target && nwant > 0 && run->io->names &&
      po_TargetNames_Elsewhere(run->io->names, run->kind, run->name, run->ns, run->elsewhere, sizeof run->elsewhere)) {
    /* Not created: consul-k8s would sync both into one Consul config entry (refusing ours, or
     * overwriting theirs). Looked at again now and then: that one may go away. */
    run->target_ok = false;
    po_Run_RecheckIn(run, kPo_ReconcileElsewhereRecheckS);
    return true;
  }
  /* Created by us a moment ago and not in the cache yet (its ADDED event has not come): a create
   * now is answered 409 AlreadyExists, and was retried with backoff until the cache caught up (7
   * times in 700 ms under deploy/'s ServiceAccount). Put off as a write over a version the cache
   * is behind is; the event, or the recheck, reconciles it. */
  if (!run->target && nwant > 0 &&
      po_TargetIndex_ObjectMade(run->ix, po_TargetKind_Name(run->kind), run->ns, run->name, NULL) == kPo_ObjectMade_Behind) {
    run->deferred = true;
    po_Run_RecheckIn(run, 1);
    return true;
  }
  if (!run->target && nwant > 0 && !create_target(run)) return true; /* the statuses say why */
  /* Created by this process and not annotated yet (the write after the create failed): the
   * annotation goes into this reconcile's write, on our own copy (the cached one is shared). */
  bool annotate = run->target && po_Owned_CreatedBy(run->target) == kPo_OwnedCreated_No &&
                  (po_TargetIndex_WasCreated(run->ix, po_Json_Meta(run->target, "uid"), false) || created_recorded(run));
  if (run->r.out_of_memory) return false;
  if (annotate && !run->own) {
    if (!(run->own = po_Run_Copy(run->target))) return po_Run_Oom(run, "annotating the target");
    run->target = run->own;
  }
  if (annotate && !po_Owned_MarkCreated(run->own)) return po_Run_Oom(run, "annotating the target");
  const char *tuid = po_Json_Meta(run->target, "uid");
  if (run->target && !*tuid) {
    /* Without a uid nothing can be bound to it: writing would add an unbound entry each time. */
    run->target_ok = false;
    snprintf(run->target_err, sizeof run->target_err, "the object has no metadata.uid");
    po_Run_Fail(run, kPo_WriteResult_Failed, po_Arena_Printf(run->ar, "reading %s", run->where), run->target_err);
    return true;
  }
  if (run->target && po_TargetIndex_CacheBehind(run->ix, run->key, tuid, po_Json_Meta(run->target, "resourceVersion"))) {
    /* The cache still holds the version our last write replaced: judged there, a deleted
     * PropertyOverride's entry that write added would look gone already (chaos.py's seed 7
     * under a dropped watch: its finalizer released, the entry kept). Its echo is reconciled
     * (no longer taken as ours); the recheck covers an echo that never comes. */
    run->deferred = true;
    po_Run_RecheckIn(run, 1);
    return true;
  }
  if (!annotate && current_kept(run, nwant, tuid)) return note_live(run);
  if (!wanted(run, tuid)) return false;
  po_ConsulPlan p = po_Consul_Plan(run->target, run->kind, run->ns, run->name, run->owners, run->nowners, run->want,
                                   run->nwant);
  if (p.out_of_memory) return po_Run_Oom(run, po_Arena_Printf(run->ar, "planning %s", run->where));
  if (annotate && !p.remove && p.object) p.changed = true; /* the annotation alone is a change */
  if (!p.changed) {
    if (run->target) keep_planned(run, p.object, tuid, po_Json_Meta(run->target, "resourceVersion"));
    json_object_put(p.object);
    return note_live(run);
  }
  /* what the write adds, known before it is made: an event of the version before it is added to
   * that, never taken for all the target holds (po_TargetIndex_NoteTargetEntries) */
  if (!note_writing(run)) {
    json_object_put(p.object);
    return !run->r.out_of_memory; /* refused: as a failed write, the statuses wait (target_conflict) */
  }
  if (p.changed && !p.remove && !record_write(run, p.object)) {
    json_object_put(p.object);
    return !run->r.out_of_memory;
  }
  send_plan(run, &p, annotate); /* p.changed */
  json_object_put(p.object);
  return true;
}

/* ---- status ---- */

/* The write record under require (sync.h), and consul-k8s's word on it. */
static void status_begin(po_Run *run) {
  if (!requires_sync(run)) return;
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
  po_Sync_Judge(run->io->sync, run->target, &run->record, po_Run_NowS(run), run->where, &run->sync);
}

/* The target created and not bound (status.created); what is live when the write failed. */
static void status_object(po_Run *run, size_t i, po_OverrideStatus *s, int64_t *live_gen) {
  const po_RunItem *it = &run->items[i];
  if (*run->unbound_uid && po_Run_HasEntry(it)) s->created_ns = run->ns, s->created_name = run->name, s->created_uid = run->unbound_uid;
  LiveIter li = live_of(run, it->name, it->uid);
  for (const po_ConsulEntry *e; !run->target_ok && (e = live_next(&li));) *live_gen = e->generation; /* its last */
}

/* Whether a target as the API server holds it carries an entry this reconcile would remove once
 * its cache held it: ours (po_Consul_OwnedEntries: named builtin/property-override, bound to
 * that object's uid) and of this PropertyOverride (its name and uid). A look-alike carrying the
 * uid (copied from another object, an extension of another name) is someone else's, kept by every
 * plan: waited for, it would hold the finalizer for good. */
static bool holds_entry_of(const json_object *target, const po_RunItem *it) {
  po_ConsulOwner me = {it->name, it->uid};
  return target && po_Consul_OwnedEntries(target, &me, 1, NULL, 0, NULL) > 0;
}

/* The finalizer is all that removes a deleted PropertyOverride's entry: an entry naming one that
 * no longer exists is someone else's (ForeignEntry). A reconcile that wrote the target knows the
 * server holds its plan (the update was made over the version read). One that wrote nothing
 * judged the cache, which can be behind a write whose echo has not come and which no note of
 * this process covers (its answer lost; a leader before this one): the server is asked, once
 * per reconcile. Deletions only: creates and edits never come here. */
static bool release_guard(po_Run *run, po_RunItem *it) {
  if (run->target_wrote || !run->io->read_target) return true;
  if (run->server_read == 0) {
    po_CtlStatus st;
    run->server = run->io->read_target(run->io->ctx, run->kind, run->ns, run->name, &st);
    run->server_read = run->server || st.code == kPo_Ctl_NotFound ? 1 : -1;
    if (run->server_read < 0) {
      if (st.code == kPo_Ctl_NoMemory) run->r.out_of_memory = true;
      po_Run_Fail(run, kPo_WriteResult_Failed,
                  po_Arena_Printf(run->ar, "reading %s from the API server before removing the finalizer of %s",
                                  run->where, it->name), st.message);
    }
  }
  if (run->server_read < 0) return false;
  if (!holds_entry_of(run->server, it)) return true;
  po_Run_Fail(run, kPo_WriteResult_Conflict, po_Arena_Printf(run->ar, "deleting %s", it->name),
              po_Arena_Printf(run->ar, "%s on the API server still holds its entry (this controller's cache is behind it); "
                              "the finalizer stays until the entry is removed", run->where));
  return false;
}

/* One write for all: its entry is gone once the target's write succeeded, or when the cache
 * holds no target at all (nothing created: another namespace holds the name, or the create
 * failed), where a deleted PropertyOverride waited for a write that another one's state kept
 * from coming. release_guard asks the server before its finalizer goes either way. */
static bool item_failed(const po_Run *run, size_t i) {
  (void)i;
  return !run->target_ok && (run->target || run->digest);
}

static bool not_programmed(po_Run *run, size_t i, int64_t live_gen, po_Condition *p) {
  const po_RunItem *it = &run->items[i];
  if (it->over_limit) {
    p->reason = "TargetFull";
    snprintf(p->message, sizeof p->message,
             "%s has no room for this entry: at most %d builtin/property-override entries and %d patches per object; "
             "entries already live keep their place, newcomers are placed by name, and this one comes after the limit",
             run->where, (int)kPo_MaxExtensionsPerConsulObject, (int)kPo_MaxPatchesPerConsulObject);
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
  } else if (!run->target_ok && !*run->elsewhere) {
    p->reason = "TargetError";
    snprintf(p->message, sizeof p->message, "%s (retrying); %s", run->target_err,
             live_gen ? po_Arena_Printf(run->ar, "generation %lld is live", (long long)live_gen) : "nothing is live");
  } else {
    return false;
  }
  return true;
}

/* Composed, not printed: every PropertyOverride of the target, every reconcile (po/base/text.h). */
static void programmed_message(po_Run *run, size_t i, int64_t live_gen, po_Condition *p, bool more) {
  (void)i;
  po_Text t = po_Text_At(p->message, sizeof p->message);
  po_Text_Put(&t, "generation "), po_Text_PutI64(&t, live_gen), po_Text_Put(&t, " is live in "), po_Text_Put(&t, run->where);
  if (requires_sync(run)) po_Text_Put(&t, ", synced into Consul by consul-k8s");
  if (more) po_Text_Put(&t, "; ");
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
static bool apply_sync(po_Run *run, po_RunItem *it, int64_t live_gen, po_Condition *p, bool *event) {
  *event = false;
  if (!requires_sync(run) || strcmp(p->status, "True") != 0 || run->sync.state == kPo_SyncState_Live) return true;
  if (!po_Run_NeedObj(run, it)) return false;
  if (already_live(it->obj, live_gen)) return true;
  bool failed = run->sync.state == kPo_SyncState_Failed;
  p->status = "False";
  p->reason = failed ? "SyncFailed" : "Pending";
  snprintf(p->message, sizeof p->message, "%s; generation %lld is written, not yet live", run->sync.message, (long long)live_gen);
  if (failed) return true;
  po_Run_RecheckIn(run, run->sync.recheck_in_s);
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

/* ---- the admission view ---- */

/* The mutating webhook's answer for an incoming target: our entries as the plan wants them. */
static po_DesiredResult desired(po_Run *run, const json_object *incoming, json_object **extensions) {
  po_DesiredResult res = kPo_Desired_Keep;
  if (!wanted(run, po_Json_Meta(incoming, "uid"))) return res;
  po_ConsulPlan p = po_Consul_Plan(incoming, run->kind, run->ns, run->name, run->owners, run->nowners, run->want, run->nwant);
  json_object *list = po_Json_Get(po_Json_Get(p.object, "spec"), "envoyExtensions");
  if (p.out_of_memory) {
    po_Run_Oom(run, "the plan");
  } else if (p.object && !p.create && p.changed && list) {
    *extensions = json_object_get(list);
    res = kPo_Desired_Set;
  }
  json_object_put(p.object);
  return res;
}

extern const po_ReconcileMesh po_Consul_Reconcile;
const po_ReconcileMesh po_Consul_Reconcile = {
    .from_digest = from_digest,
    .extra_items = extra_items,
    .load = load,
    .held_generation = held_generation,
    .record_bound = record_bound,
    .keep_live = keep_live,
    .plan = plan_room,
    .moves_wait = true,
    .write = write_target,
    .status_begin = status_begin,
    .status_object = status_object,
    .item_failed = item_failed,
    .release_guard = release_guard,
    .not_programmed = not_programmed,
    .programmed_message = programmed_message,
    .confirm = apply_sync,
    .desired = desired,
};
