/* Consul's render (po_MeshOps.render, po/targets/render.h): the same po_Consul_Plan the reconciler
 * runs, per target in kind/namespace/name order, from the Consul object given among the inputs
 * (the last of that kind, namespace and name, as a later `kubectl apply` would leave it) or from
 * nothing (the controller then creates it). */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "po/meshes/consul.h"
#include "po/targets/render.h"

typedef struct {
  po_TargetKind kind;
  const char *ns, *name;
} Target;

static int by_target(const void *x, const void *y) {
  const Target *a = x, *b = y;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  int c = strcmp(a->ns, b->ns);
  return c ? c : strcmp(a->name, b->name);
}

static bool consul_target(const po_CompiledOverride *c) {
  return c->accepted && po_TargetKind_Mesh(c->target_kind) == kPo_Mesh_Consul;
}

/* The target t planned with its entries (appended to objs); false when out of memory. */
static bool render_target(const po_RenderInputs *in, const Target *t, po_ConsulEntry *entries, json_object **objs,
                          size_t *no) {
  bool ok = true;
  size_t ne = 0;
  for (size_t i = 0; i < in->count; i++) {
    po_CompiledOverride *c = &in->compiled[i];
    if (!consul_target(c) || by_target(&(Target){c->target_kind, c->ns, c->target_name}, t)) continue;
    if (!c->generation) c->generation = 1;
    entries[ne] = (po_ConsulEntry){c->name, "", c->generation, po_Consul_Arguments(c, "", ""), c->priority, c->required, NULL, 0};
    if (!entries[ne++].arguments) ok = false; /* never a target rendered without one of its entries */
  }
  /* The last matching Consul object of the inputs is the current state, as a later
   * `kubectl apply` of the same name would leave it. */
  json_object *current = NULL;
  for (size_t i = 0; i < in->count; i++) {
    const po_Value *v = in->objects[i];
    if (!po_Render_IsKind(v, PO_CONSUL_GROUP "/", po_TargetKind_Name(t->kind)) || strcmp(po_Render_Meta(v, "name"), t->name) ||
        strcmp(po_Render_Meta(v, "namespace"), t->ns)) continue;
    json_object_put(current);
    /* NULL here is out of memory: taken for "absent", the target would be rendered anew,
     * without the fields and extensions of others it has. */
    if (!(current = po_Value_ToJsonC(v))) ok = false;
  }
  po_ConsulPlan plan = {.out_of_memory = true};
  if (ok) plan = po_Consul_Plan(current, t->kind, t->ns, t->name, NULL, 0, entries, ne);
  json_object_put(current);
  for (size_t e = 0; e < ne; e++) json_object_put(entries[e].arguments);
  /* A plan that ran out of memory has no object: leaving the target out would print a
   * rendering without it, which a pipeline would apply as if it were whole. */
  if (plan.out_of_memory) return false;
  if (plan.object) objs[(*no)++] = plan.object;
  return true;
}

/* Every Consul target of the accepted overrides, planned, appended to objs in kind/namespace/name
 * order. false when out of memory (what was appended is the caller's to free). */
bool po_Consul_Render(const po_RenderInputs *in, po_Arena *a, json_object **objs, size_t *no);
bool po_Consul_Render(const po_RenderInputs *in, po_Arena *a, json_object **objs, size_t *no) {
  size_t n = in->count, nt = 0;
  Target *targets = po_Arena_Malloc(a, (n ? n : 1) * sizeof *targets);
  po_ConsulEntry *entries = po_Arena_Malloc(a, (n ? n : 1) * sizeof *entries);
  if (!targets || !entries) return false;
  for (size_t i = 0; i < n; i++) {
    const po_CompiledOverride *c = &in->compiled[i];
    if (!consul_target(c)) continue;
    Target t = {c->target_kind, c->ns, c->target_name};
    bool seen = false;
    for (size_t k = 0; k < nt && !seen; k++) seen = !by_target(&t, &targets[k]);
    if (!seen) targets[nt++] = t;
  }
  qsort(targets, nt, sizeof *targets, by_target);
  for (size_t t = 0; t < nt; t++) {
    if (!render_target(in, &targets[t], entries, objs, no)) return false;
  }
  return true;
}
