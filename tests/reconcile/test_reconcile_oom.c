/* Out of memory at every allocation (curl's "torture" habit): the Nth allocation of a reconcile
 * fails, for every N until one runs through. Whatever happens then, no target is ever written
 * without one of the entries it should hold, and an index update either happens whole or says
 * it did not.
 *
 * The allocator is replaced in this binary (glibc lets a program define malloc and friends;
 * libraries, json-c and upb included, then use them) and fails only while armed. Each reconcile
 * runs in a child process, so that a crash is seen and failed like a partial write: every
 * failure must end as a reported error (json-c asserts when a member is added to an object that
 * could not be made, and adds a NULL value as JSON null: every such call is checked). */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "compiled.h" /* po_Json_Parse */
#include "consul_digest.h"
#include "json_hash.h"
#include "po/base/json.h"
#include "fake_api.h"

/* ---- the failing allocator ---- */

#include "fail_alloc.h"

static const po_SyncPolicy *g_sync; /* the second run: --consul-sync-status=require (the write record) */

static void arm(long n) {
  g_count = 0;
  g_fail_at = n;
}
static void disarm(void) { g_fail_at = -1; }
/* A child a signal ended: the failure of allocation n crashed the process (inside json-c, as a
 * rule) where it had to end as a reported error. */
static void crashed(long n) {
  fail_msg("allocation %ld failed: the process crashed (PO_OOM_TRACE=1 prints the failing allocation and the crash)", n);
}

/* The fake API server's own allocations do not count: it stands for another process. */
static long g_paused;
static void pause_(void) {
  g_paused = g_fail_at;
  g_fail_at = -1;
}
static void resume(void) { g_fail_at = g_paused; }

/* Set: the fake's reads run under the failing allocator too, as the cache's do (po_Informer_Get
 * decompresses and parses a text for each reader), and a read whose copy fails reports the object
 * cached but not readable (fake_api.c, lend). */
static bool g_reads_fail;
/* Reads made once the armed allocation had failed (test_unlisted_entry_at_any_failed_allocation). */
static long g_reads_after_failure;
static void read_begin(void) {
  if (g_fail_at > 0 && g_count >= g_fail_at) g_reads_after_failure++;
  if (!g_reads_fail) pause_();
}
static void read_end(void) {
  if (!g_reads_fail) resume();
}

static const json_object *w_get_override(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  read_begin();
  const json_object *o = fx->io.get_override(ctx, ns, name, ref, st);
  read_end();
  return o;
}
static const json_object *w_get_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  read_begin();
  const json_object *o = fx->io.get_target(ctx, kind, ns, name, ref, st);
  read_end();
  return o;
}
static void w_release(void *ctx, void *ref) {
  Fake *fx = ctx;
  pause_();
  fx->io.release(ctx, ref);
  resume();
}
static po_WriteResult w_write_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                     bool create, const char *rv, json_object **written, po_CtlStatus *st) {
  Fake *fx = ctx;
  pause_();
  po_WriteResult w = fx->io.write_target(ctx, kind, ns, name, obj, create, rv, written, st);
  resume();
  return w;
}
static po_WriteResult w_update_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                      const char *patch, size_t patch_len, po_WrittenVersion *written, po_CtlStatus *st) {
  Fake *fx = ctx;
  pause_();
  po_WriteResult w = fx->io.update_target(ctx, kind, ns, name, obj, patch, patch_len, written, st);
  resume();
  return w;
}
/* The exit codes of an armed child (a crash: a signal). */
enum { kExitOk = 0, kExitPartialWrite = 3, kExitReadOom = 4, kExitReadIgnored = 5 };

/* Whether a JSON value holds a null anywhere but at `allowed` (a member name, NULL: none). */
static bool has_null(json_object *v, const char *allowed) {
  if (!v) return true;
  if (json_object_is_type(v, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(v); i++)
      if (has_null(json_object_array_get_idx(v, i), NULL)) return true;
  } else if (json_object_is_type(v, json_type_object)) {
    json_object_object_foreach(v, k, m) {
      if (!(m == NULL && allowed && strcmp(k, allowed) == 0) && has_null(m, NULL)) return true;
    }
  }
  return false;
}

/* A PropertyOverride patch as the reconcile sends it: a status patch holds no null but an
 * explicit programmedGeneration removal; a finalizer patch holds none and keeps the version read
 * as its precondition (a merge patch replaces the whole list: without it, another's finalizer
 * added meanwhile would go). Checked before the fake's allocations are paused. */
static void check_override_patch(bool status, json_object *patch) {
  json_object *md = get(patch, "metadata");
  bool bad = status ? has_null(get(patch, "status"), "programmedGeneration") || json_object_object_length(patch) != 1
                    : has_null(patch, NULL) || !get(md, "finalizers") || !get(md, "resourceVersion");
  if (!bad) return;
  fprintf(stderr, "a %s patch that says what the reconcile did not decide: %s\n", status ? "status" : "finalizer",
          json_object_to_json_string(patch));
  _exit(kExitPartialWrite);
}

static po_WriteResult w_patch_override(void *ctx, const char *ns, const char *name, bool status, json_object *patch,
                                       po_WrittenVersion *written, po_CtlStatus *st) {
  Fake *fx = ctx;
  check_override_patch(status, patch);
  pause_();
  po_WriteResult w = fx->io.patch_override(ctx, ns, name, status, patch, written, st);
  resume();
  return w;
}

static const json_object *w_get_filter(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  read_begin();
  const json_object *o = fx->io.get_filter(ctx, ns, name, ref, st);
  read_end();
  return o;
}
static po_WriteResult w_write_filter(void *ctx, const char *ns, const char *name, json_object *obj, bool create,
                                     const char *rv, json_object **written, po_CtlStatus *st) {
  Fake *fx = ctx;
  pause_();
  po_WriteResult w = fx->io.write_filter(ctx, ns, name, obj, create, rv, written, st);
  resume();
  return w;
}

static const json_object *w_get_policy(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  Fake *fx = ctx;
  read_begin();
  const json_object *o = fx->io.get_policy(ctx, ns, name, ref, st);
  read_end();
  return o;
}
static po_WriteResult w_write_policy(void *ctx, const char *ns, const char *name, json_object *obj, bool create,
                                     const char *rv, json_object **written, po_CtlStatus *st) {
  Fake *fx = ctx;
  pause_();
  po_WriteResult w = fx->io.write_policy(ctx, ns, name, obj, create, rv, written, st);
  resume();
  return w;
}
static json_object *w_gateway_routes(void *ctx, const char *ns, const char *gateway, const char *const *whole, size_t n_whole) {
  Fake *fx = ctx;
  read_begin();
  json_object *r = fx->io.gateway_routes(ctx, ns, gateway, whole, n_whole);
  read_end();
  return r;
}

static json_object *w_read_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, po_CtlStatus *st) {
  Fake *fx = ctx;
  read_begin();
  json_object *o = fx->io.read_target(ctx, kind, ns, name, st);
  read_end();
  return o;
}

static po_ReconcileIO io(Fake *fx) {
  po_ReconcileIO w = fx->io;
  w.sync = g_sync;
  w.get_override = w_get_override;
  w.get_target = w_get_target;
  w.release = w_release;
  w.write_target = w_write_target;
  w.update_target = w_update_target;
  w.patch_override = w_patch_override;
  w.get_filter = w_get_filter;
  w.write_filter = w_write_filter;
  w.get_policy = w_get_policy;
  w.write_policy = w_write_policy;
  w.gateway_routes = w_gateway_routes;
  w.read_target = w_read_target;
  w.event = NULL; /* best effort, and the fake's events only count */
  w.target_event = NULL;
  return w;
}

/* ---- the reconcile under it ---- */

static const char *kPatch = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]";

static void apply(Fake *fx, const char *name, int gen, int value) {
  char patches[512];
  snprintf(patches, sizeof patches, kPatch, value);
  apply_override(fx, name, gen, "web", patches);
}

/* 1: met the failure and said so; 2: met it and said nothing; 4: met it in a read, which ended the
 * reconcile as out of memory; 5: met it in a read, and the reconcile went on (as if absent). */
static long g_read_runs; /* torture: runs whose failed allocation was in a read (kExitReadOom) */

/* Which of our entries a written target holds: 1 a at generation 2, 2 b, 4 c. */
static int entries_held(json_object *obj) {
  int seen = 0;
  json_object *list = get(get(obj, "spec"), "envoyExtensions");
  for (size_t i = 0; obj && list && i < json_object_array_length(list); i++) {
    json_object *m = get(get(json_object_array_get_idx(list, i), "arguments"), "PropertyOverride");
    const char *n = json_object_get_string(get(m, "name"));
    if (!n) continue;
    if (!strcmp(n, "a") && json_object_get_int(get(m, "generation")) == 2) seen |= 1;
    if (!strcmp(n, "b")) seen |= 2;
    if (!strcmp(n, "c")) seen |= 4;
  }
  return seen;
}

/* Every write of the target must hold our entries for a, b and c, with a at generation 2. */
static void check_write(Fake *fx, json_object *obj) {
  (void)fx;
  if (entries_held(obj) != 7) _exit(kExitPartialWrite);
  /* under require, never a write without its record (Programmed would judge the wrong one) */
  if (g_sync && obj && !get(get(get(obj, "metadata"), "annotations"), "propertyoverride.io/written")) _exit(kExitPartialWrite);
}

/* The same for a target of a and b alone: both held, a at generation 2. */
static void check_write_ab(Fake *fx, json_object *obj) {
  (void)fx;
  assert_int_equal(entries_held(obj) & 3, 3);
}

static void test_no_partial_write_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  /* a and b live in the target; then a changes and c arrives: the write must carry all three */
  apply(fx, "a", 1, 10);
  apply(fx, "b", 1, 20);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  apply(fx, "a", 2, 11);
  apply(fx, "c", 1, 30);
  fx->check_write = check_write;
  long n, errors = 0, clean = 0;
  for (n = 1; n < 200000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      po_ReconcileIO w = io(fx);
      arm(n);
      po_ReconcileResult r = po_Reconcile(&w, fx->ix, "ServiceDefaults/default/web");
      long reached = g_count;
      disarm();
      /* exit codes: 0 ran through without meeting the failure; 1 met it and said so */
      _exit(reached < n ? kExitOk : r.ok && !r.out_of_memory ? 2 : 1);
    }
    int code = fail_alloc_wait(pid);
    assert_true(code >= -1);
    if (code == -1) crashed(n);
    if (code == kExitPartialWrite) {
      printf("allocation %ld failed: a target was written without one of our entries\n", n);
      fail();
    }
    if (code == kExitOk) {
      clean++;
      break; /* every allocation of the reconcile has been failed once */
    }
    errors++;
  }
  printf("reconcile: %ld allocations failed one at a time: %ld reported an error, none crashed, "
         "0 wrote a partial target\n",
         n - 1, errors);
  assert_int_equal(clean, 1);
  assert_true(n > 100); /* the scenario did allocate */
  /* and unarmed it converges */
  po_ReconcileIO fin = fx->io;
  fin.sync = g_sync;
  assert_true(po_Reconcile(&fin, fx->ix, "ServiceDefaults/default/web").ok);
}

/* The reconcile of `key`, run with its Nth allocation failing for every N until one runs
 * through (each in a child, so that a crash is seen); check_write sees every write and exits
 * kExitPartialWrite on a bad one. Returns the allocations failed; *errors counts the runs that
 * reported an error; a crash fails the test. */
static long torture(Fake *fx, const char *key, void (*check)(Fake *, json_object *), long *errors) {
  fx->check_write = check;
  long n, clean = 0;
  *errors = 0;
  g_read_runs = 0;
  for (n = 1; n < 200000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      po_ReconcileIO w = io(fx);
      int unread = fx->unreadable_reads;
      arm(n);
      po_ReconcileResult r = po_Reconcile(&w, fx->ix, key);
      long reached = g_count;
      disarm();
      if (reached >= n && fx->unreadable_reads > unread) _exit(r.out_of_memory ? kExitReadOom : kExitReadIgnored);
      _exit(reached < n ? kExitOk : r.ok && !r.out_of_memory ? 2 : 1);
    }
    int code = fail_alloc_wait(pid);
    assert_true(code >= -1);
    if (code == -1) crashed(n);
    if (code == kExitPartialWrite) {
      printf("allocation %ld failed: %s: an object was deleted or written with the wrong content\n", n, key);
      fail();
    }
    if (code == kExitReadIgnored) {
      printf("allocation %ld failed in a read: %s: the reconcile did not end as out of memory\n", n, key);
      fail();
    }
    if (code == kExitReadOom) g_read_runs++;
    if (code == kExitOk) {
      clean++;
      break;
    }
    (*errors)++;
  }
  fx->check_write = NULL;
  assert_int_equal(clean, 1);
  assert_true(n > 50);
  return n - 1;
}

/* Istio: a PropertyOverride of Service web (its EnvoyFilter holds generation 1, value 10) turns
 * invalid while another one arrives. Whatever allocation fails, an EnvoyFilter is never deleted
 * nor written with anything but its valid generation (a's value 10, b's 20), always with the
 * Service's selector. */
static void istio_po(Fake *fx, const char *name, int gen, int value) {
  char text[1024], k[300], key[300], old[300];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":%d,\"uid\":\"uid-po-%s\"},"
           "\"spec\":{\"targetRef\":{\"group\":\"\",\"kind\":\"Service\",\"name\":\"web\"},\"patches\":"
           "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]}}",
           name, gen, name, value);
  json_object *o = json_tokener_parse(text);
  snprintf(k, sizeof k, "po/default/%s", name);
  Slot *sl = slot(fx, k, false);
  if (sl) {
    json_object *fin = get(get(sl->obj, "metadata"), "finalizers"), *st = get(sl->obj, "status");
    if (fin) json_object_object_add(get(o, "metadata"), "finalizers", copy(fin));
    if (st) json_object_object_add(o, "status", copy(st));
  }
  put(fx, k, o);
  po_Reconcile_OverrideKey(o, key, sizeof key);
  po_TargetIndex_Set(fx->ix, "default", name, key, old, sizeof old);
}

static void check_filter_write(Fake *fx, json_object *obj) {
  (void)fx;
  if (!obj) _exit(kExitPartialWrite); /* nothing here may be deleted */
  const char *name = json_object_get_string(get(get(obj, "metadata"), "name"));
  json_object *cp = json_object_array_get_idx(get(get(obj, "spec"), "configPatches"), 0);
  int v = json_object_get_int(get(get(get(get(cp, "patch"), "value"), "outlier_detection"), "max_ejection_percent"));
  int want = name && !strcmp(name, "propertyoverride-a") ? 10 : 20;
  if (v != want || !get(get(get(obj, "spec"), "workloadSelector"), "labels")) _exit(kExitPartialWrite);
}

static void test_istio_no_bad_write_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  put(fx, "Service/default/web", json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":"
                                                "{\"name\":\"web\",\"namespace\":\"default\"},"
                                                "\"spec\":{\"selector\":{\"app\":\"web\"}}}"));
  istio_po(fx, "a", 1, 10);
  assert_true(po_Reconcile(&fx->io, fx->ix, "Service/default/web").ok);
  assert_non_null(slot(fx, "EnvoyFilter/default/propertyoverride-a", false));
  istio_po(fx, "a", 2, 150); /* invalid: the last good one stays */
  istio_po(fx, "b", 1, 20);
  long errors, n = torture(fx, "Service/default/web", check_filter_write, &errors);
  printf("istio reconcile%s: %ld allocations failed one at a time: %ld reported an error (%ld in a read), none crashed, "
         "0 bad EnvoyFilter writes\n", g_reads_fail ? ", reads failing too" : "", n, errors, g_read_runs);
  assert_true(po_Reconcile(&fx->io, fx->ix, "Service/default/web").ok);
  assert_non_null(slot(fx, "EnvoyFilter/default/propertyoverride-b", false));
}

/* Envoy Gateway: the same over a Gateway's EnvoyPatchPolicies (a's holds generation 1, value 10;
 * a turns invalid while b arrives): never deleted, never written with anything but a valid
 * generation's value, always with the HTTPRoute's cluster name. */
static void eg_po(Fake *fx, const char *name, int gen, int value) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
           "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":%d,\"uid\":\"uid-po-%s\"},"
           "\"spec\":{\"targetRef\":{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"eg\"},"
           "\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]}}",
           name, gen, name, value);
  store_override(fx, "default", name, json_tokener_parse(text));
}

static void check_policy_write(Fake *fx, json_object *obj) {
  (void)fx;
  if (!obj) _exit(kExitPartialWrite);
  const char *name = json_object_get_string(get(get(obj, "metadata"), "name"));
  json_object *all = get(get(obj, "spec"), "jsonPatches");
  /* a create goes out with no patches (its answer is parsed: eg_write.c, .bulky), and only the
   * binding update that follows, which names its uid, carries them */
  if (json_object_array_length(all) == 0 && !get(get(get(obj, "metadata"), "annotations"), "propertyoverride.io/created")) return;
  json_object *jp = json_object_array_get_idx(all, 0);
  int want = name && !strcmp(name, "propertyoverride-a") ? 10 : 20;
  const char *cluster = json_object_get_string(get(jp, "name"));
  if (json_object_get_int(get(get(jp, "operation"), "value")) != want || !cluster ||
      strcmp(cluster, "httproute/default/api/rule/0") != 0) {
    _exit(kExitPartialWrite);
  }
}

/* Gateway default/eg with one HTTP listener, and HTTPRoute default/api attached to it. */
static void put_gateway(Fake *fx) {
  put(fx, "Gateway/default/eg",
      json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"Gateway\",\"metadata\":{\"name\":"
                         "\"eg\",\"namespace\":\"default\"},\"spec\":{\"listeners\":[{\"name\":\"http\",\"protocol\":"
                         "\"HTTP\",\"port\":80}]}}"));
  put(fx, "HTTPRoute/default/api",
      json_tokener_parse("{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":\"HTTPRoute\",\"metadata\":{\"name\":"
                         "\"api\",\"namespace\":\"default\"},\"spec\":{\"parentRefs\":[{\"name\":\"eg\"}],\"rules\":"
                         "[{\"backendRefs\":[{\"name\":\"web\",\"port\":80}]}]}}"));
}

static void test_eg_no_bad_write_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  put_gateway(fx);
  eg_po(fx, "a", 1, 10);
  assert_true(po_Reconcile(&fx->io, fx->ix, "Gateway/default/eg").ok);
  assert_non_null(slot(fx, "EnvoyPatchPolicy/default/propertyoverride-a", false));
  eg_po(fx, "a", 2, 150); /* invalid: the last good one stays */
  eg_po(fx, "b", 1, 20);
  long errors, n = torture(fx, "Gateway/default/eg", check_policy_write, &errors);
  printf("envoy gateway reconcile%s: %ld allocations failed one at a time: %ld reported an error (%ld in a read), "
         "none crashed, 0 bad EnvoyPatchPolicy writes\n", g_reads_fail ? ", reads failing too" : "", n, errors, g_read_runs);
  assert_true(po_Reconcile(&fx->io, fx->ix, "Gateway/default/eg").ok);
  assert_non_null(slot(fx, "EnvoyPatchPolicy/default/propertyoverride-b", false));
}

/* ---- reads that fail: an object cached but not readable is never an absent one ---- */

/* a and b live in ServiceDefaults web; then a and b change and c arrives, so each is read (none is
 * learnt from the index's memo). Whatever allocation fails, the reads' own included (the fake's
 * copy for a reader stands for the cache's decompression and parse): every write of the target
 * holds a at generation 2, b and c (check_write), and a run whose failure was in a read ends as
 * out of memory (torture: kExitReadIgnored otherwise). */
static void test_no_partial_write_when_reads_fail(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 10);
  apply(fx, "b", 1, 20);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  apply(fx, "a", 2, 11);
  apply(fx, "b", 2, 21);
  apply(fx, "c", 1, 30);
  g_reads_fail = true;
  long errors, n = torture(fx, "ServiceDefaults/default/web", check_write, &errors);
  g_reads_fail = false;
  printf("reconcile, reads failing too: %ld allocations failed one at a time: %ld reported an error (%ld of them in "
         "a read, each ended as out of memory), none crashed, 0 wrote a partial target\n",
         n, errors, g_read_runs);
  assert_true(g_read_runs >= 3); /* a's, b's and c's reads at least */
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
}

/* What the fake counts of writes: none may change while a read failed. */
typedef struct {
  int attempts, target_writes, status_patches, override_patches, events;
} Writes;
static Writes writes_of(const Fake *fx) {
  return (Writes){fx->attempts, fx->target_writes, fx->status_patches, fx->override_patches, fx->events};
}

/* The reconcile of key with fx->unreadable set: it ends as out of memory (retried with backoff),
 * its error naming the object, and writes nothing: no target, no status, no finalizer, no Event. */
static void reconcile_unreadable(Fake *fx, const char *key, const char *unreadable) {
  Writes before = writes_of(fx);
  int reads = fx->unreadable_reads;
  fx->unreadable = unreadable;
  po_ReconcileResult r = po_Reconcile(&fx->io, fx->ix, key);
  fx->unreadable = NULL;
  printf("%s with %s unreadable: %s\n", key, unreadable, r.error);
  assert_true(fx->unreadable_reads > reads); /* it was read */
  assert_false(r.ok);
  assert_true(r.out_of_memory);
  assert_int_equal(r.result.kind, kPo_Result_Error);
  assert_non_null(strstr(r.error, unreadable));
  Writes after = writes_of(fx);
  assert_memory_equal(&after, &before, sizeof before);
}

/* a and b live; both change: b unreadable leaves the target as it is (before: written with a's
 * entry alone, b's live one dropped). */
static void test_unreadable_override_is_not_absent(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 10);
  apply(fx, "b", 1, 20);
  assert_true(reconcile_key(fx, "ServiceDefaults/default/web").ok);
  apply(fx, "a", 2, 11);
  apply(fx, "b", 2, 21);
  reconcile_unreadable(fx, "ServiceDefaults/default/web", "po/default/b");
  fx->check_write = check_write_ab;
  assert_true(reconcile_key(fx, "ServiceDefaults/default/web").ok);
  fx->check_write = NULL;
  assert_true(fx->target_writes > 0);
}

/* The target unreadable is not a missing one: nothing is created over it (before: a create,
 * refused as AlreadyExists, and the statuses written as a conflict). */
static void test_unreadable_target_is_not_absent(void **state) {
  Fake *fx = *state;
  fx->no_digest = true; /* read from its object (from its digest it is not read at all: below) */
  apply(fx, "a", 1, 10);
  assert_true(reconcile_key(fx, "ServiceDefaults/default/web").ok);
  apply(fx, "a", 2, 11);
  reconcile_unreadable(fx, "ServiceDefaults/default/web", "ServiceDefaults/default/web");
  assert_true(reconcile_key(fx, "ServiceDefaults/default/web").ok);
  /* From the digest of the version the cache holds: the object is never read, its text unreadable or not. */
  fx->no_digest = false;
  apply(fx, "a", 3, 12);
  int reads = fx->unreadable_reads;
  fx->unreadable = "ServiceDefaults/default/web";
  po_ReconcileResult r = po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web");
  fx->unreadable = NULL;
  assert_true(r.ok && r.from_digest && !r.digest_object);
  assert_int_equal(fx->unreadable_reads, reads);
  assert_int_equal(fx->digest_patches, 1);
}

/* An EnvoyFilter, an EnvoyPatchPolicy unreadable: not created over (before: a create attempt). */
static void test_unreadable_mesh_object_is_not_absent(void **state) {
  Fake *fx = *state;
  put(fx, "Service/default/web", json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":"
                                                "{\"name\":\"web\",\"namespace\":\"default\"},"
                                                "\"spec\":{\"selector\":{\"app\":\"web\"}}}"));
  istio_po(fx, "a", 1, 10);
  assert_true(reconcile_key(fx, "Service/default/web").ok);
  istio_po(fx, "a", 2, 11);
  reconcile_unreadable(fx, "Service/default/web", "EnvoyFilter/default/propertyoverride-a");
  istio_po(fx, "a", 3, 12); /* read at the load again (the last reconcile memoised generation 2) */
  reconcile_unreadable(fx, "Service/default/web", "po/default/a");
  assert_true(reconcile_key(fx, "Service/default/web").ok);
  put_gateway(fx);
  eg_po(fx, "e", 1, 10);
  assert_true(reconcile_key(fx, "Gateway/default/eg").ok);
  assert_non_null(slot(fx, "EnvoyPatchPolicy/default/propertyoverride-e", false));
  eg_po(fx, "e", 2, 11);
  reconcile_unreadable(fx, "Gateway/default/eg", "EnvoyPatchPolicy/default/propertyoverride-e");
  reconcile_unreadable(fx, "Gateway/default/eg", "Gateway/default/eg");
  assert_true(reconcile_key(fx, "Gateway/default/eg").ok);
}

/* The Programmed reason in the stored status of PropertyOverride ns/name ("" when none). */
static const char *programmed_reason(Fake *fx, const char *key) {
  json_object *conds = get(get(slot(fx, key, false)->obj, "status"), "conditions");
  for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
    json_object *c = json_object_array_get_idx(conds, i);
    if (!strcmp(json_object_get_string(get(c, "type")), "Programmed")) return json_object_get_string(get(c, "reason"));
  }
  return "";
}

/* A peer across kinds (the ProxyDefaults' tune, which a's status names as overlapping) unreadable
 * while a's status must be written again: a's target is written (read before), and then no status
 * at all (before: a's status written without the overlap, Programmed, a wrong answer). */
static void test_unreadable_peer_writes_no_status(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 20);
  put(fx, "po/mesh/tune", json_tokener_parse(
      "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":"
      "\"tune\",\"namespace\":\"mesh\",\"generation\":1,\"uid\":\"uid-tune\"},\"spec\":{\"targetRef\":{\"kind\":"
      "\"ProxyDefaults\",\"name\":\"global\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":"
      "\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/outlier_detection/"
      "max_ejection_percent\",\"value\":30}]}}"));
  char old[300];
  assert_true(po_TargetIndex_Set(fx->ix, "mesh", "tune", "ProxyDefaults/mesh/global", old, sizeof old));
  assert_true(reconcile_key(fx, "ProxyDefaults/mesh/global").ok);
  assert_true(reconcile_key(fx, "ServiceDefaults/default/web").ok);
  assert_string_equal(programmed_reason(fx, "po/default/a"), "Overlapping");
  apply(fx, "a", 2, 21);
  int statuses = fx->status_patches, reads = fx->unreadable_reads;
  fx->unreadable = "po/mesh/tune";
  po_ReconcileResult r = po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web");
  fx->unreadable = NULL;
  printf("ServiceDefaults/default/web with its peer po/mesh/tune unreadable: %s\n", r.error);
  assert_true(fx->unreadable_reads > reads);
  assert_true(r.out_of_memory);
  assert_non_null(strstr(r.error, "po/mesh/tune"));
  assert_int_equal(fx->status_patches, statuses);
  assert_string_equal(programmed_reason(fx, "po/default/a"), "Overlapping");
  assert_true(reconcile_key(fx, "ServiceDefaults/default/web").ok);
  assert_string_equal(programmed_reason(fx, "po/default/a"), "Overlapping");
}

/* adv25: two PropertyOverrides setting one field to the same value do not overlap; the effects
 * compared (op and value as JSON) are made when the comparison first needs them (overlap.c,
 * effect). An allocation of one that fails reads as different, so the sentence may name an
 * overlap that is none: no status may be written from it (po_OverlapIndex_OutOfMemory). Every
 * allocation of the reconcile fails in turn; none may leave a or b said Overlapping. */
enum { kExitFalseOverlap = 12 };
static void test_same_value_peers_never_said_overlapping_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 20);
  apply(fx, "b", 1, 20);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  assert_string_equal(programmed_reason(fx, "po/default/a"), "Programmed");
  assert_string_equal(programmed_reason(fx, "po/default/b"), "Programmed");
  apply(fx, "a", 2, 20); /* a's status is due again (its generation), its effect the same */
  long n, errors = 0, clean = 0;
  for (n = 1; n < 200000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      po_ReconcileIO w = io(fx);
      arm(n);
      po_ReconcileResult r = po_Reconcile(&w, fx->ix, "ServiceDefaults/default/web");
      long reached = g_count;
      disarm();
      if (strcmp(programmed_reason(fx, "po/default/a"), "Programmed") ||
          strcmp(programmed_reason(fx, "po/default/b"), "Programmed")) {
        fprintf(stderr, "allocation %ld: %s; a %s, b %s\n", n, r.error, programmed_reason(fx, "po/default/a"),
                programmed_reason(fx, "po/default/b"));
        _exit(kExitFalseOverlap);
      }
      _exit(reached < n ? kExitOk : r.ok && !r.out_of_memory ? 2 : 1);
    }
    int code = fail_alloc_wait(pid);
    assert_true(code >= -1);
    if (code == kExitFalseOverlap) fail_msg("allocation %ld failed: a status said Overlapping for peers setting the same value", n);
    if (code == -1) crashed(n);
    if (code == kExitOk) {
      clean++;
      break;
    }
    errors++;
  }
  printf("same-value peers: %ld allocations failed one at a time: %ld reported an error, none crashed, none said "
         "Overlapping\n", n - 1, errors);
  assert_int_equal(clean, 1);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  assert_string_equal(programmed_reason(fx, "po/default/a"), "Programmed");
}

/* adv-walk20: an allocation that fails while the target's entries are read (the first read, made
 * to size the run's items for PropertyOverrides the index missed) ends the reconcile before any
 * write, as every failure of the load does ("Nothing is written after memory ran out", run.c). b
 * is bound to web but unlisted (an index update that failed): a reconcile that went on would find
 * it through its entry and add its item to a table sized without room for it. */
enum { kExitWentOnAfterLoadOom = 8 };
static void check_write_ab_exit(Fake *fx, json_object *obj) {
  (void)fx;
  if ((entries_held(obj) & 3) != 3) _exit(kExitPartialWrite);
}
static void test_unlisted_entry_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 10);
  apply(fx, "b", 1, 20);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  char old[300];
  assert_true(po_TargetIndex_Remove(fx->ix, "default", "b", old, sizeof old)); /* as if its Set had failed */
  apply(fx, "a", 2, 11); /* a write is due */
  fx->check_write = check_write_ab_exit;
  long n, errors = 0, clean = 0;
  for (n = 1; n < 200000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      po_ReconcileIO w = io(fx);
      int writes = fx->target_writes + fx->status_patches + fx->override_patches;
      g_reads_after_failure = 0;
      arm(n);
      po_ReconcileResult r = po_Reconcile(&w, fx->ix, "ServiceDefaults/default/web");
      long reached = g_count;
      disarm();
      /* one allocation fails, so the reconcile's first error is that one's */
      if (reached >= n && !strcmp(r.error, "out of memory: reading the target's entries") &&
          (g_reads_after_failure || fx->target_writes + fx->status_patches + fx->override_patches != writes)) {
        fprintf(stderr, "allocation %ld: %s, and the reconcile went on: %ld reads, %d writes after it\n", n, r.error,
                g_reads_after_failure, fx->target_writes + fx->status_patches + fx->override_patches - writes);
        _exit(kExitWentOnAfterLoadOom);
      }
      _exit(reached < n ? kExitOk : r.ok && !r.out_of_memory ? 2 : 1);
    }
    int code = fail_alloc_wait(pid);
    assert_true(code >= -1);
    if (code == kExitPartialWrite) fail_msg("allocation %ld failed: a target was written without a or b", n);
    if (code == kExitWentOnAfterLoadOom) fail_msg("allocation %ld failed reading the target's entries: the reconcile went on", n);
    if (code == -1) crashed(n);
    if (code == kExitOk) {
      clean++;
      break;
    }
    errors++;
  }
  printf("unlisted entry: %ld allocations failed one at a time: %ld reported an error, none crashed, 0 went on after "
         "a failed read of its entries\n", n - 1, errors);
  assert_int_equal(clean, 1);
  fx->check_write = NULL;
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
}

/* adv-walk20: po_Json_Parse (compiled.c: an entry's arguments made again for the target's write,
 * `marked` in consul_reconcile.c) with each of its allocations failing in turn returns NULL, never
 * crashes: json_tokener_free(NULL) dereferences its argument (json-c 0.16), so a tokener that
 * could not be made must not be freed. */
static void test_json_parse_at_any_failed_allocation(void **state) {
  (void)state;
  static const char kText[] = "{\"Patches\":[{\"Op\":\"add\",\"Value\":40}],\"ProxyType\":\"connect-proxy\"}";
  long n, failed = 0;
  for (n = 1; n < 10000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      arm(n);
      json_object *o = po_Json_Parse(kText, sizeof kText - 1);
      long reached = g_count;
      disarm();
      if (reached < n) _exit(o && json_object_is_type(o, json_type_object) ? 0 : 3); /* ran through: parsed */
      json_object_put(o);
      _exit(1);
    }
    int code = fail_alloc_wait(pid);
    if (code == -1) fail_msg("allocation %ld of po_Json_Parse failed: the process crashed", n);
    assert_int_not_equal(code, 3);
    if (code == 0) break;
    failed++;
  }
  printf("po_Json_Parse: %ld allocations failed one at a time, none crashed\n", failed);
  assert_true(failed > 0);
}

static void test_index_update_whole_or_reported(void **state) {
  Fake *fx = *state;
  char old[300], names[4][254];
  assert_true(po_TargetIndex_Set(fx->ix, "default", "a", "ServiceDefaults/default/web", old, sizeof old));
  long failures = 0;
  for (long n = 1;; n++) {
    arm(n);
    bool ok = po_TargetIndex_Set(fx->ix, "default", "b", "ServiceDefaults/default/web", old, sizeof old);
    bool held = ok && po_TargetIndex_SetHeld(fx->ix, "default", "b", "ServiceDefaults/default/api", old, sizeof old);
    long reached = g_count;
    disarm();
    size_t k = po_TargetIndex_Lookup(fx->ix, "ServiceDefaults/default/web", names, 4);
    size_t h = po_TargetIndex_Lookup(fx->ix, "ServiceDefaults/default/api", names, 4);
    assert_int_equal(k, ok ? 2 : 1); /* listed exactly when Set said so */
    assert_int_equal(h, held ? 1 : 0);
    if (reached < n) break;
    failures++;
    po_TargetIndex_Remove(fx->ix, "default", "b", old, sizeof old);
  }
  assert_true(failures >= 2);
}

/* The same under require: the write record goes into the object written, and a failure there
 * writes nothing (never a target without the record, nor one without an entry). */
static void test_no_partial_write_under_sync_require(void **state) {
  static const po_SyncPolicy require = {.mode = kPo_SyncMode_Require, .timeout_s = 120};
  g_sync = &require;
  test_no_partial_write_at_any_failed_allocation(state);
  g_sync = NULL;
}

/* The Istio and Envoy Gateway sweeps again, the reads' own allocations failing too: an EnvoyFilter,
 * an EnvoyPatchPolicy, a PropertyOverride, the Service, the Gateway or an HTTPRoute not read ends
 * the reconcile as out of memory, never as absent (nothing created over it, nothing written
 * without it). */
static void test_istio_reads_fail(void **state) {
  g_reads_fail = true;
  test_istio_no_bad_write_at_any_failed_allocation(state);
  g_reads_fail = false;
  assert_true(g_read_runs >= 3);
}
static void test_eg_reads_fail(void **state) {
  g_reads_fail = true;
  test_eg_no_bad_write_at_any_failed_allocation(state);
  g_reads_fail = false;
  assert_true(g_read_runs >= 3);
}

/* adv-guard: the live read before a finalizer goes (release_guard), its copy under the failing
 * allocator too when reads fail: the server still holds b's entry (its update applied, the
 * answer lost, the cache behind it), so whichever allocation fails b's finalizer stays, and the
 * run that meets none keeps it as a conflict. */
static void guard_torture(Fake *fx, long *runs, long *errors) {
  *errors = 0;
  long n;
  for (n = 1; n < 200000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      po_ReconcileIO w = io(fx);
      int reads = fx->live_reads;
      arm(n);
      po_ReconcileResult r = po_Reconcile(&w, fx->ix, "ServiceDefaults/default/web");
      long reached = g_count;
      disarm();
      if (!slot(fx, "po/default/b", false)) _exit(kExitPartialWrite); /* released over its entry */
      if (reached < n) _exit(!r.ok && r.conflict && fx->live_reads == reads + 1 ? kExitOk : 6);
      _exit(r.ok ? 2 : 1);
    }
    int code = fail_alloc_wait(pid);
    assert_true(code >= -1);
    if (code == -1) crashed(n);
    if (code == kExitPartialWrite) fail_msg("allocation %ld failed: b's finalizer went while the server holds its entry", n);
    assert_int_not_equal(code, 6); /* the clean run asked the server once and kept the finalizer */
    assert_int_not_equal(code, 2); /* a failure met and not said */
    if (code == kExitOk) break;
    (*errors)++;
  }
  *runs = n - 1;
}

static void test_release_guard_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 10);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  apply(fx, "b", 1, 20);
  fx->target_lags = fx->answer_lost = true;
  assert_false(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  fx->target_lags = fx->answer_lost = false;
  json_object *b = slot(fx, "po/default/b", false)->obj;
  json_object_object_add(get(b, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  bump(fx, b);
  for (int reads_fail = 0; reads_fail < 2; reads_fail++) {
    g_reads_fail = reads_fail;
    long runs, errors;
    guard_torture(fx, &runs, &errors);
    g_reads_fail = false;
    printf("release guard%s: %ld allocations failed one at a time: %ld reported an error, none crashed, "
           "0 released the finalizer\n", reads_fail ? ", reads failing too" : "", runs, errors);
    assert_true(runs > 50);
  }
  assert_false(fake_deliver_echo(fx)); /* and once the cache holds the entry, it goes, then the finalizer */
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  assert_null(slot(fx, "po/default/b", false));
}

/* h-move: a moved from web to api (recorded: the index no longer lists it under web), then
 * deleted before web's reconcile removed the old entry. api's reconcile, each allocation failing
 * in turn: a's finalizer never goes while web holds its entry, and the run that meets no failure
 * keeps it as a conflict, waiting for web. */
static void test_moved_then_deleted_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  char patches[512];
  apply(fx, "a", 1, 10);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  snprintf(patches, sizeof patches, kPatch, 20);
  apply_override(fx, "a", 2, "api", patches);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/api").ok);
  apply_override(fx, "a", 2, "api", patches); /* the status write's event: web no longer lists a */
  json_object *a = slot(fx, "po/default/a", false)->obj;
  json_object_object_add(get(a, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  bump(fx, a);
  long n, errors = 0;
  for (n = 1; n < 200000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      po_ReconcileIO w = io(fx);
      arm(n);
      po_ReconcileResult r = po_Reconcile(&w, fx->ix, "ServiceDefaults/default/api");
      long reached = g_count;
      disarm();
      if (!slot(fx, "po/default/a", false)) _exit(kExitPartialWrite); /* released over web's entry */
      if (reached < n) _exit(!r.ok && r.conflict && strstr(r.error, "ServiceDefaults/default/web") ? kExitOk : 6);
      _exit(r.ok ? 2 : 1);
    }
    int code = fail_alloc_wait(pid);
    assert_true(code >= -1);
    if (code == -1) crashed(n);
    if (code == kExitPartialWrite) fail_msg("allocation %ld failed: a's finalizer went while web holds its entry", n);
    assert_int_not_equal(code, 6); /* the clean run kept the finalizer, waiting for web */
    assert_int_not_equal(code, 2); /* a failure met and not said */
    if (code == kExitOk) break;
    errors++;
  }
  printf("moved then deleted: %ld allocations failed one at a time: %ld reported an error, none crashed, "
         "0 released the finalizer\n", n - 1, errors);
  assert_true(n - 1 > 50);
  /* web's reconcile removes the entry, then the release goes */
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/api").ok);
  assert_null(slot(fx, "po/default/a", false));
}

/* adv-s14: the same after a restart, the new index learning from the targets as listed, and
 * web's note (its event: po_TargetIndex_NoteTargetEntries) meeting each failed allocation in
 * turn. A note that fails is said and web is queued (events.c), but nothing runs web's reconcile
 * before api's: a's release must still wait, never go while web holds its entry. */
static void test_restart_note_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  char patches[512];
  apply(fx, "a", 1, 10);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  snprintf(patches, sizeof patches, kPatch, 20);
  apply_override(fx, "a", 2, "api", patches);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/api").ok);
  apply_override(fx, "a", 2, "api", patches);
  json_object *a = slot(fx, "po/default/a", false)->obj;
  json_object_object_add(get(a, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  bump(fx, a);
  long n, failed = 0;
  for (n = 1; n < 100000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      /* the restart: a fresh index, the PropertyOverride and the targets as listed */
      po_TargetIndex_Free(fx->ix);
      fx->ix = po_TargetIndex_New();
      store_override(fx, "default", "a", copy(slot(fx, "po/default/a", false)->obj));
      arm(n);
      bool noted = po_TargetIndex_NoteTargetEntries(fx->ix, "ServiceDefaults/default/web", slot(fx, "ServiceDefaults/default/web", false)->obj);
      long reached = g_count;
      disarm();
      assert_true(po_TargetIndex_NoteTargetEntries(fx->ix, "ServiceDefaults/default/api", slot(fx, "ServiceDefaults/default/api", false)->obj));
      po_ReconcileResult r = po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/api");
      if (!slot(fx, "po/default/a", false)) _exit(kExitPartialWrite); /* released over web's entry */
      if (reached < n) _exit(noted && !r.ok && r.conflict ? kExitOk : 6);
      if (noted) _exit(2); /* a failure met and not said */
      /* web's reconcile (queued by the event handler) notes what it holds and removes the entry:
       * then the release goes (the unknown target holds it no longer) */
      po_ReconcileResult rw = po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web");
      if (!rw.ok) fprintf(stderr, "web: %s\n", rw.error), _exit(7);
      rw = po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/api");
      if (!rw.ok || slot(fx, "po/default/a", false)) fprintf(stderr, "api: %s\n", rw.error), _exit(7);
      _exit(1);
    }
    int code = fail_alloc_wait(pid);
    assert_true(code >= 0);
    if (code == kExitPartialWrite) fail_msg("allocation %ld of web's note failed: a's finalizer went while web holds its entry", n);
    assert_int_not_equal(code, 6);
    assert_int_not_equal(code, 2);
    assert_int_not_equal(code, 7); /* held for good */
    if (code == kExitOk) break;
    failed++;
  }
  printf("restart, web's note: %ld allocations failed one at a time, 0 released the finalizer\n", failed);
  assert_true(failed > 0);
}


/* ---- a target read from its digest, under failed allocations ---- */

/* The digest the index keeps for key, if any for the cached version, against the object: true when
 * none is kept or it says what po_ConsulDigest_Slot reads of each element (and our hashes). */
static bool digest_matches(Fake *fx, const char *key) {
  Slot *s = slot(fx, key, false);
  if (!s || !s->obj) return true;
  const char *uid = po_Json_Meta(s->obj, "uid"), *rv = po_Json_Meta(s->obj, "resourceVersion");
  po_Arena *a = po_Arena_New();
  po_TargetDigest d;
  bool ok = true;
  if (po_TargetIndex_Digest(fx->ix, key, uid, rv, a, &d)) {
    json_object *list = get(get(s->obj, "spec"), "envoyExtensions");
    po_TargetDigest want = {0};
    po_ConsulDigest_Meta(s->obj, &want);
    ok = d.created == want.created && d.managed == want.managed && d.spec_other == want.spec_other && d.list == want.list &&
         d.n == (list ? json_object_array_length(list) : 0);
    for (size_t i = 0; ok && i < d.n; i++) {
      json_object *e = json_object_array_get_idx(list, i);
      po_TargetSlot x;
      po_ConsulDigest_Slot(e, uid, &x);
      const po_TargetSlot *y = &d.slots[i];
      ok = y->mark == x.mark && y->ext == x.ext && y->patches == x.patches;
      if (ok && x.mark == kPo_Slot_Bound)
        ok = y->exact == x.exact && y->required == x.required && y->priority == x.priority && y->generation == x.generation &&
             !strcmp(y->owner, x.owner) && !strcmp(y->uid, x.uid) && !strcmp(y->ns, x.ns) &&
             po_JsonHash_Equal(y->hash, po_Json_HashExcept(get(e, "arguments"), "PropertyOverride"));
    }
  }
  po_Arena_Free(a);
  return ok;
}

static int g_adv_phase; /* 0: the armed reconcile, 1..3: the unarmed ones after it */
enum { kExitNotFromDigest = 9, kExitNotConverged = 10, kExitBadDigest = 11 };

/* Each allocation of a reconcile from the digest failed in turn; after each, unarmed reconciles
 * converge to `want` (entries_held) and any digest kept describes the object. */
static void digest_torture(Fake *fx, const char *key, int want, bool need_object) {
  /* unarmed, the reconcile reads the digest (need_object: and then the object) */
  pid_t pid = fail_alloc_fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    po_ReconcileIO w = io(fx);
    po_ReconcileResult r = po_Reconcile(&w, fx->ix, key);
    _exit(r.ok && (fx->no_digest ? !r.from_digest : r.from_digest && r.digest_object == need_object) ? 0 : kExitNotFromDigest);
  }
  assert_int_equal(fail_alloc_wait(pid), 0);
  long n, errors = 0;
  for (n = 1; n < 200000; n++) {
    pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      po_ReconcileIO w = io(fx);
      g_adv_phase = 0;
      arm(n);
      po_ReconcileResult r1 = po_Reconcile(&w, fx->ix, key);
      long reached = g_count;
      disarm();
      if (getenv("PO_ADV_DEBUG") && reached >= n) fprintf(stderr, "digest: n %ld armed: ok %d oom %d (%s)\n", n, r1.ok, r1.out_of_memory, r1.error);
      disarm();
      if (reached < n) _exit(kExitOk);
      for (int i = 0; i < 3; i++) {
        g_adv_phase = i + 1;
        po_ReconcileResult r2 = po_Reconcile(&w, fx->ix, key);
        if (getenv("PO_ADV_DEBUG")) fprintf(stderr, "digest: n %ld, after: reconcile %d ok %d (%s)\n", n, i + 1, r2.ok, r2.error);
      }
      if (entries_held(slot_obj(fx, key)) != want) _exit(kExitNotConverged);
      if (!digest_matches(fx, key)) _exit(kExitBadDigest);
      _exit(1);
    }
    int code = fail_alloc_wait(pid);
    if (code == -1) crashed(n);
    if (code == kExitPartialWrite) fail_msg("allocation %ld failed: a partial write", n);
    if (code == kExitNotConverged) fail_msg("allocation %ld failed: the next reconciles did not converge", n);
    if (code == kExitBadDigest) fail_msg("allocation %ld failed: the digest kept does not describe the object", n);
    if (code == kExitOk) break;
    errors++;
  }
  printf("from the digest: %ld allocations failed one at a time, %ld runs met the failure\n", n - 1, errors);
  assert_true(n > 20);
}

static void test_digest_path_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 10);
  apply(fx, "b", 1, 20);
  for (int i = 0; i < 3; i++) assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  apply(fx, "a", 2, 11);
  apply(fx, "c", 1, 30);
  fx->check_write = check_write;
  digest_torture(fx, "ServiceDefaults/default/web", 7, false);
  fx->check_write = NULL;
}

/* An invalid generation without its status record: its live entry kept (keep_live reads the object
 * after all, need_tree), c added, from the digest. */
static void check_write_keep(Fake *fx, json_object *obj) {
  (void)fx;
  int seen = 0;
  json_object *list = get(get(obj, "spec"), "envoyExtensions");
  for (size_t i = 0; obj && list && i < json_object_array_length(list); i++) {
    json_object *m = get(get(json_object_array_get_idx(list, i), "arguments"), "PropertyOverride");
    const char *n = json_object_get_string(get(m, "name"));
    if (n && !strcmp(n, "a") && json_object_get_int(get(m, "generation")) == 1) seen |= 1;
    if (n && !strcmp(n, "b")) seen |= 2;
    if (n && !strcmp(n, "c")) seen |= 4;
  }
  if (seen != 7) {
    fprintf(stderr, "digest: %s write (phase %d): %s\n", obj ? "a" : "a delete", g_adv_phase,
            obj ? json_object_to_json_string_ext(get(obj, "spec"), JSON_C_TO_STRING_PLAIN) : "");
    _exit(kExitPartialWrite);
  }
}

static void test_digest_keep_live_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  apply(fx, "a", 1, 10);
  apply(fx, "b", 1, 20);
  for (int i = 0; i < 3; i++) assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web").ok);
  apply(fx, "a", 2, 150); /* invalid */
  json_object *st = get(slot_obj(fx, "po/default/a"), "status");
  if (st) json_object_object_del(st, "lastValid");
  apply(fx, "c", 1, 30);
  fx->check_write = check_write_keep;
  /* entries_held counts a at generation 2 only: a@1 kept, b and c */
  digest_torture(fx, "ServiceDefaults/default/web", 6, true);
  fx->check_write = NULL;
}

/* The same from the object (no digest): is the dropped entry the digest path's own? */
static void test_object_keep_live_at_any_failed_allocation(void **state) {
  Fake *fx = *state;
  fx->no_digest = true;
  test_digest_keep_live_at_any_failed_allocation(state);
}

int main(void) {
  if (getenv("PO_ADV_ONLY")) { /* the digest path's tests alone */
    const struct CMUnitTest only[] = {
        cmocka_unit_test_setup_teardown(test_digest_path_at_any_failed_allocation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_digest_keep_live_at_any_failed_allocation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_object_keep_live_at_any_failed_allocation, setup, teardown),
    };
    return cmocka_run_group_tests(only, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_no_partial_write_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_partial_write_under_sync_require, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unlisted_entry_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test(test_json_parse_at_any_failed_allocation),
      cmocka_unit_test_setup_teardown(test_index_update_whole_or_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_istio_no_bad_write_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_eg_no_bad_write_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_partial_write_when_reads_fail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unreadable_override_is_not_absent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unreadable_target_is_not_absent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unreadable_mesh_object_is_not_absent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unreadable_peer_writes_no_status, setup, teardown),
      cmocka_unit_test_setup_teardown(test_same_value_peers_never_said_overlapping_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_istio_reads_fail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_eg_reads_fail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_release_guard_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_moved_then_deleted_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restart_note_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_digest_path_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_digest_keep_live_at_any_failed_allocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_object_keep_live_at_any_failed_allocation, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
