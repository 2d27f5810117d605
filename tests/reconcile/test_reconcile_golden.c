/* Golden files for the reconcile's plan (Envoy Gateway's habit): golden/<case>.in.yaml holds the
 * objects before (targets and PropertyOverrides, as the API server has them); the reconcile of
 * every target they name runs until it writes nothing more; golden/<case>.out.yaml is every
 * object after, as YAML with sorted keys, so a change of behaviour is reviewed as a diff.
 *
 *   PO_GOLDEN_UPDATE=1 ctest -R test_reconcile_golden    rewrites the .out.yaml files */
#include <dirent.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"
#include "gitops.h"

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return s;
}

static const char *str(json_object *o, const char *a, const char *b) {
  json_object *v = get(get(o, a), b);
  return v ? json_object_get_string(v) : "";
}

/* Loads the documents into the fake server and the index; the target keys go into keys. */
static size_t load(const char *path, char keys[][300], size_t cap) {
  size_t len, ndocs = 0, nkeys = 0;
  char *text = read_file(path, &len);
  assert_non_null(text);
  po_Arena *a = po_Arena_New();
  po_Value **docs = NULL;
  po_Status st;
  po_Status_Clear(&st);
  if (!po_Value_ParseYaml(text, len, a, &docs, &ndocs, &st)) fail_msg("%s: %s", path, st.message);
  for (size_t i = 0; i < ndocs; i++) {
    json_object *o = po_Value_ToJsonC(docs[i]);
    assert_non_null(o);
    const char *kind = json_object_get_string(get(o, "kind")), *ns = str(o, "metadata", "namespace");
    const char *name = str(o, "metadata", "name");
    char slot_key[300], key[300], held[300], old[300];
    if (!strcmp(kind, "PropertyOverride")) {
      snprintf(slot_key, sizeof slot_key, "po/%s/%s", ns, name);
      po_Reconcile_OverrideKey(o, key, sizeof key);
      po_Reconcile_HeldKey(o, held, sizeof held);
      assert_true(po_TargetIndex_Set(IX, ns, name, key, old, sizeof old));
      assert_true(po_TargetIndex_SetHeld(IX, ns, name, held, old, sizeof old));
    } else {
      snprintf(slot_key, sizeof slot_key, "%s/%s/%s", kind, ns, name);
      snprintf(key, sizeof key, "%s", slot_key);
    }
    put(slot_key, o);
    bool seen = false;
    for (size_t k = 0; k < nkeys && !seen; k++) seen = !strcmp(keys[k], key);
    if (!seen && *key && nkeys < cap) snprintf(keys[nkeys++], sizeof keys[0], "%s", key);
  }
  po_Arena_Free(a);
  free(text);
  qsort(keys, nkeys, sizeof keys[0], (int (*)(const void *, const void *))strcmp);
  return nkeys;
}

static int by_slot(const void *x, const void *y) {
  return strcmp(((const Slot *const *)x)[0]->key, ((const Slot *const *)y)[0]->key);
}

static void run_case(const char *dir, const char *name) {
  setup(NULL);
  char in[512 + sizeof PO_GOLDEN_DIR], out[512 + sizeof PO_GOLDEN_DIR], keys[16][300];
  snprintf(in, sizeof in, "%s/%.250s.in.yaml", dir, name);
  snprintf(out, sizeof out, "%s/%.250s.out.yaml", dir, name);
  size_t nkeys = load(in, keys, 16);
  /* Until nothing more is written: a create is followed by the write of its entries, a
   * deletion by the finalizer's removal. Bounded: a plan that never settles is a failure. */
  int round;
  for (round = 0; round < 5; round++) {
    int before = F.target_writes + F.override_patches + F.status_patches;
    for (size_t k = 0; k < nkeys; k++) {
      po_ReconcileResult r = po_Reconcile(&IO, IX, keys[k]);
      if (!r.ok) fail_msg("%s: reconcile of %s: %s", name, keys[k], r.error);
    }
    if (F.target_writes + F.override_patches + F.status_patches == before) break;
  }
  if (round == 5) fail_msg("%s: still writing after 5 rounds", name);
  const Slot *slots[kMax];
  size_t n = 0;
  for (int i = 0; i < kMax; i++) if (F.slots[i].obj) slots[n++] = &F.slots[i];
  qsort(slots, n, sizeof slots[0], by_slot);
  json_object *objs[kMax];
  for (size_t i = 0; i < n; i++) objs[i] = slots[i]->obj;
  char *got = NULL;
  size_t got_len = 0;
  FILE *mem = open_memstream(&got, &got_len);
  assert_non_null(mem);
  assert_true(po_Cli_EmitYaml(objs, n, mem));
  fclose(mem);
  const char *update = getenv("PO_GOLDEN_UPDATE");
  if (update && !strcmp(update, "1")) {
    FILE *f = fopen(out, "wb");
    assert_non_null(f);
    fwrite(got, 1, got_len, f);
    fclose(f);
  } else {
    size_t want_len;
    char *want = read_file(out, &want_len);
    if (!want) fail_msg("%s: missing (PO_GOLDEN_UPDATE=1 writes it)", out);
    if (want_len != got_len || memcmp(want, got, got_len) != 0) {
      fprintf(stderr, "%s differs from what the reconcile gives now:\n%s\n(PO_GOLDEN_UPDATE=1 rewrites it; review the diff)\n",
              out, got);
      fail();
    }
    free(want);
  }
  free(got);
  teardown(NULL);
}

static void test_golden_plans(void **state) {
  (void)state;
  DIR *d = opendir(PO_GOLDEN_DIR);
  assert_non_null(d);
  char names[64][256];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 64) {
    size_t l = strlen(e->d_name);
    if (l > 8 && !strcmp(e->d_name + l - 8, ".in.yaml")) snprintf(names[n++], sizeof names[0], "%.*s", (int)(l - 8), e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
  assert_true(n >= 5);
  for (size_t i = 0; i < n; i++) run_case(PO_GOLDEN_DIR, names[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden_plans)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
