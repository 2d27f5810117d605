/* What one mesh is to the mesh-independent code: the row each mesh folder defines
 * (controller/meshes/<mesh>/src/<mesh>_mesh.c) and the table lists (po/meshes/mesh.h,
 * po/meshes/list.h). Declared here, below the meshes, so that a mesh defines its row without
 * seeing the table or another mesh: the graph stays core <- each mesh <- the table. */
#ifndef PO_TARGETS_MESH_OPS_H_
#define PO_TARGETS_MESH_OPS_H_

#include <stdbool.h>

#include "po/targets/override.h"
#include "po/targets/release.h"
#include "po/targets/render.h"

struct json_object;

/* What a release of a mesh generates differently from the one before it, for `propertyoverride
 * upgrade-check` (controller/cli/upgrade_native.c): each mesh's facts, as data in its own folder,
 * with where each comes from. Releases are 1.<minor>. */
/* Whom a mesh's own object (an EnvoyFilter, an EnvoyPatchPolicy) is judged for: the snapshot
 * (the mesh release's; NULL: the default), and for an unknown field's hint the release it stands
 * for ("istio@1.30"; NULL: not said) and the releases to name as accepting a field the snapshot
 * lacks, as po_CompileOptions has them. po_Mesh_CheckNative (mesh.h) fills it from the options. */
typedef struct {
  const po_EnvoyApi *api;
  const char *judged_for;
  const po_ApiReleases *releases;
} po_NativeJudge;

typedef struct {
  po_ResourceType resource;   /* the resource whose name changes */
  const char *old_form;       /* the name as the earlier scheme makes it: "<gateway namespace>/<gateway>/<listener>" */
  const char *new_form;       /* as the new one makes it: "<protocol>-<port>"; <...> is one part of no '/' */
  int default_minor;          /* the first release that names so by default; 0: no release known to */
  int flag_minor;             /* the first release where `flag` turns it on; 0: no flag */
  const char *flag;           /* the mesh's switch, as its configuration spells it */
  const char *note;           /* what keeps its name, or NULL */
} po_MeshNameChange;

typedef struct {
  int since_minor;            /* the first release that generates the resource so */
  po_ResourceType resource;
  const char *which;          /* which of them: "DNS clusters (Backends of hostnames)" */
  const char *holder;         /* the resource's field that holds it: "cluster_type" */
  const char *holder_name;    /* the name it goes by there: "envoy.cluster.dns" */
  const char *extension;      /* its message: "envoy.extensions.clusters.dns.v3.DnsCluster" */
  /* NULL-terminated: the resource's fields Envoy no longer reads once the extension is there, or
   * that replace it (a member of the holder's oneof) */
  const char *const *fields;
} po_MeshGeneratedExtension;

typedef struct {
  const po_MeshNameChange *names;
  size_t name_count;
  const po_MeshGeneratedExtension *extensions;
  size_t extension_count;
} po_MeshUpgradeFacts;

typedef struct po_MeshOps {
  po_Mesh mesh;
  const char *name;        /* "Consul", "Istio", "Envoy Gateway": for messages */
  /* Its supported releases and the Envoy API snapshot judging each (release.h; the table lives in
   * the mesh's folder, src/<mesh>_releases.c). */
  const po_MeshReleases *releases;
  /* The object each PropertyOverride of this mesh gets ("EnvoyFilter", "EnvoyPatchPolicy"), named
   * by object_name; NULL (Consul): its entry goes into the target object itself. */
  const char *object_kind;
  const char *(*object_name)(const po_CompiledOverride *c, po_Arena *a);
  /* What the compile asks of the mesh (override.h): wire typing, refusals. */
  po_MeshRules rules;
  /* The mesh's own object a person may write by hand (an EnvoyFilter, an EnvoyPatchPolicy), which
   * the webhook and `validate -f` check: its API group and kind, the spec member listing its
   * patches (a diagnostic's patch_index counts in it), and the check (errors deny, warnings warn;
   * false only when out of memory), judged as `j` says. NULL kind (Consul): none; its objects are its targets, which
   * consul_check.h checks. */
  const char *native_group, *native_kind, *native_patches;
  bool (*check_native)(const struct json_object *obj, const po_NativeJudge *j, po_Arena *a, po_Diagnostics *d);
  /* `propertyoverride render`: appends to objs (*n grows) the objects the controller would write
   * for the accepted PropertyOverrides of this mesh's targets among the inputs, in the mesh's
   * order, refusing through in->refuse those it cannot render from them; false when out of
   * memory (what was appended is the caller's to free). */
  bool (*render)(const po_RenderInputs *in, po_Arena *a, struct json_object **objs, size_t *n);
  /* What its releases generate differently (upgrade-check); NULL: nothing known. */
  const po_MeshUpgradeFacts *upgrade;
  /* Whether the release its targets are judged as is assumed under `opts` (neither configured nor
   * read from the cluster), where the release decides what is written and not only the Envoy API
   * (Istio: MERGE_AND_REPLACE_LIST); said after the release in judged_by, in validate's report
   * and in status. NULL: never said (Consul's and Envoy Gateway's defaults are documented ones
   * that change only the snapshot). */
  bool (*release_assumed)(const po_TargetOptions *opts);
} po_MeshOps;

#endif
