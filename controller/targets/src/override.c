#include "po/targets/override.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"
#include "po/targets/tenancy.h"
#include "po/targets/text.h"

static void error(po_CompiledOverride *c, po_Arena *a, int idx, const char *msg) {
  po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Decode, idx, NULL, po_Arena_Printf(a, "%s", msg));
}

static const char kTargetList[] =
    "ServiceDefaults or ProxyDefaults (group consul.hashicorp.com, the default), Service (group \"\": Istio), "
    "Mesh (group networking.istio.io: every Istio sidecar), Gateway (group gateway.networking.k8s.io: Envoy Gateway)";

/* A namespace name: an RFC 1123 label ("" is the PropertyOverride's own namespace). */
static bool dns_label(const char *s) {
  size_t n = strlen(s);
  if (n > 63) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (!alnum && (ch != '-' || i == 0 || i == n - 1)) return false;
  }
  return true;
}

/* targetRef: {group, kind, name, namespace}. Without a group the kind decides (the kinds are distinct), so
 * the objects written before groups existed keep their meaning: no kind is ServiceDefaults.
 * false only when out of memory, as for the other parts of the spec below: json-c's writer, which
 * quotes a wrong value in the message, allocates outside the arena (its NULL printed as "?" made
 * a message, and a verdict, of a run whose memory ran out). */
static bool target(const json_object *obj, po_Arena *a, po_CompiledOverride *c) {
  json_object *ref = po_Json_Get(po_Json_Get(obj, "spec"), "targetRef");
  const char *group = po_Json_String(ref, "group");
  const char *kind = po_Json_String(ref, "kind");
  const char *name = po_Json_String(ref, "name");
  c->target_kind = kPo_TargetKind_ServiceDefaults;
  c->target_name = "";
  c->target_ns = "";
  json_object *ns = po_Json_Get(ref, "namespace");
  if (ns && !json_object_is_type(ns, json_type_null)) {
    const char *v = json_object_is_type(ns, json_type_string) ? json_object_get_string(ns) : NULL;
    if (!v || !dns_label(v)) {
      const char *text = json_object_to_json_string_ext(ns, JSON_C_TO_STRING_PLAIN);
      if (!text) return false; /* json-c's writer, outside the arena: no verdict */
      error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.namespace: %.80s is not a namespace name (want a DNS label: "
                                         "at most 63 of a-z, 0-9 and '-', starting and ending alphanumeric; empty for "
                                         "this PropertyOverride's own namespace)", text));
      return true;
    }
    c->target_ns = po_Arena_Printf(a, "%s", v);
  }
  if (kind) {
    if (!po_TargetKind_Parse(kind, &c->target_kind)) {
      error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.kind: '%s' is not a target (%s)", kind, kTargetList));
      return true;
    }
  }
  if (group && strcmp(group, po_TargetKind_Group(c->target_kind)) != 0) {
    error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.group: a %s target has group '%s', not '%s' (%s)",
                                    po_TargetKind_Name(c->target_kind), po_TargetKind_Group(c->target_kind), group, kTargetList));
    return true;
  }
  if (po_TargetKind_MeshWide(c->target_kind)) {
    if (name && strcmp(name, "global") != 0) {
      error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.name: a %s target must be named 'global', not '%s'",
                                      po_TargetKind_Name(c->target_kind), name));
    }
    c->target_name = "global";
  } else if (!name || !*name) {
    error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.name: the %s to patch is required",
                                    c->target_kind == kPo_TargetKind_ServiceDefaults ? "service whose ServiceDefaults"
                                    : c->target_kind == kPo_TargetKind_Service       ? "Service whose sidecars"
                                                                                : "Gateway whose proxies"));
  } else {
    c->target_name = po_Arena_Printf(a, "%s", name);
  }
  /* The CLI has no controller to ask: it gives its own policy (its --allow-cross-namespace-from,
   * default nobody), so validate -f, render and preview refuse what the controller would. The
   * webhook and the reconciler ask theirs (NULL here) and report TargetNotAllowed. A manifest
   * without a namespace is judged where it is applied. */
  char why[768];
  if (c->options.tenancy && *c->ns &&
      !po_Tenancy_AllowsNamespace(c->options.tenancy, c->target_kind, c->ns, c->target_ns, why, sizeof why)) {
    error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.namespace: %s", why));
  }
  return true;
}

/* spec.priority: an integer in int32's range, as Istio's EnvoyFilter and Envoy Gateway's
 * EnvoyPatchPolicy have it (lower applied first; 0 by default). false only when out of memory. */
static bool priority(const json_object *obj, po_Arena *a, po_CompiledOverride *c) {
  json_object *p = po_Json_Get(po_Json_Get(obj, "spec"), "priority");
  if (!p || json_object_is_type(p, json_type_null)) return true;
  bool integer = json_object_is_type(p, json_type_int);
  int64_t v = integer ? json_object_get_int64(p) : 0;
  /* json-c saturates integers past int64 at its bounds, which are out of range here too */
  if (!integer || v < INT32_MIN || v > INT32_MAX) {
    const char *text = json_object_to_json_string_ext((json_object *)p, JSON_C_TO_STRING_PLAIN);
    if (!text) return false; /* json-c's writer, outside the arena: no verdict */
    error(c, a, -1,
          po_Arena_Printf(a, "spec.priority: %.40s is not valid: want an integer from %d to %d (lower is applied "
                             "first, so a higher one wins a conflict; default 0)",
                          text, (int)INT32_MIN, (int)INT32_MAX));
    return true;
  }
  c->priority = (int32_t)v;
  return true;
}

/* spec.routeNamespaces: namespace names (DNS labels), or "*", at most kPo_MaxRouteNamespaces,
 * and only for a Gateway target (the HTTPRoutes whose clusters its patches follow, eg.h). false
 * only when out of memory. */
static bool route_namespaces(const json_object *obj, po_Arena *a, po_CompiledOverride *c) {
  json_object *rn = po_Json_Get(po_Json_Get(obj, "spec"), "routeNamespaces");
  if (!rn || json_object_is_type(rn, json_type_null)) return true;
  if (!json_object_is_type(rn, json_type_array)) {
    error(c, a, -1, "spec.routeNamespaces: must be a list of namespace names (or \"*\" for every namespace)");
    return true;
  }
  size_t n = json_object_array_length(rn);
  if (n && c->target_kind != kPo_TargetKind_Gateway) {
    error(c, a, -1, po_Arena_Printf(a, "spec.routeNamespaces: only for a Gateway target (it names the namespaces "
                                       "whose HTTPRoutes an Envoy Gateway target's cluster patches follow); this one "
                                       "targets a %s", po_TargetKind_Name(c->target_kind)));
    return true;
  }
  if (n > kPo_MaxRouteNamespaces) {
    error(c, a, -1, po_Arena_Printf(a, "spec.routeNamespaces: %zu namespaces; at most %d are allowed (\"*\" follows "
                                       "every namespace the Gateway's listeners admit)", n, kPo_MaxRouteNamespaces));
    return true;
  }
  const char **v = po_Arena_Malloc(a, (n ? n : 1) * sizeof *v);
  if (!v) return false;
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(rn, i);
    const char *s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
    /* the length as given: a NUL inside ("a\u0000b") would end the check at "a" */
    bool whole = s && (size_t)json_object_get_string_len(e) == strlen(s);
    if (!s || !whole || (!dns_label(s) && strcmp(s, "*") != 0) || !*s) {
      const char *text = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN);
      if (!text) return false; /* json-c's writer, outside the arena: no verdict */
      error(c, a, -1, po_Arena_Printf(a, "spec.routeNamespaces[%zu]: %.80s is not a namespace name (want a DNS label: "
                                         "at most 63 of a-z, 0-9 and '-', starting and ending alphanumeric; or \"*\" "
                                         "for every namespace)", i, text));
      return true;
    }
    for (size_t k = 0; k < i; k++) { /* the CRD's x-kubernetes-list-type: set */
      if (!strcmp(v[k], s)) {
        error(c, a, -1, po_Arena_Printf(a, "spec.routeNamespaces[%zu]: \"%s\" is given twice (a set: each namespace "
                                           "at most once; it is first at [%zu])", i, s, k));
        return true;
      }
    }
    v[i] = po_Arena_Printf(a, "%s", s);
    if (!v[i]) return false;
  }
  c->route_namespaces = v;
  c->route_namespace_count = n;
  return true;
}

const po_EnvoyApi *po_TargetOptions_Api(const po_TargetOptions *opts, po_Mesh mesh) {
  if (!opts || (unsigned)mesh >= kPo_MeshSlots) return po_EnvoyApi_Default();
  if (opts->api[mesh]) return opts->api[mesh];
  return opts->release[mesh] ? po_MeshRelease_Api(opts->release[mesh]) : po_EnvoyApi_Default();
}

/* The spec into args: 1 decoded, 0 refused (the why in c->diags), -1 out of memory. The spec's
 * value tree is made in options.spec_arena when set, and what args references of it (its strings,
 * the patches' values) copied into a (po_TargetOptions.spec_arena says why). */
static int decode_spec(const json_object *obj, po_Arena *a, po_CompiledOverride *c, po_Arguments *args) {
  json_object *spec = po_Json_Get(obj, "spec");
  po_Arena *tree = c->options.spec_arena ? c->options.spec_arena : a;
  po_Status st;
  po_Status_Clear(&st);
  po_Value *sv = NULL;
  /* A spec present as null is decoded (and refused by the spec decoder), not "required". */
  bool has_spec = json_object_object_get_ex(obj, "spec", NULL);
  if (!has_spec || !(sv = po_Value_FromJsonC(spec, tree, &st))) {
    if (spec && st.code == kPo_Status_NoMemory) return -1; /* not a verdict on the spec */
    error(c, a, -1, spec ? st.message : "spec: required");
    return 0;
  }
  /* refused: memory that ran out in a reads as such (po_CompiledOverride_Compile) */
  if (!po_Arguments_DecodeSpec(sv, a, args, c->diags)) return 0;
  return tree == a || po_Arguments_Adopt(args, a) ? 1 : -1;
}

/* The compile; false only when out of memory (c->accepted says the verdict). */
static bool compile(const json_object *obj, const po_TargetOptions *opts, const po_MeshRules *(*rules_for)(po_Mesh mesh),
                    po_Arena *a, po_CompiledOverride *c) {
  memset(c, 0, sizeof *c);
  c->diags = po_Diagnostics_New(a);
  if (!c->diags) return false;
  if (opts) c->options = *opts;
  if (!c->options.cluster_domain || !*c->options.cluster_domain) c->options.cluster_domain = "cluster.local";
  if (!c->options.istio_root_namespace || !*c->options.istio_root_namespace) c->options.istio_root_namespace = "istio-system";
  c->ns = po_Arena_Printf(a, "%s", po_Json_Meta(obj, "namespace"));
  c->name = po_Arena_Printf(a, "%s", po_Json_Meta(obj, "name"));
  json_object *gen = po_Json_Get(po_Json_Get(obj, "metadata"), "generation");
  if (gen) c->generation = json_object_get_int64(gen);
  if (!target(obj, a, c)) return false;
  po_Mesh mesh = po_TargetKind_Mesh(c->target_kind);
  c->release = (unsigned)mesh < kPo_MeshSlots ? c->options.release[mesh] : NULL;
  c->api = po_TargetOptions_Api(&c->options, mesh);
  if (!priority(obj, a, c) || !route_namespaces(obj, a, c)) return false;
  json_object *req = po_Json_Get(po_Json_Get(obj, "spec"), "required");
  c->required = req && json_object_is_type(req, json_type_boolean) && json_object_get_boolean(req);
  /* Bounded before anything costs per patch: the CRD's maxItems, enforced here too for objects
   * that reach the webhook, the reconciler or the CLI without the API server's schema check. */
  json_object *spec = po_Json_Get(obj, "spec"), *patches = po_Json_Get(spec, "patches");
  if (json_object_is_type(patches, json_type_array) && json_object_array_length(patches) > kPo_MaxPatchesPerOverride) {
    error(c, a, -1, po_Arena_Printf(a, "spec.patches: %zu patches; at most %d are allowed in one PropertyOverride "
                                       "(split them over several PropertyOverrides of the same target)",
                                    json_object_array_length(patches), kPo_MaxPatchesPerOverride));
    return true;
  }
  po_Arguments *args = po_Arena_Malloc(a, sizeof *args);
  if (!args) return false;
  int decoded = decode_spec(obj, a, c, args);
  if (decoded <= 0) return decoded == 0;
  /* The CRD's own rule (CEL), enforced here too: a cluster without CEL, or a manifest checked
   * offline, gets the same answer. Consul itself would strip the slashes. */
  for (size_t i = 0; i < args->patch_count; i++) {
    const char *p = args->patches[i].path;
    if (p && *p && p[strspn(p, "/")] && p[0] != '/') {
      po_Diagnostic *x = po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Decode, (int)i, p,
                                            po_Arena_Printf(a, "spec.patches[%zu].path: must start with '/' (a JSON Pointer such as '/%s')", i, p));
      if (x) x->pos = args->patches[i].pos;
    }
  }
  if (po_Diagnostics_ErrorCount(c->diags) > 0) return true;
  if (!po_Arguments_Friendly(c->api, args, a)) return false;
  /* One compile: the typed convention with every check, and the wire verdict of each patch
   * (what Consul decodes from the arguments we write) reported as an error of its own kind,
   * the reason taken from that kind; under the target's mesh release's snapshot. */
  po_CompileOptions co = po_CompileOptions_Default();
  co.api = c->api;
  /* the mesh release the snapshot stands for, in messages (not when --envoy-api named another) */
  if (c->release && c->api == po_MeshRelease_Api(c->release)) {
    co.judged_for = po_Arena_Printf(a, "%s@%s", po_Mesh_Name(po_TargetKind_Mesh(c->target_kind)), c->release->release);
  }
  co.releases = c->options.api_releases[po_TargetKind_Mesh(c->target_kind)];
  const po_MeshRules *rules = rules_for(po_TargetKind_Mesh(c->target_kind));
  co.check_wire = rules->wire_typed; /* only Consul decodes the arguments with its wire typing */
  size_t before = po_Diagnostics_Count(c->diags);
  po_Override *o = po_Override_Build(args, &co, a, c->diags);
  if (!o) {
    /* No schema (the engine said so in a diagnostic not about any patch), or out of memory,
     * which is never a verdict on the spec even when some patch's error came first. */
    for (size_t i = before; i < po_Diagnostics_Count(c->diags); i++) {
      const po_Diagnostic *x = po_Diagnostics_At(c->diags, i);
      if (x->kind == kPo_DiagKind_Decode && x->patch_index < 0) return true;
    }
    return false;
  }
  c->override = o;
  c->args = po_Override_Arguments(o);
  if (!po_Override_Valid(o) || po_Diagnostics_ErrorCount(c->diags) > 0) return true;
  /* The target's adapter: what its mesh cannot express, each patch with its reason. */
  if (rules->check && !rules->check(c, a)) return false;
  if (po_Diagnostics_ErrorCount(c->diags) > 0) return true;
  if (rules->wire_typed) {
    po_Value *consul = po_Arguments_ToConsul(c->args, c->options.arguments_arena ? c->options.arguments_arena : a);
    if (!consul) return false;
    c->consul_arguments = consul;
  }
  c->accepted = true;
  return true;
}

po_CompileOutcome po_CompiledOverride_Compile(const json_object *obj, const po_TargetOptions *opts,
                                              const po_MeshRules *(*rules_for)(po_Mesh mesh), po_Arena *a,
                                              po_CompiledOverride *c) {
  if (!compile(obj, opts, rules_for, a, c)) return kPo_CompileOutcome_NoMemory;
  /* Memory that ran out on the way (a schema load, a path the compile could not resolve) reads as
   * an error in the spec: it is no verdict (adv-27, test_compile_oom). po_Arguments_Friendly says
   * so itself: a rewrite it could not finish is no override (test_friendly_values_whole_or_no_memory). */
  if (!c->accepted && po_Engine_OutOfMemory(a)) return kPo_CompileOutcome_NoMemory;
  return c->accepted ? kPo_CompileOutcome_Accepted : kPo_CompileOutcome_Refused;
}

static const char *first_line(const char *s, po_Arena *a) {
  const char *nl = strchr(s, '\n');
  return nl ? po_Arena_Strndup(a, s, (size_t)(nl - s)) : s;
}

/* One diagnostic's line; formatted only for those that will be shown. */
static const char *describe_line(const po_Diagnostic *x, bool full, po_Arena *a) {
  const char *msg = full ? x->message : first_line(x->message, a);
  /* Consul's own prefix, so its aggregated text's lines appear as they are; the path last,
   * unless the message already starts with it (our rule violations do). */
  bool decode = x->kind == kPo_DiagKind_Decode || x->patch_index < 0;
  char prefix[48] = "";
  if (!decode) snprintf(prefix, sizeof prefix, "invalid Patches[%d]: ", x->patch_index);
  size_t pl = x->path ? strlen(x->path) : 0;
  bool path_in_msg = pl && strncmp(msg, x->path, pl) == 0 && msg[pl] == ':';
  bool where = !decode && x->path && !path_in_msg;
  return po_Arena_Printf(a, "%s%s%s%s%s%s%s%s%s", x->severity == kPo_Severity_Warning ? "warning: " : "", prefix, msg,
                         x->hint ? " (" : "", x->hint ? x->hint : "", x->hint ? ")" : "", where ? " (path " : "",
                         where ? x->path : "", where ? ")" : "");
}

const char *po_CompiledOverride_Describe(const po_CompiledOverride *c, bool full, bool warnings, size_t max_bytes,
                                         po_Arena *a) {
  po_Text t;
  po_Text_Init(&t, a, kPo_DescribeMaxErrors, max_bytes ? max_bytes : kPo_DescribeMaxBytes);
  for (int pass = 0; pass < 2; pass++) {
    po_Severity want = pass == 0 ? kPo_Severity_Error : kPo_Severity_Warning;
    if (pass == 1 && !warnings) break;
    for (size_t i = 0; i < po_Diagnostics_Count(c->diags); i++) {
      const po_Diagnostic *x = po_Diagnostics_At(c->diags, i);
      if (x->severity != want) continue;
      if (po_Text_HasRoom(&t, 1)) po_Text_Item(&t, describe_line(x, full, a), 1);
      else po_Text_Skip(&t, 1);
    }
  }
  return po_Text_Finish(&t, warnings ? "diagnostic" : "error");
}
