/* The fields an object sets, each compared under both snapshots (upgrade_schema.c): a compiled
 * patch's chain, field by field from its resource, then what its add value sets; a native value's
 * keys, down into messages, list items, map values and the message an Any's `@type` names (an
 * EnvoyFilter's typed_config is where most of its fields are). A walk stops below a field that
 * does not carry on into the new API: what is under it is refused with it. */
#include <string.h>

#include "upgrade.h"

static const char *type_of_any(const po_Value *x) {
  const po_Value *t = po_Value_Get(x, "@type");
  if (po_Value_Kind(t) != kPo_ValueKind_String) return NULL;
  const char *url = po_Value_String(t, NULL), *slash = strrchr(url, '/');
  return slash ? slash + 1 : url;
}

/* An Any's contents as the message its @type names: a type the old snapshot lacks is validate's
 * finding; one the new lacks is refused by Envoy with everything in it. */
static bool walk_any(po_UpgCtx *c, const po_Value *x, const char *path) {
  const char *t = type_of_any(x);
  if (!t || !po_UpgCache_Message(c->cache, c->from->api, t)) return !c->oom;
  if (!po_UpgCache_Message(c->cache, c->to->api, t)) {
    return po_Upg_Add(c, PO_UPG_REMOVED, false, path, "@type %s is not in %s (it is in %s): Envoy refuses the value", t,
                      po_EnvoyApi_Version(c->to->api), po_EnvoyApi_Version(c->from->api));
  }
  return po_Upg_WalkValue(c, t, x, path);
}

bool po_Upg_WalkMessage(po_UpgCtx *c, const char *type, const po_Value *x, const char *path) {
  if (po_Value_Kind(x) != kPo_ValueKind_Map) return true;
  if (!strcmp(type, "google.protobuf.Any")) return walk_any(c, x, path);
  /* Durations, wrappers, Struct: written as strings or free-form values, no Envoy field below */
  if (!strncmp(type, "google.protobuf.", 16)) return true;
  return po_Upg_WalkValue(c, type, x, path);
}

static bool walk_enum(po_UpgCtx *c, const po_ExplainField *f, const po_Value *x, const char *path) {
  if (po_Value_Kind(x) == kPo_ValueKind_String) return po_Upg_CompareEnum(c, f, po_Value_String(x, NULL), path);
  for (size_t i = 0; po_Value_Kind(x) == kPo_ValueKind_List && i < po_Value_Size(x); i++) {
    if (!walk_enum(c, f, po_Value_At(x, i), path)) return false;
  }
  return true;
}

bool po_Upg_WalkField(po_UpgCtx *c, const po_ExplainField *f, const po_Value *x, const char *path) {
  if (f->detail && !strncmp(f->detail, "enum ", 5)) return walk_enum(c, f, x, path);
  const char *sub = po_Upg_FieldMessage(f, c->a);
  if (!sub) return true;
  if (f->map) {
    for (size_t i = 0; po_Value_Kind(x) == kPo_ValueKind_Map && i < po_Value_Size(x); i++) {
      const char *p = po_Arena_Printf(c->a, "%s/%s", path, po_Value_KeyAt(x, i));
      if (!p || !po_Upg_WalkMessage(c, sub, po_Value_At(x, i), p)) return false;
    }
    return true;
  }
  if (po_Value_Kind(x) == kPo_ValueKind_List) {
    for (size_t i = 0; i < po_Value_Size(x); i++) {
      const char *p = po_Arena_Printf(c->a, "%s/%zu", path, i);
      if (!p || !po_Upg_WalkMessage(c, sub, po_Value_At(x, i), p)) return false;
    }
    return true;
  }
  return po_Upg_WalkMessage(c, sub, x, path);
}

bool po_Upg_WalkValue(po_UpgCtx *c, const char *message, const po_Value *v, const char *path) {
  for (size_t i = 0; po_Value_Kind(v) == kPo_ValueKind_Map && i < po_Value_Size(v); i++) {
    const char *key = po_Value_KeyAt(v, i);
    if (!strcmp(key, "@type")) continue;
    const char *p = po_Arena_Printf(c->a, "%s/%s", path, key);
    if (!p) return false;
    const po_ExplainField *f = NULL;
    if (!po_Upg_CompareField(c, message, key, p, &f)) {
      if (c->oom) return false;
      continue;
    }
    if (!po_Upg_WalkField(c, f, po_Value_At(v, i), p)) return false;
  }
  return !c->oom;
}

/* Patch i's chain from its resource, then what an add sets below its last field. */
static bool check_patch(po_UpgCtx *c, const po_Override *o, size_t i) {
  size_t n = po_Override_SegmentCount(o, i);
  po_ResourceType rt = po_Override_ResourceType(o, i);
  if (!n || rt == kPo_ResourceType_Unknown) return true; /* did not compile: validate says why */
  const char *msg = po_ResourceType_Message(rt), *path = "", *first = NULL;
  const po_ExplainField *f = NULL;
  for (size_t s = 0; s < n; s++) {
    po_PathSegment seg;
    if (!po_Override_Segment(o, i, s, &seg)) return true;
    if (!s) first = seg.name;
    path = po_Arena_Printf(c->a, "%s/%s", path, seg.name);
    if (!path) return false;
    if (!po_Upg_CompareField(c, msg, seg.name, path, &f)) return !c->oom;
    msg = seg.message_type;
  }
  if (!po_Upg_MeshFacts(c, rt, NULL, first, true, path)) return false;
  if (po_Override_Op(o, i) != kPo_Op_Add || !f) return true;
  po_Value *v = po_Override_SetJson(o, i, c->a);
  if (!v) return true;
  if (msg && po_Value_Kind(v) == kPo_ValueKind_Map) return po_Upg_WalkMessage(c, msg, v, path);
  return po_Upg_WalkField(c, f, v, path);
}

bool po_Upg_CheckOverride(po_UpgCtx *c, const po_Override *from, const po_Value *patches) {
  for (size_t i = 0; i < po_Override_PatchCount(from); i++) {
    const po_Value *p = po_Value_Kind(patches) == kPo_ValueKind_List ? po_Value_At(patches, i) : i ? NULL : patches;
    c->patch = (int)i;
    c->pos = p && po_Value_Pos(p).line ? po_Value_Pos(p) : c->obj->pos;
    if (!check_patch(c, from, i)) return false;
  }
  c->patch = -1;
  return true;
}
