/* The mesh table (mesh.h): po/meshes/list.h expanded, and what every mesh shares through it. */
#include "po/meshes/mesh.h"

#include <stdio.h>
#include <string.h>

#define PO_MESH(id, row, reconcile) extern const po_MeshOps row;
#include "po/meshes/list.h"
#undef PO_MESH

static const po_MeshOps *const kMeshes[] = {
#define PO_MESH(id, row, reconcile) [id] = &row,
#include "po/meshes/list.h"
#undef PO_MESH
};
enum { kMeshCount = sizeof kMeshes / sizeof kMeshes[0] };

const po_MeshOps *po_Mesh_Ops(po_Mesh mesh) {
  return (unsigned)mesh < kMeshCount && kMeshes[mesh] ? kMeshes[mesh] : kMeshes[kPo_Mesh_Consul];
}

size_t po_Mesh_Count(void) { return kMeshCount; }
const po_MeshOps *po_Mesh_At(size_t i) { return i < kMeshCount ? kMeshes[i] : NULL; }

const po_MeshOps *po_Mesh_ForNative(const char *group, const char *kind) {
  for (size_t i = 0; group && kind && i < kMeshCount; i++) {
    const po_MeshOps *m = kMeshes[i];
    if (m && m->native_kind && !strcmp(m->native_group, group) && !strcmp(m->native_kind, kind)) return m;
  }
  return NULL;
}

/* Kubernetes' longest object name (a DNS subdomain). */
enum { kMaxObjectName = 253 };

/* A mesh with an object of its own per PropertyOverride names it after the PropertyOverride
 * (po_MeshOps.object_name): a name too long for it passed admission and then failed at every
 * create, so it is refused here, where the webhook says so. (Envoy Gateway's and Istio's Mesh
 * names hash a long name into 253 characters: only a Service target's can be too long.) */
static bool check_object_name(po_CompiledOverride *c, po_Arena *a) {
  const po_MeshOps *m = po_Mesh_Ops(po_TargetKind_Mesh(c->target_kind));
  if (!m->object_name || !c->name) return true;
  const char *obj = m->object_name(c, a);
  if (!obj) return false;
  size_t n = strlen(obj), room = kMaxObjectName - (n - strlen(c->name));
  if (n <= kMaxObjectName) return true;
  const char *msg = po_Arena_Printf(a,
                                    "metadata.name: %zu characters: the %s is named %.*s<name>, and a Kubernetes name has "
                                    "at most %d characters (so at most %zu here)",
                                    strlen(c->name), m->object_kind, (int)(n - strlen(c->name)), obj, kMaxObjectName,
                                    room);
  return msg && po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Target, -1, NULL, msg) != NULL;
}

bool po_Target_Check(po_CompiledOverride *c, po_Arena *a) {
  const po_MeshOps *m = po_Mesh_Ops(po_TargetKind_Mesh(c->target_kind));
  return check_object_name(c, a) && (!m->rules.check || m->rules.check(c, a));
}

/* The compile's rules: the mesh's wire typing, and po_Target_Check (which finds the mesh's own
 * refusals through the table). */
static const po_MeshRules kWireTyped = {true, po_Target_Check}, kTyped = {false, po_Target_Check};
static const po_MeshRules *rules_for(po_Mesh mesh) { return po_Mesh_Ops(mesh)->rules.wire_typed ? &kWireTyped : &kTyped; }

void po_Mesh_FillReleases(po_TargetOptions *o) {
  for (size_t i = 0; i < kMeshCount; i++) {
    const po_MeshOps *m = kMeshes[i];
    if (m && (unsigned)m->mesh < kPo_MeshSlots && !o->release[m->mesh]) {
      o->release[m->mesh] = po_MeshReleases_Default(m->releases);
    }
    if (m && (unsigned)m->mesh < kPo_MeshSlots) o->api_releases[m->mesh] = po_Mesh_ApiReleases(m->mesh);
  }
}

bool po_Mesh_ReleaseAssumed(po_Mesh mesh, const po_TargetOptions *opts) {
  const po_MeshOps *m = po_Mesh_Ops(mesh);
  return m && m->release_assumed && m->release_assumed(opts);
}

const char *po_Mesh_JudgedBy(po_Mesh mesh, const po_MeshRelease *release, const po_EnvoyApi *api,
                             const po_TargetOptions *opts, po_Arena *a) {
  if (!api) api = po_EnvoyApi_Default();
  if (!release) return po_Arena_Printf(a, "judged against %s", po_EnvoyApi_Name(api));
  const char *name = po_Mesh_Ops(mesh)->name;
  bool assumed = po_Mesh_ReleaseAssumed(mesh, opts);
  if (!assumed) {
    return po_Arena_Printf(a, "judged against %s, the Envoy API of %s %s", po_EnvoyApi_Name(api), name, release->release);
  }
  return po_Arena_Printf(a, "judged against %s, the Envoy API of %s %s; the %s release is not known, %s is assumed",
                         po_EnvoyApi_Name(api), name, release->release, name, release->release);
}

po_CompileOutcome po_CompiledOverride_FromObject(const struct json_object *obj, const po_TargetOptions *opts,
                                                 po_Arena *a, po_CompiledOverride *out) {
  po_TargetOptions o = {0};
  if (opts) o = *opts;
  po_Mesh_FillReleases(&o);
  po_CompileOutcome r = po_CompiledOverride_Compile(obj, &o, rules_for, a, out);
  if (r == kPo_CompileOutcome_NoMemory) return r;
  /* what the status and the webhook say the spec was judged against */
  out->judged_by = po_Mesh_JudgedBy(po_TargetKind_Mesh(out->target_kind), out->release, out->api, &o, a);
  return out->judged_by ? r : kPo_CompileOutcome_NoMemory;
}

bool po_Mesh_CheckNative(const po_MeshOps *m, const struct json_object *obj, const po_TargetOptions *o, po_Arena *a,
                         po_Diagnostics *d) {
  po_NativeJudge j = {.api = po_TargetOptions_Api(o, m->mesh), .releases = po_Mesh_ApiReleases(m->mesh)};
  const po_MeshRelease *rel = (unsigned)m->mesh < kPo_MeshSlots ? o->release[m->mesh] : NULL;
  /* the release is named only when its snapshot judges (not when --envoy-api named another) */
  if (rel && j.api == po_MeshRelease_Api(rel)) {
    j.judged_for = po_Arena_Printf(a, "%s@%s", po_Mesh_Name(m->mesh), rel->release);
    if (!j.judged_for) return false;
  }
  return m->check_native(obj, &j, a, d);
}
