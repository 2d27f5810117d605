/* One reconcile of a ServiceDefaults of K PropertyOverrides (argv[1], default 50) right after one
 * more was added to it, the case each create on the real server is (issue 26: about one reconcile
 * per PropertyOverride created): every PropertyOverride sets the same field of every outbound
 * cluster, so all overlap, as bench_controller.sh's do by default; with `distinct`, each one's
 * patch is for an upstream of its own, so none overlap (`--patches distinct`). Not a test:
 * measured by callgrind, `measured` alone (docs/benchmarks.md):
 *
 *   valgrind --tool=callgrind --toggle-collect=measured build/tests/reconcile/bench_reconcile_one 50 [consul-only] [distinct]
 *
 * consul-only: the IO table without EnvoyFilters and EnvoyPatchPolicies, as the app's when
 * neither Istio nor Envoy Gateway is enabled. The fixture's own work (tests/reconcile/fake_api.c,
 * the f_* callbacks) is counted in the total: subtract it for the reconciler's.
 *
 * It also prints the minor page faults (getrusage) of that reconcile and of 100 more of the same
 * settled target after it (nothing changed: each still loads every PropertyOverride's item), the
 * cost issue 26's profile showed under the per-reconcile item table (meaningless under valgrind;
 * run it bare, with LD_PRELOAD=libjemalloc.so.2 for the controller's allocator). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fake_api.h"

static long minor_faults(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}

static bool g_distinct; /* each PropertyOverride's patch for one upstream of its own: none overlap */

static void apply(Fake *fx, int i, int gen, int value) {
  char name[32], patches[512], services[64] = "";
  snprintf(name, sizeof name, "po-%03d", i);
  if (g_distinct) snprintf(services, sizeof services, ",\"services\":[{\"name\":\"up-%03d\"}]", i);
  snprintf(patches, sizeof patches,
           "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"%s},"
           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]",
           services, value);
  apply_override(fx, name, gen, "web", patches);
}

/* the one reconcile measured (callgrind --toggle-collect=measured) */
__attribute__((noinline)) po_ReconcileResult measured(Fake *fx);
po_ReconcileResult measured(Fake *fx) { return reconcile_key(fx, "ServiceDefaults/default/web"); }

int main(int argc, char **argv) {
  int k = argc > 1 ? atoi(argv[1]) : 50;
  if (k < 2 || k > 100) {
    fprintf(stderr, "K: 2 to 100 PropertyOverrides (a target holds at most 100), not '%s'\n", argv[1]);
    return 2;
  }
  Fake *fx = fake_new();
  if (!fx) return 1;
  for (int a = 2; a < argc; a++) {
    if (!strcmp(argv[a], "consul-only")) {
      fx->io.get_filter = NULL, fx->io.write_filter = NULL, fx->io.get_policy = NULL, fx->io.write_policy = NULL;
    } else if (!strcmp(argv[a], "distinct")) {
      g_distinct = true;
    }
  }
  for (int i = 0; i < k - 1; i++) apply(fx, i, 1, 1 + i % 90);
  for (int pass = 0; pass < 3; pass++) (void)reconcile_key(fx, "ServiceDefaults/default/web");
  apply(fx, k - 1, 1, 7);
  int writes = fx->target_writes;
  long f0 = minor_faults();
  po_ReconcileResult r = measured(fx);
  long f1 = minor_faults();
  printf("K=%d: ok=%d, target writes %d, statuses written %d, overlap checks %zu\n", k, r.ok,
         fx->target_writes - writes, r.statuses_written, r.overlap_checks);
  for (int i = 0; i < 100; i++) (void)reconcile_key(fx, "ServiceDefaults/default/web");
  printf("minor page faults: %ld in that reconcile, %ld in 100 more of the settled target\n", f1 - f0,
         minor_faults() - f1);
  fake_free(fx);
  return r.ok ? 0 : 1;
}
