/* The Istio adapter: refusals and the EnvoyFilter, from the compiled IR (istio.h). Facts used,
 * from Istio's public sources: MERGE is a proto merge (pkg/proto/merge) that copies only set
 * fields, appends to lists and replaces a google.protobuf.Duration whole; MERGE_AND_REPLACE_LIST
 * (1.31.0 change notes) replaces the lists the patch sets; applyTo has no endpoint kind; a
 * cluster's transport_socket is merged by Istio's own code, not by the proto merge. */
#include "po/meshes/istio.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"

static const char kDuration[] = "google.protobuf.Duration";

/* google.protobuf.*Value: protojson writes the wrapper as its bare value, never {"value": v}. */
static bool is_wrapper(const char *type) {
  size_t n = type ? strlen(type) : 0;
  return n > 21 && !strncmp(type, "google.protobuf.", 16) && !strcmp(type + n - 5, "Value") &&
         strcmp(type, "google.protobuf.Value") != 0 && strcmp(type, "google.protobuf.ListValue") != 0;
}

static bool refuse(po_CompiledOverride *c, po_Arena *a, size_t i, const char *msg) {
  const po_Patch *p = &c->args->patches[i];
  const char *text = po_Arena_Printf(a, "not expressible in an Istio EnvoyFilter: %s", msg);
  if (!text) return false;
  po_Diagnostic *d = po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Target, (int)i, p->path, text);
  if (!d) return false;
  d->pos = p->pos;
  return true;
}

/* Out of memory while saying why: never taken for "no reason" (that would accept the patch). */
static const char kOom[] = "out of memory";
static const char *or_oom(const char *s) { return s ? s : kOom; }

/* A cluster's /name renamed (issue 23 B) before a later patch of the same PropertyOverride that
 * names services: Istio applies each configPatch to a cluster in order and matches
 * match.cluster.service against the host in the cluster's name ("outbound|80||payments.shop..."),
 * which the rename took away, so the later patch would not apply where Consul, which finds the
 * cluster once for all of one extension's patches, applies it. A rename alone, or before patches
 * without services (matched by context), keeps Consul's meaning. */
static const char *rename_reason(const po_CompiledOverride *c, size_t i, po_Arena *a) {
  const po_Override *o = c->override;
  po_PathSegment s;
  if (po_Override_ResourceType(o, i) != kPo_ResourceType_Cluster || po_Override_Op(o, i) != kPo_Op_Add ||
      po_Override_SegmentCount(o, i) != 1 || !po_Override_Segment(o, i, 0, &s) || strcmp(s.name, "name") != 0) {
    return NULL;
  }
  for (size_t k = i + 1; k < c->args->patch_count; k++) {
    if (po_Override_ResourceType(o, k) != kPo_ResourceType_Cluster ||
        po_Override_Direction(o, k) != po_Override_Direction(o, i) ||
        c->args->patches[k].resource_filter.service_count == 0) {
      continue;
    }
    return or_oom(po_Arena_Printf(
        a, "/name renames the cluster before patches[%zu], which names services: Istio matches a configPatch's "
           "match.cluster.service against the host in the cluster's name, so after the rename patches[%zu] would not "
           "apply (Consul applies every patch of a PropertyOverride to the cluster it found); put the rename last",
        k, k));
  }
  return NULL;
}

/* A scalar a MERGE copies: set in proto3 (non-zero), so it lands in the generated message. A
 * number given as a string (a 64-bit integer in protojson) is zero as "0". */
static bool copied(const po_Value *v) {
  size_t len = 0;
  const char *str;
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Bool: return po_Value_Bool(v);
    case kPo_ValueKind_Int: case kPo_ValueKind_Float: return po_Value_Float(v) != 0;
    case kPo_ValueKind_String: str = po_Value_String(v, &len); return len > 0 && strcmp(str, "0") != 0;
    default: return false;
  }
}

/* Whether patch i's object value is its whole message as a MERGE writes it: every field of the
 * message given, each a plain scalar or a wrapper (not an enum, list, map, oneof member or other
 * message, which a MERGE would merge rather than replace) holding a value proto3 keeps. Then
 * there is no field of the generated message left to keep, and the MERGE sets what Consul's
 * replacement sets (a message of one field, such as envoy.type.v3.Percent, is the simplest). */
static bool merge_is_whole(const po_Override *o, size_t i, const char *msg, po_Arena *a) {
  po_Value *v = msg ? po_Override_SetJson(o, i, a) : NULL;
  po_Explanation ex = {0};
  po_Status st;
  po_Status_Clear(&st);
  po_ExplainOptions eo = {.api = po_Override_Api(o)};
  if (!v || po_Value_Kind(v) != kPo_ValueKind_Map || !po_Explain(&eo, msg, a, &ex, &st) || !ex.field_count) return false;
  if (po_Value_Size(v) != ex.field_count) return false;
  for (size_t f = 0; f < ex.field_count; f++) {
    const po_ExplainField *x = &ex.fields[f];
    bool wrapper = x->message && x->detail && !strncmp(x->detail, "wrapper of ", 11);
    if (x->repeated || x->map || x->oneof || (x->message && !wrapper) || (x->detail && !strncmp(x->detail, "enum", 4))) {
      return false;
    }
    const po_Value *fv = po_Value_Get(v, x->name);
    if (!fv || !copied(fv)) return false;
  }
  return true;
}

/* The reason patch i cannot be an EnvoyFilter patch with Consul's meaning, or NULL. */
static const char *reason(const po_CompiledOverride *c, size_t i, po_Arena *a) {
  const po_Override *o = c->override;
  const po_Patch *p = &c->args->patches[i];
  po_ResourceType rt = po_Override_ResourceType(o, i);
  const po_ResourceFilter *f = &p->resource_filter;
  if (rt == kPo_ResourceType_ClusterLoadAssignment) {
    return "cluster-load-assignment: an EnvoyFilter's applyTo has no endpoint kind (only LISTENER, FILTER_CHAIN, "
           "NETWORK_FILTER, HTTP_FILTER, ROUTE_CONFIGURATION, VIRTUAL_HOST, HTTP_ROUTE, CLUSTER, EXTENSION_CONFIG, "
           "BOOTSTRAP, LISTENER_FILTER), so a ClusterLoadAssignment cannot be patched";
  }
  if ((rt == kPo_ResourceType_Listener || rt == kPo_ResourceType_Route) && f->service_count > 0) {
    return or_oom(po_Arena_Printf(a,
                           "a %s patch with services: Istio's outbound listeners and route configurations are per "
                           "port, shared by every service on it, so the patch cannot be limited to service '%s'; patch "
                           "its clusters instead, or drop services to patch every outbound %s",
                           rt == kPo_ResourceType_Listener ? "listener" : "route", f->services[0].name,
                           rt == kPo_ResourceType_Listener ? "listener" : "route configuration"));
  }
  for (size_t k = 0; k < f->service_count; k++) {
    const char *part = f->services[k].partition;
    if (part && *part && strcmp(part, "default") != 0) {
      return or_oom(po_Arena_Printf(a, "services[%zu].partition '%s': Istio has no admin partitions; only 'default' (or none) "
                                "can be matched", k, part));
    }
  }
  if (po_Override_Op(o, i) == kPo_Op_Remove) {
    return "remove: an EnvoyFilter MERGE is a proto merge, which can set fields but never clear one, and Istio's REMOVE "
           "removes whole listeners, clusters or filters, not fields";
  }
  size_t n = po_Override_SegmentCount(o, i);
  for (size_t k = 0; k < n; k++) {
    po_PathSegment s;
    if (!po_Override_Segment(o, i, k, &s)) return "the path did not resolve";
    if (!strcmp(s.name, "transport_socket")) {
      return "a path under /transport_socket: Istio merges a cluster's transport_socket with its own code (it unpacks "
             "and merges the TLS context it generated), not as a proto merge, so the result would not be Consul's";
    }
    if (k + 1 < n && s.message_type && !strcmp(s.message_type, kDuration)) {
      return or_oom(po_Arena_Printf(a,
                             "a field inside a Duration (/%s/...): Istio replaces a Duration whole when it merges "
                             "(the rest of it would be cleared, where Consul sets only this field); set /%s itself to "
                             "a duration such as \"5s\"", s.name, s.name));
    }
  }
  const char *renamed = rename_reason(c, i, a);
  if (renamed) return renamed;
  po_SetInfo si;
  po_Override_Set(o, i, &si);
  po_PathSegment leaf = {0};
  if (n) po_Override_Segment(o, i, n - 1, &leaf);
  bool duration = leaf.message_type && !strcmp(leaf.message_type, kDuration);
  if (si.shape == kPo_SetShape_Message && !duration && !merge_is_whole(o, i, leaf.message_type, a)) {
    return "an object value: Consul replaces the whole message with one holding only the fields given, but a MERGE "
           "keeps the message's other fields; set each field with a patch of its own";
  }
  if (si.zero && si.shape != kPo_SetShape_Message) {
    return si.shape == kPo_SetShape_List
               ? "an empty array: a MERGE copies only the fields a patch sets, and an empty list is unset in proto3, "
                 "so the list would keep its generated elements"
               : "a zero value (0, false, \"\", or an enum's first value): proto3 leaves it unset, and a MERGE copies "
                 "only the fields a patch sets, so the field would keep its generated value (istio/istio#18169)";
  }
  int minor = po_Istio_JudgedMinor(&c->options, NULL);
  if (si.shape == kPo_SetShape_List && minor < kPo_IstioMinorReplaceList) {
    return or_oom(po_Arena_Printf(a,
                           "an array: a MERGE appends to a list instead of replacing it (istio/istio#32413); "
                           "MERGE_AND_REPLACE_LIST, which replaces it as Consul does, needs Istio 1.%d or later (the "
                           "target runs 1.%d)", kPo_IstioMinorReplaceList, minor));
  }
  return NULL;
}

int po_Istio_JudgedMinor(const po_TargetOptions *o, bool *assumed) {
  bool unknown = !o || o->istio_minor <= 0;
  if (assumed) *assumed = unknown;
  if (!unknown) return o->istio_minor;
  const po_MeshRelease *d = po_MeshReleases_Default(&po_Istio_Releases);
  int minor = d ? po_Istio_ParseVersion(d->release) : -1;
  return minor > 0 ? minor : kPo_IstioMinorReplaceList;
}

bool po_Istio_ReleaseAssumed(const po_TargetOptions *o) { return !o || o->istio_minor <= 0; }

/* Patch i, accepted, sets a list while the release is assumed: the EnvoyFilter's operation
 * (MERGE_AND_REPLACE_LIST) holds only if the mesh runs 1.31 or later, so the assumption is said
 * where it decides something. false only when out of memory. */
static bool warn_assumed(po_CompiledOverride *c, po_Arena *a, size_t i) {
  bool assumed;
  int minor = po_Istio_JudgedMinor(&c->options, &assumed);
  po_SetInfo si;
  po_Override_Set(c->override, i, &si);
  if (!assumed || si.shape != kPo_SetShape_List) return true;
  const po_Patch *p = &c->args->patches[i];
  /* within the 256 bytes the API server keeps of a warning, with the webhook's "patches[N]: " */
  const char *text = po_Arena_Printf(a,
                                     "the Istio release is not known (neither --istio-version nor istiod's version "
                                     "label): taken as 1.%d, the newest listed, so this array becomes "
                                     "MERGE_AND_REPLACE_LIST, which Istio before 1.%d refuses; set --istio-version",
                                     minor, (int)kPo_IstioMinorReplaceList);
  po_Diagnostic *d = text ? po_Diagnostics_Add(c->diags, kPo_Severity_Warning, kPo_DiagKind_Target, (int)i, p->path, text)
                          : NULL;
  if (d) d->pos = p->pos;
  return d != NULL;
}

static json_object *config_patch(const po_CompiledOverride *c, size_t i, const po_ServiceName *service, po_Arena *a);

/* Whether the EnvoyFilter's configPatches alone would exceed kPo_MaxStoredBytes (owned.h). A lower bound, so
 * nothing storable is refused: each patch's configPatch without a service, serialized once,
 * times the configPatches it becomes (one per service, each longer by its match). Linear in the
 * patches' size, where building the filter is not (a patch per service: 100 x 64 of them). *why
 * gets the sentence, NULL when it fits; false only when out of memory. */
static bool too_large(const po_CompiledOverride *c, po_Arena *a, const char **why) {
  *why = NULL;
  size_t total = 0, count = 0;
  for (size_t i = 0; i < c->args->patch_count; i++) {
    json_object *cp = config_patch(c, i, NULL, a);
    size_t len = cp ? po_Owned_JsonBytes(cp) : 0, n = c->args->patches[i].resource_filter.service_count;
    bool ok = len > 0; /* measured before cp goes */
    json_object_put(cp);
    if (!ok) return false;
    n = n ? n : 1;
    count += n;
    total += len * n;
  }
  if (total <= kPo_MaxStoredBytes) return true;
  *why = po_Arena_Printf(a, "the EnvoyFilter would have %zu configPatches of at least %zu bytes in all (one per patch "
                            "and service), and Kubernetes stores objects of at most %d bytes (etcd's default): split the "
                            "patches among PropertyOverrides, or give fewer services", count, total, (int)kPo_MaxStoredBytes);
  return *why != NULL;
}

/* Istio applies an EnvoyFilter of its root namespace to every namespace's workloads its
 * workloadSelector matches (istio/api, EnvoyFilter.workloadSelector): with a Service's selector
 * there it would patch the look-alike pods of every namespace, not the Service's. */
static bool check_root_namespace(po_CompiledOverride *c, po_Arena *a) {
  const char *root = c->options.istio_root_namespace && *c->options.istio_root_namespace
                         ? c->options.istio_root_namespace : "istio-system";
  if (c->target_kind != kPo_TargetKind_Service || !c->ns || strcmp(c->ns, root) != 0) return true;
  const char *text = po_Arena_Printf(a,
                                     "not expressible in an Istio EnvoyFilter: a Service target in Istio's root namespace "
                                     "'%s': an EnvoyFilter there applies to the pods of every namespace its "
                                     "workloadSelector matches, not only to Service '%s'; use a Mesh target for every "
                                     "namespace", root, c->target_name ? c->target_name : "");
  return text && po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Target, -1, NULL, text) != NULL;
}

bool po_Istio_Check(po_CompiledOverride *c, po_Arena *a) {
  if (!c->override || !c->args) return true;
  if (!check_root_namespace(c, a)) return false;
  bool refused = false;
  for (size_t i = 0; i < c->args->patch_count; i++) {
    const char *why = reason(c, i, a);
    if (why == kOom || (why && !refuse(c, a, i, why))) return false;
    if (!why && !warn_assumed(c, a, i)) return false;
    refused |= why != NULL;
  }
  if (refused) return true; /* a refused patch has no configPatch to measure */
  const char *big;
  if (!too_large(c, a, &big)) return false;
  if (big) {
    const char *text = po_Arena_Printf(a, "not expressible in an Istio EnvoyFilter: %s", big);
    if (!text || !po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Target, -1, NULL, text)) return false;
  }
  return true;
}

const char *po_Istio_FilterName(const po_CompiledOverride *c, po_Arena *a) {
  if (c->target_kind == kPo_TargetKind_IstioMesh) return po_Istio_MeshFilterName(c->ns, c->name, a);
  return po_Arena_Printf(a, "propertyoverride-%s", c->name);
}

const char *po_Istio_LegacyMeshFilterName(const char *name, po_Arena *a) {
  return po_Arena_Printf(a, "propertyoverride-%s", name);
}

/* FNV-1a 64: stable across processes and versions (the name is what finds the object again),
 * unlike the keyed hash of the reconcile's caches. */
static uint64_t fnv1a(const char *s, uint64_t h) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

const char *po_Istio_MeshFilterName(const char *ns, const char *name, po_Arena *a) {
  /* A namespace is a DNS-1123 label (no dot), so the first dot after the prefix separates it
   * from the name: (ns, name) -> one name, and none of them starts like a Service target's
   * (`propertyoverride-`) or the old Mesh name. Both parts are valid subdomain parts already. */
  const char *full = po_Arena_Printf(a, "propertyoverride.%s.%s", ns ? ns : "", name ? name : "");
  if (!full || strlen(full) <= kPo_IstioMaxName) return full;
  /* Too long: a readable prefix, then the hash of the whole (17 characters: "-" and 16 hex). A
   * prefix cut after a '.' or '-' would put it next to the '-' (".-" is no valid subdomain). */
  char *out = po_Arena_Malloc(a, kPo_IstioMaxName + 1);
  if (!out) return NULL;
  size_t keep = kPo_IstioMaxName - 17;
  memcpy(out, full, keep);
  while (keep > 0 && (out[keep - 1] == '.' || out[keep - 1] == '-')) keep--;
  uint64_t h = fnv1a(name ? name : "", fnv1a("/", fnv1a(ns ? ns : "", 0xcbf29ce484222325ull)));
  snprintf(out + keep, kPo_IstioMaxName + 1 - keep, "-%016llx", (unsigned long long)h);
  return out;
}

const char *po_Istio_FilterNamespace(const po_CompiledOverride *c) {
  return c->target_kind == kPo_TargetKind_IstioMesh ? c->options.istio_root_namespace : c->ns;
}

int po_Istio_ParseVersion(const char *s) {
  int major, minor;
  return po_MeshRelease_Line(s, &major, &minor) && major == 1 ? minor : -1;
}

/* ---- the EnvoyFilter ---- */


/* {seg0: {seg1: ... value}} from the resolved chain, outermost first. A path through a wrapper
 * to its `value` (/max_requests_per_connection/value) sets the wrapper, written bare. */
static json_object *merge_value(const po_CompiledOverride *c, size_t i, po_Arena *a) {
  po_Value *v = po_Override_SetJson(c->override, i, a);
  json_object *cur = v ? po_Value_ToJsonC(v) : NULL;
  for (size_t k = po_Override_SegmentCount(c->override, i); cur && k-- > 0;) {
    po_PathSegment s, parent;
    if (!po_Override_Segment(c->override, i, k, &s)) {
      json_object_put(cur);
      return NULL;
    }
    if (k > 0 && !strcmp(s.name, "value") && po_Override_Segment(c->override, i, k - 1, &parent) &&
        is_wrapper(parent.message_type)) {
      continue;
    }
    json_object *m = json_object_new_object();
    if (!m) json_object_put(cur);
    if (!m || !po_Json_Put(m, s.name, cur)) {
      json_object_put(m);
      return NULL;
    }
    cur = m;
  }
  return cur;
}

static const char *apply_to(po_ResourceType t) {
  return t == kPo_ResourceType_Cluster ? "CLUSTER" : t == kPo_ResourceType_Listener ? "LISTENER" : "ROUTE_CONFIGURATION";
}

/* One configPatch; `service` NULL: every resource of the kind in the context. */
static json_object *config_patch(const po_CompiledOverride *c, size_t i, const po_ServiceName *service, po_Arena *a) {
  po_SetInfo si;
  po_Override_Set(c->override, i, &si);
  json_object *cp = json_object_new_object(), *match = json_object_new_object(), *patch = json_object_new_object();
  bool ok = cp && match && patch;
  po_TrafficDirection d = po_Override_Direction(c->override, i);
  ok = ok && po_Json_Put(cp, "applyTo", json_object_new_string(apply_to(po_Override_ResourceType(c->override, i))));
  ok = ok && po_Json_Put(match, "context",
                 json_object_new_string(d == kPo_TrafficDirection_Inbound ? "SIDECAR_INBOUND" : "SIDECAR_OUTBOUND"));
  if (ok && service) {
    json_object *cl = json_object_new_object();
    const char *ns = service->namespace_ && *service->namespace_ ? service->namespace_ : "default";
    ok = po_Json_Put(match, "cluster", cl) &&
         po_Json_Put(cl, "service", json_object_new_string(po_Arena_Printf(a, "%s.%s.svc.%s", service->name, ns,
                                                                   c->options.cluster_domain)));
  }
  ok = ok && po_Json_Put(cp, "match", match);
  match = NULL;
  ok = ok && po_Json_Put(patch, "operation",
                 json_object_new_string(si.shape == kPo_SetShape_List ? "MERGE_AND_REPLACE_LIST" : "MERGE"));
  ok = ok && po_Json_Put(patch, "value", merge_value(c, i, a));
  ok = ok && po_Json_Put(cp, "patch", patch);
  patch = NULL;
  json_object_put(match);
  json_object_put(patch);
  if (!ok) {
    json_object_put(cp);
    return NULL;
  }
  return cp;
}

json_object *po_Istio_EnvoyFilter(const po_CompiledOverride *c, const json_object *selector, po_Arena *a,
                                  const char **why) {
  if (why) *why = NULL;
  if (!c->accepted || po_TargetKind_Mesh(c->target_kind) != kPo_Mesh_Istio) {
    if (why) *why = "not an accepted PropertyOverride of an Istio target (Service or Mesh)";
    return NULL;
  }
  bool per_service = c->target_kind == kPo_TargetKind_Service;
  if (per_service && (!json_object_is_type(selector, json_type_object) || json_object_object_length(selector) == 0)) {
    if (why) *why = "the Service has no spec.selector: an EnvoyFilter for its sidecars selects its pods by those labels";
    return NULL;
  }
  json_object *ef = json_object_new_object(), *md = json_object_new_object(), *labels = json_object_new_object(),
              *spec = json_object_new_object(), *patches = json_object_new_array();
  bool ok = ef && md && labels && spec && patches;
  ok = ok && po_Json_Put(ef, "apiVersion", json_object_new_string(PO_ISTIO_API_VERSION));
  ok = ok && po_Json_Put(ef, "kind", json_object_new_string("EnvoyFilter"));
  ok = ok && po_Json_Put(md, "name", json_object_new_string(po_Istio_FilterName(c, a)));
  if (ok && *po_Istio_FilterNamespace(c)) ok = po_Json_Put(md, "namespace", json_object_new_string(po_Istio_FilterNamespace(c)));
  ok = ok && po_Json_Put(labels, "app.kubernetes.io/managed-by", json_object_new_string("propertyoverride"));
  ok = ok && po_Json_Put(md, "labels", labels);
  labels = NULL;
  ok = ok && po_Json_Put(ef, "metadata", md);
  md = NULL;
  if (ok && per_service) {
    json_object *ws = json_object_new_object(), *sel = NULL;
    ok = ws && json_object_deep_copy((json_object *)selector, &sel, NULL) == 0 && po_Json_Put(ws, "labels", sel) &&
         po_Json_Put(spec, "workloadSelector", ws);
    if (!ok) json_object_put(ws);
  }
  for (size_t i = 0; ok && i < c->args->patch_count; i++) {
    const po_ResourceFilter *f = &c->args->patches[i].resource_filter;
    if (f->service_count == 0) ok = po_Json_Append(patches, config_patch(c, i, NULL, a));
    for (size_t k = 0; ok && k < f->service_count; k++) ok = po_Json_Append(patches, config_patch(c, i, &f->services[k], a));
  }
  ok = ok && po_Json_Put(spec, "configPatches", patches);
  patches = NULL;
  /* Istio applies a context's patch sets by this priority (lower first, the root namespace's
   * before a workload namespace's, then by creation time): spec.priority's own convention, so the
   * order our conflict reports state is Istio's but for ties. 0 is Istio's default: left out. */
  if (ok && c->priority != 0) ok = po_Json_Put(spec, "priority", json_object_new_int(c->priority));
  ok = ok && po_Json_Put(ef, "spec", spec);
  spec = NULL;
  json_object_put(md);
  json_object_put(labels);
  json_object_put(spec);
  json_object_put(patches);
  if (!ok) {
    json_object_put(ef);
    return NULL;
  }
  return ef;
}

/* ---- the plan: owned.c's, with an EnvoyFilter's sentences ---- */

po_OwnedPlan po_Istio_Plan(const json_object *current, const json_object *desired, const char *owner_uid,
                           const char *created_uid) {
  return po_Owned_Plan(current, desired, owner_uid, created_uid, kPo_Owned_EnvoyFilter);
}
