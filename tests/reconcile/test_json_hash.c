/* The tree hash (controller/reconcile/src/json_hash.h) under its fixed key, pinned: the write
 * record on a target stores it (sync.h), so every version must compute the same value for the
 * same tree, whatever the implementation does to go faster (strings of every length around the
 * 8-byte words SipHash takes, keys, nesting, numbers). And the keyed hash agrees with itself:
 * members in any order, a member left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "json_hash.h"

typedef struct {
  const char *json;
  uint64_t stable;
} Pin;

static const Pin kPins[] = {
#include "json_hash/pins.inc"
};

static void test_stable_hash_pinned(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kPins / sizeof *kPins; i++) {
    json_object *o = json_tokener_parse(kPins[i].json);
    assert_non_null(o);
    uint64_t h = po_Json_HashStable(o);
    if (h != kPins[i].stable) fail_msg("pin %zu %s: 0x%016llx, pinned 0x%016llx", i, kPins[i].json, (unsigned long long)h, (unsigned long long)kPins[i].stable);
    json_object_put(o);
  }
}

/* Strings of 0 to 40 bytes, each a different hash, and each the same hash inside an object
 * whatever the order of its members. */
static void test_keyed_hash_consistent(void **state) {
  (void)state;
  char s[64];
  po_JsonHash seen[41];
  for (int n = 0; n <= 40; n++) {
    memset(s, 'a' + n % 26, (size_t)n);
    s[n] = '\0';
    json_object *str = json_object_new_string(s);
    seen[n] = po_Json_Hash(str);
    for (int k = 0; k < n; k++) assert_false(po_JsonHash_Equal(seen[k], seen[n]));
    json_object *a = json_object_new_object(), *b = json_object_new_object();
    json_object_object_add(a, "x", json_object_get(str));
    json_object_object_add(a, "marker", json_object_new_int(n));
    json_object_object_add(b, "marker", json_object_new_int(n));
    json_object_object_add(b, "x", json_object_get(str));
    assert_true(po_JsonHash_Equal(po_Json_Hash(a), po_Json_Hash(b)));
    assert_true(po_JsonHash_Equal(po_Json_HashExcept(a, "marker"), po_Json_HashExcept(b, "marker")));
    assert_false(po_JsonHash_Equal(po_Json_Hash(a), po_Json_HashExcept(a, "marker")));
    json_object_put(a);
    json_object_put(b);
    json_object_put(str);
  }
}

/* The SipHash core against its authors' published 128-bit outputs for the empty message under the
 * key 00 01 .. 0f: SipHash-2-4 (the stored hash) and SipHash-1-3 (the process's own), each output
 * as 16 bytes, the first 64-bit half little-endian first. A round count or a finalisation constant
 * wrong gives another value. */
static void test_sip_published_values(void **state) {
  (void)state;
  static const struct {
    int c, d;
    unsigned char out[16];
  } kVectors[] = {
      {2, 4, {0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93}},
      {1, 3, {0xe7, 0x7e, 0xbc, 0xb2, 0x27, 0x88, 0xa5, 0xbe, 0xfd, 0x62, 0xdb, 0x6a, 0xdd, 0x30, 0x30, 0x01}},
  };
  for (size_t i = 0; i < sizeof kVectors / sizeof *kVectors; i++) {
    po_JsonHash h = po_Hash_SipWith_(0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, kVectors[i].c, kVectors[i].d, "", 0);
    unsigned char got[16];
    for (int b = 0; b < 8; b++) got[b] = (unsigned char)(h.lo >> (8 * b)), got[8 + b] = (unsigned char)(h.hi >> (8 * b));
    if (memcmp(got, kVectors[i].out, 16) != 0) fail_msg("SipHash-%d-%d of the empty message differs from the published value", kVectors[i].c, kVectors[i].d);
  }
}

/* The process's hash over the tree shapes that take other paths through it: members whose names
 * are any length around the 8-byte words, values of every type, nesting; equal trees (members in
 * any order) hash the same, and any one change of a type, a value, a name or a length differs. */
static void test_keyed_hash_tells_trees_apart(void **state) {
  (void)state;
  static const char *const kTrees[] = {
      "true", "false", "0", "1", "-1", "0.5", "1.0", "\"\"", "\"1\"", "[]", "{}", "[null]", "[[]]", "[{}]", "[\"a\"]", "\"a\"",
      "[[1],2]", "[[1,2]]", "{\"a\":\"b\"}", "{\"ab\":\"\"}", "{\"b\":\"a\"}", "\"a\\u0000\"", "[\"\",\"\"]", "[\"\"]",
      "{\"a\":null}", "{\"a\":1}", "{\"b\":1}", "{\"a\":\"1\"}", "{\"ab\":1}", "{\"abcdefgh\":1}", "{\"abcdefghi\":1}",
      "{\"a\":1,\"b\":2}", "{\"a\":2,\"b\":1}", "{\"a\":{\"b\":1}}", "{\"a\":[1]}", "[1,2]", "[2,1]", "[1,[2]]",
      "{\"\":\"\"}", "{\"a\":\"abcdefghijklmnopq\"}", "{\"a\":\"abcdefghijklmnopr\"}", "{\"x\":1,\"y\":{\"z\":[true,false]}}",
      /* where a name ends and its value begins, NULs, empty against missing, the numbers' edges */
      "\"\\u0000\"", "\"\\u0000a\"", "{\"ab\":\"c\"}", "{\"a\":\"bc\"}", "{\"abcdefgh\":\"\"}", "{\"abcdefg\":\"h\"}",
      "{\"\":\"abcdefgh\"}", "{\"a\":[]}", "{\"a\":{}}", "{\"a\":\"\"}", "{\"a\":false}", "{\"a\":0}", "[\"a\",\"b\"]", "[\"ab\"]",
      "[\"\",\"ab\"]", "[[],[]]", "[[[]]]", "{\"0\":1}", "0.0", "-0.0", "9223372036854775807", "18446744073709551615",
      "{\"a\":{\"a\":{}}}", "{\"a\":{},\"b\":{}}", "{\"a\":null,\"b\":null}",
  };
  enum { kN = sizeof kTrees / sizeof *kTrees };
  po_JsonHash h[kN];
  for (size_t i = 0; i < kN; i++) {
    json_object *o = json_tokener_parse(kTrees[i]);
    assert_non_null(o);
    h[i] = po_Json_Hash(o);
    po_JsonHash again = po_Json_Hash(o);
    assert_true(po_JsonHash_Equal(h[i], again));
    for (size_t k = 0; k < i; k++) {
      if (po_JsonHash_Equal(h[i], h[k])) fail_msg("%s and %s hash the same", kTrees[i], kTrees[k]);
    }
    json_object_put(o);
  }
  json_object *a = json_tokener_parse("{\"x\":1,\"y\":{\"z\":[true,false]}}");
  json_object *b = json_tokener_parse("{\"y\":{\"z\":[true,false]},\"x\":1}");
  assert_true(po_JsonHash_Equal(po_Json_Hash(a), po_Json_Hash(b)));
  json_object_put(a);
  json_object_put(b);
}

/* ---- random small trees: equal hash exactly when json_object_equal ---- */

static uint64_t g_r;
static unsigned rnd(unsigned n) { /* splitmix64 */
  uint64_t z = (g_r += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (unsigned)((z ^ (z >> 31)) % n);
}

/* From a small alphabet, so that equal trees and near misses are common: names and strings of 0 to
 * 17 bytes around the 8-byte words (a NUL among them), the same digits as int and double, nesting
 * that moves an element across a bracket. */
static json_object *tree(int depth) {
  static const char *const kStr[] = {"", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "a\0b", "\0", "abcdefghijklmnopq"};
  static const size_t kLen[] = {0, 1, 2, 7, 8, 9, 3, 1, 17};
  unsigned k = rnd(depth > 2 ? 6 : 8);
  switch (k) {
    case 0: return json_object_new_boolean(rnd(2));
    case 1: return json_object_new_int64((int64_t)rnd(3) - 1);
    case 2: return json_object_new_double((double)rnd(3) - 1);
    case 3: { unsigned i = rnd(9); return json_object_new_string_len(kStr[i], (int)kLen[i]); }
    case 4: return NULL; /* null */
    case 5: return json_object_new_int64(rnd(2) ? INT64_MIN : -1); /* the two readings of an int */
    case 6: {
      json_object *a = json_object_new_array();
      for (unsigned n = rnd(4), i = 0; i < n; i++) json_object_array_add(a, tree(depth + 1));
      return a;
    }
    default: {
      json_object *o = json_object_new_object();
      for (unsigned n = rnd(4), i = 0; i < n; i++) {
        unsigned s = rnd(9);
        char name[24];
        memcpy(name, kStr[s], kLen[s] + 1);
        if (kLen[s] != strlen(kStr[s])) name[0] = 'z'; /* member names hold no NUL */
        json_object_object_add(o, name, tree(depth + 1));
      }
      return o;
    }
  }
}

static void test_keyed_hash_equal_exactly_when_trees_are(void **state) {
  (void)state;
  const char *env = getenv("PO_SEED");
  uint64_t seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  printf("test_keyed_hash_equal_exactly_when_trees_are: seed %llu (PO_SEED)\n", (unsigned long long)seed);
  g_r = seed;
  enum { kTrees = 3000 };
  static json_object *t[kTrees];
  static po_JsonHash h[kTrees];
  size_t equal_pairs = 0;
  for (size_t i = 0; i < kTrees; i++) {
    t[i] = tree(0);
    h[i] = po_Json_Hash(t[i]);
  }
  for (size_t i = 0; i < kTrees; i++) {
    for (size_t k = 0; k < i; k++) {
      bool same = json_object_equal(t[i], t[k]) != 0, hashed = po_JsonHash_Equal(h[i], h[k]);
      equal_pairs += same;
      if (same != hashed) {
        fail_msg("seed %llu: %s and %s: equal %d, hashes equal %d", (unsigned long long)seed,
                 json_object_to_json_string(t[i]), json_object_to_json_string(t[k]), same, hashed);
      }
    }
  }
  printf("test_keyed_hash_equal_exactly_when_trees_are: %d trees, %zu equal pairs\n", kTrees, equal_pairs);
  assert_true(equal_pairs > 100); /* the alphabet is small enough that the equal case is exercised */
  for (size_t i = 0; i < kTrees; i++) json_object_put(t[i]);
}

/* ---- one change away: a random tree against its copy with one change somewhere inside ---- */

static json_object *copy_of(json_object *t) {
  json_object *c = NULL;
  if (t && json_object_deep_copy(t, &c, NULL) != 0) fail_msg("deep copy");
  return c;
}

/* One change at a random depth (or none): an element or member dropped, an element wrapped in an
 * array, a member renamed (a byte added at its end, or its first one dropped: the name/value
 * boundary), a value replaced by another tree. */
static void change(json_object **u) {
  json_object *o = *u;
  if (json_object_is_type(o, json_type_array) && json_object_array_length(o) && rnd(3)) {
    size_t i = rnd((unsigned)json_object_array_length(o));
    json_object *e = json_object_get(json_object_array_get_idx(o, i));
    unsigned m = rnd(4);
    if (m == 0) {
      json_object_array_del_idx(o, i, 1);
      json_object_put(e);
      return;
    }
    if (m == 1) {
      json_object *w = json_object_new_array();
      json_object_array_add(w, e);
      e = w;
    } else {
      change(&e);
    }
    json_object_array_put_idx(o, i, e);
    return;
  }
  if (json_object_is_type(o, json_type_object) && json_object_object_length(o) && rnd(3)) {
    unsigned which = rnd((unsigned)json_object_object_length(o)), j = 0;
    char name[32] = "";
    json_object *e = NULL;
    json_object_object_foreach(o, k, v) {
      if (j++ == which) {
        snprintf(name, sizeof name, "%s", k);
        e = json_object_get(v);
      }
    }
    json_object_object_del(o, name);
    unsigned m = rnd(4);
    if (m == 0) {
      json_object_put(e);
      return;
    }
    if (m == 1) {
      size_t l = strlen(name);
      name[l] = 'h', name[l + 1] = '\0';
      json_object_object_add(o, name + (rnd(2) ? 1 : 0), e); /* "ab" -> "abh" or "bh" */
      return;
    }
    change(&e);
    json_object_object_add(o, name, e);
    return;
  }
  if (rnd(4) == 0) return; /* unchanged */
  json_object_put(*u);
  *u = tree(1);
}

static void test_keyed_hash_one_change_away(void **state) {
  (void)state;
  const char *env = getenv("PO_SEED");
  uint64_t seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  printf("test_keyed_hash_one_change_away: seed %llu (PO_SEED)\n", (unsigned long long)seed);
  g_r = seed;
  size_t equal = 0, excepts = 0;
  for (int i = 0; i < 20000; i++) {
    json_object *t = tree(0), *u = copy_of(t);
    change(&u);
    bool same = json_object_equal(t, u) != 0, hashed = po_JsonHash_Equal(po_Json_Hash(t), po_Json_Hash(u));
    equal += same;
    if (same != hashed) {
      fail_msg("seed %llu: %s and %s: equal %d, hashes equal %d", (unsigned long long)seed, json_object_to_json_string(t),
               json_object_to_json_string(u), same, hashed);
    }
    /* leaving a member out of the hash is hashing the object without it */
    if (json_object_is_type(t, json_type_object) && json_object_object_length(t)) {
      const char *name = NULL;
      json_object_object_foreach(t, k, v) {
        (void)v;
        name = k;
      }
      json_object *without = copy_of(t);
      json_object_object_del(without, name);
      if (!po_JsonHash_Equal(po_Json_HashExcept(t, name), po_Json_Hash(without))) {
        fail_msg("seed %llu: %s except \"%s\" differs from it without", (unsigned long long)seed, json_object_to_json_string(t), name);
      }
      excepts++;
      json_object_put(without);
    }
    json_object_put(t);
    json_object_put(u);
  }
  printf("test_keyed_hash_one_change_away: 20000 pairs, %zu equal, %zu excepts\n", equal, excepts);
  assert_true(equal > 1000 && excepts > 1000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stable_hash_pinned),
      cmocka_unit_test(test_keyed_hash_consistent),
      cmocka_unit_test(test_sip_published_values),
      cmocka_unit_test(test_keyed_hash_tells_trees_apart),
      cmocka_unit_test(test_keyed_hash_equal_exactly_when_trees_are),
      cmocka_unit_test(test_keyed_hash_one_change_away),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
