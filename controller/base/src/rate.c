#include "po/base/rate.h"

void po_Rand_Seed(po_Rand *r, uint64_t seed) { r->s = seed ? seed : 0x9E3779B97F4A7C15ull; }

double po_Rand_Unit(po_Rand *r) {
  uint64_t x = r->s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->s = x;
  return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

void po_TokenBucket_Init(po_TokenBucket *b, double qps, int burst) {
  b->interval_ns = 0;
  if (qps > 0) {
    b->interval_ns = (int64_t)(1e9 / qps + 0.5);
    if (b->interval_ns < 1) b->interval_ns = 1;
  }
  b->burst = burst < 1 ? 1 : burst;
  b->empty_at = 0;
  b->started = false;
}

int64_t po_TokenBucket_Reserve(po_TokenBucket *b, int64_t now_ns) {
  if (b->interval_ns == 0) return 0;
  int64_t full_at = now_ns - b->burst * b->interval_ns; /* empty_at that means "burst tokens now" */
  if (!b->started || b->empty_at < full_at) {
    b->empty_at = full_at; /* the bucket starts full and never holds more than the burst */
    b->started = true;
  }
  b->empty_at += b->interval_ns;
  return b->empty_at > now_ns ? b->empty_at - now_ns : 0;
}

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

void po_Backoff_Init(po_Backoff *b, int64_t initial_ns, int64_t max_ns, double factor, double jitter,
                     int64_t reset_after_ns) {
  b->initial_ns = initial_ns;
  b->max_ns = max_ns;
  b->factor = factor;
  b->jitter = jitter;
  b->reset_after_ns = reset_after_ns;
  po_Backoff_Reset(b);
}

void po_Backoff_Reset(po_Backoff *b) {
  b->current_ns = b->initial_ns;
  b->last_ns = 0;
  b->used = false;
}

int64_t po_Backoff_Next(po_Backoff *b, int64_t now_ns, po_Rand *r) {
  if (b->used && b->reset_after_ns > 0 && now_ns - b->last_ns > b->reset_after_ns) b->current_ns = b->initial_ns;
  b->used = true;
  b->last_ns = now_ns;
  int64_t d = b->current_ns;
  double next = (double)b->current_ns * b->factor;
  b->current_ns = next > (double)b->max_ns ? b->max_ns : (int64_t)next;
  if (b->jitter > 0 && r) d += (int64_t)((double)d * b->jitter * po_Rand_Unit(r));
  return d > b->max_ns ? b->max_ns : d;
}
