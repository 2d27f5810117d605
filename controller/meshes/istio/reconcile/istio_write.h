/* Private to reconcile: the write phase of an Istio target (keys Service/<ns>/<name> and
 * Mesh/<ns>/global). One EnvoyFilter per PropertyOverride, each programmed on its own through
 * po_Istio_Plan (po/meshes/istio.h): the load, plan (last valid generation, tenancy) and status
 * phases are reconcile.c's, shared with Consul's targets; only the objects written differ.
 *
 * Per PropertyOverride of the target, in the order reconcile.c loaded them:
 *   the generation to program (its current one, or its last valid one from the status record)
 *     -> po_Istio_EnvoyFilter with the Service's spec.selector (Mesh: none, in the root namespace)
 *     -> po_Istio_Plan against the EnvoyFilter of that name in the cache (po_Istio_FilterName): create (then bind the
 *        created annotation to the uid the create returned; when that write fails, the uid goes
 *        into the PropertyOverride's status.created, so a restarted controller still binds it),
 *        update on the read
 *        resourceVersion, delete ours, or leave a look-alike alone (reported: status and Event);
 *   none to program (being deleted, refused by the tenancy policy, the Service gone or without a
 *   selector) -> ours deleted;
 *   Mesh, ours as planned -> ours of the name earlier versions used deleted (the upgrade: after
 *     the new one is written, never before);
 *   an invalid generation without a usable record -> its EnvoyFilter left exactly as it is
 *     (never deleted: an invalid update never removes what was programmed);
 *   a status.lastValid not shown to be ours (verify) -> nothing written: as planned when the
 *     EnvoyFilter already holds exactly it (and its propertyoverride.io/generation), else left
 *     as it is (mismatch, with the generation it says it holds).
 * What is written carries propertyoverride.io/generation (po_Owned_MarkGeneration): the proof a
 * later record is checked against after a restart. */
#ifndef PO_RECONCILE_ISTIO_WRITE_H_
#define PO_RECONCILE_ISTIO_WRITE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/reconcile/reconcile.h"

struct json_object;

typedef enum {
  kPo_IstioOutcome_Ok = 0,    /* the EnvoyFilter is as planned (written, current, or deleted) */
  kPo_IstioOutcome_Kept,      /* invalid without a record: its EnvoyFilter left as it is */
  kPo_IstioOutcome_Skipped,   /* listed here for a target it left, valid where it points: that
                               * target's reconcile owns its EnvoyFilter */
  kPo_IstioOutcome_NoService, /* the Service is absent: ours deleted */
  kPo_IstioOutcome_NoSelector,/* the Service selects no pods: ours deleted */
  kPo_IstioOutcome_Foreign,   /* an EnvoyFilter of that name that is not ours: left alone */
  kPo_IstioOutcome_Failed,    /* a write failed (err); retried */
  kPo_IstioOutcome_Disabled,  /* Istio is not enabled in this controller: nothing read or written */
} po_IstioOutcome;

typedef struct {
  /* in */
  const char *name, *uid;             /* the PropertyOverride */
  const po_CompiledOverride *program; /* the accepted generation to program; NULL: none */
  bool keep;                          /* invalid without a usable record: leave its EnvoyFilter */
  bool skip;                          /* not this target's to write (held here, valid elsewhere) */
  /* `program` is status.lastValid not yet shown to be this controller's (reconcile.c,
   * record_bound): nothing is written for it; it counts as programmed only where the object is
   * ours and already holds exactly it, else the outcome is Kept with `mismatch` */
  bool verify;
  /* out */
  po_IstioOutcome outcome;
  bool conflict;                      /* a write met a newer object (409): retried soon */
  const char *filter_ns, *filter_name;/* the EnvoyFilter (in the arena) */
  const char *why;                    /* Foreign, NoSelector: the sentence (static) */
  const char *err;                    /* Failed: the server's answer (in the arena, cut at 511 bytes) */
  /* Created here and not bound (the binding write failed): its uid, for status.created, the
   * durable record that lets a restarted controller bind it still (in the arena; NULL otherwise) */
  const char *unbound_uid;
  bool mismatch;                      /* verify: the object does not hold it (Kept) */
  int64_t live_generation;            /* mismatch: the generation of ours the object holds (0: none, or not said) */
} po_IstioItem;

/* Programs the items' EnvoyFilters. `service` is the Service of a Service key as the cache has
 * it (NULL: absent; ignored for Mesh). *writes counts the writes made. False only when memory
 * ran out (the items not reached yet say Failed), st not Ok then when it was a read (an
 * EnvoyFilter cached but not readable, never taken for absent: st names it). */
bool po_Istio_Write(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *ns,
                    const struct json_object *service, const po_TargetOptions *opts, po_IstioItem *items, size_t n,
                    po_Arena *ar, int *writes, po_CtlStatus *st);

/* A PropertyOverride's EnvoyFilter where its target no longer puts one: it moved to another
 * mesh's target (a Consul one), or between a Service (its namespace) and the Mesh (the root
 * namespace). Run by the reconcile of its current target, whatever the mesh: the old target's
 * reconcile no longer lists it (a Consul target finds such entries inside itself; an
 * EnvoyFilter is an object of its own). Looks at the places one can be (the PropertyOverride's
 * namespace by the Service name; the root namespace by the Mesh name and by the Mesh name of
 * earlier versions, po_Istio_LegacyMeshFilterName), skipping the one programmed now
 * (`programmed_ns`/`programmed_name`, NULL: none), and deletes one that is provably this
 * PropertyOverride's (po_Istio_Plan); look-alikes stay. *writes counts deletions. False when a
 * deletion failed (st says why: retried). */
bool po_Istio_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                    const char *programmed_ns, const char *programmed_name, po_Arena *ar, int *writes,
                    po_CtlStatus *st);

#endif
