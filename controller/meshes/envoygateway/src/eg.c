/* The Envoy Gateway adapter: refusals and the EnvoyPatchPolicy, from the compiled IR (eg.h).
 * Facts used, from Envoy Gateway's public sources (internal/xds/translator/jsonpatch.go,
 * api/v1alpha1/envoypatchpolicy_types.go, the listener translator):
 * - each jsonPatches[] entry is applied alone to the named resource marshalled by protojson
 *   with UseProtoNames (so snake_case names; fields at their proto3 default are absent;
 *   wrappers are bare values; a Duration is a string such as "5s"), with evanphx/json-patch's
 *   EnsurePathExistsOnAdd (an add creates absent parents) and the default
 *   AllowMissingPathOnRemove=false (a remove of an absent path fails), then unmarshalled and
 *   validated: a failure sets the policy's Programmed=False, reason Invalid;
 * - names (the default xDS name scheme): a listener and its HTTP route configuration are named
 *   "<gateway namespace>/<gateway>/<listener>"; Gateway listeners on one port share one xDS
 *   listener, the first one's (the first HTTP or HTTPS one's when there is one: the translator
 *   builds those before the TLS and TCP ones), and plain HTTP listeners on one port share its route
 *   configuration (found through the listener's default filter chain), where each HTTPS
 *   listener keeps its own; a route rule's cluster is "httproute/<ns>/<route>/rule/<i>", and its
 *   ClusterLoadAssignment has the cluster's name. */
#include "po/meshes/eg.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "eg_generated.h"
#include "eg_steps.h"

static const char kOom[] = "out of memory";
static const char *or_oom(const char *s) { return s ? s : kOom; }

/* Messages protojson does not write as an object of their fields: a path cannot go inside. */
static bool opaque_json(const char *type) {
  static const char *const kTypes[] = {"google.protobuf.Duration", "google.protobuf.Timestamp",
                                       "google.protobuf.FieldMask", "google.protobuf.Struct",
                                       "google.protobuf.Value",    "google.protobuf.ListValue"};
  for (size_t i = 0; type && i < sizeof kTypes / sizeof *kTypes; i++) {
    if (!strcmp(type, kTypes[i])) return true;
  }
  return false;
}

/* google.protobuf.*Value wrappers: protojson writes them bare, never {"value": v}. */
static bool is_wrapper(const char *type) {
  size_t n = type ? strlen(type) : 0;
  return n > 21 && !strncmp(type, "google.protobuf.", 16) && !strcmp(type + n - 5, "Value") &&
         strcmp(type, "google.protobuf.Value") != 0 && strcmp(type, "google.protobuf.ListValue") != 0;
}

static bool diag(po_CompiledOverride *c, po_Arena *a, size_t i, po_Severity sev, const char *msg) {
  const po_Patch *p = &c->args->patches[i];
  const char *text = po_Arena_Printf(a, "%s Envoy Gateway EnvoyPatchPolicy: %s",
                                     sev == kPo_Severity_Error ? "not expressible in an" : "in an", msg);
  if (!text) return false;
  po_Diagnostic *d = po_Diagnostics_Add(c->diags, sev, kPo_DiagKind_Target, (int)i, p->path, text);
  if (!d) return false;
  d->pos = p->pos;
  return true;
}

/* Whether patch i sets the field Envoy Gateway names the resource by (issue 23 B): a Cluster's,
 * Listener's or RouteConfiguration's `name`, a ClusterLoadAssignment's `cluster_name`. */
static bool renames(const po_Override *o, size_t i) {
  po_PathSegment s;
  if (po_Override_Op(o, i) != kPo_Op_Add || po_Override_SegmentCount(o, i) != 1 || !po_Override_Segment(o, i, 0, &s)) {
    return false;
  }
  return !strcmp(s.name, po_Override_ResourceType(o, i) == kPo_ResourceType_ClusterLoadAssignment ? "cluster_name" : "name");
}

/* Whether patch i sets an Any to a google.protobuf.Value (in protojson's form, po_Override_SetJson:
 * {"@type": ".../google.protobuf.Value"} without the "value" protojson requires). */
static bool any_of_value(const po_Override *o, size_t i, po_Arena *a) {
  static const char kValue[] = "/google.protobuf.Value";
  po_Value *v = po_Override_SetJson(o, i, a);
  const char *url = v && po_Value_Kind(v) == kPo_ValueKind_Map ? po_Value_String(po_Value_Get(v, "@type"), NULL) : NULL;
  size_t n = url ? strlen(url) : 0;
  return n >= sizeof kValue - 1 && !strcmp(url + n - (sizeof kValue - 1), kValue) && !po_Value_Get(v, "value");
}

static const char *resource_word(po_ResourceType rt) {
  switch (rt) {
    case kPo_ResourceType_Listener: return "listener";
    case kPo_ResourceType_Route: return "route configuration";
    case kPo_ResourceType_ClusterLoadAssignment: return "ClusterLoadAssignment";
    default: return "cluster";
  }
}

/* The reason patch i cannot be a JSON Patch with Consul's meaning, or NULL. */
static const char *reason(const po_CompiledOverride *c, size_t i, po_Arena *a) {
  const po_Override *o = c->override;
  const po_ResourceFilter *f = &c->args->patches[i].resource_filter;
  po_ResourceType rt = po_Override_ResourceType(o, i);
  if (po_Override_Direction(o, i) == kPo_TrafficDirection_Inbound) {
    return "inbound: a gateway has no local app, so Envoy Gateway generates no inbound listener or local-app "
           "cluster to patch; its listeners, route configurations and clusters are all outbound (use "
           "trafficDirection outbound)";
  }
  if ((rt == kPo_ResourceType_Listener || rt == kPo_ResourceType_Route) && f->service_count > 0) {
    return or_oom(po_Arena_Printf(
        a, "a %s patch with services: a gateway's %s is shared by every backend routed through it, so the patch "
           "cannot be limited to service '%s'; patch its clusters instead, or drop services to patch every %s",
        rt == kPo_ResourceType_Listener ? "listener" : "route", rt == kPo_ResourceType_Listener ? "listener" : "route configuration",
        f->services[0].name, rt == kPo_ResourceType_Listener ? "listener of the Gateway" : "route configuration of the Gateway"));
  }
  for (size_t k = 0; k < f->service_count; k++) {
    const char *part = f->services[k].partition;
    if (part && *part && strcmp(part, "default") != 0) {
      return or_oom(po_Arena_Printf(a, "services[%zu].partition '%s': Kubernetes has no admin partitions; only "
                                       "'default' (or none) can be matched", k, part));
    }
  }
  if (po_Override_Op(o, i) == kPo_Op_Remove) {
    return "remove: Envoy Gateway applies a JSON Patch remove, which fails (the policy becomes Programmed=False, "
           "reason Invalid, and none of its patches apply) when the field is absent from the generated resource, "
           "and protojson leaves out every field at its default value; Consul's remove of an absent field does "
           "nothing. Nothing at admission says what Envoy Gateway generated, so no remove is ever known to be safe. "
           "Instead: for a scalar field, add its zero value (the same as absent in proto3); or write an "
           "EnvoyPatchPolicy by hand for a field you know is generated";
  }
  size_t n = po_Override_SegmentCount(o, i);
  if (renames(o, i)) {
    return or_oom(po_Arena_Printf(
        a, "/%s renames the %s: Envoy Gateway finds the resource of every jsonPatches entry by its name, so this "
           "policy's later entries and every EnvoyPatchPolicy of the Gateway applied after it would not find it (the "
           "policy becomes Invalid and none of its patches apply)%s",
        rt == kPo_ResourceType_ClusterLoadAssignment ? "cluster_name" : "name", resource_word(rt),
        rt == kPo_ResourceType_Cluster ? "; and the routes Envoy Gateway generated still send to the old name"
        : rt == kPo_ResourceType_ClusterLoadAssignment ? "; and its cluster still asks EDS for the old name"
        : rt == kPo_ResourceType_Route ? "; and the listener still asks RDS for the old name" : ""));
  }
  if (any_of_value(o, i, a)) {
    return "an Any of google.protobuf.Value: Consul's Any holds the empty Value (no bytes), which protojson has no "
           "form for, so Envoy Gateway cannot write or read it back; name another type_url";
  }
  for (size_t k = 0; k + 1 < n; k++) {
    po_PathSegment s;
    if (!po_Override_Segment(o, i, k, &s)) return "the path did not resolve";
    if (opaque_json(s.message_type)) {
      return or_oom(po_Arena_Printf(a, "a field inside a %s (/%s/...): protojson writes it as %s, not as an "
                                       "object of its fields, so a JSON Patch cannot reach inside; set /%s whole%s",
                                    s.message_type, s.name,
                                    !strcmp(s.message_type, "google.protobuf.Duration") ? "a string such as \"5s\""
                                                                                        : "a string or bare JSON",
                                    s.name,
                                    !strcmp(s.message_type, "google.protobuf.Duration") ? " (e.g. to \"5s\")" : ""));
    }
  }
  return NULL;
}

bool po_EG_Check(po_CompiledOverride *c, po_Arena *a) {
  if (!c->override || !c->args) return true;
  for (size_t i = 0; i < c->args->patch_count; i++) {
    const char *why = reason(c, i, a);
    if (why == kOom || (why && !diag(c, a, i, kPo_Severity_Error, why))) return false;
    if (why) continue;
    po_EGOneof v; /* a oneof member beside the one Envoy Gateway generates (eg_generated.c) */
    if (!po_EG_OneofCheck(c, i, a, &v) || (v.text && !diag(c, a, i, v.severity, v.text))) return false;
  }
  return po_EG_StepCheck(c, a); /* each entry's result, on what Envoy Gateway generates (eg_steps.c) */
}

/* FNV-1a 64: stable across processes and versions, as the name is what finds the policy again. */
static uint64_t name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

const char *po_EG_PolicyName(const po_CompiledOverride *c, po_Arena *a) {
  const char *full = po_Arena_Printf(a, "propertyoverride-%s", c->name ? c->name : "");
  if (!full || strlen(full) <= kPo_EGMaxPolicyName) return full;
  /* A PropertyOverride name of 237 to 253 characters (issue 25): a readable prefix, then "-" and
   * 16 hex digits of the name's hash, 253 characters at most, a valid subdomain (a prefix cut
   * after a '.' or '-' would put it next to the '-'). Such names were refused before, so no policy
   * of the plain form is left behind. */
  size_t keep = kPo_EGMaxPolicyName - 17;
  char *out = po_Arena_Malloc(a, kPo_EGMaxPolicyName + 1);
  if (!out) return NULL;
  memcpy(out, full, keep);
  while (keep > 0 && (out[keep - 1] == '.' || out[keep - 1] == '-')) keep--;
  snprintf(out + keep, kPo_EGMaxPolicyName + 1 - keep, "-%016llx", (unsigned long long)name_hash(c->name));
  return out;
}

/* ---- names from the Gateway and its HTTPRoutes ---- */

static const char *str(const json_object *o, const char *k) { return po_Json_String(o, k); }
static const char *str_or(const json_object *o, const char *k, const char *dflt) {
  const char *s = po_Json_String(o, k);
  return s ? s : dflt;
}

/* Hands *v over to o[k] when ok so far (*v is NULL after: o owns it, or put freed it); a NULL
 * *v puts nothing. */
static bool adopt(bool ok, json_object *o, const char *k, json_object **v) {
  if (!ok || !*v) return ok;
  json_object *x = *v;
  *v = NULL;
  return po_Json_Put(o, k, x);
}

static size_t len_of(const json_object *arr) {
  return json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
}
static json_object *at(const json_object *arr, size_t i) { return json_object_array_get_idx(arr, i); }

typedef struct {
  const char **v;
  size_t n;
} Names;

/* Appends s (false: out of memory); `dedupe` looks for it first, for the few listener names
 * (a Gateway has at most 64 listeners), never for cluster names, which are distinct by
 * construction (one per route and rule), so a patch costs linear time in the rules. */
static bool name_add(Names *ns, const char *s, size_t cap, bool dedupe) {
  if (!s) return false;
  for (size_t i = 0; dedupe && i < ns->n; i++) {
    if (!strcmp(ns->v[i], s)) return true;
  }
  if (ns->n < cap) ns->v[ns->n++] = s;
  return true;
}

static bool is_http(const char *proto) { return proto && !strcmp(proto, "HTTP"); }
static bool is_https(const char *proto) { return proto && !strcmp(proto, "HTTPS"); }

/* The xDS listener names (listener) or route configuration names (route) of the Gateway. */
static bool listener_names(const json_object *gw, bool route, po_Arena *a, Names *out) {
  const char *gns = po_Json_Meta(gw, "namespace"), *gname = po_Json_Meta(gw, "name");
  json_object *ls = po_Json_Get(po_Json_Get(gw, "spec"), "listeners");
  size_t n = len_of(ls);
  out->v = po_Arena_Malloc(a, (n ? n : 1) * sizeof *out->v);
  out->n = 0;
  if (!out->v) return false;
  for (size_t i = 0; i < n; i++) {
    json_object *l = at(ls, i);
    const char *proto = str(l, "protocol");
    int64_t port = json_object_get_int64(po_Json_Get(l, "port"));
    bool udp = proto && !strcmp(proto, "UDP");
    /* the first earlier listener sharing what EG shares: the socket (port and TCP/UDP) for an
     * xDS listener; the port among plain HTTP listeners for a route configuration. EG builds the
     * xDS listeners of HTTP and HTTPS listeners before those of TLS and TCP ones, so a socket
     * with any of the former is named by the first of them, wherever TLS/TCP ones are listed. */
    size_t first = i, first_web = n;
    for (size_t k = 0; k < n && first_web == n && (k < i || !route); k++) {
      json_object *e = at(ls, k);
      const char *ep = str(e, "protocol");
      if (json_object_get_int64(po_Json_Get(e, "port")) != port) continue;
      bool web = is_http(ep) || is_https(ep);
      if (route) {
        if (is_http(proto) && is_http(ep) && first == i) first = k;
      } else if (udp == (ep && !strcmp(ep, "UDP"))) {
        if (k < i && first == i) first = k;
        if (web) first_web = k;
      }
    }
    if (!route && first_web < n) first = first_web;
    if (route && !is_http(proto) && !is_https(proto)) continue; /* TCP, TLS, UDP: no HTTP routes */
    const char *lname = str(at(ls, first), "name");
    if (!lname) continue;
    if (!name_add(out, po_Arena_Printf(a, "%s/%s/%s", gns, gname, lname), n, true)) return false;
  }
  return true;
}

/* Whether the Gateway's listener l lets an HTTPRoute of namespace rns attach. *selector: it
 * decides by a namespace selector, which needs the Namespaces' labels. */
static bool listener_allows(const json_object *l, const char *gns, const char *rns, bool *selector) {
  const char *proto = str(l, "protocol");
  if (!is_http(proto) && !is_https(proto)) return false;
  json_object *ar = po_Json_Get(l, "allowedRoutes");
  json_object *kinds = po_Json_Get(ar, "kinds");
  if (len_of(kinds)) {
    bool http = false;
    for (size_t k = 0; k < len_of(kinds); k++) {
      const char *g = str_or(at(kinds, k), "group", "gateway.networking.k8s.io");
      if (!strcmp(str_or(at(kinds, k), "kind", ""), "HTTPRoute") && !strcmp(g, "gateway.networking.k8s.io")) http = true;
    }
    if (!http) return false;
  }
  const char *from = str_or(po_Json_Get(ar, "namespaces"), "from", "Same");
  if (!strcmp(from, "All")) return true;
  if (!strcmp(from, "Selector")) {
    *selector = true;
    return false;
  }
  return !strcmp(gns, rns);
}

/* The Gateway a parentRef of a route of namespace rns names (*ns, *name), if it names one (the
 * Gateway API's defaults: group gateway.networking.k8s.io, kind Gateway, the route's namespace). */
static bool parent_gateway(const json_object *pr, const char *rns, const char **ns, const char **name) {
  if (strcmp(str_or(pr, "group", "gateway.networking.k8s.io"), "gateway.networking.k8s.io") ||
      strcmp(str_or(pr, "kind", "Gateway"), "Gateway") || !*str_or(pr, "name", "")) {
    return false;
  }
  *ns = str_or(pr, "namespace", rns);
  *name = str(pr, "name");
  return true;
}

void po_EG_RouteParents(const json_object *route, void (*fn)(void *ctx, const char *ns, const char *name), void *ctx) {
  const char *rns = po_Json_Meta(route, "namespace"), *ns, *name;
  json_object *prs = po_Json_Get(po_Json_Get(route, "spec"), "parentRefs");
  for (size_t p = 0; p < len_of(prs); p++) {
    if (parent_gateway(at(prs, p), rns, &ns, &name)) fn(ctx, ns, name);
  }
}

json_object *po_EG_RouteCopy(const json_object *route, bool followed) {
  json_object *st = json_object_new_object(), *md = json_object_new_object(), *spec = NULL, *prs = NULL;
  json_object *rspec = po_Json_Get(route, "spec"), *src = po_Json_Get(rspec, "parentRefs");
  bool ok = st && md && po_Json_Put(md, "name", json_object_new_string(po_Json_Meta(route, "name"))) &&
            po_Json_Put(md, "namespace", json_object_new_string(po_Json_Meta(route, "namespace")));
  ok = ok && (spec = json_object_new_object()) && (!src || json_object_deep_copy(src, &prs, NULL) == 0);
  ok = adopt(ok, spec, "parentRefs", &prs);
  /* of a followed route's rules, only their backendRefs (a cluster per rule with backends, named
   * by the rule's index): matches and filters are most of a rule and never read */
  json_object *rules = po_Json_Get(rspec, "rules"), *out = NULL;
  if (ok && followed && rules) {
    ok = (out = json_object_new_array()) != NULL;
    for (size_t i = 0; ok && i < len_of(rules); i++) {
      json_object *r = json_object_new_object(), *brs = NULL, *src_brs = po_Json_Get(at(rules, i), "backendRefs");
      ok = r && (!src_brs || json_object_deep_copy(src_brs, &brs, NULL) == 0);
      ok = adopt(ok, r, "backendRefs", &brs);
      json_object_put(brs);
      if (ok) ok = json_object_array_add(out, r) == 0;
      if (!ok) json_object_put(r);
    }
    ok = adopt(ok, spec, "rules", &out);
    json_object_put(out);
  }
  ok = adopt(ok, st, "metadata", &md);
  ok = adopt(ok, st, "spec", &spec);
  json_object_put(prs);
  json_object_put(md);
  json_object_put(spec);
  if (!ok) {
    json_object_put(st);
    return NULL;
  }
  return st;
}

json_object *po_EG_RouteTrim(const json_object *route) {
  json_object *t = po_EG_RouteCopy(route, true), *md = po_Json_Get(t, "metadata");
  json_object *src = po_Json_Get(route, "metadata");
  static const char *const kKeep[] = {"uid", "resourceVersion", "generation", "deletionTimestamp"};
  bool ok = t != NULL;
  for (size_t i = 0; ok && i < sizeof kKeep / sizeof *kKeep; i++) {
    json_object *v = po_Json_Get(src, kKeep[i]), *c = NULL;
    if (!v) continue;
    ok = json_object_deep_copy(v, &c, NULL) == 0 && po_Json_Put(md, kKeep[i], c);
  }
  if (!ok) {
    json_object_put(t);
    return NULL;
  }
  return t;
}

bool po_EG_NamespaceIn(const char *const *ns, size_t n, const char *rns) {
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(ns[i], "*") || !strcmp(ns[i], rns)) return true;
  }
  return false;
}

bool po_EG_RouteNamesGateway(const json_object *route, const char *ns, const char *gateway) {
  const char *rns = po_Json_Meta(route, "namespace"), *pns, *pname;
  json_object *prs = po_Json_Get(po_Json_Get(route, "spec"), "parentRefs");
  for (size_t p = 0; p < len_of(prs); p++) {
    if (parent_gateway(at(prs, p), rns, &pns, &pname) && !strcmp(pns, ns) && !strcmp(pname, gateway)) return true;
  }
  return false;
}

/* Whether route r attaches to the Gateway (its parentRefs name it, and a listener allows it).
 * *selector_listener: a listener it names admits it or not by a namespace selector, and no other
 * listener admits it (one that does decides: its clusters are the same whichever listener). */
static bool attached(const json_object *gw, const json_object *r, const char **selector_listener) {
  const char *sel_listener = NULL;
  const char *gns = po_Json_Meta(gw, "namespace"), *gname = po_Json_Meta(gw, "name"), *rns = po_Json_Meta(r, "namespace");
  json_object *prs = po_Json_Get(po_Json_Get(r, "spec"), "parentRefs"), *ls = po_Json_Get(po_Json_Get(gw, "spec"), "listeners");
  for (size_t p = 0; p < len_of(prs); p++) {
    json_object *pr = at(prs, p);
    const char *pns, *pname;
    if (!parent_gateway(pr, rns, &pns, &pname) || strcmp(pname, gname) || strcmp(pns, gns)) continue;
    const char *section = str(pr, "sectionName");
    json_object *port = po_Json_Get(pr, "port");
    for (size_t i = 0; i < len_of(ls); i++) {
      json_object *l = at(ls, i);
      if (section && strcmp(section, str_or(l, "name", ""))) continue;
      if (port && json_object_get_int64(port) != json_object_get_int64(po_Json_Get(l, "port"))) continue;
      bool sel = false;
      if (listener_allows(l, gns, rns, &sel)) return true;
      if (sel && !sel_listener) sel_listener = str_or(l, "name", "?");
    }
  }
  if (sel_listener && !*selector_listener) *selector_listener = sel_listener;
  return false;
}

typedef struct {
  const json_object *route;
  const char *ns, *name;
  size_t seq; /* its place among the inputs: the last of a namespace/name is kept */
  bool own;   /* of the PropertyOverride's (and the Gateway's) namespace: followed first */
  size_t rank; /* 0: own; 1 + i: spec.routeNamespaces[i] names it; then those "*" admits */
  bool skip;   /* left out: a tenant's rule sends to a patched Service and another backend */
} Route;

/* The order in which routes get room under the bound: the PropertyOverride's own namespace's
 * first, then those of the namespaces spec.routeNamespaces names, in its order, then those "*"
 * admits, each by namespace and name. So a route of another namespace never takes the room of
 * one of the Gateway's own namespace, a namespace "*" admits never that of a namespace named,
 * and a newcomer only ever displaces routes after it. */
static int by_route(const void *x, const void *y) {
  const Route *a = x, *b = y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  int c = strcmp(a->ns, b->ns);
  if (!c) c = strcmp(a->name, b->name);
  return c ? c : a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Whether backendRef b (of a route in namespace rns) is Service s. A backendRef into another
 * namespace than the route's counts only for a route of the Gateway's own namespace (gns: the
 * policy owner's, whose routes name backends anywhere, under their ReferenceGrants). A route of
 * another namespace gets such a backend only with a ReferenceGrant, which is not read, and
 * counting it would let any tenant whose HTTPRoute may attach to the Gateway name our Service
 * beside its own backend and so have every patch of that Service refused (the policy deleted):
 * such a rule is not patched (docs/crd.md). */
static bool backend_is(const json_object *b, const char *rns, const char *gns, const po_ServiceName *s) {
  const char *want_ns = s->namespace_ && *s->namespace_ ? s->namespace_ : "default";
  const char *ref_ns = str_or(b, "namespace", rns);
  return !strcmp(str_or(b, "group", ""), "") && !strcmp(str_or(b, "kind", "Service"), "Service") &&
         !strcmp(str_or(b, "name", ""), s->name) && !strcmp(ref_ns, want_ns) &&
         (!strcmp(ref_ns, rns) || !strcmp(rns, gns));
}

static bool backend_in(const json_object *b, const char *rns, const char *gns, const po_ResourceFilter *f) {
  for (size_t k = 0; k < f->service_count; k++) {
    if (backend_is(b, rns, gns, &f->services[k])) return true;
  }
  return false;
}

/* One cluster's name, "httproute/<ns>/<route>/rule/<i>", into buf (a namespace is at most 63
 * bytes and a name 253: it always fits). */
static const char *cluster_name(char *buf, size_t size, const Route *r, size_t rule) {
  snprintf(buf, size, "httproute/%s/%s/rule/%zu", r->ns, r->name, rule);
  return buf;
}

/* The clusters of route r that patch f touches: their count and (out non-NULL) their names,
 * appended; *bytes adds, per cluster, `base` plus its name's bytes as a JSON string and a comma
 * (the jsonPatches entry it becomes). *why when a rule would leak the patch to another backend.
 * Nothing is allocated without `out`: a route left out costs no memory. */
static bool route_clusters(const po_ResourceFilter *f, const char *gns, const Route *r, const json_object *rules,
                           size_t base, po_Arena *a, Names *out, size_t cap, size_t *count, size_t *bytes,
                           const char **why) {
  if (r->skip) return true;
  char buf[640];
  for (size_t i = 0; i < len_of(rules); i++) {
    json_object *brs = po_Json_Get(at(rules, i), "backendRefs");
    if (!len_of(brs)) continue; /* no backends (a redirect): no cluster */
    bool match = f->service_count == 0;
    const json_object *other = NULL;
    for (size_t k = 0; k < len_of(brs) && f->service_count; k++) {
      if (backend_in(at(brs, k), r->ns, gns, f)) match = true;
      else if (!other) other = at(brs, k);
    }
    if (!match) continue;
    if (other) {
      *why = or_oom(po_Arena_Printf(
          a, "HTTPRoute %s/%s rule %zu sends to %s '%s' besides service '%s': Envoy Gateway makes one cluster per "
             "rule (httproute/%s/%s/rule/%zu), so the patch would apply to that backend too; split the rule, or add "
             "the backend to services",
          r->ns, r->name, i, str_or(other, "kind", "Service"), str_or(other, "name", "?"), f->services[0].name,
          r->ns, r->name, i));
      return true;
    }
    const char *name = cluster_name(buf, sizeof buf, r, i);
    (*count)++;
    *bytes += base + po_Owned_StringBytes(name) + 1;
    if (out && !name_add(out, po_Arena_Printf(a, "%s", name), cap, false)) return false;
  }
  return true;
}

/* Route r's rules (*rules, NULL when none): its own, or for a stub (t->route_rules set) the whole
 * route's, fetched into *hold (the caller puts it after use): one route whole at a time. False
 * when out of memory. */
static bool rules_of(const po_EGTopology *t, const Route *r, json_object **rules, json_object **hold) {
  *hold = NULL;
  *rules = po_Json_Get(po_Json_Get(r->route, "spec"), "rules");
  if (*rules || !t->route_rules) return true;
  if (!(*hold = t->route_rules(t->route_ctx, r->ns, r->name))) return false;
  *rules = po_Json_Get(po_Json_Get(*hold, "spec"), "rules");
  return true;
}

/* ---- the EnvoyPatchPolicy ---- */

/* RFC 6901 from the resolved chain: proto field names, '~' and '/' escaped, a wrapper's
 * `value` dropped (protojson writes the wrapper bare). */
static const char *pointer(const po_Override *o, size_t i, po_Arena *a) {
  po_TextBuf t = {.a = a};
  size_t n = po_Override_SegmentCount(o, i);
  const char *prev_type = NULL;
  for (size_t k = 0; k < n; k++) {
    po_PathSegment s;
    if (!po_Override_Segment(o, i, k, &s)) return NULL;
    if (k > 0 && !strcmp(s.name, "value") && is_wrapper(prev_type)) break;
    po_TextBuf_Put(&t, "/", 1);
    for (const char *p = s.name; *p; p++) {
      if (*p == '~') po_TextBuf_Put(&t, "~0", 2);
      else if (*p == '/') po_TextBuf_Put(&t, "~1", 2);
      else po_TextBuf_Put(&t, p, 1);
    }
    prev_type = s.message_type;
  }
  if (!n) po_TextBuf_Put(&t, "", 0);
  return t.oom ? NULL : t.buf ? t.buf : "";
}

static const char *type_url(po_ResourceType t) {
  switch (t) {
    case kPo_ResourceType_Listener: return "type.googleapis.com/envoy.config.listener.v3.Listener";
    case kPo_ResourceType_Route: return "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    case kPo_ResourceType_ClusterLoadAssignment: return "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    default: return "type.googleapis.com/envoy.config.cluster.v3.Cluster";
  }
}

/* One jsonPatches entry: {type, name, operation}. The type URL and the operation ({op: add,
 * path, value}) are one json-c object per patch, shared by every entry of it (json-c counts
 * references): an entry costs one object and its name, so a policy's tree is a few times its
 * text whatever the value, not a copy of the value per cluster. */
static json_object *entry(json_object *url, const char *name, json_object *operation) {
  json_object *e = json_object_new_object();
  bool ok = e && po_Json_Put(e, "type", json_object_get(url)) && po_Json_Put(e, "name", json_object_new_string(name)) &&
            po_Json_Put(e, "operation", json_object_get(operation));
  if (!ok) {
    json_object_put(e);
    return NULL;
  }
  return e;
}

/* A patch's operation {op: add, path, value}; takes value (NULL when out of memory). */
static json_object *operation(const char *path, json_object *value) {
  json_object *op = json_object_new_object();
  bool ok = op && value && po_Json_Put(op, "op", json_object_new_string("add")) &&
            po_Json_Put(op, "path", json_object_new_string(path));
  ok = adopt(ok, op, "value", &value);
  json_object_put(value);
  if (!ok) {
    json_object_put(op);
    return NULL;
  }
  return op;
}

/* Whether the PropertyOverride follows the HTTPRoutes of namespace rns: its own, and those of
 * spec.routeNamespaces ("*": every one); *rank: by_route's. */
static bool follows(const po_CompiledOverride *c, const char *rns, size_t *rank) {
  *rank = 0;
  if (!strcmp(rns, c->ns)) return true;
  bool star = false;
  for (size_t i = 0; i < c->route_namespace_count; i++) {
    if (!strcmp(c->route_namespaces[i], rns)) {
      *rank = 1 + i;
      return true;
    }
    star |= !strcmp(c->route_namespaces[i], "*");
  }
  *rank = 1 + c->route_namespace_count;
  return star;
}

/* Sorted (n log n), then of each namespace/name only the last given, as kubectl apply of the
 * inputs in order would leave it. */
static size_t sort_unique(Route *rs, size_t n) {
  qsort(rs, n, sizeof *rs, by_route);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    bool last = i + 1 == n || strcmp(rs[i].ns, rs[i + 1].ns) || strcmp(rs[i].name, rs[i + 1].name);
    if (last) rs[kept++] = rs[i];
  }
  return kept;
}

/* The routes that attach to the Gateway and that c follows, one per namespace/name (the last
 * given), in by_route's order. Counted only: those that may attach (through a listener admitting
 * by a namespace selector, which needs the Namespaces' labels: left out, never a refusal, or any
 * tenant naming that listener would switch the Gateway owner's patches off), and those that
 * attach from a namespace c does not follow. */
static Route *attached_routes(const po_CompiledOverride *c, const po_EGTopology *t, po_Arena *a, size_t *nr,
                              size_t *nu, size_t *nf, const char **selector_listener) {
  Route *rs = po_Arena_Malloc(a, (t->route_count ? t->route_count : 1) * sizeof *rs);
  if (!rs) return NULL;
  *nr = *nu = *nf = 0;
  for (size_t i = 0; i < t->route_count; i++) {
    const json_object *r = t->routes[i];
    const char *sel = NULL, *rns = po_Json_Meta(r, "namespace");
    size_t rank;
    bool followed = follows(c, rns, &rank);
    Route x = {r, rns, po_Json_Meta(r, "name"), i, !strcmp(rns, c->ns), rank, false};
    if (attached(t->gateway, r, &sel)) {
      if (followed) rs[(*nr)++] = x;
      else (*nf)++;
    } else if (sel && followed) {
      (*nu)++;
      if (!*selector_listener) *selector_listener = sel;
    }
  }
  *nr = sort_unique(rs, *nr);
  return rs;
}

/* What one patch writes: the entry's shared parts, and the bytes an entry takes but its name. */
typedef struct {
  po_ResourceType rt;
  const po_ResourceFilter *f;
  json_object *url, *op; /* shared by the patch's entries */
  size_t base;
  Names names;  /* listener and route patches: the xDS names */
  size_t found; /* cluster patches: clusters among every route followed */
} Out;

static const char kEntryFrame[] = "{\"type\":,\"name\":,\"operation\":{\"op\":\"add\",\"path\":,\"value\":}}";

size_t po_EG_FixedBytes(const po_CompiledOverride *c, const json_object *gateway, po_Arena *a) {
  Names listeners, routes;
  if (!c->accepted || !c->args || !gateway || !listener_names(gateway, false, a, &listeners) ||
      !listener_names(gateway, true, a, &routes)) {
    return 0;
  }
  size_t fixed = 2; /* "[]" */
  for (size_t i = 0; i < c->args->patch_count; i++) {
    po_ResourceType rt = po_Override_ResourceType(c->override, i);
    if (rt != kPo_ResourceType_Listener && rt != kPo_ResourceType_Route) continue;
    const Names *names = rt == kPo_ResourceType_Listener ? &listeners : &routes;
    const char *path = pointer(c->override, i, a);
    po_Value *v = po_Override_SetJson(c->override, i, a);
    json_object *value = v && path ? po_Value_ToJsonC(v) : NULL;
    size_t vbytes = value ? po_Owned_JsonBytes(value) : 0;
    json_object_put(value);
    if (!vbytes) return 0;
    size_t base = strlen(kEntryFrame) + po_Owned_StringBytes(type_url(rt)) + po_Owned_StringBytes(path) + vbytes;
    for (size_t k = 0; k < names->n; k++) fixed += base + po_Owned_StringBytes(names->v[k]) + 1;
  }
  return fixed;
}

/* One policy being built, shared by the steps of po_EG_EnvoyPatchPolicy. A step does nothing
 * once ok is false (out of memory) or *why is set (the policy refused). */
typedef struct {
  const po_CompiledOverride *c;
  const po_EGTopology *t;
  po_Arena *a;
  const char **why;
  po_EGFit *fit;
  Route *rs;         /* the routes attached and followed, by_route's order */
  size_t nr, np;     /* how many routes, how many patches */
  Out *outs;         /* per patch */
  Names listeners, routes;
  size_t fixed;      /* the listener and route entries' bytes, with "[]" */
  size_t total;      /* fixed and the entries of the routes taken */
  size_t taken;      /* routes taken: rs[0..taken) */
  size_t taken_entries;
  bool full;         /* a route did not fit: it and every later one are left out */
  bool ok;
} Build;

static bool going(const Build *b) { return b->ok && !*b->why; }

/* 1. Per patch, in patch order: its shared parts, and what stops the whole policy (a listener
 *    or route patch with nothing to touch). */
static void patch_parts(Build *b) {
  for (size_t i = 0; going(b) && i < b->np; i++) {
    Out *o = &b->outs[i];
    o->f = &b->c->args->patches[i].resource_filter;
    o->rt = po_Override_ResourceType(b->c->override, i);
    bool cluster = o->rt == kPo_ResourceType_Cluster || o->rt == kPo_ResourceType_ClusterLoadAssignment;
    const char *path = pointer(b->c->override, i, b->a);
    po_Value *v = po_Override_SetJson(b->c->override, i, b->a);
    json_object *value = v && path ? po_Value_ToJsonC(v) : NULL;
    size_t vbytes = value ? po_Owned_JsonBytes(value) : 0;
    o->url = json_object_new_string(type_url(o->rt));
    o->op = vbytes ? operation(path, value) : (json_object_put(value), NULL);
    b->ok = o->url && o->op;
    if (!b->ok) break;
    o->base = strlen(kEntryFrame) + po_Owned_StringBytes(type_url(o->rt)) + po_Owned_StringBytes(path) + vbytes;
    if (cluster) continue;
    o->names = o->rt == kPo_ResourceType_Listener ? b->listeners : b->routes;
    if (!o->names.n) {
      *b->why = or_oom(po_Arena_Printf(b->a, "patches[%zu] would touch nothing: Gateway '%s' %s", i, b->c->target_name,
                                       o->rt == kPo_ResourceType_Listener ? "has no listeners"
                                       : "has no HTTP or HTTPS listener (no route configuration)"));
      break;
    }
    for (size_t k = 0; k < o->names.n; k++) b->fixed += o->base + po_Owned_StringBytes(o->names.v[k]) + 1;
  }
}

/* 2. The routes, in order, while their clusters fit under the bound: a route whose entries
 *    would not fit, and every route after it, is left out whole (a route is programmed with all
 *    its rules or not at all, and what is in stays in when a later route arrives). The walk
 *    stops there: routes past the bound are neither read nor counted, so the work is
 *    proportional to what the policy holds, not to what tenants write. A rule of another
 *    namespace's route sending to a patched Service and another backend leaves that route out
 *    (a tenant cannot refuse the platform's patches); only the own namespace's refuses. */
static void take_routes(Build *b) {
  po_EGFit *fit = b->fit;
  b->total = b->fixed;
  b->full = b->total > fit->max_bytes;
  for (size_t r = 0; going(b) && !b->full && r < b->nr; r++) {
    size_t count = 0, bytes = 0;
    const char *mixed = NULL;
    json_object *hold, *rules;
    b->ok = rules_of(b->t, &b->rs[r], &rules, &hold);
    for (size_t i = 0; b->ok && !mixed && i < b->np; i++) {
      Out *o = &b->outs[i];
      if (o->names.v) continue; /* a listener or route patch */
      b->ok = route_clusters(o->f, b->c->ns, &b->rs[r], rules, o->base, b->a, NULL, 0, &count, &bytes, &mixed);
    }
    json_object_put(hold);
    if (!b->ok) break;
    if (mixed && b->rs[r].own) {
      *b->why = mixed;
      break;
    }
    if (mixed) {
      b->rs[r].skip = true;
      fit->mixed++;
      b->taken = r + 1;
      continue;
    }
    if (b->total + bytes <= fit->max_bytes) {
      b->total += bytes;
      b->taken_entries += count;
      b->taken = r + 1;
      fit->routes += count > 0;
      continue;
    }
    b->full = true;
    fit->cut_routes = b->nr - r;
    fit->first_cut = or_oom(po_Arena_Printf(b->a, "%s/%s", b->rs[r].ns, b->rs[r].name));
  }
}

/* Which cluster patches found a cluster: over the routes taken (what the policy holds). */
static void count_found(Build *b) {
  for (size_t r = 0; going(b) && !b->full && r < b->taken; r++) {
    bool want = false;
    for (size_t i = 0; i < b->np; i++) want |= !b->outs[i].names.v && !b->outs[i].found;
    if (!want) break;
    json_object *hold, *rules;
    b->ok = rules_of(b->t, &b->rs[r], &rules, &hold);
    for (size_t i = 0; b->ok && i < b->np; i++) {
      Out *o = &b->outs[i];
      if (o->names.v || o->found) continue;
      size_t count = 0, bytes = 0;
      const char *mixed = NULL;
      b->ok = route_clusters(o->f, b->c->ns, &b->rs[r], rules, o->base, b->a, NULL, 0, &count, &bytes, &mixed);
      o->found += count;
    }
    json_object_put(hold);
  }
}

/* A cluster patch that found no cluster among the routes taken touches nothing: the policy is
 * refused, saying which Service it looked for. */
static void say_untouched(Build *b) {
  const po_EGFit *fit = b->fit;
  for (size_t i = 0; going(b) && i < b->np; i++) {
    const Out *o = &b->outs[i];
    /* full: the clusters a patch would touch may be among the routes left out */
    if (o->names.v || o->found || b->full) continue;
    const po_ResourceFilter *f = o->f;
    const char *what = f->service_count
        ? or_oom(po_Arena_Printf(b->a, "has no HTTPRoute rule with a backendRef to Service '%s/%s' among the inputs "
                                       "(service namespaces default to 'default')",
                                 f->services[0].namespace_ && *f->services[0].namespace_ ? f->services[0].namespace_
                                                                                         : "default",
                                 f->services[0].name))
        : "has no HTTPRoute rule with backends among the inputs";
    *b->why = or_oom(po_Arena_Printf(
        b->a, "patches[%zu] would touch nothing: Gateway '%s' %s%s%s%s", i, b->c->target_name, what,
        fit->uncertain ? " (HTTPRoutes attached only through listener '" : "",
        fit->uncertain ? fit->selector_listener : "",
        fit->uncertain ? "', which admits by a namespace selector, are left out: the Namespaces' labels are not read)"
                       : ""));
  }
}

/* The bound: the listener and route entries alone over it, or a cluster patch one entry of
 * which (the shortest cluster name) passes it beside them, is never in the policy whatever
 * routes there are: said, not rendered as a policy without it. */
static void say_over_bound(Build *b) {
  const po_EGFit *fit = b->fit;
  size_t fixed = b->fixed;
  if (going(b) && fixed > fit->max_bytes && b->t->gateway_share) {
    /* the Gateway's bound, not the policy's: say whose share is gone, not "a bound of 2 bytes" */
    *b->why = or_oom(po_Arena_Printf(b->a, "the listener and route patches alone take %zu bytes, over what is left (%zu "
                                           "bytes) of the %d bytes all the EnvoyPatchPolicies of Gateway '%s' may hold "
                                           "together, given out by PropertyOverride name: those before this one take the "
                                           "rest (patch fewer listeners, or rename to come first)",
                                     fixed, fit->max_bytes > 2 ? fit->max_bytes - 2 : 0, (int)kPo_EGMaxGatewayBytes,
                                     b->c->target_name));
  } else if (going(b) && fixed > fit->max_bytes) {
    *b->why = or_oom(po_Arena_Printf(b->a, "the listener and route patches alone take %zu bytes, over the bound of %zu "
                                           "bytes on the EnvoyPatchPolicy's jsonPatches: patch fewer listeners", fixed,
                                     fit->max_bytes));
  }
  for (size_t i = 0; going(b) && fixed <= fit->max_bytes && i < b->np; i++) {
    const Out *o = &b->outs[i];
    if (o->names.v || fixed + o->base + 1 <= fit->max_bytes) continue;
    *b->why = or_oom(po_Arena_Printf(
        b->a, "patches[%zu] takes %zu bytes per cluster it patches (its value is that large), over %s%zu bytes %s: no "
              "cluster's entry can be in the policy; set a smaller value",
        i, o->base, fixed > 2 ? "what the listener and route patches leave of the " : "the bound of ",
        fixed > 2 ? fit->max_bytes - fixed + 2 : fit->max_bytes,
        b->t->gateway_share ? "the EnvoyPatchPolicies of the Gateway may hold" : "on the EnvoyPatchPolicy's jsonPatches"));
  }
  if (fit->first_cut == kOom) b->ok = false;
}

/* The policy's entries: each patch's, in patch order, over the routes taken. */
static void append_entries(Build *b, json_object *patches) {
  for (size_t i = 0; going(b) && i < b->np; i++) {
    Out *o = &b->outs[i];
    Names names = o->names;
    if (!names.v) {
      size_t cap = b->taken_entries, count = 0, bytes = 0; /* every patch's entries over the routes taken */
      names.v = po_Arena_Malloc(b->a, (cap ? cap : 1) * sizeof *names.v);
      names.n = 0;
      b->ok = names.v != NULL;
      const char *mixed = NULL; /* said in step 2 */
      for (size_t r = 0; b->ok && r < b->taken; r++) {
        json_object *hold, *rules;
        b->ok = rules_of(b->t, &b->rs[r], &rules, &hold) &&
                route_clusters(o->f, b->c->ns, &b->rs[r], rules, o->base, b->a, &names, cap, &count, &bytes, &mixed);
        json_object_put(hold);
      }
    }
    for (size_t k = 0; b->ok && k < names.n; k++) b->ok = po_Json_Append(patches, entry(o->url, names.v[k], o->op));
    b->fit->patches += names.n;
  }
}

/* 3. The policy object: metadata, the Gateway as targetRef, the priority, the entries. */
static json_object *policy_object(Build *b) {
  const po_CompiledOverride *c = b->c;
  json_object *epp = json_object_new_object(), *md = json_object_new_object(), *labels = json_object_new_object(),
              *spec = json_object_new_object(), *ref = json_object_new_object(), *patches = json_object_new_array();
  bool ok = b->ok && epp && md && labels && spec && ref && patches;
  ok = ok && po_Json_Put(epp, "apiVersion", json_object_new_string(PO_EG_API_VERSION));
  ok = ok && po_Json_Put(epp, "kind", json_object_new_string("EnvoyPatchPolicy"));
  ok = ok && po_Json_Put(md, "name", json_object_new_string(or_oom(po_EG_PolicyName(c, b->a))));
  if (ok && *c->ns) ok = po_Json_Put(md, "namespace", json_object_new_string(c->ns));
  ok = ok && po_Json_Put(labels, "app.kubernetes.io/managed-by", json_object_new_string("propertyoverride"));
  ok = adopt(ok, md, "labels", &labels);
  ok = adopt(ok, epp, "metadata", &md);
  ok = ok && po_Json_Put(spec, "type", json_object_new_string("JSONPatch"));
  ok = ok && po_Json_Put(ref, "group", json_object_new_string("gateway.networking.k8s.io")) &&
       po_Json_Put(ref, "kind", json_object_new_string("Gateway")) && po_Json_Put(ref, "name", json_object_new_string(c->target_name));
  ok = adopt(ok, spec, "targetRef", &ref);
  ok = ok && po_Json_Put(spec, "priority", json_object_new_int(c->priority));
  b->ok = ok;
  append_entries(b, patches);
  b->fit->bytes = b->total;
  if (*b->why == kOom) b->ok = false, *b->why = NULL;
  ok = adopt(b->ok && !*b->why, spec, "jsonPatches", &patches);
  ok = adopt(ok, epp, "spec", &spec);
  json_object_put(md);
  json_object_put(labels);
  json_object_put(ref);
  json_object_put(spec);
  json_object_put(patches);
  if (!ok) {
    json_object_put(epp);
    return NULL;
  }
  return epp;
}

/* Why c cannot have a policy for topology t before anything is built, or NULL. */
static const char *not_buildable(const po_CompiledOverride *c, const po_EGTopology *t) {
  if (!c->accepted || c->target_kind != kPo_TargetKind_Gateway) {
    return "not an accepted PropertyOverride of an Envoy Gateway target (Gateway)";
  }
  if (!t || !t->gateway) {
    return "the target Gateway is needed: its listeners name the xDS listeners and route configurations, and the "
           "HTTPRoutes attached to it name the clusters";
  }
  if (strcmp(po_Json_Meta(t->gateway, "name"), c->target_name) || strcmp(po_Json_Meta(t->gateway, "namespace"), c->ns)) {
    return "the Gateway given is not the target (an EnvoyPatchPolicy attaches to a Gateway of its own namespace)";
  }
  return NULL;
}

json_object *po_EG_EnvoyPatchPolicy(const po_CompiledOverride *c, const po_EGTopology *t, po_Arena *a,
                                    const char **why, po_EGFit *fit) {
  const char *dummy;
  po_EGFit ignored;
  if (!why) why = &dummy;
  if (!fit) fit = &ignored;
  *fit = (po_EGFit){.max_bytes = t && t->max_bytes ? t->max_bytes : kPo_EGMaxPolicyBytes};
  *why = not_buildable(c, t);
  if (*why) return NULL;
  Build b = {.c = c, .t = t, .a = a, .why = why, .fit = fit, .np = c->args->patch_count, .fixed = 2 /* "[]" */,
             .ok = true};
  size_t nu = 0, nf = 0;
  const char *selector_listener = NULL;
  b.rs = attached_routes(c, t, a, &b.nr, &nu, &nf, &selector_listener);
  b.outs = po_Arena_Malloc(a, (b.np ? b.np : 1) * sizeof *b.outs);
  if (!b.rs || !b.outs || !listener_names(t->gateway, false, a, &b.listeners) ||
      !listener_names(t->gateway, true, a, &b.routes)) {
    return NULL;
  }
  fit->unfollowed = nf;
  fit->uncertain = nu;
  fit->selector_listener = selector_listener;
  memset(b.outs, 0, (b.np ? b.np : 1) * sizeof *b.outs);
  patch_parts(&b);
  take_routes(&b);
  count_found(&b);
  say_untouched(&b);
  say_over_bound(&b);
  json_object *epp = policy_object(&b);
  for (size_t i = 0; i < b.np; i++) {
    json_object_put(b.outs[i].url);
    json_object_put(b.outs[i].op);
  }
  return epp;
}

/* ---- programming and status ---- */

po_OwnedPlan po_EG_Plan(const json_object *current, const json_object *desired, const char *owner_uid,
                        const char *created_uid) {
  return po_Owned_Plan(current, desired, owner_uid, created_uid, kPo_Owned_EnvoyPatchPolicy);
}

/* How bad a state is, to keep the worst over the ancestors: a policy programmed for one Gateway
 * and not for another is not programmed. */
static int severity(po_EGState s) {
  switch (s) {
    case kPo_EGState_Programmed: return 0;
    case kPo_EGState_Pending: return 1;
    case kPo_EGState_NotProgrammed: return 2;
    case kPo_EGState_NotAccepted: return 3;
    case kPo_EGState_Disabled: return 4;
  }
  return 1;
}

static const char *str_or_empty(const json_object *o, const char *k) {
  const char *s = po_Json_String(o, k);
  return s ? s : "";
}

/* Whether ancestor a is the Gateway the policy targets (spec.targetRef, in the policy's namespace):
 * an entry for another Gateway (stale, another controller's, or written by someone else) says
 * nothing of this one. A policy without a targetRef name keeps every ancestor. */
static bool ancestor_is_target(const json_object *epp, const json_object *a) {
  const json_object *tr = po_Json_Get(po_Json_Get(epp, "spec"), "targetRef");
  const char *want = po_Json_String(tr, "name");
  if (!want) return true;
  const json_object *ref = po_Json_Get(a, "ancestorRef");
  const char *group = po_Json_String(ref, "group"), *kind = po_Json_String(ref, "kind"), *ns = po_Json_String(ref, "namespace");
  const char *name = po_Json_String(ref, "name"), *pns = po_Json_Meta(epp, "namespace");
  return name && !strcmp(name, want) && (!group || !strcmp(group, "gateway.networking.k8s.io")) &&
         (!kind || !strcmp(kind, "Gateway")) && (!ns || !strcmp(ns, pns));
}

po_EGStatus po_EG_ReadStatus(const json_object *epp) {
  po_EGStatus worst = {.state = kPo_EGState_Pending, .reason = "", .message = ""};
  json_object *gen = po_Json_Get(po_Json_Get(epp, "metadata"), "generation");
  int64_t g = gen && json_object_is_type(gen, json_type_int) ? json_object_get_int64(gen) : 0;
  json_object *anc = po_Json_Get(po_Json_Get(epp, "status"), "ancestors");
  size_t na = anc && json_object_is_type(anc, json_type_array) ? json_object_array_length(anc) : 0;
  bool any = false;
  for (size_t i = 0; i < na; i++) {
    if (!ancestor_is_target(epp, json_object_array_get_idx(anc, i))) continue;
    json_object *conds = po_Json_Get(json_object_array_get_idx(anc, i), "conditions");
    size_t nc = conds && json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
    po_EGStatus here = {.state = kPo_EGState_Pending, .reason = "", .message = ""};
    bool accepted = false, programmed = false;
    for (size_t k = 0; k < nc; k++) {
      json_object *c = json_object_array_get_idx(conds, k), *og = po_Json_Get(c, "observedGeneration");
      /* a condition about an older spec says nothing of this one */
      if (g > 0 && (!og || !json_object_is_type(og, json_type_int) || json_object_get_int64(og) != g)) continue;
      const char *type = str_or_empty(c, "type"), *status = str_or_empty(c, "status");
      po_EGStatus s = {.state = kPo_EGState_Pending, .reason = str_or_empty(c, "reason"),
                       .message = str_or_empty(c, "message")};
      if (!strcmp(type, "Accepted")) {
        if (!strcmp(status, "True")) accepted = true;
        else if (!strcmp(status, "False"))
          s.state = !strcmp(s.reason, "Disabled") ? kPo_EGState_Disabled : kPo_EGState_NotAccepted;
      } else if (!strcmp(type, "Programmed")) {
        if (!strcmp(status, "True")) programmed = true;
        else if (!strcmp(status, "False")) s.state = kPo_EGState_NotProgrammed;
      }
      if (severity(s.state) > severity(here.state)) here = s;
    }
    if (here.state == kPo_EGState_Pending && accepted && programmed) here.state = kPo_EGState_Programmed;
    if (!any || severity(here.state) > severity(worst.state)) worst = here;
    any = true;
  }
  return worst;
}
