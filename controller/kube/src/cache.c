/* Chained hash map, FNV-1a, doubling at load factor 1. */
#include "cache.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

bool po_Cache_Init_(po_Cache_ *c) {
  c->nslots = 64;
  c->count = 0;
  c->slots = calloc(c->nslots, sizeof *c->slots);
  return c->slots != NULL;
}

void po_Cache_Destroy_(po_Cache_ *c) {
  for (size_t i = 0; i < c->nslots; i++) {
    po_CacheEntry_ *e = c->slots[i];
    while (e) {
      po_CacheEntry_ *n = e->next;
      free(e);
      e = n;
    }
  }
  free(c->slots);
  c->slots = NULL;
  c->nslots = c->count = 0;
}

po_CacheEntry_ *po_Cache_NewEntry_(const char *key, const char *json, size_t len, const char *rv, const char *uid,
                                   int64_t generation) {
  size_t kl = strlen(key), rl = rv ? strlen(rv) : 0, ul = uid ? strlen(uid) : 0;
  po_CacheEntry_ *e = malloc(sizeof *e + kl + len + rl + ul + 4);
  if (!e) return NULL;
  e->next = NULL;
  e->hash = fnv(key);
  e->json_len = len;
  memcpy(e->key, key, kl + 1);
  char *j = e->key + kl + 1;
  memcpy(j, json, len);
  j[len] = '\0';
  char *r = j + len + 1;
  if (rl) memcpy(r, rv, rl);
  r[rl] = '\0';
  char *u = r + rl + 1;
  if (ul) memcpy(u, uid, ul);
  u[ul] = '\0';
  e->json = j;
  e->rv = r;
  e->uid = u;
  e->generation = generation;
  return e;
}

static void grow(po_Cache_ *c) {
  size_t n = c->nslots * 2;
  po_CacheEntry_ **s = calloc(n, sizeof *s);
  if (!s) return; /* keep working with longer chains */
  for (size_t i = 0; i < c->nslots; i++) {
    po_CacheEntry_ *e = c->slots[i];
    while (e) {
      po_CacheEntry_ *next = e->next;
      e->next = s[e->hash & (n - 1)];
      s[e->hash & (n - 1)] = e;
      e = next;
    }
  }
  free(c->slots);
  c->slots = s;
  c->nslots = n;
}

po_CacheEntry_ *po_Cache_Put_(po_Cache_ *c, po_CacheEntry_ *e) {
  po_CacheEntry_ **p = &c->slots[e->hash & (c->nslots - 1)];
  for (; *p; p = &(*p)->next)
    if ((*p)->hash == e->hash && strcmp((*p)->key, e->key) == 0) {
      po_CacheEntry_ *old = *p;
      e->next = old->next;
      *p = e;
      return old;
    }
  e->next = NULL;
  *p = e;
  if (++c->count > c->nslots) grow(c);
  return NULL;
}

po_CacheEntry_ *po_Cache_Get_(const po_Cache_ *c, const char *key) {
  uint64_t h = fnv(key);
  for (po_CacheEntry_ *e = c->slots[h & (c->nslots - 1)]; e; e = e->next)
    if (e->hash == h && strcmp(e->key, key) == 0) return e;
  return NULL;
}

po_CacheEntry_ *po_Cache_Remove_(po_Cache_ *c, const char *key) {
  uint64_t h = fnv(key);
  for (po_CacheEntry_ **p = &c->slots[h & (c->nslots - 1)]; *p; p = &(*p)->next)
    if ((*p)->hash == h && strcmp((*p)->key, key) == 0) {
      po_CacheEntry_ *e = *p;
      *p = e->next;
      c->count--;
      return e;
    }
  return NULL;
}

void po_Cache_ForEach_(const po_Cache_ *c, void (*fn)(void *ctx, po_CacheEntry_ *e), void *ctx) {
  for (size_t i = 0; i < c->nslots; i++)
    for (po_CacheEntry_ *e = c->slots[i]; e; e = e->next) fn(ctx, e);
}

size_t po_Cache_Bytes_(const po_Cache_ *c) {
  size_t n = c->nslots * sizeof *c->slots;
  for (size_t i = 0; i < c->nslots; i++)
    for (po_CacheEntry_ *e = c->slots[i]; e; e = e->next)
      n += sizeof *e + strlen(e->key) + e->json_len + strlen(e->rv) + strlen(e->uid) + 4;
  return n;
}
