/* Envoy's protoc-gen-validate rules, field by field: the one evaluator of them (strings and bytes
 * in pgv_string.c). The one walk that applies it to messages is value_rules.c's (rules_walk.h):
 * a PropertyOverride patch at compile (patch_rules.c), native EnvoyFilter / EnvoyPatchPolicy
 * values, preview's result (result_rules.c). The rules are read reflectively from the
 * validate.FieldRules option of each field (and a oneof's validate.required, proto/src/rules.c),
 * with the meaning of Envoy's Go validators (go-control-plane's ValidateAll, the test oracle):
 * numbers, enums and bools (const, lt, lte, gt, gte, a reversed pair as a range to lie outside, in,
 * not_in, defined_only, ignore_empty; a wrapper by its field's rules), lists (min_items,
 * max_items, unique, items), maps (min_pairs, max_pairs, keys, values, ignore_empty), required
 * children (message, duration, timestamp, any) and oneofs, message.skip, Durations and Timestamps
 * (bounds, in, not_in, lt_now, gt_now, within), Anys (in, not_in on the type URL).
 * Not judged, and said so by po_Pgv_Unjudged: string email, uri and uri_ref (Go's net/mail and
 * net/url parsers), a `pattern` with no exact POSIX form, map no_sparse; the message options
 * validate.disabled and validate.ignored are not read (no message of the snapshot has them).
 * docs/consul-semantics.md 5a has the table. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pgv_internal.h"

/* The memo of po_Pgv_MemoRules: open addressing on the field's address, doubled at half full. */
typedef struct {
  const upb_FieldDef *f;
  const upb_Message *rules; /* NULL: none */
  const upb_MessageDef *def;
} Memo;

struct po_RulesMemo {
  Memo *slots;
  size_t cap, len;
};

bool po_Pgv_MemoRules(po_Arena *a) {
  struct po_RulesMemo *m = po_Arena_Malloc(a, sizeof *m);
  Memo *slots = m ? po_Arena_Malloc(a, 256 * sizeof *slots) : NULL;
  if (!slots) return false;
  *m = (struct po_RulesMemo){slots, 256, 0};
  a->rules_memo = m;
  return true;
}

po_Arena *po_Pgv_Scratch(po_ArenaTrack *track, po_Arena *owner, po_Status *st) {
  po_Arena *scratch = po_Arena_NewTracked_(track);
  if (scratch && po_Pgv_MemoRules(scratch)) return scratch;
  po_Arena_NoteOutOfMemory_(owner);
  po_Arena_Free(scratch);
  po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return NULL;
}

static size_t slot_of(const struct po_RulesMemo *m, const upb_FieldDef *f) {
  size_t i = ((uintptr_t)f >> 3) * 0x9E3779B97F4A7C15u & (m->cap - 1);
  while (m->slots[i].f && m->slots[i].f != f) i = (i + 1) & (m->cap - 1);
  return i;
}

static bool memo_grow(po_Arena *a, struct po_RulesMemo *m) {
  Memo *old = m->slots;
  size_t n = m->cap;
  Memo *slots = po_Arena_Malloc(a, 2 * n * sizeof *slots);
  if (!slots) return false;
  m->slots = slots, m->cap = 2 * n;
  for (size_t i = 0; i < n; i++) {
    if (old[i].f) m->slots[slot_of(m, old[i].f)] = old[i];
  }
  return true;
}

bool po_Pgv_MemoPut_(po_Arena *a, const upb_FieldDef *f, const upb_Message *rules, const upb_MessageDef *def) {
  struct po_RulesMemo *m = a->rules_memo;
  if (!m || (2 * (m->len + 1) > m->cap && !memo_grow(a, m))) return false;
  Memo *e = &m->slots[slot_of(m, f)];
  if (!e->f) m->len++;
  *e = (Memo){f, rules, def};
  return true;
}

static const upb_Message *rules_of(const po_Schema *s, const upb_FieldDef *f, po_Arena *a,
                                   const upb_MessageDef **def) {
  struct po_RulesMemo *m = a->rules_memo;
  if (!m) return po_Schema_FieldRules(s, f, po_Arena_Upb(a), def);
  Memo *e = &m->slots[slot_of(m, f)];
  if (!e->f) {
    const upb_MessageDef *d = NULL;
    const upb_Message *r = po_Schema_FieldRules(s, f, po_Arena_Upb(a), &d);
    /* out of memory growing: answer without remembering */
    if (2 * (m->len + 1) > m->cap && !memo_grow(a, m)) return r ? (*def = d, r) : NULL;
    e = &m->slots[slot_of(m, f)];
    *e = (Memo){f, r, d};
    m->len++;
  }
  if (e->rules) *def = e->def;
  return e->rules;
}

bool po_Pgv_Present_(const upb_Message *m, const upb_FieldDef *f) {
  if (upb_FieldDef_HasPresence(f)) return upb_Message_Has(m, f);
  upb_MessageValue v = upb_Message_Get(m, f);
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool: return v.bool_val;
    case kUpb_CType_Float: return v.float_val != 0;
    case kUpb_CType_Double: return v.double_val != 0;
    case kUpb_CType_Int32: case kUpb_CType_Enum: return v.int32_val != 0;
    case kUpb_CType_UInt32: return v.uint32_val != 0;
    case kUpb_CType_Int64: return v.int64_val != 0;
    case kUpb_CType_UInt64: return v.uint64_val != 0;
    case kUpb_CType_String: case kUpb_CType_Bytes: return v.str_val.size != 0;
    default: return v.msg_val != NULL;
  }
}

bool po_Pgv_Holds(const upb_Message *m, const upb_FieldDef *f) {
  if (upb_FieldDef_IsMap(f)) {
    const upb_Map *map = upb_Message_Get(m, f).map_val;
    return map && upb_Map_Size(map);
  }
  if (upb_FieldDef_IsRepeated(f)) {
    const upb_Array *arr = upb_Message_Get(m, f).array_val;
    return arr && upb_Array_Size(arr);
  }
  return po_Pgv_Present_(m, f);
}

#define sub po_Pgv_Sub_
#define get po_Pgv_Get_
#define get_list po_Pgv_List_

/* ---- numbers ---- */

typedef long double Num; /* 64-bit mantissa: exact for every int64 and uint64 */

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

static void fmt_num(Num n, upb_CType ct, char *buf, size_t size) {
  if (ct == kUpb_CType_Float || ct == kUpb_CType_Double) po_FormatGoFloat((double)n, buf, size);
  else if (n < 0) snprintf(buf, size, "%lld", (long long)n);
  else snprintf(buf, size, "%llu", (unsigned long long)n);
}

/* The comparisons every ordered kind has, on every value from lo to hi (one value: lo == hi).
 * present[i] for const, lt, lte, gt, gte; c_lo[i], c_hi[i]: lo and hi compared with bound i (-1, 0,
 * 1); reversed: both an upper (lt, lte) and a lower (gt, gte) bound, the upper not above the
 * lower, which PGV reads as a range the value must lie outside (`gte 1ms lte 0s`: at most 0s or at
 * least 1ms). Returns the op every value breaks (0..4), 5 for the outside range, or -1. */
static const char *const kOrderOps[] = {"const", "lt", "lte", "gt", "gte"};
static int bounds_broken(const bool present[5], const int c_lo[5], const int c_hi[5], bool reversed) {
  if (present[0] && (c_lo[0] > 0 || c_hi[0] < 0)) return 0;
  int upper = -1, lower = -1;
  for (int i = 1; i <= 2; i++) if (present[i] && (i == 1 ? c_lo[i] >= 0 : c_lo[i] > 0)) upper = i;
  for (int i = 3; i <= 4; i++) if (present[i] && (i == 3 ? c_hi[i] <= 0 : c_hi[i] < 0)) lower = i;
  if (reversed) return upper >= 0 && lower >= 0 ? 5 : -1;
  return upper >= 0 ? upper : lower;
}

/* Whether the upper bound is at or below the lower one (bounds_broken's `reversed`). */
static bool reversed_range(const bool present[5], int upper_vs_lower) {
  return (present[1] || present[2]) && (present[3] || present[4]) && upper_vs_lower <= 0;
}

static const char *check_numeric(const upb_Message *r, const upb_MessageDef *rd, const char *kind,
                                 Num x, upb_CType ct, po_Arena *a) {
  char xs[64], bs[5][64] = {{0}};
  fmt_num(x, ct, xs, sizeof xs);
  bool present[5] = {false};
  int c[5] = {0};
  Num b[5] = {0};
  for (int i = 0; i < 5; i++) {
    /* proto2 optional members: a bound of 0 is set too (uint32 gte 0 is no rule, lt 0 is) */
    const upb_FieldDef *f = upb_MessageDef_FindFieldByName(rd, kOrderOps[i]);
    if (!f || !upb_Message_Has(r, f)) continue;
    present[i] = true;
    b[i] = num_of(upb_Message_Get(r, f), upb_FieldDef_CType(f));
    c[i] = x < b[i] ? -1 : x > b[i];
    fmt_num(b[i], upb_FieldDef_CType(f), bs[i], sizeof bs[i]);
  }
  Num up = present[1] ? b[1] : b[2], low = present[3] ? b[3] : b[4];
  int broken = bounds_broken(present, c, c, reversed_range(present, up < low ? -1 : up > low));
  /* NaN: Go's generated checks are `val <= gt`, `val >= lt`, ..., all false for NaN, so no order
   * bound refuses it; only `val != const` does */
  if (x != x) broken = present[0] ? 0 : -1;
  if (broken == 5) {
    return po_Arena_Printf(a, "%s violates %s %s %s or %s %s (an upper bound not above the lower: valid is %s %s or %s %s)",
                           xs, kind, present[1] ? "lt" : "lte", present[1] ? bs[1] : bs[2], present[3] ? "gt" : "gte",
                           present[3] ? bs[3] : bs[4], present[1] ? "below" : "at most", present[1] ? bs[1] : bs[2],
                           present[3] ? "above" : "at least", present[3] ? bs[3] : bs[4]);
  }
  if (broken >= 0) return po_Arena_Printf(a, "%s violates %s %s %s", xs, kind, kOrderOps[broken], bs[broken]);
  const upb_FieldDef *lf;
  const upb_Array *in = get_list(r, rd, "in", &lf);
  if (in) {
    bool found = false;
    for (size_t i = 0; i < upb_Array_Size(in); i++) found |= num_of(upb_Array_Get(in, i), upb_FieldDef_CType(lf)) == x;
    if (!found) return po_Arena_Printf(a, "%s violates %s in (not one of the allowed values)", xs, kind);
  }
  const upb_Array *not_in = get_list(r, rd, "not_in", &lf);
  for (size_t i = 0; not_in && i < upb_Array_Size(not_in); i++) {
    if (num_of(upb_Array_Get(not_in, i), upb_FieldDef_CType(lf)) == x) {
      return po_Arena_Printf(a, "%s violates %s not_in", xs, kind);
    }
  }
  return NULL;
}

/* The rules that apply to one value of field f: for a repeated field, its `items` rules. */
static const upb_Message *value_rules(const po_Schema *s, const upb_FieldDef *f, po_Arena *a,
                                      const upb_MessageDef **rd) {
  const upb_Message *r = rules_of(s, f, a, rd);
  if (r && upb_FieldDef_IsRepeated(f)) {
    const upb_MessageDef *repd;
    const upb_Message *rep = sub(r, *rd, "repeated", &repd);
    if (!rep) return NULL;
    const upb_Message *items = sub(rep, repd, "items", rd);
    return items;
  }
  return r;
}

/* The FieldRules member for a field's type is named as the type is ("uint32", "string", ...);
 * messages and groups have no scalar rules. */
static const char *kRulesName(const upb_FieldDef *vf) {
  upb_FieldType t = upb_FieldDef_Type(vf);
  return t == kUpb_FieldType_Message || t == kUpb_FieldType_Group ? NULL : po_KindName(vf);
}

/* FieldRules `r` (of type rd) on value v of scalar field vf. */
static const char *check_value(const po_Schema *s, const upb_Message *r, const upb_MessageDef *rd,
                               const upb_FieldDef *vf, upb_MessageValue v, po_Arena *a) {
  const char *kind = kRulesName(vf);
  const upb_MessageDef *kd;
  const upb_Message *k = kind ? sub(r, rd, kind, &kd) : NULL;
  if (!k) return NULL;
  upb_CType ct = upb_FieldDef_CType(vf);
  switch (ct) {
    case kUpb_CType_String: return po_Pgv_CheckString_(s, k, kd, v.str_val, false, a);
    case kUpb_CType_Bytes: return po_Pgv_CheckString_(s, k, kd, v.str_val, true, a);
    case kUpb_CType_Bool: {
      const upb_FieldDef *cf = upb_MessageDef_FindFieldByName(kd, "const");
      if (cf && upb_Message_Has(k, cf) && upb_Message_Get(k, cf).bool_val != v.bool_val) {
        return po_Arena_Printf(a, "%s violates bool const %s", v.bool_val ? "true" : "false", v.bool_val ? "false" : "true");
      }
      return NULL;
    }
    case kUpb_CType_Enum: {
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(upb_FieldDef_EnumSubDef(vf), v.int32_val);
      const char *msg = check_numeric(k, kd, "enum", v.int32_val, ct, a);
      if (msg && ev) return po_Arena_Printf(a, "%s (%s)", msg, upb_EnumValueDef_Name(ev));
      /* a JSON decoder takes an enum as a number too (`"lb_policy": 42`), defined or not */
      if (!msg && !ev && po_Pgv_Flag_(k, kd, "defined_only")) {
        return po_Arena_Printf(a, "%d violates enum defined_only (no value of %s has that number)", (int)v.int32_val,
                               upb_EnumDef_FullName(upb_FieldDef_EnumSubDef(vf)));
      }
      return msg;
    }
    default: return check_numeric(k, kd, kind, num_of(v, ct), ct, a);
  }
}

const char *po_Pgv_CheckScalar(const po_Schema *s, const upb_FieldDef *f, upb_MessageValue v,
                               po_Arena *a) {
  const upb_MessageDef *rd;
  const upb_Message *r = value_rules(s, f, a, &rd);
  if (!r) return NULL;
  const upb_FieldDef *vf = f;
  if (upb_FieldDef_IsSubMessage(f)) { /* a wrapper: its rules are those of the wrapped type */
    vf = upb_MessageDef_FindFieldByName(upb_FieldDef_MessageSubDef(f), "value");
    if (!vf) return NULL;
  }
  return check_value(s, r, rd, vf, v, a);
}

/* ---- lists and maps ---- */

static bool same_value(upb_MessageValue x, upb_MessageValue y, upb_CType ct) {
  switch (ct) {
    case kUpb_CType_String: case kUpb_CType_Bytes:
      return x.str_val.size == y.str_val.size && !memcmp(x.str_val.data, y.str_val.data, x.str_val.size);
    case kUpb_CType_Bool: return x.bool_val == y.bool_val;
    case kUpb_CType_Float: return x.float_val == y.float_val;
    case kUpb_CType_Double: return x.double_val == y.double_val;
    case kUpb_CType_Int64: case kUpb_CType_UInt64: return x.int64_val == y.int64_val;
    case kUpb_CType_Message: return x.msg_val == y.msg_val; /* PGV Go: by identity for messages */
    default: return x.int32_val == y.int32_val;
  }
}

static uint64_t mix(uint64_t h) { /* splitmix64's finaliser: every input bit reaches every output bit */
  h ^= h >> 30, h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27, h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

/* A hash agreeing with same_value, seeded (so a list cannot be built to collide everywhere).
 * false: the item equals nothing, itself included (NaN, as a Go map key). */
static bool hash_value(upb_MessageValue v, upb_CType ct, uint64_t seed, uint64_t *h) {
  uint64_t x = 0;
  switch (ct) {
    case kUpb_CType_String: case kUpb_CType_Bytes:
      x = 0xcbf29ce484222325ULL ^ seed; /* FNV-1a over the bytes */
      for (size_t i = 0; i < v.str_val.size; i++) x = (x ^ (unsigned char)v.str_val.data[i]) * 0x100000001b3ULL;
      x ^= v.str_val.size;
      break;
    case kUpb_CType_Float: case kUpb_CType_Double: {
      double d = ct == kUpb_CType_Float ? v.float_val : v.double_val;
      if (d != d) return false;
      if (d == 0) d = 0; /* -0 and +0 are one key */
      memcpy(&x, &d, sizeof x);
      break;
    }
    case kUpb_CType_Bool: x = v.bool_val; break;
    case kUpb_CType_Int64: case kUpb_CType_UInt64: x = (uint64_t)v.int64_val; break;
    case kUpb_CType_Message: x = (uint64_t)(uintptr_t)v.msg_val; break;
    default: x = (uint32_t)v.int32_val; break;
  }
  *h = mix(x ^ seed);
  return true;
}

/* repeated.unique, as PGV's Go template judges it: each item looked up in, then put into, a Go
 * map (map[T]struct{}, strings and bytes by their bytes): the first item already there is the
 * violation. Linear: an open-addressed set of item indexes in the arena, sized twice the list. */
static const char *check_unique(const upb_FieldDef *f, const upb_Array *arr, po_Arena *a) {
  size_t n = arr ? upb_Array_Size(arr) : 0;
  if (n < 2) return NULL;
  upb_CType ct = upb_FieldDef_CType(f);
  size_t cap = 4;
  while (cap < 2 * n) cap *= 2;
  size_t *slot = cap <= SIZE_MAX / sizeof *slot ? po_Arena_Malloc(a, cap * sizeof *slot) : NULL;
  if (!slot) {
    po_Arena_NoteOutOfMemory_(a); /* no verdict: the review says out of memory */
    return NULL;
  }
  uint64_t seed = mix((uint64_t)(uintptr_t)slot ^ (uint64_t)(uintptr_t)&seed);
  for (size_t i = 0; i < n; i++) {
    upb_MessageValue v = upb_Array_Get(arr, i);
    uint64_t h;
    if (!hash_value(v, ct, seed, &h)) continue;
    size_t k = (size_t)h & (cap - 1);
    for (; slot[k]; k = (k + 1) & (cap - 1)) {
      size_t j = slot[k] - 1;
      if (same_value(v, upb_Array_Get(arr, j), ct)) {
        return po_Arena_Printf(a, "item %zu repeats item %zu: violates repeated unique", i, j);
      }
    }
    slot[k] = i + 1;
  }
  return NULL;
}

const char *po_Pgv_CheckList(const po_Schema *s, const upb_FieldDef *f, const upb_Array *arr, bool with_min,
                             po_Arena *a) {
  const upb_MessageDef *rd, *repd;
  const upb_Message *r = rules_of(s, f, a, &rd);
  const upb_Message *rep = r ? sub(r, rd, "repeated", &repd) : NULL;
  if (!rep) return NULL;
  size_t count = arr ? upb_Array_Size(arr) : 0;
  const upb_FieldDef *lf;
  upb_MessageValue lim;
  if (with_min && get(rep, repd, "min_items", &lf, &lim) && count < lim.uint64_val) {
    return po_Arena_Printf(a, "%zu items violate repeated min_items %llu", count, (unsigned long long)lim.uint64_val);
  }
  if (get(rep, repd, "max_items", &lf, &lim) && count > lim.uint64_val) {
    return po_Arena_Printf(a, "%zu items violate repeated max_items %llu", count, (unsigned long long)lim.uint64_val);
  }
  if (po_Pgv_Flag_(rep, repd, "unique")) {
    const char *u = check_unique(f, arr, a);
    if (u) return u;
  }
  return NULL;
}

const char *po_Pgv_CheckMap(const po_Schema *s, const upb_FieldDef *f, const upb_Map *map, bool with_min,
                            po_Arena *a) {
  const upb_MessageDef *rd, *md;
  const upb_Message *r = rules_of(s, f, a, &rd);
  const upb_Message *m = r ? sub(r, rd, "map", &md) : NULL;
  if (!m) return NULL;
  size_t count = map ? upb_Map_Size(map) : 0;
  if (!count && po_Pgv_Flag_(m, md, "ignore_empty")) return NULL;
  const upb_FieldDef *lf;
  upb_MessageValue lim;
  if (with_min && get(m, md, "min_pairs", &lf, &lim) && count < lim.uint64_val) {
    return po_Arena_Printf(a, "%zu pairs violate map min_pairs %llu", count, (unsigned long long)lim.uint64_val);
  }
  if (get(m, md, "max_pairs", &lf, &lim) && count > lim.uint64_val) {
    return po_Arena_Printf(a, "%zu pairs violate map max_pairs %llu", count, (unsigned long long)lim.uint64_val);
  }
  const upb_MessageDef *entry = upb_FieldDef_MessageSubDef(f), *kd = NULL, *vd = NULL;
  const upb_FieldDef *kf = upb_MessageDef_FindFieldByNumber(entry, 1), *vf = upb_MessageDef_FindFieldByNumber(entry, 2);
  const upb_Message *keys = sub(m, md, "keys", &kd), *vals = sub(m, md, "values", &vd);
  for (size_t it = kUpb_Map_Begin; map && (keys || vals) && upb_MapIterator_Next(map, &it);) {
    const char *v = keys ? check_value(s, keys, kd, kf, upb_MapIterator_Key(map, it), a) : NULL;
    if (v) return po_Arena_Printf(a, "a key: %s", v);
    v = vals && !upb_FieldDef_IsSubMessage(vf) ? check_value(s, vals, vd, vf, upb_MapIterator_Value(map, it), a) : NULL;
    if (v) return po_Arena_Printf(a, "a value: %s", v);
  }
  return NULL;
}

bool po_Pgv_SkipsEmpty(const po_Schema *s, const upb_FieldDef *f, upb_MessageValue x, po_Arena *a) {
  bool empty;
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_String: case kUpb_CType_Bytes: empty = x.str_val.size == 0; break;
    case kUpb_CType_Bool: empty = !x.bool_val; break;
    case kUpb_CType_Float: empty = x.float_val == 0; break;
    case kUpb_CType_Double: empty = x.double_val == 0; break;
    case kUpb_CType_Int64: case kUpb_CType_UInt64: empty = x.int64_val == 0; break;
    default: empty = x.int32_val == 0; break;
  }
  if (!empty) return false;
  const upb_MessageDef *rd = NULL, *kd;
  const upb_Message *r = rules_of(s, f, a, &rd);
  const char *kind = kRulesName(f);
  const upb_Message *k = r && kind ? sub(r, rd, kind, &kd) : NULL;
  return k && po_Pgv_Flag_(k, kd, "ignore_empty");
}

/* ---- Duration, Timestamp, Any ---- */

typedef __int128 Nanos; /* a Duration or a Timestamp in nanoseconds: 10,000 years fit in 69 bits */

static Nanos nanos_of(const upb_Message *m, const upb_MessageDef *d) {
  const upb_FieldDef *sf = upb_MessageDef_FindFieldByNumber(d, 1), *nf = upb_MessageDef_FindFieldByNumber(d, 2);
  Nanos x = 0;
  if (sf) x += (Nanos)upb_Message_Get(m, sf).int64_val * 1000000000;
  if (nf) x += upb_Message_Get(m, nf).int32_val;
  return x;
}

/* Go's %v of seconds (the texts' "0s", "1.5s"). */
static const char *secs(Nanos x, po_Arena *a) {
  char buf[64];
  po_FormatGoFloat((double)((long double)x / 1e9L), buf, sizeof buf);
  return po_Arena_Printf(a, "%ss", buf);
}

static Nanos now_nanos(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (Nanos)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* DurationRules or TimestampRules `k` on every value in [lo, hi]: a violation only when each of
 * them breaks one same rule (a Duration a patch sets one part of: the other part is unknown).
 * lo == hi: one value. */
static const char *check_time_range(const upb_Message *k, const upb_MessageDef *kd, const char *kind, Nanos lo,
                                    Nanos hi, po_Arena *a) {
  const char *shown = lo == hi ? secs(lo, a) : po_Arena_Printf(a, "every value from %s to %s", secs(lo, a), secs(hi, a));
  bool present[5] = {false};
  int c_lo[5] = {0}, c_hi[5] = {0};
  Nanos y[5] = {0};
  for (int i = 0; i < 5; i++) {
    const upb_MessageDef *bd;
    const upb_Message *b = sub(k, kd, kOrderOps[i], &bd);
    if (!b) continue;
    present[i] = true;
    y[i] = nanos_of(b, bd);
    c_lo[i] = lo < y[i] ? -1 : lo > y[i];
    c_hi[i] = hi < y[i] ? -1 : hi > y[i];
  }
  Nanos up = present[1] ? y[1] : y[2], low = present[3] ? y[3] : y[4];
  int broken = bounds_broken(present, c_lo, c_hi, reversed_range(present, up < low ? -1 : up > low));
  if (broken == 5) {
    return po_Arena_Printf(a, "%s violates %s %s %s or %s %s (an upper bound not above the lower: valid is %s %s or %s %s)",
                           shown, kind, present[1] ? "lt" : "lte", secs(up, a), present[3] ? "gt" : "gte", secs(low, a),
                           present[1] ? "below" : "at most", secs(up, a), present[3] ? "above" : "at least", secs(low, a));
  }
  if (broken >= 0) return po_Arena_Printf(a, "%s violates %s %s %s", shown, kind, kOrderOps[broken], secs(y[broken], a));
  const upb_FieldDef *lf;
  const upb_Array *in = lo == hi ? get_list(k, kd, "in", &lf) : NULL;
  if (in) {
    bool found = false;
    for (size_t i = 0; i < upb_Array_Size(in); i++) found |= nanos_of(upb_Array_Get(in, i).msg_val, upb_FieldDef_MessageSubDef(lf)) == lo;
    if (!found) return po_Arena_Printf(a, "%s violates %s in (not one of the allowed values)", shown, kind);
  }
  const upb_Array *not_in = lo == hi ? get_list(k, kd, "not_in", &lf) : NULL;
  for (size_t i = 0; not_in && i < upb_Array_Size(not_in); i++) {
    if (nanos_of(upb_Array_Get(not_in, i).msg_val, upb_FieldDef_MessageSubDef(lf)) == lo) {
      return po_Arena_Printf(a, "%s violates %s not_in", shown, kind);
    }
  }
  if (lo != hi || strcmp(kind, "timestamp")) return NULL;
  /* lt_now, gt_now, within: against the clock, as the Go validators judge them when Envoy's
   * control plane checks (the moment differs; a bound this close is the user's to watch) */
  const upb_MessageDef *wd;
  const upb_Message *w = sub(k, kd, "within", &wd);
  Nanos now = now_nanos(), within = w ? nanos_of(w, wd) : -1;
  bool lt_now = po_Pgv_Flag_(k, kd, "lt_now"), gt_now = po_Pgv_Flag_(k, kd, "gt_now");
  if (lt_now && (lo >= now || (w && lo < now - within))) return po_Arena_Printf(a, "%s violates timestamp lt_now%s", shown, w ? " within" : "");
  if (gt_now && (lo <= now || (w && lo > now + within))) return po_Arena_Printf(a, "%s violates timestamp gt_now%s", shown, w ? " within" : "");
  if (w && !lt_now && !gt_now && (lo < now - within || lo > now + within)) return po_Arena_Printf(a, "%s violates timestamp within %s of now", shown, secs(within, a));
  return NULL;
}

/* What kind of rules a well-known message type takes: "duration", "timestamp", "any", NULL. */
static const char *wkt_kind(const upb_MessageDef *m) {
  switch (upb_MessageDef_WellKnownType(m)) {
    case kUpb_WellKnown_Duration: return "duration";
    case kUpb_WellKnown_Timestamp: return "timestamp";
    case kUpb_WellKnown_Any: return "any";
    default: return NULL;
  }
}

static const char *check_any(const upb_Message *k, const upb_MessageDef *kd, const upb_Message *msg,
                             const upb_MessageDef *m, po_Arena *a) {
  upb_StringView url = upb_Message_Get(msg, upb_MessageDef_FindFieldByNumber(m, 1)).str_val;
  const upb_FieldDef *lf;
  const upb_Array *in = get_list(k, kd, "in", &lf);
  bool found = !in;
  for (size_t i = 0; in && i < upb_Array_Size(in); i++) {
    upb_StringView s = upb_Array_Get(in, i).str_val;
    found |= s.size == url.size && !memcmp(s.data, url.data, s.size);
  }
  if (!found) return po_Arena_Printf(a, "type_url \"%.*s\" violates any in (not one of the allowed types)", (int)url.size, url.data);
  const upb_Array *not_in = get_list(k, kd, "not_in", &lf);
  for (size_t i = 0; not_in && i < upb_Array_Size(not_in); i++) {
    upb_StringView s = upb_Array_Get(not_in, i).str_val;
    if (s.size == url.size && !memcmp(s.data, url.data, s.size)) {
      return po_Arena_Printf(a, "type_url \"%.*s\" violates any not_in", (int)url.size, url.data);
    }
  }
  return NULL;
}

const char *po_Pgv_CheckMessageValue(const po_Schema *s, const upb_FieldDef *f, const upb_MessageDef *m,
                                     const upb_Message *msg, po_Arena *a) {
  const char *kind = f ? wkt_kind(m) : NULL;
  const upb_MessageDef *rd, *kd;
  const upb_Message *r = kind ? rules_of(s, f, a, &rd) : NULL;
  const upb_Message *k = r ? sub(r, rd, kind, &kd) : NULL;
  if (!k) return NULL;
  if (kind[0] == 'a') return check_any(k, kd, msg, m, a);
  Nanos x = nanos_of(msg, m);
  return check_time_range(k, kd, kind, x, x, a);
}

const char *po_Pgv_CheckTimeRange(const po_Schema *s, const upb_FieldDef *f, int64_t lo_s, int32_t lo_n,
                                  int64_t hi_s, int32_t hi_n, po_Arena *a) {
  const char *kind = wkt_kind(upb_FieldDef_MessageSubDef(f));
  const upb_MessageDef *rd, *kd;
  const upb_Message *r = kind && kind[0] != 'a' ? rules_of(s, f, a, &rd) : NULL;
  const upb_Message *k = r ? sub(r, rd, kind, &kd) : NULL;
  if (!k) return NULL;
  return check_time_range(k, kd, kind, (Nanos)lo_s * 1000000000 + lo_n, (Nanos)hi_s * 1000000000 + hi_n, a);
}

/* ---- what is left unset ---- */

bool po_Pgv_Required(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  /* PGV applies a oneof member's rules only when it is the member set: required then says only
   * that it is not null (RouteMatch's safe_regex is required when the match is a regex) */
  if (upb_FieldDef_RealContainingOneof(f) || !upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f)) return false;
  const upb_MessageDef *rd, *md;
  const upb_Message *r = rules_of(s, f, a, &rd);
  if (!r) return false;
  /* message.required, and the well-known types' own: duration, timestamp, any */
  const char *kind = wkt_kind(upb_FieldDef_MessageSubDef(f));
  const upb_Message *m = sub(r, rd, "message", &md);
  if (m && po_Pgv_Flag_(m, md, "required")) return true;
  m = kind ? sub(r, rd, kind, &md) : NULL;
  return m && po_Pgv_Flag_(m, md, "required");
}

const char *po_Pgv_CheckOneofs(const po_Schema *s, const upb_MessageDef *m, const upb_Message *msg, po_Arena *a) {
  for (int i = 0; i < upb_MessageDef_OneofCount(m); i++) {
    const upb_OneofDef *o = upb_MessageDef_Oneof(m, i);
    if (upb_OneofDef_IsSynthetic(o) || upb_Message_WhichOneof(msg, o)) continue;
    if (!po_Schema_OneofRequired(s, o, po_Arena_Upb(a))) continue;
    po_TextBuf t = {.a = a};
    for (int j = 0; j < upb_OneofDef_FieldCount(o); j++) {
      po_TextBuf_Puts(&t, j ? ", " : "");
      po_TextBuf_Puts(&t, upb_FieldDef_Name(upb_OneofDef_Field(o, j)));
    }
    return po_Arena_Printf(a, "the new %s sets none of its oneof '%s', which Envoy requires: set one of %s",
                           upb_MessageDef_FullName(m), upb_OneofDef_Name(o), t.buf ? t.buf : "");
  }
  return NULL;
}

const char *po_Pgv_CheckRequired(const po_Schema *s, const upb_MessageDef *m, const upb_Message *msg, po_Arena *a) {
  for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
    const upb_FieldDef *cf = upb_MessageDef_Field(m, i);
    if (!po_Pgv_Required(s, cf, a) || upb_Message_Has(msg, cf)) continue;
    return po_Arena_Printf(a, "the new %s lacks '%s', which Envoy requires", upb_MessageDef_FullName(m),
                           upb_FieldDef_Name(cf));
  }
  return po_Pgv_CheckOneofs(s, m, msg, a);
}

static bool is_wrapper(const upb_MessageDef *m) {
  upb_WellKnown w = upb_MessageDef_WellKnownType(m);
  return w >= kUpb_WellKnown_DoubleValue && w <= kUpb_WellKnown_BoolValue;
}

const char *po_Pgv_CheckField(const po_Schema *s, const upb_Message *msg, const upb_FieldDef *f, bool whole,
                              po_Arena *a) {
  if (upb_FieldDef_IsMap(f)) {
    const upb_Map *map = upb_Message_Get(msg, f).map_val;
    size_t n = map ? upb_Map_Size(map) : 0;
    return n || whole ? po_Pgv_CheckMap(s, f, map, whole, a) : NULL;
  }
  if (upb_FieldDef_IsRepeated(f)) {
    const upb_Array *arr = upb_Message_Get(msg, f).array_val;
    size_t n = arr ? upb_Array_Size(arr) : 0;
    /* a list merged into one the value does not show: only what it adds is known */
    return n || whole ? po_Pgv_CheckList(s, f, arr, whole, a) : NULL;
  }
  if (upb_FieldDef_IsSubMessage(f)) {
    const upb_MessageDef *sd = upb_FieldDef_MessageSubDef(f);
    if (!is_wrapper(sd) || !upb_Message_Has(msg, f)) return NULL;
    const upb_FieldDef *vf = upb_MessageDef_FindFieldByNumber(sd, 1);
    return vf ? po_Pgv_CheckScalar(s, f, upb_Message_Get(upb_Message_Get(msg, f).msg_val, vf), a) : NULL;
  }
  if (upb_FieldDef_HasPresence(f)) {
    /* a oneof member or an optional scalar: its rules apply only when it is set */
    return upb_Message_Has(msg, f) ? po_Pgv_CheckScalar(s, f, upb_Message_Get(msg, f), a) : NULL;
  }
  /* a proto3 scalar: set when not at its default. At the default it is checked (PGV does so)
   * only in a whole message, unless its rules ignore an empty value */
  upb_MessageValue x = upb_Message_Get(msg, f);
  if (!po_Pgv_Present_(msg, f) && (!whole || po_Pgv_SkipsEmpty(s, f, x, a))) return NULL;
  return po_Pgv_CheckScalar(s, f, x, a);
}

bool po_Pgv_Skips(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  const upb_MessageDef *rd, *md;
  const upb_Message *r = upb_FieldDef_IsSubMessage(f) ? rules_of(s, f, a, &rd) : NULL;
  const upb_Message *m = r ? sub(r, rd, "message", &md) : NULL;
  return m && po_Pgv_Flag_(m, md, "skip");
}

const char *po_Pgv_CheckRemove(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  const upb_MessageDef *p = upb_FieldDef_ContainingType(f);
  if (po_Pgv_Required(s, f, a)) {
    return po_Arena_Printf(a, "Envoy requires '%s'; removing it makes the %s invalid", upb_FieldDef_Name(f),
                           upb_MessageDef_FullName(p));
  }
  const upb_OneofDef *o = upb_FieldDef_RealContainingOneof(f);
  if (o && po_Schema_OneofRequired(s, o, po_Arena_Upb(a))) {
    return po_Arena_Printf(a, "Envoy requires one member of the oneof '%s' of %s; removing '%s', the member "
                              "set whenever the remove changes anything, leaves none",
                           upb_OneofDef_Name(o), upb_MessageDef_FullName(p), upb_FieldDef_Name(f));
  }
  if (upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsRepeated(f)) return NULL; /* unset: no rules */
  if (upb_FieldDef_HasPresence(f)) return NULL;
  /* a list or map emptied, a proto3 scalar back at its default: judged as PGV judges them */
  upb_Message *empty = upb_Message_New(p, po_Arena_Upb(a));
  const char *v = empty ? po_Pgv_CheckField(s, empty, f, true, a) : NULL;
  return v ? po_Arena_Printf(a, "removing '%s' leaves it empty: %s", upb_FieldDef_Name(f), v) : NULL;
}

/* ---- what is not judged ---- */

/* The members of each rules kind that the evaluator above reads; any other member set on a
 * field is a rule kind not judged here. */
static const char *const kJudged[] = {
    "const", "lt", "lte", "gt", "gte", "in", "not_in", "ignore_empty",                    /* numbers */
    "len", "min_len", "max_len", "len_bytes", "min_bytes", "max_bytes", "prefix", "suffix", "contains",
    "not_contains", "hostname", "ip", "ipv4", "ipv6", "address", "uuid", "well_known_regex", "strict",
    "pattern", "defined_only", "required", "skip", "min_items", "max_items", "unique", "items", "min_pairs",
    "max_pairs", "keys", "values", "lt_now", "gt_now", "within", NULL};

/* Whether member `name` of a rules kind is judged; `pattern` only when it translates. */
static bool judged(const upb_Message *k, const upb_FieldDef *mf, po_Arena *a) {
  const char *name = upb_FieldDef_Name(mf);
  if (!strcmp(name, "pattern")) {
    upb_StringView p = upb_Message_Get(k, mf).str_val;
    char *re = po_Arena_Strndup(a, p.data, p.size);
    return re && po_Pgv_PatternJudged(re, a);
  }
  for (int i = 0; kJudged[i]; i++) if (!strcmp(kJudged[i], name)) return true;
  return false;
}

/* The first member of rules kind `k` not judged, as "kind.member", or NULL. upb_Message_Next
 * visits only the members set (one to three, against the twenty-odd each kind declares). */
static const char *unjudged_in(const upb_Message *k, const upb_MessageDef *kd, const char *kind, po_Arena *a) {
  const upb_FieldDef *mf;
  upb_MessageValue v;
  for (size_t it = kUpb_Message_Begin; upb_Message_Next(k, kd, NULL, &mf, &v, &it);) {
    if (!judged(k, mf, a)) return po_Arena_Printf(a, "%s.%s", kind, upb_FieldDef_Name(mf));
    /* the nested kinds of repeated.items and map.keys/values */
    if (!upb_FieldDef_IsSubMessage(mf) || upb_FieldDef_IsRepeated(mf) || !strcmp(kind, "duration") ||
        !strcmp(kind, "timestamp")) {
      continue;
    }
    const upb_MessageDef *id = upb_FieldDef_MessageSubDef(mf);
    const upb_FieldDef *g;
    upb_MessageValue gv;
    for (size_t jt = kUpb_Message_Begin; upb_Message_Next(v.msg_val, id, NULL, &g, &gv, &jt);) {
      if (!upb_FieldDef_IsSubMessage(g) || upb_FieldDef_IsRepeated(g)) continue;
      const char *u = unjudged_in(gv.msg_val, upb_FieldDef_MessageSubDef(g),
                                  po_Arena_Printf(a, "%s.%s.%s", kind, upb_FieldDef_Name(mf), upb_FieldDef_Name(g)), a);
      if (u) return u;
    }
  }
  return NULL;
}

static const char *unjudged(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  const upb_MessageDef *rd;
  const upb_Message *r = rules_of(s, f, a, &rd);
  const upb_FieldDef *kf;
  upb_MessageValue kv;
  for (size_t it = kUpb_Message_Begin; r && upb_Message_Next(r, rd, NULL, &kf, &kv, &it);) {
    if (!upb_FieldDef_IsSubMessage(kf) || upb_FieldDef_IsRepeated(kf)) continue;
    const char *u = unjudged_in(kv.msg_val, upb_FieldDef_MessageSubDef(kf), upb_FieldDef_Name(kf), a);
    if (u) {
      return po_Arena_Printf(a, "Envoy's rule %s on '%s' is not judged here (docs/consul-semantics.md, \"Envoy's rules\"); "
                                "Envoy may still refuse the value", u, upb_FieldDef_Name(f));
    }
  }
  return NULL;
}

const char *po_Pgv_Unjudged(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  /* with a memo, the arena's rules (a test's, po_Pgv_MemoPut_, are not the schema's) */
  if (a->rules_memo) return unjudged(s, f, a);
  if (!upb_FieldDef_HasOptions(f)) return NULL;
  /* once per field and schema: the walk asks it of every field of every whole message */
  bool known;
  const char *note = po_Schema_FieldNote(s, f, &known);
  if (!known) {
    note = unjudged(s, f, a);
    /* an answer cut short by a failed allocation is not kept */
    if (!po_Engine_OutOfMemory(a)) po_Schema_SetFieldNote(s, f, note);
  }
  return note;
}
