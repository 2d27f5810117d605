/* The write phase of an Istio target (istio_write.h): each PropertyOverride's EnvoyFilter
 * through po_Istio_Plan, the one programming decision the CLI's tests also check. */
#include "istio_write.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "compiled.h"
#include "owned_write.h"
#include "po/base/json.h"
#include "po/meshes/istio.h"

static const char *root_of(const po_TargetOptions *opts) {
  return opts && opts->istio_root_namespace && *opts->istio_root_namespace ? opts->istio_root_namespace : "istio-system";
}

/* Where a PropertyOverride's EnvoyFilter lives, known without its compiled form (one being
 * deleted, or refused, has none to program but may still have a filter of ours to remove). */
static void locate(po_IstioItem *it, po_TargetKind kind, const char *ns, const po_TargetOptions *opts, po_Arena *ar) {
  po_CompiledOverride c = {.ns = ns, .name = it->name, .target_kind = kind};
  if (opts) c.options = *opts;
  c.options.istio_root_namespace = root_of(opts);
  it->filter_name = po_Istio_FilterName(&c, ar);
  it->filter_ns = po_Arena_Printf(ar, "%s", po_Istio_FilterNamespace(&c));
}

/* The EnvoyFilter's part of owned_write.h's shared write phase (NULL reader or writer: Istio
 * is not enabled). */
static po_OwnedKindOps filter_ops(const po_ReconcileIO *io) {
  return (po_OwnedKindOps){.write = io->write_filter, .get = io->get_filter, .plan = po_Istio_Plan, .kind = "EnvoyFilter"};
}

/* One plan carried out. `current` is the cache's (read only); ns is the PropertyOverride's. */
static bool carry_out(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, po_IstioItem *it, po_Arena *ar,
                      const json_object *current, const json_object *desired, int *writes, po_CtlStatus *st) {
  po_OwnedKindOps k = filter_ops(io);
  po_OwnedOutcome o;
  if (!po_Owned_CarryOut(io, ix, &k, it->filter_ns, it->filter_name, (po_OwnedFor){ns, it->name}, it->uid, current,
                         desired, writes, &o)) {
    if (o.err[0]) po_CtlStatus_Set(st, o.code, "%s", o.err); /* its PropertyOverride not read */
    return false;
  }
  if (o.unbound_uid[0] && !(it->unbound_uid = po_Owned_Text(ar, o.unbound_uid, sizeof o.unbound_uid))) return false;
  if (o.foreign) {
    it->outcome = kPo_IstioOutcome_Foreign;
    it->why = o.why;
  } else if (o.failed) {
    it->outcome = kPo_IstioOutcome_Failed;
    it->conflict = o.conflict;
    if (!(it->err = po_Owned_Text(ar, o.err, sizeof o.err))) return false;
  }
  return true;
}

/* The places one of this PropertyOverride's EnvoyFilters can be: its Service target's (its
 * namespace), its Mesh one's (the root namespace), and the Mesh one's of earlier versions. */
enum { kPlaces = 3 };
static bool places_of(const char *ns, const char *name, const char *root, po_Arena *ar, const char *pns[kPlaces],
                      const char *pname[kPlaces]) {
  pns[0] = ns, pname[0] = po_Arena_Printf(ar, "propertyoverride-%s", name);
  pns[1] = root, pname[1] = po_Istio_MeshFilterName(ns, name, ar);
  pns[2] = root, pname[2] = po_Istio_LegacyMeshFilterName(name, ar);
  return pname[0] && pname[1] && pname[2];
}

bool po_Istio_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                    const char *programmed_ns, const char *programmed_name, po_Arena *ar, int *writes,
                    po_CtlStatus *st) {
  po_OwnedKindOps ops = filter_ops(io);
  /* Istio not enabled: nothing to look at (the names cost 5,000 instructions per PropertyOverride
   * per reconcile of every target, Consul's included) */
  if (!ops.get || !ops.write) return true;
  const char *pns[kPlaces], *pname[kPlaces];
  if (!places_of(ns, name, root_of(po_TargetIndex_Options(ix)), ar, pns, pname)) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
    return false;
  }
  for (int k = 0; k < kPlaces; k++) {
    /* the one programmed now stays; a place named twice (the root namespace's own Service
     * target and an old Mesh name) is looked at once */
    if (programmed_ns && programmed_name && !strcmp(pns[k], programmed_ns) && !strcmp(pname[k], programmed_name)) continue;
    if (k == 2 && !strcmp(pns[0], pns[2]) && !strcmp(pname[0], pname[2])) continue;
    if (!po_Owned_Sweep(io, ix, &ops, pns[k], pname[k], (po_OwnedFor){ns, name}, uid, writes, st)) return false;
  }
  return true;
}

bool po_Istio_Write(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *ns,
                    const json_object *service, const po_TargetOptions *opts, po_IstioItem *items, size_t n,
                    po_Arena *ar, int *writes, po_CtlStatus *st) {
  po_CtlStatus_Clear(st);
  const json_object *selector = po_Json_Get(po_Json_Get(service, "spec"), "selector");
  bool per_service = kind == kPo_TargetKind_Service;
  for (size_t i = 0; i < n; i++) {
    po_IstioItem *it = &items[i];
    locate(it, kind, ns, opts, ar);
    if (!it->filter_name || !it->filter_ns) return false;
    if (!io->get_filter || !io->write_filter) {
      it->outcome = kPo_IstioOutcome_Disabled;
      continue;
    }
    if (it->skip || it->keep) {
      it->outcome = it->skip ? kPo_IstioOutcome_Skipped : kPo_IstioOutcome_Kept;
      continue;
    }
    json_object *desired = NULL;
    if (it->program && per_service && !service) {
      it->outcome = kPo_IstioOutcome_NoService;
    } else if (it->program) {
      const char *why = NULL;
      desired = po_Istio_EnvoyFilter(it->program, selector, ar, &why);
      if (desired && !po_Owned_MarkGeneration(desired, it->program->generation)) {
        json_object_put(desired);
        return false;
      }
      if (!desired && !why) return false;
      if (!desired) {
        it->outcome = kPo_IstioOutcome_NoSelector;
        it->why = why;
      }
    }
    void *ref = NULL;
    const json_object *current = io->get_filter(io->ctx, it->filter_ns, it->filter_name, &ref, st);
    if (!current && st->code != kPo_Ctl_Ok) { /* cached, not readable: would be created over */
      json_object_put(desired);
      return false;
    }
    if (it->verify && desired && !po_Owned_Holds(current, desired, it->uid, kPo_Owned_EnvoyFilter)) {
      /* a record not shown to be ours programs nothing: the EnvoyFilter stays as it is */
      it->outcome = kPo_IstioOutcome_Kept;
      it->mismatch = true;
      it->live_generation = po_Owned_Generation(current, it->uid);
      if (current && io->release) io->release(io->ctx, ref);
      json_object_put(desired);
      continue;
    }
    bool ok = carry_out(io, ix, ns, it, ar, current, desired, writes, st);
    if (current && io->release) io->release(io->ctx, ref);
    json_object_put(desired);
    if (!ok) return false;
    /* Upgrade from the old Mesh name (one for every namespace's PropertyOverride of a name): ours
     * of that name goes only now that the new one is as planned, so the patches are never off;
     * for a moment both are live, which applies the same MERGE twice (the same result). */
    if (!per_service && it->outcome == kPo_IstioOutcome_Ok) {
      const char *legacy = po_Istio_LegacyMeshFilterName(it->name, ar);
      if (!legacy) return false;
      po_OwnedKindOps ops = filter_ops(io);
      if (!po_Owned_Sweep(io, ix, &ops, it->filter_ns, legacy, (po_OwnedFor){ns, it->name}, it->uid, writes, st)) {
        if (st->code == kPo_Ctl_NoMemory) return false; /* not read (not gone), or memory: no status says so */
        it->outcome = kPo_IstioOutcome_Failed;
        it->err = po_Owned_Text(ar, st->message, 501); /* "%.500s", as it was */
        po_CtlStatus_Clear(st);
        if (!it->err) return false;
      }
    }
  }
  return true;
}
