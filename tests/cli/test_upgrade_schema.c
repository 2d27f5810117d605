/* upgrade-check's comparison of one field between two snapshots (controller/cli/upgrade_schema.c,
 * po_Upg_CompareExplained and po_Upg_CompareEnumIn), on explanations written here: the kinds the
 * embedded snapshots give no instance of (Envoy renamed no field and dropped no enum value between
 * v1.32.4, v1.37.0 and v1.40.0) are checked as well as those they do give, each with the text the
 * finding carries and whether the walk goes on below the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "upgrade.h"

typedef struct {
  po_Arena *a;
  po_CliReport r;
  po_CliObject obj;
  po_UpgSide from, to;
  po_UpgCtx c;
} Fix;

static Fix *setup(void) {
  static Fix f;
  memset(&f, 0, sizeof f);
  f.a = po_Arena_New();
  po_CliReport_Init(&f.r, f.a);
  f.obj.kind = kPo_ObjKind_PropertyOverride;
  f.obj.kind_name = "PropertyOverride";
  f.obj.item = -1;
  f.from.api = po_EnvoyApi_Find("v1.32.4");
  f.to.api = po_EnvoyApi_Find("v1.37.0");
  assert_non_null(f.from.api);
  assert_non_null(f.to.api);
  f.c = (po_UpgCtx){.from = &f.from, .to = &f.to, .obj = &f.obj, .report = &f.r, .a = f.a, .patch = 0, .extension = -1};
  return &f;
}

static po_ExplainField field(const char *name, int number, const char *type, bool deprecated, const char *detail) {
  return (po_ExplainField){.name = name, .json_name = name, .parent = "test.v3.M", .number = number, .type = type,
                           .deprecated = deprecated, .detail = detail};
}

static po_Explanation explained(po_ExplainField *fs, size_t n) {
  return (po_Explanation){.message = "test.v3.M", .fields = fs, .field_count = n};
}

/* The one finding made: its code, severity and a part of its message. */
static void one(Fix *f, const char *code, bool warning, const char *part) {
  assert_int_equal(f->r.count, 1);
  assert_string_equal(f->r.items[0].code, code);
  assert_int_equal(f->r.items[0].warning, warning);
  if (!strstr(f->r.items[0].message, part)) fail_msg("'%s' not in '%s'", part, f->r.items[0].message);
}

static void test_renamed(void **state) {
  (void)state;
  Fix *f = setup();
  po_ExplainField a[] = {field("old_name", 7, "uint32", false, NULL)}, b[] = {field("new_name", 7, "uint32", false, NULL)};
  po_Explanation ef = explained(a, 1), et = explained(b, 1);
  const po_ExplainField *next;
  assert_false(po_Upg_CompareExplained(&f->c, "test.v3.M", &ef, &et, "old_name", "/old_name", &next));
  one(f, "renamed", false, "old_name (field 7 of test.v3.M) is named new_name in v1.37.0: write new_name");
  po_Arena_Free(f->a);
}

static void test_removed(void **state) {
  (void)state;
  Fix *f = setup();
  po_ExplainField a[] = {field("gone", 7, "string", true, NULL)}, b[] = {field("other", 8, "string", false, NULL)};
  po_Explanation ef = explained(a, 1), et = explained(b, 1);
  const po_ExplainField *next;
  assert_false(po_Upg_CompareExplained(&f->c, "test.v3.M", &ef, &et, "gone", "/gone", &next));
  one(f, "removed", false, "gone is not a field of test.v3.M in v1.37.0 (field 7 in v1.32.4)");
  po_Arena_Free(f->a);
  f = setup();
  assert_false(po_Upg_CompareExplained(&f->c, "test.v3.M", &ef, NULL, "gone", "/gone", &next));
  one(f, "removed", false, "the message test.v3.M is not in v1.37.0");
  po_Arena_Free(f->a);
}

static void test_retyped_deprecated_same(void **state) {
  (void)state;
  Fix *f = setup();
  po_ExplainField a[] = {field("x", 3, "string", false, NULL)}, b[] = {field("x", 3, "google.protobuf.Any", true, NULL)};
  po_Explanation ef = explained(a, 1), et = explained(b, 1);
  const po_ExplainField *next;
  assert_false(po_Upg_CompareExplained(&f->c, "test.v3.M", &ef, &et, "x", "/x", &next));
  one(f, "type-changed", false, "test.v3.M.x is google.protobuf.Any (field 3) in v1.37.0, string (field 3) in v1.32.4");
  po_Arena_Free(f->a);
  f = setup();
  b[0].type = "string";
  assert_true(po_Upg_CompareExplained(&f->c, "test.v3.M", &ef, &et, "x", "/x", &next));
  one(f, "deprecated", true, "test.v3.M.x is deprecated in v1.37.0 (not in v1.32.4)");
  assert_ptr_equal(next, &a[0]);
  po_Arena_Free(f->a);
  f = setup();
  a[0].deprecated = true; /* deprecated in both: nothing changes */
  assert_true(po_Upg_CompareExplained(&f->c, "test.v3.M", &ef, &et, "x", "/x", &next));
  assert_int_equal(f->r.count, 0);
  assert_false(po_Upg_CompareExplained(&f->c, "test.v3.M", &ef, &et, "nope", "/nope", &next)); /* validate's */
  assert_int_equal(f->r.count, 0);
  po_Arena_Free(f->a);
}

static void test_enum_value_gone(void **state) {
  (void)state;
  Fix *f = setup();
  po_ExplainField a = field("policy", 4, "enum", false, "enum test.v3.M.Policy: ROUND_ROBIN, RANDOM, MAGLEV");
  po_ExplainField b = field("policy", 4, "enum", false, "enum test.v3.M.Policy: ROUND_ROBIN, MAGLEV");
  assert_true(po_Upg_CompareEnumIn(&f->c, &a, &b, "ROUND_ROBIN", "/policy"));
  assert_true(po_Upg_CompareEnumIn(&f->c, &a, &b, "MAGLEV", "/policy"));
  assert_true(po_Upg_CompareEnumIn(&f->c, &a, &b, "RING", "/policy")); /* not a value before either */
  assert_int_equal(f->r.count, 0);
  assert_true(po_Upg_CompareEnumIn(&f->c, &a, &b, "RANDOM", "/policy"));
  one(f, "enum-value-gone", false, "the value RANDOM is not in v1.37.0's enum test.v3.M.Policy: ROUND_ROBIN, MAGLEV");
  po_Arena_Free(f->a);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_renamed), cmocka_unit_test(test_removed),
                                     cmocka_unit_test(test_retyped_deprecated_same), cmocka_unit_test(test_enum_value_gone)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
