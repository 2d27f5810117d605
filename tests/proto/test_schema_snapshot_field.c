/* po_Schema_SnapshotHasField (the cross-snapshot hint's question, answered from the embedded
 * pieces) against each snapshot loaded whole: for every field of every message of every snapshot,
 * asked of every snapshot (so fields only some have are asked where they are missing), and for
 * near-miss names (one character more or fewer, the JSON name, another case), the answer is
 * whether po_Schema_FindField finds it there, and whether po_Schema_FieldDeprecated says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "google/protobuf/descriptor.upb.h"
#include "po/schema.h"
#include "upb/reflection.h"

/* proto/src/schema_internal.h: snapshot i's embedded set, reassembled from the shared pieces. */
unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size);

enum { kMax = 8 };
static const po_Schema *g_whole[kMax];
static size_t g_count, g_asked, g_present, g_deprecated;

/* What snapshot j loaded whole says of field `name` on message `full`. */
static po_SnapshotField expected(size_t j, const char *full, const char *name) {
  const upb_MessageDef *m = po_Schema_FindMessage(g_whole[j], full);
  const upb_FieldDef *f = m ? po_Schema_FindField(g_whole[j], m, name, strlen(name)) : NULL;
  if (!f) return kPo_SnapshotField_Absent;
  return po_Schema_FieldDeprecated(f) ? kPo_SnapshotField_Deprecated : kPo_SnapshotField_Present;
}

static void check(const char *full, const char *name) {
  for (size_t j = 0; j < g_count; j++) {
    po_SnapshotField want = expected(j, full, name);
    po_SnapshotField got = po_Schema_SnapshotHasField(j, full, name, strlen(name));
    if (got != want) {
      fail_msg("%s: %s.%s: cheap answer %d, loaded schema %d", po_Schema_SnapshotVersion(j), full, name, (int)got,
               (int)want);
    }
    g_asked++;
    g_present += want != kPo_SnapshotField_Absent;
    g_deprecated += want == kPo_SnapshotField_Deprecated;
  }
}

static void check_message(const upb_MessageDef *m) {
  const char *full = upb_MessageDef_FullName(m);
  char near[512];
  for (int k = 0; k < upb_MessageDef_FieldCount(m); k++) {
    const upb_FieldDef *f = upb_MessageDef_Field(m, k);
    const char *name = upb_FieldDef_Name(f);
    size_t n = strlen(name);
    assert_true(n + 2 < sizeof near);
    check(full, name);
    check(full, upb_FieldDef_JsonName(f));
    snprintf(near, sizeof near, "%s_", name);
    check(full, near);
    snprintf(near, sizeof near, "%.*s", (int)(n - 1), name);
    check(full, near);
    snprintf(near, sizeof near, "%c%s", name[0] ^ 0x20, name + 1);
    check(full, near);
  }
  for (int k = 0; k < upb_MessageDef_NestedMessageCount(m); k++) check_message(upb_MessageDef_NestedMessage(m, k));
}

static void every_field_of_every_message(void **state) {
  (void)state;
  for (size_t i = 0; i < g_count; i++) {
    size_t size;
    unsigned char *set = po_Schema_SnapshotSet_(i, &size);
    upb_Arena *a = upb_Arena_New();
    assert_non_null(set);
    const google_protobuf_FileDescriptorSet *fs = google_protobuf_FileDescriptorSet_parse((const char *)set, size, a);
    assert_non_null(fs);
    size_t nfiles;
    const google_protobuf_FileDescriptorProto *const *files = google_protobuf_FileDescriptorSet_file(fs, &nfiles);
    for (size_t k = 0; k < nfiles; k++) {
      upb_StringView fname = google_protobuf_FileDescriptorProto_name(files[k]);
      char buf[512];
      snprintf(buf, sizeof buf, "%.*s", (int)fname.size, fname.data);
      const upb_FileDef *fd = upb_DefPool_FindFileByName(po_Schema_Pool(g_whole[i]), buf);
      assert_non_null(fd);
      for (int m = 0; m < upb_FileDef_TopLevelMessageCount(fd); m++) check_message(upb_FileDef_TopLevelMessage(fd, m));
    }
    upb_Arena_Free(a);
    free(set);
  }
  print_message("%zu questions, %zu fields present (%zu deprecated)\n", g_asked, g_present, g_deprecated);
  /* The walk found the fields, nested ones and deprecated ones included: not a vacuous pass. */
  assert_true(g_present > 10000 && g_deprecated > 100);
}

/* Names that are no message of the snapshot, an enum's name, a message of another package
 * prefix, the empty field name, a snapshot past the end: no such field, never a crash. */
static void not_messages(void **state) {
  (void)state;
  const char *cluster = "envoy.config.cluster.v3.Cluster";
  for (size_t j = 0; j < g_count; j++) {
    assert_int_equal(po_Schema_SnapshotHasField(j, cluster, "name", 4), kPo_SnapshotField_Present);
    assert_int_equal(po_Schema_SnapshotHasField(j, cluster, "name", 0), kPo_SnapshotField_Absent);
    assert_int_equal(po_Schema_SnapshotHasField(j, cluster, "namex", 4), kPo_SnapshotField_Present); /* len counts */
    assert_int_equal(po_Schema_SnapshotHasField(j, "envoy.config.cluster.v3.Cluster.DiscoveryType", "name", 4),
                     kPo_SnapshotField_Absent);
    assert_int_equal(po_Schema_SnapshotHasField(j, "envoy.config.cluster.v3.NoSuch", "name", 4), kPo_SnapshotField_Absent);
    assert_int_equal(po_Schema_SnapshotHasField(j, "envoy.config.cluster.v3", "name", 4), kPo_SnapshotField_Absent);
    assert_int_equal(po_Schema_SnapshotHasField(j, "", "name", 4), kPo_SnapshotField_Absent);
  }
  assert_int_equal(po_Schema_SnapshotHasField(g_count, cluster, "name", 4), kPo_SnapshotField_Absent);
  assert_int_equal(po_Schema_SnapshotHasField(0, NULL, "name", 4), kPo_SnapshotField_Absent);
}

static int setup(void **state) {
  (void)state;
  g_count = po_Schema_SnapshotCount();
  if (g_count > kMax) g_count = kMax;
  for (size_t i = 0; i < g_count; i++) {
    po_Status st;
    po_Status_Clear(&st);
    g_whole[i] = po_Schema_GetSnapshot(i, &st);
    if (!g_whole[i]) return -1;
  }
  return g_count > 1 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_field_of_every_message),
      cmocka_unit_test(not_messages),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
