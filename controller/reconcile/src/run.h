/* Private to reconcile: one reconcile of one target (po_Run), the state its phases share, and the
 * part of a reconcile each mesh supplies (po_ReconcileMesh).
 *
 * reconcile.c runs the phases (load, plan, write, status) for every mesh alike; what differs per
 * mesh is one po_ReconcileMesh, defined in the mesh's folder (controller/meshes/<mesh>/reconcile/)
 * and listed by po/meshes/list.h, which meshes.c expands into the reconciler's table. A mesh's
 * part sees the run (this header) and the helpers below, never another mesh's part. */
#ifndef PO_RECONCILE_RUN_H_
#define PO_RECONCILE_RUN_H_

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiled.h"
#include "digest.h"
#include "overlap.h"
#include "po/meshes/consul.h"
#include "po/reconcile/reconcile.h"
#include "status.h"
#include "sync.h"

/* The longest text each of an item's strings keeps: a copy is cut at size - 1 bytes, as the
 * fixed buffers these strings once were cut it (po_Run_Text). */
enum {
  kPo_RunItemNameSize = 254,     /* ns, name: a Kubernetes name */
  kPo_RunItemIdSize = 128,       /* uid, rv */
  kPo_RunItemKeySize = 600,      /* held_key, home_key: "Kind/ns/name" */
  kPo_RunItemRefusalSize = 1024, /* refusal: the tenancy policy's sentence */
  kPo_RunItemMismatchSize = 512, /* mismatch */
};

/* One PropertyOverride of the target, and what the plan made of it. A reconcile allocates one
 * per PropertyOverride of its target, so the texts are strings in the run's arena ("" when
 * empty: static, nothing allocated), not fixed buffers: most are short or empty (a refusal, a
 * mismatch, a held or home key are rare), and 3.6 KB of buffers per item were zeroed, and
 * page-faulted in, on every reconcile (issue 26; test_reconcile's size bound). None is ever
 * NULL once the item is loaded: memory running out while copying one ends the reconcile. */
typedef struct {
  const char *ns;                /* its namespace: the target's, or another (spec.targetRef.namespace) */
  bool other_ns;                 /* ns is not the target's: its marker names it */
  const char *name;
  const char *uid;               /* metadata.uid */
  const char *rv;                /* the resourceVersion everything here was learnt at */
  /* The resourceVersion the index's memo of it names: rv, or the version our finalizer write made
   * (that write changes nothing a reconcile reads; write_finalizers) */
  const char *memo_rv;
  bool from_memo;                /* learnt from the index's memo: obj is read only when needed */
  /* from_memo: the memo's status_hash and written_hash (po_OverrideMemo) */
  uint64_t memo_status_hash, memo_written_hash;
  const json_object *obj;        /* the cached object (lent: read only), or NULL until needed */
  void *ref;                     /* what io->release takes back */
  const po_CompiledEntry *ce;    /* its current spec compiled (a reference) */
  bool deleting;
  bool held;                     /* listed here for its last valid generation; its spec points elsewhere */
  const char *held_key;          /* where its last valid generation is live, when not here */
  const char *home_key;          /* held here: the target its spec points at */
  bool has_finalizer;
  bool refused;                  /* the tenancy policy does not let it write this target */
  bool over_limit;               /* no room left in the target (kPo_MaxExtensionsPerConsulObject) */
  bool is_live;                  /* an entry of it is in the target now */
  bool record;                   /* its current generation is the last valid one (status.lastValid) */
  const char *refusal;           /* refused: why (the tenancy policy's sentence) */
  /* The entry to write: the compiled arguments of `entry` (a reference), or, for an invalid
   * generation without a usable record, a copy of the live entry Consul's check still accepts. */
  const po_CompiledEntry *entry;
  json_object *entry_copy;       /* owned */
  int64_t entry_generation;
  int32_t entry_priority;        /* where the entry goes among ours (spec.priority of its generation) */
  size_t entry_patches;
  po_JsonHash entry_hash;        /* po_Json_Hash of the entry's arguments (without our marker) */
  bool entry_required;           /* the entry's `required` (spec.required of that generation) */
  /* status.lastValid, compiled valid for this target, not yet shown to be ours (record_bound):
   * a record of a mesh with an object per PropertyOverride, which its write phase programs only
   * where the object already holds exactly it (po_IstioItem.verify, po_EGItem.verify) */
  bool unverified;
  /* status.lastValid ignored, because it does not match what this controller wrote: the sentence
   * the Programmed message and the LastValidMismatch Event carry ("" otherwise; po_Run_Mismatch) */
  const char *mismatch;
} po_RunItem;

typedef struct po_Run {
  const po_ReconcileIO *io;
  po_TargetIndex *ix;
  const char *key;
  po_TargetKind kind;
  char ns[254], name[254];
  const char *where;             /* "ServiceDefaults ns/name", for messages */
  po_Arena *ar;
  const json_object *read;       /* the target as the cache has it (shared, read only), or NULL */
  void *read_ref;
  const json_object *target;     /* `read`, or `own` once we have our own */
  /* Consul: the target read from its digest (digest.h, in the arena): it exists, `target` and
   * `read` are NULL until the reconcile needs the object after all (consul_reconcile.c,
   * need_tree), which then replaces the digest */
  const po_TargetDigest *digest;
  json_object *own;              /* the target after our create, or our annotated copy (owned) */
  char (*names)[320];            /* "namespace/name" of each PropertyOverride the index lists */
  po_RunItem *items;
  size_t n, m;                   /* names listed, items loaded */
  po_ConsulOwner *owners;        /* the target's PropertyOverrides, then those of entries bound to it */
  size_t nowners;
  po_ConsulEntry *live, *bound, *want;
  size_t nlive, nwant;
  size_t *want_item; /* Consul: the item of each of `want` (arena) */
  /* Consul: the target's entries bound to it, whoever they name (`bound`, read once per run from
   * `bound_of`), and the look-alikes bound elsewhere or to nothing */
  size_t nbound, unbound_entries;
  const void *bound_of; /* the tree or the digest they were read from */
  /* Consul: the indices of live, sorted by (owner, uid, index), so a PropertyOverride's entries
   * are found in log time (arena; NULL when there was no room: searched in turn) */
  size_t *live_order;
  bool target_ok;
  char target_err[512];
  bool target_conflict; /* the target write met a 409: the statuses wait for the retry */
  bool dry;             /* po_Reconcile_Desired: plan over a given object, no Event, no write */
  bool deferred;        /* the target write was put off by a second (sync.h): the statuses wait too */
  bool recorded;        /* `record` is the one just written into the target */
  char elsewhere[254];  /* the namespace holding a target of this name, where we would create one */
  po_WriteRecord record; /* our last write into the target (require mode, sync.h) */
  po_SyncVerdict sync;  /* consul-k8s's word on that write */
  /* each item's outcome in the target's mesh (an Istio target: po_IstioItem[m], an Envoy Gateway
   * one: po_EGItem[m]; the mesh's reconcile part's own type, set by its write), or NULL */
  void *mesh_items;
  char unbound_uid[128]; /* created by us, the write binding the created annotation failed: for status.created */
  bool target_wrote;     /* this reconcile's write of the target was accepted: the server holds what it planned */
  json_object *server;   /* the target as the API server holds it (release_guard's live read), or NULL */
  int server_read;       /* 0: not read yet, 1: read (server NULL: absent), -1: the read failed */
  po_ReconcileResult r;
} po_Run;

/* ---- the part of a reconcile each mesh supplies ------------------------------------------------
 * Every member may be NULL (false for the flags) where the mesh has nothing to do there. */
typedef struct {
  /* Before phase 1: whether the target is read from its digest (run->digest set) instead of
   * its object. NULL: never. */
  bool (*from_digest)(po_Run *run);
  /* phase 1, load: room for items found in the target itself beyond the index's (returned; memory
   * that ran out there, po_Run_Oom, ends the reconcile: load would find items it has no room
   * for), then what the target holds for its PropertyOverrides (after they are loaded). false:
   * the reconcile ends (run->r says why). */
  size_t (*extra_items)(po_Run *run);
  bool (*load)(po_Run *run);
  /* The generation of the PropertyOverride `it`'s entry in the target ns/name of this mesh (its
   * held key), 0 when that target holds none, -1 when it could not be read (po_Run_ReadFailed). */
  int64_t (*held_generation)(po_Run *run, const po_RunItem *it, po_TargetKind kind, const char *ns, const char *name);
  /* phase 2, plan: whether status.lastValid, compiled valid for this very target (rec, its
   * generation in range), is a record this controller made (else it->mismatch says why); what
   * is kept live for an invalid generation without a usable record; the plan over all items. */
  bool (*record_bound)(po_Run *run, po_RunItem *it, const po_CompiledEntry *rec);
  bool (*keep_live)(po_Run *run, po_RunItem *it);
  void (*plan)(po_Run *run);
  /* a valid PropertyOverride moved to another target keeps its entry here until that target
   * holds its patches (reconcile.c, move_waits) */
  bool moves_wait;
  /* phase 3, write: the target's objects, after the finalizers. false: the reconcile ends. */
  bool (*write)(po_Run *run);
  /* After every target's write: this mesh's object of a PropertyOverride of this target left
   * where it no longer points (i indexes run->items). false when a deletion failed, run->r
   * saying so. *writes counts deletions. */
  bool (*sweep)(po_Run *run, size_t i, int *writes);
  /* phase 4, status: once per reconcile before the statuses; per item, the object its status
   * names and the generation live in it (*live_gen, preset to the entry's when the write
   * succeeded); whether its write failed (the finalizer stays); what its peer for the overlaps
   * needs of the mesh (a peer with an override of a target of `kind` in namespace ns; false when
   * out of memory; cross.c asks it too, for the peers of other targets); why
   * it is not programmed (true when said in p); the message of a programmed one (before the
   * overlaps, `more` when they follow); and what the mesh's own controller still has to say
   * (false: the reconcile ends; *event: the one timeout Event is due). */
  void (*status_begin)(po_Run *run);
  void (*status_object)(po_Run *run, size_t i, po_OverrideStatus *s, int64_t *live_gen);
  bool (*item_failed)(const po_Run *run, size_t i);
  /* Before a deleted PropertyOverride's finalizer is released (its entry gone as the cache has
   * it): true when the release may go ahead; false with run->r failed (the finalizer stays, the
   * reconcile is retried) when the server may still hold its entry. */
  bool (*release_guard)(po_Run *run, po_RunItem *it);
  bool (*overlap_peer)(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *ns,
                       po_OverlapPeer *peer, po_Arena *ar);
  bool (*not_programmed)(po_Run *run, size_t i, int64_t live_gen, po_Condition *p);
  void (*programmed_message)(po_Run *run, size_t i, int64_t live_gen, po_Condition *p, bool more);
  bool (*confirm)(po_Run *run, po_RunItem *it, int64_t live_gen, po_Condition *p, bool *event);
  /* The admission view (po_Reconcile_Desired) over the loaded and planned run. */
  po_DesiredResult (*desired)(po_Run *run, const struct json_object *incoming, struct json_object **extensions);
} po_ReconcileMesh;

/* The part of the mesh programming targets of `kind` (meshes.c: po/meshes/list.h expanded). */
const po_ReconcileMesh *po_ReconcileMesh_For(po_TargetKind kind);
/* Every mesh's part, in the list's order (the sweep asks each). */
size_t po_ReconcileMesh_Count(void);
const po_ReconcileMesh *po_ReconcileMesh_At(size_t i);

/* One PropertyOverride of the key as an item (taking obj and ref), compiled; false when memory
 * ran out. k and hk are its current and held keys (reconcile.c; a mesh's load adds those the
 * index missed). */
bool po_Run_AddItem(po_Run *run, const struct json_object *obj, void *ref, const char *ns, const char *name,
                    const char *k, const char *hk);

/* ---- helpers every phase and mesh uses (run.c) ---- */
struct json_object *po_Run_Copy(const struct json_object *o); /* a deep copy, NULL for NULL or out of memory */
/* src copied into dst[size] (size > 0), cut at size - 1 bytes as snprintf's "%s" cuts it: an
 * item's names and keys are copied several times a reconcile for each of a target's
 * PropertyOverrides, and snprintf cost a few hundred instructions a copy. */
void po_Run_CopyText(char *dst, size_t size, const char *src);
/* src (NULL: "") copied into the run's arena, cut at size - 1 bytes as po_Run_CopyText cuts it;
 * "" itself (static, nothing allocated) for an empty text. NULL when out of memory: the caller
 * ends the reconcile (po_Run_Oom), never leaves the text empty. */
const char *po_Run_Text(po_Run *run, const char *src, size_t size);
/* it->mismatch said by fmt, cut at kPo_RunItemMismatchSize - 1 bytes; false (po_Run_Oom: the
 * reconcile ends) when out of memory. */
bool po_Run_Mismatch(po_Run *run, po_RunItem *it, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The reconcile fails with what/err (the first error wins; run->r.ok false). */
void po_Run_Fail(po_Run *run, po_WriteResult w, const char *what, const char *err);
/* Memory ran out at `where`: nothing more is written. Always false. */
bool po_Run_Oom(po_Run *run, const char *where);
/* A cached read through io that failed (its st not Ok: the object is cached but could not be
 * read, po_ReconcileIO's reads): the reconcile ends there as out of memory, its error the read's
 * (naming the object). Never taken for an absent object. Always false. */
bool po_Run_ReadFailed(po_Run *run, const po_CtlStatus *st);
const char *po_Run_OrOom(const char *s); /* s, or "out of memory" */
void po_Run_Release(po_Run *run, const struct json_object *obj, void *ref);
/* The object of an item learnt from its memo, read now that it is needed; false (the reconcile
 * ends, to run again) when it changed meanwhile. */
bool po_Run_NeedObj(po_Run *run, po_RunItem *it);
bool po_Run_HasEntry(const po_RunItem *it);
void po_Run_DropEntry(po_RunItem *it);
int64_t po_Run_NowS(po_Run *run);
void po_Run_RecheckIn(po_Run *run, int64_t s);
/* "Kind/ns/name" split; false when malformed. */
bool po_Run_ParseKey(const char *key, po_TargetKind *kind, char ns[254], char name[254]);
/* The generation of it's entry in the target at it->held_key (its mesh's held_generation); -1
 * when that target could not be read (po_Run_ReadFailed: the reconcile ends). */
int64_t po_Run_HeldGeneration(po_Run *run, const po_RunItem *it);
po_OverrideMemo po_Run_OwnVersion(const po_RunItem *it);
bool po_Run_HasFinalizer(const struct json_object *obj);
struct json_object *po_Run_FinalizerPatch(const struct json_object *obj, bool add);

/* ---- what every mesh with one object per PropertyOverride shares (owned_run.c) ---- */
/* One object's outcome into the run: a look-alike reported, a failed write fails the reconcile. */
void po_Run_OwnedOutcome(po_Run *run, bool foreign, bool failed, bool conflict, const char *err);
/* A record the write phase found not held by its object (`kind` ns/name holds generation live);
 * false (po_Run_Oom) when memory ran out saying so. */
bool po_Run_OwnedMismatch(po_Run *run, po_RunItem *it, const char *kind, const char *ns, const char *name, int64_t live);
/* Whether the reconcile of the target it points at now removes its object here (sweep). */
bool po_Run_SweptThere(const po_RunItem *it);
/* record_bound for a mesh whose write phase compares a record with its object (it->unverified). */
bool po_Run_OwnedRecordBound(po_Run *run, po_RunItem *it, const po_CompiledEntry *rec);
/* Programmed's sentences every such mesh shares; true when said in p. */
bool po_Run_MeshNotEnabled(po_Run *run, const char *mesh, const char *flag, const char *crd, po_Condition *p);
bool po_Run_TargetGone(po_Run *run, const char *obj, const char *kind, po_Condition *p);
bool po_Run_ProgrammedOwned(po_Run *run, const po_RunItem *it, int64_t live_gen, const char *obj, const char *why,
                            const char *err, bool kept, po_Condition *p);

#endif
