/* The workqueue's rate limits, as client-go's DefaultControllerRateLimiter combines them: the
 * delay before a failed key runs again is the larger of
 *   - its own exponential backoff: base * 2^failures, capped (5 ms, 10 ms, 20 ms, ... 1000 s), and
 *   - an overall token bucket shared by every key (10 per second, bursts of 100),
 * so one hot key backs off alone while a storm of failures cannot exceed the bucket's rate.
 * Pure arithmetic on nanoseconds: no locks (the workqueue holds its own), no clock reads. */
#ifndef PO_RUNTIME_RATELIMIT_H
#define PO_RUNTIME_RATELIMIT_H

#include <stdint.h>

#define PO_BACKOFF_BASE_NS (5 * INT64_C(1000000))              /* 5 ms */
#define PO_BACKOFF_MAX_NS (1000 * INT64_C(1000000000))         /* 1000 s */
#define PO_BUCKET_QPS 10.0
#define PO_BUCKET_BURST 100

/* base * 2^failures, capped at max (no overflow for any failures >= 0). */
int64_t po_Backoff_Delay(int64_t base_ns, int64_t max_ns, int failures);

/* A token bucket with integer arithmetic (deterministic under a fake clock). Tokens may go
 * "negative": a reservation beyond the burst is granted at a later time, as golang.org/x/time/rate
 * does, so each caller gets its own slot instead of all retrying at once. */
typedef struct {
  int64_t interval_ns; /* time to earn one token: 1e9 / qps */
  int64_t burst;
  int64_t empty_at;    /* the time at which the bucket would hold zero tokens */
  int started;
} po_RtTokenBucket;

/* qps > 0, burst >= 1. */
void po_RtTokenBucket_Init(po_RtTokenBucket *b, double qps, int burst);

/* Takes one token at time now; returns how long the caller must wait for it (0 = at once). */
int64_t po_RtTokenBucket_Reserve(po_RtTokenBucket *b, int64_t now);

#endif
