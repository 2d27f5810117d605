/* Every release of each mesh's table with the snapshot judging it, as the engine's hint for an
 * unknown field names them (po_ApiReleases, mesh.h's po_Mesh_ApiReleases): built once, from the
 * tables, which are static; shared read-only by every thread after that. */
#include <pthread.h>

#include "po/meshes/mesh.h"

enum { kMaxRows = 64 }; /* every table's rows together (13 today; tests/meshes checks they fit) */

typedef struct {
  pthread_once_t once;
  po_ApiRelease rows[kMaxRows];
  po_ApiReleases of[kPo_MeshSlots], all;
} Store;

static Store g = {.once = PTHREAD_ONCE_INIT};

static void build(void) {
  size_t n = 0;
  for (size_t i = 0; i < po_Mesh_Count(); i++) {
    const po_MeshOps *m = po_Mesh_At(i);
    po_ApiReleases *of = (unsigned)m->mesh < kPo_MeshSlots ? &g.of[m->mesh] : NULL;
    size_t k = po_MeshReleases_ApiRows(m->releases, po_Mesh_Name(m->mesh), &g.rows[n], kMaxRows - n);
    if (of) *of = (po_ApiReleases){.mesh = po_Mesh_Name(m->mesh), .rows = &g.rows[n], .count = k};
    n += k;
  }
  g.all = (po_ApiReleases){.rows = g.rows, .count = n};
}

const po_ApiReleases *po_Mesh_ApiReleases(po_Mesh mesh) {
  pthread_once(&g.once, build);
  return (unsigned)mesh < kPo_MeshSlots ? &g.of[mesh] : NULL;
}

const po_ApiReleases *po_Mesh_AllApiReleases(void) {
  pthread_once(&g.once, build);
  return &g.all;
}
