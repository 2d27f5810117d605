/* Rates and retries, the one set for the whole controller: a token bucket (the client's request
 * limit, the workqueue's overall limit), exponential backoff as a pure function (the workqueue's
 * per-key delay) and as a jittered manager that resets after a healthy period (watch reconnects),
 * and the small PRNG for jitter. Pure arithmetic on nanoseconds: no locks (owners hold their own),
 * no clock reads (callers pass the time), so fake clocks drive them in tests. */
#ifndef PO_BASE_RATE_H
#define PO_BASE_RATE_H

#include <stdbool.h>
#include <stdint.h>

/* A deterministic PRNG for jitter (xorshift64*); one per owner, not thread-safe. */
typedef struct {
  uint64_t s;
} po_Rand;
void po_Rand_Seed(po_Rand *r, uint64_t seed);
double po_Rand_Unit(po_Rand *r); /* uniform in [0, 1) */

/* A token bucket with integer arithmetic (deterministic under a fake clock): `qps` tokens per
 * second, at most `burst` stored, full at the start. Tokens may go "negative": a reservation
 * beyond the burst is granted at a later time, as golang.org/x/time/rate does, so each caller
 * gets its own slot instead of all retrying at once. qps <= 0 disables limiting. */
typedef struct {
  int64_t interval_ns; /* time to earn one token: 1e9 / qps; 0: no limit */
  int64_t burst;
  int64_t empty_at;    /* the time at which the bucket would hold zero tokens */
  bool started;
} po_TokenBucket;
void po_TokenBucket_Init(po_TokenBucket *b, double qps, int burst);
/* Takes one token at time now_ns; returns how long the caller must wait for it (0 = at once). */
int64_t po_TokenBucket_Reserve(po_TokenBucket *b, int64_t now_ns);

/* base * 2^failures, capped at max (no overflow for any failures; negative counts as 0). */
int64_t po_Backoff_Delay(int64_t base_ns, int64_t max_ns, int failures);

/* Exponential backoff with jitter, reset after a healthy period (client-go's
 * NewExponentialBackoffManager: 0.8 s -> 30 s, factor 2, jitter 1.0, reset after 2 min). */
typedef struct {
  int64_t initial_ns, max_ns, reset_after_ns;
  double factor, jitter; /* the delay is d * (1 + jitter * U[0,1)) capped at max */
  int64_t current_ns;    /* the next un-jittered delay */
  int64_t last_ns;       /* when Next was last called */
  bool used;
} po_Backoff;
void po_Backoff_Init(po_Backoff *b, int64_t initial_ns, int64_t max_ns, double factor, double jitter,
                     int64_t reset_after_ns);
/* The delay to wait before the next attempt. Resets to initial when the last failure is older
 * than reset_after (the connection was healthy in between). r may be NULL (no jitter). */
int64_t po_Backoff_Next(po_Backoff *b, int64_t now_ns, po_Rand *r);
void po_Backoff_Reset(po_Backoff *b);

#endif
