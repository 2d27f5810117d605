/* Programming one mesh object per PropertyOverride (an Istio EnvoyFilter, an Envoy Gateway
 * EnvoyPatchPolicy): the one ownership decision both adapters use (istio.h, eg.h).
 *
 * Ownership as for Consul targets (consul.h): an object is ours only when its
 * propertyoverride.io/created annotation is its own uid (bound after its create returned it,
 * po_Owned_MarkCreated) and its propertyoverride.io/owner-uid annotation is the uid of the
 * PropertyOverride it is named after. A copy, a restore, one written by hand or one of a
 * PropertyOverride deleted and created again is someone else's: never changed, never deleted,
 * and the PropertyOverride is not programmed (its status says why). */
#ifndef PO_TARGETS_OWNED_H_
#define PO_TARGETS_OWNED_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* ---- the stored size of a mesh object ----------------------------------------------------
 * Kubernetes stores an object of at most kPo_MaxStoredBytes (etcd's default
 * --max-request-bytes): a larger one is refused on every write ("etcdserver: request is too
 * large"), and the one stored before stays, so nothing newer is ever programmed. Each adapter
 * bounds what it generates by measuring the pieces it writes, serialized, before building the
 * object: Istio refuses an EnvoyFilter whose configPatches alone exceed it (istio.c); Envoy
 * Gateway, whose policy grows with HTTPRoutes others write, keeps what fits under a lower bound
 * (eg.h, kPo_EGMaxPolicyBytes). */
enum { kPo_MaxStoredBytes = 1572864 };
/* The bytes `v` takes as the API server stores it (Go's encoding/json: '<', '>' and '&' as
 * \u003c, U+2028 and U+2029 as \u2028, each byte of invalid UTF-8 as \ufffd; 6 bytes each
 * where json-c writes 1 to 3), an upper bound: what is counted against kPo_MaxStoredBytes and
 * Envoy Gateway's bound is what etcd is sent. 0 when out of memory. */
size_t po_Owned_JsonBytes(struct json_object *v);
/* The bytes string s takes as a JSON string, quotes included: an upper bound over every escape a
 * serializer may write ('/' as "\/", a control character as "\u00XX", and Go's as for
 * po_Owned_JsonBytes). */
size_t po_Owned_StringBytes(const char *s);

typedef enum {
  kPo_OwnedPlan_None = 0, /* as it should be */
  kPo_OwnedPlan_Create,   /* create `object` (carrying owner-uid, not yet created) */
  kPo_OwnedPlan_Update,   /* update with `object` (current's resourceVersion kept) */
  kPo_OwnedPlan_Delete,   /* ours and no longer wanted */
  kPo_OwnedPlan_Foreign,  /* an object of that name that is not ours: left alone */
} po_OwnedPlanAction;

/* The kinds of object planned, for the sentences (static) a look-alike gets. */
typedef enum { kPo_Owned_EnvoyFilter = 0, kPo_Owned_EnvoyPatchPolicy } po_OwnedKind;

typedef struct {
  po_OwnedPlanAction action;
  struct json_object *object; /* Create/Update: the object to write (a new reference; its spec is
                               * desired's own, shared: write it, never change it) */
  const char *why;            /* Foreign: the sentence for the status (static) */
  bool out_of_memory;         /* no plan: write nothing */
} po_OwnedPlan;

/* current: the object of that name as it is (NULL: absent); desired: the adapter's object (NULL:
 * the PropertyOverride is gone or no longer targets that mesh); owner_uid: the
 * PropertyOverride's uid; created_uid: the uid the caller's own create returned (NULL when it
 * created nothing), which is what lets it bind the created annotation. The spec and our labels
 * are the desired ones, and so are the annotations `desired` carries (the generation); labels and
 * annotations of others on the current object are kept, and
 * its status (the mesh's) is never written. */
po_OwnedPlan po_Owned_Plan(const struct json_object *current, const struct json_object *desired, const char *owner_uid,
                           const char *created_uid, po_OwnedKind kind);

/* The created annotation (propertyoverride.io/created): set by the controller right after its own
 * create returned the object's uid, so it names that uid. Every object the controller creates
 * (a Consul target, an EnvoyFilter, an EnvoyPatchPolicy) is bound this way: a copy, a restore
 * or one written by hand has another uid, and is never taken for ours. */
typedef enum { kPo_OwnedCreated_No = 0, kPo_OwnedCreated_Us, kPo_OwnedCreated_Foreign } po_OwnedCreated;
/* Whether the created annotation is absent, bound to the object's own uid, or a look-alike. */
po_OwnedCreated po_Owned_CreatedBy(const struct json_object *obj);
/* Binds the created annotation to the object's own uid (after its create returned it). False
 * when the object has no metadata or memory ran out (then the annotation may be missing). */
bool po_Owned_MarkCreated(struct json_object *obj);

/* The annotation that says which generation of the PropertyOverride the object holds, written by
 * the controller (po_Owned_MarkGeneration on the desired object; po_Owned_Plan keeps the desired
 * object's annotations on the current one): with the object's content, the proof a later
 * status.lastValid is checked against after a restart. */
#define PO_OWNED_GENERATION_KEY "propertyoverride.io/generation"
/* Sets it on a desired object; false when out of memory. */
bool po_Owned_MarkGeneration(struct json_object *desired, int64_t generation);

/* The generation the object says it holds (PO_OWNED_GENERATION_KEY) when it is ours (owner_uid's,
 * created annotation bound), else 0. */
int64_t po_Owned_Generation(const struct json_object *current, const char *owner_uid);
/* Whether `current` is ours (owner_uid's, created annotation bound) and already holds `desired`
 * exactly, so that po_Owned_Plan would write nothing. */
bool po_Owned_Holds(const struct json_object *current, const struct json_object *desired, const char *owner_uid,
                    po_OwnedKind kind);

#endif
