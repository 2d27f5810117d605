/* Unit tests of po-apiserver's pure parts: the CEL subset, YAML typing, patches, selectors,
 * JSONPath, schema texts. Tables of input / expected output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
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
      /* has(): the operand is selected as usual; the test needs a map */
      {"has(self.a.b)", "{}", 2},                    /* no such key: a */
      {"has(self.a.b)", "{\"a\":{}}", 0},
      {"has(self.a.b)", "{\"a\":{\"b\":null}}", 1},
      {"has(self.a.b)", "{\"a\":null}", 2},          /* invalid type for field selection */
      {"has(self.a.b)", "{\"a\":[1]}", 2},
      {"!has(self.a) || has(self.a.b)", "{}", 1},
      {"has(self)", "{}", -1},                       /* has() takes a field selection */
      /* macros: errors under CEL's commutative && and || */
      {"self.l.exists(e, e.n == 1)", "{\"l\":[{},{\"n\":1}]}", 1},   /* true wins over an error */
      {"self.l.exists(e, e.n == 2)", "{\"l\":[{},{\"n\":1}]}", 2},
      {"self.l.all(e, e.n == 2)", "{\"l\":[{},{\"n\":1}]}", 0},      /* false wins over an error */
      {"self.l.all(e, e.n == 1)", "{\"l\":[{},{\"n\":1}]}", 2},
      {"self.l.exists_one(e, e.n == 1)", "{\"l\":[{},{\"n\":1}]}", 2},
      {"self.l.exists(e, true)", "{\"l\":null}", 2},                    /* not a list or map */
      {"self.l.exists(e, true)", "{\"l\":\"s\"}", 2},
      {"self.m.exists(k, k == 'b')", "{\"m\":{\"a\":1,\"b\":2}}", 1},
      /* filter(): the elements (a map's keys) whose predicate holds, in order; any error is its result */
      {"self.l.filter(e, e > 1) == [2, 3]", "{\"l\":[1,2,3]}", 1},
      {"self.l.filter(e, e > 1) == [3, 2]", "{\"l\":[1,2,3]}", 0},
      {"size(self.l.filter(e, e > 5)) == 0", "{\"l\":[1,2,3]}", 1},
      {"self.m.filter(k, k != 'a') == ['b']", "{\"m\":{\"a\":1,\"b\":2}}", 1},
      {"self.l.filter(e, e.n == 1) == []", "{\"l\":[{},{\"n\":2}]}", 2},
      {"self.l.filter(e, has(e.n) && e.n == 1) == self.k.filter(e, has(e.n) && e.n == 1)",
       "{\"l\":[{\"n\":1,\"a\":1},{}],\"k\":[{},{\"m\":2},{\"n\":1,\"a\":1}]}", 1},
      {"self.l.filter(e, true)", "{\"l\":\"s\"}", 2},
      /* equality: deep, numbers by value, different types unequal */
      {"self.a == self.b", "{\"a\":{\"x\":[1,{\"y\":\"z\"}]},\"b\":{\"x\":[1,{\"y\":\"z\"}]}}", 1},
      {"self.a != self.b", "{\"a\":{\"x\":[1,2]},\"b\":{\"x\":[2,1]}}", 1},
      {"self.a == self.b", "{\"a\":{\"x\":1},\"b\":{\"x\":1,\"y\":1}}", 0},
      {"self.a == self.b", "{\"a\":{\"x\":1},\"b\":{\"x\":1.0}}", 1},
      {"self.a == self.b", "{\"a\":1,\"b\":\"1\"}", 0},
      {"self.a == null", "{\"a\":{}}", 0},
      {"[{'a': 1}] == self.l", "{\"l\":[{\"a\":1}]}", -1},           /* map literals: outside the subset */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_object *self = J(cases[i].self);
    char err[256] = "";
    int got = po_As_Cel_Eval(cases[i].rule, self, err, sizeof err);
    if (got != cases[i].want) fail_msg("rule %s on %s: got %d, want %d (%s)", cases[i].rule, cases[i].self, got, cases[i].want, err);
    json_object_put(self);
  }
}

/* The matchConditions deploy/ and the chart ship (deploy/base/webhook.yaml), over the objects a
 * ServiceDefaults write can carry: 1 call the webhook, 0 skip it, 2 evaluation error. */
static const char kHolds[] =
    "has(object.spec) && has(object.spec.envoyExtensions) && "
    "object.spec.envoyExtensions.exists(e, has(e.name) && e.name == 'builtin/property-override')";
static const char kChanged[] = "oldObject == null || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec";
#define PO_OURS(x) x ".spec.envoyExtensions.filter(e, has(e.name) && e.name == 'builtin/property-override')"
static const char kEntriesChanged[] =
    "oldObject == null || !has(object.spec) || !has(object.spec.envoyExtensions) || "
    "!has(oldObject.spec) || !has(oldObject.spec.envoyExtensions) || "
    "(object.spec.envoyExtensions != oldObject.spec.envoyExtensions && " PO_OURS("object") " != " PO_OURS("oldObject") ")";
#define PO_LUA "{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}}"
#define PO_A "{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":[1]}}"
#define PO_B "{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":[2]}}"
#define PO_SD(protocol, list) "{\"spec\":{\"protocol\":\"" protocol "\",\"envoyExtensions\":[" list "]}}"

static void test_cel_match_conditions(void **state) {
  (void)state;
  static const struct { const char *expr, *object, *old; int want; } cases[] = {
      {kHolds, "{\"metadata\":{\"name\":\"a\"}}", NULL, 0},
      {kHolds, "{\"spec\":{}}", NULL, 0},
      {kHolds, "{\"spec\":{\"envoyExtensions\":[]}}", NULL, 0},
      {kHolds, "{\"spec\":{\"envoyExtensions\":[{\"name\":\"builtin/lua\"}]}}", NULL, 0},
      {kHolds, "{\"spec\":{\"envoyExtensions\":[{\"required\":true}]}}", NULL, 0},       /* no name: no error */
      {kHolds, "{\"spec\":{\"envoyExtensions\":[{\"name\":\"builtin/property-override-x\"}]}}", NULL, 0},
      {kHolds, "{\"spec\":{\"envoyExtensions\":[{\"name\":\"builtin/lua\"},{\"name\":\"builtin/property-override\"}]}}", NULL, 1},
      {kHolds, "{\"spec\":{\"envoyExtensions\":[{},{\"name\":\"builtin/property-override\",\"arguments\":{}}]}}", NULL, 1},
      {kHolds, "{\"spec\":{\"envoyExtensions\":null}}", NULL, 2},   /* never stored: null is pruned */
      {kChanged, "{\"spec\":{\"a\":1}}", NULL, 1},                         /* CREATE */
      {kChanged, "{\"spec\":{\"a\":1},\"metadata\":{\"finalizers\":[\"f\"]}}", "{\"spec\":{\"a\":1}}", 0},
      {kChanged, "{\"spec\":{\"a\":2}}", "{\"spec\":{\"a\":1}}", 1},
      {kChanged, "{\"spec\":{\"a\":1}}", "{\"metadata\":{}}", 1},
      /* entries-changed: only the builtin/property-override entries, wherever they stand */
      {kEntriesChanged, PO_SD("http", PO_A), NULL, 1},                                        /* CREATE */
      {kEntriesChanged, PO_SD("grpc", PO_LUA "," PO_A), PO_SD("http", PO_LUA "," PO_A), 0},   /* protocol */
      {kEntriesChanged, PO_SD("http", PO_LUA "," PO_A), PO_SD("http", PO_A), 0},              /* moved by another */
      {kEntriesChanged, PO_SD("http", PO_A), PO_SD("http", PO_A "," PO_LUA), 0},
      {kEntriesChanged, PO_SD("http", PO_B), PO_SD("http", PO_A), 1},                         /* changed */
      {kEntriesChanged, PO_SD("http", PO_A "," PO_B), PO_SD("http", PO_A), 1},                /* added */
      {kEntriesChanged, PO_SD("http", PO_A), PO_SD("http", PO_A "," PO_B), 1},                /* one removed */
      {kEntriesChanged, PO_SD("http", PO_B "," PO_A), PO_SD("http", PO_A "," PO_B), 1},       /* reordered */
      {kEntriesChanged, PO_SD("http", PO_A), "{\"spec\":{\"protocol\":\"http\"}}", 1},      /* the first */
      {kEntriesChanged, "{\"spec\":{\"protocol\":\"http\"}}", PO_SD("http", PO_A), 1},      /* all gone (holds: 0) */
      {"request.operation == 'CREATE' && request.kind.kind == 'ServiceDefaults'", "{}", NULL, 1},
      {"authorizer.group('').resource('pods').check('get').allowed()", "{}", NULL, -1},
  };
  const char *names[] = {"object", "oldObject", "request"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_object *vals[] = {J(cases[i].object), cases[i].old ? J(cases[i].old) : NULL,
                           J("{\"operation\":\"CREATE\",\"kind\":{\"group\":\"consul.hashicorp.com\",\"kind\":\"ServiceDefaults\"}}")};
    char err[256] = "";
    int got = po_As_Cel_EvalVars(cases[i].expr, names, vals, 3, err, sizeof err);
    if (got != cases[i].want)
      fail_msg("case %zu: %s on %s / %s: got %d, want %d (%s)", i, cases[i].expr, cases[i].object, cases[i].old ? cases[i].old : "null",
               got, cases[i].want, err);
    for (int k = 0; k < 3; k++) json_object_put(vals[k]);
  }
}

/* ValidatingWebhookConfiguration writes: matchConditions checked as the real server does. */
static void test_webhook_config_check(void **state) {
  (void)state;
  static const struct { const char *vwc, *field, *msg; } cases[] = {
      {"{\"webhooks\":[{\"name\":\"a\",\"matchConditions\":[{\"name\":\"x\",\"expression\":\"has(object.spec)\"}]}]}", NULL, NULL},
      {"{\"webhooks\":[{\"name\":\"a\"},{\"matchConditions\":[{\"expression\":\"true\"}]}]}", "webhooks[1].matchConditions[0].name", "Required value"},
      {"{\"webhooks\":[{\"matchConditions\":[{\"name\":\"x\"}]}]}", "webhooks[0].matchConditions[0].expression", "Required value"},
      {"{\"webhooks\":[{\"matchConditions\":[{\"name\":\"x\",\"expression\":\"true\"},{\"name\":\"x\",\"expression\":\"true\"}]}]}",
       "webhooks[0].matchConditions[1].name", "Duplicate value: \"x\""},
      {"{\"webhooks\":[{\"matchConditions\":[{\"name\":\"x\",\"expression\":\"object.spec.matches(\"}]}]}",
       "webhooks[0].matchConditions[0].expression", "compilation failed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_object *v = J(cases[i].vwc);
    char field[128] = "", reason[64] = "", msg[512] = "";
    bool ok = po_As_Admission_CheckConfig(v, field, sizeof field, reason, sizeof reason, msg, sizeof msg);
    if (!cases[i].field) {
      if (!ok) fail_msg("case %zu refused: %s %s", i, field, msg);
    } else if (ok || strcmp(field, cases[i].field) != 0 || !strstr(msg, cases[i].msg)) {
      fail_msg("case %zu: got %d %s: %s, want %s: %s", i, ok, field, msg, cases[i].field, cases[i].msg);
    }
    json_object_put(v);
  }
  json_object *many = J("{\"webhooks\":[{\"matchConditions\":[]}]}");
  json_object *conds = json_object_object_get(json_object_array_get_idx(json_object_object_get(many, "webhooks"), 0), "matchConditions");
  for (int i = 0; i < 65; i++) {
    char b[64];
    snprintf(b, sizeof b, "{\"name\":\"c%d\",\"expression\":\"true\"}", i);
    json_object_array_add(conds, J(b));
  }
  char field[128], reason[64], msg[512];
  assert_false(po_As_Admission_CheckConfig(many, field, sizeof field, reason, sizeof reason, msg, sizeof msg));
  assert_string_equal(msg, "Too many: 65: must have at most 64 items");
  json_object_put(many);
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
      cmocka_unit_test(test_cel), cmocka_unit_test(test_cel_match_conditions), cmocka_unit_test(test_webhook_config_check),
      cmocka_unit_test(test_yaml), cmocka_unit_test(test_patches),
      cmocka_unit_test(test_selectors_and_jsonpath), cmocka_unit_test(test_schema_texts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
