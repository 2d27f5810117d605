/* Private to reconcile: carrying out the plan for one mesh object of one PropertyOverride (an
 * EnvoyFilter, an EnvoyPatchPolicy), the write phase every one-object-per-PropertyOverride mesh
 * shares (istio_write.h, eg_write.h). The decision is the adapter's (po/targets/owned.h):
 *   Create  -> created, then the created annotation bound to the uid the create returned (a
 *              second write; when it fails the index remembers the object as ours,
 *              po_TargetIndex_NoteCreated, and the next reconcile binds it; its uid is handed
 *              out (unbound_uid) for the PropertyOverride's status.created, by which a restarted
 *              controller binds it: the status is the controller's to write, the uid the API
 *              server's, so a copy, a restore or a look-alike by hand is never adopted);
 *   Update  -> on the read resourceVersion (409: retried); the binding of such an unbound
 *              object failing again hands its uid out the same way (the first failure may have
 *              been a conflict, after which no status is written);
 *   Delete  -> with that resourceVersion as precondition (already gone: done);
 *   Foreign -> nothing written; the status says why. */
#ifndef PO_RECONCILE_OWNED_WRITE_H_
#define PO_RECONCILE_OWNED_WRITE_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/engine.h"
#include "po/reconcile/reconcile.h"
#include "po/targets/owned.h"

struct json_object;

typedef struct {
  /* io's writer of that kind (write_filter, write_policy) and reader (get_filter, get_policy) */
  po_WriteResult (*write)(void *ctx, const char *ns, const char *name, struct json_object *obj, bool create,
                          const char *resource_version, struct json_object **written, po_CtlStatus *st);
  const struct json_object *(*get)(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st);
  /* the adapter's decision (po_Istio_Plan, po_EG_Plan) */
  po_OwnedPlan (*plan)(const struct json_object *current, const struct json_object *desired, const char *owner_uid,
                       const char *created_uid);
  const char *kind; /* "EnvoyFilter": for messages */
  /* A spec member that may be large (EnvoyPatchPolicy: "jsonPatches"; NULL: none): created
   * empty, and written by the binding update that follows every create. The create's answer is
   * parsed (its uid binds the object); with the member in it that answer is a second tree as
   * large as the policy's, for nothing. */
  const char *bulky;
} po_OwnedKindOps;

typedef struct {
  bool foreign;     /* a look-alike: left alone (why) */
  const char *why;  /* static */
  bool failed;      /* a write failed (err) */
  bool conflict;    /* ... on a newer object (409) */
  po_CtlCode code;  /* the failed write's code */
  char err[512];
  char unbound_uid[128]; /* created, and the binding write failed: its uid ("" otherwise) */
} po_OwnedOutcome;

/* An outcome's text (err, unbound_uid) kept with its item: copied into ar, cut at size - 1 bytes
 * (the item's buffer it once was cut it there); "" (static) for an empty one, NULL when out of
 * memory. The mesh's item tables are made by every reconcile of its targets, one item per
 * PropertyOverride, and such texts are rare: fixed buffers made an item about 700 bytes. */
const char *po_Owned_Text(po_Arena *ar, const char *src, size_t size);

/* The PropertyOverride the object is for (its namespace and name; its uid is owner_uid): whose
 * status.created may name an object created by an earlier process and not bound yet. */
typedef struct {
  const char *ns, *name;
} po_OwnedFor;

/* One plan for the object ns/name, carried out. `current` is the cache's (read only; NULL:
 * absent). *writes counts the writes made. False only when memory ran out (nothing more
 * written; out->err says so when it was a read of the PropertyOverride: cached, not readable). */
bool po_Owned_CarryOut(const po_ReconcileIO *io, po_TargetIndex *ix, const po_OwnedKindOps *k, const char *ns,
                       const char *name, po_OwnedFor who, const char *owner_uid, const struct json_object *current,
                       const struct json_object *desired, int *writes, po_OwnedOutcome *out);

/* The object ns/name deleted when it is provably this PropertyOverride's (look-alikes stay):
 * one left where a PropertyOverride no longer puts one. Absent, or no reader: nothing. False
 * when a deletion failed, memory ran out or it is cached but could not be read (st says why). */
bool po_Owned_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const po_OwnedKindOps *k, const char *ns,
                    const char *name, po_OwnedFor who, const char *owner_uid, int *writes, po_CtlStatus *st);

#endif
