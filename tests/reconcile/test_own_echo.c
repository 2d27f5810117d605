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
#include "json_hash.h"
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

/* ---- a PropertyOverride's finalizer write, known by its answer's version ---- */

static void note_finalizer(po_TargetIndex *ix, const char *uid, int64_t generation) {
  po_OverrideMemo m = {.generation = generation};
  snprintf(m.uid, sizeof m.uid, "%s", uid);
  po_TargetIndex_NoteOverrideWrite(ix, "shop", "po-1", &m, 0, NULL, 0, false);
}
static void answer(po_TargetIndex *ix, const char *uid, const char *rv, int64_t generation) {
  po_WrittenVersion w = {.generation = generation, .finalized = true};
  snprintf(w.uid, sizeof w.uid, "%s", uid);
  snprintf(w.rv, sizeof w.rv, "%s", rv);
  po_TargetIndex_NoteOverrideAnswer(ix, "shop", "po-1", &w);
}
static bool echo(po_TargetIndex *ix, const char *uid, const char *rv, int64_t generation, bool deleting) {
  return po_TargetIndex_IsOwnOverrideEcho(ix, "shop", "po-1", uid, rv, generation, deleting);
}
static uint64_t override_echoes(po_TargetIndex *ix) { return po_TargetIndex_Stats(ix).override_echoes; }

static po_TargetIndex *indexed(void) {
  po_TargetIndex *ix = po_TargetIndex_New();
  assert_non_null(ix);
  char old[600];
  assert_true(po_TargetIndex_Set(ix, "shop", "po-1", kKey, old, sizeof old));
  return ix;
}

/* Exactly the version the answer said, of the uid and generation written over, not being deleted:
 * ours, once. Every other event is not (and leaves the note for the echo still to come). */
static void test_finalizer_echo_by_version(void **state) {
  (void)state;
  po_TargetIndex *ix = indexed();
  note_finalizer(ix, "u1", 3);
  answer(ix, "u1", "41", 3);
  assert_false(echo(ix, "u1", "40", 3, false));  /* the version written over */
  assert_false(echo(ix, "u1", "410", 3, false)); /* a prefix is not the version */
  assert_false(echo(ix, "u1", "41", 4, false));  /* another generation */
  assert_false(echo(ix, "u2", "41", 3, false));  /* another object of the name */
  assert_false(echo(ix, "u1", "41", 3, true));   /* being deleted */
  assert_false(echo(ix, "", "41", 3, false));
  assert_false(po_TargetIndex_IsOwnOverrideEcho(ix, "shop", "po-2", "u1", "41", 3, false));
  assert_int_equal(override_echoes(ix), 0);
  assert_true(echo(ix, "u1", "41", 3, false));
  assert_false(echo(ix, "u1", "41", 3, false)); /* once */
  assert_int_equal(override_echoes(ix), 1);
  po_TargetIndex_Free(ix);
}

/* An answer that does not match what was noted, or comes when nothing waits, is not kept: a
 * version is never taken for ours on an answer about another object, generation, or write. */
static void test_finalizer_answer_not_kept(void **state) {
  (void)state;
  po_TargetIndex *ix = indexed();
  answer(ix, "u1", "41", 3); /* nothing noted */
  assert_false(echo(ix, "u1", "41", 3, false));
  /* each its own write's answer (the first answer a write gets is the one it keeps or not) */
  static const po_WrittenVersion bad[] = {
      {.uid = "u2", .rv = "41", .generation = 3, .finalized = true}, /* another uid */
      {.uid = "u1", .rv = "42", .generation = 4, .finalized = true}, /* another generation (the spec changed first) */
      {.uid = "u1", .rv = "", .generation = 3, .finalized = true},   /* the answer did not say */
      {.uid = "u1", .rv = "43", .generation = 3, .finalized = false}, /* no finalizer of ours (a webhook took it out) */
      {.uid = "u1", .rv = "123456789012345678901234567890", .generation = 3, .finalized = true}, /* longer than any revision */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    note_finalizer(ix, "u1", 3);
    po_TargetIndex_NoteOverrideAnswer(ix, "shop", "po-1", &bad[i]);
    assert_false(echo(ix, bad[i].uid, bad[i].rv, bad[i].generation, false));
    assert_false(echo(ix, "u1", bad[i].rv, 3, false));
  }
  assert_int_equal(waited_out(ix), 0);
  /* the write failed: forgotten, its late answer (there is none) or a lookalike never ours */
  answer(ix, "u1", "43", 3);
  po_OverrideMemo m = {.generation = 3};
  snprintf(m.uid, sizeof m.uid, "u1");
  po_TargetIndex_NoteOverrideWrite(ix, "shop", "po-1", &m, 0, NULL, 0, true);
  assert_false(echo(ix, "u1", "43", 3, false));
  /* a new finalizer write: the last one's answer is not this one's */
  note_finalizer(ix, "u1", 3);
  answer(ix, "u1", "44", 3);
  note_finalizer(ix, "u1", 3);
  answer(ix, "u1", "46", 3);
  assert_false(echo(ix, "u1", "44", 3, false));
  assert_true(echo(ix, "u1", "46", 3, false));
  /* the status write (which 1) is never told by its version: its status moves what the index holds */
  note_finalizer(ix, "u1", 3);
  po_TargetIndex_NoteOverrideWrite(ix, "shop", "po-1", &m, 0, NULL, 0, true);
  json_object *st = json_tokener_parse("{\"conditions\":[]}");
  po_TargetIndex_NoteOverrideWrite(ix, "shop", "po-1", &m, 1, st, 7, false);
  json_object_put(st);
  answer(ix, "u1", "45", 3);
  assert_false(echo(ix, "u1", "45", 3, false));
  assert_int_equal(override_echoes(ix), 1);
  assert_int_equal(waited_out(ix), 0); /* every event above judged at once */
  po_TargetIndex_Free(ix);
}

/* The echo told by its content first (it came before the answer): the answer that follows is not
 * kept, so no later event of that version is taken for ours a second time. */
static void test_finalizer_echo_by_content_first(void **state) {
  (void)state;
  po_TargetIndex *ix = indexed();
  json_object *o = json_tokener_parse("{\"metadata\":{\"name\":\"po-1\",\"namespace\":\"shop\",\"uid\":\"u1\","
                                      "\"generation\":3,\"resourceVersion\":\"41\",\"finalizers\":[\"" PO_FINALIZER "\"]},"
                                      "\"spec\":{\"targetRef\":{\"name\":\"web\"}}}");
  assert_non_null(o);
  po_OverrideMemo m = {.generation = 3, .spec_hash = po_Json_Hash(json_object_object_get(o, "spec"))};
  snprintf(m.uid, sizeof m.uid, "u1");
  po_TargetIndex_NoteOverrideWrite(ix, "shop", "po-1", &m, 0, NULL, 0, false);
  assert_true(po_TargetIndex_IsOwnOverrideWrite(ix, o)); /* the echo, by its content */
  answer(ix, "u1", "41", 3);                             /* its answer, late */
  assert_false(echo(ix, "u1", "41", 3, false));
  json_object_put(o);
  po_TargetIndex_Free(ix);
}

/* The echo before its answer is not waited for: not taken by its version (its content tells it,
 * and caches it at once, before the target write that follows is sent); nothing waits, whatever
 * comes after. Once the answer came, that version is known. */
static void test_finalizer_echo_before_answer(void **state) {
  (void)state;
  po_TargetIndex *ix = indexed();
  note_finalizer(ix, "u1", 3);
  assert_false(echo(ix, "u1", "41", 3, false)); /* at once: no answer yet */
  assert_int_equal(waited_out(ix), 0);
  answer(ix, "u1", "41", 3);
  assert_true(echo(ix, "u1", "41", 3, false));
  /* the write failed: nothing to know it by */
  note_finalizer(ix, "u1", 3);
  po_OverrideMemo m = {.generation = 3};
  snprintf(m.uid, sizeof m.uid, "u1");
  po_TargetIndex_NoteOverrideWrite(ix, "shop", "po-1", &m, 0, NULL, 0, true);
  answer(ix, "u1", "42", 3);
  assert_false(echo(ix, "u1", "42", 3, false));
  assert_int_equal(override_echoes(ix), 1);
  assert_int_equal(waited_out(ix), 0);
  po_TargetIndex_Free(ix);
}

/* The admission view's question (po_TargetIndex_FinalizerWritten): claimed from the answer of our
 * finalizer write (the object it made lists our finalizer) until its echo is in; not before the
 * answer, not for another generation or uid, not when the answer lacks our finalizer. */
static void test_finalizer_written_until_its_echo(void **state) {
  (void)state;
  po_TargetIndex *ix = indexed();
  assert_false(po_TargetIndex_FinalizerWritten(ix, "shop", "po-1", "u1", 3)); /* nothing noted */
  note_finalizer(ix, "u1", 3);
  assert_false(po_TargetIndex_FinalizerWritten(ix, "shop", "po-1", "u1", 3)); /* not answered yet */
  answer(ix, "u1", "41", 3);
  assert_true(po_TargetIndex_FinalizerWritten(ix, "shop", "po-1", "u1", 3));
  assert_false(po_TargetIndex_FinalizerWritten(ix, "shop", "po-1", "u1", 4));
  assert_false(po_TargetIndex_FinalizerWritten(ix, "shop", "po-1", "u2", 3));
  assert_true(echo(ix, "u1", "41", 3, false)); /* its echo: the cache shows it now */
  assert_false(po_TargetIndex_FinalizerWritten(ix, "shop", "po-1", "u1", 3));
  note_finalizer(ix, "u1", 3);
  po_WrittenVersion stripped = {.uid = "u1", .rv = "42", .generation = 3, .finalized = false};
  po_TargetIndex_NoteOverrideAnswer(ix, "shop", "po-1", &stripped);
  assert_false(po_TargetIndex_FinalizerWritten(ix, "shop", "po-1", "u1", 3));
  po_TargetIndex_Free(ix);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_answer_then_echo),
      cmocka_unit_test(test_no_answer_no_echo),
      cmocka_unit_test(test_echo_before_answer),
      cmocka_unit_test(test_answer_never_came),
      cmocka_unit_test(test_cache_behind),
      cmocka_unit_test(test_finalizer_echo_by_version),
      cmocka_unit_test(test_finalizer_answer_not_kept),
      cmocka_unit_test(test_finalizer_echo_by_content_first),
      cmocka_unit_test(test_finalizer_echo_before_answer),
      cmocka_unit_test(test_finalizer_written_until_its_echo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
