/* Scans of accepted JSON text (json_scan.h). */
#include "json_scan.h"

#include <string.h>

static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

static const char *skip_ws(const char *s, const char *end) {
  while (s < end && is_ws(*s)) s++;
  return s;
}

/* s at an opening quote: past the closing one, NULL when unterminated; *escaped set when the
 * string holds an escape. */
static const char *skip_string(const char *s, const char *end, bool *escaped) {
  for (s++; s < end; s++) {
    if (*s == '\\') {
      *escaped = true;
      s++;
    } else if (*s == '"') {
      return s + 1;
    }
  }
  return NULL;
}

const char *po_JsonScan_SkipValue_(const char *s, const char *end) {
  bool esc = false;
  if (s >= end) return NULL;
  if (*s == '"') return skip_string(s, end, &esc);
  if (*s != '{' && *s != '[') {
    while (s < end && *s != ',' && *s != '}' && *s != ']' && !is_ws(*s)) s++;
    return s;
  }
  size_t depth = 0;
  while (s < end) {
    char c = *s;
    if (c == '"') {
      if (!(s = skip_string(s, end, &esc))) return NULL;
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

/* Walks the members of the object s[0..n) (s at '{' after whitespace), calling fn for each;
 * false when the text is not an object or a key holds an escape. */
static bool each_member(const char *s, size_t n, bool (*fn)(void *ctx, const Member *m), void *ctx) {
  const char *end = s + n;
  s = skip_ws(s, end);
  if (s >= end || *s != '{') return false;
  s = skip_ws(s + 1, end);
  if (s < end && *s == '}') return true;
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
    if (!(s = m.end = po_JsonScan_SkipValue_(m.value, end))) return false;
    if (!fn(ctx, &m)) return false;
    s = skip_ws(s, end);
    if (s < end && *s == ',') {
      s = skip_ws(s + 1, end);
      continue;
    }
    return s < end && *s == '}';
  }
}

typedef struct {
  const char *key;
  size_t key_len;
  Member found, prev; /* the last match, and the member before it (start NULL: none) */
  Member last;        /* the member seen last */
  const char *after;  /* the start of the member after the match (NULL: none yet) */
  bool any;
} Find;

static bool find_member(void *ctx, const Member *m) {
  Find *f = ctx;
  if (f->any && !f->after) f->after = m->start;
  if (m->key_len == f->key_len && memcmp(m->key, f->key, m->key_len) == 0) {
    f->found = *m;
    f->prev = f->last;
    f->after = NULL;
    f->any = true;
  }
  f->last = *m;
  return true;
}

static bool find(const char *s, size_t n, const char *key, Find *f) {
  *f = (Find){.key = key, .key_len = strlen(key)};
  return each_member(s, n, find_member, f) && f->any;
}

bool po_JsonScan_Member_(const char *s, size_t n, const char *key, const char **value, size_t *value_len) {
  Find f;
  if (!find(s, n, key, &f)) return false;
  *value = f.found.value;
  *value_len = (size_t)(f.found.end - f.found.value);
  return true;
}

bool po_JsonScan_ManagedFields_(const char *s, size_t n, size_t *at, size_t *len) {
  const char *md;
  size_t md_len;
  Find f;
  if (!po_JsonScan_Member_(s, n, "metadata", &md, &md_len) || !find(md, md_len, "managedFields", &f)) return false;
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
