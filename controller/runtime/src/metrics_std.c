/* The standard families (controller-runtime's and client-go's names and help texts in our own
 * words), the process-wide registry and the REST client hook. */
#include <pthread.h>
#include <stdio.h>

#include "metrics_internal.h"

typedef struct {
  po_MetricType type;
  const char *name;
  const char *help;
  size_t n_labels;
  const char *labels[3];
  const double *buckets;
  const size_t *n_buckets;
} StdFamily;

static const StdFamily kStd[] = {
    {kPo_Metric_Counter, PO_M_RECONCILE_TOTAL, "Total number of reconciliations per controller",
     2, {"controller", "result"}, NULL, NULL},
    {kPo_Metric_Counter, PO_M_RECONCILE_ERRORS,
     "Total number of reconciliation errors per controller", 1, {"controller"}, NULL, NULL},
    {kPo_Metric_Counter, PO_M_TERMINAL_ERRORS,
     "Total number of terminal reconciliation errors per controller", 1, {"controller"}, NULL, NULL},
    {kPo_Metric_Histogram, PO_M_RECONCILE_TIME, "Length of time per reconciliation per controller",
     1, {"controller"}, po_kReconcileTimeBuckets, &po_kReconcileTimeBucketsLen},
    {kPo_Metric_Gauge, PO_M_MAX_CONCURRENT, "Maximum number of concurrent reconciles per controller",
     1, {"controller"}, NULL, NULL},
    {kPo_Metric_Gauge, PO_M_ACTIVE_WORKERS, "Number of currently used workers per controller", 1,
     {"controller"}, NULL, NULL},
    {kPo_Metric_Gauge, PO_M_WQ_DEPTH, "Current depth of workqueue", 1, {"name"}, NULL, NULL},
    {kPo_Metric_Counter, PO_M_WQ_ADDS, "Total number of adds handled by workqueue", 1, {"name"},
     NULL, NULL},
    {kPo_Metric_Histogram, PO_M_WQ_QUEUE_DURATION,
     "How long in seconds an item stays in workqueue before being requested", 1, {"name"},
     po_kWorkqueueBuckets, &po_kWorkqueueBucketsLen},
    {kPo_Metric_Histogram, PO_M_WQ_WORK_DURATION,
     "How long in seconds processing an item from workqueue takes", 1, {"name"},
     po_kWorkqueueBuckets, &po_kWorkqueueBucketsLen},
    {kPo_Metric_Gauge, PO_M_WQ_UNFINISHED,
     "How many seconds of work is in progress and not yet observed by work_duration; large "
     "values indicate stuck threads",
     1, {"name"}, NULL, NULL},
    {kPo_Metric_Gauge, PO_M_WQ_LONGEST,
     "How many seconds the longest running processor for workqueue has been running", 1, {"name"},
     NULL, NULL},
    {kPo_Metric_Counter, PO_M_WQ_RETRIES, "Total number of retries handled by workqueue", 1,
     {"name"}, NULL, NULL},
    {kPo_Metric_Gauge, PO_M_LEADER,
     "Whether this process leads the named lease: 1 leader, 0 standby", 1, {"name"}, NULL, NULL},
    {kPo_Metric_Counter, PO_M_REST_REQUESTS,
     "Number of HTTP requests, partitioned by status code, method, and host", 3,
     {"code", "method", "host"}, NULL, NULL},
};

po_Metrics *po_Metrics_New(void) {
  po_Metrics *m = po_Metrics_NewEmpty();
  if (!m) return NULL;
  for (size_t i = 0; i < sizeof kStd / sizeof kStd[0]; i++) {
    const StdFamily *s = &kStd[i];
    if (!po_Metrics_Register(m, s->type, s->name, s->help, s->n_labels, s->labels,
                             s->n_buckets ? *s->n_buckets : 0, s->buckets)) {
      po_Metrics_Free(m);
      return NULL;
    }
  }
  return m;
}

void po_Metrics_ObserveRequestIn(po_Metrics *m, int code, const char *method, const char *host) {
  if (!m) return;
  char code_text[16];
  if (code <= 0)
    snprintf(code_text, sizeof code_text, "<error>");
  else
    snprintf(code_text, sizeof code_text, "%d", code);
  po_Series_Inc(po_Family_WithLabels(po_Metrics_Find(m, PO_M_REST_REQUESTS), code_text,
                                     method ? method : "", host ? host : ""));
}
