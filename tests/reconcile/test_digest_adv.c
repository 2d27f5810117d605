/* Adversarial tests of the digest path (an adversarial review's, session 23): where a reconcile
 * from a target's digest could decide otherwise than one from its object.
 *
 * 1. test_stale_cache_patch_refused_is_a_conflict: the cache holds the version the digest names,
 *    a third party's edit is already on the API server (the watch has not brought it), and the
 *    digest's JSON Patch does not apply to the server's object (kube-apiserver answers 422). The
 *    object path sends the whole object after a 422 (kube_io.c update_target) and gets the 409 it
 *    was: a conflict, retried, no status written. The digest path has no object to send:
 *    it takes the 422 for a conflict (write_from_digest), and writes no status either (before,
 *    every PropertyOverride of the target was said Programmed=False TargetError until the retry).
 * 2. test_digest_differs_in_nothing_adv: test_digest's differential histories with more actions:
 *    targets deleted and re-created (new uid) by others, cross-namespace PropertyOverrides of one
 *    name, a ProxyDefaults target, answers lost, lagging echoes, odd marker types.
 * PO_SEED replays one history of (2). */
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
#include "apiserver.h" /* po_As_JsonPatch */

#include "digest_pair.h"
#include "fake_api.h"

static uint64_t g_rng;
static uint32_t rnd(uint32_t n) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng % n);
}

/* POs: ns/name; 0..5 in default, 6..7 in platform (same names as 0..1, cross-namespace), 8 in mesh (ProxyDefaults) */
static const char *const kNs[] = {"default", "default", "default", "default", "default", "default", "platform", "platform", "mesh"};
static const char *const kNames[] = {"a", "b", "c", "d", "e", "f", "a", "b", "g"};
enum { kNPos = 9 };
static const char *const kTargets[] = {"web", "api"};
static const char *const kKeys[] = {"ServiceDefaults/default/web", "ServiceDefaults/default/api", "ProxyDefaults/mesh/global"};
enum { kNKeys = 3 };


static void apply_po(World *w, int i, const char *target, int value, int priority, bool required) {
  if (!w->gen[i]) w->uid[i] = ++w->uids;
  w->gen[i]++;
  char prio[32] = "", tref[200];
  if (priority != 99) snprintf(prio, sizeof prio, ",\"priority\":%d", priority);
  if (i == 8) snprintf(tref, sizeof tref, "{\"kind\":\"ProxyDefaults\",\"name\":\"global\"}");
  else if (i >= 6) snprintf(tref, sizeof tref, "{\"name\":\"%s\",\"namespace\":\"default\"}", target);
  else snprintf(tref, sizeof tref, "{\"name\":\"%s\"}", target);
  char text[1200];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"generation\":%d,\"uid\":\"uid-po-%d\"},"
           "\"spec\":{\"targetRef\":%s%s%s,\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
           "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]}}",
           kNames[i], kNs[i], w->gen[i], w->uid[i], tref, prio, required ? ",\"required\":true" : "", value);
  for (int f = 0; f < 2; f++) store_override(w->fx[f], kNs[i], kNames[i], json_tokener_parse(text));
}

static void delete_po(World *w, int i) {
  char k[64];
  snprintf(k, sizeof k, "po/%s/%s", kNs[i], kNames[i]);
  for (int f = 0; f < 2; f++) {
    Slot *s = slot(w->fx[f], k, false);
    if (!s || !s->obj) return;
    json_object_object_add(get(s->obj, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
    bump(w->fx[f], s->obj);
  }
  w->gen[i] = 0;
}

/* Someone else's edit of a target, the same in both servers. */
static void edit_target(World *w, const char *k) {
  int kind = (int)rnd(11);
  uint32_t r1 = rnd(1000), r2 = rnd(1000);
  for (int f = 0; f < 2; f++) {
    Slot *s = slot(w->fx[f], k, false);
    if (!s || !s->obj) return;
    if (kind == 9) { /* deleted by someone else */
      fake_delete(w->fx[f], k);
      continue;
    }
    if (kind == 10) { /* deleted and created again from a copy (kubectl replace --force, a restore): a new uid */
      json_object *c = copy(s->obj);
      json_object *md = get(c, "metadata");
      json_object_object_del(md, "uid");
      if (r1 % 2) json_object_object_del(md, "annotations");
      json_object_put(s->obj);
      s->obj = NULL;
      put(w->fx[f], k, c);
      /* the uid the fake gives depends on its uid counter: the same in both servers */
      continue;
    }
    json_object *spec = get(s->obj, "spec");
    if (kind <= 5) {
      edit_extensions(spec, kind, r1, r2);
      bump(w->fx[f], s->obj);
      continue;
    }
    json_object *list = get(spec, "envoyExtensions");
    size_t n = list ? json_object_array_length(list) : 0;
    if (!list) {
      list = json_object_new_array();
      json_object_object_add(spec, "envoyExtensions", list);
    }
    json_object *e = n ? json_object_array_get_idx(list, r1 % n) : NULL;
    json_object *m = get(get(e, "arguments"), "PropertyOverride");
    switch (kind) {
      case 6: /* a marker's members of odd types */
        if (m && json_object_is_type(m, json_type_object)) {
          switch (r2 % 7) {
            case 0: json_object_object_add(m, "generation", json_object_new_string("1")); break;
            case 1: json_object_object_add(m, "priority", json_object_new_int(0)); break;
            case 2: json_object_object_add(m, "priority", json_object_new_string("3")); break;
            case 3: json_object_object_add(m, "namespace", json_object_new_string("")); break;
            case 4: json_object_object_add(m, "namespace", json_object_new_int(7)); break;
            case 5: json_object_object_add(m, "generation", json_object_new_double(1.0)); break;
            default: json_object_object_add(m, "extra", json_object_new_boolean(1)); break;
          }
        }
        break;
      case 7: /* the entry's own members */
        if (e && json_object_is_type(e, json_type_object)) {
          switch (r2 % 4) {
            case 0: json_object_object_add(e, "required", json_object_new_string("true")); break;
            case 1: json_object_object_del(e, "required"); break;
            case 2: json_object_object_add(e, "consulVersion", json_object_new_string("1.17")); break;
            default: json_object_object_add(e, "required", json_object_new_boolean(!json_object_get_boolean(get(e, "required")))); break;
          }
        }
        break;
      default: /* our marker made to name the other target's uid, or a name of another type */
        if (m && json_object_is_type(m, json_type_object)) {
          if (r2 % 2) json_object_object_add(m, "name", json_object_new_int(5));
          else json_object_object_add(m, "uid", json_object_new_string(""));
        }
        break;
    }
    bump(w->fx[f], s->obj);
  }
}
static void deliver_echoes(World *w) {
  bool a = w->fx[0]->echo != NULL, b = w->fx[1]->echo != NULL;
  if (a != b) fail_msg("one server has an echo waiting, the other not");
  if (a) {
    for (int f = 0; f < 2; f++) fake_deliver_echo(w->fx[f]);
  }
}

static void one_history(uint64_t seed, int steps, World *w) {
  g_rng = seed ? seed : 1;
  for (int f = 0; f < 2; f++) {
    w->fx[f] = fake_new();
    po_CtlStatus cross;
    assert_true(po_Tenancy_AllowCrossNamespace(&w->fx[f]->tenancy, "platform", &cross));
  }
  w->fx[1]->no_digest = true;
  memset(w->gen, 0, sizeof w->gen);
  w->uids = 0;
  for (int step = 0; step < steps; step++) {
    char when[96];
    snprintf(when, sizeof when, "seed %llu step %d", (unsigned long long)seed, step);
    uint32_t what = rnd(100);
    int i = (int)rnd(kNPos);
    bool lags = false;
    if (what < 42) {
      static const int kPriorities[] = {99, 0, 3, -2};
      apply_po(w, i, kTargets[rnd(10) < 7 ? 0 : 1], rnd(10) ? 10 * (1 + (int)rnd(9)) : 150, kPriorities[rnd(4)], rnd(5) == 0);
    } else if (what < 50) {
      delete_po(w, i);
    } else if (what < 78) {
      edit_target(w, kKeys[rnd(kNKeys)]);
    } else if (what < 82) {
      for (int f = 0; f < 2; f++) w->fx[f]->target_fails = 1;
    } else if (what < 85) {
      for (int f = 0; f < 2; f++) w->fx[f]->conflict_next = true;
    } else if (what < 90) {
      for (int f = 0; f < 2; f++) w->fx[f]->answer_lost = true;
    } else if (what < 95) {
      for (int f = 0; f < 2; f++) w->fx[f]->target_lags = true;
      lags = true;
    }
    for (int round = 0; round < 2; round++) {
      for (size_t t = 0; t < kNKeys; t++) {
        reconcile_both(w, kKeys[t], when);
        if (lags && rnd(2)) deliver_echoes(w);
      }
    }
    for (int f = 0; f < 2; f++) {
      w->fx[f]->target_fails = 0, w->fx[f]->conflict_next = false, w->fx[f]->answer_lost = false;
      w->fx[f]->target_lags = false;
    }
    deliver_echoes(w);
  }
  w->digest_patches += w->fx[0]->digest_patches;
  for (int f = 0; f < 2; f++) fake_free(w->fx[f]);
}

static void test_digest_differs_in_nothing_adv(void **state) {
  (void)state;
  if (getenv("PO_ADV_SKIP_HISTORIES")) return;
  const char *env = getenv("PO_SEED");
  const char *nenv = getenv("PO_HISTORIES");
  uint64_t first = env ? strtoull(env, NULL, 10) : 777000;
  int histories = nenv ? atoi(nenv) : env ? 1 : 200;
  World w = {0};
  for (int h = 0; h < histories; h++) one_history(first + (uint64_t)h, 40, &w);
  printf("%d histories from seed %llu (PO_SEED): %ld reconciles, %ld from a digest (%ld of them read the object after "
         "all), %ld target updates planned from a digest, %ld digests checked against their object\n",
         histories, (unsigned long long)first, w.reconciles, w.from_digest, w.digest_object, w.digest_patches, w.checked_digests);
  assert_true(w.from_digest * 3 > w.reconciles);
}

/* ---- 1. a stale cache's patch refused by the API server ---- */

/* The API server's side of an update (kube-apiserver's order: a JSON Patch is applied to the
 * object it holds, then the version compared), and kube_io.c's update_target over it (a 422 to a
 * patch sent with its object: the object sent whole, over the same version). Before the first
 * update a third party's edit lands on the server that the cache (the slot) has not seen: held in
 * g_server, which then stands for the server's object. */
static json_object *g_server;
static int g_invalid, g_conflicts;

static po_WriteResult server_write(json_object *obj, po_CtlStatus *st) {
  const char *have = po_Json_Meta(g_server, "resourceVersion"), *sent = po_Json_Meta(obj, "resourceVersion");
  if (strcmp(have, sent) != 0) {
    g_conflicts++;
    po_CtlStatus_Set(st, kPo_Ctl_Conflict, "Operation cannot be fulfilled: the object has been modified");
    return kPo_WriteResult_Conflict;
  }
  fail_msg("the update was not expected to be applied");
  return kPo_WriteResult_Failed;
}

static po_WriteResult stale_update_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                          const char *patch, size_t patch_len, po_WrittenVersion *written, po_CtlStatus *st) {
  (void)ctx, (void)kind, (void)ns, (void)name, (void)patch_len;
  *written = (po_WrittenVersion){.uid = {0}};
  po_CtlStatus_Clear(st);
  if (patch) {
    json_object *ops = json_tokener_parse(patch);
    char msg[512] = "";
    json_object *made = po_As_JsonPatch(copy(g_server), ops, msg, sizeof msg);
    json_object_put(ops);
    po_WriteResult w;
    if (!made) {
      g_invalid++;
      po_CtlStatus_Set(st, kPo_Ctl_Invalid, "the server rejected our request due to an error in our request: %s", msg);
      w = kPo_WriteResult_Failed;
    } else {
      w = server_write(made, st);
      json_object_put(made);
      return w;
    }
    if (!obj) return w; /* kube_io.c: no object, nothing resent */
  }
  return server_write(obj, st);
}

/* A target with another extension and the entries of a and b, reconciled until the index keeps
 * its digest; then c arrives while someone removes the other extension on the server. */
static po_ReconcileResult stale_patch_run(bool no_digest, Fake **out) {
  Fake *fx = fake_new();
  fx->no_digest = no_digest;
  put(fx, "ServiceDefaults/default/web",
      json_tokener_parse("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                         "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},"
                         "\"spec\":{\"envoyExtensions\":[{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}}]}}"));
  const char *p = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                  "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]";
  char patches[400];
  snprintf(patches, sizeof patches, p, 10);
  apply_override(fx, "a", 1, "web", patches);
  snprintf(patches, sizeof patches, p, 20);
  apply_override(fx, "b", 1, "web", patches);
  for (int i = 0; i < 3; i++) assert_true(reconcile_key(fx, "ServiceDefaults/default/web").ok);
  assert_string_equal(json_object_get_string(get(override_condition(fx, "default", "a", "Programmed"), "status")), "True");
  snprintf(patches, sizeof patches, p, 30);
  apply_override(fx, "c", 1, "web", patches);
  /* the server's object: the other extension removed by a tenant's kubectl edit (a new version) */
  g_server = copy(slot_obj(fx, "ServiceDefaults/default/web"));
  json_object_array_del_idx(get(get(g_server, "spec"), "envoyExtensions"), 0, 1);
  json_object_object_add(get(g_server, "metadata"), "resourceVersion", json_object_new_string("999999"));
  g_invalid = g_conflicts = 0;
  po_ReconcileIO io = fx->io;
  io.update_target = stale_update_target;
  int status_before = fx->status_patches;
  po_ReconcileResult r = po_Reconcile(&io, fx->ix, "ServiceDefaults/default/web");
  printf("%s: from_digest %d, ok %d, conflict %d, %d status writes, server: %d refused (422), %d conflicts (409); "
         "a's Programmed: %s %s\n",
         no_digest ? "from the object" : "from the digest", r.from_digest, r.ok, r.conflict, fx->status_patches - status_before,
         g_invalid, g_conflicts, json_object_get_string(get(override_condition(fx, "default", "a", "Programmed"), "status")),
         json_object_get_string(get(override_condition(fx, "default", "a", "Programmed"), "reason")));
  json_object_put(g_server);
  g_server = NULL;
  *out = fx;
  return r;
}

static void test_stale_cache_patch_refused_is_a_conflict(void **state) {
  (void)state;
  Fake *fo, *fd;
  po_ReconcileResult ro = stale_patch_run(true, &fo);
  po_ReconcileResult rd = stale_patch_run(false, &fd);
  assert_true(ro.conflict); /* the object path: the 422 was a conflict (409 on the whole object) */
  assert_true(rd.from_digest);
  /* the digest path decides as the object path: a conflict, retried; no status says TargetError */
  assert_int_equal(rd.conflict, ro.conflict);
  assert_int_equal(rd.statuses_written, ro.statuses_written);
  assert_string_equal(json_object_get_string(get(override_condition(fd, "default", "a", "Programmed"), "status")),
                      json_object_get_string(get(override_condition(fo, "default", "a", "Programmed"), "status")));
  fake_free(fo);
  fake_free(fd);
}


/* ---- 3. a full target (TargetFull): 105 PropertyOverrides, some removed, newcomers placed ---- */

static void many_po(World *w, int i, int gen, int value, bool deleted) {
  char text[1200], name[16];
  snprintf(name, sizeof name, "p%03d", i);
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":%d,\"uid\":\"uid-many-%d\"%s},"
           "\"spec\":{\"targetRef\":{\"name\":\"web\"},\"priority\":%d,\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
           "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]}}",
           name, gen, i, deleted ? ",\"deletionTimestamp\":\"2026-12-01T00:00:01Z\"" : "", i % 3, value);
  for (int f = 0; f < 2; f++) store_override(w->fx[f], "default", name, json_tokener_parse(text));
}

static void test_full_target_differs_in_nothing(void **state) {
  (void)state;
  World w = {0};
  for (int f = 0; f < 2; f++) w.fx[f] = fake_new();
  w.fx[1]->no_digest = true;
  const char *key = "ServiceDefaults/default/web";
  for (int i = 0; i < 105; i++) {
    many_po(&w, i, 1, 10 + i % 50, false);
    reconcile_both(&w, key, "adding");
  }
  /* the limit reached: the last by name has no room */
  assert_string_equal(json_object_get_string(get(override_condition(w.fx[0], "default", "p104", "Programmed"), "reason")),
                      "TargetFull");
  g_rng = 4242;
  for (int step = 0; step < 60; step++) {
    int i = (int)rnd(110);
    uint32_t what = rnd(4);
    if (what == 0) many_po(&w, i, 2 + step, 11 + i % 50, true);
    else if (what == 1) many_po(&w, i, 2 + step, 150, false); /* invalid */
    else if (what == 2) edit_target(&w, key);
    else many_po(&w, i, 2 + step, 12 + i % 50, false);
    for (int r = 0; r < 2; r++) reconcile_both(&w, key, "churn");
  }
  printf("full target: %ld reconciles, %ld from a digest (%ld read the object after all)\n", w.reconciles, w.from_digest,
         w.digest_object);
  for (int f = 0; f < 2; f++) fake_free(w.fx[f]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stale_cache_patch_refused_is_a_conflict),
      cmocka_unit_test(test_full_target_differs_in_nothing),
      cmocka_unit_test(test_digest_differs_in_nothing_adv),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
