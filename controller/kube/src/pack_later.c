/* Texts a cache keeps unpacked for a while (pack_later.h). */
#include "pack_later.h"

#include <stdlib.h>
#include <string.h>

void po_PackLater_Init_(po_PackLater_ *p, int64_t delay_ns, size_t max_bytes) {
  *p = (po_PackLater_){.delay_ns = delay_ns, .max_bytes = max_bytes};
}

void po_PackLater_Free_(po_PackLater_ *p) {
  for (size_t i = 0; i < p->count; i++) free(p->ring[(p->head + i) % p->cap].key);
  free(p->ring);
  *p = (po_PackLater_){.delay_ns = p->delay_ns, .max_bytes = p->max_bytes};
}

bool po_PackLater_Fits_(const po_PackLater_ *p, size_t bytes) { return p->delay_ns > 0 && bytes <= p->max_bytes; }

/* Twice the room, the items moved to its start in order. */
static bool grow(po_PackLater_ *p) {
  size_t cap = p->cap ? p->cap * 2 : 64;
  po_PackLaterItem_ *r = malloc(cap * sizeof *r);
  if (!r) return false;
  for (size_t i = 0; i < p->count; i++) r[i] = p->ring[(p->head + i) % p->cap];
  free(p->ring);
  p->ring = r;
  p->cap = cap;
  p->head = 0;
  return true;
}

bool po_PackLater_Note_(po_PackLater_ *p, const char *key, const void *entry, size_t bytes, int64_t now_ns) {
  if (p->count == p->cap && !grow(p)) return false;
  char *k = strdup(key);
  if (!k) return false;
  p->ring[(p->head + p->count) % p->cap] = (po_PackLaterItem_){k, entry, bytes, now_ns};
  p->count++;
  p->bytes += bytes;
  return true;
}

bool po_PackLater_Next_(po_PackLater_ *p, int64_t now_ns, po_PackLaterItem_ *out) {
  if (!p->count) return false;
  po_PackLaterItem_ *it = &p->ring[p->head];
  if (now_ns - it->at_ns < p->delay_ns && p->bytes <= p->max_bytes) return false;
  *out = *it;
  p->head = (p->head + 1) % p->cap;
  p->count--;
  p->bytes -= it->bytes;
  return true;
}
