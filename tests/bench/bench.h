/* Shared by the engine benchmark's files: timing and statistics (bench_timer.c) and the
 * generated inputs (bench_fixture.c). Nothing here is timed against a threshold: the program
 * prints numbers and ratios, and the reader compares them with ARCHITECTURE.md section 8. */
#ifndef PO_BENCH_H_
#define PO_BENCH_H_

#include <stddef.h>
#include <stdint.h>

/* ---- timing ---- */

/* CLOCK_MONOTONIC, in nanoseconds. */
uint64_t po_Bench_Now(void);

/* Samples of one measurement, each already divided by the work it covered (ns per item). */
typedef struct {
  double samples[64];
  int count;
} po_Bench_Stats;

void po_Bench_Stats_Add(po_Bench_Stats *s, double ns_per_item);
double po_Bench_Stats_Best(const po_Bench_Stats *s);
double po_Bench_Stats_Median(const po_Bench_Stats *s);

/* "123 ns", "4.56 µs", "7.89 ms", "1.23 s": a duration in a fixed-width column. */
const char *po_Bench_FormatNs(double ns, char *buf, size_t size);

/* ---- inputs ---- */

/* One realistic Cluster as Consul generates it for an upstream (EDS with an inline load
 * assignment, circuit breakers, outlier detection, a TLS transport socket in an Any, HTTP/2
 * protocol options in an Any), in proto3 JSON, about 3 KB (1.6 KB in binary). Clusters
 * differ by `index` in names, addresses, ports, limits and certificates. Returns its length; `buf` gets it
 * NUL-terminated when it fits. */
size_t po_Bench_ClusterJson(char *buf, size_t size, unsigned index);

/* An envoy.admin.v3.ClustersConfigDump with `count` distinct clusters in
 * dynamic_active_clusters[].cluster (Anys of envoy.config.cluster.v3.Cluster). malloc'd,
 * NUL-terminated; *len gets its length. NULL when out of memory. */
char *po_Bench_ConfigDumpJson(unsigned count, size_t *len);

#endif
