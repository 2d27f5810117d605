/* po_Istio_Plan: what programming an EnvoyFilter does with what is there. Each case is
 * (current, desired, owner uid, uid our create returned) -> action, and for writes the object. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "po/meshes/istio.h"

static const char kDesired[] =
    "{\"apiVersion\":\"networking.istio.io/v1alpha3\",\"kind\":\"EnvoyFilter\","
    "\"metadata\":{\"name\":\"propertyoverride-a\",\"namespace\":\"shop\","
    "\"labels\":{\"app.kubernetes.io/managed-by\":\"propertyoverride\"}},"
    "\"spec\":{\"workloadSelector\":{\"labels\":{\"app\":\"api\"}},\"configPatches\":[{\"applyTo\":\"CLUSTER\","
    "\"match\":{\"context\":\"SIDECAR_OUTBOUND\"},\"patch\":{\"operation\":\"MERGE\",\"value\":{\"connect_timeout\":\"3s\"}}}]}}";

/* The object as the server has it: desired with uid, resourceVersion and the given annotations. */
static json_object *current(const char *uid, const char *owner, const char *created, const char *timeout) {
  json_object *o = json_tokener_parse(kDesired), *md = json_object_object_get(o, "metadata");
  json_object_object_add(md, "uid", json_object_new_string(uid));
  json_object_object_add(md, "resourceVersion", json_object_new_string("42"));
  json_object *ann = json_object_new_object();
  json_object_object_add(ann, "someone/else", json_object_new_string("kept"));
  if (owner) json_object_object_add(ann, "propertyoverride.io/owner-uid", json_object_new_string(owner));
  if (created) json_object_object_add(ann, "propertyoverride.io/created", json_object_new_string(created));
  json_object_object_add(md, "annotations", ann);
  if (timeout) {
    json_object *v = json_object_object_get(json_object_object_get(json_object_array_get_idx(
                                                json_object_object_get(json_object_object_get(o, "spec"), "configPatches"), 0),
                                                "patch"), "value");
    json_object_object_add(v, "connect_timeout", json_object_new_string(timeout));
  }
  return o;
}

static const char *ann(json_object *o, const char *k) {
  json_object *a = json_object_object_get(json_object_object_get(o, "metadata"), "annotations");
  json_object *v = a ? json_object_object_get(a, k) : NULL;
  return v ? json_object_get_string(v) : NULL;
}

static void test_absent_is_created_with_its_owner(void **state) {
  (void)state;
  json_object *d = json_tokener_parse(kDesired);
  po_OwnedPlan p = po_Istio_Plan(NULL, d, "po-uid", NULL);
  assert_int_equal(p.action, kPo_OwnedPlan_Create);
  assert_string_equal(ann(p.object, "propertyoverride.io/owner-uid"), "po-uid");
  assert_null(ann(p.object, "propertyoverride.io/created")); /* its uid is not known yet */
  json_object_put(p.object);
  json_object_put(d);
}

static void test_fresh_create_is_bound_to_its_uid(void **state) {
  (void)state;
  json_object *d = json_tokener_parse(kDesired), *c = current("ef-1", "po-uid", NULL, NULL);
  po_OwnedPlan p = po_Istio_Plan(c, d, "po-uid", "ef-1");
  assert_int_equal(p.action, kPo_OwnedPlan_Update);
  assert_string_equal(ann(p.object, "propertyoverride.io/created"), "ef-1");
  assert_string_equal(ann(p.object, "someone/else"), "kept");
  json_object_put(p.object);
  /* The create answered another uid: what is there now is not what we created. */
  p = po_Istio_Plan(c, d, "po-uid", "ef-0");
  assert_int_equal(p.action, kPo_OwnedPlan_Foreign);
  json_object_put(c);
  json_object_put(d);
}

static void test_ours_converges(void **state) {
  (void)state;
  json_object *d = json_tokener_parse(kDesired);
  json_object *same = current("ef-1", "po-uid", "ef-1", NULL), *drifted = current("ef-1", "po-uid", "ef-1", "9s");
  assert_int_equal(po_Istio_Plan(same, d, "po-uid", NULL).action, kPo_OwnedPlan_None);
  po_OwnedPlan p = po_Istio_Plan(drifted, d, "po-uid", NULL);
  assert_int_equal(p.action, kPo_OwnedPlan_Update);
  assert_true(json_object_equal(json_object_object_get(p.object, "spec"), json_object_object_get(d, "spec")));
  assert_string_equal(json_object_get_string(json_object_object_get(json_object_object_get(p.object, "metadata"),
                                                                    "resourceVersion")), "42");
  assert_string_equal(ann(p.object, "someone/else"), "kept");
  json_object_put(p.object);
  /* No longer wanted: ours is deleted. */
  assert_int_equal(po_Istio_Plan(same, NULL, "po-uid", NULL).action, kPo_OwnedPlan_Delete);
  json_object_put(same);
  json_object_put(drifted);
  json_object_put(d);
}

/* issue 21: the generation the desired object carries (po_Owned_MarkGeneration) is ours to keep
 * like the spec: an object of ours without it, or naming another generation, is updated (its
 * spec the same); one naming it is as planned (po_Owned_Holds); others' annotations stay. */
static void test_generation_annotation_kept(void **state) {
  (void)state;
  json_object *d = json_tokener_parse(kDesired);
  assert_true(po_Owned_MarkGeneration(d, 2));
  json_object *c = current("ef-1", "po-uid", "ef-1", NULL);
  assert_int_equal(po_Owned_Generation(c, "po-uid"), 0);
  assert_false(po_Owned_Holds(c, d, "po-uid", kPo_Owned_EnvoyFilter));
  po_OwnedPlan p = po_Istio_Plan(c, d, "po-uid", NULL);
  assert_int_equal(p.action, kPo_OwnedPlan_Update);
  assert_string_equal(ann(p.object, "propertyoverride.io/generation"), "2");
  assert_string_equal(ann(p.object, "someone/else"), "kept");
  assert_string_equal(ann(p.object, "propertyoverride.io/created"), "ef-1");
  assert_int_equal(po_Owned_Generation(p.object, "po-uid"), 2);
  assert_int_equal(po_Owned_Generation(p.object, "other-uid"), 0); /* not ours: says nothing */
  assert_true(po_Owned_Holds(p.object, d, "po-uid", kPo_Owned_EnvoyFilter));
  assert_int_equal(po_Istio_Plan(p.object, d, "po-uid", NULL).action, kPo_OwnedPlan_None);
  json_object *d3 = json_tokener_parse(kDesired);
  assert_true(po_Owned_MarkGeneration(d3, 3));
  assert_false(po_Owned_Holds(p.object, d3, "po-uid", kPo_Owned_EnvoyFilter));
  json_object_put(d3);
  json_object_put(p.object);
  json_object_put(c);
  json_object_put(d);
}

static void test_look_alikes_are_left_alone(void **state) {
  (void)state;
  json_object *d = json_tokener_parse(kDesired);
  struct {
    json_object *c;
    const char *why;
  } cases[] = {
      {current("ef-1", NULL, NULL, NULL), "did not create"},           /* written by hand */
      {current("ef-2", "po-uid", "ef-1", NULL), "not its own uid"},    /* a copy or a restore */
      {current("ef-1", "old-po-uid", "ef-1", NULL), "did not create"}, /* of a PropertyOverride since recreated */
      {current("ef-1", "po-uid", NULL, NULL), "did not create"},       /* never bound, and not just created by us */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    po_OwnedPlan p = po_Istio_Plan(cases[i].c, d, "po-uid", NULL);
    assert_int_equal(p.action, kPo_OwnedPlan_Foreign);
    assert_null(p.object);
    assert_non_null(strstr(p.why, cases[i].why));
    /* Not wanted either: still never deleted. */
    assert_int_equal(po_Istio_Plan(cases[i].c, NULL, "po-uid", NULL).action, kPo_OwnedPlan_None);
    json_object_put(cases[i].c);
  }
  json_object_put(d);
}

/* Kubernetes' DNS-1123 subdomain: <= 253, labels of [a-z0-9-] that start and end alphanumeric,
 * joined by dots. */
static bool is_subdomain(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 253) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i], prev = i ? s[i - 1] : '.', next = i + 1 < n ? s[i + 1] : '.';
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '-' && (prev == '.' || next == '.')) return false;
    if (c == '.' && (prev == '.' || next == '.')) return false;
    if (!alnum && c != '-' && c != '.') return false;
  }
  return true;
}

/* The Mesh EnvoyFilter's name: one per (namespace, name), valid, deterministic, readable. Each
 * row: namespace, name, the name expected ("" for a hashed one: checked by shape). */
static void test_mesh_filter_name(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  assert_non_null(a);
  assert_string_equal(po_Istio_MeshFilterName("team-a", "timeouts", a), "propertyoverride.team-a.timeouts");
  /* namespaces have no dots: "a-b"/"c" and "a"/"b-c" never meet, nor "a"/"b.c" and "a.b"/"c" */
  assert_string_not_equal(po_Istio_MeshFilterName("a-b", "c", a), po_Istio_MeshFilterName("a", "b-c", a));
  assert_string_equal(po_Istio_MeshFilterName("a", "b.c", a), "propertyoverride.a.b.c");
  /* and none is a Service target's or the old Mesh name */
  assert_string_equal(po_Istio_LegacyMeshFilterName("timeouts", a), "propertyoverride-timeouts");
  char ns[64], name[254], name2[254];
  memset(ns, 'n', 63), ns[63] = '\0';
  memset(name, 'x', 253), name[253] = '\0';
  memcpy(name2, name, sizeof name2);
  name2[252] = 'y'; /* differs only past the readable prefix */
  name[230] = '.';  /* the cut lands right after a dot: no ".-" */
  name2[230] = '.';
  const char *h1 = po_Istio_MeshFilterName(ns, name, a), *h1b = po_Istio_MeshFilterName(ns, name, a);
  const char *h2 = po_Istio_MeshFilterName(ns, name2, a);
  assert_true(is_subdomain(h1));
  assert_true(is_subdomain(h2));
  assert_true(strlen(h1) <= 253);
  assert_string_equal(h1, h1b); /* deterministic */
  assert_string_not_equal(h1, h2);
  assert_int_equal(strncmp(h1, "propertyoverride.nnn", 20), 0); /* readable */
  /* the longest that needs no hash is kept whole */
  char fit[254];
  memset(fit, 'z', 253 - 17 - 1 - 3), fit[253 - 17 - 1 - 3] = '\0';
  const char *whole = po_Istio_MeshFilterName("abc", fit, a);
  assert_int_equal(strlen(whole), 253);
  assert_null(strchr(whole + 17 + 4, '-'));
  po_Arena_Free(a);
}

/* Issue 21 item 2, F7: the bounds (Istio's and Envoy Gateway's) count the bytes the API server
 * stores, Go's encoding/json: '<', '>', '&' as \\u003c, U+2028/U+2029 as \\u2028, an invalid
 * UTF-8 byte as \\ufffd (6 bytes each); json-c's 1 to 3 let a policy computed under 1 MiB be
 * ~2.4 MB in etcd. */
static void test_stored_bytes_count_go_escapes(void **state) {
  (void)state;
  assert_int_equal(po_Owned_StringBytes("a"), 3);
  assert_int_equal(po_Owned_StringBytes("<>&"), 2 + 18);
  assert_int_equal(po_Owned_StringBytes("\xe2\x80\xa8x\xe2\x80\xa9"), 2 + 6 + 1 + 6); /* U+2028 x U+2029 */
  assert_int_equal(po_Owned_StringBytes("\xc3\xa9"), 2 + 2);                             /* e-acute: as is */
  assert_int_equal(po_Owned_StringBytes("\xff\xc3"), 2 + 12);                            /* invalid: \\ufffd each */
  assert_int_equal(po_Owned_StringBytes("\xed\xa0\x80"), 2 + 18);                       /* a surrogate: invalid */
  assert_int_equal(po_Owned_StringBytes("\"\n"), 2 + 2 + 6);
  json_object *v = json_object_new_object();
  json_object_object_add(v, "k", json_object_new_string("a<b>&\xe2\x80\xa8/"));
  /* {"k":"a<b>&\u2028/"}: 8 + a, b, '/' + 3 x 6 + 6 */
  assert_int_equal(po_Owned_JsonBytes(v), 8 + 3 + 18 + 6);
  json_object_put(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_absent_is_created_with_its_owner),
      cmocka_unit_test(test_stored_bytes_count_go_escapes),
      cmocka_unit_test(test_mesh_filter_name),
      cmocka_unit_test(test_fresh_create_is_bound_to_its_uid),
      cmocka_unit_test(test_generation_annotation_kept),
      cmocka_unit_test(test_ours_converges),
      cmocka_unit_test(test_look_alikes_are_left_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
