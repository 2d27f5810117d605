/* A bounded text of errors, for denials and condition messages (private to controller/targets).
 *
 * Why: an object may carry thousands of errors, and the text built from them goes into one
 * AdmissionReview response or one status condition. Appending to a growable buffer keeps the
 * cost linear (no re-printing of what is already there); the bounds keep the result small: the
 * first `max_items` errors are kept whole while they fit in `max_bytes`, every later one is only
 * counted, and the text ends with how many were left out. */
#ifndef PO_TARGETS_TEXT_H_
#define PO_TARGETS_TEXT_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/engine.h"

typedef struct {
  po_TextBuf t; /* the text so far (the engine's arena builder) */
  size_t max_items, max_bytes;
  size_t items;            /* items shown */
  size_t omitted;          /* items counted, not shown */
  bool full;               /* once one item was left out, every later one is too (order is kept) */
} po_Text;

void po_Text_Init(po_Text *t, po_Arena *a, size_t max_items, size_t max_bytes);
/* Appends one item of `weight` errors (a block may stand for several), preceded by "\n" unless
 * it is the first: whole when it fits, else only counted. The very first item is always shown,
 * cut at max_bytes (on a UTF-8 boundary, marked " [...]") when it alone is too long. Returns
 * whether it was shown. */
bool po_Text_Item(po_Text *t, const char *s, size_t weight);
/* Counts `weight` errors that are not shown at all (past the bounds, without formatting them). */
void po_Text_Skip(po_Text *t, size_t weight);
/* Whether another item of `weight` errors could still be shown, as far as counts go (cheap: call
 * it before formatting an item, so that nothing is formatted only to be counted). */
bool po_Text_HasRoom(const po_Text *t, size_t weight);
/* Whether po_Text_Item would show `s` whole (a first item too long is not whole). */
bool po_Text_Fits(const po_Text *t, const char *s, size_t weight);
/* The text, with "\n... and K more <noun>" when some were left out; NULL when no item was added.
 * "out of memory" when memory ran out. */
const char *po_Text_Finish(po_Text *t, const char *noun);

#endif
