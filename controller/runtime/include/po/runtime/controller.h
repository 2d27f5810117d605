/* A controller: a workqueue of "namespace/name" keys and N worker threads calling a reconcile
 * callback, with controller-runtime's result handling and metrics:
 *
 *   result          queue action                       reconcile_total{result}  errors_total
 *   Success         Forget                             success                  -
 *   Error           AddRateLimited (backoff, retries;  error                    +1
 *                   max_backoff_ns caps it)
 *   Requeue         AddRateLimited                     requeue                  -
 *   RequeueAfter    Forget, AddAfter(duration)         requeue_after            -
 *   Terminal        Forget (never retried)             error                    +1 (and terminal)
 *
 * controller_runtime_reconcile_time_seconds observes every call; active_workers and
 * max_concurrent_reconciles are kept up to date. The callback receives a logger bound to
 * controller and key. Reconcile must be level-triggered and idempotent (CONTRIBUTING.md, "The controller"). */
#ifndef PO_RUNTIME_CONTROLLER_H
#define PO_RUNTIME_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>

#include "po/runtime/clock.h"
#include "po/runtime/log.h"
#include "po/runtime/metrics.h"
#include "po/runtime/runnable.h"
#include "po/runtime/status.h"
#include "po/runtime/workqueue.h"

/* Each worker thread's stack: 8 MiB, glibc's usual default, set explicitly so that a container's
 * smaller RLIMIT_STACK cannot make a reconcile of a deeply nested object (10,000 levels, what the
 * API server stores) overflow it. */
enum { kPo_ControllerWorkerStackBytes = 8 << 20 };

typedef enum {
  kPo_Result_Success = 0,
  kPo_Result_Error = 1,
  kPo_Result_Requeue = 2,
  kPo_Result_RequeueAfter = 3,
  kPo_Result_Terminal = 4,
} po_ResultKind;

typedef struct {
  po_ResultKind kind;
  int64_t requeue_after_ns; /* kPo_Result_RequeueAfter */
  /* kPo_Result_Error: the key's own backoff grows no longer than this (0: the queue's maximum,
   * 1000 s). For a failure that can end at any moment with no event to requeue the key (a
   * webhook reachable again): the retry then comes within this long, not up to 1000 s later.
   * The queue's overall token bucket still bounds the rate of all retries together. */
  int64_t max_backoff_ns;
  char error[256];          /* kPo_Result_Error / Terminal: logged with the retry */
} po_Result;

po_Result po_Result_Success(void);
po_Result po_Result_Requeue(void);
po_Result po_Result_RequeueAfter(int64_t delay_ns);
po_Result po_Result_Error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
po_Result po_Result_Terminal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Called by worker threads, never twice at once for the same key. */
typedef po_Result (*po_ReconcileFn)(void *ctx, const char *key, po_Logger *log);

typedef struct {
  const char *name;        /* the "controller" label and the workqueue's "name" label */
  po_ReconcileFn reconcile;
  void *ctx;
  int workers;             /* 0: 1 */
  po_RtClock *clock;         /* NULL: real */
  po_Metrics *metrics;     /* NULL: no metrics */
  po_Logger *log;          /* NULL: no logs */
  po_WorkqueueOptions queue; /* rate limits; name, clock and metrics are filled in */
} po_ControllerOptions;

typedef struct po_Controller po_Controller;

po_Controller *po_Controller_New(const po_ControllerOptions *opts, po_CtlStatus *st);
/* Stops (without waiting for in-flight work beyond joining the threads) and frees. */
void po_Controller_Free(po_Controller *c);

/* Queues key (informer event handlers call this). Keys queued before Start wait for it; keys
 * queued after a Stop and before the next Start are dropped (the next leader lists everything). */
void po_Controller_Enqueue(po_Controller *c, const char *key);
/* Queues key once delay_ns has passed; a key already waiting keeps its earlier due time, so
 * every call within one window becomes one reconcile (informer bursts on one key). delay_ns <= 0
 * is Enqueue. Counted in workqueue_retries_total, as client-go counts every AddAfter. */
void po_Controller_EnqueueAfter(po_Controller *c, const char *key, int64_t delay_ns);
/* Queues key so that its reconciles start at least spacing_ns apart (po_Workqueue_AddSpaced):
 * at once when it has not run within the last spacing, else when that spacing ends, so every
 * call meanwhile is one reconcile. spacing_ns <= 0 is Enqueue. */
void po_Controller_EnqueueSpaced(po_Controller *c, const char *key, int64_t spacing_ns);

/* Makes the queue ready to take keys before the workers start (after a Stop, a fresh one): keys
 * queued between Prepare and Start are each reconciled once, however many times queued, where a
 * key queued again after its reconcile began runs again. */
bool po_Controller_Prepare(po_Controller *c, po_CtlStatus *st);
/* Starts the workers. After a Stop, Start makes a fresh queue (unless Prepare did). */
bool po_Controller_Start(po_Controller *c, po_CtlStatus *st);
/* Shuts the queue down, lets in-flight reconciles finish until deadline (absolute, on the
 * controller's clock), joins the workers that finished. Returns true when all were drained;
 * false leaves stuck workers detached (the process is about to exit). */
bool po_Controller_Stop(po_Controller *c, int64_t deadline);

/* The current queue (tests, metrics); valid until the next Start or Free. */
po_Workqueue *po_Controller_Queue(po_Controller *c);


#endif
