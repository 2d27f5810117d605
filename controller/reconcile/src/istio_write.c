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

/* Where a PropertyOverride's EnvoyFilter lives, known without its compiled form (one being
 * deleted, or refused, has none to program but may still have a filter of ours to remove). */
static void locate(po_IstioItem *it, po_TargetKind kind, const char *ns, const po_TargetOptions *opts, po_Arena *ar) {
  po_CompiledOverride c = {.ns = ns, .name = it->name, .target_kind = kind};
  if (opts) c.options = *opts;
  if (!c.options.istio_root_namespace || !*c.options.istio_root_namespace) c.options.istio_root_namespace = "istio-system";
  it->filter_name = po_Istio_FilterName(&c, ar);
  it->filter_ns = po_Arena_Printf(ar, "%s", po_Istio_FilterNamespace(&c));
}

static void failed(po_IstioItem *it, po_WriteResult w, const char *what, const char *err) {
  it->outcome = kPo_IstioOutcome_Failed;
  it->conflict = w == kPo_WriteConflict;
  snprintf(it->err, sizeof it->err, "%s EnvoyFilter %s/%s: %.400s", what, it->filter_ns, it->filter_name, err);
}

/* One plan carried out. `current` is the cache's (read only). */
static bool carry_out(const po_ReconcileIO *io, po_TargetIndex *ix, po_IstioItem *it, const json_object *current,
                      const json_object *desired, int *writes) {
  const char *rv = po_Json_String(po_Json_Get(current, "metadata"), "resourceVersion");
  /* Created by this process, and the write binding the created annotation failed: still ours. */
  const char *cuid = current ? po_Json_Meta(current, "uid") : NULL;
  bool unbound = current && po_Consul_CreatedBy(current) == kPo_ConsulCreatedNo && po_TargetIndex_WasCreated(ix, cuid, false);
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
        if (w != kPo_WriteOk) failed(it, w, "binding the created annotation of", err);
        else {
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

bool po_Istio_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                    const char *programmed_ns, po_Arena *ar, int *writes, char *err, size_t size) {
  if (!io->get_filter || !io->write_filter) return true;
  const po_TargetOptions *opts = po_TargetIndex_Options(ix);
  const char *root = opts->istio_root_namespace && *opts->istio_root_namespace ? opts->istio_root_namespace : "istio-system";
  const char *places[2] = {ns, root};
  for (int k = 0; k < 2; k++) {
    if ((programmed_ns && !strcmp(places[k], programmed_ns)) || (k == 1 && !strcmp(root, ns))) continue;
    po_IstioItem it = {.name = name, .uid = uid, .filter_ns = places[k],
                       .filter_name = po_Arena_Printf(ar, "propertyoverride-%s", name)};
    if (!it.filter_name) {
      snprintf(err, size, "out of memory");
      return false;
    }
    void *ref = NULL;
    const json_object *current = io->get_filter(io->ctx, it.filter_ns, it.filter_name, &ref);
    if (!current) continue;
    bool ok = carry_out(io, ix, &it, current, NULL, writes);
    if (io->release) io->release(io->ctx, ref);
    if (!ok || it.outcome == kPo_IstioOutcome_Failed) {
      snprintf(err, size, "%s", ok ? it.err : "out of memory");
      return false;
    }
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
    bool ok = carry_out(io, ix, it, current, desired, writes);
    if (current && io->release) io->release(io->ctx, ref);
    json_object_put(desired);
    if (!ok) return false;
  }
  return true;
}
