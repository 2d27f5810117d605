/* The rule cache (proto/src/rules.c): each field's protoc-gen-validate rules and each oneof's
 * (validate.required) are decoded once per schema and kept. From four threads at once on a fresh
 * schema (the cache is read without a lock and filled under one), every field and oneof of the
 * embedded set gets one answer: the same message for a field whatever thread asked first, the
 * same flag for a oneof, and the snapshot's counts: 906 fields with rules, 124 required oneofs. */
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

enum { kThreads = 4, kMaxMessages = 1 << 14 };

static const upb_MessageDef *g_msgs[kMaxMessages];
static size_t g_n;

static void add(const upb_MessageDef *m) {
  assert_true(g_n < kMaxMessages);
  g_msgs[g_n++] = m;
  for (int i = 0; i < upb_MessageDef_NestedMessageCount(m); i++) add(upb_MessageDef_NestedMessage(m, i));
}

/* Every message of the files the set lists (each file's own, nested ones included). */
static void every_message(const po_Schema *s, const unsigned char *bytes, size_t len) {
  upb_Arena *a = upb_Arena_New();
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
    for (int k = 0; k < upb_FileDef_TopLevelMessageCount(f); k++) add(upb_FileDef_TopLevelMessage(f, k));
  }
  upb_Arena_Free(a);
}

typedef struct {
  const po_Schema *s;
  const upb_Message **rules; /* per field, in walk order */
  bool *required;            /* per oneof */
  size_t fields, oneofs;
} Job;

static void *race(void *arg) {
  Job *j = arg;
  upb_Arena *a = upb_Arena_New();
  size_t nf = 0, no = 0;
  for (size_t k = 0; k < g_n; k++) {
    const upb_MessageDef *m = g_msgs[k];
    for (int i = 0; i < upb_MessageDef_FieldCount(m); i++, nf++) {
      const upb_MessageDef *rd = NULL;
      j->rules[nf] = po_Schema_FieldRules(j->s, upb_MessageDef_Field(m, i), a, &rd);
    }
    for (int i = 0; i < upb_MessageDef_OneofCount(m); i++, no++) {
      j->required[no] = po_Schema_OneofRequired(j->s, upb_MessageDef_Oneof(m, i), a);
    }
  }
  j->fields = nf, j->oneofs = no;
  upb_Arena_Free(a);
  return NULL;
}

/* Per snapshot: the fields with PGV rules and the oneofs with (validate.required), as another
 * reader counts them in the whole extracted sets (tests/proto/count_pgv.py over
 * build/proto/envoy-<version>.pb: FieldOptions / OneofOptions carrying extension 1071; it gives
 * the old grpc-js-xds set's 906 and 124 too), not as this code does. */
static const struct {
  const char *version;
  size_t with_rules, required;
} kCounts[] = {
    {"v1.32.4", 944, 125},
    {"v1.37.0", 1054, 126},
    {"v1.40.0", 1230, 126},
};

static void threads_fill_the_cache_at_once(size_t snap) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  unsigned char *bytes = po_Schema_SnapshotSet_(snap, &len);
  assert_non_null(bytes);
  po_Schema *s = po_Schema_New(bytes, len, &st);
  assert_non_null(s);
  g_n = 0;
  every_message(s, bytes, len);
  free(bytes);
  size_t fields = 0, oneofs = 0;
  for (size_t k = 0; k < g_n; k++) {
    fields += (size_t)upb_MessageDef_FieldCount(g_msgs[k]);
    oneofs += (size_t)upb_MessageDef_OneofCount(g_msgs[k]);
  }
  pthread_t t[kThreads];
  Job jobs[kThreads];
  for (int i = 0; i < kThreads; i++) {
    /* all in the same order: they race on the same fields */
    jobs[i] = (Job){.s = s, .rules = calloc(fields, sizeof(void *)), .required = calloc(oneofs, 1)};
    assert_int_equal(pthread_create(&t[i], NULL, race, &jobs[i]), 0);
  }
  for (int i = 0; i < kThreads; i++) pthread_join(t[i], NULL);
  size_t with_rules = 0, required = 0;
  for (size_t f = 0; f < fields; f++) {
    with_rules += jobs[0].rules[f] != NULL;
    for (int i = 1; i < kThreads; i++) assert_ptr_equal(jobs[i].rules[f], jobs[0].rules[f]);
  }
  for (size_t o = 0; o < oneofs; o++) {
    required += jobs[0].required[o];
    for (int i = 1; i < kThreads; i++) assert_int_equal(jobs[i].required[o], jobs[0].required[o]);
  }
  const char *v = po_Schema_SnapshotVersion(snap);
  size_t k = 0;
  while (k < sizeof kCounts / sizeof *kCounts && strcmp(kCounts[k].version, v) != 0) k++;
  if (k == sizeof kCounts / sizeof *kCounts) fail_msg("%s: no expected counts in kCounts", v);
  print_message("%s: %zu fields with rules, %zu required oneofs\n", v, with_rules, required);
  assert_int_equal(with_rules, kCounts[k].with_rules);
  assert_int_equal(required, kCounts[k].required);
  for (int i = 0; i < kThreads; i++) free(jobs[i].rules), free(jobs[i].required);
  po_Schema_Free(s); /* frees the cache: valgrind and ASan see no leak */
}

static void test_threads_fill_the_cache_at_once(void **state) {
  (void)state;
  assert_true(po_Schema_SnapshotCount() >= 3);
  for (size_t i = 0; i < po_Schema_SnapshotCount(); i++) threads_fill_the_cache_at_once(i);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads_fill_the_cache_at_once)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
