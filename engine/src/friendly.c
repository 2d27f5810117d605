/* Friendly values: what people write ("5s") turned into what Consul's PatchStruct takes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"

/* ---- friendly Durations, parsed exactly (integers from the digits; no long double) -----------
 * Two grammars, by the string's shape:
 *  - digits, at most one '.', and a final 's' (with an optional sign): protobuf's JSON form,
 *    exactly as Go's protojson parses it (parseDuration in encoding/protojson): an integer part
 *    "0" or without leading zeros (or none), then optionally '.' and at most 9 digits; "s", "-s",
 *    "01s", "1.0000000000s" are refused, "+5s", ".5s" and "5.s" taken. Seconds and nanos come
 *    from the digits, so "315576000000.999999999s" is exact.
 *  - anything else ("250ms", "1h30m", "1.5h", "2us"): Go's time.ParseDuration, its rounding
 *    included (a fraction becomes uint64(float64(f) * (float64(unit) / scale)) nanoseconds,
 *    truncated: "1.5ns" is 1ns). Go refuses totals beyond 2^63 ns (292 years); here the total is
 *    kept in 128 bits and accepted while its seconds fit int64, so that validation can say
 *    "out of range" against protobuf's 10,000 years instead. */

static int protojson_form(const char *s, size_t n, int64_t *secs, int32_t *nanos) {
  if (n < 2) return 0;
  const char *p = s, *end = s + n - 1; /* the final 's' */
  bool neg = false;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  if (p == end) return 0;
  const char *int_start = p;
  if (*p == '0') p++;
  else if (*p >= '1' && *p <= '9') while (p < end && *p >= '0' && *p <= '9') p++;
  else if (*p != '.') return 0;
  const char *int_end = p;
  int64_t ns = 0;
  if (p < end) {
    if (*p++ != '.') return 0;
    int digits = 0;
    while (p < end && *p >= '0' && *p <= '9' && digits < 9) ns = ns * 10 + (*p++ - '0'), digits++;
    if (p != end) return 0; /* a tenth digit, or anything else */
    for (; digits < 9; digits++) ns *= 10;
  }
  uint64_t sec = 0;
  for (const char *q = int_start; q < int_end; q++) {
    if (sec > (UINT64_MAX - 9) / 10) return 2;
    sec = sec * 10 + (uint64_t)(*q - '0');
  }
  if (sec > (uint64_t)INT64_MAX) return 2;
  *secs = neg ? -(int64_t)sec : (int64_t)sec;
  *nanos = (int32_t)(neg ? -ns : ns);
  return 1;
}

static int go_duration(const char *s, int64_t *secs, int32_t *nanos) {
  static const struct { const char *unit; uint64_t ns; } kUnits[] = {
      {"ns", 1},          {"us", 1000},          {"\xc2\xb5s", 1000}, /* U+00B5 */
      {"\xce\xbcs", 1000} /* U+03BC */,          {"ms", 1000000},     {"s", 1000000000},
      {"m", 60000000000}, {"h", 3600000000000}};
  const char *p = s;
  bool neg = false;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  if (!strcmp(p, "0")) { /* Go: "0" (signed or not) is the one number without a unit */
    *secs = 0;
    *nanos = 0;
    return 1;
  }
  if (!*p) return 0;
  unsigned __int128 total = 0;
  while (*p) {
    const char *start = p;
    uint64_t v = 0, f = 0;
    bool big = false, f_overflow = false;
    double scale = 1;
    while (*p >= '0' && *p <= '9') {
      if (v > (UINT64_MAX - 9) / 10) big = true;
      else v = v * 10 + (uint64_t)(*p - '0');
      p++;
    }
    bool pre = p != start, post = false;
    if (*p == '.') {
      const char *fs = ++p;
      for (; *p >= '0' && *p <= '9'; p++) {
        if (f_overflow) continue; /* Go's leadingFraction: later digits are dropped */
        if (f > ((UINT64_C(1) << 63) - 1) / 10) { f_overflow = true; continue; }
        uint64_t y = f * 10 + (uint64_t)(*p - '0');
        if (y > UINT64_C(1) << 63) { f_overflow = true; continue; }
        f = y;
        scale *= 10;
      }
      post = p != fs;
    }
    if (!pre && !post) return 0;
    const char *u = p;
    while (*p && *p != '.' && !(*p >= '0' && *p <= '9')) p++;
    if (p == u) return 0; /* a missing unit */
    uint64_t unit = 0;
    for (size_t i = 0; i < sizeof kUnits / sizeof *kUnits; i++) {
      if (strlen(kUnits[i].unit) == (size_t)(p - u) && !memcmp(u, kUnits[i].unit, (size_t)(p - u))) unit = kUnits[i].ns;
    }
    if (!unit) return 0;
    if (big) return 2;
    total += (unsigned __int128)v * unit;
    if (f > 0) total += (uint64_t)((double)f * ((double)unit / scale));
    if (total / 1000000000u > (unsigned __int128)INT64_MAX) return 2;
  }
  int64_t sec = (int64_t)(total / 1000000000u);
  int32_t ns = (int32_t)(total % 1000000000u);
  *secs = neg ? -sec : sec;
  *nanos = neg ? -ns : ns;
  return 1;
}

int po_Duration_Parse(const char *s, int64_t *secs, int32_t *nanos) {
  size_t n = strlen(s);
  bool seconds_form = n > 0 && s[n - 1] == 's';
  for (size_t i = 0; seconds_form && i + 1 < n; i++) {
    char c = s[i];
    seconds_form = (c >= '0' && c <= '9') || c == '.' || (i == 0 && (c == '-' || c == '+'));
  }
  return seconds_form ? protojson_form(s, n, secs, nanos) : go_duration(s, secs, nanos);
}

/* Each rewrite below returns the value to use; when memory runs out it clears *ok (the value it
 * returns is then not to be used): a Duration without its nanos, a list of enums without an
 * element or an object without a child would be a different override, accepted as if whole. A
 * NULL value is JSON's null, so the flag, not the pointer, says whether it worked. */
static po_Value *friendly(const upb_FieldDef *f, const po_Value *v, po_Arena *a, bool *ok);

static po_Value *oom(bool *ok) {
  *ok = false;
  return NULL;
}

static po_Value *object_children(const upb_MessageDef *m, const po_Value *v, po_Arena *a, bool *ok) {
  po_Value *out = po_Value_NewMap(a);
  if (!out) return oom(ok);
  po_Value_SetPos(out, po_Value_Pos(v));
  for (size_t i = 0; i < po_Value_Size(v) && *ok; i++) {
    const char *k = po_Value_KeyAt(v, i);
    const upb_FieldDef *cf = upb_MessageDef_FindFieldByName(m, k);
    po_Value *cv = (po_Value *)po_Value_At(v, i);
    if (cf) cv = friendly(cf, cv, a, ok);
    /* The source map's keys are unique: appending keeps this linear in the number of keys. */
    if (*ok && !po_Value_MapAppendUnique(a, out, k, cv)) return oom(ok);
  }
  return out;
}

/* A repeated enum given by numbers: each known number by its name, the others as they were. */
static po_Value *enum_list(const upb_EnumDef *e, const po_Value *v, po_Arena *a, bool *ok) {
  po_Value *l = po_Value_NewList(a);
  if (!l) return oom(ok);
  for (size_t i = 0; i < po_Value_Size(v); i++) {
    const po_Value *e1 = po_Value_At(v, i);
    po_Value *c = (po_Value *)e1;
    if (po_Value_Kind(e1) == kPo_ValueKind_Int) {
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(e, (int32_t)po_Value_Int(e1));
      const char *name = ev ? upb_EnumValueDef_Name(ev) : NULL;
      if (name && !(c = po_Value_NewString(a, name, strlen(name)))) return oom(ok);
    }
    if (!po_Value_ListAppend(a, l, c)) return oom(ok);
  }
  return l;
}

static po_Value *friendly(const upb_FieldDef *f, const po_Value *v, po_Arena *a, bool *ok) {
  po_ValueKind k = po_Value_Kind(v);
  if (upb_FieldDef_IsMap(f)) return (po_Value *)v;
  if (upb_FieldDef_CType(f) == kUpb_CType_Enum) {
    const upb_EnumDef *e = upb_FieldDef_EnumSubDef(f);
    if (k == kPo_ValueKind_Int && po_Value_Int(v) >= INT32_MIN && po_Value_Int(v) <= INT32_MAX) {
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(e, (int32_t)po_Value_Int(v));
      if (ev) {
        const char *n = upb_EnumValueDef_Name(ev);
        po_Value *s = po_Value_NewString(a, n, strlen(n));
        if (!s) return oom(ok);
        po_Value_SetPos(s, po_Value_Pos(v));
        return s;
      }
    }
    if (k == kPo_ValueKind_List && upb_FieldDef_IsRepeated(f)) return enum_list(e, v, a, ok);
    return (po_Value *)v;
  }
  if (!upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f)) return (po_Value *)v;
  const upb_MessageDef *m = upb_FieldDef_MessageSubDef(f);
  if (k == kPo_ValueKind_String && strcmp(upb_MessageDef_FullName(m), "google.protobuf.Duration") == 0) {
    int64_t secs;
    int32_t nanos;
    if (po_Duration_Parse(po_Value_String(v, NULL), &secs, &nanos) != 1) return (po_Value *)v;
    po_Value *d = po_Value_NewMap(a), *sv = po_Value_NewInt(a, secs), *nv = nanos ? po_Value_NewInt(a, nanos) : NULL;
    if (!d || !sv || (nanos && !nv)) return oom(ok);
    if (!po_Value_MapPut(a, d, "seconds", sv) || (nanos && !po_Value_MapPut(a, d, "nanos", nv))) return oom(ok);
    po_Value_SetPos(d, po_Value_Pos(v));
    return d;
  }
  if (k == kPo_ValueKind_Map) return object_children(m, v, a, ok);
  return (po_Value *)v;
}

/* The field a path names, or NULL when any segment does not resolve (validation reports it). */
static const upb_FieldDef *target(const po_Schema *s, const upb_MessageDef *m, const char *path, po_Arena *a) {
  po_Resolved r;
  return po_Path_Resolve(s, m, path, a, &r) ? po_Resolved_Target(&r) : NULL;
}

bool po_Arguments_Friendly(const po_EnvoyApi *api, po_Arguments *args, po_Arena *a) {
  const po_Schema *s = po_EnvoyApi_Schema_(api, a, NULL);
  if (!s) return true; /* the compile that follows says there is no schema (or out of memory) */
  for (size_t i = 0; i < args->patch_count; i++) {
    po_Patch *p = &args->patches[i];
    if (!p->value || !p->path || po_Op_Parse(p->op) != kPo_Op_Add) continue;
    const char *msg = po_ResourceType_Message(po_ResourceType_Parse(p->resource_filter.resource_type));
    const upb_MessageDef *root = msg ? po_Schema_FindMessage(s, msg) : NULL;
    const upb_FieldDef *f = root ? target(s, root, p->path, a) : NULL;
    /* a path left unresolved for want of memory would leave "5s" or an enum's number as written,
     * which a target without Consul's wire typing accepts for a repeated enum */
    if (!f && po_Engine_OutOfMemory(a)) return false;
    if (!f) continue;
    bool ok = true;
    po_Value *v;
    if (po_Value_Kind(p->value) == kPo_ValueKind_Map && upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsRepeated(f) &&
        !upb_FieldDef_IsMap(f)) {
      v = object_children(upb_FieldDef_MessageSubDef(f), p->value, a, &ok);
    } else {
      v = friendly(f, p->value, a, &ok);
    }
    if (!ok) return false; /* this patch keeps its value as written; the caller reports out of memory */
    p->value = v;
  }
  return true;
}
