/* The overlap memo against no memo (white-box: src/overlap.h). Two fixtures get the same seeded
 * sequence of PropertyOverrides created and changed on one target, each setting, replacing or
 * removing fields that others set too; after every step both reconcile the target, the second
 * with its overlap memo emptied first, so that it compares every pair of peers (the reference).
 * Every PropertyOverride's Programmed condition (reason and message: which peers it overlaps,
 * how, who wins) must be the same in both. The memo answers the pairs of unchanged peers, and a
 * peer of the last reconcile's full scan visits only the peers that changed and those the memo
 * says it overlapped (overlap.c, candidates).
 *
 * PO_OVERLAP_SEED=N replays a run (the seed is printed); PO_OVERLAP_STEPS=N sets the number of
 * steps (default 400). */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../seeded.h"

#include "fake_api.h"
#include "overlap.h" /* po_TargetIndex_SetOverlapMemo */

enum { kOverrides = 24 };

static uint64_t g_rng;
static unsigned pick(unsigned n) { return po_Seeded_Pick(&g_rng, n); }

/* One patch of a small pool: most pairs meet on a field, the same value or another, or one
 * replaces or removes what the other sets. */
static void patches(char *out, size_t size) {
  static const char *const kFilter = "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},";
  switch (pick(5)) {
    case 0:
      snprintf(out, size, "[%s\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%u}]", kFilter,
               10 + 20 * pick(3));
      break;
    case 1:
      snprintf(out, size, "[%s\"op\":\"add\",\"path\":\"/type\",\"value\":\"%s\"}]", kFilter,
               pick(2) ? "STRICT_DNS" : "LOGICAL_DNS");
      break;
    case 2:
      snprintf(out, size, "[%s\"op\":\"remove\",\"path\":\"/outlier_detection\"}]", kFilter);
      break;
    case 3:
      snprintf(out, size, "[%s\"op\":\"add\",\"path\":\"/outlier_detection/consecutive_5xx\",\"value\":%u}]", kFilter,
               3 + pick(2));
      break;
    default:
      snprintf(out, size, "[%s\"op\":\"add\",\"path\":\"/per_connection_buffer_limit_bytes\",\"value\":%u}]", kFilter,
               1024 * (1 + pick(2)));
      break;
  }
}

static const char *text_of(json_object *c, const char *k) {
  json_object *v = c ? get(c, k) : NULL;
  return v ? json_object_get_string(v) : "";
}

static void test_memo_answers_as_a_full_scan(void **state) {
  (void)state;
  uint64_t seed = po_Seeded_Env("PO_OVERLAP_SEED", (uint64_t)time(NULL));
  size_t steps = (size_t)po_Seeded_Env("PO_OVERLAP_STEPS", 400);
  print_message("test_overlap_memo: PO_OVERLAP_SEED=%" PRIu64 " PO_OVERLAP_STEPS=%zu\n", seed, steps);
  g_rng = seed;
  Fake *fx = fake_new(), *ref = fake_new();
  assert_non_null(fx);
  assert_non_null(ref);
  int gen[kOverrides] = {0};
  size_t overlapping = 0, checks = 0, ref_checks = 0;
  const char *key = "ServiceDefaults/default/web";
  for (size_t s = 0; s < steps; s++) {
    /* one PropertyOverride created or changed, sometimes two before the reconcile */
    for (unsigned k = 1 + (pick(4) == 0); k > 0; k--) {
      unsigned i = pick(kOverrides);
      char name[16], p[512];
      snprintf(name, sizeof name, "po-%02u", i);
      patches(p, sizeof p);
      gen[i]++;
      apply_override(fx, name, gen[i], "web", p);
      apply_override(ref, name, gen[i], "web", p);
    }
    po_ReconcileResult a = reconcile_key(fx, key);
    /* nothing known: every pair compared (arrays as a memo's always are, empty) */
    po_JsonHash no_ids[1];
    po_OverlapPair no_pairs[1];
    po_TargetIndex_SetOverlapMemo(ref->ix, key, &(po_OverlapMemo){no_ids, 0, no_ids, 0, no_pairs, 0});
    po_ReconcileResult b = reconcile_key(ref, key);
    assert_true(a.ok);
    assert_true(b.ok);
    checks += a.overlap_checks, ref_checks += b.overlap_checks;
    for (unsigned i = 0; i < kOverrides; i++) {
      if (!gen[i]) continue;
      char name[16];
      snprintf(name, sizeof name, "po-%02u", i);
      json_object *x = override_condition(fx, "default", name, "Programmed"),
                  *y = override_condition(ref, "default", name, "Programmed");
      assert_non_null(x);
      assert_non_null(y);
      if (strcmp(text_of(x, "message"), text_of(y, "message")) != 0 || strcmp(text_of(x, "reason"), text_of(y, "reason")) != 0) {
        print_message("step %zu, %s:\n  with the memo: %s: %s\n  every pair:    %s: %s\n", s, name, text_of(x, "reason"),
                      text_of(x, "message"), text_of(y, "reason"), text_of(y, "message"));
        fail();
      }
      overlapping += strstr(text_of(x, "message"), "PropertyOverride ") != NULL;
    }
  }
  print_message("test_overlap_memo: %zu steps, %zu statuses naming an overlap; engine checks %zu with the memo, %zu without\n",
                steps, overlapping, checks, ref_checks);
  assert_true(overlapping > steps); /* the overlaps were exercised */
  assert_true(checks < ref_checks); /* and the memo answered */
  fake_free(fx);
  fake_free(ref);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_memo_answers_as_a_full_scan)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
