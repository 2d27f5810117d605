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

#include "po/base/status.h"
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

/* Each mesh whose release `o` does not name gets its default release (the newest its table
 * lists), so every target is judged by its mesh's snapshot (the compile below does it too). */
void po_Mesh_FillReleases(po_TargetOptions *o);

/* Every release of `mesh`'s table with the snapshot judging it (NULL for a value outside the
 * table), or of every mesh's: what an unknown field's hint names as accepting a field the
 * judging snapshot lacks (po_CompileOptions.releases). Static. */
const po_ApiReleases *po_Mesh_ApiReleases(po_Mesh mesh);
const po_ApiReleases *po_Mesh_AllApiReleases(void);

/* Mesh `m`'s check of its own hand-written object (po_MeshOps.check_native; m has one), judged
 * by the snapshot of its release under `o` (filled: po_Mesh_FillReleases), an unknown field's
 * hint naming that release and the mesh's releases accepting the field. false only when out of
 * memory. */
bool po_Mesh_CheckNative(const po_MeshOps *m, const struct json_object *obj, const po_TargetOptions *o, po_Arena *a,
                         po_Diagnostics *d);

/* A mesh and one of its releases, as `--mesh MESH[@RELEASE]` names them: "consul@1.22",
 * "istio@1.30", "istio@1.30.2" (a patch release is its line's), "envoy-gateway@v1.9" (an
 * optional 'v'), or a bare "istio": that mesh's default release (the newest its table lists). */
typedef struct {
  const po_MeshOps *mesh;
  const po_MeshRelease *release; /* a row of mesh->releases */
  bool defaulted;                /* no @RELEASE was given */
} po_MeshChoice;
/* false with st (kPo_Ctl_Usage) saying what is wrong, then what would be valid: the meshes, or
 * that mesh's releases and its default, e.g. "Istio 1.25 is not a release this build knows;
 * istio's releases: 1.26, 1.27, 1.28, 1.29, 1.30, 1.31 (default 1.31)". */
bool po_Mesh_ParseChoice(const char *text, po_MeshChoice *out, po_CtlStatus *st);
/* Every mesh's name, for messages: "consul, istio, envoy-gateway", into buf; returns buf. */
const char *po_Mesh_Names(char *buf, size_t len);

/* "judged against go-control-plane envoy v1.37.0, the Envoy API of Istio 1.30" (the snapshot's
 * name alone without a release; api NULL: the default snapshot), in `a`; NULL when out of memory.
 * When the mesh says the release was assumed under `opts` (po_MeshOps.release_assumed: Istio's
 * not known) it ends "..., the Envoy API of Istio 1.31; the Istio release is not known, 1.31 is
 * assumed". What status messages and denials end with (po_CompiledOverride.judged_by). */
const char *po_Mesh_JudgedBy(po_Mesh mesh, const po_MeshRelease *release, const po_EnvoyApi *api,
                             const po_TargetOptions *opts, po_Arena *a);
/* Whether `mesh`'s release under `opts` was assumed rather than configured or read
 * (po_MeshOps.release_assumed; false for a mesh without one). */
bool po_Mesh_ReleaseAssumed(po_Mesh mesh, const po_TargetOptions *opts);

/* The object-name bound every mesh with an object per PropertyOverride shares, then the mesh's
 * own refusals (po_MeshOps.rules.check). false only when out of memory. */
bool po_Target_Check(po_CompiledOverride *c, po_Arena *a);

/* po_CompiledOverride_Compile (override.h) under the table's rules: the one compile the webhook,
 * the reconciler and the CLI's validate/render all use. `opts`: the mesh's options (NULL, or
 * zero fields: the defaults). */
po_CompileOutcome po_CompiledOverride_FromObject(const struct json_object *obj, const po_TargetOptions *opts,
                                                 po_Arena *a, po_CompiledOverride *out);

#endif
