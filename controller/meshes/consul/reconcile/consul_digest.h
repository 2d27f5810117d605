/* Private to the Consul reconcile: a target's digest read from its object, and the JSON Patch of a
 * change planned over a digest (controller/reconcile/src/digest.h says what a digest is). */
#ifndef PO_CONSUL_DIGEST_H_
#define PO_CONSUL_DIGEST_H_

#include <stdbool.h>
#include <stddef.h>

#include "digest.h"

struct json_object;

/* What one element of spec.envoyExtensions says of itself, read as po_Consul_OwnedEntries reads it
 * (target_uid: the object's), all but the hash (left zero: the caller knows it, or hashes). The
 * strings are borrowed from the element. */
void po_ConsulDigest_Slot(const struct json_object *element, const char *target_uid, po_TargetSlot *s);

/* The object's part of a digest (uid, resourceVersion, created, managed, spec): n and slots untouched. */
void po_ConsulDigest_Meta(const struct json_object *target, po_TargetDigest *d);

/* One element of the planned list: the old list's element `from` - 1 kept where it is (from > 0),
 * or a new entry of ours {name, required, arguments}. */
typedef struct {
  size_t from;
  bool required;                  /* new */
  const struct json_object *arguments; /* new: the arguments, our marker included */
  size_t want;                    /* new: the caller's (which entry it is) */
} po_ConsulPlanned;

/* The JSON Patch (RFC 6902) that turns a target of version `rv` whose spec.envoyExtensions has n0
 * elements into the list `planned` (n), as po_Consul_Delta's would: the version written back first
 * (the precondition), the old elements not kept removed (last first), then the new ones added at
 * their places (first first). The text is in `a`. NULL when the kept elements change their order
 * (po_Consul_Delta then says it), when it takes more than a thousand operations, or when memory
 * ran out: the caller then plans over the object. */
const char *po_ConsulDigest_Delta(size_t n0, const po_ConsulPlanned *planned, size_t n, const char *rv, po_Arena *a,
                                  size_t *len);

#endif
