/* A string-keyed hash map of cached objects (parsed json-c trees + resourceVersion), one
 * allocation per entry besides the tree. Not locked: the informer wraps it in a rwlock.
 *
 * Entries are reference counted (atomically): the map holds one reference, and a reader that
 * took one under the informer's read lock keeps the entry (and its tree) alive after the lock is
 * released and after the map dropped it. The tree is immutable once the entry is made: json-c's
 * own reference counts and serialisation buffers are not thread-safe, so nobody calls
 * json_object_get/put, json_object_to_json_string or any setter on it; whoever needs to change
 * it deep-copies it. The last reference frees it. */
#ifndef PO_KUBE_CACHE_H
#define PO_KUBE_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

typedef struct po_CacheEntry_ {
  struct po_CacheEntry_ *next;
  uint64_t hash;
  atomic_int refs;
  struct json_object *obj; /* owned (one json-c reference), immutable */
  const char *rv;          /* into key[] */
  char key[];              /* key \0 rv \0 */
} po_CacheEntry_;

typedef struct {
  po_CacheEntry_ **slots;
  size_t nslots, count;
} po_Cache_;

bool po_Cache_Init_(po_Cache_ *c);
/* Drops the map's reference on every entry. */
void po_Cache_Destroy_(po_Cache_ *c);
/* An entry (refs 1) owning the caller's reference to obj; NULL when out of memory (obj is then
 * still the caller's). */
po_CacheEntry_ *po_Cache_NewEntry_(const char *key, struct json_object *obj, const char *rv);
po_CacheEntry_ *po_CacheEntry_Ref_(po_CacheEntry_ *e);
/* Drops a reference; the last one frees the entry and its tree. NULL is ignored. */
void po_CacheEntry_Unref_(po_CacheEntry_ *e);
/* Inserts e; returns the entry it replaced (the caller owns the map's reference to it) or NULL. */
po_CacheEntry_ *po_Cache_Put_(po_Cache_ *c, po_CacheEntry_ *e);
po_CacheEntry_ *po_Cache_Get_(const po_Cache_ *c, const char *key);
/* Unlinks and returns the entry (the caller owns the map's reference to it) or NULL. */
po_CacheEntry_ *po_Cache_Remove_(po_Cache_ *c, const char *key);
void po_Cache_ForEach_(const po_Cache_ *c, void (*fn)(void *ctx, po_CacheEntry_ *e), void *ctx);
/* Bytes held by the map's entries and slot array (for the benchmark); the parsed trees are not
 * counted (json-c does not say their size: see the benchmark's RSS). */
size_t po_Cache_Bytes_(const po_Cache_ *c);

#endif
