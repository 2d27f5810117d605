/* Envoy Gateway's row of the mesh table (po/meshes/list.h): one EnvoyPatchPolicy per
 * PropertyOverride. */
#include "po/meshes/eg.h"
#include "po/targets/mesh_ops.h"

/* eg_render.c */
bool po_EG_Render(const po_RenderInputs *in, po_Arena *a, struct json_object **objs, size_t *no);

/* eg_upgrade.c */
extern const po_MeshUpgradeFacts po_EG_Upgrade;

extern const po_MeshOps po_EG_Mesh;
const po_MeshOps po_EG_Mesh = {
    .mesh = kPo_Mesh_EnvoyGateway,
    .name = "Envoy Gateway",
    .releases = &po_EG_Releases,
    .object_kind = "EnvoyPatchPolicy",
    .object_name = po_EG_PolicyName,
    .rules = {.check = po_EG_Check},
    .native_group = "gateway.envoyproxy.io",
    .native_kind = "EnvoyPatchPolicy",
    .native_patches = "jsonPatches",
    .check_native = po_EG_CheckEnvoyPatchPolicy,
    .render = po_EG_Render,
    .upgrade = &po_EG_Upgrade,
};
