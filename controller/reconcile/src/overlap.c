/* Overlaps between the accepted PropertyOverrides of one target: the same path on resources both
 * can match, set differently. Reported in Programmed (reason Overlapping), never refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"

/* One patch of one peer, with what comparing it needs made once: its value as JSON text. */
typedef struct {
  const po_Patch *p;
  const char *value; /* compact JSON, or NULL when the patch has none */
  bool uniform;      /* every patch on its path, type and direction does the same (op, value) */
} Ref;

struct po_OverlapIndex {
  const po_OverlapPeer *peers;
  size_t n;
  size_t *base; /* peer j's patches are refs[base[j] ...] */
  Ref *refs;
};

static const char *norm(const char *s) { return s && *s ? s : "default"; }

static bool services_overlap(const po_ResourceFilter *a, const po_ResourceFilter *b) {
  if (a->service_count == 0 || b->service_count == 0) return true;
  for (size_t i = 0; i < a->service_count; i++) {
    for (size_t j = 0; j < b->service_count; j++) {
      const po_ServiceName *x = &a->services[i], *y = &b->services[j];
      if (!strcmp(x->name, y->name) && !strcmp(norm(x->namespace_), norm(y->namespace_)) &&
          !strcmp(norm(x->partition), norm(y->partition))) {
        return true;
      }
    }
  }
  return false;
}

static int cmp_place(const Ref *a, const Ref *b) {
  int c = strcmp(a->p->path, b->p->path);
  if (!c) c = strcmp(a->p->resource_filter.resource_type, b->p->resource_filter.resource_type);
  if (!c) c = strcmp(a->p->resource_filter.traffic_direction, b->p->resource_filter.traffic_direction);
  return c;
}

static int cmp_effect(const Ref *a, const Ref *b) {
  int c = strcmp(a->p->op, b->p->op);
  if (!c && (!a->value || !b->value)) c = (a->value != NULL) - (b->value != NULL);
  if (!c && a->value) c = strcmp(a->value, b->value);
  return c;
}

static int by_place_then_effect(const void *x, const void *y) {
  const Ref *a = *(Ref *const *)x, *b = *(Ref *const *)y;
  int c = cmp_place(a, b);
  return c ? c : cmp_effect(a, b);
}

po_OverlapIndex *po_OverlapIndex_New(const po_OverlapPeer *peers, size_t n, po_Arena *ar) {
  po_OverlapIndex *ix = po_Arena_Malloc(ar, sizeof *ix);
  size_t *base = po_Arena_Malloc(ar, (n + 1) * sizeof *base);
  if (!ix || !base) return NULL;
  size_t total = 0;
  for (size_t j = 0; j < n; j++) {
    base[j] = total;
    total += peers[j].args ? peers[j].args->patch_count : 0;
  }
  base[n] = total;
  Ref *refs = po_Arena_Malloc(ar, (total ? total : 1) * sizeof *refs);
  Ref **sorted = malloc((total ? total : 1) * sizeof *sorted);
  if (!refs || !sorted) {
    free(sorted);
    return NULL;
  }
  for (size_t j = 0; j < n; j++) {
    for (size_t q = 0; peers[j].args && q < peers[j].args->patch_count; q++) {
      Ref *r = &refs[base[j] + q];
      r->p = &peers[j].args->patches[q];
      r->value = r->p->value ? po_Value_ToJson(r->p->value, ar) : NULL;
      if (r->p->value && !r->value) {
        free(sorted);
        return NULL;
      }
      sorted[base[j] + q] = r;
    }
  }
  /* A place (path, type, direction) where every patch does the same thing cannot overlap: the
   * usual case, and the one that made the pairwise check cost N^2 serialisations. */
  qsort(sorted, total, sizeof *sorted, by_place_then_effect);
  for (size_t g = 0; g < total;) {
    size_t e = g + 1;
    while (e < total && cmp_place(sorted[g], sorted[e]) == 0) e++;
    bool uniform = cmp_effect(sorted[g], sorted[e - 1]) == 0;
    for (size_t k = g; k < e; k++) sorted[k]->uniform = uniform;
    g = e;
  }
  free(sorted);
  *ix = (po_OverlapIndex){peers, n, base, refs};
  return ix;
}

void po_Overlap_Of(const po_OverlapIndex *ix, size_t i, char *out, size_t size) {
  out[0] = '\0';
  const po_OverlapPeer *peers = ix->peers;
  if (!peers[i].args) return;
  for (size_t j = 0; j < ix->n; j++) {
    if (j == i || !peers[j].args) continue;
    for (size_t p = 0; p < peers[i].args->patch_count; p++) {
      const Ref *a = &ix->refs[ix->base[i] + p];
      if (a->uniform) continue;
      for (size_t q = 0; q < peers[j].args->patch_count; q++) {
        const Ref *b = &ix->refs[ix->base[j] + q];
        if (cmp_place(a, b) || !services_overlap(&a->p->resource_filter, &b->p->resource_filter) ||
            cmp_effect(a, b) == 0) {
          continue;
        }
        bool after = strcmp(peers[j].name, peers[i].name) > 0;
        snprintf(out, size,
                 "patches[%zu] %s overlaps PropertyOverride %s patches[%zu], which sets it differently; %s is "
                 "applied %s, so where both match its value %s",
                 p, a->p->path, peers[j].name, q, peers[j].name, after ? "after" : "before",
                 after ? "wins" : "is overridden by this one");
        return;
      }
    }
  }
}
