/* po_Value: JSON and YAML readers, Go typing, bounds on hostile input. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"

static po_Arena *A;
static int setup(void **s) { (void)s; A = po_Arena_New(); return A ? 0 : -1; }
static int teardown(void **s) { (void)s; po_Arena_Free(A); return 0; }

static po_Value *json(const char *t, po_Status *st) {
  po_Status_Clear(st);
  return po_Value_ParseJson(t, strlen(t), A, st);
}

static void test_go_types(void **state) {
  (void)state;
  static const struct { const char *in, *type; } cases[] = {
      {"1", "int"}, {"1.0", "float64"}, {"1e3", "float64"}, {"-0", "int"}, {"\"s\"", "string"},
      {"true", "bool"}, {"{}", "map[string]interface {}"}, {"[1,2]", "[]int"}, {"[1,2.5]", "[]float64"},
      {"[\"a\"]", "[]string"}, {"[true,false]", "[]bool"}, {"[]", "[]interface {}"},
      {"[1,\"a\"]", "[]interface {}"}, {"[[1]]", "[]interface {}"}, {"[{}]", "[]interface {}"},
      {"[null]", "[]interface {}"}, {"null", "<nil>"}, {"9223372036854775808", "float64"},
      /* beyond int64 on both sides: float64, never a clamped int */
      {"-9223372036854775809", "float64"}, {"-9223372036854775808", "int"}, {"9223372036854775807", "int"},
      {"[1,-9223372036854775809]", "[]float64"}, {"\"-9223372036854775809\"", "string"},
  };
  po_Status st;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    po_Value *v = json(cases[i].in, &st);
    assert_non_null(v);
    assert_string_equal(po_Value_GoType(v), cases[i].type);
  }
}

/* Integer literals beyond int64 keep their text (out-of-range messages quote it) and do not
 * shift the positions of later parse errors. */
static void test_json_big_integer_literals(void **state) {
  (void)state;
  po_Status st;
  po_Value *v = json("{\"a\": [-9223372036854775809, 18446744073709551616, \"\\u0000 0..\"]}", &st);
  assert_non_null(v);
  const po_Value *l = po_Value_Get(v, "a");
  assert_int_equal(po_Value_Kind(po_Value_At(l, 0)), kPo_ValueKind_Float);
  assert_true(po_Value_Float(po_Value_At(l, 0)) == -9223372036854775808.0);
  assert_int_equal(po_Value_Kind(po_Value_At(l, 1)), kPo_ValueKind_Float);
  assert_int_equal(po_Value_Kind(po_Value_At(l, 2)), kPo_ValueKind_String); /* not a marker of ours */
  char *back = po_Value_ToJson(v, A);
  assert_non_null(strstr(back, "-9223372036854775809,18446744073709551616"));
  assert_null(json("[-99999999999999999999999, x]", &st));
  assert_true(strncmp(st.message, "line 1, column 28:", 18) == 0);
  po_Value **docs;
  size_t n;
  po_Status_Clear(&st);
  /* YAML as kubectl reads it: below int64 the literal is a float64 (Go's ParseFloat), -2^63,
   * which JSON prints as its shortest digits, -9223372036854776000: beyond int64, so the API
   * server reads a float64 back, not INT64_MIN (kubectl create --dry-run=client shows it:
   * tests/vectors/yaml bigints); within uint64 but beyond int64 it stays a float64 too. */
  assert_true(po_Value_ParseYaml("a: -9223372036854775809\nb: 9223372036854775808\n", 47, A, &docs, &n, &st));
  assert_string_equal(po_Value_GoType(po_Value_Get(docs[0], "a")), "float64");
  assert_string_equal(po_Value_GoType(po_Value_Get(docs[0], "b")), "float64");
  assert_non_null(strstr(po_Value_ToJson(docs[0], A), "9223372036854775808"));
}

/* Duplicate keys: the last value wins, in its first place (kubectl's reading), in small maps
 * and in large ones (past 16 keys the reader keeps a hash index: linear time on hostile files). */
static void test_yaml_duplicate_keys_last_wins(void **state) {
  (void)state;
  char *y = malloc(64 * 1024);
  assert_non_null(y);
  size_t at = (size_t)sprintf(y, "small: {a: 1, b: 2, a: 3}\nbig:\n");
  for (int i = 0; i < 100; i++) at += (size_t)sprintf(y + at, "  k%d: %d\n", i, i);
  at += (size_t)sprintf(y + at, "  k5: five\n  k99: last\n  <<: {k7: merged, extra: 1}\n");
  po_Value **docs;
  size_t n;
  po_Status st;
  po_Status_Clear(&st);
  assert_true(po_Value_ParseYaml(y, at, A, &docs, &n, &st));
  const po_Value *small = po_Value_Get(docs[0], "small"), *big = po_Value_Get(docs[0], "big");
  assert_int_equal(po_Value_Size(small), 2);
  assert_string_equal(po_Value_KeyAt(small, 0), "a");
  assert_int_equal(po_Value_Int(po_Value_At(small, 0)), 3);
  assert_int_equal(po_Value_Size(big), 101);
  assert_string_equal(po_Value_String(po_Value_Get(big, "k5"), NULL), "five");
  assert_string_equal(po_Value_String(po_Value_Get(big, "k99"), NULL), "last");
  assert_string_equal(po_Value_String(po_Value_Get(big, "k7"), NULL), "merged"); /* v2: a later merge overwrites */
  assert_int_equal(po_Value_Int(po_Value_Get(big, "extra")), 1);
  assert_int_equal(po_Value_Int(po_Value_Get(big, "k42")), 42);
  free(y);
}

static void test_json_errors_name_line_and_column(void **state) {
  (void)state;
  po_Status st;
  assert_null(json("{\n  \"a\": 1,\n  \"b\": }", &st));
  assert_int_equal(st.code, kPo_Status_Parse);
  assert_non_null(strstr(st.message, "line 3, column"));
  assert_null(json("{\"a\": 1} x", &st));
  assert_true(strncmp(st.message, "line 1, column 10: invalid JSON: ", 33) == 0);
  assert_null(json("[1, 2", &st));
  assert_non_null(strstr(st.message, "unexpected end of JSON input"));
  assert_null(json("NaN", &st));
  /* nesting beyond the bound is an error, not a stack overflow */
  char deep[2100];
  memset(deep, '[', 1000);
  memset(deep + 1000, ']', 1000);
  deep[2000] = '\0';
  assert_null(json(deep, &st));
}

static void test_yaml_scalars_and_positions(void **state) {
  (void)state;
  const char *y = "a: 1\nb: 1.5\nc: \"1\"\nd: true\ne: ~\nf: 0x1F\ng: yes\nh: !!str 5\ni: off\nl: [1, 2]\n";
  po_Value **docs;
  size_t n;
  po_Status st;
  po_Status_Clear(&st);
  assert_true(po_Value_ParseYaml(y, strlen(y), A, &docs, &n, &st));
  assert_int_equal(n, 1);
  po_Value *m = docs[0];
  assert_string_equal(po_Value_GoType(po_Value_Get(m, "a")), "int");
  assert_string_equal(po_Value_GoType(po_Value_Get(m, "b")), "float64");
  assert_string_equal(po_Value_GoType(po_Value_Get(m, "c")), "string");
  assert_string_equal(po_Value_GoType(po_Value_Get(m, "d")), "bool");
  assert_int_equal(po_Value_Kind(po_Value_Get(m, "e")), kPo_ValueKind_Null);
  assert_int_equal(po_Value_Int(po_Value_Get(m, "f")), 31);
  /* as kubectl reads YAML (go-yaml v2): yes and off are bools */
  assert_true(po_Value_Bool(po_Value_Get(m, "g")));
  assert_string_equal(po_Value_GoType(po_Value_Get(m, "i")), "bool");
  assert_false(po_Value_Bool(po_Value_Get(m, "i")));
  /* .inf cannot go into JSON: an error at the scalar, as kubectl refuses the file */
  const char *inf = "a: 1\nb: -.inf\n";
  po_Status_Clear(&st);
  assert_false(po_Value_ParseYaml(inf, strlen(inf), A, &docs, &n, &st));
  assert_true(strncmp(st.message, "line 2, column 4: -.inf is not a number JSON can carry", 54) == 0);
  assert_string_equal(po_Value_String(po_Value_Get(m, "h"), NULL), "5");
  assert_string_equal(po_Value_GoType(po_Value_Get(m, "l")), "[]int");
  assert_int_equal(po_Value_Pos(po_Value_Get(m, "d")).line, 4);
  assert_int_equal(po_Value_Pos(po_Value_Get(m, "d")).column, 4);
}

static void test_yaml_documents_errors_and_aliases(void **state) {
  (void)state;
  po_Value **docs;
  size_t n;
  po_Status st;
  const char *multi = "a: 1\n---\nb: &x [1]\nc: *x\n---\n";
  po_Status_Clear(&st);
  assert_true(po_Value_ParseYaml(multi, strlen(multi), A, &docs, &n, &st));
  assert_int_equal(n, 2); /* kubectl's reader makes no document of a final "---" */
  assert_ptr_equal(po_Value_Get(docs[1], "b"), po_Value_Get(docs[1], "c"));
  const char *bad = "a: [1,\nb: 2\n";
  po_Status_Clear(&st);
  assert_false(po_Value_ParseYaml(bad, strlen(bad), A, &docs, &n, &st));
  assert_non_null(strstr(st.message, "line "));
  const char *unknown = "a: *nope\n";
  po_Status_Clear(&st);
  assert_false(po_Value_ParseYaml(unknown, strlen(unknown), A, &docs, &n, &st));
  /* a billion laughs is bounded */
  char *lol = malloc(64 * 1024);
  strcpy(lol, "a: &a [x]\n");
  char prev = 'a';
  for (char c = 'b'; c <= 'z'; c++) {
    char line[256];
    snprintf(line, sizeof line, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c, prev, prev, prev, prev, prev,
             prev, prev, prev, prev, prev);
    strcat(lol, line);
    prev = c;
  }
  po_Status_Clear(&st);
  assert_false(po_Value_ParseYaml(lol, strlen(lol), A, &docs, &n, &st));
  assert_int_equal(st.code, kPo_Status_Limit);
  free(lol);
  const char *complex_key = "? [a]\n: 1\n";
  po_Status_Clear(&st);
  assert_false(po_Value_ParseYaml(complex_key, strlen(complex_key), A, &docs, &n, &st));
}

static void test_json_c_round_trip(void **state) {
  (void)state;
  po_Status st;
  po_Value *v = json("{\"a\":[1,2.5,\"x\",true,null,{\"b\":{}}]}", &st);
  assert_non_null(v);
  assert_string_equal(po_Value_ToJson(v, A), "{\"a\":[1,2.5,\"x\",true,null,{\"b\":{}}]}");
  json_object *j = po_Value_ToJsonC(v);
  po_Value *back = po_Value_FromJsonC(j, A, &st);
  json_object_put(j);
  assert_string_equal(po_Value_ToJson(back, A), po_Value_ToJson(v, A));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_go_types),
      cmocka_unit_test(test_json_errors_name_line_and_column),
      cmocka_unit_test(test_json_big_integer_literals),
      cmocka_unit_test(test_yaml_duplicate_keys_last_wins),
      cmocka_unit_test(test_yaml_scalars_and_positions),
      cmocka_unit_test(test_yaml_documents_errors_and_aliases),
      cmocka_unit_test(test_json_c_round_trip),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
