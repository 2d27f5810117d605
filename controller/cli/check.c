/* One manifest object checked exactly as the admission webhook checks it: PropertyOverrides by
 * po_CompiledOverride_FromObject, ServiceDefaults/ProxyDefaults by po_ConsulObject_CheckRelease. The
 * webhook sees JSON without positions; here each finding gets the line of its patch from the
 * parsed document. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gitops.h"
#include "po/meshes/consul_check.h"
#include "po/meshes/eg.h"
#include "po/meshes/mesh.h"
#include "po/meshes/istio.h"

static const char *str_at(const po_Value *v, const char *a, const char *b) {
  const po_Value *x = po_Value_Get(po_Value_Get(v, a), b);
  return po_Value_Kind(x) == kPo_ValueKind_String ? po_Value_String(x, NULL) : "";
}

/* A map's value by key, case-insensitively: Consul's decoder matches argument keys so. */
static const po_Value *get_ci(const po_Value *m, const char *key) {
  if (po_Value_Kind(m) != kPo_ValueKind_Map) return NULL;
  for (size_t i = 0; i < po_Value_Size(m); i++) {
    if (!strcasecmp(po_Value_KeyAt(m, i), key)) return po_Value_At(m, i);
  }
  return NULL;
}

/* Where patch `i` starts in `patches` (a list, or a single object taken as a list of one). */
static po_Pos patch_pos(const po_Value *patches, int i, po_Pos fallback) {
  const po_Value *p = po_Value_Kind(patches) == kPo_ValueKind_List ? po_Value_At(patches, (size_t)i)
                      : i == 0                               ? patches
                                                             : NULL;
  po_Pos pos = p ? po_Value_Pos(p) : (po_Pos){0, 0};
  return pos.line ? pos : fallback;
}

static const char *code_of(po_DiagKind k) {
  switch (k) {
    case kPo_DiagKind_Consul: return "consul";
    case kPo_DiagKind_EnvoyRule: return "envoy-rule";
    case kPo_DiagKind_WireFormat:
    case kPo_DiagKind_WireArray: return "wire-format";
    case kPo_DiagKind_Deprecated: return "deprecated";
    case kPo_DiagKind_Decode: return "spec";
    case kPo_DiagKind_Target: return "target";
    case kPo_DiagKind_EnvoyRuleIfResource: return "envoy-rule-if-resource";
    case kPo_DiagKind_EnvoyRuleNotJudged: return "envoy-rule-not-judged";
  }
  return "consul";
}

/* One diagnostic as a finding; `patches` locates it. Messages get Consul's own prefix
 * ("invalid Patches[0]: "), as the webhook's denial has it. */
static bool add_diag(const po_CliObject *o, const char *kind, const po_Diagnostic *x, const po_Value *patches,
                     po_Pos fallback, int extension, po_Arena *a, po_CliReport *r) {
  po_CliFinding *f = po_CliReport_Add(r, o);
  if (!f) return false;
  f->warning = x->severity == kPo_Severity_Warning;
  f->kind = kind;
  f->ns = str_at(o->value, "metadata", "namespace");
  f->name = str_at(o->value, "metadata", "name");
  f->extension = extension;
  f->patch = x->patch_index;
  f->path = x->path;
  f->code = code_of(x->kind);
  f->hint = x->hint;
  f->pos = x->pos.line ? x->pos : x->patch_index >= 0 ? patch_pos(patches, x->patch_index, fallback) : fallback;
  bool prefixed = x->kind != kPo_DiagKind_Decode && x->patch_index >= 0 && !f->warning;
  f->message = prefixed ? po_Arena_Printf(a, "invalid Patches[%d]: %s", x->patch_index, x->message) : x->message;
  return true;
}

/* One object of `mesh` judged by its release's snapshot under `opts`: what validate names. */
static void judged(po_CliReport *r, const po_TargetOptions *opts, po_Mesh mesh) {
  if ((unsigned)mesh >= kPo_MeshSlots) return;
  r->judged_release[mesh] = opts ? opts->release[mesh] : NULL;
  r->judged_assumed[mesh] = po_Mesh_ReleaseAssumed(mesh, opts);
  r->judged_api[mesh] = po_TargetOptions_Api(opts, mesh);
  r->judged[mesh]++;
}

static bool check_override(const po_CliObject *o, json_object *obj, const po_TargetOptions *opts, po_Arena *a,
                           po_CliReport *r, po_CompiledOverride *out) {
  po_CompiledOverride local, *c = out ? out : &local;
  if (po_CompiledOverride_FromObject(obj, opts, a, c) == kPo_CompileOutcome_NoMemory) return false;
  /* a spec that decoded was judged by its target's mesh release's snapshot */
  if (c->override) judged(r, opts, po_TargetKind_Mesh(c->target_kind));
  const po_Value *patches = po_Value_Get(po_Value_Get(o->value, "spec"), "patches");
  for (size_t i = 0; i < po_Diagnostics_Count(c->diags); i++) {
    if (!add_diag(o, "PropertyOverride", po_Diagnostics_At(c->diags, i), patches, o->pos, -1, a, r)) return false;
  }
  if (c->accepted) r->valid++;
  else r->invalid++;
  return true;
}

static bool check_consul(const po_CliObject *o, json_object *obj, const po_TargetOptions *opts, po_Arena *a,
                         po_CliReport *r) {
  po_ConsulExtensionCheck *checks = NULL;
  bool oom = false, ok = true;
  size_t n = po_ConsulObject_CheckRelease(obj, opts ? opts->release[kPo_Mesh_Consul] : NULL,
                                          po_TargetOptions_Api(opts, kPo_Mesh_Consul), a, &checks, &oom);
  if (oom) return false;
  if (n) judged(r, opts, kPo_Mesh_Consul);
  const po_Value *exts = po_Value_Get(po_Value_Get(o->value, "spec"), "envoyExtensions");
  for (size_t k = 0; k < n; k++) {
    const po_ConsulExtensionCheck *c = &checks[k];
    const po_Value *entry = po_Value_At(exts, c->entry_index);
    po_Pos at = po_Value_Pos(entry).line ? po_Value_Pos(entry) : o->pos;
    ok &= c->accepted;
    if (c->error) {
      po_CliFinding *f = po_CliReport_Add(r, o);
      if (!f) return false;
      f->kind = o->kind_name;
      f->ns = str_at(o->value, "metadata", "namespace");
      f->name = str_at(o->value, "metadata", "name");
      f->extension = (int)c->entry_index;
      f->code = "spec";
      f->pos = at;
      f->message = po_Arena_Printf(a, "spec.envoyExtensions[%zu].arguments: %s", c->entry_index, c->error);
      continue;
    }
    const po_Value *patches = get_ci(po_Value_Get(entry, "arguments"), "patches");
    for (size_t i = 0; i < po_Diagnostics_Count(c->diags); i++) {
      if (!add_diag(o, o->kind_name, po_Diagnostics_At(c->diags, i), patches, at, (int)c->entry_index, a, r)) return false;
    }
  }
  if (ok) r->valid++;
  else r->invalid++;
  return true;
}

/* A native patch object's findings (its own checker's diagnostics) located at its patches. */
static bool add_native(const po_CliObject *o, po_Diagnostics *d, const char *list, po_CliReport *r) {
  const po_Value *patches = po_Value_Get(po_Value_Get(o->value, "spec"), list);
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    po_Diagnostic x = *po_Diagnostics_At(d, i);
    x.path = NULL; /* the message names where, in the object's own terms */
    po_CliFinding *f = po_CliReport_Add(r, o);
    if (!f) return false;
    f->warning = x.severity == kPo_Severity_Warning;
    f->kind = o->kind_name;
    f->ns = str_at(o->value, "metadata", "namespace");
    f->name = str_at(o->value, "metadata", "name");
    f->patch = x.patch_index;
    f->code = "target";
    f->pos = x.patch_index >= 0 ? patch_pos(patches, x.patch_index, o->pos) : o->pos;
    f->message = x.message;
  }
  if (po_Diagnostics_ErrorCount(d)) r->invalid++;
  else r->valid++;
  return true;
}

/* A mesh's own object (an EnvoyFilter: its patch values against Envoy's schema, and the patches
 * that silently do nothing or something else; an EnvoyPatchPolicy: each JSON Patch value against
 * the Envoy message at its path, and the patches that do nothing or may fail once applied): its
 * mesh's check (po_MeshOps.check_native). */
static bool check_mesh_native(const po_CliObject *o, json_object *obj, const po_TargetOptions *opts, po_Arena *a,
                              po_CliReport *r) {
  po_Diagnostics *d = po_Diagnostics_New(a);
  judged(r, opts, o->native->mesh);
  return d && po_Mesh_CheckNative(o->native, obj, opts, a, d) &&
         add_native(o, d, o->native->native_patches, r);
}

const char *po_Cli_EnvoyApis(char *buf, size_t len) {
  size_t at = 0;
  if (len) buf[0] = '\0';
  for (size_t i = 0; i < po_EnvoyApi_Count() && at < len; i++) {
    int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", po_EnvoyApi_Version(po_EnvoyApi_At(i)));
    at += n > 0 ? (size_t)n : 0;
  }
  return buf;
}

void po_Cli_PrintEnvoyApis(FILE *out) {
  for (size_t i = 0; i < po_EnvoyApi_Count(); i++) {
    const po_EnvoyApi *api = po_EnvoyApi_At(i);
    fprintf(out, "  %s%s%s:", po_EnvoyApi_Name(api), api == po_EnvoyApi_Default() ? " (default)" : "",
            api == po_EnvoyApi_Newest() ? " (newest: preview reads config dumps with it)" : "");
    size_t n = 0;
    for (size_t m = 0; m < po_Mesh_Count(); m++) {
      const po_MeshOps *ops = po_Mesh_At(m);
      for (size_t r = 0; ops->releases && r < ops->releases->count; r++) {
        if (po_MeshRelease_Api(&ops->releases->rows[r]) != api) continue;
        fprintf(out, "%s %s@%s", n++ ? "," : "", po_Mesh_Name(ops->mesh), ops->releases->rows[r].release);
      }
    }
    fputs(n ? "\n" : " no mesh release listed here is built on it\n", out);
  }
}

/* --envoy-api VERSION: an embedded snapshot, or NULL with the embedded ones listed on stderr. */
static const po_EnvoyApi *envoy_api(const char *value, const char *cmd) {
  const po_EnvoyApi *api = po_EnvoyApi_Find(value);
  if (!api) {
    char list[256];
    fprintf(stderr, "propertyoverride %s: --envoy-api '%s': not an Envoy API snapshot of this build; embedded: %s\n",
            cmd, value, po_Cli_EnvoyApis(list, sizeof list));
  }
  return api;
}

/* Istio's row for release 1.N: the listed one, else the nearest listed (the newest at most that
 * old, else the oldest). */
static const po_MeshRelease *nearest_istio(int minor) {
  const po_MeshReleases *t = po_Mesh_Ops(kPo_Mesh_Istio)->releases;
  const po_MeshRelease *best = t && t->count ? &t->rows[0] : NULL;
  for (size_t i = 0; t && i < t->count; i++) {
    if (po_Istio_ParseVersion(t->rows[i].release) <= minor) best = &t->rows[i];
  }
  return best;
}

/* --istio-version names a release the table does not list (a newer Istio than this build knows,
 * or an older one than it supports): said on stderr, with the row that judges it, so a report
 * naming istio@1.31 for --istio-version 1.35 is not taken for a mistake. Its features are the
 * named release's (1.35 may use what 1.31 may); its Envoy API is the row's. */
static void unlisted_istio(const char *cmd, const char *value, int minor, const po_MeshRelease *row) {
  const po_MeshReleases *t = po_Mesh_Ops(kPo_Mesh_Istio)->releases;
  int at = po_Istio_ParseVersion(row->release);
  if (at == minor) return;
  int newest = po_Istio_ParseVersion(t->rows[t->count - 1].release), oldest = po_Istio_ParseVersion(t->rows[0].release);
  const char *how = minor > newest   ? "newer than every Istio release this build lists"
                    : minor < oldest ? "older than every Istio release this build lists"
                                     : "not a release this build lists";
  fprintf(stderr,
          "propertyoverride %s: note: --istio-version '%s': Istio 1.%d is %s (1.%d to 1.%d); it is judged by the row "
          "of istio@%s (%s, the nearest listed) with the features of 1.%d; name a listed release with --mesh istio@1.N "
          "to judge it as that one\n",
          cmd, value, minor, how, oldest, newest, row->release, po_EnvoyApi_Name(po_MeshRelease_Api(row)), minor);
}

/* The Istio release, from --istio-version or --mesh istio@..: both set it; they must agree. */
static bool istio_release(const char *cmd, const char *flag, const char *value, const po_MeshRelease *row, int minor,
                          po_TargetOptions *opts) {
  if (opts->istio_minor && opts->istio_minor != minor) {
    fprintf(stderr, "propertyoverride %s: %s '%s': Istio 1.%d is named already (--istio-version and --mesh istio@ "
                    "must agree)\n", cmd, flag, value, opts->istio_minor);
    return false;
  }
  opts->istio_minor = minor;
  opts->release[kPo_Mesh_Istio] = row;
  return true;
}

void po_Cli_TargetDefaults(po_TargetOptions *opts) { po_Mesh_FillReleases(opts); }

/* A flag that names one thing given a second time: refused, both named (the last one silently
 * winning would judge by a snapshot the command line also contradicts). */
static bool once(const char *cmd, const char *flag, const char *value, const char *first) {
  if (!first) return true;
  fprintf(stderr, "propertyoverride %s: %s '%s': %s is given already (%s); give it once\n", cmd, flag, value, flag, first);
  return false;
}

bool po_Cli_ApiOption(int code, const char *value, const char *cmd, po_CliApiChoice *c) {
  if (code == kPo_CliOpt_EnvoyApi) {
    return once(cmd, "--envoy-api", value, c->api ? po_EnvoyApi_Version(c->api) : NULL) &&
           (c->api = envoy_api(value, cmd)) != NULL;
  }
  if (c->mesh) {
    fprintf(stderr, "propertyoverride %s: --mesh '%s': --mesh is given already (%s@%s); %s describes one Envoy API, give it once\n",
            cmd, value, po_Mesh_Name(c->mesh->mesh), c->release ? c->release->release : "", cmd);
    return false;
  }
  po_MeshChoice mc;
  po_CtlStatus why;
  if (!po_Mesh_ParseChoice(value, &mc, &why)) {
    fprintf(stderr, "propertyoverride %s: --mesh '%s': %s\n", cmd, value, why.message);
    return false;
  }
  c->mesh = mc.mesh;
  c->release = mc.release;
  return true;
}

const po_EnvoyApi *po_CliApiChoice_Api(const po_CliApiChoice *c) {
  return c->api ? c->api : c->release ? po_MeshRelease_Api(c->release) : po_EnvoyApi_Default();
}

bool po_Cli_TargetOption(int code, const char *value, const char *cmd, po_TargetOptions *opts, po_Tenancy *tenancy) {
  switch (code) {
    case kPo_CliOpt_AllowCrossNamespaceFrom: {
      po_CtlStatus st;
      if (!tenancy || !po_Tenancy_AllowCrossNamespace(tenancy, value, &st)) {
        fprintf(stderr, "propertyoverride %s: %s\n", cmd, tenancy ? st.message : "--allow-cross-namespace-from is not an option here");
        return false;
      }
      return true;
    }
    case kPo_CliOpt_ClusterDomain:
      if (!*value || *value == '.' || value[strlen(value) - 1] == '.' || strstr(value, "..") || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(value)) {
        fprintf(stderr, "propertyoverride %s: --cluster-domain '%s': a DNS domain such as cluster.local is expected\n", cmd, value);
        return false;
      }
      opts->cluster_domain = value;
      return true;
    case kPo_CliOpt_IstioVersion: {
      int minor = po_Istio_ParseVersion(value);
      if (minor < 0) {
        fprintf(stderr, "propertyoverride %s: --istio-version '%s': an Istio release such as 1.31 or 1.30.2 is expected\n", cmd, value);
        return false;
      }
      const po_MeshRelease *row = nearest_istio(minor);
      if (row) unlisted_istio(cmd, value, minor, row);
      return istio_release(cmd, "--istio-version", value, row, minor, opts);
    }
    case kPo_CliOpt_Mesh: {
      po_MeshChoice mc;
      po_CtlStatus why;
      if (!po_Mesh_ParseChoice(value, &mc, &why)) {
        fprintf(stderr, "propertyoverride %s: --mesh '%s': %s\n", cmd, value, why.message);
        return false;
      }
      if (mc.mesh->mesh == kPo_Mesh_Istio) {
        return istio_release(cmd, "--mesh", value, mc.release, po_Istio_ParseVersion(mc.release->release), opts);
      }
      if (opts->release[mc.mesh->mesh] && opts->release[mc.mesh->mesh] != mc.release) {
        fprintf(stderr, "propertyoverride %s: --mesh '%s': %s %s is named already; one release per mesh\n", cmd, value,
                mc.mesh->name, opts->release[mc.mesh->mesh]->release);
        return false;
      }
      opts->release[mc.mesh->mesh] = mc.release;
      return true;
    }
    case kPo_CliOpt_EnvoyApi: {
      if (!once(cmd, "--envoy-api", value, opts->api[0] ? po_EnvoyApi_Version(opts->api[0]) : NULL)) return false;
      const po_EnvoyApi *api = envoy_api(value, cmd);
      for (size_t m = 0; api && m < kPo_MeshSlots; m++) opts->api[m] = api;
      return api != NULL;
    }
    case kPo_CliOpt_IstioRootNamespace:
      if (!*value || strlen(value) > 63 || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(value)) {
        fprintf(stderr, "propertyoverride %s: --istio-root-namespace '%s': a namespace name such as istio-system is expected\n", cmd, value);
        return false;
      }
      opts->istio_root_namespace = value;
      return true;
  }
  return false;
}

bool po_Cli_CheckObject(const po_CliObject *o, const po_TargetOptions *opts, po_Arena *a, po_CliReport *r,
                        po_CompiledOverride *compiled) {
  if (compiled) compiled->accepted = false;
  if (o->kind == kPo_ObjKind_Other) {
    r->skipped++;
    return true;
  }
  json_object *obj = po_Value_ToJsonC(o->value);
  if (!obj) return false;
  /* each mesh no option names at its default release, as the webhook judges it, whoever calls */
  po_TargetOptions with = {0};
  if (opts) with = *opts;
  po_Mesh_FillReleases(&with);
  bool ok = o->kind == kPo_ObjKind_PropertyOverride ? check_override(o, obj, &with, a, r, compiled)
            : o->kind == kPo_ObjKind_MeshNative      ? check_mesh_native(o, obj, &with, a, r)
                                                : check_consul(o, obj, &with, a, r);
  json_object_put(obj);
  return ok;
}
