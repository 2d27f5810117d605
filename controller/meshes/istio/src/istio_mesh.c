/* Istio's row of the mesh table (po/meshes/list.h): one EnvoyFilter per PropertyOverride. */
#include "po/meshes/istio.h"
#include "po/targets/mesh_ops.h"

/* istio_render.c */
bool po_Istio_Render(const po_RenderInputs *in, po_Arena *a, struct json_object **objs, size_t *no);

extern const po_MeshOps po_Istio_Mesh;
const po_MeshOps po_Istio_Mesh = {
    .mesh = kPo_Mesh_Istio,
    .name = "Istio",
    .releases = &po_Istio_Releases,
    .object_kind = "EnvoyFilter",
    .object_name = po_Istio_FilterName,
    .rules = {.check = po_Istio_Check},
    .native_group = "networking.istio.io",
    .native_kind = "EnvoyFilter",
    .native_patches = "configPatches",
    .check_native = po_Istio_CheckEnvoyFilter,
    .render = po_Istio_Render,
    /* upgrade: nothing known. Istio's release notes (releasenotes/notes of istio.io/istio) name no
     * change between 1.26 and 1.31 to the names of the listeners, clusters and route configurations
     * an EnvoyFilter matches; the last ones that did (the inbound cluster name format, virtual
     * hosts merged) are of earlier releases. */
    .upgrade = NULL,
    .release_assumed = po_Istio_ReleaseAssumed,
};
