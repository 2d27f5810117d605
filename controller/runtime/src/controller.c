/* Worker threads around the workqueue, with controller-runtime's result handling. */
#include "po/runtime/controller.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct po_Controller {
  char *name;
  po_ReconcileFn reconcile;
  void *ctx;
  int n_workers;
  po_RtClock *clock;
  po_Metrics *metrics;
  po_Logger *log; /* bound to controller=name; NULL when no logs */
  po_WorkqueueOptions queue_opts;

  pthread_mutex_t mu; /* guards queue swaps, running, workers */
  po_Workqueue *queue;
  bool running;
  pthread_t *threads;
  int n_threads;
  int finished; /* workers that returned, counted under mu */
  int active;   /* reconciles in progress, under mu */
  pthread_cond_t finished_cv;

  po_Series *m_success, *m_error, *m_requeue, *m_requeue_after, *m_errors, *m_terminal, *m_time,
      *m_active, *m_max;
};

static po_Result make_result(po_ResultKind kind, const char *fmt, va_list ap) {
  po_Result r = {.kind = kind};
  if (fmt) vsnprintf(r.error, sizeof r.error, fmt, ap);
  return r;
}

po_Result po_Result_Success(void) { return (po_Result){.kind = kPo_Result_Success}; }
po_Result po_Result_Requeue(void) { return (po_Result){.kind = kPo_Result_Requeue}; }
po_Result po_Result_RequeueAfter(int64_t delay_ns) {
  return (po_Result){.kind = kPo_Result_RequeueAfter, .requeue_after_ns = delay_ns};
}
po_Result po_Result_Error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  po_Result r = make_result(kPo_Result_Error, fmt, ap);
  va_end(ap);
  return r;
}
po_Result po_Result_Terminal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  po_Result r = make_result(kPo_Result_Terminal, fmt, ap);
  va_end(ap);
  return r;
}

static po_Workqueue *make_queue(po_Controller *c) {
  po_WorkqueueOptions o = c->queue_opts;
  o.name = c->name;
  o.clock = c->clock;
  o.metrics = c->metrics;
  return po_Workqueue_New(&o);
}

po_Controller *po_Controller_New(const po_ControllerOptions *opts, po_CtlStatus *st) {
  if (!opts || !opts->name || !opts->name[0] || !opts->reconcile) {
    po_CtlStatus_Set(st, kPo_Ctl_Usage, "controller: name and reconcile are required");
    return NULL;
  }
  po_Controller *c = calloc(1, sizeof *c);
  if (!c || !(c->name = strdup(opts->name))) {
    free(c);
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "controller %s: out of memory", opts->name);
    return NULL;
  }
  c->reconcile = opts->reconcile;
  c->ctx = opts->ctx;
  c->n_workers = opts->workers > 0 ? opts->workers : 1;
  c->clock = opts->clock ? opts->clock : po_RtClock_Real();
  c->metrics = opts->metrics; /* NULL: no metrics (every series below is NULL, a no-op) */
  c->queue_opts = opts->queue;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->finished_cv, NULL);
  if (opts->log) c->log = po_Logger_With(opts->log, po_Str("controller", c->name));
  po_Metrics *m = c->metrics;
  po_MetricFamily *total = po_Metrics_Find(m, PO_M_RECONCILE_TOTAL);
  c->m_success = po_Family_WithLabels(total, c->name, "success");
  c->m_error = po_Family_WithLabels(total, c->name, "error");
  c->m_requeue = po_Family_WithLabels(total, c->name, "requeue");
  c->m_requeue_after = po_Family_WithLabels(total, c->name, "requeue_after");
  c->m_errors = po_Family_WithLabels(po_Metrics_Find(m, PO_M_RECONCILE_ERRORS), c->name);
  c->m_terminal = po_Family_WithLabels(po_Metrics_Find(m, PO_M_TERMINAL_ERRORS), c->name);
  c->m_time = po_Family_WithLabels(po_Metrics_Find(m, PO_M_RECONCILE_TIME), c->name);
  c->m_active = po_Family_WithLabels(po_Metrics_Find(m, PO_M_ACTIVE_WORKERS), c->name);
  c->m_max = po_Family_WithLabels(po_Metrics_Find(m, PO_M_MAX_CONCURRENT), c->name);
  po_Series_Set(c->m_max, c->n_workers);
  po_Series_Set(c->m_active, 0);
  c->queue = make_queue(c);
  if (!c->queue) {
    po_Controller_Free(c);
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "controller %s: out of memory", opts->name);
    return NULL;
  }
  return c;
}

static void handle_result(po_Controller *c, po_Workqueue *q, const char *key, const po_Result *r,
                          po_Logger *log) {
  switch (r->kind) {
    case kPo_Result_Success:
      po_Workqueue_Forget(q, key);
      po_Series_Inc(c->m_success);
      break;
    case kPo_Result_Error: {
      int64_t delay = po_Workqueue_AddRateLimitedUpTo(q, key, r->max_backoff_ns);
      po_Series_Inc(c->m_errors);
      po_Series_Inc(c->m_error);
      po_Log_Error(log, "reconcile failed, will retry", po_Str("error", r->error),
                   po_Int("retries", po_Workqueue_NumRequeues(q, key)),
                   po_Int("retry_in_ms", delay / PO_NS_PER_MS));
      break;
    }
    case kPo_Result_Requeue:
      po_Workqueue_AddRateLimited(q, key);
      po_Series_Inc(c->m_requeue);
      break;
    case kPo_Result_RequeueAfter:
      po_Workqueue_Forget(q, key);
      po_Workqueue_AddAfter(q, key, r->requeue_after_ns);
      po_Series_Inc(c->m_requeue_after);
      break;
    case kPo_Result_Terminal:
      po_Workqueue_Forget(q, key);
      po_Series_Inc(c->m_errors);
      po_Series_Inc(c->m_terminal);
      po_Series_Inc(c->m_error);
      po_Log_Error(log, "reconcile failed terminally, not retrying", po_Str("error", r->error));
      break;
  }
}

typedef struct {
  po_Controller *c;
  po_Workqueue *q;
} WorkerArg;

static void set_active(po_Controller *c, int delta) {
  pthread_mutex_lock(&c->mu);
  c->active += delta;
  po_Series_Set(c->m_active, c->active);
  pthread_mutex_unlock(&c->mu);
}

static void *worker_main(void *arg) {
  WorkerArg w = *(WorkerArg *)arg;
  free(arg);
  po_Controller *c = w.c;
  const char *key;
  while (po_Workqueue_Get(w.q, &key) == kPo_Workqueue_Item) {
    po_Logger *log = c->log ? po_Logger_With(c->log, po_Str("key", key)) : NULL;
    set_active(c, 1);
    int64_t start = po_RtClock_Now(c->clock);
    po_Result r = c->reconcile(c->ctx, key, log);
    po_Series_Observe(c->m_time, (double)(po_RtClock_Now(c->clock) - start) / 1e9);
    handle_result(c, w.q, key, &r, log);
    set_active(c, -1);
    po_Workqueue_Done(w.q, key);
    po_Logger_Free(log);
  }
  pthread_mutex_lock(&c->mu);
  c->finished++;
  pthread_cond_broadcast(&c->finished_cv);
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* A queue that takes keys: the one a Stop shut down is replaced. Under c->mu. */
static bool fresh_queue(po_Controller *c, po_CtlStatus *st) {
  if (!po_Workqueue_ShuttingDown(c->queue)) return true;
  po_Workqueue *fresh = make_queue(c);
  if (!fresh) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "controller %s: out of memory", c->name);
  po_Workqueue_Free(c->queue);
  c->queue = fresh;
  return true;
}

bool po_Controller_Prepare(po_Controller *c, po_CtlStatus *st) {
  pthread_mutex_lock(&c->mu);
  /* Running: its queue is live (a Stop shuts it before the workers go). Workers of a previous run
   * still busy: Start refuses, and keeps the queue they hold. */
  bool ok = c->running || c->n_threads || fresh_queue(c, st);
  pthread_mutex_unlock(&c->mu);
  return ok;
}

bool po_Controller_Start(po_Controller *c, po_CtlStatus *st) {
  pthread_mutex_lock(&c->mu);
  if (c->running) {
    pthread_mutex_unlock(&c->mu);
    return true;
  }
  if (c->n_threads) { /* a previous Stop gave up on stuck workers */
    pthread_mutex_unlock(&c->mu);
    return po_CtlStatus_Set(st, kPo_Ctl_Start,
                           "controller %s: workers of the previous run are still busy", c->name);
  }
  if (!fresh_queue(c, st)) {
    pthread_mutex_unlock(&c->mu);
    return false;
  }
  free(c->threads);
  c->threads = calloc((size_t)c->n_workers, sizeof *c->threads);
  c->finished = 0;
  /* A stack of a known size whatever RLIMIT_STACK the container gives: a reconcile walks
   * objects nested as deep as the API server stores them (10,000 levels, kPo_KubeMaxJsonDepth)
   * with json-c's recursive functions and the project's own walkers. Address space only: the
   * pages are touched as the stack grows. */
  pthread_attr_t attr;
  bool attr_ok = pthread_attr_init(&attr) == 0;
  if (attr_ok) pthread_attr_setstacksize(&attr, kPo_ControllerWorkerStackBytes);
  for (int i = 0; c->threads && i < c->n_workers; i++) {
    WorkerArg *w = malloc(sizeof *w);
    if (!w) break;
    *w = (WorkerArg){c, c->queue};
    if (pthread_create(&c->threads[i], attr_ok ? &attr : NULL, worker_main, w) != 0) {
      free(w);
      break;
    }
    c->n_threads++;
  }
  if (attr_ok) pthread_attr_destroy(&attr);
  c->running = true;
  bool ok = c->n_threads == c->n_workers;
  pthread_mutex_unlock(&c->mu);
  if (!ok) {
    po_Controller_Stop(c, PO_FOREVER);
    return po_CtlStatus_Set(st, kPo_Ctl_System, "controller %s: could not start %d workers",
                           c->name, c->n_workers);
  }
  po_Log_Info(c->log, "starting workers", po_Int("worker_count", c->n_workers));
  return true;
}

bool po_Controller_Stop(po_Controller *c, int64_t deadline) {
  pthread_mutex_lock(&c->mu);
  po_Workqueue *q = c->queue;
  c->running = false;
  pthread_mutex_unlock(&c->mu);
  /* The drain waits on the queue's condition variable, on the controller's clock. */
  bool drained = po_Workqueue_ShutDownWithDrain(q, deadline);
  pthread_mutex_lock(&c->mu);
  if (!drained) {
    /* Keep the threads: a later Stop (or Free) waits for them again. */
    pthread_mutex_unlock(&c->mu);
    po_Log_Warn(c->log, "workers still busy at the stop deadline");
    return false;
  }
  /* Drained: every worker only has to return from Get, which reports shutdown at once. */
  while (c->finished < c->n_threads) pthread_cond_wait(&c->finished_cv, &c->mu);
  int joined = c->n_threads;
  for (int i = 0; i < c->n_threads; i++) pthread_join(c->threads[i], NULL);
  c->n_threads = 0;
  pthread_mutex_unlock(&c->mu);
  if (joined) po_Log_Info(c->log, "workers stopped");
  return true;
}

void po_Controller_Free(po_Controller *c) {
  if (!c) return;
  if (c->queue) po_Controller_Stop(c, PO_FOREVER);
  po_Workqueue_Free(c->queue);
  free(c->threads);
  pthread_cond_destroy(&c->finished_cv);
  pthread_mutex_destroy(&c->mu);
  po_Logger_Free(c->log);
  free(c->name);
  free(c);
}

void po_Controller_Enqueue(po_Controller *c, const char *key) {
  pthread_mutex_lock(&c->mu);
  po_Workqueue_Add(c->queue, key);
  pthread_mutex_unlock(&c->mu);
}

void po_Controller_EnqueueAfter(po_Controller *c, const char *key, int64_t delay_ns) {
  pthread_mutex_lock(&c->mu);
  po_Workqueue_AddAfter(c->queue, key, delay_ns);
  pthread_mutex_unlock(&c->mu);
}

void po_Controller_EnqueueSpaced(po_Controller *c, const char *key, int64_t spacing_ns) {
  pthread_mutex_lock(&c->mu);
  po_Workqueue_AddSpaced(c->queue, key, spacing_ns);
  pthread_mutex_unlock(&c->mu);
}

po_Workqueue *po_Controller_Queue(po_Controller *c) { return c->queue; }
