/* The admission decision on every example (examples/README.md headers are the expectations):
 * valid ones are allowed, those the webhook must refuse are denied with every
 * `webhook-message`, `webhook-rule` and `webhook-suggests` text in the denial. Also: Consul
 * objects, DELETE, malformed reviews. */
#include <dirent.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

/* Runs the review (and frees it); returns the response's denial message ("" when allowed). */
static char *decide(json_object *review, bool *allowed) {
  po_Arena *a = po_Arena_New();
  const char *body = json_object_to_json_string(review);
  int status;
  char err[256];
  json_object *out = po_Admission_Review(body, strlen(body), a, &status, err, sizeof err);
  assert_non_null(out);
  assert_int_equal(status, 200);
  json_object *resp = json_object_object_get(out, "response");
  assert_string_equal(json_object_get_string(json_object_object_get(resp, "uid")), "uid-1");
  *allowed = json_object_get_boolean(json_object_object_get(resp, "allowed"));
  json_object *st = json_object_object_get(resp, "status");
  char *msg = strdup(st ? json_object_get_string(json_object_object_get(st, "message")) : "");
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
    int status = 0;
    char err[256];
    assert_null(po_Admission_Review(bad[i], strlen(bad[i]), a, &status, err, sizeof err));
    assert_int_equal(status, 400);
    assert_true(strlen(err) > 0);
    po_Arena_Free(a);
  }
}

int main(int argc, char **argv) {
  if (argc > 1) g_root = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_examples),
      cmocka_unit_test(test_consul_objects_checked_under_wire_typing),
      cmocka_unit_test(test_malformed_reviews),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
