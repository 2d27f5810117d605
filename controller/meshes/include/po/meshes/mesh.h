/* The mesh table: one row per mesh (po/meshes/list.h), each the mesh's po_MeshOps
 * (po/targets/mesh_ops.h) defined in its own folder. The one entry the webhook, the reconciler
 * and the CLI use to compile a PropertyOverride for its target's mesh, and to ask a mesh
 * anything by its po_Mesh, so none of them switches on the mesh itself.
 *
 *   mesh           targets                         objects                 folder
 *   Consul         ServiceDefaults, ProxyDefaults  envoyExtensions entries controller/meshes/consul
 *   Istio          Service, Mesh                   EnvoyFilter             controller/meshes/istio
 *   Envoy Gateway  Gateway                         EnvoyPatchPolicy        controller/meshes/envoygateway */
#ifndef PO_MESHES_MESH_H_
#define PO_MESHES_MESH_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/targets/mesh_ops.h"
#include "po/targets/override.h"

/* The row of `mesh` (Consul's for a value outside the table). */
const po_MeshOps *po_Mesh_Ops(po_Mesh mesh);
/* The rows in the list's order: i < po_Mesh_Count(). */
size_t po_Mesh_Count(void);
const po_MeshOps *po_Mesh_At(size_t i);
/* The mesh whose hand-written object is of API group `group` and kind `kind` (po_MeshOps.
 * native_group, native_kind), NULL when none is. */
const po_MeshOps *po_Mesh_ForNative(const char *group, const char *kind);

/* The object-name bound every mesh with an object per PropertyOverride shares, then the mesh's
 * own refusals (po_MeshOps.rules.check). false only when out of memory. */
bool po_Target_Check(po_CompiledOverride *c, po_Arena *a);

/* po_CompiledOverride_Compile (override.h) under the table's rules: the one compile the webhook,
 * the reconciler and the CLI's validate/render all use. `opts`: the mesh's options (NULL, or
 * zero fields: the defaults). */
po_CompileOutcome po_CompiledOverride_FromObject(const struct json_object *obj, const po_TargetOptions *opts,
                                                 po_Arena *a, po_CompiledOverride *out);

#endif
