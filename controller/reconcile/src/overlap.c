/* Overlaps between the accepted PropertyOverrides of one target: the same path on resources both
 * can match, set differently. Reported in Programmed (reason Overlapping), never refused. */
#include <stdio.h>
#include <string.h>

#include "overlap.h"

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

static bool same_effect(const po_Patch *a, const po_Patch *b, po_Arena *ar) {
  if (strcmp(a->op, b->op) != 0) return false;
  if (!a->value || !b->value) return !a->value && !b->value;
  const char *x = po_Value_ToJson(a->value, ar), *y = po_Value_ToJson(b->value, ar);
  return x && y && strcmp(x, y) == 0;
}

void po_Overlap_Of(const po_OverlapPeer *peers, size_t n, size_t i, po_Arena *ar, char *out, size_t size) {
  out[0] = '\0';
  const po_Arguments *x = peers[i].args;
  for (size_t j = 0; x && j < n; j++) {
    const po_Arguments *y = j != i ? peers[j].args : NULL;
    for (size_t p = 0; y && p < x->patch_count; p++) {
      for (size_t q = 0; q < y->patch_count; q++) {
        const po_Patch *a = &x->patches[p], *b = &y->patches[q];
        if (strcmp(a->path, b->path) || strcmp(a->resource_filter.resource_type, b->resource_filter.resource_type) ||
            strcmp(a->resource_filter.traffic_direction, b->resource_filter.traffic_direction) ||
            !services_overlap(&a->resource_filter, &b->resource_filter) || same_effect(a, b, ar)) {
          continue;
        }
        bool after = strcmp(peers[j].name, peers[i].name) > 0;
        snprintf(out, size,
                 "patches[%zu] %s overlaps PropertyOverride %s patches[%zu], which sets it differently; %s is "
                 "applied %s, so where both match its value %s",
                 p, a->path, peers[j].name, q, peers[j].name, after ? "after" : "before",
                 after ? "wins" : "is overridden by this one");
        return;
      }
    }
  }
}
