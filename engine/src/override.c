/* Constructor (validation and compilation of a whole extension), PatchStruct, filter matching
 * and application. Consul's order of checks and texts: docs/consul-semantics.md section 2. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compiled.h"
#include "override_ir.h"

#define PO_EXTENSION_NAME "builtin/property-override"


po_CompileOptions po_CompileOptions_Default(void) {
  return (po_CompileOptions){.convention = kPo_Convention_Typed, .envoy_rules = true,
                             .deprecations = true, .hints = true};
}

/* Go's strconv.Quote. */
static char *go_quote(po_Arena *a, const char *s) {
  size_t n = strlen(s);
  char *out = po_Arena_Malloc(a, n * 10 + 3);
  if (!out) return "\"\"";
  char *p = out;
  *p++ = '"';
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    /* decode one UTF-8 rune; invalid bytes print as \x.. */
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool valid = len > 0 && i + len <= n;
    for (size_t k = 1; valid && k < len; k++) valid = ((unsigned char)s[i + k] & 0xC0) == 0x80;
    if (!valid) {
      p += sprintf(p, "\\x%02x", c);
      i++;
      continue;
    }
    if (len > 1) {
      memcpy(p, s + i, len); /* printable non-ASCII runes stay as they are */
      p += len;
      i += len;
      continue;
    }
    switch (c) {
      case '"': p += sprintf(p, "\\\""); break;
      case '\\': p += sprintf(p, "\\\\"); break;
      case '\a': p += sprintf(p, "\\a"); break;
      case '\b': p += sprintf(p, "\\b"); break;
      case '\f': p += sprintf(p, "\\f"); break;
      case '\n': p += sprintf(p, "\\n"); break;
      case '\r': p += sprintf(p, "\\r"); break;
      case '\t': p += sprintf(p, "\\t"); break;
      case '\v': p += sprintf(p, "\\v"); break;
      default:
        if (c < 0x20 || c == 0x7f) p += sprintf(p, "\\x%02x", c);
        else *p++ = (char)c;
    }
    i++;
  }
  *p++ = '"';
  *p = '\0';
  return out;
}

/* extensioncommon.StringSet.CheckRequired. */
static const char *check_required(po_Arena *a, const char *v, const char *field, bool ok,
                                  const char *supported) {
  if (ok) return NULL;
  if (!v || !*v) return po_Arena_Printf(a, "field %s is required", field);
  return po_Arena_Printf(a, "invalid %s '%s'; supported values: %s", field, go_quote(a, v), supported);
}

/* Patch.validate: the first failing rule of one patch, or NULL. */
static const char *validate_patch(po_Patch *p, po_Arena *a) {
  po_ResourceFilter *f = &p->resource_filter;
  if (!f->present) return "field ResourceFilter is required";
  const char *e = check_required(a, f->resource_type, "ResourceType", po_ResourceTypes_Contains(f->resource_type),
                                 "cluster, cluster-load-assignment, route, listener");
  if (e) return e;
  e = check_required(a, f->traffic_direction, "TrafficDirection",
                     po_TrafficDirection_Parse(f->traffic_direction) != kPo_TrafficDirection_Unknown, "inbound, outbound");
  if (e) return e;
  if (f->service_count > 0 && po_TrafficDirection_Parse(f->traffic_direction) != kPo_TrafficDirection_Outbound) {
    return "patch contains non-empty ResourceFilter.Services but ResourceFilter.TrafficDirection is not \"outbound\"";
  }
  for (size_t i = 0; i < f->service_count; i++) {
    po_ServiceName *s = &f->services[i];
    if (!s->namespace_ || !*s->namespace_) s->namespace_ = "default";
    if (!s->partition || !*s->partition) s->partition = "default";
    if (!s->name || !*s->name) return "service name is required";
  }
  e = check_required(a, p->op, "Op", po_Ops_Contains(p->op), "add, remove");
  if (e) return e;
  if (p->value && po_Value_Kind(p->value) != kPo_ValueKind_Null && po_Op_Parse(p->op) != kPo_Op_Add) {
    return po_Arena_Printf(a, "field Value is not supported for %s operation", p->op);
  }
  return NULL;
}

/* The wire convention: what encoding/json makes of the value (float64 numbers, []interface {}). */
static po_Value *to_wire(po_Arena *a, const po_Value *v) {
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Int: {
      po_Value *f = po_Value_NewFloat(a, (double)po_Value_Int(v));
      if (f) po_Value_SetPos(f, po_Value_Pos(v));
      /* its literal, for messages: 9007199254740993 is not its float64 */
      if (f && !(f->text = po_Arena_Printf(a, "%lld", (long long)po_Value_Int(v)))) return NULL;
      return f;
    }
    case kPo_ValueKind_List:
    case kPo_ValueKind_Map: {
      po_Value *c = po_Arena_Malloc(a, sizeof *c);
      if (!c) return NULL;
      *c = *v;
      c->u.agg.items = po_Arena_Malloc(a, (v->u.agg.len ? v->u.agg.len : 1) * sizeof *c->u.agg.items);
      if (!c->u.agg.items) return NULL;
      c->u.agg.cap = v->u.agg.len;
      for (size_t i = 0; i < v->u.agg.len; i++) c->u.agg.items[i] = to_wire(a, v->u.agg.items[i]);
      c->untyped = v->kind == kPo_ValueKind_List;
      return c;
    }
    default: return (po_Value *)v;
  }
}

static po_PatchOptions patch_options(const po_CompileOptions *o, bool debug) {
  return (po_PatchOptions){.debug = debug, .hints = o->hints, .envoy_rules = o->envoy_rules,
                           .deprecations = o->deprecations, .judged_for = o->judged_for,
                           .releases = o->releases};
}

/* Why Consul's wire typing refuses a value the typed convention took, from what the value and
 * the field are (never from the error's text): an array for a repeated field is the one
 * systematic case (encoding/json makes every array []interface {}). */
static po_DiagKind wire_reason(const po_Value *v, const upb_FieldDef *target) {
  return po_Value_Kind(v) == kPo_ValueKind_List && target && upb_FieldDef_IsRepeated(target) ? kPo_DiagKind_WireArray
                                                                                          : kPo_DiagKind_WireFormat;
}

const char *po_DiagKind_Reason(po_DiagKind kind) {
  switch (kind) {
    case kPo_DiagKind_WireArray:
      return "Consul's API delivers every JSON array as []interface {}, which no repeated field accepts";
    case kPo_DiagKind_WireFormat: return "as Consul will decode the arguments written to it";
    default: return NULL;
  }
}

/* The verdict of the convention the compile did not use, on the already resolved target: only
 * the value's conversion can differ, so the path is not walked again. */
static po_Verdict other_verdict(const po_CompiledPatch *cp, const po_Patch *p, po_Convention c,
                                const po_Verdict *primary, bool debug, po_Arena *a) {
  if (!cp->target || cp->op != kPo_Op_Add || !p->value || po_Value_Kind(p->value) == kPo_ValueKind_Null) return *primary;
  const po_Value *v = p->value;
  if (c == kPo_Convention_Wire) {
    /* As Consul will receive what we write: encoding/json's typing, then its decoder's. */
    const po_Value *w = to_wire(a, p->value);
    if (!w) return (po_Verdict){.ok = false, .kind = kPo_DiagKind_Consul, .message = "out of memory"};
    v = po_Value_DecodedAsAny(w, a);
  }
  po_PatchOptions po = {.debug = debug};
  po_Setter set;
  po_Status st;
  po_Status_Clear(&st);
  if (po_CompiledPatch_Convert(cp, v, &po, a, &set, NULL, &st)) return (po_Verdict){.ok = true};
  po_DiagKind kind = !primary->ok ? kPo_DiagKind_Consul
                     : c == kPo_Convention_Wire ? wire_reason(p->value, cp->target)
                                               : kPo_DiagKind_Consul;
  return (po_Verdict){.ok = false, .kind = kind, .message = po_Arena_Printf(a, "%s", st.message)};
}

static po_Override *override_new(const po_Arguments *in, const po_CompileOptions *opts, const po_Schema *schema,
                                 po_Arena *a) {
  po_Override *o = po_Arena_Malloc(a, sizeof *o);
  if (!o) return NULL;
  o->api = po_EnvoyApi_Or_(opts->api);
  o->schema = schema;
  o->args = *in;
  size_t n = in->patch_count, m = n ? n : 1;
  o->args.patches = po_Arena_Malloc(a, m * sizeof *o->args.patches);
  o->compiled = po_Arena_Malloc(a, m * sizeof *o->compiled);
  o->types = po_Arena_Malloc(a, m * sizeof *o->types);
  o->dirs = po_Arena_Malloc(a, m * sizeof *o->dirs);
  o->verdicts = po_Arena_Malloc(a, m * sizeof *o->verdicts);
  if (!o->args.patches || !o->compiled || !o->types || !o->dirs || !o->verdicts) return NULL;
  if (n) memcpy(o->args.patches, in->patches, n * sizeof *o->args.patches);
  return o;
}

static bool same_services(const po_ResourceFilter *x, const po_ResourceFilter *y) {
  if (x->service_count != y->service_count) return false;
  for (size_t k = 0; k < x->service_count; k++) {
    const po_ServiceName *a = &x->services[k], *b = &y->services[k];
    if (strcmp(a->name, b->name) || strcmp(a->namespace_, b->namespace_) || strcmp(a->partition, b->partition)) return false;
  }
  return true;
}

/* For a patch adding `<P>/seconds` (or `/nanos`): the last other add of `<P>/nanos` (`/seconds`)
 * that lands on every resource this one does (the same type and direction, no services or the
 * same), with an integer value; -1 if none. Which <P> is a Duration is the rules' business. */
static int other_part(const po_Override *o, size_t i) {
  const po_Patch *p = &o->args.patches[i];
  const char *slash = p->path ? strrchr(p->path, '/') : NULL;
  if (!slash || strcmp(p->op, "add")) return -1;
  const char *other = !strcmp(slash, "/seconds") ? "/nanos" : !strcmp(slash, "/nanos") ? "/seconds" : NULL;
  size_t stem = (size_t)(slash - p->path);
  for (size_t j = o->args.patch_count; other && j-- > 0;) {
    const po_Patch *q = &o->args.patches[j];
    const po_ResourceFilter *f = &p->resource_filter, *g = &q->resource_filter;
    if (j == i || !q->path || strcmp(q->op, "add") || strncmp(q->path, p->path, stem) || strcmp(q->path + stem, other)) continue;
    if (po_Value_Kind(q->value) != kPo_ValueKind_Int) continue;
    if (strcmp(f->resource_type, g->resource_type) || strcmp(f->traffic_direction, g->traffic_direction)) continue;
    if (g->service_count && !same_services(f, g)) continue;
    return (int)j;
  }
  return -1;
}

/* One patch's compile: the primary convention with every check and diagnostic, then the
 * other convention's verdict on the resolved target. */
static bool compile_patch(po_Override *o, size_t i, const po_Schema *schema, const upb_MessageDef *root,
                          const po_CompileOptions *opts, po_Arena *a, po_Diagnostics *diags) {
  po_Patch *p = &o->args.patches[i];
  po_Patch typed = *p;
  if (opts->convention == kPo_Convention_Wire && typed.value && !(typed.value = to_wire(a, typed.value))) return false;
  po_PatchOptions po = patch_options(opts, o->args.debug);
  int j = other_part(o, i);
  if (j >= 0) po.other_part = o->args.patches[j].value, po.other_idx = j;
  const char *hint = NULL;
  po_Status st;
  po_Status_Clear(&st);
  size_t before = po_Diagnostics_Count(diags);
  po_Verdict *v = o->verdicts[i];
  po_Verdict *primary = &v[opts->convention];
  *primary = (po_Verdict){.ok = true};
  if (!po_CompiledPatch_Compile(schema, root, &typed, &po, a, &o->compiled[i], &hint, diags, (int)i, &st)) {
    if (st.code == kPo_Status_NoMemory) return false;
    const char *msg = po_Arena_Printf(a, "%s", st.message);
    *primary = (po_Verdict){.ok = false, .kind = kPo_DiagKind_Consul, .message = msg};
    po_Diagnostic *x = po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Consul, (int)i, p->path, msg);
    if (x) x->hint = hint;
  }
  po_Convention other = opts->convention == kPo_Convention_Wire ? kPo_Convention_Typed : kPo_Convention_Wire;
  v[other] = other_verdict(&o->compiled[i], p, other, primary, o->args.debug, a);
  if (opts->check_wire && other == kPo_Convention_Wire && primary->ok && !v[other].ok) {
    /* Consul's text first, as Consul would print it; why after it. */
    po_Diagnostics_Add(diags, kPo_Severity_Error, v[other].kind, (int)i, p->path,
                       po_Arena_Printf(a, "%s (%s)", v[other].message, po_DiagKind_Reason(v[other].kind)));
  }
  for (size_t k = before; k < po_Diagnostics_Count(diags); k++) {
    ((po_Diagnostic *)po_Diagnostics_At(diags, k))->pos = p->pos;
  }
  return true;
}

po_Override *po_Override_Build(const po_Arguments *in, const po_CompileOptions *opts, po_Arena *a,
                               po_Diagnostics *diags) {
  po_CompileOptions defaults = po_CompileOptions_Default();
  if (!opts) opts = &defaults;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *schema = po_EnvoyApi_Schema_(opts->api, a, &st);
  if (!schema) {
    po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Decode, -1, NULL, po_Arena_Printf(a, "%s", st.message));
    return NULL;
  }
  po_Override *o = override_new(in, opts, schema, a);
  if (!o) return NULL;
  size_t n = in->patch_count;
  size_t errors_before = po_Diagnostics_ErrorCount(diags);
  if (n == 0) {
    po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Consul, -2, NULL, "at least one patch is required");
  }
  for (size_t i = 0; i < n; i++) {
    po_Patch *p = &o->args.patches[i];
    /* Services are normalised in place: copy them so the caller's arguments stay as given. */
    if (p->resource_filter.service_count) {
      po_ServiceName *svc = po_Arena_Malloc(a, p->resource_filter.service_count * sizeof *svc);
      if (!svc) return NULL;
      memcpy(svc, p->resource_filter.services, p->resource_filter.service_count * sizeof *svc);
      p->resource_filter.services = svc;
    }
    const char *e = validate_patch(p, a);
    if (e) {
      o->verdicts[i][0] = o->verdicts[i][1] = (po_Verdict){.ok = false, .kind = kPo_DiagKind_Consul, .message = e};
      po_Diagnostic *x = po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Consul, (int)i, p->path, e);
      if (x) x->pos = p->pos;
      continue;
    }
    o->types[i] = po_ResourceType_Parse(p->resource_filter.resource_type);
    o->dirs[i] = po_TrafficDirection_Parse(p->resource_filter.traffic_direction);
    const upb_MessageDef *root = po_Schema_FindMessage(schema, po_ResourceType_Message(o->types[i]));
    /* The four resource types are in every schema: none here is the on-demand load of its file
     * failing for memory (resolving a path from no message dereferenced NULL). */
    if (!root) return NULL;
    if (!compile_patch(o, i, schema, root, opts, a, diags)) return NULL;
  }
  if (!o->args.proxy_type || !*o->args.proxy_type) o->args.proxy_type = "connect-proxy";
  const char *e = check_required(a, o->args.proxy_type, "ProxyType",
                                 strcmp(o->args.proxy_type, "connect-proxy") == 0, "connect-proxy");
  if (e) po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Consul, -1, NULL, e);
  o->valid = po_Diagnostics_ErrorCount(diags) == errors_before;
  return o;
}

po_Override *po_Override_Compile(const po_Arguments *in, const po_CompileOptions *opts, po_Arena *a,
                                 po_Diagnostics *diags) {
  po_Override *o = po_Override_Build(in, opts, a, diags);
  return o && o->valid ? o : NULL;
}

po_Override *po_Override_BuildFor(const char *message, const po_Arguments *in, const po_CompileOptions *opts,
                                  po_Arena *a, po_Diagnostics *diags) {
  po_CompileOptions defaults = po_CompileOptions_Default();
  if (!opts) opts = &defaults;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *schema = po_EnvoyApi_Schema_(opts->api, a, &st);
  const upb_MessageDef *root = schema ? po_Schema_FindMessage(schema, message) : NULL;
  if (!root) {
    po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Decode, -1, NULL,
                       schema ? po_Arena_Printf(a, "no message %s in the Envoy API (%s)", message,
                                                po_EnvoyApi_Name(opts->api))
                              : po_Arena_Printf(a, "%s", st.message));
    return NULL;
  }
  po_Override *o = override_new(in, opts, schema, a);
  if (!o) return NULL;
  o->bare = true;
  size_t errors_before = po_Diagnostics_ErrorCount(diags);
  for (size_t i = 0; i < in->patch_count; i++) {
    if (!compile_patch(o, i, schema, root, opts, a, diags)) return NULL;
  }
  o->valid = po_Diagnostics_ErrorCount(diags) == errors_before;
  return o;
}

po_Override *po_Constructor(const char *name, const po_Value *arguments,
                            const po_CompileOptions *opts, po_Arena *a, po_Diagnostics *diags) {
  if (!name) name = PO_EXTENSION_NAME;
  if (strcmp(name, PO_EXTENSION_NAME) != 0) {
    po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Consul, -2, NULL,
                       po_Arena_Printf(a, "expected extension name %s but got %s", go_quote(a, PO_EXTENSION_NAME),
                                       go_quote(a, name)));
    return NULL;
  }
  po_Arguments args;
  po_Status st;
  po_Status_Clear(&st);
  /* Under the wire convention the whole arguments object is as encoding/json made it, so
   * Consul's decoder sees []interface {} and float64 too (its errors name those types). */
  if (opts && opts->convention == kPo_Convention_Wire && arguments && !(arguments = to_wire(a, arguments))) return NULL;
  if (!po_Arguments_Decode(arguments, a, &args, &st)) {
    po_Diagnostics_Add(diags, kPo_Severity_Error, kPo_DiagKind_Consul, -2, NULL, po_Arena_Printf(a, "%s", st.message));
    return NULL;
  }
  return po_Override_Compile(&args, opts, a, diags);
}

size_t po_Override_PatchCount(const po_Override *o) { return o->args.patch_count; }
const po_EnvoyApi *po_Override_Api(const po_Override *o) { return o->api; }
const po_Arguments *po_Override_Arguments(const po_Override *o) { return &o->args; }
bool po_Override_Valid(const po_Override *o) { return o->valid; }

po_ResourceType po_Override_ResourceType(const po_Override *o, size_t i) {
  return i < o->args.patch_count ? o->types[i] : kPo_ResourceType_Unknown;
}

po_TrafficDirection po_Override_Direction(const po_Override *o, size_t i) {
  return i < o->args.patch_count ? o->dirs[i] : kPo_TrafficDirection_Unknown;
}

po_Op po_Override_Op(const po_Override *o, size_t i) {
  return i < o->args.patch_count ? o->compiled[i].op : kPo_Op_Unknown;
}

size_t po_Override_SegmentCount(const po_Override *o, size_t i) {
  if (i >= o->args.patch_count || !o->compiled[i].target) return 0;
  return o->compiled[i].chain_len + 1;
}

bool po_Override_Segment(const po_Override *o, size_t i, size_t k, po_PathSegment *out) {
  if (k >= po_Override_SegmentCount(o, i)) return false;
  const po_CompiledPatch *cp = &o->compiled[i];
  const upb_FieldDef *f = k < cp->chain_len ? cp->chain[k]->def : cp->target;
  const upb_OneofDef *oneof = upb_FieldDef_RealContainingOneof(f);
  const upb_MessageDef *m = upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsMap(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
  *out = (po_PathSegment){.name = upb_FieldDef_Name(f), .full_name = upb_FieldDef_FullName(f),
                          .number = (int)upb_FieldDef_Number(f),
                          .oneof = oneof ? upb_OneofDef_Name(oneof) : NULL,
                          .message_type = m ? upb_MessageDef_FullName(m) : NULL,
                          .repeated = upb_FieldDef_IsRepeated(f)};
  return true;
}

/* The proto3 default of a converted scalar: what a proto merge never copies. */
static bool scalar_zero(const upb_FieldDef *f, upb_MessageValue v) {
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool: return !v.bool_val;
    case kUpb_CType_Float: return v.float_val == 0;
    case kUpb_CType_Double: return v.double_val == 0;
    case kUpb_CType_Int32:
    case kUpb_CType_Enum: return v.int32_val == 0;
    case kUpb_CType_UInt32: return v.uint32_val == 0;
    case kUpb_CType_Int64: return v.int64_val == 0;
    case kUpb_CType_UInt64: return v.uint64_val == 0;
    case kUpb_CType_String:
    case kUpb_CType_Bytes: return v.str_val.size == 0;
    default: return false;
  }
}

/* ---- the converted value as protojson (what other control planes' patch objects take) ---- */

static po_Value *scalar_json(const upb_FieldDef *f, upb_MessageValue v, po_Arena *a) {
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool: return po_Value_NewBool(a, v.bool_val);
    case kUpb_CType_Float: return po_Value_NewFloat(a, v.float_val);
    case kUpb_CType_Double: return po_Value_NewFloat(a, v.double_val);
    case kUpb_CType_Int32: return po_Value_NewInt(a, v.int32_val);
    case kUpb_CType_UInt32: return po_Value_NewInt(a, (int64_t)v.uint32_val);
    case kUpb_CType_Int64: return po_Value_NewInt(a, v.int64_val);
    case kUpb_CType_UInt64:
      if (v.uint64_val <= (uint64_t)INT64_MAX) return po_Value_NewInt(a, (int64_t)v.uint64_val);
      /* protojson's own form of a 64-bit integer: a decimal string */
    {
      const char *t = po_Arena_Printf(a, "%" PRIu64, v.uint64_val);
      return t ? po_Value_NewString(a, t, strlen(t)) : NULL;
    }
    case kUpb_CType_Enum: {
      const upb_EnumValueDef *ev = upb_EnumDef_FindValueByNumber(upb_FieldDef_EnumSubDef(f), v.int32_val);
      if (!ev) return po_Value_NewInt(a, v.int32_val);
      const char *n = upb_EnumValueDef_Name(ev);
      return po_Value_NewString(a, n, strlen(n));
    }
    case kUpb_CType_String:
    case kUpb_CType_Bytes: return po_Value_NewString(a, v.str_val.data, v.str_val.size);
    default: return NULL;
  }
}

/* protojson's Duration: seconds with up to nine fractional digits and an "s", the sign once. */
static po_Value *duration_json(const po_Setter *s, po_Arena *a) {
  int64_t sec = 0;
  int32_t nanos = 0;
  for (size_t i = 0; i < s->child_count; i++) {
    const po_Setter *c = &s->children[i];
    if (!strcmp(upb_FieldDef_Name(c->field), "seconds")) sec = c->value.int64_val;
    else if (!strcmp(upb_FieldDef_Name(c->field), "nanos")) nanos = c->value.int32_val;
  }
  bool neg = sec < 0 || nanos < 0;
  uint64_t us = sec < 0 ? (uint64_t)0 - (uint64_t)sec : (uint64_t)sec;
  uint32_t un = nanos < 0 ? (uint32_t)(-(int64_t)nanos) : (uint32_t)nanos;
  char frac[16] = "";
  if (un) {
    snprintf(frac, sizeof frac, ".%09" PRIu32, un);
    size_t l = strlen(frac);
    while (l > 1 && frac[l - 1] == '0') frac[--l] = '\0';
  }
  const char *t = po_Arena_Printf(a, "%s%" PRIu64 "%ss", neg ? "-" : "", us, frac);
  return t ? po_Value_NewString(a, t, strlen(t)) : NULL;
}

static bool is_wrapper_def(const upb_MessageDef *m) {
  upb_WellKnown wk = upb_MessageDef_WellKnownType(m);
  return wk >= kUpb_WellKnown_DoubleValue && wk <= kUpb_WellKnown_BoolValue;
}

/* An object given for a wrapper ({} or {value: v}): Consul sets the wrapper, to its zero or to v.
 * protojson writes a wrapper as its bare value and refuses {"value": v} for one (Envoy Gateway's
 * unmarshal of the patched resource fails), so the bare value it stands for. */
static po_Value *wrapper_object_json(const po_Setter *s, const upb_MessageDef *m, po_Arena *a) {
  for (size_t i = 0; i < s->child_count; i++) {
    if (s->children[i].kind == kPo_SetKind_Scalar) return scalar_json(s->children[i].field, s->children[i].value, a);
  }
  const upb_FieldDef *vf = upb_MessageDef_FindFieldByName(m, "value");
  upb_MessageValue zero;
  memset(&zero, 0, sizeof zero); /* every member reads as its zero */
  if (!vf) return NULL;
  if (upb_FieldDef_CType(vf) == kUpb_CType_String || upb_FieldDef_CType(vf) == kUpb_CType_Bytes) zero.str_val.data = "";
  return scalar_json(vf, zero, a);
}

/* protojson writes an Any of a well-known type with a JSON form of its own as {"@type": u,
 * "value": <that form>}, and refuses one without "value": the form of the empty message of each
 * (what Consul's Any holds: no bytes), as JSON text. google.protobuf.Value has none (its empty
 * message has no JSON form): NULL, so nothing is added and the adapter refuses it. */
static const char *wkt_empty_json(const char *url, size_t n) {
  static const struct { const char *name, *json; } kForms[] = {
      {"Duration", "\"0s\""}, {"Timestamp", "\"1970-01-01T00:00:00Z\""}, {"FieldMask", "\"\""},
      {"DoubleValue", "0"}, {"FloatValue", "0"}, {"Int64Value", "0"}, {"UInt64Value", "0"}, {"Int32Value", "0"},
      {"UInt32Value", "0"}, {"BoolValue", "false"}, {"StringValue", "\"\""}, {"BytesValue", "\"\""},
      {"Struct", "{}"}, {"ListValue", "[]"}, {"Any", "{}"}};
  static const char kPrefix[] = "/google.protobuf.";
  const char *slash = url + n;
  while (slash > url && slash[-1] != '/') slash--;
  slash = slash > url ? slash - 1 : NULL;
  size_t k = sizeof kPrefix - 1;
  if (!slash || (size_t)(url + n - slash) <= k || strncmp(slash, kPrefix, k) != 0) return NULL;
  for (size_t i = 0; i < sizeof kForms / sizeof *kForms; i++) {
    if (strlen(kForms[i].name) == (size_t)(url + n - slash - k) && !strncmp(slash + k, kForms[i].name, strlen(kForms[i].name))) {
      return kForms[i].json;
    }
  }
  return NULL;
}

/* An Any given in Consul's form ({type_url: u}; its `value` is bytes, which Consul cannot set):
 * protojson's form is {"@type": u} (the message of that type, empty; a well-known type's JSON
 * form under "value") and refuses a `type_url` member; an Any without a type URL is the empty
 * Any, {}. */
static po_Value *any_json(const po_Setter *s, po_Arena *a) {
  po_Value *map = po_Value_NewMap(a);
  for (size_t i = 0; map && i < s->child_count; i++) {
    const po_Setter *c = &s->children[i];
    if (c->kind != kPo_SetKind_Scalar || strcmp(upb_FieldDef_Name(c->field), "type_url") || !c->value.str_val.size) continue;
    upb_StringView url = c->value.str_val;
    po_Value *u = po_Value_NewString(a, url.data, url.size);
    if (!u || !po_Value_MapPut(a, map, "@type", u)) return NULL;
    const char *form = wkt_empty_json(url.data, url.size);
    po_Status st;
    po_Status_Clear(&st);
    po_Value *v = form ? po_Value_ParseJson(form, strlen(form), a, &st) : NULL;
    if (form && (!v || !po_Value_MapPut(a, map, "value", v))) return NULL;
  }
  return map;
}

static po_Value *setter_json(const po_Setter *s, po_Arena *a) {
  switch (s->kind) {
    case kPo_SetKind_Scalar: return scalar_json(s->field, s->value, a);
    case kPo_SetKind_Wrapper: return scalar_json(s->wrapper_value, s->value, a);
    case kPo_SetKind_List: {
      po_Value *l = po_Value_NewList(a);
      for (size_t i = 0; l && i < s->item_count; i++) {
        po_Value *e = scalar_json(s->field, s->items[i], a);
        if (!e || !po_Value_ListAppend(a, l, e)) return NULL;
      }
      return l;
    }
    case kPo_SetKind_Message: {
      const upb_MessageDef *m = upb_FieldDef_MessageSubDef(s->field);
      if (m && !strcmp(upb_MessageDef_FullName(m), "google.protobuf.Duration")) return duration_json(s, a);
      if (m && is_wrapper_def(m)) return wrapper_object_json(s, m, a);
      if (m && upb_MessageDef_WellKnownType(m) == kUpb_WellKnown_Any) return any_json(s, a);
      po_Value *map = po_Value_NewMap(a);
      for (size_t i = 0; map && i < s->child_count; i++) {
        po_Value *e = setter_json(&s->children[i], a);
        if (!e || !po_Value_MapPut(a, map, upb_FieldDef_Name(s->children[i].field), e)) return NULL;
      }
      return map;
    }
  }
  return NULL;
}

po_Value *po_Override_SetJson(const po_Override *o, size_t i, po_Arena *a) {
  if (i >= o->args.patch_count) return NULL;
  const po_CompiledPatch *cp = &o->compiled[i];
  if (!cp->target || cp->op != kPo_Op_Add || !o->verdicts[i][kPo_Convention_Typed].ok) return NULL;
  return setter_json(&cp->set, a);
}

bool po_Override_Set(const po_Override *o, size_t i, po_SetInfo *out) {
  *out = (po_SetInfo){0};
  if (i >= o->args.patch_count) return false;
  const po_CompiledPatch *cp = &o->compiled[i];
  if (!cp->target || cp->op != kPo_Op_Add || !o->verdicts[i][kPo_Convention_Typed].ok) return true;
  const po_Setter *s = &cp->set;
  out->value = s->source;
  switch (s->kind) {
    /* A field with presence (a oneof member, proto3 optional) is copied by a merge even when zero. */
    case kPo_SetKind_Scalar:
      out->shape = kPo_SetShape_Scalar;
      out->zero = scalar_zero(s->field, s->value) && !upb_FieldDef_HasPresence(s->field);
      break;
    case kPo_SetKind_Wrapper: out->shape = kPo_SetShape_Wrapper; out->zero = scalar_zero(s->wrapper_value, s->value); break;
    case kPo_SetKind_List: out->shape = kPo_SetShape_List; out->zero = s->item_count == 0; break;
    case kPo_SetKind_Message:
      out->shape = kPo_SetShape_Message;
      out->zero = s->child_count == 0;
      /* An object for a wrapper sets the wrapper as its scalar would: {value: v} is v, {} its zero. */
      if (is_wrapper_def(upb_FieldDef_MessageSubDef(s->field))) {
        out->shape = kPo_SetShape_Wrapper;
        for (size_t k = 0; k < s->child_count; k++) out->zero = scalar_zero(s->children[k].field, s->children[k].value);
      }
      break;
  }
  return true;
}

po_Verdict po_Override_Verdict(const po_Override *o, size_t i, po_Convention c) {
  if (i >= o->args.patch_count || (c != kPo_Convention_Typed && c != kPo_Convention_Wire)) {
    return (po_Verdict){.ok = false, .kind = kPo_DiagKind_Decode, .message = "no such patch or convention"};
  }
  return o->verdicts[i][c];
}

/* ---- application ---- */

bool po_ResourceFilter_Matches(const po_ResourceFilter *f, const po_Payload *p) {
  if (po_ResourceType_Parse(f->resource_type) != p->resource_type) return false;
  if (po_TrafficDirection_Parse(f->traffic_direction) != p->direction) return false;
  if (f->service_count == 0) return true;
  for (size_t i = 0; i < f->service_count; i++) {
    const po_ServiceName *s = &f->services[i];
    if (!p->service) continue;
    if (!strcmp(s->name, p->service->name) && !strcmp(s->namespace_, p->service->namespace_) &&
        !strcmp(s->partition, p->service->partition)) {
      return true;
    }
  }
  return false;
}

bool po_Override_Apply(const po_Override *o, po_Message *m, const po_Payload *p, bool *patched,
                       po_Status *st) {
  if (patched) *patched = false;
  if (!o->valid) return po_Status_Set(st, kPo_Status_Invalid, "the override did not compile; it cannot be applied");
  if (m->schema != o->schema) {
    /* its chains are field definitions of one snapshot's pool: another's message has other ones */
    const po_EnvoyApi *mapi = po_Message_Api(m);
    return po_Status_Set(st, kPo_Status_Invalid, "the override was compiled under %s; this %s is of %s: decode it with that API",
                         po_EnvoyApi_Name(o->api), upb_MessageDef_FullName(m->def),
                         mapi ? po_EnvoyApi_Name(mapi) : "another schema");
  }
  bool any = false;
  size_t failures = 0;
  char errs[PO_STATUS_MAX];
  size_t at = 0;
  errs[0] = '\0';
  for (size_t i = 0; i < o->args.patch_count; i++) {
    const po_Patch *pt = &o->args.patches[i];
    if (p && !o->bare && !po_ResourceFilter_Matches(&pt->resource_filter, p)) continue;
    if (!o->compiled[i].target) continue; /* not compiled: the override is not valid */
    const po_CompiledPatch *cp = &o->compiled[i];
    if (cp->root != m->def) {
      /* The compiled form is for the patch's resource type; a payload claiming that type with
       * another message is the caller's error, reported like Consul reports a failed patch. */
      if (at < sizeof errs) { /* past the buffer the further errors are only counted */
        int n = snprintf(errs + at, sizeof errs - at, "%s* patch %zu compiled for %s cannot apply to %s",
                         failures ? "\n\t" : "", i, upb_MessageDef_FullName(cp->root), upb_MessageDef_FullName(m->def));
        at += n > 0 ? (size_t)n : 0;
      }
      failures++;
      continue;
    }
    if (!po_CompiledPatch_Apply(cp, m->msg, po_Arena_Upb(m->arena))) {
      return po_Status_Set(st, kPo_Status_NoMemory, "out of memory applying patch %zu", i);
    }
    any = true;
  }
  if (patched) *patched = any && failures == 0;
  if (failures == 0) return true;
  if (failures == 1) return po_Status_Set(st, kPo_Status_Patch, "1 error occurred:\n\t%s\n\n", errs);
  return po_Status_Set(st, kPo_Status_Patch, "%zu errors occurred:\n\t%s\n\n", failures, errs);
}

bool po_PatchStruct(po_Message *m, const po_Patch *patch, bool debug, po_Convention convention,
                    po_Status *st) {
  const po_Schema *schema = m->schema; /* the message's own snapshot */
  po_CompileOptions co = po_CompileOptions_Default();
  co.convention = convention;
  co.envoy_rules = false; /* PatchStruct is Consul's: rules belong to validation */
  co.deprecations = false;
  po_PatchOptions po = patch_options(&co, debug);
  po_Patch typed = *patch;
  if (convention == kPo_Convention_Wire && typed.value) typed.value = to_wire(m->arena, typed.value);
  po_CompiledPatch cp;
  const char *hint = NULL;
  if (!po_CompiledPatch_Compile(schema, m->def, &typed, &po, m->arena, &cp, &hint, NULL, 0, st)) {
    if (hint) {
      size_t len = strlen(st->message);
      snprintf(st->message + len, sizeof st->message - len, "%s%s",
               len && st->message[len - 1] == '\n' ? "" : "\n", hint);
    }
    return false;
  }
  if (!po_CompiledPatch_Apply(&cp, m->msg, po_Arena_Upb(m->arena))) {
    return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  }
  return true;
}
