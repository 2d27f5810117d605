/* preview's reading of a resource (issue 13): po_Mesh_Classify over names built from Consul's
 * rules (extensioncommon's Get*Payload, connect's SNI forms, upstream EnvoyIDs) and Istio's,
 * one row each: the resource, then the direction, service and (a part of) the note expected;
 * and po_ConfigDump_ParseJson on small dumps, with its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include <cmocka.h>

#include "po/engine.h"

static po_Arena *A;
static int setup(void **s) { (void)s; A = po_Arena_New(); return A ? 0 : -1; }
static int teardown(void **s) { (void)s; po_Arena_Free(A); return 0; }

#define TD "11111111-2222-3333-4444-555555555555.consul"

typedef struct {
  po_Mesh mesh;
  const char *dc;
  po_ResourceType type;
  const char *name;
  po_TrafficDirection want_dir;
  const char *want_service; /* "name/namespace/partition", or NULL for none */
  const char *want_note;    /* a substring of the note, or NULL for no note */
} Row;

#define IN kPo_TrafficDirection_Inbound
#define OUT kPo_TrafficDirection_Outbound
#define C kPo_ResourceType_Cluster
#define E kPo_ResourceType_ClusterLoadAssignment
#define L kPo_ResourceType_Listener
#define CONSUL kPo_Mesh_Consul
#define ISTIO kPo_Mesh_Istio

static const Row kRows[] = {
    {CONSUL, "dc1", C, "local_app", IN, NULL, NULL},
    {CONSUL, "dc1", C, "api.default.dc1.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", C, "api.team.dc1.internal." TD, OUT, "api/team/default", NULL},
    {CONSUL, "dc1", C, "db.billing.part1.dc1.internal-v1." TD, OUT, "db/billing/part1", NULL},
    {CONSUL, NULL, C, "api.default.dc7.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", C, "v2.api.default.dc1.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", C, "v2.db.billing.part1.dc1.internal-v1." TD, OUT, "db/billing/part1", NULL},
    {CONSUL, "dc1", C, "cache.default.default.peer1.external." TD, OUT, NULL, "peered service's SNI"},
    /* Consul's runtime config puts every discovery-chain target's SNI in its upstream's set:
     * subsets and other datacenters (the splitter-with-resolver-redirect-multidc golden) */
    {CONSUL, "dc1", C, "api.default.dc2.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", C, "failover-target~0~api.default.dc1.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", C, "failover-target~1~api.default.dc2.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", C, "failover-target~1", OUT, NULL, "failover cluster name without one target SNI"},
    {CONSUL, "dc1", C, "failover-target~0~a~b", OUT, NULL, "failover cluster name"},
    {CONSUL, "dc1", C, "original-destination", OUT, NULL, "not an SNI Consul gives"},
    {CONSUL, "dc1", C, "internal." TD, OUT, NULL, "not an SNI Consul gives"},
    {CONSUL, "dc1", C, "", OUT, NULL, "not an SNI Consul gives"},
    /* names that are themselves Consul's SNI keywords: the forms are positional (sni.go) */
    {CONSUL, "dc1", C, "api.internal.dc1.internal." TD, OUT, "api/internal/default", NULL},
    {CONSUL, "dc1", C, "internal.default.dc1.internal." TD, OUT, "internal/default/default", NULL},
    {CONSUL, "dc1", C, "external.default.dc1.internal." TD, OUT, "external/default/default", NULL},
    {CONSUL, "internal", C, "api.default.internal.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", C, "db.internal.external.dc1.internal-v1." TD, OUT, "db/internal/external", NULL},
    {CONSUL, "dc1", C, "v2.api.internal.dc1.internal." TD, OUT, "api/internal/default", NULL},
    {CONSUL, "dc1", C, "cache.internal.default.peer1.external." TD, OUT, NULL, "peered service's SNI"},
    {CONSUL, "dc1", C, "geo-db.default.dc1.query." TD, OUT, NULL, "prepared query's SNI"},
    {CONSUL, "dc1", C, "api.default.dc1.internal.", OUT, NULL, "not an SNI Consul gives"},
    {CONSUL, "dc1", E, "local_app", IN, NULL, NULL},
    {CONSUL, "dc1", E, "api.default.dc1.internal." TD, OUT, "api/default/default", NULL},
    {CONSUL, "dc1", L, "public_listener:10.0.0.5:20000", IN, NULL, NULL},
    {CONSUL, "dc1", L, "api:127.0.0.1:9191", OUT, "api/default/default", NULL},
    {CONSUL, "dc1", L, "billing/db:127.0.0.1:9192", OUT, "db/billing/default", NULL},
    {CONSUL, "dc1", L, "part1/billing/db:127.0.0.1:9192", OUT, "db/billing/part1", NULL},
    {CONSUL, "dc1", L, "a/b/c/d:127.0.0.1:1", OUT, NULL, "not an upstream ID"},
    /* Consul's upstream map holds another datacenter's upstream under its service (EnvoyID
     * db?dc=dc2): matched, while it is the proxy's only upstream of db */
    {CONSUL, "dc1", L, "db?dc=dc2:127.0.0.1:9193", OUT, "db/default/default", "datacenter dc2"},
    {CONSUL, NULL, L, "team/db?dc=dc2:127.0.0.1:9193", OUT, "db/team/default", "datacenter dc2"},
    {CONSUL, "dc1", L, "db?dc=dc1:127.0.0.1:9193", OUT, "db/default/default", NULL},
    {CONSUL, "dc1", L, "cache?peer=peer1:127.0.0.1:9194", OUT, NULL, "a peered upstream"},
    {CONSUL, "dc1", L, "prepared_query:geo-db:127.0.0.1:9195", OUT, NULL, "prepared query"},
    {CONSUL, "dc1", L, "outbound_listener:127.0.0.1:15001", OUT, NULL, "transparent proxy"},
    {CONSUL, "dc1", L, "no-colon", OUT, NULL, "no EnvoyID"},
    {ISTIO, NULL, C, "outbound|9080||reviews.default.svc.cluster.local", OUT, "reviews/default/default", NULL},
    {ISTIO, NULL, C, "outbound|9080|v2|reviews.shop.svc.cluster.local", OUT, "reviews/shop/default", NULL},
    {ISTIO, NULL, C, "outbound|443||www.example.com", OUT, NULL, "not a Kubernetes service"},
    {ISTIO, NULL, C, "outbound|443", OUT, NULL, "without port|subset|host"},
    {ISTIO, NULL, C, "inbound|9080||", IN, NULL, NULL},
    {ISTIO, NULL, C, "PassthroughCluster", OUT, NULL, "not a service's cluster"},
    /* istiod patches it in the SIDECAR_INBOUND context, as inbound|PORT|| (the Istio oracle found
     * preview treating it as outbound) */
    {ISTIO, NULL, C, "InboundPassthroughCluster", IN, NULL, NULL},
    {ISTIO, NULL, C, "InboundPassthroughClusterIpv4", IN, NULL, NULL},
    {ISTIO, NULL, C, "BlackHoleCluster", OUT, NULL, "not a service's cluster"},
    {ISTIO, NULL, E, "outbound|9080||reviews.default.svc.cluster.local", OUT, "reviews/default/default", NULL},
    {ISTIO, NULL, L, "virtualInbound", IN, NULL, NULL},
    {ISTIO, NULL, L, "0.0.0.0_9080", OUT, NULL, "no one service"},
};

static void test_rows(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; i++) {
    const Row *r = &kRows[i];
    po_DumpResource res = {.type = r->type, .state = kPo_DumpState_Active, .name = r->name};
    po_MeshResource m;
    assert_true(po_Mesh_Classify(r->mesh, r->dc, &res, A, &m));
    char got[256] = "";
    if (m.has_service) snprintf(got, sizeof got, "%s/%s/%s", m.service.name, m.service.namespace_, m.service.partition);
    if (m.direction != r->want_dir || strcmp(got, r->want_service ? r->want_service : "") ||
        (r->want_note ? !m.note || !strstr(m.note, r->want_note) : m.note != NULL)) {
      fail_msg("row %zu (%s): direction %d service '%s' note '%s'", i, r->name, m.direction, got, m.note ? m.note : "");
    }
  }
}

/* Consul's inbound route: local_app the only cluster its routes name (weighted ones too). */
static void test_routes(void **state) {
  (void)state;
  static const struct {
    const char *json;
    po_TrafficDirection dir;
    const char *service;
  } kRoutes[] = {
      {"{\"name\":\"public_listener\",\"virtual_hosts\":[{\"name\":\"a\",\"domains\":[\"*\"],\"routes\":[{\"match\":{\"prefix\":\"/\"},"
       "\"route\":{\"weighted_clusters\":{\"clusters\":[{\"name\":\"local_app\",\"weight\":1}]}}}]}]}", IN, NULL},
      {"{\"name\":\"api\",\"virtual_hosts\":[{\"name\":\"a\",\"domains\":[\"*\"],\"routes\":[{\"match\":{\"prefix\":\"/\"},"
       "\"route\":{\"cluster\":\"local_app\"}},{\"match\":{\"prefix\":\"/x\"},\"route\":{\"cluster\":\"api.default.dc1.internal.t\"}}]}]}",
       OUT, "api"},
      {"{\"name\":\"api\"}", OUT, "api"}, /* no routes at all: not local_app's */
  };
  for (size_t i = 0; i < sizeof kRoutes / sizeof kRoutes[0]; i++) {
    po_Status st;
    po_Status_Clear(&st);
    po_Message *m = po_Message_ParseJson(NULL, "envoy.config.route.v3.RouteConfiguration", kRoutes[i].json,
                                         strlen(kRoutes[i].json), A, &st);
    assert_non_null(m);
    po_DumpResource res = {.type = kPo_ResourceType_Route, .state = kPo_DumpState_Active, .name = "x", .message = m};
    res.name = strstr(kRoutes[i].json, "\"api\"") ? "api" : "public_listener";
    po_MeshResource out;
    assert_true(po_Mesh_Classify(kPo_Mesh_Consul, "dc1", &res, A, &out));
    assert_int_equal(out.direction, kRoutes[i].dir);
    if (kRoutes[i].service) assert_string_equal(out.service.name, kRoutes[i].service);
    else assert_false(out.has_service);
  }
}

/* Envoy Gateway's names (issue 24): every resource outbound and of no service; an HTTPRoute
 * rule's cluster gives its route's namespace, and nothing else does. */
static void test_envoy_gateway(void **state) {
  (void)state;
  static const struct {
    po_ResourceType type;
    const char *name, *ns; /* the route namespace po_Mesh_EGRouteNamespace gives, or NULL */
  } kNames[] = {
      {kPo_ResourceType_Cluster, "httproute/shop/api/rule/0", "shop"},
      {kPo_ResourceType_ClusterLoadAssignment, "httproute/team-b/web/rule/12", "team-b"},
      {kPo_ResourceType_Cluster, "grpcroute/shop/api/rule/0", NULL},
      {kPo_ResourceType_Cluster, "httproute//api/rule/0", NULL},
      {kPo_ResourceType_Cluster, "httproute/shop/api", NULL},
      {kPo_ResourceType_Cluster, "httproute/shop/api/match/0", NULL},
      {kPo_ResourceType_Listener, "shop/eg/http", NULL},
      {kPo_ResourceType_Route, "shop/eg/http", NULL},
  };
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; i++) {
    po_DumpResource res = {.type = kNames[i].type, .state = kPo_DumpState_Active, .name = kNames[i].name};
    po_MeshResource out;
    assert_true(po_Mesh_Classify(kPo_Mesh_EnvoyGateway, NULL, &res, A, &out));
    assert_int_equal(out.direction, kPo_TrafficDirection_Outbound);
    assert_false(out.has_service);
    assert_non_null(out.note);
    const char *ns = po_Mesh_EGRouteNamespace(kNames[i].name, A);
    if (kNames[i].ns) assert_string_equal(ns, kNames[i].ns);
    else assert_null(ns);
  }
}

static void test_dump(void **state) {
  (void)state;
  static const char kDump[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\","
      "\"static_clusters\":[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"s\"}}],"
      "\"dynamic_active_clusters\":[{\"version_info\":\"3\",\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"a\"}}],"
      "\"dynamic_warming_clusters\":[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"w\"}}]},"
      "{\"@type\":\"type.googleapis.com/envoy.admin.v3.SecretsConfigDump\"},"
      "{\"@type\":\"type.googleapis.com/envoy.admin.v3.EndpointsConfigDump\",\"dynamic_endpoint_configs\":[{\"endpoint_config\":"
      "{\"@type\":\"type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment\",\"cluster_name\":\"a\"}}]}]}";
  po_Status st;
  po_Status_Clear(&st);
  po_ConfigDump d;
  assert_true(po_ConfigDump_ParseJson(NULL, kDump, sizeof kDump - 1, A, &d, &st));
  assert_int_equal(d.count, 4);
  assert_string_equal(d.resources[0].name, "s");
  assert_int_equal(d.resources[0].state, kPo_DumpState_Static);
  assert_string_equal(d.resources[1].name, "a");
  assert_string_equal(d.resources[1].version_info, "3");
  assert_int_equal(d.resources[1].state, kPo_DumpState_Active);
  assert_int_equal(d.resources[2].state, kPo_DumpState_Warming);
  assert_int_equal(d.resources[3].type, kPo_ResourceType_ClusterLoadAssignment);
  assert_string_equal(d.resources[3].name, "a");
  assert_int_equal(d.other_count, 1);
  assert_string_equal(d.other_configs[0], "envoy.admin.v3.SecretsConfigDump");
  assert_null(d.consul_datacenter); /* no Consul bootstrap in this dump */
  assert_null(d.consul_service);

  /* a resource that is not one a mesh patches: named by where it is */
  static const char kBad[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":"
      "[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.core.v3.Address\"}}]}]}";
  po_Status_Clear(&st);
  assert_false(po_ConfigDump_ParseJson(NULL, kBad, sizeof kBad - 1, A, &d, &st));
  assert_string_equal(st.message, "configs[0].dynamic_active_clusters[0].cluster: expected a Cluster, ClusterLoadAssignment, "
                                  "Listener or RouteConfiguration, found envoy.config.core.v3.Address");
  /* an Any of a type the schema lacks (a mesh's own filter) is kept as a placeholder */
  static const char kUnknown[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":"
      "[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"a\",\"transport_socket\":"
      "{\"name\":\"x\",\"typed_config\":{\"@type\":\"type.googleapis.com/acme.Thing\",\"k\":[1,{\"@type\":\"acme.Other\"}]}}}}]}]}";
  po_Status_Clear(&st);
  assert_true(po_ConfigDump_ParseJson(NULL, kUnknown, sizeof kUnknown - 1, A, &d, &st));
  assert_int_equal(d.count, 1);
  assert_int_equal(d.unknown_types, 1); /* the outer one replaced whole: what it held is gone */
  assert_string_equal(d.first_unknown_type, "type.googleapis.com/acme.Thing");
  size_t jl = 0;
  po_Message *dm = po_DumpResource_Decode(&d.resources[0], &st);
  assert_non_null(dm);
  char *j = po_Message_ToJson(dm, A, &jl, &st);
  assert_non_null(j);
  assert_non_null(strstr(j, "(a type.googleapis.com/acme.Thing: a type the Envoy API this build has lacks)"));
  /* a resource of an unknown type is still an error, naming where */
  static const char kUnknownResource[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":"
      "[{\"cluster\":{\"@type\":\"type.googleapis.com/acme.Cluster\"}}]}]}";
  po_Status_Clear(&st);
  assert_false(po_ConfigDump_ParseJson(NULL, kUnknownResource, sizeof kUnknownResource - 1, A, &d, &st));
  assert_non_null(strstr(st.message, "configs[0].dynamic_active_clusters[0].cluster: expected a Cluster"));

  /* text after the dump (two dumps appended into one file, garbage): refused, not ignored;
   * also on the path that rewrites unknown types */
  static const char *const kTrailing[] = {
      "{\"configs\":[]} x",
      "{\"configs\":[]}\n{\"configs\":[]}",
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":"
      "[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"a\",\"transport_socket\":"
      "{\"name\":\"x\",\"typed_config\":{\"@type\":\"type.googleapis.com/acme.Thing\"}}}}]}]} {}",
  };
  for (size_t i = 0; i < sizeof kTrailing / sizeof kTrailing[0]; i++) {
    po_Status_Clear(&st);
    if (po_ConfigDump_ParseJson(NULL, kTrailing[i], strlen(kTrailing[i]), A, &d, &st)) fail_msg("trailing %zu accepted", i);
    if (!strstr(st.message, "Unexpected text after the JSON value")) fail_msg("trailing %zu: %s", i, st.message);
  }
  po_Status_Clear(&st);
  assert_true(po_ConfigDump_ParseJson(NULL, "{\"configs\":[]} \n\t", 17, A, &d, &st)); /* whitespace is fine */

  /* a resource nested past upb's binary encoder (a Struct in metadata, 40 deep): an error, never
   * a cluster read back empty and nameless */
  char deep[4096];
  int at = snprintf(deep, sizeof deep,
                    "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":"
                    "[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"api\","
                    "\"metadata\":{\"filter_metadata\":{\"k\":");
  for (int i = 0; i < 40; i++) at += snprintf(deep + at, sizeof deep - (size_t)at, "{\"a\":");
  at += snprintf(deep + at, sizeof deep - (size_t)at, "{}");
  for (int i = 0; i < 40; i++) at += snprintf(deep + at, sizeof deep - (size_t)at, "}");
  at += snprintf(deep + at, sizeof deep - (size_t)at, "}}}}]}]}");
  po_Status_Clear(&st);
  bool ok = po_ConfigDump_ParseJson(NULL, deep, (size_t)at, A, &d, &st);
  if (ok) fail_msg("a dump nested past the encoder read as %zu resources, the first named '%s'", d.count, d.count ? d.resources[0].name : "");
  assert_non_null(strstr(st.message, "nested too deep"));
  /* a /config_dump?resource= dump (single entries): refused, naming the entry, never read as
   * a dump without resources */
  static const char kResource[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump.DynamicCluster\",\"cluster\":"
      "{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"a\"}}]}";
  po_Status_Clear(&st);
  if (po_ConfigDump_ParseJson(NULL, kResource, sizeof kResource - 1, A, &d, &st)) fail_msg("a ?resource= dump read as %zu resources", d.count);
  assert_non_null(strstr(st.message, "configs[0]: a single envoy.admin.v3.ClustersConfigDump.DynamicCluster, as "
                                     "/config_dump?resource=... gives"));
  /* a resource whose bytes do not decode says why in words, not upb's status number */
  static const char kBadUtf8[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":"
      "[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"a\xff\"}}]}]}";
  po_Status_Clear(&st);
  assert_false(po_ConfigDump_ParseJson(NULL, kBadUtf8, sizeof kBadUtf8 - 1, A, &d, &st));
  assert_string_equal(st.message, "configs[0].dynamic_active_clusters[0].cluster: invalid envoy.config.cluster.v3.Cluster: "
                                  "a string is not valid UTF-8");
}

/* A resource stays bytes until asked for: its name read without decoding it (each type's
 * name field, JSON names as well as proto names), a route too (po_Mesh_Classify decodes it
 * into a scratch arena when it looks inside), every one decoded on the first
 * po_DumpResource_Decode and kept, or afresh into a caller's arena by _DecodeIn; the dump's own
 * text is no longer needed. */
static void test_dump_lazy(void **state) {
  (void)state;
  static const char kDump[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\","
      "\"dynamicActiveClusters\":[{\"versionInfo\":\"7\",\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\","
      "\"connectTimeout\":\"5s\",\"name\":\"web\",\"transport_socket\":{\"name\":\"tls\",\"typed_config\":"
      "{\"@type\":\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"sni\":\"web.x\"}}}}]},"
      "{\"@type\":\"type.googleapis.com/envoy.admin.v3.EndpointsConfigDump\",\"dynamic_endpoint_configs\":[{\"endpoint_config\":"
      "{\"@type\":\"type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment\",\"clusterName\":\"web\"}}]},"
      "{\"@type\":\"type.googleapis.com/envoy.admin.v3.RoutesConfigDump\",\"dynamic_route_configs\":[{\"route_config\":"
      "{\"@type\":\"type.googleapis.com/envoy.config.route.v3.RouteConfiguration\",\"name\":\"r\"}}]}]}";
  char *text = strdup(kDump);
  assert_non_null(text);
  po_Status st;
  po_Status_Clear(&st);
  po_ConfigDump d;
  assert_true(po_ConfigDump_ParseJson(NULL, text, strlen(text), A, &d, &st));
  memset(text, ' ', strlen(text)); /* nothing of the text is kept */
  free(text);
  assert_int_equal(d.count, 3);
  assert_string_equal(d.resources[0].name, "web");
  assert_string_equal(d.resources[0].version_info, "7");
  assert_string_equal(d.resources[0].where, "configs[0].dynamic_active_clusters[0].cluster");
  assert_null(d.resources[0].message); /* not decoded until asked */
  assert_string_equal(d.resources[1].name, "web");
  assert_null(d.resources[1].message);
  assert_string_equal(d.resources[2].name, "r");
  assert_null(d.resources[2].message); /* a route too: classification decodes it for itself */
  po_MeshResource mr;
  assert_true(po_Mesh_Classify(kPo_Mesh_Consul, "dc1", &d.resources[2], A, &mr));
  assert_null(d.resources[2].message); /* and keeps nothing of it */
  po_Arena *one = po_Arena_New();
  assert_non_null(one);
  po_Message *fresh = po_DumpResource_DecodeIn(&d.resources[0], one, &st);
  assert_non_null(fresh);
  assert_null(d.resources[0].message); /* _DecodeIn keeps nothing in the record */
  po_Arena_Free(one);
  po_Message *m = po_DumpResource_Decode(&d.resources[0], &st);
  assert_non_null(m);
  assert_ptr_equal(po_DumpResource_Decode(&d.resources[0], &st), m);
  size_t jl = 0;
  char *j = po_Message_ToJson(m, A, &jl, &st);
  assert_non_null(j);
  assert_non_null(strstr(j, "\"name\":\"web\""));
  assert_non_null(strstr(j, "\"5s\""));
  assert_non_null(strstr(j, "\"sni\":\"web.x\""));
  /* a field ConfigDump's entries do not have: upb refuses the dump, as before */
  static const char kOdd[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\","
      "\"dynamic_active_clusters\":[{\"nonsense\":1}]}]}";
  po_Status_Clear(&st);
  assert_false(po_ConfigDump_ParseJson(NULL, kOdd, sizeof kOdd - 1, A, &d, &st));
  assert_non_null(strstr(st.message, "nonsense"));
}

/* The dump read a piece at a time (config_dump.c): keys the scan recognises are streamed,
 * others (written with escapes) read whole by upb with the same result; `@type` anywhere in a
 * per-type dump; a configs[] entry of a type the schema lacks a counted placeholder; upb's error
 * positions are the dump's own, with the place named. */
static void test_dump_streamed(void **state) {
  (void)state;
  static const char kCluster[] = "{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"c\"}";
  char text[2048];
  static const char *const kForms[] = {
      /* @type last; the list's key with an escape (read whole); "configs" with an escape */
      "{\"configs\":[{\"dynamic_active_clusters\":[{\"cluster\":%s}],\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\"}]}",
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active\\u005fclusters\":[{\"cluster\":%s}]}]}",
      "{\"con\\u0066igs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\"dynamic_active_clusters\":[{\"cluster\":%s}]}]}",
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.Clusters\\u0043onfigDump\",\"dynamic_active_clusters\":[{\"cluster\":%s}]}]}",
  };
  for (size_t i = 0; i < sizeof kForms / sizeof kForms[0]; i++) {
    snprintf(text, sizeof text, kForms[i], kCluster);
    po_Status st;
    po_Status_Clear(&st);
    po_ConfigDump d;
    if (!po_ConfigDump_ParseJson(NULL, text, strlen(text), A, &d, &st)) fail_msg("form %zu: %s", i, st.message);
    if (d.count != 1 || strcmp(d.resources[0].name, "c") || d.resources[0].state != kPo_DumpState_Active) {
      fail_msg("form %zu: %zu resources", i, d.count);
    }
    assert_non_null(po_DumpResource_Decode(&d.resources[0], &st));
  }
  /* a configs[] entry of an unknown type: a placeholder, counted, as in a dump decoded whole */
  static const char kOdd[] = "{\"configs\":[{\"@type\":\"type.googleapis.com/acme.Dump\",\"x\":1}]}";
  po_Status st;
  po_Status_Clear(&st);
  po_ConfigDump d;
  assert_true(po_ConfigDump_ParseJson(NULL, kOdd, sizeof kOdd - 1, A, &d, &st));
  assert_int_equal(d.unknown_types, 1);
  assert_string_equal(d.first_unknown_type, "type.googleapis.com/acme.Dump");
  /* an error inside the 2nd entry, on line 3: its place and the dump's line and column */
  static const char kBad[] =
      "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.ClustersConfigDump\",\n"
      "\"dynamic_active_clusters\":[{\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"a\"}},\n"
      "  {\"cluster\":{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"nam\":\"b\"}}]}]}";
  po_Status_Clear(&st);
  assert_false(po_ConfigDump_ParseJson(NULL, kBad, sizeof kBad - 1, A, &d, &st));
  if (!strstr(st.message, "configs[0].dynamic_active_clusters[1]: ") || !strstr(st.message, "@3:")) fail_msg("%s", st.message);
  /* punctuation the scan checks itself */
  static const char kComma[] = "{\"configs\":[] \"x\":1}";
  po_Status_Clear(&st);
  assert_false(po_ConfigDump_ParseJson(NULL, kComma, sizeof kComma - 1, A, &d, &st));
  assert_string_equal(st.message, "invalid envoy.admin.v3.ConfigDump JSON: Error parsing JSON @1:14: Expected: ',' or '}'");
  /* another top-level member: upb's verdict */
  static const char kMember[] = "{\"configs\":[],\"nonsense\":1}";
  po_Status_Clear(&st);
  assert_false(po_ConfigDump_ParseJson(NULL, kMember, sizeof kMember - 1, A, &d, &st));
  assert_non_null(strstr(st.message, "nonsense"));
}

/* The proxy's versions from its bootstrap's node (preview judges with the snapshot they name):
 * Envoy's own build version, else the first version-like number of the text form, and Istio's
 * ISTIO_VERSION; none of them in a dump without a bootstrap or a node that says nothing. */
static const char *bootstrap_dump(const char *node, char *buf, size_t n) {
  snprintf(buf, n,
           "{\"configs\":[{\"@type\":\"type.googleapis.com/envoy.admin.v3.BootstrapConfigDump\","
           "\"bootstrap\":{\"node\":%s}}]}", node);
  return buf;
}

static void test_dump_versions(void **state) {
  (void)state;
  static const struct {
    const char *node;
    const char *envoy; /* NULL: none */
    int major, minor;
    const char *istio;
  } kCases[] = {
      {"{\"user_agent_name\":\"envoy\",\"user_agent_build_version\":{\"version\":{\"major_number\":1,\"minor_number\":34,"
       "\"patch\":4}},\"metadata\":{\"ISTIO_VERSION\":\"1.26.3\",\"CLUSTER_ID\":\"Kubernetes\"}}",
       "1.34.4", 1, 34, "1.26.3"},
      /* JSON names, as Envoy's admin may print them */
      {"{\"userAgentBuildVersion\":{\"version\":{\"majorNumber\":1,\"minorNumber\":39}}}", "1.39.0", 1, 39, NULL},
      /* the text form: the first version-like number, whatever surrounds it */
      {"{\"user_agent_version\":\"4f5c1a/1.36.2/Clean/RELEASE/BoringSSL\"}", "1.36.2", 1, 36, NULL},
      {"{\"user_agent_version\":\"envoy v1.35\"}", "1.35", 1, 35, NULL},
      /* a date is no release: the number after it is */
      {"{\"user_agent_version\":\"2026.12.01 1.30.1\"}", "1.30.1", 1, 30, NULL},
      {"{\"id\":\"sidecar~10.0.0.1~a.default~default.svc.cluster.local\"}", NULL, 0, 0, NULL},
      {"{\"user_agent_version\":\"unknown\",\"metadata\":{\"ISTIO_VERSION\":7}}", NULL, 0, 0, NULL},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    char buf[1024];
    const char *json = bootstrap_dump(kCases[i].node, buf, sizeof buf);
    po_Status st;
    po_Status_Clear(&st);
    po_ConfigDump d;
    if (!po_ConfigDump_ParseJson(NULL, json, strlen(json), A, &d, &st)) fail_msg("case %zu: %s", i, st.message);
    if (kCases[i].envoy) {
      assert_non_null(d.envoy_version);
      assert_string_equal(d.envoy_version, kCases[i].envoy);
    } else {
      assert_null(d.envoy_version);
    }
    assert_int_equal(d.envoy_major, kCases[i].major);
    assert_int_equal(d.envoy_minor, kCases[i].minor);
    if (kCases[i].istio) assert_string_equal(d.istio_version, kCases[i].istio);
    else assert_null(d.istio_version);
  }
}

/* A message moved between snapshots (preview reads a dump with the newest and judges it with
 * the proxy's): a field the older one lacks rides along as an unknown field, is named by
 * po_Message_Lacked (once, where first met, though two routes carry it), and comes back when
 * the message is moved to the newest again; a message already of the snapshot is itself. */
static void test_message_as(void **state) {
  (void)state;
  const po_EnvoyApi *newest = po_EnvoyApi_Find("v1.40.0"), *old = po_EnvoyApi_Find("v1.32.4");
  assert_non_null(newest);
  assert_non_null(old);
  static const char kRoute[] =
      "{\"name\":\"r\",\"virtual_hosts\":[{\"name\":\"v\",\"domains\":[\"*\"],\"routes\":["
      "{\"match\":{\"prefix\":\"/a\"},\"direct_response\":{\"status\":503,\"body_format\":{\"content_type\":\"text/plain\"}}},"
      "{\"match\":{\"prefix\":\"/b\"},\"direct_response\":{\"status\":404,\"body_format\":{\"content_type\":\"text/html\"}}}]}]}";
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_ParseJson(newest, "envoy.config.route.v3.RouteConfiguration", kRoute, sizeof kRoute - 1, A, &st);
  if (!m) fail_msg("%s", st.message);
  const char *lacked[4] = {0};
  assert_int_equal(po_Message_Lacked(m, newest, A, lacked, 4), 0);
  assert_ptr_equal(po_Message_As(newest, m, A, &st), m);

  po_Message *o = po_Message_As(old, m, A, &st);
  if (!o) fail_msg("%s", st.message);
  assert_ptr_equal(po_Message_Api(o), old);
  size_t len = 0;
  const char *json = po_Message_ToJson(o, A, &len, &st);
  assert_non_null(json);
  assert_null(strstr(json, "body_format")); /* unknown to v1.32.4: not in its JSON */
  assert_int_equal(po_Message_Lacked(o, newest, A, lacked, 4), 1);
  assert_string_equal(lacked[0], "/virtual_hosts/0/routes/0/direct_response/body_format");
  assert_int_equal(po_Message_Lacked(o, old, A, lacked, 4), 1);
  assert_string_equal(lacked[0], "/virtual_hosts/0/routes/0/direct_response/(field 3 of envoy.config.route.v3.DirectResponseAction)");
  assert_int_equal(po_Message_Lacked(o, newest, A, lacked, 0), 1); /* counted, none written */

  po_Message *back = po_Message_As(newest, o, A, &st);
  if (!back) fail_msg("%s", st.message);
  assert_ptr_equal(po_Message_Api(back), newest);
  assert_string_equal(po_Message_ToJson(back, A, &len, &st), po_Message_ToJson(m, A, &len, &st));
  assert_int_equal(po_Message_Lacked(back, newest, A, lacked, 4), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows),
      cmocka_unit_test(test_routes),
      cmocka_unit_test(test_envoy_gateway),
      cmocka_unit_test(test_dump),
      cmocka_unit_test(test_dump_lazy),
      cmocka_unit_test(test_dump_streamed),
      cmocka_unit_test(test_dump_versions),
      cmocka_unit_test(test_message_as),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
