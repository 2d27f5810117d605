/* Values on and around the boundaries of a field's protoc-gen-validate rules, read from the
 * embedded schema (validate.FieldRules, as proto/src/rules.c gives it). What Envoy accepts is
 * never decided here: the oracle judges every value; this file only aims at the edges. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "google/protobuf/descriptor.upb.h"
#include "upb/decode.h"

/* ---- reading the rules ---- */

bool po_DiffRules_Of(const po_Schema *s, const upb_FieldDef *f, upb_Arena *ua, po_DiffRules *out) {
  *out = (po_DiffRules){0};
  out->r = po_Schema_FieldRules(s, f, ua, &out->rd);
  if (!out->r) return false;
  const upb_OneofDef *type = upb_MessageDef_FindOneofByName(out->rd, "type");
  const upb_FieldDef *member = type ? upb_Message_WhichOneof(out->r, type) : NULL;
  if (member) {
    out->type = upb_FieldDef_Name(member);
    out->k = upb_Message_Get(out->r, member).msg_val;
    out->kd = upb_FieldDef_MessageSubDef(member);
  }
  return true;
}

bool po_DiffRules_Get(const upb_Message *m, const upb_MessageDef *d, const char *name, upb_MessageValue *v,
                      const upb_FieldDef **f) {
  if (!m) return false;
  const upb_FieldDef *x = upb_MessageDef_FindFieldByName(d, name);
  if (!x || upb_FieldDef_IsRepeated(x)) return false;
  if (upb_FieldDef_HasPresence(x) ? !upb_Message_Has(m, x) : false) return false;
  *v = upb_Message_Get(m, x);
  if (f) *f = x;
  return true;
}

const upb_Array *po_DiffRules_List(const upb_Message *m, const upb_MessageDef *d, const char *name,
                                   const upb_FieldDef **f) {
  if (!m) return NULL;
  const upb_FieldDef *x = upb_MessageDef_FindFieldByName(d, name);
  if (!x || !upb_FieldDef_IsRepeated(x)) return NULL;
  const upb_Array *arr = upb_Message_Get(m, x).array_val;
  if (f) *f = x;
  return arr && upb_Array_Size(arr) ? arr : NULL;
}

bool po_DiffRules_MessageRequired(const po_DiffRules *r) {
  const upb_FieldDef *mf = upb_MessageDef_FindFieldByName(r->rd, "message");
  if (!mf || !upb_Message_Has(r->r, mf)) return false;
  const upb_Message *mr = upb_Message_Get(r->r, mf).msg_val;
  upb_MessageValue v;
  return po_DiffRules_Get(mr, upb_FieldDef_MessageSubDef(mf), "required", &v, NULL) && v.bool_val;
}

/* The validate.required extension of OneofOptions: as rules.c reads validate.rules, the options
 * re-encoded and decoded with the pool's extension registry. */
bool po_Diff_OneofRequired(const po_Schema *s, const upb_OneofDef *o, upb_Arena *ua) {
  if (!upb_OneofDef_HasOptions(o)) return false;
  const upb_DefPool *pool = po_Schema_Pool(s);
  const upb_FieldDef *ext = upb_DefPool_FindExtensionByName(pool, "validate.required");
  const upb_MessageDef *od = upb_DefPool_FindMessageByName(pool, "google.protobuf.OneofOptions");
  if (!ext || !od) return false;
  size_t len = 0;
  char *bytes = google_protobuf_OneofOptions_serialize(upb_OneofDef_Options(o), ua, &len);
  if (!bytes || !len) return false;
  upb_Message *opts = upb_Message_New(od, ua);
  if (!opts || upb_Decode(bytes, len, opts, upb_MessageDef_MiniTable(od), upb_DefPool_ExtensionRegistry(pool), 0,
                          ua) != kUpb_DecodeStatus_Ok) {
    return false;
  }
  return upb_Message_Has(opts, ext) && upb_Message_Get(opts, ext).bool_val;
}

bool po_Diff_IsWellKnown(const upb_MessageDef *m) {
  return !strncmp(upb_MessageDef_FullName(m), "google.protobuf.", 16);
}

const upb_FieldDef *po_Diff_Scalar(const upb_FieldDef *f) {
  const upb_MessageDef *m = upb_FieldDef_IsSubMessage(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
  if (!m || !po_Diff_IsWellKnown(m)) return f;
  const char *n = upb_MessageDef_FullName(m);
  size_t len = strlen(n);
  if (len < 5 || strcmp(n + len - 5, "Value") != 0) return f;
  const upb_FieldDef *v = upb_MessageDef_FindFieldByName(m, "value");
  return v ? v : f;
}

/* ---- output helpers ---- */

const char *po_Diff_JsonString(po_Arena *a, const char *s, size_t len) {
  po_TextBuf t = {.a = a};
  po_TextBuf_Put(&t, "\"", 1);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\', esc[1] = (char)c;
      po_TextBuf_Put(&t, esc, 2);
    } else if (c < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", c);
      po_TextBuf_Put(&t, esc, 6);
    } else {
      po_TextBuf_Put(&t, (const char *)&c, 1);
    }
  }
  po_TextBuf_Put(&t, "\"", 1);
  return t.oom ? NULL : t.buf;
}

static bool push(po_DiffValues *out, po_Arena *a, const char *json, const char *kind) {
  if (!json) return false;
  for (size_t i = 0; i < out->n; i++) {
    if (!strcmp(out->v[i].json, json) && !strcmp(out->v[i].kind, kind)) return true;
  }
  if (out->n == out->cap) {
    size_t cap = out->cap ? 2 * out->cap : 16;
    po_DiffValue *v = po_Arena_Malloc(a, cap * sizeof *v);
    if (!v) return false;
    if (out->n) memcpy(v, out->v, out->n * sizeof *v);
    out->v = v, out->cap = cap;
  }
  out->v[out->n++] = (po_DiffValue){json, kind};
  return true;
}

/* ---- numbers ---- */

typedef long double Num;

static Num num_of(upb_MessageValue v, upb_CType ct) {
  switch (ct) {
    case kUpb_CType_Int32: case kUpb_CType_Enum: return v.int32_val;
    case kUpb_CType_UInt32: return v.uint32_val;
    case kUpb_CType_Int64: return v.int64_val;
    case kUpb_CType_UInt64: return v.uint64_val;
    case kUpb_CType_Float: return v.float_val;
    case kUpb_CType_Double: return v.double_val;
    default: return 0;
  }
}

/* The values a field of this type can be given exactly through Consul's wire convention
 * (every number a float64): the type's range, integers within 2^53. Negative values are left
 * out of unsigned fields: Go's float64-to-unsigned conversion of them is
 * implementation-defined, so Consul itself gives no one answer. */
static void range_of(upb_CType ct, Num *lo, Num *hi) {
  const Num k53 = 9007199254740992.0L;
  switch (ct) {
    case kUpb_CType_Int32: *lo = -2147483648.0L, *hi = 2147483647.0L; break;
    case kUpb_CType_UInt32: *lo = 0, *hi = 4294967295.0L; break;
    case kUpb_CType_Int64: *lo = -k53, *hi = k53; break;
    case kUpb_CType_UInt64: *lo = 0, *hi = k53; break;
    case kUpb_CType_Float: *lo = -3.0e38L, *hi = 3.0e38L; break;
    default: *lo = -1.0e300L, *hi = 1.0e300L; break;
  }
}

static bool is_float(upb_CType ct) { return ct == kUpb_CType_Float || ct == kUpb_CType_Double; }

/* A number as JSON: integers as integer literals, floats always with a '.' or an exponent, so
 * the typed convention (PropertyOverrides) reads a float64 as the wire convention does. */
static const char *num_json(po_Arena *a, Num x, upb_CType ct) {
  if (!is_float(ct)) return po_Arena_Printf(a, "%.0Lf", x);
  char buf[64];
  snprintf(buf, sizeof buf, "%.15Lg", x);
  if (strtod(buf, NULL) != (double)x) snprintf(buf, sizeof buf, "%.17Lg", x);
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  return po_Arena_Strndup(a, buf, strlen(buf));
}

static bool push_num(po_DiffValues *out, po_Arena *a, Num x, upb_CType ct, const char *kind) {
  Num lo, hi;
  range_of(ct, &lo, &hi);
  if (!is_float(ct)) x = roundl(x);
  if (x == 0) x = 0; /* not -0 */
  if (x < lo || x > hi) return true;
  return push(out, a, num_json(a, x, ct), kind);
}

static const char *const kNumOps[] = {"const", "lt", "lte", "gt", "gte"};

static bool numeric_values(const po_DiffRules *r, upb_CType ct, po_Arena *a, po_DiffRng *rng, size_t extra,
                           po_DiffValues *out) {
  Num bounds[16];
  const char *kinds[16];
  size_t nb = 0;
  for (size_t i = 0; i < 5; i++) {
    upb_MessageValue v;
    const upb_FieldDef *f;
    if (!po_DiffRules_Get(r->k, r->kd, kNumOps[i], &v, &f)) continue;
    kinds[nb] = po_Arena_Printf(a, "%s.%s", r->type, kNumOps[i]);
    bounds[nb++] = num_of(v, upb_FieldDef_CType(f));
  }
  static const char *const kLists[] = {"in", "not_in"};
  for (size_t l = 0; l < 2; l++) {
    const upb_FieldDef *f;
    const upb_Array *arr = po_DiffRules_List(r->k, r->kd, kLists[l], &f);
    for (size_t i = 0; arr && i < upb_Array_Size(arr) && nb < 16; i++) {
      kinds[nb] = po_Arena_Printf(a, "%s.%s", r->type, kLists[l]);
      bounds[nb++] = num_of(upb_Array_Get(arr, i), upb_FieldDef_CType(f));
    }
  }
  bool ok = push_num(out, a, 0, ct, po_Arena_Printf(a, "%s.%s", r->type, nb ? "zero" : "none"));
  for (size_t i = 0; i < nb; i++) {
    Num steps[] = {-1, 0, 1, -0.5L, 0.5L, -0.001L, 0.001L};
    for (size_t k = 0; k < (is_float(ct) ? 7u : 3u); k++) ok &= push_num(out, a, bounds[i] + steps[k], ct, kinds[i]);
  }
  for (size_t i = 0; nb && i < extra; i++) {
    size_t b = po_DiffRng_Below(rng, nb);
    Num span = is_float(ct) ? (fabsl(bounds[b]) > 1 ? fabsl(bounds[b]) : 1) : 8;
    Num off = ((Num)po_DiffRng_Below(rng, 2001) - 1000) / 1000 * span;
    ok &= push_num(out, a, bounds[b] + off, ct, kinds[b]);
  }
  return ok;
}

/* ---- enums, bools ---- */

static bool enum_values(const po_DiffRules *r, const upb_FieldDef *f, po_Arena *a, po_DiffValues *out) {
  const upb_EnumDef *e = upb_FieldDef_EnumSubDef(f);
  const char *kind = "enum.none";
  upb_MessageValue v;
  if (r->k && po_DiffRules_Get(r->k, r->kd, "const", &v, NULL)) kind = "enum.const";
  else if (r->k && po_DiffRules_List(r->k, r->kd, "in", NULL)) kind = "enum.in";
  else if (r->k && po_DiffRules_List(r->k, r->kd, "not_in", NULL)) kind = "enum.not_in";
  else if (r->k && po_DiffRules_Get(r->k, r->kd, "defined_only", &v, NULL) && v.bool_val) kind = "enum.defined_only";
  bool ok = true;
  /* every name (Consul's wire convention refuses enums by number): a defined name is all a patch
   * can give, so `defined_only` is met by each */
  for (int i = 0; i < upb_EnumDef_ValueCount(e) && i < 24; i++) {
    const char *name = upb_EnumValueDef_Name(upb_EnumDef_Value(e, i));
    ok &= push(out, a, po_Diff_JsonString(a, name, strlen(name)), kind);
  }
  return ok;
}

/* ---- strings ---- */

static const char *repeat(po_Arena *a, const char *unit, size_t n) {
  size_t u = strlen(unit);
  if (n > 70000) n = 70000;
  char *s = po_Arena_Malloc(a, u * n + 1);
  if (!s) return NULL;
  for (size_t i = 0; i < n; i++) memcpy(s + i * u, unit, u);
  return s;
}

static bool push_str(po_DiffValues *out, po_Arena *a, const char *s, const char *kind) {
  return s ? push(out, a, po_Diff_JsonString(a, s, strlen(s)), kind) : false;
}

/* Samples for the well-known formats: each valid and invalid ones near the edges of its grammar. */
static const char *const kWellKnown[][12] = {
    {"email", "a@example.com", "a", "@example.com", "a@", "a b@example.com", "<a@example.com>", "a@[::1]", NULL},
    {"hostname", "example.com", "a", "a..b", "-a.com", "a-.com", "a_b.com", "xn--a.com", "a.b.", "1.2.3.4", "é.com", NULL},
    {"ip", "10.0.0.1", "::1", "1.2.3", "1.2.3.256", "fe80::1%eth0", "::ffff:1.2.3.4", "a", " 10.0.0.1", NULL},
    {"ipv4", "10.0.0.1", "0.0.0.0", "::1", "1.2.3", "01.2.3.4", "255.255.255.255", "256.1.1.1", NULL},
    {"ipv6", "::1", "fe80::1", "10.0.0.1", "::ffff:1.2.3.4", ":::", "1::2::3", "[::1]", NULL},
    {"uri", "http://example.com/a", "a", "/a", "http://[::1]:80/", "http://a b", "urn:x", "http://", NULL},
    {"uri_ref", "/a", "a", "http://example.com/a", "%zz", "a b", "#x", "?q", NULL},
    {"address", "10.0.0.1", "example.com", "::1", "a..b", "a b", "1.2.3", "-a", NULL},
    {"uuid", "123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "x",
     "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400", NULL},
};
/* Samples for Envoy's header regexes (strict and not). */
static const char *const kHeaderName[] = {"x-a", "X-A", ":path", "a b", "a:b", "a\r\nb", "a\tb", "é", "a\x01", NULL};
static const char *const kHeaderValue[] = {"a b", "a\tb", "a\r\nb", "a\rb", "a\x01", "a\x7f", "é", "a\x0b", NULL};
/* And for patterns, which only the oracle reads. */
static const char *const kAny[] = {"a", "A", "abc", "a-b", "a.b", "a_b", "0", "a b", "é", "a:b", "/a", "*", "a/b", NULL};

static bool string_lengths(const po_DiffRules *r, po_Arena *a, po_DiffValues *out) {
  static const struct { const char *name; bool bytes; } kLens[] = {
      {"len", false}, {"min_len", false}, {"max_len", false}, {"len_bytes", true}, {"min_bytes", true}, {"max_bytes", true}};
  bool ok = true;
  for (size_t i = 0; i < 6; i++) {
    upb_MessageValue v;
    if (!po_DiffRules_Get(r->k, r->kd, kLens[i].name, &v, NULL)) continue;
    const char *kind = po_Arena_Printf(a, "string.%s", kLens[i].name);
    uint64_t n = v.uint64_val;
    for (uint64_t k = n ? n - 1 : 0; k <= n + 1; k++) {
      ok &= push_str(out, a, repeat(a, "a", k), kind);
      /* two bytes a rune: where runes and bytes part */
      ok &= push_str(out, a, repeat(a, "\xc3\xa9", kLens[i].bytes ? (k + 1) / 2 : k), kind);
    }
  }
  return ok;
}

static bool string_affixes(const po_DiffRules *r, po_Arena *a, po_DiffValues *out) {
  static const char *const kAffix[] = {"const", "prefix", "suffix", "contains", "not_contains"};
  bool ok = true;
  for (size_t i = 0; i < 5; i++) {
    upb_MessageValue v;
    if (!po_DiffRules_Get(r->k, r->kd, kAffix[i], &v, NULL)) continue;
    const char *kind = po_Arena_Printf(a, "string.%s", kAffix[i]);
    const char *s = po_Arena_Strndup(a, v.str_val.data, v.str_val.size);
    ok &= push_str(out, a, s, kind) && push_str(out, a, po_Arena_Printf(a, "x%s", s), kind) &&
          push_str(out, a, po_Arena_Printf(a, "%sx", s), kind) && push_str(out, a, "x", kind);
    if (v.str_val.size > 1) ok &= push_str(out, a, po_Arena_Strndup(a, s, v.str_val.size - 1), kind);
  }
  static const char *const kLists[] = {"in", "not_in"};
  for (size_t l = 0; l < 2; l++) {
    const upb_Array *arr = po_DiffRules_List(r->k, r->kd, kLists[l], NULL);
    const char *kind = po_Arena_Printf(a, "string.%s", kLists[l]);
    for (size_t i = 0; arr && i < upb_Array_Size(arr) && i < 8; i++) {
      upb_StringView sv = upb_Array_Get(arr, i).str_val;
      const char *s = po_Arena_Strndup(a, sv.data, sv.size);
      ok &= push_str(out, a, s, kind) && push_str(out, a, po_Arena_Printf(a, "%sx", s), kind);
    }
  }
  return ok;
}

static bool string_formats(const po_DiffRules *r, po_Arena *a, po_DiffValues *out) {
  bool ok = true;
  upb_MessageValue v;
  for (size_t i = 0; i < sizeof kWellKnown / sizeof *kWellKnown; i++) {
    if (!po_DiffRules_Get(r->k, r->kd, kWellKnown[i][0], &v, NULL) || !v.bool_val) continue;
    const char *kind = po_Arena_Printf(a, "string.well_known.%s", kWellKnown[i][0]);
    for (size_t k = 1; kWellKnown[i][k]; k++) ok &= push_str(out, a, kWellKnown[i][k], kind);
  }
  if (po_DiffRules_Get(r->k, r->kd, "well_known_regex", &v, NULL) && v.int32_val) {
    bool name = v.int32_val == 1;
    const char *kind = name ? "string.well_known_regex.HTTP_HEADER_NAME" : "string.well_known_regex.HTTP_HEADER_VALUE";
    for (const char *const *s = name ? kHeaderName : kHeaderValue; *s; s++) ok &= push_str(out, a, *s, kind);
  }
  if (po_DiffRules_Get(r->k, r->kd, "pattern", &v, NULL)) {
    for (const char *const *s = kAny; *s; s++) ok &= push_str(out, a, *s, "string.pattern");
  }
  return ok;
}

static bool string_random(po_Arena *a, po_DiffRng *rng, size_t extra, const char *type, po_DiffValues *out) {
  static const char *const kAlphabet[] = {"a", "Z", "0", "-", ".", ":", "/", "_", " ", "\t", "\xc3\xa9", "@", "*", "%"};
  bool ok = true;
  for (size_t i = 0; i < extra; i++) {
    size_t len = po_DiffRng_Below(rng, 12);
    po_TextBuf t = {.a = a};
    for (size_t k = 0; k < len; k++) po_TextBuf_Puts(&t, kAlphabet[po_DiffRng_Below(rng, sizeof kAlphabet / sizeof *kAlphabet)]);
    ok &= push_str(out, a, t.buf ? t.buf : "", po_Arena_Printf(a, "%s.random", type));
  }
  return ok;
}

bool po_DiffValues_Scalar(const po_DiffRules *r, const upb_FieldDef *scalar, po_Arena *a, po_DiffRng *rng,
                          size_t extra, po_DiffValues *out) {
  upb_CType ct = upb_FieldDef_CType(scalar);
  if (ct == kUpb_CType_Enum) return enum_values(r, scalar, a, out);
  if (ct == kUpb_CType_Bool) {
    return push(out, a, "true", "bool.const") && push(out, a, "false", "bool.const");
  }
  if (ct == kUpb_CType_String) {
    bool ok = push_str(out, a, "", "string.empty") && string_lengths(r, a, out) && string_affixes(r, a, out) &&
              string_formats(r, a, out);
    upb_MessageValue v;
    if (po_DiffRules_Get(r->k, r->kd, "ignore_empty", &v, NULL) && v.bool_val) ok &= push_str(out, a, "", "string.ignore_empty");
    return ok && string_random(a, rng, extra, "string", out);
  }
  if (ct == kUpb_CType_Bytes || ct == kUpb_CType_Message) return true;
  return numeric_values(r, ct, a, rng, extra, out);
}

/* ---- durations and timestamps ---- */

static bool push_dur(po_DiffDurs *out, po_Arena *a, int64_t s, int64_t n, const char *kind) {
  for (size_t i = 0; i < out->n; i++) {
    if (out->v[i].seconds == s && out->v[i].nanos == n) return true;
  }
  if (out->n == out->cap) {
    size_t cap = out->cap ? 2 * out->cap : 16;
    po_DiffDur *v = po_Arena_Malloc(a, cap * sizeof *v);
    if (!v) return false;
    if (out->n) memcpy(v, out->v, out->n * sizeof *v);
    out->v = v, out->cap = cap;
  }
  out->v[out->n++] = (po_DiffDur){s, n, kind};
  return true;
}

/* t nanoseconds as a valid pair (seconds and nanos of one sign). */
static bool push_total(po_DiffDurs *out, po_Arena *a, long double t, const char *kind) {
  int64_t s = (int64_t)(t / 1e9L);
  int64_t n = (int64_t)(t - (long double)s * 1e9L);
  return push_dur(out, a, s, n, kind);
}

static long double dur_of(const upb_Message *d, const upb_MessageDef *dd) {
  upb_MessageValue s = {0}, n = {0};
  po_DiffRules_Get(d, dd, "seconds", &s, NULL);
  po_DiffRules_Get(d, dd, "nanos", &n, NULL);
  return (long double)s.int64_val * 1e9L + n.int32_val;
}

bool po_DiffDurs_Of(const po_DiffRules *r, po_Arena *a, po_DiffRng *rng, size_t extra, po_DiffDurs *out) {
  long double bounds[16];
  const char *kinds[16];
  size_t nb = 0;
  for (size_t i = 0; i < 5; i++) {
    const upb_FieldDef *f = r->k ? upb_MessageDef_FindFieldByName(r->kd, kNumOps[i]) : NULL;
    if (!f || !upb_Message_Has(r->k, f)) continue;
    kinds[nb] = po_Arena_Printf(a, "%s.%s", r->type, kNumOps[i]);
    bounds[nb++] = dur_of(upb_Message_Get(r->k, f).msg_val, upb_FieldDef_MessageSubDef(f));
  }
  static const char *const kLists[] = {"in", "not_in"};
  for (size_t l = 0; l < 2; l++) {
    const upb_FieldDef *f;
    const upb_Array *arr = po_DiffRules_List(r->k, r->kd, kLists[l], &f);
    for (size_t i = 0; arr && i < upb_Array_Size(arr) && nb < 16; i++) {
      kinds[nb] = po_Arena_Printf(a, "%s.%s", r->type, kLists[l]);
      bounds[nb++] = dur_of(upb_Array_Get(arr, i).msg_val, upb_FieldDef_MessageSubDef(f));
    }
  }
  const char *zero = po_Arena_Printf(a, "%s.%s", r->type, nb ? "zero" : "none");
  const char *valid = po_Arena_Printf(a, "%s.valid", r->type);
  /* 0s, and pairs no Duration may hold (nanos out of range, signs that differ, seconds past
   * 10,000 years): Envoy's validators call them invalid whatever the bounds */
  bool ok = push_dur(out, a, 0, 0, zero) && push_dur(out, a, 0, 1000000000, valid) &&
            push_dur(out, a, 0, -1000000000, valid) && push_dur(out, a, 1, -1, valid) &&
            push_dur(out, a, -1, 1, valid) && push_dur(out, a, 315576000001LL, 0, valid) &&
            push_dur(out, a, 315576000000LL, 0, valid) && push_dur(out, a, 0, 999999999, valid);
  for (size_t i = 0; i < nb; i++) {
    long double steps[] = {-1, 0, 1, -1e9L, 1e9L, -1e6L, 1e6L};
    for (size_t k = 0; k < 7; k++) ok &= push_total(out, a, bounds[i] + steps[k], kinds[i]);
    int64_t s = (int64_t)(bounds[i] / 1e9L);
    ok &= push_dur(out, a, s - 1, 0, kinds[i]) && push_dur(out, a, s + 1, 0, kinds[i]);
  }
  for (size_t i = 0; nb && i < extra; i++) {
    size_t b = po_DiffRng_Below(rng, nb);
    long double off = ((long double)po_DiffRng_Below(rng, 4000001) - 2000000) * 1000;
    ok &= push_total(out, a, bounds[b] + off, kinds[b]);
  }
  return ok;
}

/* ---- a value the rules probably accept, for fuller objects ---- */

static bool num_ok(const po_DiffRules *r, Num x) {
  if (!r->k) return true;
  for (size_t i = 0; i < 5; i++) {
    upb_MessageValue v;
    const upb_FieldDef *f;
    if (!po_DiffRules_Get(r->k, r->kd, kNumOps[i], &v, &f)) continue;
    Num b = num_of(v, upb_FieldDef_CType(f));
    if ((i == 0 && x != b) || (i == 1 && x >= b) || (i == 2 && x > b) || (i == 3 && x <= b) || (i == 4 && x < b)) return false;
  }
  const upb_FieldDef *lf;
  const upb_Array *in = po_DiffRules_List(r->k, r->kd, "in", &lf);
  bool found = !in;
  for (size_t i = 0; in && i < upb_Array_Size(in); i++) found |= num_of(upb_Array_Get(in, i), upb_FieldDef_CType(lf)) == x;
  const upb_Array *out = po_DiffRules_List(r->k, r->kd, "not_in", &lf);
  for (size_t i = 0; out && i < upb_Array_Size(out); i++) found &= num_of(upb_Array_Get(out, i), upb_FieldDef_CType(lf)) != x;
  return found;
}

static const char *valid_number(const po_DiffRules *r, upb_CType ct, po_Arena *a) {
  Num cand[16] = {1, 0, 100, 1000, 0.5L, 10};
  size_t n = 6;
  for (size_t i = 0; r->k && i < 5; i++) {
    upb_MessageValue v;
    const upb_FieldDef *f;
    if (!po_DiffRules_Get(r->k, r->kd, kNumOps[i], &v, &f)) continue;
    Num b = num_of(v, upb_FieldDef_CType(f));
    cand[n++] = b + (i == 1 ? -1 : i == 3 ? 1 : 0);
  }
  const upb_FieldDef *lf;
  const upb_Array *in = po_DiffRules_List(r->k, r->kd, "in", &lf);
  if (in) cand[n++] = num_of(upb_Array_Get(in, 0), upb_FieldDef_CType(lf));
  for (size_t i = n; i-- > 0;) {
    Num x = is_float(ct) ? cand[i] : roundl(cand[i]);
    if (num_ok(r, x)) return num_json(a, x, ct);
  }
  return num_json(a, 1, ct);
}

static const char *valid_string(const po_DiffRules *r, po_Arena *a) {
  upb_MessageValue v;
  if (!r->k) return "\"x\"";
  if (po_DiffRules_Get(r->k, r->kd, "const", &v, NULL)) return po_Diff_JsonString(a, v.str_val.data, v.str_val.size);
  const upb_Array *in = po_DiffRules_List(r->k, r->kd, "in", NULL);
  if (in) {
    upb_StringView sv = upb_Array_Get(in, 0).str_val;
    return po_Diff_JsonString(a, sv.data, sv.size);
  }
  for (size_t i = 0; i < sizeof kWellKnown / sizeof *kWellKnown; i++) {
    if (po_DiffRules_Get(r->k, r->kd, kWellKnown[i][0], &v, NULL) && v.bool_val) return po_Diff_JsonString(a, kWellKnown[i][1], strlen(kWellKnown[i][1]));
  }
  uint64_t len = 1;
  static const char *const kMins[] = {"len", "min_len", "len_bytes", "min_bytes"};
  for (size_t i = 0; i < 4; i++) {
    if (po_DiffRules_Get(r->k, r->kd, kMins[i], &v, NULL) && v.uint64_val > len) len = v.uint64_val;
  }
  const char *pre = "", *suf = "";
  if (po_DiffRules_Get(r->k, r->kd, "prefix", &v, NULL)) pre = po_Arena_Strndup(a, v.str_val.data, v.str_val.size);
  if (po_DiffRules_Get(r->k, r->kd, "suffix", &v, NULL)) suf = po_Arena_Strndup(a, v.str_val.data, v.str_val.size);
  const char *s = po_Arena_Printf(a, "%s%s%s", pre, repeat(a, "a", len), suf);
  return s ? po_Diff_JsonString(a, s, strlen(s)) : NULL;
}

const char *po_DiffValues_Valid(const po_Schema *s, const upb_FieldDef *f, upb_Arena *ua, po_Arena *a) {
  if (upb_FieldDef_IsRepeated(f)) return NULL;
  const upb_FieldDef *sc = po_Diff_Scalar(f);
  upb_CType ct = upb_FieldDef_CType(sc);
  if (ct == kUpb_CType_Message || ct == kUpb_CType_Bytes) return NULL;
  po_DiffRules r;
  if (!po_DiffRules_Of(s, f, ua, &r)) r = (po_DiffRules){0};
  switch (ct) {
    case kUpb_CType_Bool: {
      upb_MessageValue v;
      return r.k && po_DiffRules_Get(r.k, r.kd, "const", &v, NULL) && !v.bool_val ? "false" : "true";
    }
    case kUpb_CType_String: return valid_string(&r, a);
    case kUpb_CType_Enum: {
      const upb_EnumDef *e = upb_FieldDef_EnumSubDef(sc);
      for (int i = upb_EnumDef_ValueCount(e); i-- > 0;) {
        const upb_EnumValueDef *ev = upb_EnumDef_Value(e, i);
        if (num_ok(&r, upb_EnumValueDef_Number(ev))) return po_Diff_JsonString(a, upb_EnumValueDef_Name(ev), strlen(upb_EnumValueDef_Name(ev)));
      }
      return NULL;
    }
    default: return valid_number(&r, ct, a);
  }
}
