/* upb decoding map fields with memory exhausted at every point (proto/upb-patches/map-new-oom.patch).
 * A Cluster holding maps of messages (typed_extension_protocol_options: Anys) and of Structs
 * (metadata.filter_metadata, each Struct a map of Values) is decoded, as JSON and as binary (what
 * preview does with a dump and with the bytes it keeps of each resource), into a fixed-size upb
 * arena (an allocator behind it that has nothing: every allocation past its size fails), once for each size from
 * too small for anything to enough for everything, in steps of 8 bytes. So each allocation of the
 * decode is, for some size, the first one that fails. Each decode must give the whole message or
 * fail saying out of memory: before the patch, the map whose table could not be allocated came
 * back with no entries array, and the next insert crashed (SIGSEGV in upb_strtable_remove2);
 * decode_tomap wrote through a NULL map or value message; and po_Binary_Decode called memory
 * running out "invalid ... protobuf". */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/schema.h"
#include "upb/arena.h"

#define HPO "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
#define H2(k) "\"" k "\":{\"@type\":\"" HPO "\",\"explicit_http_config\":{\"http2_protocol_options\":{\"allow_connect\":true}}}"
#define MD(k) "\"" k "\":{\"a\":{\"b\":{\"c\":1}},\"l\":[{\"x\":{\"y\":\"z\"}}],\"t\":true}"
static const char kCluster[] =
    "{\"name\":\"api\",\"connect_timeout\":\"5s\",\"typed_extension_protocol_options\":{" H2("a") "," H2("b") "," H2("c")
    "," H2("d") "},\"metadata\":{\"filter_metadata\":{" MD("m1") "," MD("m2") "," MD("m3") "," MD("m4") "}}}";

enum { kStep = 8, kMaxArena = 1 << 20 };

/* The allocator behind the fixed arena: none to give (upb calls a NULL one, despite its header). */
static void *no_memory(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  (void)alloc, (void)ptr, (void)oldsize, (void)size;
  return NULL;
}
static upb_alloc g_none = {no_memory};

/* The message's binary form, in a, or NULL. */
static char *encoded(const upb_MessageDef *m, const upb_Message *msg, upb_Arena *a, size_t *len) {
  po_Status st;
  po_Status_Clear(&st);
  return po_Binary_Encode(m, msg, a, len, &st);
}

/* One decode into a fixed arena of `size` bytes: true once it succeeded (the message whole),
 * false when it failed for want of memory; anything else fails the test. */
static bool decode_in(const po_Schema *s, const upb_MessageDef *m, bool binary, const char *in, size_t in_len,
                      const char *want, size_t want_len, char *mem, size_t size) {
  upb_Arena *a = upb_Arena_Init(mem, size, &g_none);
  if (!a) return false;
  po_Status st;
  po_Status_Clear(&st);
  upb_Message *msg = binary ? po_Binary_Decode(s, m, in, in_len, a, &st) : po_Json_Decode(s, m, in, in_len, a, &st);
  bool ok = msg != NULL;
  if (!ok && st.code != kPo_Status_NoMemory) {
    fail_msg("%s decode in %zu bytes: not 'out of memory' but (%d) %s", binary ? "binary" : "JSON", size, (int)st.code,
             st.message);
  }
  if (ok) {
    upb_Arena *b = upb_Arena_New();
    size_t len = 0;
    char *got = encoded(m, msg, b, &len);
    if (!got || len != want_len || memcmp(got, want, len) != 0) {
      fail_msg("%s decode in %zu bytes succeeded with another message (%zu bytes, want %zu)",
               binary ? "binary" : "JSON", size, len, want_len);
    }
    upb_Arena_Free(b);
  }
  upb_Arena_Free(a);
  return ok;
}

static void sweep(bool binary) {
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  assert_non_null(s);
  const upb_MessageDef *m = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  assert_non_null(m);
  upb_Arena *ref = upb_Arena_New();
  upb_Message *msg = po_Json_Decode(s, m, kCluster, strlen(kCluster), ref, &st);
  if (!msg) fail_msg("%s", st.message);
  size_t want_len = 0;
  char *want = encoded(m, msg, ref, &want_len);
  assert_non_null(want);
  const char *in = binary ? want : kCluster;
  size_t in_len = binary ? want_len : strlen(kCluster);
  /* what the same decode gives with memory enough, encoded again: a map's entries come out in
   * its table's order, which the decode's inserts decide */
  if (binary) {
    upb_Message *again = po_Binary_Decode(s, m, in, in_len, ref, &st);
    assert_non_null(again);
    want = encoded(m, again, ref, &want_len);
    assert_non_null(want);
  }
  char *mem = malloc(kMaxArena);
  assert_non_null(mem);
  size_t size = 0, failed = 0;
  for (size = kStep; size <= kMaxArena; size += kStep) {
    if (decode_in(s, m, binary, in, in_len, want, want_len, mem, size)) break;
    failed++;
  }
  if (size > kMaxArena) fail_msg("never decoded in %d bytes", kMaxArena);
  /* the maps are most of it: the sweep went through every one of their allocations */
  printf("%s: %zu sizes failed for want of memory, decoded whole from %zu bytes\n", binary ? "binary" : "JSON", failed,
         size);
  free(mem);
  upb_Arena_Free(ref);
}

static void test_binary_maps_oom(void **state) {
  (void)state;
  sweep(true);
}

static void test_json_maps_oom(void **state) {
  (void)state;
  sweep(false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_binary_maps_oom),
      cmocka_unit_test(test_json_maps_oom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
