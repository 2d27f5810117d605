/* po_Schema_Cache: the caches users keep in a schema (the engine's compiled patterns), one slot
 * per kind, each published once by compare-and-swap and freed with the schema. A lookup is a
 * few atomic loads: it runs once a string value with a `pattern` rule is checked. */
#include <stdlib.h>

#include "schema_internal.h"

struct po_SchemaCacheSlot {
  const po_SchemaCacheKind *kind;
  void *cache;
};

void *po_Schema_Cache(const po_Schema *cs, const po_SchemaCacheKind *kind) {
  if (!cs || !kind) return NULL;
  po_Schema *s = (po_Schema *)cs; /* the caches are the schema's own state, as its name tables */
  struct po_SchemaCacheSlot *mine = NULL;
  for (size_t i = 0; i < kPo_SchemaCacheKinds;) {
    struct po_SchemaCacheSlot *slot = atomic_load_explicit(&s->caches[i], memory_order_acquire);
    if (slot && slot->kind == kind) {
      if (mine) kind->free(mine->cache), free(mine);
      return slot->cache;
    }
    if (slot) {
      i++;
      continue;
    }
    if (!mine) {
      mine = malloc(sizeof *mine);
      void *cache = mine ? kind->make() : NULL;
      if (!cache) {
        free(mine);
        return NULL;
      }
      *mine = (struct po_SchemaCacheSlot){kind, cache};
    }
    struct po_SchemaCacheSlot *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&s->caches[i], &expected, mine, memory_order_acq_rel,
                                                memory_order_acquire)) {
      return mine->cache;
    }
    /* another thread took slot i: it may hold the same kind, so slot i is looked at again */
  }
  if (mine) kind->free(mine->cache), free(mine);
  return NULL;
}

void po_Schema_FreeCaches_(po_Schema *s) {
  for (size_t i = 0; i < kPo_SchemaCacheKinds; i++) {
    struct po_SchemaCacheSlot *slot = atomic_load_explicit(&s->caches[i], memory_order_acquire);
    if (!slot) continue;
    slot->kind->free(slot->cache);
    free(slot);
  }
}
