/* Conflicts between compiled patches, on resolved field chains (docs/crd.md, "Priority and conflicts"): two
 * patches conflict when their filters can match one resource and their chains meet. Chains are
 * compared field definition by field definition (pointer equality within the one schema), so
 * "/a/b" and "//a/b" are the same field and a JSON-name lookalike is not. */
#include <string.h>

#include "compiled.h"
#include "override_ir.h"

const char *po_ConflictKind_Name(po_ConflictKind k) {
  switch (k) {
    case kPo_ConflictKind_SameField: return "same-field";
    case kPo_ConflictKind_ParentReplaced: return "parent-replaced";
    case kPo_ConflictKind_OneofSibling: return "oneof-sibling";
  }
  return "unknown";
}

static bool same_service(const po_ServiceName *x, const po_ServiceName *y) {
  return !strcmp(x->name, y->name) && !strcmp(x->namespace_, y->namespace_) && !strcmp(x->partition, y->partition);
}

/* Whether some resource matches both filters (po_ResourceFilter_Matches): the same type and
 * direction, and a service both name unless either names none (then it matches every one). */
static bool filters_meet(const po_Override *a, size_t i, const po_Override *b, size_t j) {
  if (a->bare || b->bare) return true;
  if (a->types[i] != b->types[j] || a->dirs[i] != b->dirs[j]) return false;
  const po_ResourceFilter *fa = &a->args.patches[i].resource_filter, *fb = &b->args.patches[j].resource_filter;
  if (!fa->service_count || !fb->service_count) return true;
  /* Services per patch are few (a filter names the upstreams of one patch): the product is
   * bounded by the spec's own size limits. */
  for (size_t x = 0; x < fa->service_count; x++) {
    for (size_t y = 0; y < fb->service_count; y++) {
      if (same_service(&fa->services[x], &fb->services[y])) return true;
    }
  }
  return false;
}

static const upb_FieldDef *at(const po_CompiledPatch *cp, size_t k) {
  return k < cp->chain_len ? cp->chain[k]->def : cp->target;
}

/* The conflict of two resolved chains over the same root, if any. */
static bool chains_conflict(const po_CompiledPatch *x, const po_CompiledPatch *y, po_Conflict *c) {
  if (x->root != y->root) return false;
  size_t nx = x->chain_len + 1, ny = y->chain_len + 1;
  size_t n = nx < ny ? nx : ny;
  for (size_t k = 0; k < n; k++) {
    const upb_FieldDef *fx = at(x, k), *fy = at(y, k);
    if (fx == fy) continue;
    /* They part here, on one message: only setting two members of one oneof collides (adding
     * creates parents, which selects a member; remove never creates anything). */
    const upb_OneofDef *o = upb_FieldDef_RealContainingOneof(fx);
    if (!o || o != upb_FieldDef_RealContainingOneof(fy) || x->op != kPo_Op_Add || y->op != kPo_Op_Add) return false;
    c->kind = kPo_ConflictKind_OneofSibling;
    c->where = upb_OneofDef_Name(o);
    c->message = upb_MessageDef_FullName(upb_OneofDef_ContainingType(o));
    return true;
  }
  if (nx == ny) {
    c->kind = kPo_ConflictKind_SameField;
    c->where = upb_FieldDef_FullName(x->target);
    c->message = upb_MessageDef_FullName(upb_FieldDef_ContainingType(x->target));
    return true;
  }
  /* One chain is a prefix of the other: the shorter one's target is an ancestor, which its add
   * replaces whole (an object, or a wrapper's scalar) or its remove clears. */
  c->kind = kPo_ConflictKind_ParentReplaced;
  c->a_is_parent = nx < ny;
  const upb_FieldDef *parent = c->a_is_parent ? x->target : y->target;
  c->where = upb_FieldDef_FullName(parent);
  c->message = upb_MessageDef_FullName(upb_FieldDef_ContainingType(parent));
  return true;
}

size_t po_Override_Conflicts(const po_Override *a, const po_Override *b, po_ConflictFn fn, void *ctx) {
  size_t found = 0;
  for (size_t i = 0; i < a->args.patch_count; i++) {
    if (!a->compiled[i].target) continue;
    for (size_t j = a == b ? i + 1 : 0; j < b->args.patch_count; j++) {
      if (!b->compiled[j].target || !filters_meet(a, i, b, j)) continue;
      po_Conflict c = {.a_patch = i, .b_patch = j};
      if (!chains_conflict(&a->compiled[i], &b->compiled[j], &c)) continue;
      found++;
      if (fn) fn(&c, ctx);
    }
  }
  return found;
}
