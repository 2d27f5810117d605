/* The embedded Envoy API snapshot a run judges with (--api VERSION): the one the generator walks,
 * the schema our verdicts and the oracle's answers are read against, and the go-control-plane
 * envoy version of the oracle program run.sh picks (envoy-validate-VERSION). Chosen once, by the
 * driver's main, before anything reads it: the drivers are single-threaded test programs. */
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "po/meshes/mesh.h"
#include "po/schema.h"

static const po_EnvoyApi *g_api;
static const po_Schema *g_schema;

bool po_DiffSnapshot_Use(const char *version) {
  const po_EnvoyApi *api = version ? po_EnvoyApi_Find(version) : po_EnvoyApi_Default();
  size_t i = 0;
  const char *v = NULL;
  while (api && (v = po_Schema_SnapshotVersion(i)) && strcmp(v, po_EnvoyApi_Version(api)) != 0) i++;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = v ? po_Schema_GetSnapshot(i, &st) : NULL;
  if (!s) {
    fprintf(stderr, "envoy-rules: no embedded snapshot %s%s%s (embedded:", version ? version : "(default)",
            st.message[0] ? ": " : "", st.message);
    for (size_t k = 0; po_Schema_SnapshotVersion(k); k++) fprintf(stderr, " %s", po_Schema_SnapshotVersion(k));
    fprintf(stderr, ")\n");
    return false;
  }
  g_api = api;
  g_schema = s;
  return true;
}

/* po_DiffSnapshot_Use's choice; the default snapshot when nothing chose one yet. */
static void chosen(void) {
  if (!g_schema && !po_DiffSnapshot_Use(NULL)) g_api = NULL;
}

const po_EnvoyApi *po_DiffSnapshot_Api(void) { return chosen(), g_api; }

const po_Schema *po_DiffSnapshot_Schema(void) { return chosen(), g_schema; }

const char *po_DiffSnapshot_Version(void) {
  chosen();
  return g_api ? po_EnvoyApi_Version(g_api) : "?";
}

const po_MeshRelease *po_DiffSnapshot_Release(po_Mesh mesh) {
  const po_MeshReleases *t = po_Mesh_Ops(mesh)->releases;
  const po_MeshRelease *best = NULL;
  for (size_t i = 0; t && i < t->count; i++) {
    if (po_MeshRelease_Api(&t->rows[i]) == po_DiffSnapshot_Api()) best = &t->rows[i];
  }
  return best;
}

void po_DiffSnapshot_TargetOptions(po_TargetOptions *o) {
  for (int m = 0; m < kPo_MeshSlots; m++) {
    o->release[m] = po_DiffSnapshot_Release((po_Mesh)m);
    o->api[m] = o->release[m] ? NULL : po_DiffSnapshot_Api();
  }
}

const char *po_DiffSnapshot_Judged(po_Mesh mesh, po_Arena *a) {
  const po_MeshRelease *r = po_DiffSnapshot_Release(mesh);
  return r ? po_Arena_Printf(a, "%s %s", po_Mesh_Ops(mesh)->name, r->release)
           : po_Arena_Printf(a, "%s (--envoy-api %s: no release of it is judged with that snapshot)",
                             po_Mesh_Ops(mesh)->name, po_DiffSnapshot_Version());
}
