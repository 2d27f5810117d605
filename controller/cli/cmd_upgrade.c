/* propertyoverride upgrade-check: what the fields a manifest sets become when its mesh is upgraded
 * (upgrade.h says which file does what). The same inputs `validate -f` reads, each object judged
 * under the old release's Envoy API snapshot and the new one's, and the findings reported as
 * validate reports its own (report.c). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "cli.h"
#include "po/meshes/mesh.h"
#include "upgrade.h"

static const char kUsage[] =
    "usage: propertyoverride upgrade-check --to MESH@RELEASE [--from MESH@RELEASE] -f FILE|DIR|- [-f ...]\n"
    "                                      [--output text|json|github] [--fail-on-warning]\n"
    "                                      [--from-envoy-api VERSION] [--to-envoy-api VERSION]\n"
    "                                      [--xds-name-scheme-v2] [--allow-empty]\n"
    "\n"
    "Lists what would break or change meaning in the manifests when the mesh moves from one release\n"
    "to another: every field each object sets is judged under the Envoy API snapshot of the release\n"
    "it runs now and of the one it moves to (`propertyoverride version` lists the snapshots).\n"
    "Reads what `validate -f` reads: PropertyOverrides (the fields of each patch's path and value),\n"
    "ServiceDefaults/ProxyDefaults builtin/property-override entries, EnvoyFilters (each\n"
    "configPatch's value, through typed_config) and EnvoyPatchPolicies (each JSON Patch's path and\n"
    "value). Objects of another mesh than --to's are skipped, and said so with the command that\n"
    "checks them. An object the release run now already refuses (what `validate --mesh\n"
    "MESH@FROM -f` finds) is counted \"invalid under the current release\", its errors quoted as\n"
    "invalid-before findings: never \"unaffected\". To check a cluster's objects:\n"
    "  kubectl get propertyoverrides,envoyfilters,envoypatchpolicies -A -o yaml |\n"
    "    propertyoverride upgrade-check -f - --to istio@1.30\n"
    "\n"
    "Each finding says its kind, the object, the patch, what changes and what to write instead\n"
    "where the schema says it:\n"
    "  removed                a field, or an Any's @type, the new API lacks (Envoy refuses it)\n"
    "  renamed                the field's number has another name in the new API\n"
    "  type-changed           same name and number, another type\n"
    "  deprecated             newly deprecated (a warning: Envoy still reads it)\n"
    "  moved-to-extension     the new release generates the resource with an extension that holds\n"
    "                         the setting (Envoy Gateway 1.9's DNS clusters: cluster_type\n"
    "                         envoy.cluster.dns, a DnsCluster), so the field no longer does anything\n"
    "  rule-tightened         the value passes the old release's Envoy rules and fails the new's\n"
    "  enum-value-gone        an enum value set that the new API lacks\n"
    "  resource-name-changed  the new release names the matched resource otherwise (Envoy Gateway's\n"
    "                         xDS name scheme v2), so the patch would match nothing\n"
    "  invalid-before         the release run now refuses the object already (validate's error,\n"
    "                         quoted): counted apart, never unaffected\n"
    "\n"
    "  --to MESH@RELEASE      the release moved to: consul@1.22, istio@1.30, envoy-gateway@1.9\n"
    "  --from MESH@RELEASE    the release run now (default: the mesh's default release)\n"
    "  --to-envoy-api V, --from-envoy-api V  judge that side by snapshot V (v1.40.0) instead of\n"
    "                         its release's: a release not yet in the table\n"
    "  --xds-name-scheme-v2   Envoy Gateway: the new release runs with the XDSNameSchemeV2 runtime\n"
    "                         flag (opt-in since 1.5; listeners named <protocol>-<port>); refused\n"
    "                         with another mesh's --to\n"
    "  -f, --filename PATH    a file, a directory, or - for stdin (repeatable)\n"
    "  -o, --output FORMAT    text (default), json or github, as validate's\n"
    "  --fail-on-warning      exit 1 when there are warnings only (deprecations)\n"
    "  --allow-empty          exit 0 when nothing was checked\n"
    "\n"
    "Exit status: 0 nothing breaks (warnings only, such as deprecations, exit 0 unless\n"
    "--fail-on-warning); 1 something breaks, or an object is invalid under the current release\n"
    "already (it does not work today either: fix it first); 2 bad usage, an unknown mesh, release\n"
    "or snapshot, unreadable input, nothing checked (another mesh's objects only, too), or a\n"
    "report that could not be written.\n";

static int usage_error(const char *msg) {
  fprintf(stderr, "propertyoverride upgrade-check: %s\n\n%s", msg, kUsage);
  return kPo_Exit_Usage;
}

bool po_Upg_Add(po_UpgCtx *c, const char *code, bool warning, const char *path, const char *fmt, ...) {
  po_CliFinding *f = po_CliReport_Add(c->report, c->obj);
  va_list ap;
  va_start(ap, fmt);
  char buf[2048];
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  const char *msg = po_Arena_Printf(c->a, "%s: %s", code, buf);
  if (!f || !msg) return !(c->oom = true);
  const po_Value *meta = po_Value_Get(c->obj->value, "metadata");
  const po_Value *ns = po_Value_Get(meta, "namespace"), *name = po_Value_Get(meta, "name");
  f->warning = warning;
  f->kind = c->obj->kind_name;
  f->ns = po_Value_Kind(ns) == kPo_ValueKind_String ? po_Value_String(ns, NULL) : "";
  f->name = po_Value_Kind(name) == kPo_ValueKind_String ? po_Value_String(name, NULL) : "";
  f->extension = c->extension;
  f->patch = c->patch;
  f->path = path;
  f->pos = c->pos.line ? c->pos : c->obj->pos;
  f->code = code;
  f->message = msg;
  return true;
}

bool po_Upg_Breaks(const po_UpgCtx *c) {
  for (size_t i = c->before; i < c->report->count; i++) {
    if (!c->report->items[i].warning) return true;
  }
  return false;
}

/* ---- the sides ---- */

/* "istio@1.30" (or a bare "istio": the mesh's default release) into a side. */
static bool parse_side(const char *spec, const char *envoy_api, po_UpgSide *s, const char *flag) {
  po_CtlStatus st = {0};
  po_MeshChoice ch;
  if (!po_Mesh_ParseChoice(spec, &ch, &st)) {
    fprintf(stderr, "propertyoverride upgrade-check: %s '%s': %s\n", flag, spec, st.message);
    return false;
  }
  s->mesh = ch.mesh;
  s->row = ch.release;
  s->release = ch.release->release;
  const char *dot = strchr(s->release, '.');
  s->minor = dot ? atoi(dot + 1) : 0;
  s->api = po_MeshRelease_Api(ch.release);
  if (envoy_api) {
    s->api = po_EnvoyApi_Find(envoy_api);
    if (!s->api) {
      fprintf(stderr, "propertyoverride upgrade-check: %s-envoy-api '%s': not an embedded snapshot (`propertyoverride "
                      "version` lists them)\n", flag, envoy_api);
      return false;
    }
  }
  return true;
}

/* ---- one object ---- */

typedef struct {
  po_CliReport *r;
  const po_UpgSide *from, *to;
  po_UpgCache *cache;
  const po_TargetOptions *topts;
  /* the objects skipped as another mesh's, by mesh, and the kind of the first: what to say when
   * they are all a run read (--to names the wrong mesh) */
  size_t foreign[kPo_MeshSlots];
  char foreign_kind[kPo_MeshSlots][64]; /* copied: the object's text lives in its document's arena, freed before the note */
} RunCtx;

/* An object of mesh m, not --to's: skipped, and counted for the note that says so. */
static bool skip_foreign(RunCtx *rc, po_Mesh m, const char *kind) {
  rc->r->skipped++;
  if (!rc->foreign[m]++) snprintf(rc->foreign_kind[m], sizeof rc->foreign_kind[m], "%s", kind && *kind ? kind : "object");
  return true;
}

/* The options a side judges its mesh's objects with, as validate --mesh MESH@RELEASE does. */
static po_TargetOptions side_options(const po_UpgSide *s, const po_TargetOptions *base) {
  po_TargetOptions o = *base;
  o.release[s->mesh->mesh] = s->row;
  o.api[s->mesh->mesh] = s->api;
  o.istio_minor = s->mesh->mesh == kPo_Mesh_Istio ? s->minor : o.istio_minor;
  return o;
}

static bool compile_under(const po_UpgSide *s, json_object *obj, const po_TargetOptions *base, po_Arena *a,
                          po_CompiledOverride *out) {
  po_TargetOptions o = side_options(s, base);
  return po_CompiledOverride_FromObject(obj, &o, a, out) != kPo_CompileOutcome_NoMemory;
}

/* The object judged as `validate` judges it under the release run now: each error it finds added
 * as an invalid-before finding (an object refused today counts on its own, never as unaffected:
 * upgrading cannot break what does not work). *bad whether there was one. false: out of memory. */
static bool check_before(RunCtx *rc, po_UpgCtx *c, bool *bad) {
  po_CliReport scratch;
  po_CliReport_Init(&scratch, c->a);
  po_TargetOptions o = side_options(rc->from, rc->topts);
  po_Mesh_FillReleases(&o);
  *bad = false;
  if (!po_Cli_CheckObject(c->obj, &o, c->a, &scratch, NULL)) return false;
  for (size_t i = 0; i < scratch.count; i++) {
    const po_CliFinding *x = &scratch.items[i];
    if (x->warning) continue;
    po_CliFinding *f = po_CliReport_Add(c->report, c->obj);
    if (!f) return false;
    *f = *x;
    f->code = PO_UPG_INVALID_BEFORE;
    f->message = po_Arena_Printf(c->a, "%s: invalid under %s %s (%s) already, as `validate --mesh %s@%s` finds: %s",
                                 PO_UPG_INVALID_BEFORE, rc->from->mesh->name, rc->from->release,
                                 po_EnvoyApi_Version(rc->from->api), po_Mesh_Name(rc->from->mesh->mesh), rc->from->release, x->message);
    if (!f->message) return false;
    *bad = true;
  }
  return true;
}

static bool check_property_override(RunCtx *rc, po_UpgCtx *c, json_object *obj, bool *skipped) {
  po_CompiledOverride from, to;
  if (!compile_under(rc->from, obj, rc->topts, c->a, &from)) return false;
  /* another mesh's: its target's kind says whose, even when the rest does not decode */
  po_TargetKind k = from.target_kind;
  const po_Value *ref = po_Value_Get(po_Value_Get(c->obj->value, "spec"), "targetRef");
  const po_Value *kind = po_Value_Get(ref, "kind");
  bool known = po_Value_Kind(kind) == kPo_ValueKind_String && po_TargetKind_Parse(po_Value_String(kind, NULL), &k);
  if ((from.override || known) && po_TargetKind_Mesh(k) != rc->to->mesh->mesh) {
    *skipped = true;
    return skip_foreign(rc, po_TargetKind_Mesh(k), c->obj->kind_name);
  }
  if (!from.override) return true; /* not decodable: check_before said why */
  if (!compile_under(rc->to, obj, rc->topts, c->a, &to)) return false;
  const po_Value *patches = po_Value_Get(po_Value_Get(c->obj->value, "spec"), "patches");
  return po_Upg_CheckOverride(c, from.override, patches) && po_Upg_CompareCompiledRules(c, from.diags, to.diags, patches);
}

/* A Consul entry's arguments compiled under one side, as the webhook compiles them (wire typing). */
static po_Override *build_under(const po_UpgSide *s, const po_Value *args, po_Arena *a, po_Diagnostics **d) {
  po_Arguments parsed;
  po_Status st;
  po_Status_Clear(&st);
  *d = po_Diagnostics_New(a);
  if (!*d || !po_Arguments_Decode(args, a, &parsed, &st)) return NULL;
  po_CompileOptions co = po_CompileOptions_Default();
  co.convention = kPo_Convention_Wire;
  co.api = s->api;
  return po_Override_Build(&parsed, &co, a, *d);
}

static bool check_consul(RunCtx *rc, po_UpgCtx *c) {
  const po_Value *exts = po_Value_Get(po_Value_Get(c->obj->value, "spec"), "envoyExtensions");
  for (size_t k = 0; po_Value_Kind(exts) == kPo_ValueKind_List && k < po_Value_Size(exts); k++) {
    const po_Value *e = po_Value_At(exts, k), *name = po_Value_Get(e, "name"), *args = po_Value_Get(e, "arguments");
    if (po_Value_Kind(name) != kPo_ValueKind_String || strcmp(po_Value_String(name, NULL), "builtin/property-override") != 0) continue;
    po_Diagnostics *df = NULL, *dt = NULL;
    po_Override *from = build_under(rc->from, args, c->a, &df), *to = from ? build_under(rc->to, args, c->a, &dt) : NULL;
    if (!from || !to) continue; /* not decodable: validate says why */
    c->extension = (int)k;
    const po_Value *patches = NULL;
    for (size_t i = 0; i < po_Value_Size(args); i++) {
      if (!strcasecmp(po_Value_KeyAt(args, i), "patches")) patches = po_Value_At(args, i);
    }
    if (!po_Upg_CheckOverride(c, from, patches) || !po_Upg_CompareCompiledRules(c, df, dt, patches)) return false;
  }
  c->extension = -1;
  return true;
}

/* Whose an object is when it is not --to's mesh's (a kind only one mesh has), else -1. */
static int foreign_mesh(const RunCtx *rc, const po_CliObject *o) {
  po_Mesh to = rc->to->mesh->mesh;
  if (o->kind == kPo_ObjKind_MeshNative) return o->native != rc->to->mesh ? (int)o->native->mesh : -1;
  if (o->kind == kPo_ObjKind_ServiceDefaults || o->kind == kPo_ObjKind_ProxyDefaults) return to != kPo_Mesh_Consul ? kPo_Mesh_Consul : -1;
  return -1;
}

static bool check_one(void *ctx, const po_CliObject *o, po_Arena *a) {
  RunCtx *rc = ctx;
  po_UpgCtx c = {.from = rc->from, .to = rc->to, .cache = rc->cache, .obj = o, .report = rc->r, .a = a,
                 .before = rc->r->count, .patch = -1, .extension = -1, .pos = o->pos};
  int foreign = foreign_mesh(rc, o);
  if (o->kind == kPo_ObjKind_Other) return rc->r->skipped++, true;
  if (foreign >= 0) return skip_foreign(rc, (po_Mesh)foreign, o->kind_name);
  bool ok = true, skipped = false, bad = false;
  if (o->kind == kPo_ObjKind_PropertyOverride) {
    json_object *obj = po_Value_ToJsonC(o->value);
    ok = obj && check_property_override(rc, &c, obj, &skipped);
    json_object_put(obj);
  } else if (o->kind == kPo_ObjKind_MeshNative) {
    ok = po_Upg_CheckNative(&c);
  } else {
    ok = check_consul(rc, &c);
  }
  if (ok && !skipped) ok = check_before(rc, &c, &bad);
  if (!ok || c.oom) return false;
  if (skipped) return true;
  if (bad) rc->r->invalid_before++;
  else if (po_Upg_Breaks(&c)) rc->r->invalid++;
  else rc->r->valid++;
  return po_CliReport_Own(rc->r, c.before);
}

/* The objects skipped as another mesh's, "1 EnvoyFilter of istio's, 2 objects of
 * envoy-gateway's", and what to run for them; NULL when none (or out of memory). */
static const char *foreign_note(const RunCtx *rc, po_Arena *a) {
  const char *list = NULL, *run = NULL;
  for (size_t m = 0; m < kPo_MeshSlots; m++) {
    if (!rc->foreign[m]) continue;
    const po_MeshOps *ops = po_Mesh_Ops((po_Mesh)m);
    const po_MeshRelease *d = po_MeshReleases_Default(ops->releases);
    const char *one = po_Arena_Printf(a, "%zu %s object%s (%s%s)", rc->foreign[m], po_Mesh_Name((po_Mesh)m), rc->foreign[m] == 1 ? "" : "s",
                                      rc->foreign[m] == 1 ? "" : "the first: ", rc->foreign_kind[m]);
    const char *cmd = po_Arena_Printf(a, "upgrade-check --to %s@%s", po_Mesh_Name((po_Mesh)m), d ? d->release : "RELEASE");
    list = list ? po_Arena_Printf(a, "%s, %s", list, one) : one;
    run = run ? po_Arena_Printf(a, "%s, `%s`", run, cmd) : po_Arena_Printf(a, "`%s`", cmd);
  }
  if (!list || !run) return NULL;
  return po_Arena_Printf(a, "%s skipped: --to %s@%s checks %s's objects only; to check them, run %s (with the release "
                            "they move to)", list, po_Mesh_Name(rc->to->mesh->mesh), rc->to->release, rc->to->mesh->name, run);
}

static bool has_warning(const po_CliReport *r) {
  for (size_t i = 0; i < r->count; i++) {
    if (r->items[i].warning) return true;
  }
  return false;
}

static int run(const char *const *paths, size_t n, po_OutputFormat format, bool allow_empty, bool fail_on_warning,
               const po_UpgSide *from, const po_UpgSide *to) {
  po_Arena *a = po_Arena_New();
  if (!a) return fprintf(stderr, "propertyoverride upgrade-check: out of memory\n"), kPo_Exit_Usage;
  po_CliReport r;
  po_CliReport_Init(&r, a);
  r.need_checked = true;
  r.allow_empty = allow_empty;
  r.valid_word = "unaffected";
  r.invalid_word = "breaking";
  r.invalid_before_word = "invalid under the current release (see validate)";
  po_TargetOptions topts = {0};
  RunCtx rc = {.r = &r, .from = from, .to = to, .cache = po_UpgCache_New(a), .topts = &topts};
  bool ok = rc.cache && po_CliInputs_Each(paths, n, a, &r, check_one, &rc, NULL);
  int rc_exit = kPo_Exit_Usage;
  if (!ok || po_Engine_OutOfMemory(a)) {
    fprintf(stderr, "propertyoverride upgrade-check: out of memory\n");
  } else {
    fprintf(stderr, "upgrade-check: %s %s (%s) -> %s %s (%s)\n", from->mesh->name, from->release,
            po_EnvoyApi_Name(from->api), to->mesh->name, to->release, po_EnvoyApi_Name(to->api));
    const char *note = foreign_note(&rc, a);
    if (note && r.valid + r.invalid + r.invalid_before == 0) r.empty_why = note;
    po_CliReport_Print(&r, format, false, stdout);
    if (note && !r.empty_why && format != kPo_OutputFormat_Json) {
      fprintf(stdout, "%s%s\n", format == kPo_OutputFormat_Github ? "::notice title=another mesh's objects::" : "note: ", note);
    }
    rc_exit = po_Cli_Flush(stdout, "upgrade-check", "the report") ? po_CliReport_ExitCode(&r) : kPo_Exit_Usage;
    if (rc_exit == kPo_Exit_Ok && fail_on_warning && has_warning(&r)) rc_exit = kPo_Exit_Invalid;
  }
  po_Arena_Free(a);
  return rc_exit;
}

enum { kOptFrom = 2000, kOptTo, kOptFromApi, kOptToApi, kOptScheme, kOptFailWarn, kOptAllowEmpty };

int po_Cmd_UpgradeCheck(int argc, char **argv) {
  static const struct option opts[] = {{"from", required_argument, 0, kOptFrom},
                                       {"to", required_argument, 0, kOptTo},
                                       {"from-envoy-api", required_argument, 0, kOptFromApi},
                                       {"to-envoy-api", required_argument, 0, kOptToApi},
                                       {"xds-name-scheme-v2", no_argument, 0, kOptScheme},
                                       {"fail-on-warning", no_argument, 0, kOptFailWarn},
                                       {"allow-empty", no_argument, 0, kOptAllowEmpty},
                                       {"filename", required_argument, 0, 'f'},
                                       {"output", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *from_s = NULL, *to_s = NULL, *from_api = NULL, *to_api = NULL, *out = "text";
  bool scheme = false, fail_warn = false, allow_empty = false;
  const char **paths = calloc((size_t)argc + 1, sizeof *paths);
  size_t npaths = 0;
  int c;
  optind = 1;
  opterr = 0;
  if (!paths) return fprintf(stderr, "propertyoverride upgrade-check: out of memory\n"), kPo_Exit_Usage;
  while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
    switch (c) {
      case kOptFrom: if (from_s) return free(paths), usage_error("--from is given twice: name the one release running today"); from_s = optarg; break;
      case kOptTo: if (to_s) return free(paths), usage_error("--to is given twice: name the one release upgraded to"); to_s = optarg; break;
      case kOptFromApi: if (from_api) return free(paths), usage_error("--from-envoy-api is given twice: name one snapshot"); from_api = optarg; break;
      case kOptToApi: if (to_api) return free(paths), usage_error("--to-envoy-api is given twice: name one snapshot"); to_api = optarg; break;
      case kOptScheme: scheme = true; break;
      case kOptFailWarn: fail_warn = true; break;
      case kOptAllowEmpty: allow_empty = true; break;
      case 'f': paths[npaths++] = optarg; break;
      case 'o': out = optarg; break;
      case 'h': free(paths); fputs(kUsage, stdout); return kPo_Exit_Ok;
      default: free(paths); return usage_error(optopt ? "an option is missing its argument" : "unknown option");
    }
  }
  po_OutputFormat format = !strcmp(out, "json") ? kPo_OutputFormat_Json : !strcmp(out, "github") ? kPo_OutputFormat_Github : kPo_OutputFormat_Text;
  const char *bad = optind < argc                                     ? "unexpected argument"
                    : !to_s                                           ? "--to MESH@RELEASE is required"
                    : !npaths                                         ? "-f is required"
                    : format == kPo_OutputFormat_Text && strcmp(out, "text") ? "--output must be text, json or github"
                                                                      : NULL;
  if (bad) return free(paths), usage_error(bad);
  po_UpgSide from = {0}, to = {0};
  bool ok = parse_side(to_s, to_api, &to, "--to") && parse_side(from_s ? from_s : po_Mesh_Name(to.mesh->mesh), from_api, &from, "--from");
  if (ok && from.mesh != to.mesh) {
    fprintf(stderr, "propertyoverride upgrade-check: --from names %s, --to %s: an upgrade stays in one mesh\n", from.mesh->name, to.mesh->name);
    ok = false;
  }
  if (ok && scheme && to.mesh->mesh != kPo_Mesh_EnvoyGateway) {
    /* the runtime flag is Envoy Gateway's: ignored silently, the user would believe the check
     * covered names it does not change */
    fprintf(stderr, "propertyoverride upgrade-check: --xds-name-scheme-v2 is Envoy Gateway's (its XDSNameSchemeV2 runtime "
                    "flag); --to names %s, whose resource names it does not change: leave it out\n", to.mesh->name);
    ok = false;
  }
  to.name_scheme_flag = scheme;
  int rc = ok ? run(paths, npaths, format, allow_empty, fail_warn, &from, &to) : kPo_Exit_Usage;
  free(paths);
  return rc;
}
