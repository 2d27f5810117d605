/* po_Schema_FindField and po_Schema_FindEnumValue (proto/src/names.c) answer exactly what upb's
 * own lookups answer: for every field and enum value of every message and enum reachable from
 * the four resource types, and for near misses (a byte more or less, another case, oneof and
 * JSON names, names inside a longer buffer), from one thread and from several at once on a
 * fresh schema (the tables are built lazily without a lock); for every embedded snapshot. */
#include <pthread.h>
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

/* proto/src/schema_internal.h: snapshot i's embedded set, reassembled from the shared pieces. */
unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size);

/* ---- the reachable messages and enums ---- */

typedef struct {
  const void **v;
  size_t n, cap;
} Set;

static bool set_add(Set *s, const void *p) {
  for (size_t i = 0; i < s->n; i++) {
    if (s->v[i] == p) return false;
  }
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 256;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    assert_non_null(s->v);
  }
  s->v[s->n++] = p;
  return true;
}

static Set files;
static void walk(const upb_MessageDef *m, Set *msgs, Set *enums);

/* Every message and enum of a file and of the files it imports. */
static void walk_file(const upb_FileDef *f, Set *msgs, Set *enums) {
  if (!set_add(&files, f)) return;
  for (int i = 0; i < upb_FileDef_TopLevelMessageCount(f); i++) walk(upb_FileDef_TopLevelMessage(f, i), msgs, enums);
  for (int i = 0; i < upb_FileDef_TopLevelEnumCount(f); i++) set_add(enums, upb_FileDef_TopLevelEnum(f, i));
  for (int i = 0; i < upb_FileDef_DependencyCount(f); i++) walk_file(upb_FileDef_Dependency(f, i), msgs, enums);
}

static void walk(const upb_MessageDef *m, Set *msgs, Set *enums) {
  if (!set_add(msgs, m)) return;
  walk_file(upb_MessageDef_File(m), msgs, enums);
  for (int i = 0; i < upb_MessageDef_NestedMessageCount(m); i++) walk(upb_MessageDef_NestedMessage(m, i), msgs, enums);
  for (int i = 0; i < upb_MessageDef_NestedEnumCount(m); i++) set_add(enums, upb_MessageDef_NestedEnum(m, i));
  for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(m, i);
    if (upb_FieldDef_IsSubMessage(f)) walk(upb_FieldDef_MessageSubDef(f), msgs, enums);
    else if (upb_FieldDef_CType(f) == kUpb_CType_Enum) set_add(enums, upb_FieldDef_EnumSubDef(f));
  }
}

/* Every file of snapshot `snap`'s embedded set (the schema is loaded whole). */
static void reachable(size_t snap, const po_Schema *s, Set *msgs, Set *enums) {
  files.n = 0;
  upb_Arena *a = upb_Arena_New();
  size_t len = 0;
  unsigned char *bytes = po_Schema_SnapshotSet_(snap, &len);
  assert_non_null(bytes);
  const google_protobuf_FileDescriptorSet *set = google_protobuf_FileDescriptorSet_parse((const char *)bytes, len, a);
  assert_non_null(set);
  size_t n = 0;
  const google_protobuf_FileDescriptorProto *const *fs = google_protobuf_FileDescriptorSet_file(set, &n);
  for (size_t i = 0; i < n; i++) {
    upb_StringView name = google_protobuf_FileDescriptorProto_name(fs[i]);
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%.*s", (int)name.size, name.data);
    const upb_FileDef *f = upb_DefPool_FindFileByName(po_Schema_Pool(s), tmp);
    assert_non_null(f);
    walk_file(f, msgs, enums);
  }
  upb_Arena_Free(a);
  free(bytes);
}

static void free_files(void) { free(files.v); }

/* ---- one name and its near misses, both ways ---- */

static char buf[512];

/* `name` copied into the middle of a buffer with more letters after it, so a lookup that read
 * past `len` would see them. */
static void probe_field(const po_Schema *s, const upb_MessageDef *m, const char *name, size_t len) {
  if (len + 8 > sizeof buf) return;
  memcpy(buf, name, len);
  memcpy(buf + len, "_zzzzzzz", 8);
  const upb_FieldDef *want = upb_MessageDef_FindFieldByNameWithSize(m, buf, len);
  const upb_FieldDef *got = po_Schema_FindField(s, m, buf, len);
  const po_FieldInfo *info = po_Schema_FindFieldInfo(s, m, buf, len);
  if ((info ? info->def : NULL) != want) {
    fail_msg("%s: field info '%.*s': upb %p, ours %p", upb_MessageDef_FullName(m), (int)len, name, (void *)want,
             (void *)(info ? info->def : NULL));
  }
  if (want != got) {
    fail_msg("%s: field '%.*s': upb %p, ours %p", upb_MessageDef_FullName(m), (int)len, name, (void *)want,
             (void *)got);
  }
}

static void probe_value(const po_Schema *s, const upb_EnumDef *e, const char *name, size_t len) {
  if (len + 8 > sizeof buf) return;
  memcpy(buf, name, len);
  memcpy(buf + len, "_ZZZZZZZ", 8);
  const upb_EnumValueDef *want = upb_EnumDef_FindValueByNameWithSize(e, buf, len);
  const upb_EnumValueDef *got = po_Schema_FindEnumValue(s, e, buf, len);
  if (want != got) {
    fail_msg("%s: value '%.*s': upb %p, ours %p", upb_EnumDef_FullName(e), (int)len, name, (void *)want,
             (void *)got);
  }
}

typedef void (*Probe)(const po_Schema *, const void *, const char *, size_t);

static void near_misses(const po_Schema *s, const void *owner, const char *name, Probe probe) {
  size_t n = strlen(name);
  char tmp[256];
  if (n + 2 > sizeof tmp) return;
  probe(s, owner, name, n);
  if (n) probe(s, owner, name, n - 1);             /* one byte short */
  if (n) probe(s, owner, name + 1, n - 1);         /* the first byte missing */
  memcpy(tmp, name, n);
  tmp[n] = 'x';
  probe(s, owner, tmp, n + 1);                     /* one byte more */
  for (size_t i = 0; i < n; i += 3) {              /* one byte changed, at several places */
    memcpy(tmp, name, n);
    tmp[i] ^= 0x20;
    probe(s, owner, tmp, n);
  }
}

static void field_probe(const po_Schema *s, const void *m, const char *name, size_t len) {
  probe_field(s, m, name, len);
}
static void value_probe(const po_Schema *s, const void *e, const char *name, size_t len) {
  probe_value(s, e, name, len);
}

/* What compile and apply read from a po_FieldInfo instead of asking upb: the same answers. */
static void check_info(const po_FieldInfo *fi, const upb_FieldDef *f) {
  assert_non_null(fi);
  assert_ptr_equal(fi->def, f);
  assert_ptr_equal(fi->layout, upb_FieldDef_MiniTable(f));
  assert_int_equal(fi->ctype, upb_FieldDef_CType(f));
  assert_int_equal(fi->repeated, upb_FieldDef_IsRepeated(f));
  assert_int_equal(fi->map, upb_FieldDef_IsMap(f));
  assert_int_equal(fi->submessage, upb_FieldDef_IsSubMessage(f));
  const upb_MessageDef *sub = upb_FieldDef_IsSubMessage(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
  assert_ptr_equal(fi->message, sub);
  assert_ptr_equal(fi->message_layout, sub ? upb_MessageDef_MiniTable(sub) : NULL);
  assert_int_equal(fi->wkt, sub ? upb_MessageDef_WellKnownType(sub) : kUpb_WellKnown_Unspecified);
  assert_ptr_equal(fi->enum_def, upb_FieldDef_CType(f) == kUpb_CType_Enum ? upb_FieldDef_EnumSubDef(f) : NULL);
  bool wrapper = sub && upb_MessageDef_WellKnownType(sub) >= kUpb_WellKnown_DoubleValue &&
                 upb_MessageDef_WellKnownType(sub) <= kUpb_WellKnown_BoolValue;
  const upb_FieldDef *value = wrapper ? upb_MessageDef_FindFieldByName(sub, "value") : NULL;
  assert_ptr_equal(fi->wrapper_value, value);
  if (value) {
    assert_ptr_equal(fi->wrapper_value_layout, upb_FieldDef_MiniTable(value));
    assert_int_equal(fi->wrapper_value_ctype, upb_FieldDef_CType(value));
  }
}

static void check_all(const po_Schema *s, const Set *msgs, const Set *enums) {
  for (size_t i = 0; i < msgs->n; i++) {
    const upb_MessageDef *m = msgs->v[i];
    for (int j = 0; j < upb_MessageDef_FieldCount(m); j++) {
      const upb_FieldDef *f = upb_MessageDef_Field(m, j);
      assert_ptr_equal(po_Schema_FindField(s, m, upb_FieldDef_Name(f), strlen(upb_FieldDef_Name(f))), f);
      check_info(po_Schema_FindFieldInfo(s, m, upb_FieldDef_Name(f), strlen(upb_FieldDef_Name(f))), f);
      near_misses(s, m, upb_FieldDef_Name(f), field_probe);
      near_misses(s, m, upb_FieldDef_JsonName(f), field_probe); /* not a proto name: NULL unless equal */
    }
    for (int j = 0; j < upb_MessageDef_OneofCount(m); j++) {
      near_misses(s, m, upb_OneofDef_Name(upb_MessageDef_Oneof(m, j)), field_probe); /* never a field */
    }
    probe_field(s, m, "", 0);
  }
  for (size_t i = 0; i < enums->n; i++) {
    const upb_EnumDef *e = enums->v[i];
    for (int j = 0; j < upb_EnumDef_ValueCount(e); j++) {
      const upb_EnumValueDef *v = upb_EnumDef_Value(e, j);
      assert_ptr_equal(po_Schema_FindEnumValue(s, e, upb_EnumValueDef_Name(v), strlen(upb_EnumValueDef_Name(v))), v);
      near_misses(s, e, upb_EnumValueDef_Name(v), value_probe);
    }
    probe_value(s, e, "", 0);
  }
}

static void every_name_as_upb(size_t snap) {
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_GetSnapshot(snap, &st);
  assert_non_null(s);
  Set msgs = {0}, enums = {0};
  reachable(snap, s, &msgs, &enums);
  print_message("%s: %zu messages, %zu enums, %zu files\n", po_Schema_SnapshotVersion(snap), msgs.n, enums.n, files.n);
  assert_true(msgs.n > 500);
  assert_true(enums.n > 50);
  check_all(s, &msgs, &enums); /* builds every table */
  check_all(s, &msgs, &enums); /* and now reads them */
  /* The cases the engine's errors quote. */
  const upb_MessageDef *cluster = po_Schema_ResourceMessage(s, "cluster");
  assert_non_null(po_Schema_FindField(s, cluster, "lb_policy", 9));
  assert_null(po_Schema_FindField(s, cluster, "lbPolicy", 8));
  assert_null(po_Schema_FindField(s, cluster, "cluster_discovery_type", 22)); /* a oneof */
  assert_null(po_Schema_FindField(NULL, cluster, "lbPolicy", 8));             /* no schema: upb's */
  assert_non_null(po_Schema_FindField(NULL, cluster, "lb_policy", 9));
  free(msgs.v);
  free(enums.v);
}

static void test_every_name_as_upb(void **state) {
  (void)state;
  assert_true(po_Schema_SnapshotCount() >= 3);
  for (size_t i = 0; i < po_Schema_SnapshotCount(); i++) every_name_as_upb(i);
}

/* Several threads build and read the tables of a fresh schema at once. */
typedef struct {
  const po_Schema *s;
  const Set *msgs, *enums;
  size_t start;
  size_t bad;
} Job;

static void *race(void *arg) {
  Job *j = arg;
  for (size_t k = 0; k < j->msgs->n; k++) {
    const upb_MessageDef *m = j->msgs->v[(k + j->start) % j->msgs->n];
    for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
      const upb_FieldDef *f = upb_MessageDef_Field(m, i);
      if (po_Schema_FindField(j->s, m, upb_FieldDef_Name(f), strlen(upb_FieldDef_Name(f))) != f) j->bad++;
    }
  }
  for (size_t k = 0; k < j->enums->n; k++) {
    const upb_EnumDef *e = j->enums->v[(k + j->start) % j->enums->n];
    for (int i = 0; i < upb_EnumDef_ValueCount(e); i++) {
      const upb_EnumValueDef *v = upb_EnumDef_Value(e, i);
      if (po_Schema_FindEnumValue(j->s, e, upb_EnumValueDef_Name(v), strlen(upb_EnumValueDef_Name(v))) != v) j->bad++;
    }
  }
  return NULL;
}

static void threads_build_tables_at_once(size_t snap) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  unsigned char *bytes = po_Schema_SnapshotSet_(snap, &len);
  assert_non_null(bytes);
  po_Schema *s = po_Schema_New(bytes, len, &st);
  free(bytes);
  assert_non_null(s);
  Set msgs = {0}, enums = {0};
  reachable(snap, s, &msgs, &enums);
  enum { kThreads = 4 };
  pthread_t t[kThreads];
  Job jobs[kThreads];
  for (int i = 0; i < kThreads; i++) {
    /* Two start at the same place, so some tables are built by two threads at the same time. */
    jobs[i] = (Job){.s = s, .msgs = &msgs, .enums = &enums, .start = (size_t)(i / 2) * msgs.n / 2};
    assert_int_equal(pthread_create(&t[i], NULL, race, &jobs[i]), 0);
  }
  for (int i = 0; i < kThreads; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(jobs[i].bad, 0);
  }
  po_Schema_Free(s); /* frees every table: valgrind and ASan see no leak */
  free(msgs.v);
  free(enums.v);
}

static void test_threads_build_tables_at_once(void **state) {
  (void)state;
  for (size_t i = 0; i < po_Schema_SnapshotCount(); i++) threads_build_tables_at_once(i);
}

int main(void) {
  atexit(free_files);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_name_as_upb),
      cmocka_unit_test(test_threads_build_tables_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
