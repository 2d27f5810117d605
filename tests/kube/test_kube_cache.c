/* The cache's hash map (white-box: src/cache.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

static void count(void *ctx, po_CacheEntry_ *e) { (*(int *)ctx)++; }

static void test_put_replace_remove_grow(void **state) {
  po_Cache_ c;
  assert_true(po_Cache_Init_(&c));
  char key[32], json[64];
  for (int i = 0; i < 10000; i++) {
    snprintf(key, sizeof key, "ns%d/obj%d", i % 7, i);
    snprintf(json, sizeof json, "{\"i\":%d}", i);
    assert_null(po_Cache_Put_(&c, po_Cache_NewEntry_(key, json, strlen(json), "1", "u1", 1)));
  }
  assert_int_equal(c.count, 10000);
  assert_true(c.nslots >= 10000);
  /* Replace returns the old entry with its own text. */
  po_CacheEntry_ *old = po_Cache_Put_(&c, po_Cache_NewEntry_("ns3/obj10", "{\"new\":1}", 9, "2", "u2", 7));
  assert_non_null(old);
  assert_string_equal(old->json, "{\"i\":10}");
  assert_string_equal(old->rv, "1");
  free(old);
  po_CacheEntry_ *e = po_Cache_Get_(&c, "ns3/obj10");
  assert_string_equal(e->json, "{\"new\":1}");
  assert_int_equal(e->json_len, 9);
  assert_string_equal(e->rv, "2");
  assert_string_equal(e->uid, "u2");
  assert_int_equal(e->generation, 7);
  assert_int_equal(c.count, 10000);
  for (int i = 0; i < 10000; i += 2) {
    snprintf(key, sizeof key, "ns%d/obj%d", i % 7, i);
    free(po_Cache_Remove_(&c, key));
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
  assert_null(po_Cache_Put_(&c, po_Cache_NewEntry_("x", "", 0, NULL, NULL, 0)));
  assert_string_equal(po_Cache_Get_(&c, "x")->rv, "");
  assert_string_equal(po_Cache_Get_(&c, "x")->uid, "");
  po_Cache_Destroy_(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_put_replace_remove_grow)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
