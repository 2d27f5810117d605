/* Argument decoding (Consul's weak mapstructure decode) and its error texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"

static po_Arena *A;
static int setup(void **s) { (void)s; A = po_Arena_New(); return A ? 0 : -1; }
static int teardown(void **s) { (void)s; po_Arena_Free(A); return 0; }

static bool decode(const char *text, po_Arguments *out, po_Status *st) {
  po_Status_Clear(st);
  po_Value *v = po_Value_ParseJson(text, strlen(text), A, st);
  assert_non_null(v);
  return po_Arguments_Decode(v, A, out, st);
}

static void test_weak_lifts_and_case(void **state) {
  (void)state;
  po_Arguments args;
  po_Status st;
  assert_true(decode("{\"patches\": {\"RESOURCEFILTER\": [{\"resourcetype\": \"cluster\", \"Services\": {\"name\": \"a\"}}],"
                     " \"op\": \"add\", \"Path\": \"/name\", \"Value\": [[\"x\"]]}, \"DEBUG\": \"true\", \"ProxyType\": 7}",
                     &args, &st));
  assert_int_equal(args.patch_count, 1);
  assert_true(args.debug);
  assert_string_equal(args.proxy_type, "7");
  po_Patch *p = &args.patches[0];
  assert_true(p->resource_filter.present);
  assert_string_equal(p->resource_filter.resource_type, "cluster");
  assert_int_equal(p->resource_filter.service_count, 1);
  assert_string_equal(p->resource_filter.services[0].name, "a");
  assert_string_equal(p->op, "add");
  /* Value: a one-element []interface {} (a list of lists is one) is unwrapped one level only,
   * as Consul's decode hook does; a typed one such as ["add"] ([]string) is not
   * (tests/vectors/constructor/consul-decode.json) */
  assert_int_equal(po_Value_Kind(p->value), kPo_ValueKind_List);
  assert_int_equal(po_Value_Size(p->value), 1);
  assert_string_equal(po_Value_String(po_Value_At(p->value, 0), NULL), "x");
}

/* Go's strings.EqualFold is simple case folding: U+017F (long s) is s and U+212A (Kelvin) is k,
 * but U+0131 (dotless i) and U+0130 (I with dot above) are not i (the go-fmt oracle's
 * `gofmt fold` says so for every rune), and full folding ("ss" for U+00DF) is not Go's. */
static void test_keys_fold_as_go(void **state) {
  (void)state;
  po_Arguments args;
  po_Status st;
  assert_true(decode("{\"Patche\xC5\xBF\": [{\"ResourceFilter\": {\"\xC5\xBF" "ervice\xC5\xBF\": [{\"Name\": \"db\", "
                     "\"Name\xC5\xBFpace\": \"x\"}]}, \"op\": \"remove\"}]}",
                     &args, &st));
  assert_int_equal(args.patch_count, 1);
  assert_int_equal(args.patches[0].resource_filter.service_count, 1);
  assert_string_equal(args.patches[0].resource_filter.services[0].name, "db");
  assert_string_equal(args.patches[0].resource_filter.services[0].namespace_, "x");
  assert_true(decode("{\"Patches\": [{\"ResourceFilter\": {\"Services\": [{\"Name\": \"db\", "
                     "\"Namespace\": \"a\", \"Partit\xC4\xB1on\": \"b\", \"Part\xC4\xB0tion\": \"c\"}], "
                     "\"TrafficD\xC4\xB1rection\": \"inbound\", \"Re\xC3\x9F" "ourceType\": \"x\"}}]}",
                     &args, &st));
  po_ServiceName *sn = &args.patches[0].resource_filter.services[0];
  assert_string_equal(sn->namespace_, "a");
  assert_string_equal(sn->partition, "");
  assert_string_equal(args.patches[0].resource_filter.traffic_direction, "");
  assert_string_equal(args.patches[0].resource_filter.resource_type, "");
  /* a key longer or shorter than the name by one folded rune is no match */
  assert_true(decode("{\"Patches\": [{\"Op\": \"remove\", \"Path\": \"/a\", \"Pat\xC5\xBF\": \"/b\"}], \"Debu\": true}",
                     &args, &st));
  assert_string_equal(args.patches[0].path, "/a");
  assert_false(args.debug);
}

/* [null] where one value is expected: Consul's hook unwraps it to nil and the next hook panics, so
 * Consul never answers; refused saying so, at the first place, even with decode errors about. */
static void test_null_in_list_is_consul_panic(void **state) {
  (void)state;
  po_Arguments args;
  po_Status st;
  static const char *const cases[][2] = {
      {"{\"Debug\": [null]}", "Debug: "},
      {"{\"Patches\": [[null]]}", "Patches[0]: "},
      {"{\"Patches\": [{\"Op\": [], \"ResourceFilter\": {\"Services\": [[[null]]]}}]}",
       "Patches[0].ResourceFilter.Services[0]: "},
      {"{\"Patches\": [{\"Value\": [null]}]}", "Patches[0].Value: "},
      {"{\"basicextensionadapter\": [null]}", "BasicExtensionAdapter: "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_false(decode(cases[i][0], &args, &st));
    assert_true(strncmp(st.message, cases[i][1], strlen(cases[i][1])) == 0);
    assert_non_null(strstr(st.message, "panics"));
  }
  /* null itself, and [null] inside a Value's map (unSlice, no hook after it), are fine */
  assert_true(decode("{\"Debug\": null, \"Patches\": [{\"Value\": {\"a\": [null]}}]}", &args, &st));
}

static void test_weak_scalars(void **state) {
  (void)state;
  po_Arguments args;
  po_Status st;
  assert_true(decode("{\"Patches\": [{\"Op\": true, \"Path\": 1.5}], \"Debug\": 0}", &args, &st));
  assert_string_equal(args.patches[0].op, "1");
  assert_string_equal(args.patches[0].path, "1.5");
  assert_false(args.debug);
  assert_true(decode("{\"Patches\": [], \"Debug\": 2.0}", &args, &st));
  assert_true(args.debug);
  assert_true(decode("{\"Patches\": {}}", &args, &st));
  assert_int_equal(args.patch_count, 0);
  assert_true(decode("{\"Patches\": [{\"ResourceFilter\": {}}]}", &args, &st));
  assert_false(args.patches[0].resource_filter.present);
}

static void test_errors_are_sorted_and_prefixed(void **state) {
  (void)state;
  po_Arguments args;
  po_Status st;
  assert_false(decode("{\"Patches\": [\"x\", {\"Op\": {\"a\": 1}, \"ResourceFilter\": 3}], \"Debug\": \"maybe\"}", &args, &st));
  assert_int_equal(st.code, kPo_Status_Invalid);
  assert_string_equal(st.message,
                      "error decoding extension arguments: 4 error(s) decoding:\n\n"
                      "* 'Patches[0]' expected a map, got 'string'\n"
                      "* 'Patches[1].Op' expected type 'propertyoverride.Op', got unconvertible type 'map[string]interface {}', value: 'map[a:1]'\n"
                      "* 'Patches[1].ResourceFilter' expected a map, got 'int'\n"
                      "* cannot parse 'Debug' as bool: strconv.ParseBool: parsing \"maybe\": invalid syntax");
}

static void test_constructor_reports_decode_errors_alone(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const char *t = "{\"Patches\": [{\"Op\": [1, 2]}]}";
  po_Value *v = po_Value_ParseJson(t, strlen(t), A, &st);
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_null(po_Constructor(NULL, v, NULL, A, d));
  assert_string_equal(po_Diagnostics_ConsulText(d, true, A),
                      "error decoding extension arguments: 1 error(s) decoding:\n\n"
                      "* 'Patches[0].Op' expected type 'propertyoverride.Op', got unconvertible type '[]int', value: '[1 2]'");
}

/* A key holding U+0000 is refused by the JSON reader (json-c would cut it to "a", where it could
 * take another key's place); a value keeps its NUL; an escaped quote does not end a string. */
static void test_json_nul_key_refused(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const char *t = "{\"ok\": \"x\\u0000y\",\n \"q\\\"\\u0000\": 1}";
  assert_null(po_Value_ParseJson(t, strlen(t), A, &st));
  assert_string_equal(st.message, "line 2, column 2: a mapping key holding U+0000 (\\u0000): keys are kept as C "
                                  "strings here, so it would be cut (and could take another key's place); refused "
                                  "rather than cut: remove the NUL from the key");
  po_Status_Clear(&st);
  const char *v = "{\"ok\": \"x\\u0000y\", \"\\\"a\": \"\\u0000:\"}";
  assert_non_null(po_Value_ParseJson(v, strlen(v), A, &st));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_nul_key_refused),
      cmocka_unit_test(test_weak_lifts_and_case),
      cmocka_unit_test(test_weak_scalars),
      cmocka_unit_test(test_keys_fold_as_go),
      cmocka_unit_test(test_null_in_list_is_consul_panic),
      cmocka_unit_test(test_errors_are_sorted_and_prefixed),
      cmocka_unit_test(test_constructor_reports_decode_errors_alone),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
