/* A target write's echo, known by the version its answer carried (po_TargetIndex_IsOwnTargetEcho):
 * each state between the write and its echo. The write is noted before it is sent (its echo can
 * come first), its answer after; an event in between waits for the answer. Nothing here is timed:
 * the waits end on the answer, which each case gives, except in test_answer_never_came, whose
 * one wait runs out its bound (kOwnAnswerWaitMs, 3 s) whatever the machine's speed. */
#include <json-c/json.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "compiled.h"
#include "po/reconcile/reconcile.h"

static const char kKey[] = "ServiceDefaults/shop/web";

/* What the reconcile writes: the target as read, at the version it is written over. */
static json_object *written_over(const char *rv) {
  char text[256];
  snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\",\"uid\":\"u1\",\"resourceVersion\":\"%s\"}}", rv);
  return json_tokener_parse(text);
}

static void note_write(po_TargetIndex *ix, const char *over) {
  json_object *o = written_over(over);
  po_TargetIndex_NoteTargetWrite(ix, kKey, o);
  json_object_put(o);
}

static uint64_t echoes(po_TargetIndex *ix) { return po_TargetIndex_Stats(ix).own_writes_seen; }

/* The answer came first: its version's event is ours, once; the version written over (late) is
 * not and leaves the note; any other version is not, and spends it (events come in order). */
static void test_answer_then_echo(void **state) {
  (void)state;
  po_TargetIndex *ix = po_TargetIndex_New();
  note_write(ix, "10");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "11");
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "10")); /* written over, late */
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u2", "11")); /* another object at that version */
  note_write(ix, "10");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "11");
  assert_true(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11"));
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11")); /* once */
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, "ServiceDefaults/shop/other", "u1", "11"));
  /* someone writes between our write and its echo: ours conflicts (never answered ok); someone
   * writes after ours: our echo, then theirs, which is not ours */
  note_write(ix, "11");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "12");
  assert_true(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "12"));
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "13"));
  /* a lost echo (a relist brings a later version): the note is spent, so a later restore of our
   * version's content at yet another version is not ours either */
  note_write(ix, "13");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "14");
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "15"));
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "14"));
  assert_int_equal(echoes(ix), 2);
  po_TargetIndex_Free(ix);
}

/* A write that failed, or whose answer was lost or did not say its version: no echo is ours,
 * so the event is reconciled (at worst one reconcile more, never one less). */
static void test_no_answer_no_echo(void **state) {
  (void)state;
  po_TargetIndex *ix = po_TargetIndex_New();
  note_write(ix, "10");
  po_TargetIndex_NoteTargetWrite(ix, kKey, NULL); /* failed: timeout, conflict */
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11"));
  note_write(ix, "10");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "", ""); /* an answer without its version */
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11"));
  note_write(ix, "10");
  po_TargetIndex_NoteTargetWritten(ix, kKey, NULL, NULL);
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11"));
  assert_int_equal(echoes(ix), 0);
  po_TargetIndex_Free(ix);
}

typedef struct {
  po_TargetIndex *ix;
  const char *rv;
  bool own;
} Asker;

static void *ask(void *arg) {
  Asker *a = arg;
  a->own = po_TargetIndex_IsOwnTargetEcho(a->ix, kKey, "u1", a->rv);
  return NULL;
}

/* The echo before the answer: the event waits for the answer, then is judged by it. The version
 * written over, in flight, is judged at once (it cannot be our write) and keeps the note. */
static void test_echo_before_answer(void **state) {
  (void)state;
  po_TargetIndex *ix = po_TargetIndex_New();
  note_write(ix, "10");
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "10")); /* no wait: the version written over */
  Asker a = {ix, "11", false};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, ask, &a), 0);
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "11");
  pthread_join(t, NULL);
  assert_true(a.own);
  /* the answer lost while the event waits: not ours */
  note_write(ix, "11");
  Asker b = {ix, "12", true};
  assert_int_equal(pthread_create(&t, NULL, ask, &b), 0);
  po_TargetIndex_NoteTargetWrite(ix, kKey, NULL);
  pthread_join(t, NULL);
  assert_false(b.own);
  /* the answer names another version (someone's write came between): the event is not ours */
  note_write(ix, "12");
  Asker c = {ix, "13", true};
  assert_int_equal(pthread_create(&t, NULL, ask, &c), 0);
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "14");
  pthread_join(t, NULL);
  assert_false(c.own);
  assert_int_equal(echoes(ix), 1);
  po_TargetIndex_Free(ix);
}

static uint64_t waited_out(po_TargetIndex *ix) { return po_TargetIndex_Stats(ix).answers_waited_out; }

/* An answer that never comes within the bound (a PUT hung, or slower than 3 s): the event that
 * waited for it is reconciled, and so is every later one of that target, without waiting again.
 * The informer's thread asks twice for one event (its head, then its tree when the head was not
 * ours) and then for each later event of the target: a note left in flight made each ask wait
 * out the bound again, stalling every target of that kind 6 s an event until the PUT ended. */
static void test_answer_never_came(void **state) {
  (void)state;
  po_TargetIndex *ix = po_TargetIndex_New();
  note_write(ix, "10");
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11")); /* the head: waits the bound out */
  assert_int_equal(waited_out(ix), 1);
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11")); /* the same event's tree */
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "12")); /* a later event */
  assert_int_equal(waited_out(ix), 1);
  /* the answer, late: the note was spent by the wait, so no event is taken for ours on its word */
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "11");
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11"));
  assert_int_equal(echoes(ix), 0);
  /* the next write is noted and known as before */
  note_write(ix, "12");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "13");
  assert_true(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "13"));
  assert_int_equal(waited_out(ix), 1);
  po_TargetIndex_Free(ix);
}

static uint64_t behind(po_TargetIndex *ix) { return po_TargetIndex_Stats(ix).cache_behind; }

/* Between a write's answer and its echo the cache is behind the write (po_TargetIndex_CacheBehind):
 * a reconcile then judges nothing, and the echo it waits for is reconciled, not skipped as ours.
 * The cache at our version, another object (uid), no note, a write whose answer is lost or still
 * on its way: not behind. */
static void test_cache_behind(void **state) {
  (void)state;
  po_TargetIndex *ix = po_TargetIndex_New();
  assert_false(po_TargetIndex_CacheBehind(ix, kKey, "u1", "10")); /* nothing written */
  note_write(ix, "10");
  assert_false(po_TargetIndex_CacheBehind(ix, kKey, "u1", "10")); /* in flight: this reconcile's own write */
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "11");
  assert_false(po_TargetIndex_CacheBehind(ix, kKey, "u1", "11")); /* the cache holds it */
  assert_true(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "11")); /* not awaited: ours */
  note_write(ix, "11");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "12");
  assert_true(po_TargetIndex_CacheBehind(ix, kKey, "u1", "11"));  /* the version written over */
  assert_true(po_TargetIndex_CacheBehind(ix, kKey, "u1", "11"));  /* again, until the echo */
  assert_int_equal(behind(ix), 2);
  assert_false(po_TargetIndex_IsOwnTargetEcho(ix, kKey, "u1", "12")); /* awaited: reconciled */
  assert_false(po_TargetIndex_CacheBehind(ix, kKey, "u1", "12"));     /* spent */
  /* another uid: the object we wrote was deleted and this one created after it: ahead, and the
   * note is spent, so a later read of an old version is not taken as behind either */
  note_write(ix, "12");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "13");
  assert_false(po_TargetIndex_CacheBehind(ix, kKey, "u2", "20"));
  assert_false(po_TargetIndex_CacheBehind(ix, kKey, "u1", "12"));
  /* a lost answer: nothing to wait for */
  note_write(ix, "20");
  po_TargetIndex_NoteTargetWrite(ix, kKey, NULL);
  assert_false(po_TargetIndex_CacheBehind(ix, kKey, "u1", "20"));
  /* another target's note says nothing of this one */
  note_write(ix, "20");
  po_TargetIndex_NoteTargetWritten(ix, kKey, "u1", "21");
  assert_false(po_TargetIndex_CacheBehind(ix, "ServiceDefaults/shop/other", "u1", "20"));
  assert_int_equal(behind(ix), 2);
  assert_int_equal(echoes(ix), 1);
  po_TargetIndex_Free(ix);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_answer_then_echo),
      cmocka_unit_test(test_no_answer_no_echo),
      cmocka_unit_test(test_echo_before_answer),
      cmocka_unit_test(test_answer_never_came),
      cmocka_unit_test(test_cache_behind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
