/* A thread-safe metrics registry with Prometheus text exposition (format 0.0.4).
 *
 * Families (counter, gauge, histogram) have a fixed list of label names; a series is one label
 * value set, made on first use and kept until the registry is freed, so callers may cache the
 * po_Series pointer and update it without any lookup. Values are doubles, as in Prometheus.
 *
 * po_Metrics_New registers controller-runtime's and client-go's families (names below, see
 * README.md), so the controller's /metrics reads like a Go operator's. Exposition sorts families
 * by name and series by label values and omits families that have no series yet, as
 * client_golang does. */
#ifndef PO_RUNTIME_METRICS_H
#define PO_RUNTIME_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PO_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* controller-runtime (sigs.k8s.io/controller-runtime/pkg/internal/controller/metrics). */
#define PO_M_RECONCILE_TOTAL "controller_runtime_reconcile_total"            /* controller, result */
#define PO_M_RECONCILE_ERRORS "controller_runtime_reconcile_errors_total"    /* controller */
#define PO_M_TERMINAL_ERRORS "controller_runtime_terminal_reconcile_errors_total" /* controller */
#define PO_M_RECONCILE_TIME "controller_runtime_reconcile_time_seconds"      /* controller */
#define PO_M_MAX_CONCURRENT "controller_runtime_max_concurrent_reconciles"   /* controller */
#define PO_M_ACTIVE_WORKERS "controller_runtime_active_workers"              /* controller */
/* client-go workqueue metrics, as controller-runtime registers them. */
#define PO_M_WQ_DEPTH "workqueue_depth"                                      /* name */
#define PO_M_WQ_ADDS "workqueue_adds_total"                                  /* name */
#define PO_M_WQ_QUEUE_DURATION "workqueue_queue_duration_seconds"            /* name */
#define PO_M_WQ_WORK_DURATION "workqueue_work_duration_seconds"              /* name */
#define PO_M_WQ_UNFINISHED "workqueue_unfinished_work_seconds"               /* name */
#define PO_M_WQ_LONGEST "workqueue_longest_running_processor_seconds"        /* name */
#define PO_M_WQ_RETRIES "workqueue_retries_total"                            /* name */
/* client-go leader election and REST client. */
#define PO_M_LEADER "leader_election_master_status"                          /* name */
#define PO_M_REST_REQUESTS "rest_client_requests_total"                      /* code, method, host */

/* controller-runtime's reconcile_time_seconds buckets (0.005 .. 60, 40 bounds). */
extern const double po_kReconcileTimeBuckets[];
extern const size_t po_kReconcileTimeBucketsLen;
/* client-go's workqueue duration buckets: prometheus.ExponentialBuckets(10e-9, 10, 10), i.e.
 * 1e-08, 1e-07, ..., 1, 10. */
extern const double po_kWorkqueueBuckets[];
extern const size_t po_kWorkqueueBucketsLen;

typedef enum { kPo_Metric_Counter, kPo_Metric_Gauge, kPo_Metric_Histogram } po_MetricType;

typedef struct po_Metrics po_Metrics;
typedef struct po_MetricFamily po_MetricFamily;
typedef struct po_Series po_Series;

/* A registry with the standard families above already registered. NULL when out of memory. */
po_Metrics *po_Metrics_New(void);
/* An empty registry (tests, or a process that wants only its own families). */
po_Metrics *po_Metrics_NewEmpty(void);
void po_Metrics_Free(po_Metrics *m);


/* Registers a family, or returns the existing one when name, type and label names match (so
 * independent modules may register the same family). NULL when the name or a label name is not
 * valid Prometheus, when it clashes with an existing family, or when out of memory.
 * buckets: strictly increasing upper bounds for histograms (+Inf is implicit); ignored otherwise. */
po_MetricFamily *po_Metrics_Register(po_Metrics *m, po_MetricType type, const char *name,
                                     const char *help, size_t n_labels, const char *const *labels,
                                     size_t n_buckets, const double *buckets);
po_MetricFamily *po_Metrics_Find(po_Metrics *m, const char *name); /* m NULL: NULL */

/* The series for these label values (exactly the family's number of values; NULL values are
 * taken as ""). Made on first use; the pointer stays valid until po_Metrics_Free. */
po_Series *po_Family_With(po_MetricFamily *f, const char *const *values);
/* Shorthand: the values as arguments, e.g. po_Family_WithLabels(f, "ctrl", "success"). */
po_Series *po_Family_WithLabels(po_MetricFamily *f, ...);

void po_Series_Add(po_Series *s, double v);     /* counters: v >= 0 (negative is ignored) */
void po_Series_Inc(po_Series *s);
void po_Series_Set(po_Series *s, double v);     /* gauges */
void po_Series_Observe(po_Series *s, double v); /* histograms */
double po_Series_Value(po_Series *s);           /* counter/gauge value; histogram sum */
uint64_t po_Series_Count(po_Series *s);         /* histogram observation count */

/* Called at the start of every exposition, to refresh gauges that are computed on demand. */
typedef void (*po_MetricsCollectFn)(void *ctx);
bool po_Metrics_AddCollector(po_Metrics *m, po_MetricsCollectFn fn, void *ctx);
/* Returns once no exposition is running fn any more. */
void po_Metrics_RemoveCollector(po_Metrics *m, po_MetricsCollectFn fn, void *ctx);

/* The whole registry in text format 0.0.4. *out is malloc'd and NUL-terminated; the caller frees
 * it. Returns false only when out of memory. */
bool po_Metrics_Write(po_Metrics *m, char **out, size_t *len);

/* Counts one REST request in rest_client_requests_total{code,method,host} of registry m (made by
 * po_Metrics_New). code is the HTTP status, or <= 0 when no answer came (recorded as "<error>",
 * as client-go does). Independent of any HTTP library. */
void po_Metrics_ObserveRequestIn(po_Metrics *m, int code, const char *method, const char *host);

/* Formats v the way Prometheus' Go client does (shortest round-trip digits; exponent form below
 * 1e-4 and from 1e6 on; "+Inf", "-Inf", "NaN"). buf needs 32 bytes. Returns buf. */
char *po_Metrics_FormatValue(double v, char buf[32]);

#endif
