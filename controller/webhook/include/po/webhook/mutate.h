/* The mutating admission webhook's decision (docs/gitops.md): a write to a ServiceDefaults or
 * ProxyDefaults that would leave out the builtin/property-override entries the controller
 * manages gets them back, in the same AdmissionReview, as a JSONPatch; so a GitOps apply of the
 * object's git version never stores a revision without them.
 *
 * What goes back is never taken from oldObject: the webhook asks `desired` (the app wires the
 * reconciler's own load and plan over the process's caches, po_Reconcile_Desired) for the
 * spec.envoyExtensions the controller would write into the incoming object, so a forged or
 * stale entry is not kept and an entry the controller removes does not return. Of our entries
 * in that answer, only those oldObject holds (bound to the same PropertyOverride) go back: the
 * webhook keeps entries and never adds one, since a lagging replica's caches may still show a
 * PropertyOverride the controller has already cleaned up. The answer is
 * always allowed: in every case where nothing can be said (caches not synced, no uid yet on
 * CREATE, the write is the controller's own, out of memory) the object passes unchanged and the
 * controller's repair stays the fallback. A body that is not one AdmissionReview v1 request is
 * a 400, as for the validating route.
 *
 * A PropertyOverride created without the controller's finalizer gets it in the same write
 * (`finalizer`), when `claims` says the controller would claim it: the controller's own
 * finalizer PATCH, its echo and the etcd write they cost go (one of three writes per new
 * PropertyOverride). An update that would drop it from a claimed object keeps it, but on an
 * object being deleted only against an apply (server-side or client-side) that listed
 * finalizers and changed them (which replaces the whole list): removing the finalizer by hand
 * (the documented way out of a stuck deletion) stays possible. Nothing else is changed. When the
 * webhook is not called (failurePolicy Ignore) the controller adds the finalizer itself, as
 * before. */
#ifndef PO_WEBHOOK_MUTATE_H_
#define PO_WEBHOOK_MUTATE_H_

#include <stddef.h>

#include "po/base/status.h"
#include "po/engine.h"
#include "po/targets/override.h"

struct json_object;

typedef enum {
  kPo_Mutate_Keep = 0,  /* the object already holds what the controller would write */
  kPo_Mutate_Set,       /* *extensions (a new reference) is the list to store */
  kPo_Mutate_NotReady,  /* nothing can be said yet (caches not synced): pass unchanged */
  kPo_Mutate_Error,     /* pass unchanged; st says why */
} po_MutateDecision;

/* `object` is the incoming target with the stored object's uid (read only). Called on the
 * webhook's HTTP threads, concurrently: it must be thread-safe. */
typedef po_MutateDecision (*po_MutateDesiredFn)(void *ctx, po_TargetKind kind, const struct json_object *object,
                                                struct json_object **extensions, po_CtlStatus *st);

/* Whether the controller claims this PropertyOverride (`object`, read only): a new one (held
 * false), its reconcile would put the finalizer on it; one that holds it (held true), its
 * reconcile will remove it at the deletion (whatever the tenancy policy says of it now).
 * Thread-safe, as desired. */
typedef bool (*po_MutateClaimsFn)(void *ctx, const struct json_object *object, bool held);

typedef struct {
  po_MutateDesiredFn desired; /* NULL: every target passes unchanged */
  void *ctx;
  /* The username the API server knows the controller by (its ServiceAccount's,
   * system:serviceaccount:NS:NAME); its writes pass unchanged: only the controller may remove
   * its own entries. NULL or "": none is exempt (every writer shares one identity in tests). */
  const char *controller_user;
  /* The finalizer a new PropertyOverride gets when claims says so. NULL (or claims NULL): every
   * PropertyOverride passes unchanged. */
  const char *finalizer;
  po_MutateClaimsFn claims;
} po_MutateOptions;

/* Returns the AdmissionReview response (a new reference; st Ok, http_status 200), or NULL with
 * st saying why the body is no AdmissionReview v1 request (st->http_status 400, or 413).
 * *outcome (may be NULL) gets "patched", "unchanged", "not-synced", "exempt" or "error", for
 * metrics and logs; "finalized" when a new PropertyOverride got the finalizer, "finalizer-kept"
 * when an update's drop of it was undone. */
struct json_object *po_Admission_Mutate(const char *body, size_t len, const po_MutateOptions *opt, po_CtlStatus *st,
                                        const char **outcome);

#endif
