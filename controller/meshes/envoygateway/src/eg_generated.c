/* What Envoy Gateway v1.9.1 generates in a oneof a PropertyOverride's path can reach, and the
 * verdict on a patch that sets a member of one (eg_generated.h, issue 23 C1).
 *
 * A path reaches only singular message fields (no list, map or Any: Consul's PatchStruct), so
 * the oneofs with more than one member a patch can meet are few: those of the table below, and
 * these, which Envoy Gateway v1.9.1 never sets (internal/xds/translator, and none of the 656
 * clusters, 367 listeners, 312 route configurations of testdata/out/xds-ir/ has them): Cluster
 * lb_config (its balancing is load_balancing_policy), common_lb_config's
 * locality_config_specifier (buildXdsCluster sets CommonLbConfig{} and only ever clears it),
 * lrs_server's and upstream_bind_config/source_address's, http_protocol_options/
 * header_key_format's (its HTTP/1 options are in typed_extension_protocol_options, a map);
 * Listener filter_chain_matcher's (and the matchers below it) and connection_balance_config's;
 * RouteConfiguration vhds/config_source's; a ClusterLoadAssignment has none a path reaches (its
 * endpoints are a list). There only this PropertyOverride's own earlier patches can have set
 * another member. No oneof a path reaches is set by Envoy Gateway for some policies and not
 * others; the one whose member varies varies with the backend (a Service or a Backend). */
#include "eg_generated.h"

#include <string.h>

#include "po/engine.h"

typedef enum {
  kGen_Always,          /* set to `member` in every such resource that has the oneof's message */
  kGen_ServiceBackends, /* `member` for a Service backend's cluster, `others` for other backends' */
} GenWhen;

typedef struct {
  po_ResourceType rt;
  const char *parent; /* proto field names from the resource to the oneof's message; "" the resource */
  const char *oneof;
  const char *member; /* the member Envoy Gateway sets */
  const char *shown;  /* how it reads in the generated resource */
  const char *where;  /* in which resources */
  GenWhen when;
  const char *others; /* kGen_ServiceBackends: what the other backends' clusters hold */
} Generated;

static const Generated kGenerated[] = {
    /* cluster.go buildXdsCluster, `switch args.endpointType`: EndpointTypeStatic (buildEndpointType:
     * every Service backend, an ExternalName Service being refused as a backend in
     * gatewayapi/route.go) sets Type EDS; EndpointTypeDNS (a Backend of hostnames) and
     * EndpointTypeDynamicResolver set ClusterType. testdata: 574 of 656 clusters `type`, 82
     * `clusterType` (76 envoy.cluster.dns, 6 envoy.clusters.dynamic_forward_proxy). */
    {kPo_ResourceType_Cluster, "", "cluster_discovery_type", "type", "type: EDS",
     "on the cluster of every Service backend", kGen_ServiceBackends,
     "the cluster of an Envoy Gateway Backend of hostnames holds 'cluster_type' (envoy.cluster.dns), and that "
     "of a dynamic-resolver Backend 'cluster_type' (envoy.clusters.dynamic_forward_proxy)"},
    /* cluster.go buildXdsCluster, case EndpointTypeStatic: EdsConfig with ConfigSource_Ads; the
     * other clusters have no eds_cluster_config. testdata: 564 of 656 clusters `ads`, the others
     * no edsClusterConfig. */
    {kPo_ResourceType_Cluster, "eds_cluster_config/eds_config", "config_source_specifier", "ads", "ads: {}",
     "on every EDS cluster (every Service backend's)", kGen_Always, NULL},
    /* listener.go buildXdsTCPListener, buildXdsQuicListener, buildXdsUDPListener and
     * listener_ready.go: Address_SocketAddress. testdata: 367 of 367 listeners. */
    {kPo_ResourceType_Listener, "address", "address", "socket_address", "socket_address: {address, port_value}",
     "on every listener", kGen_Always, NULL},
    /* the same functions: SocketAddress_PortValue, the Gateway listener's port. testdata: 367 of 367. */
    {kPo_ResourceType_Listener, "address/socket_address", "port_specifier", "port_value",
     "port_value: the listener's port", "on every listener", kGen_Always, NULL},
};

const char *po_EG_GeneratedMember(po_ResourceType rt, const char *parent, const char *oneof, bool *always) {
  for (size_t r = 0; r < sizeof kGenerated / sizeof *kGenerated; r++) {
    const Generated *g = &kGenerated[r];
    if (g->rt != rt || strcmp(g->oneof, oneof) != 0 || strcmp(g->parent, parent) != 0) continue;
    if (always) *always = g->when == kGen_Always;
    return g->member;
  }
  return NULL;
}

/* Whether segments 0..k-1 of patch i are `parent` ("a/b", "" for none). */
static bool parent_is(const char *parent, const po_Override *o, size_t i, size_t k) {
  const char *p = parent;
  for (size_t m = 0; m < k; m++) {
    po_PathSegment s;
    if (!po_Override_Segment(o, i, m, &s)) return false;
    size_t n = strlen(s.name);
    if (strncmp(p, s.name, n) != 0 || (p[n] != '/' && p[n] != '\0')) return false;
    p += n + (p[n] == '/');
  }
  return *p == '\0';
}

static const Generated *generated(const po_Override *o, size_t i, size_t k, const char *oneof) {
  po_ResourceType rt = po_Override_ResourceType(o, i);
  for (size_t r = 0; r < sizeof kGenerated / sizeof *kGenerated; r++) {
    const Generated *g = &kGenerated[r];
    if (g->rt == rt && !strcmp(g->oneof, oneof) && parent_is(g->parent, o, i, k)) return g;
  }
  return NULL;
}

/* Whether patch j's filter matches a resource of service s (NULL: of every service). */
static bool reaches(const po_CompiledOverride *c, size_t j, const po_ServiceName *s) {
  po_Payload p = {po_Override_ResourceType(c->override, j), po_Override_Direction(c->override, j), s};
  return s ? po_ResourceFilter_Matches(&c->args->patches[j].resource_filter, &p)
           : c->args->patches[j].resource_filter.service_count == 0;
}

bool po_EG_Meets(const po_CompiledOverride *c, size_t j, size_t i) {
  const po_ResourceFilter *fi = &c->args->patches[i].resource_filter;
  if (!fi->service_count || reaches(c, j, NULL)) return true;
  for (size_t k = 0; k < fi->service_count; k++) {
    if (reaches(c, j, &fi->services[k])) return true;
  }
  return false;
}

/* Whether patches j and i resolve to the same fields for their first n segments. */
static bool same_prefix(const po_Override *o, size_t j, size_t i, size_t n) {
  for (size_t m = 0; m < n; m++) {
    po_PathSegment x, y;
    if (!po_Override_Segment(o, j, m, &x) || !po_Override_Segment(o, i, m, &y) || strcmp(x.full_name, y.full_name)) {
      return false;
    }
  }
  return true;
}

/* The fields of the message holding segment s (its full name less ".name"), fetched from the
 * schema once per segment however many earlier values are looked into. False when out of memory. */
static bool members_of(const po_EnvoyApi *api, const po_PathSegment *s, po_Arena *a, po_Explanation *ex, bool *loaded) {
  if (*loaded) return true;
  const char *msg = po_Arena_Strndup(a, s->full_name, strlen(s->full_name) - strlen(s->name) - 1);
  po_Status st;
  po_Status_Clear(&st);
  *ex = (po_Explanation){0};
  if (!msg || (!po_Explain(&(po_ExplainOptions){.api = api}, msg, a, ex, &st) && po_Engine_OutOfMemory(a))) return false;
  *loaded = true;
  return true;
}

typedef struct {
  const char *member; /* the member an earlier patch sets, or NULL */
  size_t patch;       /* that patch */
  bool in_value;      /* set by the object value of an ancestor, not by the path */
  bool cleared;       /* an earlier object value at an ancestor put the oneof's message in place
                       * without any member: neither the generated member nor an earlier one is
                       * left (a JSON Patch add replaces the member whole, as Consul's does) */
} Earlier;

/* What patch j's value (j replaces segment nj-1 of patch i's path, an ancestor of s's message)
 * puts in segment s's oneof, into *e: a member, as written (proto field names: Consul's); or
 * nothing, the oneof cleared, when the value leaves the message out or holds none of its members.
 * A value holding the message without a member of a `(validate.required)` oneof clears nothing
 * Envoy Gateway keeps: that entry fails its validation alone (every such entry is Invalid), so
 * it is left as not said (false). Reads the value in place: nothing is allocated. */
static bool value_says(const po_CompiledOverride *c, size_t j, size_t nj, size_t i, size_t k,
                       const po_PathSegment *s, const po_Explanation *ex, Earlier *e) {
  const po_Value *v = c->args->patches[j].value;
  for (size_t m = nj; m < k && v; m++) {
    po_PathSegment p;
    if (!po_Override_Segment(c->override, i, m, &p)) return false;
    v = po_Value_Kind(v) == kPo_ValueKind_Map ? po_Value_Get(v, p.name) : NULL;
  }
  if (!v || po_Value_Kind(v) != kPo_ValueKind_Map) {
    *e = (Earlier){NULL, j, true, true}; /* the message is left out: replaced by a value without it */
    return true;
  }
  bool required = false;
  for (size_t f = 0; f < ex->field_count; f++) {
    if (!ex->fields[f].oneof || strcmp(ex->fields[f].oneof, s->oneof)) continue;
    required |= ex->fields[f].oneof_required;
    if (po_Value_Get(v, ex->fields[f].name)) {
      *e = (Earlier){ex->fields[f].name, j, true, false};
      return true;
    }
  }
  if (required) return false;
  *e = (Earlier){NULL, j, true, true};
  return true;
}

/* The member of the oneof of patch i's segment k that the latest earlier patch of this
 * PropertyOverride setting one sets on a resource patch i reaches: through its path, or in the
 * object value it gives an ancestor; or the oneof cleared by such a value (Earlier.cleared). An
 * earlier value holding the message without a member of a required oneof does not count as
 * clearing the generated one: Envoy Gateway validates each entry's result alone, so such an
 * entry fails there and leaves the generated member in place. Cost: the earlier patches (at most
 * kPo_MaxPatchesPerOverride) times the path's length, and one schema lookup. False when out of
 * memory. */
static bool earlier(const po_CompiledOverride *c, size_t i, size_t k, const po_PathSegment *s, po_Arena *a,
                    Earlier *out) {
  const po_Override *o = c->override;
  po_Explanation ex;
  bool loaded = false;
  *out = (Earlier){0};
  for (size_t j = i; j-- > 0;) {
    if (po_Override_ResourceType(o, j) != po_Override_ResourceType(o, i) ||
        po_Override_Direction(o, j) != po_Override_Direction(o, i) || po_Override_Op(o, j) != kPo_Op_Add ||
        !po_EG_Meets(c, j, i)) {
      continue;
    }
    size_t nj = po_Override_SegmentCount(o, j);
    po_PathSegment t;
    if (nj > 0 && nj <= k && same_prefix(o, j, i, nj)) {
      if (!members_of(po_Override_Api(c->override), s, a, &ex, &loaded)) return false;
      if (value_says(c, j, nj, i, k, s, &ex, out)) return true;
      continue;
    }
    if (nj > k && same_prefix(o, j, i, k) && po_Override_Segment(o, j, k, &t) && t.oneof &&
        !strcmp(t.oneof, s->oneof)) {
      *out = (Earlier){t.name, j, false, false};
      return true;
    }
  }
  return true;
}

/* "/a/b/c", segments 0..k of patch i. */
static const char *pointer_to(const po_Override *o, size_t i, size_t k, po_Arena *a) {
  po_TextBuf t = {.a = a};
  for (size_t m = 0; m <= k; m++) {
    po_PathSegment s;
    if (!po_Override_Segment(o, i, m, &s)) return NULL;
    po_TextBuf_Puts(&t, "/");
    po_TextBuf_Puts(&t, s.name);
  }
  return t.oom ? NULL : t.buf;
}

/* What to do instead of setting member s where `held` is: a scalar member can come with the
 * parent set whole in one patch; a message member cannot (a PropertyOverride's object values
 * hold scalars only, and clearing the parent in an earlier entry fails Envoy Gateway's
 * validation of that entry, the oneof being required). */
static const char *instead(const po_PathSegment *s, const char *parent, const char *held, po_Arena *a) {
  if (!s->message_type) {
    return po_Arena_Printf(a, "To have '%s' instead, set %s whole, to an object holding '%s' and the other fields "
                              "it needs: the add then replaces '%s' in both", s->name, parent, s->name, held);
  }
  return po_Arena_Printf(a, "A PropertyOverride cannot switch it on Envoy Gateway; write an EnvoyPatchPolicy by "
                            "hand whose add replaces %s whole with an object holding '%s'", parent, s->name);
}

/* The verdict on segment k (a member of a real oneof), into *out; false when out of memory. */
static bool segment_verdict(const po_CompiledOverride *c, size_t i, size_t k, const po_PathSegment *s,
                            po_Arena *a, po_EGOneof *out) {
  const po_Override *o = c->override;
  Earlier e;
  if (!earlier(c, i, k, s, a, &e)) return false;
  bool clash_earlier = e.member && strcmp(e.member, s->name) != 0;
  const Generated *g = clash_earlier || e.cleared ? NULL : generated(o, i, k, s->oneof);
  bool clash_generated = g && strcmp(g->member, s->name) != 0;
  bool backends = g && !clash_generated && g->when == kGen_ServiceBackends &&
                  c->args->patches[i].resource_filter.service_count == 0;
  if (!clash_earlier && !clash_generated && !backends) return true; /* the member it holds, or none */
  const char *at = pointer_to(o, i, k, a), *parent = k ? pointer_to(o, i, k - 1, a) : "";
  const char *msg = po_Arena_Strndup(a, s->full_name, strlen(s->full_name) - strlen(s->name) - 1);
  const char *rw = po_Override_ResourceType(o, i) == kPo_ResourceType_Listener ? "listener" : "cluster";
  if (!at || !parent || !msg) return false;
  const char *held = clash_earlier ? e.member : g->member;
  const char *head = po_Arena_Printf(a, "%s is a member of oneof '%s' of %s", at, s->oneof, msg);
  const char *clash = po_Arena_Printf(
      a, "a JSON Patch adds '%s' beside '%s', and protojson refuses the %s with both (the policy becomes Invalid, "
         "none of its patches applied), where Consul's add clears '%s'", s->name, held, rw, held);
  if (!head || !clash) return false;
  out->severity = backends ? kPo_Severity_Warning : kPo_Severity_Error;
  if (clash_earlier) {
    out->text = po_Arena_Printf(a, "%s, and Patches[%zu] of this PropertyOverride sets its member '%s'%s: %s. Set one "
                                   "member of it only", head, e.patch, held, e.in_value ? " (in its object value)" : "",
                                clash);
  } else if (clash_generated) {
    const char *alt = k ? instead(s, parent, held, a)
                        : po_Arena_Printf(a, "Set /%s instead (a JSON Patch replaces it, as Consul's add does)%s%s", held,
                                          g->others ? "; " : "", g->others ? g->others : "");
    out->text = alt ? po_Arena_Printf(a, "%s, whose member Envoy Gateway generates as '%s' (%s) %s: %s. %s", head, held,
                                      g->shown, g->where, clash, alt)
                    : NULL;
  } else {
    out->text = po_Arena_Printf(
        a, "%s: Envoy Gateway generates '%s' (%s) %s, but %s; on those a JSON Patch adds '%s' beside it and "
           "protojson refuses the %s with both (the policy becomes Invalid). Name the Services in "
           "resourceFilter.services to patch only their clusters", head, held, g->shown, g->where, g->others, s->name, rw);
  }
  return out->text != NULL;
}

bool po_EG_OneofCheck(const po_CompiledOverride *c, size_t i, po_Arena *a, po_EGOneof *out) {
  *out = (po_EGOneof){0};
  if (po_Override_Op(c->override, i) != kPo_Op_Add) return true;
  size_t n = po_Override_SegmentCount(c->override, i);
  for (size_t k = 0; k < n; k++) {
    po_PathSegment s;
    po_EGOneof v = {0};
    if (!po_Override_Segment(c->override, i, k, &s)) return true;
    if (!s.oneof || s.oneof[0] == '_') continue; /* not a oneof, or proto3 optional's synthetic one */
    if (!segment_verdict(c, i, k, &s, a, &v)) return false;
    if (v.text && (v.severity == kPo_Severity_Error || !out->text)) *out = v;
    if (v.text && v.severity == kPo_Severity_Error) return true;
  }
  return true;
}
