/* Private to reconcile: overlaps between the PropertyOverrides of one target (overlap.c). */
#ifndef PO_RECONCILE_OVERLAP_H_
#define PO_RECONCILE_OVERLAP_H_

#include <stddef.h>

#include "po/engine.h"

typedef struct {
  const char *name;
  const po_Arguments *args; /* NULL: takes no part (invalid, refused or being deleted) */
} po_OverlapPeer;

typedef struct po_OverlapIndex po_OverlapIndex;

/* Made once per reconcile (in ar): each patch's value serialised once, and the places (path,
 * type, direction) where every patch does the same thing, which are then skipped. NULL when
 * out of memory. */
po_OverlapIndex *po_OverlapIndex_New(const po_OverlapPeer *peers, size_t n, po_Arena *ar);

/* The first overlap of peer i with any other, as a sentence into out; "" when none. Still
 * pairwise where patches on one place differ (then the first overlap usually ends the search);
 * no allocation. */
void po_Overlap_Of(const po_OverlapIndex *ix, size_t i, char *out, size_t size);

#endif
