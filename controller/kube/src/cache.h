/* A string-keyed hash map of cached objects (compact JSON, resourceVersion, uid, generation), one
 * allocation per entry. Not locked: the informer wraps it in a rwlock. */
#ifndef PO_KUBE_CACHE_H
#define PO_KUBE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct po_CacheEntry_ {
  struct po_CacheEntry_ *next;
  uint64_t hash;
  size_t json_len;
  const char *json; /* into key[] */
  const char *rv;   /* into key[] */
  const char *uid;  /* into key[]: metadata.uid ("" when absent) */
  int64_t generation; /* metadata.generation (0 when absent) */
  char key[];       /* key \0 json \0 rv \0 uid \0 */
} po_CacheEntry_;

typedef struct {
  po_CacheEntry_ **slots;
  size_t nslots, count;
} po_Cache_;

bool po_Cache_Init_(po_Cache_ *c);
void po_Cache_Destroy_(po_Cache_ *c);
po_CacheEntry_ *po_Cache_NewEntry_(const char *key, const char *json, size_t len, const char *rv, const char *uid,
                                   int64_t generation);
/* Inserts e; returns the entry it replaced (caller frees it) or NULL. */
po_CacheEntry_ *po_Cache_Put_(po_Cache_ *c, po_CacheEntry_ *e);
po_CacheEntry_ *po_Cache_Get_(const po_Cache_ *c, const char *key);
/* Unlinks and returns the entry (caller frees it) or NULL. */
po_CacheEntry_ *po_Cache_Remove_(po_Cache_ *c, const char *key);
void po_Cache_ForEach_(const po_Cache_ *c, void (*fn)(void *ctx, po_CacheEntry_ *e), void *ctx);
/* Bytes held by the map's entries and slot array (for the benchmark). */
size_t po_Cache_Bytes_(const po_Cache_ *c);

#endif
