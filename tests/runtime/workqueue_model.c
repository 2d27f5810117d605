/* Reference model of the workqueue (see workqueue_model.h). */
#include "workqueue_model.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/ratelimit.h"
#include "po/runtime/workqueue.h"

#define N_KEYS 6
#define MS INT64_C(1000000)

typedef struct {
  bool dirty, processing, waiting;
  int64_t ready_at;
  uint64_t seq;
  int failures;
} Key;

typedef struct {
  Key k[N_KEYS];
  int fifo[64]; /* each key at most once in the FIFO */
  int fifo_len;
  bool shut;
  uint64_t seq;
  int64_t now;
  po_TokenBucket bucket;
} Model;

static const char *const kNames[N_KEYS] = {"ns/a", "ns/b", "ns/c", "other/a", "x/y", "ns/long-name"};

static void fail(int step, const char *what) {
  fprintf(stderr, "workqueue model: step %d: %s\n", step, what);
  abort();
}

static void m_add(Model *m, int i) {
  if (m->shut || m->k[i].dirty) return;
  m->k[i].dirty = true;
  if (!m->k[i].processing) m->fifo[m->fifo_len++] = i;
}

static void m_promote(Model *m) {
  for (;;) {
    int best = -1;
    for (int i = 0; i < N_KEYS; i++) {
      Key *k = &m->k[i];
      if (!k->waiting || k->ready_at > m->now) continue;
      if (best < 0 || k->ready_at < m->k[best].ready_at ||
          (k->ready_at == m->k[best].ready_at && k->seq < m->k[best].seq))
        best = i;
    }
    if (best < 0) return;
    m->k[best].waiting = false;
    m_add(m, best);
  }
}

static void m_add_after(Model *m, int i, int64_t d) {
  if (m->shut) return;
  if (d <= 0) {
    m_add(m, i);
  } else if (m->k[i].waiting) {
    if (m->now + d < m->k[i].ready_at) m->k[i].ready_at = m->now + d;
  } else {
    m->k[i].waiting = true;
    m->k[i].ready_at = m->now + d;
    m->k[i].seq = m->seq++;
  }
}

static int m_len(const Model *m) {
  int n = 0;
  for (int i = 0; i < N_KEYS; i++) n += m->k[i].dirty;
  return n;
}

static int m_waiting(const Model *m) {
  int n = 0;
  for (int i = 0; i < N_KEYS; i++) n += m->k[i].waiting;
  return n;
}

static int index_of(const char *key) {
  for (int i = 0; i < N_KEYS; i++)
    if (strcmp(kNames[i], key) == 0) return i;
  return -1;
}

int po_WorkqueueModel_Run(const uint8_t *data, size_t size) {
  po_RtClock *clock = po_FakeClock_New(0);
  po_Workqueue *q = po_Workqueue_New(&(po_WorkqueueOptions){.clock = clock});
  Model m;
  memset(&m, 0, sizeof m);
  po_TokenBucket_Init(&m.bucket, PO_BUCKET_QPS, PO_BUCKET_BURST);
  for (size_t p = 0; p + 1 < size; p += 2) {
    int step = (int)(p / 2);
    int op = data[p] % 9, i = (data[p] >> 4) % N_KEYS, arg = data[p + 1];
    const char *key = kNames[i];
    switch (op) {
      case 0:
      case 1:
        po_Workqueue_Add(q, key);
        m_promote(&m);
        m_add(&m, i);
        break;
      case 2:
        po_Workqueue_AddAfter(q, key, (int64_t)(arg - 16) * MS);
        m_promote(&m);
        m_add_after(&m, i, (int64_t)(arg - 16) * MS);
        break;
      case 3: {
        int64_t got = po_Workqueue_AddRateLimited(q, key);
        m_promote(&m);
        int64_t want = 0;
        if (!m.shut) {
          int64_t backoff = po_Backoff_Delay(PO_BACKOFF_BASE_NS, PO_BACKOFF_MAX_NS, m.k[i].failures);
          int64_t bucket = po_TokenBucket_Reserve(&m.bucket, m.now);
          want = backoff > bucket ? backoff : bucket;
          m.k[i].failures++;
          m_add_after(&m, i, want);
        }
        if (got != want) fail(step, "AddRateLimited delay");
        break;
      }
      case 4:
        po_Workqueue_Forget(q, key);
        m.k[i].failures = 0;
        break;
      case 5: {
        const char *k;
        bool got = po_Workqueue_TryGet(q, &k);
        if (!m.shut) m_promote(&m);
        bool want = !m.shut && m.fifo_len > 0;
        if (got != want) fail(step, "TryGet found a key or not");
        if (got) {
          int j = m.fifo[0];
          memmove(m.fifo, m.fifo + 1, (size_t)--m.fifo_len * sizeof m.fifo[0]);
          if (index_of(k) != j) fail(step, "TryGet returned another key than the FIFO's head");
          if (m.k[j].processing) fail(step, "a key handed out twice");
          m.k[j].dirty = false;
          m.k[j].processing = true;
        }
        break;
      }
      case 6: {
        /* Done of the first processing key at or after i. */
        for (int d = 0; d < N_KEYS; d++) {
          int j = (i + d) % N_KEYS;
          if (!m.k[j].processing) continue;
          po_Workqueue_Done(q, kNames[j]);
          m.k[j].processing = false;
          if (m.k[j].dirty) {
            if (m.shut)
              m.k[j].dirty = false;
            else
              m.fifo[m.fifo_len++] = j;
          }
          m_promote(&m);
          break;
        }
        break;
      }
      case 7:
        po_FakeClock_Advance(clock, (int64_t)arg * MS);
        m.now += (int64_t)arg * MS;
        break;
      case 8:
        if (arg != 0xff) break; /* rare: a shutdown ends most of the interesting behaviour */
        po_Workqueue_ShutDown(q);
        m.shut = true;
        for (int f = 0; f < m.fifo_len; f++) m.k[m.fifo[f]].dirty = false;
        m.fifo_len = 0;
        for (int j = 0; j < N_KEYS; j++) m.k[j].waiting = false;
        break;
    }
    if ((int)po_Workqueue_Len(q) != (m_promote(&m), m_len(&m))) fail(step, "Len");
    if ((int)po_Workqueue_WaitingLen(q) != m_waiting(&m)) fail(step, "WaitingLen");
    if (po_Workqueue_NumRequeues(q, key) != m.k[i].failures) fail(step, "NumRequeues");
  }
  /* Finish whatever is in flight so Free sees a quiet queue. */
  for (int j = 0; j < N_KEYS; j++)
    if (m.k[j].processing) po_Workqueue_Done(q, kNames[j]);
  po_Workqueue_Free(q);
  po_FakeClock_Free(clock);
  return 0;
}
