#include "po/meshes/consul_check.h"

#include <json-c/json.h>
#include <stdio.h>
#include <strings.h>
#include <string.h>

#include "po/meshes/consul.h"
#include "po/base/json.h"
#include "po/targets/override.h"
#include "po/targets/text.h"


/* How many patches an entry's arguments hold, as Consul's decoder will see them: the key matches
 * case-insensitively (mapstructure), and a single object is a list of one. Counted on the
 * json-c tree, before any decoding. */
size_t po_ConsulEntry_PatchCount(const json_object *args) {
  size_t n = 0;
  if (!args || !json_object_is_type(args, json_type_object)) return 0;
  json_object_object_foreach((json_object *)args, key, val) {
    if (strcasecmp(key, "patches") != 0) continue;
    n += json_object_is_type(val, json_type_array) ? json_object_array_length(val) : val != NULL;
  }
  return n;
}

/* The object's limits (override.h, README.md): over one, a single finding names it and nothing
 * is checked, so no request costs more than kPo_MaxPatchesPerConsulObject patches' validation. */
static const char *over_limit(json_object *list, po_Arena *a, size_t *at) {
  size_t entries = 0, patches = 0, total = json_object_array_length(list);
  for (size_t i = 0; i < total; i++) {
    json_object *e = json_object_array_get_idx(list, i);
    const char *name = po_Json_String(e, "name");
    if (!name || strcmp(name, PO_EXTENSION_NAME) != 0) continue;
    *at = i;
    if (++entries > kPo_MaxExtensionsPerConsulObject) {
      return po_Arena_Printf(a, "more than %d builtin/property-override entries in spec.envoyExtensions; at most %d are "
                                "allowed in one object (combine the patches of several entries into one)",
                             kPo_MaxExtensionsPerConsulObject, kPo_MaxExtensionsPerConsulObject);
    }
    patches += po_ConsulEntry_PatchCount(po_Json_Get(e, "arguments"));
    if (patches > kPo_MaxPatchesPerConsulObject) {
      return po_Arena_Printf(a, "the builtin/property-override entries up to this one hold %zu patches; at most %d are "
                                "allowed in all entries of one object together",
                             patches, kPo_MaxPatchesPerConsulObject);
    }
  }
  return NULL;
}

static size_t check(const json_object *obj, const char *judged_for, const po_EnvoyApi *api, po_Arena *a,
                    po_ConsulExtensionCheck **out, bool *oom);

size_t po_ConsulObject_CheckRelease(const json_object *obj, const po_MeshRelease *release, const po_EnvoyApi *api,
                                    po_Arena *a, po_ConsulExtensionCheck **out, bool *oom) {
  if (!release) release = po_MeshReleases_Default(&po_Consul_Releases);
  if (!api) api = release ? po_MeshRelease_Api(release) : NULL;
  /* the release the snapshot stands for, in an unknown field's hint (not when --envoy-api named
   * another snapshot), as a PropertyOverride's compile names its target's */
  const char *judged_for = release && api == po_MeshRelease_Api(release) ? po_Arena_Printf(a, "consul@%s", release->release)
                                                                         : NULL;
  if (release && !judged_for && api == po_MeshRelease_Api(release)) return *out = NULL, *oom = true, 0; /* the Printf */
  return check(obj, judged_for, api, a, out, oom);
}

/* The entries judged by `api`, an unknown field's hint naming `judged_for` (NULL: "the Envoy API
 * used here"). */
static size_t check(const json_object *obj, const char *judged_for, const po_EnvoyApi *api, po_Arena *a,
                    po_ConsulExtensionCheck **out, bool *oom) {
  *out = NULL;
  *oom = false;
  json_object *list = po_Json_Get(po_Json_Get(obj, "spec"), "envoyExtensions");
  if (!list || !json_object_is_type(list, json_type_array)) return 0;
  size_t total = json_object_array_length(list), n = 0, at = 0;
  const char *limit = over_limit(list, a, &at);
  if (limit) {
    po_ConsulExtensionCheck *c = po_Arena_Malloc(a, sizeof *c);
    if (!c || !(c->diags = po_Diagnostics_New(a))) return *oom = true, 0;
    c->entry_index = at;
    c->name = PO_EXTENSION_NAME;
    c->error = limit;
    c->limit = true;
    *out = c;
    return 1;
  }
  po_ConsulExtensionCheck *checks = po_Arena_Malloc(a, (total ? total : 1) * sizeof *checks);
  if (!checks) return *oom = true, 0;
  /* an unknown field's hint says which Consul releases accept it, or that none does */
  po_ApiRelease rows[16];
  po_ApiReleases releases = {.mesh = "consul", .rows = rows};
  releases.count = po_MeshReleases_ApiRows(&po_Consul_Releases, "consul", rows, sizeof rows / sizeof rows[0]);
  for (size_t i = 0; i < total; i++) {
    json_object *e = json_object_array_get_idx(list, i);
    const char *name = po_Json_String(e, "name");
    if (!name || strcmp(name, PO_EXTENSION_NAME) != 0) continue;
    po_ConsulExtensionCheck *c = &checks[n++];
    c->entry_index = i;
    c->name = name;
    c->diags = po_Diagnostics_New(a);
    if (!c->diags) return *oom = true, 0;
    po_Status st;
    po_Status_Clear(&st);
    po_Value *args = po_Value_FromJsonC(po_Json_Get(e, "arguments"), a, &st);
    if (!args) {
      /* Memory running out is no verdict on the entry: said as invalid, a render or validate
       * would call a valid object invalid (t_render_oom found it). */
      if (st.code == kPo_Status_NoMemory) return *oom = true, 0;
      c->error = po_Arena_Printf(a, "%s", st.message);
      continue;
    }
    po_CompileOptions co = po_CompileOptions_Default();
    co.convention = kPo_Convention_Wire; /* what Consul's HTTP API will hand the Constructor */
    co.api = api;
    co.judged_for = judged_for;
    co.releases = &releases;
    c->accepted = po_Constructor(name, args, &co, a, c->diags) != NULL;
  }
  *out = checks;
  return n;
}

/* The errors po_Diagnostics_ConsulText lists for these diagnostics: one when Consul returns an
 * error alone (patch_index -2), else every error. */
static size_t consul_errors(const po_Diagnostics *d) {
  size_t n = 0;
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, i);
    if (x->severity != kPo_Severity_Error) continue;
    if (x->patch_index == -2) return 1;
    n++;
  }
  return n;
}

/* One entry's errors. When they all fit, Consul's aggregated text exactly as Consul prints it;
 * else one line per error that fits, each naming its entry, and the rest counted. */
static void describe_entry(po_Text *t, const po_ConsulExtensionCheck *c, po_Arena *a) {
  if (c->error) {
    if (!po_Text_HasRoom(t, 1)) return po_Text_Skip(t, 1);
    po_Text_Item(t, po_Arena_Printf(a, "spec.envoyExtensions[%zu]%s: %s", c->entry_index, c->limit ? "" : ".arguments",
                                    c->error), 1);
    return;
  }
  size_t errors = consul_errors(c->diags);
  if (errors == 0) errors = 1; /* rejected without an error diagnostic: still one finding */
  if (po_Text_HasRoom(t, errors)) {
    const char *text = po_Diagnostics_ConsulText(c->diags, true, a);
    const char *block = po_Arena_Printf(a, "spec.envoyExtensions[%zu] (%s): %s", c->entry_index, c->name, text ? text : "invalid");
    if (po_Text_Fits(t, block, errors)) {
      po_Text_Item(t, block, errors);
      return;
    }
  }
  for (size_t i = 0; i < po_Diagnostics_Count(c->diags); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(c->diags, i);
    if (x->severity != kPo_Severity_Error) continue;
    if (!po_Text_HasRoom(t, 1)) {
      po_Text_Skip(t, 1);
      continue;
    }
    char pre[48] = "";
    if (x->patch_index >= 0) snprintf(pre, sizeof pre, "invalid Patches[%d]: ", x->patch_index);
    po_Text_Item(t, po_Arena_Printf(a, "spec.envoyExtensions[%zu] (%s): %s%s%s%s%s", c->entry_index, c->name, pre, x->message,
                                    x->hint ? " (" : "", x->hint ? x->hint : "", x->hint ? ")" : ""),
                 1);
  }
}

const char *po_ConsulObject_Describe(const json_object *obj, const char *kind, const po_ConsulExtensionCheck *checks,
                                     size_t n, size_t max_bytes, po_Arena *a) {
  po_Text t;
  po_Text_Init(&t, a, kPo_DescribeMaxErrors, max_bytes ? max_bytes : kPo_DescribeMaxBytes);
  for (size_t k = 0; k < n; k++) {
    if (!checks[k].accepted) describe_entry(&t, &checks[k], a);
  }
  const char *out = po_Text_Finish(&t, "error");
  if (!out) return NULL;
  json_object *meta = po_Json_Get(obj, "metadata");
  const char *ns = po_Json_String(meta, "namespace"), *name = po_Json_String(meta, "name");
  return po_Arena_Printf(a, "%s %s%s%s has invalid property-override extensions:\n%s", kind, ns ? ns : "", ns ? "/" : "",
                         name ? name : "", out);
}
