/* What a mesh decides a resource is (po_Mesh_Classify): its direction and upstream service, from
 * its name as Consul's extensioncommon (resources.go) and connect/sni.go, or Istio's naming, do.
 * Pure: a name (and, for Consul's routes, the route's target clusters) in, a decision out.
 *
 * Consul (RuntimeConfig.Get*Payload):
 *   cluster, ClusterLoadAssignment: inbound when named `local_app`; else outbound, with a service
 *     only through an upstream's SNI set, which Consul's runtime config fills with the SNI of
 *     every target of the upstream's discovery chain: `svc.ns.dc.internal.<td>` (default
 *     partition) or `svc.ns.part.dc.internal-v1.<td>`, a subset's (one more label in front),
 *     any datacenter's (a failover or a redirect to another one), each the service it names;
 *     `failover-target~N~<SNI>` is looked up by its SNI. A peer's (`svc.ns.part.peer.external.
 *     <td>`: peered upstreams have no discovery chain there) and a prepared query's never match.
 *     From names alone, a redirect to another service is that service's; Consul also puts it
 *     in the set of the upstream whose chain redirects (docs/consul-semantics.md 4).
 *   listener: inbound when the name before the first ':' is `public_listener`; else outbound,
 *     the service of the upstream whose EnvoyID is that prefix (no ':' at all, a prepared
 *     query's or transparent proxy's `outbound_listener`: none).
 *   RouteConfiguration: inbound when `local_app` is the only cluster its routes target; else
 *     outbound, the upstream whose EnvoyID is the route's name.
 *   An EnvoyID is `[prepared_query:][[partition/]namespace/]name[?dc=DC|?peer=PEER]` (defaults
 *   left out); prepared queries and peers have no service a filter can name (no discovery
 *   chain: not in Consul's upstream map); another datacenter's upstream is its service's, but
 *   only while it is the proxy's one upstream of that service.
 * Istio: clusters (and endpoints) `outbound|port|subset|host` (service from a host
 *   `name.namespace.svc.<domain>`) and `inbound|port|...`; `InboundPassthroughCluster` (before
 *   Istio 1.20 `InboundPassthroughClusterIpv4`/`Ipv6`), the listener `virtualInbound` and
 *   `inbound|...` routes are inbound (istiod patches them in the SIDECAR_INBOUND context:
 *   pilot/pkg/networking/core/cluster.go), everything else outbound without a service.
 * Envoy Gateway (its default xDS name scheme, internal/xds/translator): a Gateway proxy has no
 *   inbound side, so everything is outbound; no resource names a Service (an HTTPRoute rule's
 *   cluster is `httproute/<route namespace>/<route>/rule/<index>`, whichever Services its
 *   backendRefs name), so none has one, and the note says why a `services` filter finds nothing;
 *   listeners and route configurations are the Gateway's (`<namespace>/<gateway>/<listener>`).
 *   Which clusters a PropertyOverride's policy reaches (its routes' namespaces) is the caller's
 *   to decide: po_Mesh_EGRouteNamespace gives a cluster's. */
#include <string.h>

#include "internal.h"

static const char kLocalApp[] = "local_app";

static char *dup(po_Arena *a, const char *s, size_t n) { return po_Arena_Strndup(a, s, n); }

/* Splits s at '.' into at most `max` labels; returns how many (max + 1 means "more"). */
static size_t labels(const char *s, const char **lab, size_t *len, size_t max) {
  size_t n = 0;
  const char *p = s;
  for (;;) {
    const char *dot = strchr(p, '.');
    size_t l = dot ? (size_t)(dot - p) : strlen(p);
    if (n == max) return max + 1;
    lab[n] = p;
    len[n++] = l;
    if (!dot) return n;
    p = dot + 1;
  }
}

static bool is(const char *l, size_t n, const char *word) { return n == strlen(word) && !memcmp(l, word, n); }

static bool keyword(const char *l, size_t n) {
  return is(l, n, "internal") || is(l, n, "internal-v1") || is(l, n, "external") || is(l, n, "query");
}

/* Consul's SNI of a discovery-chain target; fills out->service with the service it names, and
 * out->datacenter (preview's guess of the local one when the dump does not say it).
 * The forms (connect/sni.go) are positional, so the keyword is looked for where each form has
 * it, not as the first label that reads "internal": a service, namespace, partition or
 * datacenter may itself be named `internal` or `external` (api.internal.dc1.internal.<td> is
 * service api of namespace internal). A keyword counts only with a trust domain after it that
 * does not itself begin with one. */
static void consul_sni(const char *sni, po_Arena *a, po_MeshResource *out) {
  enum { kMax = 10 };
  const char *lab[kMax];
  size_t len[kMax];
  size_t n = labels(sni, lab, len, kMax);
  static const struct {
    size_t at;
    const char *word;
  } kForms[] = {
      {3, "internal"},    /* svc.ns.dc.internal.<td> */
      {3, "query"},       /* a prepared query's: svc.default.dc.query.<td> */
      {4, "internal-v1"}, /* svc.ns.part.dc.internal-v1.<td> */
      {4, "external"},    /* svc.ns.part.peer.external.<td> */
      {4, "internal"},    /* subset.svc.ns.dc.internal.<td> */
      {5, "internal-v1"}, /* subset.svc.ns.part.dc.internal-v1.<td> */
  };
  size_t f = 0, nforms = sizeof kForms / sizeof kForms[0];
  for (; f < nforms; f++) {
    size_t k = kForms[f].at;
    if (k + 1 < n && k + 1 < kMax && is(lab[k], len[k], kForms[f].word) && len[k + 1] &&
        !keyword(lab[k + 1], len[k + 1])) {
      break;
    }
  }
  if (f == nforms) {
    out->note = "not an SNI Consul gives an upstream: no service";
    return;
  }
  size_t k = kForms[f].at, dci = k - 1;
  bool v1 = is(kForms[f].word, strlen(kForms[f].word), "internal-v1");
  if (!strcmp(kForms[f].word, "external")) {
    out->note = "a peered service's SNI: never matches a services filter";
    return;
  }
  if (!strcmp(kForms[f].word, "query")) {
    out->note = "a prepared query's SNI: no service";
    return;
  }
  /* a subset's SNI has the subset's name in front; the service's labels follow it */
  size_t s0 = k == (v1 ? 5u : 4u) ? 1 : 0;
  out->datacenter = dup(a, lab[dci], len[dci]);
  out->service.name = dup(a, lab[s0], len[s0]);
  out->service.namespace_ = dup(a, lab[s0 + 1], len[s0 + 1]);
  out->service.partition = v1 ? dup(a, lab[s0 + 2], len[s0 + 2]) : "default";
  out->has_service = out->service.name && out->service.namespace_ && out->service.partition;
}

static void consul_cluster(const char *name, po_Arena *a, po_MeshResource *out) {
  if (!strcmp(name, kLocalApp)) {
    out->direction = kPo_TrafficDirection_Inbound;
    return;
  }
  static const char kFailover[] = "failover-target~";
  if (!strncmp(name, kFailover, sizeof kFailover - 1)) {
    /* failover-target~<index>~<SNI>: Consul splits on '~' and wants exactly three parts */
    const char *t1 = strchr(name + sizeof kFailover - 1, '~');
    if (!t1 || strchr(t1 + 1, '~')) {
      out->note = "a failover cluster name without one target SNI: no service";
      return;
    }
    consul_sni(t1 + 1, a, out);
    return;
  }
  consul_sni(name, a, out);
}

/* An upstream's EnvoyID -> its service (default namespace and partition left out in the ID). */
static void consul_envoy_id(const char *id, const char *dc, po_Arena *a, po_MeshResource *out) {
  static const char kPq[] = "prepared_query:";
  if (!strncmp(id, kPq, sizeof kPq - 1)) {
    out->note = "a prepared query's upstream: no service";
    return;
  }
  const char *q = strchr(id, '?');
  size_t n = q ? (size_t)(q - id) : strlen(id);
  if (q && !strncmp(q, "?peer=", 6)) {
    out->note = "a peered upstream: never matches a services filter";
    return;
  }
  if (n == 0) {
    out->note = "no upstream ID in the name: no service";
    return;
  }
  const char *parts[3];
  size_t lens[3], np = 0;
  const char *p = id;
  while (np < 3) {
    const char *sl = memchr(p, '/', n - (size_t)(p - id));
    parts[np] = p;
    lens[np++] = sl ? (size_t)(sl - p) : n - (size_t)(p - id);
    if (!sl) break;
    p = sl + 1;
    if (np == 3) {
      out->note = "not an upstream ID: no service";
      return;
    }
  }
  out->service.name = dup(a, parts[np - 1], lens[np - 1]);
  out->service.namespace_ = np >= 2 ? dup(a, parts[np - 2], lens[np - 2]) : "default";
  out->service.partition = np == 3 ? dup(a, parts[0], lens[0]) : "default";
  out->has_service = out->service.name && out->service.namespace_ && out->service.partition;
  if (out->has_service && q && !strncmp(q, "?dc=", 4) && (!dc || strcmp(q + 4, dc))) {
    /* Consul's runtime config (agent/xds/extensionruntime) keys upstreams by service name,
     * namespace and partition, with the EnvoyID of the one written last: an upstream in another
     * datacenter is that service's when it is the proxy's only upstream of it; with a local one
     * as well, which of the two a filter matches is Go's map order, i.e. chance. */
    out->note = po_Arena_Printf(a, "an upstream in datacenter %s: Consul matches it to this service only when the "
                                   "proxy has no other upstream of it (it keeps one per service)", q + 4);
  }
}

/* ---- the clusters a RouteConfiguration's routes target (Consul's RouteClusterNames) ---- */

static const upb_Message *msg_field(const upb_Message *m, const upb_MessageDef *d, const char *name,
                                    const upb_MessageDef **sd) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || !upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f) || !upb_Message_Has(m, f)) return NULL;
  *sd = upb_FieldDef_MessageSubDef(f);
  return upb_Message_Get(m, f).msg_val;
}

static const upb_Array *msg_list(const upb_Message *m, const upb_MessageDef *d, const char *name,
                                 const upb_MessageDef **ed) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || !upb_FieldDef_IsSubMessage(f) || !upb_FieldDef_IsRepeated(f)) return NULL;
  *ed = upb_FieldDef_MessageSubDef(f);
  return upb_Message_Get(m, f).array_val;
}

static upb_StringView str_field(const upb_Message *m, const upb_MessageDef *d, const char *name) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  upb_StringView none = {"", 0};
  return f && upb_FieldDef_CType(f) == kUpb_CType_String && !upb_FieldDef_IsRepeated(f) ? upb_Message_Get(m, f).str_val
                                                                                          : none;
}

/* Whether local_app is the one cluster the routes name (Consul's IsRouteToLocalAppCluster):
 * counts what is local_app and what is not, in one pass over the routes. */
static bool routes_only_local_app(const po_Message *r) {
  bool local = false, other = false;
  const upb_MessageDef *vd = NULL;
  const upb_Array *vhs = msg_list(r->msg, r->def, "virtual_hosts", &vd);
  for (size_t i = 0; vhs && i < upb_Array_Size(vhs); i++) {
    const upb_MessageDef *rd = NULL;
    const upb_Array *routes = msg_list(upb_Array_Get(vhs, i).msg_val, vd, "routes", &rd);
    for (size_t j = 0; routes && j < upb_Array_Size(routes); j++) {
      const upb_MessageDef *ad = NULL;
      const upb_Message *act = msg_field(upb_Array_Get(routes, j).msg_val, rd, "route", &ad);
      if (!act) continue;
      upb_StringView c = str_field(act, ad, "cluster");
      if (c.size) (c.size == sizeof kLocalApp - 1 && !memcmp(c.data, kLocalApp, c.size)) ? (local = true) : (other = true);
      const upb_MessageDef *wd = NULL, *cd = NULL;
      const upb_Message *w = msg_field(act, ad, "weighted_clusters", &wd);
      const upb_Array *cs = w ? msg_list(w, wd, "clusters", &cd) : NULL;
      for (size_t k = 0; cs && k < upb_Array_Size(cs); k++) {
        upb_StringView n = str_field(upb_Array_Get(cs, k).msg_val, cd, "name");
        if (n.size) (n.size == sizeof kLocalApp - 1 && !memcmp(n.data, kLocalApp, n.size)) ? (local = true) : (other = true);
      }
    }
  }
  return local && !other;
}

/* ---- Istio ---- */

static void istio_cluster(const char *name, po_Arena *a, po_MeshResource *out) {
  if (!strncmp(name, "inbound|", 8) || !strncmp(name, "InboundPassthroughCluster", 25)) {
    out->direction = kPo_TrafficDirection_Inbound;
    return;
  }
  if (strncmp(name, "outbound|", 9)) {
    out->note = "not a service's cluster (Istio names them outbound|port|subset|host): no service";
    return;
  }
  const char *port_end = strchr(name + 9, '|');
  const char *subset_end = port_end ? strchr(port_end + 1, '|') : NULL;
  if (!subset_end) {
    out->note = "an outbound cluster name without port|subset|host: no service";
    return;
  }
  const char *host = subset_end + 1;
  enum { kMax = 8 };
  const char *lab[kMax];
  size_t len[kMax];
  size_t n = labels(host, lab, len, kMax);
  if (n < 3 || n > kMax || !is(lab[2], len[2], "svc")) {
    out->note = po_Arena_Printf(a, "host %s is not a Kubernetes service (name.namespace.svc...): no service", host);
    return;
  }
  out->service.name = dup(a, lab[0], len[0]);
  out->service.namespace_ = dup(a, lab[1], len[1]);
  out->service.partition = "default";
  out->has_service = out->service.name && out->service.namespace_;
}

static const char kEGRoute[] = "httproute/";

const char *po_Mesh_EGRouteNamespace(const char *name, po_Arena *a) {
  if (!name || strncmp(name, kEGRoute, sizeof kEGRoute - 1)) return NULL;
  const char *ns = name + sizeof kEGRoute - 1, *slash = strchr(ns, '/');
  const char *rule = slash ? strchr(slash + 1, '/') : NULL;
  if (!slash || slash == ns || !rule || strncmp(rule, "/rule/", 6)) return NULL;
  return dup(a, ns, (size_t)(slash - ns));
}

static void eg_resource(const po_DumpResource *r, po_MeshResource *out) {
  const char *name = r->name ? r->name : "";
  if (r->type == kPo_ResourceType_Listener || r->type == kPo_ResourceType_Route) {
    out->note = "the Gateway's: no one service";
  } else if (!strncmp(name, kEGRoute, sizeof kEGRoute - 1)) {
    out->note = "an HTTPRoute rule's cluster (Envoy Gateway names it httproute/NS/ROUTE/rule/N, not after a Service: "
                "a patch naming services is matched by the rule's backendRefs, which render reads)";
  } else {
    out->note = "not an HTTPRoute rule's cluster (the controller patches only those)";
  }
}

bool po_Mesh_Classify(po_Mesh mesh, const char *datacenter, const po_DumpResource *r, po_Arena *a,
                      po_MeshResource *out) {
  memset(out, 0, sizeof *out);
  out->resource_type = r->type;
  out->direction = kPo_TrafficDirection_Outbound;
  const char *name = r->name ? r->name : "";
  if (mesh == kPo_Mesh_EnvoyGateway) {
    eg_resource(r, out);
    return true;
  }
  if (mesh == kPo_Mesh_Istio) {
    switch (r->type) {
      case kPo_ResourceType_Cluster:
      case kPo_ResourceType_ClusterLoadAssignment: istio_cluster(name, a, out); break;
      case kPo_ResourceType_Listener:
        if (!strcmp(name, "virtualInbound")) out->direction = kPo_TrafficDirection_Inbound;
        else out->note = "Istio listeners belong to no one service";
        break;
      case kPo_ResourceType_Route:
        if (!strncmp(name, "inbound|", 8)) out->direction = kPo_TrafficDirection_Inbound;
        else out->note = "Istio routes belong to no one service";
        break;
      default: return false;
    }
    return true;
  }
  switch (r->type) {
    case kPo_ResourceType_Cluster:
    case kPo_ResourceType_ClusterLoadAssignment: consul_cluster(name, a, out); break;
    case kPo_ResourceType_Listener: {
      const char *colon = strchr(name, ':');
      if (!colon) {
        out->note = "no EnvoyID before a ':' in the name: no service";
        break;
      }
      char *id = dup(a, name, (size_t)(colon - name));
      if (!id) return false;
      /* Consul cuts at the first ':', so a prepared query's listener
       * ("prepared_query:NAME:addr:port") yields "prepared_query", and transparent proxy's
       * catch-all is "outbound_listener": no upstream has either as its EnvoyID. */
      if (!strcmp(id, "public_listener")) out->direction = kPo_TrafficDirection_Inbound;
      else if (!strcmp(id, "prepared_query")) out->note = "a prepared query's upstream: no service";
      else if (!strcmp(id, "outbound_listener")) out->note = "transparent proxy's outbound listener: no one service";
      else consul_envoy_id(id, datacenter, a, out);
      break;
    }
    case kPo_ResourceType_Route: {
      /* a streamed dump's route is decoded here, looked at, and freed: classification keeps
       * nothing of it */
      po_Arena *scratch = r->message ? NULL : po_Arena_New();
      if (!r->message && !scratch) po_Arena_NoteOutOfMemory_(a);
      po_Status st;
      po_Status_Clear(&st);
      const po_Message *m = r->message ? r->message : scratch ? po_DumpResource_DecodeIn(r, scratch, &st) : NULL;
      if (!m && (!scratch || st.code == kPo_Status_NoMemory)) return po_Arena_FreeInto(scratch, a), false;
      if (m && routes_only_local_app(m)) out->direction = kPo_TrafficDirection_Inbound;
      else consul_envoy_id(name, datacenter, a, out);
      po_Arena_FreeInto(scratch, a);
      break;
    }
    default: return false;
  }
  return true;
}

const char *po_Mesh_Name(po_Mesh m) {
  return m == kPo_Mesh_Istio ? "istio" : m == kPo_Mesh_EnvoyGateway ? "envoy-gateway" : "consul";
}
