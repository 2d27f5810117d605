#include "po/targets/consul_check.h"

#include <json-c/json.h>
#include <string.h>

#include "po/targets/consul.h"

static json_object *get(const json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *sget(const json_object *o, const char *k) {
  json_object *v = get(o, k);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

size_t po_ConsulObject_Check(const json_object *obj, po_Arena *a, po_ConsulExtensionCheck **out, bool *oom) {
  *out = NULL;
  *oom = false;
  json_object *list = get(get(obj, "spec"), "envoyExtensions");
  if (!list || !json_object_is_type(list, json_type_array)) return 0;
  size_t total = json_object_array_length(list), n = 0;
  po_ConsulExtensionCheck *checks = po_Arena_Malloc(a, (total ? total : 1) * sizeof *checks);
  if (!checks) return *oom = true, 0;
  for (size_t i = 0; i < total; i++) {
    json_object *e = json_object_array_get_idx(list, i);
    const char *name = sget(e, "name");
    if (!name || strcmp(name, PO_EXTENSION_NAME) != 0) continue;
    po_ConsulExtensionCheck *c = &checks[n++];
    c->entry_index = i;
    c->name = name;
    c->diags = po_Diagnostics_New(a);
    if (!c->diags) return *oom = true, 0;
    po_Status st;
    po_Status_Clear(&st);
    po_Value *args = po_Value_FromJsonC(get(e, "arguments"), a, &st);
    if (!args) {
      c->error = po_Arena_Printf(a, "%s", st.message);
      continue;
    }
    po_CompileOptions co = po_CompileOptions_Default();
    co.convention = kPo_ConventionWire; /* what Consul's HTTP API will hand the Constructor */
    c->accepted = po_Constructor(name, args, &co, a, c->diags) != NULL;
  }
  *out = checks;
  return n;
}

const char *po_ConsulObject_Describe(const json_object *obj, const char *kind, const po_ConsulExtensionCheck *checks,
                                     size_t n, po_Arena *a) {
  const char *out = NULL;
  for (size_t k = 0; k < n; k++) {
    const po_ConsulExtensionCheck *c = &checks[k];
    if (c->accepted) continue;
    const char *line;
    if (c->error) {
      line = po_Arena_Printf(a, "spec.envoyExtensions[%zu].arguments: %s", c->entry_index, c->error);
    } else {
      const char *text = po_Diagnostics_ConsulText(c->diags, true, a);
      line = po_Arena_Printf(a, "spec.envoyExtensions[%zu] (%s): %s", c->entry_index, c->name, text ? text : "invalid");
    }
    out = po_Arena_Printf(a, "%s%s%s", out ? out : "", out ? "\n" : "", line);
  }
  if (!out) return NULL;
  json_object *meta = get(obj, "metadata");
  const char *ns = sget(meta, "namespace"), *name = sget(meta, "name");
  return po_Arena_Printf(a, "%s %s%s%s has invalid property-override extensions:\n%s", kind, ns ? ns : "", ns ? "/" : "",
                         name ? name : "", out);
}
