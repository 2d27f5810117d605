/* Each embedded snapshot (trimmed and cut into pieces at build time, proto/tools/trim.c, then
 * stored with the other snapshots' pieces, each distinct piece once, proto/tools/index.c) against
 * the whole descriptor set extracted from go-control-plane (build/proto/envoy-<version>.pb, in the
 * folder the first argument names): every message and enum of every file is there, with the same
 * fields (name, number, type, label, json name, oneof, packedness, map entry, message or enum
 * type), the same deprecation flags and the same protoc-gen-validate rules, byte for byte; every
 * enum has the same values. Both load whole. And the deduplicated store gives back each
 * snapshot's trimmed set (envoy-<version>_trimmed.pb) byte for byte. */
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

/* proto/src/schema_internal.h: snapshot i's embedded set, reassembled from the shared pieces. */
unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size);

static const char *g_dir;
static po_Schema *full, *trimmed;
static size_t g_messages, g_fields, g_rules, g_enums;

/* The file build/proto/envoy-<version><suffix>.pb, from malloc. */
static unsigned char *read_set(size_t i, const char *suffix, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/envoy-%s%s.pb", g_dir, po_Schema_SnapshotVersion(i), suffix);
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  size_t cap = 1 << 20;
  unsigned char *buf = malloc(cap);
  *len = 0;
  for (size_t n; buf && (n = fread(buf + *len, 1, cap - *len, f)) > 0;) {
    *len += n;
    if (*len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  assert_non_null(buf);
  return buf;
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

/* Snapshot i: its embedded set against its whole extracted one. */
static void same_snapshot(size_t i) {
  size_t full_len, trimmed_len;
  unsigned char *whole = read_set(i, "", &full_len), *set_bytes = po_Schema_SnapshotSet_(i, &trimmed_len);
  assert_non_null(set_bytes);
  po_Status st;
  po_Status_Clear(&st);
  full = po_Schema_New(whole, full_len, &st);
  if (!full) fail_msg("%s: whole set: %s", po_Schema_SnapshotVersion(i), st.message);
  trimmed = po_Schema_New(set_bytes, trimmed_len, &st);
  if (!trimmed) fail_msg("%s: embedded set: %s", po_Schema_SnapshotVersion(i), st.message);
  g_messages = g_fields = g_rules = g_enums = 0;
  upb_Arena *a = upb_Arena_New();
  const google_protobuf_FileDescriptorSet *set = google_protobuf_FileDescriptorSet_parse((const char *)whole, full_len, a);
  assert_non_null(set);
  size_t n = 0;
  const google_protobuf_FileDescriptorProto *const *files = google_protobuf_FileDescriptorSet_file(set, &n);
  assert_true(n > 300);
  for (size_t j = 0; j < n; j++) {
    upb_StringView name = google_protobuf_FileDescriptorProto_name(files[j]);
    const upb_FileDef *f = upb_DefPool_FindFileByNameWithSize(po_Schema_Pool(full), name.data, name.size);
    assert_non_null(f);
    for (int k = 0; k < upb_FileDef_TopLevelMessageCount(f); k++) same_message(upb_FileDef_TopLevelMessage(f, k), a);
    for (int k = 0; k < upb_FileDef_TopLevelEnumCount(f); k++) same_enum(upb_FileDef_TopLevelEnum(f, k));
  }
  /* the Envoy set: over a thousand messages, and PGV rules on a good share of the fields */
  printf("%s: same %zu messages, %zu fields (%zu with rules), %zu enums\n", po_Schema_SnapshotVersion(i),
         g_messages, g_fields, g_rules / 2, g_enums);
  assert_true(g_messages > 1000 && g_fields > 3000 && g_enums > 100 && g_rules / 2 > 800);
  /* smaller than the whole set, though each piece repeats its package and imports */
  assert_true(trimmed_len < full_len);
  upb_Arena_Free(a);
  po_Schema_Free(full);
  po_Schema_Free(trimmed);
  full = trimmed = NULL;
  free(whole);
  free(set_bytes);
}

static void test_every_definition_the_same(void **state) {
  (void)state;
  assert_true(po_Schema_SnapshotCount() >= 3);
  for (size_t i = 0; i < po_Schema_SnapshotCount(); i++) same_snapshot(i);
}

/* Each snapshot's index over the shared pieces gives back exactly the set trim.c wrote for it,
 * and the process-wide schema of each (loaded whole) holds as many files. */
static void test_dedup_gives_back_each_set(void **state) {
  (void)state;
  for (size_t i = 0; i < po_Schema_SnapshotCount(); i++) {
    size_t want_len, got_len;
    unsigned char *want = read_set(i, "_trimmed", &want_len), *got = po_Schema_SnapshotSet_(i, &got_len);
    assert_non_null(got);
    if (got_len != want_len || memcmp(got, want, want_len) != 0)
      fail_msg("%s: the embedded pieces do not give back envoy-%s_trimmed.pb (%zu bytes, want %zu)",
               po_Schema_SnapshotVersion(i), po_Schema_SnapshotVersion(i), got_len, want_len);
    po_Status st;
    po_Status_Clear(&st);
    const po_Schema *s = po_Schema_GetSnapshot(i, &st);
    if (!s) fail_msg("%s: %s", po_Schema_SnapshotVersion(i), st.message);
    upb_Arena *a = upb_Arena_New();
    size_t n = 0;
    google_protobuf_FileDescriptorSet_file(google_protobuf_FileDescriptorSet_parse((const char *)want, want_len, a), &n);
    assert_int_equal(po_Schema_FileCount(s), n);
    upb_Arena_Free(a);
    free(want);
    free(got);
  }
}

int main(int argc, char **argv) {
  g_dir = argc > 1 ? argv[1] : "build/proto";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_definition_the_same),
      cmocka_unit_test(test_dedup_gives_back_each_set),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
