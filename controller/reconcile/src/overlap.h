/* Private to reconcile: overlaps between the PropertyOverrides of one target (overlap.c). */
#ifndef PO_RECONCILE_OVERLAP_H_
#define PO_RECONCILE_OVERLAP_H_

#include <stddef.h>

#include "po/engine.h"

typedef struct {
  const char *name;
  const po_Arguments *args; /* NULL: takes no part (invalid, refused or being deleted) */
} po_OverlapPeer;

/* The first overlap of peer i with any other, as a sentence into out; "" when none. Quadratic
 * in the patches of one target, which the per-object limits bound (po/targets/consul_check.h). */
void po_Overlap_Of(const po_OverlapPeer *peers, size_t n, size_t i, po_Arena *ar, char *out, size_t size);

#endif
