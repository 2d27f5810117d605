/* The PropertyOverride custom resource's spec <-> po_Arguments, and po_Arguments -> the
 * `arguments` object written into Consul's envoyExtensions. The CRD is structural, so unlike
 * Consul's lenient decoder every key must be known and every type exact; each problem is a
 * diagnostic naming its place in the spec ("spec.patches[2].resourceFilter.services[0].name"). */
#include <string.h>

#include "internal.h"

typedef struct {
  po_Arena *a;
  po_Diagnostics *d;
  bool ok;
} Spec;

static void bad(Spec *s, int patch, const char *where, const char *what) {
  s->ok = false;
  po_Diagnostics_Add(s->d, kPo_Severity_Error, kPo_DiagKind_Decode, patch, NULL,
                     po_Arena_Printf(s->a, "%s: %s", where, what));
}

static bool known(Spec *s, int patch, const char *where, const po_Value *m, const char *const *keys) {
  bool all = true;
  for (size_t i = 0; i < po_Value_Size(m); i++) {
    const char *k = po_Value_KeyAt(m, i);
    bool found = false;
    for (const char *const *q = keys; *q; q++) found |= strcmp(*q, k) == 0;
    if (!found) {
      char list[256] = "";
      for (const char *const *q = keys; *q; q++) {
        if (q != keys) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, *q, sizeof list - strlen(list) - 1);
      }
      bad(s, patch, po_Arena_Printf(s->a, "%s.%s", where, k), po_Arena_Printf(s->a, "unknown field (known: %s)", list));
      all = false;
    }
  }
  return all;
}

static const char *str(Spec *s, int patch, const char *where, const po_Value *m, const char *key) {
  const po_Value *v = po_Value_Get(m, key);
  if (!v || po_Value_Kind(v) == kPo_ValueKind_Null) return "";
  if (po_Value_Kind(v) != kPo_ValueKind_String) {
    bad(s, patch, po_Arena_Printf(s->a, "%s.%s", where, key),
        po_Arena_Printf(s->a, "must be a string, not %s", po_Value_GoType(v)));
    return "";
  }
  return po_Value_String(v, NULL);
}

static bool is_map(Spec *s, int patch, const char *where, const po_Value *v) {
  if (po_Value_Kind(v) == kPo_ValueKind_Map) return true;
  bad(s, patch, where, po_Arena_Printf(s->a, "must be an object, not %s", po_Value_GoType(v)));
  return false;
}

/* targetRef, priority and routeNamespaces are the resource's own, decoded by controller/targets; `required`
 * belongs to the envoyExtensions entry, not to the arguments: the target adapter reads it. Known
 * here so the strict decode accepts them (and checks required's type). */
static const char *const kSpecKeys[] = {"targetRef", "proxyType", "debug", "required", "patches", "priority",
                                        "routeNamespaces", NULL};
static const char *const kPatchKeys[] = {"resourceFilter", "op", "path", "value", NULL};
static const char *const kFilterKeys[] = {"resourceType", "trafficDirection", "services", NULL};
static const char *const kServiceKeys[] = {"name", "namespace", "partition", NULL};

static void filter(Spec *s, int i, const char *where, const po_Value *v, po_ResourceFilter *rf) {
  rf->resource_type = rf->traffic_direction = "";
  if (!v || po_Value_Kind(v) == kPo_ValueKind_Null) return;
  if (!is_map(s, i, where, v)) return;
  known(s, i, where, v, kFilterKeys);
  rf->resource_type = str(s, i, where, v, "resourceType");
  rf->traffic_direction = str(s, i, where, v, "trafficDirection");
  const po_Value *svc = po_Value_Get(v, "services");
  if (svc && po_Value_Kind(svc) != kPo_ValueKind_Null) {
    const char *w = po_Arena_Printf(s->a, "%s.services", where);
    if (po_Value_Kind(svc) != kPo_ValueKind_List) {
      bad(s, i, w, po_Arena_Printf(s->a, "must be a list, not %s", po_Value_GoType(svc)));
    } else {
      size_t n = po_Value_Size(svc);
      rf->services = po_Arena_Malloc(s->a, (n ? n : 1) * sizeof *rf->services);
      for (size_t k = 0; rf->services && k < n; k++) {
        const po_Value *e = po_Value_At(svc, k);
        const char *we = po_Arena_Printf(s->a, "%s[%zu]", w, k);
        po_ServiceName *sn = &rf->services[rf->service_count++];
        sn->name = sn->namespace_ = sn->partition = "";
        if (!is_map(s, i, we, e)) continue;
        known(s, i, we, e, kServiceKeys);
        sn->name = str(s, i, we, e, "name");
        sn->namespace_ = str(s, i, we, e, "namespace");
        sn->partition = str(s, i, we, e, "partition");
      }
    }
  }
  rf->present = rf->service_count > 0 || rf->traffic_direction[0] || rf->resource_type[0];
}

bool po_Arguments_DecodeSpec(const po_Value *spec, po_Arena *a, po_Arguments *out, po_Diagnostics *d) {
  Spec s = {.a = a, .d = d, .ok = true};
  memset(out, 0, sizeof *out);
  out->proxy_type = "";
  if (!is_map(&s, -1, "spec", spec)) return false;
  known(&s, -1, "spec", spec, kSpecKeys);
  out->proxy_type = str(&s, -1, "spec", spec, "proxyType");
  const po_Value *dbg = po_Value_Get(spec, "debug");
  if (dbg && po_Value_Kind(dbg) != kPo_ValueKind_Null) {
    if (po_Value_Kind(dbg) != kPo_ValueKind_Bool) bad(&s, -1, "spec.debug", "must be true or false");
    out->debug = po_Value_Bool(dbg);
  }
  const po_Value *req = po_Value_Get(spec, "required");
  if (req && po_Value_Kind(req) != kPo_ValueKind_Null && po_Value_Kind(req) != kPo_ValueKind_Bool) {
    bad(&s, -1, "spec.required", "must be true or false");
  }
  const po_Value *patches = po_Value_Get(spec, "patches");
  if (patches && po_Value_Kind(patches) != kPo_ValueKind_Null && po_Value_Kind(patches) != kPo_ValueKind_List) {
    bad(&s, -1, "spec.patches", po_Arena_Printf(a, "must be a list, not %s", po_Value_GoType(patches)));
    return false;
  }
  size_t n = po_Value_Size(patches);
  out->patches = po_Arena_Malloc(a, (n ? n : 1) * sizeof *out->patches);
  if (!out->patches) return false;
  for (size_t i = 0; i < n; i++) {
    const po_Value *pv = po_Value_At(patches, i);
    const char *where = po_Arena_Printf(a, "spec.patches[%zu]", i);
    po_Patch *p = &out->patches[out->patch_count++];
    p->op = p->path = "";
    p->resource_filter.resource_type = p->resource_filter.traffic_direction = "";
    p->pos = po_Value_Pos(pv);
    if (!is_map(&s, (int)i, where, pv)) continue;
    known(&s, (int)i, where, pv, kPatchKeys);
    filter(&s, (int)i, po_Arena_Printf(a, "%s.resourceFilter", where), po_Value_Get(pv, "resourceFilter"),
           &p->resource_filter);
    p->op = str(&s, (int)i, where, pv, "op");
    p->path = str(&s, (int)i, where, pv, "path");
    const po_Value *val = po_Value_Get(pv, "value");
    if (po_Value_Kind(val) != kPo_ValueKind_Null) p->value = val;
  }
  return s.ok;
}

/* A string of the decoded tree copied into a ("" stays the static ""). */
static bool adopt_str(const char **s, po_Arena *a) {
  if (!*s || !**s) return true;
  return (*s = po_Arena_Strndup(a, *s, strlen(*s))) != NULL;
}

bool po_Arguments_Adopt(po_Arguments *args, po_Arena *a) {
  if (!adopt_str(&args->proxy_type, a)) return false;
  for (size_t i = 0; i < args->patch_count; i++) {
    po_Patch *p = &args->patches[i];
    po_ResourceFilter *rf = &p->resource_filter;
    if (!adopt_str(&p->op, a) || !adopt_str(&p->path, a) || !adopt_str(&rf->resource_type, a) ||
        !adopt_str(&rf->traffic_direction, a)) {
      return false;
    }
    for (size_t k = 0; k < rf->service_count; k++) {
      po_ServiceName *sn = &rf->services[k];
      if (!adopt_str(&sn->name, a) || !adopt_str(&sn->namespace_, a) || !adopt_str(&sn->partition, a)) return false;
    }
    if (p->value && !(p->value = po_Value_Copy(p->value, a))) return false;
  }
  return true;
}

static po_Value *s_(po_Arena *a, const char *v) { return po_Value_NewString(a, v, strlen(v)); }

/* A put whose value could not be made, or that failed, clears *ok: arguments with a field left
 * out must never pass for whole (they are what is written to Consul). */
static void put(po_Arena *a, po_Value *map, const char *key, po_Value *v, bool *ok) {
  if (!v || !po_Value_MapPut(a, map, key, v)) *ok = false;
}

static po_Value *services_to_consul(const po_ResourceFilter *rf, po_Arena *a, bool *ok) {
  po_Value *svcs = po_Value_NewList(a);
  for (size_t k = 0; svcs && k < rf->service_count; k++) {
    const po_ServiceName *sn = &rf->services[k];
    po_Value *m = po_Value_NewMap(a);
    if (!m) return NULL;
    put(a, m, "Name", s_(a, sn->name), ok);
    if (sn->namespace_ && *sn->namespace_) put(a, m, "Namespace", s_(a, sn->namespace_), ok);
    if (sn->partition && *sn->partition) put(a, m, "Partition", s_(a, sn->partition), ok);
    if (!po_Value_ListAppend(a, svcs, m)) *ok = false;
  }
  return svcs;
}

po_Value *po_Arguments_ToConsul(const po_Arguments *args, po_Arena *a) {
  po_Value *root = po_Value_NewMap(a);
  po_Value *patches = po_Value_NewList(a);
  bool ok = root && patches;
  for (size_t i = 0; ok && i < args->patch_count; i++) {
    const po_Patch *p = &args->patches[i];
    po_Value *pv = po_Value_NewMap(a), *rf = po_Value_NewMap(a);
    if (!pv || !rf) return NULL;
    put(a, rf, "ResourceType", s_(a, p->resource_filter.resource_type), &ok);
    put(a, rf, "TrafficDirection", s_(a, p->resource_filter.traffic_direction), &ok);
    if (p->resource_filter.service_count) put(a, rf, "Services", services_to_consul(&p->resource_filter, a, &ok), &ok);
    put(a, pv, "ResourceFilter", rf, &ok);
    put(a, pv, "Op", s_(a, p->op), &ok);
    put(a, pv, "Path", s_(a, p->path), &ok);
    if (p->value) put(a, pv, "Value", (po_Value *)p->value, &ok);
    if (!po_Value_ListAppend(a, patches, pv)) ok = false;
  }
  if (ok) put(a, root, "Patches", patches, &ok);
  if (ok && args->debug) put(a, root, "Debug", po_Value_NewBool(a, true), &ok);
  if (ok && args->proxy_type && *args->proxy_type) put(a, root, "ProxyType", s_(a, args->proxy_type), &ok);
  return ok ? root : NULL;
}
