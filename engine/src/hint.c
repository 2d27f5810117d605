/* Did-you-mean for unknown field names (beyond Consul, which only lists the fields).
 * Two common mistakes get a direct answer: a JSON (camelCase) name where the proto name is
 * needed, and a small typo (edit distance within a third of the name). */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "compiled.h"

/* Levenshtein distance of a and b when it is at most k, else k + 1. Bounded so the search
 * stays cheap beside Consul's own error: candidates whose lengths differ by more than k are
 * skipped unread, and a row whose every cell exceeds k ends the scan. */
static size_t distance_within(const char *a, size_t la, const char *b, size_t lb, size_t k) {
  if (la > 64 || lb > 64) return k + 1;
  if ((la > lb ? la - lb : lb - la) > k) return k + 1;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    size_t low = row[0];
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
      if (best < low) low = best;
    }
    if (low > k) return k + 1;
  }
  return row[lb] <= k ? row[lb] : k + 1;
}

/* Levenshtein distance of a pattern (at most 64 characters, its per-character bit masks in
 * `peq`) to `b`, by Myers' bit-parallel algorithm in Hyyro's form for edit distance: one pass
 * over b, a few word operations per character. What the field hint runs per candidate name,
 * where the quadratic table cost most of an unknown-field error. */
typedef struct {
  uint64_t peq[256];
  size_t m;
} Pattern;

static void pattern_init(Pattern *p, const char *a, size_t m) {
  memset(p->peq, 0, sizeof p->peq);
  p->m = m;
  for (size_t i = 0; i < m; i++) p->peq[(unsigned char)a[i]] |= UINT64_C(1) << i;
}

static size_t distance_bits(const Pattern *p, const char *b, size_t n) {
  uint64_t pv = ~UINT64_C(0), mv = 0, top = UINT64_C(1) << (p->m - 1);
  size_t score = p->m;
  for (size_t j = 0; j < n; j++) {
    uint64_t eq = p->peq[(unsigned char)b[j]];
    uint64_t xv = eq | mv;
    uint64_t xh = (((eq & pv) + pv) ^ pv) | eq;
    uint64_t ph = mv | ~(xh | pv);
    uint64_t mh = pv & xh;
    if (ph & top) score++;
    else if (mh & top) score--;
    ph = (ph << 1) | 1; /* row 0 of the table grows by one per character of b */
    mh <<= 1;
    pv = mh | ~(xv | ph);
    mv = ph & xv;
  }
  return score;
}

/* Which characters a name holds, folded to 64 classes. An edit adds or removes at most one
 * character (a substitution both), so it changes at most two classes' presence: half the
 * classes two names do not share is a lower bound of their distance, which rules most
 * candidates out before the quadratic distance is computed. */
static uint64_t char_classes(const char *s, size_t len) {
  uint64_t m = 0;
  for (size_t i = 0; i < len; i++) m |= UINT64_C(1) << ((unsigned char)s[i] & 63);
  return m;
}

const char *po_Hint_UnknownField(const upb_MessageDef *m, const char *name, po_Arena *a) {
  const char *newer = po_Hint_NewerField(m, name, a);
  if (newer) return newer;
  const upb_FieldDef *byjson = upb_MessageDef_FindByJsonName(m, name);
  if (byjson) {
    return po_Arena_Printf(a, "did you mean '%s'? Paths use proto field names, not JSON names",
                           upb_FieldDef_Name(byjson));
  }
  const char *best = NULL;
  size_t len = strlen(name);
  size_t limit = len / 3;
  if (limit < 1) limit = 1;
  size_t best_d = limit + 1;
  uint64_t classes = char_classes(name, len);
  Pattern pat;
  bool bits = len > 0 && len <= 64;
  if (bits) pattern_init(&pat, name, len);
  for (int i = 0; i < upb_MessageDef_FieldCount(m) && best_d > 1; i++) {
    const char *cand = upb_FieldDef_Name(upb_MessageDef_Field(m, i));
    size_t cl = strlen(cand);
    if ((cl > len ? cl - len : len - cl) > best_d - 1) continue;
    if (((size_t)__builtin_popcountll(classes ^ char_classes(cand, cl)) + 1) / 2 > best_d - 1) continue;
    /* strictly better only: the first of equally close names (declaration order) wins */
    size_t d = bits ? distance_bits(&pat, cand, cl) : distance_within(name, len, cand, cl, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = cand;
    }
  }
  if (!best) return NULL;
  return po_Arena_Printf(a, "did you mean '%s'?", best);
}

/* ---- values ---- */

static const char *enum_names(const upb_EnumDef *e, po_Arena *a) {
  size_t len = 1;
  int n = upb_EnumDef_ValueCount(e);
  for (int i = 0; i < n; i++) len += strlen(upb_EnumValueDef_Name(upb_EnumDef_Value(e, i))) + 2;
  char *out = po_Arena_Malloc(a, len);
  if (!out) return "";
  char *p = out;
  for (int i = 0; i < n; i++) {
    const char *name = upb_EnumValueDef_Name(upb_EnumDef_Value(e, i));
    if (i) { memcpy(p, ", ", 2); p += 2; }
    size_t l = strlen(name);
    memcpy(p, name, l);
    p += l;
  }
  *p = '\0';
  return out;
}

/* The enum value name closest to `s`: the same letters in another case first, then a small
 * typo (as for field names). NULL when none is close. */
static const char *closest_enum(const upb_EnumDef *e, const char *s) {
  int n = upb_EnumDef_ValueCount(e);
  for (int i = 0; i < n; i++) {
    const char *name = upb_EnumValueDef_Name(upb_EnumDef_Value(e, i));
    if (strcasecmp(name, s) == 0) return name;
  }
  size_t len = strlen(s), limit = len / 3 ? len / 3 : 1, best_d = limit + 1;
  const char *best = NULL;
  for (int i = 0; i < n && best_d > 1; i++) {
    const char *name = upb_EnumValueDef_Name(upb_EnumDef_Value(e, i));
    size_t d = distance_within(s, len, name, strlen(name), best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = name;
    }
  }
  return best;
}

static const char *enum_hint(const upb_FieldDef *f, const po_Value *v, po_Arena *a) {
  const upb_EnumDef *e = upb_FieldDef_EnumSubDef(f);
  if (po_Value_Kind(v) == kPo_ValueKind_List) {
    /* the first element that is not a name of the enum */
    const po_Value *bad = NULL;
    for (size_t i = 0; !bad && i < po_Value_Size(v); i++) {
      const po_Value *x = po_Value_At(v, i);
      size_t l;
      const char *s = po_Value_String(x, &l);
      if (po_Value_Kind(x) == kPo_ValueKind_Int) {
        int64_t n = po_Value_Int(x);
        if (n < INT32_MIN || n > INT32_MAX || !upb_EnumDef_FindValueByNumber(e, (int32_t)n)) bad = x;
      } else if (po_Value_Kind(x) != kPo_ValueKind_String || !upb_EnumDef_FindValueByNameWithSize(e, s, l)) {
        bad = x;
      }
    }
    if (!bad) return NULL;
    v = bad;
  }
  const char *names = enum_names(e, a);
  if (po_Value_Kind(v) == kPo_ValueKind_String) {
    const char *s = po_Value_String(v, NULL);
    const char *c = closest_enum(e, s);
    if (c) return po_Arena_Printf(a, "did you mean '%s'? %s values: %s", c, upb_EnumDef_FullName(e), names);
    return po_Arena_Printf(a, "'%s' is no value of %s; valid: %s", s, upb_EnumDef_FullName(e), names);
  }
  if (po_Value_Kind(v) == kPo_ValueKind_Int && (po_Value_Int(v) < INT32_MIN || po_Value_Int(v) > INT32_MAX)) {
    /* beyond Consul, whose text only names the type: why the number named nothing */
    int64_t n = po_Value_Int(v);
    return po_Arena_Printf(a, "%lld is out of range for an enum (int32; Go keeps its low 32 bits, %ld, which "
                              "names no value); %s takes one of its names: %s",
                           (long long)n, (long)(int32_t)(uint32_t)(uint64_t)n, upb_EnumDef_FullName(e), names);
  }
  return po_Arena_Printf(a, "%s takes one of its names: %s", upb_EnumDef_FullName(e), names);
}

static const char *duration_hint(const po_Value *v, po_Arena *a) {
  static const char kForms[] =
      "a Duration is written {\"seconds\": 5, \"nanos\": 0} (a PropertyOverride also takes \"5s\", "
      "\"1.5s\", \"250ms\", \"1h30m\")";
  if (po_Value_Kind(v) == kPo_ValueKind_String) {
    int64_t sec;
    int32_t ns;
    const char *s = po_Value_String(v, NULL);
    int r = po_Duration_Parse(s, &sec, &ns);
    if (r == 2 || (r == 1 && po_Duration_Check(true, sec < 0 ? -sec : sec, true, ns < 0 ? -ns : ns, a))) {
      return po_Arena_Printf(a, "\"%s\" is out of range: a Duration is at most 315576000000s (10000 years); %s", s, kForms);
    }
    if (r == 0) return po_Arena_Printf(a, "\"%s\" is not a duration: %s", s, kForms);
    return kForms;
  }
  if (po_Value_Kind(v) == kPo_ValueKind_Int || po_Value_Kind(v) == kPo_ValueKind_Float) {
    return po_Arena_Printf(a, "a number is not a Duration (which unit?): %s", kForms);
  }
  return kForms;
}

const char *po_Hint_Value(const upb_FieldDef *f, const po_Value *v, po_Arena *a) {
  if (upb_FieldDef_CType(f) == kUpb_CType_Enum) return enum_hint(f, v, a);
  if (upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsRepeated(f) &&
      strcmp(upb_MessageDef_FullName(upb_FieldDef_MessageSubDef(f)), "google.protobuf.Duration") == 0) {
    return duration_hint(v, a);
  }
  return NULL;
}
