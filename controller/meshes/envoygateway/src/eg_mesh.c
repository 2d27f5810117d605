/* Envoy Gateway's row of the mesh table (po/meshes/list.h): one EnvoyPatchPolicy per
 * PropertyOverride. */
#include "po/meshes/eg.h"
#include "po/targets/mesh_ops.h"

extern const po_MeshOps po_EG_Mesh;
const po_MeshOps po_EG_Mesh = {
    .mesh = kPo_Mesh_EnvoyGateway,
    .name = "Envoy Gateway",
    .object_kind = "EnvoyPatchPolicy",
    .object_name = po_EG_PolicyName,
    .rules = {.check = po_EG_Check},
};
