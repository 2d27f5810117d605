/* The webhook's answers as golden files: each tests/webhook/golden/NAME.in.yaml (an object, as
 * kubectl would send it) is wrapped in an AdmissionReview v1 request and decided by
 * po_Admission_Review; the response (without its uid) is written as YAML and compared byte for
 * byte with NAME.out.yaml. With PO_UPDATE_GOLDEN=1 the .out.yaml files are (re)written instead,
 * to be reviewed as diffs. Header comments of the .in.yaml set the request:
 *   # operation: UPDATE            (default CREATE)
 *   # namespace: team-a            (default: metadata.namespace, else "default")
 * The ProxyDefaults policy is fixed: only namespace "consul" may target it (as
 * --allow-proxydefaults-from consul). */
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

#include "golden.h"
#include "po/engine.h"
#include "po/webhook/admission.h"

static const char *g_dir = "tests/webhook/golden";


/* "# key: value" from the header comments, or NULL. */
static const char *header(const char *text, const char *key, char *buf, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "# %s: ", key);
  for (const char *p = text; *p == '#'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
    if (strncmp(p, pat, strlen(pat)) == 0) {
      p += strlen(pat);
      size_t l = strcspn(p, "\n");
      snprintf(buf, cap, "%.*s", (int)l, p);
      return buf;
    }
  }
  return NULL;
}

/* ---- a small YAML writer for json-c values: block style, strings double-quoted (JSON's escapes
 * are YAML's), multi-line messages as literal blocks so that diffs read line by line ---- */

static bool literal_ok(const char *s) {
  if (!strchr(s, '\n') || s[0] == ' ' || s[0] == '\n' || s[strlen(s) - 1] == '\n') return false;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if ((*p < 0x20 && *p != '\n') || *p == 0x7f) return false;
    if (*p == ' ' && (p[1] == '\n' || p[1] == '\0')) return false; /* trailing spaces vanish in review */
  }
  return true;
}

static void emit(FILE *out, json_object *v, int indent);

static void emit_scalar(FILE *out, json_object *v, int indent) {
  if (json_object_is_type(v, json_type_string) && literal_ok(json_object_get_string(v))) {
    fputs("|-\n", out);
    const char *s = json_object_get_string(v);
    while (*s) {
      size_t l = strcspn(s, "\n");
      if (l) fprintf(out, "%*s%.*s", indent, "", (int)l, s);
      fputc('\n', out);
      s += l + (s[l] == '\n');
    }
    return;
  }
  fprintf(out, "%s\n", v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "null");
}

static bool is_collection(json_object *v) {
  return (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) ||
         (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0);
}

static void emit(FILE *out, json_object *v, int indent) {
  if (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) {
    bool first = true;
    json_object_object_foreach(v, k, child) {
      if (!first) fprintf(out, "%*s", indent, "");
      first = false;
      fprintf(out, "%s:", k);
      if (is_collection(child)) {
        fprintf(out, "\n%*s", indent + 2, "");
        emit(out, child, indent + 2);
      } else {
        fputc(' ', out);
        emit_scalar(out, child, indent + 2);
      }
    }
  } else if (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0) {
    for (size_t i = 0; i < json_object_array_length(v); i++) {
      if (i) fprintf(out, "%*s", indent, "");
      fputs("- ", out);
      json_object *child = json_object_array_get_idx(v, i);
      if (is_collection(child)) emit(out, child, indent + 2);
      else emit_scalar(out, child, indent + 2);
    }
  } else {
    emit_scalar(out, v, indent);
  }
}

/* ---- one case ---- */

static json_object *review_of(json_object *obj, const char *text) {
  char buf[128];
  const char *op = header(text, "operation", buf, sizeof buf);
  json_object *r = json_object_new_object(), *req = json_object_new_object(), *k = json_object_new_object();
  const char *api = json_object_get_string(json_object_object_get(obj, "apiVersion"));
  const char *slash = api ? strchr(api, '/') : NULL;
  char group[128] = "";
  if (slash) snprintf(group, sizeof group, "%.*s", (int)(slash - api), api);
  json_object_object_add(r, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
  json_object_object_add(r, "kind", json_object_new_string("AdmissionReview"));
  json_object_object_add(req, "uid", json_object_new_string("golden"));
  json_object_object_add(k, "group", json_object_new_string(group));
  json_object_object_add(k, "version", json_object_new_string(slash ? slash + 1 : api ? api : ""));
  json_object_object_add(k, "kind", json_object_new_string(json_object_get_string(json_object_object_get(obj, "kind"))));
  json_object_object_add(req, "kind", k);
  json_object_object_add(req, "operation", json_object_new_string(op ? op : "CREATE"));
  json_object *md = json_object_object_get(obj, "metadata");
  char nsbuf[128];
  const char *ns = header(text, "namespace", nsbuf, sizeof nsbuf);
  if (!ns) ns = json_object_get_string(json_object_object_get(md, "namespace"));
  json_object_object_add(req, "namespace", json_object_new_string(ns ? ns : "default"));
  json_object_object_add(req, "name", json_object_new_string(json_object_get_string(json_object_object_get(md, "name"))));
  json_object_object_add(req, "object", json_object_get(obj));
  json_object_object_add(r, "request", req);
  return r;
}

/* The response as YAML, in a malloc'd string. */
static char *decide(const char *path, const char *text, size_t len) {
  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  po_Value **docs = NULL;
  size_t count = 0;
  if (!po_Value_ParseYaml(text, len, a, &docs, &count, &st) || count != 1) {
    fail_msg("%s: not one YAML document: %s", path, st.message);
  }
  json_object *obj = po_Value_ToJsonC(docs[0]);
  json_object *review = review_of(obj, text);
  json_object_put(obj);
  const char *body = json_object_to_json_string(review);
  po_Tenancy tenancy = {0};
  po_Tenancy_AllowProxyDefaults(&tenancy, "consul");
  /* platform teams may name another namespace (ServiceDefaults only): po-target-cross-* */
  po_CtlStatus cross;
  assert_true(po_Tenancy_AllowCrossNamespace(&tenancy, "platform,infra", &cross));
  po_CtlStatus cst;
  json_object *out = po_Admission_Review(body, strlen(body), &(po_AdmissionOptions){.tenancy = &tenancy}, a, &cst);
  if (!out) fail_msg("%s: no answer (%d): %s", path, (int)cst.http_status, cst.message);
  json_object *resp = json_object_object_get(out, "response");
  if (strcmp(json_object_get_string(json_object_object_get(resp, "uid")), "golden") != 0) fail_msg("%s: uid not echoed", path);
  json_object_object_del(resp, "uid"); /* always the same: the runner's */
  char *yaml = NULL;
  size_t ylen = 0;
  FILE *mem = open_memstream(&yaml, &ylen);
  fprintf(mem, "# po_Admission_Review's response to %s (test_webhook_golden; PO_UPDATE_GOLDEN=1 rewrites)\n",
          strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
  emit(mem, resp, 0);
  fclose(mem);
  json_object_put(out);
  json_object_put(review);
  po_Arena_Free(a);
  return yaml;
}

static void test_golden(void **state) {
  (void)state;
  DIR *d = opendir(g_dir);
  assert_non_null(d);
  int cases = 0, failed = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    char in[1024], out[1024];
    if (n > 9 && strcmp(e->d_name + n - 9, ".out.yaml") == 0) { /* no orphans: a stale answer misleads */
      snprintf(in, sizeof in, "%s/%.*s.in.yaml", g_dir, (int)(n - 9), e->d_name);
      FILE *f = fopen(in, "r");
      if (!f) {
        print_error("%s/%s has no .in.yaml\n", g_dir, e->d_name);
        failed++;
      } else {
        fclose(f);
      }
      continue;
    }
    if (n <= 8 || strcmp(e->d_name + n - 8, ".in.yaml") != 0) continue;
    cases++;
    snprintf(in, sizeof in, "%s/%s", g_dir, e->d_name);
    snprintf(out, sizeof out, "%s/%.*s.out.yaml", g_dir, (int)(n - 8), e->d_name);
    size_t len = 0;
    char *text = po_Golden_Read(in, &len);
    assert_non_null(text);
    char *got = decide(in, text, len);
    if (!po_Golden_Check(out, got, strlen(got))) failed++;
    free(got);
    free(text);
  }
  closedir(d);
  assert_true(cases > 0);
  assert_int_equal(failed, 0);
}

/* The writer itself: what it writes for messages must read back as the same string. */
static void test_yaml_writer(void **state) {
  (void)state;
  json_object *o = json_tokener_parse(
      "{\"message\":\"line one\\nline two\",\"code\":400,\"empty\":[],\"list\":[\"a\",\" b\"],\"trail\":\"x \\ny\","
      "\"nested\":{\"allowed\":false}}");
  char *yaml = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&yaml, &len);
  emit(mem, o, 0);
  fclose(mem);
  assert_string_equal(yaml,
                      "message: |-\n  line one\n  line two\ncode: 400\nempty: []\nlist:\n  - \"a\"\n  - \" b\"\n"
                      "trail: \"x \\ny\"\nnested:\n  allowed: false\n");
  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  po_Value **docs = NULL;
  size_t count = 0;
  assert_true(po_Value_ParseYaml(yaml, len, a, &docs, &count, &st));
  json_object *back = po_Value_ToJsonC(docs[0]);
  assert_true(json_object_equal(back, o));
  json_object_put(back);
  po_Arena_Free(a);
  free(yaml);
  json_object_put(o);
}

int main(int argc, char **argv) {
  if (argc > 1) g_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yaml_writer),
      cmocka_unit_test(test_golden),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
