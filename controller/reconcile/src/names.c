/* po_TargetNames: which namespaces hold a ServiceDefaults (or ProxyDefaults) of a given name,
 * kept by the informer handlers, so a reconcile about to create a target learns in O(log n)
 * whether consul-k8s already syncs one of that name from another namespace (reconcile.h). A
 * sorted array of "Kind/name/namespace" strings under one mutex: lookups are binary searches
 * for the "Kind/name/" prefix; an insert moves pointers, not strings. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/reconcile/reconcile.h"

struct po_TargetNames {
  pthread_mutex_t mu;
  char **keys;
  size_t n, cap;
};

po_TargetNames *po_TargetNames_New(void) {
  po_TargetNames *t = calloc(1, sizeof *t);
  if (t) pthread_mutex_init(&t->mu, NULL);
  return t;
}

void po_TargetNames_Free(po_TargetNames *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) free(t->keys[i]);
  free(t->keys);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

static size_t lower(const po_TargetNames *t, const char *key) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (strcmp(t->keys[mid], key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

bool po_TargetNames_Set(po_TargetNames *t, po_TargetKind kind, const char *ns, const char *name, bool present) {
  char key[600];
  snprintf(key, sizeof key, "%s/%s/%s", po_TargetKind_Name(kind), name, ns);
  bool ok = true;
  pthread_mutex_lock(&t->mu);
  size_t i = lower(t, key);
  bool found = i < t->n && !strcmp(t->keys[i], key);
  if (present && !found) {
    char *k = strdup(key);
    if (t->n == t->cap) {
      size_t cap = t->cap ? t->cap * 2 : 64;
      char **grown = k ? realloc(t->keys, cap * sizeof *grown) : NULL;
      if (grown) t->keys = grown, t->cap = cap;
    }
    if (k && t->n < t->cap) {
      memmove(&t->keys[i + 1], &t->keys[i], (t->n - i) * sizeof *t->keys);
      t->keys[i] = k;
      t->n++;
    } else {
      free(k);
      ok = false;
    }
  } else if (!present && found) {
    free(t->keys[i]);
    memmove(&t->keys[i], &t->keys[i + 1], (t->n - i - 1) * sizeof *t->keys);
    t->n--;
  }
  pthread_mutex_unlock(&t->mu);
  return ok;
}

bool po_TargetNames_Elsewhere(po_TargetNames *t, po_TargetKind kind, const char *name, const char *ns, char *other,
                              size_t size) {
  char prefix[600];
  int pl = snprintf(prefix, sizeof prefix, "%s/%s/", po_TargetKind_Name(kind), name);
  bool found = false;
  pthread_mutex_lock(&t->mu);
  for (size_t i = lower(t, prefix); i < t->n && !strncmp(t->keys[i], prefix, (size_t)pl) && !found; i++) {
    const char *n = t->keys[i] + pl;
    if (strcmp(n, ns) != 0) {
      snprintf(other, size, "%s", n);
      found = true;
    }
  }
  pthread_mutex_unlock(&t->mu);
  return found;
}
