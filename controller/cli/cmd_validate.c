/* propertyoverride validate: manifests (-f, the webhook's checks, for GitOps pipelines), or
 * one Consul `arguments` object (--consul-arguments, Consul's Constructor). Both share the
 * engine's one validation. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"

static const char kUsage[] =
    "usage: propertyoverride validate -f FILE|DIR|- [-f ...] [--output text|json|github] [--verbose]\n"
    "                                [--allow-empty] [--mesh MESH[@RELEASE]] [--envoy-api VERSION]\n"
    "       propertyoverride validate --consul-arguments FILE [--extension-name NAME]\n"
    "                                 [--convention wire|typed] [--mesh consul@RELEASE]\n"
    "                                 [--envoy-api VERSION]\n"
    "\n"
    "With -f: checks manifests exactly as the admission webhook does, without a cluster.\n"
    "Multi-document YAML or JSON; directories are walked recursively (*.yaml, *.yml, *.json,\n"
    "in name order; every other entry is listed as not read, with why); - is stdin. Only regular\n"
    "files are read (a FIFO or a device is refused: give a pipe as stdin); files over 1 GiB are\n"
    "refused from their size, stdin once it passes that. PropertyOverride (propertyoverride.io) objects go through the\n"
    "webhook's pipeline (spec, Consul's Constructor, Envoy's rules, then the target mesh's own\n"
    "rules: Consul's wire typing, or what an Istio EnvoyFilter can express);\n"
    "ServiceDefaults/ProxyDefaults (consul.hashicorp.com) have each builtin/property-override\n"
    "entry checked; EnvoyFilters (networking.istio.io) have each patch value decoded strictly\n"
    "against the Envoy message its applyTo names, with warnings for patches that silently do\n"
    "nothing or something else; List kinds are unpacked; other kinds are skipped and counted.\n"
    "\n"
    "  -f, --filename PATH   a file, a directory, or - for stdin (repeatable)\n"
    "  -o, --output FORMAT   text (default): one line per finding (file:line:col, document,\n"
    "                        object, patch index and path, message) and a summary line;\n"
    "                        json: one JSON document with every finding;\n"
    "                        github: GitHub Actions ::error/::warning workflow commands\n"
    "  -v, --verbose         print Consul's field lists in full (folded to one line otherwise)\n"
    "  --allow-empty         exit 0 when nothing was validated (no file read, or no object of\n"
    "                        a kind checked here in the files read): for directories that may\n"
    "                        hold none\n"
    "  --mesh MESH[@RELEASE] the release a mesh runs (repeatable, one per mesh): consul@1.22,\n"
    "                        istio@1.30 (or 1.30.2), envoy-gateway@1.9; a bare mesh is its\n"
    "                        newest listed release, which is also each mesh's default. Each\n"
    "                        target is judged by the Envoy API its mesh release is built on\n"
    "                        (`propertyoverride version` lists them); the report names it\n"
    "  --envoy-api VERSION   judge every target by this embedded Envoy API snapshot instead\n"
    "                        (v1.32.4, v1.37.0, v1.40.0: go-control-plane's envoy module)\n"
    "  --istio-version 1.N   the Istio release Service/Mesh targets run (arrays need 1.31+);\n"
    "                        also its Envoy API, as --mesh istio@1.N\n"
    "  --cluster-domain D    Kubernetes' DNS domain for Istio's service names (cluster.local)\n"
    "  --istio-root-namespace NS  Istio's root namespace, for Mesh targets (istio-system)\n"
    "  --allow-cross-namespace-from NS[,NS...]  namespaces whose PropertyOverrides may name another\n"
    "                        namespace in targetRef.namespace (ServiceDefaults only; the controller's\n"
    "                        flag of the same name; default: none)\n"
    "\n"
    "Exit status with -f: 0 every object valid; 1 some object invalid; 2 bad usage, some input\n"
    "unreadable or unparsable (what could be read is still checked and reported), a directory\n"
    "loop, nothing validated (no file read at all: an empty directory, or only entries not read;\n"
    "or files read holding no object of a kind checked here: empty files, ConfigMaps only; both\n"
    "exit 0 with --allow-empty), or a report that could not be written.\n"
    "\n"
    "With --consul-arguments:\n"
    "Validates the `arguments` object of a Consul envoyExtensions entry exactly as Consul's\n"
    "builtin/property-override Constructor does (every patch dry-run against the Envoy v3\n"
    "schema), and further checks Envoy's own field rules (protoc-gen-validate) on what each patch\n"
    "leaves, whatever the path's form: a wrapper set through /value, a Duration through /seconds\n"
    "or /nanos, the fields an object value leaves unset. What only the resource decides (a parent\n"
    "a patch creates when the resource lacks it) is a warning: it is left to `preview`, which\n"
    "judges it on a proxy's configuration. A rule kind not judged here is said as a warning\n"
    "(docs/consul-semantics.md 5a).\n"
    "\n"
    "  --consul-arguments FILE  JSON or YAML; - for stdin (judged by Consul's release's Envoy\n"
    "                           API: --mesh consul@1.21, or --envoy-api VERSION)\n"
    "  --extension-name NAME    the entry's name (default builtin/property-override)\n"
    "  --convention wire|typed  how values are typed before Consul decodes them. wire (default):\n"
    "                           as Consul's HTTP API delivers them (Go encoding/json: every\n"
    "                           number float64, every list []interface {}), as -f, the webhook\n"
    "                           and the controller check them; typed: as Consul's own Go tests\n"
    "                           write them (integers int, lists typed by their elements)\n"
    "\n"
    "Exit status: 0 valid; 1 invalid (every error on stderr, aggregated as Consul formats them,\n"
    "then hints); 2 bad usage or unreadable input. Warnings (deprecated Envoy fields, Envoy's\n"
    "rules left to preview or not judged) go to\n"
    "stderr and do not fail validation.\n";

static int usage_error(const char *msg) {
  fprintf(stderr, "propertyoverride validate: %s\n\n%s", msg, kUsage);
  return kPo_Exit_Usage;
}

static bool parse_output(const char *s, po_OutputFormat *out) {
  if (!strcmp(s, "text")) *out = kPo_OutputFormat_Text;
  else if (!strcmp(s, "json")) *out = kPo_OutputFormat_Json;
  else if (!strcmp(s, "github")) *out = kPo_OutputFormat_Github;
  else return false;
  return true;
}

/* Each object is checked as it is read, in an arena freed after it (po_CliInputs_Each): memory
 * is bounded by one object, not by the input (a 200,000-item List took 1.76 GB when it was read
 * whole and everything checking allocated was kept); only the findings' texts are copied out. */
typedef struct {
  po_CliReport *r;
  const po_TargetOptions *opts;
} CheckCtx;

static bool check_one(void *ctx, const po_CliObject *o, po_Arena *scratch) {
  CheckCtx *cc = ctx;
  size_t before = cc->r->count;
  return po_Cli_CheckObject(o, cc->opts, scratch, cc->r, NULL) && po_CliReport_Own(cc->r, before);
}

static int validate_manifests(const char *const *paths, size_t n, po_OutputFormat format, bool verbose,
                              bool allow_empty, const po_TargetOptions *topts) {
  po_Arena *a = po_Arena_New();
  if (!a) return fprintf(stderr, "propertyoverride validate: out of memory\n"), kPo_Exit_Usage;
  po_CliReport r;
  po_CliReport_Init(&r, a);
  r.need_checked = true;
  r.name_apis = true;
  r.allow_empty = allow_empty;
  po_StreamStats stats = {0};
  CheckCtx cc = {&r, topts};
  bool ok = po_CliInputs_Each(paths, n, a, &r, check_one, &cc, &stats);
  /* PO_DEBUG_STREAM_STATS=1: the reader's counters on stderr (tests/cli: memory stays bounded). */
  const char *dbg = getenv("PO_DEBUG_STREAM_STATS");
  if (dbg && *dbg == '1') {
    fprintf(stderr, "stream: objects %zu retracted %zu peak_bytes %zu\n", stats.objects, stats.retracted, stats.peak_bytes);
  }
  int rc = kPo_Exit_Usage;
  /* A lookup that failed for lack of memory reads as "no such field": no verdict then. */
  if (!ok || po_Engine_OutOfMemory(a) || !po_CliReport_Print(&r, format, verbose, stdout)) {
    fprintf(stderr, "propertyoverride validate: out of memory\n");
  } else {
    rc = po_Cli_Flush(stdout, "validate", "the report") ? po_CliReport_ExitCode(&r) : kPo_Exit_Usage;
  }
  po_Arena_Free(a);
  return rc;
}

/* --consul-arguments: one `arguments` object through Consul's Constructor, under Consul's
 * release's snapshot (or --envoy-api's). */
static int validate_arguments(const char *file, const char *name, const char *convention, const po_TargetOptions *topts) {
  po_Arena *a = po_Arena_New();
  if (!a) return fprintf(stderr, "propertyoverride validate: out of memory\n"), kPo_Exit_Usage;
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  char *text = po_Cli_ReadFile(file, a, &len, &st);
  po_Value *args = text ? po_Cli_ParseDocument(file, text, len, a, &st) : NULL;
  int rc = kPo_Exit_Usage;
  if (!args) {
    fprintf(stderr, "propertyoverride validate: %s\n", st.message);
  } else {
    po_Diagnostics *d = po_Diagnostics_New(a);
    po_CompileOptions co = po_CompileOptions_Default();
    /* Consul receives `arguments` through its HTTP API (encoding/json: every number float64,
     * every array []interface {}), as the Consul target adapter and `validate -f` check them. */
    co.convention = convention && !strcmp(convention, "typed") ? kPo_Convention_Typed : kPo_Convention_Wire;
    co.api = po_TargetOptions_Api(topts, kPo_Mesh_Consul); /* Consul's release's, or --envoy-api */
    const po_MeshRelease *rel = topts->release[kPo_Mesh_Consul];
    if (rel && co.api == po_MeshRelease_Api(rel)) co.judged_for = po_Arena_Printf(a, "consul@%s", rel->release);
    co.releases = po_Mesh_ApiReleases(kPo_Mesh_Consul);
    po_Override *o = po_Constructor(name, args, &co, a, d);
    /* Consul's multierror first and unchanged, then our further errors, the warnings and the
     * hints, each in a block of its own (docs/consul-semantics.md). */
    const char *text_out = po_Diagnostics_Text(d, a);
    /* the snapshot that judged it, and the release it stands for, as -f's report names them */
    printf("Envoy API: %s (consul@%s%s)\n", po_EnvoyApi_Name(co.api), rel ? rel->release : "?",
           rel && co.api != po_MeshRelease_Api(rel) ? " via --envoy-api" : "");
    fflush(stdout);
    if (o) {
      if (text_out) fputs(text_out, stderr);
      rc = kPo_Exit_Ok;
    } else {
      fputs(text_out ? text_out : "invalid\n", stderr);
      rc = kPo_Exit_Invalid;
    }
  }
  po_Arena_Free(a);
  return rc;
}

int po_Cmd_Validate(int argc, char **argv) {
  static const struct option opts[] = {{"consul-arguments", required_argument, 0, 'c'},
                                       {"extension-name", required_argument, 0, 'n'},
                                       {"convention", required_argument, 0, 'C'},
                                       {"filename", required_argument, 0, 'f'},
                                       {"output", required_argument, 0, 'o'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"allow-empty", no_argument, 0, 'E'},
                                       {"help", no_argument, 0, 'h'},
                                       {"cluster-domain", required_argument, 0, kPo_CliOpt_ClusterDomain},
                                       {"istio-version", required_argument, 0, kPo_CliOpt_IstioVersion},
                                       {"istio-root-namespace", required_argument, 0, kPo_CliOpt_IstioRootNamespace},
                                       {"allow-cross-namespace-from", required_argument, 0, kPo_CliOpt_AllowCrossNamespaceFrom},
                                       {"mesh", required_argument, 0, kPo_CliOpt_Mesh},
                                       {"envoy-api", required_argument, 0, kPo_CliOpt_EnvoyApi},
                                       {0, 0, 0, 0}};
  const char *file = NULL, *name = NULL, *convention = NULL;
  /* the tenancy policy judged offline: nobody may name another namespace unless the flag says so */
  po_Tenancy tenancy = {0};
  po_TargetOptions topts = {.tenancy = &tenancy};
  const char **paths = calloc((size_t)argc + 1, sizeof *paths);
  size_t npaths = 0;
  po_OutputFormat format = kPo_OutputFormat_Text;
  bool verbose = false, output_given = false, allow_empty = false;
  int c;
  optind = 1;
  opterr = 0;
  if (!paths) return fprintf(stderr, "propertyoverride validate: out of memory\n"), kPo_Exit_Usage;
  while ((c = getopt_long(argc, argv, "f:o:vh", opts, NULL)) != -1) {
    switch (c) {
      case 'c': file = optarg; break;
      case 'n': name = optarg; break;
      case 'C': convention = optarg; break;
      case 'f': paths[npaths++] = optarg; break;
      case 'o':
        output_given = true;
        if (!parse_output(optarg, &format)) return free(paths), usage_error("--output must be text, json or github");
        break;
      case 'v': verbose = true; break;
      case 'E': allow_empty = true; break;
      case 'h': free(paths); fputs(kUsage, stdout); return kPo_Exit_Ok;
      case kPo_CliOpt_ClusterDomain:
      case kPo_CliOpt_IstioVersion:
      case kPo_CliOpt_IstioRootNamespace:
      case kPo_CliOpt_AllowCrossNamespaceFrom:
      case kPo_CliOpt_Mesh:
      case kPo_CliOpt_EnvoyApi:
        if (!po_Cli_TargetOption(c, optarg, "validate", &topts, &tenancy)) return free(paths), kPo_Exit_Usage;
        break;
      default:
        free(paths);
        return usage_error(optopt ? "an option is missing its argument" : "unknown option");
    }
  }
  if (optind < argc) return free(paths), usage_error("unexpected argument");
  po_Cli_TargetDefaults(&topts); /* each mesh no flag named: its default release */
  if (npaths && (file || name || convention)) {
    return free(paths), usage_error("-f does not go with --consul-arguments, --extension-name or --convention");
  }
  if (npaths) {
    int rc = validate_manifests(paths, npaths, format, verbose, allow_empty, &topts);
    free(paths);
    return rc;
  }
  free(paths);
  if (output_given || verbose || allow_empty) return usage_error("--output, --verbose and --allow-empty go with -f");
  if (!file) return usage_error("-f or --consul-arguments is required");
  if (convention && strcmp(convention, "wire") != 0 && strcmp(convention, "typed") != 0) {
    return usage_error("--convention must be wire or typed");
  }

  return validate_arguments(file, name, convention, &topts);
}
