/* propertyoverride-controller: the `controller` subcommand as an executable of its own, so the
 * one-shot commands do not load libcurl, GnuTLS and libmicrohttpd (controller/cli/CMakeLists.txt).
 * `propertyoverride controller ARGS` execs it with argv[1] = "controller"; run directly, it takes
 * the same arguments either way. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* jemalloc (the Release build's allocator, cmake/allocator.cmake) reads this at its start: two
 * arenas, for the reason glibc gets two below. Its default, four per core, gave each of the 8
 * workers an arena of its own that kept what that worker's reconciles had freed: with a
 * tenant's 700 HTTPRoutes (tests/e2e/t_eg_flood.sh) the peak RSS rose from 121 MiB with 4
 * workers to 174 MiB with 8, and is 101 MiB with 8 on two arenas. MALLOC_CONF in the
 * environment still decides when set (jemalloc reads it after this). Unused under glibc. A
 * constant: jemalloc only reads it, so it is no writable process state. */
const char *const malloc_conf = "narenas:2";

int main(int argc, char **argv) {
  /* glibc gives each thread that allocates its own arena (up to 8 per core), and keeps what is
   * freed in it: the informers, workers and webhook threads each held the high-water mark of what
   * they ever parsed. With 700 HTTPRoutes of a tenant the process's RSS reached 235 MiB for about
   * 60 MiB of live heap (tests/e2e/t_eg_flood.sh); two arenas keep it near the live heap (134
   * MiB then, before the routes' copies were cut). MALLOC_ARENA_MAX in the environment still
   * decides when set. */
  if (!getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, 2);
  if (argc > 1 && !strcmp(argv[1], "controller")) return po_Cmd_Controller(argc - 1, argv + 1);
  /* Run by hand without the word: the arguments are the controller's own. */
  return po_Cmd_Controller(argc, argv);
}
