/* The cache's hash map (white-box: src/cache.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cache.h"

static void count(void *ctx, po_CacheEntry_ *e) {
  (void)e;
  (*(int *)ctx)++;
}

static po_CacheEntry_ *entry(const char *key, const char *json, const char *rv) {
  json_object *o = json_tokener_parse(json);
  assert_non_null(o);
  po_CacheEntry_ *e = po_Cache_NewEntry_(key, o, rv);
  assert_non_null(e);
  return e;
}

static int value_of(const po_CacheEntry_ *e, const char *k) {
  json_object *v = NULL;
  assert_true(json_object_object_get_ex(e->obj, k, &v));
  return json_object_get_int(v);
}

static void test_put_replace_remove_grow(void **state) {
  (void)state;
  po_Cache_ c;
  assert_true(po_Cache_Init_(&c));
  char key[32], json[64];
  for (int i = 0; i < 10000; i++) {
    snprintf(key, sizeof key, "ns%d/obj%d", i % 7, i);
    snprintf(json, sizeof json, "{\"i\":%d}", i);
    assert_null(po_Cache_Put_(&c, entry(key, json, "1")));
  }
  assert_int_equal(c.count, 10000);
  assert_true(c.nslots >= 10000);
  /* Replace returns the old entry with its own object. */
  po_CacheEntry_ *old = po_Cache_Put_(&c, entry("ns3/obj10", "{\"new\":1}", "2"));
  assert_non_null(old);
  assert_int_equal(value_of(old, "i"), 10);
  assert_string_equal(old->rv, "1");
  po_CacheEntry_Unref_(old);
  po_CacheEntry_ *e = po_Cache_Get_(&c, "ns3/obj10");
  assert_int_equal(value_of(e, "new"), 1);
  assert_string_equal(e->rv, "2");
  assert_int_equal(c.count, 10000);
  for (int i = 0; i < 10000; i += 2) {
    snprintf(key, sizeof key, "ns%d/obj%d", i % 7, i);
    po_CacheEntry_Unref_(po_Cache_Remove_(&c, key));
  }
  assert_int_equal(c.count, 5000);
  assert_null(po_Cache_Get_(&c, "ns0/obj0"));
  assert_null(po_Cache_Remove_(&c, "ns0/obj0"));
  assert_non_null(po_Cache_Get_(&c, "ns1/obj1"));
  int n = 0;
  po_Cache_ForEach_(&c, count, &n);
  assert_int_equal(n, 5000);
  assert_true(po_Cache_Bytes_(&c) > 5000 * sizeof(po_CacheEntry_));
  /* Empty rv. */
  assert_null(po_Cache_Put_(&c, entry("x", "{}", NULL)));
  assert_string_equal(po_Cache_Get_(&c, "x")->rv, "");
  po_Cache_Destroy_(&c);
}

/* A reader's reference keeps the entry and its object after the map replaced and dropped it
 * (what po_Informer_Peek relies on); the last reference frees both (valgrind checks). */
static void test_reader_outlives_the_map(void **state) {
  (void)state;
  po_Cache_ c;
  assert_true(po_Cache_Init_(&c));
  assert_null(po_Cache_Put_(&c, entry("ns/a", "{\"v\":1,\"deep\":{\"x\":[1,2,3]}}", "1")));
  po_CacheEntry_ *held = po_CacheEntry_Ref_(po_Cache_Get_(&c, "ns/a"));
  po_CacheEntry_Unref_(po_Cache_Put_(&c, entry("ns/a", "{\"v\":2}", "2"))); /* the map's reference goes */
  assert_int_equal(value_of(held, "v"), 1);
  assert_string_equal(held->rv, "1");
  assert_int_equal(value_of(po_Cache_Get_(&c, "ns/a"), "v"), 2);
  po_Cache_Destroy_(&c);
  assert_int_equal(value_of(held, "v"), 1); /* even after the whole map went */
  po_CacheEntry_Unref_(held);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_put_replace_remove_grow),
                                     cmocka_unit_test(test_reader_outlives_the_map)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
