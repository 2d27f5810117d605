/* `propertyoverride explain`: the schema at a point of a patch path, as plain data. The walk
 * refuses what PatchStruct refuses, with Consul's texts (patch.c), so a path explain accepts is
 * a path a patch can use; the rules are read from the same validate.FieldRules options the
 * checks in pgv.c read. */
#include <stdio.h>
#include <string.h>

#include "compiled.h"

/* ---- Envoy's rules, readably ---------------------------------------------------------------- */

static const char *duration_text(const upb_Message *d, const upb_MessageDef *dd, po_Arena *a) {
  const upb_FieldDef *sf = upb_MessageDef_FindFieldByName(dd, "seconds");
  const upb_FieldDef *nf = upb_MessageDef_FindFieldByName(dd, "nanos");
  int64_t s = sf ? upb_Message_Get(d, sf).int64_val : 0;
  int32_t n = nf ? upb_Message_Get(d, nf).int32_val : 0;
  if (n == 0) return po_Arena_Printf(a, "%llds", (long long)s);
  char frac[16];
  snprintf(frac, sizeof frac, "%09d", n < 0 ? -n : n);
  for (char *z = frac + strlen(frac) - 1; z > frac && *z == '0'; z--) *z = '\0';
  return po_Arena_Printf(a, "%s%lld.%ss", (s < 0 || n < 0) && s == 0 ? "-" : "", (long long)s, frac);
}

static const char *rules_text(const upb_Message *r, const upb_MessageDef *rd, po_Arena *a, int depth);

static const char *scalar_text(const upb_FieldDef *f, upb_MessageValue v, po_Arena *a, int depth) {
  char buf[64];
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool: return v.bool_val ? "true" : "false";
    case kUpb_CType_Int32: return po_Arena_Printf(a, "%d", v.int32_val);
    case kUpb_CType_UInt32: return po_Arena_Printf(a, "%u", v.uint32_val);
    case kUpb_CType_Int64: return po_Arena_Printf(a, "%lld", (long long)v.int64_val);
    case kUpb_CType_UInt64: return po_Arena_Printf(a, "%llu", (unsigned long long)v.uint64_val);
    case kUpb_CType_Float: po_FormatGoFloat(v.float_val, buf, sizeof buf); return po_Arena_Printf(a, "%s", buf);
    case kUpb_CType_Double: po_FormatGoFloat(v.double_val, buf, sizeof buf); return po_Arena_Printf(a, "%s", buf);
    case kUpb_CType_String:
    case kUpb_CType_Bytes:
      return po_Arena_Printf(a, "\"%.*s\"", (int)v.str_val.size, v.str_val.data);
    case kUpb_CType_Enum: {
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(upb_FieldDef_EnumSubDef(f), v.int32_val);
      return ev ? upb_EnumValueDef_Name(ev) : po_Arena_Printf(a, "%d", v.int32_val);
    }
    case kUpb_CType_Message: {
      const upb_MessageDef *md = upb_FieldDef_MessageSubDef(f);
      if (upb_MessageDef_WellKnownType(md) == kUpb_WellKnown_Duration) return duration_text(v.msg_val, md, a);
      const char *inner = rules_text(v.msg_val, md, a, depth + 1);
      return po_Arena_Printf(a, "(%s)", inner ? inner : "");
    }
  }
  return "?";
}

/* One rules message (validate.UInt32Rules, validate.FieldRules, ...): "<kind> <rule> <value>"
 * per rule set, comma-separated. `depth` bounds the recursion through items/keys/values. */
static const char *rules_text(const upb_Message *r, const upb_MessageDef *rd, po_Arena *a, int depth) {
  if (!r || depth > 4) return NULL;
  const char *out = NULL;
  size_t iter = kUpb_Message_Begin;
  const upb_FieldDef *f;
  upb_MessageValue v;
  bool field_rules = strcmp(upb_MessageDef_FullName(rd), "validate.FieldRules") == 0;
  while (upb_Message_Next(r, rd, NULL, &f, &v, &iter)) {
    const char *name = upb_FieldDef_Name(f), *text;
    if (field_rules && upb_FieldDef_IsSubMessage(f)) {
      /* validate.FieldRules: the kind's own rules message ("uint32", "duration") or "message". */
      const upb_MessageDef *kd = upb_FieldDef_MessageSubDef(f);
      const char *inner = NULL;
      size_t it2 = kUpb_Message_Begin;
      const upb_FieldDef *g;
      upb_MessageValue w;
      while (upb_Message_Next(v.msg_val, kd, NULL, &g, &w, &it2)) {
        const char *one;
        if (upb_FieldDef_IsRepeated(g)) {
          const upb_Array *arr = w.array_val;
          const char *list = "";
          for (size_t i = 0; arr && i < upb_Array_Size(arr); i++) {
            list = po_Arena_Printf(a, "%s%s%s", list, i ? ", " : "", scalar_text(g, upb_Array_Get(arr, i), a, depth));
          }
          one = po_Arena_Printf(a, "%s %s [%s]", name, upb_FieldDef_Name(g), list);
        } else if (upb_FieldDef_CType(g) == kUpb_CType_Bool && w.bool_val) {
          one = po_Arena_Printf(a, "%s %s", name, upb_FieldDef_Name(g));
        } else {
          one = po_Arena_Printf(a, "%s %s %s", name, upb_FieldDef_Name(g), scalar_text(g, w, a, depth));
        }
        inner = inner ? po_Arena_Printf(a, "%s, %s", inner, one) : one;
      }
      text = inner;
    } else if (upb_FieldDef_IsRepeated(f)) {
      continue;
    } else {
      text = po_Arena_Printf(a, "%s %s", name, scalar_text(f, v, a, depth));
    }
    if (text) out = out ? po_Arena_Printf(a, "%s, %s", out, text) : text;
  }
  return out;
}

/* ---- one field ------------------------------------------------------------------------------ */

static bool is_wrapper(const upb_MessageDef *m) {
  upb_WellKnown w = upb_MessageDef_WellKnownType(m);
  return w >= kUpb_WellKnown_DoubleValue && w <= kUpb_WellKnown_BoolValue;
}

static const char *enum_detail(const upb_EnumDef *e, po_Arena *a) {
  const char *s = po_Arena_Printf(a, "enum %s:", upb_EnumDef_FullName(e));
  for (int i = 0; i < upb_EnumDef_ValueCount(e); i++) {
    s = po_Arena_Printf(a, "%s%s %s", s, i ? "," : "", upb_EnumValueDef_Name(upb_EnumDef_Value(e, i)));
  }
  return s;
}

static const char *plain_type(const upb_FieldDef *f) {
  return upb_FieldDef_IsSubMessage(f) ? upb_MessageDef_FullName(upb_FieldDef_MessageSubDef(f))
         : upb_FieldDef_CType(f) == kUpb_CType_Enum ? upb_EnumDef_FullName(upb_FieldDef_EnumSubDef(f))
                                                    : po_KindName(f);
}

static void describe(const po_Schema *s, const upb_FieldDef *f, po_Arena *a, po_ExplainField *x) {
  x->name = upb_FieldDef_Name(f);
  x->parent = upb_MessageDef_FullName(upb_FieldDef_ContainingType(f));
  x->json_name = upb_FieldDef_JsonName(f);
  x->number = (int)upb_FieldDef_Number(f);
  char ft[kPo_FieldTypeMax];
  x->type = po_Arena_Printf(a, "%s", po_FieldType(f, ft));
  x->map = upb_FieldDef_IsMap(f);
  x->repeated = upb_FieldDef_IsRepeated(f) && !x->map;
  x->message = upb_FieldDef_IsSubMessage(f) && !x->map;
  x->deprecated = po_Schema_FieldDeprecated(f);
  const upb_OneofDef *o = upb_FieldDef_RealContainingOneof(f);
  x->oneof = o ? upb_OneofDef_Name(o) : NULL;
  x->oneof_required = o && po_Schema_OneofRequired(s, o, po_Arena_Upb(a));
  const upb_MessageDef *rd = NULL;
  const upb_Message *r = po_Schema_FieldRules(s, f, po_Arena_Upb(a), &rd);
  x->rules = r ? rules_text(r, rd, a, 0) : NULL;
  const upb_MessageDef *sub = x->message ? upb_FieldDef_MessageSubDef(f) : NULL;
  bool any = sub && upb_MessageDef_WellKnownType(sub) == kUpb_WellKnown_Any;
  x->traversable = x->message && !x->repeated && !any;
  if (x->map) {
    const upb_MessageDef *entry = upb_FieldDef_MessageSubDef(f);
    x->detail = po_Arena_Printf(a, "map<%s, %s>", plain_type(upb_MessageDef_FindFieldByNumber(entry, 1)),
                                plain_type(upb_MessageDef_FindFieldByNumber(entry, 2)));
    x->how = "Consul's PatchStruct does not support map fields (unsupported target field type 'map'), nor paths into them";
  } else if (x->repeated) {
    x->detail = upb_FieldDef_CType(f) == kUpb_CType_Enum ? enum_detail(upb_FieldDef_EnumSubDef(f), a) : NULL;
    x->how = x->message ? "a repeated message field cannot be set by a patch, nor can a path reach into its elements"
                        : "Consul's API delivers every JSON array as []interface {}, which no repeated field accepts; "
                          "a path cannot reach into its elements either";
  } else if (any) {
    x->how = "variant-type message fields (google.protobuf.Any) are not supported: a path cannot go through one, and "
             "its `value` is bytes, which a patch cannot set";
  } else if (sub && is_wrapper(sub)) {
    const upb_FieldDef *inner = upb_MessageDef_FindFieldByName(sub, "value");
    x->detail = po_Arena_Printf(a, "wrapper of %s", inner ? po_KindName(inner) : "?");
    x->settable = upb_MessageDef_WellKnownType(sub) != kUpb_WellKnown_BytesValue;
    x->how = x->settable ? po_Arena_Printf(a, "a %s value (the wrapper is filled in)", inner ? po_KindName(inner) : "scalar")
                         : "unsupported target field type 'google.protobuf.BytesValue'";
  } else if (sub && upb_MessageDef_WellKnownType(sub) == kUpb_WellKnown_Duration) {
    x->settable = true;
    x->how = "an object {seconds, nanos}, or a duration string such as \"5s\" or \"250ms\"";
  } else if (sub) {
    x->settable = true;
    x->how = "an object of its scalar fields (it replaces the whole message), or a path to one of its fields";
  } else if (upb_FieldDef_CType(f) == kUpb_CType_Enum) {
    x->detail = enum_detail(upb_FieldDef_EnumSubDef(f), a);
    x->settable = true;
    x->how = "an enum value name (Consul's API delivers numbers as float64, which enums refuse)";
  } else if (upb_FieldDef_CType(f) == kUpb_CType_Bytes) {
    x->how = "unsupported target field type 'bytes'";
  } else {
    x->settable = true;
    x->how = po_Arena_Printf(a, "a %s value", po_KindName(f));
  }
}

static bool list_fields(const po_Schema *s, const upb_MessageDef *m, po_Arena *a, po_Explanation *out,
                        po_Status *st) {
  int n = upb_MessageDef_FieldCount(m);
  po_ExplainField *fs = po_Arena_Malloc(a, (size_t)(n ? n : 1) * sizeof *fs);
  if (!fs) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  for (int i = 0; i < n; i++) describe(s, upb_MessageDef_Field(m, i), a, &fs[i]);
  out->message = upb_MessageDef_FullName(m);
  out->fields = fs;
  out->field_count = (size_t)n;
  return true;
}

/* ---- the walk ------------------------------------------------------------------------------- */

bool po_Explain(const po_ExplainOptions *o, const char *query, po_Arena *a, po_Explanation *out, po_Status *st) {
  memset(out, 0, sizeof *out);
  const po_ExplainOptions none = {0};
  if (!o) o = &none;
  const po_Schema *s = po_EnvoyApi_Schema_(o->api, a, st);
  if (!s) return false;
  while (*query == '/') query++;
  const char *slash = strchr(query, '/');
  size_t rlen = slash ? (size_t)(slash - query) : strlen(query);
  char *root_name = po_Arena_Strndup(a, query, rlen);
  if (!root_name) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  const upb_MessageDef *m = po_Schema_ResourceMessage(s, root_name);
  if (m) out->resource_type = root_name;
  else m = po_Schema_FindMessage(s, root_name);
  if (!m) {
    return po_Status_Set(st, kPo_Status_NotFound,
                         "'%s' is neither a resource type (cluster, cluster-load-assignment, route, listener) nor an "
                         "Envoy message name (such as envoy.config.cluster.v3.Cluster)", root_name);
  }
  out->root = upb_MessageDef_FullName(m);
  const char *p = slash ? slash + 1 : "";
  while (*p == '/') p++; /* Consul strips every leading slash */
  /* A trailing slash is a typing convenience of the query ("cluster/outlier_detection/"), not a
   * segment: explain lists the same fields without it. */
  size_t plen = strlen(p);
  while (plen && p[plen - 1] == '/') plen--;
  const char *norm = root_name;
  po_ExplainField *field = NULL;
  if (plen) {
    char *path = po_Arena_Strndup(a, p, plen);
    if (!path) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
    /* The one resolver compile uses: a path explain accepts is a path a patch can use. */
    po_Resolved r;
    if (!po_Path_Resolve(s, m, path, a, &r)) {
      po_Resolved_Error(&r, false, a, st);
      if (r.error == kPo_Resolve_UnknownField) {
        const char *hint = po_Resolved_Hint(&r, o->judged_for, o->releases, a);
        size_t len = strlen(st->message);
        if (hint) snprintf(st->message + len, sizeof st->message - len, "\n%s", hint);
        st->code = kPo_Status_NotFound;
      }
      return false;
    }
    const upb_FieldDef *f = po_Resolved_Target(&r);
    field = po_Arena_Malloc(a, sizeof *field);
    if (!field) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
    describe(s, f, a, field);
    norm = po_Arena_Printf(a, "%s/%s", root_name, path);
    m = field->message && !field->map ? upb_FieldDef_MessageSubDef(f) : NULL;
  }
  out->path = norm;
  out->field = field;
  if (!m) return true;
  return list_fields(s, m, a, out, st);
}
