/* A PropertyOverride object (json-c, as the API server or a manifest gives it) decoded,
 * validated and compiled with the engine: the one pipeline the webhook, the reconciler and the
 * CLI's validate/render all use (ARCHITECTURE.md section 4).
 *
 *   spec -> strict spec decode -> friendly values -> one compile (po_Override_Build): Constructor
 *        rules + Envoy rules under the typed convention, and each patch's verdict under Consul's
 *        wire typing (check_wire) -> the Consul `arguments`
 *
 * The wire verdicts guarantee that what we would write into a ServiceDefaults is what Consul
 * accepts, with the same meaning. Everything lives in the caller's arena (but what
 * po_TargetOptions.spec_arena and arguments_arena place elsewhere). */
#ifndef PO_TARGETS_OVERRIDE_H_
#define PO_TARGETS_OVERRIDE_H_

#include <stdbool.h>
#include <stdint.h>

#include "po/engine.h"
#include "po/targets/release.h"
#include "po/targets/target_kind.h"

struct json_object;

/* The API group of the PropertyOverride kind (crds/). */
#define PO_OVERRIDE_GROUP "propertyoverride.io"

/* Which mesh programs a target: the adapter that compiles the IR into its objects. */
enum { kPo_MeshSlots = kPo_Mesh_EnvoyGateway + 1 }; /* po_Mesh values, for tables indexed by them */

/* What the adapters need to know of the mesh (flags of the CLI and the controller). */
typedef struct {
  const char *cluster_domain;      /* Kubernetes' DNS suffix; NULL: "cluster.local" */
  int istio_minor;                 /* the Istio release 1.N programmed; 0: not known, so assumed
                                    * the newest Istio's table lists, with a warning where that
                                    * decides what is written (po_Istio_JudgedMinor) */
  const char *istio_root_namespace;/* meshConfig.rootNamespace; NULL: "istio-system" */
  /* The tenancy policy the compile applies to spec.targetRef.namespace (tenancy.h), for the CLI,
   * which has no controller to ask; NULL (the webhook, the reconciler): not checked here, the
   * caller asks its own policy and reports TargetNotAllowed. Borrowed. */
  const struct po_Tenancy *tenancy;
  /* Per mesh (indexed by po_Mesh): the release its targets run, a row of the mesh's release
   * table (release.h; NULL: the mesh's default release, which the table's compile,
   * po_CompiledOverride_FromObject in po/meshes/mesh.h, fills in), and the Envoy API snapshot they are judged by
   * (NULL: that release's; set to name one directly, as `--envoy-api` does). */
  const po_MeshRelease *release[kPo_MeshSlots];
  const po_EnvoyApi *api[kPo_MeshSlots];
  /* Per mesh: every release of its table with its snapshot, which an unknown field's hint names
   * as accepting a field the judging snapshot lacks (po_CompileOptions.releases; NULL: none
   * named). po_Mesh_FillReleases sets them. Static. */
  const po_ApiReleases *api_releases[kPo_MeshSlots];
  /* Where the compile makes po_CompiledOverride.consul_arguments (NULL: the compile's arena). The
   * reconciler keeps a compiled form per PropertyOverride for its whole life but reads the
   * arguments once, turning them into text (reconcile's compiled.c): made in a scratch arena it
   * frees at once, they do not stay beside the compiled form (about 1 KB of a one-patch
   * PropertyOverride's 3.9 KB arena). Borrowed; the caller clears consul_arguments before freeing it. */
  po_Arena *arguments_arena;
  /* Where the compile makes the spec's value tree (NULL: the compile's arena). The same holder:
   * the tree is about six times the spec's JSON (1.8 KB of a one-patch PropertyOverride's 3.2 KB
   * kept form), and the compiled form needs only what the decoded arguments reference of it, their
   * strings and the patches' values, which the compile then copies into its own arena
   * (po_Arguments_Adopt). The compile leaves nothing there that its result references; the caller
   * frees it after. Not set by the webhook and the CLI, which free the whole arena after one
   * compile: the copy would only add to their peak (test_webhook_cost's reservations). Borrowed. */
  po_Arena *spec_arena;
} po_TargetOptions;

/* The snapshot judging `mesh`'s targets under `opts` (NULL: the default snapshot): its api, else
 * its release's, else the default snapshot. */
const po_EnvoyApi *po_TargetOptions_Api(const po_TargetOptions *opts, po_Mesh mesh);

typedef struct {
  const char *ns;              /* the PropertyOverride's namespace ("" for a manifest without one) */
  const char *name;
  int64_t generation;
  po_TargetKind target_kind;
  const char *target_name;     /* the ServiceDefaults or Service (service) name, or "global" */
  const char *target_ns;       /* spec.targetRef.namespace: "" for the PropertyOverride's own (tenancy.h decides) */
  po_TargetOptions options;    /* as given (NULLs and 0 resolved to the defaults) */
  /* spec.priority (int32, default 0): orders our entries in the target, lower first, so on a
   * conflict the higher one is applied later and wins; ties by name. Decoded whether or not the
   * rest of the spec is valid (an invalid generation keeps its last valid entry's place). */
  int32_t priority;
  bool accepted;               /* no error */
  bool required;               /* spec.required: the envoyExtensions entry's `required` (Consul
                                * refuses the proxy's xDS update when a required extension fails
                                * to apply; a non-required one is skipped with a warning) */
  /* spec.routeNamespaces (Envoy Gateway targets only): the namespaces besides its own whose
   * HTTPRoutes attached to the Gateway its cluster patches follow; "*" for every namespace the
   * Gateway's listeners admit. None (the default): only this namespace's (eg.h). */
  const char *const *route_namespaces;
  size_t route_namespace_count;
  po_Diagnostics *diags;       /* errors and warnings, in patch order */
  const po_Arguments *args;    /* po_Override_Arguments(override) (normalised), or NULL */
  const po_Override *override; /* the engine's compiled form, the one IR (per patch: chain, typed
                                * value, op, filter, both conventions' verdicts): what conflict
                                * checks and appliers read, compiled once. Set whenever the spec
                                * decoded, valid or not (po_Override_Valid); NULL otherwise */
  po_Value *consul_arguments;  /* the envoyExtensions `arguments` to write; NULL unless accepted */
  /* The target's mesh release (NULL: not known, the mesh's default not filled in) and the Envoy
   * API snapshot it was judged by (options.api / release; the default snapshot when neither). */
  const po_MeshRelease *release;
  const po_EnvoyApi *api;
  /* "judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22": what status
   * messages and denials say of the two above (the mesh table's compile sets it; "" before). */
  const char *judged_by;
} po_CompiledOverride;

/* What the compile asks of the target's mesh (each mesh's row, po/targets/mesh_ops.h). */
typedef struct {
  /* Consul's wire typing: each patch's verdict as Consul decodes the arguments we write
   * (check_wire), and those arguments (consul_arguments) once accepted */
  bool wire_typed;
  /* Adds the mesh's refusals of c's patches to c->diags (c compiled without error), errors of
   * kind kPo_DiagKind_Target, one per patch with the reason. NULL: none. false only when out of
   * memory. */
  bool (*check)(po_CompiledOverride *c, po_Arena *a);
} po_MeshRules;

/* What a compile found: the answer is the return value, the why is in out->diags. */
typedef enum {
  kPo_CompileOutcome_Accepted = 0, /* no error: can be programmed into its target (out->accepted) */
  kPo_CompileOutcome_Refused,      /* errors, each a diagnostic in out->diags */
  kPo_CompileOutcome_NoMemory,     /* out of memory: no verdict on the object */
} po_CompileOutcome;

/* The compile under the rules of the target's mesh (rules_for(po_TargetKind_Mesh(target))).
 * Bad input is a verdict (Refused, the problems as diagnostics), never a failure. The mesh's
 * refusals make Accepted mean "can be programmed into that target". Callers use
 * po/meshes/mesh.h's po_CompiledOverride_FromObject, which passes the table's rules. `opts`
 * NULL (or zero fields): the defaults. */
po_CompileOutcome po_CompiledOverride_Compile(const struct json_object *obj, const po_TargetOptions *opts,
                                              const po_MeshRules *(*rules_for)(po_Mesh mesh), po_Arena *a,
                                              po_CompiledOverride *out);

/* Limits (README.md, the webhook section). Objects over them are refused with an error naming
 * the limit before any per-patch work, so a request's cost has a bound. */
enum {
  kPo_MaxPatchesPerOverride = 100, /* spec.patches; the CRD's maxItems says the same (tested) */
  kPo_MaxRouteNamespaces = 16,     /* spec.routeNamespaces; the CRD's maxItems says the same */
  kPo_DescribeMaxErrors = 20,      /* errors a description shows whole; the rest are counted */
  kPo_DescribeMaxBytes = 16384,    /* the default bound of a description's text */
};

/* One line per diagnostic, in Consul's words: "invalid Patches[2]: <message> (<hint>) (path P)",
 * the path left out when the message starts with it; Consul's multi-line field lists folded to
 * their first line unless `full`; spec errors as "spec.patches[0].op: ...". Errors first, then
 * warnings when `warnings`. Bounded: the first kPo_DescribeMaxErrors lines that fit in
 * `max_bytes` (0: kPo_DescribeMaxBytes) are shown whole, then "... and K more errors" (or
 * "diagnostics" with warnings); a first line longer than max_bytes alone is cut, marked " [...]".
 * Linear in the number of diagnostics. NULL when there is nothing to say. */
const char *po_CompiledOverride_Describe(const po_CompiledOverride *c, bool full, bool warnings, size_t max_bytes,
                                         po_Arena *a);


#endif
