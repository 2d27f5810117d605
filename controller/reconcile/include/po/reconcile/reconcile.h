/* Reconciling one target (a ServiceDefaults, or the ProxyDefaults `global`, of a namespace)
 * with every PropertyOverride that points at it. Level-triggered and idempotent: read the
 * current state, compute the desired one, converge (CONTRIBUTING.md, "The controller", after controller-runtime).
 *
 *   key  "ServiceDefaults/<ns>/<name>" or "ProxyDefaults/<ns>/global" (Consul), "Service/<ns>/<name>" or
 *        "Mesh/<ns>/global" (Istio, istio_write.h), "Gateway/<ns>/<name>" (Envoy Gateway, eg_write.h)
 *   0. nothing at all unless every cache it reads has synced (io->synced): a partial cache
 *      would look like deleted PropertyOverrides, and their entries and targets would go;
 *   1. load: the target, the PropertyOverrides of the key (the index), each compiled once per
 *      generation (the index keeps the compiled forms by uid, generation and a hash of the spec;
 *      po_TargetIndex_Stats), and the entries of ours live in the target;
 *   2. plan: one the tenancy policy refuses contributes nothing (reason TargetNotAllowed); a
 *      valid one contributes its current generation; an invalid one keeps the last valid
 *      generation, compiled from its status.lastValid record (never taken verbatim: the engine
 *      judges that very content) or, without a usable record, the entry live in the target when
 *      it is ours and passes Consul's check again; so a bad update never removes what was
 *      programmed, and nothing the engine has not validated, as it is, is ever written; one
 *      being deleted contributes nothing; those over the target's room (the webhook's
 *      per-object limits) neither;
 *   3. write: our finalizer added where missing; then the target (po/meshes/consul.h), written
 *      when it differs: created empty first (to learn its uid, which our markers and the
 *      created annotation are bound to), updated on the read resourceVersion (409 -> retry), or
 *      deleted when provably ours and empty; look-alike entries and objects (copies, restores,
 *      hand-written markers) are left alone and reported;
 *   4. status: each PropertyOverride's Accepted, Programmed (with the generation that is live;
 *      under io->sync require, True only once consul-k8s reports the target synced after our
 *      write: Pending, SyncFailed with its message, a Warning Event SyncTimeout once; sync.h),
 *      and Overlapping when another one's patches meet its own on resolved field chains where
 *      both can match one resource: of this target, or across the ProxyDefaults and every
 *      ServiceDefaults, whose entries Consul applies after the ProxyDefaults ones), lastValid,
 *      written only when it changed, with an Event when a condition's reason changes; the
 *      finalizer removed from deleted PropertyOverrides once the target no longer holds their
 *      entry, nor any other target (po_TargetIndex_EntryHolders: one it moved away from).
 * Out of memory at any point ends the reconcile there with an error: no write is made from a
 * plan missing a piece (which would drop entries).
 * Reads go through the caches (io), writes through the API (io). No thread of its own. */
#ifndef PO_RECONCILE_RECONCILE_H_
#define PO_RECONCILE_RECONCILE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/base/status.h"
#include "po/runtime/controller.h"
#include "po/targets/override.h"
#include "po/targets/tenancy.h"

struct json_object;

#define PO_FINALIZER "propertyoverride.io/finalizer"

/* What Programmed=True waits for (docs/crd.md, "Programmed"; --consul-sync-status). Under
 * require, our entries must be in the target and consul-k8s must report the target synced into
 * Consul after our write (reasons Pending, SyncFailed until then); under ignore, for clusters
 * without consul-k8s, written is programmed. */
typedef enum { kPo_SyncMode_Ignore = 0, kPo_SyncMode_Require = 1 } po_SyncMode;
typedef struct {
  po_SyncMode mode;
  int64_t timeout_s; /* Pending longer than this after our write: one Warning Event (SyncTimeout); 0: never */
} po_SyncPolicy;

/* Which namespaces hold a ServiceDefaults / ProxyDefaults of each name (the informer handlers keep
 * it; thread-safe). consul-k8s writes the objects of every Kubernetes namespace into one Consul
 * config entry per name unless Consul namespaces with mirroring are enabled, so a target is not
 * created where one of that name already exists in another namespace (Programmed=False,
 * TargetInOtherNamespace, naming it). Set returns false only when memory ran out. */
typedef struct po_TargetNames po_TargetNames;
po_TargetNames *po_TargetNames_New(void);
void po_TargetNames_Free(po_TargetNames *t);
bool po_TargetNames_Set(po_TargetNames *t, po_TargetKind kind, const char *ns, const char *name, bool present);
/* Another namespace holding `name` (into other), if any. */
bool po_TargetNames_Elsewhere(po_TargetNames *t, po_TargetKind kind, const char *name, const char *ns, char *other,
                              size_t size);

typedef enum { kPo_WriteResult_Ok = 0, kPo_WriteResult_Conflict, kPo_WriteResult_NotFound, kPo_WriteResult_Failed } po_WriteResult;

/* One state of one cached object, read without parsing it: its resourceVersion, uid and
 * generation (0 when it has none). All three, because a resourceVersion alone can come back
 * for another object: deleted and created again under the same name, or an etcd restore. */
typedef struct {
  char rv[128];
  char uid[128];
  int64_t generation;
} po_OverrideVersion;

/* What a write's answer says of the object it made ("" and 0 when it did not say plainly). */
typedef struct {
  char uid[128];
  char rv[64];
  int64_t generation;
  bool finalized; /* patch_override's finalizer write: the object made lists our finalizer */
} po_WrittenVersion;

typedef struct {
  /* Cached reads (these two, get_filter and get_policy): the object, or NULL, st saying which NULL
   * it is: absent (st->code kPo_Ctl_Ok), or cached but not readable (any other code, st->message
   * naming it: out of memory decompressing or parsing it, po_Informer_Get). An unreadable object
   * is never taken for an absent one: the reconcile ends there as out of memory (nothing more
   * written: a target written without it would drop a live PropertyOverride's entry, a missing
   * target would be created), and is retried. The object is the cache's own, shared with
   * other threads: read it, never change it (nor take json-c references on it: those are not
   * atomic), and hand it back with `release(ctx, *ref)` (NULL release: nothing to hand back). */
  const struct json_object *(*get_override)(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st);
  const struct json_object *(*get_target)(void *ctx, po_TargetKind kind, const char *ns, const char *name, void **ref,
                                          po_CtlStatus *st);
  /* Writes. obj NULL deletes (with the given resourceVersion as precondition); create posts.
   * *written (may be NULL) gets the object the server returned (a new reference). */
  po_WriteResult (*write_target)(void *ctx, po_TargetKind kind, const char *ns, const char *name,
                                 struct json_object *obj, bool create, const char *resource_version,
                                 struct json_object **written, po_CtlStatus *st);
  /* A JSON merge patch of a PropertyOverride, or of its status subresource. *written (may be
   * NULL; zeroed when the write fails) gets what the answer says of the object the patch made,
   * from its bytes (no parse): the finalizer write's echo is then known ours by its version
   * (po_TargetIndex_IsOwnOverrideEcho) and never parsed. */
  po_WriteResult (*patch_override)(void *ctx, const char *ns, const char *name, bool status,
                                   struct json_object *patch, po_WrittenVersion *written, po_CtlStatus *st);
  /* The current wall-clock time as RFC 3339 (for lastTransitionTime). */
  void (*now)(void *ctx, char buf[32]);
  /* A core/v1 Event about a PropertyOverride (kubectl describe shows them); may be NULL.
   * type "Normal" or "Warning". Best effort: failures are not reconcile errors. */
  void (*event)(void *ctx, struct json_object *about, const char *type, const char *reason, const char *message);
  void *ctx;
  /* Whether every cache read above has synced; NULL: always. */
  bool (*synced)(void *ctx);
  /* An Event about a target (look-alike entries or objects); may be NULL. Best effort. */
  void (*target_event)(void *ctx, po_TargetKind kind, struct json_object *about, const char *type, const char *reason,
                       const char *message);
  const po_Tenancy *tenancy; /* who may target what; NULL allows everything */
  void (*release)(void *ctx, void *ref);
  /* The cached PropertyOverride's version, without reading it (false when absent); may be NULL.
   * With it, a PropertyOverride unchanged since the last reconcile that found nothing to do for
   * it is not read again. */
  bool (*override_version)(void *ctx, const char *ns, const char *name, po_OverrideVersion *v);
  const po_SyncPolicy *sync; /* NULL: ignore (Programmed means written) */
  po_TargetNames *names;     /* NULL: targets are created without looking at other namespaces
                              * (Consul namespace mirroring on, or tests) */
  /* The Istio target (keys Service/<ns>/<name> and Mesh/<ns>/global; get_target reads the core
   * Service of a Service key): the EnvoyFilters, read from their cache and written as
   * write_target does. NULL: Istio is not enabled in this controller (--istio), and the
   * PropertyOverrides of Istio targets say so in their status (Programmed=False, MeshNotEnabled). */
  const struct json_object *(*get_filter)(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st);
  po_WriteResult (*write_filter)(void *ctx, const char *ns, const char *name, struct json_object *obj, bool create,
                                 const char *resource_version, struct json_object **written, po_CtlStatus *st);
  /* The Envoy Gateway target (key Gateway/<ns>/<name>; get_target reads the
   * gateway.networking.k8s.io Gateway): the EnvoyPatchPolicies, read from their cache (with
   * Envoy Gateway's status) and written as write_filter does, and the HTTPRoutes whose
   * parentRefs name the Gateway (a new array of copies, the caller puts it; NULL when out of
   * memory, a cached route that could not be read included: one left out would lose its
   * clusters' patches), which its cluster names come from. NULL: Envoy Gateway is not enabled in this
   * controller (--envoy-gateway), and the PropertyOverrides of Gateways say so (MeshNotEnabled). */
  const struct json_object *(*get_policy)(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st);
  po_WriteResult (*write_policy)(void *ctx, const char *ns, const char *name, struct json_object *obj, bool create,
                                 const char *resource_version, struct json_object **written, po_CtlStatus *st);
  /* Routes of the namespaces `whole` names ("*": every one) are copied whole; the others as
   * po_EG_RouteCopy(route, false) (name, namespace, parentRefs: enough to tell they attach and to name them in
   * the status), so a tenant's routes no PropertyOverride follows cost no copy per reconcile. */
  struct json_object *(*gateway_routes)(void *ctx, const char *ns, const char *gateway, const char *const *whole,
                                        size_t n_whole);
  /* Queues another target key (may be NULL): a write here that removed the entry of a
   * PropertyOverride whose spec points at that target changes what that target's reconcile
   * says in its status (the generation held here is no longer live), and nothing else would
   * reconcile it: our own writes coming back through the watch are not reconciled. */
  void (*enqueue)(void *enqueue_ctx, const char *key);
  void *enqueue_ctx;
  /* May be NULL. When set, gateway_routes is asked for stubs only (no namespace whole), and this
   * gives HTTPRoute ns/name as po_EG_RouteCopy(route, true) when its rules are read (a new
   * reference; an empty object when gone: it adds no cluster; NULL: out of memory, or cached and
   * not readable): only the routes the bound
   * lets in are copied whole, one at a time, so a reconcile's memory follows the policy's bound,
   * not the routes tenants create (1 PropertyOverride opted in to 4,000 routes: 360 MiB). */
  struct json_object *(*route)(void *ctx, const char *ns, const char *name);
  /* May be NULL. An update of a target (write_target with obj and not create) that says the
   * uid and resourceVersion of the object it made, from the answer's bytes (no parse): its watch
   * event is then known ours by them (po_TargetIndex_IsOwnTargetEcho) and neither parsed nor
   * reconciled. NULL: updates go through write_target, and their echoes are reconciled.
   * `patch` (NULL: none) is a JSON Patch (RFC 6902, po_Consul_Delta: the version read as its
   * precondition) that turns the object as read into `obj`: sent instead of `obj` (a PATCH of
   * the entries that changed, not a PUT of the whole target); `obj` is what it makes, sent whole
   * over the same version when the patch is refused as Invalid (its operations failed on an
   * object that moved on: the whole object then says 409 Conflict). */
  po_WriteResult (*update_target)(void *ctx, po_TargetKind kind, const char *ns, const char *name,
                                  struct json_object *obj, const char *patch, size_t patch_len,
                                  po_WrittenVersion *written, po_CtlStatus *st);
  /* May be NULL. A target as the API server holds it now (a live read, not the cache): a new tree
   * the caller puts, or NULL with st kPo_Ctl_NotFound (absent) or another code (not read). Asked
   * before a finalizer is released by a reconcile that wrote nothing to the target (the cache
   * said current): the cache may be behind a write whose echo has not come (a lost answer, or
   * another leader's write), and the finalizer is the only thing that would remove the entry.
   * NULL: no such check. */
  struct json_object *(*read_target)(void *ctx, po_TargetKind kind, const char *ns, const char *name, po_CtlStatus *st);
  /* May be NULL. The cached target's version, without reading it (false when it is absent): a
   * Consul target whose digest the index keeps for that very version is reconciled from the
   * digest, its object read only where the reconcile needs more (controller/reconcile/README.md,
   * "A target read from its digest"). NULL: every reconcile reads the object. */
  bool (*target_version)(void *ctx, po_TargetKind kind, const char *ns, const char *name, po_OverrideVersion *v);
} po_ReconcileIO;

/* Which PropertyOverrides point at which target, kept current by the informer handlers.
 * Thread-safe. */
typedef struct po_TargetIndex po_TargetIndex;
po_TargetIndex *po_TargetIndex_New(void);
void po_TargetIndex_Free(po_TargetIndex *ix);
/* Forgets every status.lastValid record this process remembers writing. Called when leadership
 * is lost: while another replica leads it writes newer records, and a record of ours it superseded
 * must not be honoured from memory when this replica leads again (a replayed old status). The
 * proof after that is what the target holds, as after a restart. */
void po_TargetIndex_ForgetLastValid(po_TargetIndex *ix);
/* Records (or moves) a PropertyOverride; returns the key of the target it pointed at before,
 * in old_key (or "" when new), so both targets can be reconciled. */
/* The updates return false only when memory ran out; the index is then as it was, and the caller
 * must say so and retry (an index that silently misses a PropertyOverride would have its entry
 * removed as if it were deleted). */
bool po_TargetIndex_Set(po_TargetIndex *ix, const char *ns, const char *name, const char *target_key,
                        char *old_key, size_t size);
bool po_TargetIndex_Remove(po_TargetIndex *ix, const char *ns, const char *name, char *old_key, size_t size);
/* A second target a PropertyOverride is listed under: the one its last valid generation is live
 * in, while its current spec points elsewhere ("" for none). An invalid update that also moves
 * targetRef must not remove that generation from where it is live. Returns the previous one. */
bool po_TargetIndex_SetHeld(po_TargetIndex *ix, const char *ns, const char *name, const char *held_key, char *old_held,
                            size_t size);
/* The names of the PropertyOverrides of a target, sorted; returns the count (fills up to cap). */
size_t po_TargetIndex_Lookup(po_TargetIndex *ix, const char *target_key, char (*names)[254], size_t cap);
/* The same as "namespace/name": a target's PropertyOverrides may live in other namespaces
 * (spec.targetRef.namespace, where the tenancy policy allows it). */
size_t po_TargetIndex_LookupQualified(po_TargetIndex *ix, const char *target_key, char (*refs)[320], size_t cap);
size_t po_TargetIndex_Count(po_TargetIndex *ix);
/* The PropertyOverrides listed under every target of one kind (their current or held target), in
 * key order, as one block of string pairs: the key, then "ns/name", each NUL-terminated; *count
 * pairs. The caller frees it; NULL when out of memory (*count 0). One allocation, linear in the
 * links listed. */
char *po_TargetIndex_LinksOfKind(po_TargetIndex *ix, po_TargetKind kind, size_t *count);
/* Every target a PropertyOverride names (its current or held target), each once, in no order:
 * one block of NUL-terminated keys, *count of them; the caller frees it; NULL when out of memory
 * (*count 0). What a start enqueues without parsing each cached PropertyOverride again. */
char *po_TargetIndex_TargetKeys(po_TargetIndex *ix, size_t *count);
/* The other targets whose PropertyOverrides' statuses a change of one of `key` may change: Consul
 * applies the ProxyDefaults `global` entries to every service before its ServiceDefaults ones, so
 * their overlaps are reported on both sides. For a ProxyDefaults key, every ServiceDefaults key
 * with PropertyOverrides; for a ServiceDefaults key, every ProxyDefaults key with some; none at
 * all while no PropertyOverride targets a ProxyDefaults. Calls fn per key, outside the index's
 * lock; false when out of memory. Linear in the index's links of that kind. */
bool po_TargetIndex_ForEachRelated(po_TargetIndex *ix, const char *key, void (*fn)(void *ctx, const char *key),
                                   void *ctx);
/* The index's size and its compiled-form cache (a PropertyOverride is compiled once per
 * generation, not on every reconcile of its target): for tests, logs and benchmarks. */
typedef struct {
  size_t overrides;  /* PropertyOverrides indexed */
  size_t compiled;   /* compiled forms held (at most two per PropertyOverride) */
  uint64_t hits, misses;
  uint64_t own_writes_seen; /* target events recognised as our own writes (not reconciled again) */
  uint64_t event_hashes;    /* JSON trees (spec, status, finalizers) hashed to judge PropertyOverride events */
  uint64_t answers_waited_out; /* target events that waited the whole bound for a write's answer */
  uint64_t cache_behind;       /* reconciles put off: the cache did not hold our last write yet (CacheBehind, ObjectMade) */
  uint64_t override_echoes;    /* PropertyOverride events known our finalizer write by their version (IsOwnOverrideEcho) */
} po_TargetIndexStats;
po_TargetIndexStats po_TargetIndex_Stats(po_TargetIndex *ix);
/* The mesh options (cluster domain, Istio release and root namespace: the controller's flags)
 * every compile of this index uses; copied (its strings borrowed for the index's life). Set
 * before the first PropertyOverride is indexed: compiled forms are kept per generation. */
void po_TargetIndex_SetOptions(po_TargetIndex *ix, const po_TargetOptions *o);
/* Targets this process created, until their created annotation is written: a create is followed
 * by a second write binding the annotation to the new uid, and when that write fails (a 409 from
 * consul-k8s adding its finalizer, a webhook outage), the next reconcile still knows the object
 * is ours. A restart in between: the statuses of its PropertyOverrides recorded it (status.created,
 * the uid), which binds it then; only a crash between the create and that status write leaves it
 * unannotated (labelled, never deleted). */
void po_TargetIndex_NoteCreated(po_TargetIndex *ix, const char *uid);
/* Whether a target's watch event is our own last write of it coming back (true once per write):
 * the reconcile that wrote it found everything else to do and did it, so reconciling the echo
 * would only find the target current. Told by the version: the uid and resourceVersion the
 * write's answer carried (po_ReconcileIO.update_target), which name exactly the object the write
 * made, so nothing is parsed or hashed to tell it; any other version (someone's edit, consul-k8s's
 * status, a restore) is not an echo and is reconciled. An event that comes while the write's
 * answer is still on its way (an echo can come first) waits for it, a few seconds at most; a
 * write whose answer is lost, did not say its version, or did not come within that wait (one
 * wait per write: the informer's thread, all targets of the kind, waits with it) has no echo. The reconcile notes each
 * update it makes; any other change that matters to a target (a PropertyOverride's) comes as an
 * event of its own. IsOwnTargetEcho asks with the event's uid and resourceVersion as read from
 * its bytes (before any parse); IsOwnTargetWrite with its tree. */
bool po_TargetIndex_IsOwnTargetEcho(po_TargetIndex *ix, const char *target_key, const char *uid, const char *rv);
bool po_TargetIndex_IsOwnTargetWrite(po_TargetIndex *ix, const char *target_key, const struct json_object *obj);
/* Whether the cached target (its uid and resourceVersion) is behind our last write of it: the
 * write answered, its echo not in the cache yet (a slow or broken watch). A reconcile must not
 * judge that version: finding it already without a deleted PropertyOverride's entry (the entry
 * our write added is not in it yet), it would write nothing and release the finalizer while the
 * target keeps the entry, and the echo, taken as ours, would never be reconciled. When behind,
 * the write's echo is marked awaited (IsOwnTargetEcho then answers false for it, so its event is
 * reconciled, its note kept until a call here finds the cache holding it) and the caller puts its
 * judgement off. A write answered more than 30 s ago whose echo never came is no longer waited for. */
bool po_TargetIndex_CacheBehind(po_TargetIndex *ix, const char *target_key, const char *uid, const char *rv);
/* The same for a mesh object of one PropertyOverride (kind "EnvoyFilter", "EnvoyPatchPolicy")
 * this process created (NoteObjectCreated: the uid the create's answer gave). Behind: its cache
 * holds no object of that uid (cached_uid NULL: absent), its ADDED event not in yet; judged there,
 * a PropertyOverride deleted meanwhile finds nothing to delete, its finalizer goes and the object
 * stays for good (its event, once in, names a PropertyOverride that is gone). Cached: the cache
 * holds that uid, maybe still the create's version, before the write binding our created
 * annotation to it: it is ours all the same (judged a look-alike, it would be left for good too).
 * A note is spent 30 s after the create, or by an event of the object that is its deletion or
 * another uid (ObjectSeen, uid NULL: deleted): a deletion by hand is repaired at once. */
typedef enum { kPo_ObjectMade_No, kPo_ObjectMade_Behind, kPo_ObjectMade_Cached } po_ObjectMade;
void po_TargetIndex_NoteObjectCreated(po_TargetIndex *ix, const char *kind, const char *ns, const char *name,
                                      const char *uid);
po_ObjectMade po_TargetIndex_ObjectMade(po_TargetIndex *ix, const char *kind, const char *ns, const char *name,
                                      const char *cached_uid);
void po_TargetIndex_ObjectSeen(po_TargetIndex *ix, const char *kind, const char *ns, const char *name, const char *uid);
/* After a write of ours removed a held generation's entry from target_key, or wrote it back
 * there (the target deleted by its owner and written again) (its spec points at another target,
 * whose reconcile says in its status whether that generation is live, read from this target's
 * cache): on this target's next event of a version other than the one written over
 * (rv; NULL for a deletion), the keys of those PropertyOverrides' own targets ("key\0key\0",
 * *count of them; the caller frees), to be reconciled now that the cache shows the write. The
 * reconcile queues them at once too: whichever comes later reads the written version. NULL:
 * nothing pending. */
char *po_TargetIndex_TakeHeldGone(po_TargetIndex *ix, const char *target_key, const char *rv, size_t *count);
/* The same for a PropertyOverride's watch event: whether it is our own finalizer or status write
 * coming back (true once per write), the object otherwise as the reconcile that wrote it left it
 * (uid, generation, spec, our finalizer, not being deleted; the status exactly the one written,
 * or for the finalizer write the one it had). Its target need not be reconciled for it: that
 * reconcile did everything else. On the status write's echo the index's memo moves to the new
 * resourceVersion, so the next reconcile does not read the object either. */
bool po_TargetIndex_IsOwnOverrideWrite(po_TargetIndex *ix, const struct json_object *obj);
/* The same told from a watch event's head, before any parse (po_InformerHandlers.own_version): our
 * finalizer write's echo is the event whose uid and resourceVersion are exactly the ones that
 * write's answer said (po_TargetIndex_NoteOverrideAnswer), of the generation written over, not
 * being deleted. A merge patch of metadata.finalizers with the resourceVersion as precondition
 * changes nothing else a reconcile reads (spec, status, targets), so nothing is left to judge;
 * the event is then not recorded as seen (po_TargetIndex_OverrideSeen forgets, and judges the next
 * event Changed). True once per write. False for anything else: an echo that comes before its
 * write's answer (not waited for: parsed and judged by its content, so it is cached at once), the
 * status write's echo (its status moves the held target and the memo). */
bool po_TargetIndex_IsOwnOverrideEcho(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                      const char *rv, int64_t generation, bool deleting);
/* Records what a reconcile reads of a PropertyOverride's watch event (uid, generation, spec,
 * status, finalizers, deletion) and says whether it is exactly what the last event of it brought:
 * an update that changed nothing of that (a label, an annotation, managedFields: a new
 * resourceVersion alone) has nothing for its target's reconcile to do. False for the first event
 * of it, and for one the index does not list. Keyed hashes (json_hash.h): the content cannot be
 * made to pass for another. */
bool po_TargetIndex_OverrideSeen(po_TargetIndex *ix, const struct json_object *obj);
/* Both judgements of one PropertyOverride watch event, its spec and status hashed once for the
 * two: OwnWrite (po_TargetIndex_IsOwnOverrideWrite, asked only when own_check: an event that
 * moved the PropertyOverride to another target is never an echo), else Unchanged
 * (po_TargetIndex_OverrideSeen), else Changed. record false (before the workers start: the start
 * queues every target, and nothing reads what an initial list's event held until that
 * PropertyOverride's next one) hashes nothing for OverrideSeen and forgets what it recorded, so
 * the next event recorded is Changed whatever it holds; an echo is still told (it hashes only
 * when a write of ours is pending). */
typedef enum { kPo_OverrideEvent_Changed, kPo_OverrideEvent_Unchanged, kPo_OverrideEvent_OwnWrite } po_OverrideEvent;
po_OverrideEvent po_TargetIndex_OverrideEvent(po_TargetIndex *ix, const struct json_object *obj, bool own_check,
                                              bool record);
bool po_TargetIndex_WasCreated(po_TargetIndex *ix, const char *uid, bool forget);
/* Which Consul targets hold an entry of which PropertyOverride (the name and uid its marker
 * names, and the namespace its reconcile looks it up in: the marker's, else the target's). A deleted PropertyOverride's finalizer is released only when no target but the one
 * releasing it holds an entry of it (po_Reconcile): an entry naming a PropertyOverride that is
 * gone is someone else's for good (ForeignEntry), and one left in a target it moved away from is
 * linked to it by nothing else once the move is recorded. Learnt from every target event that is
 * not our own write (NoteTargetEntries: its entries bound to it; the initial list's too, so a
 * restart or a new leader rebuilds it; target NULL: deleted, it holds nothing) and from our own
 * writes (NoteEntries, nss[i] (NULL or "": the target's namespace), names[i] and uids[i] of n entries: before the write what it adds, exact
 * false; after its success exactly what it holds). An event that comes while a write of ours is
 * not seen back yet is a version before it: its entries are added, none forgotten. The updates
 * return false when memory ran out: what was known is kept (a release waits too long, never too
 * little), what was to be added may be missing; the caller says so. EntryHolders: the keys other
 * than `except` holding an entry of ns/name/uid ("key\0key\0", *count; the caller frees); NULL with
 * *count > 0 when out of memory. */
bool po_TargetIndex_NoteEntries(po_TargetIndex *ix, const char *target_key, const char *const *nss,
                                const char *const *names, const char *const *uids, size_t n, bool exact);
bool po_TargetIndex_NoteTargetEntries(po_TargetIndex *ix, const char *target_key, const struct json_object *target);
char *po_TargetIndex_EntryHolders(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                  const char *except, size_t *count);
size_t po_TargetIndex_EntryHoldersBytes(po_TargetIndex *ix); /* tests: its memory */
/* A reconcile's plan and its write are not one moment: a PropertyOverride planned live there can
 * be moved, deleted and released by another target's reconcile before the write, which would then
 * put the entry of one that is gone (someone else's for good). So the release and the write's
 * note meet under the index's lock: ClaimRelease is EntryHolders that, finding none, remembers the
 * release is going ahead (NULL with *count 1: out of memory, the release waits); NoteWriting is
 * NoteEntries before a write (exact false) that refuses (-1) when one of them was released: the
 * write is not made (retried as a conflict; the retry sees the deletion). 1 noted, 0 out of memory. */
char *po_TargetIndex_ClaimRelease(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                   const char *except, size_t *count);
int po_TargetIndex_NoteWriting(po_TargetIndex *ix, const char *target_key, const char *const *nss,
                               const char *const *names, const char *const *uids, size_t n);

/* A PropertyOverride gone from the API server with our finalizer still on it (its DELETED event):
 * kube-apiserver lets a DELETE that read the object before our finalizer patch remove it after
 * that patch succeeded (kubernetes/kubernetes#77988), and the reconcile that made the patch goes
 * on to write its entry. OverrideVanished remembers it as released (*remembered false: out of
 * memory), so that no write adds an entry of it any more (NoteWriting refuses), and returns the
 * targets holding an entry of it (as EntryHolders; the caller queues them); WasReleased says so
 * to the reconcile of such a target, which removes the entry as its own (never someone else's:
 * the uid is never reused). Kept as the releases are, 10 minutes, in memory only. */
char *po_TargetIndex_OverrideVanished(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                      size_t *count, bool *remembered);
bool po_TargetIndex_WasReleased(po_TargetIndex *ix, const char *ns, const char *name, const char *uid);

/* The target key of a PropertyOverride object ("" when it names none), and of a target object. */
void po_Reconcile_OverrideKey(const struct json_object *po, char *key, size_t size);
void po_Reconcile_TargetKey(po_TargetKind kind, const char *ns, const char *name, char *key, size_t size);
/* The key of the target status.lastValid's spec points at, when it differs from the current one
 * (else ""). */
void po_Reconcile_HeldKey(const struct json_object *po, char *key, size_t size);
/* Whether a reconcile would put the finalizer on this PropertyOverride: its spec names a target
 * (a key) that the tenancy policy lets it reach (plan's three checks). The mutating webhook asks
 * it of a new PropertyOverride, so the finalizer comes with the create. */
bool po_Reconcile_Claims(const po_Tenancy *t, const struct json_object *po);

/* A reconcile's outcome: `result` for the controller runtime (Success; Error, retried with
 * backoff; RequeueAfter when the caches are not synced; Terminal for a malformed key, never
 * retried), the rest for logs and tests. */
enum { kPo_ReconcileNotSyncedRetryNs = 500 * 1000000 };
/* A write refused because an admission webhook could not be reached (po_Reconcile_WebhookUnreachable:
 * the API server's "failed calling webhook", 500, for a dial or service-resolution failure) is
 * retried at least this often. An answer the webhook gave (any status code: our own 413 over its
 * memory budget never changes) or a call that timed out keeps the workqueue's growing backoff. Nothing requeues the key when
 * the webhook is back, and under the workqueue's own backoff (5 ms doubling to 1000 s) the retry
 * after 11 minutes of failures comes 655 s later, then 1000 s: a deletion could finish 11 to 16
 * minutes after the webhook was back. The shipped configurations never send our finalizer writes
 * to our webhook (matchCondition spec-changed: they change metadata only), but other writes of
 * ours (a target keeping other entries), another webhook (consul-k8s's own, a policy engine's),
 * or ours registered without that condition can still be refused while it is unreachable. */
enum { kPo_ReconcileWebhookRetryMaxS = 10 };
/* true when `err` (a write's error text) is the API server's refusal because an admission webhook
 * could not be reached: connection refused, no route to host, dial i/o timeout, no such host, the
 * webhook's Service not found or without endpoints (kube-apiserver 1.32's texts). false for an
 * answer with any status code, for "context deadline exceeded", and for anything else. */
bool po_Reconcile_WebhookUnreachable(const char *err);
/* A target not created because one of its name lives in another namespace: looked at again after
 * this long (that one may be deleted; target deletions enqueue nothing here). */
enum { kPo_ReconcileElsewhereRecheckS = 60 };
typedef struct {
  po_Result result;
  bool ok;
  bool conflict;          /* a write met a newer object: retry soon */
  bool webhook_unreachable; /* a write failed because an admission webhook could not be called:
                             * the retry's backoff is capped at kPo_ReconcileWebhookRetryMaxS */
  char error[512];
  bool not_synced;        /* nothing was read or written: the caches are not synced yet */
  bool terminal;          /* the key is malformed: nothing was read or written, retrying cannot help */
  bool out_of_memory;     /* memory ran out: nothing more was written after that point, and no
                           * write left out an entry that should be there */
  int targets_written;    /* 0 to 2 (a create, then the entries bound to its uid) */
  int statuses_written;
  int index_repaired;     /* PropertyOverrides the index missed (a failed update), found by their entries */
  size_t foreign_entries; /* look-alike entries left alone in the target */
  bool foreign_object;    /* the target carries a created annotation that is not bound to it */
  int64_t recheck_in_s;   /* > 0: a PropertyOverride waits for consul-k8s; its timeout (or a write put
                           * off by a second, sync.h) falls due then: the result is RequeueAfter */
  int sync_timeouts;      /* SyncTimeout Events raised */
  size_t overlap_checks;  /* pairs of PropertyOverrides the engine compared for overlaps (those the
                           * target's overlap memo could not answer) */
  bool from_digest;       /* the target was read from its digest, not its object (README: "A target
                           * read from its digest") */
  bool digest_object;     /* from_digest, and the object was read after all (need_tree) */
} po_ReconcileResult;

po_ReconcileResult po_Reconcile(const po_ReconcileIO *io, po_TargetIndex *ix, const char *key);

/* The admission view of a write to a target (the mutating webhook, docs/gitops.md): phases 1
 * and 2 of po_Reconcile (load and plan, the same code) over `incoming` in place of the cached
 * target, then po_Consul_Plan over it; no Event, no write. `incoming` must carry the target's
 * uid (the stored object's, on UPDATE), which the entries are bound to. PropertyOverrides the
 * controller has not claimed yet (no finalizer) contribute nothing here.
 *   Set        *extensions (a new reference) is the spec.envoyExtensions the controller would
 *              write into `incoming`: every other extension as it came, ours as planned
 *   Keep       `incoming` already holds exactly that, or there is nothing to bind to (no uid)
 *   NotSynced  the caches are not complete: nothing can be said (the caller lets it pass)
 *   Error      out of memory or a malformed object; `st` says which */
typedef enum { kPo_Desired_Keep = 0, kPo_Desired_Set, kPo_Desired_NotSynced, kPo_Desired_Error } po_DesiredResult;
po_DesiredResult po_Reconcile_Desired(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind,
                                      const struct json_object *incoming, struct json_object **extensions,
                                      po_CtlStatus *st);

#endif
