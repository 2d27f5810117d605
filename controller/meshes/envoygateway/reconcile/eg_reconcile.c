/* Envoy Gateway's part of a reconcile (po_ReconcileMesh, controller/reconcile/src/run.h): one
 * EnvoyPatchPolicy per PropertyOverride (eg_write.h), programmed when Envoy Gateway's own status
 * of it says so for its generation. Compiled into the reconciler (po_reconcile), listed by
 * po/meshes/list.h. */
#include <stdio.h>
#include <string.h>

#include "eg_write.h"
#include "po/meshes/eg.h"
#include "run.h"

/* Each item's EnvoyPatchPolicy, as the write left it (run->mesh_items of a Gateway target). */
static po_EGItem *items(const po_Run *run) { return run->mesh_items; }

/* The Envoy Gateway target: each PropertyOverride's EnvoyPatchPolicy (eg_write.h), as for Istio. */
static bool write_eg(po_Run *run) {
  po_EGItem *x = po_Arena_Malloc(run->ar, (run->m ? run->m : 1) * sizeof *x);
  if (!x) return po_Run_Oom(run, "the EnvoyPatchPolicies");
  run->mesh_items = x;
  for (size_t i = 0; i < run->m; i++) {
    po_RunItem *it = &run->items[i];
    /* valid where it points now: another Gateway's reconcile rewrites the same policy (one name
     * per PropertyOverride, in its namespace); an Istio or Consul target's removes it after its
     * own write succeeded (swept_there). Else ours here goes now. */
    bool valid_elsewhere = it->held && it->ce->c.accepted && po_Run_SweptThere(it);
    x[i] = (po_EGItem){.name = it->name, .uid = it->uid, .program = it->entry ? &it->entry->c : NULL,
                             .keep = !it->deleting && !it->refused && !it->entry && !it->ce->c.accepted,
                             .skip = valid_elsewhere, .verify = it->unverified && it->entry};
  }
  int writes = 0;
  po_CtlStatus st;
  bool ok = po_EG_Write(run->io, run->ix, run->ns, run->name, run->read, x, run->m, run->ar, &writes, &st);
  run->r.targets_written += writes;
  if (!ok && st.code != kPo_Ctl_Ok) return po_Run_ReadFailed(run, &st);
  if (!ok) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the EnvoyPatchPolicies of %s", run->where));
  run->target_ok = true;
  for (size_t i = 0; i < run->m; i++) {
    const po_EGItem *y = &x[i];
    po_Run_OwnedOutcome(run, y->outcome == kPo_EGOutcome_Foreign, y->outcome == kPo_EGOutcome_Failed, y->conflict, y->err);
    if (y->mismatch && !po_Run_OwnedMismatch(run, &run->items[i], "EnvoyPatchPolicy", y->policy_ns, y->policy_name, y->live_generation))
      return false; /* out of memory */
  }
  return true;
}

/* This PropertyOverride's EnvoyPatchPolicy where it no longer points; a Gateway target's own write
 * owns the one EnvoyPatchPolicy name. */
static bool sweep(po_Run *run, size_t i, int *writes) {
  if (po_TargetKind_Mesh(run->kind) == kPo_Mesh_EnvoyGateway && run->mesh_items) return true;
  const po_RunItem *it = &run->items[i];
  po_CtlStatus st;
  if (po_EG_Sweep(run->io, run->ix, it->ns, it->name, it->uid, run->ar, writes, &st)) return true;
  run->target_conflict = true;
  if (st.code == kPo_Ctl_NoMemory) run->r.out_of_memory = true; /* a policy not read is not gone */
  po_Run_Fail(run, kPo_WriteResult_Failed, po_Arena_Printf(run->ar, "removing the old EnvoyPatchPolicy of %s", it->name), st.message);
  return false;
}

static void status_object(po_Run *run, size_t i, po_OverrideStatus *s, int64_t *live_gen) {
  const po_EGItem *x = &items(run)[i];
  *live_gen = x->outcome == kPo_EGOutcome_Ok                            ? run->items[i].entry_generation
              : x->mismatch || x->outcome == kPo_EGOutcome_NoRoom ? x->live_generation
                                                                   : 0;
  s->target_api_version = PO_EG_API_VERSION;
  s->target_kind_name = "EnvoyPatchPolicy";
  s->target_ns = x->policy_ns;
  s->target_name = x->policy_name;
  if (x->unbound_uid) s->created_ns = x->policy_ns, s->created_name = x->policy_name, s->created_uid = x->unbound_uid;
}

static bool item_failed(const po_Run *run, size_t i) { return items(run)[i].outcome == kPo_EGOutcome_Failed; }

/* What an Envoy Gateway policy left out ("" when nothing), in words no tenant's route churn
 * changes: no route names, no counts (a tenant creating and deleting a route that sorts first
 * rewrote the platform's status twice a cycle, 2,505 status writes in 60 s). The bound, only
 * when it is the policy's own (the Gateway's share moves with the other policies' routes), and
 * where to see what is in: `propertyoverride render` of the Gateway, its HTTPRoutes and this
 * PropertyOverride writes the policy. */
static const char *eg_left_out(po_Run *run, const po_EGItem *x) {
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
static bool programmed_eg(po_Run *run, size_t i, int64_t live_gen, po_Condition *p) {
  const po_RunItem *it = &run->items[i];
  const po_EGItem *x = &items(run)[i];
  const char *epp = po_Arena_Printf(run->ar, "EnvoyPatchPolicy %s/%s", x->policy_ns, x->policy_name);
  switch (x->outcome) {
    case kPo_EGOutcome_Disabled: return po_Run_MeshNotEnabled(run, "Envoy Gateway", "envoy-gateway", "EnvoyPatchPolicy", p);
    case kPo_EGOutcome_NoGateway: return po_Run_TargetGone(run, epp, "Gateway", p);
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
  if (po_Run_ProgrammedOwned(run, it, live_gen, epp, x->outcome == kPo_EGOutcome_Foreign ? x->why : NULL,
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

static void programmed_message(po_Run *run, size_t i, int64_t live_gen, po_Condition *p, bool more) {
  const po_EGItem *x = &items(run)[i];
  /* what fits is programmed; what the bound left out is said by the reason and message */
  if (x->built && x->fit.cut_routes) p->reason = "PolicyFull";
  snprintf(p->message, sizeof p->message,
           "generation %lld is programmed by Envoy Gateway from EnvoyPatchPolicy %s/%s for %s%s%s",
           (long long)live_gen, x->policy_ns, x->policy_name, run->where, eg_left_out(run, x), more ? "; " : "");
}

extern const po_ReconcileMesh po_EG_Reconcile;
const po_ReconcileMesh po_EG_Reconcile = {
    .record_bound = po_Run_OwnedRecordBound,
    .write = write_eg,
    .sweep = sweep,
    .status_object = status_object,
    .item_failed = item_failed,
    .not_programmed = programmed_eg,
    .programmed_message = programmed_message,
};
