/* A deduplicating, rate-limited, delaying work queue of "namespace/name" keys, with client-go's
 * semantics:
 *   - a key added while it waits in the queue is not added twice;
 *   - a key added while a worker processes it is queued again when that worker calls Done, so
 *     one key is never processed by two workers at once and the latest change is never lost;
 *   - AddRateLimited waits max(per-key exponential backoff, overall token bucket) (ratelimit.h);
 *     Forget resets the key's failure count (on success);
 *   - AddAfter queues the key once its delay has passed (the earliest of several delays wins);
 *   - AddSpaced queues it at once, or when its last run's start is a spacing ago; within a
 *     burst of AddSpaced (options), when the burst pauses, at most burst_max later;
 *   - ShutDown stops accepting keys; Get then returns "shutting down" (keys still waiting are
 *     dropped: reconciliation is level-triggered, the next start lists everything anyway);
 *     ShutDownWithDrain also waits for the keys in flight to be Done.
 * Thread-safe. Waiting uses a condition variable through po_RtClock (a fake clock in tests). */
#ifndef PO_RUNTIME_WORKQUEUE_H
#define PO_RUNTIME_WORKQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/runtime/clock.h"
#include "po/runtime/metrics.h"

typedef struct po_Workqueue po_Workqueue;

typedef struct {
  const char *name;     /* the metrics label "name" (controller-runtime uses the controller name) */
  po_RtClock *clock;      /* NULL: po_RtClock_Real() */
  po_Metrics *metrics;  /* NULL: no metrics; else the workqueue_* families are updated */
  /* Rate limits; 0 means client-go's default (5 ms, 1000 s, 10 qps, 100 burst). */
  int64_t base_delay_ns;
  int64_t max_delay_ns;
  double qps;
  int burst;
  /* Bursts of AddSpaced (both > 0 to use them; 0: none). An AddSpaced less than burst_quiet after
   * the one before it, of any key, is in a burst: its key is held until the burst pauses (no
   * AddSpaced for burst_quiet), then runs, its spacing or not (once per spacing: a key whose
   * last run so skipped it waits for its spacing); at most burst_max (then not before its
   * spacing ends). The first AddSpaced after a pause is not held: a lone change waits for
   * nothing. */
  int64_t burst_quiet_ns;
  int64_t burst_max_ns;
} po_WorkqueueOptions;

typedef enum {
  kPo_Workqueue_Item = 0,         /* *key is set: process it, then call Done */
  kPo_Workqueue_ShuttingDown = 1, /* the queue is shut down: the worker should exit */
} po_WorkqueueGet;

/* opts may be NULL. NULL when out of memory. */
po_Workqueue *po_Workqueue_New(const po_WorkqueueOptions *opts);
/* Shuts down (without waiting) and frees. No thread may be inside a call any more. */
void po_Workqueue_Free(po_Workqueue *q);

void po_Workqueue_Add(po_Workqueue *q, const char *key);
/* delay <= 0 adds at once. */
void po_Workqueue_AddAfter(po_Workqueue *q, const char *key, int64_t delay_ns);
/* Adds key so that two of its runs start at least spacing apart: at once when no worker took it
 * within the last spacing (a quiet key's first change waits for nothing), else when that spacing
 * ends, so everything that comes meanwhile is one run. The key is remembered for spacing after
 * it is taken; spacing <= 0 is Add. */
void po_Workqueue_AddSpaced(po_Workqueue *q, const char *key, int64_t spacing_ns);
/* Counts a failure of key, then AddAfter(the rate limiter's delay). Returns that delay. */
int64_t po_Workqueue_AddRateLimited(po_Workqueue *q, const char *key);
/* The same with the key's own backoff capped at max_delay_ns (<= 0: the queue's maximum, and
 * the call is AddRateLimited); the failure is still counted. A capped retry takes its token from
 * the capped retries' own bucket (PO_CAPPED_BUCKET_QPS), not the one every other key shares. */
int64_t po_Workqueue_AddRateLimitedUpTo(po_Workqueue *q, const char *key, int64_t max_delay_ns);
/* The key succeeded: forget its failures (the next failure starts again at the base delay). */
void po_Workqueue_Forget(po_Workqueue *q, const char *key);
/* Failures counted for key since its last Forget. */
int po_Workqueue_NumRequeues(po_Workqueue *q, const char *key);

/* Blocks until a key is ready or the queue shuts down. The key stays valid until Done(key). */
po_WorkqueueGet po_Workqueue_Get(po_Workqueue *q, const char **key);
/* Never blocks: true and *key when a key was ready, false when none was or when shut down. */
bool po_Workqueue_TryGet(po_Workqueue *q, const char **key);
/* Processing of key (as returned by Get) is finished. */
void po_Workqueue_Done(po_Workqueue *q, const char *key);

/* Keys ready to run or waiting for their in-flight run to finish (excludes timed waits). */
size_t po_Workqueue_Len(po_Workqueue *q);
/* Keys waiting for a timed requeue. */
size_t po_Workqueue_WaitingLen(po_Workqueue *q);
bool po_Workqueue_ShuttingDown(po_Workqueue *q);

void po_Workqueue_ShutDown(po_Workqueue *q);
/* ShutDown, then wait until every key in flight is Done or the clock reaches deadline (absolute,
 * PO_FOREVER for none). Returns true when drained. */
bool po_Workqueue_ShutDownWithDrain(po_Workqueue *q, int64_t deadline);

#endif
