/* Friendly values: what people write ("5s") turned into what Consul's PatchStruct takes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"

/* Go's time.ParseDuration units, plus protobuf's "1.500s" form (which is a seconds value).
 * Values beyond protobuf's range are still parsed when int64 seconds hold them, so validation
 * can say "out of range" instead of refusing the string's type. */
int po_Duration_Parse(const char *s, int64_t *secs, int32_t *nanos) {
  static const struct { const char *unit; long double ns; } kUnits[] = {
      {"ns", 1}, {"us", 1e3L}, {"\xc2\xb5s", 1e3L}, {"ms", 1e6L}, {"s", 1e9L}, {"m", 60e9L}, {"h", 3600e9L}};
  const char *p = s;
  bool neg = false;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  if (!*p) return 0;
  long double total = 0;
  if (strcmp(p, "0") == 0) {
    *secs = 0;
    *nanos = 0;
    return 1;
  }
  while (*p) {
    char *end;
    if (!((*p >= '0' && *p <= '9') || *p == '.')) return 0;
    long double v = strtold(p, &end);
    if (end == p) return 0;
    for (const char *q = p; q < end; q++) {
      if (!((*q >= '0' && *q <= '9') || *q == '.')) return 0; /* no exponents or hex, as in Go */
    }
    p = end;
    size_t best = 0;
    long double mult = 0;
    for (size_t i = 0; i < sizeof kUnits / sizeof *kUnits; i++) {
      size_t n = strlen(kUnits[i].unit);
      if (strncmp(p, kUnits[i].unit, n) == 0 && n > best && !(n == 1 && kUnits[i].unit[0] == 'm' && p[1] == 's')) {
        best = n;
        mult = kUnits[i].ns;
      }
    }
    if (!best) return 0;
    p += best;
    total += v * mult;
  }
  if (neg) total = -total;
  long double sec = truncl(total / 1e9L);
  if (!(fabsl(sec) < 9.2e18L)) return 2;
  *secs = (int64_t)sec;
  long double ns = llroundl(total - sec * 1e9L);
  if (ns >= 1e9L || ns <= -1e9L) { /* rounding reached the next second */
    *secs += ns > 0 ? 1 : -1;
    ns += ns > 0 ? -1e9L : 1e9L;
  }
  *nanos = (int32_t)ns;
  return 1;
}

static po_Value *friendly(const upb_FieldDef *f, const po_Value *v, po_Arena *a);

static po_Value *object_children(const upb_MessageDef *m, const po_Value *v, po_Arena *a) {
  po_Value *out = po_Value_NewMap(a);
  if (!out) return (po_Value *)v;
  po_Value_SetPos(out, po_Value_Pos(v));
  for (size_t i = 0; i < po_Value_Size(v); i++) {
    const char *k = po_Value_KeyAt(v, i);
    const upb_FieldDef *cf = upb_MessageDef_FindFieldByName(m, k);
    po_Value *cv = (po_Value *)po_Value_At(v, i);
    /* The source map's keys are unique: appending keeps this linear in the number of keys. */
    po_Value_MapAppendUnique(a, out, k, cf ? friendly(cf, cv, a) : cv);
  }
  return out;
}

static po_Value *friendly(const upb_FieldDef *f, const po_Value *v, po_Arena *a) {
  po_ValueKind k = po_Value_Kind(v);
  if (upb_FieldDef_IsMap(f)) return (po_Value *)v;
  if (upb_FieldDef_CType(f) == kUpb_CType_Enum) {
    const upb_EnumDef *e = upb_FieldDef_EnumSubDef(f);
    if (k == kPo_ValueInt && po_Value_Int(v) >= INT32_MIN && po_Value_Int(v) <= INT32_MAX) {
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(e, (int32_t)po_Value_Int(v));
      if (ev) {
        const char *n = upb_EnumValueDef_Name(ev);
        po_Value *s = po_Value_NewString(a, n, strlen(n));
        if (s) po_Value_SetPos(s, po_Value_Pos(v));
        return s ? s : (po_Value *)v;
      }
    }
    if (k == kPo_ValueList && upb_FieldDef_IsRepeated(f)) {
      po_Value *l = po_Value_NewList(a);
      for (size_t i = 0; l && i < po_Value_Size(v); i++) {
        const po_Value *e1 = po_Value_At(v, i);
        po_Value *c = (po_Value *)e1;
        if (po_Value_Kind(e1) == kPo_ValueInt) {
          const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(e, (int32_t)po_Value_Int(e1));
          if (ev) c = po_Value_NewString(a, upb_EnumValueDef_Name(ev), strlen(upb_EnumValueDef_Name(ev)));
        }
        po_Value_ListAppend(a, l, c ? c : (po_Value *)e1);
      }
      return l ? l : (po_Value *)v;
    }
    return (po_Value *)v;
  }
  if (!upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f)) return (po_Value *)v;
  const upb_MessageDef *m = upb_FieldDef_MessageSubDef(f);
  if (k == kPo_ValueString && strcmp(upb_MessageDef_FullName(m), "google.protobuf.Duration") == 0) {
    int64_t secs;
    int32_t nanos;
    if (po_Duration_Parse(po_Value_String(v, NULL), &secs, &nanos) != 1) return (po_Value *)v;
    po_Value *d = po_Value_NewMap(a);
    if (!d) return (po_Value *)v;
    po_Value_SetPos(d, po_Value_Pos(v));
    po_Value_MapPut(a, d, "seconds", po_Value_NewInt(a, secs));
    if (nanos) po_Value_MapPut(a, d, "nanos", po_Value_NewInt(a, nanos));
    return d;
  }
  if (k == kPo_ValueMap) return object_children(m, v, a);
  return (po_Value *)v;
}

/* The field a path names, or NULL when any segment does not resolve. */
static const upb_FieldDef *target(const upb_MessageDef *m, const char *path) {
  while (*path == '/') path++;
  const upb_FieldDef *f = NULL;
  while (m) {
    const char *end = strchr(path, '/');
    size_t len = end ? (size_t)(end - path) : strlen(path);
    f = upb_MessageDef_FindFieldByNameWithSize(m, path, len);
    if (!f || !end) return f;
    if (upb_FieldDef_IsRepeated(f) || !upb_FieldDef_IsSubMessage(f)) return NULL;
    m = upb_FieldDef_MessageSubDef(f);
    path = end + 1;
  }
  return NULL;
}

void po_Arguments_Friendly(po_Arguments *args, po_Arena *a) {
  const po_Schema *s = po_Engine_Schema(NULL);
  if (!s) return;
  for (size_t i = 0; i < args->patch_count; i++) {
    po_Patch *p = &args->patches[i];
    if (!p->value || !p->path || po_Op_Parse(p->op) != kPo_OpAdd) continue;
    const char *msg = po_ResourceType_Message(po_ResourceType_Parse(p->resource_filter.resource_type));
    const upb_MessageDef *root = msg ? po_Schema_FindMessage(s, msg) : NULL;
    const upb_FieldDef *f = root ? target(root, p->path) : NULL;
    if (!f) continue;
    if (po_Value_Kind(p->value) == kPo_ValueMap && upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsRepeated(f) &&
        !upb_FieldDef_IsMap(f)) {
      p->value = object_children(upb_FieldDef_MessageSubDef(f), p->value, a);
    } else {
      p->value = friendly(f, p->value, a);
    }
  }
}
