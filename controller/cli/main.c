/* propertyoverride: the command. Subcommands live in cmd_*.c. Installed also as
 * kubectl-propertyoverride (a kubectl plugin: `kubectl propertyoverride ...` runs it with the
 * remaining words), which behaves the same; only the usage names it so. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef PO_VERSION
#define PO_VERSION "dev"
#endif

static const char kUsage[] =
    "usage: %s COMMAND [OPTIONS]\n"
    "\n"
    "Consul builtin/property-override patches for Envoy, validated against the Envoy v3 schema.\n"
    "\n"
    "Commands:\n"
    "  validate   check manifests (-f FILE|DIR|-) as the admission webhook does, for CI; or\n"
    "             Consul envoyExtensions arguments (--consul-arguments)\n"
    "  render     print the ServiceDefaults/ProxyDefaults the controller would write\n"
    "  explain    describe a point of the Envoy schema: cluster[/path/to/field]\n"
    "  patch      apply patches to one Envoy message (Consul's PatchStruct)\n"
    "  controller run the controller and its admission webhook against a Kubernetes API\n"
    "  completion print a bash or zsh completion script\n"
    "  version    print the version and the Envoy API snapshot it validates against\n"
    "\n"
    "Run `%s COMMAND --help` for a command's options.\n";

/* "propertyoverride", or "kubectl propertyoverride" when run as the kubectl plugin. */
static const char *self_name(const char *argv0) {
  const char *base = strrchr(argv0 ? argv0 : "", '/');
  base = base ? base + 1 : (argv0 ? argv0 : "");
  return strcmp(base, "kubectl-propertyoverride") == 0 ? "kubectl propertyoverride" : "propertyoverride";
}

int main(int argc, char **argv) {
  const char *self = self_name(argc > 0 ? argv[0] : NULL);
  if (argc < 2) {
    fprintf(stderr, kUsage, self, self);
    return kPo_ExitUsage;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "patch")) return po_Cmd_Patch(argc - 1, argv + 1);
  if (!strcmp(cmd, "validate")) return po_Cmd_Validate(argc - 1, argv + 1);
  if (!strcmp(cmd, "controller")) return po_Cmd_Controller(argc - 1, argv + 1);
  if (!strcmp(cmd, "render")) return po_Cmd_Render(argc - 1, argv + 1);
  if (!strcmp(cmd, "explain")) return po_Cmd_Explain(argc - 1, argv + 1);
  if (!strcmp(cmd, "completion")) return po_Cmd_Completion(argc - 1, argv + 1);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    /* The snapshot is what "valid" means here: a field newer Envoy has is unknown to it. */
    printf("propertyoverride %s\nEnvoy API: %s; the package records no Envoy API revision\n", PO_VERSION,
           po_EnvoyApi_Snapshot());
    return kPo_ExitOk;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    printf(kUsage, self, self);
    return kPo_ExitOk;
  }
  fprintf(stderr, "%s: unknown command '%s'\n\n", self, cmd);
  fprintf(stderr, kUsage, self, self);
  return kPo_ExitUsage;
}
