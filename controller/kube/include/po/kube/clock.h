/* Injectable time, a token bucket and a jittered exponential backoff.
 *
 * All timing decisions in this module (rate limit, retry delays, watch reconnects, lease expiry)
 * go through a po_Clock so unit tests can drive them with a fake clock. */
#ifndef PO_KUBE_CLOCK_H
#define PO_KUBE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct po_Clock {
  int64_t (*monotonic_ns)(void *ctx); /* never goes back; for intervals and deadlines */
  int64_t (*wall_ns)(void *ctx);      /* Unix time in ns; for timestamps written to objects */
  void (*sleep_ns)(void *ctx, int64_t ns);
  void *ctx;
} po_Clock;

/* CLOCK_MONOTONIC, CLOCK_REALTIME and nanosleep. Static, shared. */
const po_Clock *po_Clock_System(void);

/* A small deterministic PRNG for jitter (xorshift64*); one per owner, not thread-safe. */
typedef struct {
  uint64_t s;
} po_Rand;
void po_Rand_Seed(po_Rand *r, uint64_t seed);
double po_Rand_Unit(po_Rand *r); /* uniform in [0, 1) */

/* Token bucket: `qps` tokens per second, at most `burst` stored. Not locked: callers that share
 * one hold their own lock. qps <= 0 disables limiting. */
typedef struct {
  double qps;
  double burst;
  double tokens;
  int64_t last_ns;
  bool started;
} po_TokenBucket;
void po_TokenBucket_Init(po_TokenBucket *b, double qps, int burst);
/* Takes one token (possibly going into debt) and returns how long the caller must wait before
 * acting, 0 if a token was available at now_ns. */
int64_t po_TokenBucket_Reserve(po_TokenBucket *b, int64_t now_ns);

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
 * than reset_after (the connection was healthy in between). */
int64_t po_Backoff_Next(po_Backoff *b, int64_t now_ns, po_Rand *r);
void po_Backoff_Reset(po_Backoff *b);

#endif
