/* The workqueue's rate limits, as client-go's DefaultControllerRateLimiter combines them: the
 * delay before a failed key runs again is the larger of
 *   - its own exponential backoff: base * 2^failures, capped (5 ms, 10 ms, 20 ms, ... 1000 s), and
 *   - an overall token bucket shared by every key (10 per second, bursts of 100),
 * so one hot key backs off alone while a storm of failures cannot exceed the bucket's rate.
 * The arithmetic is the controller's one set (po/base/rate.h: po_Backoff_Delay, po_TokenBucket);
 * these are the workqueue's defaults. */
#ifndef PO_RUNTIME_RATELIMIT_H
#define PO_RUNTIME_RATELIMIT_H

#include <stdint.h>

#include "po/base/rate.h"

#define PO_BACKOFF_BASE_NS (5 * INT64_C(1000000))              /* 5 ms */
#define PO_BACKOFF_MAX_NS (1000 * INT64_C(1000000000))         /* 1000 s */
#define PO_BUCKET_QPS 10.0
#define PO_BUCKET_BURST 100
/* Retries whose backoff is capped (po_Workqueue_AddRateLimitedUpTo: a webhook that could not be
 * reached) take their tokens from a bucket of their own, 5 per second, bursts of 50: keys stuck
 * at one try per cap forever cannot drain the shared bucket (1,000 of them kept it empty, and an
 * unrelated conflict retry waited ~90 s), and however many keys are stuck, their tries stay within
 * 5 per second in all (with N stuck keys, each is tried every max(cap, N / 5 s)). */
#define PO_CAPPED_BUCKET_QPS 5.0
#define PO_CAPPED_BUCKET_BURST 50

#endif
