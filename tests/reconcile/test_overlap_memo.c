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

/* ---- po_OverlapIndex itself, peers made by hand ------------------------------------------- */

/* The compiled override of a spec ({"patches": [...]}), valid. */
static const po_Override *compiled_spec(po_Arena *a, const char *spec) {
  po_Status st;
  po_Status_Clear(&st);
  po_Value *sv = po_Value_ParseJson(spec, strlen(spec), a, &st);
  assert_non_null(sv);
  po_Diagnostics *d = po_Diagnostics_New(a);
  po_Arguments args;
  assert_true(po_Arguments_DecodeSpec(sv, a, &args, d));
  po_CompileOptions co = po_CompileOptions_Default();
  po_Override *o = po_Override_Build(&args, &co, a, d);
  assert_non_null(o);
  assert_true(po_Override_Valid(o));
  return o;
}

/* A compiled override setting outlier_detection.max_ejection_percent to v (every two of them
 * overlap). */
static const po_Override *override_setting(po_Arena *a, unsigned v) {
  char spec[512];
  snprintf(spec, sizeof spec,
           "{\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%u}]}",
           v);
  return compiled_spec(a, spec);
}

/* Every peer's message and the engine's verdicts with the memo `prev` against every pair
 * compared (no memo). */
static void same_as_full_scan(const po_OverlapPeer *peers, size_t n, const po_OverlapMemo *prev, po_Arena *a) {
  po_OverlapIndex *with = po_OverlapIndex_NewFrom(peers, n, prev, a), *full = po_OverlapIndex_New(peers, n, a);
  assert_non_null(with);
  assert_non_null(full);
  for (size_t i = 0; i < n; i++) {
    char x[4096], y[4096];
    bool fx = po_Overlap_Of(with, i, x, sizeof x), fy = po_Overlap_Of(full, i, y, sizeof y);
    if (fx != fy || strcmp(x, y) != 0) {
      print_message("peer %zu (%s):\n  with the memo: %s\n  every pair:    %s\n", i, peers[i].name, x, y);
      fail();
    }
  }
}

/* Two peers with one id (ids are per compiled form and place: one, as a rule; a hash can still
 * meet another). The memo of a reconcile of them lists a pair twice; the candidates a peer of
 * the last full scan visits were cut at n entries before the repeats were taken out: the peers
 * after the repeated pair (in the memo's order) were never compared, and missing from the
 * message (fails at d7c7471b). */
static void test_memo_with_duplicate_ids_as_a_full_scan(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  assert_non_null(a);
  const char *target = "ServiceDefaults/default/web";
  /* c: 1, a: 2 (twice), b: 3; in the peers' order c, a, a', b, d */
  po_JsonHash ids[] = {{1, 0}, {2, 0}, {2, 0}, {3, 0}, {4, 0}};
  const char *names[] = {"po-c", "po-a", "po-a2", "po-b", "po-d"};
  enum { kPeers = sizeof ids / sizeof ids[0] };
  po_OverlapPeer peers[kPeers];
  for (size_t i = 0; i < kPeers; i++)
    peers[i] = (po_OverlapPeer){.ns = "default", .name = names[i], .override = override_setting(a, 10 + (unsigned)i),
                                .tier = kPo_OverlapTier_ServiceDefaults, .priority = 0, .target = target,
                                .where = "ServiceDefaults default/web", .own = true, .id = ids[i]};
  /* the last reconcile: without po-d (three overlaps each: every one scanned whole) */
  po_OverlapIndex *first = po_OverlapIndex_New(peers, kPeers - 1, a);
  assert_non_null(first);
  char out[4096];
  for (size_t i = 0; i < kPeers - 1; i++) assert_true(po_Overlap_Of(first, i, out, sizeof out));
  po_OverlapMemo memo;
  assert_true(po_OverlapIndex_Memo(first, &memo, a));
  assert_int_equal(memo.nscanned, kPeers - 1);
  /* the same peers again, then with po-d arrived */
  same_as_full_scan(peers, kPeers - 1, &memo, a);
  same_as_full_scan(peers, kPeers, &memo, a);
  po_Arena_Free(a);
}

/* Seeded peer lists made by hand, each reconciled with the memo of the last (as a target's
 * reconciles chain them) and against every pair compared: peers of both tiers and two targets of
 * each (ProxyDefaults peers meet every ServiceDefaults one, others only their own target's),
 * Istio ordered or not, peers that take no part or have no id, own or not, several of one
 * compiled form and place (one id), peers changed, removed, added and moved between targets.
 * An id is what a compiled form and place decide (po_Overlap_PeerId), so two peers of one id
 * overlap the same peers. */
static void test_memo_of_seeded_peer_lists_as_a_full_scan(void **state) {
  (void)state;
  uint64_t seed = po_Seeded_Env("PO_OVERLAP_SEED", (uint64_t)time(NULL));
  size_t steps = (size_t)po_Seeded_Env("PO_OVERLAP_STEPS", 400) * 10;
  print_message("test_memo_of_seeded_peer_lists_as_a_full_scan: PO_OVERLAP_SEED=%" PRIu64 "\n", seed);
  g_rng = seed;
  po_Arena *pool = po_Arena_New();
  assert_non_null(pool);
  enum { kForms = 12, kMaxPeers = 14 };
  const po_Override *forms[kForms];
  for (size_t f = 0; f < kForms; f++) {
    char spec[600], p[512];
    patches(p, sizeof p);
    snprintf(spec, sizeof spec, "{\"patches\":%s}", p);
    forms[f] = compiled_spec(pool, spec);
  }
  static const char *const kTargets[2][2] = {{"ProxyDefaults/default/global", "ProxyDefaults/other/global"},
                                             {"ServiceDefaults/default/web", "ServiceDefaults/default/api"}};
  static const char *const kNames[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"};
  static const char *const kCreated[] = {"2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z", ""};
  /* a peer: its form (-1: none), tier, target, own, no id, name, priority */
  typedef struct {
    int form, tier, target, prio, name;
    bool own, noid;
    po_OverlapIstio istio;
  } Spec;
  Spec sp[kMaxPeers];
  size_t n = 0, compared = 0, checks = 0, full_checks = 0;
  po_Arena *ar[2] = {po_Arena_New(), NULL};
  assert_non_null(ar[0]);
  po_OverlapMemo memo, *prev = NULL;
  bool istio = false;
  for (size_t s = 0; s < steps; s++) {
    if (pick(50) == 0) { /* another target's history */
      n = 0, prev = NULL, istio = pick(3) == 0;
    }
    /* changes: a peer's form, tier or target, a peer gone, a new one */
    for (unsigned k = pick(3); k > 0 || n == 0; k = k ? k - 1 : 0) {
      unsigned what = pick(6);
      if ((what == 0 || n == 0) && n < kMaxPeers) {
        size_t at = pick((unsigned)n + 1);
        memmove(sp + at + 1, sp + at, (n - at) * sizeof *sp);
        sp[at] = (Spec){.form = pick(8) ? (int)pick(kForms / 2) : -1, .tier = (int)pick(2), .target = pick(4) == 0,
                        .prio = (int)pick(3), .name = (int)pick(16), .own = pick(4) != 0, .noid = pick(20) == 0};
        sp[at].istio = (po_OverlapIstio){.filter_ns = "default", .filter_name = kNames[sp[at].name],
                                         .created = kCreated[pick(3)], .root = pick(2), .minor = pick(2) ? 22 : 0};
        n++;
      } else if (what == 1 && n) {
        size_t at = pick((unsigned)n);
        memmove(sp + at, sp + at + 1, (n - at - 1) * sizeof *sp);
        n--;
      } else if (n) {
        Spec *x = &sp[pick((unsigned)n)];
        switch (what) {
          case 2: x->form = pick(8) ? (int)pick(kForms) : -1; break;
          case 3: x->target = !x->target; break;
          case 4: x->tier = !x->tier; break;
          default: x->prio = (int)pick(3); break;
        }
      }
      if (!n) break;
    }
    /* a duplicate now and then: another peer of the same form and place */
    if (n && n < kMaxPeers && pick(6) == 0) {
      sp[n] = sp[pick((unsigned)n)];
      sp[n].name = (int)pick(16);
      sp[n].istio.filter_name = kNames[sp[n].name];
      n++;
    }
    po_Arena *a = ar[s % 2];
    po_OverlapPeer *peers = po_Arena_Malloc(a, kMaxPeers * sizeof *peers);
    assert_non_null(peers);
    for (size_t i = 0; i < n; i++) {
      const Spec *x = &sp[i];
      uint64_t place = (uint64_t)(x->form + 1) * 8 + (uint64_t)x->tier * 2 + (uint64_t)x->target;
      peers[i] = (po_OverlapPeer){.ns = "default", .name = kNames[x->name], .override = x->form >= 0 ? forms[x->form] : NULL,
                                  .tier = x->tier ? kPo_OverlapTier_ServiceDefaults : kPo_OverlapTier_ProxyDefaults,
                                  .priority = x->prio, .target = kTargets[x->tier][x->target],
                                  .where = kTargets[x->tier][x->target], .own = x->own, .istio = istio ? &x->istio : NULL,
                                  .id = x->noid || x->form < 0 ? (po_JsonHash){0, 0} : (po_JsonHash){place, 0x5eed}};
    }
    po_OverlapIndex *with = po_OverlapIndex_NewFrom(peers, n, prev, a), *full = po_OverlapIndex_New(peers, n, a);
    assert_non_null(with);
    assert_non_null(full);
    for (size_t i = 0; i < n; i++) {
      if (!peers[i].own) continue;
      char x[4096], y[4096];
      bool fx = po_Overlap_Of(with, i, x, sizeof x), fy = po_Overlap_Of(full, i, y, sizeof y);
      if (fx != fy || strcmp(x, y) != 0) {
        print_message("step %zu, peer %zu (%s) of %zu:\n  with the memo: %s\n  every pair:    %s\n", s, i, peers[i].name, n, x, y);
        fail();
      }
      compared += fx;
    }
    checks += po_OverlapIndex_Checks(with), full_checks += po_OverlapIndex_Checks(full);
    /* the next reconcile's memo, in the arena the next step keeps */
    po_Arena *next = ar[(s + 1) % 2];
    if (next) po_Arena_Free(next);
    next = ar[(s + 1) % 2] = po_Arena_New();
    assert_non_null(next);
    /* the memo lives in this step's arena: kept while the next step runs */
    assert_true(po_OverlapIndex_Memo(with, &memo, a));
    prev = &memo;
  }
  print_message("test_memo_of_seeded_peer_lists_as_a_full_scan: %zu steps, %zu overlapping messages; engine checks %zu "
                "with the memo, %zu without\n", steps, compared, checks, full_checks);
  assert_true(compared > steps / 4);
  assert_true(checks < full_checks);
  po_Arena_Free(ar[0]);
  po_Arena_Free(ar[1]);
  po_Arena_Free(pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_memo_answers_as_a_full_scan),
                                     cmocka_unit_test(test_memo_with_duplicate_ids_as_a_full_scan),
                                     cmocka_unit_test(test_memo_of_seeded_peer_lists_as_a_full_scan)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
