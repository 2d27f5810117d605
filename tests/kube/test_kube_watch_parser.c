/* The watch stream parser: recorded streams split at every byte position give the same events
 * as the whole stream; garbage is an error, never a crash; mutated streams behave the same
 * however they are split. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/kube/watch_parser.h"

#define DATA PO_KUBE_TESTDATA

typedef struct {
  char log[65536];
  size_t len;
  int events;
  int stop_after; /* 0: never */
} Sink;

static bool record(void *ctx, po_KubeWatchEventType type, json_object *obj) {
  Sink *s = ctx;
  const char *j = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
  int n = snprintf(s->log + s->len, sizeof s->log - s->len, "%d %s\n", (int)type, j);
  if (n > 0 && s->len + (size_t)n < sizeof s->log) s->len += (size_t)n;
  s->events++;
  return !(s->stop_after && s->events >= s->stop_after);
}

/* Feeds data in pieces cut at the given positions; returns the final result. */
static po_WatchFeedResult feed_split(const char *data, size_t len, const size_t *cuts, int ncuts, Sink *s,
                                     po_CtlStatus *st) {
  po_WatchParser *p = po_WatchParser_New(0);
  assert_non_null(p);
  size_t at = 0;
  po_WatchFeedResult r = kPo_WatchFeed_More;
  for (int i = 0; i <= ncuts && r == kPo_WatchFeed_More; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    r = po_WatchParser_Feed(p, data + at, end - at, record, s, st);
    at = end;
  }
  if (r == kPo_WatchFeed_More && !po_WatchParser_Finish(p, record, s, st)) r = kPo_WatchFeed_Error;
  po_WatchParser_Free(p);
  return r;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[1 << 16];
  *len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  char *d = malloc(*len + 1);
  memcpy(d, buf, *len);
  d[*len] = '\0';
  return d;
}

static void check_every_split(const char *file, int want_events) {
  size_t len;
  char *data = slurp(file, &len);
  Sink *whole = calloc(1, sizeof *whole), *part = calloc(1, sizeof *part);
  po_CtlStatus st;
  assert_int_equal(feed_split(data, len, NULL, 0, whole, &st), kPo_WatchFeed_More);
  assert_int_equal(whole->events, want_events);
  for (size_t k = 0; k <= len; k++) {
    memset(part, 0, sizeof *part);
    size_t cut = k;
    assert_int_equal(feed_split(data, len, &cut, 1, part, &st), kPo_WatchFeed_More);
    if (part->len != whole->len || memcmp(part->log, whole->log, whole->len) != 0) {
      print_error("%s: split at %zu differs\n", file, k);
      fail();
    }
  }
  /* One byte at a time: every boundary at once. */
  size_t *cuts = malloc(len * sizeof *cuts);
  for (size_t k = 0; k < len; k++) cuts[k] = k;
  memset(part, 0, sizeof *part);
  assert_int_equal(feed_split(data, len, cuts, (int)len, part, &st), kPo_WatchFeed_More);
  assert_int_equal(part->len, whole->len);
  assert_memory_equal(part->log, whole->log, whole->len);
  free(cuts);
  free(whole);
  free(part);
  free(data);
}

static void test_recorded_basic(void **state) { check_every_split(DATA "/watch_basic.jsonl", 5); }
static void test_recorded_utf8(void **state) { check_every_split(DATA "/watch_utf8.jsonl", 2); }

static void test_event_types_and_values(void **state) {
  size_t len;
  char *data = slurp(DATA "/watch_basic.jsonl", &len);
  Sink s = {0};
  po_CtlStatus st;
  assert_int_equal(feed_split(data, len, NULL, 0, &s, &st), kPo_WatchFeed_More);
  assert_true(strncmp(s.log, "0 {\"kind\":\"ConfigMap\"", 21) == 0);
  assert_non_null(strstr(s.log, "\n1 {"));
  assert_non_null(strstr(s.log, "\n3 {"));
  assert_non_null(strstr(s.log, "\n2 {"));
  assert_non_null(strstr(s.log, "\n4 {\"kind\":\"Status\""));
  assert_non_null(strstr(s.log, "\\\"quoted\\\""));
  free(data);
}

static void expect_garbage(const char *text, int want_events, const char *msg) {
  Sink s = {0};
  po_CtlStatus st;
  po_WatchFeedResult r = feed_split(text, strlen(text), NULL, 0, &s, &st);
  assert_int_equal(r, kPo_WatchFeed_Error);
  assert_int_equal(s.events, want_events);
  assert_int_equal(st.code, kPo_Ctl_Decode);
  if (strcmp(st.message, msg) != 0) {
    print_error("expected: %s\n     got: %s\n", msg, st.message);
    fail();
  }
  /* Split anywhere: the same verdict. */
  for (size_t k = 0; k <= strlen(text); k++) {
    Sink p = {0};
    size_t cut = k;
    assert_int_equal(feed_split(text, strlen(text), &cut, 1, &p, &st), kPo_WatchFeed_Error);
    assert_int_equal(p.events, want_events);
  }
}

static void test_garbage(void **state) {
  expect_garbage("garbage\n", 0, "watch stream: event 1 (at byte 0): expected a JSON object {\"type\":..., \"object\":...}");
  expect_garbage("{\"type\":\"ADDED\"}\n", 0,
                 "watch stream: event 1 (at byte 0): expected \"object\" to be a JSON object");
  expect_garbage("{\"type\":\"NOPE\",\"object\":{}}\n", 0,
                 "watch stream: event 1 (at byte 0): expected type ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, found: NOPE");
  expect_garbage("{\"type\":1,\"object\":{}}\n", 0, "watch stream: event 1 (at byte 0): expected \"type\" to be a string");
  expect_garbage("[1,2]\n", 0,
                 "watch stream: event 1 (at byte 0): expected a JSON object {\"type\":..., \"object\":...}");
  expect_garbage("{\"type\":\"ADDED\",\"object\":{}}\n xx", 1,
                 "watch stream: event 2 (at byte 30): expected a JSON object {\"type\":..., \"object\":...}");
  expect_garbage("{\"type\":\"ADDED\",\"object\":{}}{\"type\":\"ADD", 1,
                 "watch stream: event 2 (at byte 28): stream ended inside an event");
  expect_garbage("{\"type\":\"ADDED\",\"object\":{\"a\":\"\xff\"}}\n", 0,
                 "watch stream: event 1 (at byte 0): invalid UTF-8: byte 31");
  expect_garbage("{'type':'ADDED'}", 0, "watch stream: event 1 (at byte 0): invalid JSON: unexpected character");
  expect_garbage("{\"type\":\"ADDED\",\"object\":{\"n\":3-}}", 0, "watch stream: event 1 (at byte 0): invalid JSON: number expected");
}

/* UTF-8 checked eight ASCII bytes at a time: a bad byte, or a good or cut sequence, at every
 * offset of a long ASCII value (every alignment against the word, and at its edges), whole and
 * split at every byte, is judged as a byte loop would: the same event, or the error naming the
 * first bad byte. */
static void test_utf8_every_offset(void **state) {
  (void)state;
  static const char *const seqs[] = {"\xff", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x82", "\xc0\xaf",
                                     "\xed\xa0\x80", "\xf4\x90\x80\x80"};
  static const bool good[] = {false, true, true, true, false, false, false, false};
  const char *head = "{\"type\":\"ADDED\",\"object\":{\"a\":\"";
  for (size_t k = 0; k < sizeof seqs / sizeof *seqs; k++) {
    for (size_t at = 0; at < 40; at++) {
      char ev[256];
      int n = snprintf(ev, sizeof ev, "%s%.*s%s%.*s\"}}\n", head, (int)at, "0123456789012345678901234567890123456789",
                       seqs[k], (int)(40 - at), "abcdefghijabcdefghijabcdefghijabcdefghij");
      size_t len = (size_t)n;
      for (size_t cut = 0; cut <= len; cut++) {
        Sink s = {0};
        po_CtlStatus st;
        po_CtlStatus_Clear(&st);
        po_WatchFeedResult r = feed_split(ev, len, &cut, 1, &s, &st);
        if (good[k]) {
          assert_int_equal(r, kPo_WatchFeed_More);
          assert_int_equal(s.events, 1);
        } else {
          assert_int_equal(r, kPo_WatchFeed_Error);
          /* the first byte that cannot be where it is */
          size_t bad = strlen(head) + at + (k == 0 || k == 5 ? 0 : k == 4 ? 2 : 1);
          char want[128];
          snprintf(want, sizeof want, "invalid UTF-8: byte %zu", bad);
          if (!strstr(st.message, want)) fail_msg("seq %zu at %zu, cut %zu: %s (want %s)", k, at, cut, st.message, want);
        }
      }
    }
  }
}

static void test_limits_stop_sticky(void **state) {
  po_WatchParser *p = po_WatchParser_New(64);
  Sink s = {0};
  po_CtlStatus st;
  char big[200];
  memset(big, ' ', sizeof big);
  memcpy(big, "{\"type\":\"ADDED\",\"object\":{\"a\":\"", 31);
  big[sizeof big - 1] = 'x';
  assert_int_equal(po_WatchParser_Feed(p, big, sizeof big, record, &s, &st), kPo_WatchFeed_Error);
  assert_string_equal(st.message, "watch stream: event 1 (at byte 0): event larger than the limit");
  /* Sticky: nothing more is accepted. */
  assert_int_equal(po_WatchParser_Feed(p, "{}", 2, record, &s, &st), kPo_WatchFeed_Error);
  assert_false(po_WatchParser_Finish(p, record, &s, &st));
  po_WatchParser_Free(p);

  const char *two = "{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"ADDED\",\"object\":{}}\n";
  Sink s2 = {0};
  s2.stop_after = 1;
  p = po_WatchParser_New(0);
  assert_int_equal(po_WatchParser_Feed(p, two, strlen(two), record, &s2, &st), kPo_WatchFeed_Stop);
  assert_int_equal(s2.events, 1);
  po_WatchParser_Free(p);

  /* The last event needs no newline: the end of the stream ends it. */
  Sink s3 = {0};
  p = po_WatchParser_New(0);
  const char *last = "{\"type\":\"ADDED\",\"object\":{}}";
  assert_int_equal(po_WatchParser_Feed(p, last, strlen(last), record, &s3, &st), kPo_WatchFeed_More);
  assert_int_equal(s3.events, 0);
  assert_true(po_WatchParser_Finish(p, record, &s3, &st));
  assert_int_equal(s3.events, 1);
  po_WatchParser_Free(p);

  /* Whitespace only (a server keep-alive) is not an event and not an error. */
  p = po_WatchParser_New(0);
  assert_int_equal(po_WatchParser_Feed(p, "\n\r\n  \t", 6, record, &s2, &st), kPo_WatchFeed_More);
  assert_true(po_WatchParser_Finish(p, record, &s2, &st));
  po_WatchParser_Free(p);
}

/* Mutated streams: whatever the bytes, split feeding agrees with whole feeding. */
static void test_mutations_agree(void **state) {
  size_t len;
  char *orig = slurp(DATA "/watch_basic.jsonl", &len);
  char *data = malloc(len);
  uint64_t x = 88172645463325252ull;
  Sink *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
  for (int round = 0; round < 300; round++) {
    memcpy(data, orig, len);
    for (int m = 0; m < 1 + round % 4; m++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      size_t at = (size_t)(x % len);
      static const char pick[] = "{}[]\":,\n\\x0 \xff\xc3";
      data[at] = pick[(x >> 20) % (sizeof pick - 1)];
    }
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    po_CtlStatus st1, st2;
    po_WatchFeedResult r1 = feed_split(data, len, NULL, 0, a, &st1);
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t cuts[3] = {(size_t)(x % len), 0, 0};
    cuts[1] = cuts[0] + (size_t)((x >> 16) % (len - cuts[0] + 1));
    cuts[2] = cuts[1] + (size_t)((x >> 32) % (len - cuts[1] + 1));
    po_WatchFeedResult r2 = feed_split(data, len, cuts, 3, b, &st2);
    assert_int_equal(r1, r2);
    assert_int_equal(a->events, b->events);
    assert_int_equal(a->len, b->len);
    assert_memory_equal(a->log, b->log, a->len);
  }
  free(a);
  free(b);
  free(data);
  free(orig);
}

/* ---- the object's own text (po_WatchParser_ObjectText) ---------------------------------- */

typedef struct {
  po_WatchParser *p;
  int events, located;
  char last[512]; /* the last located text */
} TextSink;

/* Each located text must be, byte for byte, a JSON document equal to the parsed object. */
static bool check_text(void *ctx, po_KubeWatchEventType type, json_object *obj) {
  (void)type;
  TextSink *s = ctx;
  size_t len = 12345;
  const char *t = po_WatchParser_ObjectText(s->p, &len);
  s->events++;
  if (!t) {
    assert_int_equal(len, 0);
    return true;
  }
  s->located++;
  json_tokener *tok = json_tokener_new();
  json_object *again = json_tokener_parse_ex(tok, t, (int)len);
  assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
  assert_int_equal(json_tokener_get_parse_end(tok), len); /* nothing after the object */
  json_tokener_free(tok);
  assert_true(json_object_equal(again, obj));
  json_object_put(again);
  snprintf(s->last, sizeof s->last, "%.*s", (int)len, t);
  return true;
}

/* Feeds text cut at each position in cuts; returns the sink's counts. */
static TextSink feed_text(const char *data, size_t len, const size_t *cuts, int ncuts) {
  TextSink s = {0};
  s.p = po_WatchParser_New(0);
  assert_non_null(s.p);
  po_CtlStatus st;
  size_t at = 0;
  for (int i = 0; i <= ncuts; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    assert_int_equal(po_WatchParser_Feed(s.p, data + at, end - at, check_text, &s, &st), kPo_WatchFeed_More);
    at = end;
  }
  assert_true(po_WatchParser_Finish(s.p, check_text, &s, &st));
  po_WatchParser_Free(s.p);
  return s;
}

/* Recorded streams, whole and split at every byte: each single-line event's object text is
 * located (the parser holds bytes to the newline, so a split never hides one) and equals it. */
static void test_object_text_recorded(void **state) {
  (void)state;
  const char *files[] = {DATA "/watch_basic.jsonl", DATA "/watch_utf8.jsonl"};
  const int want[] = {4, 2}; /* the ERROR event ends the stream in po_KubeClient_Watch, not here */
  for (int f = 0; f < 2; f++) {
    size_t len;
    char *data = slurp(files[f], &len);
    TextSink whole = feed_text(data, len, NULL, 0);
    assert_int_equal(whole.located, whole.events);
    assert_true(whole.events >= want[f]);
    for (size_t k = 0; k <= len; k++) {
      size_t cut = k;
      TextSink part = feed_text(data, len, &cut, 1);
      assert_int_equal(part.events, whole.events);
      assert_int_equal(part.located, whole.located);
    }
    free(data);
  }
}

static void expect_text(const char *stream, const char *want) {
  TextSink s = feed_text(stream, strlen(stream), NULL, 0);
  assert_int_equal(s.events, 1);
  if (!want) {
    assert_int_equal(s.located, 0);
    return;
  }
  assert_int_equal(s.located, 1);
  assert_string_equal(s.last, want);
}

static void test_object_text_cases(void **state) {
  (void)state;
  /* "object" first or last, spaces around, strings holding braces, quotes and escapes. */
  expect_text("{\"object\":{\"a\":\"}{\\\"]\"},\"type\":\"ADDED\"}\n", "{\"a\":\"}{\\\"]\"}");
  expect_text("{ \"type\" : \"MODIFIED\" , \"object\" : {\"b\":[1,{\"c\":[]},\"]\"]} }\n",
              "{\"b\":[1,{\"c\":[]},\"]\"]}");
  /* A key that merely contains "object", before the real one. */
  expect_text("{\"objects\":{\"x\":1},\"type\":\"ADDED\",\"object\":{\"y\":2}}\n", "{\"y\":2}");
  /* Duplicate keys: json-c keeps the last; so does the text. */
  expect_text("{\"type\":\"ADDED\",\"object\":{\"first\":1},\"object\":{\"last\":2}}\n", "{\"last\":2}");
  /* Escaped keys might spell "object": not located (the caller serialises). */
  expect_text("{\"type\":\"ADDED\",\"obj\\u0065ct\":{\"z\":1}}\n", NULL);
  /* An event over several lines: located when its lines arrive in one read, not when a read
   * ends at an inner newline (the tokener then holds the first part). */
  const char *two = "{\"type\":\"ADDED\",\n\"object\":{\"z\":1}}\n";
  expect_text(two, "{\"z\":1}");
  size_t cut = strlen("{\"type\":\"ADDED\",\n");
  TextSink s = feed_text(two, strlen(two), &cut, 1);
  assert_int_equal(s.events, 1);
  assert_int_equal(s.located, 0);
  /* The last event without its newline (delivered by Finish). */
  expect_text("{\"type\":\"ADDED\",\"object\":{\"z\":[true,null,-1.5e3]}}", "{\"z\":[true,null,-1.5e3]}");
}

/* ---- events taken by their head (po_WatchParser_SetPeek) ---- */

typedef struct {
  int asked, taken;
  char last[256];       /* the head of the last event asked about */
  char object[256];     /* the object bytes of the last event taken */
  const char *take_rv;  /* the resourceVersion taken */
} PeekSink;

static bool peek_take(void *ctx, const po_KubeWatchHead *h) {
  PeekSink *k = ctx;
  k->asked++;
  snprintf(k->last, sizeof k->last, "%d %s|%s|%s|%s|%lld|%d", (int)h->type, h->ns, h->name, h->uid, h->rv,
           (long long)h->generation, h->deleting);
  if (strcmp(h->rv, k->take_rv) != 0) return false;
  k->taken++;
  snprintf(k->object, sizeof k->object, "%.*s", (int)h->object_len, h->object);
  return true;
}

/* The parser with a peek, fed in pieces cut at the given positions: what fn got, what peek took,
 * and how many trees were built. */
static void feed_peek(const char *data, size_t len, const size_t *cuts, int ncuts, Sink *s, PeekSink *k,
                      size_t *parsed) {
  po_WatchParser *p = po_WatchParser_New(0);
  assert_non_null(p);
  po_WatchParser_SetPeek(p, peek_take, k);
  po_CtlStatus st;
  size_t at = 0;
  for (int i = 0; i <= ncuts; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    assert_int_equal(po_WatchParser_Feed(p, data + at, end - at, record, s, &st), kPo_WatchFeed_More);
    at = end;
  }
  assert_true(po_WatchParser_Finish(p, record, s, &st));
  *parsed = po_WatchParser_Parsed(p);
  assert_int_equal(po_WatchParser_Peeked(p), (size_t)k->taken);
  po_WatchParser_Free(p);
}

#define OBJ(name, rv, extra) \
  "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"" rv \
  "\"" extra "},\"data\":{\"k\":\"}{]\"}}"

/* An event peek takes is neither parsed nor given to fn: the trees built are the events fn gets
 * (counted: on today's parser every event is a tree). The head is read from the bytes as the
 * tree would say it; an event whose head is not plain (an escaped name) is not offered; a
 * bookmark is not offered. */
static void test_peek_takes_unparsed(void **state) {
  (void)state;
  const char *stream =
      "{\"type\":\"ADDED\",\"object\":" OBJ("a", "5", ",\"generation\":2") "}\n"
      "{\"type\":\"MODIFIED\",\"object\":" OBJ("a", "6", ",\"generation\":3,\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"") "}\n"
      "{\"type\":\"MODIFIED\",\"object\":" OBJ("\\u0061", "6", "") "}\n"
      "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"6\"}}}\n"
      "{\"type\":\"DELETED\",\"object\":" OBJ("a", "7", "") "}\n";
  Sink s = {0};
  PeekSink k = {.take_rv = "6"};
  size_t parsed;
  feed_peek(stream, strlen(stream), NULL, 0, &s, &k, &parsed);
  assert_int_equal(k.asked, 3); /* ADDED, MODIFIED 6, DELETED: not the escaped name, not the bookmark */
  assert_int_equal(k.taken, 1);
  assert_int_equal(s.events, 4);
  assert_int_equal(parsed, 4); /* five events, four trees */
  assert_string_equal(k.object, OBJ("a", "6", ",\"generation\":3,\"deletionTimestamp\":\"2026-01-01T00:00:00Z\""));
  assert_string_equal(k.last, "2 ns|a|u1|7|0|0");
  assert_null(strstr(s.log, "\"resourceVersion\":\"6\",\"generation\":3")); /* fn never saw the taken one */
  /* the taken event's head, as asked */
  Sink s2 = {0};
  PeekSink k2 = {.take_rv = "none"};
  const char *one = "{\"type\":\"MODIFIED\",\"object\":" OBJ("a", "6", ",\"generation\":3,\"deletionTimestamp\":\"x\"") "}\n";
  feed_peek(one, strlen(one), NULL, 0, &s2, &k2, &parsed);
  assert_string_equal(k2.last, "1 ns|a|u1|6|3|1");
  assert_int_equal(parsed, 1);
}

/* However the stream is cut, every event goes exactly one way: taken by peek (only when it came
 * whole in one read) or parsed and given to fn; the events fn gets plus those taken are all of
 * them, in order. */
static void test_peek_every_split(void **state) {
  (void)state;
  const char *stream =
      "{\"type\":\"ADDED\",\"object\":" OBJ("a", "5", "") "}\n"
      "{\"type\":\"MODIFIED\",\"object\":" OBJ("a", "6", "") "}\n"
      "{\"type\":\"MODIFIED\",\"object\":" OBJ("a", "7", "") "}\n";
  size_t len = strlen(stream), whole_taken = 0;
  for (size_t cut = 0; cut <= len; cut++) {
    Sink s = {0};
    PeekSink k = {.take_rv = "6"};
    size_t parsed;
    feed_peek(stream, len, &cut, 1, &s, &k, &parsed);
    assert_int_equal(s.events + k.taken, 3);
    assert_int_equal(parsed, (size_t)s.events);
    assert_non_null(strstr(s.log, "\"resourceVersion\":\"5\""));
    assert_non_null(strstr(s.log, "\"resourceVersion\":\"7\""));
    whole_taken += (size_t)k.taken;
  }
  assert_true(whole_taken > len / 2); /* most cuts leave the middle event whole */
}

/* ---- events parsed without managedFields (po_WatchParser_SetCutManagedFields) ---- */

typedef struct {
  po_WatchParser *p;
  bool drop; /* the expectation's sink: managedFields deleted from the whole tree */
  char log[16384];
  size_t len;
  int events, texts, text_mismatch;
} CutSink;

static bool cut_record(void *ctx, po_KubeWatchEventType type, json_object *obj) {
  CutSink *s = ctx;
  json_object *md = NULL;
  if (s->drop && json_object_object_get_ex(obj, "metadata", &md)) json_object_object_del(md, "managedFields");
  const char *j = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
  int n = snprintf(s->log + s->len, sizeof s->log - s->len, "%d %s\n", (int)type, j);
  if (n > 0 && s->len + (size_t)n < sizeof s->log) s->len += (size_t)n;
  s->events++;
  size_t len;
  const char *t = s->p ? po_WatchParser_ObjectText(s->p, &len) : NULL;
  if (t) { /* the text fn's caller caches is the tree it got */
    s->texts++;
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, t, (int)len);
    if (!o || !json_object_equal(o, obj)) s->text_mismatch++;
    json_object_put(o);
    json_tokener_free(tok);
  }
  return true;
}

static po_WatchFeedResult feed_cut(const char *data, size_t len, const size_t *cuts, int ncuts, bool cut, CutSink *s,
                                   po_CtlStatus *st) {
  po_WatchParser *p = po_WatchParser_New(0);
  assert_non_null(p);
  po_WatchParser_SetCutManagedFields(p, cut);
  s->p = p;
  size_t at = 0;
  po_WatchFeedResult r = kPo_WatchFeed_More;
  for (int i = 0; i <= ncuts && r == kPo_WatchFeed_More; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    r = po_WatchParser_Feed(p, data + at, end - at, cut_record, s, st);
    at = end;
  }
  if (r == kPo_WatchFeed_More && !po_WatchParser_Finish(p, cut_record, s, st)) r = kPo_WatchFeed_Error;
  po_WatchParser_Free(p);
  s->p = NULL;
  return r;
}

#define MD(before, after) \
  "{\"kind\":\"X\",\"metadata\":{" before "\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"5\"" after "}," \
  "\"data\":{\"k\":\"managedFields }{][\\\"\",\"n\":-1.5e3}}"
#define MF "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:data\":{\"f:k\":{},\"f:n\":{}}},\"time\":\"t\"}]"

/* Whatever its place in metadata (last, as the API server writes it; first; between; twice
 * metadata, json-c keeping the last), the tree fn gets is the whole event's without
 * managedFields, its object text that tree, for the stream whole, split at every byte, and fed a
 * byte at a time; without the option the tree is whole. */
static void test_cut_managed_fields(void **state) {
  (void)state;
  const char *stream =
      "{\"type\":\"ADDED\",\"object\":" MD("", "," MF) "}\n"
      "{\"type\":\"MODIFIED\",\"object\":" MD(MF ",", "") "}\n"
      "{\"object\":" MD("\"labels\":{\"x\":\"y\"},", "," MF ",\"generation\":3") ",\"type\":\"MODIFIED\"}\n"
      "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"1\"," MF "},"
      "\"spec\":{\"x\":1},\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"6\"," MF "}}}\n"
      "{\"type\":\"DELETED\",\"object\":" MD("", "") "}\n"
      "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\"}}}\n";
  size_t len = strlen(stream);
  CutSink *want = calloc(1, sizeof *want), *got = calloc(1, sizeof *got), *plain = calloc(1, sizeof *plain);
  po_CtlStatus st;
  want->drop = true;
  assert_int_equal(feed_cut(stream, len, NULL, 0, false, want, &st), kPo_WatchFeed_More);
  assert_int_equal(want->events, 6);
  assert_int_equal(feed_cut(stream, len, NULL, 0, false, plain, &st), kPo_WatchFeed_More);
  assert_non_null(strstr(plain->log, "managedFields\":[{")); /* without the option: whole */
  assert_null(strstr(want->log, "managedFields\":[{"));
  size_t *cuts = malloc(len * sizeof *cuts);
  for (size_t i = 0; i < len; i++) cuts[i] = i + 1;
  for (size_t k = 0; k <= len + 1; k++) {
    memset(got, 0, sizeof *got);
    size_t one = k;
    po_WatchFeedResult r = k <= len ? feed_cut(stream, len, &one, 1, true, got, &st)
                                    : feed_cut(stream, len, cuts, (int)len - 1, true, got, &st); /* a byte at a time */
    assert_int_equal(r, kPo_WatchFeed_More);
    if (got->len != want->len || memcmp(got->log, want->log, want->len) != 0) {
      print_error("split at %zu:\n%s\nwanted:\n%s\n", k, got->log, want->log);
      fail();
    }
    assert_int_equal(got->texts, 6); /* single-line events: each located */
    assert_int_equal(got->text_mismatch, 0);
  }
  free(cuts);
  free(want);
  free(got);
  free(plain);
}

/* Bad bytes are said as they are without the option: the copy json-c does not take whole is
 * parsed again from the bytes, whose error is the one always given. */
static void test_cut_managed_fields_errors(void **state) {
  (void)state;
  const char *bad[] = {
      "{\"type\":\"ADDED\",\"object\":" MD("", "," MF) ",\"x\":tru}\n",
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"," MF "},\"v\":01}}\n",
      "{\"type\":\"ADDED\",\"object\":" MD("", "," MF) "}}\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CutSink *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    po_CtlStatus sa, sb;
    po_CtlStatus_Clear(&sa);
    po_CtlStatus_Clear(&sb);
    po_WatchFeedResult ra = feed_cut(bad[i], strlen(bad[i]), NULL, 0, false, a, &sa);
    po_WatchFeedResult rb = feed_cut(bad[i], strlen(bad[i]), NULL, 0, true, b, &sb);
    assert_int_equal(ra, kPo_WatchFeed_Error);
    assert_int_equal(rb, ra);
    assert_string_equal(sb.message, sa.message);
    assert_int_equal(b->events, a->events);
    free(a);
    free(b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_recorded_basic),     cmocka_unit_test(test_recorded_utf8),
      cmocka_unit_test(test_utf8_every_offset),
      cmocka_unit_test(test_event_types_and_values), cmocka_unit_test(test_garbage),
      cmocka_unit_test(test_limits_stop_sticky), cmocka_unit_test(test_mutations_agree),
      cmocka_unit_test(test_object_text_recorded), cmocka_unit_test(test_object_text_cases),
      cmocka_unit_test(test_peek_takes_unparsed), cmocka_unit_test(test_peek_every_split),
      cmocka_unit_test(test_cut_managed_fields), cmocka_unit_test(test_cut_managed_fields_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
