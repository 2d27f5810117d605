/* The workqueue: a hash of per-key entries, a FIFO of ready keys, and a min-heap of timed
 * requeues, all under one mutex with one condition variable. */
#include "po/runtime/workqueue.h"

#include <stdlib.h>
#include <string.h>

#include "po/runtime/ratelimit.h"

#define NOT_WAITING SIZE_MAX

typedef struct Entry {
  char *key;
  uint32_t hash;
  struct Entry *next; /* hash chain */
  bool dirty;         /* wants a run: in the FIFO, or queued again after its run in flight */
  bool in_fifo;
  bool processing;
  int failures;       /* the rate limiter's count since the last Forget */
  size_t heap_index;  /* NOT_WAITING when no timed requeue is pending */
  int64_t ready_at;   /* timed requeue: when it becomes ready */
  uint64_t seq;       /* timed requeue: ties between equal ready_at keep AddAfter order */
  int64_t added_at;   /* when it became dirty (queue_duration) */
  int64_t started_at; /* when a worker took it (work_duration, unfinished work) */
  int64_t spacing;    /* AddSpaced: the least time between two runs (0: none asked) */
  int64_t spaced_to;  /* AddSpaced: no run before this (its last run's start + spacing); the
                       * entry is kept until then even when nothing else refers to it */
  bool held;          /* AddSpaced during a burst: in the heap until the burst pauses, its
                       * ready_at the latest it waits (burst_max after it was held) */
  bool skips;         /* a pause released it before its spacing ended: its next run skips it */
  bool skipped;       /* its last run (the one spaced_to counts from) was such a run */
} Entry;

struct po_Workqueue {
  pthread_mutex_t mu;
  pthread_cond_t cond; /* a key became ready, the heap's head changed, shutdown, or drain */
  po_RtClock *clock;
  bool shutting_down;

  Entry **buckets;
  size_t n_buckets, n_entries;

  Entry **fifo; /* ring buffer */
  size_t fifo_head, fifo_len, fifo_cap;

  Entry **heap;
  size_t heap_len, heap_cap;
  uint64_t next_seq;

  size_t n_dirty, n_processing;

  /* Bursts (po_WorkqueueOptions.burst_*): AddSpaced calls less than burst_quiet apart. */
  int64_t burst_quiet, burst_max;
  int64_t last_spaced;  /* the last AddSpaced call, when spaced_seen */
  bool spaced_seen;
  size_t n_held;        /* entries held for the burst's pause */

  int64_t base_delay, max_delay;
  po_TokenBucket bucket;
  po_TokenBucket capped_bucket; /* capped retries' own (ratelimit.h) */

  po_Metrics *metrics;
  po_Series *m_depth, *m_adds, *m_queue_duration, *m_work_duration, *m_unfinished, *m_longest,
      *m_retries;
};

static uint32_t hash_key(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static Entry *find(po_Workqueue *q, const char *key, uint32_t h) {
  for (Entry *e = q->buckets[h & (q->n_buckets - 1)]; e; e = e->next)
    if (e->hash == h && strcmp(e->key, key) == 0) return e;
  return NULL;
}

static bool grow_buckets(po_Workqueue *q) {
  size_t n = q->n_buckets * 2;
  Entry **b = calloc(n, sizeof *b);
  if (!b) return false;
  for (size_t i = 0; i < q->n_buckets; i++) {
    for (Entry *e = q->buckets[i], *next; e; e = next) {
      next = e->next;
      e->next = b[e->hash & (n - 1)];
      b[e->hash & (n - 1)] = e;
    }
  }
  free(q->buckets);
  q->buckets = b;
  q->n_buckets = n;
  return true;
}

/* NULL only when out of memory: the key is then dropped, like any add after shutdown. */
static void maybe_free(po_Workqueue *q, Entry *e);

/* Entries kept only for their spacing, once it is over, go before the table grows: they are
 * bounded by the keys run within the last spacing. */
static void sweep_spaced(po_Workqueue *q) {
  int64_t now = po_RtClock_Now(q->clock);
  for (size_t i = 0; i < q->n_buckets; i++) {
    for (Entry *e = q->buckets[i], *next; e; e = next) {
      next = e->next;
      if (e->spaced_to && e->spaced_to <= now) {
        e->spaced_to = 0;
        maybe_free(q, e);
      }
    }
  }
}

static Entry *get_or_create(po_Workqueue *q, const char *key) {
  uint32_t h = hash_key(key);
  Entry *e = find(q, key, h);
  if (e) return e;
  if (q->n_entries >= q->n_buckets) sweep_spaced(q);
  if (q->n_entries >= q->n_buckets && !grow_buckets(q)) return NULL;
  e = calloc(1, sizeof *e);
  if (!e || !(e->key = strdup(key))) {
    free(e);
    return NULL;
  }
  e->hash = h;
  e->heap_index = NOT_WAITING;
  e->next = q->buckets[h & (q->n_buckets - 1)];
  q->buckets[h & (q->n_buckets - 1)] = e;
  q->n_entries++;
  return e;
}

/* An entry lives only while something refers to it, or its spacing lasts. */
static void maybe_free(po_Workqueue *q, Entry *e) {
  if (e->dirty || e->in_fifo || e->processing || e->failures || e->heap_index != NOT_WAITING)
    return;
  if (e->spaced_to && e->spaced_to > po_RtClock_Now(q->clock)) return;
  Entry **p = &q->buckets[e->hash & (q->n_buckets - 1)];
  while (*p != e) p = &(*p)->next;
  *p = e->next;
  q->n_entries--;
  free(e->key);
  free(e);
}

static bool fifo_push(po_Workqueue *q, Entry *e) {
  if (q->fifo_len == q->fifo_cap) {
    size_t cap = q->fifo_cap ? q->fifo_cap * 2 : 64;
    Entry **f = malloc(cap * sizeof *f);
    if (!f) return false;
    for (size_t i = 0; i < q->fifo_len; i++) f[i] = q->fifo[(q->fifo_head + i) % q->fifo_cap];
    free(q->fifo);
    q->fifo = f;
    q->fifo_cap = cap;
    q->fifo_head = 0;
  }
  q->fifo[(q->fifo_head + q->fifo_len++) % q->fifo_cap] = e;
  e->in_fifo = true;
  return true;
}

static Entry *fifo_pop(po_Workqueue *q) {
  Entry *e = q->fifo[q->fifo_head];
  q->fifo_head = (q->fifo_head + 1) % q->fifo_cap;
  q->fifo_len--;
  e->in_fifo = false;
  return e;
}

static bool heap_less(const Entry *a, const Entry *b) {
  return a->ready_at < b->ready_at || (a->ready_at == b->ready_at && a->seq < b->seq);
}

static void heap_set(po_Workqueue *q, size_t i, Entry *e) {
  q->heap[i] = e;
  e->heap_index = i;
}

static void heap_up(po_Workqueue *q, size_t i) {
  Entry *e = q->heap[i];
  while (i > 0 && heap_less(e, q->heap[(i - 1) / 2])) {
    heap_set(q, i, q->heap[(i - 1) / 2]);
    i = (i - 1) / 2;
  }
  heap_set(q, i, e);
}

static void heap_down(po_Workqueue *q, size_t i) {
  Entry *e = q->heap[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= q->heap_len) break;
    if (c + 1 < q->heap_len && heap_less(q->heap[c + 1], q->heap[c])) c++;
    if (!heap_less(q->heap[c], e)) break;
    heap_set(q, i, q->heap[c]);
    i = c;
  }
  heap_set(q, i, e);
}

/* Into the heap at ready_at; false when out of memory (nothing changed). */
static bool heap_insert(po_Workqueue *q, Entry *e, int64_t ready_at) {
  if (q->heap_len == q->heap_cap) {
    size_t cap = q->heap_cap ? q->heap_cap * 2 : 64;
    Entry **h = realloc(q->heap, cap * sizeof *h);
    if (!h) return false;
    q->heap = h;
    q->heap_cap = cap;
  }
  e->ready_at = ready_at;
  e->seq = q->next_seq++;
  heap_set(q, q->heap_len++, e);
  heap_up(q, q->heap_len - 1);
  return true;
}

static void heap_remove(po_Workqueue *q, Entry *e) {
  size_t i = e->heap_index;
  q->heap_len--;
  if (i < q->heap_len) {
    Entry *m = q->heap[q->heap_len];
    heap_set(q, i, m);
    heap_down(q, i);
    if (m->heap_index == i) heap_up(q, i);
  }
  e->heap_index = NOT_WAITING;
}

static Entry *heap_pop(po_Workqueue *q) {
  Entry *top = q->heap[0];
  q->heap_len--;
  if (q->heap_len) {
    heap_set(q, 0, q->heap[q->heap_len]);
    heap_down(q, 0);
  }
  top->heap_index = NOT_WAITING;
  return top;
}

static void set_depth(po_Workqueue *q) { po_Series_Set(q->m_depth, (double)q->n_dirty); }

static void add_locked(po_Workqueue *q, Entry *e, int64_t now) {
  if (q->shutting_down || e->dirty) return;
  e->dirty = true;
  e->added_at = now;
  q->n_dirty++;
  po_Series_Inc(q->m_adds);
  set_depth(q);
  if (e->processing) return; /* Done will queue it again */
  if (!fifo_push(q, e)) {
    e->dirty = false;
    q->n_dirty--;
    set_depth(q);
    return;
  }
  pthread_cond_signal(&q->cond);
}

static void unhold(po_Workqueue *q, Entry *e) {
  if (!e->held) return;
  e->held = false;
  q->n_held--;
}

/* When the burst has paused (no AddSpaced for burst_quiet): every held key is due now, its
 * spacing or not (once per spacing: below). The spacing gathers a burst's adds into one run;
 * once the burst is over there is nothing more to gather, and waiting for it put up to a
 * spacing (2 s) between a burst's last create and its last write. Only earlier times: one
 * heapify restores the order. */
static void release_held(po_Workqueue *q, int64_t now) {
  if (!q->n_held || now - q->last_spaced < q->burst_quiet) return;
  for (size_t i = 0; i < q->heap_len; i++) {
    Entry *e = q->heap[i];
    if (!e->held) continue;
    unhold(q, e);
    /* At most one skip per spacing: else bursts of two events and a pause, over and over, ran
     * a key once per pause (every 0.26 s, 64 runs in 20 s where a 2 s spacing allows 11). A key
     * whose last run skipped waits for its spacing (at most one spacing after that run), or
     * less when a retry asked for less (ready_at only ever moves earlier here). */
    if (e->spaced_to > now && e->skipped) {
      if (e->spaced_to < e->ready_at) e->ready_at = e->spaced_to;
    } else {
      e->skips = e->spaced_to > now;
      e->ready_at = now;
    }
  }
  for (size_t i = q->heap_len / 2; i-- > 0;) heap_down(q, i);
}

/* When the next promote has something to do: the heap's head, or the burst's pause. */
static int64_t next_due(const po_Workqueue *q) {
  int64_t at = q->heap_len ? q->heap[0]->ready_at : PO_FOREVER;
  if (q->n_held && q->last_spaced + q->burst_quiet < at) at = q->last_spaced + q->burst_quiet;
  return at;
}

/* Moves every timed requeue whose time has come into the FIFO. */
static void promote(po_Workqueue *q, int64_t now) {
  release_held(q, now);
  while (q->heap_len && q->heap[0]->ready_at <= now) {
    Entry *e = heap_pop(q);
    unhold(q, e);
    add_locked(q, e, now);
    maybe_free(q, e);
  }
}

static void collect(void *ctx) {
  po_Workqueue *q = ctx;
  pthread_mutex_lock(&q->mu);
  int64_t now = po_RtClock_Now(q->clock);
  double unfinished = 0, longest = 0;
  if (q->n_processing) {
    for (size_t i = 0; i < q->n_buckets; i++) {
      for (Entry *e = q->buckets[i]; e; e = e->next) {
        if (!e->processing) continue;
        double s = (double)(now - e->started_at) / 1e9;
        unfinished += s;
        if (s > longest) longest = s;
      }
    }
  }
  po_Series_Set(q->m_unfinished, unfinished);
  po_Series_Set(q->m_longest, longest);
  pthread_mutex_unlock(&q->mu);
}

static po_Series *series(po_Metrics *m, const char *family, const char *name) {
  return po_Family_WithLabels(po_Metrics_Find(m, family), name);
}

po_Workqueue *po_Workqueue_New(const po_WorkqueueOptions *opts) {
  po_WorkqueueOptions o = opts ? *opts : (po_WorkqueueOptions){0};
  po_Workqueue *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  q->n_buckets = 64;
  q->buckets = calloc(q->n_buckets, sizeof *q->buckets);
  if (!q->buckets || po_RtClock_InitCond(&q->cond) != 0) {
    free(q->buckets);
    free(q);
    return NULL;
  }
  pthread_mutex_init(&q->mu, NULL);
  q->clock = o.clock ? o.clock : po_RtClock_Real();
  q->base_delay = o.base_delay_ns > 0 ? o.base_delay_ns : PO_BACKOFF_BASE_NS;
  q->max_delay = o.max_delay_ns > 0 ? o.max_delay_ns : PO_BACKOFF_MAX_NS;
  po_TokenBucket_Init(&q->bucket, o.qps > 0 ? o.qps : PO_BUCKET_QPS,
                      o.burst > 0 ? o.burst : PO_BUCKET_BURST);
  po_TokenBucket_Init(&q->capped_bucket, PO_CAPPED_BUCKET_QPS, PO_CAPPED_BUCKET_BURST);
  if (o.burst_quiet_ns > 0 && o.burst_max_ns > 0) q->burst_quiet = o.burst_quiet_ns, q->burst_max = o.burst_max_ns;
  if (o.metrics) {
    const char *name = o.name ? o.name : "";
    q->metrics = o.metrics;
    q->m_depth = series(o.metrics, PO_M_WQ_DEPTH, name);
    q->m_adds = series(o.metrics, PO_M_WQ_ADDS, name);
    q->m_queue_duration = series(o.metrics, PO_M_WQ_QUEUE_DURATION, name);
    q->m_work_duration = series(o.metrics, PO_M_WQ_WORK_DURATION, name);
    q->m_unfinished = series(o.metrics, PO_M_WQ_UNFINISHED, name);
    q->m_longest = series(o.metrics, PO_M_WQ_LONGEST, name);
    q->m_retries = series(o.metrics, PO_M_WQ_RETRIES, name);
    set_depth(q);
    if (!po_Metrics_AddCollector(o.metrics, collect, q)) q->metrics = NULL;
  }
  po_RtClock_Watch(q->clock, &q->cond, &q->mu);
  return q;
}

void po_Workqueue_Free(po_Workqueue *q) {
  if (!q) return;
  if (q->metrics) po_Metrics_RemoveCollector(q->metrics, collect, q);
  po_RtClock_Unwatch(q->clock, &q->cond);
  for (size_t i = 0; i < q->n_buckets; i++) {
    for (Entry *e = q->buckets[i], *next; e; e = next) {
      next = e->next;
      free(e->key);
      free(e);
    }
  }
  free(q->buckets);
  free(q->fifo);
  free(q->heap);
  pthread_cond_destroy(&q->cond);
  pthread_mutex_destroy(&q->mu);
  free(q);
}

static void add_timed_locked(po_Workqueue *q, Entry *e, int64_t delay_ns, int64_t now);

/* Queued at once; a held key leaves the heap (its hold's run would be a second one). */
static void add_now(po_Workqueue *q, Entry *e, int64_t now) {
  if (e->held) {
    heap_remove(q, e);
    unhold(q, e);
  }
  add_locked(q, e, now);
}

/* AddSpaced within a burst: held until the burst pauses, at most burst_max (or until the key's
 * spacing ends, if later). A key already due (queued, or waiting for its spacing or a retry)
 * keeps that time; true when the key is now held or already was. */
static bool hold(po_Workqueue *q, Entry *e, int64_t now) {
  if (e->held) return true;
  if (e->dirty || e->heap_index != NOT_WAITING) return false;
  int64_t at = now + q->burst_max;
  if (e->spaced_to > at) at = e->spaced_to;
  if (!heap_insert(q, e, at)) return false;
  e->held = true;
  q->n_held++;
  pthread_cond_broadcast(&q->cond); /* a worker asleep until a later deadline recomputes it */
  return true;
}

/* Add (spacing < 0: the key's spacing as it is, no wait) or AddSpaced. */
static void add_with(po_Workqueue *q, const char *key, int64_t spacing) {
  pthread_mutex_lock(&q->mu);
  int64_t now = po_RtClock_Now(q->clock);
  promote(q, now);
  bool burst = false;
  if (spacing >= 0 && q->burst_quiet > 0) {
    burst = q->spaced_seen && now - q->last_spaced < q->burst_quiet;
    q->last_spaced = now;
    q->spaced_seen = true;
  }
  if (!q->shutting_down) {
    Entry *e = get_or_create(q, key);
    if (e) {
      if (spacing >= 0) e->spacing = spacing;
      int64_t wait = spacing >= 0 && e->spaced_to > now ? e->spaced_to - now : 0;
      if (burst && hold(q, e, now)) {
        maybe_free(q, e);
      } else if (wait > 0) {
        add_timed_locked(q, e, wait, now); /* waiting for its spacing is no retry */
      } else {
        add_now(q, e, now);
        maybe_free(q, e);
      }
    }
  }
  pthread_mutex_unlock(&q->mu);
}

void po_Workqueue_Add(po_Workqueue *q, const char *key) { add_with(q, key, -1); }

/* Queues e once delay_ns has passed (<= 0: at once); an earlier due time wins. */
static void add_timed_locked(po_Workqueue *q, Entry *e, int64_t delay_ns, int64_t now) {
  if (delay_ns <= 0) {
    add_now(q, e, now);
  } else if (e->heap_index != NOT_WAITING) {
    if (now + delay_ns < e->ready_at) { /* the earlier requeue wins */
      e->ready_at = now + delay_ns;
      heap_up(q, e->heap_index);
      pthread_cond_broadcast(&q->cond);
    }
  } else if (heap_insert(q, e, now + delay_ns)) {
    /* A worker asleep until a later deadline must recompute it. */
    pthread_cond_broadcast(&q->cond);
  }
  maybe_free(q, e);
}

/* AddAfter and AddRateLimited: client-go counts each as a retry. An AddSpaced waiting for its
 * spacing is none (add_with): an event is not a failure, and a burst of them on one target
 * counted one "retry" per event, with nothing failing. */
static void add_after_locked(po_Workqueue *q, const char *key, int64_t delay_ns, int64_t now) {
  po_Series_Inc(q->m_retries);
  Entry *e = get_or_create(q, key);
  if (e) add_timed_locked(q, e, delay_ns, now);
}

void po_Workqueue_AddAfter(po_Workqueue *q, const char *key, int64_t delay_ns) {
  pthread_mutex_lock(&q->mu);
  int64_t now = po_RtClock_Now(q->clock);
  promote(q, now);
  if (!q->shutting_down) add_after_locked(q, key, delay_ns, now);
  pthread_mutex_unlock(&q->mu);
}

void po_Workqueue_AddSpaced(po_Workqueue *q, const char *key, int64_t spacing_ns) {
  add_with(q, key, spacing_ns > 0 ? spacing_ns : -1);
}

int64_t po_Workqueue_AddRateLimited(po_Workqueue *q, const char *key) { return po_Workqueue_AddRateLimitedUpTo(q, key, 0); }

int64_t po_Workqueue_AddRateLimitedUpTo(po_Workqueue *q, const char *key, int64_t max_delay_ns) {
  pthread_mutex_lock(&q->mu);
  int64_t now = po_RtClock_Now(q->clock), delay = 0;
  int64_t cap = max_delay_ns > 0 && max_delay_ns < q->max_delay ? max_delay_ns : q->max_delay;
  promote(q, now);
  if (!q->shutting_down) {
    Entry *e = get_or_create(q, key);
    if (e) {
      int64_t backoff = po_Backoff_Delay(q->base_delay, cap, e->failures);
      /* a capped retry's token from the capped retries' own bucket: keys stuck at one try per
       * cap cannot starve every other key's retry (ratelimit.h) */
      bool capped = max_delay_ns > 0 && max_delay_ns < q->max_delay;
      int64_t bucket = po_TokenBucket_Reserve(capped ? &q->capped_bucket : &q->bucket, now);
      delay = backoff > bucket ? backoff : bucket;
      if (e->failures < 1000000) e->failures++;
      add_after_locked(q, key, delay, now);
    }
  }
  pthread_mutex_unlock(&q->mu);
  return delay;
}

void po_Workqueue_Forget(po_Workqueue *q, const char *key) {
  pthread_mutex_lock(&q->mu);
  Entry *e = find(q, key, hash_key(key));
  if (e) {
    e->failures = 0;
    maybe_free(q, e);
  }
  pthread_mutex_unlock(&q->mu);
}

int po_Workqueue_NumRequeues(po_Workqueue *q, const char *key) {
  pthread_mutex_lock(&q->mu);
  Entry *e = find(q, key, hash_key(key));
  int n = e ? e->failures : 0;
  pthread_mutex_unlock(&q->mu);
  return n;
}

static const char *take_locked(po_Workqueue *q, int64_t now) {
  Entry *e = fifo_pop(q);
  e->dirty = false;
  e->processing = true;
  e->started_at = now;
  e->spaced_to = e->spacing ? now + e->spacing : 0;
  e->skipped = e->skips;
  e->skips = false;
  q->n_dirty--;
  q->n_processing++;
  set_depth(q);
  po_Series_Observe(q->m_queue_duration, (double)(now - e->added_at) / 1e9);
  return e->key;
}

po_WorkqueueGet po_Workqueue_Get(po_Workqueue *q, const char **key) {
  pthread_mutex_lock(&q->mu);
  for (;;) {
    if (q->shutting_down) {
      pthread_mutex_unlock(&q->mu);
      *key = NULL;
      return kPo_Workqueue_ShuttingDown;
    }
    int64_t now = po_RtClock_Now(q->clock);
    promote(q, now);
    if (q->fifo_len) {
      *key = take_locked(q, now);
      pthread_mutex_unlock(&q->mu);
      return kPo_Workqueue_Item;
    }
    po_RtClock_WaitUntil(q->clock, &q->cond, &q->mu, next_due(q));
  }
}

bool po_Workqueue_TryGet(po_Workqueue *q, const char **key) {
  pthread_mutex_lock(&q->mu);
  int64_t now = po_RtClock_Now(q->clock);
  bool got = false;
  *key = NULL;
  if (!q->shutting_down) {
    promote(q, now);
    if (q->fifo_len) {
      *key = take_locked(q, now);
      got = true;
    }
  }
  pthread_mutex_unlock(&q->mu);
  return got;
}

void po_Workqueue_Done(po_Workqueue *q, const char *key) {
  pthread_mutex_lock(&q->mu);
  int64_t now = po_RtClock_Now(q->clock);
  Entry *e = find(q, key, hash_key(key));
  if (e && e->processing) {
    e->processing = false;
    q->n_processing--;
    po_Series_Observe(q->m_work_duration, (double)(now - e->started_at) / 1e9);
    if (e->dirty) {
      if (q->shutting_down || !fifo_push(q, e)) {
        e->dirty = false;
        q->n_dirty--;
        set_depth(q);
      } else {
        pthread_cond_signal(&q->cond);
      }
    }
    if (q->shutting_down && q->n_processing == 0) pthread_cond_broadcast(&q->cond);
    maybe_free(q, e);
  }
  promote(q, now);
  pthread_mutex_unlock(&q->mu);
}

size_t po_Workqueue_Len(po_Workqueue *q) {
  pthread_mutex_lock(&q->mu);
  promote(q, po_RtClock_Now(q->clock));
  size_t n = q->n_dirty;
  pthread_mutex_unlock(&q->mu);
  return n;
}

size_t po_Workqueue_WaitingLen(po_Workqueue *q) {
  pthread_mutex_lock(&q->mu);
  promote(q, po_RtClock_Now(q->clock));
  size_t n = q->heap_len;
  pthread_mutex_unlock(&q->mu);
  return n;
}

bool po_Workqueue_ShuttingDown(po_Workqueue *q) {
  pthread_mutex_lock(&q->mu);
  bool s = q->shutting_down;
  pthread_mutex_unlock(&q->mu);
  return s;
}

void po_Workqueue_ShutDown(po_Workqueue *q) {
  pthread_mutex_lock(&q->mu);
  if (!q->shutting_down) {
    q->shutting_down = true;
    /* Drop what has not started: timed requeues and ready keys. Keys in flight finish. */
    while (q->heap_len) {
      Entry *e = heap_pop(q);
      unhold(q, e);
      maybe_free(q, e);
    }
    while (q->fifo_len) {
      Entry *e = fifo_pop(q);
      e->dirty = false;
      q->n_dirty--;
      maybe_free(q, e);
    }
    set_depth(q);
    pthread_cond_broadcast(&q->cond);
  }
  pthread_mutex_unlock(&q->mu);
}

bool po_Workqueue_ShutDownWithDrain(po_Workqueue *q, int64_t deadline) {
  po_Workqueue_ShutDown(q);
  pthread_mutex_lock(&q->mu);
  while (q->n_processing > 0 && po_RtClock_Now(q->clock) < deadline)
    po_RtClock_WaitUntil(q->clock, &q->cond, &q->mu, deadline);
  bool drained = q->n_processing == 0;
  pthread_mutex_unlock(&q->mu);
  return drained;
}
