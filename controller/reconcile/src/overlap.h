/* Private to reconcile: overlaps between the PropertyOverrides of one target (overlap.c). */
#ifndef PO_RECONCILE_OVERLAP_H_
#define PO_RECONCILE_OVERLAP_H_

#include <stddef.h>

#include "po/engine.h"

typedef struct {
  const char *name;
  const po_Override *override; /* the compiled IR; NULL: takes no part (invalid, refused or being deleted) */
} po_OverlapPeer;

/* The first overlap of peer i with any other, as a sentence into out; "" when none. Found on
 * resolved field chains (po_Override_Conflicts): the same field set differently, a parent
 * replaced or removed over another's field, or two members of one oneof. Quadratic in the
 * patches of one target, which the per-object limits bound (po/targets/consul_check.h); peers
 * stop at the first one that overlaps. */
void po_Overlap_Of(const po_OverlapPeer *peers, size_t n, size_t i, po_Arena *ar, char *out, size_t size);

#endif
