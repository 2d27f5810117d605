/* The Consul target (ARCHITECTURE.md section 7): our builtin/property-override entries in the
 * spec.envoyExtensions of a consul.hashicorp.com/v1alpha1 ServiceDefaults (or the ProxyDefaults
 * named global).
 *
 * Each entry we write carries its source in its arguments, under a key Consul's decoder ignores
 * (unknown keys are ignored, docs/consul-semantics.md 2.4):
 *     "PropertyOverride": {"name": N, "generation": G, "uid": <PropertyOverride uid>,
 *                          "targetUID": <the target's own uid>, "priority": P, "namespace": NS}
 * ("priority", the spec.priority the entry was written at, only when not 0: what keeps a live
 * entry in its place when its PropertyOverride turns invalid and no record is left; "namespace",
 * the PropertyOverride's, only when it differs from the target's: markers of same-namespace
 * entries stay as older versions wrote them, so nothing is rewritten on upgrade)
 * An entry is ours only when its targetUID is the uid of the object it sits in and its name and
 * uid are those of a PropertyOverride of that target as the cache has it: the API server assigns
 * uids, so a copy into another object, a restore (a new object, a new uid), a marker written by
 * hand, one of a PropertyOverride deleted without its finalizer, or one from an older version is
 * a look-alike, someone else's, and is never changed or removed. Entries of others keep their order; ours follow them, ordered by
 * spec.priority (lower first: Consul applies the list in order, so the later one wins a conflict),
 * then by PropertyOverride name. A target we create is labelled app.kubernetes.io/managed-by=
 * propertyoverride and, right after the create, annotated propertyoverride.io/created=<its own
 * uid>; we delete it only when that annotation names its own uid and nothing else is left. */
#ifndef PO_MESHES_CONSUL_H_
#define PO_MESHES_CONSUL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/engine.h"
#include "po/targets/override.h"
#include "po/targets/release.h"

struct json_object;

#define PO_CONSUL_GROUP "consul.hashicorp.com"
#define PO_CONSUL_VERSION "v1alpha1"
#define PO_EXTENSION_NAME "builtin/property-override"

typedef struct {
  const char *owner;               /* PropertyOverride name (same namespace as the target) */
  const char *uid;                 /* the PropertyOverride's uid the entry was written for */
  int64_t generation;
  struct json_object *arguments;   /* borrowed; the arguments including the source key */
  int32_t priority;                /* the PropertyOverride's spec.priority: the plan's order (read back: the marker's, else 0) */
  bool required;                   /* the entry's `required` (spec.required) */
  /* The PropertyOverride's namespace when it is not the target's (spec.targetRef.namespace set by
   * a namespace --allow-cross-namespace-from lists); "" or NULL: the target's own. Read back from
   * the marker's "namespace" (absent in markers of older versions: the same namespace). It only
   * says where to look the PropertyOverride up: the entry is ours only when that object's uid is
   * the marker's, so a forged namespace gains nothing. */
  const char *ns;
  /* 1 + the entry's index in spec.envoyExtensions when it was read from a digest of the target
   * (the reconciler's; `arguments` is NULL then), else 0 */
  size_t slot;
} po_ConsulEntry;

/* The source marker (a new reference) and the arguments to write for one compiled
 * PropertyOverride with it (a new reference); NULL when out of memory, never a partial marker.
 * `ns`: the PropertyOverride's namespace when not the target's, else NULL or "".
 * `uid` is the PropertyOverride's, `target_uid` the uid of the object the entry goes into (""
 * offline, where none is known). */
struct json_object *po_Consul_Marker(const char *ns, const char *name, int64_t generation, int32_t priority, const char *uid,
                                     const char *target_uid);
struct json_object *po_Consul_Arguments(const po_CompiledOverride *c, const char *uid, const char *target_uid);

/* A marker's priority as po_Consul_OwnedEntries reads it: an integer in int32's range, else 0
 * (absent: written at 0, or by a version that did not record it). */
int32_t po_Consul_MarkerPriority(const struct json_object *marker);

/* The order of our entries in a target (qsort's comparator over po_ConsulEntry): priority, then
 * name, then namespace (the target's own, "" or NULL, first): po_Consul_Plan's. */
int po_ConsulEntry_Order(const void *a, const void *b);

/* A PropertyOverride of the target, as the cache has it. */
typedef struct {
  const char *name;
  const char *uid;
} po_ConsulOwner;

/* What one element of spec.envoyExtensions says of itself, as po_Consul_OwnedEntries reads it
 * with no owners given: no marker of ours (None), a marker bound to another object or incomplete
 * (LookAlike), or bound to the object of uid target_uid (Bound: *out, when not NULL, gets it,
 * borrowed from `entry`). */
typedef enum { kPo_ConsulMark_None = 0, kPo_ConsulMark_LookAlike, kPo_ConsulMark_Bound } po_ConsulMark;
po_ConsulMark po_Consul_MarkOf(const struct json_object *entry, const char *target_uid, po_ConsulEntry *out);

/* Our entries in a target as it is (NULL: absent): bound to its uid and to one of `owners`
 * (owners NULL: the target's uid alone decides, for offline use). Returns how many; at most
 * `cap` are filled. Borrowed from `target`. *foreign (may be NULL) gets the number of look-alike
 * entries. */
size_t po_Consul_OwnedEntries(const struct json_object *target, const po_ConsulOwner *owners, size_t nowners,
                              po_ConsulEntry *out, size_t cap, size_t *foreign);

/* Whether entry arguments (our marker is ignored) pass Consul's Constructor under its wire typing
 * and Envoy's rules today: what is re-checked before an entry already in a target is kept.
 * NoMemory: memory ran out (in `a`, or copying them), which says nothing of the entry. */
typedef enum { kPo_ConsulRecheck_Refused = 0, kPo_ConsulRecheck_Accepted, kPo_ConsulRecheck_NoMemory } po_ConsulRecheck;
po_ConsulRecheck po_Consul_Recheck(const struct json_object *arguments, po_Arena *a);
/* A new, empty target object (labelled; no annotation, no entries): what is created first.
 * NULL when out of memory. */
struct json_object *po_Consul_NewTarget(po_TargetKind kind, const char *ns, const char *name);

typedef struct {
  struct json_object *object; /* the desired target (new reference), NULL when it should not exist */
  bool changed;               /* differs from the current one (create, update or delete needed) */
  bool create;                /* it does not exist yet */
  bool remove;                /* it should be deleted (we created it and nothing else is left) */
  bool out_of_memory;         /* no plan (object NULL, changed false): never write a partial one */
} po_ConsulPlan;

/* The target as it should be with exactly `entries` (sorted here by priority, then owner) as our entries; all
 * or nothing (out_of_memory, no object) when memory runs out.
 * `current` NULL means it does not exist (the plan then shows it created with the entries, as
 * `render` prints it; the reconciler creates it empty first to learn its uid). Every other field
 * and extension, look-alikes included, is preserved. The object shares members with `current`
 * (all but metadata and spec's top level) and the entries' arguments by reference, not by copy:
 * both must be the calling thread's own (json-c's reference counts are not atomic), left
 * unchanged while the object lives, and only its metadata and spec's members changed. */
po_ConsulPlan po_Consul_Plan(const struct json_object *current, po_TargetKind kind, const char *ns,
                             const char *name, const po_ConsulOwner *owners, size_t nowners,
                             const po_ConsulEntry *entries, size_t n);

/* The JSON Patch (RFC 6902) that turns a target of version `rv` whose spec.envoyExtensions is
 * `old_list` (NULL: absent) into one whose list is `new_list` (a plan's, po_Consul_Plan), every
 * other field unchanged: the version written back first (a precondition: 409 Conflict when the
 * object is no longer `rv`), then, between the lists' common head and tail, the entries outside
 * their longest common subsequence removed and the new ones added, by index (entries compared by
 * identity, as the plan shares them). A reconcile that adds one PropertyOverride's entry sends
 * that entry, not the whole target. `annotations` (NULL: unchanged) is the object's new
 * metadata.annotations, set whole (the created annotation, the write record of sync.h). The text is in `a`; NULL (write the object instead)
 * when out of memory, `rv` is empty, or the change takes more than a thousand operations. */
const char *po_Consul_Delta(const struct json_object *old_list, const struct json_object *new_list, const char *rv,
                            const struct json_object *annotations, po_Arena *a, size_t *len);

/* Its releases and the Envoy API snapshot judging each (src/consul_releases.c). */
extern const po_MeshReleases po_Consul_Releases;

#endif
