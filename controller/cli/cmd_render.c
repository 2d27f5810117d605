/* propertyoverride render: the mesh objects the controller would write for the PropertyOverrides
 * given, with no cluster, for review in pull requests. Consul: the same po_Consul_Plan the
 * reconciler runs, from the Consul objects given (when the inputs hold the target) or from
 * nothing (the controller then creates it). Istio: one EnvoyFilter per PropertyOverride
 * (po_Istio_EnvoyFilter), its workloadSelector from the target Service's spec.selector, which
 * must be among the inputs (a Service target says which pods, and only the Service knows). Envoy
 * Gateway: one EnvoyPatchPolicy per PropertyOverride (po_EG_EnvoyPatchPolicy), its resource
 * names from the target Gateway and the HTTPRoutes among the inputs. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"
#include "po/meshes/consul.h"
#include "po/meshes/eg.h"
#include "po/meshes/istio.h"

static const char kUsage[] =
    "usage: propertyoverride render -f FILE|DIR|- [-f ...] [--verbose] [--istio-version 1.N]\n"
    "                               [--cluster-domain D] [--istio-root-namespace NS]\n"
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
    "  --cluster-domain D    Kubernetes' DNS domain in Istio's service names (cluster.local)\n"
    "  --istio-root-namespace NS  Istio's root namespace, where Mesh targets go (istio-system)\n"
    "\n"
    "Exit status: 0 rendered; 1 some object invalid (reported on stderr as validate reports it;\n"
    "the valid ones are still rendered); 2 bad usage, unreadable input, a directory loop, no\n"
    "file read at all, or output that could not be written.\n";

typedef struct {
  po_TargetKind kind;
  const char *ns, *name;
} Target;

static int by_target(const void *x, const void *y) {
  const Target *a = x, *b = y;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  int c = strcmp(a->ns, b->ns);
  return c ? c : strcmp(a->name, b->name);
}

static const char *meta(const po_Value *v, const char *k) {
  const po_Value *x = po_Value_Get(po_Value_Get(v, "metadata"), k);
  return po_Value_Kind(x) == kPo_ValueKind_String ? po_Value_String(x, NULL) : "";
}

/* The Service a PropertyOverride of namespace `ns` targets, the last of the inputs as with
 * Consul targets; NULL when none. */
static const po_Value *find_service(const po_CliInputs *in, const char *ns, const char *name) {
  const po_Value *found = NULL;
  for (size_t i = 0; i < in->count; i++) {
    const po_CliObject *o = &in->objects[i];
    const po_Value *api = po_Value_Get(o->value, "apiVersion");
    if (strcmp(o->kind_name, "Service") || po_Value_Kind(api) != kPo_ValueKind_String || strcmp(po_Value_String(api, NULL), "v1")) continue;
    if (!strcmp(meta(o->value, "name"), name) && !strcmp(meta(o->value, "namespace"), ns)) found = o->value;
  }
  return found;
}

static void refuse_render(const po_CliObject *o, po_CliReport *r, const char *msg) {
  po_CliFinding *f = po_CliReport_Add(r, o);
  if (!f) return;
  f->kind = o->kind_name;
  f->ns = meta(o->value, "namespace");
  f->name = meta(o->value, "name");
  f->code = "target";
  f->pos = o->pos;
  f->message = msg;
  r->valid--, r->invalid++;
}

typedef struct {
  const char *ns, *name;
  json_object *obj;
} Filter;

static int by_filter(const void *x, const void *y) {
  const Filter *a = x, *b = y;
  int c = strcmp(a->ns, b->ns);
  return c ? c : strcmp(a->name, b->name);
}

/* The EnvoyFilters of the accepted Istio overrides, appended to objs in namespace/name order.
 * false when out of memory. */
static bool render_istio(const po_CliInputs *in, po_CompiledOverride *compiled, po_Arena *a, po_CliReport *r,
                         json_object **objs, size_t *no) {
  Filter *fs = po_Arena_Malloc(a, (in->count ? in->count : 1) * sizeof *fs);
  if (!fs) return false;
  size_t nf = 0;
  bool ok = true;
  for (size_t i = 0; i < in->count && ok; i++) {
    po_CompiledOverride *c = &compiled[i];
    if (!c->accepted || po_TargetKind_Mesh(c->target_kind) != kPo_Mesh_Istio) continue;
    json_object *sel = NULL;
    if (c->target_kind == kPo_TargetService) {
      const po_Value *svc = find_service(in, c->ns, c->target_name);
      if (!svc) {
        refuse_render(&in->objects[i], r,
                      po_Arena_Printf(a, "render needs the target Service '%s%s%s' among the inputs: its spec.selector "
                                         "becomes the EnvoyFilter's workloadSelector (add it with -f, e.g. the output "
                                         "of kubectl get service %s -o yaml)",
                                      c->ns, *c->ns ? "/" : "", c->target_name, c->target_name));
        continue;
      }
      const po_Value *sv = po_Value_Get(po_Value_Get(svc, "spec"), "selector");
      if (sv && !(sel = po_Value_ToJsonC(sv))) {
        ok = false;
        break;
      }
    }
    const char *why = NULL;
    json_object *ef = po_Istio_EnvoyFilter(c, sel, a, &why);
    json_object_put(sel);
    if (!ef && !why) ok = false;
    else if (!ef) refuse_render(&in->objects[i], r, po_Arena_Printf(a, "Service '%s': %s", c->target_name, why));
    else fs[nf++] = (Filter){po_Istio_FilterNamespace(c), po_Istio_FilterName(c, a), ef};
  }
  /* Out of memory: nothing of this mesh is handed over (the caller prints nothing then). */
  if (!ok) {
    for (size_t k = 0; k < nf; k++) json_object_put(fs[k].obj);
    return false;
  }
  qsort(fs, nf, sizeof *fs, by_filter);
  for (size_t k = 0; k < nf; k++) objs[(*no)++] = fs[k].obj;
  return true;
}

static bool is_gateway_api(const po_CliObject *o, const char *kind) {
  const po_Value *api = po_Value_Get(o->value, "apiVersion");
  const char *s = po_Value_Kind(api) == kPo_ValueKind_String ? po_Value_String(api, NULL) : "";
  return !strcmp(o->kind_name, kind) && !strncmp(s, "gateway.networking.k8s.io/", 26);
}

/* The EnvoyPatchPolicies of the accepted Envoy Gateway overrides, appended to objs in
 * namespace/name order. false when out of memory. */
static bool render_eg(const po_CliInputs *in, po_CompiledOverride *compiled, po_Arena *a, po_CliReport *r,
                      json_object **objs, size_t *no) {
  bool any = false;
  for (size_t i = 0; i < in->count && !any; i++) {
    any = compiled[i].accepted && po_TargetKind_Mesh(compiled[i].target_kind) == kPo_Mesh_EnvoyGateway;
  }
  if (!any) return true;
  size_t cap = in->count ? in->count : 1, nroutes = 0, nf = 0;
  json_object **routes = po_Arena_Malloc(a, cap * sizeof *routes);
  Filter *fs = po_Arena_Malloc(a, cap * sizeof *fs);
  if (!routes || !fs) return false;
  bool ok = true;
  for (size_t i = 0; i < in->count && ok; i++) {
    if (is_gateway_api(&in->objects[i], "HTTPRoute")) ok = (routes[nroutes++] = po_Value_ToJsonC(in->objects[i].value)) != NULL;
  }
  for (size_t i = 0; i < in->count && ok; i++) {
    po_CompiledOverride *c = &compiled[i];
    if (!c->accepted || po_TargetKind_Mesh(c->target_kind) != kPo_Mesh_EnvoyGateway) continue;
    /* The last Gateway of that namespace and name, as with the other targets. */
    const po_Value *gv = NULL;
    for (size_t k = 0; k < in->count; k++) {
      const po_CliObject *o = &in->objects[k];
      if (is_gateway_api(o, "Gateway") && !strcmp(meta(o->value, "name"), c->target_name) &&
          !strcmp(meta(o->value, "namespace"), c->ns)) gv = o->value;
    }
    if (!gv) {
      refuse_render(&in->objects[i], r,
                    po_Arena_Printf(a, "render needs the target Gateway '%s%s%s' among the inputs, and the HTTPRoutes "
                                       "attached to it: its listeners name the EnvoyPatchPolicy's listeners and route "
                                       "configurations, their rules its clusters (add them with -f, e.g. the output of "
                                       "kubectl get gateway %s -o yaml and kubectl get httproutes -A -o yaml)",
                                    c->ns, *c->ns ? "/" : "", c->target_name, c->target_name));
      continue;
    }
    json_object *gw = po_Value_ToJsonC(gv);
    if (!gw) {
      ok = false;
      break;
    }
    po_EGTopology t = {.gateway = gw, .routes = (const json_object *const *)routes, .route_count = nroutes};
    const char *why = NULL;
    json_object *epp = po_EG_EnvoyPatchPolicy(c, &t, a, &why, NULL);
    json_object_put(gw);
    if (!epp && !why) ok = false;
    else if (!epp) refuse_render(&in->objects[i], r, po_Arena_Printf(a, "Gateway '%s': %s", c->target_name, why));
    else fs[nf++] = (Filter){c->ns, po_EG_PolicyName(c, a), epp};
  }
  for (size_t k = 0; k < nroutes; k++) json_object_put(routes[k]);
  if (!ok) {
    for (size_t k = 0; k < nf; k++) json_object_put(fs[k].obj);
    return false;
  }
  qsort(fs, nf, sizeof *fs, by_filter);
  for (size_t k = 0; k < nf; k++) objs[(*no)++] = fs[k].obj;
  return true;
}

static int render(const po_CliInputs *in, po_CompiledOverride *compiled, po_Arena *a, po_CliReport *r, FILE *out) {
  size_t n = in->count, nt = 0;
  Target *targets = po_Arena_Malloc(a, (n ? n : 1) * sizeof *targets);
  json_object **objs = po_Arena_Malloc(a, (2 * n + 1) * sizeof *objs);
  po_ConsulEntry *entries = po_Arena_Malloc(a, (n ? n : 1) * sizeof *entries);
  if (!targets || !objs || !entries) return -1;
  for (size_t i = 0; i < n; i++) {
    if (!compiled[i].accepted || po_TargetKind_Mesh(compiled[i].target_kind) != kPo_Mesh_Consul) continue;
    Target t = {compiled[i].target_kind, compiled[i].ns, compiled[i].target_name};
    bool seen = false;
    for (size_t k = 0; k < nt && !seen; k++) seen = !by_target(&t, &targets[k]);
    if (!seen) targets[nt++] = t;
  }
  qsort(targets, nt, sizeof *targets, by_target);
  size_t no = 0;
  int rc = 0;
  for (size_t t = 0; t < nt && rc == 0; t++) {
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
      po_CompiledOverride *c = &compiled[i];
      if (!c->accepted || po_TargetKind_Mesh(c->target_kind) != kPo_Mesh_Consul || by_target(&(Target){c->target_kind, c->ns, c->target_name}, &targets[t])) continue;
      if (!c->generation) c->generation = 1;
      entries[ne] = (po_ConsulEntry){c->name, "", c->generation, po_Consul_Arguments(c, "", ""), c->priority, c->required, NULL};
      if (!entries[ne++].arguments) rc = -1; /* never a target rendered without one of its entries */
    }
    /* The last matching Consul object of the inputs is the current state, as a later
     * `kubectl apply` of the same name would leave it. */
    json_object *current = NULL;
    po_ObjKind want = targets[t].kind == kPo_TargetProxyDefaults ? kPo_ObjProxyDefaults : kPo_ObjServiceDefaults;
    for (size_t i = 0; i < n; i++) {
      const po_CliObject *o = &in->objects[i];
      if (o->kind != want || strcmp(meta(o->value, "name"), targets[t].name) || strcmp(meta(o->value, "namespace"), targets[t].ns)) continue;
      json_object_put(current);
      /* NULL here is out of memory: taken for "absent", the target would be rendered anew,
       * without the fields and extensions of others it has. */
      if (!(current = po_Value_ToJsonC(o->value))) rc = -1;
    }
    po_ConsulPlan plan = {.out_of_memory = true};
    if (rc == 0) plan = po_Consul_Plan(current, targets[t].kind, targets[t].ns, targets[t].name, NULL, 0, entries, ne);
    json_object_put(current);
    for (size_t e = 0; e < ne; e++) json_object_put(entries[e].arguments);
    /* A plan that ran out of memory has no object: leaving the target out would print a
     * rendering without it, which a pipeline would apply as if it were whole. */
    if (plan.out_of_memory) rc = -1;
    else if (plan.object) objs[no++] = plan.object;
  }
  if (rc == 0 && !render_istio(in, compiled, a, r, objs, &no)) rc = -1;
  if (rc == 0 && !render_eg(in, compiled, a, r, objs, &no)) rc = -1;
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
                                       {"cluster-domain", required_argument, 0, kPo_OptClusterDomain},
                                       {"istio-version", required_argument, 0, kPo_OptIstioVersion},
                                       {"istio-root-namespace", required_argument, 0, kPo_OptIstioRootNamespace},
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
  if (!paths) return fprintf(stderr, "propertyoverride render: out of memory\n"), kPo_ExitUsage;
  while ((c = getopt_long(argc, argv, "f:vh", opts, NULL)) != -1) {
    switch (c) {
      case 'f': paths[npaths++] = optarg; break;
      case 'v': verbose = true; break;
      case 'h': free(paths); fputs(kUsage, stdout); return kPo_ExitOk;
      case kPo_OptClusterDomain:
      case kPo_OptIstioVersion:
      case kPo_OptIstioRootNamespace:
        if (!po_Cli_TargetOption(c, optarg, "render", &topts, NULL)) return free(paths), kPo_ExitUsage;
        break;
      default:
        free(paths);
        fprintf(stderr, "propertyoverride render: %s\n\n%s", optopt ? "an option is missing its argument" : "unknown option", kUsage);
        return kPo_ExitUsage;
    }
  }
  if (optind < argc || !npaths) {
    free(paths);
    fprintf(stderr, "propertyoverride render: %s\n\n%s", npaths ? "unexpected argument" : "-f is required", kUsage);
    return kPo_ExitUsage;
  }
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
  if (ok && po_Engine_OutOfMemory()) ok = false;
  int rc = kPo_ExitUsage, rendered = ok ? render(&in, compiled, a, &r, stdout) : -1;
  if (rendered == 0) {
    /* Output lost (a full disk, a closed pipe) is a failure even when every object is valid. */
    bool written = po_Cli_Flush(stdout, "render", "the rendered YAML");
    /* findings, entries not read, or nothing read at all (exit 2 must say why) */
    if (r.count || r.not_read_count || po_CliReport_ExitCode(&r)) po_CliReport_Print(&r, kPo_OutputText, verbose, stderr);
    if (written && po_Cli_Flush(stderr, "render", "the report")) rc = po_CliReport_ExitCode(&r);
  } else if (rendered == -2) {
    fprintf(stderr, "propertyoverride render: cannot emit the YAML: nested deeper than the emitter allows, or out of memory\n");
  } else {
    fprintf(stderr, "propertyoverride render: out of memory (nothing was rendered)\n");
  }
  po_Arena_Free(a);
  return rc;
}
