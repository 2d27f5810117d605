/* The admission decision on every example (examples/README.md headers are the expectations):
 * valid ones are allowed, those the webhook must refuse are denied with every
 * `webhook-message`, `webhook-rule` and `webhook-suggests` text in the denial. Also: Consul
 * objects, DELETE, malformed reviews, the bounds of denials and the per-object limits. */
#include <dirent.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/meshes/consul_check.h"
#include "po/meshes/mesh.h"
#include "po/targets/override.h"
#include "po/webhook/admission.h"

static const char *g_root = ".";

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
  fclose(f);
  if (b) { b[n] = '\0'; *len = (size_t)n; }
  return b;
}

/* The values of one header key (continuation lines joined with a space). */
static int header(const char *text, const char *key, char vals[][512], int cap) {
  int n = 0;
  char pat[64];
  snprintf(pat, sizeof pat, "# %s: ", key);
  for (const char *p = text; (p = strstr(p, pat)) && n < cap;) {
    p += strlen(pat);
    const char *e = strchr(p, '\n');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    snprintf(vals[n], 512, "%.*s", (int)l, p);
    while (e && strncmp(e + 1, "#   ", 4) == 0) { /* continuation */
      const char *s = e + 5;
      e = strchr(s, '\n');
      size_t cl = e ? (size_t)(e - s) : strlen(s);
      size_t have = strlen(vals[n]);
      snprintf(vals[n] + have, 512 - have, " %.*s", (int)cl, s);
    }
    n++;
  }
  return n;
}

static json_object *review_of(json_object *obj, const char *group, const char *kind, const char *op) {
  json_object *r = json_object_new_object(), *req = json_object_new_object(), *k = json_object_new_object();
  json_object_object_add(r, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
  json_object_object_add(r, "kind", json_object_new_string("AdmissionReview"));
  json_object_object_add(req, "uid", json_object_new_string("uid-1"));
  json_object_object_add(k, "group", json_object_new_string(group));
  json_object_object_add(k, "version", json_object_new_string("v1alpha1"));
  json_object_object_add(k, "kind", json_object_new_string(kind));
  json_object_object_add(req, "kind", k);
  json_object_object_add(req, "operation", json_object_new_string(op));
  json_object_object_add(req, "object", obj);
  json_object_object_add(r, "request", req);
  return r;
}

static const po_Tenancy *g_tenancy; /* the policy decide() passes (NULL: everything allowed) */
static const po_TargetOptions *g_targets; /* the mesh options decide() passes (NULL: the defaults) */
static char g_warnings[8192];             /* the last response's warnings, as JSON ("" when none) */

/* Runs the review (and frees it); returns the response's denial message ("" when allowed). */
static char *decide(json_object *review, bool *allowed) {
  po_Arena *a = po_Arena_New();
  const char *body = json_object_to_json_string(review);
  po_CtlStatus st;
  json_object *out = po_Admission_Review(body, strlen(body), &(po_AdmissionOptions){.tenancy = g_tenancy, .targets = g_targets}, a, &st);
  assert_non_null(out);
  assert_int_equal(st.http_status, 200);
  json_object *resp = json_object_object_get(out, "response");
  assert_string_equal(json_object_get_string(json_object_object_get(resp, "uid")), "uid-1");
  *allowed = json_object_get_boolean(json_object_object_get(resp, "allowed"));
  json_object *denial = json_object_object_get(resp, "status");
  char *msg = strdup(denial ? json_object_get_string(json_object_object_get(denial, "message")) : "");
  json_object *w = json_object_object_get(resp, "warnings");
  snprintf(g_warnings, sizeof g_warnings, "%s", w ? json_object_to_json_string(w) : "");
  json_object_put(out);
  json_object_put(review);
  po_Arena_Free(a);
  return msg;
}

static json_object *yaml_object(const char *text, size_t len) {
  po_Arena *a = po_Arena_New();
  po_Value **docs;
  size_t n;
  po_Status st;
  po_Status_Clear(&st);
  assert_true(po_Value_ParseYaml(text, len, a, &docs, &n, &st));
  json_object *o = po_Value_ToJsonC(docs[0]);
  po_Arena_Free(a);
  return o;
}

static int g_checked;

static void check_dir(const char *sub, bool consul) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/examples/%s", g_root, sub);
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strstr(e->d_name, ".yaml")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len = 0;
    char *text = slurp(path, &len);
    assert_non_null(text);
    char expect[1][512] = {{0}}, by[1][512] = {{0}}, msgs[8][512], rules[4][512], sugg[4][512];
    header(text, "expect", expect, 1);
    header(text, "rejected-by", by, 1);
    int nm = header(text, "webhook-message", msgs, 8), nr = header(text, "webhook-rule", rules, 4);
    int ns = header(text, "webhook-suggests", sugg, 4);
    json_object *obj = yaml_object(text, len);
    json_object *meta = json_object_object_get(obj, "metadata");
    if (meta && !json_object_object_get(meta, "namespace")) json_object_object_add(meta, "namespace", json_object_new_string("default"));
    const char *kind = json_object_get_string(json_object_object_get(obj, "kind"));
    bool allowed;
    char *msg = decide(review_of(obj, consul ? "consul.hashicorp.com" : "propertyoverride.io", kind, "CREATE"), &allowed);
    bool want_denied = strcmp(expect[0], "rejected") == 0 && strstr(by[0], "webhook");
    if (!want_denied && strcmp(expect[0], "rejected") != 0 && !allowed) fail_msg("%s: denied: %s", path, msg);
    if (want_denied) {
      if (allowed) fail_msg("%s: allowed, want denied", path);
      for (int i = 0; i < nm; i++) if (!strstr(msg, msgs[i])) fail_msg("%s: denial lacks '%s':\n%s", path, msgs[i], msg);
      for (int i = 0; i < nr; i++) if (!strstr(msg, rules[i])) fail_msg("%s: denial lacks rule '%s':\n%s", path, rules[i], msg);
      for (int i = 0; i < ns; i++) if (!strstr(msg, sugg[i])) fail_msg("%s: denial lacks suggestion '%s':\n%s", path, sugg[i], msg);
    }
    g_checked++;
    free(msg);
    free(text);
  }
  closedir(d);
}

static void test_examples(void **state) {
  (void)state;
  g_checked = 0;
  check_dir("valid", false);
  check_dir("overlap", false);
  check_dir("invalid", false);
  check_dir("consul", true);
  assert_true(g_checked >= 25);
}

static void test_consul_objects_checked_under_wire_typing(void **state) {
  (void)state;
  json_object *sd = json_tokener_parse(
      "{\"kind\":\"ServiceDefaults\",\"metadata\":{\"name\":\"api\",\"namespace\":\"default\"},\"spec\":{\"envoyExtensions\":["
      "{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}},"
      "{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":[{\"ResourceFilter\":{\"ResourceType\":\"cluster\","
      "\"TrafficDirection\":\"outbound\"},\"Op\":\"add\",\"Path\":\"/lrs_report_endpoint_metrics\",\"Value\":[\"a\",\"b\"]}]}}]}}");
  bool allowed;
  char *msg = decide(review_of(sd, "consul.hashicorp.com", "ServiceDefaults", "UPDATE"), &allowed);
  assert_false(allowed);
  assert_non_null(strstr(msg, "spec.envoyExtensions[1] (builtin/property-override): 1 error occurred:\n\t* invalid Patches[0]: "
                              "patch value type []interface {} could not be applied to target field type 'repeated string'"));
  free(msg);
  json_object *del = json_tokener_parse("{\"kind\":\"PropertyOverride\",\"spec\":{}}");
  msg = decide(review_of(del, "propertyoverride.io", "PropertyOverride", "DELETE"), &allowed);
  assert_true(allowed);
  free(msg);
}

static void test_malformed_reviews(void **state) {
  (void)state;
  static const char *const bad[] = {"", "{", "[]", "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"x\"}}",
                                    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{}}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    po_Arena *a = po_Arena_New();
    po_CtlStatus st;
    assert_null(po_Admission_Review(bad[i], strlen(bad[i]), NULL, a, &st));
    assert_int_equal(st.http_status, 400);
    assert_int_equal(st.code, kPo_Ctl_BadRequest);
    assert_true(strlen(st.message) > 0);
    po_Arena_Free(a);
  }
}

/* A patch whose path names no field: Consul's error with the whole field list, and our hint. */
static json_object *bad_patch(bool consul, int i) {
  char text[512];
  snprintf(text, sizeof text,
           consul ? "{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"add\","
                    "\"Path\":\"/outlier_detection/max_ejection_percnt%d\",\"Value\":%d}"
                  : "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"op\":\"add\","
                    "\"path\":\"/outlier_detection/max_ejection_percnt%d\",\"value\":%d}",
           i, i);
  json_object *p = json_tokener_parse(text);
  assert_non_null(p);
  return p;
}

static json_object *override_with(int patches) {
  json_object *o = json_tokener_parse("{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                                      "\"metadata\":{\"name\":\"many\",\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"name\":\"api\"}}}");
  json_object *list = json_object_new_array();
  for (int i = 0; i < patches; i++) json_object_array_add(list, bad_patch(false, i));
  json_object_object_add(json_object_object_get(o, "spec"), "patches", list);
  return o;
}

/* entries x patches bad patches in builtin/property-override entries, beside one other extension. */
static json_object *service_defaults_with(int entries, int patches) {
  json_object *o = json_tokener_parse("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                                      "\"metadata\":{\"name\":\"api\",\"namespace\":\"default\"},\"spec\":{}}");
  json_object *exts = json_object_new_array();
  json_object_array_add(exts, json_tokener_parse("{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}}"));
  for (int e = 0; e < entries; e++) {
    json_object *list = json_object_new_array(), *args = json_object_new_object(), *entry = json_object_new_object();
    for (int i = 0; i < patches; i++) json_object_array_add(list, bad_patch(true, i));
    json_object_object_add(args, "Patches", list);
    json_object_object_add(entry, "name", json_object_new_string("builtin/property-override"));
    json_object_object_add(entry, "arguments", args);
    json_object_array_add(exts, entry);
  }
  json_object_object_add(json_object_object_get(o, "spec"), "envoyExtensions", exts);
  return o;
}

static size_t count_of(const char *s, const char *what) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* The number K in the last line "... and K more errors", or -1. */
static long more_of(const char *msg) {
  const char *p = strstr(msg, "\n... and ");
  if (!p) return -1;
  long k = strtol(p + 9, NULL, 10);
  return strstr(p, " more errors") ? k : -1;
}

static void test_denial_of_many_bad_patches_is_bounded(void **state) {
  (void)state;
  bool allowed;
  /* A PropertyOverride at the limit, every patch bad: the first errors whole, the rest counted. */
  char *msg = decide(review_of(override_with(kPo_MaxPatchesPerOverride), "propertyoverride.io", "PropertyOverride", "CREATE"), &allowed);
  assert_false(allowed);
  assert_non_null(strstr(msg, "PropertyOverride default/many is invalid (100 errors):\n"
                              "invalid Patches[0]: no match for field 'max_ejection_percnt0'!"));
  size_t shown = count_of(msg, "invalid Patches[");
  assert_true(shown >= 1 && shown <= kPo_DescribeMaxErrors);
  assert_int_equal(more_of(msg), kPo_MaxPatchesPerOverride - (long)shown);
  assert_true(strlen(msg) < 17000);
  free(msg);

  /* A ServiceDefaults at both limits: 10,000 bad patches in 100 entries. */
  msg = decide(review_of(service_defaults_with(kPo_MaxExtensionsPerConsulObject, kPo_MaxPatchesPerConsulObject / kPo_MaxExtensionsPerConsulObject),
                         "consul.hashicorp.com", "ServiceDefaults", "UPDATE"),
               &allowed);
  assert_false(allowed);
  assert_non_null(strstr(msg, "ServiceDefaults default/api has invalid property-override extensions:\n"
                              "spec.envoyExtensions[1] (builtin/property-override): invalid Patches[0]: no match for field 'max_ejection_percnt0'!"));
  shown = count_of(msg, "invalid Patches[");
  assert_true(shown >= 1 && shown <= kPo_DescribeMaxErrors);
  assert_int_equal(more_of(msg), kPo_MaxPatchesPerConsulObject - (long)shown);
  assert_true(strlen(msg) < 17000);
  free(msg);

  /* Few errors: Consul's aggregated text as it is, nothing counted. */
  msg = decide(review_of(service_defaults_with(2, 2), "consul.hashicorp.com", "ServiceDefaults", "UPDATE"), &allowed);
  assert_false(allowed);
  assert_non_null(strstr(msg, "spec.envoyExtensions[2] (builtin/property-override): 2 errors occurred:\n\t* invalid Patches[0]: "));
  assert_int_equal(more_of(msg), -1);
  free(msg);
}

/* The status path: the reconciler's condition message is bounded the same way, within its buffer. */
static void test_describe_bounded_for_conditions(void **state) {
  (void)state;
  json_object *o = override_with(kPo_MaxPatchesPerOverride);
  po_Arena *a = po_Arena_New();
  po_CompiledOverride c;
  assert_int_equal(po_CompiledOverride_FromObject(o, NULL, a, &c), kPo_CompileOutcome_Refused);
  assert_false(c.accepted);
  const char *d = po_CompiledOverride_Describe(&c, false, false, 1000, a);
  assert_non_null(d);
  assert_true(strlen(d) <= 1000 + 64);
  size_t shown = count_of(d, "invalid Patches[");
  assert_true(shown >= 1 && shown < 20);
  assert_int_equal(more_of(d), 100 - (long)shown);
  /* Whole lines only: the last one shown ends with its path. */
  const char *last = strstr(d, "\n... and ");
  assert_true(last > d && strncmp(last - 1, ")", 1) == 0);
  /* A first line longer than the bound alone is cut and marked. */
  d = po_CompiledOverride_Describe(&c, false, false, 40, a);
  assert_non_null(strstr(d, " [...]\n... and 99 more errors"));
  po_Arena_Free(a);
  json_object_put(o);
}

static void test_limits_per_object(void **state) {
  (void)state;
  bool allowed;
  char *msg = decide(review_of(override_with(kPo_MaxPatchesPerOverride + 1), "propertyoverride.io", "PropertyOverride", "CREATE"), &allowed);
  assert_false(allowed);
  assert_non_null(strstr(msg, "spec.patches: 101 patches; at most 100 are allowed in one PropertyOverride"));
  assert_int_equal(count_of(msg, "invalid Patches["), 0);
  free(msg);

  msg = decide(review_of(service_defaults_with(kPo_MaxExtensionsPerConsulObject + 1, 1), "consul.hashicorp.com", "ServiceDefaults", "UPDATE"),
               &allowed);
  assert_false(allowed);
  assert_non_null(strstr(msg, "spec.envoyExtensions[101]: more than 100 builtin/property-override entries in spec.envoyExtensions; "
                              "at most 100 are allowed in one object"));
  assert_int_equal(count_of(msg, "invalid Patches["), 0);
  free(msg);

  msg = decide(review_of(service_defaults_with(2, kPo_MaxPatchesPerConsulObject / 2 + 1), "consul.hashicorp.com", "ServiceDefaults", "UPDATE"),
               &allowed);
  assert_false(allowed);
  assert_non_null(strstr(msg, "spec.envoyExtensions[2]: the builtin/property-override entries up to this one hold 10002 patches; "
                              "at most 10000 are allowed in all entries of one object together"));
  free(msg);

  /* The CRD says the same as the pipeline (its Helm copy is compared with it by tests/deploy). */
  size_t len = 0;
  char path_crd[1024];
  snprintf(path_crd, sizeof path_crd, "%s/crds/propertyoverride.io_propertyoverrides.yaml", g_root);
  char *crd = slurp(path_crd, &len);
  assert_non_null(crd);
  json_object *o = yaml_object(crd, len);
  json_object *v = json_object_object_get(json_object_array_get_idx(json_object_object_get(json_object_object_get(o, "spec"), "versions"), 0), "schema");
  const char *const path[] = {"openAPIV3Schema", "properties", "spec", "properties", "patches", "maxItems"};
  for (size_t i = 0; i < sizeof path / sizeof *path; i++) v = json_object_object_get(v, path[i]);
  assert_non_null(v);
  assert_int_equal(json_object_get_int(v), kPo_MaxPatchesPerOverride);
  /* spec.routeNamespaces: the CRD's maxItems is the pipeline's bound */
  v = json_object_object_get(json_object_array_get_idx(json_object_object_get(json_object_object_get(o, "spec"), "versions"), 0), "schema");
  const char *const rpath[] = {"openAPIV3Schema", "properties", "spec", "properties", "routeNamespaces", "maxItems"};
  for (size_t i = 0; i < sizeof rpath / sizeof *rpath; i++) v = json_object_object_get(v, rpath[i]);
  assert_non_null(v);
  assert_int_equal(json_object_get_int(v), kPo_MaxRouteNamespaces);
  json_object_put(o);
  free(crd);
}

static void expect_400(const char *body, size_t len, const char *why) {
  po_Arena *a = po_Arena_New();
  po_CtlStatus st;
  json_object *out = po_Admission_Review(body, len, NULL, a, &st);
  if (out) fail_msg("accepted: %s", json_object_to_json_string(out));
  assert_int_equal(st.http_status, 400);
  if (!strstr(st.message, why)) fail_msg("error '%s' lacks '%s'", st.message, why);
  po_Arena_Free(a);
}

/* Memory goes by JSON values: a body of many empty objects is refused before json-c sees it,
 * while the largest object the per-object limits admit still passes the count. */
static void test_too_many_values_refused_before_decoding(void **state) {
  (void)state;
  const char *head = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
                     "\"object\":{\"spec\":{\"patches\":[{\"value\":[";
  size_t n = 150000, len = strlen(head) + n * 3 + 16;
  char *body = malloc(len);
  assert_non_null(body);
  size_t at = (size_t)sprintf(body, "%s", head);
  for (size_t i = 0; i < n; i++) at += (size_t)sprintf(body + at, i ? ",{}" : "{}");
  at += (size_t)sprintf(body + at, "]}]}}}}");
  po_Arena *a = po_Arena_New();
  po_CtlStatus st;
  assert_null(po_Admission_Review(body, at, NULL, a, &st));
  assert_int_equal(st.http_status, 413);
  assert_int_equal(st.code, kPo_Ctl_RequestTooLarge);
  assert_non_null(strstr(st.message, "150007 JSON objects and arrays"));
  assert_non_null(strstr(st.message, "at most 100000"));
  /* a string holding braces is not counted */
  at = (size_t)sprintf(body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\",\"x\":\"");
  for (size_t i = 0; i < n; i++) at += (size_t)sprintf(body + at, "{}[");
  at += (size_t)sprintf(body + at, "\\\"\"}}");
  json_object *out = po_Admission_Review(body, at, NULL, a, &st);
  assert_non_null(out);
  json_object_put(out);
  po_Arena_Free(a);
  free(body);
}

/* json-c's default tokener takes '...' strings and comments, which the count (review.c) does not
 * know: a '"' inside one hid a million objects from it (priced 15 MiB, 794 MiB held). What strict
 * JSON refuses is refused before anything is decoded, with what and where; so are raw control
 * characters inside strings (RFC 8259), which json-c's strict mode still takes and echoes six
 * times over, and a uid longer than any the API server sends. */
static void test_not_strict_json_refused(void **state) {
  (void)state;
  static const char head[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\",";
  char body[512];
  snprintf(body, sizeof body, "%s\"pad\":['\"',{},{},'\"']}}", head);
  expect_400(body, strlen(body), "a single-quoted string (JSON strings are double-quoted) at byte 90 (0x27)");
  snprintf(body, sizeof body, "%s\"pad\":[/* \" */{},{} /* \" */]}}", head);
  expect_400(body, strlen(body), "a comment (JSON has none) at byte 90 (0x2f)");
  snprintf(body, sizeof body, "%s\"pad\":\"a\001b\"}}", head);
  expect_400(body, strlen(body), "a raw control character inside a string (RFC 8259: write it escaped, \\u00XX) at byte 91 (0x01)");
  snprintf(body, sizeof body, "%s\"pad\":[1,2,]}}", head);
  expect_400(body, strlen(body), "the body is not one JSON value: unexpected character at byte");
  /* The same, escaped, is JSON and decoded. */
  snprintf(body, sizeof body, "%s\"pad\":[\"'\\u0001\",{}]}}", head);
  po_Arena *a = po_Arena_New();
  po_CtlStatus st;
  json_object *out = po_Admission_Review(body, strlen(body), NULL, a, &st);
  if (!out) fail_msg("refused (%d): %s", (int)st.http_status, st.message);
  json_object_put(out);
  po_Arena_Free(a);
  /* A 129-byte uid: 400; a UUID passes (above, "u1"). */
  char uid[130];
  memset(uid, 'u', 129);
  uid[129] = '\0';
  snprintf(body, sizeof body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"%s\"}}", uid);
  expect_400(body, strlen(body), "request.uid is 129 bytes: the API server's uids are UUIDs (36 bytes); at most 128 are taken");
}

static void test_nul_uid_and_trailing_bytes(void **state) {
  (void)state;
  static const char ok[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\"}}";
  static const char nul_uid[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\\u0000tail\"}}";
  expect_400(nul_uid, strlen(nul_uid), "request.uid contains a NUL character");
  char body[256];
  snprintf(body, sizeof body, "%s{\"x\":1}", ok);
  expect_400(body, strlen(body), "followed by more than whitespace");
  snprintf(body, sizeof body, "%s garbage", ok);
  expect_400(body, strlen(body), "followed by more than whitespace");
  /* A NUL byte after the review, and bytes after that. */
  memcpy(body, ok, sizeof ok);
  memcpy(body + sizeof ok, "xy", 2);
  expect_400(body, sizeof ok + 2, "a character JSON does not allow outside a string at byte 84 (0x00)");
  /* Trailing whitespace is JSON's own and fine. */
  snprintf(body, sizeof body, "%s \r\n\t", ok);
  po_Arena *a = po_Arena_New();
  po_CtlStatus st;
  json_object *out = po_Admission_Review(body, strlen(body), NULL, a, &st);
  assert_non_null(out);
  assert_int_equal(st.http_status, 200);
  json_object_put(out);
  po_Arena_Free(a);
}

/* spec.priority: an int32 (Istio's and Envoy Gateway's range), 0 when absent or null; anything
 * else is an error naming the field, the value and what is valid, and is decoded (for the entry's
 * place) even when another part of the spec is invalid. */
static void test_priority_decoded_and_checked(void **state) {
  (void)state;
  static const struct {
    const char *value; /* JSON, or NULL for absent */
    bool ok;
    int32_t want;
    const char *error;
  } cases[] = {
      {NULL, true, 0, NULL},
      {"null", true, 0, NULL},
      {"-7", true, -7, NULL},
      {"2147483647", true, INT32_MAX, NULL},
      {"-2147483648", true, INT32_MIN, NULL},
      {"2147483648", false, 0, "spec.priority: 2147483648 is not valid: want an integer from -2147483648 to 2147483647"},
      {"-3000000000", false, 0, "spec.priority: -3000000000 is not valid"},
      {"1.5", false, 0, "spec.priority: 1.5 is not valid"},
      {"\"high\"", false, 0, "spec.priority: \"high\" is not valid"},
      {"99999999999999999999999", false, 0, "spec.priority: "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"name\":\"web\"},"
             "%s%s%s\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
             "\"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"5s\"}]}}",
             cases[i].value ? "\"priority\":" : "", cases[i].value ? cases[i].value : "", cases[i].value ? "," : "");
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    po_Arena *a = po_Arena_New();
    po_CompiledOverride c;
    po_CompileOutcome got = po_CompiledOverride_FromObject(o, NULL, a, &c);
    assert_int_equal(got, cases[i].ok ? kPo_CompileOutcome_Accepted : kPo_CompileOutcome_Refused);
    if (c.accepted != cases[i].ok) fail_msg("priority %s: accepted %d", cases[i].value ? cases[i].value : "(absent)", c.accepted);
    if (cases[i].ok) assert_int_equal(c.priority, cases[i].want);
    if (cases[i].error) {
      const char *d = po_CompiledOverride_Describe(&c, false, false, 0, a);
      if (!d || !strstr(d, cases[i].error)) fail_msg("priority %s: %s", cases[i].value, d ? d : "(no error)");
    }
    po_Arena_Free(a);
    json_object_put(o);
  }
  /* decoded whatever else is wrong: an invalid generation keeps its entry's place */
  json_object *o = json_tokener_parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"targetRef\":{\"name\":\"web\"},"
                                      "\"priority\":12,\"patches\":[{\"op\":\"explode\",\"path\":\"/x\"}]}}");
  po_Arena *a = po_Arena_New();
  po_CompiledOverride c;
  assert_int_equal(po_CompiledOverride_FromObject(o, NULL, a, &c), kPo_CompileOutcome_Refused);
  assert_false(c.accepted);
  assert_int_equal(c.priority, 12);
  po_Arena_Free(a);
  json_object_put(o);
}

/* A PropertyOverride may target ProxyDefaults only from the namespaces the operator allows; the
 * request's namespace counts, not what the object's metadata claims. */
static void test_tenancy(void **state) {
  (void)state;
  po_Tenancy t = {0};
  po_Tenancy_AllowProxyDefaults(&t, "mesh-admin");
  g_tenancy = &t;
  const char *pd = "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                   "\"metadata\":{\"name\":\"m\",\"namespace\":\"mesh-admin\"},"
                   "\"spec\":{\"targetRef\":{\"kind\":\"ProxyDefaults\",\"name\":\"global\"},\"patches\":["
                   "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                   "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]}}";
  /* k: 0 ProxyDefaults from the allowed namespace, 1 from another, 2 ServiceDefaults from another;
   * Istio's: 3 Mesh from another (mesh-wide: denied as ProxyDefaults is), 4 Mesh from the allowed
   * namespace, 5 a Service from another (per service: fine). */
  for (int k = 0; k < 6; k++) {
    json_object *obj = json_tokener_parse(pd);
    json_object *ref = json_object_object_get(json_object_object_get(obj, "spec"), "targetRef");
    if (k == 2 || k == 5) { /* a per-service target is fine from anywhere */
      json_object_object_add(ref, "kind", json_object_new_string(k == 2 ? "ServiceDefaults" : "Service"));
      json_object_object_add(ref, "name", json_object_new_string("web"));
    }
    if (k == 3 || k == 4) {
      json_object_object_add(ref, "group", json_object_new_string("networking.istio.io"));
      json_object_object_add(ref, "kind", json_object_new_string("Mesh"));
    }
    json_object *review = review_of(obj, "propertyoverride.io", "PropertyOverride", "CREATE");
    json_object_object_add(json_object_object_get(review, "request"), "namespace",
                           json_object_new_string(k == 0 || k == 4 ? "mesh-admin" : "team-a"));
    bool allowed;
    char *msg = decide(review, &allowed);
    if (allowed != (k != 1 && k != 3)) fail_msg("case %d: allowed %d: %s", k, allowed, msg);
    if (k == 1) {
      assert_non_null(strstr(msg, "PropertyOverride team-a/m: spec.targetRef: PropertyOverrides in namespace 'team-a' may not "
                                  "target ProxyDefaults"));
      assert_non_null(strstr(msg, "'mesh-admin'"));
    }
    if (k == 3) {
      assert_non_null(strstr(msg, "may not target Mesh (it configures every proxy of the mesh)"));
      assert_non_null(strstr(msg, "a Service target of this namespace is allowed"));
    }
    free(msg);
  }
  g_tenancy = NULL;
}

/* --allow-cross-namespace-from: parsed strictly (all or nothing, the bad item named), and another
 * namespace allowed only to a listed namespace and only for a ServiceDefaults target. */
static void test_cross_namespace_policy(void **state) {
  (void)state;
  po_Tenancy t = {0};
  char why[768];
  po_CtlStatus cross;
  static const struct { const char *list, *want; } bad[] = {
      {"", "item 1 is empty"},
      {"platform,,infra", "item 2 is empty"},
      {"platform,", "item 2 is empty"},
      {"platform,*", "item 2 '*' is not a namespace name"},
      {"Platform", "item 1 'Platform' is not a namespace name"},
      {"-x", "item 1 '-x' is not a namespace name"},
      {"a_b", "item 1 'a_b' is not a namespace name"},
      {"0123456789012345678901234567890123456789012345678901234567890123", "item 1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_false(po_Tenancy_AllowCrossNamespace(&t, bad[i].list, &cross));
    if (!strstr(cross.message, bad[i].want) || !strstr(cross.message, "--allow-cross-namespace-from")) {
      fail_msg("'%s': %s", bad[i].list, cross.message);
    }
    assert_int_equal(cross.code, kPo_Ctl_Usage);
    assert_int_equal(t.n_cross, 0); /* nothing of a bad list is kept */
  }
  assert_true(po_Tenancy_AllowCrossNamespace(&t, "platform,infra", &cross));
  assert_true(po_Tenancy_AllowCrossNamespace(&t, "infra", &cross)); /* repeated: harmless */
  assert_int_equal(t.n_cross, 2);
  /* own namespace and empty: always; a listed namespace: ServiceDefaults anywhere */
  assert_true(po_Tenancy_AllowsNamespace(NULL, kPo_TargetKind_ServiceDefaults, "team-a", "", why, sizeof why));
  assert_true(po_Tenancy_AllowsNamespace(NULL, kPo_TargetKind_ServiceDefaults, "team-a", "team-a", why, sizeof why));
  assert_true(po_Tenancy_AllowsNamespace(&t, kPo_TargetKind_ServiceDefaults, "platform", "team-b", why, sizeof why));
  assert_false(po_Tenancy_AllowsNamespace(NULL, kPo_TargetKind_ServiceDefaults, "platform", "team-b", why, sizeof why));
  assert_non_null(strstr(why, "only from namespaces (none) (--allow-cross-namespace-from)"));
  assert_false(po_Tenancy_AllowsNamespace(&t, kPo_TargetKind_ServiceDefaults, "team-a", "team-b", why, sizeof why));
  assert_non_null(strstr(why, "only from namespaces 'platform', 'infra' (--allow-cross-namespace-from)"));
  assert_false(po_Tenancy_AllowsNamespace(&t, kPo_TargetKind_ProxyDefaults, "platform", "team-b", why, sizeof why));
  assert_non_null(strstr(why, "only for a ServiceDefaults target, not ProxyDefaults"));
  assert_false(po_Tenancy_AllowsNamespace(&t, kPo_TargetKind_Service, "platform", "team-b", why, sizeof why));
  /* the webhook: the same policy, the denial naming the flag */
  g_tenancy = &t;
  const char *po = "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                   "\"metadata\":{\"name\":\"m\",\"namespace\":\"x\"},"
                   "\"spec\":{\"targetRef\":{\"name\":\"web\",\"namespace\":\"team-b\"},\"patches\":["
                   "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                   "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]}}";
  for (int k = 0; k < 2; k++) {
    json_object *review = review_of(json_tokener_parse(po), "propertyoverride.io", "PropertyOverride", "CREATE");
    json_object_object_add(json_object_object_get(review, "request"), "namespace",
                           json_object_new_string(k == 0 ? "platform" : "team-a"));
    bool allowed;
    char *msg = decide(review, &allowed);
    if (allowed != (k == 0)) fail_msg("case %d: allowed %d: %s", k, allowed, msg);
    if (k == 1) assert_non_null(strstr(msg, "spec.targetRef.namespace: PropertyOverrides in namespace 'team-a' may not write"));
    free(msg);
  }
  g_tenancy = NULL;
}

/* The webhook denies what Istio cannot express, with the reason, on an Istio target only. */
static void test_istio_refusal_at_admission(void **state) {
  (void)state;
  const char *po = "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                   "\"metadata\":{\"name\":\"m\",\"namespace\":\"shop\"},"
                   "\"spec\":{\"targetRef\":{\"kind\":\"Service\",\"name\":\"api\"},\"patches\":["
                   "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                   "\"op\":\"remove\",\"path\":\"/outlier_detection\"}]}}";
  for (int k = 0; k < 2; k++) {
    json_object *obj = json_tokener_parse(po);
    if (k == 1) {
      json_object *ref = json_object_object_get(json_object_object_get(obj, "spec"), "targetRef");
      json_object_object_add(ref, "kind", json_object_new_string("ServiceDefaults"));
    }
    bool allowed;
    char *msg = decide(review_of(obj, "propertyoverride.io", "PropertyOverride", "CREATE"), &allowed);
    assert_true(allowed == (k == 1));
    if (k == 0) {
      assert_non_null(strstr(msg, "invalid Patches[0]: not expressible in an Istio EnvoyFilter: remove: an EnvoyFilter "
                                  "MERGE is a proto merge"));
    }
    free(msg);
  }
}

/* The webhook judges with the controller's mesh options: a list on an Istio target is refused
 * on Istio 1.30 and admitted on 1.31, as the controller programs it (before, the webhook refused
 * what the controller would have written). A release not known (the controller neither configured
 * nor read one) is taken as the newest listed, 1.31: admitted, with a warning saying the release
 * was assumed and what an older Istio does (before issue 24's default, refused). */
static void test_istio_options_at_admission(void **state) {
  (void)state;
  const char *po = "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                   "\"metadata\":{\"name\":\"m\",\"namespace\":\"shop\"},"
                   "\"spec\":{\"targetRef\":{\"kind\":\"Service\",\"name\":\"api\"},\"patches\":["
                   "{\"resourceFilter\":{\"resourceType\":\"route\",\"trafficDirection\":\"outbound\"},"
                   "\"op\":\"add\",\"path\":\"/internal_only_headers\",\"value\":[\"x-internal\"]}]}}";
  po_TargetOptions o131 = {.istio_minor = 31}, o130 = {.istio_minor = 30};
  const po_TargetOptions *opts[3] = {NULL, &o131, &o130};
  for (int k = 0; k < 3; k++) {
    g_targets = opts[k];
    bool allowed;
    char *msg = decide(review_of(json_tokener_parse(po), "propertyoverride.io", "PropertyOverride", "CREATE"), &allowed);
    assert_true(allowed == (k < 2));
    bool warned = strstr(g_warnings, "the Istio release is not known") != NULL;
    if (warned != (k == 0)) fail_msg("options %d: warnings %s", k, g_warnings);
    if (k == 0) assert_non_null(strstr(g_warnings, "taken as 1.31, the newest listed, so this array becomes MERGE_AND_REPLACE_LIST, which Istio before "
                                                  "1.31 refuses; set --istio-version\""));
    if (k == 2) assert_non_null(strstr(msg, "MERGE_AND_REPLACE_LIST, which replaces it as Consul does, needs Istio 1.31 or later (the target runs 1.30)"));
    free(msg);
  }
  g_targets = NULL;
}

/* A ServiceDefaults' entries are judged by the Consul release the controller runs (its
 * --consul-version), as validate judges them with --mesh consul@1.21: a route's /vhost_header,
 * which v1.32.4 lacks, is denied naming consul@1.21 and its snapshot, not "the Envoy API used
 * here" (before, the webhook checked them with a function told no release). */
static void test_consul_release_at_admission(void **state) {
  (void)state;
  const char *sd = "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                   "\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},\"spec\":{\"protocol\":\"http\","
                   "\"envoyExtensions\":[{\"name\":\"builtin/property-override\",\"arguments\":{\"patches\":["
                   "{\"resourceFilter\":{\"resourceType\":\"route\",\"trafficDirection\":\"outbound\"},"
                   "\"op\":\"add\",\"path\":\"/vhost_header\",\"value\":\"x-vhost\"}]}}]}}";
  const po_MeshRelease *r121 = po_MeshReleases_Find(po_Mesh_Ops(kPo_Mesh_Consul)->releases, "1.21");
  assert_non_null(r121);
  po_TargetOptions o121 = {.release[kPo_Mesh_Consul] = r121};
  const char *want[2] = {"the Envoy API judging consul@1.22", "the Envoy API judging consul@1.21"};
  for (int k = 0; k < 2; k++) {
    g_targets = k ? &o121 : NULL;
    bool allowed;
    char *msg = decide(review_of(json_tokener_parse(sd), "consul.hashicorp.com", "ServiceDefaults", "CREATE"), &allowed);
    assert_false(allowed);
    if (!strstr(msg, want[k])) fail_msg("release %d: %s", k, msg);
    assert_null(strstr(msg, "the Envoy API used here"));
    assert_non_null(strstr(msg, k ? "Envoy API of Consul 1.21" : "Envoy API of Consul 1.22"));
    free(msg);
  }
  g_targets = NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) g_root = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_examples),
      cmocka_unit_test(test_cross_namespace_policy),
      cmocka_unit_test(test_consul_objects_checked_under_wire_typing),
      cmocka_unit_test(test_malformed_reviews),
      cmocka_unit_test(test_denial_of_many_bad_patches_is_bounded),
      cmocka_unit_test(test_describe_bounded_for_conditions),
      cmocka_unit_test(test_limits_per_object),
      cmocka_unit_test(test_nul_uid_and_trailing_bytes),
      cmocka_unit_test(test_not_strict_json_refused),
      cmocka_unit_test(test_too_many_values_refused_before_decoding),
      cmocka_unit_test(test_tenancy),
      cmocka_unit_test(test_priority_decoded_and_checked),
      cmocka_unit_test(test_istio_refusal_at_admission),
      cmocka_unit_test(test_istio_options_at_admission),
      cmocka_unit_test(test_consul_release_at_admission),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
