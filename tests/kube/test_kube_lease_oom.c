/* The leader elector with its Nth allocation failing, for every N until a run meets none: it
 * creates, renews, takes over and releases the Lease, and no Lease it writes lacks a member or
 * holds a null (a write with a null holderIdentity or renewTime would hand the lease to another
 * replica while this one still leads). Each armed run is a child process: a crash fails the test. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "po/kube/lease.h"

#include "fail_alloc.h"

#define S 1000000000LL

static int64_t g_mono = 5000 * S, g_wall = 1767225600LL * S;
static int64_t fk_mono(void *c) { return (void)c, g_mono; }
static int64_t fk_wall(void *c) { return (void)c, g_wall; }
static void fk_sleep(void *c, int64_t ns) { (void)c, g_mono += ns, g_wall += ns; }
static const po_Clock kClock = {fk_mono, fk_wall, fk_sleep, NULL};

/* ---- one stored Lease; the fake's own allocations are not failed (another process's) ---- */

static json_object *g_lease;
static long g_rv = 1, g_writes;
static long g_paused = -1;
static void pause_(void) { g_paused = g_fail_at, g_fail_at = -1; }
static void resume(void) { g_fail_at = g_paused; }

enum { kExitOk = 0, kExitMet = 1, kExitBadLease = 3, kExitNoWrite = 9 };

/* Every member a Lease spec the elector writes must hold, each a string or an integer. */
static void check_lease(json_object *lease) {
  static const char *const kMembers[] = {"holderIdentity", "leaseDurationSeconds", "renewTime", "leaseTransitions"};
  json_object *spec = NULL, *v = NULL;
  bool ok = json_object_object_get_ex(lease, "spec", &spec) && json_object_is_type(spec, json_type_object);
  for (size_t i = 0; ok && i < sizeof kMembers / sizeof kMembers[0]; i++)
    ok = json_object_object_get_ex(spec, kMembers[i], &v) &&
         (json_object_is_type(v, json_type_string) || json_object_is_type(v, json_type_int));
  if (ok && json_object_object_get_ex(spec, "acquireTime", &v)) ok = json_object_is_type(v, json_type_string);
  if (ok) return;
  fprintf(stderr, "a Lease written with a member missing or null: %s\n", json_object_to_json_string(lease));
  _exit(kExitBadLease);
}

static void stamp(void) {
  char b[32];
  json_object *md = NULL;
  snprintf(b, sizeof b, "%ld", ++g_rv);
  if (!json_object_object_get_ex(g_lease, "metadata", &md)) {
    md = json_object_new_object();
    json_object_object_add(g_lease, "metadata", md);
  }
  json_object_object_add(md, "resourceVersion", json_object_new_string(b));
}

static bool api_get(void *ctx, const char *ns, const char *name, json_object **out, po_CtlStatus *st) {
  (void)ctx, (void)ns;
  if (!g_lease) return po_CtlStatus_Set(st, kPo_Ctl_NotFound, "leases \"%s\" not found", name);
  pause_();
  *out = NULL;
  json_object_deep_copy(g_lease, out, NULL);
  resume();
  return true;
}

static bool api_write(json_object *lease, json_object **out) {
  check_lease(lease);
  pause_();
  json_object_put(g_lease);
  g_lease = NULL;
  json_object_deep_copy(lease, &g_lease, NULL);
  stamp();
  g_writes++;
  *out = NULL;
  json_object_deep_copy(g_lease, out, NULL);
  resume();
  return true;
}

static bool api_create(void *ctx, const char *ns, json_object *lease, json_object **out, po_CtlStatus *st) {
  (void)ctx, (void)ns;
  if (g_lease) return po_CtlStatus_Set(st, kPo_Ctl_AlreadyExists, "exists");
  return api_write(lease, out);
}

static bool api_update(void *ctx, const char *ns, json_object *lease, json_object **out, po_CtlStatus *st) {
  (void)ctx, (void)ns;
  if (!g_lease) return po_CtlStatus_Set(st, kPo_Ctl_NotFound, "gone");
  return api_write(lease, out);
}

static const po_LeaseApi kApi = {api_get, api_create, api_update, NULL};

static po_LeaderElector *make(const char *id) {
  po_LeaderElectionOptions o = {0};
  o.ns = "kube-system";
  o.name = "propertyoverride";
  o.identity = id;
  o.clock = &kClock;
  o.api = &kApi;
  o.seed = 7;
  po_LeaderElector *le = NULL;
  po_CtlStatus st;
  assert_true(po_LeaderElector_New(&o, &le, &st));
  return le;
}

typedef enum { kCreate, kRenew, kTakeOver, kRelease } Step;
static const char *const kStepName[] = {"create", "renew", "take over", "release"};

/* The Lease as the step finds it: none (create), held by "a" (renew, release), held by "b" and
 * expired (take over); then a's step, in a child, with allocation n failing. The exit code:
 * kExitOk ran through and wrote, kExitMet met the failure, kExitNoWrite ran through and wrote nothing. */
static int armed_step(Step step, long n) {
  pid_t pid = fail_alloc_fork();
  if (pid != 0) return fail_alloc_wait(pid);
  po_LeaderElector *le = make("a");
  if (step != kCreate) {
    po_LeaderElector *holder = step == kTakeOver ? make("b") : le;
    po_LeaderElector_Tick(holder);
    /* a sees b hold it, then b stops renewing: a may take it a lease duration after it saw it */
    if (step == kTakeOver) po_LeaderElector_Tick(le), g_mono += 60 * S, g_wall += 60 * S;
    else g_mono += 2 * S, g_wall += 2 * S;
  }
  long writes = g_writes;
  g_count = 0, g_fail_at = n;
  po_CtlStatus st;
  if (step == kRelease) po_LeaderElector_Release(le, &st);
  else po_LeaderElector_Tick(le);
  long reached = g_count;
  g_fail_at = -1;
  /* a run that met no failure wrote the Lease (the releasing one too) */
  if (reached < n) _exit(g_writes > writes ? kExitOk : kExitNoWrite);
  _exit(kExitMet);
}

static void sweep(Step step) {
  long n, met = 0;
  for (n = 1; n < 100000; n++) {
    int code = armed_step(step, n);
    if (code == -1) fail_msg("%s: allocation %ld failed: the process crashed (PO_OOM_TRACE=1 prints where)", kStepName[step], n);
    if (code == kExitBadLease) fail_msg("%s: allocation %ld failed: a Lease was written with a member missing or null", kStepName[step], n);
    if (code == kExitNoWrite) fail_msg("%s: the run that met no failure wrote no Lease", kStepName[step]);
    assert_true(code == kExitOk || code == kExitMet);
    if (code == kExitOk) break;
    met++;
  }
  printf("%s: %ld allocations failed one at a time, none crashed, no Lease written with a member missing\n",
         kStepName[step], met);
  assert_true(met >= 4); /* the step did allocate: a renewal's four new members at least */
}

static void test_create_at_any_failed_allocation(void **state) { (void)state, sweep(kCreate); }
static void test_renew_at_any_failed_allocation(void **state) { (void)state, sweep(kRenew); }
static void test_take_over_at_any_failed_allocation(void **state) { (void)state, sweep(kTakeOver); }
static void test_release_at_any_failed_allocation(void **state) { (void)state, sweep(kRelease); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_at_any_failed_allocation),
      cmocka_unit_test(test_renew_at_any_failed_allocation),
      cmocka_unit_test(test_take_over_at_any_failed_allocation),
      cmocka_unit_test(test_release_at_any_failed_allocation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
