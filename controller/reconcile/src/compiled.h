/* Private to reconcile: a PropertyOverride compiled once per generation.
 *
 * A target's reconcile reads every PropertyOverride of the target; compiling each of them every
 * time made converging N PropertyOverrides over T targets cost N*N/T compiles. The compiled form
 * of a spec depends only on the PropertyOverride (its uid fixes namespace and name), the
 * generation and the spec itself, so it is kept by (uid, generation, a hash of the spec), one for
 * the current spec and one for the status.lastValid record, in the target index's entry of the
 * PropertyOverride (index.c): an entry goes when the PropertyOverride leaves the index (deleted)
 * and is replaced when its generation or record changes, so the cache never outgrows the index.
 *
 * Trust (ARCHITECTURE.md section 7) is unchanged: every entry is the engine's verdict on exactly the
 * content it was made from. The record is data anyone allowed to write the status could have
 * forged; it is looked up by its own content hash, so a forged record is compiled (and judged)
 * on its own, never served the verdict of another; and a valid one is programmed only when it is
 * what the controller wrote (reconcile.c, record_bound). The hash is keyed per process (json_hash.h),
 * so a record cannot be made to collide with another spec on purpose. */
#ifndef PO_RECONCILE_COMPILED_H_
#define PO_RECONCILE_COMPILED_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_hash.h"
#include "po/reconcile/reconcile.h"

struct json_object;

/* Immutable once made; shared between workers by reference count. One is kept per
 * PropertyOverride for as long as it lives, so its arena is fitted (po_Arena_NewFitted): sized from
 * what the previous compiles used, not grown by doubling (which left about half of it unused). */
typedef struct {
  atomic_int refs;
  po_Arena *arena;              /* owns everything below */
  char *uid;                    /* the PropertyOverride's metadata.uid */
  int64_t generation;           /* of the spec compiled (metadata.generation or lastValid.generation) */
  po_JsonHash hash;             /* of that spec */
  bool record;                  /* made from status.lastValid */
  const char *target_key;       /* the target the compiled spec points at ("" for none), in arena */
  po_CompiledOverride c;        /* the pipeline's result, c.override the engine's compiled form;
                                 * c.consul_arguments NULL (made in a scratch arena: `arguments`) */
  /* The envoyExtensions `arguments` to write (c.consul_arguments as compact JSON) when accepted,
   * else NULL: text, parsed into a fresh tree for each write, because a json-c tree costs about
   * ten times its text in memory and its reference counts are not atomic. */
  const char *arguments;
  size_t arguments_len;
  size_t patch_count;           /* po_ConsulEntry_PatchCount of those arguments */
  po_JsonHash arguments_hash;   /* po_Json_Hash of those arguments */
  const char *errors;           /* the Accepted=False text when not accepted ("N errors: ..."), in arena */
  /* The Deprecated condition's message when accepted and setting fields the snapshot it was
   * judged against marks deprecated (each field once, with the patch setting it), else NULL. */
  const char *deprecated;
} po_CompiledEntry;

/* The options po_TargetIndex_SetOptions set (zeros: the defaults); lives as long as the index. */
const po_TargetOptions *po_TargetIndex_Options(const po_TargetIndex *ix);

/* Kind of spec to compile: the current one, or the last valid generation recorded in the status. */
typedef enum { kPo_CompileWhich_Current = 0, kPo_CompileWhich_Record } po_CompileWhich;

/* A tree parsed from text (a new reference), NULL when out of memory or not JSON. */
struct json_object *po_Json_Parse(const char *text, size_t len);

/* Makes an entry (refs 1), compiled with the mesh options opts (NULL: the defaults; the index's,
 * po_TargetIndex_SetOptions), its arena sized by fit, which learns from it (the index's: one
 * kind of arena, its PropertyOverrides' compiles). NULL and *oom when out of memory; NULL alone when `which` is the
 * record and the object has none ({generation: int, spec: object}). */
po_CompiledEntry *po_CompiledEntry_Make(const struct json_object *obj, po_CompileWhich which, const char *uid,
                                        int64_t generation, po_JsonHash hash, const po_TargetOptions *opts, po_ArenaFit *fit, bool *oom);
/* The generation and the spec hash `which` names in obj (false: no such spec). */
bool po_CompiledEntry_KeyOf(const struct json_object *obj, po_CompileWhich which, int64_t *generation, po_JsonHash *hash);
const po_CompiledEntry *po_CompiledEntry_Ref(const po_CompiledEntry *e);
void po_CompiledEntry_Release(const po_CompiledEntry *e);

/* The compiled entry of a PropertyOverride of the index (index.c): from the cache when its uid,
 * generation and spec hash match, else compiled now and, while the PropertyOverride is still in
 * the index, kept. A reference the caller releases; NULL as po_CompiledEntry_Make. */
const po_CompiledEntry *po_TargetIndex_Compiled(po_TargetIndex *ix, const struct json_object *obj, po_CompileWhich which,
                                                bool *oom);

/* What a reconcile learnt of a PropertyOverride at one version (resourceVersion, uid and
 * generation: a resourceVersion alone can name another object after a delete and create, or an
 * etcd restore), kept in its index entry: while the cache still has that version, a reconcile
 * takes it from here instead of reading (parsing) the object again. Kept only for one that is not being deleted and has our finalizer.
 * status_hash is the desired status its status was found equal to (po_Status_Hash; 0: none). */
typedef struct {
  char rv[128];
  char uid[128];
  int64_t generation;
  po_JsonHash spec_hash;
  uint64_t status_hash;
  uint64_t written_hash; /* the status this controller wrote over rv (0: none) */
} po_OverrideMemo;

/* The memo when it is for this very version (rv, uid and generation), with its current and held
 * target keys (false: none, or for another version), and the compiled current spec the index
 * holds for the memo's version (its uid, generation and spec hash), under one lock and one
 * lookup: a reconcile asked for both apart for every PropertyOverride of its target, and the
 * index's lookups, with their strcmp, were 9% of the workers' time at 10,000 (cache misses on
 * its entries, docs/benchmarks.md). *ce: a reference the caller releases; NULL when not cached. */
bool po_TargetIndex_MemoCompiled(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideVersion *v,
                                 po_OverrideMemo *m, char *key, char *held, size_t size, const po_CompiledEntry **ce);
/* Records it (best effort: out of memory leaves none, and the object is read next time). */
void po_TargetIndex_MemoSet(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideMemo *m,
                            const char *key, const char *held);
/* The status found current at rv (ignored when the memo is for another version). */
void po_TargetIndex_MemoStatus(po_TargetIndex *ix, const char *ns, const char *name, const char *rv, uint64_t status_hash);
/* The status this controller has just written over rv (written_hash). Until the cache shows the
 * write (a new rv, read again and compared), a reconcile that wants the same status has nothing
 * to do: without this each one wrote it again, with its Events, while the watch lagged. One that
 * wants another status must write it even when it equals the cached one at rv (the status found
 * there is forgotten): that is the status our write replaced (Programmed, Pending written over
 * it, Programmed again once Envoy Gateway answers). */
void po_TargetIndex_MemoWritten(po_TargetIndex *ix, const char *ns, const char *name, const char *rv, uint64_t written_hash);
/* Notes the object a reconcile is about to write as a target's update (po_TargetIndex_IsOwnTargetWrite);
 * `written` NULL: that write failed, forget it. */
void po_TargetIndex_NoteTargetWrite(po_TargetIndex *ix, const char *target_key, const struct json_object *written);
/* NoteTargetWrite of a write planned without the object (a JSON Patch over version `over`, from
 * the target's digest): no write record (--consul-sync-status=ignore writes none). */
void po_TargetIndex_NoteTargetWriteOver(po_TargetIndex *ix, const char *target_key, const char *over);
/* After that write succeeded: the uid and resourceVersion its answer carried (NULL or "": the
 * answer did not say, and its echo is reconciled as any event). Wakes an event waiting for it. */
void po_TargetIndex_NoteTargetWritten(po_TargetIndex *ix, const char *target_key, const char *uid, const char *rv);
/* Notes that a write of ours over resourceVersion over_rv of target_key removed, or wrote back,
 * the entry of a PropertyOverride held there whose spec points at another target
 * (po_TargetIndex_TakeHeldGone). */
void po_TargetIndex_NoteHeldGone(po_TargetIndex *ix, const char *target_key, const char *over_rv);
/* Notes a write of ours to a PropertyOverride about to be sent (po_TargetIndex_IsOwnOverrideWrite):
 * which 0, our finalizer (status: the one it has), or 1, its status (status: the one sent, built
 * from the desired status whose po_Status_Hash is desired_status); m names the version (uid,
 * generation, spec_hash). failed: that write did not happen, forget it. */
void po_TargetIndex_NoteOverrideWrite(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideMemo *m,
                                      int which, const struct json_object *status, uint64_t desired_status, bool failed);
/* After the finalizer write (which 0) noted above succeeded: the version its answer said
 * (po_TargetIndex_IsOwnOverrideEcho; w zeroed: it did not say). Kept only while that write's echo
 * is still to come and the answer is of the uid and generation noted. */
void po_TargetIndex_NoteOverrideAnswer(po_TargetIndex *ix, const char *ns, const char *name, const po_WrittenVersion *w);
/* Whether our finalizer write of this uid and generation was answered, the object it made listing
 * our finalizer, and its echo is not in yet: the admission view (po_Reconcile_Desired) counts it as
 * claimed. Asked during our own target write that follows it, the webhook read the cache's version
 * without the finalizer and dropped the new entry from that write (e2e_gitsync_real). */
bool po_TargetIndex_FinalizerWritten(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                     int64_t generation);

/* The last valid generation this process saw admitted (its current spec, compiled valid), wrote
 * into its target and recorded as status.lastValid: uid, generation and the keyed hash of that
 * spec (po_CompiledEntry.hash). status.lastValid is data anyone allowed to write the status
 * subresource can forge; a record equal to this one is this process's own, so it is honoured even
 * when its entry is gone from the target (removed by hand while the spec is invalid). Memory only:
 * after a restart the proof is what the controller wrote into the target (reconcile.c,
 * record_bound). Kept while the PropertyOverride is in the index; best effort (none when it is not). */
void po_TargetIndex_NoteLastValid(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                  int64_t generation, po_JsonHash hash);
bool po_TargetIndex_IsOwnLastValid(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                   int64_t generation, po_JsonHash hash);

/* po_TargetIndex_LinksOfKind: reconcile.h (the app finds Mesh targets by it). */

#endif
