/* YAML -> po_Value through libyaml's event parser, read as kubectl reads manifests: kubectl
 * converts YAML to JSON with sigs.k8s.io/yaml (go-yaml v2 rules, YAML 1.1 flavoured) and sends
 * the JSON, so what the API server and our webhook see is that JSON. Plain scalars resolve as
 * go-yaml v2 resolves them: y/yes/on/true and n/no/off/false (any of three spellings) are bools;
 * integers are Go's ParseInt(base 0) after dropping '_' (0x, 0o, 0b, leading-0 octal), then
 * uint64, then floats of the YAML form; ".inf"/".nan" are floats that JSON cannot carry (an
 * error, as in kubectl); a float beyond double range stays a string. A whole float is what it
 * becomes after the JSON round trip: an int (1e3 -> 1000) unless beyond int64 or 1e21. Keys
 * resolve the same way and are printed back (y -> "true", 1.5 -> "1.5"); null and collection
 * keys are errors. Merge keys (<<) merge as go-yaml v2 does (in order: a later explicit key
 * wins, a later merge overwrites; in a list, earlier maps win). Duplicate keys: the last wins.
 * Quoted scalars are strings; explicit !!str/!!int/!!float/!!bool/!!null tags are honoured;
 * !!binary, !!timestamp and the other yaml.org tags become strings as kubectl makes them
 * (yaml_tags.c).
 * Aliases share the anchored value, and their count is bounded so a "billion laughs" file
 * cannot explode later consumers. tests/vectors/yaml holds the kubectl-oracle corpus. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include <stdint.h>
#include <stdio.h>

#include "compiled.h"
#include "value_stream.h"

/* Aliases share the anchored value, so the tree stays small, but consumers that walk it (JSON
 * output, validation) see every expansion: the expanded size is bounded too. */
enum { kMaxDepth = 64, kMaxAliases = 1000, kMaxAnchors = 4096, kMaxExpanded = 1000000 };

typedef struct {
  yaml_parser_t parser;
  po_Arena *arena;
  po_Status *st;
  struct {
    const char *name;
    po_Value *value;
    long weight;
    int height; /* levels below the anchored node, so an alias cannot build past kMaxDepth */
  } anchors[kMaxAnchors];
  int anchor_count;
  int alias_count;
  size_t line0; /* the line (0-based) of the file where the chunk being parsed starts */
  /* Streaming (po_Value_StreamYaml): items are parsed into arenas of their own while the
   * document's other keys and the anchors' names live in doc_arena (== arena otherwise). An
   * anchor defined inside an item is forgotten with it (value NULL); an alias to it sets
   * `restart`: the document is read again whole. */
  po_Arena *doc_arena;
  bool restart;
  /* While an item is read (in_item), what its aliases expand to is added up over the whole
   * document: each item is bounded on its own, and this bounds them together, so a thousand
   * items aliasing one big anchor cannot make the caller walk a billion nodes. */
  bool in_item;
  long alias_weight;
} Reader;

static po_Pos mark_pos(const Reader *r, yaml_mark_t m) {
  return (po_Pos){(int)(m.line + r->line0) + 1, (int)m.column + 1};
}

static bool fail(Reader *r, yaml_mark_t m, po_StatusCode code, const char *what) {
  return po_Status_Set(r->st, code, "line %d, column %d: %s", (int)(m.line + r->line0) + 1, (int)m.column + 1, what);
}

static bool next(Reader *r, yaml_event_t *ev) {
  if (yaml_parser_parse(&r->parser, ev)) return true;
  /* libyaml's own allocation failing is memory, not the input */
  if (r->parser.error == YAML_MEMORY_ERROR) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
  yaml_mark_t m = r->parser.problem_mark;
  po_Status_Set(r->st, kPo_Status_Parse, "line %d, column %d: invalid YAML: %s%s%s", (int)(m.line + r->line0) + 1,
                (int)m.column + 1, r->parser.problem ? r->parser.problem : "parse error",
                r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
  return false;
}

/* Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64): optional sign (ParseInt only), then
 * 0x/0X hex, 0o/0O or leading-0 octal, 0b/0B binary, or decimal. */
static bool go_parse_uint(const char *p, uint64_t *out, bool *overflow) {
  int base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) base = 16, p += 2;
  else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) base = 8, p += 2;
  else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) base = 2, p += 2;
  else if (p[0] == '0' && p[1]) base = 8, p += 1;
  if (!*p) return false;
  uint64_t v = 0;
  *overflow = false;
  for (; *p; p++) {
    int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
          : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : 99;
    if (d >= base) return false;
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) *overflow = true;
    else v = v * (uint64_t)base + (uint64_t)d;
  }
  *out = v;
  return true;
}

/* go-yaml v2's float form: [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static bool yaml_float_form(const char *p) {
  if (*p == '-' || *p == '+') p++;
  int digits = 0;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++, digits++;
  } else {
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') { p++; while (*p >= '0' && *p <= '9') p++; }
  }
  if (!digits) return false;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '-' || *p == '+') p++;
    if (!(*p >= '0' && *p <= '9')) return false;
    while (*p >= '0' && *p <= '9') p++;
  }
  return *p == '\0';
}

/* Go's strconv underscoreOK for a decimal number without a base prefix: each '_' between two
 * digits ("1_0", not "._5", "5_" or "1__0"). */
static bool go_underscores_ok(const char *s) {
  char saw = '^'; /* '^' the start, '0' a digit, '_' an underscore, '!' anything else */
  if (*s == '-' || *s == '+') s++;
  for (; *s; s++) {
    if (*s >= '0' && *s <= '9') {
      saw = '0';
    } else if (*s == '_') {
      if (saw != '0') return false;
      saw = '_';
    } else {
      if (saw == '_') return false;
      saw = '!';
    }
  }
  return saw != '_';
}

/* Go's strconv.ParseFloat of a decimal form: false when out of double range (Go's ErrRange). */
static bool go_parse_float(const char *s, double *out) {
  errno = 0;
  char *end;
  double d = strtod(s, &end);
  if (*end || errno == ERANGE) {
    /* strtod's ERANGE also flags underflow, which Go rounds to 0 without error */
    if (*end || isinf(d)) return false;
  }
  *out = d;
  return true;
}

static bool one_of(const char *s, const char *const *list) {
  for (; *list; list++) if (!strcmp(s, *list)) return true;
  return false;
}

static const char *const kTrue[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
static const char *const kFalse[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
static const char *const kNull[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const kNaN[] = {".nan", ".NaN", ".NAN", NULL};
static const char *const kInf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
static const char *const kNegInf[] = {"-.inf", "-.Inf", "-.INF", NULL};

typedef enum { kResNull, kResBool, kResInt, kResUint, kResFloat, kResString } ResKind;

typedef struct {
  ResKind kind;
  bool b;
  int64_t i;
  uint64_t u;
  double d;
} Resolved;

/* go-yaml v2's resolve() for an untagged plain scalar. */
static Resolved resolve(const char *s, po_Arena *a) {
  Resolved r = {.kind = kResString};
  char c = s[0];
  bool hinted = c == '\0' || c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9') || strchr("yYnNtTfFoO~", c);
  if (!hinted) return r;
  /* The words are at most 5 bytes ("false", "+.inf"): longer text skips 39 comparisons, most
   * of the cost of reading a List's names and values. */
  if (strnlen(s, 6) <= 5) {
    if (one_of(s, kTrue)) return (Resolved){.kind = kResBool, .b = true};
    if (one_of(s, kFalse)) return (Resolved){.kind = kResBool, .b = false};
    if (one_of(s, kNull)) return (Resolved){.kind = kResNull};
    if (one_of(s, kNaN)) return (Resolved){.kind = kResFloat, .d = NAN};
    if (one_of(s, kInf)) return (Resolved){.kind = kResFloat, .d = INFINITY};
    if (one_of(s, kNegInf)) return (Resolved){.kind = kResFloat, .d = -INFINITY};
  }
  if (c == '.') { /* go-yaml v2 takes whatever strconv.ParseFloat takes, underscores as Go allows them */
    double d;
    size_t n = strlen(s), k = 0;
    char *plain = go_underscores_ok(s) ? po_Arena_Malloc(a, n + 1) : NULL;
    if (!plain) return r;
    for (size_t i = 0; i < n; i++) if (s[i] != '_') plain[k++] = s[i];
    plain[k] = '\0';
    if (go_parse_float(plain, &d)) return (Resolved){.kind = kResFloat, .d = d};
    return r;
  }
  if (!(c == '+' || c == '-' || (c >= '0' && c <= '9'))) return r;
  /* digits or a sign: underscores dropped, then int, uint, float */
  size_t n = strlen(s);
  char *plain = po_Arena_Malloc(a, n + 1);
  if (!plain) return r;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) if (s[i] != '_') plain[k++] = s[i];
  plain[k] = '\0';
  bool neg = plain[0] == '-';
  const char *mag = plain + (plain[0] == '-' || plain[0] == '+');
  uint64_t u;
  bool overflow;
  if (go_parse_uint(mag, &u, &overflow) && !overflow) {
    if (!neg && u <= (uint64_t)INT64_MAX) return (Resolved){.kind = kResInt, .i = (int64_t)u};
    if (neg && u <= (uint64_t)INT64_MAX + 1) return (Resolved){.kind = kResInt, .i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u};
    if (!neg && plain[0] != '+') return (Resolved){.kind = kResUint, .u = u}; /* ParseUint takes no sign */
  }
  double d;
  if (yaml_float_form(plain) && go_parse_float(plain, &d)) return (Resolved){.kind = kResFloat, .d = d};
  return r;
}

/* A float as the JSON round trip leaves it: Go prints a whole float below 1e21 without a point,
 * as its shortest round-tripping digits padded with zeros (-2^63 prints -9223372036854776000),
 * and the API server reads that text back as int64 when the text fits, else as the float. */
static po_Value *float_value(po_Arena *a, double d) {
  if (d != trunc(d) || fabs(d) >= 1e21) return po_Value_NewFloat(a, d);
  char digits[40];
  int p = 1;
  for (; p < 17; p++) { /* Go's shortest form: the fewest significant digits that read back as d */
    snprintf(digits, sizeof digits, "%.*e", p - 1, d);
    if (strtod(digits, NULL) == d) break;
  }
  snprintf(digits, sizeof digits, "%.*e", p - 1, d);
  char text[48];
  size_t k = 0;
  int exp = atoi(strchr(digits, 'e') + 1);
  for (const char *c = digits; *c != 'e'; c++) if (*c != '.') text[k++] = *c;
  int sig = p; /* significant digits written; whole, so exp >= sig - 1 */
  for (int z = exp - (sig - 1); z > 0; z--) text[k++] = '0';
  text[k] = '\0';
  errno = 0;
  long long i = strtoll(text, NULL, 10);
  if (errno == ERANGE) return po_Value_NewFloat(a, d);
  return po_Value_NewInt(a, (int64_t)i);
}

/* [+-]digits, '_' allowed between them (go-yaml drops them), no other form. */
static bool decimal_integer(const char *s) {
  if (*s == '-' || *s == '+') s++;
  if (!(*s >= '0' && *s <= '9')) return false;
  for (; *s; s++) if (!((*s >= '0' && *s <= '9') || *s == '_')) return false;
  return true;
}

static po_Value *scalar(Reader *r, yaml_event_t *ev) {
  const char *s = (const char *)ev->data.scalar.value;
  size_t len = ev->data.scalar.length;
  const char *tag = (const char *)ev->data.scalar.tag;
  bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  po_Arena *a = r->arena;
  if (tag && strcmp(tag, YAML_STR_TAG) == 0) return po_Value_NewString(a, s, len);
  if (!plain && !tag) return po_Value_NewString(a, s, len);
  const char *text, *err;
  size_t text_len;
  if (po_YamlTag_String(tag, s, len, a, &text, &text_len, &err)) {
    if (err) return fail(r, ev->start_mark, kPo_Status_Parse, err), NULL;
    return po_Value_NewString(a, text, text_len);
  }
  if (strlen(s) != len) return po_Value_NewString(a, s, len); /* embedded NUL */
  if (tag && strcmp(tag, YAML_NULL_TAG) && strcmp(tag, YAML_BOOL_TAG) && strcmp(tag, YAML_INT_TAG) &&
      strcmp(tag, YAML_FLOAT_TAG)) {
    return po_Value_NewString(a, s, len); /* local tags: the value as written */
  }
  Resolved v = resolve(s, a);
  if (tag) {
    /* an explicit tag must agree with what the text resolves to (an int is a float too) */
    bool agrees = (!strcmp(tag, YAML_NULL_TAG) && v.kind == kResNull) ||
                  (!strcmp(tag, YAML_BOOL_TAG) && v.kind == kResBool) ||
                  (!strcmp(tag, YAML_INT_TAG) && (v.kind == kResInt || v.kind == kResUint)) ||
                  (!strcmp(tag, YAML_FLOAT_TAG) && (v.kind == kResFloat || v.kind == kResInt || v.kind == kResUint));
    if (!agrees) {
      fail(r, ev->start_mark, kPo_Status_Parse, "scalar does not match its explicit tag");
      return NULL;
    }
  }
  switch (v.kind) {
    case kResNull: return po_Value_NewNull(a);
    case kResBool: return po_Value_NewBool(a, v.b);
    case kResInt: return po_Value_NewInt(a, v.i);
    case kResUint: {
      /* beyond int64: a float64 once the API server reads the JSON, keeping its text */
      po_Value *x = po_Value_NewFloat(a, (double)v.u);
      if (x && !(x->lit = po_Arena_Printf(a, "%llu", (unsigned long long)v.u))) x = NULL;
      return x;
    }
    case kResFloat:
      if (isnan(v.d) || isinf(v.d)) {
        char what[96];
        snprintf(what, sizeof what, "%.*s is not a number JSON can carry (kubectl: json: unsupported value: %s)",
                 (int)(len < 16 ? len : 16), s, isnan(v.d) ? "NaN" : v.d > 0 ? "+Inf" : "-Inf");
        fail(r, ev->start_mark, kPo_Status_Parse, what);
        return NULL;
      }
      {
        po_Value *x = float_value(a, v.d);
        /* a decimal integer literal no Go int holds (below int64, beyond uint64): a float64 that
         * keeps its text, as the JSON reader keeps it, so messages quote it as written */
        if (x && po_Value_Kind(x) == kPo_ValueKind_Float && decimal_integer(s)) {
          char *digits = po_Arena_Malloc(a, len + 1);
          size_t k = 0;
          if (!digits) return NULL;
          for (size_t i = 0; i < len; i++) if (s[i] != '_' && !(i == 0 && s[i] == '+')) digits[k++] = s[i];
          digits[k] = '\0';
          x->lit = digits;
        }
        return x;
      }
    case kResString: break;
  }
  return po_Value_NewString(a, s, len);
}

/* Go's strconv.FormatFloat(d, 'g', -1, 32), which sigs.k8s.io/yaml uses for float keys: the
 * shortest digits that read back as the same float32; %e form when the exponent is < -4 or
 * >= 6, with a sign and at least two exponent digits. */
static void format_float32_key(double d, char *buf, size_t size) {
  /* Go's float32(d) is IEEE rounding: beyond float32's range it is an infinity, which
   * sigs.k8s.io/yaml then spells ".inf" (in C that conversion is undefined: check first) */
  if (fabs(d) >= 3.4028235677973366e38) {
    snprintf(buf, size, "%s", d > 0 ? ".inf" : "-.inf");
    return;
  }
  float f = (float)d;
  char digits[32];
  int p = 1;
  for (; p <= 9; p++) {
    snprintf(digits, sizeof digits, "%.*e", p - 1, (double)f);
    if ((float)strtod(digits, NULL) == f) break;
  }
  /* digits: [-]d.ddde[+-]xx */
  char *e = strchr(digits, 'e');
  int exp = e ? atoi(e + 1) : 0;
  if (exp < -4 || exp >= 6) {
    *e = '\0';
    snprintf(buf, size, "%se%c%02d", digits, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    return;
  }
  int prec = p - 1 - exp;
  snprintf(buf, size, "%.*f", prec > 0 ? prec : 0, (double)f);
}

/* A mapping key as sigs.k8s.io/yaml prints it into JSON: strings as they are, other scalars
 * resolved and formatted as Go does; NULL (status set) for keys JSON cannot have. */
static const char *key_text(Reader *r, yaml_event_t *ev) {
  const char *s = (const char *)ev->data.scalar.value;
  size_t len = ev->data.scalar.length;
  po_Arena *a = r->arena;
  const char *text, *err;
  size_t text_len;
  if (po_YamlTag_String((const char *)ev->data.scalar.tag, s, len, a, &text, &text_len, &err)) {
    if (err) return fail(r, ev->start_mark, kPo_Status_Parse, err), NULL;
    return po_Arena_Strndup(a, text, text_len); /* a NUL from !!binary ends the key, as in C */
  }
  if (memchr(s, '\0', len)) /* keys are C strings from here on: cut, it could take another's place */
    return fail(r, ev->start_mark, kPo_Status_Parse, kPo_NulKeyRefused), NULL;
  bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
  if (!plain) return po_Arena_Strndup(a, s, len);
  Resolved v = resolve(s, a);
  char buf[64];
  switch (v.kind) {
    case kResString: return po_Arena_Strndup(a, s, len);
    case kResBool: return v.b ? "true" : "false";
    case kResInt: return po_Arena_Printf(a, "%lld", (long long)v.i);
    case kResUint: break; /* sigs.k8s.io/yaml has no case for uint64 keys */
    case kResFloat:
      if (isnan(v.d)) return ".nan";
      if (isinf(v.d)) return v.d > 0 ? ".inf" : "-.inf";
      format_float32_key(v.d, buf, sizeof buf);
      return po_Arena_Printf(a, "%s", buf);
    case kResNull: break;
  }
  fail(r, ev->start_mark, kPo_Status_Parse,
       v.kind == kResNull ? "a null mapping key cannot be a JSON key (kubectl refuses it too)"
                          : "an integer key beyond int64 cannot be a JSON key (kubectl refuses it too)");
  return NULL;
}

/* A mapping's key event, consumed (deleted): its text as key_text makes it, or "<<" for a merge
 * key (go-yaml v2's isMerge: "<<" plain and untagged, or tagged !!merge in any style); NULL with
 * the status set for a key that is not a scalar or that JSON cannot have. One reading for the
 * whole-tree reader and the streaming one, so they agree on every key. */
static const char *map_key(Reader *r, yaml_event_t *ev, bool *is_merge, yaml_mark_t *km) {
  if (ev->type != YAML_SCALAR_EVENT) {
    fail(r, ev->start_mark, kPo_Status_Parse, "invalid map key: a mapping key must be a scalar (kubectl refuses it too)");
    yaml_event_delete(ev);
    return NULL;
  }
  const char *ktag = (const char *)ev->data.scalar.tag;
  *is_merge = ((ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ktag) ||
               (ktag && !strcmp(ktag, "tag:yaml.org,2002:merge"))) &&
              ev->data.scalar.length == 2 && !memcmp(ev->data.scalar.value, "<<", 2);
  *km = ev->start_mark;
  const char *key = *is_merge ? "<<" : key_text(r, ev);
  yaml_event_delete(ev);
  return key;
}

/* What a node amounts to once its aliases are expanded: nodes in all, and levels below it. */
typedef struct {
  long weight;
  int height;
} Size;

static bool remember(Reader *r, const yaml_char_t *anchor, po_Value *v, Size sz, yaml_mark_t m) {
  if (!anchor) return true;
  if (r->anchor_count >= kMaxAnchors) return fail(r, m, kPo_Status_Limit, "too many YAML anchors");
  r->anchors[r->anchor_count].name = po_Arena_Strndup(r->doc_arena, (const char *)anchor, strlen((const char *)anchor));
  r->anchors[r->anchor_count].weight = sz.weight;
  r->anchors[r->anchor_count].height = sz.height;
  r->anchors[r->anchor_count++].value = v;
  return true;
}

static po_Value *node(Reader *r, yaml_event_t *ev, int depth, Size *sz);

/* ---- maps: set semantics (a later key replaces the earlier one's value, as in kubectl), with
 * a hash index once a map is large, so a hostile file with many keys stays linear. ---- */

enum { kIndexFrom = 16 };

typedef struct {
  uint32_t *slots; /* 0 empty, else entry index + 1 */
  size_t cap;      /* a power of two, at least twice the entries */
} Index;

static uint32_t hash_key(const char *k) {
  uint32_t h = 2166136261u;
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 16777619u;
  return h;
}

static bool index_build(po_Arena *a, Index *ix, const po_Value *m, size_t cap) {
  uint32_t *slots = po_Arena_Malloc(a, cap * sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < m->u.agg.len; i++) {
    size_t h = hash_key(m->u.agg.keys[i]) & (cap - 1);
    while (slots[h]) h = (h + 1) & (cap - 1);
    slots[h] = (uint32_t)i + 1;
  }
  ix->slots = slots;
  ix->cap = cap;
  return true;
}

static bool map_set(po_Arena *a, po_Value *m, Index *ix, const char *key, po_Value *v) {
  size_t n = m->u.agg.len;
  if (n < kIndexFrom) {
    for (size_t i = 0; i < n; i++) {
      if (!strcmp(m->u.agg.keys[i], key)) { m->u.agg.items[i] = v; return true; }
    }
  } else {
    if ((!ix->slots || 2 * (n + 1) > ix->cap) && !index_build(a, ix, m, ix->cap ? ix->cap * 2 : 4 * kIndexFrom)) return false;
    size_t h = hash_key(key) & (ix->cap - 1);
    for (; ix->slots[h]; h = (h + 1) & (ix->cap - 1)) {
      size_t i = ix->slots[h] - 1;
      if (!strcmp(m->u.agg.keys[i], key)) { m->u.agg.items[i] = v; return true; }
    }
    ix->slots[h] = (uint32_t)n + 1;
  }
  if (po_Value_MapAppendUnique(a, m, key, v)) return true;
  ix->slots = NULL; /* it names an entry that was not added: rebuild before any further use */
  return false;
}

/* A merge key's value: a map, or a list of maps of which the earlier win (go-yaml v2 applies
 * them last to first, each overwriting). */
static bool merge(Reader *r, po_Value *into, Index *ix, const po_Value *from, yaml_mark_t m) {
  if (po_Value_Kind(from) == kPo_ValueKind_Map) {
    for (size_t i = 0; i < from->u.agg.len; i++) {
      if (!map_set(r->arena, into, ix, from->u.agg.keys[i], from->u.agg.items[i])) return false;
    }
    return true;
  }
  if (po_Value_Kind(from) == kPo_ValueKind_List) {
    for (size_t i = from->u.agg.len; i-- > 0;) {
      if (po_Value_Kind(from->u.agg.items[i]) != kPo_ValueKind_Map) break;
      if (!merge(r, into, ix, from->u.agg.items[i], m)) return false;
      if (i == 0) return true;
    }
    if (from->u.agg.len == 0) return true;
  }
  return fail(r, m, kPo_Status_Parse, "map merge requires map or sequence of maps as the value"), false;
}

static po_Value *collection(Reader *r, yaml_event_t *start, int depth, Size *sz) {
  bool is_map = start->type == YAML_MAPPING_START_EVENT;
  po_Value *v = is_map ? po_Value_NewMap(r->arena) : po_Value_NewList(r->arena);
  if (!v) return NULL;
  v->pos = mark_pos(r, start->start_mark);
  const yaml_char_t *anchor = is_map ? start->data.mapping_start.anchor : start->data.sequence_start.anchor;
  *sz = (Size){1, 0};
  Index ix = {0};
  for (;;) {
    yaml_event_t ev;
    if (!next(r, &ev)) return NULL;
    if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&ev);
      return remember(r, anchor, v, *sz, start->start_mark) ? v : NULL;
    }
    Size w = {0, 0};
    if (is_map) {
      bool is_merge;
      yaml_mark_t km;
      const char *key = map_key(r, &ev, &is_merge, &km);
      yaml_event_t vev;
      if (!key || !next(r, &vev)) return NULL;
      po_Value *child = node(r, &vev, depth + 1, &w);
      yaml_event_delete(&vev);
      if (!child) return NULL;
      if (is_merge ? !merge(r, v, &ix, child, km) : !map_set(r->arena, v, &ix, key, child)) {
        if (po_Status_IsOk(r->st)) po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
        return NULL;
      }
    } else {
      po_Value *child = node(r, &ev, depth + 1, &w);
      yaml_event_delete(&ev);
      if (!child || !po_Value_ListAppend(r->arena, v, child)) return NULL;
    }
    sz->weight += w.weight;
    if (w.height + 1 > sz->height) sz->height = w.height + 1;
    if (sz->weight > kMaxExpanded) {
      fail(r, start->start_mark, kPo_Status_Limit, "YAML expands (through aliases) to more than 1000000 nodes");
      return NULL;
    }
  }
}

static po_Value *node(Reader *r, yaml_event_t *ev, int depth, Size *sz) {
  *sz = (Size){1, 0};
  if (depth > kMaxDepth) {
    fail(r, ev->start_mark, kPo_Status_Limit, "YAML nested deeper than 64 levels");
    return NULL;
  }
  switch (ev->type) {
    case YAML_SCALAR_EVENT: {
      po_Value *v = scalar(r, ev);
      if (!v) {
        if (po_Status_IsOk(r->st)) po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
        return NULL;
      }
      v->pos = mark_pos(r, ev->start_mark);
      return remember(r, ev->data.scalar.anchor, v, *sz, ev->start_mark) ? v : NULL;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: return collection(r, ev, depth, sz);
    case YAML_ALIAS_EVENT: {
      if (++r->alias_count > kMaxAliases) {
        fail(r, ev->start_mark, kPo_Status_Limit, "too many YAML aliases");
        return NULL;
      }
      for (int i = r->anchor_count; i-- > 0;) {
        if (!strcmp(r->anchors[i].name, (const char *)ev->data.alias.anchor)) {
          if (!r->anchors[i].value) { /* defined inside an item handed over and freed */
            r->restart = true;
            return NULL;
          }
          *sz = (Size){r->anchors[i].weight, r->anchors[i].height};
          if (r->in_item && (r->alias_weight += sz->weight) > kMaxExpanded) {
            fail(r, ev->start_mark, kPo_Status_Limit, "YAML expands (through aliases) to more than 1000000 nodes");
            return NULL;
          }
          if (depth + sz->height > kMaxDepth) {
            fail(r, ev->start_mark, kPo_Status_Limit, "YAML nested (through aliases) deeper than 64 levels");
            return NULL;
          }
          return r->anchors[i].value;
        }
      }
      fail(r, ev->start_mark, kPo_Status_Parse, "alias names an unknown anchor");
      return NULL;
    }
    default:
      fail(r, ev->start_mark, kPo_Status_Parse, "unexpected YAML event");
      return NULL;
  }
}

/* ---- the document stream, cut as kubectl cuts it ------------------------------------------------
 * kubectl does not hand the file to a YAML parser as one stream. Its reader
 * (k8s.io/apimachinery/pkg/util/yaml YAMLReader) reads it line by line and cuts it at every line
 * that begins with "---": what follows those three dashes on the line, trimmed of white space,
 * must be nothing or a comment, else the whole read fails with "invalid Yaml document separator:
 * <rest>" ("--- 5", "--- !!map", "--- |", "---x: 1"). A separator with nothing before it since
 * the last cut yields no chunk. Each chunk is then converted on its own by sigs.k8s.io/yaml, whose
 * go-yaml v2 Unmarshal reads only the chunk's first document: a "%YAML" directive line before
 * "---" is a chunk of its own that lacks its document ("did not find expected <document start>"),
 * a chunk that is only "..." has no node content, and after an explicit "..." the rest of the
 * chunk is never parsed. A chunk without a document (comments, blank) is null. */

/* Go's unicode.IsSpace on the UTF-8 sequence at p (n bytes left): its length, or 0. */
static size_t go_space(const unsigned char *p, size_t n) {
  if (strchr(" \t\n\v\f\r", p[0]) && p[0]) return 1;
  if (n >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0)) return 2; /* NEL, NBSP */
  if (n < 3) return 0;
  unsigned cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
  if ((p[0] & 0xF0) != 0xE0 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
  bool space = cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
               cp == 0x205F || cp == 0x3000;
  return space ? 3 : 0;
}

/* Whether the line [p, p+n) (without its newline) is a separator; a bad one sets st. */
static bool separator(const char *p, size_t n, size_t line, po_Status *st, bool *bad) {
  *bad = false;
  if (n < 3 || memcmp(p, "---", 3) != 0) return false;
  const unsigned char *s = (const unsigned char *)p + 3, *end = (const unsigned char *)p + n;
  for (size_t k; s < end && (k = go_space(s, (size_t)(end - s))); s += k) {}
  if (s == end || *s == '#') return true;
  const unsigned char *e = end; /* the rest, trimmed at its end too, for the message */
  while (e > s) {
    size_t k = 0;
    for (size_t back = 1; back <= 3 && back <= (size_t)(e - s); back++) {
      if (go_space(e - back, back) == back) { k = back; break; }
    }
    if (!k) break;
    e -= k;
  }
  *bad = true;
  po_Status_Set(st, kPo_Status_Parse, "line %zu, column 4: invalid Yaml document separator: %.*s (kubectl allows only a comment after ---)",
                line + 1, (int)(e - s), (const char *)s);
  return true;
}

/* One chunk's parser opened over text and read up to its first document's root event (*root):
 * 1; 0 when the chunk holds no document; -1 on an error, said in r->st. The caller deletes the
 * parser whatever the answer (parse_chunk, stream_document). */
static int open_chunk(Reader *r, const char *text, size_t len, yaml_event_t *root) {
  memset(&r->parser, 0, sizeof r->parser);
  if (!yaml_parser_initialize(&r->parser)) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), -1;
  yaml_parser_set_input_string(&r->parser, (const unsigned char *)text, len);
  r->anchor_count = 0; /* anchors do not cross documents */
  yaml_event_t ev;
  if (!next(r, &ev)) return -1; /* the stream start */
  yaml_event_delete(&ev);
  if (!next(r, &ev)) return -1;
  if (ev.type == YAML_STREAM_END_EVENT) return yaml_event_delete(&ev), 0;
  if (ev.type != YAML_DOCUMENT_START_EVENT) {
    fail(r, ev.start_mark, kPo_Status_Parse, "unexpected YAML event");
    yaml_event_delete(&ev);
    return -1;
  }
  yaml_event_delete(&ev);
  return next(r, root) ? 1 : -1;
}

/* The first document of one chunk (NULL with *none when it has none); false on error. */
static bool parse_chunk(Reader *r, const char *text, size_t len, po_Value **out) {
  *out = NULL;
  bool ok = false;
  yaml_event_t ev, root;
  int opened = open_chunk(r, text, len, &root);
  if (opened <= 0) {
    ok = opened == 0;
    goto done;
  }
  Size w;
  po_Value *v = node(r, &root, 0, &w);
  yaml_event_delete(&root);
  if (!v) goto done;
  if (!next(r, &ev)) goto done; /* the document end, as go-yaml expects it; nothing further is read */
  yaml_event_delete(&ev);
  *out = v;
  ok = true;
done:
  yaml_parser_delete(&r->parser);
  return ok;
}

/* Cuts the text into chunks as kubectl does and calls fn for each non-empty one, with the line
 * (0-based) where it starts. */
typedef bool (*ChunkFn)(void *ctx, const char *text, size_t len, size_t line0);

static bool each_chunk(const char *text, size_t len, po_Status *st, ChunkFn fn, void *ctx) {
  size_t line = 0, chunk = 0, chunk_line = 0;
  for (size_t at = 0; at <= len;) {
    const char *nl = at < len ? memchr(text + at, '\n', len - at) : NULL;
    size_t end = nl ? (size_t)(nl - text) : len;
    bool bad = false, sep = at < len && separator(text + at, end - at, line, st, &bad);
    if (bad) return false;
    bool last = at >= len || !nl;
    if ((sep || last) && (sep ? at : len) > chunk && !fn(ctx, text + chunk, (sep ? at : len) - chunk, chunk_line)) {
      return false;
    }
    if (last) break;
    at = end + 1;
    line++;
    if (sep) {
      chunk = at;
      chunk_line = line;
    }
  }
  return true;
}

typedef struct {
  Reader *r;
  po_Value **docs;
  size_t count, cap;
} Collect;

static bool collect_chunk(void *ctx, const char *text, size_t len, size_t line0) {
  Collect *c = ctx;
  Reader *r = c->r;
  po_Value *v = NULL;
  r->line0 = line0;
  if (!parse_chunk(r, text, len, &v)) return false;
  if (c->count == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 8;
    po_Value **grown = po_Arena_Malloc(r->arena, c->cap * sizeof *grown);
    if (!grown) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
    if (c->count) memcpy(grown, c->docs, c->count * sizeof *c->docs);
    c->docs = grown;
  }
  c->docs[c->count++] = v ? v : po_Value_NewNull(r->arena);
  return c->docs[c->count - 1] || po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
}

bool po_Value_ParseYaml(const char *text, size_t len, po_Arena *a, po_Value ***docs_out,
                        size_t *count_out, po_Status *st) {
  Reader *r = calloc(1, sizeof *r);
  if (!r) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  r->arena = r->doc_arena = a;
  r->st = st;
  Collect c = {.r = r};
  bool ok = each_chunk(text, len, st, collect_chunk, &c);
  free(r);
  if (ok) {
    *docs_out = c.docs;
    *count_out = c.count;
  }
  return ok;
}

/* ---- one object at a time (po_Value_StreamYaml) -------------------------------------------------
 * A document whose root is a map is read key by key; the value of its first `items` key, when a
 * sequence, is read one element at a time, each into an arena of its own that is freed once the
 * caller has seen it. Everything else is read as po_Value_ParseYaml reads it. What cannot be
 * known while streaming (engine.h) makes the document be read again whole. */

typedef struct {
  Reader *r;
  po_StreamCtx *c;
  int doc;
} Stream;

typedef enum { kStreamError, kStreamDone, kStreamRestart } StreamResult;

static StreamResult stream_failed(Reader *r) { return r->restart ? kStreamRestart : kStreamError; }

/* The elements of the `items` sequence whose start event is `start`, each handed over. */
static StreamResult stream_items(Stream *s, yaml_event_t *start) {
  Reader *r = s->r;
  const yaml_char_t *anchor = start->data.sequence_start.anchor;
  for (long i = 0;; i++) {
    yaml_event_t ev;
    if (!next(r, &ev)) return kStreamError;
    if (ev.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&ev);
      break;
    }
    po_Arena *item = po_StreamCtx_Arena(s->c);
    if (!item) {
      yaml_event_delete(&ev);
      po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
      return kStreamError;
    }
    int anchors = r->anchor_count;
    r->arena = item;
    r->in_item = true;
    Size w;
    po_Value *v = node(r, &ev, 2, &w); /* root map 0, items 1 */
    r->in_item = false;
    r->arena = r->doc_arena;
    yaml_event_delete(&ev);
    bool ok = v && po_StreamCtx_Object(s->c, s->doc, i, v, r->st);
    po_Arena_Free(item);
    for (int k = anchors; k < r->anchor_count; k++) r->anchors[k].value = NULL;
    if (!ok) return v ? kStreamError : stream_failed(r);
  }
  /* An alias to the whole sequence would need every item again. */
  if (anchor && !remember(r, anchor, NULL, (Size){0, 0}, start->start_mark)) return kStreamError;
  return kStreamDone;
}

/* The root map whose start event is `start`: its items streamed, its other keys into a head map
 * that `is_list` then judges. */
static StreamResult stream_root(Stream *s, yaml_event_t *start) {
  Reader *r = s->r;
  po_Value *head = po_Value_NewMap(r->arena);
  if (!head) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), kStreamError;
  head->pos = mark_pos(r, start->start_mark);
  Index ix = {0};
  Size sz = {1, 0};
  bool streamed = false;
  for (;;) {
    yaml_event_t ev;
    if (!next(r, &ev)) return kStreamError;
    if (ev.type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(&ev);
      break;
    }
    bool is_merge;
    yaml_mark_t km;
    const char *key = map_key(r, &ev, &is_merge, &km);
    yaml_event_t vev;
    if (!key || !next(r, &vev)) return kStreamError;
    bool items = !is_merge && !strcmp(key, "items");
    if (streamed && (items || is_merge)) { /* a later `items` replaces, a merge may add `items` */
      yaml_event_delete(&vev);
      return kStreamRestart;
    }
    if (items && vev.type == YAML_SEQUENCE_START_EVENT && !po_Value_Get(head, "items")) {
      streamed = true;
      StreamResult res = stream_items(s, &vev);
      yaml_event_delete(&vev);
      if (res != kStreamDone) return res;
      continue;
    }
    Size w = {0, 0};
    po_Value *child = node(r, &vev, 1, &w);
    yaml_event_delete(&vev);
    if (!child) return stream_failed(r);
    if (is_merge ? !merge(r, head, &ix, child, km) : !map_set(r->arena, head, &ix, key, child)) {
      if (po_Status_IsOk(r->st)) po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
      return kStreamError;
    }
    sz.weight += w.weight;
    if (sz.weight > kMaxExpanded) {
      fail(r, start->start_mark, kPo_Status_Limit, "YAML expands (through aliases) to more than 1000000 nodes");
      return kStreamError;
    }
  }
  if (!streamed) return po_StreamCtx_Document(s->c, s->doc, head, r->st) ? kStreamDone : kStreamError;
  const po_ValueStream *vs = s->c->s;
  return vs->is_list && vs->is_list(vs->ctx, head) ? kStreamDone : kStreamRestart;
}

/* One chunk's first document, streamed. */
static StreamResult stream_document(Stream *s, const char *text, size_t len) {
  Reader *r = s->r;
  StreamResult res = kStreamError;
  yaml_event_t ev, root;
  int opened = open_chunk(r, text, len, &root);
  if (opened < 0) goto done;
  if (opened == 0) {
    po_Value *null = po_Value_NewNull(r->arena);
    res = null && po_StreamCtx_Document(s->c, s->doc, null, r->st) ? kStreamDone : kStreamError;
    goto done;
  }
  if (root.type == YAML_MAPPING_START_EVENT && !root.data.mapping_start.anchor) {
    res = stream_root(s, &root);
    yaml_event_delete(&root);
    if (res != kStreamDone) goto done;
  } else {
    Size w;
    po_Value *v = node(r, &root, 0, &w);
    yaml_event_delete(&root);
    if (!v) goto done;
    if (!po_StreamCtx_Document(s->c, s->doc, v, r->st)) goto done;
  }
  res = kStreamError;
  if (!next(r, &ev)) goto done; /* the document end, as go-yaml expects it */
  yaml_event_delete(&ev);
  res = kStreamDone;
done:
  yaml_parser_delete(&r->parser);
  return res;
}

static bool stream_chunk(void *ctx, const char *text, size_t len, size_t line0) {
  Stream *s = ctx;
  Reader *r = s->r;
  s->doc++;
  r->line0 = line0;
  r->restart = false;
  r->alias_weight = 0;
  int aliases = r->alias_count;
  size_t before = s->c->objects;
  r->arena = r->doc_arena = po_StreamCtx_Arena(s->c);
  if (!r->arena) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
  StreamResult res = stream_document(s, text, len);
  po_Arena_Free(r->doc_arena);
  if (res != kStreamRestart) return res == kStreamDone;
  /* Read whole, as po_Value_ParseYaml does, and handed over again. */
  r->alias_count = aliases;
  r->restart = false;
  po_Status_Clear(r->st);
  if (s->c->objects > before && !po_StreamCtx_Retract(s->c, s->doc, r->st)) return false;
  r->arena = r->doc_arena = po_StreamCtx_Arena(s->c);
  if (!r->arena) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
  po_Value *v = NULL;
  bool ok = parse_chunk(r, text, len, &v);
  if (ok && !v) ok = (v = po_Value_NewNull(r->arena)) || po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory");
  ok = ok && po_StreamCtx_Document(s->c, s->doc, v, r->st);
  po_Arena_Free(r->doc_arena);
  return ok;
}

bool po_Value_StreamYaml(const char *text, size_t len, const po_ValueStream *vs, po_Status *st) {
  Reader *r = calloc(1, sizeof *r);
  if (!r) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  r->st = st;
  po_StreamCtx c;
  po_StreamCtx_Init(&c, vs);
  Stream s = {.r = r, .c = &c};
  bool ok = each_chunk(text, len, st, stream_chunk, &s);
  free(r);
  /* memory that ran out anywhere in the stream (a value of the tree, the caller's own work) is
   * no verdict on the text, whatever was read */
  if (c.failed) ok = po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return ok;
}
