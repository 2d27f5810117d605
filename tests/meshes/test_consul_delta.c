/* po_Consul_Delta: the JSON Patch of a plan's change to spec.envoyExtensions. Each case is
 * (old list, new list) -> the operations after the resourceVersion's; then seeded random edits,
 * each patch applied by the local API server's RFC 6902 code (po_As_JsonPatch) to the object
 * read, which must come out as the object planned. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver.h" /* po_As_JsonPatch */
#include "po/meshes/consul.h"

static const char kRvOp[] = "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":\"7\"}";

typedef struct {
  /* new_: the new list's entries separated by '|': "#k" is the old list's entry k, shared as the
   * plan shares a kept one, anything else a new entry's JSON */
  const char *why, *old, *new_, *ops; /* old NULL: absent; ops: what follows the resourceVersion's op */
} Case;

#define A "{\"name\":\"a\",\"arguments\":{\"k\":1}}"
#define B "{\"name\":\"b\",\"arguments\":{\"k\":2}}"
#define C "{\"name\":\"c\",\"arguments\":{\"k\":3}}"
#define PATH ",{\"op\":\"add\",\"path\":\"/spec/envoyExtensions/"
#define REMOVE ",{\"op\":\"remove\",\"path\":\"/spec/envoyExtensions/"

static const Case kCases[] = {
    {"one added between two", "[" A "," C "]", "#0|" B "|#1", PATH "1\",\"value\":" B "}]"},
    {"one added at the end", "[" A "]", "#0|" B, PATH "1\",\"value\":" B "}]"},
    {"one added first", "[" B "]", A "|#0", PATH "0\",\"value\":" A "}]"},
    {"two added apart: the one between kept", "[" B "]", A "|#0|" C, PATH "0\",\"value\":" A "}" PATH "2\",\"value\":" C "}]"},
    {"one removed", "[" A "," B "," C "]", "#0|#2", REMOVE "1\"}]"},
    {"one changed (new arguments): removed, then added in its place", "[" A "," B "," C "]", "#0|" B "|#2",
     REMOVE "1\"}" PATH "1\",\"value\":" B "}]"},
    {"all removed: an empty list stays, as the plan writes it", "[" A "," B "]", "", REMOVE "0\"}" REMOVE "0\"}]"},
    {"no list yet: the whole list", NULL, A, ",{\"op\":\"add\",\"path\":\"/spec/envoyExtensions\",\"value\":[" A "]}]"},
    {"not a list: replaced whole", A, A, ",{\"op\":\"add\",\"path\":\"/spec/envoyExtensions\",\"value\":[" A "]}]"},
    {"a repeated entry", "[" A "," A "]", "#0|#1|" A, PATH "2\",\"value\":" A "}]"},
    {"another extension kept in place, ours moved after it", "[" A "," C "," B "]", "#1|#0|#2",
     REMOVE "0\"}" PATH "1\",\"value\":" A "}]"},
    {"nothing changed: the precondition alone", "[" A "]", "#0", "]"},
};

static json_object *parse(const char *s) { return s ? json_tokener_parse(s) : NULL; }

/* The new list of a case: shared entries of `old`, new ones parsed. */
static json_object *new_list(json_object *old, const char *spec) {
  json_object *l = json_object_new_array();
  char buf[512];
  for (const char *p = spec; *p;) {
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    snprintf(buf, sizeof buf, "%.*s", (int)n, p);
    json_object_array_add(l, buf[0] == '#' ? json_object_get(json_object_array_get_idx(old, (size_t)atoi(buf + 1)))
                                           : json_tokener_parse(buf));
    p += n + (bar != NULL);
  }
  return l;
}

static void test_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kCases / sizeof *kCases; i++) {
    const Case *c = &kCases[i];
    json_object *old = parse(c->old), *list = new_list(old, c->new_);
    po_Arena *a = po_Arena_New();
    size_t len = 0;
    const char *d = po_Consul_Delta(old, list, "7", NULL, a, &len);
    char want[2048];
    snprintf(want, sizeof want, "%s%s", kRvOp, c->ops);
    if (!d || strcmp(d, want) != 0) fail_msg("%s:\n got  %s\n want %s", c->why, d ? d : "(null)", want);
    assert_int_equal(len, strlen(d));
    po_Arena_Free(a);
    json_object_put(old);
    json_object_put(list);
  }
}

static void test_refused(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  json_object *old = json_tokener_parse("[]"), *big = json_object_new_array();
  for (int i = 0; i < 1001; i++) json_object_array_add(big, json_object_new_int(i));
  size_t len = 7;
  assert_null(po_Consul_Delta(old, big, "7", NULL, a, &len)); /* more than a thousand operations: the object instead */
  assert_int_equal(len, 0);
  json_object_array_del_idx(big, 0, 1);
  assert_non_null(po_Consul_Delta(old, big, "7", NULL, a, &len)); /* a thousand */
  assert_null(po_Consul_Delta(old, big, "", NULL, a, &len));     /* no version: no precondition, no patch */
  assert_null(po_Consul_Delta(old, NULL, "7", NULL, a, &len));
  /* a version is a JSON string in the patch, whatever it holds */
  const char *d = po_Consul_Delta(old, old, "7\"8\\", NULL, a, &len);
  assert_string_equal(d, "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":\"7\\\"8\\\\\"}]");
  po_Arena_Free(a);
  json_object_put(old);
  json_object_put(big);
}

/* ---- seeded random edits, each patch applied by the local API server ---- */

static uint64_t g_rng;
static FILE *g_dump; /* PO_DELTA_DUMP=FILE: each random case as a JSON line {old, new, patch} */
static unsigned rnd(unsigned n) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (unsigned)(g_rng % n);
}

/* An entry as the plan makes one: {name, required, arguments}, one of six. */
static json_object *entry(unsigned k) {
  char s[160];
  snprintf(s, sizeof s, "{\"name\":\"%s\",\"required\":%s,\"arguments\":{\"k\":%u,\"s\":\"v/%u~\"}}",
           k < 2 ? "builtin/lua" : "builtin/property-override", k % 2 ? "true" : "false", k, k);
  return json_tokener_parse(s);
}

/* list with e inserted at `at` (a new array; this json-c has no insert) */
static json_object *inserted(json_object *list /* taken */, size_t at, json_object *e) {
  json_object *out = json_object_new_array();
  for (size_t i = 0; i <= json_object_array_length(list); i++) {
    if (i == at) json_object_array_add(out, e);
    if (i < json_object_array_length(list)) json_object_array_add(out, json_object_get(json_object_array_get_idx(list, i)));
  }
  json_object_put(list);
  return out;
}

static json_object *object_with(json_object *list /* taken; NULL: none */) {
  json_object *o = json_tokener_parse("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                                      "\"metadata\":{\"name\":\"api\",\"resourceVersion\":\"41\"},\"spec\":{\"protocol\":\"http\"}}");
  if (list) json_object_object_add(json_object_object_get(o, "spec"), "envoyExtensions", list);
  return o;
}

/* `cases` random lists of up to max_n entries, edited; returns how many were one edit of a
 * shared list (each checked to cost one operation). */
static size_t random_edits(int cases, unsigned max_n, size_t *ops_total) {
  size_t single = 0;
  for (int n = 0; n < cases; n++) {
    json_object *old = json_object_new_array(), *list = json_object_new_array();
    unsigned n0 = rnd(max_n + 1);
    for (unsigned i = 0; i < n0; i++) json_object_array_add(old, entry(rnd(6)));
    /* the new list: the old one's entries (shared, as the plan shares the ones it keeps, or
     * some equal copies), with 0-4 entries removed, inserted or replaced */
    bool shared = rnd(4) != 0; /* else some equal copies: removed and added, still exact */
    for (unsigned i = 0; i < n0; i++) {
      json_object *e = json_object_array_get_idx(old, i), *c = NULL;
      if (shared || rnd(2)) c = json_object_get(e);
      else json_object_deep_copy(e, &c, NULL);
      json_object_array_add(list, c);
    }
    unsigned edits = rnd(5);
    for (unsigned k = 0; k < edits; k++) {
      size_t len = json_object_array_length(list), at = rnd((unsigned)len + 1);
      unsigned what = rnd(3);
      if (what == 0 && len > 0 && at < len) json_object_array_del_idx(list, at, 1);
      else if (what == 1 && at < len) json_object_array_put_idx(list, at, entry(rnd(6)));
      else list = inserted(list, at, entry(rnd(6)));
    }
    bool absent = rnd(20) == 0;
    json_object *before = object_with(absent ? NULL : json_object_get(old));
    json_object *want = object_with(json_object_get(list));
    po_Arena *a = po_Arena_New();
    size_t len = 0;
    const char *d = po_Consul_Delta(absent ? NULL : old, list, "41", NULL, a, &len);
    assert_non_null(d);
    json_object *ops = json_tokener_parse(d);
    assert_non_null(ops);
    char msg[512] = "";
    json_object *copy = NULL;
    json_object_deep_copy(before, &copy, NULL);
    json_object *made = po_As_JsonPatch(copy, ops, msg, sizeof msg);
    if (!made || !json_object_equal(made, want))
      fail_msg("case %d: %s\n patch %s\n old   %s\n made  %s\n want  %s", n, msg, d, json_object_to_json_string(old),
               made ? json_object_to_json_string(made) : "(none)", json_object_to_json_string(want));
    if (g_dump) /* each case for realapi's check of the same patches on a real kube-apiserver */
      fprintf(g_dump, "{\"old\":%s,\"new\":%s,\"patch\":%s}\n",
              absent ? "null" : json_object_to_json_string_ext(old, JSON_C_TO_STRING_PLAIN),
              json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN), d);
    size_t nops = json_object_array_length(ops) - 1;
    *ops_total += nops;
    /* one entry added or removed by one edit costs one operation, however long the list */
    if (!absent && shared && edits == 1 && json_object_array_length(list) != n0) {
      assert_int_equal(nops, 1);
      single++;
    }
    json_object_put(made);
    json_object_put(ops);
    json_object_put(before);
    json_object_put(want);
    json_object_put(old);
    json_object_put(list);
    po_Arena_Free(a);
  }
  return single;
}

static void test_random_edits_apply(void **state) {
  (void)state;
  const char *seed = getenv("PO_SEED");
  g_rng = seed ? strtoull(seed, NULL, 10) : 20261206;
  if (!g_rng) g_rng = 1;
  printf("seed %llu (PO_SEED)\n", (unsigned long long)g_rng);
  const char *dump = getenv("PO_DELTA_DUMP");
  if (dump && !(g_dump = fopen(dump, "w"))) fail_msg("PO_DELTA_DUMP %s: cannot write", dump);
  size_t ops = 0, single = random_edits(5000, 12, &ops);
  printf("5000 random edits applied as planned: %zu operations (%zu single additions or removals, one each)\n", ops, single);
  assert_true(single > 300);
  /* lists of up to 400: middles past the edit table's bound are removed and added whole */
  ops = 0;
  single = random_edits(40, 400, &ops);
  printf("40 random edits of lists up to 400 long applied as planned: %zu operations\n", ops);
  if (g_dump) fclose(g_dump), g_dump = NULL;
}

/* adv-delta: members that are not objects (a list no schema checked: the local server without the
 * CRD's, a conversion), null among them. json-c holds a JSON null member as NULL: two NULLs are
 * "the same" entry, and a NULL the longest common subsequence does not keep is added again as
 * an "add" with no "value" at all (RFC 6902 4.1: it MUST have one; the real kube-apiserver's
 * json-patch v4 inserts null for it, a stricter one refuses the patch). Every patch must say the
 * value of each entry it adds, and make the planned list. */
static void test_odd_members(void **state) {
  (void)state;
  static const char *const kOld[] = {
      "[" A "," B ",null]",     /* ours kept, a null after them: the plan puts other extensions first */
      "[" A ",null," B ",7,\"s\"]",
      "[null,null," A "]",
  };
  static const char *const kNew[] = {"#2|#0|#1", "#1|#3|#4|#0|#2", "#1|#0|#2"};
  for (size_t i = 0; i < sizeof kOld / sizeof *kOld; i++) {
    json_object *old = parse(kOld[i]), *list = new_list(old, kNew[i]);
    po_Arena *a = po_Arena_New();
    size_t len = 0;
    const char *d = po_Consul_Delta(old, list, "41", NULL, a, &len);
    assert_non_null(d);
    json_object *ops = json_tokener_parse(d);
    assert_non_null(ops);
    for (size_t k = 1; k < json_object_array_length(ops); k++) {
      json_object *op = json_object_array_get_idx(ops, k);
      if (strcmp(json_object_get_string(json_object_object_get(op, "op")), "add") == 0 &&
          !json_object_object_get_ex(op, "value", NULL))
        fail_msg("case %zu: an add without a value: %s", i, d);
    }
    json_object *before = object_with(json_object_get(old)), *want = object_with(json_object_get(list));
    char msg[512] = "";
    json_object *made = po_As_JsonPatch(before, ops, msg, sizeof msg);
    if (!made || !json_object_equal(made, want)) fail_msg("case %zu: %s\n patch %s", i, msg, d);
    json_object_put(made);
    json_object_put(want);
    json_object_put(ops);
    json_object_put(old);
    json_object_put(list);
    po_Arena_Free(a);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_random_edits_apply),
      cmocka_unit_test(test_odd_members),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
