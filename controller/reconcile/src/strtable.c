/* The chained string-keyed hash table of the target index (strtable.h). */
#include "strtable.h"

#include <stdlib.h>
#include <string.h>

#include "json_hash.h"

enum { kFirstSlots = 64 };

void po_StrTable_Free(po_StrTable *t) {
  free(t->slots);
  *t = (po_StrTable){0};
}

uint64_t po_StrTable_Hash(const char *key) { return po_Hash_String(key, strlen(key)); }

po_StrNode *po_StrTable_Find(const po_StrTable *t, const char *key, uint64_t hash) {
  if (!t->nslots) return NULL;
  for (po_StrNode *n = t->slots[hash & (t->nslots - 1)]; n; n = n->next) {
    if (n->hash == hash && strcmp(n->key, key) == 0) return n;
  }
  return NULL;
}

bool po_StrTable_Ready(po_StrTable *t) {
  if (!t->nslots) {
    t->slots = calloc(kFirstSlots, sizeof *t->slots);
    if (!t->slots) return false;
    t->nslots = kFirstSlots;
  }
  return true;
}

/* Twice the slots once there are more records than slots: chains stay about one long. */
static void grow(po_StrTable *t) {
  size_t n = t->nslots * 2;
  po_StrNode **slots = calloc(n, sizeof *slots);
  if (!slots) return; /* longer chains, still correct */
  for (size_t i = 0; i < t->nslots; i++) {
    for (po_StrNode *e = t->slots[i], *next; e; e = next) {
      next = e->next;
      e->next = slots[e->hash & (n - 1)];
      slots[e->hash & (n - 1)] = e;
    }
  }
  free(t->slots);
  t->slots = slots;
  t->nslots = n;
}

bool po_StrTable_Insert(po_StrTable *t, po_StrNode *n) {
  if (!po_StrTable_Ready(t)) return false;
  if (t->count + 1 > t->nslots) grow(t);
  po_StrNode **slot = &t->slots[n->hash & (t->nslots - 1)];
  n->next = *slot;
  *slot = n;
  t->count++;
  return true;
}

void po_StrTable_Unlink(po_StrTable *t, po_StrNode *n) {
  if (!t->nslots) return;
  for (po_StrNode **p = &t->slots[n->hash & (t->nslots - 1)]; *p; p = &(*p)->next) {
    if (*p == n) {
      *p = n->next;
      n->next = NULL;
      t->count--;
      return;
    }
  }
}

void po_StrTable_ForEach(const po_StrTable *t, void (*fn)(void *ctx, po_StrNode *n), void *ctx) {
  for (size_t i = 0; i < t->nslots; i++) {
    for (po_StrNode *n = t->slots[i], *next; n; n = next) {
      next = n->next;
      fn(ctx, n);
    }
  }
}
