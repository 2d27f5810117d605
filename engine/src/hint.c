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
 * where the quadratic table cost most of an unknown-field error. The masks live in a
 * thread-local table that is all zero between searches: a search sets the pattern's bytes and
 * clears exactly those afterwards, instead of clearing 2 KiB each time. */
static _Thread_local uint64_t t_peq[256];

static void pattern_set(const char *a, size_t m) {
  for (size_t i = 0; i < m; i++) t_peq[(unsigned char)a[i]] |= UINT64_C(1) << i;
}

static void pattern_clear(const char *a, size_t m) {
  for (size_t i = 0; i < m; i++) t_peq[(unsigned char)a[i]] = 0;
}

static size_t distance_bits(size_t m, const char *b, size_t n) {
  uint64_t pv = ~UINT64_C(0), mv = 0, top = UINT64_C(1) << (m - 1);
  size_t score = m;
  for (size_t j = 0; j < n; j++) {
    uint64_t eq = t_peq[(unsigned char)b[j]];
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
 * candidates out before the distance is computed. The candidates' classes are kept by the
 * schema (po_Schema_FieldNameClasses), computed once per message. */
static uint64_t char_classes(const char *s, size_t len) {
  uint64_t m = 0;
  for (size_t i = 0; i < len; i++) m |= UINT64_C(1) << ((unsigned char)s[i] & 63);
  return m;
}

/* "did you mean '<name>'?", copied, not printed: this is on the path of every unknown field. */
static const char *did_you_mean(const char *name, size_t len, po_Arena *a) {
  char *out = po_Arena_Malloc(a, len + 18);
  if (!out) return NULL;
  memcpy(out, "did you mean '", 14);
  memcpy(out + 14, name, len);
  memcpy(out + 14 + len, "'?", 3);
  return out;
}

/* Whether a and b (which differ) are one insertion, deletion or substitution apart: the common
 * typo, told in one comparison of what follows the first difference, without a distance. */
static bool one_edit(const char *a, size_t la, const char *b, size_t lb) {
  if (la > lb + 1 || lb > la + 1) return false;
  size_t i = 0, n = la < lb ? la : lb;
  while (i < n && a[i] == b[i]) i++;
  if (la == lb) return i < la && memcmp(a + i + 1, b + i + 1, la - i - 1) == 0;
  if (la > lb) return memcmp(a + i + 1, b + i, la - i - 1) == 0;
  return memcmp(a + i, b + i + 1, lb - i - 1) == 0;
}

/* A JSON (camelCase) name given where the proto name is needed. */
static const char *json_hint(const char *proto_name, po_Arena *a) {
  return po_Arena_Printf(a, "did you mean '%s'? Paths use proto field names, not JSON names", proto_name);
}

/* Bits set in x, without a call (the build targets no popcnt instruction, and libgcc's is a
 * call of twenty instructions, once per candidate). */
static inline unsigned popcount64(uint64_t x) {
  x -= (x >> 1) & UINT64_C(0x5555555555555555);
  x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
  x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
  return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* Messages with more fields than this are searched by the plain scan below (none of the Envoy
 * API's has half as many). */
enum { kMaxRanked = 256 };

/* Every field in declaration order, the first strictly closest within `limit` kept: without the
 * schema's tables (or out of memory), and for names over 64 bytes (beyond the bit-parallel
 * distance). */
static const char *scan(const upb_MessageDef *m, const char *name, size_t len, size_t limit, po_Arena *a) {
  const char *best = NULL;
  size_t best_len = 0, best_d = limit + 1;
  uint64_t classes = char_classes(name, len);
  bool bits = len > 0 && len <= 64;
  if (bits) pattern_set(name, len);
  for (int i = 0; i < upb_MessageDef_FieldCount(m) && best_d > 1; i++) {
    const char *cand = upb_FieldDef_Name(upb_MessageDef_Field(m, i));
    size_t cl = strlen(cand);
    if ((cl > len ? cl - len : len - cl) > best_d - 1) continue;
    if (((size_t)popcount64(classes ^ char_classes(cand, cl)) + 1) / 2 > best_d - 1) continue;
    size_t d = bits ? distance_bits(len, cand, cl) : distance_within(name, len, cand, cl, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = cand;
      best_len = cl;
    }
  }
  if (bits) pattern_clear(name, len);
  return best ? did_you_mean(best, best_len, a) : NULL;
}

/* The first pass of the ranked search: each candidate's lower bound (capped at limit + 1) and
 * how many have each bound; -1 when a field's JSON name is the name itself (upb's
 * FindByJsonName, answered from the index). Inlined into two copies: one for CPUs with the
 * popcnt instruction (every x86-64 of the last fifteen years; one instruction for the class
 * count), one for the rest. */
static inline __attribute__((always_inline)) int rank(const po_FieldIndex *x, const char *name, size_t len,
                                                       uint64_t classes, size_t limit, uint8_t *bound,
                                                       unsigned *per_bound) {
  for (int i = 0; i < x->count; i++) {
    const po_FieldHintInfo *h = &x->fields[i];
    if (h->json_len == len && memcmp(h->json, name, len) == 0) return -1 - i;
    size_t cl = x->infos[i].name_len;
    size_t lb = cl > len ? cl - len : len - cl;
    size_t cb = ((size_t)__builtin_popcountll(classes ^ h->classes) + 1) / 2;
    if (cb > lb) lb = cb;
    if (lb > limit) lb = limit + 1;
    bound[i] = (uint8_t)lb;
    per_bound[lb]++;
  }
  return 0;
}

__attribute__((target("popcnt"))) static int rank_popcnt(const po_FieldIndex *x, const char *name, size_t len,
                                                          uint64_t classes, size_t limit, uint8_t *bound,
                                                          unsigned *per_bound) {
  return rank(x, name, len, classes, limit, bound, per_bound);
}

static int rank_plain(const po_FieldIndex *x, const char *name, size_t len, uint64_t classes, size_t limit,
                      uint8_t *bound, unsigned *per_bound) {
  return rank(x, name, len, classes, limit, bound, per_bound);
}

const char *po_Hint_UnknownField(const po_Schema *schema, const upb_MessageDef *m, const char *name, size_t len,
                                 const char *judged_for, const po_ApiReleases *releases, po_Arena *a) {
  const char *newer = po_Hint_NewerField(schema, m, name, len, judged_for, releases, a);
  if (newer) return newer;
  size_t limit = len / 3;
  if (limit < 1) limit = 1;
  const po_FieldIndex *x = po_FieldIndex_Get(schema, m);
  if (!x || x->count > kMaxRanked || len == 0 || len > 64) {
    const upb_FieldDef *byjson = upb_MessageDef_FindByJsonNameWithSize(m, name, len);
    if (byjson) return json_hint(upb_FieldDef_Name(byjson), a);
    return scan(m, name, len, limit, a);
  }
  /* Ranked: a lower bound of each candidate's distance first (the length difference, half the
   * character classes not shared), then exact distances in order of that bound (a counting
   * sort), stopping once the bound passes the best distance found. Ties go to the first in
   * declaration order, as in the plain scan, so the answer is the same
   * (tests/engine/test_hint.c); usually one distance is computed. */
  uint8_t bound[kMaxRanked], order[kMaxRanked];
  unsigned start[66] = {0}; /* per bound (at most 22 + 1), then where its candidates begin */
  uint64_t classes = char_classes(name, len);
  int json = __builtin_cpu_supports("popcnt") ? rank_popcnt(x, name, len, classes, limit, bound, start + 1)
                         : rank_plain(x, name, len, classes, limit, bound, start + 1);
  if (json < 0) return json_hint(x->infos[-1 - json].name, a);
  for (size_t b = 1; b <= limit + 1; b++) start[b] += start[b - 1];
  for (int i = 0; i < x->count; i++) order[start[bound[i]]++] = (uint8_t)i; /* declaration order kept */
  /* start[b] is now where bound b + 1 begins: bound b's candidates are order[start[b-1]..start[b]) */
  int best = -1;
  size_t best_d = limit + 1;
  bool pattern = false; /* set on the first distance computed: a one-edit typo needs none */
  for (unsigned k = 0; k < start[limit]; k++) {
    int i = order[k];
    size_t b = bound[i];
    if (b > best_d || (b == best_d && i > best)) {
      if (b > best_d) break;
      continue;
    }
    const char *cand = x->infos[i].name;
    size_t cl = x->infos[i].name_len, d;
    if (b <= 1 && one_edit(name, len, cand, cl)) {
      d = 1; /* the names differ (the field is unknown): exactly one edit */
    } else {
      if (!pattern) pattern_set(name, len);
      pattern = true;
      d = distance_bits(len, cand, cl);
    }
    if (d < best_d || (d == best_d && i < best)) {
      best_d = d;
      best = i;
    }
  }
  if (pattern) pattern_clear(name, len);
  return best >= 0 ? did_you_mean(x->infos[best].name, x->infos[best].name_len, a) : NULL;
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
    int32_t low = (int32_t)(uint32_t)(uint64_t)n;
    const upb_EnumValueDef *lv = upb_EnumDef_FindValueByNumber(e, low);
    if (lv) {
      /* the low bits name a value: Consul sets it, so say which, and how to write it in range */
      return po_Arena_Printf(a, "%lld is out of range for an enum (int32); Go keeps its low 32 bits, %ld, which is "
                                "%s, so Consul would set %s: write %s (or %ld) to mean it; %s takes one of its names: %s",
                             (long long)n, (long)low, upb_EnumValueDef_Name(lv), upb_EnumValueDef_Name(lv),
                             upb_EnumValueDef_Name(lv), (long)low, upb_EnumDef_FullName(e), names);
    }
    return po_Arena_Printf(a, "%lld is out of range for an enum (int32; Go keeps its low 32 bits, %ld, which "
                              "names no value); %s takes one of its names: %s",
                           (long long)n, (long)low, upb_EnumDef_FullName(e), names);
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
