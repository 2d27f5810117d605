/* Private to reconcile: the write phase of an Envoy Gateway target (key Gateway/<ns>/<name>).
 * One EnvoyPatchPolicy per PropertyOverride, in the Gateway's namespace, each programmed on its
 * own through po_EG_Plan (po/meshes/eg.h, po/targets/owned.h's ownership rules) by owned_write.h's
 * sequence: the load, plan (last valid generation, tenancy) and status phases are
 * reconcile.c's, shared with the other meshes; only the objects written differ.
 *
 * Per PropertyOverride of the target, in the order reconcile.c loaded them:
 *   the generation to program -> po_EG_EnvoyPatchPolicy with the Gateway and the HTTPRoutes
 *     whose parentRefs name it (io->gateway_routes) -> po_EG_Plan against the EnvoyPatchPolicy
 *     of that name in the cache: create (then bind), update on the read resourceVersion, or
 *     leave a look-alike alone; once current, Envoy Gateway's own status of it is read
 *     (po_EG_ReadStatus) for our Programmed;
 *   the bound: each policy's jsonPatches within kPo_EGMaxPolicyBytes, and all the Gateway's
 *     policies together within kPo_EGMaxGatewayBytes: first every PropertyOverride's listener
 *     and route configuration entries are set aside (po_EG_FixedBytes), then the rest is given
 *     out for route clusters by name (each gets what the ones before it left, less what is set
 *     aside for those after it, up to its own bound), so no route flood ever starves a listener
 *     patch; what does not fit is left out by po_EG_EnvoyPatchPolicy's order and said in the
 *     status (fit); one whose listener and route entries find no room even so (they alone over
 *     the Gateway's bound) keeps its policy as it is (NoRoom), never deleted for lack of room;
 *   a generation Envoy Gateway's names cannot carry (a patch touching no generated resource,
 *     or leaking to another backend: po_EG_EnvoyPatchPolicy's reason) -> ours deleted, the
 *     reason in the status (Refused);
 *   none to program (being deleted, refused by the tenancy policy, the Gateway gone) -> ours
 *     deleted;
 *   an invalid generation without a usable record -> its EnvoyPatchPolicy left exactly as it is. */
#ifndef PO_RECONCILE_EG_WRITE_H_
#define PO_RECONCILE_EG_WRITE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/reconcile/reconcile.h"
#include "po/meshes/eg.h"

struct json_object;

typedef enum {
  kPo_EGOutcome_Ok = 0,    /* the EnvoyPatchPolicy is as planned (current, written, or deleted) */
  kPo_EGOutcome_Kept,      /* invalid without a record: its EnvoyPatchPolicy left as it is */
  kPo_EGOutcome_Skipped,   /* held here, valid where it points now: that reconcile owns it */
  kPo_EGOutcome_NoGateway, /* the Gateway is absent: ours deleted */
  kPo_EGOutcome_Refused,   /* po_EG_EnvoyPatchPolicy cannot make one (why): ours deleted */
  kPo_EGOutcome_Foreign,   /* an EnvoyPatchPolicy of that name that is not ours: left alone */
  kPo_EGOutcome_Failed,    /* a write failed (err); retried */
  kPo_EGOutcome_Disabled,  /* Envoy Gateway is not enabled in this controller */
  kPo_EGOutcome_NoRoom,    /* the Gateway's bound leaves no room for it (why): its policy left as it is */
} po_EGOutcome;

typedef struct {
  /* in */
  const char *name, *uid;             /* the PropertyOverride */
  const po_CompiledOverride *program; /* the accepted generation to program; NULL: none */
  bool keep;                          /* invalid without a usable record: leave its policy */
  bool skip;                          /* not this target's to write (held here, valid elsewhere) */
  /* `program` is status.lastValid not yet shown to be this controller's (reconcile.c,
   * record_bound): nothing is written for it; it counts as programmed only where the object is
   * ours and already holds exactly it, else the outcome is Kept with `mismatch` */
  bool verify;
  /* out */
  po_EGOutcome outcome;
  bool conflict;                      /* a write met a newer object (409): retried soon */
  bool written;                       /* Ok and written by this reconcile: Envoy Gateway has not answered */
  po_EGStatus eg;                     /* Ok and current: Envoy Gateway's word (strings in the arena) */
  bool built;                         /* a policy was built for it: fit says what it holds */
  po_EGFit fit;                       /* what the policy holds, what was left out and why (bound) */
  bool gateway_bound;                 /* the Gateway's bound, not the policy's, was the tighter */
  const char *policy_ns, *policy_name;/* the EnvoyPatchPolicy (in the arena) */
  const char *unbound_uid;            /* created, the binding write failed: for status.created (arena; NULL otherwise) */
  const char *why;                    /* Foreign (static), Refused, NoRoom (in the arena) */
  const char *err;                    /* Failed: the server's answer (in the arena, cut at 511 bytes) */
  bool mismatch;                      /* verify: the object does not hold it (Kept) */
  int64_t live_generation;            /* mismatch, NoRoom: the generation of ours the object holds (0: none, or not said) */
} po_EGItem;

/* Programs the items' EnvoyPatchPolicies. `gateway` is the Gateway as the cache has it (NULL:
 * absent). *writes counts the writes made. False only when memory ran out, st not Ok then when it
 * was a read (an EnvoyPatchPolicy cached but not readable, never taken for absent: st names it;
 * an HTTPRoute's says only out of memory). Cost linear in the
 * items and the HTTPRoutes of the Gateway (read once per call); memory, one policy at a time: its
 * tree, shared with the object written (no copy of its jsonPatches), and its text once sent. */
bool po_EG_Write(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *gateway_name,
                 const struct json_object *gateway, po_EGItem *items, size_t n, po_Arena *ar, int *writes,
                 po_CtlStatus *st);

/* A PropertyOverride's EnvoyPatchPolicy where its target no longer puts one (it moved to an
 * Istio or Consul target): deleted when provably ours (look-alikes stay). Run by the reconcile
 * of its current target, unless that is a Gateway (whose write owns the same name). False when
 * a deletion failed (st says why: retried). */
bool po_EG_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                 po_Arena *ar, int *writes, po_CtlStatus *st);

#endif
