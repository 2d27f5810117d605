/* What Envoy Gateway releases generate differently (po_MeshUpgradeFacts, for upgrade-check). From
 * Envoy Gateway's public sources at v1.9.1 (github.com/envoyproxy/gateway):
 * - names: release-notes/v1.5.0.yaml (the xDS listener named after its port and protocol, behind
 *   the XDSNameSchemeV2 runtime flag, off by default); api/v1alpha1/envoygateway_helpers.go
 *   (defaultRuntimeFlags: XDSNameSchemeV2 still false in 1.9); internal/xds/translator/listener.go
 *   (xdsListenerName "<protocol>-<port>", the route configuration of a plain HTTP listener
 *   "http-<port>", an HTTPS listener's keeping its name). No supported release turns it on by
 *   default, so the new names apply only when the check is told the flag is set.
 * - DNS clusters: release-notes/v1.9.0.yaml and internal/xds/translator/cluster.go (1.9 generates
 *   them with cluster_type "envoy.cluster.dns", a DnsCluster, in place of type STRICT_DNS and the
 *   deprecated dns_refresh_rate / respect_dns_ttl; Envoy then reads dns_lookup_family from the
 *   DnsCluster too). The DnsCluster's other settings (dns_failure_refresh_rate, dns_jitter) are
 *   read from it alone as well. */
#include "po/targets/mesh_ops.h"

static const po_MeshNameChange kNames[] = {
    {kPo_ResourceType_Listener, "<gateway namespace>/<gateway>/<listener>", "<protocol>-<port>", 0, 5,
     "runtimeFlags XDSNameSchemeV2 (the EnvoyGateway configuration)", NULL},
    {kPo_ResourceType_Route, "<gateway namespace>/<gateway>/<listener>", "http-<port>", 0, 5,
     "runtimeFlags XDSNameSchemeV2 (the EnvoyGateway configuration)",
     "an HTTPS listener's route configuration keeps its name"},
};

static const char *const kDnsFields[] = {"type", "dns_refresh_rate", "respect_dns_ttl", "dns_lookup_family",
                                         "dns_failure_refresh_rate", "dns_jitter", NULL};

static const po_MeshGeneratedExtension kExtensions[] = {
    {9, kPo_ResourceType_Cluster, "DNS clusters (Backends of hostnames)", "cluster_type", "envoy.cluster.dns",
     "envoy.extensions.clusters.dns.v3.DnsCluster", kDnsFields},
};

extern const po_MeshUpgradeFacts po_EG_Upgrade;
const po_MeshUpgradeFacts po_EG_Upgrade = {kNames, sizeof kNames / sizeof *kNames, kExtensions,
                                           sizeof kExtensions / sizeof *kExtensions};
