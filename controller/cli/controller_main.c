/* propertyoverride-controller: the `controller` subcommand as an executable of its own, so the
 * one-shot commands do not load libcurl, GnuTLS and libmicrohttpd (controller/cli/CMakeLists.txt).
 * `propertyoverride controller ARGS` execs it with argv[1] = "controller"; run directly, it takes
 * the same arguments either way. */
#include <string.h>

#include "cli.h"

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "controller")) return po_Cmd_Controller(argc - 1, argv + 1);
  /* Run by hand without the word: the arguments are the controller's own. */
  return po_Cmd_Controller(argc, argv);
}
