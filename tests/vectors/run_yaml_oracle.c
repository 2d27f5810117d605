/* The engine's YAML reader against kubectl: every yaml/cases/NAME.yaml is read with
 * po_Value_ParseYaml and compared with yaml/golden/NAME.json, which is what the real kubectl made
 * of the same file (yaml/regen.sh writes it; `regen.sh BUILD --check` re-asks kubectl).
 *   exit 0: our reading must succeed and spec.patches must be the same tree as kubectl's, with
 *           the same JSON types (an int where kubectl sent an integer, a float64 where it sent a
 *           float); spec.debug likewise (absent in the file: kubectl's is the CRD default false).
 *           Null documents (empty, comments only, "null") are skipped, as kubectl skips them.
 *   "error converting YAML to JSON": our reading must fail; where kubectl names a line, ours
 *           must point at it (go-yaml prints a parser error's 0-based line: ours may be one more).
 *   "invalid Yaml document separator: REST": our reading must fail with the same REST.
 *   "invalid object to validate": our reading succeeds, and some document is not a mapping (the
 *           manifest loader refuses it: tests/cli/t_validate.sh).
 *   any other failure (the API server's schema): our reading must succeed.
 * Set PO_VECTORS_FILTER=substring to run only matching cases. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"

static const char *g_dir;
static int g_failed, g_run;

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 20];
  *len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[*len] = '\0';
  char *copy = malloc(*len + 1);
  if (copy) memcpy(copy, buf, *len + 1);
  return copy;
}

/* Same tree, same JSON types; numbers compared exactly as long doubles (a float64 kubectl sent
 * has the value of ours: the golden's own digits may be printed shorter by the server). */
static bool same(const po_Value *ours, const po_Value *want, char *why, size_t size, const char *at) {
  po_ValueKind k = po_Value_Kind(ours), w = po_Value_Kind(want);
  if (k != w) {
    snprintf(why, size, "%s: kind %d, kubectl's %d", at, (int)k, (int)w);
    return false;
  }
  char sub[512];
  switch (k) {
    case kPo_ValueKind_Null: return true;
    case kPo_ValueKind_Bool:
      if (po_Value_Bool(ours) == po_Value_Bool(want)) return true;
      break;
    case kPo_ValueKind_Int:
      if (po_Value_Int(ours) == po_Value_Int(want)) return true;
      break;
    case kPo_ValueKind_Float:
      if ((long double)po_Value_Float(ours) == (long double)po_Value_Float(want)) return true;
      break;
    case kPo_ValueKind_String: {
      size_t a, b;
      const char *x = po_Value_String(ours, &a), *y = po_Value_String(want, &b);
      if (a == b && !memcmp(x, y, a)) return true;
      break;
    }
    case kPo_ValueKind_List:
      if (po_Value_Size(ours) != po_Value_Size(want)) break;
      for (size_t i = 0; i < po_Value_Size(ours); i++) {
        snprintf(sub, sizeof sub, "%s[%zu]", at, i);
        if (!same(po_Value_At(ours, i), po_Value_At(want, i), why, size, sub)) return false;
      }
      return true;
    case kPo_ValueKind_Map:
      if (po_Value_Size(ours) != po_Value_Size(want)) {
        snprintf(why, size, "%s: %zu keys, kubectl's %zu", at, po_Value_Size(ours), po_Value_Size(want));
        return false;
      }
      for (size_t i = 0; i < po_Value_Size(ours); i++) {
        const char *key = po_Value_KeyAt(ours, i);
        const po_Value *wv = po_Value_Get(want, key);
        snprintf(sub, sizeof sub, "%s.%s", at, key);
        if (!wv) {
          snprintf(why, size, "%s: kubectl has no such key", sub);
          return false;
        }
        if (!same(po_Value_At(ours, i), wv, why, size, sub)) return false;
      }
      return true;
  }
  po_Arena *a = po_Arena_New();
  snprintf(why, size, "%s: %s, kubectl's %s", at, po_Value_ToJson(ours, a), po_Value_ToJson(want, a));
  po_Arena_Free(a);
  return false;
}

static void fail_case(const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s: ", name);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  g_failed++;
}

static void run_case(const char *name) {
  char path[4096];
  size_t glen, ylen;
  snprintf(path, sizeof path, "%s/golden/%s.json", g_dir, name);
  char *gtext = slurp(path, &glen);
  snprintf(path, sizeof path, "%s/cases/%s.yaml", g_dir, name);
  char *ytext = slurp(path, &ylen);
  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  const po_Value *golden = gtext ? po_Value_ParseJson(gtext, glen, a, &st) : NULL;
  g_run++;
  if (!golden || !ytext) {
    fail_case(name, "cannot read its golden or case file");
    goto done;
  }
  po_Value **docs = NULL;
  size_t n = 0;
  po_Status_Clear(&st);
  bool ok = po_Value_ParseYaml(ytext, ylen, a, &docs, &n, &st);
  int64_t exit_code = po_Value_Int(po_Value_Get(golden, "exit"));
  const char *err = po_Value_String(po_Value_Get(golden, "stderr"), NULL);
  const char *bad_sep = err ? strstr(err, "invalid Yaml document separator: ") : NULL;
  bool reader_error = err && (strstr(err, "error converting YAML to JSON") || bad_sep);
  if (exit_code == 0 || !reader_error) {
    const po_Value *doc = NULL;
    size_t objects = 0, non_maps = 0;
    for (size_t i = 0; ok && i < n; i++) {
      if (po_Value_Kind(docs[i]) == kPo_ValueKind_Null) continue;
      objects++;
      if (po_Value_Kind(docs[i]) != kPo_ValueKind_Map) non_maps++;
      doc = docs[i];
    }
    if (!ok) {
      fail_case(name, "kubectl read it, we did not: %s", st.message);
      goto done;
    }
    if (err && strstr(err, "invalid object to validate")) {
      if (!non_maps) fail_case(name, "kubectl found a document that is not an object, we did not");
      goto done;
    }
    if (objects != 1 || non_maps) {
      fail_case(name, "kubectl read one object, we read %zu documents (%zu not a mapping)", objects, non_maps);
      goto done;
    }
    if (exit_code != 0) goto done; /* the API server's schema refused it, not the reader */
    const po_Value *spec = po_Value_Get(doc, "spec");
    char why[1024];
    if (!same(po_Value_Get(spec, "patches"), po_Value_Get(golden, "patches"), why, sizeof why, "spec.patches")) {
      fail_case(name, "%s", why);
    }
    const po_Value *debug = po_Value_Get(spec, "debug");
    const po_Value *want_debug = po_Value_Get(golden, "debug");
    if (debug ? !same(debug, want_debug, why, sizeof why, "spec.debug")
              : po_Value_Kind(want_debug) == kPo_ValueKind_Bool && po_Value_Bool(want_debug)) {
      fail_case(name, "spec.debug differs from kubectl's");
    }
    goto done;
  }
  if (ok) {
    fail_case(name, "kubectl refused it (%s), we read it", err);
    goto done;
  }
  if (bad_sep && !strstr(st.message, bad_sep)) {
    fail_case(name, "we say %s; kubectl: %s", st.message, err);
    goto done;
  }
  const char *at = strstr(err, "yaml: line ");
  if (at) {
    int want_line = atoi(at + 11), line = 0;
    sscanf(st.message, "line %d,", &line);
    if (line != want_line && line != want_line + 1) {
      fail_case(name, "we say %s; kubectl: %s", st.message, err);
    }
  }
done:
  po_Arena_Free(a);
  free(gtext);
  free(ytext);
}

static void test_yaml_oracle(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof path, "%s/golden", g_dir);
  DIR *dir = opendir(path);
  assert_non_null(dir);
  const char *filter = getenv("PO_VECTORS_FILTER");
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json")) continue;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
    if (filter && !strstr(name, filter)) continue;
    run_case(name);
  }
  closedir(dir);
  fprintf(stderr, "yaml oracle: %d cases, %d failed\n", g_run, g_failed);
  assert_true(g_run > 0);
  assert_int_equal(g_failed, 0);
}

int main(int argc, char **argv) {
  g_dir = argc > 1 ? argv[1] : "tests/vectors/yaml";
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_yaml_oracle)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
