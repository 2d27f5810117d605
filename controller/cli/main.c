/* propertyoverride: the command. Subcommands live in cmd_*.c. Installed also as
 * kubectl-propertyoverride (a kubectl plugin: `kubectl propertyoverride ...` runs it with the
 * remaining words), which behaves the same; only the usage names it so. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gitops.h"

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
    "  preview    show what overrides would change in a proxy's Envoy /config_dump\n"
    "  upgrade-check  list what breaks or changes meaning in manifests when the mesh is upgraded\n"
    "  controller run the controller and its admission webhook against a Kubernetes API\n"
    "  completion print a bash or zsh completion script\n"
    "  version    print the version, the embedded Envoy API snapshots and the mesh releases\n"
    "             each judges\n"
    "\n"
    "Run `%s COMMAND --help` for a command's options.\n";

/* "propertyoverride", or "kubectl propertyoverride" when run as the kubectl plugin. */
static const char *self_name(const char *argv0) {
  const char *base = strrchr(argv0 ? argv0 : "", '/');
  base = base ? base + 1 : (argv0 ? argv0 : "");
  return strcmp(base, "kubectl-propertyoverride") == 0 ? "kubectl propertyoverride" : "propertyoverride";
}

/* `controller` runs propertyoverride-controller, the executable beside this one (the real file,
 * through /proc/self/exe, so the kubectl plugin's symlink and any PATH lead to it): the one-shot
 * commands then load none of the controller's libraries (controller/cli/CMakeLists.txt). exec
 * keeps the process id, so signals and the exit status are the controller's own. */
static int run_controller(const char *self, char **argv) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  static const char kHelper[] = "propertyoverride-controller";
  int err = errno;
  if (n > 0) {
    path[n] = '\0';
    err = ENAMETOOLONG;
    char *slash = strrchr(path, '/');
    if (slash && (size_t)(slash + 1 - path) + sizeof kHelper <= sizeof path) {
      memcpy(slash + 1, kHelper, sizeof kHelper);
      argv[0] = path;
      execv(path, argv);
      err = errno;
    }
  }
  fprintf(stderr, "%s controller: cannot run %s: %s (it is installed beside %s; reinstall both)\n", self,
          n > 0 ? path : kHelper, strerror(err), self);
  return kPo_Exit_Usage;
}

int main(int argc, char **argv) {
  const char *self = self_name(argc > 0 ? argv[0] : NULL);
  if (argc < 2) {
    fprintf(stderr, kUsage, self, self);
    return kPo_Exit_Usage;
  }
  const char *cmd = argv[1];
  /* One thread, one command: the schema's files are loaded as the command needs them (about a
   * fifth of them for a Cluster patch), not all (docs/benchmarks.md, "CLI"). */
  (void)po_EnvoyApi_LoadOnDemand(); /* nothing has loaded the schema yet: cannot be refused */
  if (!strcmp(cmd, "patch")) return po_Cmd_Patch(argc - 1, argv + 1);
  if (!strcmp(cmd, "validate")) return po_Cmd_Validate(argc - 1, argv + 1);
  if (!strcmp(cmd, "controller")) return run_controller(self, argv);
  if (!strcmp(cmd, "render")) return po_Cmd_Render(argc - 1, argv + 1);
  if (!strcmp(cmd, "explain")) return po_Cmd_Explain(argc - 1, argv + 1);
  if (!strcmp(cmd, "preview")) return po_Cmd_Preview(argc - 1, argv + 1);
  if (!strcmp(cmd, "upgrade-check")) return po_Cmd_UpgradeCheck(argc - 1, argv + 1);
  if (!strcmp(cmd, "completion")) return po_Cmd_Completion(argc - 1, argv + 1);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    /* The snapshot is what "valid" means here: a field newer Envoy has is unknown to it. */
    printf("propertyoverride %s\nEnvoy API: %s; the package records no Envoy API revision\n", PO_VERSION,
           po_EnvoyApi_Snapshot());
    /* which snapshot judges which mesh release (--mesh MESH@RELEASE, --envoy-api VERSION) */
    po_Cli_PrintEnvoyApis(stdout);
    return po_Cli_Flush(stdout, "version", "the version") ? kPo_Exit_Ok : kPo_Exit_Usage;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    printf(kUsage, self, self);
    return kPo_Exit_Ok;
  }
  fprintf(stderr, "%s: unknown command '%s'\n\n", self, cmd);
  fprintf(stderr, kUsage, self, self);
  return kPo_Exit_Usage;
}
