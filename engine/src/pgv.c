/* Envoy's protoc-gen-validate rules: the one evaluator of them. Its callers: the values a
 * PropertyOverride patch sets (patch.c, beyond Consul, which leaves them to Envoy: a bad value
 * is then only found when the proxy NACKs its config), the messages such a patch creates on its
 * way (result_rules.c), and native EnvoyFilter / EnvoyPatchPolicy values decoded by upb
 * (value_rules.c). The rules are read reflectively from the validate.FieldRules option of each
 * field. Checked: numeric const/lt/lte/gt/gte/in/not_in (and of wrappers), bool const, string
 * length, bytes, prefix/suffix/contains/in/not_in and Envoy's HTTP header well-known regexes,
 * enum const/in/not_in/defined_only, repeated min_items/max_items and scalar item rules,
 * Duration bounds, ignore_empty on proto3 scalars, and message.required (on remove, for the
 * children of a message a patch replaces, and in a whole native value).
 * Not checked (documented): regex `pattern`, address/hostname/uri forms, Timestamp, an Any's
 * type_url in/not_in (value_rules.c judges a native value's Any contents), map rules (min_pairs, keys, values: a map's message
 * values are walked), repeated `unique`, the `(validate.required)` option of a oneof. */
#include <stdio.h>
#include <string.h>

#include "compiled.h"

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

/* The sub-message `name` of a rules message, when set. */
static const upb_Message *sub(const upb_Message *m, const upb_MessageDef *d, const char *name,
                              const upb_MessageDef **sd) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || !upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f) || !upb_Message_Has(m, f)) return NULL;
  *sd = upb_FieldDef_MessageSubDef(f);
  return upb_Message_Get(m, f).msg_val;
}

/* Whether a singular field is set. upb_Message_Has asserts on fields without presence (proto3
 * scalars such as Duration.seconds): for those, set means non-zero. */
static bool present(const upb_Message *m, const upb_FieldDef *f) {
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
  return present(m, f);
}

static bool get(const upb_Message *m, const upb_MessageDef *d, const char *name,
                const upb_FieldDef **fo, upb_MessageValue *v) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || upb_FieldDef_IsRepeated(f) || !present(m, f)) return false;
  *fo = f;
  *v = upb_Message_Get(m, f);
  return true;
}

static const upb_Array *get_list(const upb_Message *m, const upb_MessageDef *d, const char *name,
                                 const upb_FieldDef **fo) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || !upb_FieldDef_IsRepeated(f)) return NULL;
  *fo = f;
  const upb_Array *arr = upb_Message_Get(m, f).array_val;
  return arr && upb_Array_Size(arr) ? arr : NULL;
}

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

static const char *check_numeric(const upb_Message *r, const upb_MessageDef *rd, const char *kind,
                                 Num x, upb_CType ct, po_Arena *a) {
  static const struct {
    const char *name;
    int cmp; /* violated when: 0 x != b, 1 x >= b (lt), 2 x > b (lte), 3 x <= b (gt), 4 x < b (gte) */
  } kOps[] = {{"const", 0}, {"lt", 1}, {"lte", 2}, {"gt", 3}, {"gte", 4}};
  char xs[64], bs[64];
  fmt_num(x, ct, xs, sizeof xs);
  for (size_t i = 0; i < sizeof kOps / sizeof *kOps; i++) {
    const upb_FieldDef *f;
    upb_MessageValue v;
    if (!get(r, rd, kOps[i].name, &f, &v)) continue;
    Num b = num_of(v, upb_FieldDef_CType(f));
    bool bad = (kOps[i].cmp == 0 && x != b) || (kOps[i].cmp == 1 && x >= b) ||
               (kOps[i].cmp == 2 && x > b) || (kOps[i].cmp == 3 && x <= b) || (kOps[i].cmp == 4 && x < b);
    if (bad) {
      fmt_num(b, upb_FieldDef_CType(f), bs, sizeof bs);
      return po_Arena_Printf(a, "%s violates %s %s %s", xs, kind, kOps[i].name, bs);
    }
  }
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

/* ---- strings ---- */

static size_t utf8_chars(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

static bool header_name_ok(const char *s, size_t n) {
  static const char kTchar[] = "!#$%&'*+-.^_|~`";
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

static const char *check_string(const upb_Message *r, const upb_MessageDef *rd, upb_StringView v,
                                bool bytes, po_Arena *a) {
  const char *kind = bytes ? "bytes" : "string";
  size_t chars = bytes ? v.size : utf8_chars(v.data, v.size);
  char q[96];
  snprintf(q, sizeof q, "\"%.*s%s\"", v.size > 64 ? 64 : (int)v.size, v.data, v.size > 64 ? "..." : "");
  static const struct { const char *name; int kind; } kLens[] = {
      {"len", 0}, {"min_len", 1}, {"max_len", 2}, {"len_bytes", 3}, {"min_bytes", 4}, {"max_bytes", 5}};
  for (size_t i = 0; i < sizeof kLens / sizeof *kLens; i++) {
    const upb_FieldDef *f;
    upb_MessageValue b;
    if (!get(r, rd, kLens[i].name, &f, &b)) continue;
    uint64_t lim = b.uint64_val;
    size_t n = kLens[i].kind >= 3 ? v.size : chars;
    int k = kLens[i].kind % 3;
    if ((k == 0 && n != lim) || (k == 1 && n < lim) || (k == 2 && n > lim)) {
      return po_Arena_Printf(a, "%s violates %s %s %llu (it has %zu)", q, kind, kLens[i].name,
                             (unsigned long long)lim, n);
    }
  }
  static const char *const kAffix[] = {"prefix", "suffix", "contains", "not_contains"};
  for (int i = 0; i < 4; i++) {
    const upb_FieldDef *f;
    upb_MessageValue b;
    if (!get(r, rd, kAffix[i], &f, &b)) continue;
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
  const upb_FieldDef *lf;
  const upb_Array *in = get_list(r, rd, "in", &lf);
  if (in) {
    bool found = false;
    for (size_t i = 0; i < upb_Array_Size(in); i++) {
      upb_StringView s = upb_Array_Get(in, i).str_val;
      found |= s.size == v.size && memcmp(s.data, v.data, v.size) == 0;
    }
    if (!found) return po_Arena_Printf(a, "%s violates %s in (not one of the allowed values)", q, kind);
  }
  const upb_FieldDef *wf;
  upb_MessageValue wk;
  if (!bytes && get(r, rd, "well_known_regex", &wf, &wk)) {
    const upb_FieldDef *sf;
    upb_MessageValue strict;
    bool is_strict = !get(r, rd, "strict", &sf, &strict) || strict.bool_val;
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
  const char *kind = kRulesName(vf);
  const upb_MessageDef *kd;
  const upb_Message *k = kind ? sub(r, rd, kind, &kd) : NULL;
  if (!k) return NULL;
  upb_CType ct = upb_FieldDef_CType(vf);
  switch (ct) {
    case kUpb_CType_String: return check_string(k, kd, v.str_val, false, a);
    case kUpb_CType_Bytes: return check_string(k, kd, v.str_val, true, a);
    case kUpb_CType_Bool: {
      const upb_FieldDef *cf;
      upb_MessageValue c;
      if (get(k, kd, "const", &cf, &c) && c.bool_val != v.bool_val) {
        return po_Arena_Printf(a, "%s violates bool const %s", v.bool_val ? "true" : "false", c.bool_val ? "true" : "false");
      }
      return NULL;
    }
    case kUpb_CType_Enum: {
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(upb_FieldDef_EnumSubDef(vf), v.int32_val);
      const char *msg = check_numeric(k, kd, "enum", v.int32_val, ct, a);
      if (msg && ev) return po_Arena_Printf(a, "%s (%s)", msg, upb_EnumValueDef_Name(ev));
      const upb_FieldDef *df;
      upb_MessageValue d;
      /* a JSON decoder takes an enum as a number too (`"lb_policy": 42`), defined or not */
      if (!msg && !ev && get(k, kd, "defined_only", &df, &d) && d.bool_val) {
        return po_Arena_Printf(a, "%d violates enum defined_only (no value of %s has that number)", (int)v.int32_val,
                               upb_EnumDef_FullName(upb_FieldDef_EnumSubDef(vf)));
      }
      return msg;
    }
    default: return check_numeric(k, kd, kind, num_of(v, ct), ct, a);
  }
}

const char *po_Pgv_CheckList(const po_Schema *s, const upb_FieldDef *f, size_t count, bool with_min, po_Arena *a) {
  const upb_MessageDef *rd, *repd;
  const upb_Message *r = rules_of(s, f, a, &rd);
  const upb_Message *rep = r ? sub(r, rd, "repeated", &repd) : NULL;
  if (!rep) return NULL;
  const upb_FieldDef *lf;
  upb_MessageValue lim;
  if (with_min && get(rep, repd, "min_items", &lf, &lim) && count < lim.uint64_val) {
    return po_Arena_Printf(a, "%zu items violate repeated min_items %llu", count, (unsigned long long)lim.uint64_val);
  }
  if (get(rep, repd, "max_items", &lf, &lim) && count > lim.uint64_val) {
    return po_Arena_Printf(a, "%zu items violate repeated max_items %llu", count, (unsigned long long)lim.uint64_val);
  }
  return NULL;
}

bool po_Pgv_Required(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  /* PGV applies a oneof member's rules only when it is the member set: required then says only
   * that it is not null (RouteMatch's safe_regex is required when the match is a regex) */
  if (upb_FieldDef_RealContainingOneof(f)) return false;
  const upb_MessageDef *rd, *md;
  const upb_Message *r = rules_of(s, f, a, &rd);
  const upb_Message *m = r ? sub(r, rd, "message", &md) : NULL;
  const upb_FieldDef *qf;
  upb_MessageValue q;
  return m && get(m, md, "required", &qf, &q) && q.bool_val;
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
  const upb_FieldDef *ie;
  upb_MessageValue v;
  return k && get(k, kd, "ignore_empty", &ie, &v) && upb_FieldDef_CType(ie) == kUpb_CType_Bool && v.bool_val;
}

/* Duration bounds on a Duration of x seconds. */
static const char *check_duration(const upb_Message *k, const upb_MessageDef *kd, Num x, po_Arena *a) {
  static const struct { const char *name; int cmp; } kOps[] = {{"const", 0}, {"lt", 1}, {"lte", 2}, {"gt", 3}, {"gte", 4}};
  for (size_t i = 0; i < sizeof kOps / sizeof *kOps; i++) {
    const upb_MessageDef *bd;
    const upb_Message *b = sub(k, kd, kOps[i].name, &bd);
    if (!b) continue;
    const upb_FieldDef *sf, *nf;
    upb_MessageValue sv = {0}, nv = {0};
    get(b, bd, "seconds", &sf, &sv);
    get(b, bd, "nanos", &nf, &nv);
    Num y = sv.int64_val + nv.int32_val / 1e9L;
    int c = kOps[i].cmp;
    bool bad = (c == 0 && x != y) || (c == 1 && x >= y) || (c == 2 && x > y) || (c == 3 && x <= y) || (c == 4 && x < y);
    if (bad) {
      char xs[64], ys[64];
      po_FormatGoFloat((double)x, xs, sizeof xs);
      po_FormatGoFloat((double)y, ys, sizeof ys);
      return po_Arena_Printf(a, "%ss violates duration %s %ss", xs, kOps[i].name, ys);
    }
  }
  return NULL;
}

/* Which children a message has: a patch's setter names them, a decoded message holds them. */
typedef struct {
  const po_Setter *set;   /* or */
  const upb_Message *msg;
} Children;

static bool has_child(Children c, const upb_FieldDef *f) {
  if (c.msg) return present(c.msg, f);
  for (size_t j = 0; j < c.set->child_count; j++) {
    if (c.set->children[j].field == f) return true;
  }
  return false;
}

/* The message-level rules: a required child `c` lacks (when `required`), then the Duration
 * bounds of field f (NULL: a top-level message, no field rules) on the seconds and nanos `c`
 * has. One evaluator for a patch's setter and a decoded value. */
static const char *check_message(const po_Schema *s, const upb_FieldDef *f, const upb_MessageDef *m, Children c,
                                 bool required, po_Arena *a) {
  for (int i = 0; required && i < upb_MessageDef_FieldCount(m); i++) {
    const upb_FieldDef *cf = upb_MessageDef_Field(m, i);
    if (!po_Pgv_Required(s, cf, a) || has_child(c, cf)) continue;
    return po_Arena_Printf(a, "the new %s lacks '%s', which Envoy requires", upb_MessageDef_FullName(m),
                           upb_FieldDef_Name(cf));
  }
  const upb_MessageDef *rd, *kd;
  const upb_Message *r = f ? rules_of(s, f, a, &rd) : NULL;
  const upb_Message *k = r ? sub(r, rd, "duration", &kd) : NULL;
  if (!k) return NULL;
  Num x = 0;
  if (c.msg) {
    const upb_FieldDef *sf = upb_MessageDef_FindFieldByNumber(m, 1), *nf = upb_MessageDef_FindFieldByNumber(m, 2);
    if (sf) x += upb_Message_Get(c.msg, sf).int64_val;
    if (nf) x += upb_Message_Get(c.msg, nf).int32_val / 1e9L;
  } else {
    for (size_t i = 0; i < c.set->child_count; i++) {
      const char *n = upb_FieldDef_Name(c.set->children[i].field);
      if (!strcmp(n, "seconds")) x += c.set->children[i].value.int64_val;
      if (!strcmp(n, "nanos")) x += c.set->children[i].value.int32_val / 1e9L;
    }
  }
  return check_duration(k, kd, x, a);
}

const char *po_Pgv_CheckMessage(const po_Schema *s, const upb_FieldDef *f, const po_Setter *set,
                                po_Arena *a) {
  return check_message(s, f, upb_FieldDef_MessageSubDef(f), (Children){.set = set}, true, a);
}

const char *po_Pgv_CheckMessageValue(const po_Schema *s, const upb_FieldDef *f, const upb_MessageDef *m,
                                     const upb_Message *msg, bool required, po_Arena *a) {
  return check_message(s, f, m, (Children){.msg = msg}, required, a);
}

const char *po_Pgv_CheckRemove(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  if (!po_Pgv_Required(s, f, a)) return NULL;
  return po_Arena_Printf(a, "Envoy requires '%s'; removing it makes the %s invalid", upb_FieldDef_Name(f),
                         upb_MessageDef_FullName(upb_FieldDef_ContainingType(f)));
}

static bool is_wrapper(const upb_MessageDef *m) {
  upb_WellKnown w = upb_MessageDef_WellKnownType(m);
  return w >= kUpb_WellKnown_DoubleValue && w <= kUpb_WellKnown_BoolValue;
}

const char *po_Pgv_CheckField(const po_Schema *s, const upb_Message *msg, const upb_FieldDef *f, bool whole,
                              po_Arena *a) {
  if (upb_FieldDef_IsMap(f)) return NULL;
  if (upb_FieldDef_IsRepeated(f)) {
    const upb_Array *arr = upb_Message_Get(msg, f).array_val;
    size_t n = arr ? upb_Array_Size(arr) : 0;
    /* a list merged into one the value does not show: only what it adds is known */
    return n || whole ? po_Pgv_CheckList(s, f, n, whole, a) : NULL;
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
  if (!present(msg, f) && (!whole || po_Pgv_SkipsEmpty(s, f, x, a))) return NULL;
  return po_Pgv_CheckScalar(s, f, x, a);
}
