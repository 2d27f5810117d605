/* Whose proxy a config dump is, when `preview --mesh` does not say: the mesh decides what the
 * resources' names mean (direction, service), so a guess that is wrong makes every resource
 * "matched by no patch" with nothing to say why. The dump says it twice: its bootstrap (Istio's
 * node metadata ISTIO_VERSION, Consul's consul.source.* stats tags) and the names each mesh's
 * control plane gives the clusters it generates. The bootstrap wins; names decide without one
 * (a dump taken with ?resource= or with the bootstrap cut out); nothing, and Consul is assumed,
 * as before detection existed, saying so. */
#include <string.h>

#include "preview.h"

static bool has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static bool has_suffix(const char *s, const char *x) {
  size_t n = strlen(s), m = strlen(x);
  return n >= m && !strcmp(s + n - m, x);
}

/* The mesh whose naming a cluster's name follows, or -1 when none is sure. */
static int cluster_mesh(const char *name) {
  static const char *const kIstioFixed[] = {"BlackHoleCluster", "PassthroughCluster", "InboundPassthroughCluster",
                                            "InboundPassthroughClusterIpv4", "InboundPassthroughClusterIpv6"};
  static const char *const kEgRoutes[] = {"httproute/", "grpcroute/", "tcproute/", "tlsroute/", "udproute/"};
  /* Istio: "outbound|9080||details.default.svc.cluster.local", "inbound|9080||", its fixed ones */
  if (has_prefix(name, "outbound|") || has_prefix(name, "inbound|")) return kPo_Mesh_Istio;
  for (size_t i = 0; i < sizeof kIstioFixed / sizeof *kIstioFixed; i++) {
    if (!strcmp(name, kIstioFixed[i])) return kPo_Mesh_Istio;
  }
  /* Envoy Gateway: a route's backends, "<route kind>/<namespace>/<route>/rule/<index>" */
  for (size_t i = 0; i < sizeof kEgRoutes / sizeof *kEgRoutes; i++) {
    if (has_prefix(name, kEgRoutes[i]) && strstr(name, "/rule/")) return kPo_Mesh_EnvoyGateway;
  }
  /* Consul: an upstream's SNI, "<service>.<namespace>.<datacenter>.internal.<trust domain>.consul",
   * and the local app's */
  if (has_suffix(name, ".consul") || !strcmp(name, "local_app")) return kPo_Mesh_Consul;
  return -1;
}

/* The mesh most clusters are named as, with how many and the first; false when none is. */
static bool by_names(const po_ConfigDump *d, po_Arena *a, po_PreviewOptions *opt) {
  size_t votes[kPo_MeshSlots] = {0}, clusters = 0;
  const char *first[kPo_MeshSlots] = {0};
  for (size_t i = 0; i < d->count; i++) {
    const po_DumpResource *r = &d->resources[i];
    if (r->type != kPo_ResourceType_Cluster || !r->name) continue;
    clusters++;
    int m = cluster_mesh(r->name);
    if (m < 0) continue;
    if (!votes[m]++) first[m] = r->name;
  }
  size_t best = 0;
  for (size_t m = 1; m < kPo_MeshSlots; m++) best = votes[m] > votes[best] ? m : best;
  if (!votes[best]) return false;
  opt->mesh = (po_Mesh)best;
  opt->mesh_reason = po_Arena_Printf(a, "%zu of its %zu cluster%s named as %s names them (the first: %s)", votes[best],
                                     clusters, clusters == 1 ? "" : "s", po_Mesh_Name(opt->mesh), first[best]);
  return true;
}

bool po_Preview_DetectMesh(const po_ConfigDump *d, po_Arena *a, po_PreviewOptions *opt) {
  opt->mesh_by = "dump";
  if (d->istio_version) {
    opt->mesh = kPo_Mesh_Istio;
    opt->mesh_reason = po_Arena_Printf(a, "its bootstrap's node metadata ISTIO_VERSION %s", d->istio_version);
  } else if (d->consul_service || d->consul_datacenter) {
    opt->mesh = kPo_Mesh_Consul;
    opt->mesh_reason = po_Arena_Printf(a, "its bootstrap's stats tag %s %s",
                                       d->consul_service ? "consul.source.service" : "consul.source.datacenter",
                                       d->consul_service ? d->consul_service : d->consul_datacenter);
  } else if (!by_names(d, a, opt)) {
    opt->mesh = kPo_Mesh_Consul;
    opt->mesh_by = "default";
    opt->mesh_reason = "nothing in the dump names its mesh (no ISTIO_VERSION or consul.source stats tag in a bootstrap, "
                       "no cluster named as a mesh names them)";
  }
  return opt->mesh_reason != NULL;
}
