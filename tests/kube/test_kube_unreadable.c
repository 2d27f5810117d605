/* A cached object that cannot be read is reported so, never as absent (white-box: src/cache.h's
 * po_CacheEntry_Lend_, what po_Informer_Get hands a reader). A PropertyOverride's entry, its text
 * compressed against the app's dictionary as the controller keeps it, is read with the Nth
 * allocation failing, for every N until a read runs through: the reader's tokener, the thread's
 * decompression context and text buffer, json-c's parse, the reader's hold. Every outcome is the
 * object, whole, or NULL with kPo_Ctl_NoMemory saying which step failed and naming the object;
 * never NULL with kPo_Ctl_Ok, which po_Informer_Get means as "absent" (a reconcile then wrote the
 * target without that PropertyOverride's entry).
 *
 * The allocator is replaced in this binary (glibc lets a program define malloc and friends; zstd
 * and json-c then use them) and fails only while armed. Each read runs in a child process, from a
 * thread that never decompressed (its buffers are made in the sweep): json-c aborts on some
 * allocation failures of its own, and such a crash is counted and reported, not failed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cache.h"
#include "compact.h"
#include "po/kube/client.h"

/* The app's PropertyOverride dictionary (controller/app/src/override_dict.c). */
extern const char kPo_App_OverrideDictionary[];
extern const size_t kPo_App_OverrideDictionaryLen;

/* ---- the failing allocator ---- */

#include "fail_alloc.h"

/* ---- the entry ---- */

static const char kText[] =
    "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{"
    "\"creationTimestamp\":\"2026-11-30T09:12:44Z\",\"finalizers\":[\"propertyoverride.io/cleanup\"],"
    "\"generation\":3,\"name\":\"payments-outlier\",\"namespace\":\"shop\",\"resourceVersion\":\"184467\","
    "\"uid\":\"5b0c3f7e-2a41-4d7c-9e55-0f1d2c3b4a59\"},\"spec\":{\"targetRef\":{\"name\":\"payments\"},"
    "\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":25}]},\"status\":{"
    "\"conditions\":[{\"lastTransitionTime\":\"2026-11-30T09:12:45Z\",\"message\":\"1 patch is valid for consul "
    "and Envoy\",\"observedGeneration\":3,\"reason\":\"Accepted\",\"status\":\"True\",\"type\":\"Accepted\"},"
    "{\"lastTransitionTime\":\"2026-11-30T09:12:45Z\",\"message\":\"generation 3 is written to ServiceDefaults "
    "shop/payments\",\"observedGeneration\":3,\"reason\":\"Programmed\",\"status\":\"True\",\"type\":\"Programmed\"}],"
    "\"programmedGeneration\":3}}";

/* Exit codes of a child: the read ran through without meeting the failure (0), met it and failed
 * at a step saying so (1..3), met it and handed out the whole object all the same (a library that
 * took the failure in its stride: zstd's), or broke the contract (kWrong: NULL said Ok, an object
 * not the one cached, a hold that does not match). */
enum { kWhole = 0, kDecompressing = 1, kParsing = 2, kHolding = 3, kAbsorbed = 4, kWrong = 9, kClasses = 10 };

/* What a failed read must name: "<resource> <key>" of the entry read. */
static const char *g_named = "propertyoverrides shop/payments-outlier";
static const char *g_resource = "propertyoverrides";

static int class_of(const po_CtlStatus *st) {
  if (st->code != kPo_Ctl_NoMemory || !strstr(st->message, g_named)) return kWrong;
  if (strstr(st->message, "out of memory decompressing ")) return kDecompressing;
  if (strstr(st->message, "out of memory parsing ")) return kParsing;
  if (strstr(st->message, "out of memory holding ")) return kHolding;
  return kWrong;
}

/* One read with the nth allocation failing (in a child). */
static int read_once(po_CacheEntry_ *e, const json_object *want, long n) {
  po_CacheEntry_Ref_(e); /* the reader's reference, which Lend_ takes over */
  g_count = 0;
  g_fail_at = n;
  json_tokener *t = json_tokener_new_ex(kPo_KubeMaxJsonDepth); /* the informer's thread tokener */
  po_CacheEntry_ *hold = (po_CacheEntry_ *)1;
  po_CtlStatus st = {.code = kPo_Ctl_Internal};
  const json_object *o = po_CacheEntry_Lend_(e, t, g_resource, &hold, &st);
  long reached = g_count;
  g_fail_at = -1;
  if (!o) return hold ? kWrong : class_of(&st);
  bool whole = json_object_equal((json_object *)o, (json_object *)want) && hold && hold->obj == o;
  if (!whole) return kWrong;
  return reached < n ? kWhole : kAbsorbed;
}

/* Reads e with each of its allocations failing in turn (each in a child) until one read is whole:
 * how each ended, counted into seen; returns the number of allocations (the last read's n). A read
 * that is neither the object nor said unreadable fails the test. */
static long each_allocation_failing(po_CacheEntry_ *e, const json_object *want, long seen[kClasses], long *crashes) {
  long n;
  for (n = 1; n < 100000; n++) {
    pid_t pid = fail_alloc_fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(read_once(e, want, n));
    int code = fail_alloc_wait(pid);
    assert_true(code >= -1);
    if (code == -1) {
      ++*crashes;
      continue;
    }
    assert_true(code < kClasses);
    seen[code]++;
    if (code == kWrong) fail_msg("allocation %ld failed: the read of %s was not the object, nor said unreadable", n, g_named);
    if (code == kWhole) break;
  }
  return n;
}

static void test_unreadable_is_never_absent(void **state) {
  (void)state;
  po_TextCodec_ *codec = po_TextCodec_New_(kPo_App_OverrideDictionary, kPo_App_OverrideDictionaryLen, 0);
  assert_non_null(codec);
  po_CacheMeta_ m = {.rv = "184467", .uid = "5b0c3f7e-2a41-4d7c-9e55-0f1d2c3b4a59", .generation = 3, .codec = codec};
  po_CacheEntry_ *e = po_Cache_NewEntry_("shop/payments-outlier", NULL, kText, sizeof kText - 1, &m);
  assert_non_null(e);
  assert_true(e->packed_len > 0 && e->packed_len < e->json_len); /* kept compressed */
  json_object *want = json_tokener_parse(kText);
  assert_non_null(want);
  long seen[kClasses] = {0}, crashes = 0;
  long n = each_allocation_failing(e, want, seen, &crashes);
  printf("a compressed entry read with each of its %ld allocations failing in turn: %ld said decompressing, %ld "
         "parsing, %ld holding, %ld read whole all the same, %ld crashed inside json-c, 0 taken for absent\n",
         n - 1, seen[kDecompressing], seen[kParsing], seen[kHolding], seen[kAbsorbed], crashes);
  assert_int_equal(seen[kWhole], 1);
  assert_true(seen[kDecompressing] >= 2); /* the thread's context and its text buffer */
  assert_true(seen[kParsing] >= 2);       /* the tokener, json-c's tree */
  assert_int_equal(seen[kHolding], 1);
  json_object_put(want);
  po_CacheEntry_Unref_(e);
  po_TextCodec_Free_(codec);
}

/* Not a text entry: a kept tree is lent as it is, nothing allocated, so nothing can fail. */
static void test_tree_entry_lent_as_is(void **state) {
  (void)state;
  json_object *tree = json_tokener_parse(kText);
  po_CacheMeta_ m = {.rv = "184467", .uid = "u", .generation = 3};
  po_CacheEntry_ *e = po_Cache_NewEntry_("shop/payments-outlier", tree, NULL, 0, &m);
  assert_non_null(e);
  po_CacheEntry_ *hold = NULL;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  g_count = 0;
  g_fail_at = 1;
  const json_object *o = po_CacheEntry_Lend_(e, NULL, "propertyoverrides", &hold, &st);
  g_fail_at = -1;
  assert_ptr_equal(o, tree);
  assert_ptr_equal(hold, e);
  assert_int_equal(st.code, kPo_Ctl_Ok);
  po_CacheEntry_Unref_(hold);
}

/* A Consul target as the app keeps it (po_App_TextOptions: compressed, no dictionary): a
 * ServiceDefaults past zstd's 128 KB block, its foreign entries' arguments base64 (compressing
 * badly), read with each allocation of its decompression failing in turn (the thread's context,
 * its window, the text buffer), then the parse's first ones: each read is the object or says
 * unreadable, never absent (a reconcile would create the target again without its entries). */
static void test_unreadable_target_is_never_absent(void **state) {
  (void)state;
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *text = malloc(200000);
  assert_non_null(text);
  size_t n = (size_t)snprintf(text, 200000,
                              "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\",\"metadata\":{"
                              "\"generation\":7,\"name\":\"payments\",\"namespace\":\"shop\",\"resourceVersion\":\"99\","
                              "\"uid\":\"u-1\"},\"spec\":{\"protocol\":\"http\",\"envoyExtensions\":[");
  unsigned r = 26;
  for (int i = 0; i < 3; i++) {
    n += (size_t)snprintf(text + n, 200000 - n, "%s{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"", i ? "," : "");
    for (int k = 0; k < 50000; k++) text[n++] = b64[(r = r * 1103515245u + 12345u) >> 26];
    n += (size_t)snprintf(text + n, 200000 - n, "\"}}");
  }
  n += (size_t)snprintf(text + n, 200000 - n, "]}}");
  po_TextCodec_ *codec = po_TextCodec_New_(NULL, 0, 0);
  assert_non_null(codec);
  po_CacheMeta_ m = {.rv = "99", .uid = "u-1", .generation = 7, .codec = codec};
  po_CacheEntry_ *e = po_Cache_NewEntry_("shop/payments", NULL, text, n, &m);
  assert_non_null(e);
  assert_true(e->packed_len > 0 && e->packed_len < e->json_len); /* kept compressed */
  json_object *want = json_tokener_parse(text);
  assert_non_null(want);
  g_named = "servicedefaults shop/payments";
  g_resource = "servicedefaults";
  long seen[kClasses] = {0}, crashes = 0;
  /* the decompression's allocations, then a few of the parse's (a 150 KB parse has few: strings) */
  long k = each_allocation_failing(e, want, seen, &crashes);
  printf("a compressed target (%zu bytes, %zu packed) read with each of its %ld allocations failing in turn: %ld said "
         "decompressing, %ld parsing, %ld holding, %ld read whole all the same, %ld crashed inside json-c, 0 taken for "
         "absent\n",
         n, e->packed_len, k - 1, seen[kDecompressing], seen[kParsing], seen[kHolding], seen[kAbsorbed], crashes);
  assert_int_equal(seen[kWhole], 1);
  assert_true(seen[kDecompressing] >= 2);
  assert_true(seen[kParsing] >= 1);
  g_named = "propertyoverrides shop/payments-outlier";
  g_resource = "propertyoverrides";
  json_object_put(want);
  po_CacheEntry_Unref_(e);
  po_TextCodec_Free_(codec);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unreadable_is_never_absent),
      cmocka_unit_test(test_unreadable_target_is_never_absent),
      cmocka_unit_test(test_tree_entry_lent_as_is),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
