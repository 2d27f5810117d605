/* adv-27b: memory that ran out once, in one call, is that call's (issue 27: out-of-memory state
 * per arena or per call, never process-wide). A controller loads each Envoy API snapshot whole
 * on its first use; when an allocation of that load failed, the snapshot's record kept `failed`
 * (engine/src/envoy_api.c) and its slot was done with no schema (proto/src/schema.c): from then on
 * po_Engine_OutOfMemory was true of every arena of the process, whatever snapshot it used, and the
 * snapshot was never loaded again. So after one failed allocation a controller said "out of
 * memory" for every invalid PropertyOverride (never Accepted=False) and never programmed a target
 * judged by that snapshot, until it restarted.
 *
 * Each allocation of a valid override's first compile under the newest snapshot fails in turn, in
 * a child process (the state is the process's); then, memory back, the child compiles an invalid
 * override under the default snapshot (loaded before: must be Refused) and the valid one again
 * (must be Accepted). Before the fix, 6,002 of the 6,058 failures poisoned every later verdict and
 * 6,000 lost the snapshot; now a failed load is retried by the next call and its failure is the
 * caller's (po_EnvoyApi_Schema_ notes it in the caller's arena), never the process's. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "po/engine.h"
#include "po/meshes/mesh.h"

#include "fail_alloc.h"

static const char kValid[] =
    "{\"metadata\":{\"name\":\"a\",\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"kind\":\"ServiceDefaults\","
    "\"name\":\"web\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":"
    "\"outbound\"},\"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"7s\"}]}}";
static const char kInvalid[] =
    "{\"metadata\":{\"name\":\"b\",\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"kind\":\"ServiceDefaults\","
    "\"name\":\"web\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":"
    "\"outbound\"},\"op\":\"add\",\"path\":\"/no_such_field\",\"value\":1}]}}";

static po_CompileOutcome compile(const char *text, const po_EnvoyApi *api, long fail_at) {
  json_object *obj = json_tokener_parse(text);
  po_TargetOptions o = {0};
  o.api[kPo_Mesh_Consul] = api;
  po_Arena *a = po_Arena_New();
  po_CompiledOverride c;
  g_count = 0;
  g_fail_at = fail_at;
  po_CompileOutcome got = po_CompiledOverride_FromObject(obj, &o, a, &c);
  g_fail_at = -1;
  po_Arena_Free(a);
  json_object_put(obj);
  return got;
}

/* The child's exit: 0 as it should be, +1 the invalid override not Refused, +2 the valid one not
 * Accepted once memory was back; 8 the armed compile made fewer than n allocations (the end). The
 * default snapshot was loaded by the parent, before the fork: each child has it loaded already, as
 * a controller that used it before would (it was loaded again in each of the ~6,000 children). */
static int scenario(long n) {
  po_CompileOutcome first = compile(kValid, po_EnvoyApi_Newest(), n);
  if (g_count < n) return 8;
  (void)first; /* NoMemory or Accepted: test_compile_oom's concern */
  int r = compile(kInvalid, po_EnvoyApi_Default(), -1) != kPo_CompileOutcome_Refused;
  return r | (compile(kValid, po_EnvoyApi_Newest(), -1) != kPo_CompileOutcome_Accepted) << 1;
}

static void test_a_failed_load_is_the_calls(void **state) {
  (void)state;
  assert_true(po_EnvoyApi_Newest() != po_EnvoyApi_Default());
  assert_int_equal(compile(kInvalid, po_EnvoyApi_Default(), -1), kPo_CompileOutcome_Refused); /* loaded, for every child */
  long poisoned = 0, lost = 0, n;
  int rc = 0;
  for (n = 1; n < 1000000 && rc != 8; n++) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(scenario(n));
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    assert_true(rc >= 0 && (rc <= 3 || rc == 8));
    if (rc != 8 && (rc & 1) && poisoned++ < 3)
      print_error("allocation %ld failed: an invalid override under another snapshot is no longer Refused\n", n);
    if (rc != 8 && (rc & 2) && lost++ < 3)
      print_error("allocation %ld failed: the newest snapshot's valid override is never Accepted again\n", n);
  }
  printf("allocations 1 to %ld failed in turn: %ld poisoned every later verdict, %ld lost the snapshot\n", n - 2, poisoned,
         lost);
  assert_true(n > 100);
  assert_int_equal(poisoned, 0);
  assert_int_equal(lost, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_a_failed_load_is_the_calls)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
