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
#include <string.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stable_hash_pinned),
      cmocka_unit_test(test_keyed_hash_consistent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
