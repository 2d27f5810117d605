/* Indented JSON with sorted object keys (two spaces a level, keys in byte order), from a value
 * tree or straight from a message. preview diffs these texts: upb writes fields in number order
 * and map entries in hash order, so sorting is what makes a resource's before and after (and two
 * runs) line up. The message form walks the message's set fields by reflection, with no JSON
 * text in between: it is the text po_Message_ToJson would give, parsed and indented by the value
 * form, byte for byte (tests/engine/test_pretty_json.c holds the two side by side). */
#define _GNU_SOURCE /* memrchr */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "upb/decode.h"
#include "upb/internal/upb.h"
#include "upb/map.h"

enum { kMaxDepth = 64 }; /* po_Value_ParseJson's nesting limit: the two forms fail alike */

typedef struct {
  po_TextBuf t;  /* the text (po_TextBuf: doubling in the arena, not zeroed) */
  po_Status *st; /* the message form's first error; NULL for the value form */
  bool failed;
  const po_Schema *s; /* the message form's: the snapshot of the message written */
} Buf;

static void put(Buf *b, const char *s, size_t n) { po_TextBuf_Put(&b->t, s, n); }
static void puts_(Buf *b, const char *s) { po_TextBuf_Put(&b->t, s, strlen(s)); }

static void indent(Buf *b, int depth) {
  static const char kSpaces[] = "                                                                ";
  for (int i = 0; i < depth; i++) put(b, kSpaces, 2);
}

static void quoted(Buf *b, const char *s, size_t n) {
  put(b, "\"", 1);
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    /* "##[" is a GitHub workflow command anywhere in a CI log's line (preview's diff is printed
     * there): its second '#' written \u0023, the same JSON string */
    bool command = c == '#' && i > 0 && s[i - 1] == '#' && i + 1 < n && s[i + 1] == '[';
    if (c >= 0x20 && c != '"' && c != '\\' && !command) continue;
    put(b, s + run, i - run);
    run = i + 1;
    char esc[8];
    switch (c) {
      case '"': puts_(b, "\\\""); break;
      case '\\': puts_(b, "\\\\"); break;
      case '\n': puts_(b, "\\n"); break;
      case '\t': puts_(b, "\\t"); break;
      case '\r': puts_(b, "\\r"); break;
      default: snprintf(esc, sizeof esc, "\\u%04x", c); puts_(b, esc);
    }
  }
  put(b, s + run, n - run);
  put(b, "\"", 1);
}

/* An integer's decimal digits, without printf's format parsing: 10,000 changed clusters print
 * some 200,000 integers, and vsnprintf was a tenth of the run. */
static char *digits(char *end, uint64_t u) {
  char *p = end;
  do *--p = (char)('0' + u % 10); while ((u /= 10) != 0);
  return p;
}

static void integer(Buf *b, long long v) {
  char num[24], *p = digits(num + sizeof num, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
  if (v < 0) *--p = '-';
  put(b, p, (size_t)(num + sizeof num - p));
}

/* the shortest form that reads back as the same double */
static void floating(Buf *b, double d) {
  char num[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(num, sizeof num, "%.*g", p, d);
    if (strtod(num, NULL) == d) break;
  }
  puts_(b, num);
}

/* ================================ from a value tree ================================ */

typedef struct {
  const char *key;
  const po_Value *v;
} Entry;

static int by_key(const void *x, const void *y) { return strcmp(((const Entry *)x)->key, ((const Entry *)y)->key); }

static void emit(Buf *b, const po_Value *v, int depth) {
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: puts_(b, "null"); break;
    case kPo_ValueKind_Bool: puts_(b, po_Value_Bool(v) ? "true" : "false"); break;
    case kPo_ValueKind_Int: integer(b, (long long)po_Value_Int(v)); break;
    case kPo_ValueKind_Float: floating(b, po_Value_Float(v)); break;
    case kPo_ValueKind_String: {
      size_t n = 0;
      const char *s = po_Value_String(v, &n);
      quoted(b, s, n);
      break;
    }
    case kPo_ValueKind_List: {
      size_t n = po_Value_Size(v);
      if (!n) {
        puts_(b, "[]");
        break;
      }
      puts_(b, "[\n");
      for (size_t i = 0; i < n; i++) {
        indent(b, depth + 1);
        emit(b, po_Value_At(v, i), depth + 1);
        puts_(b, i + 1 < n ? ",\n" : "\n");
      }
      indent(b, depth);
      puts_(b, "]");
      break;
    }
    case kPo_ValueKind_Map: {
      size_t n = po_Value_Size(v);
      if (!n) {
        puts_(b, "{}");
        break;
      }
      Entry *e = po_Arena_Malloc(b->t.a, n * sizeof *e);
      if (!e) {
        b->t.oom = true;
        return;
      }
      for (size_t i = 0; i < n; i++) e[i] = (Entry){po_Value_KeyAt(v, i), po_Value_At(v, i)};
      qsort(e, n, sizeof *e, by_key);
      puts_(b, "{\n");
      for (size_t i = 0; i < n; i++) {
        indent(b, depth + 1);
        quoted(b, e[i].key, strlen(e[i].key));
        puts_(b, ": ");
        emit(b, e[i].v, depth + 1);
        puts_(b, i + 1 < n ? ",\n" : "\n");
      }
      indent(b, depth);
      puts_(b, "}");
      break;
    }
  }
}

char *po_Value_ToPrettyJson(const po_Value *v, po_Arena *a) {
  Buf b = {.t = {.a = a, .initial = 4096}};
  emit(&b, v, 0);
  puts_(&b, "\n");
  return b.t.oom ? NULL : b.t.buf;
}

/* Where a line of that text is: the same walk, counting lines instead of writing them. A
 * scalar, "[]" and "{}" take one line; a non-empty container its opening line (the member's or
 * item's own), one or more lines per child, and its closing line. */
typedef struct {
  po_TextBuf path; /* the pointer of the value being walked */
  int line, want;  /* the walk's line; the line asked for */
  const char *found;
  bool oom;
} Locate;

static void pointer_segment(po_TextBuf *t, const char *s) {
  po_TextBuf_Put(t, "/", 1);
  for (; *s; s++) {
    if (*s == '~') po_TextBuf_Put(t, "~0", 2);
    else if (*s == '/') po_TextBuf_Put(t, "~1", 2);
    else po_TextBuf_Put(t, s, 1);
  }
}

static void found_here(Locate *l) {
  if (l->found) return;
  po_TextBuf_Put(&l->path, "", 0);
  l->found = l->path.oom ? NULL : po_Arena_Strndup(l->path.a, l->path.buf ? l->path.buf : "", l->path.len);
  if (!l->found) l->oom = true;
}

static void locate(Locate *l, const po_Value *v) {
  if (l->found || l->oom) return;
  if (l->line == l->want) return found_here(l); /* this value starts on the line */
  po_ValueKind k = po_Value_Kind(v);
  size_t n = po_Value_Size(v);
  if ((k != kPo_ValueKind_List && k != kPo_ValueKind_Map) || !n) return;
  Entry *e = NULL;
  if (k == kPo_ValueKind_Map) {
    if (!(e = po_Arena_Malloc(l->path.a, n * sizeof *e))) {
      l->oom = true;
      return;
    }
    for (size_t i = 0; i < n; i++) e[i] = (Entry){po_Value_KeyAt(v, i), po_Value_At(v, i)};
    qsort(e, n, sizeof *e, by_key);
  }
  size_t mark = l->path.len;
  for (size_t i = 0; i < n && !l->found && !l->oom; i++) {
    l->line++;
    if (e) {
      pointer_segment(&l->path, e[i].key);
    } else {
      char num[24];
      po_TextBuf_Put(&l->path, num, (size_t)snprintf(num, sizeof num, "/%zu", i));
    }
    locate(l, e ? e[i].v : po_Value_At(v, i));
    l->path.len = mark;
  }
  if (l->found || l->oom) return;
  l->line++; /* the closing line: the container itself */
  if (l->line == l->want) found_here(l);
}

const char *po_Value_PrettyJsonPointerAt(const po_Value *v, int line, po_Arena *a) {
  Locate l = {.path = {.a = a, .initial = 64}, .line = 1, .want = line};
  if (line < 1) return NULL;
  locate(&l, v);
  return l.found;
}

/* ================================ from a message ================================ */

static void fail(Buf *b, po_Status *st) {
  if (b->failed) return;
  b->failed = true;
  if (b->st) *b->st = *st;
}

/* A well-known type other than an Any (Duration, Timestamp, wrappers, Struct, Value, FieldMask,
 * ...: small, and with encodings of their own) goes through upb's encoder and the value form,
 * which is what the text route does with it. Its errors (a Duration out of range) are upb's. */
static void wkt(Buf *b, const upb_MessageDef *m, const upb_Message *msg, int depth) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  char *text = po_Json_Encode(b->s, m, msg, po_Arena_Upb(b->t.a), &len, &st);
  const po_Value *v = text ? po_Value_ParseJson(text, len, b->t.a, &st) : NULL;
  if (!v) return fail(b, &st);
  emit(b, v, depth);
}

typedef struct {
  const char *key;
  size_t key_len;
  const upb_FieldDef *f;
  upb_MessageValue v;
} Field;

static int by_field(const void *x, const void *y) {
  return strcmp(((const Field *)x)->key, ((const Field *)y)->key);
}

static void message(Buf *b, const upb_MessageDef *m, const upb_Message *msg, int depth);

/* One value of field f (an element, for repeated fields), as upb's JSON encoder writes it and
 * po_Value_ParseJson then reads it. */
static void scalar(Buf *b, const upb_FieldDef *f, upb_MessageValue v, int depth) {
  char num[32];
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool: puts_(b, v.bool_val ? "true" : "false"); break;
    case kUpb_CType_Int32: integer(b, v.int32_val); break;
    case kUpb_CType_UInt32: integer(b, v.uint32_val); break;
    case kUpb_CType_Int64:
    case kUpb_CType_UInt64: { /* quoted: JSON's numbers are doubles */
      bool neg = upb_FieldDef_CType(f) == kUpb_CType_Int64 && v.int64_val < 0;
      uint64_t u = upb_FieldDef_CType(f) == kUpb_CType_UInt64 ? v.uint64_val
                   : neg ? 0ULL - (uint64_t)v.int64_val : (uint64_t)v.int64_val;
      char *p = digits(num + sizeof num - 1, u);
      num[sizeof num - 1] = '"';
      if (neg) *--p = '-';
      *--p = '"';
      put(b, p, (size_t)(num + sizeof num - p));
      break;
    }
    case kUpb_CType_Float:
    case kUpb_CType_Double: {
      double d = upb_FieldDef_CType(f) == kUpb_CType_Float ? v.float_val : v.double_val;
      if (isnan(d)) puts_(b, "\"NaN\"");
      else if (isinf(d)) puts_(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
      else {
        /* upb's round-trip text, then as the parser types it: without '.' or an exponent it
         * is an integer ("-0" is 0), else a double printed at its shortest */
        if (upb_FieldDef_CType(f) == kUpb_CType_Float) _upb_EncodeRoundTripFloat(v.float_val, num, sizeof num);
        else _upb_EncodeRoundTripDouble(v.double_val, num, sizeof num);
        if (strpbrk(num, ".eE")) floating(b, strtod(num, NULL));
        else integer(b, strtoll(num, NULL, 10));
      }
      break;
    }
    case kUpb_CType_String: quoted(b, v.str_val.data, v.str_val.size); break;
    case kUpb_CType_Bytes: { /* standard base64 with padding, as upb writes it */
      static const char k64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      const unsigned char *p = (const unsigned char *)v.str_val.data;
      size_t n = v.str_val.size;
      put(b, "\"", 1);
      for (size_t i = 0; i < n; i += 3) {
        unsigned x = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {k64[x >> 18], k64[(x >> 12) & 63], i + 1 < n ? k64[(x >> 6) & 63] : '=', i + 2 < n ? k64[x & 63] : '='};
        put(b, q, 4);
      }
      put(b, "\"", 1);
      break;
    }
    case kUpb_CType_Enum: {
      const upb_EnumDef *e = upb_FieldDef_EnumSubDef(f);
      if (!strcmp(upb_EnumDef_FullName(e), "google.protobuf.NullValue")) {
        puts_(b, "null");
        break;
      }
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(e, v.int32_val);
      if (ev) quoted(b, upb_EnumValueDef_Name(ev), strlen(upb_EnumValueDef_Name(ev)));
      else integer(b, v.int32_val); /* a number this schema has no name for */
      break;
    }
    case kUpb_CType_Message: message(b, upb_FieldDef_MessageSubDef(f), v.msg_val, depth); break;
  }
}

static void map(Buf *b, const upb_FieldDef *f, const upb_Map *mp, int depth) {
  const upb_MessageDef *entry = upb_FieldDef_MessageSubDef(f);
  const upb_FieldDef *kf = upb_MessageDef_FindFieldByNumber(entry, 1);
  const upb_FieldDef *vf = upb_MessageDef_FindFieldByNumber(entry, 2);
  size_t n = upb_Map_Size(mp);
  if (!n) return puts_(b, "{}");
  Field *e = upb_Arena_Malloc(po_Arena_Upb(b->t.a), n * sizeof *e);
  if (!e) return (void)(b->t.oom = true);
  size_t i = 0;
  for (size_t it = kUpb_Map_Begin; i < n && upb_MapIterator_Next(mp, &it); i++) {
    upb_MessageValue k = upb_MapIterator_Key(mp, it);
    char num[24], *p;
    switch (upb_FieldDef_CType(kf)) { /* JSON's keys are strings, whatever the proto's type */
      case kUpb_CType_String: e[i].key = po_Arena_Strndup(b->t.a, k.str_val.data, k.str_val.size); break;
      case kUpb_CType_Bool: e[i].key = k.bool_val ? "true" : "false"; break;
      default: {
        int64_t s = upb_FieldDef_CType(kf) == kUpb_CType_Int32    ? k.int32_val
                    : upb_FieldDef_CType(kf) == kUpb_CType_Int64  ? k.int64_val
                    : 0;
        uint64_t u = upb_FieldDef_CType(kf) == kUpb_CType_UInt32   ? k.uint32_val
                     : upb_FieldDef_CType(kf) == kUpb_CType_UInt64 ? k.uint64_val
                     : s < 0                                        ? 0ULL - (uint64_t)s
                                                                    : (uint64_t)s;
        p = digits(num + sizeof num, u);
        if (s < 0) *--p = '-';
        e[i].key = po_Arena_Strndup(b->t.a, p, (size_t)(num + sizeof num - p));
      }
    }
    if (!e[i].key) return (void)(b->t.oom = true);
    e[i].key_len = strlen(e[i].key);
    e[i].v = upb_MapIterator_Value(mp, it);
  }
  qsort(e, i, sizeof *e, by_field);
  puts_(b, "{\n");
  for (size_t j = 0; j < i; j++) {
    indent(b, depth + 1);
    quoted(b, e[j].key, e[j].key_len);
    puts_(b, ": ");
    scalar(b, vf, e[j].v, depth + 1);
    puts_(b, j + 1 < i ? ",\n" : "\n");
  }
  indent(b, depth);
  puts_(b, "}");
}

static void field(Buf *b, const upb_FieldDef *f, upb_MessageValue v, int depth) {
  if (upb_FieldDef_IsMap(f)) return map(b, f, v.map_val, depth);
  if (!upb_FieldDef_IsRepeated(f)) return scalar(b, f, v, depth);
  size_t n = upb_Array_Size(v.array_val);
  if (!n) return puts_(b, "[]");
  puts_(b, "[\n");
  for (size_t i = 0; i < n; i++) {
    indent(b, depth + 1);
    scalar(b, f, upb_Array_Get(v.array_val, i), depth + 1);
    puts_(b, i + 1 < n ? ",\n" : "\n");
  }
  indent(b, depth);
  puts_(b, "]");
}

/* The set fields of msg (those upb's encoder writes: upb_Message_Next skips proto3 defaults and
 * empty lists and maps) sorted by proto name; `type_url`, when not NULL, first as "@type" (an
 * Any's payload; '@' sorts before every field name anyway). */
static void fields(Buf *b, const upb_MessageDef *m, const upb_Message *msg, const upb_StringView *type_url, int depth) {
  if (depth >= kMaxDepth) {
    po_Status st;
    po_Status_Set(&st, kPo_Status_Limit, "value nested deeper than %d levels", kMaxDepth);
    return fail(b, &st);
  }
  const po_Schema *s = b->s;
  size_t n = 0, cap = 0;
  Field *e = NULL;
  const upb_FieldDef *f;
  upb_MessageValue v;
  for (size_t it = kUpb_Message_Begin; upb_Message_Next(msg, m, po_Schema_Pool(s), &f, &v, &it);) {
    if (n == cap) { /* doubling in the arena: at most 2x the fields' count */
      cap = cap ? 2 * cap : 16;
      Field *ne = upb_Arena_Malloc(po_Arena_Upb(b->t.a), cap * sizeof *ne);
      if (!ne) return (void)(b->t.oom = true);
      if (n) memcpy(ne, e, n * sizeof *e);
      e = ne;
    }
    const char *key = upb_FieldDef_IsExtension(f) ? po_Arena_Printf(b->t.a, "[%s]", upb_FieldDef_FullName(f))
                                                 : upb_FieldDef_Name(f);
    if (!key) return (void)(b->t.oom = true);
    e[n++] = (Field){key, strlen(key), f, v};
  }
  if (!n && !type_url) return puts_(b, "{}");
  if (n > 1) qsort(e, n, sizeof *e, by_field);
  puts_(b, "{\n");
  if (type_url) {
    indent(b, depth + 1);
    puts_(b, "\"@type\": ");
    quoted(b, type_url->data, type_url->size);
    puts_(b, n ? ",\n" : "\n");
  }
  for (size_t i = 0; i < n; i++) {
    indent(b, depth + 1);
    quoted(b, e[i].key, e[i].key_len);
    puts_(b, ": ");
    field(b, e[i].f, e[i].v, depth + 1);
    puts_(b, i + 1 < n ? ",\n" : "\n");
  }
  indent(b, depth);
  puts_(b, "}");
}

/* An Any whose payload is a plain message: "@type" and the payload's fields, decoded from its
 * bytes as upb's encoder does (strings aliased: the bytes live in the message's arena). Anything
 * else — no type, a type the schema lacks, a well-known payload, bytes that do not decode —
 * takes upb's own route, which writes it or says what is wrong. */
static void any(Buf *b, const upb_MessageDef *m, const upb_Message *msg, int depth) {
  upb_StringView url = upb_Message_Get(msg, upb_MessageDef_FindFieldByNumber(m, 1)).str_val;
  upb_StringView bytes = upb_Message_Get(msg, upb_MessageDef_FindFieldByNumber(m, 2)).str_val;
  const char *slash = url.size ? memrchr(url.data, '/', url.size) : NULL;
  const char *name = slash ? po_Arena_Strndup(b->t.a, slash + 1, url.size - (size_t)(slash + 1 - url.data)) : NULL;
  const upb_MessageDef *pm = name ? po_Schema_FindMessage(b->s, name) : NULL;
  if (!pm || upb_MessageDef_WellKnownType(pm) != kUpb_WellKnown_Unspecified) return wkt(b, m, msg, depth);
  upb_Arena *ua = po_Arena_Upb(b->t.a);
  upb_Message *pmsg = upb_Message_New(pm, ua);
  if (!pmsg) return (void)(b->t.oom = true);
  if (upb_Decode(bytes.data, bytes.size, pmsg, upb_MessageDef_MiniTable(pm), NULL, kUpb_DecodeOption_AliasString, ua) !=
      kUpb_DecodeStatus_Ok) {
    return wkt(b, m, msg, depth);
  }
  fields(b, pm, pmsg, &url, depth);
}

/* "-1.5s" as upb writes a Duration: whole seconds, then the nanos in groups of three digits
 * with trailing zero groups dropped. What upb refuses (out of range, mixed signs) goes to it
 * for its error. Every cluster has one or more: through upb and the parser they were a third
 * of an every-cluster preview. */
static void duration(Buf *b, const upb_MessageDef *m, const upb_Message *msg, int depth) {
  int64_t secs = upb_Message_Get(msg, upb_MessageDef_FindFieldByNumber(m, 1)).int64_val;
  int32_t nanos = upb_Message_Get(msg, upb_MessageDef_FindFieldByNumber(m, 2)).int32_val;
  if (secs > 315576000000LL || secs < -315576000000LL || (secs < 0) != (nanos < 0) || nanos <= -1000000000 ||
      nanos >= 1000000000) {
    return wkt(b, m, msg, depth);
  }
  char num[48], *end = num + sizeof num, *p = end;
  *--p = '"';
  *--p = 's';
  if (nanos) {
    uint32_t n = (uint32_t)(nanos < 0 ? -nanos : nanos);
    int width = 9;
    while (n % 1000 == 0) n /= 1000, width -= 3;
    char *q = p;
    p = digits(p, n);
    while (q - p < width) *--p = '0';
    *--p = '.';
  }
  p = digits(p, secs < 0 ? 0ULL - (uint64_t)secs : (uint64_t)secs);
  if (secs < 0) *--p = '-';
  *--p = '"';
  put(b, p, (size_t)(end - p));
}

static void message(Buf *b, const upb_MessageDef *m, const upb_Message *msg, int depth) {
  if (b->failed || b->t.oom) return;
  switch (upb_MessageDef_WellKnownType(m)) {
    case kUpb_WellKnown_Unspecified: return fields(b, m, msg, NULL, depth);
    case kUpb_WellKnown_Any: return any(b, m, msg, depth);
    case kUpb_WellKnown_Duration: return duration(b, m, msg, depth);
    case kUpb_WellKnown_DoubleValue:
    case kUpb_WellKnown_FloatValue:
    case kUpb_WellKnown_Int64Value:
    case kUpb_WellKnown_UInt64Value:
    case kUpb_WellKnown_Int32Value:
    case kUpb_WellKnown_UInt32Value:
    case kUpb_WellKnown_StringValue:
    case kUpb_WellKnown_BytesValue:
    case kUpb_WellKnown_BoolValue: { /* a wrapper is its value */
      const upb_FieldDef *vf = upb_MessageDef_FindFieldByNumber(m, 1);
      return scalar(b, vf, upb_Message_Get(msg, vf), depth);
    }
    default: return wkt(b, m, msg, depth); /* Timestamp, FieldMask, Struct, Value, ListValue, Empty */
  }
}

char *po_Message_ToPrettyJson(const po_Message *m, po_Arena *a, size_t *len, po_Status *status) {
  Buf b = {.t = {.a = a, .initial = 4096}, .st = status, .s = m->schema};
  message(&b, m->def, m->msg, 0);
  puts_(&b, "\n");
  if (b.t.oom) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
  if (b.failed) {
    /* A part has no JSON form: upb's encoder of the whole message says where, in the words
     * po_Message_ToJson's callers print (and, were it to succeed, its text is the answer). */
    size_t tl = 0;
    po_Status_Clear(status);
    char *text = po_Message_ToJson(m, a, &tl, status);
    const po_Value *v = text ? po_Value_ParseJson(text, tl, a, status) : NULL;
    char *out = v ? po_Value_ToPrettyJson(v, a) : NULL;
    if (out && len) *len = strlen(out);
    return out;
  }
  if (len) *len = b.t.len;
  return b.t.buf;
}
