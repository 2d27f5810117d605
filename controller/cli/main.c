/* propertyoverride: the command. Subcommands live in cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef PO_VERSION
#define PO_VERSION "dev"
#endif

static const char kUsage[] =
    "usage: propertyoverride COMMAND [OPTIONS]\n"
    "\n"
    "Consul builtin/property-override patches for Envoy, validated against the Envoy v3 schema.\n"
    "\n"
    "Commands:\n"
    "  patch      apply patches to one Envoy message (Consul's PatchStruct)\n"
    "  validate   validate envoyExtensions arguments (Consul's Constructor, and Envoy's rules)\n"
    "  controller run the controller and its admission webhook against a Kubernetes API\n"
    "  version    print the version\n"
    "\n"
    "Run `propertyoverride COMMAND --help` for a command's options.\n";

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(kUsage, stderr);
    return kPo_ExitUsage;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "patch")) return po_Cmd_Patch(argc - 1, argv + 1);
  if (!strcmp(cmd, "validate")) return po_Cmd_Validate(argc - 1, argv + 1);
  if (!strcmp(cmd, "controller")) return po_Cmd_Controller(argc - 1, argv + 1);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("propertyoverride %s\n", PO_VERSION);
    return kPo_ExitOk;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    fputs(kUsage, stdout);
    return kPo_ExitOk;
  }
  fprintf(stderr, "propertyoverride: unknown command '%s'\n\n%s", cmd, kUsage);
  return kPo_ExitUsage;
}
