/* The Envoy Gateway target (ARCHITECTURE.md section 7): one EnvoyPatchPolicy
 * (gateway.envoyproxy.io/v1alpha1) per PropertyOverride of a Gateway, compiled from the IR.
 *
 *   target Gateway G (namespace N) -> EnvoyPatchPolicy N/propertyoverride-<name>, targetRef G,
 *       spec.priority = the PropertyOverride's, type JSONPatch
 *   one jsonPatches[] entry per patch and generated Envoy resource it touches, in patch order:
 *     listener (outbound)  -> type Listener, name "N/G/<listener>" per xDS listener (Gateway
 *                             listeners sharing a port share the first one's)
 *     route (outbound)     -> type RouteConfiguration, per HTTP/HTTPS listener: plain HTTP
 *                             listeners on one port share the first one's, HTTPS has its own
 *     cluster, cluster-load-assignment (outbound) -> "httproute/<ns>/<route>/rule/<i>" per rule
 *                             with backends of the HTTPRoutes attached to G; with services:[x],
 *                             the rules whose backendRefs include Service x
 *   add /a/b = v -> {op: add, path: /a/b, value: protojson of v} (proto field names, wrappers
 *       bare: /x/value is written /x, an object {value: v} for a wrapper v and {} its zero;
 *       an Any's {type_url: u} as {"@type": u}; Durations as strings); Envoy Gateway creates
 *       absent parents (EnsurePathExistsOnAdd), as Consul initialises them
 *
 * Refused, each with its reason (po_EG_Check): inbound; remove; listener or route patches with
 * services; a non-default partition; paths inside a Duration, Timestamp, FieldMask, Struct,
 * Value or ListValue (protojson writes them as strings or bare JSON); renaming the resource
 * (/name, a ClusterLoadAssignment's /cluster_name: every entry, of this policy and of the
 * Gateway's others, finds its resource by name); an Any of google.protobuf.Value (no protojson
 * form for the empty one); a oneof member beside the one Envoy Gateway generates or an earlier
 * patch sets (protojson refuses two members, where Consul clears the other: eg_generated.c's
 * table); a patch whose entry leaves a resource Envoy Gateway generates breaking Envoy's rules
 * (a parent created without its required parts, or the first of a sequence building one message
 * a part at a time: Envoy Gateway validates after each entry, eg_steps.c). Warned: /type on every
 * cluster (a Backend of hostnames' cluster holds cluster_type), and an entry that breaks a rule
 * only on a Backend of hostnames' cluster. */
#ifndef PO_MESHES_EG_H_
#define PO_MESHES_EG_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/targets/mesh_ops.h"
#include "po/targets/override.h"
#include "po/targets/release.h"
#include "po/targets/owned.h"

struct json_object;

#define PO_EG_API_VERSION "gateway.envoyproxy.io/v1alpha1"

/* Adds a kPo_DiagKind_Target error per patch an EnvoyPatchPolicy cannot express with Consul's
 * meaning, and warnings (c compiled without error). false only when out of memory. */
bool po_EG_Check(po_CompiledOverride *c, po_Arena *a);

/* "propertyoverride-<name>", in `a`; the namespace is the PropertyOverride's (= the Gateway's:
 * an EnvoyPatchPolicy's targetRef has no namespace). Past kPo_EGMaxPolicyName characters (a
 * name of 237 or more), its first 236 (less a trailing '.' or '-'), "-" and 16 hex digits of a
 * hash of the name, so every valid PropertyOverride name has a policy name Kubernetes takes. */
enum { kPo_EGMaxPolicyName = 253 };
const char *po_EG_PolicyName(const po_CompiledOverride *c, po_Arena *a);

/* The bounds on what a policy holds (owned.h's stored size): the serialized bytes of its
 * spec.jsonPatches, per policy (under kPo_MaxStoredBytes, with room for its metadata and Envoy
 * Gateway's status), and per Gateway over all its PropertyOverrides' policies (eg_write.c),
 * which bounds the controller's work and memory per Gateway and Envoy Gateway's per
 * translation. */
enum { kPo_EGMaxPolicyBytes = 1048576, kPo_EGMaxGatewayBytes = 4 * 1048576 };

/* What Envoy Gateway generates its names from: the target Gateway (gateway.networking.k8s.io,
 * its spec.listeners) and the HTTPRoutes that may attach to it (any; those whose parentRefs and
 * the listeners' allowedRoutes do not let them attach are ignored, and those of namespaces the
 * PropertyOverride does not follow are only counted). Borrowed. */
typedef struct {
  const struct json_object *gateway;
  const struct json_object *const *routes;
  size_t route_count;
  size_t max_bytes; /* the bound on the policy's jsonPatches (serialized); 0: kPo_EGMaxPolicyBytes */
  bool gateway_share; /* max_bytes is what is left of kPo_EGMaxGatewayBytes (said in a refusal) */
  /* NULL: routes are given with their rules. Else a route without spec.rules is a stub, and this
   * gives it whole (po_EG_RouteCopy(route, true), a new reference, put after use; an empty
   * object when it is gone; NULL: out of memory) when its rules are read: only for routes
   * before the bound's cut. */
  struct json_object *(*route_rules)(void *ctx, const char *ns, const char *name);
  void *route_ctx;
} po_EGTopology;

/* What a policy holds and what it leaves out. The routes followed get room in order: those of
 * the PropertyOverride's own namespace first, then those of the namespaces spec.routeNamespaces
 * names, in its order, then those "*" admits, each by namespace and name; a route whose cluster
 * entries do not fit, and every route after it, is left out whole (and not walked), so a route
 * of the own namespace is never displaced by another namespace's, one of a named namespace never
 * by one "*" admits, and a newcomer displaces only routes after it. Strings in the arena. */
typedef struct {
  size_t bytes;               /* spec.jsonPatches serialized (an upper bound: every escape counted) */
  size_t patches;             /* its entries */
  size_t max_bytes;           /* the bound applied */
  size_t routes;              /* followed HTTPRoutes whose clusters are in */
  size_t cut_routes;          /* followed HTTPRoutes from the first the bound left out on (not walked) */
  const char *first_cut;      /* "ns/name" of the first of them, NULL when none */
  size_t unfollowed;          /* attached HTTPRoutes of namespaces not followed */
  size_t uncertain;           /* followed HTTPRoutes that may attach through a selector listener: left out */
  const char *selector_listener; /* the first such listener's name */
  size_t mixed;               /* other namespaces' HTTPRoutes left out: a rule to a patched Service and another backend */
} po_EGFit;

/* The Gateways an HTTPRoute's spec.parentRefs name (group gateway.networking.k8s.io, kind
 * Gateway, by default; namespace by default the route's): fn(ctx, ns, name) per parentRef, so a
 * change of the route can reconcile every Gateway whose cluster names it changes. Reads only. */
void po_EG_RouteParents(const struct json_object *route, void (*fn)(void *ctx, const char *ns, const char *name),
                        void *ctx);
/* What po_EG_EnvoyPatchPolicy reads of an HTTPRoute: {metadata: {name, namespace}, spec:
 * {parentRefs, rules: [{backendRefs}]}} when `followed`, else {metadata: {name, namespace}, spec:
 * {parentRefs}} (enough to tell it attaches and to name it in the status). A new reference; NULL when out of memory. Copying only this
 * (no managedFields, annotations or status; no rules of a route no PropertyOverride of the Gateway
 * follows) keeps a tenant's routes from costing a whole copy each per reconcile. */
struct json_object *po_EG_RouteCopy(const struct json_object *route, bool followed);
/* What the controller keeps of an HTTPRoute at all (the route informer's cache: its transform):
 * po_EG_RouteCopy(route, true) plus metadata uid, resourceVersion, generation and
 * deletionTimestamp. A route's matches, filters, annotations and managedFields (up to ~1.5 MB
 * of a tenant's text each) are never read, so the cache costs what is read, not what a tenant
 * writes. A new reference; NULL when out of memory. */
struct json_object *po_EG_RouteTrim(const struct json_object *route);
/* Whether namespace rns is among `ns` (n of them; "*" is every namespace). */
bool po_EG_NamespaceIn(const char *const *ns, size_t n, const char *rns);
/* Whether one of the route's parentRefs names Gateway ns/gateway (attachment itself, the
 * listeners' allowedRoutes, is po_EG_EnvoyPatchPolicy's to judge). */
bool po_EG_RouteNamesGateway(const struct json_object *route, const char *ns, const char *gateway);

/* The bytes of the policy's jsonPatches that do not depend on HTTPRoutes: "[]" and its listener
 * and route configuration entries (what po_EG_EnvoyPatchPolicy counts first). The Gateway's
 * shared bound reserves these for every PropertyOverride before any gets room for route
 * clusters (eg_write.c), so routes never starve a listener patch. 0 when out of memory. */
size_t po_EG_FixedBytes(const po_CompiledOverride *c, const struct json_object *gateway, po_Arena *a);

/* The EnvoyPatchPolicy for an accepted override of a Gateway target (a new reference). NULL
 * when out of memory; *why (may be NULL) gets the reason when the input cannot make one (not an
 * accepted Gateway override, no or another Gateway, a patch that would touch no resource, a rule
 * of the own namespace that would leak a patch to a backend outside its services, listener and
 * route patches over the bound by themselves), else NULL. *fit (may be NULL) says what it holds and what was
 * left out. Cost linear in patches x (listeners + rules x backendRefs x services); memory: each
 * patch's value once (shared by its entries), an entry per cluster taken, nothing per route
 * left out, and routes past the bound are not walked. */
struct json_object *po_EG_EnvoyPatchPolicy(const po_CompiledOverride *c, const po_EGTopology *t, po_Arena *a,
                                           const char **why, po_EGFit *fit);

/* ---- programming an EnvoyPatchPolicy (the decision; the caller reads and writes) -----------
 * owned.h's decision, as for an EnvoyFilter: ours only when created by this controller for this
 * PropertyOverride (created = its own uid, owner-uid = the PropertyOverride's); a look-alike is
 * never changed or deleted. The status (Envoy Gateway's) is never written. */
po_OwnedPlan po_EG_Plan(const struct json_object *current, const struct json_object *desired, const char *owner_uid,
                        const char *created_uid);

/* What Envoy Gateway says of an EnvoyPatchPolicy it has seen: its status.ancestors[].conditions
 * for the object's current metadata.generation (observedGeneration), the worst over the
 * ancestors (EG writes one per Gateway). */
typedef enum {
  kPo_EGState_Pending = 0,  /* no condition for this generation yet */
  kPo_EGState_Programmed,   /* Accepted and Programmed True */
  kPo_EGState_Disabled,     /* Accepted=False reason Disabled: extensionApis.enableEnvoyPatchPolicy is off */
  kPo_EGState_NotAccepted,  /* Accepted=False, another reason */
  kPo_EGState_NotProgrammed,/* Programmed=False (ResourceNotFound, Invalid) */
} po_EGState;
typedef struct {
  po_EGState state;
  const char *reason, *message; /* of the deciding condition (borrowed from epp; "" when none) */
} po_EGStatus;
/* Reads only: epp may be an informer's shared tree. Linear in ancestors x conditions. Only the
 * ancestors naming the policy's own targetRef Gateway count. */
po_EGStatus po_EG_ReadStatus(const struct json_object *epp);

/* ---- EnvoyPatchPolicies written by hand (validate -f) -----------------------------------------
 * Each jsonPatches[i].operation.value decoded strictly against the Envoy message at its path in
 * the resource its type URL names (the value nested along the RFC 6901 path, array indices as
 * lists, and decoded as that resource), as errors of kind kPo_DiagKind_Target with patch_index
 * i; errors for what Envoy Gateway refuses at once (no value for add/replace, no from for
 * move/copy, a path not starting with '/', a type URL outside its five); warnings for patches
 * that do nothing or may fail only once applied: test (changes nothing), remove (fails when the
 * field is absent, and protojson leaves out every default value), a value on remove, a path
 * inside a google.protobuf.Any (its type is the generated resource's: not checked), a targetRef
 * Envoy Gateway never attaches to. Bounded: at most kPo_MaxPatchesPerOverride * 10 patches are
 * checked, the rest refused at once. Judged by j's snapshot (the Envoy Gateway release's); a field
 * it lacks that another snapshot has is said so, naming the releases that accept it
 * (po_Native_UnknownFieldHint). false only when out of memory. */
bool po_EG_CheckEnvoyPatchPolicy(const struct json_object *epp, const po_NativeJudge *j, po_Arena *a,
                                 po_Diagnostics *d);

/* Its releases and the Envoy API snapshot judging each (src/eg_releases.c). */
extern const po_MeshReleases po_EG_Releases;

#endif
