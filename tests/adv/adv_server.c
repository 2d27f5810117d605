/* ADV (adversarial tests, branch adv-admit): the real webhook server (plain HTTP on loopback) in
 * this process for the Python tests in tests/adv. Prints its port on stdout; each line on stdin is a command:
 *   s  -> prints "inflight=N peak=N refusals=N rss_kb=N hwm_kb=N"
 *   EOF stops it.
 * adv_server BUDGET_MiB [THREADS [HEAP_MiB]]: HEAP_MiB of 200-byte blocks, every other one freed,
 * stand in for the controller's steady state (informer caches: 61 MB at 10,000 PropertyOverrides). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/webhook/server.h"

static atomic_size_t g_inflight, g_peak, g_refusals;

static void obs(void *ctx, size_t in_flight, bool refusal) {
  (void)ctx;
  if (refusal) { g_refusals++; return; }
  g_inflight = in_flight;
  if (in_flight > g_peak) g_peak = in_flight;
}

static unsigned long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  unsigned long kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, key, strlen(key))) kb = strtoul(line + strlen(key), NULL, 10);
  if (f) fclose(f);
  return kb;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 96;
  unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 8;
  size_t heap = argc > 3 ? strtoul(argv[3], NULL, 10) << 20 : 0;
  size_t nblocks = heap / 200;
  void **blocks = nblocks ? calloc(nblocks, sizeof *blocks) : NULL;
  for (size_t i = 0; i < nblocks; i++) blocks[i] = malloc(200);
  for (size_t i = 0; i < nblocks; i += 2) free(blocks[i]), blocks[i] = NULL;
  po_CtlStatus st;
  po_WebhookServer *s = po_WebhookServer_Start(
      &(po_WebhookOptions){.address = "127.0.0.1:0", .threads = threads, .memory_budget = mib << 20,
                           .observe_budget = obs},
      &st);
  if (!s) { fprintf(stderr, "start: %s\n", st.message); return 1; }
  printf("%u\n", po_WebhookServer_Port(s));
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (line[0] == 's') {
      printf("inflight=%zu peak=%zu refusals=%zu rss_kb=%lu hwm_kb=%lu\n", (size_t)g_inflight, (size_t)g_peak,
             (size_t)g_refusals, status_kb("VmRSS:"), status_kb("VmHWM:"));
      fflush(stdout);
    }
  }
  po_WebhookServer_Stop(s);
  return 0;
}
