/* A string-keyed hash map of cached objects, one allocation per entry. An entry holds either the
 * object's compact JSON text or its parsed json-c tree (the informer's choice), plus its
 * resourceVersion, uid, generation and whether it is being deleted, so those are read without
 * parsing. Entries are immutable once made and reference-counted (atomically: readers on other
 * threads release them), so a reader keeps one after the cache replaced it. Not locked: the
 * informer wraps the map in a rwlock. */
#ifndef PO_KUBE_CACHE_H
#define PO_KUBE_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/base/status.h"

struct json_object;
struct json_tokener;
struct po_TextCodec_;

typedef struct po_CacheEntry_ {
  struct po_CacheEntry_ *next;
  uint64_t hash;
  atomic_size_t refs;      /* the map's (while linked) and each reader's */
  struct json_object *obj; /* the parsed tree, owned (NULL when the entry keeps text) */
  size_t json_len;    /* the text's length (compressed or not) */
  size_t packed_len;  /* json[0..packed_len) is the text compressed by codec; 0: json is the text */
  const struct po_TextCodec_ *codec;
  const char *json;   /* into key[]: the text or its packed bytes (NULL when the entry keeps the tree) */
  const char *rv;     /* into key[] */
  const char *uid;    /* into key[]: metadata.uid ("" when absent) */
  int64_t generation; /* metadata.generation (0 when absent) */
  bool deleting;      /* metadata.deletionTimestamp is set */
  char key[];         /* key \0 [json \0] rv \0 uid \0 */
} po_CacheEntry_;

typedef struct {
  po_CacheEntry_ **slots;
  size_t nslots, count;
} po_Cache_;

/* What an entry records besides its key and content. */
typedef struct {
  const char *rv, *uid;
  int64_t generation;
  bool deleting;
  /* json[cut_at, cut_at + cut_len) is left out of a text entry (metadata.managedFields: no reader
   * uses it, and on a real API server it is a third of an object's text or more). */
  size_t cut_at, cut_len;
  /* When set, a text entry keeps its text compressed (compact.h) if that is smaller: read it
   * with po_CacheEntry_Text_. The codec outlives the entry (the informer's). */
  const struct po_TextCodec_ *codec;
} po_CacheMeta_;

bool po_Cache_Init_(po_Cache_ *c);
/* Drops the map's reference to every entry. */
void po_Cache_Destroy_(po_Cache_ *c);
/* One reference (the caller's). With obj non-NULL the entry takes over that reference to the
 * tree and json is ignored; otherwise it copies json[0..len) but the meta's cut. NULL when out of memory (obj is
 * then still the caller's). */
po_CacheEntry_ *po_Cache_NewEntry_(const char *key, struct json_object *obj, const char *json, size_t len,
                                   const po_CacheMeta_ *m);
/* A text entry's text, json_len bytes then a NUL: the entry's own bytes, or (compressed) the
 * calling thread's buffer, valid until its next po_CacheEntry_Text_ (compact.h). NULL when out of
 * memory. */
const char *po_CacheEntry_Text_(const po_CacheEntry_ *e);
/* A text entry's object, parsed with t (the caller's tokener, reset after): a new tree the caller
 * puts. NULL when t is NULL or memory ran out decompressing or parsing (*step says which:
 * "decompressing" or "parsing"); the cache holds only whole objects, so never for another reason. */
struct json_object *po_CacheEntry_Parse_(const po_CacheEntry_ *e, struct json_tokener *t, const char **step);
/* The object of e for one reader (po_Informer_Get), taking over the caller's reference to e: its
 * tree when it keeps one (*hold is e), else its text parsed with t into a hold of its own (*hold,
 * an entry without a key; e's reference is dropped). Released, either way, with
 * po_CacheEntry_Unref_(*hold). NULL (and *hold NULL) when e could not be handed out for lack of
 * memory (its text decompressed or parsed, or the hold made): st then says kPo_Ctl_NoMemory and
 * which, naming the object ("<resource> <key>"). The object is cached: a caller must never take
 * that NULL for an absent object (a reconcile would write its target without it). */
const struct json_object *po_CacheEntry_Lend_(po_CacheEntry_ *e, struct json_tokener *t, const char *resource,
                                              po_CacheEntry_ **hold, po_CtlStatus *st);
void po_CacheEntry_Ref_(po_CacheEntry_ *e);
/* Drops one reference; the last frees the entry and its tree. NULL is a no-op. */
void po_CacheEntry_Unref_(po_CacheEntry_ *e);
/* Inserts e, taking the caller's reference; returns the entry it replaced with the map's
 * reference, which the caller drops, or NULL. */
po_CacheEntry_ *po_Cache_Put_(po_Cache_ *c, po_CacheEntry_ *e);
/* Borrowed (no reference taken). */
po_CacheEntry_ *po_Cache_Get_(const po_Cache_ *c, const char *key);
/* Unlinks and returns the entry with the map's reference (the caller drops it) or NULL. */
po_CacheEntry_ *po_Cache_Remove_(po_Cache_ *c, const char *key);
void po_Cache_ForEach_(const po_Cache_ *c, void (*fn)(void *ctx, po_CacheEntry_ *e), void *ctx);
/* Bytes held by the map's entries and slot array (for the benchmark); parsed trees are not
 * counted (json-c does not say their size). */
size_t po_Cache_Bytes_(const po_Cache_ *c);

#endif
