/* Issue 26: the target index costs the same per update and per lookup at 10,000
 * PropertyOverrides as at 1,000. Its sorted arrays moved half of themselves on every insert and
 * removal (memmove of N/2 entries: a burst of N creates in no particular name order cost N*N/4
 * entry moves) and compared log N names per lookup; its hash tables (strtable.h) cost what the
 * PropertyOverride's own target holds. Counted, not timed: the bytes memmove moves and the
 * strcmp calls made while the index is updated and read, by replacing both in this binary (the
 * real ones do the work). Names are drawn at random (seed printed; PO_TEST_SEED overrides it). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "po/reconcile/reconcile.h"

/* ---- memmove and strcmp, counted ---- */

static int g_counting;
static uint64_t g_moved, g_compares;

void *memmove(void *d, const void *s, size_t n) {
  static void *(*real)(void *, const void *, size_t);
  if (!real) real = (void *(*)(void *, const void *, size_t))dlsym(RTLD_NEXT, "memmove");
  if (g_counting) g_moved += n;
  return real(d, s, n);
}

int strcmp(const char *a, const char *b) {
  if (g_counting) g_compares++;
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  while (*x && *x == *y) x++, y++;
  return (int)*x - (int)*y;
}

/* ---- an index of n PropertyOverrides, 50 to a target ---- */

static uint64_t g_seed;

static uint64_t next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void target_of(uint64_t *rng, size_t targets, char *key, size_t size) {
  snprintf(key, size, "ServiceDefaults/default/svc-%05zu", (size_t)(next(rng) % targets));
}

typedef struct {
  double moved, compares; /* per operation */
} Cost;

/* Fills an index with n PropertyOverrides (names and targets at random), then counts what 300
 * more cost: each one set, set again to another target, looked up, and removed. */
static Cost cost_at(size_t n) {
  po_TargetIndex *ix = po_TargetIndex_New();
  assert_non_null(ix);
  uint64_t rng = g_seed;
  size_t targets = n / 50;
  char name[64], key[128], old[600];
  for (size_t i = 0; i < n; i++) {
    snprintf(name, sizeof name, "po-%016llx", (unsigned long long)next(&rng));
    target_of(&rng, targets, key, sizeof key);
    assert_true(po_TargetIndex_Set(ix, "default", name, key, old, sizeof old));
  }
  enum { kOps = 300 };
  static char names[kOps][64];
  for (int i = 0; i < kOps; i++) snprintf(names[i], sizeof names[i], "new-%016llx", (unsigned long long)next(&rng));
  static char (*found)[320];
  found = malloc(4096 * sizeof *found);
  assert_non_null(found);
  g_moved = g_compares = 0;
  g_counting = 1;
  for (int i = 0; i < kOps; i++) {
    target_of(&rng, targets, key, sizeof key);
    assert_true(po_TargetIndex_Set(ix, "default", names[i], key, old, sizeof old));
    target_of(&rng, targets, key, sizeof key);
    assert_true(po_TargetIndex_Set(ix, "default", names[i], key, old, sizeof old));
    assert_true(po_TargetIndex_LookupQualified(ix, key, found, 4096) >= 1);
  }
  for (int i = 0; i < kOps; i++) assert_true(po_TargetIndex_Remove(ix, "default", names[i], old, sizeof old));
  g_counting = 0;
  free(found);
  assert_int_equal(po_TargetIndex_Count(ix), n);
  po_TargetIndex_Free(ix);
  return (Cost){(double)g_moved / (4 * kOps), (double)g_compares / (4 * kOps)};
}

static void test_index_cost_does_not_grow_with_its_size(void **state) {
  (void)state;
  Cost small = cost_at(1000), large = cost_at(10000);
  printf("per operation: %.0f bytes moved, %.1f name compares at 1,000; %.0f and %.1f at 10,000\n", small.moved,
         small.compares, large.moved, large.compares);
  /* The same targets' sizes (50 each) at both: only what grows with the index may differ. */
  assert_true(large.moved <= small.moved * 1.25 + 64);
  assert_true(large.compares <= small.compares * 1.15 + 1);
}

int main(void) {
  const char *s = getenv("PO_TEST_SEED");
  g_seed = s && *s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
  printf("seed %llu (PO_TEST_SEED overrides)\n", (unsigned long long)g_seed);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_index_cost_does_not_grow_with_its_size)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
