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

static po_CacheEntry_ *text_entry(const char *key, const char *json, size_t len, const char *rv, const char *uid, int64_t gen) {
  po_CacheMeta_ m = {rv, uid, gen, false};
  return po_Cache_NewEntry_(key, NULL, json, len, &m);
}

static void count(void *ctx, po_CacheEntry_ *e) { (*(int *)ctx)++; }

static void test_put_replace_remove_grow(void **state) {
  po_Cache_ c;
  assert_true(po_Cache_Init_(&c));
  char key[32], json[64];
  for (int i = 0; i < 10000; i++) {
    snprintf(key, sizeof key, "ns%d/obj%d", i % 7, i);
    snprintf(json, sizeof json, "{\"i\":%d}", i);
    assert_null(po_Cache_Put_(&c, text_entry(key, json, strlen(json), "1", "u1", 1)));
  }
  assert_int_equal(c.count, 10000);
  assert_true(c.nslots >= 10000);
  /* Replace returns the old entry with its own text. */
  po_CacheEntry_ *old = po_Cache_Put_(&c, text_entry("ns3/obj10", "{\"new\":1}", 9, "2", "u2", 7));
  assert_non_null(old);
  assert_string_equal(old->json, "{\"i\":10}");
  assert_string_equal(old->rv, "1");
  po_CacheEntry_Unref_(old);
  po_CacheEntry_ *e = po_Cache_Get_(&c, "ns3/obj10");
  assert_string_equal(e->json, "{\"new\":1}");
  assert_int_equal(e->json_len, 9);
  assert_string_equal(e->rv, "2");
  assert_string_equal(e->uid, "u2");
  assert_int_equal(e->generation, 7);
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
  /* Empty values and rv. */
  assert_null(po_Cache_Put_(&c, text_entry("x", "", 0, NULL, NULL, 0)));
  assert_string_equal(po_Cache_Get_(&c, "x")->rv, "");
  assert_string_equal(po_Cache_Get_(&c, "x")->uid, "");
  po_Cache_Destroy_(&c);
}

/* A parsed entry: the tree is the entry's, and a reader's reference keeps entry and tree alive
 * after the map replaced and dropped it (what po_Informer_Get hands out). Under valgrind and
 * ASan a premature free or a leak of either shows. */
static void test_parsed_entry_outlives_its_replacement(void **state) {
  (void)state;
  po_Cache_ c;
  assert_true(po_Cache_Init_(&c));
  json_object *tree = json_tokener_parse("{\"metadata\":{\"name\":\"a\"},\"spec\":{\"n\":[1,2,3]}}");
  po_CacheMeta_ m = {"5", "u", 3, true};
  po_CacheEntry_ *e = po_Cache_NewEntry_("ns/a", tree, "ignored", 7, &m);
  assert_non_null(e);
  assert_ptr_equal(e->obj, tree);
  assert_null(e->json);
  assert_string_equal(e->rv, "5");
  assert_string_equal(e->uid, "u");
  assert_int_equal(e->generation, 3);
  assert_true(e->deleting);
  assert_null(po_Cache_Put_(&c, e));
  po_CacheEntry_Ref_(e); /* a reader */
  po_CacheMeta_ m2 = {"6", "u", 3, false};
  po_CacheEntry_ *old = po_Cache_Put_(&c, po_Cache_NewEntry_("ns/a", NULL, "{}", 2, &m2));
  assert_ptr_equal(old, e);
  po_CacheEntry_Unref_(old); /* the map's reference */
  json_object *n = NULL;
  assert_true(json_object_object_get_ex(json_object_object_get(e->obj, "spec"), "n", &n));
  assert_int_equal(json_object_array_length(n), 3);
  po_CacheEntry_Unref_(e); /* the reader's: the last, frees entry and tree */
  assert_false(po_Cache_Get_(&c, "ns/a")->deleting);
  po_Cache_Destroy_(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_put_replace_remove_grow),
                                     cmocka_unit_test(test_parsed_entry_outlives_its_replacement)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
