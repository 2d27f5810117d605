/* po_Schema_Cache: a user's cache kept in a schema (the engine's compiled patterns) is made once
 * a schema and kind, by one thread when several ask at once (the others' copies freed), never
 * shared between two schemas, remade after a failed make, and freed with its schema; a kind past
 * kPo_SchemaCacheKinds gets none. What lets a cache belong to its schema, not to the process. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <cmocka.h>

#include "po/schema.h"
/* proto/src/schema_internal.h: snapshot i's whole set, from malloc */
unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size);

static atomic_int g_made, g_freed, g_fail_next;

static void *make(void) {
  if (atomic_exchange(&g_fail_next, 0)) return NULL;
  atomic_fetch_add(&g_made, 1);
  return malloc(16);
}
static void drop(void *c) {
  atomic_fetch_add(&g_freed, 1);
  free(c);
}
static const po_SchemaCacheKind kA = {make, drop}, kB = {make, drop}, kC = {make, drop}, kD = {make, drop},
                                kE = {make, drop};

static po_Schema *new_schema(void) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  unsigned char *bytes = po_Schema_SnapshotSet_(0, &len);
  assert_non_null(bytes);
  po_Schema *s = po_Schema_New(bytes, len, &st);
  free(bytes);
  assert_non_null(s);
  return s;
}

static void test_once_per_schema_and_kind(void **state) {
  (void)state;
  atomic_store(&g_made, 0), atomic_store(&g_freed, 0);
  po_Schema *s = new_schema(), *t = new_schema();
  void *a = po_Schema_Cache(s, &kA);
  assert_non_null(a);
  assert_ptr_equal(po_Schema_Cache(s, &kA), a);
  void *b = po_Schema_Cache(t, &kA);
  assert_non_null(b);
  assert_ptr_not_equal(a, b); /* each schema its own */
  assert_int_equal(atomic_load(&g_made), 2);
  /* a failed make is no cache: the next call makes one */
  atomic_store(&g_fail_next, 1);
  assert_null(po_Schema_Cache(s, &kB));
  assert_non_null(po_Schema_Cache(s, &kB));
  assert_non_null(po_Schema_Cache(s, &kC));
  assert_non_null(po_Schema_Cache(s, &kD));
  assert_null(po_Schema_Cache(s, &kE)); /* past kPo_SchemaCacheKinds */
  assert_ptr_equal(po_Schema_Cache(s, &kA), a);
  int made = atomic_load(&g_made);
  po_Schema_Free(s);
  assert_int_equal(atomic_load(&g_freed), made - 1); /* all of s's, freed with it; t's stays */
  po_Schema_Free(t);
  assert_int_equal(atomic_load(&g_freed), made);
  assert_null(po_Schema_Cache(NULL, &kA));
}

typedef struct {
  po_Schema *s;
  void *got;
} Job;
static pthread_barrier_t g_go;
static void *race(void *arg) {
  Job *j = arg;
  pthread_barrier_wait(&g_go);
  j->got = po_Schema_Cache(j->s, &kA);
  return NULL;
}

static void test_threads_share_one(void **state) {
  (void)state;
  atomic_store(&g_made, 0), atomic_store(&g_freed, 0);
  po_Schema *s = new_schema();
  enum { kThreads = 8 };
  pthread_t t[kThreads];
  Job jobs[kThreads];
  pthread_barrier_init(&g_go, NULL, kThreads);
  for (int i = 0; i < kThreads; i++) {
    jobs[i] = (Job){.s = s};
    assert_int_equal(pthread_create(&t[i], NULL, race, &jobs[i]), 0);
  }
  for (int i = 0; i < kThreads; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&g_go);
  for (int i = 0; i < kThreads; i++) assert_ptr_equal(jobs[i].got, jobs[0].got);
  assert_non_null(jobs[0].got);
  /* the racers' losing copies are freed at once: one left, freed with the schema */
  assert_int_equal(atomic_load(&g_made) - atomic_load(&g_freed), 1);
  po_Schema_Free(s);
  assert_int_equal(atomic_load(&g_made), atomic_load(&g_freed));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_once_per_schema_and_kind),
      cmocka_unit_test(test_threads_share_one),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
