/* Private to reconcile: the hash that stands for a JSON tree where equality decides something.
 *
 * It keys the compiled-form cache (a spec's verdict is served to the spec that hashes the same)
 * and decides whether an entry live in a target is exactly ours (no write when it is). Both
 * inputs can come from tenants: a PropertyOverride's status.lastValid, and anything in a
 * ServiceDefaults someone may edit. The hash before this one (FNV-1a 64, unkeyed, an object's
 * members summed) could be collided offline in a minute: four integer members of a Value object
 * changed so that their sum came out the same (tests/reconcile test_forged_collision_told_apart).
 * This one is SipHash with its 128-bit output (1-3: json_hash.c says why), keyed with 128 random
 * bits drawn once per process: without the key nobody can compute a hash, so nobody can aim for a
 * collision, and a chance one is 2^-128 per pair.
 *
 * An object's members still count in any order (an API server may return its keys sorted): each
 * member is hashed on its own (key and value) and the 128-bit results are added, lane by lane;
 * the sum of unpredictable values is as unpredictable. Reads only: safe on trees other threads
 * read. */
#ifndef PO_RECONCILE_JSON_HASH_H_
#define PO_RECONCILE_JSON_HASH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

typedef struct {
  uint64_t lo, hi;
} po_JsonHash;

/* The hash of a tree (types and values; an object's members in any order). HashExcept leaves out
 * one member of the top object (our marker, in an entry's arguments). */
po_JsonHash po_Json_Hash(const struct json_object *o);
po_JsonHash po_Json_HashExcept(const struct json_object *o, const char *key);
/* Leaving out several members of the top object. */
po_JsonHash po_Json_HashExceptAll(const struct json_object *o, const char *const *keys, size_t n);
/* The same tree hash under a fixed, public key, 64 bits: equal in every process and across
 * restarts, so it can be stored (the write record on a target, sync.h) and compared by a later
 * process. Anyone can compute it, so it must never decide what is ours or what is programmed; the
 * write record only tells whether consul-k8s wrote a status since, and whoever could aim at a
 * collision there can edit the record itself. */
uint64_t po_Json_HashStable(const struct json_object *o);
/* A string's keyed hash (64 bits): where names tenants choose pick a hash table's slot
 * (strtable.h), nobody can aim them all at one. */
uint64_t po_Hash_String(const char *s, size_t n);
/* The same over any bytes, all 128 bits (an identity made of several fields: overlap.h). */
po_JsonHash po_Hash_Bytes(const void *p, size_t n);
/* For tests: SipHash-c-d with 128-bit output over bytes, under the key given (k0 the key's first
 * 8 bytes, little-endian), to check against the authors' published values. */
po_JsonHash po_Hash_SipWith_(uint64_t k0, uint64_t k1, int c, int d, const void *p, size_t n);
static inline bool po_JsonHash_Equal(po_JsonHash a, po_JsonHash b) { return a.lo == b.lo && a.hi == b.hi; }

#endif
