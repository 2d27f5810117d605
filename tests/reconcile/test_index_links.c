/* The target index's reverse links (PropertyOverride -> its target and its held target) against
 * a plain model, through a cold start's order (every PropertyOverride in name order, targets
 * round robin: issue 26) and then random Set, SetHeld and Remove with reads in between: every
 * Lookup and LinksOfKind must give what the model holds. Seeded: PO_SEED overrides the seed,
 * which is printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "po/reconcile/reconcile.h"

enum { kPos = 400, kTargets = 23, kOps = 40000 };

typedef struct {
  bool live;
  int target, held; /* held -1: none */
} Model;

static uint64_t g_rng;
static uint32_t next(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 11);
}

static void target_key(int t, char *buf, size_t size) {
  snprintf(buf, size, "%s/ns%d/t%02d", t % 3 == 0 ? "ProxyDefaults" : "ServiceDefaults", t % 2, t);
}

static void po_ns(int p, char *ns, char *name) {
  snprintf(ns, 32, "ns%d", p % 3);
  snprintf(name, 32, "po-%04d", p);
}

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

/* What a Lookup of target t must give: the names (qualified) pointing at it or held there,
 * sorted, each once. */
static size_t expect(const Model *m, int t, char (*out)[320]) {
  size_t n = 0;
  for (int p = 0; p < kPos; p++) {
    if (!m[p].live || (m[p].target != t && m[p].held != t)) continue;
    char ns[32], name[32];
    po_ns(p, ns, name);
    snprintf(out[n++], 320, "%s/%s", ns, name);
  }
  qsort(out, n, sizeof *out, cmp_str);
  return n;
}

static void check_target(po_TargetIndex *ix, const Model *m, int t) {
  static char want[kPos][320], got[kPos][320];
  char key[128];
  target_key(t, key, sizeof key);
  size_t n = expect(m, t, want), k = po_TargetIndex_LookupQualified(ix, key, got, kPos);
  if (k != n) fail_msg("target %s: %zu PropertyOverrides, expected %zu", key, k, n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(got[i], want[i]) != 0) fail_msg("target %s, #%zu: %s, expected %s", key, i, got[i], want[i]);
}

static void check_kind(po_TargetIndex *ix, const Model *m) {
  size_t n = 0, want = 0;
  char *block = po_TargetIndex_LinksOfKind(ix, kPo_TargetKind_ProxyDefaults, &n);
  assert_non_null(block);
  for (int p = 0; p < kPos; p++)
    if (m[p].live) want += (m[p].target % 3 == 0) + (m[p].held >= 0 && m[p].held % 3 == 0);
  assert_int_equal(n, want);
  const char *at = block, *prev = "";
  for (size_t i = 0; i < n; i++) { /* sorted by target key */
    assert_true(strncmp(at, "ProxyDefaults/", 14) == 0);
    assert_true(strcmp(prev, at) <= 0);
    prev = at;
    at += strlen(at) + 1;
    at += strlen(at) + 1;
  }
  free(block);
}

static void links_match_a_model(void **state) {
  (void)state;
  const char *env = getenv("PO_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
  print_message("seed %llu (PO_SEED)\n", (unsigned long long)seed);
  g_rng = seed * 0x9E3779B97F4A7C15ull + 1;
  static Model m[kPos];
  memset(m, 0, sizeof m);
  po_TargetIndex *ix = po_TargetIndex_New();
  assert_non_null(ix);
  char old[600];
  /* First a cold start's order: every PropertyOverride in name order, targets round robin, no
   * read until the end. */
  for (int p = 0; p < kPos; p++) {
    char ns[32], name[32], key[128];
    po_ns(p, ns, name);
    m[p] = (Model){true, p % kTargets, -1};
    target_key(m[p].target, key, sizeof key);
    assert_true(po_TargetIndex_Set(ix, ns, name, key, old, sizeof old));
  }
  for (int t = 0; t < kTargets; t++) check_target(ix, m, t);
  for (int op = 0; op < kOps; op++) {
    int p = (int)(next() % kPos), t = (int)(next() % kTargets), what = (int)(next() % 10);
    char ns[32], name[32], key[128];
    po_ns(p, ns, name);
    target_key(t, key, sizeof key);
    if (what < 5) {
      assert_true(po_TargetIndex_Set(ix, ns, name, key, old, sizeof old));
      m[p].target = t;
      if (!m[p].live) m[p].held = -1;
      m[p].live = true;
    } else if (what < 7) {
      bool none = next() % 3 == 0;
      assert_true(po_TargetIndex_SetHeld(ix, ns, name, none ? "" : key, old, sizeof old));
      if (m[p].live) m[p].held = none ? -1 : t;
    } else if (what < 8) {
      assert_true(po_TargetIndex_Remove(ix, ns, name, old, sizeof old));
      m[p].live = false;
    } else if (what < 9) {
      check_target(ix, m, t);
    } else if (next() % 20 == 0) {
      check_kind(ix, m);
    }
  }
  for (int t = 0; t < kTargets; t++) check_target(ix, m, t);
  check_kind(ix, m);
  po_TargetIndex_Free(ix);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(links_match_a_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
