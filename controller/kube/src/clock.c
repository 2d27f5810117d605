/* System clock, PRNG, token bucket, backoff. */
#include "po/kube/clock.h"

#include <errno.h>
#include <time.h>

static int64_t sys_mono(void *ctx) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t sys_wall(void *ctx) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sys_sleep(void *ctx, int64_t ns) {
  if (ns <= 0) return;
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static const po_Clock kSystem = {sys_mono, sys_wall, sys_sleep, 0};

const po_Clock *po_Clock_System(void) { return &kSystem; }

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
  b->qps = qps;
  b->burst = burst < 1 ? 1 : burst;
  b->tokens = b->burst;
  b->last_ns = 0;
  b->started = false;
}

int64_t po_TokenBucket_Reserve(po_TokenBucket *b, int64_t now_ns) {
  if (b->qps <= 0) return 0;
  if (!b->started) {
    b->started = true;
    b->last_ns = now_ns;
  }
  if (now_ns > b->last_ns) {
    b->tokens += (double)(now_ns - b->last_ns) * b->qps / 1e9;
    if (b->tokens > b->burst) b->tokens = b->burst;
    b->last_ns = now_ns;
  }
  b->tokens -= 1.0;
  if (b->tokens >= 0) return 0;
  /* In debt: the wait is how long it takes to earn the token back. */
  return (int64_t)(-b->tokens * 1e9 / b->qps + 0.5);
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
  if (b->used && b->reset_after_ns > 0 && now_ns - b->last_ns > b->reset_after_ns)
    b->current_ns = b->initial_ns;
  b->used = true;
  b->last_ns = now_ns;
  int64_t d = b->current_ns;
  double next = (double)b->current_ns * b->factor;
  b->current_ns = next > (double)b->max_ns ? b->max_ns : (int64_t)next;
  if (b->jitter > 0 && r) d += (int64_t)((double)d * b->jitter * po_Rand_Unit(r));
  return d > b->max_ns ? b->max_ns : d;
}
