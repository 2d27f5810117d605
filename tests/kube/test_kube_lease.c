/* Leader election logic with a fake clock and a fake Lease API. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/kube/lease.h"

#define S 1000000000LL

/* ---- fake clock -------------------------------------------------------------------------- */
typedef struct {
  int64_t mono, wall;
} FakeClock;
static int64_t fk_mono(void *c) { return ((FakeClock *)c)->mono; }
static int64_t fk_wall(void *c) { return ((FakeClock *)c)->wall; }
static void fk_sleep(void *c, int64_t ns) {
  ((FakeClock *)c)->mono += ns;
  ((FakeClock *)c)->wall += ns;
}
static FakeClock g_clock;
static const po_Clock kFake = {fk_mono, fk_wall, fk_sleep, &g_clock};
static void advance(int64_t ns) { fk_sleep(&g_clock, ns); }

/* ---- fake API: one stored Lease with optimistic concurrency ------------------------------ */
typedef struct {
  json_object *lease; /* NULL: absent */
  long rv;
  int fail_next;      /* next N calls fail with ServiceUnavailable */
  int calls, updates;
  bool bump_before_update; /* a concurrent writer sneaks in between get and update */
} FakeApi;
static FakeApi g_api;

static bool maybe_fail(po_CtlStatus *st) {
  g_api.calls++;
  if (g_api.fail_next > 0) {
    g_api.fail_next--;
    po_CtlStatus_Set(st, kPo_Ctl_ServiceUnavailable, "fake: unavailable");
    return true;
  }
  return false;
}

static void set_rv(json_object *o) {
  json_object *md;
  json_object_object_get_ex(o, "metadata", &md);
  char b[32];
  snprintf(b, sizeof b, "%ld", g_api.rv);
  json_object_object_add(md, "resourceVersion", json_object_new_string(b));
}

static bool api_get(void *ctx, const char *ns, const char *name, json_object **out, po_CtlStatus *st) {
  if (maybe_fail(st)) return false;
  if (!g_api.lease) return po_CtlStatus_Set(st, kPo_Ctl_NotFound, "leases \"%s\" not found", name);
  json_object_deep_copy(g_api.lease, out, NULL);
  if (g_api.bump_before_update) g_api.rv++;
  return true;
}

static bool api_create(void *ctx, const char *ns, json_object *lease, json_object **out, po_CtlStatus *st) {
  if (maybe_fail(st)) return false;
  if (g_api.lease) return po_CtlStatus_Set(st, kPo_Ctl_AlreadyExists, "exists");
  json_object_deep_copy(lease, &g_api.lease, NULL);
  g_api.rv++;
  set_rv(g_api.lease);
  json_object_deep_copy(g_api.lease, out, NULL);
  return true;
}

static bool api_update(void *ctx, const char *ns, json_object *lease, json_object **out, po_CtlStatus *st) {
  if (maybe_fail(st)) return false;
  json_object *md, *rv;
  json_object_object_get_ex(lease, "metadata", &md);
  char cur[32];
  snprintf(cur, sizeof cur, "%ld", g_api.rv);
  if (!json_object_object_get_ex(md, "resourceVersion", &rv) || strcmp(json_object_get_string(rv), cur) != 0)
    return po_CtlStatus_Set(st, kPo_Ctl_Conflict, "the object has been modified");
  json_object_put(g_api.lease);
  g_api.lease = NULL;
  json_object_deep_copy(lease, &g_api.lease, NULL);
  g_api.rv++;
  g_api.updates++;
  set_rv(g_api.lease);
  json_object_deep_copy(g_api.lease, out, NULL);
  return true;
}

static const po_LeaseApi kApi = {api_get, api_create, api_update, NULL};

static const char *spec(const char *key) {
  json_object *sp, *v;
  if (!g_api.lease || !json_object_object_get_ex(g_api.lease, "spec", &sp) || !json_object_object_get_ex(sp, key, &v))
    return "(absent)";
  return json_object_get_string(v);
}

/* ---- callbacks --------------------------------------------------------------------------- */
typedef struct {
  int started, stopped;
  char new_leader[64];
} Events;

static void on_start(void *c) { ((Events *)c)->started++; }
static void on_stop(void *c) { ((Events *)c)->stopped++; }
static void on_new(void *c, const char *id) { snprintf(((Events *)c)->new_leader, 64, "%s", id); }

static po_LeaderElector *make(const char *id, Events *ev) {
  po_LeaderElectionOptions o = {0};
  o.ns = "kube-system";
  o.name = "propertyoverride";
  o.identity = id;
  o.clock = &kFake;
  o.api = &kApi;
  o.on_started_leading = on_start;
  o.on_stopped_leading = on_stop;
  o.on_new_leader = on_new;
  o.ctx = ev;
  o.seed = 7;
  po_LeaderElector *le;
  po_CtlStatus st;
  assert_true(po_LeaderElector_New(&o, &le, &st));
  return le;
}

static int setup(void **state) {
  memset(&g_api, 0, sizeof g_api);
  g_clock.mono = 5000 * S;
  g_clock.wall = 1767225600LL * S + 123456789; /* 2026-01-01T00:00:00.123456Z */
  return 0;
}
static int teardown(void **state) {
  json_object_put(g_api.lease);
  g_api.lease = NULL;
  return 0;
}

static void test_acquire_renew_failover(void **state) {
  Events ea = {0}, eb = {0};
  po_LeaderElector *a = make("a", &ea), *b = make("b", &eb);
  /* a creates the Lease. */
  assert_int_equal(po_LeaderElector_Tick(a), 2 * S);
  assert_true(po_LeaderElector_IsLeader(a));
  assert_int_equal(ea.started, 1);
  assert_string_equal(spec("holderIdentity"), "a");
  assert_string_equal(spec("leaseDurationSeconds"), "15");
  assert_string_equal(spec("leaseTransitions"), "0");
  assert_string_equal(spec("acquireTime"), "2026-01-01T00:00:00.123456Z");
  assert_string_equal(spec("renewTime"), "2026-01-01T00:00:00.123456Z");
  assert_string_equal(ea.new_leader, "a");
  /* b sees a holding it: candidate, with a jittered retry in [2 s, 4.4 s). */
  int64_t w = po_LeaderElector_Tick(b);
  assert_true(w >= 2 * S && w < 2 * S + 2 * S * 12 / 10);
  assert_false(po_LeaderElector_IsLeader(b));
  assert_string_equal(eb.new_leader, "a");
  /* a renews: renewTime moves, acquireTime stays. */
  advance(2 * S);
  po_LeaderElector_Tick(a);
  assert_string_equal(spec("renewTime"), "2026-01-01T00:00:02.123456Z");
  assert_string_equal(spec("acquireTime"), "2026-01-01T00:00:00.123456Z");
  /* a freezes. b observes the renewal now and may take over 15 s after that, not before. */
  po_LeaderElector_Tick(b);
  int64_t seen = g_clock.mono;
  while (g_clock.mono + 2 * S < seen + 15 * S) {
    advance(2 * S);
    po_LeaderElector_Tick(b);
    assert_false(po_LeaderElector_IsLeader(b));
  }
  advance(seen + 15 * S - g_clock.mono);
  po_LeaderElector_Tick(b);
  assert_true(po_LeaderElector_IsLeader(b));
  assert_int_equal(eb.started, 1);
  assert_string_equal(spec("holderIdentity"), "b");
  assert_string_equal(spec("leaseTransitions"), "1");
  /* a wakes up: it sees b and stops leading at once, without waiting for its deadline. */
  po_LeaderElector_Tick(a);
  assert_false(po_LeaderElector_IsLeader(a));
  assert_int_equal(ea.stopped, 1);
  assert_string_equal(ea.new_leader, "b");
  po_LeaderElector_Free(a);
  po_LeaderElector_Free(b);
}

static void test_renew_deadline(void **state) {
  Events ea = {0};
  po_LeaderElector *a = make("a", &ea);
  po_LeaderElector_Tick(a);
  assert_true(po_LeaderElector_IsLeader(a));
  int64_t ok_at = g_clock.mono;
  g_api.fail_next = 1000;
  /* Failures keep leadership until 10 s after the last good renewal, then lose it at once. */
  while (g_clock.mono + 2 * S < ok_at + 10 * S) {
    advance(2 * S);
    po_LeaderElector_Tick(a);
    assert_true(po_LeaderElector_IsLeader(a));
  }
  advance(ok_at + 10 * S - g_clock.mono);
  po_LeaderElector_Tick(a);
  assert_false(po_LeaderElector_IsLeader(a));
  assert_int_equal(ea.stopped, 1);
  po_LeaderElector_Free(a);
}

static void test_release_and_conflict(void **state) {
  Events ea = {0}, eb = {0};
  po_LeaderElector *a = make("a", &ea), *b = make("b", &eb);
  po_LeaderElector_Tick(a);
  po_LeaderElector_Tick(b);
  po_CtlStatus st;
  assert_true(po_LeaderElector_Release(a, &st));
  assert_false(po_LeaderElector_IsLeader(a));
  assert_int_equal(ea.stopped, 1);
  assert_string_equal(spec("holderIdentity"), "");
  assert_string_equal(spec("leaseDurationSeconds"), "1");
  /* A released lease is free at once. */
  po_LeaderElector_Tick(b);
  assert_true(po_LeaderElector_IsLeader(b));
  assert_string_equal(spec("leaseTransitions"), "1");
  assert_string_equal(eb.new_leader, "b");
  /* A concurrent writer between get and update: a Conflict, no leadership taken. */
  advance(20 * S);
  g_api.bump_before_update = true;
  Events ec = {0};
  po_LeaderElector *c = make("c", &ec);
  po_LeaderElector_Tick(c);
  po_LeaderElector_Tick(c);
  assert_false(po_LeaderElector_IsLeader(c));
  assert_int_equal(ec.started, 0);
  po_LeaderElector_Free(a);
  po_LeaderElector_Free(b);
  po_LeaderElector_Free(c);
}

static void test_validation(void **state) {
  po_LeaderElectionOptions o = {0};
  o.ns = "n";
  o.name = "l";
  o.identity = "i";
  o.api = &kApi;
  o.lease_duration_ns = 10 * S;
  o.renew_deadline_ns = 10 * S;
  po_LeaderElector *le;
  po_CtlStatus st;
  assert_false(po_LeaderElector_New(&o, &le, &st));
  assert_string_equal(st.message,
                      "leader election: need lease duration > renew deadline > 1.2 x retry period (got 10.000 s, "
                      "10.000 s, 2.000 s)");
  o.identity = "";
  assert_false(po_LeaderElector_New(&o, &le, &st));
  assert_string_equal(st.message, "leader election needs ns, name and identity");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_acquire_renew_failover, setup, teardown),
      cmocka_unit_test_setup_teardown(test_renew_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(test_release_and_conflict, setup, teardown),
      cmocka_unit_test_setup_teardown(test_validation, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
