/* Memory that runs out while a shared schema is loaded or looked up in is that call's, never the
 * schema's or the process's (issue 27): a snapshot whose whole load fails is not recorded as
 * loaded, its caller gets NoMemory, and the next call loads it; a name table that cannot be built
 * leaves the schema unmarked (po_Schema_OutOfMemory false) and is built by the next lookup. The
 * allocator is replaced (the 1-based allocation g_fail_at fails), so not under valgrind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/schema.h"

#include "fail_alloc.h"

static void arm(long at) {
  g_count = 0;
  g_fail_at = at;
}

/* Allocations 1, 2, 4, ... of the newest snapshot's first load fail in turn (a whole load makes
 * thousands; a step each time keeps this to a few dozen loads): each failed load says NoMemory
 * and leaves the snapshot unloaded, and once memory is back the next call loads it. */
static void test_a_failed_load_is_retried(void **state) {
  (void)state;
  size_t i = po_Schema_SnapshotCount() - 1;
  assert_true(i != po_Schema_SnapshotDefault());
  long failed = 0;
  for (long n = 1; n < 100000000; n = n + n / 2 + 1) {
    po_Status st;
    po_Status_Clear(&st);
    arm(n);
    const po_Schema *s = po_Schema_GetSnapshot(i, &st);
    arm(-1);
    if (s) break; /* the load made fewer than n allocations: it got through */
    failed++;
    assert_int_equal(st.code, kPo_Status_NoMemory);
    assert_non_null(strstr(st.message, "out of memory"));
    assert_false(po_Schema_SnapshotLoaded(i));
  }
  printf("%ld loads of snapshot %s failed, each retried\n", failed, po_Schema_SnapshotVersion(i));
  assert_true(failed > 10);
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_GetSnapshot(i, &st);
  assert_non_null(s);
  assert_true(po_Schema_SnapshotLoaded(i));
  assert_ptr_equal(po_Schema_GetSnapshot(i, &st), s); /* published once, then kept */
  assert_false(po_Schema_OutOfMemory(s));
}

/* A name table's allocation fails: no field this time, the schema unmarked, the field the next
 * time (the table built then). */
static void test_a_failed_name_table_is_built_again(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  assert_non_null(s);
  const upb_MessageDef *m = po_Schema_ResourceMessage(s, "cluster");
  assert_non_null(m);
  static const char kName[] = "connect_timeout";
  arm(1);
  const po_FieldInfo *f = po_Schema_FindFieldInfo(s, m, kName, sizeof kName - 1);
  arm(-1);
  assert_null(f);
  assert_false(po_Schema_OutOfMemory(s));
  f = po_Schema_FindFieldInfo(s, m, kName, sizeof kName - 1);
  assert_non_null(f);
  assert_string_equal(f->name, kName);
  int count = 0;
  assert_non_null(po_Schema_Fields(s, m, &count));
  assert_true(count > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_a_failed_load_is_retried),
                                     cmocka_unit_test(test_a_failed_name_table_is_built_again)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
