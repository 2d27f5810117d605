/* Unit tests of po-apiserver's pure parts: the CEL subset, YAML typing, patches, selectors,
 * JSONPath, schema texts. Tables of input / expected output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static json_object *J(const char *s) { return json_tokener_parse(s); }

static const char *S(json_object *o) { return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN); }

static void test_cel(void **state) {
  (void)state;
  static const struct { const char *rule, *self; int want; } cases[] = {
      {"self.startsWith('/')", "\"/a\"", 1},
      {"self.startsWith('/')", "\"a\"", 0},
      {"!self.matches('^/+$')", "\"//\"", 0},
      {"!self.matches('^/+$')", "\"/x\"", 1},
      {"!has(self.kind) || self.kind != 'ProxyDefaults' || self.name == 'global'", "{\"kind\":\"ProxyDefaults\",\"name\":\"x\"}", 0},
      {"!has(self.kind) || self.kind != 'ProxyDefaults' || self.name == 'global'", "{\"name\":\"x\"}", 1},
      {"!has(self.services) || size(self.services) == 0 || self.trafficDirection == 'outbound'", "{\"services\":[1],\"trafficDirection\":\"inbound\"}", 0},
      {"!has(self.services) || size(self.services) == 0 || self.trafficDirection == 'outbound'", "{\"services\":[],\"trafficDirection\":\"inbound\"}", 1},
      {"self.a + 1 > 2 && self.b.size() == 2", "{\"a\":2,\"b\":\"xy\"}", 1},
      {"self.items.all(i, i.n < 3)", "{\"items\":[{\"n\":1},{\"n\":2}]}", 1},
      {"self.items.exists(i, i.n == 9)", "{\"items\":[{\"n\":1}]}", 0},
      {"self.items.exists_one(i, i.n == 1)", "{\"items\":[{\"n\":1},{\"n\":1}]}", 0},
      {"'b' in self.m && !('z' in self.m)", "{\"m\":{\"b\":1}}", 1},
      {"self.x == 1 ? self.y : false", "{\"x\":1,\"y\":true}", 1},
      {"self.missing == 1", "{}", 2},               /* no such key */
      {"self.missing == 1 || true", "{}", 1},       /* commutative short-circuit */
      {"oldSelf == self", "{}", -1},                /* transition rules: outside the subset */
      {"self.size() <= 3 && self[0] == 'a'", "[\"a\",\"b\"]", 1},
      {"self.x % 2 == 0 && -self.x < 0", "{\"x\":4}", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_object *self = J(cases[i].self);
    char err[256] = "";
    int got = po_As_Cel_Eval(cases[i].rule, self, err, sizeof err);
    if (got != cases[i].want) fail_msg("rule %s on %s: got %d, want %d (%s)", cases[i].rule, cases[i].self, got, cases[i].want, err);
    json_object_put(self);
  }
}

static void test_yaml(void **state) {
  (void)state;
  char msg[256];
  const char *y = "a: 1\nb: '1'\nc: true\nd: ~\ne: 1.5\nf: [x, \"y\"]\ng: &A {h: 0x10}\ni: *A\n---\n---\nk: v\n";
  json_object *docs = po_As_Yaml_Parse(y, strlen(y), msg, sizeof msg);
  assert_non_null(docs);
  assert_string_equal(S(docs), "[{\"a\":1,\"b\":\"1\",\"c\":true,\"d\":null,\"e\":1.5,\"f\":[\"x\",\"y\"],\"g\":{\"h\":16},\"i\":{\"h\":16}},{\"k\":\"v\"}]");
  json_object_put(docs);
  const char *bad = "{[a]: 1}";
  assert_null(po_As_Yaml_Parse(bad, strlen(bad), msg, sizeof msg));
  assert_non_null(strstr(msg, "mapping keys must be scalars"));
}

static void test_patches(void **state) {
  (void)state;
  json_object *p = J("{\"a\":{\"b\":null,\"c\":2},\"d\":[1]}");
  json_object *r = po_As_MergePatch(J("{\"a\":{\"b\":1},\"d\":[0,0],\"e\":3}"), p);
  assert_string_equal(S(r), "{\"a\":{\"c\":2},\"d\":[1],\"e\":3}");
  json_object_put(r);
  json_object_put(p);
  p = J("{\"ports\":[{\"port\":80,\"name\":\"x\",\"targetPort\":8080},{\"name\":\"y\",\"$patch\":\"delete\"}]}");
  r = po_As_StrategicPatch(J("{\"ports\":[{\"name\":\"x\",\"port\":80},{\"name\":\"y\",\"port\":81}]}"), p);
  assert_string_equal(S(r), "{\"ports\":[{\"name\":\"x\",\"port\":80,\"targetPort\":8080}]}");
  json_object_put(r);
  json_object_put(p);
  char msg[512] = "";
  p = J("[{\"op\":\"add\",\"path\":\"/l/1\",\"value\":9},{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/b\"},{\"op\":\"remove\",\"path\":\"/l/0\"}]");
  r = po_As_JsonPatch(J("{\"a\":1,\"l\":[1,2]}"), p, msg, sizeof msg);
  assert_non_null(r);
  assert_string_equal(S(r), "{\"l\":[9,2],\"b\":1}");
  json_object_put(r);
  json_object_put(p);
  p = J("[{\"op\":\"remove\",\"path\":\"/nope\"}]");
  assert_null(po_As_JsonPatch(J("{}"), p, msg, sizeof msg));
  json_object_put(p);
}

static void test_selectors_and_jsonpath(void **state) {
  (void)state;
  json_object *o = J("{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"status\":{\"conditions\":[{\"type\":\"X\",\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"True\"}]}}");
  static const struct { const char *labels, *fields; bool want; } cases[] = {
      {"a=1", NULL, true}, {"a==1,b!=3", NULL, true}, {"a in (2,3)", NULL, false}, {"c notin (1)", NULL, true},
      {"!a", NULL, false}, {"b", NULL, true}, {NULL, "metadata.name=n", true}, {NULL, "metadata.name!=n", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char msg[256];
    po_As_Selector *s = po_As_Selector_Parse(cases[i].labels, cases[i].fields, msg, sizeof msg);
    assert_non_null(s);
    if (po_As_Selector_Match(s, o) != cases[i].want) fail_msg("selector %s %s", cases[i].labels, cases[i].fields);
    po_As_Selector_Free(s);
  }
  json_object *v = po_As_JsonPath(o, ".status.conditions[?(@.type==\"Ready\")].status");
  assert_string_equal(json_object_get_string(v), "True");
  json_object_put(v);
  v = po_As_JsonPath(o, ".status.conditions[0].type");
  assert_string_equal(json_object_get_string(v), "X");
  json_object_put(v);
  assert_null(po_As_JsonPath(o, ".spec.nothing"));
  json_object_put(o);
}

static void test_schema_texts(void **state) {
  (void)state;
  json_object *sch = J("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"required\":[\"n\"],\"properties\":{"
                       "\"n\":{\"type\":\"integer\",\"maximum\":5},\"e\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]},"
                       "\"s\":{\"type\":\"string\",\"maxLength\":2}}}}}");
  json_object *obj = J("{\"spec\":{\"n\":9,\"e\":\"c\",\"s\":\"abc\",\"u\":1}}");
  po_As_Causes c = {0};
  po_As_Schema_Validate(sch, obj, &c);
  assert_string_equal(S(c.causes),
                      "[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: 9: spec.n in body should be less than or equal to 5\",\"field\":\"spec.n\"},"
                      "{\"reason\":\"FieldValueNotSupported\",\"message\":\"Unsupported value: \\\"c\\\": supported values: \\\"a\\\", \\\"b\\\"\",\"field\":\"spec.e\"},"
                      "{\"reason\":\"FieldValueTooLong\",\"message\":\"Too long: may not be more than 2 bytes\",\"field\":\"spec.s\"}]");
  assert_string_equal(S(c.unknown), "[\"spec.u\"]");
  json_object_put(c.causes);
  json_object_put(c.unknown);
  json_object_put(obj);
  json_object_put(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cel), cmocka_unit_test(test_yaml), cmocka_unit_test(test_patches),
      cmocka_unit_test(test_selectors_and_jsonpath), cmocka_unit_test(test_schema_texts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
