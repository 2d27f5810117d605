/* Scans of accepted JSON text (json_scan.h). */
#include "json_scan.h"

#include <stdint.h>
#include <string.h>

static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

static const char *skip_ws(const char *s, const char *end) {
  while (s < end && is_ws(*s)) s++;
  return s;
}

/* s at a key's opening quote: past the closing one, NULL when unterminated; *escaped set when
 * the string holds an escape (a key with one might spell any name). memchr's word-at-a-time
 * search, not a byte loop. */
static const char *skip_string(const char *s, const char *end, bool *escaped) {
  for (s++; s < end;) {
    const char *q = memchr(s, '"', (size_t)(end - s));
    if (!q) return NULL;
    const char *bs = memchr(s, '\\', (size_t)(q - s));
    if (!bs) return q + 1;
    *escaped = true;
    if (end - bs < 2) return NULL; /* the text ends inside the escape */
    s = bs + 2;                    /* past the escaped byte (a quote, a backslash, anything) */
  }
  return NULL;
}

/* A value's string, past its closing quote, where escapes need not be told: one memchr for the
 * next quote, which ends the string unless an odd run of backslashes stands before it (a search
 * for backslashes too was a second call per string: most of a target's echo is strings). */
static const char *skip_string_value(const char *s, const char *end) {
  for (s++; s < end;) {
    const char *q = memchr(s, '"', (size_t)(end - s));
    if (!q) return NULL;
    const char *b = q;
    while (b > s && b[-1] == '\\') b--; /* s[-1] is a quote: the opening one, or an escaped one */
    if (((q - b) & 1) == 0) return q + 1;
    s = q + 1;
  }
  return NULL;
}

const char *po_JsonScan_SkipValue_(const char *s, const char *end) {
  if (s >= end) return NULL;
  if (*s == '"') return skip_string_value(s, end);
  if (*s != '{' && *s != '[') {
    while (s < end && *s != ',' && *s != '}' && *s != ']' && !is_ws(*s)) s++;
    return s;
  }
  size_t depth = 0;
  while (s < end) {
    char c = *s;
    if (c == '"') {
      if (!(s = skip_string_value(s, end))) return NULL;
      continue;
    }
    if (c == '{' || c == '[') {
      depth++;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return s + 1;
    }
    s++;
  }
  return NULL;
}

/* One member of an object: its key's bytes (without quotes), its value's span, and where the
 * member starts (its key's quote) and ends (its value's end). */
typedef struct {
  const char *start, *key, *value, *end;
  size_t key_len;
} Member;

/* Walks the members of the object s[0..n) (s at '{' after whitespace), calling fn for each (1:
 * go on, 2: enough, 0: give up); false when the text is not an object, a key holds an escape,
 * or fn gave up. */
static bool each_member_to(const char *s, size_t n, int (*fn)(void *ctx, const Member *m), void *ctx,
                           const char **close);

static bool each_member(const char *s, size_t n, int (*fn)(void *ctx, const Member *m), void *ctx) {
  return each_member_to(s, n, fn, ctx, NULL);
}

/* Where a member's value ends, past it (NULL: it does not end before end); m has its key and
 * value start. */
typedef const char *(*ValueEnd)(void *ctx, const Member *m, const char *end);

static const char *skip_value(void *ctx, const Member *m, const char *end) {
  (void)ctx;
  return po_JsonScan_SkipValue_(m->value, end);
}

static bool each_member_by(const char *s, size_t n, int (*fn)(void *ctx, const Member *m), void *ctx,
                           const char **close, ValueEnd value_end);

/* The same, *close (when asked) past the object's '}' when the walk reached it. */
static bool each_member_to(const char *s, size_t n, int (*fn)(void *ctx, const Member *m), void *ctx,
                           const char **close) {
  return each_member_by(s, n, fn, ctx, close, skip_value);
}

/* The same, each member's value's end found by value_end (which may walk into it). */
static bool each_member_by(const char *s, size_t n, int (*fn)(void *ctx, const Member *m), void *ctx,
                           const char **close, ValueEnd value_end) {
  const char *end = s + n;
  s = skip_ws(s, end);
  if (s >= end || *s != '{') return false;
  s = skip_ws(s + 1, end);
  if (s < end && *s == '}') {
    if (close) *close = s + 1;
    return true;
  }
  for (;;) {
    if (s >= end || *s != '"') return false;
    bool esc = false;
    Member m = {.start = s, .key = s + 1};
    const char *ke = skip_string(s, end, &esc);
    if (!ke || esc) return false;
    m.key_len = (size_t)(ke - 1 - m.key);
    s = skip_ws(ke, end);
    if (s >= end || *s != ':') return false;
    m.value = skip_ws(s + 1, end);
    if (!(s = m.end = value_end(ctx, &m, end))) return false;
    int r = fn(ctx, &m);
    if (r != 1) return r == 2;
    s = skip_ws(s, end);
    if (s < end && *s == ',') {
      s = skip_ws(s + 1, end);
      continue;
    }
    if (s >= end || *s != '}') return false;
    if (close) *close = s + 1;
    return true;
  }
}

typedef struct {
  const char *key;
  size_t key_len;
  Member found, prev; /* the last match, and the member before it (start NULL: none) */
  Member last;        /* the member seen last */
  const char *after;  /* the start of the member after the match (NULL: none yet) */
  bool any;
  bool first;         /* the first match is enough (the walk ends at it) */
} Find;

static int find_member(void *ctx, const Member *m) {
  Find *f = ctx;
  if (f->any && !f->after) f->after = m->start;
  if (m->key_len == f->key_len && memcmp(m->key, f->key, m->key_len) == 0) {
    f->found = *m;
    f->prev = f->last;
    f->after = NULL;
    f->any = true;
    if (f->first) return 2; /* the member after it is found below, its value not skipped */
  }
  f->last = *m;
  return 1;
}

static bool find(const char *s, size_t n, const char *key, bool first, Find *f) {
  *f = (Find){.key = key, .key_len = strlen(key), .first = first};
  if (!each_member(s, n, find_member, f) || !f->any) return false;
  if (!first) return true;
  /* The walk stopped at the match: the member after it starts past a comma (a key's quote), or
   * the object closes. Not skipping that member's value saves a pass over what follows (a
   * target's spec after its metadata). */
  const char *end = s + n, *p = skip_ws(f->found.end, end);
  if (p < end && *p == '}') return true;
  if (p >= end || *p != ',') return false;
  p = skip_ws(p + 1, end);
  if (p >= end || *p != '"') return false;
  f->after = p;
  return true;
}

static bool member(const char *s, size_t n, const char *key, bool first, const char **value, size_t *value_len) {
  Find f;
  if (!find(s, n, key, first, &f)) return false;
  *value = f.found.value;
  *value_len = (size_t)(f.found.end - f.found.value);
  return true;
}

bool po_JsonScan_Member_(const char *s, size_t n, const char *key, const char **value, size_t *value_len) {
  return member(s, n, key, false, value, value_len);
}

bool po_JsonScan_MemberFirst_(const char *s, size_t n, const char *key, const char **value, size_t *value_len) {
  return member(s, n, key, true, value, value_len);
}

/* The cut of managedFields (the last, or the first) in the metadata member md of the object at s. */
static bool cut_in(const char *s, const Member *md, bool first, size_t *at, size_t *len) {
  Find f;
  if (!find(md->value, (size_t)(md->end - md->value), "managedFields", first, &f)) return false;
  /* With the comma after it when a member follows (up to that member's key), else with the
   * comma before it (from the previous member's end): the object stays well formed. */
  const char *from = f.found.start, *to = f.after;
  if (!to) {
    to = f.found.end;
    if (f.prev.start) from = f.prev.end;
  }
  *at = (size_t)(from - s);
  *len = (size_t)(to - from);
  return true;
}

static bool managed_fields(const char *s, size_t n, bool first, size_t *at, size_t *len) {
  Find m;
  return find(s, n, "metadata", first, &m) && cut_in(s, &m.found, first, at, len);
}

bool po_JsonScan_ManagedFields_(const char *s, size_t n, size_t *at, size_t *len) {
  return managed_fields(s, n, false, at, len);
}

bool po_JsonScan_ManagedFieldsFirst_(const char *s, size_t n, size_t *at, size_t *len) {
  return managed_fields(s, n, true, at, len);
}

int po_JsonScan_NextElement_(const char **at, const char *end, size_t index, const char **value, size_t *len) {
  const char *s = skip_ws(*at, end);
  if (s >= end || *s != (index ? ',' : '[')) {
    if (s < end && *s == ']' && index) {
      *at = s + 1;
      return 0;
    }
    return -1;
  }
  s = skip_ws(s + 1, end);
  if (!index && s < end && *s == ']') {
    *at = s + 1;
    return 0;
  }
  const char *e = po_JsonScan_SkipValue_(s, end);
  if (!e || e == s) return -1;
  *value = s;
  *len = (size_t)(e - s);
  *at = e;
  return 1;
}

/* ---- a watch event's head ---------------------------------------------------------------- */

bool po_JsonScan_PlainString_(const char *value, size_t n, char *buf, size_t size) {
  if (size) buf[0] = 0;
  if (n < 2 || *value != '"' || n - 2 >= size || memchr(value + 1, '\\', n - 2)) return false;
  memcpy(buf, value + 1, n - 2);
  buf[n - 2] = 0;
  return true;
}

static bool plain_string(const Member *m, char *buf, size_t size) {
  return po_JsonScan_PlainString_(m->value, (size_t)(m->end - m->value), buf, size);
}

static bool is_key(const Member *m, const char *key, size_t len) {
  return m->key_len == len && memcmp(m->key, key, len) == 0;
}

/* The event walked once: its top level, and its object's top level as the object's end is looked
 * for (not skipped whole and then walked again for metadata, and again for managedFields: three
 * passes over a target's 20 KB spec were a tenth of a target echo's cost). */
typedef struct {
  po_JsonScanEvent_ *e;
  Member meta_first, meta_last; /* the object's first and last metadata members */
  unsigned metas;
  bool walked; /* the object's members walked (false: skipped, as a key with an escape stops a walk) */
} EventWalk;

static int object_member(void *ctx, const Member *m) {
  EventWalk *w = ctx;
  if (is_key(m, "metadata", 8)) {
    if (!w->metas++) w->meta_first = *m;
    w->meta_last = *m;
  }
  return 1;
}

static const char *event_value_end(void *ctx, const Member *m, const char *end) {
  EventWalk *w = ctx;
  if (is_key(m, "object", 6) && m->value < end && *m->value == '{') {
    const char *close = NULL;
    w->metas = 0;
    w->walked = each_member_to(m->value, (size_t)(end - m->value), object_member, w, &close) && close;
    if (w->walked) return close;
  }
  return po_JsonScan_SkipValue_(m->value, end);
}

static int event_member(void *ctx, const Member *m) {
  po_JsonScanEvent_ *e = ((EventWalk *)ctx)->e;
  if (is_key(m, "type", 4)) {
    if (!plain_string(m, e->type, sizeof e->type)) return 0;
  } else if (is_key(m, "object", 6)) {
    e->object = m->value;
    e->object_len = (size_t)(m->end - m->value);
  }
  return 1;
}

/* A member of metadata: the strings asked for (the last of a duplicate key, as json-c keeps). */
static int meta_member(void *ctx, const Member *m) {
  po_JsonScanEvent_ *e = ctx;
  struct {
    const char *key;
    size_t len;
    char *buf;
    size_t size;
  } const want[] = {{"namespace", 9, e->ns, sizeof e->ns},
                    {"name", 4, e->name, sizeof e->name},
                    {"uid", 3, e->uid, sizeof e->uid},
                    {"resourceVersion", 15, e->rv, sizeof e->rv}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (is_key(m, want[i].key, want[i].len)) return plain_string(m, want[i].buf, want[i].size) ? 1 : 0;
  if (is_key(m, "deletionTimestamp", 17)) {
    e->deleting = !(m->end - m->value == 4 && memcmp(m->value, "null", 4) == 0);
  } else if (is_key(m, "generation", 10)) {
    int64_t g = 0;
    for (const char *p = m->value; p < m->end; p++) {
      if (*p < '0' || *p > '9' || g > (INT64_MAX - 9) / 10) return 0; /* not a plain count: the parse says */
      g = g * 10 + (*p - '0');
    }
    e->generation = g;
  }
  return 1;
}

bool po_JsonScan_Event_(const char *s, const char *end, po_JsonScanEvent_ *e) {
  *e = (po_JsonScanEvent_){.generation = 0};
  s = skip_ws(s, end);
  EventWalk w = {.e = e};
  if (!each_member_by(s, (size_t)(end - s), event_member, &w, &e->end, event_value_end) || !e->object || !*e->type)
    return false;
  Member md;
  if (w.walked) { /* the last object member's walk (e->object is the last one's too) */
    if (!w.metas) return false;
    md = w.meta_first;
    e->managed_cut = cut_in(e->object, &w.meta_last, false, &e->managed_at, &e->managed_len);
  } else {
    Find f;
    if (!find(e->object, e->object_len, "metadata", true, &f)) return false;
    md = f.found;
    e->managed_cut = managed_fields(e->object, e->object_len, false, &e->managed_at, &e->managed_len);
  }
  return each_member(md.value, (size_t)(md.end - md.value), meta_member, e) && *e->name && *e->rv;
}
