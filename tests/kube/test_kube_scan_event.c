/* A watch event's head read from its bytes (po_JsonScan_Event_, json_scan.h) against json-c's
 * reading of the same bytes, over generated hostile events: metadata before or after spec, spec
 * and status holding objects named metadata and strings that spell "resourceVersion":"..." or
 * "uid":"...", escapes in keys and values (\", \\, \/, \u0041), duplicated members of metadata
 * (json-c keeps the last), uids of 36 to 200 bytes, values that are not strings, BOOKMARK and
 * ERROR events, managedFields anywhere in metadata, random whitespace. Whenever the scan says it
 * read an event, every field it gives must be json-c's, its object span must parse to json-c's
 * object, and the managedFields cut (what the informer caches for an echo) must parse to that
 * object without managedFields. Left out of the generator: a duplicate metadata or managedFields
 * member of one object (the scan reads the first metadata: json_scan.h, the API server writes
 * each key once). Seeded: PO_TEST_SEED overrides the seed, which is printed. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../seeded.h"

#include "json_scan.h"

enum { kCases = 20000 };

static uint64_t g_rand;
static uint64_t next(void) { return po_Seeded_Next(&g_rand); }
static unsigned pick(unsigned n) { return po_Seeded_Pick(&g_rand, n); }

typedef struct {
  char *p;
  size_t len, cap;
} Buf;

static void put(Buf *b, const char *s) {
  size_t n = strlen(s);
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->len, s, n + 1);
  b->len += n;
}

static void ws(Buf *b) {
  static const char *const kWs[] = {"", "", "", " ", "\n", "\t ", "\r\n  "};
  put(b, kWs[pick(sizeof kWs / sizeof *kWs)]);
}

/* A string literal: plain, escaped in one of several ways, or long. */
static void str(Buf *b, const char *base) {
  static const char *const kEsc[] = {"\\\"", "\\\\", "\\/", "\\u0041", "\\n", "\\u00e9"};
  char tmp[256];
  put(b, "\"");
  switch (pick(24)) {
    case 0:
      snprintf(tmp, sizeof tmp, "%s%s", base, kEsc[pick(sizeof kEsc / sizeof *kEsc)]);
      put(b, tmp);
      break;
    case 1: { /* long: 36 to 200 bytes */
      unsigned n = 36 + pick(165);
      for (unsigned i = 0; i < n; i++) tmp[i] = (char)('a' + (i + n) % 26);
      tmp[n] = 0;
      put(b, tmp);
      break;
    }
    case 2: /* spells a member inside the string */
      put(b, base), put(b, "\\\"resourceVersion\\\":\\\"999\\\",\\\"uid\\\":\\\"fake\\\"");
      break;
    default:
      put(b, base);
  }
  put(b, "\"");
}

static void key(Buf *b, const char *k) {
  ws(b);
  if (pick(300) == 0) put(b, "\"\\u006eame\""); /* an escaped key (spells "name") */
  else put(b, "\""), put(b, k), put(b, "\"");
  ws(b);
  put(b, ":");
  ws(b);
}

/* A value that holds hostile look-alikes: nested metadata, strings spelling members. */
static void decoy(Buf *b, int depth) {
  switch (depth > 2 ? 3 : pick(5)) {
    case 0:
      put(b, "{"), key(b, "metadata"), put(b, "{"), key(b, "name"), str(b, "decoy"), put(b, ","), key(b, "resourceVersion");
      put(b, "\"1\""), put(b, ","), key(b, "uid"), put(b, "\"u-decoy\"}"), put(b, ","), key(b, "x"), decoy(b, depth + 1);
      put(b, "}");
      break;
    case 1:
      put(b, "["), decoy(b, depth + 1), put(b, ","), ws(b), put(b, "\"]}{\\\"\""), put(b, "]");
      break;
    case 2:
      put(b, "{"), key(b, "resourceVersion"), str(b, "7"), put(b, ","), key(b, "s"), put(b, "\"{\\\"uid\\\":\\\"u\\\"}\""), put(b, "}");
      break;
    default:
      str(b, "\\\"metadata\\\":{\\\"name\\\":\\\"no\\\"}");
  }
}

static void metadata(Buf *b) {
  static const char *const kKeys[] = {"namespace", "name", "uid", "resourceVersion", "generation", "deletionTimestamp",
                                      "labels", "managedFields", "annotations"};
  enum { kN = sizeof kKeys / sizeof *kKeys };
  unsigned order[kN + 4], n = 0;
  for (unsigned i = 0; i < kN; i++)
    if (pick(6) || i == 1 || i == 3) order[n++] = i;
  for (unsigned d = pick(3); d > 0; d--) { /* duplicates of a plain member (never managedFields) */
    unsigned k = pick(kN);
    if (k != 7) order[n++] = k;
  }
  for (unsigned i = n; i > 1; i--) { /* shuffled */
    unsigned j = pick(i), t = order[i - 1];
    order[i - 1] = order[j], order[j] = t;
  }
  bool mf = false;
  put(b, "{");
  for (unsigned i = 0; i < n; i++) {
    unsigned k = order[i];
    if (k == 7 && mf) continue;
    if (i) put(b, ",");
    key(b, kKeys[k]);
    char v[32];
    switch (k) {
      case 4:
        switch (pick(6)) {
          case 0: put(b, "null"); break;
          case 1: put(b, "-3"); break;
          case 2: put(b, "\"5\""); break;
          default: snprintf(v, sizeof v, "%u", pick(100000)), put(b, v);
        }
        break;
      case 5:
        if (pick(2)) put(b, "null");
        else str(b, "2026-12-05T14:00:00Z");
        break;
      case 6:
      case 8:
        decoy(b, 0);
        break;
      case 7:
        mf = true;
        put(b, "[{"), key(b, "manager"), str(b, "po"), put(b, ","), key(b, "fieldsV1"), decoy(b, 1), put(b, "}]");
        break;
      default:
        if (pick(60) == 0) {
          put(b, pick(2) ? "12" : "null");
        } else {
          snprintf(v, sizeof v, "%s%u", k == 2 ? "u-" : k == 3 ? "" : "n", pick(50));
          str(b, v);
        }
    }
  }
  ws(b);
  put(b, "}");
}

static void event(Buf *b) {
  static const char *const kTypes[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "MODIFIED\\u0000"};
  bool meta_first = pick(2), dup_type = pick(10) == 0;
  ws(b);
  put(b, "{");
  if (pick(2)) key(b, "type"), put(b, "\""), put(b, kTypes[pick(6)]), put(b, "\","), ws(b);
  key(b, "object");
  put(b, "{");
  key(b, "kind"), put(b, "\"ServiceDefaults\",");
  if (meta_first) key(b, "metadata"), metadata(b), put(b, ",");
  key(b, "spec"), decoy(b, 0), put(b, ",");
  key(b, "status"), decoy(b, 0);
  if (!meta_first) put(b, ","), key(b, "metadata"), metadata(b);
  ws(b);
  put(b, "}");
  if (dup_type || pick(4) == 0) put(b, ","), key(b, "type"), put(b, "\""), put(b, kTypes[pick(6)]), put(b, "\"");
  ws(b);
  put(b, "}");
  ws(b);
}

static const char *meta_str(json_object *md, const char *k, bool *ok) {
  json_object *v;
  if (!json_object_object_get_ex(md, k, &v)) return "";
  if (!json_object_is_type(v, json_type_string)) *ok = false;
  return json_object_get_string(v);
}

typedef struct {
  unsigned cases, parsed, scanned, fields_checked, prefixes, cuts, first_only;
} Counts;

/* One event: the scan's reading agrees with json-c's wherever the scan says it read it. */
static void check(const char *text, size_t len, Counts *c) {
  c->cases++;
  json_tokener *tok = json_tokener_new();
  json_object *ev = json_tokener_parse_ex(tok, text, (int)len);
  bool parsed = json_tokener_get_error(tok) == json_tokener_success;
  size_t used = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  /* scanned in a copy of exactly len bytes (no NUL after): a read past the end is a heap overflow
   * that valgrind or ASan names */
  char *exact = malloc(len);
  assert_non_null(exact);
  memcpy(exact, text, len);
  po_JsonScanEvent_ e;
  bool scanned = po_JsonScan_Event_(exact, exact + len, &e);
  if (scanned) { /* the spans, moved back into text (NUL-terminated, for json-c) */
    e.object = text + (e.object - exact);
    e.end = text + (e.end - exact);
  }
  /* a prefix cut anywhere before the event's end (a stream split there): never read as an event,
   * and never read past */
  size_t whole = scanned ? (size_t)(e.end - text) : len;
  size_t prefix = whole > 1 ? (size_t)(next() % (whole - 1)) + 1 : 0;
  if (prefix < whole) {
    po_JsonScanEvent_ part;
    if (po_JsonScan_Event_(exact, exact + prefix, &part) && scanned)
      fail_msg("a prefix of %zu bytes of a %zu-byte event was read as an event: %s", prefix, whole, text);
    c->prefixes++;
  }
  free(exact);
  if (!parsed) {
    json_object_put(ev);
    return; /* the scan's contract is for accepted JSON */
  }
  c->parsed++;
  if (!scanned) {
    json_object_put(ev);
    return;
  }
  c->scanned++;
  json_object *type = NULL, *obj = NULL, *md = NULL;
  bool ok = true;
  if (!json_object_object_get_ex(ev, "type", &type) || !json_object_object_get_ex(ev, "object", &obj) ||
      !json_object_object_get_ex(obj, "metadata", &md)) {
    fail_msg("the scan read an event json-c finds no type/object/metadata in: %s", text);
    return; /* fail_msg does not return; clang cannot see that */
  }
  const char *ns = meta_str(md, "namespace", &ok), *name = meta_str(md, "name", &ok), *uid = meta_str(md, "uid", &ok),
             *rv = meta_str(md, "resourceVersion", &ok);
  json_object *g, *del;
  int64_t gen = json_object_object_get_ex(md, "generation", &g) && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0;
  bool deleting = json_object_object_get_ex(md, "deletionTimestamp", &del) && del != NULL;
  if (!ok || strcmp(e.type, json_object_get_string(type)) != 0 || strcmp(e.ns, ns) || strcmp(e.name, name) ||
      strcmp(e.uid, uid) || strcmp(e.rv, rv) || e.generation != gen || e.deleting != deleting) {
    fail_msg("scan and json-c disagree: type %s/%s ns %s/%s name %s/%s uid %s/%s rv %s/%s gen %lld/%lld del %d/%d in: %s",
             e.type, json_object_get_string(type), e.ns, ns, e.name, name, e.uid, uid, e.rv, rv, (long long)e.generation,
             (long long)gen, e.deleting, deleting, text);
  }
  /* the event ends where json-c's parse ends (it may take the whitespace after it too) */
  size_t end = (size_t)(e.end - text);
  assert_true(end <= used && end > 0 && text[end - 1] == '}');
  for (size_t i = end; i < used; i++) assert_non_null(strchr(" \t\r\n", text[i]));
  char *copy = strndup(e.object, e.object_len);
  assert_non_null(copy);
  json_object *o2 = json_tokener_parse(copy);
  if (!json_object_equal(o2, obj)) fail_msg("the object's span is not json-c's object: %s", text);
  /* the echo's bytes as the informer caches them: managedFields cut, where the event's own scan
   * found it in the same walk (the cut the watch and the informer use) and where a scan of the
   * object alone finds it */
  size_t at = 0, cut = 0;
  bool found = po_JsonScan_ManagedFields_(e.object, e.object_len, &at, &cut);
  if (found != e.managed_cut || (found && (at != e.managed_at || cut != e.managed_len)))
    fail_msg("the event's scan cuts managedFields at %d %zu+%zu, the object's at %d %zu+%zu: %s", e.managed_cut,
             e.managed_at, e.managed_len, found, at, cut, text);
  c->cuts += found;
  /* the first-match walks (a list item's cut, an answer's metadata) stop early but find the same
   * (the generator writes each key once); they may also read objects the whole walk gives up on
   * (an escaped key after metadata) */
  size_t at1 = 0, cut1 = 0, mlen = 0, mlen1 = 0;
  const char *mv = NULL, *mv1 = NULL;
  bool found1 = po_JsonScan_ManagedFieldsFirst_(e.object, e.object_len, &at1, &cut1);
  if (found && (!found1 || at1 != at || cut1 != cut)) fail_msg("the first-match cut differs: %s", text);
  bool m_last = po_JsonScan_Member_(e.object, e.object_len, "metadata", &mv, &mlen),
       m_first = po_JsonScan_MemberFirst_(e.object, e.object_len, "metadata", &mv1, &mlen1);
  if (!m_first || (m_last && (mv != mv1 || mlen != mlen1))) fail_msg("the first metadata member differs: %s", text);
  if (!found && found1) { /* a cut only the early stop reads: it must still make the object without managedFields */
    char *c1 = strndup(e.object, e.object_len);
    assert_non_null(c1);
    memmove(c1 + at1, c1 + at1 + cut1, e.object_len - at1 - cut1 + 1);
    json_object *o4 = json_tokener_parse(c1), *want = NULL;
    assert_int_equal(json_object_deep_copy(obj, &want, NULL), 0);
    json_object *wmd = NULL;
    json_object_object_get_ex(want, "metadata", &wmd);
    json_object_object_del(wmd, "managedFields");
    if (!o4 || !json_object_equal(o4, want)) fail_msg("the first-match cut is wrong: %s -> %s", text, c1);
    json_object_put(o4);
    json_object_put(want);
    free(c1);
    c->first_only++;
  }
  if (found) {
    memmove(copy + at, copy + at + cut, e.object_len - at - cut + 1);
    json_object *o3 = json_tokener_parse(copy);
    json_object_object_del(md, "managedFields");
    if (!o3 || !json_object_equal(o3, obj)) fail_msg("managedFields cut wrong: %s -> %s", text, copy);
    json_object_put(o3);
  }
  c->fields_checked++;
  json_object_put(o2);
  free(copy);
  json_object_put(ev);
}

static void test_scan_event_against_jsonc(void **state) {
  (void)state;
  uint64_t seed = 0x26125eed;
  const char *env = getenv("PO_TEST_SEED");
  if (env && *env) seed = strtoull(env, NULL, 0);
  print_message("seed 0x%llx (PO_TEST_SEED)\n", (unsigned long long)seed);
  g_rand = seed;
  Counts c = {0};
  Buf b = {0};
  for (unsigned i = 0; i < kCases; i++) {
    b.len = 0;
    event(&b);
    check(b.p, b.len, &c);
  }
  print_message("%u events, %u json-c accepted, %u read by the scan (the rest parsed), all fields agree; %u prefixes "
                "not read; %u managedFields cut (%u only by the first-match walk)\n", c.cases, c.parsed, c.scanned, c.prefixes, c.cuts,
                c.first_only);
  assert_true(c.cuts > kCases / 50);
  /* the generator reaches both ways: events the scan reads and events it leaves to the parse */
  assert_true(c.scanned > kCases / 20);
  assert_true(c.parsed - c.scanned > kCases / 20);
  free(b.p);
}

/* A string value skipped where json-c's parse of it ends: strings of 0 to 80 bytes with an escape
 * (\\", \\\\, \\n, \\u0041) at every place, around the byte-by-byte part's end (24 bytes) and
 * memchr's part after it, then the same text cut short at every length (unterminated: NULL, and
 * never a read past the cut: ASan's build reads only the bytes given, copied to a buffer of that
 * size). */
static void test_skip_string_against_jsonc(void **state) {
  (void)state;
  static const char *const kEsc[] = {"\\\"", "\\\\", "\\n", "\\u0041"};
  json_tokener *tok = json_tokener_new();
  assert_non_null(tok);
  unsigned checked = 0;
  for (size_t len = 0; len <= 80; len++) {
    for (size_t at = 0; at <= len; at++) {
      for (size_t e = 0; e < 5; e++) { /* e == 4: no escape */
        char text[128];
        size_t n = 0;
        text[n++] = '"';
        for (size_t i = 0; i < len; i++) {
          if (i == at && e < 4) {
            memcpy(text + n, kEsc[e], strlen(kEsc[e]));
            n += strlen(kEsc[e]);
          } else {
            text[n++] = (char)('a' + i % 26);
          }
        }
        text[n++] = '"';
        text[n++] = ',';
        json_tokener_reset(tok);
        json_object *o = json_tokener_parse_ex(tok, text, (int)n);
        assert_true(json_object_is_type(o, json_type_string));
        size_t want = json_tokener_get_parse_end(tok);
        json_object_put(o);
        for (size_t cut = 1; cut <= n; cut++) {
          char *copy = malloc(cut);
          assert_non_null(copy);
          memcpy(copy, text, cut);
          const char *got = po_JsonScan_SkipValue_(copy, copy + cut);
          if (cut >= want) {
            if (!got || (size_t)(got - copy) != want) fail_msg("%.*s (cut at %zu): skipped to %td, json-c to %zu", (int)n, text, cut, got ? got - copy : -1, want);
          } else if (got) {
            fail_msg("%.*s cut at %zu (unterminated): skipped to %td", (int)n, text, cut, got - copy);
          }
          free(copy);
          checked++;
        }
      }
    }
  }
  json_tokener_free(tok);
  print_message("%u strings and their prefixes skipped where json-c ends them\n", checked);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_scan_event_against_jsonc),
                                     cmocka_unit_test(test_skip_string_against_jsonc)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
