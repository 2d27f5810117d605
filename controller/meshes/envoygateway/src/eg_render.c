/* Envoy Gateway's render (po_MeshOps.render, po/targets/render.h): one EnvoyPatchPolicy per
 * accepted PropertyOverride of a Gateway target (po_EG_EnvoyPatchPolicy), its resource names from
 * the target Gateway and the HTTPRoutes among the inputs. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/meshes/eg.h"
#include "po/targets/render.h"

#define GATEWAY_API "gateway.networking.k8s.io/"

/* The last Gateway of that namespace and name among the inputs, as with the other targets. */
static const po_Value *find_gateway(const po_RenderInputs *in, const char *ns, const char *name) {
  const po_Value *gv = NULL;
  for (size_t k = 0; k < in->count; k++) {
    const po_Value *v = in->objects[k];
    if (po_Render_IsKind(v, GATEWAY_API, "Gateway") && !strcmp(po_Render_Meta(v, "name"), name) &&
        !strcmp(po_Render_Meta(v, "namespace"), ns)) gv = v;
  }
  return gv;
}

/* The policy of one accepted override (appended to fs), or its refusal; false when out of memory. */
static bool render_one(const po_RenderInputs *in, size_t i, json_object **routes, size_t nroutes, po_Arena *a,
                       po_RenderObject *fs, size_t *nf) {
  po_CompiledOverride *c = &in->compiled[i];
  const po_Value *gv = find_gateway(in, c->ns, c->target_name);
  if (!gv) {
    in->refuse(in->ctx, i,
               po_Arena_Printf(a, "render needs the target Gateway '%s%s%s' among the inputs, and the HTTPRoutes "
                                  "attached to it: its listeners name the EnvoyPatchPolicy's listeners and route "
                                  "configurations, their rules its clusters (add them with -f, e.g. the output of "
                                  "kubectl get gateway %s -o yaml and kubectl get httproutes -A -o yaml)",
                               c->ns, *c->ns ? "/" : "", c->target_name, c->target_name));
    return true;
  }
  json_object *gw = po_Value_ToJsonC(gv);
  if (!gw) return false;
  po_EGTopology t = {.gateway = gw, .routes = (const json_object *const *)routes, .route_count = nroutes};
  const char *why = NULL;
  json_object *epp = po_EG_EnvoyPatchPolicy(c, &t, a, &why, NULL);
  json_object_put(gw);
  if (!epp && !why) return false;
  if (!epp) in->refuse(in->ctx, i, po_Arena_Printf(a, "Gateway '%s': %s", c->target_name, why));
  else fs[(*nf)++] = (po_RenderObject){c->ns, po_EG_PolicyName(c, a), epp};
  return true;
}

/* The EnvoyPatchPolicies of the accepted Envoy Gateway overrides, appended to objs in
 * namespace/name order. false when out of memory (nothing appended). */
bool po_EG_Render(const po_RenderInputs *in, po_Arena *a, json_object **objs, size_t *no);
bool po_EG_Render(const po_RenderInputs *in, po_Arena *a, json_object **objs, size_t *no) {
  bool any = false;
  for (size_t i = 0; i < in->count && !any; i++) {
    any = in->compiled[i].accepted && po_TargetKind_Mesh(in->compiled[i].target_kind) == kPo_Mesh_EnvoyGateway;
  }
  if (!any) return true;
  size_t cap = in->count ? in->count : 1, nroutes = 0, nf = 0;
  json_object **routes = po_Arena_Malloc(a, cap * sizeof *routes);
  po_RenderObject *fs = po_Arena_Malloc(a, cap * sizeof *fs);
  if (!routes || !fs) return false;
  bool ok = true;
  for (size_t i = 0; i < in->count && ok; i++) {
    if (po_Render_IsKind(in->objects[i], GATEWAY_API, "HTTPRoute")) ok = (routes[nroutes++] = po_Value_ToJsonC(in->objects[i])) != NULL;
  }
  for (size_t i = 0; i < in->count && ok; i++) {
    po_CompiledOverride *c = &in->compiled[i];
    if (!c->accepted || po_TargetKind_Mesh(c->target_kind) != kPo_Mesh_EnvoyGateway) continue;
    ok = render_one(in, i, routes, nroutes, a, fs, &nf);
  }
  for (size_t k = 0; k < nroutes; k++) json_object_put(routes[k]);
  if (!ok) {
    for (size_t k = 0; k < nf; k++) json_object_put(fs[k].obj);
    return false;
  }
  po_Render_AppendSorted(fs, nf, objs, no);
  return true;
}
