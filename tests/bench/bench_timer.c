/* Timing and statistics for the benchmarks. Best-of-N is the number to compare across runs
 * (least disturbed by other work on the machine); the median says how noisy the run was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

uint64_t po_Bench_Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void po_Bench_Stats_Add(po_Bench_Stats *s, double ns) {
  if (s->count < (int)(sizeof s->samples / sizeof s->samples[0])) s->samples[s->count++] = ns;
}

double po_Bench_Stats_Best(const po_Bench_Stats *s) {
  double best = s->count ? s->samples[0] : 0;
  for (int i = 1; i < s->count; i++) {
    if (s->samples[i] < best) best = s->samples[i];
  }
  return best;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double po_Bench_Stats_Median(const po_Bench_Stats *s) {
  if (s->count == 0) return 0;
  double sorted[64];
  memcpy(sorted, s->samples, (size_t)s->count * sizeof sorted[0]);
  qsort(sorted, (size_t)s->count, sizeof sorted[0], cmp_double);
  return s->count % 2 ? sorted[s->count / 2] : (sorted[s->count / 2 - 1] + sorted[s->count / 2]) / 2;
}

const char *po_Bench_FormatNs(double ns, char *buf, size_t size) {
  if (ns < 1e3) snprintf(buf, size, "%6.1f ns", ns);
  else if (ns < 1e6) snprintf(buf, size, "%6.2f us", ns / 1e3);
  else if (ns < 1e9) snprintf(buf, size, "%6.2f ms", ns / 1e6);
  else snprintf(buf, size, "%6.2f s ", ns / 1e9);
  return buf;
}
