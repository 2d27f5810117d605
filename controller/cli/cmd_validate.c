/* propertyoverride validate --consul-arguments: Consul's Constructor on an arguments file.
 * (Issue 5 adds `validate -f` for manifests; both share the engine's one validation.) */
#include <getopt.h>
#include <string.h>

#include "cli.h"

static const char kUsage[] =
    "usage: propertyoverride validate --consul-arguments FILE [--extension-name NAME]\n"
    "\n"
    "Validates the `arguments` object of a Consul envoyExtensions entry exactly as Consul's\n"
    "builtin/property-override Constructor does (every patch dry-run against the Envoy v3\n"
    "schema), and further checks Envoy's own field rules on the values patches set.\n"
    "\n"
    "  --consul-arguments FILE  JSON or YAML; - for stdin\n"
    "  --extension-name NAME    the entry's name (default builtin/property-override)\n"
    "\n"
    "Exit status: 0 valid; 1 invalid (every error on stderr, aggregated as Consul formats them,\n"
    "then hints); 2 bad usage or unreadable input. Warnings (deprecated Envoy fields) go to\n"
    "stderr and do not fail validation.\n";

static int usage_error(const char *msg) {
  fprintf(stderr, "propertyoverride validate: %s\n\n%s", msg, kUsage);
  return kPo_ExitUsage;
}

int po_Cmd_Validate(int argc, char **argv) {
  static const struct option opts[] = {{"consul-arguments", required_argument, 0, 'c'},
                                       {"extension-name", required_argument, 0, 'n'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  const char *file = NULL, *name = NULL;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
      case 'c': file = optarg; break;
      case 'n': name = optarg; break;
      case 'h': fputs(kUsage, stdout); return kPo_ExitOk;
      default: return usage_error(optopt ? "an option is missing its argument" : "unknown option");
    }
  }
  if (optind < argc) return usage_error("unexpected argument");
  if (!file) return usage_error("--consul-arguments is required");

  po_Arena *a = po_Arena_New();
  if (!a) return fprintf(stderr, "propertyoverride validate: out of memory\n"), kPo_ExitUsage;
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  char *text = po_Cli_ReadFile(file, a, &len, &st);
  po_Value *args = text ? po_Cli_ParseDocument(file, text, len, a, &st) : NULL;
  int rc = kPo_ExitUsage;
  if (!args) {
    fprintf(stderr, "propertyoverride validate: %s\n", st.message);
  } else {
    po_Diagnostics *d = po_Diagnostics_New(a);
    po_CompileOptions co = po_CompileOptions_Default();
    po_Override *o = po_Constructor(name, args, &co, a, d);
    for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
      const po_Diagnostic *x = po_Diagnostics_At(d, i);
      if (x->severity == kPo_SeverityWarning) fprintf(stderr, "warning: Patches[%d]: %s\n", x->patch_index, x->message);
    }
    if (o) {
      rc = kPo_ExitOk;
    } else {
      const char *text_out = po_Diagnostics_ConsulText(d, true, a);
      fputs(text_out ? text_out : "invalid\n", stderr);
      rc = kPo_ExitInvalid;
    }
  }
  po_Arena_Free(a);
  return rc;
}
