/* The reconciler's table of meshes (run.h): po/meshes/list.h expanded, each row the mesh's part
 * of a reconcile, defined in its folder (controller/meshes/<mesh>/reconcile/). */
#include "run.h"

#define PO_MESH(id, row, reconcile) extern const po_ReconcileMesh reconcile;
#include "po/meshes/list.h"
#undef PO_MESH

static const po_ReconcileMesh *const kMeshes[] = {
#define PO_MESH(id, row, reconcile) [id] = &reconcile,
#include "po/meshes/list.h"
#undef PO_MESH
};
enum { kMeshCount = sizeof kMeshes / sizeof kMeshes[0] };

const po_ReconcileMesh *po_ReconcileMesh_For(po_TargetKind kind) {
  po_Mesh m = po_TargetKind_Mesh(kind);
  /* po_Run_ParseKey admits only the kinds of the meshes in the list */
  return (unsigned)m < kMeshCount && kMeshes[m] ? kMeshes[m] : kMeshes[kPo_Mesh_Consul];
}

size_t po_ReconcileMesh_Count(void) { return kMeshCount; }
const po_ReconcileMesh *po_ReconcileMesh_At(size_t i) { return i < kMeshCount ? kMeshes[i] : NULL; }
