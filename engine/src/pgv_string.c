/* Envoy's protoc-gen-validate string and bytes rules (StringRules, BytesRules), as the Go
 * validators go-control-plane generates judge them: lengths in runes or bytes, const, prefix,
 * suffix, contains, not_contains, in, not_in, the well-known formats (hostname, ip, ipv4, ipv6,
 * address, uuid, the HTTP header name and value regexes, strict or not) and `pattern`.
 *
 * `pattern` is RE2 syntax. The patterns Envoy's API uses are small (6 in the snapshot:
 * `^[0-9a-zA-Z_\-\./~:]+$`, `^$|^.*\.mmdb$`, `^[^?#]+[^?#/]$`, ...): they are translated to
 * POSIX extended syntax and run by the C library's matcher in a UTF-8 locale (so `.` is a rune,
 * as in RE2), each compiled once, on the value's bytes with its length (a NUL is a character). A construct without an exact POSIX form (`\b`, `(?i)`, lazy repeats, `\p{..}`,
 * `\x..`, a non-ASCII class) is not translated: the rule is then not judged, and po_Pgv_Unjudged
 * says so. `email`, `uri` and `uri_ref` follow Go's net/mail and net/url parsers, which are not
 * reproduced here: not judged either (no field of the snapshot uses them). IP addresses are read
 * with inet_pton, which takes what Go's net.ParseIP takes (dotted quads without leading zeros,
 * RFC 4291 text, no zone); an IPv4-mapped IPv6 address counts as IPv4, as PGV's `To4()` does. */
#include <arpa/inet.h>
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgv_internal.h"

static size_t utf8_chars(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

/* PGV's strict HTTP_HEADER_NAME, ^:?[0-9a-zA-Z!#$%&'*+-.^_|~\x60]+$, read as RE2 reads it: `+-.`
 * in the class is a range, so ',' (between '+' and '-') is a header-name character to Envoy. */
static bool header_name_ok(const char *s, size_t n) {
  static const char kTchar[] = "!#$%&'*+,-.^_|~`";
  size_t i = 0;
  if (n && s[0] == ':') i = 1;
  if (i == n) return false;
  for (; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c && strchr(kTchar, c)))) return false;
  }
  return true;
}

static bool header_value_ok(const char *s, size_t n, bool strict) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (strict ? ((c <= 0x08) || (c >= 0x0A && c <= 0x1F) || c == 0x7F) : (c == 0 || c == '\n' || c == '\r')) return false;
  }
  return true;
}

/* PGV's hostname check: NULL, or why not. A trailing dot is allowed, letters in any case. */
static const char *hostname_why(const char *s, size_t n) {
  if (n > 253) return "more than 253 characters";
  if (n && s[n - 1] == '.') n--;
  for (size_t i = 0; i <= n;) {
    size_t j = i;
    while (j < n && s[j] != '.') j++;
    size_t l = j - i;
    if (l == 0 || l > 63) return "a label is empty or longer than 63 characters";
    if (s[i] == '-' || s[j - 1] == '-') return "a label starts or ends with '-'";
    for (size_t k = i; k < j; k++) {
      unsigned char c = (unsigned char)s[k] | 0x20;
      if (!((c >= 'a' && c <= 'z') || (s[k] >= '0' && s[k] <= '9') || s[k] == '-')) {
        return "only letters, digits, '-' and '.' between labels";
      }
    }
    i = j + 1;
  }
  return NULL;
}

/* 4: IPv4 (or IPv4-mapped IPv6), 6: other IPv6, 0: no address. */
static int ip_kind(const char *s, size_t n) {
  char buf[64];
  unsigned char out[16];
  if (n >= sizeof buf || memchr(s, 0, n)) return 0;
  memcpy(buf, s, n);
  buf[n] = 0;
  if (inet_pton(AF_INET, buf, out) == 1) return 4;
  if (inet_pton(AF_INET6, buf, out) != 1) return 0;
  static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(out, kMapped, 12) ? 6 : 4;
}

static bool uuid_ok(const char *s, size_t n) {
  if (n != 36) return false;
  for (size_t i = 0; i < n; i++) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    unsigned char c = (unsigned char)s[i];
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))) return false;
  }
  return true;
}

/* ---- pattern: RE2 to POSIX ERE ---- */

static void put(po_TextBuf *t, const char *s) { po_TextBuf_Puts(t, s); }

/* The ASCII set an escape inside or outside a class stands for; false: not translatable. */
static bool escape_set(char c, bool set[128]) {
  switch (c) {
    case 'd': for (int i = '0'; i <= '9'; i++) set[i] = true; return true;
    case 'w':
      for (int i = 0; i < 128; i++) set[i] |= (i >= '0' && i <= '9') || (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z') || i == '_';
      return true;
    case 's': set['\t'] = set['\n'] = set['\f'] = set['\r'] = set[' '] = true; return true;
    case 'n': set['\n'] = true; return true;
    case 't': set['\t'] = true; return true;
    default:
      /* RE2 takes any punctuation escaped as itself */
      if ((unsigned char)c < 128 && strchr("\\.-/^$*+?()[]{}|#&~!\"',:;<=>@_`%", c)) return set[(unsigned char)c] = true;
      return false;
  }
}

/* A POSIX bracket expression for `set` (negated when `neg`): ']' first, '-' last, '^' not first. */
static void put_set(po_TextBuf *t, const bool set[128], bool neg) {
  char body[160];
  size_t n = 0;
  if (set[']']) body[n++] = ']';
  for (int c = 1; c < 128; c++) {
    if (set[c] && c != ']' && c != '-' && c != '^') body[n++] = (char)c;
  }
  if (set['^']) body[n++] = '^';
  if (set['-']) body[n++] = '-';
  if (n == 1 && body[0] == '^' && !neg) {
    put(t, "\\^");
    return;
  }
  /* "^-" would read "[^-]" as a negation: "-^" instead, '-' first being literal too */
  if (n == 2 && body[0] == '^') body[0] = '-', body[1] = '^';
  po_TextBuf_Put(t, neg ? "[^" : "[", neg ? 2 : 1);
  po_TextBuf_Put(t, body, n);
  po_TextBuf_Put(t, "]", 1);
}

/* A class starting after '[' at *p; advances past its ']'. */
static bool translate_class(const char **p, po_TextBuf *t) {
  const char *s = *p;
  bool neg = *s == '^', set[128] = {false};
  if (neg) s++;
  bool first = true;
  while (*s && (*s != ']' || first)) {
    first = false;
    int lo;
    if (*s == '\\') {
      if (!s[1]) return false;
      bool one[128] = {false};
      if (!escape_set(s[1], one)) return false;
      int count = 0, only = 0;
      for (int i = 0; i < 128; i++) if (one[i]) count++, only = i;
      s += 2;
      if (count != 1 || *s != '-' || s[1] == ']') {
        for (int i = 0; i < 128; i++) set[i] |= one[i];
        continue;
      }
      lo = only;
    } else if (*s == '[') {
      return false; /* [:alpha:] and friends */
    } else {
      if ((unsigned char)*s >= 128) return false;
      lo = (unsigned char)*s++;
    }
    int hi = lo;
    if (*s == '-' && s[1] && s[1] != ']') {
      s++;
      if (*s == '\\') {
        bool one[128] = {false};
        if (!s[1] || !escape_set(s[1], one)) return false;
        hi = -1;
        for (int i = 0; i < 128; i++) if (one[i]) hi = i;
        s += 2;
      } else {
        if ((unsigned char)*s >= 128) return false;
        hi = (unsigned char)*s++;
      }
      if (hi < lo) return false;
    }
    for (int c = lo; c <= hi; c++) set[c] = true;
  }
  if (*s != ']') return false;
  *p = s + 1;
  put_set(t, set, neg);
  return true;
}

/* RE2 `re` as a POSIX ERE, or NULL when it uses something without an exact POSIX form. */
static const char *translate(const char *re, po_Arena *a) {
  po_TextBuf t = {.a = a};
  po_TextBuf_Put(&t, "", 0);
  for (const char *p = re; *p;) {
    char c = *p;
    if (c == '\\') {
      bool set[128] = {false};
      if (!p[1] || !escape_set(p[1], set)) return NULL;
      put_set(&t, set, false);
      p += 2;
    } else if (c == '[') {
      p++;
      if (!translate_class(&p, &t)) return NULL;
    } else if (c == '(') {
      if (p[1] == '?') {
        if (p[2] != ':') return NULL; /* flags, named groups */
        p += 3;
      } else {
        p++;
      }
      put(&t, "(");
    } else if (c == '.') {
      put(&t, "[^\n]"); /* RE2's . leaves out newline */
      p++;
    } else if (strchr("*+?}", c) && p[1] == '?') {
      return NULL; /* lazy repeats: same match set, but keep the translation plain */
    } else if ((unsigned char)c >= 128 || c == '\n') {
      return NULL;
    } else {
      po_TextBuf_Put(&t, p, 1);
      p++;
    }
  }
  return t.oom ? NULL : t.buf;
}


/* Compiled patterns, by their RE2 text, kept in the schema whose rules name them
 * (po_Schema_Cache: made on the first pattern checked, freed with the schema), never in the
 * process: regcomp under a UTF-8 locale costs ~50 µs a pattern, a match ~1 µs, and the rules
 * name a few dozen patterns (Envoy's protos: 6). Past kMaxCached distinct patterns each is
 * compiled per value (slower, as exact). glibc's regexec takes the compiled pattern's own lock,
 * so threads share an entry; the table's lock guards only its filling. */
enum { kMaxCached = 256 };
typedef struct {
  char *re;
  regex_t rx;
  int err; /* regcomp's result: 0 compiled */
} Compiled;
typedef struct {
  pthread_mutex_t lock;
  locale_t utf8; /* (locale_t)0: no C.UTF-8 (glibc before 2.35): bytes, `.` a byte */
  size_t n;
  Compiled *c[kMaxCached]; /* each its own allocation: a hit's address stays while the table grows */
} Patterns;

/* C.UTF-8 into *out ((locale_t)0 when the C library has none); false when out of memory. */
static bool utf8_locale(locale_t *out) {
  errno = 0;
  *out = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  return *out || errno != ENOMEM;
}

static void *patterns_make(void) {
  Patterns *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  if (!utf8_locale(&p->utf8) || pthread_mutex_init(&p->lock, NULL)) {
    if (p->utf8) freelocale(p->utf8);
    free(p);
    return NULL;
  }
  return p;
}

static void patterns_free(void *cache) {
  Patterns *p = cache;
  for (size_t i = 0; i < p->n; i++) {
    if (!p->c[i]->err) regfree(&p->c[i]->rx);
    free(p->c[i]->re);
    free(p->c[i]);
  }
  if (p->utf8) freelocale(p->utf8);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

static const po_SchemaCacheKind kPatterns = {patterns_make, patterns_free};

/* regcomp of `ere` under `utf8` (when there is one). */
static int compile(regex_t *rx, const char *ere, locale_t utf8) {
  locale_t old = utf8 ? uselocale(utf8) : (locale_t)0;
  int err = regcomp(rx, ere, REG_EXTENDED | REG_NOSUB);
  if (utf8) uselocale(old);
  return err;
}

/* The compiled `re` (its POSIX form `ere`) in p, compiled on first use. NULL: *err is regcomp's
 * refusal (REG_ESPACE, or an allocation of the table's, is not kept: a later value tries again),
 * or 0 when the table is full. */
static const regex_t *compiled(Patterns *p, const char *re, const char *ere, int *err) {
  pthread_mutex_lock(&p->lock);
  const regex_t *hit = NULL;
  *err = 0;
  for (size_t i = 0; i < p->n && !hit && !*err; i++) {
    if (strcmp(p->c[i]->re, re)) continue;
    if (p->c[i]->err) *err = p->c[i]->err;
    else hit = &p->c[i]->rx;
  }
  if (!hit && !*err && p->n < kMaxCached) {
    Compiled *c = malloc(sizeof *c);
    char *key = c ? strdup(re) : NULL;
    if (key) c->err = compile(&c->rx, ere, p->utf8);
    if (!key || c->err == REG_ESPACE) {
      *err = REG_ESPACE;
      free(key);
      free(c);
    } else {
      c->re = key;
      p->c[p->n++] = c;
      *err = c->err;
      if (!c->err) hit = &c->rx;
    }
  }
  pthread_mutex_unlock(&p->lock);
  return hit;
}

/* Matches v against the compiled pattern: the bounds are given (REG_STARTEND), so a NUL in the
 * value is a character as in Go's regexp. 1 matches, 0 does not, -1 no verdict. */
static int run(const regex_t *rx, locale_t utf8, upb_StringView v, po_Arena *a) {
  locale_t old = utf8 ? uselocale(utf8) : (locale_t)0;
  regmatch_t span = {.rm_so = 0, .rm_eo = (regoff_t)v.size};
  int e = regexec(rx, v.data ? v.data : "", 1, &span, REG_STARTEND);
  if (utf8) uselocale(old);
  if (e == REG_ESPACE) po_Arena_NoteOutOfMemory_(a);
  return e == 0 ? 1 : e == REG_NOMATCH ? 0 : -1;
}

/* Translated. (Not compiled here: glibc 2.36's regcomp double-frees when an allocation inside it
 * fails, so it runs only where a value meets the pattern; cli_oom fails every allocation.) */
bool po_Pgv_PatternJudged(const char *re, po_Arena *a) { return translate(re, a) != NULL; }

/* `ere` compiled for this value alone: the schema's table full, or not made (out of memory, or
 * no schema). 1, 0 or -1 as pattern_match. */
static int match_once(const char *ere, upb_StringView v, po_Arena *a) {
  locale_t utf8;
  if (!utf8_locale(&utf8)) return po_Arena_NoteOutOfMemory_(a), -1;
  regex_t rx;
  int err = compile(&rx, ere, utf8);
  int r = err ? -1 : run(&rx, utf8, v, a);
  if (!err) regfree(&rx);
  if (utf8) freelocale(utf8);
  if (err == REG_ESPACE) po_Arena_NoteOutOfMemory_(a); /* the C library's malloc: no verdict */
  return r;
}

/* 1 matches, 0 does not, -1 not judged (untranslatable, or the matcher refused it). */
static int pattern_match(const po_Schema *s, const char *re, upb_StringView v, po_Arena *a) {
  const char *ere = translate(re, a);
  if (!ere) return -1;
  Patterns *p = po_Schema_Cache(s, &kPatterns);
  if (!p) return match_once(ere, v, a);
  int err;
  const regex_t *c = compiled(p, re, ere, &err);
  if (c) return run(c, p->utf8, v, a);
  if (!err) return match_once(ere, v, a); /* the table is full */
  if (err == REG_ESPACE) po_Arena_NoteOutOfMemory_(a); /* the C library's malloc: no verdict */
  return -1;
}

/* ---- the rules ---- */

static const char *check_lengths(const upb_Message *k, const upb_MessageDef *kd, upb_StringView v, bool bytes,
                                 const char *q, po_Arena *a) {
  const char *kind = bytes ? "bytes" : "string";
  size_t chars = bytes ? v.size : utf8_chars(v.data, v.size);
  static const struct { const char *name; int kind; } kLens[] = {
      {"len", 0}, {"min_len", 1}, {"max_len", 2}, {"len_bytes", 3}, {"min_bytes", 4}, {"max_bytes", 5}};
  for (size_t i = 0; i < sizeof kLens / sizeof *kLens; i++) {
    const upb_FieldDef *f;
    upb_MessageValue b;
    if (!po_Pgv_Get_(k, kd, kLens[i].name, &f, &b)) continue;
    uint64_t lim = b.uint64_val;
    size_t n = kLens[i].kind >= 3 ? v.size : chars;
    int c = kLens[i].kind % 3;
    if ((c == 0 && n != lim) || (c == 1 && n < lim) || (c == 2 && n > lim)) {
      return po_Arena_Printf(a, "%s violates %s %s %llu (it has %zu)", q, kind, kLens[i].name,
                             (unsigned long long)lim, n);
    }
  }
  return NULL;
}

static bool same(upb_StringView x, upb_StringView y) { return x.size == y.size && !memcmp(x.data, y.data, x.size); }

static const char *check_members(const po_Schema *schema, const upb_Message *k, const upb_MessageDef *kd,
                                 upb_StringView v, bool bytes, const char *q, po_Arena *a) {
  const char *kind = bytes ? "bytes" : "string";
  const upb_FieldDef *f;
  upb_MessageValue b;
  /* proto2 optional: a const of "" is set too, and then means it */
  const upb_FieldDef *cf = upb_MessageDef_FindFieldByName(kd, "const");
  if (cf && upb_Message_Has(k, cf) && !same(v, (b = upb_Message_Get(k, cf)).str_val)) {
    return po_Arena_Printf(a, "%s violates %s const \"%.*s\"", q, kind, (int)b.str_val.size, b.str_val.data);
  }
  static const char *const kAffix[] = {"prefix", "suffix", "contains", "not_contains"};
  for (int i = 0; i < 4; i++) {
    if (!po_Pgv_Get_(k, kd, kAffix[i], &f, &b)) continue;
    upb_StringView s = b.str_val;
    bool has = false;
    if (s.size <= v.size) {
      if (i == 0) has = memcmp(v.data, s.data, s.size) == 0;
      else if (i == 1) has = memcmp(v.data + v.size - s.size, s.data, s.size) == 0;
      else for (size_t j = 0; !has && j + s.size <= v.size; j++) has = memcmp(v.data + j, s.data, s.size) == 0;
    }
    if ((i < 3 && !has) || (i == 3 && has)) {
      return po_Arena_Printf(a, "%s violates %s %s \"%.*s\"", q, kind, kAffix[i], (int)s.size, s.data);
    }
  }
  const upb_Array *in = po_Pgv_List_(k, kd, "in", &f);
  if (in) {
    bool found = false;
    for (size_t i = 0; i < upb_Array_Size(in); i++) found |= same(upb_Array_Get(in, i).str_val, v);
    if (!found) return po_Arena_Printf(a, "%s violates %s in (not one of the allowed values)", q, kind);
  }
  const upb_Array *not_in = po_Pgv_List_(k, kd, "not_in", &f);
  for (size_t i = 0; not_in && i < upb_Array_Size(not_in); i++) {
    if (same(upb_Array_Get(not_in, i).str_val, v)) return po_Arena_Printf(a, "%s violates %s not_in (a refused value)", q, kind);
  }
  const upb_FieldDef *pf;
  upb_MessageValue pat;
  if (po_Pgv_Get_(k, kd, "pattern", &pf, &pat)) {
    char *re = po_Arena_Strndup(a, pat.str_val.data, pat.str_val.size);
    if (re && pattern_match(schema, re, v, a) == 0) return po_Arena_Printf(a, "%s violates %s pattern \"%s\"", q, kind, re);
  }
  return NULL;
}

static const char *check_formats(const upb_Message *k, const upb_MessageDef *kd, upb_StringView v, bool bytes,
                                 const char *q, po_Arena *a) {
  if (bytes) {
    /* Go's net.IP of the bytes: 4 or 16 of them */
    if (po_Pgv_Flag_(k, kd, "ip") && v.size != 4 && v.size != 16) return po_Arena_Printf(a, "%zu bytes violate bytes ip (want 4 or 16)", v.size);
    if (po_Pgv_Flag_(k, kd, "ipv4") && v.size != 4) return po_Arena_Printf(a, "%zu bytes violate bytes ipv4 (want 4)", v.size);
    if (po_Pgv_Flag_(k, kd, "ipv6") && v.size != 16) return po_Arena_Printf(a, "%zu bytes violate bytes ipv6 (want 16)", v.size);
    return NULL;
  }
  const char *why;
  if (po_Pgv_Flag_(k, kd, "hostname") && (why = hostname_why(v.data, v.size))) {
    return po_Arena_Printf(a, "%s violates string hostname (%s)", q, why);
  }
  int ip = -1;
  if (po_Pgv_Flag_(k, kd, "ip") && !(ip = ip_kind(v.data, v.size))) return po_Arena_Printf(a, "%s violates string ip (not an IPv4 or IPv6 address)", q);
  if (po_Pgv_Flag_(k, kd, "ipv4") && ip_kind(v.data, v.size) != 4) return po_Arena_Printf(a, "%s violates string ipv4 (not an IPv4 address)", q);
  if (po_Pgv_Flag_(k, kd, "ipv6") && ip_kind(v.data, v.size) != 6) return po_Arena_Printf(a, "%s violates string ipv6 (not an IPv6 address)", q);
  if (po_Pgv_Flag_(k, kd, "address") && hostname_why(v.data, v.size) && !ip_kind(v.data, v.size)) {
    return po_Arena_Printf(a, "%s violates string address (neither a hostname nor an IP address)", q);
  }
  if (po_Pgv_Flag_(k, kd, "uuid") && !uuid_ok(v.data, v.size)) {
    return po_Arena_Printf(a, "%s violates string uuid (want 8-4-4-4-12 hexadecimal digits)", q);
  }
  const upb_FieldDef *wf;
  upb_MessageValue wk;
  if (po_Pgv_Get_(k, kd, "well_known_regex", &wf, &wk)) {
    const upb_FieldDef *sf;
    upb_MessageValue strict;
    bool is_strict = !po_Pgv_Get_(k, kd, "strict", &sf, &strict) || strict.bool_val;
    /* strict false: the loose pattern, the same for names and values (no NUL, CR or LF) */
    if (wk.int32_val == 1 && !(is_strict ? header_name_ok(v.data, v.size) : header_value_ok(v.data, v.size, false))) {
      return po_Arena_Printf(a, "%s violates string well_known_regex HTTP_HEADER_NAME", q);
    }
    if (wk.int32_val == 2 && !header_value_ok(v.data, v.size, is_strict)) {
      return po_Arena_Printf(a, "%s violates string well_known_regex HTTP_HEADER_VALUE", q);
    }
  }
  return NULL;
}

const char *po_Pgv_CheckString_(const po_Schema *schema, const upb_Message *k, const upb_MessageDef *kd,
                                upb_StringView v, bool bytes, po_Arena *a) {
  char q[96];
  snprintf(q, sizeof q, "\"%.*s%s\"", v.size > 64 ? 64 : (int)v.size, v.data, v.size > 64 ? "..." : "");
  const char *r = check_lengths(k, kd, v, bytes, q, a);
  if (!r) r = check_members(schema, k, kd, v, bytes, q, a);
  if (!r) r = check_formats(k, kd, v, bytes, q, a);
  return r;
}
