/* Issue 26 (adv-s15): the burst hold under seeded random sequences, single-threaded on a fake
 * clock, checked against what the header promises rather than a copy of the code:
 *   - a key is never handed out while a worker holds it;
 *   - no add is lost: every key added (Add, AddAfter, AddSpaced, AddRateLimited) starts a run
 *     after that add, once time passes and the workers take what is ready;
 *   - a key is ready by its add's deadline: Add at once, AddAfter(d) d later, AddSpaced a
 *     spacing later outside a burst and max(burst_max, spacing) later within one (a held key
 *     "at most burst_max, then not before its spacing ends"), unless a worker has it;
 *   - neither a hold nor a wait for the spacing is a retry: workqueue_retries_total counts
 *     AddAfter and AddRateLimited calls, nothing else.
 * Options vary by seed (burst_max below and above the spacing and the quiet time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "po/runtime/workqueue.h"

#define MS INT64_C(1000000)
#define N_KEYS 6

static const char *const kNames[N_KEYS] = {"ns/a", "ns/b", "ns/c", "other/a", "x/y", "ns/long-name"};

typedef struct {
  bool processing;
  bool owed;         /* an add since the key's last start */
  int64_t deadline;  /* the earliest time one of those adds must be ready (INT64_MAX: none) */
} Key;

static uint64_t next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static int index_of(const char *key) {
  for (int i = 0; i < N_KEYS; i++)
    if (strcmp(kNames[i], key) == 0) return i;
  return -1;
}

static void owe(Key *k, int64_t deadline) {
  k->owed = true;
  if (deadline < k->deadline) k->deadline = deadline;
}

static double retries(po_Metrics *m) {
  po_Series *s = po_Family_WithLabels(po_Metrics_Find(m, PO_M_WQ_RETRIES), "adv");
  return s ? po_Series_Value(s) : -1;
}

/* Takes every ready key; checks the keys past their deadline were among them; Done on all. */
static void drain(po_Workqueue *q, Key *k, int64_t *last_start, int64_t now, uint64_t seed, int step) {
  bool took[N_KEYS] = {0};
  const char *key;
  while (po_Workqueue_TryGet(q, &key)) {
    int i = index_of(key);
    if (i < 0 || k[i].processing || took[i]) {
      fail_msg("seed %llu step %d: %s handed out while a worker has it", (unsigned long long)seed, step, key);
    }
    took[i] = true;
    k[i].processing = true;
    k[i].owed = false;
    k[i].deadline = INT64_MAX;
    last_start[i] = now;
  }
  for (int i = 0; i < N_KEYS; i++) {
    if (!took[i] && !k[i].processing && k[i].owed && k[i].deadline <= now) {
      fail_msg("seed %llu step %d: %s not ready %.3f s after its deadline", (unsigned long long)seed, step,
               kNames[i], (double)(now - k[i].deadline) / 1e9);
    }
  }
  for (int i = 0; i < N_KEYS; i++) {
    if (!took[i]) continue;
    po_Workqueue_Done(q, kNames[i]);
    k[i].processing = false;
  }
}

static void run_one(uint64_t seed) {
  uint64_t s = seed;
  static const int64_t kQuiet[] = {250 * MS, 100 * MS, 1000 * MS};
  static const int64_t kMax[] = {3000 * MS, 500 * MS, 50 * MS, 6000 * MS};
  static const int64_t kSpacing[] = {2000 * MS, 500 * MS, 5000 * MS};
  int64_t quiet = kQuiet[next(&s) % 3], max = kMax[next(&s) % 4], spacing = kSpacing[next(&s) % 3];
  po_RtClock *clock = po_FakeClock_New(1000 * MS);
  po_Metrics *metrics = po_Metrics_New();
  po_Workqueue *q = po_Workqueue_New(&(po_WorkqueueOptions){
      .name = "adv", .clock = clock, .metrics = metrics, .burst_quiet_ns = quiet, .burst_max_ns = max});
  assert_non_null(q);
  Key k[N_KEYS];
  for (int i = 0; i < N_KEYS; i++) k[i] = (Key){.deadline = INT64_MAX};
  int64_t now = 1000 * MS, last_spaced = INT64_MIN / 2;
  int64_t last_start[N_KEYS], spacing_of[N_KEYS] = {0};
  for (int i = 0; i < N_KEYS; i++) last_start[i] = INT64_MIN / 2;
  int n_retries = 0;
  for (int step = 0; step < 400; step++) {
    if (retries(metrics) != n_retries) {
      fail_msg("seed %llu step %d: %.0f retries counted, %d AddAfter/AddRateLimited calls", (unsigned long long)seed,
               step, retries(metrics), n_retries);
    }
    uint64_t r = next(&s);
    int i = (int)((r >> 8) % N_KEYS), op = (int)(r % 100);
    const char *key = kNames[i];
    if (op < 35) { /* AddSpaced: the informer's events */
      int64_t sp = (r >> 16) % 8 ? spacing : 0; /* sometimes 0: that is Add */
      bool burst = now - last_spaced < quiet;
      int64_t spaced_to = last_start[i] + (sp > 0 ? sp : 0);
      po_Workqueue_AddSpaced(q, key, sp);
      if (sp > 0) {
        last_spaced = now;
        spacing_of[i] = sp;
      }
      int64_t wait = sp > 0 && spaced_to > now ? spaced_to - now : 0;
      if (sp > 0 && burst) wait = max > wait ? max : wait;
      owe(&k[i], now + wait);
    } else if (op < 45) {
      po_Workqueue_Add(q, key);
      owe(&k[i], now);
    } else if (op < 52) {
      int64_t d = (int64_t)((r >> 16) % 4000) * MS - 200 * MS;
      po_Workqueue_AddAfter(q, key, d);
      n_retries++;
      owe(&k[i], now + (d > 0 ? d : 0));
    } else if (op < 55) { /* a failure */
      int64_t d = po_Workqueue_AddRateLimited(q, key);
      n_retries++;
      owe(&k[i], now + d);
    } else if (op < 58) {
      po_Workqueue_Forget(q, key);
    } else if (op < 70) { /* one worker takes one key */
      const char *got;
      if (po_Workqueue_TryGet(q, &got)) {
        int j = index_of(got);
        assert_true(j >= 0);
        if (k[j].processing) fail_msg("seed %llu step %d: %s handed out twice", (unsigned long long)seed, step, got);
        k[j].processing = true;
        k[j].owed = false;
        k[j].deadline = INT64_MAX;
        last_start[j] = now;
      }
    } else if (op < 80) { /* Done of a processing key */
      for (int d = 0; d < N_KEYS; d++) {
        int j = (i + d) % N_KEYS;
        if (!k[j].processing) continue;
        po_Workqueue_Done(q, kNames[j]);
        k[j].processing = false;
        break;
      }
    } else if (op < 97) {
      int64_t d = (int64_t)((r >> 16) % 400) * MS;
      if ((r >> 32) % 8 == 0) d *= 10;
      po_FakeClock_Advance(clock, d);
      now += d;
    } else {
      /* the workers catch up: everything past its deadline must be there */
      for (int j = 0; j < N_KEYS; j++)
        if (k[j].processing) {
          po_Workqueue_Done(q, kNames[j]);
          k[j].processing = false;
        }
      bool took[N_KEYS] = {0};
      const char *got;
      while (po_Workqueue_TryGet(q, &got)) took[index_of(got)] = true;
      for (int j = 0; j < N_KEYS; j++) {
        if (!took[j] && k[j].owed && k[j].deadline <= now) {
          fail_msg("seed %llu step %d: %s (spacing %lld ms, quiet %lld ms, max %lld ms) not ready %.3f s after its deadline",
                   (unsigned long long)seed, step, kNames[j], (long long)(spacing_of[j] / MS), (long long)(quiet / MS),
                   (long long)(max / MS), (double)(now - k[j].deadline) / 1e9);
        }
        if (took[j]) {
          k[j].owed = false;
          k[j].deadline = INT64_MAX;
          last_start[j] = now;
          po_Workqueue_Done(q, kNames[j]);
        }
      }
    }
  }
  /* Liveness: the workers finish, time passes, they take everything; no add is left without
   * its run. */
  for (int j = 0; j < N_KEYS; j++)
    if (k[j].processing) {
      po_Workqueue_Done(q, kNames[j]);
      k[j].processing = false;
    }
  for (int round = 0; round < 40; round++) {
    drain(q, k, last_start, now, seed, 10000 + round);
    po_FakeClock_Advance(clock, 100 * 1000 * MS);
    now += 100 * 1000 * MS;
  }
  drain(q, k, last_start, now, seed, 20000);
  for (int i = 0; i < N_KEYS; i++)
    if (k[i].owed) fail_msg("seed %llu: %s added and never run", (unsigned long long)seed, kNames[i]);
  po_Workqueue_Free(q);
  po_Metrics_Free(metrics);
  po_FakeClock_Free(clock);
}

static void random_burst_sequences_keep_the_promises(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 3000; seed++) run_one(seed);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(random_burst_sequences_keep_the_promises)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
