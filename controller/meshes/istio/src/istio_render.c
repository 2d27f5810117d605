/* Istio's render (po_MeshOps.render, po/targets/render.h): one EnvoyFilter per accepted
 * PropertyOverride of an Istio target (po_Istio_EnvoyFilter), its workloadSelector from the target
 * Service's spec.selector, which must be among the inputs (a Service target says which pods, and
 * only the Service knows); a Mesh target's in Istio's root namespace, without a selector. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/meshes/istio.h"
#include "po/targets/render.h"

/* The Service a PropertyOverride of namespace `ns` targets, the last of the inputs as with
 * Consul targets; NULL when none. */
static const po_Value *find_service(const po_RenderInputs *in, const char *ns, const char *name) {
  const po_Value *found = NULL;
  for (size_t i = 0; i < in->count; i++) {
    const po_Value *v = in->objects[i];
    if (!po_Render_IsKind(v, "v1", "Service")) continue;
    if (!strcmp(po_Render_Meta(v, "name"), name) && !strcmp(po_Render_Meta(v, "namespace"), ns)) found = v;
  }
  return found;
}

/* The EnvoyFilters of the accepted Istio overrides, appended to objs in namespace/name order.
 * false when out of memory (nothing appended). */
bool po_Istio_Render(const po_RenderInputs *in, po_Arena *a, json_object **objs, size_t *no);
bool po_Istio_Render(const po_RenderInputs *in, po_Arena *a, json_object **objs, size_t *no) {
  po_RenderObject *fs = po_Arena_Malloc(a, (in->count ? in->count : 1) * sizeof *fs);
  if (!fs) return false;
  size_t nf = 0;
  bool ok = true;
  for (size_t i = 0; i < in->count && ok; i++) {
    po_CompiledOverride *c = &in->compiled[i];
    if (!c->accepted || po_TargetKind_Mesh(c->target_kind) != kPo_Mesh_Istio) continue;
    json_object *sel = NULL;
    if (c->target_kind == kPo_TargetKind_Service) {
      const po_Value *svc = find_service(in, c->ns, c->target_name);
      if (!svc) {
        in->refuse(in->ctx, i,
                   po_Arena_Printf(a, "render needs the target Service '%s%s%s' among the inputs: its spec.selector "
                                      "becomes the EnvoyFilter's workloadSelector (add it with -f, e.g. the output "
                                      "of kubectl get service %s -o yaml)",
                                   c->ns, *c->ns ? "/" : "", c->target_name, c->target_name));
        continue;
      }
      const po_Value *sv = po_Value_Get(po_Value_Get(svc, "spec"), "selector");
      if (sv && !(sel = po_Value_ToJsonC(sv))) {
        ok = false;
        break;
      }
    }
    const char *why = NULL;
    json_object *ef = po_Istio_EnvoyFilter(c, sel, a, &why);
    json_object_put(sel);
    if (!ef && !why) ok = false;
    else if (!ef) in->refuse(in->ctx, i, po_Arena_Printf(a, "Service '%s': %s", c->target_name, why));
    else fs[nf++] = (po_RenderObject){po_Istio_FilterNamespace(c), po_Istio_FilterName(c, a), ef};
  }
  /* Out of memory: nothing of this mesh is handed over (the caller prints nothing then). */
  if (!ok) {
    for (size_t k = 0; k < nf; k++) json_object_put(fs[k].obj);
    return false;
  }
  po_Render_AppendSorted(fs, nf, objs, no);
  return true;
}
