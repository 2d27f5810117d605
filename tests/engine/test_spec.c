/* The PropertyOverride spec: strict camelCase decoding, and the Consul arguments written from
 * it, which Consul's decoder must accept with the same meaning (under the wire convention). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"

static po_Arena *A;
static int setup(void **s) { (void)s; A = po_Arena_New(); return A ? 0 : -1; }
static int teardown(void **s) { (void)s; po_Arena_Free(A); return 0; }

static po_Value *parse_yaml(const char *y) {
  po_Value **docs;
  size_t n;
  po_Status st;
  po_Status_Clear(&st);
  assert_true(po_Value_ParseYaml(y, strlen(y), A, &docs, &n, &st));
  return docs[0];
}

static void test_spec_round_trip_to_consul(void **state) {
  (void)state;
  po_Value *spec = parse_yaml(
      "targetRef: {kind: ServiceDefaults, name: web}\n"
      "patches:\n"
      "- resourceFilter:\n"
      "    resourceType: cluster\n"
      "    trafficDirection: outbound\n"
      "    services: [{name: db, namespace: prod}]\n"
      "  op: add\n"
      "  path: /outlier_detection/max_ejection_percent\n"
      "  value: 50\n"
      "- resourceFilter: {resourceType: listener, trafficDirection: inbound}\n"
      "  op: remove\n"
      "  path: /per_connection_buffer_limit_bytes\n");
  po_Arguments args;
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_true(po_Arguments_DecodeSpec(spec, A, &args, d));
  assert_int_equal(args.patch_count, 2);
  assert_int_equal(args.patches[1].pos.line, 10);
  po_Value *consul = po_Arguments_ToConsul(&args, A);
  assert_string_equal(po_Value_ToJson(consul, A),
                      "{\"Patches\":[{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\","
                      "\"Services\":[{\"Name\":\"db\",\"Namespace\":\"prod\"}]},\"Op\":\"add\","
                      "\"Path\":\"/outlier_detection/max_ejection_percent\",\"Value\":50},"
                      "{\"ResourceFilter\":{\"ResourceType\":\"listener\",\"TrafficDirection\":\"inbound\"},"
                      "\"Op\":\"remove\",\"Path\":\"/per_connection_buffer_limit_bytes\"}]}");
  po_CompileOptions co = po_CompileOptions_Default();
  co.convention = kPo_Convention_Wire;
  po_Diagnostics *d2 = po_Diagnostics_New(A);
  assert_non_null(po_Constructor(NULL, consul, &co, A, d2));
}

static void test_spec_is_strict(void **state) {
  (void)state;
  po_Value *spec = parse_yaml(
      "patches:\n"
      "- resourceFilter: {resourceType: cluster, trafficDirection: outbound, service: [x]}\n"
      "  op: 5\n"
      "  Path: /name\n"
      "debug: \"yes\"\n" /* quoted: a string (plain yes is true, as kubectl reads it) */
      "required: 1\n");   /* a known key (the entry's flag, read by the target adapter), of the wrong type */
  po_Arguments args;
  po_Diagnostics *d = po_Diagnostics_New(A);
  assert_false(po_Arguments_DecodeSpec(spec, A, &args, d));
  const char *want[] = {
      "spec.debug: must be true or false",
      "spec.required: must be true or false",
      "spec.patches[0].Path: unknown field (known: resourceFilter, op, path, value)",
      "spec.patches[0].resourceFilter.service: unknown field (known: resourceType, trafficDirection, services)",
      "spec.patches[0].op: must be a string, not int",
  };
  assert_int_equal(po_Diagnostics_Count(d), 5);
  for (size_t i = 0; i < 5; i++) assert_string_equal(po_Diagnostics_At(d, i)->message, want[i]);
  assert_int_equal(po_Diagnostics_At(d, 2)->patch_index, 0);
}

/* po_Arguments_Adopt: a spec decoded from a tree in a scratch arena reads the same, and writes
 * the same Consul arguments, after that arena is freed (the reconciler keeps only what the patches
 * reference): no pointer into the tree is left (and valgrind and the ASan stage see a read after
 * the free). */
static void test_spec_adopted_outlives_its_tree(void **state) {
  (void)state;
  static const char kSpec[] =
      "proxyType: connect-proxy\n"
      "patches:\n"
      "- resourceFilter:\n"
      "    resourceType: cluster\n"
      "    trafficDirection: outbound\n"
      "    services: [{name: db, namespace: prod, partition: p1}]\n"
      "  op: add\n"
      "  path: /outlier_detection\n"
      "  value: {max_ejection_percent: 50, interval: 1.5, names: [a, b], big: 99999999999999999999, on: true, none: null}\n"
      "- resourceFilter: {resourceType: listener, trafficDirection: inbound}\n"
      "  op: remove\n"
      "  path: /per_connection_buffer_limit_bytes\n";
  po_Arguments want, got;
  po_Diagnostics *d = po_Diagnostics_New(A);
  po_Value **docs;
  size_t n;
  po_Status st;
  po_Status_Clear(&st);
  assert_true(po_Value_ParseYaml(kSpec, strlen(kSpec), A, &docs, &n, &st));
  assert_true(po_Arguments_DecodeSpec(docs[0], A, &want, d));
  const char *want_json = po_Value_ToJson(po_Arguments_ToConsul(&want, A), A);
  po_Arena *tree = po_Arena_New();
  assert_non_null(tree);
  assert_true(po_Value_ParseYaml(kSpec, strlen(kSpec), tree, &docs, &n, &st));
  assert_true(po_Arguments_DecodeSpec(docs[0], A, &got, d));
  assert_true(po_Arguments_Adopt(&got, A));
  const po_Value *v = got.patches[0].value;
  po_Pos pos = po_Value_Pos(v);
  /* nothing of the tree is referenced: not the value, not its strings (then read after the free) */
  const po_Value *tp = po_Value_At(po_Value_Get(docs[0], "patches"), 0);
  assert_ptr_not_equal(v, po_Value_Get(tp, "value"));
  assert_ptr_not_equal(got.patches[0].path, po_Value_String(po_Value_Get(tp, "path"), NULL));
  assert_ptr_not_equal(got.proxy_type, po_Value_String(po_Value_Get(docs[0], "proxyType"), NULL));
  assert_ptr_not_equal(po_Value_Get(v, "names"), po_Value_Get(po_Value_Get(tp, "value"), "names"));
  po_Arena_Free(tree);
  assert_string_equal(po_Value_ToJson(po_Arguments_ToConsul(&got, A), A), want_json);
  assert_string_equal(got.proxy_type, "connect-proxy");
  assert_string_equal(got.patches[0].resource_filter.services[0].partition, "p1");
  assert_string_equal(got.patches[1].path, "/per_connection_buffer_limit_bytes");
  assert_null(got.patches[1].value);
  /* what a reader of the copy sees beyond its JSON: positions, Go types, the literal beyond int64 */
  assert_int_equal(po_Value_Pos(v).line, pos.line);
  assert_int_equal(pos.line, 9);
  assert_string_equal(po_Value_GoType(po_Value_Get(v, "names")), "[]string");
  assert_string_equal(po_Value_GoType(po_Value_Get(v, "big")), "float64");
  assert_string_equal(po_Value_KeyAt(v, 5), "none");
  assert_int_equal(po_Value_Kind(po_Value_Get(v, "none")), kPo_ValueKind_Null);
  assert_null(po_Value_Copy(NULL, A));
}

/* po_Op_Parse compares bytes (no strcmp) on every compile: exactly "add" and "remove", nothing
 * shorter, longer or differently cased. */
static void test_op_parse_is_exact(void **state) {
  (void)state;
  assert_int_equal(po_Op_Parse("add"), kPo_Op_Add);
  assert_int_equal(po_Op_Parse("remove"), kPo_Op_Remove);
  static const char *const bad[] = {"", "a", "ad", "addd", "add ", "Add", "ADD", "r", "remov", "removed",
                                    "Remove", "replace", "test", "move", "copy", "aadd", "rremove"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (po_Op_Parse(bad[i]) != kPo_Op_Unknown) fail_msg("'%s' parsed as an op", bad[i]);
  }
  assert_int_equal(po_Op_Parse(NULL), kPo_Op_Unknown);
  assert_true(po_Ops_Contains("add"));
  assert_false(po_Ops_Contains("ad"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_round_trip_to_consul),
      cmocka_unit_test(test_spec_is_strict),
      cmocka_unit_test(test_spec_adopted_outlives_its_tree),
      cmocka_unit_test(test_op_parse_is_exact),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
