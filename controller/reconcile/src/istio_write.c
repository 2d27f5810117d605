/* The write phase of an Istio target (istio_write.h): each PropertyOverride's EnvoyFilter
 * through po_Istio_Plan, the one programming decision the CLI's tests also check. */
#include "istio_write.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "compiled.h"
#include "owned_write.h"
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

/* The EnvoyFilter's part of owned_write.h's shared write phase (NULL reader or writer: Istio
 * is not enabled). */
static po_OwnedKindOps filter_ops(const po_ReconcileIO *io) {
  return (po_OwnedKindOps){.write = io->write_filter, .get = io->get_filter, .plan = po_Istio_Plan, .kind = "EnvoyFilter"};
}

/* One plan carried out. `current` is the cache's (read only). */
static bool carry_out(const po_ReconcileIO *io, po_TargetIndex *ix, po_IstioItem *it, const json_object *current,
                      const json_object *desired, int *writes) {
  po_OwnedKindOps k = filter_ops(io);
  po_OwnedOutcome o;
  if (!po_Owned_CarryOut(io, ix, &k, it->filter_ns, it->filter_name, it->uid, current, desired, writes, &o)) return false;
  if (o.foreign) {
    it->outcome = kPo_IstioOutcome_Foreign;
    it->why = o.why;
  } else if (o.failed) {
    it->outcome = kPo_IstioOutcome_Failed;
    it->conflict = o.conflict;
    snprintf(it->err, sizeof it->err, "%s", o.err);
  }
  return true;
}

bool po_Istio_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                    const char *programmed_ns, po_Arena *ar, int *writes, char *err, size_t size) {
  const po_TargetOptions *opts = po_TargetIndex_Options(ix);
  const char *root = opts->istio_root_namespace && *opts->istio_root_namespace ? opts->istio_root_namespace : "istio-system";
  const char *places[2] = {ns, root};
  const char *filter = po_Arena_Printf(ar, "propertyoverride-%s", name);
  if (!filter) {
    snprintf(err, size, "out of memory");
    return false;
  }
  po_OwnedKindOps k = filter_ops(io);
  for (int i = 0; i < 2; i++) {
    if ((programmed_ns && !strcmp(places[i], programmed_ns)) || (i == 1 && !strcmp(root, ns))) continue;
    if (!po_Owned_Sweep(io, ix, &k, places[i], filter, uid, writes, err, size)) return false;
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
