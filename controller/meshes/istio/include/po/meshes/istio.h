/* The Istio target (ARCHITECTURE.md section 7): one EnvoyFilter (networking.istio.io/v1alpha3) per
 * PropertyOverride, compiled from the IR.
 *
 *   target Service S (namespace N)  -> EnvoyFilter N/<name>, workloadSelector = S's spec.selector
 *   target Mesh global              -> EnvoyFilter <root namespace>/<name>, no selector
 *   resourceType cluster|listener|route -> applyTo CLUSTER|LISTENER|ROUTE_CONFIGURATION
 *   trafficDirection inbound|outbound   -> context SIDECAR_INBOUND|SIDECAR_OUTBOUND (never ANY)
 *   outbound cluster services[{name, namespace}] -> one patch per service, match.cluster.service
 *       = name.namespace.svc.<cluster domain> (every port and subset)
 *   add /a/b = v -> MERGE {a: {b: v}} (protojson of the converted value, proto field names);
 *       an array -> MERGE_AND_REPLACE_LIST (Istio 1.31+)
 *   spec.priority -> spec.priority (when not 0: Istio's order of patch sets, lower first)
 *
 * Refused, each with its reason (po_Istio_Check): remove; an add of a proto3 zero value; an add
 * of an object value (except a whole Duration, which Istio replaces as Consul does); an array
 * before Istio 1.31 (a release not known is taken as the newest listed, po_Istio_JudgedMinor); cluster-load-assignment; listener or route patches with services; paths
 * under transport_socket; Duration sub-fields; a non-default partition. */
#ifndef PO_MESHES_ISTIO_H_
#define PO_MESHES_ISTIO_H_

#include <stdbool.h>

#include "po/targets/mesh_ops.h"
#include "po/targets/override.h"
#include "po/targets/release.h"
#include "po/targets/owned.h"

struct json_object;

#define PO_ISTIO_API_VERSION "networking.istio.io/v1alpha3"
/* Istio's first release with the MERGE_AND_REPLACE_LIST operation (its 1.31.0 change notes). */
enum { kPo_IstioMinorReplaceList = 31 };

/* The Istio release 1.N Istio targets are judged and written as: the one configured or read
 * from the cluster (o->istio_minor: --istio-version, --mesh istio@1.N, the istiod Service's
 * label), else, not known, the newest release this build lists (its table's default, 1.31), and
 * *assumed (may be NULL) says so. The newest, because an older Istio refuses what only a newer
 * one has (MERGE_AND_REPLACE_LIST is not in its EnvoyFilter CRD: the write fails, said in
 * Programmed), where judging as an older one would refuse every list for every mesh. */
int po_Istio_JudgedMinor(const po_TargetOptions *o, bool *assumed);
/* po_MeshOps.release_assumed: o->istio_minor is 0. */
bool po_Istio_ReleaseAssumed(const po_TargetOptions *o);

/* Adds a kPo_DiagKind_Target error per patch Istio cannot express (c compiled without error),
 * and a warning per patch whose EnvoyFilter depends on a release assumed, not known (a list:
 * MERGE_AND_REPLACE_LIST). false only when out of memory. */
bool po_Istio_Check(po_CompiledOverride *c, po_Arena *a);

/* The EnvoyFilter's name for a PropertyOverride (one per PropertyOverride, so two never share
 * an object), in `a`: for a Service "propertyoverride-<name>" in the PropertyOverride's
 * namespace; for the Mesh po_Istio_MeshFilterName. NULL when out of memory. */
const char *po_Istio_FilterName(const po_CompiledOverride *c, po_Arena *a);
/* The root namespace's EnvoyFilter for the Mesh PropertyOverride ns/name, one per (ns, name)
 * (Mesh PropertyOverrides of one name in two namespaces must not meet in one object):
 * "propertyoverride.<ns>.<name>", a DNS-1123 subdomain; past kPo_IstioMaxName characters its
 * first 236 (less a trailing '.' or '-'), "-" and 16 hex digits of a hash of ns/name, so the
 * same pair always gets the same name. */
enum { kPo_IstioMaxName = 253 };
const char *po_Istio_MeshFilterName(const char *ns, const char *name, po_Arena *a);
/* The name earlier versions gave a Mesh PropertyOverride's EnvoyFilter:
 * "propertyoverride-<name>", shared by every namespace's. Still recognised, so an upgrade
 * deletes ours of that name once the new one is written (istio_write.c). */
const char *po_Istio_LegacyMeshFilterName(const char *name, po_Arena *a);
/* The EnvoyFilter's namespace: the PropertyOverride's, or the root namespace for Mesh. */
const char *po_Istio_FilterNamespace(const po_CompiledOverride *c);

/* The EnvoyFilter for an accepted override of an Istio target (a new reference). `selector` is
 * the Service's spec.selector (a map of labels; required, non-empty, for a Service target,
 * ignored for Mesh). NULL when out of memory; *why (may be NULL) gets the reason when the input
 * cannot make one (not an accepted Istio override, no selector), else NULL. */
struct json_object *po_Istio_EnvoyFilter(const po_CompiledOverride *c, const struct json_object *selector,
                                         po_Arena *a, const char **why);

/* An Istio release as its minor N: "1.N", "1.N.P", with an optional 'v' and prerelease or build
 * tag ("1.30.0-beta.0"), read by po_MeshRelease_Line as every release text is; -1 when it is not
 * one. */
int po_Istio_ParseVersion(const char *s);

/* ---- programming an EnvoyFilter (the decisions; the caller reads and writes) ----------------
 * owned.h's decision (the same ownership rules as every mesh object of ours), with an
 * EnvoyFilter's sentences for a look-alike. */
/* po_Owned_Plan for an EnvoyFilter (owned.h says what each argument means). */
po_OwnedPlan po_Istio_Plan(const struct json_object *current, const struct json_object *desired, const char *owner_uid,
                           const char *created_uid);

/* ---- EnvoyFilters written by hand (validate -f) ------------------------------------------------
 * Each configPatches[i].patch.value decoded strictly against the Envoy message its applyTo names
 * (Istio only warns on unknown fields and checks no value), as errors of kind
 * kPo_DiagKind_Target with patch_index i; and warnings for patches that silently do nothing or
 * something else: a zero value under MERGE (proto3 leaves it unset; not copied), a list under
 * MERGE (appended, not replaced), INSERT_* on CLUSTER (Istio treats it as ADD, istio/istio#37107).
 * Bounded: at most kPo_MaxPatchesPerOverride * 10 patches are checked, the rest refused at once.
 * Judged by j's snapshot (the Istio release's); a field it lacks that another snapshot has is said
 * so, naming the releases that accept it (po_Native_UnknownFieldHint). false only when out of
 * memory. */
bool po_Istio_CheckEnvoyFilter(const struct json_object *ef, const po_NativeJudge *j, po_Arena *a, po_Diagnostics *d);

/* Its releases and the Envoy API snapshot judging each (src/istio_releases.c). */
extern const po_MeshReleases po_Istio_Releases;
/* The Envoy message a configPatch's value is for its applyTo ("CLUSTER": envoy.config.cluster.v3.Cluster,
 * "HTTP_FILTER": the HttpConnectionManager's HttpFilter, ...), or NULL (BOOTSTRAP: outside our schema;
 * an unknown applyTo). Static. */
const char *po_Istio_PatchMessage(const char *apply_to);

#endif
