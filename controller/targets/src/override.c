#include "po/targets/override.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"
#include "text.h"

const char *po_TargetKind_Name(po_TargetKind k) {
  return k == kPo_TargetProxyDefaults ? "ProxyDefaults" : "ServiceDefaults";
}

static void error(po_CompiledOverride *c, po_Arena *a, int idx, const char *msg) {
  po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Decode, idx, NULL, po_Arena_Printf(a, "%s", msg));
}

/* targetRef: {kind: ServiceDefaults (default) | ProxyDefaults, name}. */
static void target(const json_object *obj, po_Arena *a, po_CompiledOverride *c) {
  json_object *ref = po_Json_Get(po_Json_Get(obj, "spec"), "targetRef");
  const char *kind = po_Json_String(ref, "kind");
  const char *name = po_Json_String(ref, "name");
  c->target_kind = kPo_TargetServiceDefaults;
  if (kind && strcmp(kind, "ProxyDefaults") == 0) c->target_kind = kPo_TargetProxyDefaults;
  else if (kind && strcmp(kind, "ServiceDefaults") != 0) {
    error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.kind: '%s' is not a target (ServiceDefaults or ProxyDefaults)", kind));
  }
  if (c->target_kind == kPo_TargetProxyDefaults) {
    if (name && strcmp(name, "global") != 0) {
      error(c, a, -1, po_Arena_Printf(a, "spec.targetRef.name: a ProxyDefaults target must be named 'global', not '%s'", name));
    }
    c->target_name = "global";
  } else if (!name || !*name) {
    error(c, a, -1, "spec.targetRef.name: the service whose ServiceDefaults to patch is required");
    c->target_name = "";
  } else {
    c->target_name = po_Arena_Printf(a, "%s", name);
  }
}

bool po_CompiledOverride_FromObject(const json_object *obj, po_Arena *a, po_CompiledOverride *c) {
  memset(c, 0, sizeof *c);
  c->diags = po_Diagnostics_New(a);
  if (!c->diags) return false;
  c->ns = po_Arena_Printf(a, "%s", po_Json_Meta(obj, "namespace"));
  c->name = po_Arena_Printf(a, "%s", po_Json_Meta(obj, "name"));
  json_object *gen = po_Json_Get(po_Json_Get(obj, "metadata"), "generation");
  if (gen) c->generation = json_object_get_int64(gen);
  target(obj, a, c);
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
  po_Status st;
  po_Status_Clear(&st);
  po_Value *sv = NULL;
  /* A spec present as null is decoded (and refused by the spec decoder), not "required". */
  bool has_spec = json_object_object_get_ex(obj, "spec", NULL);
  if (!has_spec || !(sv = po_Value_FromJsonC(spec, a, &st))) {
    if (spec && st.code == kPo_ErrNoMemory) return false; /* not a verdict on the spec */
    error(c, a, -1, spec ? st.message : "spec: required");
    return true;
  }
  po_Arguments *args = po_Arena_Malloc(a, sizeof *args);
  if (!args) return false;
  bool decoded = po_Arguments_DecodeSpec(sv, a, args, c->diags);
  if (!decoded) return true;
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
  po_Arguments_Friendly(args, a);
  /* One compile: the typed convention with every check, and the wire verdict of each patch
   * (what Consul decodes from the arguments we write) reported as an error of its own kind,
   * the reason taken from that kind. */
  po_CompileOptions co = po_CompileOptions_Default();
  co.check_wire = true;
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
  po_Value *consul = po_Arguments_ToConsul(c->args, a);
  if (!consul) return false;
  c->accepted = true;
  c->consul_arguments = consul;
  return true;
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
