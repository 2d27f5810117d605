/* What one mesh is to the mesh-independent code: the row each mesh folder defines
 * (controller/meshes/<mesh>/src/<mesh>_mesh.c) and the table lists (po/meshes/mesh.h,
 * po/meshes/list.h). Declared here, below the meshes, so that a mesh defines its row without
 * seeing the table or another mesh: the graph stays core <- each mesh <- the table. */
#ifndef PO_TARGETS_MESH_OPS_H_
#define PO_TARGETS_MESH_OPS_H_

#include <stdbool.h>

#include "po/targets/override.h"

typedef struct {
  po_Mesh mesh;
  const char *name;        /* "Consul", "Istio", "Envoy Gateway": for messages */
  /* The object each PropertyOverride of this mesh gets ("EnvoyFilter", "EnvoyPatchPolicy"), named
   * by object_name; NULL (Consul): its entry goes into the target object itself. */
  const char *object_kind;
  const char *(*object_name)(const po_CompiledOverride *c, po_Arena *a);
  /* What the compile asks of the mesh (override.h): wire typing, refusals. */
  po_MeshRules rules;
} po_MeshOps;

#endif
