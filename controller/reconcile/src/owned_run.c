/* What every mesh with one object per PropertyOverride (an EnvoyFilter, an EnvoyPatchPolicy)
 * shares in a reconcile (run.h): outcomes, records, and the sentences of Programmed. */
#include <stdio.h>
#include <string.h>

#include "po/meshes/mesh.h"
#include "run.h"

/* One mesh object's outcome (Istio's, Envoy Gateway's) into the run: a look-alike is reported, a
 * failed write fails the reconcile (retried; a 409 soon). */
void po_Run_OwnedOutcome(po_Run *run, bool foreign, bool failed, bool conflict, const char *err) {
  if (foreign) run->r.foreign_object = true;
  if (!failed) return;
  run->target_ok = false;
  run->target_conflict |= conflict;
  po_Run_Fail(run, conflict ? kPo_WriteResult_Conflict : kPo_WriteResult_Failed, po_Arena_Printf(run->ar, "writing %s", run->where), err);
}

/* A record the write phase found not held by its object (po_IstioItem.verify): ignored, and its
 * compiled form takes no part in the overlaps (nothing of it is live). */
bool po_Run_OwnedMismatch(po_Run *run, po_RunItem *it, const char *kind, const char *ns, const char *name, int64_t live) {
  bool ok = po_Run_Mismatch(
      run, it, "status.lastValid (generation %lld) does not match what this controller wrote to %s %s/%s (%s): it is ignored",
      (long long)it->entry_generation, kind, ns, name,
      live ? po_Run_OrOom(po_Arena_Printf(run->ar, "it holds generation %lld of this PropertyOverride%s", (long long)live,
                                          live == it->entry_generation ? " with other patches" : ""))
           : "it holds nothing this controller wrote for this PropertyOverride, or does not exist");
  po_Run_DropEntry(it);
  it->entry_generation = 0;
  return ok;
}

/* Whether the reconcile of the target a PropertyOverride points at now looks at where its mesh
 * object of this target is, and removes it after its own write succeeded (sweep): that of every
 * target of a mesh with an object per PropertyOverride does (the PropertyOverride's namespace,
 * Istio's root namespace), and a Consul target's of the PropertyOverride's own namespace. */
bool po_Run_SweptThere(const po_RunItem *it) {
  const char *tns = it->ce->c.target_ns;
  return po_Mesh_Ops(po_TargetKind_Mesh(it->ce->c.target_kind))->object_kind || !tns || !*tns || !strcmp(tns, it->ns);
}

/* A mesh this controller does not program (flag --<flag>: on, or auto when the API server serves
 * the kind `crd`). Always true (said). */
bool po_Run_MeshNotEnabled(po_Run *run, const char *mesh, const char *flag, const char *crd, po_Condition *p) {
  p->reason = "MeshNotEnabled";
  snprintf(p->message, sizeof p->message,
           "%s is not enabled in this controller (--%s=on, or --%s=auto with the %s CRD installed); nothing is "
           "written to %s", mesh, flag, flag, crd, run->where);
  return true;
}

/* The target object (a Service, a Gateway: `kind`) is gone, and with it our object `obj`. */
bool po_Run_TargetGone(po_Run *run, const char *obj, const char *kind, po_Condition *p) {
  p->reason = "TargetNotFound";
  snprintf(p->message, sizeof p->message, "%s does not exist: %s is deleted (written again when the %s is created)",
           run->where, obj, kind);
  return true;
}

/* What every one-object-per-PropertyOverride mesh says alike about its object `obj` ("EnvoyFilter
 * ns/name"): a look-alike (why), a failed write (err), an invalid generation without a record
 * (kept), an invalid one. True when said; else p is untouched. */
bool po_Run_ProgrammedOwned(po_Run *run, const po_RunItem *it, int64_t live_gen, const char *obj, const char *why,
                             const char *err, bool kept, po_Condition *p) {
  if (why || err) {
    p->reason = "TargetError";
    if (why) snprintf(p->message, sizeof p->message, "%s: %s", obj, why);
    else snprintf(p->message, sizeof p->message, "%s (retrying)", err);
  } else if (kept && it->mismatch[0]) {
    p->reason = "Invalid";
    snprintf(p->message, sizeof p->message, "generation %lld is invalid; %s is left as it is%s",
             (long long)it->ce->c.generation, obj,
             live_gen ? po_Run_OrOom(po_Arena_Printf(run->ar, " (generation %lld is live in it)", (long long)live_gen)) : "");
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

/* record_bound for a mesh whose write phase compares a record with its object: this process's
 * memory of its own record, else it->unverified (written only where the object already holds
 * exactly it). */
bool po_Run_OwnedRecordBound(po_Run *run, po_RunItem *it, const po_CompiledEntry *rec) {
  if (!po_TargetIndex_IsOwnLastValid(run->ix, it->ns, it->name, it->uid, rec->generation, rec->hash)) it->unverified = true;
  return true;
}
