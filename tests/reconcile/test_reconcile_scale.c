/* Issue 26: a reconcile's work follows its target's PropertyOverrides, not their square. Each
 * PropertyOverride's entries were looked for among all the target's live entries in turn, and
 * each live entry's owner among all its PropertyOverrides (load, plan, write and status): at k
 * PropertyOverrides, k*k name compares per reconcile, about 10,000 at the 100-entry limit, and
 * a reconcile runs once per PropertyOverride created. Counted, not timed: strcmp's calls during
 * one reconcile of a target of k and of 10k PropertyOverrides after one of them changed, by
 * replacing strcmp in this binary (the fixture compares its keys without it). */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"

static int g_counting;
static uint64_t g_compares;

int strcmp(const char *a, const char *b) {
  if (g_counting) g_compares++;
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  while (*x && *x == *y) x++, y++;
  return (int)*x - (int)*y;
}

/* Every PropertyOverride sets the same field of the same clusters, as the benchmark's do: they
 * overlap, and each one's overlap scan ends at the fourth peer it meets (PO_OVERLAP_MORE). Where
 * none overlaps another, each scans all its peers: that scan is k*k of its own (overlap.c), not
 * counted here. */
static void apply(Fake *fx, int i, int gen, int value) {
  char name[32], patches[512];
  snprintf(name, sizeof name, "po-%03d", i);
  snprintf(patches, sizeof patches,
           "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]",
           value);
  apply_override(fx, name, gen, "web", patches);
}

/* strcmp calls of one reconcile of a target of k PropertyOverrides, one of them at a new generation. */
static uint64_t compares_at(int k) {
  Fake *fx = fake_new();
  assert_non_null(fx);
  for (int i = 0; i < k; i++) apply(fx, i, 1, 1 + i % 90);
  for (int pass = 0; pass < 3; pass++) {
    po_ReconcileResult r0 = reconcile_key(fx, "ServiceDefaults/default/web");
    if (!r0.ok) printf("pass %d: %s\n", pass, r0.error);
    assert_true(r0.ok);
  }
  int writes = fx->target_writes;
  apply(fx, k / 2, 2, 99);
  g_compares = 0;
  g_counting = 1;
  po_ReconcileResult r = reconcile_key(fx, "ServiceDefaults/default/web");
  g_counting = 0;
  assert_true(r.ok);
  assert_int_equal(fx->target_writes, writes + 1); /* the new generation written */
  json_object *list = get(get(slot_obj(fx, "ServiceDefaults/default/web"), "spec"), "envoyExtensions");
  assert_int_equal(json_object_array_length(list), k);
  fake_free(fx);
  return g_compares;
}

static void test_reconcile_work_follows_the_target_not_its_square(void **state) {
  (void)state;
  uint64_t small = compares_at(9), large = compares_at(90);
  printf("strcmp calls in one reconcile: %llu at 9 PropertyOverrides, %llu at 90 (%.1fx)\n", (unsigned long long)small,
         (unsigned long long)large, (double)large / (double)small);
  /* ten times the PropertyOverrides: ten times the work, and the logarithms of a sort and lookups */
  assert_true(large <= small * 15);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_reconcile_work_follows_the_target_not_its_square)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
