/* A Consul target reconciled from its digest (controller/reconcile/src/digest.h) decides exactly
 * as one reconciled from its object. Two fake API servers are driven alike by seeded random
 * histories (PropertyOverrides created, changed, made invalid, moved between two targets,
 * deleted; the targets edited by others: extensions added, removed, reordered, entries drifted,
 * look-alikes copied in; writes failing): one reconciles from digests where it can, the other
 * always from the object, and after every reconcile both servers hold the same objects (the same
 * JSON) and both reconciles said the same. After each reconcile the digest the index keeps is
 * checked against the object at the version it names (what po_ConsulDigest_Slot reads of each
 * element, and the hash of our entries' arguments). PO_SEED replays one seed. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "consul_digest.h"
#include "json_hash.h"
#include "po/base/json.h"
#include "po/reconcile/reconcile.h"

#include "digest_pair.h"
#include "fake_api.h"

static uint64_t g_rng;
static uint32_t rnd(uint32_t n) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng % n);
}

static const char *const kNames[] = {"a", "b", "c", "d", "e", "f"};
enum { kNNames = sizeof kNames / sizeof *kNames };
static const char *const kTargets[] = {"web", "api"};


/* A PropertyOverride as a tenant applies it, into both servers. */
static void apply_po(World *w, int i, const char *target, int value, int priority, bool required) {
  if (!w->gen[i]) w->uid[i] = ++w->uids;
  w->gen[i]++;
  char prio[32] = "";
  if (priority != 99) snprintf(prio, sizeof prio, ",\"priority\":%d", priority);
  char text[1024];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":%d,\"uid\":\"uid-po-%d\"},"
           "\"spec\":{\"targetRef\":{\"name\":\"%s\"}%s%s,\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
           "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]}}",
           kNames[i], w->gen[i], w->uid[i], target, prio, required ? ",\"required\":true" : "", value);
  for (int f = 0; f < 2; f++) store_override(w->fx[f], "default", kNames[i], json_tokener_parse(text));
}

static void delete_po(World *w, int i) {
  char k[64];
  snprintf(k, sizeof k, "po/default/%s", kNames[i]);
  for (int f = 0; f < 2; f++) {
    Slot *s = slot(w->fx[f], k, false);
    if (!s || !s->obj) return;
    json_object_object_add(get(s->obj, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
    bump(w->fx[f], s->obj);
  }
  w->gen[i] = 0; /* a later create is a new object (a new uid) */
}

/* Someone else's edit of a target, the same in both servers: an extension added, an element
 * removed, two swapped, an entry's arguments drifted, a look-alike copied in, another field. */
static void edit_target(World *w, const char *name) {
  char k[64];
  snprintf(k, sizeof k, "ServiceDefaults/default/%s", name);
  int kind = (int)rnd(6);
  uint32_t r1 = rnd(1000), r2 = rnd(1000);
  for (int f = 0; f < 2; f++) {
    Slot *s = slot(w->fx[f], k, false);
    if (!s || !s->obj) return;
    edit_extensions(get(s->obj, "spec"), kind, r1, r2);
    bump(w->fx[f], s->obj);
  }
}

static void one_history(uint64_t seed, int steps, World *w) {
  g_rng = seed ? seed : 1;
  for (int f = 0; f < 2; f++) w->fx[f] = fake_new();
  w->fx[1]->no_digest = true;
  memset(w->gen, 0, sizeof w->gen);
  w->uids = 0;
  for (int step = 0; step < steps; step++) {
    char when[96];
    snprintf(when, sizeof when, "seed %llu step %d", (unsigned long long)seed, step);
    uint32_t what = rnd(100);
    int i = (int)rnd(kNNames);
    if (what < 45) {
      static const int kPriorities[] = {99, 0, 3, -2};
      apply_po(w, i, kTargets[rnd(10) < 8 ? 0 : 1], rnd(10) ? 10 * (1 + (int)rnd(9)) : 150, kPriorities[rnd(4)], rnd(5) == 0);
    } else if (what < 55) {
      delete_po(w, i);
    } else if (what < 80) {
      edit_target(w, kTargets[rnd(2)]);
    } else if (what < 85) {
      for (int f = 0; f < 2; f++) w->fx[f]->target_fails = 1;
    } else if (what < 88) {
      for (int f = 0; f < 2; f++) w->fx[f]->conflict_next = true;
    }
    for (int round = 0; round < 2; round++) {
      for (size_t t = 0; t < 2; t++) {
        char key[64];
        snprintf(key, sizeof key, "ServiceDefaults/default/%s", kTargets[t]);
        reconcile_both(w, key, when);
      }
    }
    for (int f = 0; f < 2; f++) w->fx[f]->target_fails = 0, w->fx[f]->conflict_next = false;
  }
  w->digest_patches += w->fx[0]->digest_patches;
  for (int f = 0; f < 2; f++) fake_free(w->fx[f]);
}

static void test_digest_differs_in_nothing(void **state) {
  (void)state;
  const char *env = getenv("PO_SEED");
  uint64_t first = env ? strtoull(env, NULL, 10) : 20261207;
  int histories = env ? 1 : 300;
  World w = {0};
  for (int h = 0; h < histories; h++) one_history(first + (uint64_t)h, 40, &w);
  printf("%d histories from seed %llu (PO_SEED): %ld reconciles, %ld from a digest (%ld of them read the object after "
         "all), %ld target updates planned from a digest, %ld digests checked against their object\n",
         histories, (unsigned long long)first, w.reconciles, w.from_digest, w.digest_object, w.digest_patches, w.checked_digests);
  /* the digest is what most reconciles read, and plans writes: else this compares two object reads */
  assert_true(w.from_digest * 2 > w.reconciles);
  assert_true(w.digest_patches * 50 > w.reconciles / 20);
  assert_true(w.checked_digests * 2 > w.reconciles);
}

/* The benchmark's shape: PropertyOverrides added one at a time to a target read from its digest:
 * each reconcile after the first reads no object, and writes one add. */
static void test_adds_read_no_object(void **state) {
  (void)state;
  World w = {0};
  w.fx[0] = fake_new();
  Fake *fx = w.fx[0];
  for (int i = 0; i < kNNames; i++) {
    if (!w.gen[i]) w.uid[i] = ++w.uids;
    w.gen[i]++;
    char text[1024];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\",\"generation\":1,\"uid\":\"uid-po-%d\"},\"spec\":{\"targetRef\":{\"name\":\"web\"},"
             "\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\","
             "\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]}}",
             kNames[i], w.uid[i], 10 + i);
    store_override(fx, "default", kNames[i], json_tokener_parse(text));
    int reads = fx->lent, patches = fx->digest_patches;
    (void)reads;
    po_ReconcileResult r = reconcile_key(fx, "ServiceDefaults/default/web");
    assert_true(r.ok);
    /* the first creates the target, the second annotates it: read from the object */
    if (i >= 2) {
      assert_true(r.from_digest);
      assert_false(r.digest_object);
      assert_int_equal(fx->digest_patches, patches + 1);
      assert_int_equal(fx->last_json_patch_ops, 2); /* the version, and one add */
    }
  }
  json_object *list = get(get(slot_obj(fx, "ServiceDefaults/default/web"), "spec"), "envoyExtensions");
  assert_int_equal(json_object_array_length(list), kNNames);
  fake_free(fx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_adds_read_no_object),
      cmocka_unit_test(test_digest_differs_in_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
