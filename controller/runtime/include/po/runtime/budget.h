/* A memory budget shared by concurrent requests (the webhook's admission budget): each request
 * reserves the bytes it may come to hold before it holds them, and gives them back when it is
 * done; a reservation that does not fit is refused at once, never queued, so that a refusal
 * costs nothing and a caller can answer "retry later" (429 with Retry-After).
 *
 * Large reservations cannot take the whole budget: those over budget/64 (a "large" one) fit only
 * while the bytes in flight stay within 7/8 of it (or alone), so the last eighth is left to small
 * ones and a flood of maximal requests never refuses an ordinary one. Large request bodies being
 * read (TryRead) have that last eighth too, and only it: what they hold does not count against
 * the 7/8 of large ones, so that senders (however many, however slow) can never hold what
 * deciding complete requests needs, and never more than an eighth of the budget. Thread safe;
 * costs are O(1) under one mutex. */
#ifndef PO_RUNTIME_BUDGET_H
#define PO_RUNTIME_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/runtime/status.h"

typedef struct po_Budget po_Budget;

typedef struct {
  size_t bytes; /* the whole budget; at least 1 MiB */
  /* Called after every reservation and release with the bytes then in flight (for a gauge), and
   * once per refusal with the bytes asked for (for a counter); may be NULL. Called with the
   * budget's lock held: they must not call back into it. */
  void (*changed)(void *ctx, size_t in_flight);
  void (*refused)(void *ctx, size_t asked);
  void *ctx;
} po_BudgetOptions;

/* NULL with st filled (kPo_Ctl_Usage) when bytes is under 1 MiB, kPo_Ctl_NoMemory. */
po_Budget *po_Budget_New(const po_BudgetOptions *o, po_CtlStatus *st);
void po_Budget_Free(po_Budget *b);

/* Reserves n bytes: true when they fit now (see above), false (a refusal, counted) when not. A
 * reservation over the whole budget never fits: callers check po_Budget_Bytes first to tell
 * "too large ever" (413) from "not now" (429). n 0: true. */
bool po_Budget_TryAcquire(po_Budget *b, size_t n);
/* Adds n bytes to a reservation of `held` bytes the caller already has: the same rules for the
 * whole (held + n), and "alone" when nothing beside those `held` is in flight, so a reservation
 * within the whole budget grown by an idle server's only request always fits. */
bool po_Budget_TryGrow(po_Budget *b, size_t held, size_t n);
/* Reserves n bytes for a body being read: true while the bodies being read hold at most an eighth
 * of the budget with them (and the whole budget is not passed); false (a refusal) when not. */
bool po_Budget_TryRead(po_Budget *b, size_t n);
/* n bytes reserved by TryRead are no longer a body being read (its request is complete, or
 * gone): they stay reserved as the request's own until released. */
void po_Budget_ReadDone(po_Budget *b, size_t n);
/* Gives back n bytes of earlier reservations. */
void po_Budget_Release(po_Budget *b, size_t n);

size_t po_Budget_Bytes(const po_Budget *b);    /* the whole budget */
size_t po_Budget_InFlight(po_Budget *b);       /* reserved now */
size_t po_Budget_Peak(po_Budget *b);           /* the most ever reserved at once */
uint64_t po_Budget_Refusals(po_Budget *b);     /* TryAcquire calls that returned false */

#endif
