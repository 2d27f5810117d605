/* Private to reconcile: a Consul target as a reconcile reads it, without its tree (po_TargetDigest).
 *
 * A reconcile of a ServiceDefaults or ProxyDefaults read the whole object from the cache (a
 * decompression and a json-c parse of ~20 KB at 50 entries, then freed), hashed every entry of
 * ours against its compiled form, and built a plan of the whole object: about 1.5 M instructions
 * whatever changed, once per PropertyOverride created at the real API server's pace (issue 26). Of
 * all that, what a reconcile reads is small: the object's uid and version, whether this controller
 * created it, and per element of spec.envoyExtensions its extension name, its patch count, and our
 * marker with the hash of the arguments. A digest holds that much. The index keeps one per target
 * (po_TargetIndex_SetDigest), for the version it was taken at: the version our own write made (the
 * plan's list, which the server applied over the version read: a precondition), or the version a
 * reconcile read and left as it was. A reconcile that finds the cache at that very version reads
 * the digest instead of the object (consul_reconcile.c), and reads the object after all where it
 * needs more (po_Run_NeedTree). */
#ifndef PO_RECONCILE_DIGEST_H_
#define PO_RECONCILE_DIGEST_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_hash.h"
#include "po/engine.h"
#include "po/targets/owned.h"

/* What an element of spec.envoyExtensions says about itself (po_Consul_OwnedEntries' reading):
 * no marker of ours (another extension, or a builtin/property-override entry without one), a
 * marker bound to another object or incomplete (a look-alike), or a marker bound to this object's
 * uid, naming a PropertyOverride (ours when that PropertyOverride is one of the target's). */
typedef enum { kPo_Slot_Unmarked = 0, kPo_Slot_LookAlike, kPo_Slot_Bound } po_SlotMark;

typedef struct {
  uint8_t mark;      /* po_SlotMark */
  bool ext;          /* named builtin/property-override: counted by the per-object limits */
  /* Bound: shaped exactly as the plan writes an entry of ours: {name, required (a boolean),
   * arguments}, the marker {name, generation (an integer), uid, targetUID, and priority when not 0
   * and namespace when set} and nothing else (entry_current's checks, but the hash) */
  bool exact;
  bool required;     /* Bound: the entry's `required` */
  int32_t priority;  /* Bound: the marker's (0 when absent) */
  uint32_t patches;  /* ext: po_ConsulEntry_PatchCount of its arguments */
  int64_t generation;      /* Bound: the marker's */
  po_JsonHash hash;        /* Bound: po_Json_HashExcept(arguments, the marker) */
  const char *owner, *uid; /* Bound: the marker's name and uid */
  const char *ns;          /* Bound: the marker's namespace ("" when absent) */
} po_TargetSlot;

typedef struct {
  char uid[128], rv[64];   /* the version it describes */
  po_OwnedCreated created; /* po_Owned_CreatedBy */
  bool managed;            /* labelled app.kubernetes.io/managed-by: propertyoverride */
  bool spec_object;        /* spec is an object */
  bool spec_other;         /* spec has a member besides envoyExtensions */
  bool list;               /* spec.envoyExtensions is an array */
  size_t n;
  po_TargetSlot *slots;    /* n, in the list's order */
} po_TargetDigest;

/* A digest as the index keeps it: one allocation (free() frees it), the slots packed. */
typedef struct po_TargetDigestKept po_TargetDigestKept;
/* d kept, NULL when out of memory (or d NULL). */
po_TargetDigestKept *po_TargetDigest_Keep(const po_TargetDigest *d);
/* Its version and flags (slots NULL). */
const po_TargetDigest *po_TargetDigest_Head(const po_TargetDigestKept *k);
/* A kept digest given back into a (*out, its slots and strings in a), false when out of memory. */
bool po_TargetDigest_CopyTo(const po_TargetDigestKept *k, po_Arena *a, po_TargetDigest *out);

struct po_TargetIndex;
/* The digest kept for target_key when it describes version (uid, rv): copied into `a` (*out);
 * false when there is none for that version (or memory ran out copying it). */
bool po_TargetIndex_Digest(struct po_TargetIndex *ix, const char *target_key, const char *uid, const char *rv, po_Arena *a,
                           po_TargetDigest *out);
/* Keeps a copy of d for target_key (NULL, or memory running out: none is kept, and the next
 * reconcile reads the object). Only while the index lists a PropertyOverride under the key. */
void po_TargetIndex_SetDigest(struct po_TargetIndex *ix, const char *target_key, const po_TargetDigest *d);

#endif
