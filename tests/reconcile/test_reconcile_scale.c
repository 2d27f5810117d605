/* Issue 26: a reconcile's work follows its target's PropertyOverrides, not their square, and a
 * reconcile after one of them changed compares for overlaps only the pairs that changed.
 * - Each PropertyOverride's entries were looked for among all the target's live entries in turn,
 *   and each live entry's owner among all its PropertyOverrides (load, plan, write and status):
 *   at k PropertyOverrides, k*k name compares per reconcile. Counted: strcmp's calls during one
 *   reconcile of a target of 9 and of 90 PropertyOverrides after one of them changed, by
 *   replacing strcmp in this binary (the fixture compares its keys without it).
 * - Each PropertyOverride was compared for overlaps with every peer on every reconcile (k*k
 *   engine checks, about 10,000 at the 100-entry limit, and a reconcile runs once per
 *   PropertyOverride created); the target's overlap memo answers the pairs of peers that did not
 *   change. Counted: the reconcile's overlap_checks.
 * - Each overlapping PropertyOverride's Programmed message names up to three peers, and every
 *   reconcile composed those sentences again with several snprintf calls each (a sixth of a
 *   reconcile at 50). Counted: snprintf's calls, replaced in this binary as strcmp is.
 * - Each reconcile allocates its target's item table (run.h, po_RunItem: one per PropertyOverride),
 *   zeroed, and its fixed text buffers made an item 3.9 KB, about 195 KB zeroed and page-faulted
 *   in per reconcile at 50; an Istio or Envoy Gateway target's a second table (po_IstioItem,
 *   po_EGItem), 0.7-0.8 KB an item. Bounded: the items' sizes.
 */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "fake_api.h"
#include "eg_write.h"    /* po_EGItem */
#include "istio_write.h" /* po_IstioItem */
#include "run.h"         /* po_RunItem (controller/reconcile/src) */

static int g_counting;
static uint64_t g_compares;
static size_t g_checks; /* the reconcile's overlap_checks */
static uint64_t g_prints; /* snprintf calls while counting */

/* The hash keys fixed, the index's (json_hash.c) and json-c's table seed, so their chains, and
 * with them the strcmp calls of their lookups, are the same in every run: the counts below are
 * exact, not a sample of keys. */
int json_c_get_random_seed(void) { return 0x2545; }

ssize_t getrandom(void *buf, size_t n, unsigned flags) {
  (void)flags;
  for (size_t i = 0; i < n; i++) ((unsigned char *)buf)[i] = (unsigned char)(i * 37 + 11);
  return (ssize_t)n;
}

int strcmp(const char *a, const char *b) {
  if (g_counting && !fake_checking) g_compares++;
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  while (*x && *x == *y) x++, y++;
  return (int)*x - (int)*y;
}

int snprintf(char *restrict out, size_t size, const char *restrict format, ...) {
  if (g_counting && !fake_checking) g_prints++;
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(out, size, format, ap);
  va_end(ap);
  return n;
}

/* Overlapping: every PropertyOverride sets the same field of the same clusters, as the
 * benchmark's do, and each one's overlap scan ends at the fourth peer it meets
 * (PO_OVERLAP_MORE). Apart: each sets the clusters of another upstream service, so none overlaps
 * another and each was compared with every peer on every reconcile (k*k engine checks, until the
 * target's overlap memo answered those of the peers that did not change). */
static void apply(Fake *fx, int i, int gen, int value, bool overlapping) {
  char name[32], patches[512], filter[160];
  snprintf(name, sizeof name, "po-%03d", i);
  snprintf(filter, sizeof filter, overlapping ? "" : ",\"services\":[{\"name\":\"up-%03d\",\"namespace\":\"default\"}]", i);
  snprintf(patches, sizeof patches,
           "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"%s},"
           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]",
           filter, value);
  apply_override(fx, name, gen, "web", patches);
}

static bool g_consul_only; /* the IO table without EnvoyFilters and EnvoyPatchPolicies, as the app's when
                            * neither Istio nor Envoy Gateway is enabled */

/* strcmp calls of one reconcile of a target of k PropertyOverrides, one of them at a new generation. */
static uint64_t compares_at(int k, bool overlapping) {
  Fake *fx = fake_new();
  assert_non_null(fx);
  if (g_consul_only) fx->io.get_filter = NULL, fx->io.write_filter = NULL, fx->io.get_policy = NULL, fx->io.write_policy = NULL;
  for (int i = 0; i < k; i++) apply(fx, i, 1, 1 + i % 90, overlapping);
  for (int pass = 0; pass < 3; pass++) {
    po_ReconcileResult r0 = reconcile_key(fx, "ServiceDefaults/default/web");
    if (!r0.ok) printf("pass %d: %s\n", pass, r0.error);
    assert_true(r0.ok);
  }
  int writes = fx->target_writes;
  apply(fx, k / 2, 2, 99, overlapping);
  g_compares = 0;
  g_prints = 0;
  g_counting = 1;
  po_ReconcileResult r = reconcile_key(fx, "ServiceDefaults/default/web");
  g_counting = 0;
  assert_true(r.ok);
  g_checks = r.overlap_checks;
  assert_int_equal(fx->target_writes, writes + 1); /* the new generation written */
  json_object *list = get(get(slot_obj(fx, "ServiceDefaults/default/web"), "spec"), "envoyExtensions");
  assert_int_equal(json_object_array_length(list), k);
  fake_free(fx);
  return g_compares;
}

static void check(bool overlapping) {
  uint64_t small = compares_at(9, overlapping);
  size_t small_checks = g_checks;
  uint64_t large = compares_at(90, overlapping);
  size_t large_checks = g_checks;
  printf("one reconcile, %s: %llu strcmp calls and %zu overlap checks at 9 PropertyOverrides, %llu and %zu at 90 "
         "(%.1fx, %.1fx)\n",
         overlapping ? "overlapping" : "apart", (unsigned long long)small, small_checks, (unsigned long long)large,
         large_checks, (double)large / (double)small, (double)large_checks / (double)(small_checks ? small_checks : 1));
  /* ten times the PropertyOverrides: ten times the work, and the logarithms of a sort and lookups
   * (9.2x; 19x when live entries and owners were looked for in turn, 10.7x while each
   * PropertyOverride's current entry was looked for along the target's list, current_args in
   * consul_reconcile.c). Apart, the services each patch names cost compares of their own in
   * every check: the checks are what count. */
  if (overlapping) assert_true(large <= small * 10);
  /* apart: the changed one with every peer, and every peer with it (2k, not k*k: 90*89 at 90);
   * overlapping: each one's scan up to the fourth peer it overlaps (4k) */
  assert_true(large_checks <= 4 * 90 + 8);
}

static void test_reconcile_work_follows_the_target_not_its_square(void **state) {
  (void)state;
  check(true);
}

/* Every reconcile swept each of its PropertyOverrides' EnvoyFilters and EnvoyPatchPolicies left
 * in other places, and made their names first (three EnvoyFilter names, a policy name, and a
 * compare of two of them: 5,000 instructions per PropertyOverride) even where the app has neither
 * kind (io's get and write NULL: Istio, Envoy Gateway not enabled), where the sweep then looked
 * at nothing. Counted by strcmp: the fixture's own lookups of those kinds use none, so before,
 * the reconcile made the same calls with the kinds and without them; now at least one fewer per
 * PropertyOverride without. */
static void test_sweeps_make_no_names_without_their_kinds(void **state) {
  (void)state;
  uint64_t with = compares_at(90, true);
  g_consul_only = true;
  uint64_t without = compares_at(90, true);
  g_consul_only = false;
  printf("one reconcile of 90: %llu strcmp calls with EnvoyFilters and EnvoyPatchPolicies, %llu without\n",
         (unsigned long long)with, (unsigned long long)without);
  assert_true(without + 90 <= with);
}

static void test_unchanged_peers_are_not_compared_again(void **state) {
  (void)state;
  check(false);
}

/* The overlap sentences of a target of 90 whose PropertyOverrides all overlap (three in each one's
 * Programmed message) against a target of 90 that do not: the same reconcile otherwise, so the
 * same snprintf calls, but one per PropertyOverride for its patch's value as JSON (its number
 * printed), which only a comparison of two patches setting the same field makes now (overlap.c's
 * effects, made on first use). Before, each sentence cost five or six (the peer's name twice, the
 * order's reason, the order, the sentence) and the "; also" between two: about 1,600 more at 90. */
static void test_overlap_sentences_are_not_printed(void **state) {
  (void)state;
  compares_at(90, true);
  uint64_t overlapping = g_prints;
  compares_at(90, false);
  uint64_t apart = g_prints;
  printf("one reconcile of 90: %llu snprintf calls overlapping (270 sentences), %llu apart\n",
         (unsigned long long)overlapping, (unsigned long long)apart);
  assert_true(overlapping <= apart + 90);
}

/* Each item's names, keys, uid and resourceVersion were copied with snprintf("%s") as it was
 * loaded (seven or eight calls per PropertyOverride per reconcile, and the Accepted and
 * Programmed messages' copies), 18 snprintf calls per PropertyOverride in all at 90 (1,640),
 * with what the fixture and json-c call themselves. Copied as bytes now: about 10. */
static void test_names_are_copied_not_printed(void **state) {
  (void)state;
  compares_at(90, false);
  printf("one reconcile of 90: %llu snprintf calls (%.1f per PropertyOverride)\n", (unsigned long long)g_prints,
         (double)g_prints / 90.0);
  assert_true(g_prints <= 12 * 90);
}

/* The target's entries' markers were read five times a reconcile (po_Consul_OwnedEntries: a
 * count for the items' room, a count and a copy of the bound ones, a count and a copy of the
 * live ones), each read comparing names and, with the owners, looking each entry's owner up:
 * 22,332 strcmp calls at 90 overlapping, 248 per PropertyOverride. The counts are taken from the
 * list's length now, and three reads remain: 19,113, 212. */
static void test_entries_are_read_three_times(void **state) {
  (void)state;
  uint64_t n = compares_at(90, true);
  printf("one reconcile of 90: %llu strcmp calls (%.0f per PropertyOverride)\n", (unsigned long long)n, (double)n / 90.0);
  assert_true(n <= 225 * 90);
}

/* An item's texts are arena strings made on demand (most are short, and a refusal, a mismatch, a
 * held or home key are rare), not buffers of their longest: 3,912 bytes an item before (refusal
 * 1,024, mismatch 512, two keys of 600, names of 254, uid and resourceVersion of 128, the memo's
 * 296), 200 after; the mesh's items' error and unbound uid (512 and 128) likewise: po_IstioItem
 * 720 -> 96, po_EGItem 840 -> 216. The bounds leave room for a few fields more, not for a
 * buffer. */
static void test_items_are_small(void **state) {
  (void)state;
  printf("po_RunItem: %zu bytes, po_IstioItem %zu, po_EGItem %zu\n", sizeof(po_RunItem), sizeof(po_IstioItem),
         sizeof(po_EGItem));
  assert_true(sizeof(po_RunItem) <= 512);
  assert_true(sizeof(po_IstioItem) <= 256);
  assert_true(sizeof(po_EGItem) <= 384);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_reconcile_work_follows_the_target_not_its_square),
                                     cmocka_unit_test(test_unchanged_peers_are_not_compared_again),
                                     cmocka_unit_test(test_sweeps_make_no_names_without_their_kinds),
                                     cmocka_unit_test(test_overlap_sentences_are_not_printed),
                                     cmocka_unit_test(test_names_are_copied_not_printed),
                                     cmocka_unit_test(test_entries_are_read_three_times),
                                     cmocka_unit_test(test_items_are_small)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
