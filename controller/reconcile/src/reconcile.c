/* po_Reconcile in four phases over one run (run.h): load (the target, its PropertyOverrides, their
 * compiled forms, what the target holds for them), plan (what each contributes), write
 * (finalizers, then the target's objects), status. The phases are in the order of reconcile.h's
 * contract and the same for every mesh; what differs per mesh is the mesh's part of a reconcile
 * (po_ReconcileMesh, in its folder controller/meshes/<mesh>/reconcile/), asked through the
 * reconciler's table (meshes.c). Each phase returns false when the reconcile must end there (the
 * reason is in run->r). */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "po/base/text.h"
#include "po/meshes/mesh.h"
#include "po/targets/owned.h"
#include "po/targets/tenancy.h"
#include "run.h"

/* The part of this target's mesh (run.h). */
static const po_ReconcileMesh *mesh(const po_Run *run) { return po_ReconcileMesh_For(run->kind); }

/* ---- finalizers ---- */

/* ---- keys ---- */


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

static void report_foreign(po_Run *run) {
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

/* A new item taking obj and ref (released with the run's items whatever happens), its texts
 * copied into the run's arena (run.h); NULL (po_Run_Oom) when memory ran out. */
static po_RunItem *new_item(po_Run *run, const json_object *obj, void *ref, const char *ns, const char *name,
                            const char *uid, const char *rv, const char *k, const char *hk) {
  po_RunItem *it = &run->items[run->m++];
  it->obj = obj;
  it->ref = ref;
  it->held = strcmp(k, run->key) != 0;
  it->held_key = po_Run_Text(run, it->held ? "" : hk, kPo_RunItemKeySize);
  it->home_key = po_Run_Text(run, it->held ? k : "", kPo_RunItemKeySize);
  it->ns = po_Run_Text(run, ns && *ns ? ns : run->ns, kPo_RunItemNameSize);
  it->name = po_Run_Text(run, name, kPo_RunItemNameSize);
  it->uid = po_Run_Text(run, uid, kPo_RunItemIdSize);
  it->rv = po_Run_Text(run, rv, kPo_RunItemIdSize);
  it->memo_rv = it->rv;
  it->refusal = it->mismatch = "";
  if (!it->held_key || !it->home_key || !it->ns || !it->name || !it->uid || !it->rv) {
    it->held_key = it->home_key = it->ns = it->name = it->uid = it->rv = it->memo_rv = ""; /* read by nothing, but never NULL */
    po_Run_Oom(run, "loading the PropertyOverrides of the target");
    return NULL;
  }
  it->other_ns = strcmp(it->ns, run->ns) != 0;
  return it;
}

/* One PropertyOverride of the key as an item (taking obj and ref), compiled; false when
 * memory ran out. k and hk are its current and held keys. */
bool po_Run_AddItem(po_Run *run, const json_object *obj, void *ref, const char *ns, const char *name, const char *k,
                     const char *hk) {
  json_object *rv = po_Json_Get(po_Json_Get(obj, "metadata"), "resourceVersion");
  po_RunItem *it = new_item(run, obj, ref, ns, name, po_Json_Meta(obj, "uid"), rv ? json_object_get_string(rv) : "", k, hk);
  if (!it) return false;
  it->deleting = po_Json_Get(po_Json_Get(obj, "metadata"), "deletionTimestamp") != NULL;
  it->has_finalizer = po_Run_HasFinalizer(obj);
  run->owners[run->nowners++] = (po_ConsulOwner){it->name, it->uid};
  bool out_of_memory;
  it->ce = po_TargetIndex_Compiled(run->ix, obj, kPo_CompileWhich_Current, &out_of_memory);
  if (!it->ce) return po_Run_Oom(run, po_Arena_Printf(run->ar, "compiling %s", it->name));
  if (!it->deleting && it->has_finalizer && *it->rv && strlen(it->uid) < sizeof ((po_OverrideMemo *)0)->uid) {
    po_OverrideMemo m = {.generation = it->ce->generation, .spec_hash = it->ce->hash};
    po_Run_CopyText(m.rv, sizeof m.rv, it->rv);
    po_Run_CopyText(m.uid, sizeof m.uid, it->uid);
    po_TargetIndex_MemoSet(run->ix, it->ns, name, &m, k, hk);
  }
  /* The admission view, asked during our own target write: a finalizer that write's reconcile
   * added just before is ours though the cache does not show it yet (po_TargetIndex_FinalizerWritten). */
  if (run->dry && !it->has_finalizer && !it->deleting &&
      po_TargetIndex_FinalizerWritten(run->ix, it->ns, it->name, it->uid, it->ce->generation))
    it->has_finalizer = true;
  return true;
}

/* From the memo of an unchanged PropertyOverride (not being deleted, finalizer in place): no
 * read. ce: the compiled form po_TargetIndex_MemoCompiled found with the memo (taken: kept by the
 * item, or released). *added false when it is no longer cached (ce NULL): then it is read. False
 * when memory ran out (po_Run_Oom). */
static bool add_memo_item(po_Run *run, const char *ns, const char *name, const po_OverrideMemo *m, const char *k,
                          const char *hk, const po_CompiledEntry *ce, bool *added) {
  if (!(*added = ce != NULL)) return true;
  po_RunItem *it = new_item(run, NULL, NULL, ns, name, m->uid, m->rv, k, hk);
  if (it) it->ce = ce;
  else po_CompiledEntry_Release(ce);
  if (!it) return false;
  it->from_memo = true;
  it->memo_status_hash = m->status_hash;
  it->memo_written_hash = m->written_hash;
  it->has_finalizer = true;
  run->owners[run->nowners++] = (po_ConsulOwner){it->name, it->uid};
  return true;
}

/* The PropertyOverrides the index lists for the key, as the cache has them: their names and uids
 * are what an entry's marker must name (with this target's uid) to be ours. */
static bool load_overrides(po_Run *run) {
  const po_ReconcileIO *io = run->io;
  for (size_t i = 0; i < run->n; i++) {
    char k[600], hk[600], ns[254];
    const char *slash = strchr(run->names[i], '/'), *name = slash ? slash + 1 : run->names[i];
    size_t nl = slash ? (size_t)(slash - run->names[i]) : 0;
    if (nl >= sizeof ns) nl = sizeof ns - 1;
    memcpy(ns, run->names[i], nl);
    ns[nl] = '\0';
    po_OverrideVersion v;
    po_OverrideMemo m;
    const po_CompiledEntry *ce = NULL;
    if (io->override_version && io->override_version(io->ctx, ns, name, &v) &&
        po_TargetIndex_MemoCompiled(run->ix, ns, name, &v, &m, k, hk, sizeof k, &ce)) {
      if (strcmp(k, run->key) != 0 && strcmp(hk, run->key) != 0) { /* points elsewhere now */
        po_CompiledEntry_Release(ce);
        continue;
      }
      bool added;
      if (!add_memo_item(run, ns, name, &m, k, hk, ce, &added)) return false;
      if (added) continue;
    }
    void *ref = NULL;
    po_CtlStatus st;
    const json_object *obj = io->get_override(io->ctx, ns, name, &ref, &st);
    if (!obj && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st); /* not absent: its entry would go */
    if (!obj) continue;
    po_Reconcile_OverrideKey(obj, k, sizeof k);
    po_Reconcile_HeldKey(obj, hk, sizeof hk);
    if (strcmp(k, run->key) != 0 && strcmp(hk, run->key) != 0) { /* the cache moved on since the index was read */
      po_Run_Release(run, obj, ref);
      continue;
    }
    if (!po_Run_AddItem(run, obj, ref, ns, name, k, hk)) return false;
  }
  return true;
}

static bool load(po_Run *run) {
  const po_ReconcileIO *io = run->io;
  po_CtlStatus st;
  /* a target that could not be read is not a missing one (created again, its entries lost) */
  if (!run->dry && !(mesh(run)->from_digest && mesh(run)->from_digest(run)) &&
      !(run->read = io->get_target(io->ctx, run->kind, run->ns, run->name, &run->read_ref, &st)) && st.code != kPo_Ctl_Ok)
    return po_Run_ReadFailed(run, &st);
  run->target = run->read;
  run->n = lookup(run->ix, run->key, &run->names);
  if (run->n == (size_t)-1) {
    run->n = 0;
    return po_Run_Oom(run, "listing the PropertyOverrides of the target");
  }
  /* Tables sized to this target: a reconcile runs on every change, so nothing fixed-size and
   * large is allocated (and zeroed) per call. */
  size_t cap = run->n ? run->n : 1;
  run->items = calloc(cap, sizeof *run->items);
  run->owners = malloc(cap * sizeof *run->owners); /* grown by the mesh's load */
  run->want = malloc(cap * sizeof *run->want);
  if (!run->items || !run->owners || !run->want) return po_Run_Oom(run, "loading the PropertyOverrides of the target");
  /* Room for PropertyOverrides the index missed, found in the target itself by its mesh. */
  size_t nbound = mesh(run)->extra_items ? mesh(run)->extra_items(run) : 0;
  /* Its count unread (0) and the mesh's load going on, an item found there would be added past
   * the table (test_reconcile_oom's test_unlisted_entry_at_any_failed_allocation). */
  if (run->r.out_of_memory) return false;
  if (nbound) {
    po_RunItem *items = realloc(run->items, (cap + nbound) * sizeof *items);
    po_ConsulEntry *want = realloc(run->want, (cap + nbound) * sizeof *want);
    if (items) run->items = items;
    if (want) run->want = want;
    if (!items || !want) return po_Run_Oom(run, "loading the PropertyOverrides of the target");
    memset(run->items + cap, 0, nbound * sizeof *items);
  }
  if (!load_overrides(run) || (mesh(run)->load && !mesh(run)->load(run))) return false;
  run->r.foreign_object = run->target && po_Owned_CreatedBy(run->target) == kPo_OwnedCreated_Foreign;
  if (!run->dry) report_foreign(run);
  return true;
}

/* ---- phase 2: plan ---- */

/* Whether status.lastValid, compiled valid for this very target (`rec`), is a record this
 * controller made. The status subresource can be written by others than the controller (a CI
 * robot, a namespace admin granted it), and a record is only a claim: it is honoured when it names
 * no generation above metadata.generation and either this process recorded exactly it (same
 * generation, same spec: po_TargetIndex_IsOwnLastValid), or the target holds what the controller
 * wrote for it, which survives a restart: for Consul the entry of this PropertyOverride bound to
 * this target, whose marker names that generation and priority and whose arguments are exactly the
 * record's compiled ones (the keyed hash: no collision can be aimed). An Istio or Envoy Gateway
 * record is compared with its object by the write phase (it->unverified: written only where the
 * object already holds exactly it). Else it->mismatch says why it is ignored. The generation's
 * range is checked here; the rest is the mesh's (po_ReconcileMesh.record_bound). */
static bool record_bound(po_Run *run, po_RunItem *it, const po_CompiledEntry *rec) {
  int64_t g = rec->generation, now = it->ce->c.generation;
  if (g < 1 || g > now) {
    po_Run_Mismatch(run, it,
                    "status.lastValid names generation %lld, but metadata.generation is %lld: it was not written by "
                    "this controller and is ignored", (long long)g, (long long)now);
    return false; /* out of memory: run->r says so */
  }
  return mesh(run)->record_bound(run, it, rec);
}

/* An invalid generation never removes what is live: the last valid one stays, recompiled from
 * the status record (never taken verbatim: the engine judges it again, for this very target) when
 * the record is one this controller made (record_bound), or, without a usable record (a status
 * write that failed, a record that does not match), the entry written for this very
 * PropertyOverride, if Consul's check still accepts it. */
static bool keep_last_valid(po_Run *run, po_RunItem *it) {
  if (!po_Run_NeedObj(run, it)) return false;
  bool out_of_memory = false;
  const po_CompiledEntry *rec = po_TargetIndex_Compiled(run->ix, it->obj, kPo_CompileWhich_Record, &out_of_memory);
  if (out_of_memory) return po_Run_Oom(run, po_Arena_Printf(run->ar, "compiling the last valid record of %s", it->name));
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
  if (run->r.out_of_memory) return false; /* what proves the record could not be read */
  return !mesh(run)->keep_live || mesh(run)->keep_live(run, it);
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
static bool move_waits(po_Run *run, const po_RunItem *it) {
  char why[1024];
  po_TargetKind now = it->ce->c.target_kind;
  return mesh(run)->moves_wait && *it->ce->target_key &&
         po_Tenancy_Allows(run->io->tenancy, now, it->ns, why, sizeof why);
}

static bool plan(po_Run *run) {
  for (size_t i = 0; i < run->m; i++) {
    po_RunItem *it = &run->items[i];
    if (it->deleting) continue;
    /* the PropertyOverride's own namespace is asked about, not the target's: they differ when
     * targetRef.namespace names another (the key put it here) */
    /* and the namespace of this very target too: an item held here by its last valid record (an
     * invalid generation pointing elsewhere) is judged by where its entry would be written, not
     * by its current spec, so a revoked policy or a forged status.lastValid reaches nothing */
    char why[kPo_RunItemRefusalSize]; /* the cut the refusal always had; not zeroed whole */
    why[0] = '\0';
    if (!po_Tenancy_Allows(run->io->tenancy, run->kind, it->ns, why, sizeof why) ||
        !po_Tenancy_AllowsNamespace(run->io->tenancy, it->ce->c.target_kind, it->ns, it->ce->c.target_ns, why,
                                    sizeof why) ||
        !po_Tenancy_AllowsNamespace(run->io->tenancy, run->kind, it->ns, run->ns, why, sizeof why)) {
      it->refused = true;
      if (!(it->refusal = po_Run_Text(run, why, sizeof why))) {
        it->refusal = "";
        return po_Run_Oom(run, po_Arena_Printf(run->ar, "the refusal of %s", it->name));
      }
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
    if (!run->items[i].has_finalizer) po_Run_DropEntry(&run->items[i]);
  }
  if (mesh(run)->plan) mesh(run)->plan(run); /* Consul: the room the entries share */
  return true;
}

/* ---- phase 3: write ---- */

/* Our finalizer on each PropertyOverride that can reach the target, before the target is
 * written: its deletion must wait for the cleanup. */
/* A PropertyOverride given our finalizer by this reconcile: its memo at the version the write made
 * (the answer's), which po_Run_AddItem could not keep (read without the finalizer). A merge patch
 * of metadata.finalizers over the version read changes nothing else a reconcile reads. The status
 * write that follows and its echo move the memo on as any (MemoWritten, IsOwnOverrideWrite), so
 * the target's next reconcile takes it from there: each new PropertyOverride was read, parsed and
 * compiled again by that reconcile. */
static void memo_finalized(po_Run *run, po_RunItem *it, const po_WrittenVersion *wv) {
  po_OverrideMemo m = po_Run_OwnVersion(it);
  if (!wv->finalized || !*wv->rv || strlen(wv->rv) >= sizeof m.rv || wv->generation != m.generation ||
      strcmp(wv->uid, it->uid) != 0 || strlen(it->uid) >= sizeof m.uid)
    return;
  const char *rv = po_Run_Text(run, wv->rv, kPo_RunItemIdSize);
  if (!rv) return; /* out of memory: no memo, the object is read next time */
  po_Run_CopyText(m.rv, sizeof m.rv, wv->rv);
  po_TargetIndex_MemoSet(run->ix, it->ns, it->name, &m, run->key, it->held_key);
  it->memo_rv = rv;
}

static bool write_finalizers(po_Run *run) {
  for (size_t i = 0; i < run->m; i++) {
    po_RunItem *it = &run->items[i];
    if (it->deleting || it->has_finalizer || it->refused || it->held) continue;
    if (!po_Run_NeedObj(run, it)) return false;
    json_object *patch = po_Run_FinalizerPatch(it->obj, true);
    if (!patch) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the finalizer of %s", it->name));
    po_CtlStatus pst;
    po_OverrideMemo m = po_Run_OwnVersion(it);
    /* noted before the write: its echo can come through the watch before the answer does */
    po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 0, po_Json_Get(it->obj, "status"), 0, false);
    po_WrittenVersion wv = {.generation = 0};
    po_WriteResult w = run->io->patch_override(run->io->ctx, it->ns, it->name, false, patch, &wv, &pst);
    json_object_put(patch);
    if (w != kPo_WriteResult_Ok) po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 0, NULL, 0, true);
    else po_TargetIndex_NoteOverrideAnswer(run->ix, it->ns, it->name, &wv), memo_finalized(run, it, &wv);
    if (w == kPo_WriteResult_NotFound) {
      /* Gone from the server, though the cache still shows it: deleted before it had our
       * finalizer, so nothing waits for a cleanup. Its entry written now would name a
       * PropertyOverride that no longer exists, someone else's to every later reconcile
       * (ForeignEntry), kept for good (chaos.py's seed 13). Planned as a deleted one: no entry,
       * its mesh objects removed, no status (test_override_gone_before_its_finalizer_gets_no_entry). */
      it->deleting = true;
      po_Run_DropEntry(it);
    } else if (w != kPo_WriteResult_Ok) {
      po_Run_Fail(run, w, "adding the finalizer", pst.message);
    }
  }
  return run->r.ok;
}

/* The mesh objects of this target's PropertyOverrides left where they pointed before (another
 * mesh, or the other Istio place): every mesh's sweep, in the table's order. A failure is retried
 * before any status is written (one that said Programmed could hide the leftover). */
static void sweep(po_Run *run) {
  for (size_t i = 0; i < run->m && run->r.ok; i++) {
    const po_RunItem *it = &run->items[i];
    /* held here: this target's write decides; invalid with its last valid generation live
     * elsewhere: kept there */
    if (it->held || (*it->held_key && !it->ce->c.accepted)) continue;
    int writes = 0;
    for (size_t k = 0; k < po_ReconcileMesh_Count(); k++) {
      const po_ReconcileMesh *m = po_ReconcileMesh_At(k);
      if (m->sweep && !m->sweep(run, i, &writes)) break;
    }
    run->r.targets_written += writes;
  }
}

/* Finalizers, the target's objects, then the leftovers elsewhere. A failed sweep is in run->r
 * (not ok, and target_conflict: no status is written this time) and does not end the reconcile
 * here: the status phase sees it. */
static bool write(po_Run *run) {
  if (!write_finalizers(run) || !mesh(run)->write(run)) return false;
  sweep(run);
  return true;
}

/* ---- phase 4: status ---- */

/* Its entry is gone from the target once the write succeeded; where its last valid generation
 * was held (another target) it must be gone too before the finalizer goes. */
static bool release_finalizer(po_Run *run, po_RunItem *it) {
  bool gone = !mesh(run)->item_failed(run, (size_t)(it - run->items));
  if (!gone || !it->has_finalizer) return true;
  int64_t held = *it->held_key ? po_Run_HeldGeneration(run, it) : 0;
  if (held < 0) return false; /* not read: the finalizer stays */
  if (held > 0) {
    po_Run_Fail(run, kPo_WriteResult_Conflict, po_Arena_Printf(run->ar, "deleting %s", it->name),
         po_Arena_Printf(run->ar, "waiting for %s to drop its entry", it->held_key));
    return true;
  }
  /* Any other target holding an entry of it: one it moved away from (its move recorded, nothing
   * else links it there), whose reconcile has not removed the entry yet. That reconcile still
   * finds this PropertyOverride (deleting, its finalizer in place) and removes it; released now,
   * the entry would name a PropertyOverride that is gone, someone else's for good. */
  size_t others = 0;
  char *keys = po_TargetIndex_ClaimRelease(run->ix, it->ns, it->name, it->uid, run->key, &others);
  if (others && !keys) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the targets holding %s", it->name));
  if (others) {
    size_t n = others;
    for (const char *k = keys; run->io->enqueue && n > 0; n--, k += strlen(k) + 1) run->io->enqueue(run->io->enqueue_ctx, k);
    po_Run_Fail(run, kPo_WriteResult_Conflict, po_Arena_Printf(run->ar, "deleting %s", it->name),
                po_Arena_Printf(run->ar, "waiting for %s%s to drop its entry", keys,
                                others > 1 ? po_Run_OrOom(po_Arena_Printf(run->ar, " (and %zu more)", others - 1)) : ""));
    free(keys);
    return true;
  }
  if (mesh(run)->release_guard && !mesh(run)->release_guard(run, it)) return true; /* run->r says why */
  if (!po_Run_NeedObj(run, it)) return false;
  json_object *patch = po_Run_FinalizerPatch(it->obj, false);
  if (!patch) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the finalizer of %s", it->name));
  po_CtlStatus pst;
  po_WriteResult w = run->io->patch_override(run->io->ctx, it->ns, it->name, false, patch, NULL, &pst);
  json_object_put(patch);
  if (w != kPo_WriteResult_Ok && w != kPo_WriteResult_NotFound) po_Run_Fail(run, w, "removing the finalizer", pst.message);
  return true;
}

static void programmed(po_Run *run, size_t i, int64_t live_gen, const po_OverlapIndex *peers, po_Condition *p) {
  const po_RunItem *it = &run->items[i];
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
  } else if (mesh(run)->not_programmed(run, i, live_gen, p)) {
    /* said */
  } else if (!it->ce->c.accepted) {
    p->reason = "Invalid";
    snprintf(p->message, sizeof p->message, "generation %lld is invalid; %s", (long long)it->ce->c.generation,
             live_gen ? po_Arena_Printf(run->ar, "generation %lld is still live in %s", (long long)live_gen, run->where)
                      : po_Arena_Printf(run->ar, "nothing is live in %s", run->where));
  } else {
    char ov[1024];
    bool overlapping = po_Overlap_Of(peers, i, ov, sizeof ov);
    if (po_OverlapIndex_OutOfMemory(peers)) po_Run_Oom(run, "the overlaps of the statuses"); /* nothing is written */
    p->status = "True";
    p->reason = overlapping ? "Overlapping" : "Programmed";
    p->caveat = !overlapping && ov[0]; /* the overlap check skipped over its bound: said, not found */
    mesh(run)->programmed_message(run, i, live_gen, p, ov[0] != 0);
    size_t len = strlen(p->message);
    po_Run_CopyText(p->message + len, sizeof p->message - len, ov);
  }
  if (it->mismatch[0]) { /* what is live was said: now why the record is not */
    size_t len = strlen(p->message);
    snprintf(p->message + len, sizeof p->message - len, "; %s", it->mismatch);
  }
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

/* The Events of a status change (po_Status_IsNews: a create simply programmed is not news), raised
 * once the status saying it is stored: a failed write is retried, and the retry finds the same
 * old status, so Events raised before the write would be raised again on every retry. (A crash
 * between the write and the Events loses them: Events are best effort, the status is the record.)
 * replaced: old_status is one our own later write replaced (the watch lags). */
static void say(po_Run *run, const po_RunItem *it, json_object *old_status, const po_OverrideStatus *s, bool timeout_event,
                bool replaced) {
  const po_ReconcileIO *io = run->io;
  if (!io->event) return;
  const po_Condition *cs[3] = {&s->accepted, &s->programmed, &s->deprecated};
  for (int k = 0; k < 3; k++) {
    if (!cs[k]->type || !po_Status_IsNews(old_status, cs[k], replaced)) continue;
    /* Pending, when news (a fixed spec written, after Invalid), is not a fault: waiting for
     * consul-k8s follows every write. */
    bool warn = cs[k] == &s->deprecated || (strcmp(cs[k]->status, "True") != 0 && strcmp(cs[k]->reason, "Pending") != 0);
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

/* status.envoyApi: which mesh release and snapshot the spec was judged against. */
static void envoy_api(const po_CompiledOverride *c, po_OverrideStatus *s) {
  if (!c->api) return;
  s->api_mesh = po_Mesh_Ops(po_TargetKind_Mesh(c->target_kind))->name;
  s->api_release = c->release ? c->release->release : "";
  s->api_snapshot = po_EnvoyApi_Version(c->api);
}

/* Accepted: refused by the tenancy policy, valid (how many patches, for which mesh, judged
 * against which Envoy API) or invalid (the compile's errors, then the same); status.envoyApi; and
 * Deprecated while the accepted spec sets fields that API deprecates. */
static void judged(const po_Run *run, const po_RunItem *it, po_OverrideStatus *s) {
  const po_CompiledOverride *c = &it->ce->c;
  po_Condition *a = &s->accepted;
  po_Condition_Init(a, "Accepted", c->accepted && !it->refused ? "True" : "False",
                    it->refused ? "TargetNotAllowed" : c->accepted ? "Accepted" : "Invalid");
  if (it->refused) {
    po_Run_CopyText(a->message, sizeof a->message, it->refusal);
  } else if (c->accepted) {
    /* "N patch(es) is/are valid for MESH and Envoy (BY)": composed, not printed (every
     * PropertyOverride of the target, every reconcile) */
    const char *by = c->judged_by ? c->judged_by : "";
    po_Text t = po_Text_At(a->message, sizeof a->message);
    po_Text_PutSize(&t, c->args->patch_count);
    po_Text_Put(&t, c->args->patch_count == 1 ? " patch is valid for " : " patches are valid for ");
    po_Text_Put(&t, po_Mesh_Ops(po_TargetKind_Mesh(run->kind))->name);
    po_Text_Put(&t, " and Envoy");
    if (*by) po_Text_Put(&t, " ("), po_Text_Put(&t, by), po_Text_Put(&t, ")");
  } else {
    po_Run_CopyText(a->message, sizeof a->message, it->ce->errors);
  }
  envoy_api(c, s);
  if (c->accepted && !it->refused && it->ce->deprecated) {
    po_Condition_Init(&s->deprecated, "Deprecated", "True", "DeprecatedFields");
    po_Run_CopyText(s->deprecated.message, sizeof s->deprecated.message, it->ce->deprecated);
  }
}

/* The status item i should have after this reconcile (but consul-k8s's confirmation): the
 * generations live and recorded, Accepted, Programmed. *record: its generation becomes the
 * last valid record. */
static void wanted_status(po_Run *run, size_t i, const po_OverlapIndex *peers, po_OverrideStatus *s,
                          int64_t *live, bool *record) {
  po_RunItem *it = &run->items[i];
  const po_CompiledOverride *c = &it->ce->c;
  po_OverrideStatus_Init(s);
  s->ns = run->ns;
  s->generation = c->generation;
  s->target_kind = run->kind;
  s->target_name = run->name;
  int64_t live_gen = run->target_ok ? it->entry_generation : 0;
  if (mesh(run)->status_object) mesh(run)->status_object(run, i, s, &live_gen);
  s->live_generation = live_gen;
  /* Moved here (its last valid record points at another target): the record moves only once
   * this target holds its patches. Until then the target it came from keeps the generation
   * last written there (move_waits), and a record naming this target would let it drop that. */
  *record = it->record && (!*it->held_key || live_gen > 0);
  if (*record) s->last_valid_generation = c->generation;
  /* the proof a later invalid generation's record is checked against (record_bound): this process
   * saw this generation admitted and wrote it */
  if (*record && live_gen > 0) po_TargetIndex_NoteLastValid(run->ix, it->ns, it->name, it->uid, c->generation, it->ce->hash);
  /* A PropertyOverride moved here (an invalid generation, or a valid one not written here yet)
   * while its last valid one stays live in the target it came from: programmedGeneration says
   * that one (it is live), as that target's reconcile last wrote it; left out, the stored one
   * never matched and every reconcile here sent the same status again
   * (test_adv_invalid_move_status_settles). */
  if (live_gen <= 0 && *it->held_key) s->live_generation = po_Run_HeldGeneration(run, it); /* -1: ends the reconcile */
  judged(run, it, s);
  programmed(run, i, live_gen, peers, &s->programmed);
  *live = live_gen;
}

static bool write_status(po_Run *run, size_t i, const po_OverlapIndex *peers, const char *now) {
  po_RunItem *it = &run->items[i];
  po_OverrideStatus s;
  int64_t live_gen;
  bool record;
  wanted_status(run, i, peers, &s, &live_gen, &record);
  if (run->r.out_of_memory) return false; /* a read of it failed: nothing is written */
  bool timeout_event = false;
  if (mesh(run)->confirm && !mesh(run)->confirm(run, it, live_gen, &s.programmed, &timeout_event)) return false;
  /* Found current at this very version by an earlier reconcile: nothing to read or compare. */
  uint64_t h = po_Status_Hash(&s, record ? it->ce->hash.lo ^ it->ce->hash.hi : 0);
  if (it->from_memo && it->memo_status_hash == h) return true;
  /* Written by us over this very version: the cache has not caught up yet. */
  if (it->from_memo && it->memo_written_hash == h) return true;
  if (!po_Run_NeedObj(run, it)) return false;
  if (record) s.last_valid_spec = po_Json_Get(it->obj, "spec");
  json_object *old_status = po_Json_Get(it->obj, "status");
  /* The cached status at this version is one our own later write replaced (the watch lags): it
   * says nothing of what the server has, so the wanted one is written. */
  bool replaced = it->from_memo && it->memo_written_hash != 0;
  if (!replaced && po_Status_Matches(old_status, &s)) { /* current: no reason changed, nothing to write */
    po_TargetIndex_MemoStatus(run->ix, it->ns, it->name, it->memo_rv, h);
    return true;
  }
  json_object *st = po_Status_Build(old_status, &s, now);
  if (!st) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the status of %s", it->name));
  const po_ReconcileIO *io = run->io;
  if (!replaced && po_Status_Same(old_status, st)) {
    json_object_put(st);
    say(run, it, old_status, &s, timeout_event, replaced);
    return true;
  }
  json_object *patch = json_object_new_object(), *sent = st;
  /* A merge patch keeps what it leaves out: a programmedGeneration nothing is live at any more
   * (its entry removed, e.g. refused, and not held in another target either) is removed
   * explicitly, else the status claims a live generation that is gone. (One held in another
   * target is in s.live_generation already: wanted_status read it there.) */
  if (s.live_generation <= 0 && po_Json_Get(old_status, "programmedGeneration")) {
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
    return po_Run_Oom(run, po_Arena_Printf(run->ar, "the status of %s", it->name));
  }
  po_CtlStatus pst;
  po_OverrideMemo m = po_Run_OwnVersion(it);
  po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 1, st, h, false);
  po_WriteResult w = io->patch_override(io->ctx, it->ns, it->name, true, patch, NULL, &pst);
  json_object_put(patch);
  if (sent != st) json_object_put(st); /* ours alone: the patch held its copy */
  if (w != kPo_WriteResult_Ok) po_TargetIndex_NoteOverrideWrite(run->ix, it->ns, it->name, &m, 1, NULL, 0, true);
  if (w == kPo_WriteResult_Ok) {
    run->r.statuses_written++;
    po_TargetIndex_MemoWritten(run->ix, it->ns, it->name, it->memo_rv, h);
    say(run, it, old_status, &s, timeout_event, replaced);
  }
  else if (w != kPo_WriteResult_NotFound) po_Run_Fail(run, w, po_Arena_Printf(run->ar, "status of %s", it->name), pst.message);
  return true;
}

static void status(po_Run *run) {
  /* A conflict is optimistic concurrency, not news: the retry follows at once and writes the
   * outcome. Said as TargetError, each one cost two status writes and two Events per
   * PropertyOverride of the target (there and back), 50 of them per target at 10,000. */
  if (run->target_conflict || run->deferred) return;
  if (mesh(run)->status_begin) mesh(run)->status_begin(run);
  /* with those of the other kind whose entries reach the same proxies (cross.c) */
  po_CrossPeers cross;
  po_CtlStatus cst;
  if (!po_CrossPeers_Load(run->io, run->ix, run->kind, run->m, run->ar, &cross, &cst)) {
    po_CrossPeers_Release(&cross);
    if (cst.code != kPo_Ctl_Ok) po_Run_ReadFailed(run, &cst);
    else po_Run_Oom(run, "the PropertyOverrides of other targets");
    return;
  }
  po_OverlapPeer *peers = cross.peers;
  po_OverlapTier tier =
      po_TargetKind_MeshWide(run->kind) ? kPo_OverlapTier_ProxyDefaults : kPo_OverlapTier_ServiceDefaults;
  for (size_t i = 0; i < run->m; i++) {
    const po_RunItem *it = &run->items[i];
    /* What is in the target for it, not what its current spec says: an invalid generation keeps
     * its last valid one live (compiled from the record, at that generation's priority), and that
     * entry still conflicts with the others; one with no entry here (deleted, refused, over the
     * limit, moved to another target) reaches no proxy through this target. A live entry kept
     * without a record has no compiled form: it takes no part. */
    const po_CompiledEntry *e = it->entry;
    peers[i] = (po_OverlapPeer){.ns = it->ns, .name = it->name, .override = e && e->c.accepted ? e->c.override : NULL,
                                .tier = tier, .priority = e ? it->entry_priority : it->ce->c.priority,
                                .target = run->key, .where = run->where, .own = !it->held,
                                .id = e && e->c.accepted ? po_Overlap_PeerId(e, tier, run->key) : (po_JsonHash){0, 0}};
    /* what the mesh's order of the overlaps needs (Istio: where its EnvoyFilter is, and when
     * it was created) */
    if (peers[i].override && mesh(run)->overlap_peer &&
        !mesh(run)->overlap_peer(run->io, run->ix, run->kind, run->ns, &peers[i], run->ar)) {
      po_CrossPeers_Release(&cross);
      po_Run_Oom(run, "the EnvoyFilters of the overlaps");
      return;
    }
  }
  /* what the last reconcile of this target found (the pairs it compared need not be again) */
  po_OverlapMemo prev, next;
  bool have_prev = po_TargetIndex_OverlapMemo(run->ix, run->key, &prev, run->ar);
  po_OverlapIndex *overlaps = po_OverlapIndex_NewFrom(peers, run->m + cross.n, have_prev ? &prev : NULL, run->ar);
  if (!overlaps) {
    po_Run_Oom(run, "the overlaps of the statuses");
  } else {
    char now[32];
    run->io->now(run->io->ctx, now);
    for (size_t i = 0; i < run->m; i++) {
      po_RunItem *it = &run->items[i];
      if (it->held) continue; /* its own target's reconcile writes its status and finalizer */
      bool go = it->deleting ? release_finalizer(run, it) : write_status(run, i, overlaps, now);
      if (!go) break;
    }
    run->r.overlap_checks = po_OverlapIndex_Checks(overlaps);
    /* out of memory: no memo, and the next reconcile compares every pair again */
    if (!run->dry) po_TargetIndex_SetOverlapMemo(run->ix, run->key, po_OverlapIndex_Memo(overlaps, &next, run->ar) ? &next : NULL);
  }
  po_CrossPeers_Release(&cross);
}

/* ---- the reconcile ---- */

static void finish(po_Run *run) {
  for (size_t i = 0; i < run->m; i++) {
    po_RunItem *it = &run->items[i];
    po_Run_Release(run, it->obj, it->ref);
    po_CompiledEntry_Release(it->ce);
    po_Run_DropEntry(it);
  }
  for (size_t i = 0; i < run->nwant; i++) json_object_put(run->want[i].arguments);
  po_Run_Release(run, run->read, run->read_ref);
  json_object_put(run->own);
  json_object_put(run->server);
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
  po_Run run = {.io = io, .ix = ix, .key = key, .r = {.ok = true}};
  if (!po_Run_ParseKey(key, &run.kind, run.ns, run.name)) {
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
    po_Run_Oom(&run, "starting the reconcile");
  } else {
    run.where = po_Arena_Printf(run.ar, "%s %s/%s", po_TargetKind_Name(run.kind), run.ns, run.name);
    if (!run.where) po_Run_Oom(&run, "starting the reconcile");
    else if (load(&run) && plan(&run) && write(&run)) status(&run);
  }
  finish(&run);
  run.r.result = outcome(&run.r);
  return run.r;
}

/* ---- the admission view: the same load and plan over an incoming object ---- */

po_DesiredResult po_Reconcile_Desired(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind,
                                      const struct json_object *incoming, json_object **extensions,
                                      po_CtlStatus *st) {
  *extensions = NULL;
  char key[600];
  const char *ns = po_Json_Meta(incoming, "namespace"), *name = po_Json_Meta(incoming, "name");
  po_Reconcile_TargetKey(kind, ns, name, key, sizeof key);
  po_Run run = {.io = io, .ix = ix, .key = key, .dry = true, .r = {.ok = true}};
  if (!po_Run_ParseKey(key, &run.kind, run.ns, run.name)) {
    po_CtlStatus_Set(st, kPo_Ctl_Invalid, "the object has no usable namespace and name");
    return kPo_Desired_Error;
  }
  if (!*po_Json_Meta(incoming, "uid")) {
    po_CtlStatus_Set(st, kPo_Ctl_Ok, "the object has no metadata.uid: nothing can be bound to it yet");
    return kPo_Desired_Keep;
  }
  if (io->synced && !io->synced(io->ctx)) {
    po_CtlStatus_Set(st, kPo_Ctl_Ok, "caches not synced yet");
    return kPo_Desired_NotSynced;
  }
  po_DesiredResult res = kPo_Desired_Keep;
  run.read = incoming; /* read only: the mesh's plan works on its own copy */
  run.target = incoming;
  if (!(run.ar = po_Arena_New())) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
    return kPo_Desired_Error;
  }
  run.where = po_Arena_Printf(run.ar, "%s %s/%s", po_TargetKind_Name(run.kind), run.ns, run.name);
  if (run.where && load(&run) && plan(&run)) {
    if (mesh(&run)->desired) res = mesh(&run)->desired(&run, incoming, extensions);
  }
  if (!run.where || !run.r.ok) {
    if (run.r.error[0]) po_CtlStatus_Set(st, run.r.out_of_memory ? kPo_Ctl_NoMemory : kPo_Ctl_Internal, "%s", run.r.error);
    else po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
    res = kPo_Desired_Error;
  }
  run.read = NULL; /* the caller's: finish releases nothing of it */
  finish(&run);
  return res;
}
