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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"

/* Every error is kept: mapstructure counts and sorts them all, so a cap would change the text.
 * There is at most one per value of the arguments, whose size the API server bounds (1.5 MiB). */
typedef struct {
  po_Arena *a;
  const char **errs;
  int nerr, cap;
  bool oom;
  /* where Consul's decoder would panic (a one-element list holding null), first found */
  const char *panic_at;
} Dec;

static void err(Dec *d, const char *msg) {
  if (!msg) {
    d->oom = true;
    return;
  }
  if (d->nerr == d->cap) {
    int cap = d->cap ? d->cap * 2 : 16;
    const char **grown = po_Arena_Malloc(d->a, (size_t)cap * sizeof *grown);
    if (!grown) {
      d->oom = true;
      return;
    }
    if (d->nerr) memcpy(grown, d->errs, (size_t)d->nerr * sizeof *grown);
    d->errs = grown;
    d->cap = cap;
  }
  d->errs[d->nerr++] = msg;
}

/* A growing string in the arena: %v prints a value whole, however long (a value is part of
 * the arguments, which the API server bounds). */
typedef struct {
  po_Arena *a;
  char *p;
  size_t len, cap;
  bool oom;
} Buf;

static void put(Buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1) cap *= 2;
    char *grown = po_Arena_Malloc(b->a, cap);
    if (!grown) {
      b->oom = true;
      return;
    }
    if (b->len) memcpy(grown, b->p, b->len);
    b->p = grown;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void puts_(Buf *b, const char *s) { put(b, s, strlen(s)); }

static int cmp_str(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

/* Go's %v, as mapstructure prints values in its errors (fmt prints a map's keys sorted). */
static void go_v(Buf *b, const po_Value *v) {
  char num[64];
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: puts_(b, "<nil>"); return;
    case kPo_ValueKind_Bool: puts_(b, po_Value_Bool(v) ? "true" : "false"); return;
    case kPo_ValueKind_Int: snprintf(num, sizeof num, "%lld", (long long)po_Value_Int(v)); puts_(b, num); return;
    case kPo_ValueKind_Float: po_FormatGoFloatV(po_Value_Float(v), num, sizeof num); puts_(b, num); return;
    case kPo_ValueKind_String: {
      size_t len;
      const char *s = po_Value_String(v, &len);
      put(b, s, len);
      return;
    }
    case kPo_ValueKind_List:
      puts_(b, "[");
      for (size_t i = 0; i < po_Value_Size(v); i++) {
        if (i) puts_(b, " ");
        go_v(b, po_Value_At(v, i));
      }
      puts_(b, "]");
      return;
    case kPo_ValueKind_Map: {
      size_t n = po_Value_Size(v);
      const char **keys = po_Arena_Malloc(b->a, (n ? n : 1) * sizeof *keys);
      if (!keys) {
        b->oom = true;
        return;
      }
      for (size_t i = 0; i < n; i++) keys[i] = po_Value_KeyAt(v, i);
      qsort(keys, n, sizeof *keys, cmp_str);
      puts_(b, "map[");
      for (size_t i = 0; i < n; i++) {
        if (i) puts_(b, " ");
        puts_(b, keys[i]);
        puts_(b, ":");
        go_v(b, po_Value_Get(v, keys[i]));
      }
      puts_(b, "]");
      return;
    }
  }
}

static const char *go_v_str(Dec *d, const po_Value *v) {
  Buf b = {.a = d->a};
  go_v(&b, v);
  return b.oom ? NULL : b.p ? b.p : "";
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

/* strings.EqualFold of a key and an ASCII field name: Go compares runes by Unicode's simple case
 * folding (unicode.SimpleFold orbits). The only orbits holding an ASCII letter and a non-ASCII
 * rune are {K, k, U+212A KELVIN SIGN} and {S, s, U+017F LATIN SMALL LETTER LONG S}, so a key
 * matches when every rune is the name's letter in either case or that letter's non-ASCII
 * partner. (Full folding, as ICU's or glib's, would also fold U+0130 to "i\u0307": Go does not.) */
static bool equal_fold(const char *key, const char *name) {
  const unsigned char *k = (const unsigned char *)key;
  for (const char *n = name; *n; n++) {
    unsigned char c = (unsigned char)(*n | 0x20);
    if (*k < 0x80) {
      if ((*k | 0x20) != c || !((c >= 'a' && c <= 'z') || *k == (unsigned char)*n)) return false;
      k++;
    } else if (c == 'k' && k[0] == 0xE2 && k[1] == 0x84 && k[2] == 0xAA) {
      k += 3; /* U+212A */
    } else if (c == 's' && k[0] == 0xC5 && k[1] == 0xBF) {
      k += 2; /* U+017F */
    } else {
      return false;
    }
  }
  return *k == '\0';
}

/* The key of `m` for struct field `name`: exact, else the first key equal under Go's folding. */
static const po_Value *field(const po_Value *m, const char *name) {
  const po_Value *v = po_Value_Get(m, name);
  if (v) return v;
  for (size_t i = 0; i < po_Value_Size(m); i++) {
    if (equal_fold(po_Value_KeyAt(m, i), name)) return po_Value_At(m, i);
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

/* One pass of the hooks. Unwrapped to null, the next hook (HookTranslateKeys) is called with
 * reflect.ValueOf(nil), whose Type() panics: Consul's decoder never returns. Recorded, so the
 * arguments are refused saying so. */
static const po_Value *unwrap(Dec *d, const char *name, const po_Value *v) {
  if (!unwrappable(v)) return v;
  v = po_Value_At(v, 0);
  if (po_Value_Kind(v) == kPo_ValueKind_Null && !d->panic_at) {
    d->panic_at = po_Arena_Printf(d->a, "%s", name[0] ? name : "arguments");
    if (!d->panic_at) d->oom = true;
  }
  return v;
}

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
  v = unwrap(d, name, v);
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
      const char *val = go_v_str(d, v);
      err(d, val ? po_Arena_Printf(d->a, "'%s' expected type '%s', got unconvertible type '%s', value: '%s'", name,
                                   type, po_Value_GoType(v), val)
                 : NULL);
      return "";
    }
  }
}

static bool decode_bool(Dec *d, const char *name, const po_Value *v) {
  v = unwrap(d, name, v);
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
      const char *val = go_v_str(d, v);
      err(d, val ? po_Arena_Printf(d->a, "'%s' expected type 'bool', got unconvertible type '%s', value: '%s'", name,
                                   po_Value_GoType(v), val)
                 : NULL);
      return false;
    }
  }
}

/* A list target: the elements to decode, after the weak lifts. */
static size_t list_items(Dec *d, const po_Value *v, const po_Value ***items) {
  if (po_Value_Kind(v) == kPo_ValueKind_Null) return 0;
  if (po_Value_Kind(v) == kPo_ValueKind_List) {
    *items = (const po_Value **)(void *)((struct po_Value *)v)->u.agg.items;
    return po_Value_Size(v);
  }
  if (po_Value_Kind(v) == kPo_ValueKind_Map && po_Value_Size(v) == 0) return 0;
  po_Value **box = po_Arena_Malloc(d->a, sizeof *box);
  if (!box) {
    d->oom = true;
    return 0;
  }
  box[0] = (po_Value *)v;
  *items = (const po_Value **)box;
  return 1;
}

/* A struct target: null is left zero (false, no error); anything else must be a map. */
static bool expect_map(Dec *d, const char *name, const po_Value **v) {
  *v = unwrap(d, name, *v);
  if (po_Value_Kind(*v) == kPo_ValueKind_Null) return false;
  if (po_Value_Kind(*v) == kPo_ValueKind_Map) return true;
  err(d, po_Arena_Printf(d->a, "'%s' expected a map, got '%s'", name, go_kind(*v)));
  return false;
}

static void decode_service(Dec *d, const char *el, const po_Value *sv, po_ServiceName *sn) {
  sn->name = sn->namespace_ = sn->partition = "";
  if (po_Value_Kind(sv) == kPo_ValueKind_Null) return;
  /* Services is []*ServiceName: the hooks run for the pointer, then again (decodePtr) for the
   * struct, so an entry is unwrapped from two levels of one-element lists. */
  sv = unwrap(d, el, sv);
  if (!expect_map(d, el, &sv)) return;
  char f[340];
  snprintf(f, sizeof f, "%s.Name", el);
  sn->name = decode_string(d, f, "string", field(sv, "Name"));
  snprintf(f, sizeof f, "%s.Namespace", el);
  sn->namespace_ = decode_string(d, f, "string", field(sv, "Namespace"));
  snprintf(f, sizeof f, "%s.Partition", el);
  sn->partition = decode_string(d, f, "string", field(sv, "Partition"));
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
  size_t n = list_items(d, field(v, "Services"), &items);
  rf->services = po_Arena_Malloc(d->a, (n ? n : 1) * sizeof *rf->services);
  if (!rf->services) {
    d->oom = true;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    char el[300];
    snprintf(el, sizeof el, "%s.Services[%zu]", name, i);
    decode_service(d, el, items[i], &rf->services[rf->service_count++]);
  }
  /* isEmpty(): no services, no direction, no type. */
  rf->present = rf->service_count > 0 || rf->traffic_direction[0] || rf->resource_type[0];
}

static void decode_patch(Dec *d, size_t i, const po_Value *pv, po_Patch *p) {
  char name[64];
  snprintf(name, sizeof name, "Patches[%zu]", i);
  p->op = p->path = "";
  p->resource_filter.resource_type = p->resource_filter.traffic_direction = "";
  p->pos = po_Value_Pos(pv);
  if (po_Value_Kind(pv) == kPo_ValueKind_Null || !expect_map(d, name, &pv)) return;
  char f[96];
  snprintf(f, sizeof f, "%s.ResourceFilter", name);
  decode_filter(d, f, field(pv, "ResourceFilter"), &p->resource_filter);
  snprintf(f, sizeof f, "%s.Op", name);
  p->op = decode_string(d, f, "propertyoverride.Op", field(pv, "Op"));
  snprintf(f, sizeof f, "%s.Path", name);
  p->path = decode_string(d, f, "string", field(pv, "Path"));
  const po_Value *val = field(pv, "Value");
  if (po_Value_Kind(val) == kPo_ValueKind_Null) return;
  snprintf(f, sizeof f, "%s.Value", name);
  (void)unwrap(d, f, val); /* only to see Consul's panic on [null] */
  p->value = po_Value_DecodedAsAny(val, d->a);
}

/* mapstructure's Error(): every error, sorted, counted; behind Consul's prefix. The text is
 * whole in the arena; po_Status bounds it (with its visible "..." mark). */
static bool report(Dec *d, po_Status *st) {
  if (d->oom) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  if (d->panic_at) {
    return po_Status_Set(st, kPo_Status_Invalid,
                         "%s: a one-element list holding null ([null]) is not decoded by Consul: its decode hook "
                         "HookWeakDecodeFromSlice unwraps it to nil and the next hook panics on it, so Consul's "
                         "Constructor never returns; write the value itself, or null, or leave the key out",
                         d->panic_at);
  }
  qsort(d->errs, (size_t)d->nerr, sizeof d->errs[0], cmp_str);
  Buf b = {.a = d->a};
  char head[96];
  snprintf(head, sizeof head, "error decoding extension arguments: %d error(s) decoding:\n\n", d->nerr);
  puts_(&b, head);
  for (int i = 0; i < d->nerr; i++) {
    if (i) puts_(&b, "\n");
    puts_(&b, "* ");
    puts_(&b, d->errs[i]);
  }
  if (b.oom) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return po_Status_Set(st, kPo_Status_Invalid, "%s", b.p);
}

bool po_Arguments_Decode(const po_Value *args, po_Arena *a, po_Arguments *out, po_Status *st) {
  Dec d = {.a = a};
  memset(out, 0, sizeof *out);
  out->proxy_type = "";
  /* mapstructure names the root "" */
  if (po_Value_Kind(args) != kPo_ValueKind_Null && expect_map(&d, "", &args)) {
    /* propertyOverride embeds extensioncommon.BasicExtensionAdapter without `mapstructure:",squash"`:
     * to mapstructure it is a field of that name, an empty struct: a map (any keys) is taken and
     * ignored, anything else is "expected a map". */
    const po_Value *adapter = field(args, "BasicExtensionAdapter");
    if (po_Value_Kind(adapter) != kPo_ValueKind_Null) (void)expect_map(&d, "BasicExtensionAdapter", &adapter);
    out->debug = decode_bool(&d, "Debug", field(args, "Debug"));
    out->proxy_type = decode_string(&d, "ProxyType", "api.ServiceKind", field(args, "ProxyType"));
    const po_Value **items = NULL;
    size_t n = list_items(&d, field(args, "Patches"), &items);
    out->patches = po_Arena_Malloc(a, (n ? n : 1) * sizeof *out->patches);
    if (!out->patches) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
    for (size_t i = 0; i < n; i++) decode_patch(&d, i, items[i], &out->patches[out->patch_count++]);
  }
  if (d.nerr == 0 && !d.panic_at && !d.oom) return true;
  return report(&d, st);
}
