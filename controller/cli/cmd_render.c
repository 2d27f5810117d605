/* propertyoverride render: the mesh objects the controller would write for the PropertyOverrides
 * given, with no cluster, for review in pull requests: each mesh's render (po_MeshOps.render, in
 * its folder: Consul's po_Consul_Plan from the Consul objects given or from nothing; Istio's
 * EnvoyFilters with the target Service's selector; Envoy Gateway's EnvoyPatchPolicies from the
 * Gateway and HTTPRoutes given), in the mesh table's order. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"
#include "po/meshes/mesh.h"
#include "po/targets/render.h"

static const char kUsage[] =
    "usage: propertyoverride render -f FILE|DIR|- [-f ...] [--verbose] [--istio-version 1.N]\n"
    "                               [--cluster-domain D] [--istio-root-namespace NS]\n"
    "                               [--mesh MESH[@RELEASE]] [--envoy-api VERSION]\n"
    "\n"
    "Prints, as multi-document YAML, the objects the controller would write for the\n"
    "PropertyOverrides given (keys sorted, one document per target object).\n"
    "Consul targets (ServiceDefaults, ProxyDefaults), in kind/namespace/name order: a target given\n"
    "among the inputs is the starting point and everything else in it is kept (other extensions,\n"
    "other fields); a target not given is created as the controller creates it. A manifest\n"
    "without metadata.generation renders as generation 1, what the API server gives a new object.\n"
    "Istio targets, after them in namespace/name order: one EnvoyFilter per PropertyOverride. For\n"
    "a Service target the Service (v1, same namespace and name) must be among the inputs: its\n"
    "spec.selector becomes the EnvoyFilter's workloadSelector (kubectl get service NAME -o yaml).\n"
    "A Mesh target's EnvoyFilter goes into Istio's root namespace, without a selector.\n"
    "Envoy Gateway targets (Gateway), last: one EnvoyPatchPolicy per PropertyOverride. The Gateway\n"
    "(gateway.networking.k8s.io, same namespace and name) must be among the inputs, and the\n"
    "HTTPRoutes attached to it too: its listeners name the xDS listeners and route\n"
    "configurations, their rules the clusters (kubectl get gateway NAME -o yaml; kubectl get\n"
    "httproutes -A -o yaml).\n"
    "Inputs are read as by validate -f.\n"
    "\n"
    "  -f, --filename PATH   a file, a directory, or - for stdin (repeatable)\n"
    "  -v, --verbose         print Consul's field lists in full in error reports\n"
    "  --istio-version 1.N   the Istio release Istio targets run; arrays become\n"
    "                        MERGE_AND_REPLACE_LIST patches from 1.31 on (refused before, and\n"
    "                        when not given)\n"
    "  --mesh MESH[@RELEASE] the release a mesh runs (repeatable): consul@1.22, istio@1.30,\n"
    "                        envoy-gateway@1.9; its targets are judged by the Envoy API that\n"
    "                        release is built on (default: each mesh's newest listed release)\n"
    "  --envoy-api VERSION   judge every target by this embedded Envoy API snapshot instead\n"
    "  --cluster-domain D    Kubernetes' DNS domain in Istio's service names (cluster.local)\n"
    "  --istio-root-namespace NS  Istio's root namespace, where Mesh targets go (istio-system)\n"
    "\n"
    "Exit status: 0 rendered; 1 some object invalid (reported on stderr as validate reports it;\n"
    "the valid ones are still rendered); 2 bad usage, unreadable input, a directory loop, no\n"
    "file read at all, or output that could not be written.\n";

static void refuse_render(const po_CliObject *o, po_CliReport *r, const char *msg) {
  po_CliFinding *f = po_CliReport_Add(r, o);
  if (!f) return;
  f->kind = o->kind_name;
  f->ns = po_Render_Meta(o->value, "namespace");
  f->name = po_Render_Meta(o->value, "name");
  f->code = "target";
  f->pos = o->pos;
  f->message = msg;
  r->valid--, r->invalid++;
}

/* A mesh's render refused input i (render.h's refuse). */
typedef struct {
  const po_CliInputs *in;
  po_CliReport *r;
} Refusals;

static void refuse(void *ctx, size_t i, const char *why) {
  Refusals *x = ctx;
  refuse_render(&x->in->objects[i], x->r, why);
}

/* Every mesh's objects, in the table's order (Consul's targets, then Istio's EnvoyFilters, then
 * Envoy Gateway's EnvoyPatchPolicies), each mesh's in its own order (po_MeshOps.render). */
static int render(const po_CliInputs *in, po_CompiledOverride *compiled, po_Arena *a, po_CliReport *r, FILE *out) {
  size_t n = in->count, no = 0;
  json_object **objs = po_Arena_Malloc(a, (2 * n + 1) * sizeof *objs);
  const po_Value **values = po_Arena_Malloc(a, (n ? n : 1) * sizeof *values);
  if (!objs || !values) return -1;
  for (size_t i = 0; i < n; i++) values[i] = in->objects[i].value;
  Refusals x = {in, r};
  po_RenderInputs ri = {.objects = values, .compiled = compiled, .count = n, .refuse = refuse, .ctx = &x};
  int rc = 0;
  for (size_t k = 0; k < po_Mesh_Count() && rc == 0; k++) {
    const po_MeshOps *m = po_Mesh_At(k);
    if (m->render && !m->render(&ri, a, objs, &no)) rc = -1;
  }
  if (rc == 0) {
    /* Emitted into memory first: when memory runs out half way, nothing is printed, rather
     * than the first targets alone, which a pipeline could apply as if they were all. */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    bool emitted = mem && po_Cli_EmitYaml(objs, no, mem);
    /* glibc's fclose of a memory stream reports success even when its last realloc failed,
     * leaving no buffer: that is out of memory too. */
    if (mem && (fclose(mem) != 0 || !buf)) emitted = false;
    if (emitted) fwrite(buf, 1, len, out); /* a write error: the caller's flush says it */
    else rc = -2;
    free(buf);
  }
  for (size_t i = 0; i < no; i++) json_object_put(objs[i]);
  return rc;
}

int po_Cmd_Render(int argc, char **argv) {
  static const struct option opts[] = {{"filename", required_argument, 0, 'f'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"help", no_argument, 0, 'h'},
                                       {"cluster-domain", required_argument, 0, kPo_CliOpt_ClusterDomain},
                                       {"istio-version", required_argument, 0, kPo_CliOpt_IstioVersion},
                                       {"istio-root-namespace", required_argument, 0, kPo_CliOpt_IstioRootNamespace},
                                       {"mesh", required_argument, 0, kPo_CliOpt_Mesh},
                                       {"envoy-api", required_argument, 0, kPo_CliOpt_EnvoyApi},
                                       {0, 0, 0, 0}};
  /* render writes each entry into its own namespace's target, so another namespace is refused
   * whatever the controller's policy (an empty one: the message names the flag) */
  static const po_Tenancy kNobody = {0};
  po_TargetOptions topts = {.tenancy = &kNobody};
  const char **paths = calloc((size_t)argc + 1, sizeof *paths);
  size_t npaths = 0;
  bool verbose = false;
  int c;
  optind = 1;
  opterr = 0;
  if (!paths) return fprintf(stderr, "propertyoverride render: out of memory\n"), kPo_Exit_Usage;
  while ((c = getopt_long(argc, argv, "f:vh", opts, NULL)) != -1) {
    switch (c) {
      case 'f': paths[npaths++] = optarg; break;
      case 'v': verbose = true; break;
      case 'h': free(paths); fputs(kUsage, stdout); return kPo_Exit_Ok;
      case kPo_CliOpt_ClusterDomain:
      case kPo_CliOpt_IstioVersion:
      case kPo_CliOpt_IstioRootNamespace:
      case kPo_CliOpt_Mesh:
      case kPo_CliOpt_EnvoyApi:
        if (!po_Cli_TargetOption(c, optarg, "render", &topts, NULL)) return free(paths), kPo_Exit_Usage;
        break;
      default:
        free(paths);
        fprintf(stderr, "propertyoverride render: %s\n\n%s", optopt ? "an option is missing its argument" : "unknown option", kUsage);
        return kPo_Exit_Usage;
    }
  }
  if (optind < argc || !npaths) {
    free(paths);
    fprintf(stderr, "propertyoverride render: %s\n\n%s", npaths ? "unexpected argument" : "-f is required", kUsage);
    return kPo_Exit_Usage;
  }
  po_Cli_TargetDefaults(&topts); /* each mesh no flag named: its default release */
  po_Arena *a = po_Arena_New();
  po_CliReport r;
  po_CliInputs in;
  po_CompiledOverride *compiled = NULL;
  bool ok = a != NULL;
  if (ok) {
    po_CliReport_Init(&r, a);
    ok = po_CliInputs_Load(&in, paths, npaths, a, &r);
  }
  free(paths);
  if (ok) ok = (compiled = po_Arena_Malloc(a, (in.count ? in.count : 1) * sizeof *compiled)) != NULL;
  for (size_t i = 0; ok && i < in.count; i++) ok = po_Cli_CheckObject(&in.objects[i], &topts, a, &r, &compiled[i]);
  /* A lookup that failed for lack of memory reads as "no such field": no rendering then. */
  if (ok && po_Engine_OutOfMemory(a)) ok = false;
  int rc = kPo_Exit_Usage, rendered = ok ? render(&in, compiled, a, &r, stdout) : -1;
  if (rendered == 0) {
    /* Output lost (a full disk, a closed pipe) is a failure even when every object is valid. */
    bool written = po_Cli_Flush(stdout, "render", "the rendered YAML");
    /* findings, entries not read, or nothing read at all (exit 2 must say why) */
    if (r.count || r.not_read_count || po_CliReport_ExitCode(&r)) po_CliReport_Print(&r, kPo_OutputFormat_Text, verbose, stderr);
    if (written && po_Cli_Flush(stderr, "render", "the report")) rc = po_CliReport_ExitCode(&r);
  } else if (rendered == -2) {
    fprintf(stderr, "propertyoverride render: cannot emit the YAML: nested deeper than the emitter allows, or out of memory\n");
  } else {
    fprintf(stderr, "propertyoverride render: out of memory (nothing was rendered)\n");
  }
  po_Arena_Free(a);
  return rc;
}
