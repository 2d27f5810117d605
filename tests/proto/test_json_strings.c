/* JSON strings through upb's decoder as patched (proto/upb-patches/json-string-copy.patch: a
 * string without escapes is copied once, at its size; every other one, and every error, takes
 * upb's own loop). Rows: the string a Cluster's `name` holds after po_Json_Decode, or the exact
 * error, for each kind of string, including the loop's quirk that a control character is
 * refused anywhere but first. They read the same before and after the patch (checked against
 * the unpatched decoder when the patch was written). Then what a long string costs in arena
 * bytes: upb's loop grew it by doubling from 8 bytes, each step a new copy in the arena. */
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
#include "upb/reflection.h"

typedef struct {
  const char *json;
  const char *name; /* the decoded name; NULL when an error is expected */
  const char *err;  /* the exact error */
} Row;

#define CLUSTER "invalid envoy.config.cluster.v3.Cluster JSON: "
static const Row kRows[] = {
    {"{\"name\":\"abc\"}", "abc", NULL},
    {"{\"name\":\"\"}", "", NULL},
    {"{\"name\":\"a\\\"b\\\\c\\/d\"}", "a\"b\\c/d", NULL},
    {"{\"name\":\"tab\\tnl\\nend\"}", "tab\tnl\nend", NULL},
    {"{\"name\":\"\\u00e9\\ud83d\\ude00\"}", "\xc3\xa9\xf0\x9f\x98\x80", NULL},
    {"{\"name\":\"\xc3\xa9t\xc3\xa9\"}", "\xc3\xa9t\xc3\xa9", NULL},
    {"{\"name\":\"\x01" "ab\"}", "\x01" "ab", NULL}, /* upb checks from the second character */
    {"{\"na\\u006de\":\"x\"}", "x", NULL},           /* an escaped key */
    {"{\"name\":\"plain then escape \\u0041\"}", "plain then escape A", NULL},
    {"{\"name\":\"a\x01" "b\"}", NULL, CLUSTER "Error parsing JSON @1:10: Invalid char in JSON string"},
    {"{\"name\":\"a\x01\"}", NULL, CLUSTER "Error parsing JSON @1:10: Invalid char in JSON string"},
    {"{\"name\":\"a\nb\"}", NULL, CLUSTER "Error parsing JSON @1:10: Invalid char in JSON string"},
    /* upb's loop reads the NUL po_Json_Decode puts after the text as a control character */
    {"{\"name\":\"abc", NULL, CLUSTER "Error parsing JSON @1:12: Invalid char in JSON string"},
    {"{\"name\":\"abc\\", NULL, CLUSTER "Error parsing JSON @1:13: EOF inside string"},
    {"{\"name\":\"\\q\"}", NULL, CLUSTER "Error parsing JSON @1:11: Invalid escape char"},
    /* the scan goes eight bytes at a time: a quote, a backslash or a control character at
     * each place of a word, and multi-byte UTF-8 across words */
    {"{\"name\":\"0123456\\\"89abcdef\"}", "0123456\"89abcdef", NULL},
    {"{\"name\":\"01234567\\n9abcdef\"}", "01234567\n9abcdef", NULL},
    {"{\"name\":\"0123456789abcde\\t\"}", "0123456789abcde\t", NULL},
    {"{\"name\":\"0123456789abcdefghijklmn\"}", "0123456789abcdefghijklmn", NULL},
    {"{\"name\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z\"}",
     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", NULL},
    {"{\"name\":\"0123456789abcdefghij\x1f\"}", NULL, CLUSTER "Error parsing JSON @1:29: Invalid char in JSON string"},
    {"{\"name\":\"01234567\x7f\x80\xff\x01\"}", NULL, CLUSTER "Error parsing JSON @1:20: Invalid char in JSON string"},
    {"{\"name\":\"0123456789abcdefghij", NULL, CLUSTER "Error parsing JSON @1:29: Invalid char in JSON string"},
    {"{\"nam\":\"x\"}", NULL, CLUSTER "Error parsing JSON @1:7: No such field: nam"},
    /* numbers strtod reads further than JSON does (hexadecimal after a 0): the Release build's
     * error in every build (a Debug build aborted on upb's assert: json-number-assert.patch) */
    {"{\"per_connection_buffer_limit_bytes\":0x10}", NULL, CLUSTER "Error parsing JSON @1:38: Expected: ','"},
    {"{\"outlier_detection\":{\"max_ejection_percent\":0x1p3}}", NULL, CLUSTER "Error parsing JSON @1:46: Expected: ','"},
    {"{\"dns_lookup_family\":-0xaZa9a9}", NULL, CLUSTER "Error parsing JSON @1:23: Expected: ','"},
};

static void test_rows(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  assert_non_null(s);
  const upb_MessageDef *m = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  assert_non_null(m);
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(m, "name");
  int bad = 0;
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; i++) {
    upb_Arena *a = upb_Arena_New();
    po_Status_Clear(&st);
    upb_Message *msg = po_Json_Decode(s, m, kRows[i].json, strlen(kRows[i].json), a, &st);
    if (kRows[i].name) {
      upb_StringView v = msg ? upb_Message_Get(msg, f).str_val : (upb_StringView){NULL, 0};
      if (!msg || v.size != strlen(kRows[i].name) || memcmp(v.data, kRows[i].name, v.size)) {
        print_error("row %zu: %s\n", i, msg ? "another name" : st.message);
        bad++;
      }
    } else if (msg || strcmp(st.message, kRows[i].err)) {
      print_error("row %zu: got '%s'\n", i, msg ? "no error" : st.message);
      bad++;
    }
    upb_Arena_Free(a);
  }
  assert_int_equal(bad, 0);
}

/* The bytes an arena asked its allocator for. */
typedef struct {
  upb_alloc alloc;
  size_t total;
} Counting;

static void *counting_func(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  (void)oldsize;
  Counting *c = (Counting *)alloc;
  if (size == 0) {
    free(ptr);
    return NULL;
  }
  c->total += size;
  return realloc(ptr, size);
}

static void test_long_string_copied_once(void **state) {
  (void)state;
  enum { kLen = 4 << 20 };
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  const upb_MessageDef *m = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  char *json = malloc(kLen + 32);
  assert_non_null(json);
  int n = snprintf(json, 32, "{\"name\":\"");
  memset(json + n, 'x', kLen);
  memcpy(json + n + kLen, "\"}", 3);
  size_t len = (size_t)n + kLen + 2;
  Counting c = {{counting_func}, 0};
  upb_Arena *a = upb_Arena_Init(NULL, 0, &c.alloc);
  upb_Message *msg = po_Json_Decode(s, m, json, len, a, &st);
  assert_non_null(msg);
  assert_int_equal(upb_Message_Get(msg, upb_MessageDef_FindFieldByName(m, "name")).str_val.size, kLen);
  /* The input's copy (po_Json_Decode's, a 4 MB block) and the string's (an 8 MB block: the
   * arena doubles its blocks): 12.6 MB. upb's loop grew the string from 8 B by doubling, each
   * step a new copy (and blocks doubling behind them): 29.4 MB. */
  if (c.total > 4 * (size_t)kLen) fail_msg("the arena took %zu bytes for a %d-byte string", c.total, kLen);
  upb_Arena_Free(a);
  free(json);
}

/* A bytes field's base64 holding a byte of 0x80 or more (a non-ASCII character, raw or as a
 * \u escape): upb's table lookup indexed by the char widened to unsigned int read about 4 GB
 * away and crashed (proto/upb-patches/json-base64-index.patch). Junk like any other now. */
static void test_base64_non_ascii(void **state) {
  (void)state;
  static const char *const kJson[] = {
      "\"\\u00e9AAA\"", "\"AAA\xc3\xa9\"", "\"\xff\"", "\"\x80\x80\x80\x80\"", "\"AAAAAAA\xc3\xa9\"",
      "\"a\\u00e99Z\\u00e9Z9\\u00e9b\"",
  };
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  const upb_MessageDef *m = po_Schema_FindMessage(s, "google.protobuf.BytesValue");
  assert_non_null(m);
  for (size_t i = 0; i < sizeof kJson / sizeof kJson[0]; i++) {
    upb_Arena *a = upb_Arena_New();
    po_Status_Clear(&st);
    upb_Message *msg = po_Json_Decode(s, m, kJson[i], strlen(kJson[i]), a, &st);
    if (msg || !strstr(st.message, "Corrupt base64")) fail_msg("row %zu: got '%s'", i, msg ? "no error" : st.message);
    upb_Arena_Free(a);
  }
  /* and valid base64 still decodes */
  upb_Arena *a = upb_Arena_New();
  upb_Message *msg = po_Json_Decode(s, m, "\"aGk=\"", 6, a, &st);
  assert_non_null(msg);
  upb_StringView v = upb_Message_Get(msg, upb_MessageDef_FindFieldByName(m, "value")).str_val;
  assert_int_equal(v.size, 2);
  assert_memory_equal(v.data, "hi", 2);
  upb_Arena_Free(a);
}

/* json-any-type-url.patch: an Any's type_url with an empty host decodes and encodes back as
 * written (Envoy and protobuf-go resolve it by the name after the last '/'); one without any '/'
 * is still refused, and so is one naming a map field's entry (no registry holds those). */
static void test_any_type_url(void **state) {
  (void)state;
  static const char kJson[] =
      "{\"transport_socket\":{\"name\":\"raw\",\"typed_config\":"
      "{\"@type\":\"/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer\"}}}";
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  const upb_MessageDef *m = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  assert_non_null(m);
  upb_Arena *a = upb_Arena_New();
  upb_Message *msg = po_Json_Decode(s, m, kJson, strlen(kJson), a, &st);
  if (!msg) fail_msg("decode: %s", st.message);
  size_t len = 0;
  char *out = po_Json_Encode(s, m, msg, a, &len, &st);
  if (!out) fail_msg("encode: %s", st.message);
  assert_non_null(strstr(out, "\"@type\":\"/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer\""));
  static const char kNoSlash[] =
      "{\"transport_socket\":{\"typed_config\":{\"@type\":\"envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer\"}}}";
  po_Status_Clear(&st);
  assert_null(po_Json_Decode(s, m, kNoSlash, strlen(kNoSlash), a, &st));
  assert_non_null(strstr(st.message, "at least one '/'"));
  /* a map field's entry is in the pool, but no registry resolves it */
  static const char kEntry[] = "{\"transport_socket\":{\"typed_config\":{\"@type\":"
                               "\"type.googleapis.com/envoy.config.cluster.v3.Cluster.TypedExtensionProtocolOptionsEntry\"}}}";
  po_Status_Clear(&st);
  assert_null(po_Json_Decode(s, m, kEntry, strlen(kEntry), a, &st));
  assert_non_null(strstr(st.message, "Type was not found"));
  upb_Arena_Free(a);
}

/* Quoted integers as Go's protojson reads them (proto/upb-patches/json-quoted-int.patch): a JSON
 * number that is an integer, in any form; nothing else. Each checked against go-control-plane's
 * protojson through tests/oracles/envoy-validate when the patch was written. */
typedef struct {
  const char *type, *json;
  bool ok;
  int64_t want; /* as int64 (uint64 values here fit) */
} IntRow;

static const IntRow kIntRows[] = {
    {"google.protobuf.UInt64Value", "\"1e1\"", true, 10},
    {"google.protobuf.UInt64Value", "\"-0\"", true, 0},
    {"google.protobuf.UInt64Value", "\"0.0e-5\"", true, 0},
    {"google.protobuf.UInt64Value", "\"18446744073709551615000e-3\"", true, -1}, /* UINT64_MAX */
    {"google.protobuf.UInt64Value", "\"1.50E+1\"", true, 15},
    {"google.protobuf.UInt32Value", "\"100e-2\"", true, 1},
    {"google.protobuf.Int64Value", "\"-1.5e1\"", true, -15},
    {"google.protobuf.Int32Value", "\"7\"", true, 7},
    {"google.protobuf.UInt64Value", "\"-1\"", false, 0},
    {"google.protobuf.UInt64Value", "\"007\"", false, 0},
    {"google.protobuf.UInt64Value", "\"\"", false, 0},
    {"google.protobuf.UInt64Value", "\" 7\"", false, 0},
    {"google.protobuf.UInt64Value", "\"+1\"", false, 0},
    {"google.protobuf.Int32Value", "\"1.5\"", false, 0},
    {"google.protobuf.Int32Value", "\"15e-1\"", false, 0},
    {"google.protobuf.Int32Value", "\"1e\"", false, 0},
    {"google.protobuf.Int32Value", "\"-\"", false, 0},
    {"google.protobuf.UInt64Value", "\"1e21\"", false, 0},
    {"google.protobuf.UInt64Value", "\"1e99999999999\"", false, 0},
    {"google.protobuf.Int32Value", "\"1e10\"", false, 0}, /* out of int32's range */
};

static void test_quoted_integers(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  assert_non_null(s);
  int bad = 0;
  for (size_t i = 0; i < sizeof kIntRows / sizeof kIntRows[0]; i++) {
    const IntRow *r = &kIntRows[i];
    const upb_MessageDef *m = po_Schema_FindMessage(s, r->type);
    assert_non_null(m);
    const upb_FieldDef *f = upb_MessageDef_FindFieldByName(m, "value");
    upb_Arena *a = upb_Arena_New();
    po_Status_Clear(&st);
    upb_Message *msg = po_Json_Decode(s, m, r->json, strlen(r->json), a, &st);
    int64_t got = 0;
    if (msg) {
      upb_MessageValue v = upb_Message_Get(msg, f);
      switch (upb_FieldDef_CType(f)) {
        case kUpb_CType_Int32: got = v.int32_val; break;
        case kUpb_CType_UInt32: got = v.uint32_val; break;
        default: got = v.int64_val; break;
      }
    }
    if (!msg != !r->ok || got != r->want) {
      print_error("int row %zu (%s %s): %s %lld\n", i, r->type, r->json, msg ? "read" : st.message, (long long)got);
      bad++;
    }
    upb_Arena_Free(a);
  }
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows), cmocka_unit_test(test_long_string_copied_once),
                                     cmocka_unit_test(test_base64_non_ascii), cmocka_unit_test(test_any_type_url),
                                     cmocka_unit_test(test_quoted_integers)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
