/* The write phase of an Istio target (istio_write.h): each PropertyOverride's EnvoyFilter
 * through po_Istio_Plan, the one programming decision the CLI's tests also check. */
#include "istio_write.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "compiled.h"
#include "po/base/json.h"
#include "po/targets/consul.h"
#include "po/targets/istio.h"

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

static void failed(po_IstioItem *it, po_WriteResult w, const char *what, const char *err) {
  it->outcome = kPo_IstioOutcome_Failed;
  it->conflict = w == kPo_WriteConflict;
  snprintf(it->err, sizeof it->err, "%s EnvoyFilter %s/%s: %.400s", what, it->filter_ns, it->filter_name, err);
}

/* Whether the PropertyOverride (namespace ns, the item's name and uid) recorded in its status
 * that the controller created `current` and could not bind it: status.created names its
 * namespace, name and uid. The status is written only by the controller (tenants need no
 * status RBAC), and a uid only by the API server, for our own create: a copy, a restore or an
 * object written by hand has another uid, so it is never taken for ours by this. */
static bool recorded_created(const po_ReconcileIO *io, const char *ns, const po_IstioItem *it, const json_object *current) {
  void *ref = NULL;
  const json_object *po = io->get_override(io->ctx, ns, it->name, &ref);
  json_object *cr = po_Json_Get(po_Json_Get(po, "status"), "created");
  const char *cuid = po_Json_Meta(current, "uid");
  bool yes = po && !strcmp(po_Json_Meta(po, "uid"), it->uid) && *cuid && po_Json_String(cr, "uid") &&
             !strcmp(po_Json_String(cr, "uid"), cuid) && po_Json_String(cr, "namespace") &&
             !strcmp(po_Json_String(cr, "namespace"), it->filter_ns) && po_Json_String(cr, "name") &&
             !strcmp(po_Json_String(cr, "name"), it->filter_name);
  if (po && io->release) io->release(io->ctx, ref);
  return yes;
}

/* One plan carried out. `current` is the cache's (read only); ns is the PropertyOverride's. */
static bool carry_out(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, po_IstioItem *it,
                      const json_object *current, const json_object *desired, int *writes) {
  const char *rv = po_Json_String(po_Json_Get(current, "metadata"), "resourceVersion");
  /* Created by this process, or by an earlier one that recorded it in the PropertyOverride's
   * status, and the write binding the created annotation failed: still ours. */
  const char *cuid = current ? po_Json_Meta(current, "uid") : NULL;
  bool unbound = current && po_Consul_CreatedBy(current) == kPo_ConsulCreatedNo &&
                 (po_TargetIndex_WasCreated(ix, cuid, false) || recorded_created(io, ns, it, current));
  po_IstioPlan p = po_Istio_Plan(current, desired, it->uid, unbound ? cuid : NULL);
  if (p.out_of_memory) return false;
  char err[512] = "";
  po_WriteResult w = kPo_WriteOk;
  switch (p.action) {
    case kPo_IstioPlan_None: break;
    case kPo_IstioPlan_Foreign:
      it->outcome = kPo_IstioOutcome_Foreign;
      it->why = p.why;
      break;
    case kPo_IstioPlan_Delete:
      w = io->write_filter(io->ctx, it->filter_ns, it->filter_name, NULL, false, rv, NULL, err, sizeof err);
      if (w == kPo_WriteNotFound) w = kPo_WriteOk;
      if (w != kPo_WriteOk) failed(it, w, "deleting", err);
      else (*writes)++;
      break;
    case kPo_IstioPlan_Update:
      w = io->write_filter(io->ctx, it->filter_ns, it->filter_name, p.object, false, rv, NULL, err, sizeof err);
      if (w != kPo_WriteOk) failed(it, w, "updating", err);
      else {
        (*writes)++;
        if (unbound) po_TargetIndex_WasCreated(ix, cuid, true);
      }
      break;
    case kPo_IstioPlan_Create: {
      /* Created first, then bound: the created annotation names the uid only the server assigns. */
      json_object *made = NULL;
      w = io->write_filter(io->ctx, it->filter_ns, it->filter_name, p.object, true, NULL, &made, err, sizeof err);
      if (w == kPo_WriteOk && (!made || !*po_Json_Meta(made, "uid"))) {
        w = kPo_WriteFailed;
        snprintf(err, sizeof err, "the server returned no uid for the created object");
      }
      if (w != kPo_WriteOk) {
        failed(it, w, "creating", err);
        json_object_put(made);
        break;
      }
      (*writes)++;
      po_TargetIndex_NoteCreated(ix, po_Json_Meta(made, "uid"));
      po_IstioPlan b = po_Istio_Plan(made, desired, it->uid, po_Json_Meta(made, "uid"));
      if (b.out_of_memory) {
        json_object_put(made);
        json_object_put(p.object);
        return false;
      }
      if (b.action == kPo_IstioPlan_Update) {
        const char *mrv = po_Json_String(po_Json_Get(made, "metadata"), "resourceVersion");
        w = io->write_filter(io->ctx, it->filter_ns, it->filter_name, b.object, false, mrv, NULL, err, sizeof err);
        if (w != kPo_WriteOk) {
          failed(it, w, "binding the created annotation of", err);
          snprintf(it->unbound_uid, sizeof it->unbound_uid, "%s", po_Json_Meta(made, "uid"));
        } else {
          (*writes)++;
          po_TargetIndex_WasCreated(ix, po_Json_Meta(made, "uid"), true);
        }
      }
      json_object_put(b.object);
      json_object_put(made);
      break;
    }
  }
  json_object_put(p.object);
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

/* The EnvoyFilter at ns/name deleted when it is provably this PropertyOverride's. */
static bool drop_if_ours(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *fns, const char *fname,
                         const char *name, const char *uid, int *writes, char *err, size_t size) {
  po_IstioItem it = {.name = name, .uid = uid, .filter_ns = fns, .filter_name = fname};
  void *ref = NULL;
  const json_object *current = io->get_filter(io->ctx, fns, fname, &ref);
  if (!current) return true;
  bool ok = carry_out(io, ix, ns, &it, current, NULL, writes);
  if (io->release) io->release(io->ctx, ref);
  if (!ok || it.outcome == kPo_IstioOutcome_Failed) {
    snprintf(err, size, "%s", ok ? it.err : "out of memory");
    return false;
  }
  return true;
}

bool po_Istio_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                    const char *programmed_ns, const char *programmed_name, po_Arena *ar, int *writes, char *err,
                    size_t size) {
  if (!io->get_filter || !io->write_filter) return true;
  const char *pns[kPlaces], *pname[kPlaces];
  if (!places_of(ns, name, root_of(po_TargetIndex_Options(ix)), ar, pns, pname)) {
    snprintf(err, size, "out of memory");
    return false;
  }
  for (int k = 0; k < kPlaces; k++) {
    /* the one programmed now stays; a place named twice (the root namespace's own Service
     * target and an old Mesh name) is looked at once */
    if (programmed_ns && programmed_name && !strcmp(pns[k], programmed_ns) && !strcmp(pname[k], programmed_name)) continue;
    if (k == 2 && !strcmp(pns[0], pns[2]) && !strcmp(pname[0], pname[2])) continue;
    if (!drop_if_ours(io, ix, ns, pns[k], pname[k], name, uid, writes, err, size)) return false;
  }
  return true;
}

bool po_Istio_Write(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *ns,
                    const json_object *service, const po_TargetOptions *opts, po_IstioItem *items, size_t n,
                    po_Arena *ar, int *writes) {
  const json_object *selector = po_Json_Get(po_Json_Get(service, "spec"), "selector");
  bool per_service = kind == kPo_TargetService;
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
      if (!desired && !why) return false;
      if (!desired) {
        it->outcome = kPo_IstioOutcome_NoSelector;
        it->why = why;
      }
    }
    void *ref = NULL;
    const json_object *current = io->get_filter(io->ctx, it->filter_ns, it->filter_name, &ref);
    bool ok = carry_out(io, ix, ns, it, current, desired, writes);
    if (current && io->release) io->release(io->ctx, ref);
    json_object_put(desired);
    if (!ok) return false;
    /* Upgrade from the old Mesh name (one for every namespace's PropertyOverride of a name): ours
     * of that name goes only now that the new one is as planned, so the patches are never off;
     * for a moment both are live, which applies the same MERGE twice (the same result). */
    if (!per_service && it->outcome == kPo_IstioOutcome_Ok) {
      const char *legacy = po_Istio_LegacyMeshFilterName(it->name, ar);
      if (!legacy) return false;
      char err[sizeof it->err];
      if (!drop_if_ours(io, ix, ns, it->filter_ns, legacy, it->name, it->uid, writes, err, sizeof err)) {
        it->outcome = kPo_IstioOutcome_Failed;
        snprintf(it->err, sizeof it->err, "%.500s", err);
      }
    }
  }
  return true;
}
