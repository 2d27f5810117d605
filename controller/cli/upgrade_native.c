/* A mesh's own objects under an upgrade: each EnvoyFilter configPatch's value (the message its
 * applyTo names) and each EnvoyPatchPolicy JSON Patch (its path's fields in the message its type
 * names, then its value), their Envoy rules, and the mesh's facts about the resources they match:
 * names the new release generates otherwise, fields it moved into an extension. */
#include <string.h>

#include "po/meshes/istio.h"
#include "upgrade.h"

enum { kMaxSegments = 64 };

static const char *str(const po_Value *v, const char *key) {
  const po_Value *x = po_Value_Get(v, key);
  return po_Value_Kind(x) == kPo_ValueKind_String ? po_Value_String(x, NULL) : NULL;
}

static po_ResourceType resource_of(const char *message) {
  static const po_ResourceType kAll[] = {kPo_ResourceType_Cluster, kPo_ResourceType_ClusterLoadAssignment,
                                         kPo_ResourceType_Route, kPo_ResourceType_Listener};
  for (size_t i = 0; message && i < sizeof kAll / sizeof *kAll; i++) {
    if (!strcmp(po_ResourceType_Message(kAll[i]), message)) return kAll[i];
  }
  return kPo_ResourceType_Unknown;
}

/* A name written in `form`: its literal characters as they are, each <part> one or more
 * characters other than '/' and the literal that follows it. */
static bool matches_form(const char *name, const char *form) {
  while (*form) {
    if (*form != '<') {
      if (*name++ != *form++) return false;
      continue;
    }
    form = strchr(form, '>');
    if (!form) return false;
    char stop = *++form;
    size_t n = strcspn(name, stop ? (char[]){stop, '/', 0} : "/");
    if (!n) return false;
    name += n;
  }
  return !*name;
}

static const char *release(const po_UpgSide *s) { return s->release; }

static const char *noun(po_ResourceType rt) {
  switch (rt) {
    case kPo_ResourceType_Cluster: return "cluster";
    case kPo_ResourceType_ClusterLoadAssignment: return "cluster load assignment";
    case kPo_ResourceType_Route: return "route configuration";
    case kPo_ResourceType_Listener: return "listener";
    default: return "resource";
  }
}

static bool name_facts(po_UpgCtx *c, const po_MeshUpgradeFacts *u, po_ResourceType rt, const char *name, bool by_override,
                       const char *path) {
  for (size_t i = 0; i < u->name_count; i++) {
    const po_MeshNameChange *n = &u->names[i];
    bool on = (n->default_minor && c->to->minor >= n->default_minor) ||
              (n->flag_minor && c->to->name_scheme_flag && c->to->minor >= n->flag_minor);
    bool was = n->default_minor && c->from->minor >= n->default_minor;
    if (n->resource != rt || !on || was) continue;
    const char *why = po_Arena_Printf(c->a, "%s %s%s%s names the %s %s", c->to->mesh->name, release(c->to),
                                      c->to->name_scheme_flag ? " with " : "", c->to->name_scheme_flag ? n->flag : "",
                                      noun(rt), n->new_form);
    const char *keeps = n->note ? po_Arena_Printf(c->a, " (%s)", n->note) : "";
    if (by_override) {
      if (!po_Upg_Add(c, PO_UPG_NAME, false, path, "%s, where the %s the controller writes names it %s%s: its patch would match nothing",
                      why, c->to->mesh->object_kind, n->old_form, keeps)) return false;
    } else if (name && matches_form(name, n->old_form) && !matches_form(name, n->new_form)) {
      if (!po_Upg_Add(c, PO_UPG_NAME, false, path, "name '%s' is of the form %s; %s%s: the patch would match no resource; "
                      "write the name of the new form", name, n->old_form, why, keeps)) return false;
    }
  }
  return true;
}

static bool in_list(const char *const *list, const char *s) {
  for (; s && *list; list++) {
    if (!strcmp(*list, s)) return true;
  }
  return false;
}

static bool extension_facts(po_UpgCtx *c, const po_MeshUpgradeFacts *u, po_ResourceType rt, const char *field,
                            bool by_override, const char *path) {
  for (size_t i = 0; i < u->extension_count; i++) {
    const po_MeshGeneratedExtension *e = &u->extensions[i];
    if (e->resource != rt || c->to->minor < e->since_minor || c->from->minor >= e->since_minor || !in_list(e->fields, field)) continue;
    const char *head = po_Arena_Printf(c->a, "%s %s generates %s with %s %s (%s)", c->to->mesh->name, release(c->to), e->which,
                                       e->holder, e->holder_name, e->extension);
    const po_Explanation *ext = po_UpgCache_Message(c->cache, c->to->api, e->extension);
    const po_Explanation *res = po_UpgCache_Message(c->cache, c->to->api, po_ResourceType_Message(rt));
    const po_ExplainField *there = po_Upg_Field(ext, field), *f = po_Upg_Field(res, field), *h = po_Upg_Field(res, e->holder);
    bool rival = f && h && f->oneof && h->oneof && !strcmp(f->oneof, h->oneof);
    const char *instead =
        rival ? po_Arena_Printf(c->a, "%s is the other member of the oneof %s (%s's): setting it replaces the extension",
                                field, f->oneof, e->holder)
        : !there ? po_Arena_Printf(c->a, "%s has no %s: Envoy ignores the %s's", e->extension, field, noun(rt))
        : by_override ? po_Arena_Printf(c->a, "Envoy reads %s from the extension and ignores the %s's; a PropertyOverride path cannot "
                                              "enter %s.typed_config (an Any): an %s can patch /%s/typed_config/%s",
                                        field, noun(rt), e->holder, c->to->mesh->object_kind ? c->to->mesh->object_kind : "object of the mesh",
                                        e->holder, field)
                      : po_Arena_Printf(c->a, "Envoy reads %s from the extension and ignores the %s's: patch /%s/typed_config/%s",
                                        field, noun(rt), e->holder, field);
    if (!po_Upg_Add(c, PO_UPG_MOVED, false, path, "%s: %s", head, instead)) return false;
  }
  return true;
}

bool po_Upg_MeshFacts(po_UpgCtx *c, po_ResourceType resource, const char *name, const char *first_field, bool by_override,
                      const char *path) {
  const po_MeshUpgradeFacts *u = c->to->mesh->upgrade;
  if (!u || resource == kPo_ResourceType_Unknown) return true;
  return name_facts(c, u, resource, name, by_override, path) && extension_facts(c, u, resource, first_field, by_override, path);
}

/* ---- EnvoyFilter ---- */

static bool envoy_filter_patch(po_UpgCtx *c, const po_Value *cp) {
  const po_Value *patch = po_Value_Get(cp, "patch"), *value = po_Value_Get(patch, "value");
  const char *msg = po_Istio_PatchMessage(str(cp, "applyTo")), *op = str(patch, "operation");
  if (!msg || po_Value_Kind(value) != kPo_ValueKind_Map || (op && !strcmp(op, "REMOVE"))) return true;
  if (!po_Upg_WalkValue(c, msg, value, "value")) return false;
  po_ResourceType rt = resource_of(msg);
  const po_Value *match = po_Value_Get(cp, "match");
  const char *name = str(po_Value_Get(match, rt == kPo_ResourceType_Route ? "routeConfiguration"
                                             : rt == kPo_ResourceType_Cluster ? "cluster" : "listener"), "name");
  for (size_t i = 0; rt != kPo_ResourceType_Unknown && i < po_Value_Size(value); i++) {
    if (!po_Upg_MeshFacts(c, rt, name, po_Value_KeyAt(value, i), false, "value")) return false;
  }
  po_ValueScope scope = op && !strcmp(op, "MERGE") ? kPo_ValueScope_Merge
                        : op && !strcmp(op, "MERGE_AND_REPLACE_LIST") ? kPo_ValueScope_MergeReplaceLists
                                                                     : kPo_ValueScope_Whole;
  return po_Upg_CompareValueRules(c, msg, value, scope, "value");
}

/* ---- EnvoyPatchPolicy ---- */

/* The path's fields compared in turn; *last the last field (old snapshot), *at_item whether the
 * path ends in a list index or map key below it. false: stop (a finding, or out of memory). */
static bool pointer_fields(po_UpgCtx *c, const char *msg, const char *ptr, const po_ExplainField **last, bool *at_item,
                           const char **first) {
  po_PointerSeg segs[kMaxSegments];
  size_t n = po_Pointer_Segments(c->from->api, msg, ptr, segs, kMaxSegments);
  const char *path = "";
  *last = NULL;
  *at_item = false;
  for (size_t s = 0; s < n; s++) {
    if (segs[s].kind == kPo_PointerSeg_Unknown) return false; /* an Any, a Struct, no such field: not followed */
    if (segs[s].kind != kPo_PointerSeg_Field && segs[s].kind != kPo_PointerSeg_JsonName) {
      *at_item = true;
      path = po_Arena_Printf(c->a, "%s/*", path);
      continue;
    }
    *at_item = false;
    if (!*first) *first = segs[s].field;
    path = po_Arena_Printf(c->a, "%s/%s", path, segs[s].field);
    if (!path || !po_Upg_CompareField(c, segs[s].message, segs[s].field, path, last)) return false;
  }
  return true;
}

static bool patch_policy_patch(po_UpgCtx *c, const po_Value *jp) {
  const char *url = str(jp, "type"), *name = str(jp, "name");
  const po_Value *op = po_Value_Get(jp, "operation"), *value = po_Value_Get(op, "value");
  const char *ptr = str(op, "path"), *slash = url ? strrchr(url, '/') : NULL, *msg = slash ? slash + 1 : url;
  if (!msg || !ptr || !po_UpgCache_Message(c->cache, c->from->api, msg)) return !c->oom;
  const po_ExplainField *last = NULL;
  const char *first = NULL;
  bool at_item = false;
  bool go_on = pointer_fields(c, msg, ptr, &last, &at_item, &first);
  if (c->oom) return false;
  if (!po_Upg_MeshFacts(c, resource_of(msg), name, first, false, ptr)) return false;
  const char *o = str(op, "op");
  if (!go_on || !value || (o && strcmp(o, "add") != 0 && strcmp(o, "replace") != 0)) return true;
  if (!last) return po_Upg_WalkValue(c, msg, value, "value") && po_Upg_CompareValueRules(c, msg, value, kPo_ValueScope_Whole, "value");
  /* one item of a list or map: the item's message; else the field's value as a patch sets it */
  const char *sub = at_item ? po_Upg_FieldMessage(last, c->a) : NULL;
  bool walked = sub ? po_Upg_WalkMessage(c, sub, value, ptr) : po_Upg_WalkField(c, last, value, ptr);
  return walked && po_Upg_ComparePointerRules(c, msg, ptr, value);
}

bool po_Upg_CheckNative(po_UpgCtx *c) {
  const po_MeshOps *m = c->obj->native;
  const po_Value *list = po_Value_Get(po_Value_Get(c->obj->value, "spec"), m->native_patches);
  bool eg = m->mesh == kPo_Mesh_EnvoyGateway;
  for (size_t i = 0; po_Value_Kind(list) == kPo_ValueKind_List && i < po_Value_Size(list); i++) {
    const po_Value *p = po_Value_At(list, i);
    c->patch = (int)i;
    c->pos = po_Value_Pos(p).line ? po_Value_Pos(p) : c->obj->pos;
    if (!(eg ? patch_policy_patch(c, p) : envoy_filter_patch(c, p))) return false;
  }
  c->patch = -1;
  return true;
}
