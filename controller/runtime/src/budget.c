/* The memory budget (po/runtime/budget.h): a counting semaphore of bytes that refuses instead of
 * waiting. */
#include "po/runtime/budget.h"

#include <pthread.h>
#include <stdlib.h>

struct po_Budget {
  po_BudgetOptions opt;
  pthread_mutex_t mu;
  size_t in_flight, peak;
  size_t reading; /* of in_flight, what TryRead reserved (bodies being read) */
  uint64_t refusals;
};

po_Budget *po_Budget_New(const po_BudgetOptions *o, po_CtlStatus *st) {
  if (!o || o->bytes < ((size_t)1 << 20)) {
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "memory budget: %zu bytes is under the smallest, 1 MiB (1048576)",
                            o ? o->bytes : 0), NULL;
  }
  po_Budget *b = calloc(1, sizeof *b);
  if (!b) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "memory budget: out of memory"), NULL;
  b->opt = *o;
  pthread_mutex_init(&b->mu, NULL);
  return b;
}

void po_Budget_Free(po_Budget *b) {
  if (!b) return;
  pthread_mutex_destroy(&b->mu);
  free(b);
}

/* Under b->mu: counts a reservation of n that fits, or a refusal. */
static bool take(po_Budget *b, size_t n, bool fits) {
  if (fits) {
    b->in_flight += n;
    if (b->in_flight > b->peak) b->peak = b->in_flight;
    if (b->opt.changed) b->opt.changed(b->opt.ctx, b->in_flight);
  } else {
    b->refusals++;
    if (b->opt.refused) b->opt.refused(b->opt.ctx, n);
  }
  return fits;
}

bool po_Budget_TryGrow(po_Budget *b, size_t held, size_t n) {
  if (n == 0) return true;
  size_t all = b->opt.bytes;
  /* The whole reservation (held + n) decides large or small, and "alone" is nothing in flight
   * beside the caller's own: a request that already holds part of its reservation and asks for
   * the rest must be able to take it all when alone, or one over 7/8 would never fit (429 on an
   * idle server, every time). */
  bool whole_ok = held <= all && n <= all - held;
  size_t total = whole_ok ? held + n : all;
  /* Large reservations stop at 7/8 (bodies being read aside, they have their own eighth): the
   * last eighth stays free for small ones and for reading. */
  bool large = total > all / 64;
  size_t limit = large ? all - all / 8 : all;
  pthread_mutex_lock(&b->mu);
  size_t others = b->in_flight > held ? b->in_flight - held : 0;
  size_t counted = large ? b->in_flight - b->reading : b->in_flight;
  bool fits = whole_ok && (others == 0 || (n <= limit && counted <= limit - n && b->in_flight <= all - n));
  take(b, n, fits);
  pthread_mutex_unlock(&b->mu);
  return fits;
}

bool po_Budget_TryRead(po_Budget *b, size_t n) {
  if (n == 0) return true;
  size_t all = b->opt.bytes;
  pthread_mutex_lock(&b->mu);
  bool fits = n <= all / 8 && b->reading <= all / 8 - n && b->in_flight <= all - n;
  if (take(b, n, fits)) b->reading += n;
  pthread_mutex_unlock(&b->mu);
  return fits;
}

void po_Budget_ReadDone(po_Budget *b, size_t n) {
  pthread_mutex_lock(&b->mu);
  b->reading = n > b->reading ? 0 : b->reading - n;
  pthread_mutex_unlock(&b->mu);
}

bool po_Budget_TryAcquire(po_Budget *b, size_t n) { return po_Budget_TryGrow(b, 0, n); }

void po_Budget_Release(po_Budget *b, size_t n) {
  if (n == 0) return;
  pthread_mutex_lock(&b->mu);
  b->in_flight = n > b->in_flight ? 0 : b->in_flight - n;
  if (b->opt.changed) b->opt.changed(b->opt.ctx, b->in_flight);
  pthread_mutex_unlock(&b->mu);
}

size_t po_Budget_Bytes(const po_Budget *b) { return b->opt.bytes; }

size_t po_Budget_InFlight(po_Budget *b) {
  pthread_mutex_lock(&b->mu);
  size_t v = b->in_flight;
  pthread_mutex_unlock(&b->mu);
  return v;
}

size_t po_Budget_Peak(po_Budget *b) {
  pthread_mutex_lock(&b->mu);
  size_t v = b->peak;
  pthread_mutex_unlock(&b->mu);
  return v;
}

uint64_t po_Budget_Refusals(po_Budget *b) {
  pthread_mutex_lock(&b->mu);
  uint64_t v = b->refusals;
  pthread_mutex_unlock(&b->mu);
  return v;
}
