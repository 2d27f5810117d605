/* Registration and updates of metric families and series. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_internal.h"

const double po_kReconcileTimeBuckets[] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
    0.7,   0.8,  0.9,   1.0,  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5,
    6,     7,    8,     9,    10,  15,  20,  25,  30,  40,  50,  60};
const size_t po_kReconcileTimeBucketsLen =
    sizeof po_kReconcileTimeBuckets / sizeof po_kReconcileTimeBuckets[0];
const double po_kWorkqueueBuckets[] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10};
const size_t po_kWorkqueueBucketsLen = sizeof po_kWorkqueueBuckets / sizeof po_kWorkqueueBuckets[0];

static bool valid_name(const char *s, bool metric) {
  if (!s || !*s) return false;
  for (const char *p = s; *p; p++) {
    unsigned char c = (unsigned char)*p;
    bool ok = isalpha(c) || c == '_' || (metric && c == ':') || (p != s && isdigit(c));
    if (!ok || c > 127) return false;
  }
  return true;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static void family_free(po_MetricFamily *f) {
  if (!f) return;
  for (size_t i = 0; i < f->n_series; i++) {
    po_Series *s = f->series[i];
    for (size_t j = 0; j < f->n_labels; j++) free(s->values[j]);
    free(s->values);
    free(s->bucket_counts);
    free(s);
  }
  free(f->series);
  for (size_t j = 0; j < f->n_labels; j++) free(f->labels[j]);
  free(f->labels);
  free(f->buckets);
  free(f->name);
  free(f->help);
  pthread_mutex_destroy(&f->mu);
  free(f);
}

static bool same_shape(const po_MetricFamily *f, po_MetricType type, size_t n_labels,
                       const char *const *labels) {
  if (f->type != type || f->n_labels != n_labels) return false;
  for (size_t i = 0; i < n_labels; i++)
    if (strcmp(f->labels[i], labels[i]) != 0) return false;
  return true;
}

static po_MetricFamily *find_locked(po_Metrics *m, const char *name) {
  for (size_t i = 0; i < m->n_families; i++)
    if (strcmp(m->families[i]->name, name) == 0) return m->families[i];
  return NULL;
}

po_MetricFamily *po_Metrics_Register(po_Metrics *m, po_MetricType type, const char *name,
                                     const char *help, size_t n_labels, const char *const *labels,
                                     size_t n_buckets, const double *buckets) {
  if (!m || !valid_name(name, true)) return NULL;
  for (size_t i = 0; i < n_labels; i++) {
    if (!valid_name(labels[i], false) || strncmp(labels[i], "__", 2) == 0) return NULL;
    if (type == kPo_Metric_Histogram && strcmp(labels[i], "le") == 0) return NULL;
  }
  if (type == kPo_Metric_Histogram) {
    for (size_t i = 1; i < n_buckets; i++)
      if (!(buckets[i] > buckets[i - 1])) return NULL;
  } else {
    n_buckets = 0;
  }
  pthread_mutex_lock(&m->mu);
  po_MetricFamily *f = find_locked(m, name);
  if (f) {
    pthread_mutex_unlock(&m->mu);
    return same_shape(f, type, n_labels, labels) ? f : NULL;
  }
  f = calloc(1, sizeof *f);
  if (!f) goto oom;
  pthread_mutex_init(&f->mu, NULL);
  f->type = type;
  f->name = strdup(name);
  f->help = dup_or_empty(help);
  f->labels = calloc(n_labels ? n_labels : 1, sizeof *f->labels);
  f->buckets = calloc(n_buckets ? n_buckets : 1, sizeof *f->buckets);
  if (!f->name || !f->help || !f->labels || !f->buckets) goto oom;
  for (; f->n_labels < n_labels; f->n_labels++)
    if (!(f->labels[f->n_labels] = strdup(labels[f->n_labels]))) goto oom;
  if (n_buckets) memcpy(f->buckets, buckets, n_buckets * sizeof *buckets);
  f->n_buckets = n_buckets;
  if (m->n_families == m->cap_families) {
    size_t cap = m->cap_families ? m->cap_families * 2 : 16;
    po_MetricFamily **fs = realloc(m->families, cap * sizeof *fs);
    if (!fs) goto oom;
    m->families = fs;
    m->cap_families = cap;
  }
  m->families[m->n_families++] = f;
  pthread_mutex_unlock(&m->mu);
  return f;
oom:
  pthread_mutex_unlock(&m->mu);
  family_free(f);
  return NULL;
}

po_MetricFamily *po_Metrics_Find(po_Metrics *m, const char *name) {
  if (!m) return NULL; /* no registry: every series is NULL, every update a no-op */
  pthread_mutex_lock(&m->mu);
  po_MetricFamily *f = find_locked(m, name);
  pthread_mutex_unlock(&m->mu);
  return f;
}

po_Series *po_Family_With(po_MetricFamily *f, const char *const *values) {
  if (!f) return NULL;
  pthread_mutex_lock(&f->mu);
  for (size_t i = 0; i < f->n_series; i++) {
    po_Series *s = f->series[i];
    size_t j = 0;
    while (j < f->n_labels && strcmp(s->values[j], values[j] ? values[j] : "") == 0) j++;
    if (j == f->n_labels) {
      pthread_mutex_unlock(&f->mu);
      return s;
    }
  }
  po_Series *s = calloc(1, sizeof *s);
  if (!s) goto oom;
  s->family = f;
  s->values = calloc(f->n_labels ? f->n_labels : 1, sizeof *s->values);
  s->bucket_counts = calloc(f->n_buckets + 1, sizeof *s->bucket_counts);
  if (!s->values || !s->bucket_counts) goto oom;
  for (size_t j = 0; j < f->n_labels; j++)
    if (!(s->values[j] = dup_or_empty(values[j]))) goto oom;
  if (f->n_series == f->cap_series) {
    size_t cap = f->cap_series ? f->cap_series * 2 : 4;
    po_Series **ss = realloc(f->series, cap * sizeof *ss);
    if (!ss) goto oom;
    f->series = ss;
    f->cap_series = cap;
  }
  f->series[f->n_series++] = s;
  pthread_mutex_unlock(&f->mu);
  return s;
oom:
  pthread_mutex_unlock(&f->mu);
  if (s) {
    if (s->values)
      for (size_t j = 0; j < f->n_labels; j++) free(s->values[j]);
    free(s->values);
    free(s->bucket_counts);
    free(s);
  }
  return NULL;
}

po_Series *po_Family_WithLabels(po_MetricFamily *f, ...) {
  if (!f) return NULL;
  const char *values[16];
  if (f->n_labels > 16) return NULL;
  va_list ap;
  va_start(ap, f);
  for (size_t i = 0; i < f->n_labels; i++) values[i] = va_arg(ap, const char *);
  va_end(ap);
  return po_Family_With(f, values);
}

void po_Series_Add(po_Series *s, double v) {
  if (!s || !(v >= 0)) return;
  pthread_mutex_lock(&s->family->mu);
  s->value += v;
  pthread_mutex_unlock(&s->family->mu);
}

void po_Series_Inc(po_Series *s) { po_Series_Add(s, 1); }

void po_Series_Set(po_Series *s, double v) {
  if (!s) return;
  pthread_mutex_lock(&s->family->mu);
  s->value = v;
  pthread_mutex_unlock(&s->family->mu);
}

void po_Series_Observe(po_Series *s, double v) {
  if (!s) return;
  po_MetricFamily *f = s->family;
  size_t i = 0;
  while (i < f->n_buckets && !(v <= f->buckets[i])) i++;
  pthread_mutex_lock(&f->mu);
  s->bucket_counts[i]++;
  s->count++;
  s->value += v;
  pthread_mutex_unlock(&f->mu);
}

double po_Series_Value(po_Series *s) {
  if (!s) return 0;
  pthread_mutex_lock(&s->family->mu);
  double v = s->value;
  pthread_mutex_unlock(&s->family->mu);
  return v;
}

uint64_t po_Series_Count(po_Series *s) {
  if (!s) return 0;
  pthread_mutex_lock(&s->family->mu);
  uint64_t n = s->count;
  pthread_mutex_unlock(&s->family->mu);
  return n;
}

bool po_Metrics_AddCollector(po_Metrics *m, po_MetricsCollectFn fn, void *ctx) {
  pthread_mutex_lock(&m->collect_mu);
  if (m->n_collectors == m->cap_collectors) {
    size_t cap = m->cap_collectors ? m->cap_collectors * 2 : 4;
    Collector *cs = realloc(m->collectors, cap * sizeof *cs);
    if (!cs) {
      pthread_mutex_unlock(&m->collect_mu);
      return false;
    }
    m->collectors = cs;
    m->cap_collectors = cap;
  }
  m->collectors[m->n_collectors++] = (Collector){fn, ctx};
  pthread_mutex_unlock(&m->collect_mu);
  return true;
}

void po_Metrics_RemoveCollector(po_Metrics *m, po_MetricsCollectFn fn, void *ctx) {
  pthread_mutex_lock(&m->collect_mu);
  for (size_t i = 0; i < m->n_collectors; i++) {
    if (m->collectors[i].fn == fn && m->collectors[i].ctx == ctx) {
      memmove(&m->collectors[i], &m->collectors[i + 1],
              (m->n_collectors - i - 1) * sizeof *m->collectors);
      m->n_collectors--;
      break;
    }
  }
  pthread_mutex_unlock(&m->collect_mu);
}

po_Metrics *po_Metrics_NewEmpty(void) {
  po_Metrics *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  pthread_mutex_init(&m->mu, NULL);
  pthread_mutex_init(&m->collect_mu, NULL);
  return m;
}

void po_Metrics_Free(po_Metrics *m) {
  if (!m) return;
  for (size_t i = 0; i < m->n_families; i++) family_free(m->families[i]);
  free(m->families);
  free(m->collectors);
  pthread_mutex_destroy(&m->mu);
  pthread_mutex_destroy(&m->collect_mu);
  free(m);
}
