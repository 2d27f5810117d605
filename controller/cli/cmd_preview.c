/* propertyoverride preview: what PropertyOverrides would change in a running proxy's
 * configuration, from Envoy's admin /config_dump (a file, or fetched from the admin port).
 *
 *   the command line (parse) -> the inputs -> the dump read by the engine with the newest
 *   snapshot (po_ConfigDump_ParseJson) -> the snapshot judging the proxy (the flags', its
 *   bootstrap's, the mesh's default) -> the webhook's checks and compile under it
 *   (po_Cli_CheckObject) -> the run and its report (preview_run.c, po_Preview_Run).
 * Memory: the engine reads the dump a piece at a time and keeps each resource as its bytes
 * (about half its JSON) and a record; one piece of the dump at most max(4x the dump, 32 MiB)
 * while it is decoded (the engine refuses it past that). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"
#include "po/meshes/istio.h"
#include "po/meshes/mesh.h"
#include "preview.h"

static const char kUsage[] =
    "usage: propertyoverride preview -f FILE|DIR|- [-f ...] (--config-dump FILE | --envoy-admin URL)\n"
    "                                [--mesh consul|istio|envoy-gateway[@RELEASE]] [--envoy-api VERSION]\n"
    "                                [--datacenter DC] [--istio-version 1.N] [-o text|json]\n"
    "\n"
    "Applies PropertyOverrides to the configuration a proxy is running, as the mesh would, and\n"
    "shows what changes: a unified diff of each changed resource's JSON (keys sorted), the\n"
    "resources no patch matched, each patch that matched nothing and why, and errors.\n"
    "Overrides are applied in the order Consul runs them (ProxyDefaults' first, then the\n"
    "ServiceDefaults'; each by spec.priority, lower first, then name), each one's matching\n"
    "patches in order (with Consul, those of a ServiceDefaults other than the proxy's service,\n"
    "which the dump's bootstrap names, are set aside and listed), to the\n"
    "dynamic active resources (warming and draining ones are listed, not patched; static ones\n"
    "come from the bootstrap, which no mesh extension patches).\n"
    "The dump is read with the newest Envoy API embedded; the overrides are judged and applied\n"
    "with the snapshot of the proxy's mesh release: the flags', else the release the dump's\n"
    "bootstrap names (Istio's ISTIO_VERSION), else Consul's one snapshot, else the Envoy the\n"
    "bootstrap names, else the mesh's default. A field a patched resource carries that this\n"
    "snapshot lacks is kept as it is, with a warning.\n"
    "\n"
    "  -f, --filename PATH    PropertyOverride manifests: a file, a directory, or - (repeatable)\n"
    "  --config-dump FILE     Envoy's /config_dump output (JSON; - for stdin)\n"
    "  --envoy-admin URL      fetch it: http://127.0.0.1:19000 after\n"
    "                         `kubectl port-forward POD 19000` (Consul, Envoy Gateway) or 15000\n"
    "                         (Istio); endpoints\n"
    "                         are asked for (?include_eds)\n"
    "  --mesh MESH[@RELEASE]  consul, istio or envoy-gateway: whose naming decides direction and\n"
    "                         service (an Envoy Gateway proxy's resources are all outbound and of\n"
    "                         no service, and a Gateway PropertyOverride reaches the HTTPRoute\n"
    "                         clusters of the namespaces it follows); with a release (istio@1.30),\n"
    "                         the snapshot its control plane pins judges the overrides. Default:\n"
    "                         detected from the dump, said in the report with why: its bootstrap\n"
    "                         (Istio's node metadata ISTIO_VERSION, Consul's consul.source stats\n"
    "                         tags), else the naming most of its clusters follow (outbound|...,\n"
    "                         httproute/NS/NAME/rule/N, ....consul), else consul\n"
    "  --envoy-api VERSION    the snapshot judging the overrides, named (v1.37.0)\n"
    "  --istio-version 1.N    the Istio release a Service or Mesh target runs, judged as render\n"
    "                         and validate judge it (arrays need 1.31+); by default the dump's\n"
    "                         ISTIO_VERSION, else assumed the newest listed (1.31), with a warning\n"
    "  --datacenter DC        Consul's local datacenter, for the report (every datacenter's\n"
    "                         upstream SNI is its service's, as in Consul); by default the\n"
    "                         bootstrap's consul.source.datacenter stats tag, else the one\n"
    "                         datacenter the upstream SNIs name\n"
    "  --timeout SECONDS      for --envoy-admin (default 10)\n"
    "  -o, --output FORMAT    text (default) or json (before and after of each changed resource)\n"
    "  -v, --verbose          Consul's field lists in full in error reports\n"
    "\n"
    "Limits, stated in the output too: the dump already holds whatever extensions are live, so a\n"
    "patch removed from a new generation cannot be shown reverting; endpoint dumps are rebuilt\n"
    "by Envoy from its host sets, not what the control plane sent.\n"
    "\n"
    "Exit status: 0 previewed; 1 an override is invalid (reported as validate reports it), a\n"
    "patch failed on a resource, or a message a patch created breaks Envoy's rules; 2 bad usage, an unreadable input or dump, a failed fetch, or\n"
    "output that could not be written.\n";

enum { kMaxDump = 256 << 20 }; /* 10,000 clusters are about 10 MB: far beyond any sidecar */

/* ================================ parse ================================ */

/* Preview applies each PropertyOverride to the proxy of its own namespace's dump, so another
 * namespace in targetRef is refused whatever the controller's policy (an empty one: the message
 * names the controller's flag), as render refuses it. */
static const po_Tenancy kPreviewNobody = {0};

typedef struct {
  const char **paths; /* -f, malloc'd */
  size_t npaths;
  const char *dump_path, *admin;
  /* the Istio release decides what an Istio target accepts (its arrays), as for render */
  po_TargetOptions topts;
  po_PreviewOptions opt;
  long timeout_s;
  /* the judging snapshot the command line names (--mesh MESH@RELEASE, --envoy-api), and the
   * flag as given, for the report; NULL: the dump's bootstrap decides */
  const po_EnvoyApi *flag_api;
  const char *flag, *flag_value;
  char why[sizeof ((po_CtlStatus *)0)->message + 96]; /* a usage error's message (parse_mesh) */
} Args;

enum { kParsed = -1 }; /* parse_args: go on; any other value is the exit status */

/* The snapshot judging `mesh`'s release `release` ("1.26.3": its line's), NULL when the mesh's
 * table does not list it; with release NULL, the mesh's default release's. */
static const po_EnvoyApi *release_api(po_Mesh mesh, const char *release) {
  const po_MeshReleases *t = po_Mesh_Ops(mesh)->releases;
  const po_MeshRelease *row = release ? po_MeshReleases_Find(t, release) : po_MeshReleases_Default(t);
  return row ? po_MeshRelease_Api(row) : release ? NULL : po_EnvoyApi_Default();
}

/* --mesh MESH[@RELEASE]: the mesh whose naming decides direction and service, and with a
 * release, the snapshot judging the proxy (that release's) and, as for render and validate, the
 * release its targets run (po_Cli_TargetOption: Istio's, --istio-version's too; said on stderr
 * when refused: *exit_now). The message in args->why. */
static const char *parse_mesh(const char *v, Args *args, int *exit_now) {
  po_MeshChoice choice;
  po_CtlStatus st;
  if (!po_Mesh_ParseChoice(v, &choice, &st)) {
    snprintf(args->why, sizeof args->why, "--mesh '%.60s': %s", v, st.message);
    return args->why;
  }
  args->opt.mesh = choice.mesh->mesh;
  args->opt.mesh_by = "flag";
  args->opt.mesh_reason = v; /* the report says "--mesh <v>" */
  if (!choice.defaulted) {
    args->flag_api = po_MeshRelease_Api(choice.release);
    args->flag = "--mesh";
    args->flag_value = v;
    if (!po_Cli_TargetOption(kPo_CliOpt_Mesh, v, "preview", &args->topts, NULL)) *exit_now = kPo_Exit_Usage;
  }
  return NULL;
}

/* One option into args; NULL, or what is wrong with it (a usage error). *exit_now is set when
 * the option ends the command (--help; a target option refused, said by po_Cli_TargetOption). */
static const char *parse_option(int c, Args *args, int *exit_now) {
  char *end = NULL;
  switch (c) {
    case 'f': args->paths[args->npaths++] = optarg; return NULL;
    case 'c': args->dump_path = optarg; return NULL;
    case 'e': args->admin = optarg; return NULL;
    case 'd': args->opt.datacenter = optarg; return NULL;
    case 'v': args->opt.verbose = true; return NULL;
    case 'm': return parse_mesh(optarg, args, exit_now);
    case kPo_CliOpt_EnvoyApi:
      /* every mesh's targets judged by it (po_Cli_TargetOption says an unknown one) */
      if (!po_Cli_TargetOption(c, optarg, "preview", &args->topts, NULL)) *exit_now = kPo_Exit_Usage;
      args->flag_api = po_EnvoyApi_Find(optarg);
      args->flag = "--envoy-api";
      args->flag_value = optarg;
      return NULL;
    case 'o':
      if (!strcmp(optarg, "json")) args->opt.json = true;
      else if (strcmp(optarg, "text")) return "--output: expected text or json";
      return NULL;
    case 't':
      args->timeout_s = strtol(optarg, &end, 10);
      if (!*optarg || *end || args->timeout_s < 1 || args->timeout_s > 3600) return "--timeout: expected whole seconds, 1 to 3600";
      return NULL;
    case 'h': fputs(kUsage, stdout); *exit_now = kPo_Exit_Ok; return NULL;
    case kPo_CliOpt_IstioVersion:
      if (!po_Cli_TargetOption(c, optarg, "preview", &args->topts, NULL)) *exit_now = kPo_Exit_Usage;
      return NULL;
    default: return optopt ? "an option is missing its argument" : "unknown option";
  }
}

/* The command line into args: kParsed, or the exit status (usage said, or --help printed). */
static int parse_args(int argc, char **argv, Args *args) {
  static const struct option opts[] = {{"filename", required_argument, 0, 'f'},
                                       {"config-dump", required_argument, 0, 'c'},
                                       {"envoy-admin", required_argument, 0, 'e'},
                                       {"mesh", required_argument, 0, 'm'},
                                       {"datacenter", required_argument, 0, 'd'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"output", required_argument, 0, 'o'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"help", no_argument, 0, 'h'},
                                       {"istio-version", required_argument, 0, kPo_CliOpt_IstioVersion},
                                       {"envoy-api", required_argument, 0, kPo_CliOpt_EnvoyApi},
                                       {0, 0, 0, 0}};
  *args = (Args){.paths = calloc((size_t)argc + 1, sizeof *args->paths),
                 .topts = {.tenancy = &kPreviewNobody},
                 .opt = {.mesh = kPo_Mesh_Consul}, /* until --mesh names it or the dump says (po_Preview_DetectMesh) */
                 .timeout_s = 10};
  const char *usage_err = NULL;
  int rc = kParsed, c;
  optind = 1;
  opterr = 0;
  if (!args->paths) fprintf(stderr, "propertyoverride preview: out of memory\n");
  if (!args->paths) rc = kPo_Exit_Usage;
  while (rc == kParsed && !usage_err && (c = getopt_long(argc, argv, "f:o:vh", opts, NULL)) != -1) {
    usage_err = parse_option(c, args, &rc);
  }
  if (rc == kParsed && !usage_err) {
    if (optind < argc) usage_err = "unexpected argument";
    else if (!args->npaths) usage_err = "-f is required";
    else if (!args->dump_path == !args->admin) usage_err = "one of --config-dump and --envoy-admin is required";
    else if (args->opt.datacenter && args->opt.mesh_by && args->opt.mesh != kPo_Mesh_Consul) usage_err = "--datacenter is Consul's";
  }
  if (rc == kParsed && usage_err) {
    fprintf(stderr, "propertyoverride preview: %s\n\n%s", usage_err, kUsage);
    rc = kPo_Exit_Usage;
  }
  return rc;
}

/* ================================ the command ================================ */

/* The inputs loaded and checked as validate -f checks them; the accepted PropertyOverrides into
 * pos, in apply order. false when out of memory. */
static bool compile_inputs(const po_CliInputs *in, const po_TargetOptions *topts, po_Arena *a, po_CliReport *rep,
                           po_PreviewOverride **pos_out, size_t *npo) {
  po_CompiledOverride *compiled = po_Arena_Malloc(a, (in->count ? in->count : 1) * sizeof *compiled);
  po_PreviewOverride *pos = compiled ? po_Arena_Malloc(a, (in->count ? in->count : 1) * sizeof *pos) : NULL;
  bool ok = pos != NULL;
  for (size_t i = 0; ok && i < in->count; i++) {
    ok = po_Cli_CheckObject(&in->objects[i], topts, a, rep, &compiled[i]);
    if (!ok || in->objects[i].kind != kPo_ObjKind_PropertyOverride || !compiled[i].accepted) continue;
    const po_CompiledOverride *co = &compiled[i];
    po_PreviewOverride *p = &pos[(*npo)++];
    p->c = co;
    p->label = *co->ns ? po_Arena_Printf(a, "%s/%s", co->ns, co->name) : co->name;
    p->matched = po_Arena_Malloc(a, (co->args->patch_count ? co->args->patch_count : 1) * sizeof(size_t));
    p->index = *npo - 1;
    ok = p->label && p->matched;
  }
  if (ok) qsort(pos, *npo, sizeof *pos, po_PreviewOverride_Compare);
  *pos_out = pos;
  return ok;
}

/* The dump, from the file or the admin endpoint, read by the engine; false said on stderr. */
static bool read_dump(const Args *args, po_Arena *a, po_ConfigDump *dump) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  char *text = NULL, *fetched = NULL;
  if (args->admin) fetched = po_Preview_Fetch(args->admin, kMaxDump, args->timeout_s * 1000, a, &len, &st);
  else text = po_Cli_ReadFileMalloc(args->dump_path, kMaxDump, &len, &st);
  const char *src = args->admin ? args->admin : args->dump_path;
  /* read with the newest snapshot: any dump it can read is previewed (the judging is the proxy's) */
  bool read = (text || fetched) && po_ConfigDump_ParseJson(po_EnvoyApi_Newest(), text ? text : fetched, len, a, dump, &st);
  if ((text || fetched) && !read) po_Status_Prefix(&st, "%s: ", src);
  /* The dump's text is no longer needed: the arena holds a record and the bytes of each
   * resource, decoded when a patch matches it into an arena of its own, freed after it. */
  free(text);
  if (!read) fprintf(stderr, "propertyoverride preview: %s\n", st.message);
  return read;
}

/* The one snapshot every release of `mesh` is judged with (Consul's), or NULL when its releases
 * differ (Istio's). */
static const po_EnvoyApi *only_api(po_Mesh mesh) {
  const po_MeshReleases *t = po_Mesh_Ops(mesh)->releases;
  const po_EnvoyApi *one = t && t->count ? po_MeshRelease_Api(&t->rows[0]) : NULL;
  for (size_t i = 1; one && i < t->count; i++) one = po_MeshRelease_Api(&t->rows[i]) == one ? one : NULL;
  return one;
}

/* The snapshot judging the proxy, into opt: what its mesh's control plane applies the patches
 * with, the go-control-plane its release pins. The flags' (--mesh MESH@RELEASE, --envoy-api);
 * else the release the dump's bootstrap names (Istio's ISTIO_VERSION); else, when every release
 * of the mesh is judged with one snapshot (Consul's), that one: the Envoy the proxy runs does not
 * change what its control plane can set; else (not Envoy Gateway, whose release, not its proxy's
 * Envoy, decides) the Envoy version the bootstrap names (po_EnvoyApi_ForEnvoy: the oldest snapshot
 * at least that new); else the mesh's default release's. false when out of memory. */
static bool choose_judge(const Args *args, const po_ConfigDump *dump, po_Arena *a, po_PreviewOptions *opt) {
  const char *mesh = po_Mesh_Name(opt->mesh);
  const po_EnvoyApi *by_release = NULL, *only = only_api(opt->mesh);
  if (opt->mesh == kPo_Mesh_Istio && dump->istio_version) by_release = release_api(opt->mesh, dump->istio_version);
  opt->chosen_by = "bootstrap";
  if (args->flag_api) {
    opt->judge = args->flag_api;
    opt->chosen_by = "flag";
    opt->reason = po_Arena_Printf(a, "chosen by %s %s", args->flag, args->flag_value);
  } else if (by_release) {
    opt->judge = by_release;
    opt->reason = po_Arena_Printf(a, "from the dump's bootstrap: ISTIO_VERSION %s", dump->istio_version);
  } else if (only) {
    opt->judge = only;
    opt->chosen_by = "default";
    opt->reason = po_Arena_Printf(a, "as every %s release this build knows is%s%s%s", mesh,
                                  dump->envoy_version ? " (the proxy's Envoy " : "", dump->envoy_version ? dump->envoy_version : "",
                                  dump->envoy_version ? " does not change what its control plane can set)" : "");
  } else if (dump->envoy_version && opt->mesh != kPo_Mesh_EnvoyGateway) {
    opt->judge = po_EnvoyApi_ForEnvoy(dump->envoy_major, dump->envoy_minor);
    opt->reason = po_Arena_Printf(a, "from the dump's bootstrap: Envoy %s", dump->envoy_version);
  } else if (opt->mesh == kPo_Mesh_EnvoyGateway) {
    /* Envoy Gateway applies an EnvoyPatchPolicy with the go-control-plane its own release pins,
     * whatever Envoy its proxies run: the proxy's Envoy does not say which that is */
    const po_MeshRelease *d = po_MeshReleases_Default(po_Mesh_Ops(opt->mesh)->releases);
    opt->judge = release_api(opt->mesh, NULL);
    opt->chosen_by = "default";
    opt->reason = po_Arena_Printf(a, "the default release of mesh %s, %s (the Envoy Gateway release applies the patches "
                                  "with the go-control-plane it pins, which the proxy's bootstrap does not name: "
                                  "--mesh envoy-gateway@1.N names it)", mesh, d ? d->release : "?");
  } else {
    opt->judge = release_api(opt->mesh, NULL);
    opt->chosen_by = "default";
    opt->reason = po_Arena_Printf(a, "the default of mesh %s (the dump's bootstrap names no version)", mesh);
  }
  return opt->reason != NULL;
}

/* An Istio proxy's bootstrap names its release (ISTIO_VERSION 1.26.3): when the command line
 * names none, its targets are judged as that release (what it may write: lists from 1.31), as
 * its snapshot already is, not as the release assumed when none is known (the newest listed). */
static void known_istio(const po_PreviewOptions *opt, const po_ConfigDump *dump, po_TargetOptions *topts) {
  if (opt->mesh != kPo_Mesh_Istio || topts->istio_minor || !dump->istio_version) return;
  /* a tagged release ("1.26.3-asm.1", "1.26-dev") is its line's, as the snapshot's choice reads it */
  const po_MeshRelease *row = po_MeshReleases_Find(po_Mesh_Ops(kPo_Mesh_Istio)->releases, dump->istio_version);
  int minor = po_Istio_ParseVersion(dump->istio_version);
  if (minor <= 0 && row) minor = po_Istio_ParseVersion(row->release);
  if (minor <= 0) return;
  topts->istio_minor = minor;
  if (row) topts->release[kPo_Mesh_Istio] = row;
}

/* Inputs, dump, judging snapshot, checks, preview, in the arena a: the exit status. The dump is
 * read before the overrides are checked: the snapshot they are judged with may be the one its
 * bootstrap names. */
static int run(const Args *args, po_Arena *a) {
  po_CliReport rep;
  po_CliReport_Init(&rep, a);
  po_CliInputs in;
  po_PreviewOverride *pos = NULL;
  size_t npo = 0;
  po_ConfigDump dump;
  po_PreviewOptions opt = args->opt;
  po_TargetOptions topts = args->topts;
  int rc = kPo_Exit_Usage;
  bool ok = po_CliInputs_Load(&in, args->paths, args->npaths, a, &rep);
  bool read = ok && po_CliReport_ExitCode(&rep) == 0 && read_dump(args, a, &dump);
  if (read && !opt.mesh_by) ok = po_Preview_DetectMesh(&dump, a, &opt);
  if (read && ok && opt.datacenter && opt.mesh != kPo_Mesh_Consul) {
    /* said before anything is judged: a Consul flag on another mesh's proxy is a usage error */
    fprintf(stderr, "propertyoverride preview: --datacenter is Consul's, and the dump is %s's proxy (%s): --mesh consul "
                    "previews it as Consul's\n", po_Mesh_Name(opt.mesh), po_Cli_Shown(opt.mesh_reason, a) ? po_Cli_Shown(opt.mesh_reason, a) : "");
    return kPo_Exit_Usage;
  }
  if (read && ok) ok = choose_judge(args, &dump, a, &opt);
  for (size_t m = 0; m < kPo_MeshSlots; m++) topts.api[m] = opt.judge; /* whatever mesh a target is of */
  if (read) known_istio(&opt, &dump, &topts);
  if (read && ok) ok = compile_inputs(&in, &topts, a, &rep, &pos, &npo);
  /* a lookup that failed for want of memory reads as "no such field" deep in the compile: no
   * verdict is printed then (exit 2, out of memory), as validate -f does */
  if (ok && po_Engine_OutOfMemory(a)) ok = false;
  if (!ok) {
    fprintf(stderr, "propertyoverride preview: out of memory\n");
  } else if (po_CliReport_ExitCode(&rep) != 0) {
    /* An override the webhook would refuse is never previewed: what it would do is nothing. */
    po_CliReport_Print(&rep, kPo_OutputFormat_Text, args->opt.verbose, stderr);
    if (read) fprintf(stderr, "propertyoverride preview: judged with %s, %s\n", po_EnvoyApi_Name(opt.judge), po_Cli_Shown(opt.reason, a) ? po_Cli_Shown(opt.reason, a) : "");
    rc = po_CliReport_ExitCode(&rep);
  } else if (!read) {
    /* said by read_dump */
  } else if (npo == 0) {
    if (rep.count) po_CliReport_Print(&rep, kPo_OutputFormat_Text, args->opt.verbose, stderr);
    fprintf(stderr, "propertyoverride preview: no PropertyOverride in the inputs\n");
  } else {
    if (rep.count) po_CliReport_Print(&rep, kPo_OutputFormat_Text, args->opt.verbose, stderr); /* warnings */
    int r = po_Preview_Run(&opt, pos, npo, &dump, a, stdout);
    if (r == -1) fprintf(stderr, "propertyoverride preview: out of memory\n");
    if (r >= 0 && po_Cli_Flush(stdout, "preview", "the preview")) rc = r;
  }
  return rc;
}

int po_Cmd_Preview(int argc, char **argv) {
  Args args;
  int rc = parse_args(argc, argv, &args);
  /* The dump's decoded tree is most of what a preview touches (117 MB for 20,000 resources):
   * in huge pages, not 30,000 faults of 4 KB (docs/benchmarks.md, preview). */
  po_Arena *a = rc == kParsed ? po_Arena_NewLarge() : NULL;
  if (rc == kParsed && !a) fprintf(stderr, "propertyoverride preview: out of memory\n");
  if (rc == kParsed) rc = a ? run(&args, a) : kPo_Exit_Usage;
  po_Arena_Free(a);
  free(args.paths);
  return rc;
}
