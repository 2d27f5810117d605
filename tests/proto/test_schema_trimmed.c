/* The embedded schema (trimmed and cut into pieces at build time, proto/tools/trim.c) against
 * the full descriptor set protoc wrote (the first argument, build/proto/envoy.pb): every message
 * and enum of every file is there, with the same fields (name, number, type, label, json name,
 * oneof, packedness, map entry, message or enum type), the same deprecation flags and the same
 * protoc-gen-validate rules, byte for byte; every enum has the same values. Both load whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "google/protobuf/descriptor.upb.h"
#include "po/schema.h"
#include "upb/encode.h"
#include "upb/reflection.h"

extern const unsigned char po_envoy_descriptor_set[];
extern const size_t po_envoy_descriptor_set_size;

static const char *g_full_path;
static unsigned char *g_full;
static size_t g_full_len;
static po_Schema *full, *trimmed;
static size_t g_messages, g_fields, g_rules, g_enums;

static int setup(void **state) {
  (void)state;
  FILE *f = fopen(g_full_path, "rb");
  if (!f) return fprintf(stderr, "cannot open %s\n", g_full_path), -1;
  size_t cap = 1 << 20;
  g_full = malloc(cap);
  for (size_t n; g_full && (n = fread(g_full + g_full_len, 1, cap - g_full_len, f)) > 0;) {
    g_full_len += n;
    if (g_full_len == cap) g_full = realloc(g_full, cap *= 2);
  }
  fclose(f);
  po_Status st;
  po_Status_Clear(&st);
  full = g_full ? po_Schema_New(g_full, g_full_len, &st) : NULL;
  trimmed = po_Schema_New(po_envoy_descriptor_set, po_envoy_descriptor_set_size, &st);
  if (!full || !trimmed) fprintf(stderr, "load: %s\n", st.message);
  return full && trimmed ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  po_Schema_Free(full);
  po_Schema_Free(trimmed);
  free(g_full);
  return 0;
}

static const char *sub_name(const upb_FieldDef *f) {
  if (upb_FieldDef_CType(f) == kUpb_CType_Message) return upb_MessageDef_FullName(upb_FieldDef_MessageSubDef(f));
  if (upb_FieldDef_CType(f) == kUpb_CType_Enum) return upb_EnumDef_FullName(upb_FieldDef_EnumSubDef(f));
  return "";
}

/* The field's PGV rules as bytes ("" when none), from the schema's own decoding. */
static char *rules_bytes(const po_Schema *s, const upb_FieldDef *f, upb_Arena *a, size_t *len) {
  const upb_MessageDef *rd = NULL;
  const upb_Message *r = po_Schema_FieldRules(s, f, a, &rd);
  *len = 0;
  if (!r) return "";
  char *out = NULL;
  assert_int_equal(upb_Encode(r, upb_MessageDef_MiniTable(rd), kUpb_EncodeOption_Deterministic, a, &out, len),
                   kUpb_EncodeStatus_Ok);
  g_rules++;
  return out;
}

static void same_enum(const upb_EnumDef *e) {
  const upb_EnumDef *t = upb_DefPool_FindEnumByName(po_Schema_Pool(trimmed), upb_EnumDef_FullName(e));
  if (!t) fail_msg("enum %s missing", upb_EnumDef_FullName(e));
  assert_int_equal(upb_EnumDef_ValueCount(t), upb_EnumDef_ValueCount(e));
  for (int i = 0; i < upb_EnumDef_ValueCount(e); i++) {
    assert_string_equal(upb_EnumValueDef_Name(upb_EnumDef_Value(t, i)), upb_EnumValueDef_Name(upb_EnumDef_Value(e, i)));
    assert_int_equal(upb_EnumValueDef_Number(upb_EnumDef_Value(t, i)), upb_EnumValueDef_Number(upb_EnumDef_Value(e, i)));
  }
  g_enums++;
}

static void same_message(const upb_MessageDef *m, upb_Arena *a) {
  const char *name = upb_MessageDef_FullName(m);
  const upb_MessageDef *t = upb_DefPool_FindMessageByName(po_Schema_Pool(trimmed), name);
  if (!t) fail_msg("message %s missing", name);
  assert_int_equal(upb_MessageDef_FieldCount(t), upb_MessageDef_FieldCount(m));
  assert_int_equal(upb_MessageDef_IsMapEntry(t), upb_MessageDef_IsMapEntry(m));
  assert_int_equal(upb_MessageDef_OneofCount(t), upb_MessageDef_OneofCount(m));
  for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
    const upb_FieldDef *x = upb_MessageDef_Field(m, i), *y = upb_MessageDef_Field(t, i);
    assert_string_equal(upb_FieldDef_Name(y), upb_FieldDef_Name(x));
    assert_int_equal(upb_FieldDef_Number(y), upb_FieldDef_Number(x));
    assert_int_equal(upb_FieldDef_Type(y), upb_FieldDef_Type(x));
    assert_int_equal(upb_FieldDef_Label(y), upb_FieldDef_Label(x));
    assert_int_equal(upb_FieldDef_IsPacked(y), upb_FieldDef_IsPacked(x));
    assert_int_equal(upb_FieldDef_HasPresence(y), upb_FieldDef_HasPresence(x));
    assert_string_equal(upb_FieldDef_JsonName(y), upb_FieldDef_JsonName(x));
    assert_string_equal(sub_name(y), sub_name(x));
    const upb_OneofDef *ox = upb_FieldDef_ContainingOneof(x), *oy = upb_FieldDef_ContainingOneof(y);
    assert_string_equal(oy ? upb_OneofDef_Name(oy) : "", ox ? upb_OneofDef_Name(ox) : "");
    if (po_Schema_FieldDeprecated(y) != po_Schema_FieldDeprecated(x)) fail_msg("%s.%s: deprecated differs", name, upb_FieldDef_Name(x));
    size_t lx, ly;
    char *rx = rules_bytes(full, x, a, &lx), *ry = rules_bytes(trimmed, y, a, &ly);
    if (lx != ly || memcmp(rx, ry, lx) != 0) fail_msg("%s.%s: rules differ", name, upb_FieldDef_Name(x));
    g_fields++;
  }
  for (int i = 0; i < upb_MessageDef_NestedMessageCount(m); i++) same_message(upb_MessageDef_NestedMessage(m, i), a);
  for (int i = 0; i < upb_MessageDef_NestedEnumCount(m); i++) same_enum(upb_MessageDef_NestedEnum(m, i));
  g_messages++;
}

static void test_every_definition_the_same(void **state) {
  (void)state;
  upb_Arena *a = upb_Arena_New();
  const google_protobuf_FileDescriptorSet *set = google_protobuf_FileDescriptorSet_parse((const char *)g_full, g_full_len, a);
  assert_non_null(set);
  size_t n = 0;
  const google_protobuf_FileDescriptorProto *const *files = google_protobuf_FileDescriptorSet_file(set, &n);
  assert_true(n > 300);
  for (size_t i = 0; i < n; i++) {
    upb_StringView name = google_protobuf_FileDescriptorProto_name(files[i]);
    const upb_FileDef *f = upb_DefPool_FindFileByNameWithSize(po_Schema_Pool(full), name.data, name.size);
    assert_non_null(f);
    for (int k = 0; k < upb_FileDef_TopLevelMessageCount(f); k++) same_message(upb_FileDef_TopLevelMessage(f, k), a);
    for (int k = 0; k < upb_FileDef_TopLevelEnumCount(f); k++) same_enum(upb_FileDef_TopLevelEnum(f, k));
  }
  /* the Envoy set: over a thousand messages, and PGV rules on a good share of the fields */
  printf("same: %zu messages, %zu fields (%zu with rules), %zu enums\n", g_messages, g_fields, g_rules / 2, g_enums);
  assert_true(g_messages > 1000 && g_fields > 3000 && g_enums > 100 && g_rules / 2 > 800);
  /* smaller than what protoc wrote, though each piece repeats its package and imports */
  assert_true(po_envoy_descriptor_set_size < g_full_len);
  upb_Arena_Free(a);
}

int main(int argc, char **argv) {
  g_full_path = argc > 1 ? argv[1] : "build/proto/envoy.pb";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_definition_the_same),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
