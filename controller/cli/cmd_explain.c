/* propertyoverride explain: what a patch path can name, from the engine's schema walk
 * (po_Explain); this file only prints. */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"

static const char kUsage[] =
    "usage: propertyoverride explain RESOURCE[/path/to/field] [--mesh MESH[@RELEASE]] [--envoy-api VERSION]\n"
    "\n"
    "Describes a point of the Envoy v3 schema as a patch path reaches it. RESOURCE is a\n"
    "resource type (cluster, cluster-load-assignment, route, listener) or an Envoy message's\n"
    "full name (envoy.config.cluster.v3.OutlierDetection); the path is what a patch's `path`\n"
    "would hold. Printed: the field the path names (type in Consul's words, oneof, repeated or\n"
    "map, Envoy's validation rules, deprecation, and whether and how a patch can set it), then\n"
    "the fields of the message it is, one per line.\n"
    "\n"
    "  --mesh MESH[@RELEASE] describe the Envoy API this mesh release is built on (consul@1.22,\n"
    "                        istio@1.30, envoy-gateway@1.9; `propertyoverride version` lists\n"
    "                        them); default: go-control-plane envoy v1.32.4, Consul's\n"
    "  --envoy-api VERSION   an embedded Envoy API snapshot instead (v1.32.4, v1.37.0, v1.40.0)\n"
    "\n"
    "Exit status: 0 described; 1 the path names no field (Consul's message, with a did-you-mean\n"
    "when one is close); 2 bad usage.\n";

static void field_line(const po_ExplainField *f, FILE *out) {
  fprintf(out, "  %-42s %s", f->name, f->type);
  if (f->detail && strncmp(f->detail, "enum ", 5) == 0) {
    /* "enum <FullName>: A, B, ...": the name only here; explain on the field lists the values. */
    const char *colon = strchr(f->detail, ':');
    fprintf(out, " (%.*s)", colon ? (int)(colon - f->detail - 5) : (int)strlen(f->detail + 5), f->detail + 5);
  } else if (f->detail) {
    fprintf(out, " (%s)", f->detail);
  }
  if (f->oneof) fprintf(out, "  [oneof %s]", f->oneof);
  if (f->rules) fprintf(out, "  [%s]", f->rules);
  if (f->deprecated) fputs("  [deprecated]", out);
  if (!f->settable) fputs(f->traversable ? "  [path only]" : "  [cannot be set]", out);
  fputc('\n', out);
}

static void field_detail(const po_ExplainField *f, FILE *out) {
  fprintf(out, "FIELD:      %s (%s, field %d, JSON name %s)\n", f->name, f->parent, f->number, f->json_name);
  fprintf(out, "TYPE:       %s", f->type);
  if (f->detail) fprintf(out, " (%s)", f->detail);
  fputc('\n', out);
  if (f->oneof) fprintf(out, "ONEOF:      %s (setting it clears the other members)\n", f->oneof);
  fprintf(out, "RULES:      %s\n", f->rules ? f->rules : "none");
  if (f->deprecated) fputs("DEPRECATED: yes (patches that use it get a warning)\n", out);
  fprintf(out, "PATCH:      %s: %s\n", f->settable ? "add can set it" : "add cannot set it", f->how);
  fputs("            remove clears it\n", out);
}

/* The flags and the one query; -1 to go on, else the exit status (help, or a usage error). */
static int parse(int argc, char **argv, const char **query, po_CliApiChoice *api) {
  static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                       {"mesh", required_argument, 0, kPo_CliOpt_Mesh},
                                       {"envoy-api", required_argument, 0, kPo_CliOpt_EnvoyApi},
                                       {0, 0, 0, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
      case 'h': fputs(kUsage, stdout); return kPo_Exit_Ok;
      case kPo_CliOpt_Mesh:
      case kPo_CliOpt_EnvoyApi:
        if (!po_Cli_ApiOption(c, optarg, "explain", api)) return kPo_Exit_Usage;
        break;
      default:
        fprintf(stderr, "propertyoverride explain: %s\n\n%s", optopt ? "an option is missing its argument" : "one argument expected",
                kUsage);
        return kPo_Exit_Usage;
    }
  }
  if (argc - optind != 1) {
    fprintf(stderr, "propertyoverride explain: %s\n\n%s",
            argc - optind < 1 ? "a resource type or message is required" : "one argument expected", kUsage);
    return kPo_Exit_Usage;
  }
  *query = argv[optind];
  return -1;
}

int po_Cmd_Explain(int argc, char **argv) {
  const char *query = NULL;
  po_CliApiChoice api = {0};
  int rc = parse(argc, argv, &query, &api);
  if (rc >= 0) return rc;
  po_Arena *a = po_Arena_New();
  po_Status *st = a ? po_Arena_Malloc(a, sizeof *st) : NULL; /* 8 KiB: not on the stack, nor static */
  if (!st) return po_Arena_Free(a), fprintf(stderr, "propertyoverride explain: out of memory\n"), kPo_Exit_Usage;
  po_Status_Clear(st);
  po_Explanation e;
  rc = kPo_Exit_Ok;
  const po_EnvoyApi *chosen = po_CliApiChoice_Api(&api);
  /* an unknown field's hint names the release --mesh chose, as validate's does (adv-24: "the
   * Envoy API used here"), and which releases accept the field: --mesh's mesh's, else every mesh's */
  po_ExplainOptions eo = {.api = chosen,
                          .releases = api.mesh ? po_Mesh_ApiReleases(api.mesh->mesh) : po_Mesh_AllApiReleases()};
  if (api.release && !api.api) {
    eo.judged_for = po_Arena_Printf(a, "%s@%s", po_Mesh_Name(api.mesh->mesh), api.release->release);
  }
  bool explained = po_Explain(&eo, query, a, &e, st);
  /* A lookup that failed for lack of memory reads as "no such field": no verdict then. */
  if (po_Engine_OutOfMemory(a)) {
    fprintf(stderr, "propertyoverride explain: out of memory\n");
    rc = kPo_Exit_Usage;
  } else if (!explained) {
    fprintf(stderr, "propertyoverride explain: %s\n", st->message);
    rc = st->code == kPo_Status_NoMemory || st->code == kPo_Status_Internal ? kPo_Exit_Usage : kPo_Exit_Invalid;
  } else {
    printf("PATH:       %s\n", e.path);
    if (e.resource_type) printf("RESOURCE:   %s (%s)\n", e.resource_type, e.root);
    printf("ENVOY API:  %s\n", po_EnvoyApi_Name(chosen));
    if (e.field) field_detail(e.field, stdout);
    if (e.message) {
      printf("%sFIELDS of %s:\n", e.field ? "\n" : "", e.message);
      for (size_t i = 0; i < e.field_count; i++) field_line(&e.fields[i], stdout);
    }
  }
  po_Arena_Free(a);
  return rc;
}
