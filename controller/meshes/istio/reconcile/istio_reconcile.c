/* Istio's part of a reconcile (po_ReconcileMesh, controller/reconcile/src/run.h): one EnvoyFilter
 * per PropertyOverride (istio_write.h), written is programmed (Istio reports no status per
 * EnvoyFilter). Compiled into the reconciler (po_reconcile), listed by po/meshes/list.h. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "istio_write.h"
#include "po/base/json.h"
#include "po/meshes/istio.h"
#include "run.h"

/* Each item's EnvoyFilter, as the write left it (run->mesh_items of an Istio target). */
static po_IstioItem *items(const po_Run *run) { return run->mesh_items; }
static bool mine(const po_Run *run) { return po_TargetKind_Mesh(run->kind) == kPo_Mesh_Istio && run->mesh_items; }

/* The Istio target: each PropertyOverride's EnvoyFilter (istio_write.h) from the generation the
 * plan chose; the outcome per item is what its status says. */
static bool write_istio(po_Run *run) {
  po_IstioItem *x = po_Arena_Malloc(run->ar, (run->m ? run->m : 1) * sizeof *x);
  if (!x) return po_Run_Oom(run, "the EnvoyFilters");
  run->mesh_items = x;
  for (size_t i = 0; i < run->m; i++) {
    po_RunItem *it = &run->items[i];
    /* valid where it points now: that target's reconcile owns its EnvoyFilter when it is the
     * same one (Service to Service: one name, one namespace), and removes ours here only after
     * its own write succeeded (sweep) when it looks here (swept_there). So the patches stay live
     * here until they are live there. Else ours here goes now. */
    bool valid_elsewhere = it->held && it->ce->c.accepted && po_Run_SweptThere(it);
    x[i] = (po_IstioItem){.name = it->name, .uid = it->uid, .program = it->entry ? &it->entry->c : NULL,
                                   /* invalid, nothing valid recorded for here: left as it is */
                                   .keep = !it->deleting && !it->refused && !it->entry && !it->ce->c.accepted,
                                   .skip = valid_elsewhere, .verify = it->unverified && it->entry};
  }
  int writes = 0;
  const po_TargetOptions *opts = po_TargetIndex_Options(run->ix);
  po_CtlStatus st;
  bool ok = po_Istio_Write(run->io, run->ix, run->kind, run->ns, run->read, opts, x, run->m, run->ar, &writes, &st);
  run->r.targets_written += writes;
  if (!ok && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st);
  if (!ok) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the EnvoyFilters of %s", run->where));
  run->target_ok = true;
  for (size_t i = 0; i < run->m; i++) {
    const po_IstioItem *y = &x[i];
    po_Run_OwnedOutcome(run, y->outcome == kPo_IstioOutcome_Foreign, y->outcome == kPo_IstioOutcome_Failed, y->conflict, y->err);
    if (y->mismatch && !po_Run_OwnedMismatch(run, &run->items[i], "EnvoyFilter", y->filter_ns, y->filter_name, y->live_generation))
      return false; /* out of memory */
  }
  return true;
}

/* This PropertyOverride's EnvoyFilter where it no longer points (another mesh's target, or the
 * other Istio place), skipping the one this target's write programs. */
static bool sweep(po_Run *run, size_t i, int *writes) {
  const po_RunItem *it = &run->items[i];
  bool here = mine(run) && items(run)[i].outcome != kPo_IstioOutcome_Disabled;
  const char *at = here ? items(run)[i].filter_ns : NULL, *at_name = here ? items(run)[i].filter_name : NULL;
  po_CtlStatus st;
  if (po_Istio_Sweep(run->io, run->ix, it->ns, it->name, it->uid, at, at_name, run->ar, writes, &st)) return true;
  run->target_conflict = true; /* no status this time: the retry writes it */
  if (st.code == kPo_Ctl_NoMemory) run->r.out_of_memory = true; /* an EnvoyFilter not read is not gone */
  po_Run_Fail(run, kPo_WriteResult_Failed, po_Arena_Printf(run->ar, "removing the old EnvoyFilter of %s", it->name), st.message);
  return false;
}

static void status_object(po_Run *run, size_t i, po_OverrideStatus *s, int64_t *live_gen) {
  const po_IstioItem *x = &items(run)[i];
  /* a record that does not match: what is live is the generation the EnvoyFilter says */
  *live_gen = x->outcome == kPo_IstioOutcome_Ok ? run->items[i].entry_generation : x->mismatch ? x->live_generation : 0;
  s->target_api_version = PO_ISTIO_API_VERSION;
  s->target_kind_name = "EnvoyFilter";
  s->target_ns = x->filter_ns;
  s->target_name = x->filter_name;
  /* created and not bound: recorded, so that a restart before the binding write succeeds
   * still knows it for ours (istio_write.h) */
  if (x->unbound_uid) s->created_ns = x->filter_ns, s->created_name = x->filter_name, s->created_uid = x->unbound_uid;
}

/* This one's own EnvoyFilter is gone unless its write failed (another's failed write does not
 * hold it). */
static bool item_failed(const po_Run *run, size_t i) { return items(run)[i].outcome == kPo_IstioOutcome_Failed; }

/* Where the EnvoyFilter of the PropertyOverride ns/name of a target of `kind` is, and when it was
 * created (overlap.h: Istio's order of the overlaps). */
po_OverlapIstio *po_OverlapIstio_Of(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *ns,
                                    const char *name, po_Arena *ar) {
  po_OverlapIstio *o = po_Arena_Malloc(ar, sizeof *o);
  if (!o) return NULL;
  po_CompiledOverride c = {.ns = ns, .name = name, .target_kind = kind, .options = *po_TargetIndex_Options(ix)};
  const char *root = c.options.istio_root_namespace;
  if (!root || !*root) c.options.istio_root_namespace = root = "istio-system";
  *o = (po_OverlapIstio){.filter_ns = po_Istio_FilterNamespace(&c), .filter_name = po_Istio_FilterName(&c, ar),
                         .minor = c.options.istio_minor};
  if (!o->filter_name) return NULL;
  o->root = !strcmp(o->filter_ns, root);
  void *ref = NULL;
  po_CtlStatus st;
  const json_object *ef = io->get_filter ? io->get_filter(io->ctx, o->filter_ns, o->filter_name, &ref, &st) : NULL;
  if (!ef && io->get_filter && st.code != kPo_Ctl_Ok) return NULL; /* cached, not readable: not "none" */
  if (ef) {
    const char *t = po_Json_String(po_Json_Get(ef, "metadata"), "creationTimestamp");
    if (t && *t && !(o->created = po_Arena_Printf(ar, "%s", t))) o = NULL;
    if (io->release) io->release(io->ctx, ref);
  }
  return o;
}

/* Istio's order of the overlaps needs where its EnvoyFilter is and when it was created. */
static bool overlap_peer(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *ns,
                         po_OverlapPeer *peer, po_Arena *ar) {
  return (peer->istio = po_OverlapIstio_Of(io, ix, kind, ns, peer->name, ar)) != NULL;
}

/* Programmed for an Istio target: written is programmed (Istio reports no status per
 * EnvoyFilter). True when returned false; else p says why not. */
static bool programmed_istio(po_Run *run, size_t i, int64_t live_gen, po_Condition *p) {
  const po_RunItem *it = &run->items[i];
  const po_IstioItem *x = &items(run)[i];
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
    case kPo_IstioOutcome_NoService: return po_Run_TargetGone(run, ef, "Service", p);
    case kPo_IstioOutcome_NoSelector:
      p->reason = "TargetError";
      snprintf(p->message, sizeof p->message, "%s: %s; %s is deleted", run->where, x->why, ef);
      return true;
    default: break;
  }
  return po_Run_ProgrammedOwned(run, it, live_gen, ef, x->outcome == kPo_IstioOutcome_Foreign ? x->why : NULL,
                          x->outcome == kPo_IstioOutcome_Failed ? x->err : NULL, x->outcome == kPo_IstioOutcome_Kept, p);
}

static void programmed_message(po_Run *run, size_t i, int64_t live_gen, po_Condition *p, bool more) {
  const po_IstioItem *x = &items(run)[i];
  snprintf(p->message, sizeof p->message,
           "generation %lld is written to EnvoyFilter %s/%s for %s (Istio reports no status per EnvoyFilter: "
           "written is programmed)%s", (long long)live_gen, x->filter_ns, x->filter_name, run->where, more ? "; " : "");
}

extern const po_ReconcileMesh po_Istio_Reconcile;
const po_ReconcileMesh po_Istio_Reconcile = {
    .record_bound = po_Run_OwnedRecordBound,
    .write = write_istio,
    .sweep = sweep,
    .status_object = status_object,
    .item_failed = item_failed,
    .overlap_peer = overlap_peer,
    .not_programmed = programmed_istio,
    .programmed_message = programmed_message,
};
