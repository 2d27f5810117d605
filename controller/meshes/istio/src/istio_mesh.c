/* Istio's row of the mesh table (po/meshes/list.h): one EnvoyFilter per PropertyOverride. */
#include "po/meshes/istio.h"
#include "po/targets/mesh_ops.h"

extern const po_MeshOps po_Istio_Mesh;
const po_MeshOps po_Istio_Mesh = {
    .mesh = kPo_Mesh_Istio,
    .name = "Istio",
    .object_kind = "EnvoyFilter",
    .object_name = po_Istio_FilterName,
    .rules = {.check = po_Istio_Check},
};
