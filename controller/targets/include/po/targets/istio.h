/* The Istio target (DESIGN.md section 6b): one EnvoyFilter (networking.istio.io/v1alpha3) per
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
 *
 * Refused, each with its reason (po_Istio_Check): remove; an add of a proto3 zero value; an add
 * of an object value (except a whole Duration, which Istio replaces as Consul does); an array
 * before Istio 1.31; cluster-load-assignment; listener or route patches with services; paths
 * under transport_socket; Duration sub-fields; a non-default partition. */
#ifndef PO_TARGETS_ISTIO_H_
#define PO_TARGETS_ISTIO_H_

#include <stdbool.h>

#include "po/targets/override.h"

struct json_object;

#define PO_ISTIO_API_VERSION "networking.istio.io/v1alpha3"
/* Istio's first release with the MERGE_AND_REPLACE_LIST operation (its 1.31.0 change notes). */
enum { kPo_IstioMinorReplaceList = 31 };

/* Adds a kPo_DiagKind_Target error per patch Istio cannot express (c compiled without error).
 * false only when out of memory. */
bool po_Istio_Check(po_CompiledOverride *c, po_Arena *a);

/* The EnvoyFilter's name for a PropertyOverride: "propertyoverride-<name>" (one per
 * PropertyOverride, so two never share an object). In `a`. */
const char *po_Istio_FilterName(const po_CompiledOverride *c, po_Arena *a);
/* The EnvoyFilter's namespace: the PropertyOverride's, or the root namespace for Mesh. */
const char *po_Istio_FilterNamespace(const po_CompiledOverride *c);

/* The EnvoyFilter for an accepted override of an Istio target (a new reference). `selector` is
 * the Service's spec.selector (a map of labels; required, non-empty, for a Service target,
 * ignored for Mesh). NULL when out of memory; *why (may be NULL) gets the reason when the input
 * cannot make one (not an accepted Istio override, no selector), else NULL. */
struct json_object *po_Istio_EnvoyFilter(const po_CompiledOverride *c, const struct json_object *selector,
                                         po_Arena *a, const char **why);

/* An Istio release "1.N" or "1.N.P" as its minor N; -1 when it is not one. */
int po_Istio_ParseVersion(const char *s);

#endif
