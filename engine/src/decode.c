/* Decoding extension arguments the way Consul does: mapstructure with WeaklyTypedInput and
 * Consul's HookWeakDecodeFromSlice (docs/consul-semantics.md section 2.4).
 *   - struct fields match keys exactly, else case-insensitively (first such key in document
 *     order); unknown keys are ignored; a null is an absent key;
 *   - where a single value is expected, a one-element list is unwrapped when it is untyped
 *     (Go []interface {}, which is every list under the wire convention; under the typed one an
 *     empty, mixed, nested or map list): the hook recognises no typed slice such as []string.
 *     For Value, whose type is `any`, one-element lists inside that element's maps are
 *     unwrapped too, typed or not (lib/decode's walker looks only at the kind);
 *   - a field of a named Go type is named by it in a decode error, as mapstructure prints the
 *     target's reflect.Type: Op `propertyoverride.Op`, ResourceType
 *     `propertyoverride.ResourceType`, TrafficDirection `extensioncommon.TrafficDirection`,
 *     ProxyType `api.ServiceKind` (Path and the service names are plain `string`);
 *   - where a list is expected, an empty object is an empty list and any other value a list
 *     of one;
 *   - strings take bools ("1"/"0") and numbers (decimal); bools take numbers (!= 0) and
 *     strings as Go's strconv.ParseBool reads them.
 * Errors are collected, sorted and reported in mapstructure's format, behind Consul's
 * "error decoding extension arguments: ". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiled.h"

enum { kMaxErrors = 64 };

typedef struct {
  po_Arena *a;
  const char *errs[kMaxErrors];
  int nerr;
} Dec;

static void err(Dec *d, const char *msg) {
  if (d->nerr < kMaxErrors && msg) d->errs[d->nerr++] = msg;
}

/* Go's %v, as mapstructure prints values in its errors. */
static void go_v(const po_Value *v, char *buf, size_t size);

static size_t append(char *buf, size_t size, size_t at, const char *s) {
  size_t n = strlen(s);
  if (at < size) {
    size_t room = size - at - 1;
    memcpy(buf + at, s, n < room ? n : room);
    buf[at + (n < room ? n : room)] = '\0';
  }
  return at + n;
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

static void go_v(const po_Value *v, char *buf, size_t size) {
  char tmp[256];
  buf[0] = '\0';
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: snprintf(buf, size, "<nil>"); return;
    case kPo_ValueKind_Bool: snprintf(buf, size, "%s", po_Value_Bool(v) ? "true" : "false"); return;
    case kPo_ValueKind_Int: snprintf(buf, size, "%lld", (long long)po_Value_Int(v)); return;
    case kPo_ValueKind_Float: po_FormatGoFloat(po_Value_Float(v), buf, size); return;
    case kPo_ValueKind_String: snprintf(buf, size, "%s", po_Value_String(v, NULL)); return;
    case kPo_ValueKind_List: {
      size_t at = append(buf, size, 0, "[");
      for (size_t i = 0; i < po_Value_Size(v); i++) {
        if (i) at = append(buf, size, at, " ");
        go_v(po_Value_At(v, i), tmp, sizeof tmp);
        at = append(buf, size, at, tmp);
      }
      append(buf, size, at, "]");
      return;
    }
    case kPo_ValueKind_Map: {
      /* fmt prints maps with sorted keys */
      size_t n = po_Value_Size(v);
      const char **keys = malloc((n ? n : 1) * sizeof *keys);
      if (!keys) return;
      for (size_t i = 0; i < n; i++) keys[i] = po_Value_KeyAt(v, i);
      qsort(keys, n, sizeof *keys, cmp_str);
      size_t at = append(buf, size, 0, "map[");
      for (size_t i = 0; i < n; i++) {
        if (i) at = append(buf, size, at, " ");
        at = append(buf, size, at, keys[i]);
        at = append(buf, size, at, ":");
        go_v(po_Value_Get(v, keys[i]), tmp, sizeof tmp);
        at = append(buf, size, at, tmp);
      }
      append(buf, size, at, "]");
      free(keys);
      return;
    }
  }
}

/* mapstructure's Kind names in "expected a map, got '%s'". */
static const char *go_kind(const po_Value *v) {
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: return "invalid";
    case kPo_ValueKind_Bool: return "bool";
    case kPo_ValueKind_Int: return "int";
    case kPo_ValueKind_Float: return "float64";
    case kPo_ValueKind_String: return "string";
    case kPo_ValueKind_Map: return "map";
    case kPo_ValueKind_List: return "slice";
  }
  return "invalid";
}

/* The key of `m` for struct field `name`: exact, else the first case-insensitive match. */
static const po_Value *field(const po_Value *m, const char *name) {
  const po_Value *v = po_Value_Get(m, name);
  if (v) return v;
  for (size_t i = 0; i < po_Value_Size(m); i++) {
    if (strcasecmp(po_Value_KeyAt(m, i), name) == 0) return po_Value_At(m, i);
  }
  return NULL;
}

/* What HookWeakDecodeFromSlice unwraps for a non-slice target: a one-element []interface {}
 * (or []map[string]interface {}, which our typing also names []interface {}), never a typed
 * slice. */
static bool unwrappable(const po_Value *v) {
  return po_Value_Kind(v) == kPo_ValueKind_List && po_Value_Size(v) == 1 &&
         strcmp(po_Value_GoType(v), "[]interface {}") == 0;
}

static const po_Value *unwrap(const po_Value *v) { return unwrappable(v) ? po_Value_At(v, 0) : v; }

/* unSlice, for a Value (lib/decode's walker): every map entry whose value is a one-element list
 * becomes that element, in every map reachable through maps and lists. One level only: the
 * element itself is walked but, if it is a list again, not unwrapped (`{"a": [[1]]}` is
 * `{"a": [1]}`), and a list is never unwrapped where it is not a map entry. */
static const po_Value *unslice(po_Arena *a, const po_Value *v) {
  po_ValueKind k = po_Value_Kind(v);
  if (k != kPo_ValueKind_Map && k != kPo_ValueKind_List) return v;
  po_Value *out = k == kPo_ValueKind_Map ? po_Value_NewMap(a) : po_Value_NewList(a);
  if (!out) return v;
  *out = *v; /* kind, typing and position; the items are replaced below */
  out->u.agg.items = po_Arena_Malloc(a, (v->u.agg.len ? v->u.agg.len : 1) * sizeof *out->u.agg.items);
  if (!out->u.agg.items) return v;
  out->u.agg.cap = v->u.agg.len;
  for (size_t i = 0; i < po_Value_Size(v); i++) {
    const po_Value *e = po_Value_At(v, i);
    if (k == kPo_ValueKind_Map && po_Value_Kind(e) == kPo_ValueKind_List && po_Value_Size(e) == 1) e = po_Value_At(e, 0);
    out->u.agg.items[i] = (po_Value *)unslice(a, e);
  }
  return out;
}

const po_Value *po_Value_DecodedAsAny(const po_Value *v, po_Arena *a) {
  /* HookWeakDecodeFromSlice into `any`: a one-element untyped list is its element, unSliced. */
  v = unwrappable(v) ? unslice(a, po_Value_At(v, 0)) : v;
  return po_Value_Kind(v) == kPo_ValueKind_Null ? NULL : v; /* [null] is nil to Go too */
}

/* `type` is the Go type of the target field, as mapstructure names it in its error. */
static const char *decode_string(Dec *d, const char *name, const char *type, const po_Value *v) {
  v = unwrap(v);
  char buf[128];
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: return "";
    case kPo_ValueKind_String: {
      size_t len;
      const char *s = po_Value_String(v, &len);
      return po_Arena_Strndup(d->a, s, len);
    }
    case kPo_ValueKind_Bool: return po_Value_Bool(v) ? "1" : "0";
    case kPo_ValueKind_Int:
      snprintf(buf, sizeof buf, "%lld", (long long)po_Value_Int(v));
      return po_Arena_Strndup(d->a, buf, strlen(buf));
    case kPo_ValueKind_Float: {
      /* strconv.FormatFloat(f, 'f', -1, 64): shortest digits, never an exponent */
      double f = po_Value_Float(v);
      for (int prec = 0; prec <= 40; prec++) {
        snprintf(buf, sizeof buf, "%.*f", prec, f);
        if (strtod(buf, NULL) == f) break;
      }
      return po_Arena_Strndup(d->a, buf, strlen(buf));
    }
    default: {
      char val[256];
      go_v(v, val, sizeof val);
      err(d, po_Arena_Printf(d->a, "'%s' expected type '%s', got unconvertible type '%s', value: '%s'",
                             name, type, po_Value_GoType(v), val));
      return "";
    }
  }
}

static bool decode_bool(Dec *d, const char *name, const po_Value *v) {
  v = unwrap(v);
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: return false;
    case kPo_ValueKind_Bool: return po_Value_Bool(v);
    case kPo_ValueKind_Int: return po_Value_Int(v) != 0;
    case kPo_ValueKind_Float: return po_Value_Float(v) != 0;
    case kPo_ValueKind_String: {
      const char *s = po_Value_String(v, NULL);
      static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
      static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False", ""};
      for (size_t i = 0; i < 6; i++) if (!strcmp(s, t[i])) return true;
      for (size_t i = 0; i < 7; i++) if (!strcmp(s, f[i])) return false;
      err(d, po_Arena_Printf(d->a, "cannot parse '%s' as bool: strconv.ParseBool: parsing \"%s\": invalid syntax", name, s));
      return false;
    }
    default: {
      char val[256];
      go_v(v, val, sizeof val);
      err(d, po_Arena_Printf(d->a, "'%s' expected type 'bool', got unconvertible type '%s', value: '%s'",
                             name, po_Value_GoType(v), val));
      return false;
    }
  }
}

/* A list target: the elements to decode, after the weak lifts. */
static size_t list_items(Dec *d, const char *name, const po_Value *v, const po_Value ***items) {
  static const po_Value *one[1];
  (void)d;
  (void)name;
  if (po_Value_Kind(v) == kPo_ValueKind_Null) return 0;
  if (po_Value_Kind(v) == kPo_ValueKind_List) {
    *items = (const po_Value **)(void *)((struct po_Value *)v)->u.agg.items;
    return po_Value_Size(v);
  }
  if (po_Value_Kind(v) == kPo_ValueKind_Map && po_Value_Size(v) == 0) return 0;
  po_Value **box = po_Arena_Malloc(d->a, sizeof *box);
  if (!box) {
    *items = one;
    return 0;
  }
  box[0] = (po_Value *)v;
  *items = (const po_Value **)box;
  return 1;
}

static bool expect_map(Dec *d, const char *name, const po_Value **v) {
  *v = unwrap(*v);
  if (po_Value_Kind(*v) == kPo_ValueKind_Map) return true;
  err(d, po_Arena_Printf(d->a, "'%s' expected a map, got '%s'", name, go_kind(*v)));
  return false;
}

static void decode_filter(Dec *d, const char *name, const po_Value *v, po_ResourceFilter *rf) {
  memset(rf, 0, sizeof *rf);
  rf->resource_type = rf->traffic_direction = "";
  if (po_Value_Kind(v) == kPo_ValueKind_Null || !expect_map(d, name, &v)) return;
  char sub[256];
  snprintf(sub, sizeof sub, "%s.ResourceType", name);
  rf->resource_type = decode_string(d, sub, "propertyoverride.ResourceType", field(v, "ResourceType"));
  snprintf(sub, sizeof sub, "%s.TrafficDirection", name);
  rf->traffic_direction = decode_string(d, sub, "extensioncommon.TrafficDirection", field(v, "TrafficDirection"));
  const po_Value **items = NULL;
  snprintf(sub, sizeof sub, "%s.Services", name);
  size_t n = list_items(d, sub, field(v, "Services"), &items);
  rf->services = po_Arena_Malloc(d->a, (n ? n : 1) * sizeof *rf->services);
  if (!rf->services) return;
  for (size_t i = 0; i < n; i++) {
    char el[300];
    snprintf(el, sizeof el, "%s.Services[%zu]", name, i);
    po_ServiceName *sn = &rf->services[rf->service_count++];
    sn->name = sn->namespace_ = sn->partition = "";
    const po_Value *sv = items[i];
    if (po_Value_Kind(sv) == kPo_ValueKind_Null || !expect_map(d, el, &sv)) continue;
    char f[340];
    snprintf(f, sizeof f, "%s.Name", el);
    sn->name = decode_string(d, f, "string", field(sv, "Name"));
    snprintf(f, sizeof f, "%s.Namespace", el);
    sn->namespace_ = decode_string(d, f, "string", field(sv, "Namespace"));
    snprintf(f, sizeof f, "%s.Partition", el);
    sn->partition = decode_string(d, f, "string", field(sv, "Partition"));
  }
  /* isEmpty(): no services, no direction, no type. */
  rf->present = rf->service_count > 0 || rf->traffic_direction[0] || rf->resource_type[0];
}

bool po_Arguments_Decode(const po_Value *args, po_Arena *a, po_Arguments *out, po_Status *st) {
  Dec d = {.a = a};
  memset(out, 0, sizeof *out);
  out->proxy_type = "";
  if (po_Value_Kind(args) != kPo_ValueKind_Null && !expect_map(&d, "", &args)) {
    /* mapstructure names the root "" */
  } else if (po_Value_Kind(args) == kPo_ValueKind_Map) {
    out->debug = decode_bool(&d, "Debug", field(args, "Debug"));
    out->proxy_type = decode_string(&d, "ProxyType", "api.ServiceKind", field(args, "ProxyType"));
    const po_Value **items = NULL;
    size_t n = list_items(&d, "Patches", field(args, "Patches"), &items);
    out->patches = po_Arena_Malloc(a, (n ? n : 1) * sizeof *out->patches);
    if (!out->patches) return po_Status_Set(st, kPo_ErrNoMemory, "out of memory");
    for (size_t i = 0; i < n; i++) {
      char name[64];
      snprintf(name, sizeof name, "Patches[%zu]", i);
      po_Patch *p = &out->patches[out->patch_count++];
      p->op = p->path = "";
      p->resource_filter.resource_type = p->resource_filter.traffic_direction = "";
      const po_Value *pv = items[i];
      p->pos = po_Value_Pos(pv);
      if (po_Value_Kind(pv) == kPo_ValueKind_Null || !expect_map(&d, name, &pv)) continue;
      char f[96];
      snprintf(f, sizeof f, "%s.ResourceFilter", name);
      decode_filter(&d, f, field(pv, "ResourceFilter"), &p->resource_filter);
      snprintf(f, sizeof f, "%s.Op", name);
      p->op = decode_string(&d, f, "propertyoverride.Op", field(pv, "Op"));
      snprintf(f, sizeof f, "%s.Path", name);
      p->path = decode_string(&d, f, "string", field(pv, "Path"));
      const po_Value *val = field(pv, "Value");
      if (po_Value_Kind(val) != kPo_ValueKind_Null) p->value = po_Value_DecodedAsAny(val, a);
    }
  }
  if (d.nerr == 0) return true;
  qsort(d.errs, (size_t)d.nerr, sizeof d.errs[0], cmp_str);
  char buf[PO_STATUS_MAX];
  size_t at = (size_t)snprintf(buf, sizeof buf, "error decoding extension arguments: %d error(s) decoding:\n\n", d.nerr);
  for (int i = 0; i < d.nerr; i++) {
    if (i) at = append(buf, sizeof buf, at, "\n");
    at = append(buf, sizeof buf, at, "* ");
    at = append(buf, sizeof buf, at, d.errs[i]);
  }
  return po_Status_Set(st, kPo_ErrInvalid, "%s", buf);
}
