/* The two fake servers of tests/reconcile's digest tests (test_digest, test_digest_adv), driven
 * alike: one reconciles Consul targets from their digests where it can, the other always from the
 * object (Fake.no_digest). After every reconcile both must hold the same objects and both
 * reconciles must have said the same; the digest the index keeps is checked against the object at
 * the version it names (po_ConsulDigest_Slot of each element, the hash of our arguments). */
#ifndef PO_TESTS_RECONCILE_DIGEST_PAIR_H_
#define PO_TESTS_RECONCILE_DIGEST_PAIR_H_

#include <json-c/json.h>
#include <stdint.h>

#include "fake_api.h"

enum { kWorldPos = 16 }; /* PropertyOverrides a history names (each test's name table) */

typedef struct {
  Fake *fx[2]; /* [0] from digests where it can, [1] always from the object */
  int gen[kWorldPos], uid[kWorldPos];
  int uids;
  long reconciles, from_digest, digest_object, digest_patches, checked_digests;
} World;

/* The digest the index of fx[0] keeps for key, against the object at the version it names. */
void check_digest(World *w, const char *key);
/* Every slot of both servers the same (the same JSON), and as many Events. */
void same_servers(World *w, const char *when);
/* key reconciled on both servers, and both compared (above). */
void reconcile_both(World *w, const char *key, const char *when);

/* One of the edits by others of a target's spec both tests make (kind 0-5; digest_pair.c). */
void edit_extensions(json_object *spec, int kind, uint32_t r1, uint32_t r2);

#endif
