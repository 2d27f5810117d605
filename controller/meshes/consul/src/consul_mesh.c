/* Consul's row of the mesh table (po/meshes/list.h): its entries go into the target itself (no
 * object of its own), and its refusals are the compile's wire verdicts (check_wire), which the
 * engine makes: nothing more to check here. */
#include "po/meshes/consul.h"
#include "po/targets/mesh_ops.h"

/* consul_render.c */
bool po_Consul_Render(const po_RenderInputs *in, po_Arena *a, struct json_object **objs, size_t *no);

extern const po_MeshOps po_Consul_Mesh;
const po_MeshOps po_Consul_Mesh = {
    .mesh = kPo_Mesh_Consul,
    .name = "Consul",
    .releases = &po_Consul_Releases,
    .rules = {.wire_typed = true},
    .render = po_Consul_Render,
};
