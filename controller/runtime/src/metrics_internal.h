/* The registry's data, shared by metrics.c (registration, updates) and metrics_text.c
 * (exposition). Not part of the public API. */
#ifndef PO_RUNTIME_METRICS_INTERNAL_H
#define PO_RUNTIME_METRICS_INTERNAL_H

#include <pthread.h>

#include "po/runtime/metrics.h"

struct po_Series {
  po_MetricFamily *family;
  char **values;            /* family->n_labels strings */
  double value;             /* counter/gauge value, histogram sum */
  uint64_t count;           /* histogram observations */
  uint64_t *bucket_counts;  /* histogram: n_buckets + 1 (the last is +Inf), not cumulative */
};

struct po_MetricFamily {
  po_MetricType type;
  char *name;
  char *help;
  size_t n_labels;
  char **labels;
  size_t n_buckets;
  double *buckets;
  pthread_mutex_t mu;       /* guards the series list and every series' values */
  po_Series **series;
  size_t n_series, cap_series;
};

typedef struct {
  po_MetricsCollectFn fn;
  void *ctx;
} Collector;

struct po_Metrics {
  pthread_mutex_t mu;       /* guards the family list */
  po_MetricFamily **families;
  size_t n_families, cap_families;
  pthread_mutex_t collect_mu; /* guards collectors; held while they run */
  Collector *collectors;
  size_t n_collectors, cap_collectors;
};

#endif
