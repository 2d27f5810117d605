/* Private to reconcile: overlaps between the PropertyOverrides of one target (overlap.c). */
#ifndef PO_RECONCILE_OVERLAP_H_
#define PO_RECONCILE_OVERLAP_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/engine.h"

typedef struct {
  const char *name;
  const po_Override *override; /* the compiled IR; NULL: takes no part (invalid, refused or being deleted) */
} po_OverlapPeer;

/* The overlaps of one target's peers, prepared once per reconcile: each patch's effect (its op
 * and value as JSON) computed once, not per pair. The check compares patches pairwise
 * (po_Override_Conflicts), so its cost is bounded by a budget of patch pairs: past
 * kPo_OverlapMaxPairs the check is skipped for that reconcile and every status says so, rather
 * than one tenant's 100 PropertyOverrides of 100 patches costing 10^8 comparisons on every
 * reconcile of the target. NULL when out of memory. */
enum { kPo_OverlapMaxPairs = 4000000 };
typedef struct po_OverlapIndex po_OverlapIndex;
po_OverlapIndex *po_OverlapIndex_New(const po_OverlapPeer *peers, size_t n, po_Arena *ar);

/* The first overlap of peer i with any other, as a sentence into out, and true; false with out
 * "" when none, or false with a sentence saying the check was skipped (the budget). Found on
 * resolved field chains: the same field set differently, a parent replaced or removed over
 * another's field, or two members of one oneof; peers stop at the first one that overlaps. */
bool po_Overlap_Of(const po_OverlapIndex *ix, size_t i, char *out, size_t size);

#endif
