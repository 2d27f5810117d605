/* One case (ours.h): compile and check, render, apply; the lines the oracle and the tally read. */
#include "ours.h"

#include <string.h>

#include "po/meshes/eg.h"
#include "po/meshes/mesh.h"
#include "po/targets/override.h"

static struct json_object *override_object(const char *id, struct json_object *patches) {
  struct json_object *po = json_object_new_object(), *meta = json_object_new_object(),
                     *spec = json_object_new_object(), *ref = json_object_new_object();
  json_object_object_add(po, "apiVersion", json_object_new_string("propertyoverride.io/v1alpha1"));
  json_object_object_add(po, "kind", json_object_new_string("PropertyOverride"));
  json_object_object_add(meta, "name", json_object_new_string("oracle"));
  json_object_object_add(meta, "namespace", json_object_new_string("default"));
  json_object_object_add(meta, "uid", json_object_new_string(id));
  json_object_object_add(po, "metadata", meta);
  json_object_object_add(ref, "group", json_object_new_string("gateway.networking.k8s.io"));
  json_object_object_add(ref, "kind", json_object_new_string("Gateway"));
  json_object_object_add(ref, "name", json_object_new_string("eg"));
  json_object_object_add(spec, "targetRef", ref);
  json_object_object_add(spec, "patches", json_object_get(patches));
  json_object_object_add(po, "spec", spec);
  return po;
}

const po_MeshRelease *po_EgOracle_Release(void) {
  return po_MeshReleases_Find(po_Mesh_Ops(kPo_Mesh_EnvoyGateway)->releases, "1.9");
}

const po_EnvoyApi *po_EgOracle_Api(void) { return po_MeshRelease_Api(po_EgOracle_Release()); }

/* Our refusals: every error, as "kind: message" (the tally turns them into reasons). */
static struct json_object *refusals(const po_CompiledOverride *c) {
  /* po_DiagKind, in its order (engine.h) */
  static const char *const kKinds[] = {"consul", "envoy-rule", "wire-format", "deprecated", "decode", "wire-array", "target"};
  struct json_object *out = json_object_new_array();
  for (size_t i = 0; c->diags && i < po_Diagnostics_Count(c->diags); i++) {
    const po_Diagnostic *d = po_Diagnostics_At(c->diags, i);
    if (d->severity != kPo_Severity_Error) continue;
    const char *kind = (unsigned)d->kind < sizeof(kKinds) / sizeof(kKinds[0]) ? kKinds[d->kind] : "other";
    char line[1024];
    snprintf(line, sizeof(line), "%s: %s", kind, d->message ? d->message : "");
    json_object_array_add(out, json_object_new_string(line));
  }
  return out;
}

/* Our engine on one fixture resource: Consul's PatchStruct of every matching patch, in order,
 * then Envoy's rules on the messages the patches created. The result, or the error. */
static bool apply_one(const po_CompiledOverride *c, struct json_object *res, struct json_object *ours,
                      struct json_object *record, po_Arena *a) {
  struct json_object *v = NULL;
  json_object_object_get_ex(res, "resourceType", &v);
  po_ResourceType rt = po_ResourceType_Parse(json_object_get_string(v));
  json_object_object_get_ex(res, "json", &v);
  const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
  po_Status st;
  po_Status_Clear(&st);
  /* the fixture decoded with the override's snapshot (Envoy Gateway's release's), which its chains are of */
  po_Message *m = po_Message_ParseJson(po_Override_Api(c->override), po_ResourceType_Message(rt), text, strlen(text), a, &st);
  if (!m) {
    json_object_object_add(record, "fixture_error", json_object_new_string(st.message));
    return false;
  }
  po_ServiceName svc = {.name = "backend", .namespace_ = "default", .partition = ""};
  bool clusterish = rt == kPo_ResourceType_Cluster || rt == kPo_ResourceType_ClusterLoadAssignment;
  po_Payload p = {.resource_type = rt, .direction = kPo_TrafficDirection_Outbound, .service = clusterish ? &svc : NULL};
  po_Diagnostics *rules = po_Diagnostics_New(a);
  bool patched = false;
  if (!po_Override_ApplyChecked(c->override, m, &p, &patched, rules, &st))
    json_object_object_add(record, "ours_error", json_object_new_string(st.message));
  struct json_object *broken = json_object_object_get(record, "ours_rules");
  for (size_t i = 0; broken && rules && i < po_Diagnostics_Count(rules); i++)
    json_object_array_add(broken, json_object_new_string(po_Diagnostics_At(rules, i)->message));
  size_t len = 0;
  char *out = po_Message_ToJson(m, a, &len, &st);
  if (!out) {
    json_object_object_add(record, "ours_error", json_object_new_string(st.message));
    out = "{}";
  }
  struct json_object *entry = json_object_new_object();
  json_object_object_add(entry, "type", json_object_get(json_object_object_get(res, "type")));
  json_object_object_add(entry, "json", json_tokener_parse(out));
  json_object_array_add(ours, entry);
  return true;
}

static void write_line(FILE *f, struct json_object *o) {
  fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), f);
  fputc('\n', f);
}

/* The policy rendered: its jsonPatches, our results, the oracle's line. */
static void rendered(const po_EgWorld *w, const po_CompiledOverride *c, struct json_object *epp, const char *id,
                     struct json_object *record, FILE *cases, po_Arena *a) {
  struct json_object *spec = NULL, *jp = NULL, *line = json_object_new_object(), *ours = json_object_new_array(),
                     *resources = json_object_new_array();
  json_object_object_get_ex(epp, "spec", &spec);
  json_object_object_get_ex(spec, "jsonPatches", &jp);
  for (size_t i = 0; i < json_object_array_length(w->resources); i++) {
    struct json_object *res = json_object_array_get_idx(w->resources, i), *entry = json_object_new_object();
    if (!apply_one(c, res, ours, record, a)) break;
    json_object_object_add(entry, "type", json_object_get(json_object_object_get(res, "type")));
    json_object_object_add(entry, "json", json_object_get(json_object_object_get(res, "json")));
    json_object_array_add(resources, entry);
  }
  json_object_object_add(record, "jsonPatches", json_object_get(jp));
  json_object_object_add(line, "id", json_object_new_string(id));
  json_object_object_add(line, "resources", resources);
  json_object_object_add(line, "patches", json_object_get(jp));
  json_object_object_add(line, "ours", ours);
  write_line(cases, line);
  json_object_put(line);
}

bool po_EgCase_Run(const po_EgWorld *w, const char *id, struct json_object *patches, FILE *cases, FILE *meta,
                   po_Arena *a) {
  struct json_object *po = override_object(id, patches), *record = json_object_new_object(),
                     *tags = json_object_new_array();
  json_object_object_add(record, "id", json_object_new_string(id));
  json_object_object_add(record, "patches", json_object_get(patches));
  for (size_t i = 0; i < json_object_array_length(patches); i++)
    po_EgTags_Add(json_object_array_get_idx(patches, i), tags, a);
  json_object_object_add(record, "tags", tags);
  json_object_object_add(record, "ours_rules", json_object_new_array());
  po_CompiledOverride c;
  po_TargetOptions opts = {0};
  opts.release[kPo_Mesh_EnvoyGateway] = po_EgOracle_Release();
  po_CompileOutcome got = po_CompiledOverride_FromObject(po, &opts, a, &c);
  bool ok = got != kPo_CompileOutcome_NoMemory;
  if (got == kPo_CompileOutcome_Refused) {
    json_object_object_add(record, "refused", refusals(&c));
  } else if (ok) {
    const json_object *routes[] = {w->route};
    po_EGTopology t = {.gateway = w->gateway, .routes = routes, .route_count = 1};
    const char *why = NULL;
    struct json_object *epp = po_EG_EnvoyPatchPolicy(&c, &t, a, &why, NULL);
    if (epp) {
      rendered(w, &c, epp, id, record, cases, a);
      json_object_put(epp);
    } else if (why) {
      struct json_object *r = json_object_new_array();
      json_object_array_add(r, json_object_new_string(po_Arena_Printf(a, "render: %s", why)));
      json_object_object_add(record, "refused", r);
    } else {
      ok = false;
    }
  }
  if (ok) write_line(meta, record);
  json_object_put(record);
  json_object_put(po);
  return ok;
}
