/* The memory the target index keeps per PropertyOverride (index.c), apart from its compiled forms
 * (test_compiled_memory): the entry, its memo of the last reconcile, the note of our last writes
 * of it and of its last valid generation. At 100,000 PropertyOverrides every byte here is 100 KB
 * of the controller (issue 26: at most 4 KB each above a fixed base, all of it). 1,000
 * PropertyOverrides of the benchmark's shape (36-byte uids, 50 to a target) are put through what a
 * converged one has had: listed, a memo set, its finalizer and status writes noted, its last valid
 * generation noted; the heap they hold is read from glibc's own count (mallinfo2: in-use bytes,
 * exact in one thread). The fixed 128-byte uid and resourceVersion buffers held 987 bytes each;
 * sized to what they hold, in one allocation per record, 587. Not under valgrind or the
 * sanitizers, whose allocators glibc does not count. */
#include <json-c/json.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiled.h"

enum { kOverrides = 1000, kPerTarget = 50 };

static void converged(po_TargetIndex *ix, int i, json_object *status) {
  char name[32], key[64], uid[40];
  snprintf(name, sizeof name, "po-%05d", i);
  snprintf(key, sizeof key, "ServiceDefaults/default/svc-%03d", i / kPerTarget);
  snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012d", i);
  char old[600];
  assert_true(po_TargetIndex_Set(ix, "default", name, key, old, sizeof old));
  po_OverrideMemo m = {.generation = 1, .spec_hash = {(uint64_t)i, 7}, .status_hash = 11};
  snprintf(m.rv, sizeof m.rv, "%d", 100000 + i);
  snprintf(m.uid, sizeof m.uid, "%s", uid);
  po_TargetIndex_MemoSet(ix, "default", name, &m, key, "");
  po_TargetIndex_NoteOverrideWrite(ix, "default", name, &m, 0, status, 0, false);
  po_TargetIndex_NoteOverrideWrite(ix, "default", name, &m, 1, status, 11, false);
  po_TargetIndex_NoteLastValid(ix, "default", name, uid, 1, m.spec_hash);
}

static void test_index_entry_bytes(void **state) {
  (void)state;
  json_object *status = json_tokener_parse("{\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\"}]}");
  po_TargetIndex *warm = po_TargetIndex_New(); /* the hash key and anything else made once per process */
  converged(warm, 0, status);
  po_TargetIndex_Free(warm);
  size_t before = mallinfo2().uordblks;
  po_TargetIndex *ix = po_TargetIndex_New();
  assert_non_null(ix);
  for (int i = 0; i < kOverrides; i++) converged(ix, i, status);
  size_t held = mallinfo2().uordblks - before, per = held / kOverrides;
  print_message("index: %d PropertyOverrides hold %zu bytes, %zu each\n", kOverrides, held, per);
  /* what was kept is what is read back */
  po_OverrideVersion v = {.rv = "100999", .uid = "00000000-0000-4000-8000-000000000999", .generation = 1};
  po_OverrideMemo m;
  char key[600], held_key[600];
  const po_CompiledEntry *ce = NULL;
  assert_true(po_TargetIndex_MemoCompiled(ix, "default", "po-00999", &v, &m, key, held_key, sizeof key, &ce));
  po_CompiledEntry_Release(ce);
  assert_string_equal(m.rv, "100999");
  assert_string_equal(m.uid, v.uid);
  assert_int_equal(m.status_hash, 11);
  assert_string_equal(key, "ServiceDefaults/default/svc-019");
  assert_string_equal(held_key, "");
  assert_true(po_TargetIndex_IsOwnLastValid(ix, "default", "po-00999", v.uid, 1, m.spec_hash));
  po_TargetIndex_Free(ix);
  json_object_put(status);
  assert_true(per <= 650);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_index_entry_bytes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
