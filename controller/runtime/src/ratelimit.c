#include "po/runtime/ratelimit.h"

int64_t po_Backoff_Delay(int64_t base_ns, int64_t max_ns, int failures) {
  if (failures < 0) failures = 0;
  int64_t d = base_ns;
  /* Doubling stops at the cap, so the loop is bounded by log2(max/base) and never overflows. */
  for (int i = 0; i < failures; i++) {
    if (d >= max_ns / 2) return max_ns;
    d *= 2;
  }
  return d > max_ns ? max_ns : d;
}

void po_RtTokenBucket_Init(po_RtTokenBucket *b, double qps, int burst) {
  b->interval_ns = (int64_t)(1e9 / qps + 0.5);
  if (b->interval_ns < 1) b->interval_ns = 1;
  b->burst = burst < 1 ? 1 : burst;
  b->empty_at = 0;
  b->started = 0;
}

int64_t po_RtTokenBucket_Reserve(po_RtTokenBucket *b, int64_t now) {
  int64_t full_at = now - b->burst * b->interval_ns; /* empty_at that means "burst tokens now" */
  if (!b->started || b->empty_at < full_at) {
    b->empty_at = full_at; /* the bucket starts full and never holds more than the burst */
    b->started = 1;
  }
  b->empty_at += b->interval_ns;
  return b->empty_at > now ? b->empty_at - now : 0;
}
