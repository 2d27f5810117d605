/* Envoy Gateway validates the resource after EACH jsonPatches entry (eg_steps.h; issue 23).
 *
 * processJSONPatches (internal/xds/translator/jsonpatch.go, v1.9.1) applies an entry to the
 * resource as protojson, unmarshals the result and calls its Validate() before the next entry:
 * the first entry whose result breaks one of Envoy's rules makes the whole policy Invalid. Consul
 * judges only what all of a PropertyOverride's patches leave, so two things it accepts fail there:
 * - a patch that creates a parent the generated resource lacks, without the parts Envoy requires
 *   of it (`/upstream_config/name` creates a TypedExtensionConfig without typed_config;
 *   `/dns_failure_refresh_rate/max_interval` a RefreshRate without base_interval), which a compile
 *   can only warn of for a resource it does not know (kPo_DiagKind_EnvoyRuleIfResource);
 * - a sequence that builds one message a required part at a time (`.../source_address/address`,
 *   then `.../source_address/port_value`): the final result passes, the first entry's does not.
 * Envoy Gateway's resources are known: they are what it generates, below. So each patch is
 * applied, one at a time, to a model of each resource shape it can reach, and the resource judged
 * whole after each step by the engine's one rule walk (po_Message_CheckRules, the walk preview's
 * and the compile's judgments share), as Envoy Gateway's Validate() does.
 *
 * A resource a cluster patch reaches depends on its services: a Service x's cluster gets the
 * patches without services and those naming x, in order; a cluster of no service named gets those
 * without services only. Services named by the same patches have the same resources, so there is
 * one model ("lane") per shape and set of patches naming a Service, and one per shape for the
 * rest. Cost: patches x lanes, each one PatchStruct and one walk of a resource of a few dozen
 * fields; lanes are at most the two shapes of a type times kMaxNamedSets + 1 (the sets are found
 * by sorting the (Service, patch) pairs, at most 100 x 64). */
#include "eg_steps.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

typedef struct {
  po_ResourceType rt;
  const char *what;  /* in a message: "the EDS cluster of a Service backend" */
  bool every;        /* every target of a patch of this type has it: a step that breaks is an error */
  bool services;     /* a Service's resource: reached by patches naming services */
  const char *json;  /* the resource as Envoy Gateway v1.9.1 generates it (proto field names) */
} Shape;

/* Each shape is the generated resource of internal/xds/translator (v1.9.1) for an HTTPRoute rule
 * with one backend, with the names of testdata/out/xds-ir/http-route.*.yaml; the fields any
 * other setting of Envoy Gateway's adds are left out (a patch meets them only on those
 * Gateways). */
static const Shape kShapes[] = {
    /* cluster.go buildXdsCluster, EndpointTypeStatic (every Service backend): type EDS, an ADS
     * eds_config, the defaults of buildXdsCluster (connect_timeout 10s, 32 KiB buffer limit,
     * V4_PREFERRED, an empty common_lb_config, max_retries 1024, least_request).
     * testdata/out/xds-ir/http-route.clusters.yaml. */
    {kPo_ResourceType_Cluster, "EDS cluster of a Service backend", true, true,
     "{\"name\":\"httproute/ns/route/rule/0\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{},"
     "\"resource_api_version\":\"V3\"},\"service_name\":\"httproute/ns/route/rule/0\"},\"connect_timeout\":\"10s\","
     "\"per_connection_buffer_limit_bytes\":32768,\"dns_lookup_family\":\"V4_PREFERRED\",\"common_lb_config\":{},"
     "\"ignore_health_on_host_removal\":true,\"circuit_breakers\":{\"thresholds\":[{\"max_retries\":1024}]},"
     "\"load_balancing_policy\":{\"policies\":[{\"typed_extension_config\":{\"name\":"
     "\"envoy.load_balancing_policies.least_request\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
     "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest\",\"locality_lb_config\":{"
     "\"locality_weighted_lb_config\":{}}}}}]}}"},
    /* buildXdsCluster, EndpointTypeDNS (an Envoy Gateway Backend of hostnames): cluster_type
     * envoy.cluster.dns, the endpoints inline in load_assignment. Its typed_config, a DnsCluster,
     * is an Any the walk does not enter, and a type this build's Envoy API lacks: an empty one
     * stands for it. testdata/out/xds-ir/http-route-dns-cluster.clusters.yaml. Only patches
     * without services reach it. */
    {kPo_ResourceType_Cluster, "cluster of an Envoy Gateway Backend of hostnames (cluster_type envoy.cluster.dns)",
     false, false,
     "{\"name\":\"httproute/ns/route/rule/0\",\"cluster_type\":{\"name\":\"envoy.cluster.dns\",\"typed_config\":{"
     "\"@type\":\"type.googleapis.com/google.protobuf.Empty\"}},\"connect_timeout\":\"10s\","
     "\"per_connection_buffer_limit_bytes\":32768,\"dns_lookup_family\":\"V4_PREFERRED\",\"common_lb_config\":{},"
     "\"ignore_health_on_host_removal\":true,\"circuit_breakers\":{\"thresholds\":[{\"max_retries\":1024}]},"
     "\"load_assignment\":{\"cluster_name\":\"httproute/ns/route/rule/0\",\"endpoints\":[{\"locality\":{\"region\":"
     "\"httproute/ns/route/rule/0/backend/0\"},\"lb_endpoints\":[{\"endpoint\":{\"address\":{\"socket_address\":{"
     "\"address\":\"backend.example.com\",\"port_value\":8080}}},\"load_balancing_weight\":1}],"
     "\"load_balancing_weight\":1}]},\"load_balancing_policy\":{\"policies\":[{\"typed_extension_config\":{\"name\":"
     "\"envoy.load_balancing_policies.least_request\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
     "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest\"}}}]}}"},
    /* the EDS cluster's ClusterLoadAssignment (endpoint.go buildXdsClusterLoadAssignment): one
     * locality per backend, weights 1. testdata/out/xds-ir/http-route.endpoints.yaml. */
    {kPo_ResourceType_ClusterLoadAssignment, "ClusterLoadAssignment of a Service backend's cluster", true, true,
     "{\"cluster_name\":\"httproute/ns/route/rule/0\",\"endpoints\":[{\"locality\":{\"region\":"
     "\"httproute/ns/route/rule/0/backend/0\"},\"lb_endpoints\":[{\"endpoint\":{\"address\":{\"socket_address\":{"
     "\"address\":\"10.0.0.1\",\"port_value\":8080}}},\"load_balancing_weight\":1}],\"load_balancing_weight\":1}]}"},
    /* listener.go buildXdsTCPListener: a socket_address, the 32 KiB buffer limit, one connection
     * per socket event, and the HTTP connection manager in default_filter_chain (an Any there,
     * not judged). testdata/out/xds-ir/http-route.listeners.yaml. */
    {kPo_ResourceType_Listener, "listener", true, false,
     "{\"name\":\"ns/gateway/http\",\"address\":{\"socket_address\":{\"address\":\"0.0.0.0\",\"port_value\":10080}},"
     "\"per_connection_buffer_limit_bytes\":32768,\"max_connections_to_accept_per_socket_event\":1,"
     "\"default_filter_chain\":{\"name\":\"ns/gateway/http\",\"filters\":[{\"name\":"
     "\"envoy.filters.network.http_connection_manager\",\"typed_config\":{\"@type\":\"type.googleapis.com/"
     "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\",\"stat_prefix\":"
     "\"http-10080\",\"rds\":{\"config_source\":{\"ads\":{},\"resource_api_version\":\"V3\"},\"route_config_name\":"
     "\"ns/gateway/http\"},\"http_filters\":[{\"name\":\"envoy.filters.http.router\",\"typed_config\":{\"@type\":"
     "\"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\"}}]}}]}}"},
    /* route.go / virtualhost: ignore_port_in_host_matching, one virtual host per hostname, one
     * route per match. testdata/out/xds-ir/http-route.routes.yaml. */
    {kPo_ResourceType_Route, "route configuration", true, false,
     "{\"name\":\"ns/gateway/http\",\"ignore_port_in_host_matching\":true,\"virtual_hosts\":[{\"name\":"
     "\"ns/gateway/http/www_example_com\",\"domains\":[\"www.example.com\"],\"routes\":[{\"name\":"
     "\"httproute/ns/route/rule/0/match/0/www_example_com\",\"match\":{\"prefix\":\"/\"},\"route\":{\"cluster\":"
     "\"httproute/ns/route/rule/0\",\"upgrade_configs\":[{\"upgrade_type\":\"websocket\"}]}}]}]}"},
};
enum { kShapeCount = sizeof kShapes / sizeof *kShapes };

/* The patches naming a Service: Services named by the same patches have the same resources, so
 * one model serves them all. At most kMaxNamedSets sets are modelled (the work of one compile is
 * patches x models); a patch naming only Services of other sets is warned of, not judged. */
enum { kSigWords = (kPo_MaxPatchesPerOverride + 63) / 64, kMaxNamedSets = 8 };
typedef struct {
  uint64_t w[kSigWords];
} Sig;

static bool sig_has(const Sig *g, size_t i) { return (g->w[i / 64] >> (i % 64)) & 1u; }

typedef struct {
  const Shape *shape;
  bool named;     /* the resource of the Services the patches in sig name; else of a Service none names */
  Sig sig;
  po_Message *m;  /* NULL: dropped (a patch did not apply) */
  bool broken;    /* the last step left it breaking a rule */
} Lane;

typedef struct {
  const Lane *lane;   /* the lane where patch i first broke a rule, or NULL */
  const char *where;  /* the finding's pointer and text */
  const char *text;
  bool error;
} Finding;

/* Whether patch i reaches the lane's resource (its type checked by the caller). */
static bool reaches(const po_CompiledOverride *c, size_t i, const Lane *l) {
  return c->args->patches[i].resource_filter.service_count == 0 || (l->named && sig_has(&l->sig, i));
}

/* Whether patch i is one Envoy Gateway would apply as rendered: an outbound add not refused. */
static bool steps(const po_CompiledOverride *c, size_t i, const bool *refused) {
  return !refused[i] && po_Override_Op(c->override, i) == kPo_Op_Add &&
         po_Override_Direction(c->override, i) == kPo_TrafficDirection_Outbound &&
         po_Override_SegmentCount(c->override, i) > 0;
}

typedef struct {
  const po_ServiceName *service;
  size_t patch;
} Named;

static int by_service(const po_ServiceName *x, const po_ServiceName *y) {
  int d = strcmp(x->name, y->name);
  if (!d) d = strcmp(x->namespace_, y->namespace_);
  return d ? d : strcmp(x->partition, y->partition);
}

static int by_service_then_patch(const void *a, const void *b) {
  const Named *x = a, *y = b;
  int d = by_service(x->service, y->service);
  return d ? d : (x->patch > y->patch) - (x->patch < y->patch);
}

static int by_sig(const void *a, const void *b) { return memcmp(a, b, sizeof(Sig)); }

/* The distinct sets of patches of type rt naming one Service (each Service's set: the patches
 * naming it), sorted, into *out; their count. Cost: the (Service, patch) pairs, sorted. */
static size_t named_sets(const po_CompiledOverride *c, po_ResourceType rt, const bool *refused, po_Arena *s,
                         Sig **out, bool *oom) {
  size_t n = 0, np = c->args->patch_count;
  for (size_t i = 0; i < np; i++) {
    if (po_Override_ResourceType(c->override, i) == rt) n += c->args->patches[i].resource_filter.service_count;
  }
  Named *ps = po_Arena_Malloc(s, (n ? n : 1) * sizeof *ps);
  Sig *sigs = po_Arena_Malloc(s, (n ? n : 1) * sizeof *sigs);
  if ((*oom = !ps || !sigs)) return 0;
  n = 0;
  for (size_t i = 0; i < np; i++) {
    const po_ResourceFilter *f = &c->args->patches[i].resource_filter;
    if (po_Override_ResourceType(c->override, i) != rt || !steps(c, i, refused)) continue;
    for (size_t v = 0; v < f->service_count; v++) ps[n++] = (Named){&f->services[v], i};
  }
  qsort(ps, n, sizeof *ps, by_service_then_patch);
  size_t ns = 0;
  for (size_t k = 0; k < n; k++) {
    if (k == 0 || by_service(ps[k - 1].service, ps[k].service)) memset(&sigs[ns++], 0, sizeof *sigs);
    sigs[ns - 1].w[ps[k].patch / 64] |= UINT64_C(1) << (ps[k].patch % 64);
  }
  qsort(sigs, ns, sizeof *sigs, by_sig);
  size_t u = 0;
  for (size_t k = 0; k < ns; k++) {
    if (u == 0 || by_sig(&sigs[u - 1], &sigs[k])) sigs[u++] = sigs[k];
  }
  *out = sigs;
  return u;
}

/* The first rule error on m (a resource that must pass whole, as Validate() judges it), or NULL
 * with *oom false when there is none. */
static const po_Diagnostic *first_error(const po_Message *m, po_Arena *scratch, bool *oom) {
  po_Diagnostics *d = po_Diagnostics_New(scratch);
  po_Status st;
  po_Status_Clear(&st);
  *oom = !d || !po_Message_CheckRules(m, 0, NULL, kPo_ValueScope_Whole, -1, d, &st);
  for (size_t k = 0; !*oom && k < po_Diagnostics_Count(d); k++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, k);
    if (x->severity == kPo_Severity_Error) return x;
  }
  return NULL;
}

/* The message a patch should set whole: the deepest parent on patch i's path (not its target)
 * that holds the finding's place `where`, "/a/b"; NULL when none does. */
static const char *whole_parent(const po_Override *o, size_t i, const char *where, po_Arena *a) {
  po_TextBuf t = {.a = a};
  const char *best = NULL;
  size_t n = po_Override_SegmentCount(o, i);
  for (size_t k = 0; k + 1 < n; k++) {
    po_PathSegment s;
    if (!po_Override_Segment(o, i, k, &s)) break;
    po_TextBuf_Puts(&t, "/");
    po_TextBuf_Puts(&t, s.name);
    if (t.oom) return NULL;
    size_t len = strlen(t.buf);
    if (strncmp(where, t.buf, len) || (where[len] != '/' && where[len] != '\0')) break;
    best = po_Arena_Strndup(a, t.buf, len);
  }
  return best;
}

static bool say(po_CompiledOverride *c, po_Arena *a, size_t i, const Finding *f, bool repaired) {
  const po_Patch *p = &c->args->patches[i];
  const char *whole = whole_parent(c->override, i, f->where, a);
  const char *text = po_Arena_Printf(
      a,
      "%s Envoy Gateway EnvoyPatchPolicy: on the %s Envoy Gateway generates, the resource this entry leaves breaks "
      "Envoy's rule at %s: %s. Envoy Gateway validates the resource after each jsonPatches entry, before the next "
      "(processJSONPatches), so the policy becomes Invalid and none of its patches apply%s. %s%s%s%s",
      f->error ? "not expressible in an" : "in an", f->lane->shape->what, *f->where ? f->where : "/", f->text,
      repaired ? " (a later patch of this PropertyOverride completes the message: Consul, which judges only the final "
                 "result, accepts that; Envoy Gateway has refused the policy by then)" : "",
      whole ? "Set " : "", whole ? whole : "", whole ? " whole in one patch, an object holding every part Envoy requires "
                                                       "there (where one is a list or an Any, which a PropertyOverride's "
                                                       "object value cannot hold, write an EnvoyPatchPolicy by hand)"
                                                     : "Set the message whole in one patch, with every part Envoy requires",
      f->error ? "" : "; or name the Services in resourceFilter.services, to patch only Service backends' clusters");
  if (!text) return false;
  po_Diagnostic *d = po_Diagnostics_Add(c->diags, f->error ? kPo_Severity_Error : kPo_Severity_Warning,
                                        kPo_DiagKind_Target, (int)i, p->path, text);
  if (!d) return false;
  d->pos = p->pos;
  return true;
}

/* The lanes of resource type rt: every shape of it for a resource of a Service no patch names,
 * and each Service shape once per set of patches naming a Service (the first kMaxNamedSets). */
static Lane *lanes_of(const po_CompiledOverride *c, po_ResourceType rt, const bool *refused, po_Arena *s,
                      size_t *nl, bool *oom) {
  Sig *sigs = NULL;
  size_t ns = named_sets(c, rt, refused, s, &sigs, oom);
  ns = ns < kMaxNamedSets ? ns : kMaxNamedSets;
  Lane *ls = *oom ? NULL : po_Arena_Malloc(s, (ns + 1) * kShapeCount * sizeof *ls);
  *nl = 0;
  if (!(*oom = !ls)) {
    for (size_t k = 0; k < kShapeCount; k++) {
      if (kShapes[k].rt == rt) ls[(*nl)++] = (Lane){.shape = &kShapes[k]};
      for (size_t g = 0; g < ns && kShapes[k].rt == rt && kShapes[k].services; g++) {
        ls[(*nl)++] = (Lane){.shape = &kShapes[k], .named = true, .sig = sigs[g]};
      }
    }
  }
  for (size_t l = 0; l < *nl && !*oom; l++) {
    po_Status st;
    po_Status_Clear(&st);
    const char *json = ls[l].shape->json;
    ls[l].m = po_Message_ParseJson(po_Override_Api(c->override), po_ResourceType_Message(rt), json, strlen(json), s, &st);
    if (!ls[l].m) *oom = po_Engine_OutOfMemory(s);
    /* a shape that does not parse or already breaks a rule is this file's mistake: it judges
     * nothing rather than refuse everything (the eg-steps tests would see its refusals missing) */
    else if (first_error(ls[l].m, s, oom)) ls[l].m = NULL;
  }
  return ls;
}

/* Patch i applied to lane l, then l judged; a first break goes to *f (an error on a shape every
 * target has wins over a warning). false only when out of memory. */
static bool step(const po_CompiledOverride *c, size_t i, Lane *l, po_Arena *s, Finding *f) {
  po_Status st;
  po_Status_Clear(&st);
  if (!po_PatchStruct(l->m, &c->args->patches[i], false, kPo_Convention_Typed, &st)) {
    l->m = NULL; /* Consul's own error on this resource: not this check's to judge */
    return !po_Engine_OutOfMemory(s);
  }
  bool oom, was = l->broken;
  const po_Diagnostic *e = first_error(l->m, s, &oom);
  if (oom) return false;
  l->broken = e != NULL;
  /* a step on a resource already broken is not judged: Envoy Gateway stopped at the earlier one */
  if (!e || was || (f->lane && (f->error || !l->shape->every))) return true;
  *f = (Finding){l, e->path ? e->path : "", e->message, l->shape->every};
  return true;
}

/* A patch naming only Services of the sets past kMaxNamedSets: said, not judged. */
static bool unjudged(po_CompiledOverride *c, size_t i) {
  const po_Patch *p = &c->args->patches[i];
  static const char kText[] =
      "in an Envoy Gateway EnvoyPatchPolicy: not judged entry by entry: the patches of this PropertyOverride name its "
      "Services in more than 8 different sets, and each set's clusters need a model of their own (a bound on the work "
      "of a compile). Envoy Gateway validates the cluster after each jsonPatches entry, so a patch that creates a "
      "message without every part Envoy requires of it makes the policy Invalid";
  po_Diagnostic *d = po_Diagnostics_Add(c->diags, kPo_Severity_Warning, kPo_DiagKind_Target, (int)i, p->path, kText);
  if (!d) return false;
  d->pos = p->pos;
  return true;
}

/* Every patch of resource type rt, in order, on each lane it reaches. */
static bool check_type(po_CompiledOverride *c, po_ResourceType rt, const bool *refused, po_Arena *s, po_Arena *a) {
  size_t nl, np = c->args->patch_count;
  bool oom;
  Lane *ls = lanes_of(c, rt, refused, s, &nl, &oom);
  Finding *fs = oom ? NULL : po_Arena_Malloc(s, (np ? np : 1) * sizeof *fs);
  if (!fs) return false;
  memset(fs, 0, (np ? np : 1) * sizeof *fs);
  for (size_t i = 0; i < np; i++) {
    if (po_Override_ResourceType(c->override, i) != rt || !steps(c, i, refused)) continue;
    bool judged = false;
    for (size_t l = 0; l < nl; l++) {
      if (!reaches(c, i, &ls[l])) continue;
      judged = true;
      if (ls[l].m && !step(c, i, &ls[l], s, &fs[i])) return false;
    }
    if (!judged && !unjudged(c, i)) return false;
  }
  for (size_t i = 0; i < np; i++) {
    /* the lane passing at the end: later patches completed what this one left broken */
    if (fs[i].lane && !say(c, a, i, &fs[i], fs[i].lane->m && !fs[i].lane->broken)) return false;
  }
  return true;
}

bool po_EG_StepCheck(po_CompiledOverride *c, po_Arena *a) {
  size_t np = c->override && c->args ? c->args->patch_count : 0;
  /* (more patches are refused before any per-patch work: never here) */
  if (!np || np > kPo_MaxPatchesPerOverride) return true;
  po_Arena *s = po_Arena_New(); /* the models and their judgments: freed on return */
  bool *refused = s ? po_Arena_Malloc(s, np * sizeof *refused) : NULL;
  bool ok = refused != NULL;
  for (size_t i = 0; ok && i < np; i++) refused[i] = false;
  for (size_t k = 0; ok && k < po_Diagnostics_Count(c->diags); k++) {
    const po_Diagnostic *d = po_Diagnostics_At(c->diags, k);
    if (d->severity == kPo_Severity_Error && d->patch_index >= 0 && (size_t)d->patch_index < np) {
      refused[d->patch_index] = true;
    }
  }
  static const po_ResourceType kTypes[] = {kPo_ResourceType_Cluster, kPo_ResourceType_ClusterLoadAssignment,
                                           kPo_ResourceType_Listener, kPo_ResourceType_Route};
  for (size_t t = 0; ok && t < sizeof kTypes / sizeof *kTypes; t++) ok = check_type(c, kTypes[t], refused, s, a);
  po_Arena_FreeInto(s, a); /* the caller's arena then says whether memory ran out */
  return ok;
}
