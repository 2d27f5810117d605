/* po_Holders (white-box: src/holders.h) against a model of what it must hold: a set of ids per
 * target. Seeded sequences of updates, exact and add-only, that name a target's ids mostly in
 * the order of its last update (as a target's writes do: po_Holders_Set skips the lookups of the
 * leading ids already linked at the same place), reordered, shortened, lengthened in the middle,
 * with duplicates and empty ids. After every update each id's targets (po_Holders_Of) are the
 * model's.
 *
 * PO_HOLDERS_SEED=N replays a run (the seed is printed); PO_HOLDERS_CASES=N sets the number of
 * updates (default 20,000). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../seeded.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "holders.h"

enum { kTargets = 4, kIds = 12, kMaxList = 16 };

static uint64_t g_rng;
static unsigned pick(unsigned n) { return po_Seeded_Pick(&g_rng, n); }

static char g_ids[kIds][48], g_keys[kTargets][48];

/* The model: which ids each target holds, and the last list each target was given. */
typedef struct {
  bool holds[kTargets][kIds];
  int last[kTargets][kMaxList];
  size_t nlast[kTargets];
} Model;

/* A list for target t: its last one (most of the time), then changed as a target's next write
 * changes it. -1 is an empty id (skipped by po_Holders_Set). */
static size_t make_list(const Model *m, unsigned t, int *out) {
  size_t n = m->nlast[t];
  memcpy(out, m->last[t], n * sizeof *out);
  switch (pick(8)) {
    case 0: /* a new id in the middle */
      if (n < kMaxList) {
        size_t at = n ? pick((unsigned)n + 1) : 0;
        memmove(out + at + 1, out + at, (n - at) * sizeof *out);
        out[at] = (int)pick(kIds);
        n++;
      }
      break;
    case 1: /* one gone */
      if (n) {
        size_t at = pick((unsigned)n);
        memmove(out + at, out + at + 1, (n - at - 1) * sizeof *out);
        n--;
      }
      break;
    case 2: /* two swapped */
      if (n > 1) {
        size_t a = pick((unsigned)n), b = pick((unsigned)n);
        int x = out[a];
        out[a] = out[b];
        out[b] = x;
      }
      break;
    case 3: /* a duplicate or an empty id */
      if (n < kMaxList) {
        int id = pick(3) == 0 ? -1 : n ? out[pick((unsigned)n)] : (int)pick(kIds);
        out[n++] = id;
      }
      break;
    case 4: /* a fresh list */
      n = pick(kMaxList + 1);
      for (size_t i = 0; i < n; i++) out[i] = (int)pick(kIds);
      break;
    default: /* the same list again */
      break;
  }
  return n;
}

static void check(const po_Holders *h, const Model *m) {
  for (int i = 0; i < kIds; i++) {
    size_t count = 0, want = 0;
    char *of = po_Holders_Of(h, g_ids[i], NULL, &count);
    for (int t = 0; t < kTargets; t++) {
      if (!m->holds[t][i]) continue;
      want++;
      bool listed = false;
      const char *p = of;
      for (size_t k = 0; p && k < count && !listed; k++, p += strlen(p) + 1) listed = strcmp(p, g_keys[t]) == 0;
      if (!listed) print_message("target %s should hold %s\n", g_keys[t], g_ids[i]);
      assert_true(listed);
    }
    if (count != want) print_message("%s: held by %zu targets, the model says %zu\n", g_ids[i], count, want);
    assert_int_equal(count, want);
    free(of);
  }
}

static void test_holders_match_the_model(void **state) {
  (void)state;
  uint64_t seed = po_Seeded_Env("PO_HOLDERS_SEED", (uint64_t)time(NULL));
  size_t cases = (size_t)po_Seeded_Env("PO_HOLDERS_CASES", 20000);
  print_message("test_holders: PO_HOLDERS_SEED=%" PRIu64 " PO_HOLDERS_CASES=%zu\n", seed, cases);
  g_rng = seed;
  for (int i = 0; i < kIds; i++) snprintf(g_ids[i], sizeof g_ids[i], "uid-%02d/default/po-%02d", i, i);
  for (int t = 0; t < kTargets; t++) snprintf(g_keys[t], sizeof g_keys[t], "ServiceDefaults/default/svc-%d", t);
  po_Holders h = {0};
  Model m = {0};
  size_t prefixed = 0;
  for (size_t c = 0; c < cases; c++) {
    unsigned t = pick(kTargets);
    int list[kMaxList + 1];
    size_t n = make_list(&m, t, list);
    const char *uids[kMaxList + 1];
    for (size_t i = 0; i < n; i++) uids[i] = list[i] < 0 ? "" : g_ids[list[i]];
    bool exact = pick(3) != 0;
    prefixed += n > 0 && m.nlast[t] > 0 && list[0] == m.last[t][0];
    assert_true(po_Holders_Set(&h, g_keys[t], uids, n, exact));
    if (exact) memset(m.holds[t], 0, sizeof m.holds[t]);
    for (size_t i = 0; i < n; i++)
      if (list[i] >= 0) m.holds[t][list[i]] = true;
    /* the next list starts from what the target now holds, in an order like the one given */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      bool dup = list[i] < 0;
      for (size_t j = 0; j < k && !dup; j++) dup = m.last[t][j] == list[i];
      if (!dup) m.last[t][k++] = list[i];
    }
    for (int i = 0; i < kIds && k < kMaxList; i++) {
      bool in = false;
      for (size_t j = 0; j < k && !in; j++) in = m.last[t][j] == i;
      if (m.holds[t][i] && !in) m.last[t][k++] = i;
    }
    m.nlast[t] = k;
    check(&h, &m);
  }
  print_message("test_holders: %zu updates, %zu began as the last one did\n", cases, prefixed);
  assert_true(prefixed > cases / 4); /* the skipped lookups were exercised */
  po_Holders_Free(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_holders_match_the_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
