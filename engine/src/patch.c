/* Compiling a patch (Consul's PatchStruct, split into resolve-once and apply-many).
 *
 * Every check Consul makes is made here, against the schema alone, in Consul's order: the path
 * (empty/root, then each segment: empty name, unknown field, repeated or map parent), then the
 * op's own rules (add: value present, then value against target type). None of them depends
 * on the message being patched, which is what lets one compile serve every resource. Where
 * Consul's Go code would panic (and report "unexpected panic: ..."), the type-mismatch error is
 * reported instead, in Consul's format. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiled.h"
#include "rules_walk.h"
#include "upb/mini_table_accessors.h"

/* po_Value_Kind without the call, on the conversions every compile runs. */
static inline po_ValueKind kind_of(const po_Value *v) { return v ? v->kind : kPo_ValueKind_Null; }

static bool type_mismatch(po_Status *st, const char *go_type, const upb_FieldDef *f) {
  char ft[kPo_FieldTypeMax];
  return po_Status_Set(st, kPo_Status_Patch,
                       "patch value type %s could not be applied to target field type '%s'",
                       go_type, po_FieldType(f, ft));
}

static bool unsupported_target(po_Status *st, const upb_FieldDef *f) {
  char ft[kPo_FieldTypeMax];
  return po_Status_Set(st, kPo_Status_Patch, "unsupported target field type '%s'", po_FieldType(f, ft));
}

static const po_FieldInfo *child_field(const po_Schema *schema, const upb_MessageDef *m, const char *name,
                                       size_t len, const po_PatchOptions *o, po_Arena *a, const char **hint,
                                       po_Status *st) {
  const po_FieldInfo *f = po_Schema_FindFieldInfo(schema, m, name, len);
  if (f) return f;
  /* there is one: no table, no memory; no message: a load that ran out of memory */
  if (!m || upb_MessageDef_FindFieldByNameWithSize(m, name, len)) {
    po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
    return NULL;
  }
  const char *list = po_FieldList(schema, m, o->debug, a, NULL);
  po_Status_Set(st, kPo_Status_Patch, "no match for field '%.*s'!\n%s", (int)len, name, list ? list : "");
  if (hint && o->hints) *hint = po_Hint_UnknownField(schema, m, name, len, o->judged_for, o->releases, a);
  return NULL;
}

/* ---- numbers ---- */

static bool out_of_range(po_Status *st, const po_Value *v, const upb_FieldDef *f) {
  char num[64];
  if (po_Value_Kind(v) == kPo_ValueKind_Int) snprintf(num, sizeof num, "%lld", (long long)po_Value_Int(v));
  else po_FormatGoFloat(po_Value_Float(v), num, sizeof num);
  /* An integer literal is quoted as written: beyond int64 (its float64 would misstate it), and
   * under the wire convention, where an in-range integer literal became a float64. */
  const char *lit = v && v->lit ? v->lit : v && v->text ? v->text : num;
  char ft[kPo_FieldTypeMax];
  return po_Status_Set(st, kPo_Status_Patch,
                       "patch value %.*s (%s) is out of range for target field type '%s'",
                       PO_STATUS_MAX / 2, lit, po_Value_GoType(v), po_FieldType(f, ft));
}

/* An integer literal beyond int64 into an integer kind: only uint64 can hold some of them
 * (up to 18446744073709551615), and then exactly, from the text. */
static bool convert_big_literal(const po_Value *v, upb_CType ct, const upb_FieldDef *f,
                                upb_MessageValue *out, po_Status *st) {
  const char *lit = v->lit;
  if (ct == kUpb_CType_UInt64 && lit[0] != '-') {
    size_t n = strlen(lit);
    if (n < 20 || (n == 20 && strcmp(lit, "18446744073709551615") <= 0)) {
      uint64_t u = 0;
      for (size_t i = 0; i < n; i++) u = u * 10 + (uint64_t)(lit[i] - '0');
      out->uint64_val = u;
      return true;
    }
  }
  return out_of_range(st, v, f);
}

/* Go's numeric conversion of an int or float64 to the field's C type, with our range checks
 * where Go would silently wrap. Floats truncate toward zero, as Go's conversion does. */
static bool convert_number(const po_Value *v, upb_CType ct, const upb_FieldDef *f,
                           upb_MessageValue *out, po_Status *st) {
  bool is_int = kind_of(v) == kPo_ValueKind_Int;
  int64_t i = is_int ? v->u.i : 0;
  double d = is_int ? (double)v->u.i : kind_of(v) == kPo_ValueKind_Float ? v->u.d : 0; /* po_Value_Float */
  if (!is_int) {
    if (ct == kUpb_CType_Double) { out->double_val = d; return true; }
    if (ct == kUpb_CType_Float) {
      if (fabs(d) > FLT_MAX) return out_of_range(st, v, f);
      out->float_val = (float)d;
      return true;
    }
    if (v->lit) return convert_big_literal(v, ct, f, out, st);
    double t = trunc(d);
    switch (ct) {
      case kUpb_CType_Int32:
      case kUpb_CType_Enum:
        if (!(t >= -2147483648.0 && t <= 2147483647.0)) return out_of_range(st, v, f);
        out->int32_val = (int32_t)t;
        return true;
      case kUpb_CType_UInt32:
        if (!(t >= 0 && t <= 4294967295.0)) return out_of_range(st, v, f);
        out->uint32_val = (uint32_t)t;
        return true;
      case kUpb_CType_Int64:
        if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0)) return out_of_range(st, v, f);
        out->int64_val = (int64_t)t;
        return true;
      case kUpb_CType_UInt64:
        if (!(t >= 0 && t < 18446744073709551616.0)) return out_of_range(st, v, f);
        out->uint64_val = (uint64_t)t;
        return true;
      default: return false;
    }
  }
  switch (ct) {
    case kUpb_CType_Double: out->double_val = (double)i; return true;
    case kUpb_CType_Float: out->float_val = (float)i; return true;
    case kUpb_CType_Int32:
    case kUpb_CType_Enum:
      if (i < INT32_MIN || i > INT32_MAX) return out_of_range(st, v, f);
      out->int32_val = (int32_t)i;
      return true;
    case kUpb_CType_UInt32:
      if (i < 0 || i > (int64_t)UINT32_MAX) return out_of_range(st, v, f);
      out->uint32_val = (uint32_t)i;
      return true;
    case kUpb_CType_Int64: out->int64_val = i; return true;
    case kUpb_CType_UInt64:
      if (i < 0) return out_of_range(st, v, f);
      out->uint64_val = (uint64_t)i;
      return true;
    default: return false;
  }
}

static bool is_number(po_ValueKind k) { return k == kPo_ValueKind_Int || k == kPo_ValueKind_Float; }

static bool is_numeric_ctype(upb_CType ct) {
  return ct == kUpb_CType_Int32 || ct == kUpb_CType_Int64 || ct == kUpb_CType_UInt32 ||
         ct == kUpb_CType_UInt64 || ct == kUpb_CType_Float || ct == kUpb_CType_Double;
}

/* toProtoEnumValue: a declared name, or (ints only) a declared number. `go_type` names the
 * value in the mismatch error: the element for lists, as Consul does. */
static bool convert_enum(const po_Schema *schema, const po_Value *v, const po_FieldInfo *fi,
                         upb_MessageValue *out, po_Status *st) {
  const upb_EnumValueDef *ev = NULL;
  po_ValueKind k = kind_of(v);
  if (k == kPo_ValueKind_String) {
    ev = po_Schema_FindEnumValue(schema, fi->enum_def, v->u.s.ptr, v->u.s.len);
  } else if (k == kPo_ValueKind_Int) {
    /* Go's EnumNumber(n) keeps the low 32 bits. Beyond int32, when those name a value Consul
     * sets it and only our range error stands; when they name none, Consul's mismatch text
     * comes first and the range is said after it (po_Hint_Value). */
    int64_t n = v->u.i;
    ev = upb_EnumDef_FindValueByNumber(fi->enum_def, (int32_t)(uint32_t)(uint64_t)n);
    if (ev && (n < INT32_MIN || n > INT32_MAX)) return out_of_range(st, v, fi->def);
  }
  if (!ev) return type_mismatch(st, po_Value_GoType(v), fi->def);
  out->int32_val = upb_EnumValueDef_Number(ev);
  return true;
}

/* The singular scalar path of toProtoValue (and where Go would panic on Set, the mismatch).
 * `ct` is the field's (for a wrapper: its `value`'s) C type. */
static bool convert_scalar(const po_Schema *schema, const po_Value *v, const po_FieldInfo *fi, upb_CType ct,
                           const upb_FieldDef *f, po_Arena *a, upb_MessageValue *out, po_Status *st) {
  po_ValueKind k = kind_of(v);
  if (ct == kUpb_CType_Enum) return convert_enum(schema, v, fi, out, st);
  if (is_numeric_ctype(ct)) {
    if (!is_number(k)) return type_mismatch(st, po_Value_GoType(v), f);
    return convert_number(v, ct, f, out, st);
  }
  if (ct == kUpb_CType_Bool) {
    if (k != kPo_ValueKind_Bool) return type_mismatch(st, po_Value_GoType(v), f);
    out->bool_val = v->u.b;
    return true;
  }
  if (ct == kUpb_CType_String) {
    if (k != kPo_ValueKind_String) return type_mismatch(st, po_Value_GoType(v), f);
    size_t len = v->u.s.len;
    out->str_val = (upb_StringView){.data = po_Arena_Strndup(a, v->u.s.ptr, len), .size = len};
    return out->str_val.data != NULL || po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  }
  /* bytes (and groups): Consul refuses the target whatever the value. */
  return unsupported_target(st, f);
}

/* toProtoWrapperValue: google.protobuf.*Value targets from a scalar. The nine wrappers are told
 * apart by upb's well-known-type tag (no name comparisons on this path); any other message is
 * judged by its name as Consul does: a google.protobuf.*Value that is no wrapper (Value,
 * ListValue, EnumValue) is a type mismatch, anything else an unsupported target. */
static bool convert_wrapper(const po_Schema *schema, const po_Value *v, const po_FieldInfo *fi, po_Arena *a,
                            po_Setter *s, po_Status *st) {
  const upb_FieldDef *f = fi->def;
  upb_WellKnown wk = fi->wkt;
  po_ValueKind k = kind_of(v);
  bool ok = false;
  if (fi->wrapper_value) {
    bool int_wrapper = wk == kUpb_WellKnown_Int64Value || wk == kUpb_WellKnown_UInt64Value ||
                       wk == kUpb_WellKnown_Int32Value || wk == kUpb_WellKnown_UInt32Value;
    switch (k) {
      case kPo_ValueKind_Int: ok = int_wrapper; break;
      case kPo_ValueKind_Float:
        ok = int_wrapper || wk == kUpb_WellKnown_FloatValue || wk == kUpb_WellKnown_DoubleValue;
        break;
      case kPo_ValueKind_Bool: ok = wk == kUpb_WellKnown_BoolValue; break;
      case kPo_ValueKind_String: ok = wk == kUpb_WellKnown_StringValue; break;
      default: ok = false;
    }
  } else {
    const char *name = upb_MessageDef_FullName(fi->message);
    size_t n = strlen(name);
    if (strncmp(name, "google.protobuf.", 16) != 0 || n < 5 || strcmp(name + n - 5, "Value") != 0) {
      return unsupported_target(st, f);
    }
  }
  if (!ok) return type_mismatch(st, po_Value_GoType(v), f);
  s->kind = kPo_SetKind_Wrapper;
  s->wrapper_value = fi->wrapper_value;
  if (is_number(k)) {
    /* Range errors name the wrapper, which is what the user wrote the value for. */
    upb_MessageValue tmp;
    /* No status: its text would be replaced (po_Status_Set takes NULL). */
    if (!convert_number(v, fi->wrapper_value_ctype, fi->wrapper_value, &tmp, NULL)) {
      return out_of_range(st, v, f);
    }
    s->value = tmp;
    return true;
  }
  return convert_scalar(schema, v, fi, fi->wrapper_value_ctype, fi->wrapper_value, a, &s->value, st);
}

/* The repeated path of toProtoValue: typed slices only, element by element. */
static bool convert_list(const po_Schema *schema, const po_Value *v, const po_FieldInfo *fi, po_Arena *a,
                         po_Setter *s, po_Status *st) {
  const upb_FieldDef *f = fi->def;
  const char *go = po_Value_GoType(v);
  bool typed = po_Value_Kind(v) == kPo_ValueKind_List && strcmp(go, "[]interface {}") != 0;
  upb_FieldType ft = upb_FieldDef_Type(f);
  if (!typed) {
    if (ft == kUpb_FieldType_Message || ft == kUpb_FieldType_Group || ft == kUpb_FieldType_Bytes) {
      return unsupported_target(st, f);
    }
    return type_mismatch(st, go, f);
  }
  upb_CType ct = fi->ctype;
  po_ValueKind ek = po_Value_Kind(po_Value_At(v, 0));
  bool numbers = is_number(ek);
  /* Which element types each target takes without Go panicking on Append. */
  bool ok = (ct == kUpb_CType_Enum && (ek == kPo_ValueKind_String || (ek == kPo_ValueKind_Int && !strcmp(go, "[]int")))) ||
            (is_numeric_ctype(ct) && numbers) || (ct == kUpb_CType_Bool && ek == kPo_ValueKind_Bool) ||
            (ct == kUpb_CType_String && ek == kPo_ValueKind_String);
  if (!ok) return type_mismatch(st, go, f);
  size_t n = po_Value_Size(v);
  s->kind = kPo_SetKind_List;
  s->item_count = n;
  s->items = po_Arena_Malloc(a, (n ? n : 1) * sizeof *s->items);
  if (!s->items) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  bool floats = !strcmp(go, "[]float64");
  for (size_t i = 0; i < n; i++) {
    const po_Value *e = po_Value_At(v, i);
    /* A []float64 with integer literals in it: every element is a float64 to Go. */
    po_Value as_float;
    if (floats && po_Value_Kind(e) == kPo_ValueKind_Int) {
      as_float = *e;
      as_float.kind = kPo_ValueKind_Float;
      as_float.u.d = (double)e->u.i;
      e = &as_float;
    }
    if (!convert_scalar(schema, e, fi, ct, f, a, &s->items[i], st)) return false;
  }
  return true;
}

/* toProtoValue for one field and one value (not a map value on a message: see below). */
static bool convert_value_(const po_Schema *schema, const po_Value *v, const po_FieldInfo *fi, po_Arena *a,
                           po_Setter *s, po_Status *st) {
  s->field = fi->def;
  s->info = fi;
  s->source = v;
  if (fi->repeated && !fi->map) return convert_list(schema, v, fi, a, s, st);
  if (fi->map) {
    /* A map field's Kind is message (its entry type), which is never a wrapper. */
    return unsupported_target(st, fi->def);
  }
  if (fi->submessage) return convert_wrapper(schema, v, fi, a, s, st);
  s->kind = kPo_SetKind_Scalar;
  return convert_scalar(schema, v, fi, fi->ctype, fi->def, a, &s->value, st);
}

/* convert_value, and on failure (hint not NULL) what would have worked. */
static bool convert_value(const po_Schema *schema, const po_Value *v, const po_FieldInfo *fi, po_Arena *a,
                          po_Setter *s, const char **hint, po_Status *st) {
  if (convert_value_(schema, v, fi, a, s, st)) return true;
  if (hint && !*hint) *hint = po_Hint_Value(fi->def, v, a);
  return false;
}

/* applyAdd with a map value on a (non-map) field: a new message with only those children. */
static bool convert_object(const po_Schema *schema, const po_Value *v, const po_FieldInfo *fi,
                           const po_PatchOptions *o, po_Arena *a, po_Setter *s, const char **hint, po_Status *st) {
  const upb_FieldDef *f = fi->def;
  if (!fi->submessage) {
    return po_Status_Set(st, kPo_Status_Patch, "non-message field type '%s' cannot be set via a map",
                         po_KindName(f));
  }
  if (fi->repeated) {
    /* Go panics here (Get(f).Message() of a list); our text for it. */
    return unsupported_target(st, f);
  }
  const upb_MessageDef *m = fi->message;
  size_t n = po_Value_Size(v);
  /* A google.protobuf.Any is a message like any other here, as in Consul: `{}` is the empty Any,
   * `type_url` a string child, `value` bytes (unsupported). What Envoy makes of it: check_any. */
  s->kind = kPo_SetKind_Message;
  s->field = f;
  s->info = fi;
  s->source = v;
  s->child_count = n;
  s->children = po_Arena_Malloc(a, (n ? n : 1) * sizeof *s->children);
  if (!s->children) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const char *key = po_Value_KeyAt(v, i);
    const po_FieldInfo *cf = child_field(schema, m, key, strlen(key), o, a, hint, st);
    if (!cf) return false;
    /* A JSON null child is Go nil: "<nil>" in the mismatch texts. */
    const po_Value *cv = po_Value_At(v, i);
    if (!convert_value(schema, cv, cf, a, &s->children[i], o->hints ? hint : NULL, st)) return false;
  }
  return true;
}

/* ---- rules and deprecations (beyond Consul) ---- */

static void note(po_Diagnostics *d, po_Severity sev, po_DiagKind kind, int idx, const char *path,
                 const char *msg) {
  if (d && msg) po_Diagnostics_Add(d, sev, kind, idx, path, msg);
}

/* An Any a patch builds (beyond Consul, which sets whatever type_url it is given): Envoy unpacks
 * typed configs by their type URL, so one naming no message of the API cannot load. An empty
 * Any is left alone: Envoy then picks the extension by its `name` with that extension's default
 * configuration. */
static const char *check_any(const po_Schema *schema, const po_Setter *s, po_Arena *a) {
  for (size_t i = 0; i < s->child_count; i++) {
    const po_Setter *c = &s->children[i];
    if (strcmp(upb_FieldDef_Name(c->field), "type_url") != 0 || c->kind != kPo_SetKind_Scalar) continue;
    upb_StringView url = c->value.str_val;
    if (url.size == 0) return NULL;
    const char *slash = memchr(url.data, '/', url.size);
    const char *name = url.data + url.size;
    while (name > url.data && name[-1] != '/') name--;
    char *full = po_Arena_Strndup(a, name, (size_t)(url.data + url.size - name));
    const upb_MessageDef *m = slash && full ? po_Schema_FindMessage(schema, full) : NULL;
    /* a map field's entry is a message of the schema, but not one a registry resolves (protobuf's
     * Go and C++ registries hold no map entries): Envoy and Envoy Gateway cannot unpack it */
    if (m && !upb_MessageDef_IsMapEntry(m)) return NULL;
    return po_Arena_Printf(a, "type_url \"%.*s\" names no message of the Envoy API%s (want "
                              "\"type.googleapis.com/<full message name>\"); Envoy cannot unpack it",
                           (int)url.size, url.data, m ? " (it names the entry of a map field, which no registry resolves)" : "");
  }
  return NULL;
}

static bool is_duration(const upb_MessageDef *m) {
  return m && strcmp(upb_MessageDef_FullName(m), "google.protobuf.Duration") == 0;
}

/* Envoy's Duration checks on what a patch sets: a whole Duration from a map, or one of its two
 * fields by path (the other is then whatever the resource has). */
static const char *check_duration(const po_Setter *s, po_Arena *a) {
  if (s->kind == kPo_SetKind_Message && is_duration(upb_FieldDef_MessageSubDef(s->field))) {
    int64_t sec = 0, ns = 0;
    for (size_t i = 0; i < s->child_count; i++) {
      const po_Setter *c = &s->children[i];
      if (c->kind != kPo_SetKind_Scalar) continue;
      if (upb_FieldDef_Number(c->field) == 1) sec = c->value.int64_val;
      else ns = c->value.int32_val;
    }
    return po_Duration_Check(true, sec, true, ns, a);
  }
  if (s->kind == kPo_SetKind_Scalar && is_duration(upb_FieldDef_ContainingType(s->field))) {
    bool secs = upb_FieldDef_Number(s->field) == 1;
    return po_Duration_Check(secs, secs ? s->value.int64_val : 0, !secs, secs ? 0 : s->value.int32_val, a);
  }
  return NULL;
}

static bool is_integer_ctype(upb_CType ct) {
  return ct == kUpb_CType_Int32 || ct == kUpb_CType_Int64 || ct == kUpb_CType_UInt32 ||
         ct == kUpb_CType_UInt64;
}

/* A number with a fraction set into an integer field: Consul truncates it without a word
 * (50.5 -> 50). Said as a warning, once per setter (the first such element of a list). */
static const char *check_truncation(const po_Setter *s, po_Arena *a) {
  const upb_FieldDef *f = s->kind == kPo_SetKind_Wrapper ? s->wrapper_value : s->field;
  if (!f || !is_integer_ctype(upb_FieldDef_CType(f)) || !s->source) return NULL;
  const po_Value *v = s->source;
  if (s->kind == kPo_SetKind_List) {
    for (size_t i = 0; i < po_Value_Size(s->source); i++) {
      const po_Value *e = po_Value_At(s->source, i);
      if (po_Value_Kind(e) == kPo_ValueKind_Float && !e->lit && po_Value_Float(e) != trunc(po_Value_Float(e))) {
        v = e;
        break;
      }
    }
  } else if (s->kind != kPo_SetKind_Scalar && s->kind != kPo_SetKind_Wrapper) {
    return NULL;
  }
  if (po_Value_Kind(v) != kPo_ValueKind_Float || v->lit) return NULL;
  double d = po_Value_Float(v);
  if (d == trunc(d)) return NULL;
  char num[64], to[64];
  po_FormatGoFloat(d, num, sizeof num);
  double whole = trunc(d);
  if (whole == 0) whole = 0; /* -0.5 truncates to the integer 0, not to "-0" */
  po_FormatGoFloat(whole, to, sizeof to);
  return po_Arena_Printf(a, "%s is not a whole number; Consul truncates it to %s for this %s field",
                         num, to, po_KindName(f));
}

/* Two children of one object value in one oneof: Consul sets the members in Go's map order, each
 * clearing the other, so which one stays differs from run to run; protojson (Envoy Gateway, Istio,
 * Envoy's own config loading) refuses the pair. Quadratic in the children of one object, which
 * Consul's own decode already walks (and an object's keys are at most a message's fields). */
static const char *check_oneof_pair(const po_Setter *s, po_Arena *a) {
  for (size_t i = 0; i < s->child_count; i++) {
    const upb_OneofDef *oi = upb_FieldDef_RealContainingOneof(s->children[i].field);
    for (size_t k = i + 1; oi && k < s->child_count; k++) {
      if (upb_FieldDef_RealContainingOneof(s->children[k].field) != oi) continue;
      return po_Arena_Printf(a, "sets '%s' and '%s', two members of oneof '%s' of %s: a message holds one of them, and "
                                "Consul sets the keys of an object in Go's random map order (each clearing the "
                                "other), so which one it keeps differs from run to run; give only one",
                             upb_FieldDef_Name(s->children[i].field), upb_FieldDef_Name(s->children[k].field),
                             upb_OneofDef_Name(oi), upb_MessageDef_FullName(upb_OneofDef_ContainingType(oi)));
    }
  }
  return NULL;
}

/* What a patch sets, setter by setter, beyond Consul: a fraction Consul truncates, deprecated
 * fields, two members of one oneof in one object, Envoy's own Duration validity and an Any's type
 * URL. Envoy's protoc-gen-validate rules are judged on the whole patch afterwards
 * (po_Rules_JudgePatch); true when an Envoy error was found here, which those rules would only
 * restate. */
static bool check_setter(const po_Schema *schema, const po_Setter *s, const char *where,
                         po_Arena *a, po_Diagnostics *d, int idx, const char *path,
                         const po_PatchOptions *o) {
  const char *trunc_note = check_truncation(s, a);
  if (trunc_note) note(d, kPo_Severity_Warning, kPo_DiagKind_Consul, idx, path, po_Arena_Printf(a, "%s: %s", where, trunc_note));
  if (o->deprecations && po_Schema_FieldDeprecated(s->field)) {
    note(d, kPo_Severity_Warning, kPo_DiagKind_Deprecated, idx, path,
         po_Arena_Printf(a, "%s: field '%s' of %s is deprecated in Envoy", where,
                         upb_FieldDef_Name(s->field),
                         upb_MessageDef_FullName(upb_FieldDef_ContainingType(s->field))));
  }
  if (!o->envoy_rules) return false;
  const char *v = check_duration(s, a);
  if (!v && s->kind == kPo_SetKind_Message) v = check_oneof_pair(s, a);
  if (!v && s->kind == kPo_SetKind_Message && !strcmp(upb_MessageDef_FullName(upb_FieldDef_MessageSubDef(s->field)), "google.protobuf.Any")) {
    v = check_any(schema, s, a);
  }
  if (v) {
    note(d, kPo_Severity_Error, kPo_DiagKind_EnvoyRule, idx, path, po_Arena_Printf(a, "%s: %s", where, v));
    return true; /* its parts would only restate it */
  }
  bool bad = false;
  for (size_t i = 0; s->kind == kPo_SetKind_Message && i < s->child_count; i++) {
    const char *sub = po_Arena_Printf(a, "%s/%s", where, upb_FieldDef_Name(s->children[i].field));
    bad |= check_setter(schema, &s->children[i], sub, a, d, idx, path, o);
  }
  return bad;
}

/* ---- compile ---- */

/* Member by member: a memset of the whole setter is a `rep stos` (see Compile). */
static void setter_clear(po_Setter *set) {
  set->kind = kPo_SetKind_Scalar;
  set->field = NULL;
  set->info = NULL;
  set->value = (upb_MessageValue){.str_val = {NULL, 0}}; /* the widest member: every byte */
  set->wrapper_value = NULL;
  set->items = NULL;
  set->item_count = 0;
  set->children = NULL;
  set->child_count = 0;
  set->source = NULL;
}

bool po_CompiledPatch_Compile(const po_Schema *schema, const upb_MessageDef *root,
                              const po_Patch *patch, const po_PatchOptions *o, po_Arena *a,
                              po_CompiledPatch *cp, const char **hint, po_Diagnostics *diags,
                              int idx, po_Status *st) {
  if (hint) *hint = NULL;
  /* Every member set one by one, no memset of the whole (a `rep stos` of 150 bytes costs more
   * than the stores on this path); cp->set is set by Convert (add) or below (remove). */
  cp->schema = schema;
  cp->root = root;
  cp->op = po_Op_Parse(patch->op);
  cp->chain = NULL;
  cp->chain_len = 0;
  cp->target = NULL;
  cp->target_info = NULL;
  const char *path = patch->path ? patch->path : "";
  po_Resolved r;
  if (!po_Path_Resolve(schema, root, path, a, &r)) {
    setter_clear(&cp->set);
    if (hint && o->hints) *hint = po_Resolved_Hint(&r, o->judged_for, o->releases, a);
    return po_Resolved_Error(&r, o->debug, a, st);
  }
  cp->chain = r.count > 1 ? r.fields : NULL; /* r.fields of one segment lives in r */
  cp->chain_len = r.count - 1;
  cp->target_info = r.fields[r.count - 1];
  cp->target = cp->target_info->def;
  if (cp->op != kPo_Op_Add) setter_clear(&cp->set);
  if (o->deprecations && diags) {
    for (size_t i = 0; i < cp->chain_len; i++) {
      if (po_Schema_FieldDeprecated(cp->chain[i]->def)) {
        note(diags, kPo_Severity_Warning, kPo_DiagKind_Deprecated, idx, path,
             po_Arena_Printf(a, "field '%s' of %s is deprecated in Envoy", upb_FieldDef_Name(cp->chain[i]->def),
                             upb_MessageDef_FullName(upb_FieldDef_ContainingType(cp->chain[i]->def))));
      }
    }
  }
  switch (cp->op) {
    case kPo_Op_Remove:
      if (o->envoy_rules && diags && !po_Rules_JudgePatch(schema, cp, o, path, idx, a, diags)) {
        return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
      }
      return true;
    case kPo_Op_Add: break;
    default: return po_Status_Set(st, kPo_Status_Patch, "unexpected error: no op implementation found");
  }
  if (!po_CompiledPatch_Convert(cp, patch->value, o, a, &cp->set, hint, st)) return false;
  /* Its findings go to diags only: without diags (PatchStruct's own use) it would only print
   * texts nobody reads, a vsnprintf per child of a map value. */
  if (diags && !check_setter(schema, &cp->set, path, a, diags, idx, path, o) && o->envoy_rules &&
      !po_Rules_JudgePatch(schema, cp, o, path, idx, a, diags)) {
    return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"); /* a finding may be missing: no verdict */
  }
  return true;
}

bool po_CompiledPatch_Convert(const po_CompiledPatch *cp, const po_Value *v, const po_PatchOptions *o, po_Arena *a,
                              po_Setter *set, const char **hint, po_Status *st) {
  setter_clear(set); /* a conversion sets what its kind uses */
  const po_FieldInfo *fi = cp->target_info;
  if (fi->enum_def && !fi->repeated && kind_of(v) == kPo_ValueKind_String) {
    /* An enum by name, the commonest enum patch: the found value straight into the setter, as
     * convert_value would put it there, without its three call levels. Not found: the general
     * path below words the error. */
    const upb_EnumValueDef *ev = po_Schema_FindEnumValue(cp->schema, fi->enum_def, v->u.s.ptr, v->u.s.len);
    if (ev) {
      set->field = fi->def;
      set->info = fi;
      set->source = v;
      set->value.int32_val = upb_EnumValueDef_Number(ev);
      return true;
    }
  }
  if (kind_of(v) == kPo_ValueKind_Null) {
    return po_Status_Set(st, kPo_Status_Patch,
                         "non-nil Value is required; use an empty map to reset all fields on a "
                         "message or the 'remove' op to unset fields");
  }
  return v->kind == kPo_ValueKind_Map && !cp->target_info->map
             ? convert_object(cp->schema, v, cp->target_info, o, a, set, hint, st)
             : convert_value(cp->schema, v, cp->target_info, a, set, o->hints ? hint : NULL, st);
}

/* ---- apply ----
 *
 * upb_Message_Has/Get/Set/Mutable find the field's layout again on every call (four to eight
 * out-of-line calls each: extension?, presence?, mini-table, ...). Apply fetches the layout
 * once per field (upb_FieldDef_MiniTable) and reads and writes through it, as upb's generated
 * accessors do, with upb_Message_Set's exact rules (value, then hasbit or oneof case). Every
 * field a compiled patch names came from upb_MessageDef_FindFieldByNameWithSize, which never
 * returns an extension, so reflection's extension branch is not needed here. */

/* Where a field's value lives in its message (upb's UPB_PTR_AT, which port_undef.inc takes
 * back at the end of each upb header). */
#define FIELD_AT(m, mf, type) ((type *)((char *)(m) + (mf)->offset))

/* The bytes a field's value occupies in its message (reflection.c's table, by the same rule:
 * a repeated or map field holds a pointer). */
static size_t field_size(const upb_MiniTable_Field *mf) {
  if (upb_IsRepeatedOrMap(mf)) return sizeof(void *);
  switch (mf->descriptortype) {
    case kUpb_FieldType_Bool: return 1;
    case kUpb_FieldType_Float:
    case kUpb_FieldType_Int32:
    case kUpb_FieldType_UInt32:
    case kUpb_FieldType_Fixed32:
    case kUpb_FieldType_SFixed32:
    case kUpb_FieldType_SInt32:
    case kUpb_FieldType_Enum: return 4;
    case kUpb_FieldType_Double:
    case kUpb_FieldType_Int64:
    case kUpb_FieldType_UInt64:
    case kUpb_FieldType_Fixed64:
    case kUpb_FieldType_SFixed64:
    case kUpb_FieldType_SInt64: return 8;
    case kUpb_FieldType_String:
    case kUpb_FieldType_Bytes: return sizeof(upb_StringView);
    default: return sizeof(void *); /* message, group */
  }
}

/* upb_Message_Has for a field with presence; a field without (proto3 scalar, repeated) is
 * reported present, which is what remove needs (upb_Message_ClearField on it). */
static bool field_present(const upb_Message *m, const upb_MiniTable_Field *mf) {
  if (mf->presence < 0) return _upb_getoneofcase_field(m, mf) == mf->number;
  if (mf->presence > 0) return _upb_hasbit_field(m, mf);
  if (upb_IsRepeatedOrMap(mf) || !upb_IsSubMessage(mf)) return true;
  return *FIELD_AT(m, mf, upb_Message *const) != NULL;
}

static void field_set(upb_Message *m, const upb_MiniTable_Field *mf, upb_MessageValue v) {
  /* Fixed-size copies: a memcpy of a variable size is a libc call, longer than the store. */
  char *at = FIELD_AT(m, mf, char);
  switch (field_size(mf)) {
    case 1: memcpy(at, &v, 1); break;
    case 4: memcpy(at, &v, 4); break;
    case 8: memcpy(at, &v, 8); break;
    default: memcpy(at, &v, sizeof(upb_StringView)); break;
  }
  _upb_MiniTable_SetPresence(m, mf);
}

static void field_clear(upb_Message *m, const upb_MiniTable_Field *mf) {
  if (mf->presence > 0) {
    _upb_clearhas_field(m, mf);
  } else if (mf->presence < 0) {
    uint32_t *oneof_case = _upb_oneofcase_field(m, mf);
    if (*oneof_case != mf->number) return;
    *oneof_case = 0;
  }
  char *at = FIELD_AT(m, mf, char);
  switch (field_size(mf)) { /* fixed sizes, as in field_set */
    case 1: memset(at, 0, 1); break;
    case 4: memset(at, 0, 4); break;
    case 8: memset(at, 0, 8); break;
    default: memset(at, 0, sizeof(upb_StringView)); break;
  }
}

static upb_Message *new_message(const po_FieldInfo *f, upb_Arena *arena) {
  return _upb_Message_New(f->message_layout, arena);
}

/* upb_Message_Mutable of a singular message field: the set child, or a new one set in place
 * (which selects it when it is a oneof member). */
static upb_Message *mutable_message(upb_Message *m, const po_FieldInfo *f, upb_Arena *arena) {
  const upb_MiniTable_Field *mf = f->layout;
  upb_Message *sub = *FIELD_AT(m, mf, upb_Message *);
  if (sub && field_present(m, mf)) return sub;
  sub = new_message(f, arena);
  if (!sub) return NULL;
  field_set(m, mf, (upb_MessageValue){.msg_val = sub});
  return sub;
}

static bool copy_value(upb_MessageValue *v, const upb_MiniTable_Field *mf, upb_Arena *arena) {
  if ((mf->descriptortype == kUpb_FieldType_String || mf->descriptortype == kUpb_FieldType_Bytes) &&
      v->str_val.size) {
    /* Strings must live in the message's arena. */
    char *p = upb_Arena_Malloc(arena, v->str_val.size);
    if (!p) return false;
    memcpy(p, v->str_val.data, v->str_val.size);
    v->str_val.data = p;
  }
  return true;
}

static bool apply_setter(const po_Setter *s, upb_Message *m, upb_Arena *arena) {
  const upb_MiniTable_Field *mf = s->info->layout;
  upb_MessageValue val;
  switch (s->kind) {
    case kPo_SetKind_Scalar:
      val = s->value;
      if (!copy_value(&val, mf, arena)) return false;
      break;
    case kPo_SetKind_Wrapper: {
      upb_Message *w = new_message(s->info, arena);
      const upb_MiniTable_Field *inner_mf = s->info->wrapper_value_layout;
      upb_MessageValue inner = s->value;
      if (!w || !copy_value(&inner, inner_mf, arena)) return false;
      field_set(w, inner_mf, inner);
      val.msg_val = w;
      break;
    }
    case kPo_SetKind_List: {
      upb_Array *arr = upb_Array_New(arena, s->info->ctype);
      if (!arr) return false;
      for (size_t i = 0; i < s->item_count; i++) {
        upb_MessageValue e = s->items[i];
        if (!copy_value(&e, mf, arena) || !upb_Array_Append(arr, e, arena)) return false;
      }
      val.array_val = arr;
      break;
    }
    case kPo_SetKind_Message: {
      upb_Message *nm = new_message(s->info, arena);
      if (!nm) return false;
      for (size_t i = 0; i < s->child_count; i++) {
        if (!apply_setter(&s->children[i], nm, arena)) return false;
      }
      val.msg_val = nm;
      break;
    }
    default: return false;
  }
  field_set(m, mf, val);
  return true;
}

bool po_CompiledPatch_Apply(const po_CompiledPatch *cp, upb_Message *msg, upb_Arena *arena) {
  upb_Message *m = msg;
  if (cp->op == kPo_Op_Remove) {
    /* remove never creates parents: an unset parent means nothing to remove. */
    for (size_t i = 0; i < cp->chain_len; i++) {
      const upb_MiniTable_Field *mf = cp->chain[i]->layout;
      if (!field_present(m, mf)) return true;
      m = *FIELD_AT(m, mf, upb_Message *);
      if (!m) return true;
    }
    const upb_MiniTable_Field *mf = cp->target_info->layout;
    if (field_present(m, mf)) field_clear(m, mf);
    return true;
  }
  for (size_t i = 0; i < cp->chain_len; i++) {
    m = mutable_message(m, cp->chain[i], arena);
    if (!m) return false;
  }
  const upb_MiniTable_Field *mf = cp->target_info->layout;
  if (cp->set.kind == kPo_SetKind_Scalar && mf->descriptortype != kUpb_FieldType_String &&
      mf->descriptortype != kUpb_FieldType_Bytes) {
    field_set(m, mf, cp->set.value); /* a number, bool or enum: nothing to copy into the arena */
    return true;
  }
  return apply_setter(&cp->set, m, arena);
}
