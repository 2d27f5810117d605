/* Golden files for the reconcile's plan (Envoy Gateway's habit), one folder per mesh:
 * golden/<mesh>/<case>.in.yaml holds the objects before (targets, PropertyOverrides and the
 * mesh's own objects: EnvoyFilters, HTTPRoutes, EnvoyPatchPolicies, as the API server has them);
 * the reconcile of every target they name (a target object's key, a PropertyOverride's target
 * key) runs until it writes nothing more; golden/<mesh>/<case>.out.yaml is every object after,
 * as YAML with sorted keys, so a change of behaviour is reviewed as a diff. A document of kind
 * ReconcileOptions sets the controller's mesh options ({istioMinor: 22}: --istio-version 1.22).
 *
 *   PO_UPDATE_GOLDEN=1 ctest -R test_reconcile_golden    rewrites the .out.yaml files */
#include <dirent.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"
#include "gitops.h"
#include "golden.h"


static const char *str(json_object *o, const char *a, const char *b) {
  json_object *v = get(get(o, a), b);
  return v ? json_object_get_string(v) : "";
}

/* Loads the documents into the fake server and the index; the target keys go into keys. A
 * document of kind Expect (the conflict cases' expectations) is handed back in *expect (a new
 * reference) instead, when expect is not NULL. */
static size_t load(Fake *fx, const char *path, char keys[][300], size_t cap, json_object **expect) {
  size_t len = 0, ndocs = 0, nkeys = 0;
  char *text = po_Golden_Read(path, &len);
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
    if (!strcmp(kind, "ReconcileOptions")) { /* the controller's mesh options (--istio-version 1.N) */
      po_TargetOptions opt = {.istio_minor = json_object_get_int(get(o, "istioMinor"))};
      po_TargetIndex_SetOptions(fx->ix, &opt);
      json_object_put(o);
      continue;
    }
    if (expect && !strcmp(kind, "Expect")) {
      json_object_put(*expect);
      *expect = o;
      continue;
    }
    if (!strcmp(kind, "PropertyOverride")) {
      snprintf(slot_key, sizeof slot_key, "po/%s/%s", ns, name);
      po_Reconcile_OverrideKey(o, key, sizeof key);
      po_Reconcile_HeldKey(o, held, sizeof held);
      assert_true(po_TargetIndex_Set(fx->ix, ns, name, key, old, sizeof old));
      assert_true(po_TargetIndex_SetHeld(fx->ix, ns, name, held, old, sizeof old));
    } else {
      /* a target is reconciled by its key; a mesh's own object (an EnvoyFilter, an HTTPRoute)
       * only through the target it belongs to */
      po_TargetKind tk;
      snprintf(slot_key, sizeof slot_key, "%s/%s/%s", kind, ns, name);
      snprintf(key, sizeof key, "%s", po_TargetKind_Parse(kind, &tk) ? slot_key : "");
    }
    put(fx, slot_key, o);
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

/* Every target's reconcile, in key order, until nothing more is written: a create is followed by
 * the write of its entries, a deletion by the finalizer's removal. Bounded: a plan that never
 * settles is a failure. */
static void settle(Fake *fx, const char *name, char keys[][300], size_t nkeys) {
  int round;
  for (round = 0; round < 5; round++) {
    int before = fx->target_writes + fx->override_patches + fx->status_patches;
    for (size_t k = 0; k < nkeys; k++) {
      po_ReconcileResult r = po_Reconcile(&fx->io, fx->ix, keys[k]);
      if (!r.ok) fail_msg("%s: reconcile of %s: %s", name, keys[k], r.error);
    }
    if (fx->target_writes + fx->override_patches + fx->status_patches == before) break;
  }
  if (round == 5) fail_msg("%s: still writing after 5 rounds", name);
}

static void run_case(const char *dir, const char *name) {
  Fake *fx = fake_new();
  char in[900], out[900], keys[16][300];
  snprintf(in, sizeof in, "%s/%.250s.in.yaml", dir, name);
  snprintf(out, sizeof out, "%s/%.250s.out.yaml", dir, name);
  size_t nkeys = load(fx, in, keys, 16, NULL);
  settle(fx, name, keys, nkeys);
  const Slot *slots[kMax];
  size_t n = 0;
  for (int i = 0; i < kMax; i++) if (fx->slots[i].obj) slots[n++] = &fx->slots[i];
  qsort(slots, n, sizeof slots[0], by_slot);
  json_object *objs[kMax];
  for (size_t i = 0; i < n; i++) objs[i] = slots[i]->obj;
  char *got = NULL;
  size_t got_len = 0;
  FILE *mem = open_memstream(&got, &got_len);
  assert_non_null(mem);
  assert_true(po_Cli_EmitYaml(objs, n, mem));
  fclose(mem);
  if (!po_Golden_Check(out, got, got_len)) fail_msg("%s: the reconcile gives another outcome", name);
  free(got);
  fake_free(fx);
}

/* Every case of golden/<mesh>/, in name order; at least `least` of them. Every entry of the
 * folder is a case's .in.yaml or .out.yaml: an .out.yaml without its .in.yaml (a case renamed or
 * deleted, its answer left behind) or a file of another name would otherwise sit there unread,
 * and so would the cases past the table's 64. `root` is golden/ (the command line's first
 * argument when given: t_golden_stray.sh runs a copy with a stray file). */
static void golden_plans(const char *root, const char *mesh, size_t least) {
  char dir[600];
  snprintf(dir, sizeof dir, "%.500s/%s", root, mesh);
  DIR *d = opendir(dir);
  if (!d) fail_msg("%s: cannot open", dir);
  enum { kMaxCases = 64 };
  char names[kMaxCases][256], outs[2 * kMaxCases][256];
  size_t n = 0, nout = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.' && (l == 1 || (l == 2 && e->d_name[1] == '.'))) continue;
    bool in = l > 8 && !strcmp(e->d_name + l - 8, ".in.yaml"), out = l > 9 && !strcmp(e->d_name + l - 9, ".out.yaml");
    if (!in && !out) fail_msg("%s/%s: neither a case's .in.yaml nor its .out.yaml", dir, e->d_name);
    if (in && n == kMaxCases) fail_msg("%s: more than %d cases: raise kMaxCases", dir, (int)kMaxCases);
    if (!in && nout == 2 * kMaxCases) fail_msg("%s: more than %d .out.yaml files", dir, 2 * (int)kMaxCases);
    if (in) snprintf(names[n++], sizeof names[0], "%.*s", (int)(l - 8), e->d_name);
    else snprintf(outs[nout++], sizeof outs[0], "%.*s", (int)(l - 9), e->d_name);
  }
  closedir(d);
  for (size_t i = 0; i < nout; i++) {
    size_t k = 0;
    while (k < n && strcmp(names[k], outs[i])) k++;
    if (k == n) fail_msg("%s/%s.out.yaml has no .in.yaml: a stale answer misleads (delete it)", dir, outs[i]);
  }
  qsort(names, n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
  if (n < least) fail_msg("%s: %zu cases, fewer than the %zu it holds", dir, n, least);
  for (size_t i = 0; i < n; i++) run_case(dir, names[i]);
}

static void test_golden_plans_consul(void **state) { golden_plans(*state, "consul", 8); }
static void test_golden_plans_istio(void **state) { golden_plans(*state, "istio", 1); }
static void test_golden_plans_envoygateway(void **state) { golden_plans(*state, "envoygateway", 1); }

/* ---- conflict cases: conflicts/<case>.yaml, the objects and one Expect document ----
 *
 *   kind: Expect
 *   programmed:            # per PropertyOverride: Programmed's reason, and texts its message holds
 *     - {po: default/a, reason: Overlapping, contains: ["default/z wins where both match"]}
 *   entries:               # our entries of a target, in their order, by PropertyOverride name
 *     - {target: ServiceDefaults/default/web, owners: [z, a]}
 *
 * Every target named is reconciled until nothing more is written, as in the golden plans. */

static json_object *programmed_of(Fake *fx, const char *po) {
  char k[300];
  snprintf(k, sizeof k, "po/%s", po);
  Slot *sl = slot(fx, k, false);
  json_object *conds = sl ? get(get(sl->obj, "status"), "conditions") : NULL;
  for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
    json_object *c = json_object_array_get_idx(conds, i);
    if (!strcmp(json_object_get_string(get(c, "type")), "Programmed")) return c;
  }
  return NULL;
}

static void check_expect(Fake *fx, const char *name, json_object *expect) {
  json_object *progs = get(expect, "programmed"), *ents = get(expect, "entries");
  if (!progs && !ents) fail_msg("%s: the Expect document expects nothing", name);
  for (size_t i = 0; progs && i < json_object_array_length(progs); i++) {
    json_object *e = json_object_array_get_idx(progs, i);
    const char *po = json_object_get_string(get(e, "po")), *reason = json_object_get_string(get(e, "reason"));
    json_object *c = programmed_of(fx, po);
    if (!c) fail_msg("%s: %s has no Programmed condition", name, po);
    const char *got = json_object_get_string(get(c, "reason")), *msg = json_object_get_string(get(c, "message"));
    if (reason && strcmp(reason, got) != 0) fail_msg("%s: %s: Programmed reason %s, want %s (message: %s)", name, po, got, reason, msg);
    json_object *has = get(e, "contains"), *hasnt = get(e, "lacks");
    for (size_t k = 0; has && k < json_object_array_length(has); k++) {
      const char *want = json_object_get_string(json_object_array_get_idx(has, k));
      if (!strstr(msg, want)) fail_msg("%s: %s: Programmed message lacks \"%s\":\n  %s", name, po, want, msg);
    }
    for (size_t k = 0; hasnt && k < json_object_array_length(hasnt); k++) {
      const char *want = json_object_get_string(json_object_array_get_idx(hasnt, k));
      if (strstr(msg, want)) fail_msg("%s: %s: Programmed message holds \"%s\":\n  %s", name, po, want, msg);
    }
  }
  for (size_t i = 0; ents && i < json_object_array_length(ents); i++) {
    json_object *e = json_object_array_get_idx(ents, i), *owners = get(e, "owners");
    const char *t = json_object_get_string(get(e, "target"));
    Slot *sl = slot(fx, t, false);
    json_object *list = sl ? get(get(sl->obj, "spec"), "envoyExtensions") : NULL;
    size_t k = 0;
    for (size_t x = 0; list && x < json_object_array_length(list); x++) {
      json_object *m = get(get(json_object_array_get_idx(list, x), "arguments"), "PropertyOverride");
      if (!m) continue;
      const char *owner = json_object_get_string(get(m, "name"));
      if (k >= json_object_array_length(owners)) fail_msg("%s: %s: entry of %s past the %zu expected", name, t, owner, k);
      const char *want = json_object_get_string(json_object_array_get_idx(owners, k));
      if (strcmp(owner, want) != 0) fail_msg("%s: %s: entry %zu is %s's, want %s's", name, t, k, owner, want);
      k++;
    }
    if (k != json_object_array_length(owners)) fail_msg("%s: %s: %zu of our entries, want %zu", name, t, k, json_object_array_length(owners));
  }
}

static void test_conflict_cases(void **state) {
  (void)state;
  DIR *d = opendir(PO_CONFLICTS_DIR);
  assert_non_null(d);
  char names[64][256];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 64) {
    size_t l = strlen(e->d_name);
    if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml")) snprintf(names[n++], sizeof names[0], "%s", e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
  assert_true(n >= 7);
  for (size_t i = 0; i < n; i++) {
    Fake *fx = fake_new();
    char path[512 + sizeof PO_CONFLICTS_DIR], keys[16][300];
    snprintf(path, sizeof path, "%s/%.250s", PO_CONFLICTS_DIR, names[i]);
    json_object *expect = NULL;
    size_t nkeys = load(fx, path, keys, 16, &expect);
    if (!expect) fail_msg("%s: no Expect document", names[i]);
    settle(fx, names[i], keys, nkeys);
    check_expect(fx, names[i], expect);
    json_object_put(expect);
    fake_free(fx);
  }
}

int main(int argc, char **argv) {
  void *root = argc > 1 ? argv[1] : PO_GOLDEN_DIR;
  const struct CMUnitTest tests[] = {cmocka_unit_test_prestate(test_golden_plans_consul, root),
                                     cmocka_unit_test_prestate(test_golden_plans_istio, root),
                                     cmocka_unit_test_prestate(test_golden_plans_envoygateway, root),
                                     cmocka_unit_test(test_conflict_cases)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
