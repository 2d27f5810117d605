/* Chained hash map, FNV-1a, doubling at load factor 1; entries reference-counted. */
#include "cache.h"

#include "compact.h"

#include <json-c/json.h>
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
      po_CacheEntry_Unref_(e);
      e = n;
    }
  }
  free(c->slots);
  c->slots = NULL;
  c->nslots = c->count = 0;
}

static char *put_str(char *at, const char *s, size_t n) {
  if (n) memcpy(at, s, n);
  at[n] = '\0';
  return at + n + 1;
}

po_CacheEntry_ *po_Cache_NewEntry_(const char *key, json_object *obj, const char *json, size_t len,
                                   const po_CacheMeta_ *m) {
  size_t cut_at = 0, cut_len = 0;
  if (obj) len = 0;
  else if (m->cut_len && m->cut_at <= len && m->cut_len <= len - m->cut_at) cut_at = m->cut_at, cut_len = m->cut_len;
  len -= cut_len;
  /* Kept compressed when a codec is given and that is smaller: the text around the cut, packed. */
  const char *packed = NULL;
  size_t plen = !obj && m->codec
                    ? po_TextCodec_Pack_(m->codec, json, cut_at, json + cut_at + cut_len, len - cut_at, &packed)
                    : 0;
  size_t kl = strlen(key), rl = m->rv ? strlen(m->rv) : 0, ul = m->uid ? strlen(m->uid) : 0;
  size_t stored = obj ? 0 : plen ? plen : len + 1;
  po_CacheEntry_ *e = malloc(sizeof *e + kl + stored + rl + ul + 3);
  if (!e) return NULL;
  e->next = NULL;
  e->hash = fnv(key);
  atomic_init(&e->refs, 1);
  e->obj = obj;
  e->json_len = len;
  e->packed_len = plen;
  e->codec = plen ? m->codec : NULL;
  char *at = put_str(e->key, key, kl);
  e->json = obj ? NULL : at;
  if (plen) {
    memcpy(at, packed, plen);
    at += plen;
  } else if (!obj) {
    if (cut_at) memcpy(at, json, cut_at);
    at = put_str(at + cut_at, json + cut_at + cut_len, len - cut_at);
  }
  e->rv = at;
  at = put_str(at, m->rv, rl);
  e->uid = at;
  put_str(at, m->uid, ul);
  e->generation = m->generation;
  e->deleting = m->deleting;
  return e;
}

const char *po_CacheEntry_Text_(const po_CacheEntry_ *e) {
  return e->packed_len ? po_TextCodec_Unpack_(e->codec, e->json, e->packed_len, e->json_len) : e->json;
}

json_object *po_CacheEntry_Parse_(const po_CacheEntry_ *e, json_tokener *t, const char **step) {
  *step = "parsing";
  if (!t) return NULL; /* the caller's tokener could not be made */
  *step = "decompressing";
  const char *text = po_CacheEntry_Text_(e);
  if (!text) return NULL;
  *step = "parsing";
  json_object *o = json_tokener_parse_ex(t, text, (int)e->json_len);
  if (json_tokener_get_error(t) != json_tokener_success) { /* the cache holds whole objects: memory */
    json_object_put(o);
    o = NULL;
  }
  json_tokener_reset(t);
  return o;
}

/* A hold is an entry too (no key, no text: the reader's tree), so a tree of the cache's and a
 * parse made for one reader are released alike. */
const json_object *po_CacheEntry_Lend_(po_CacheEntry_ *e, json_tokener *t, const char *resource, po_CacheEntry_ **hold,
                                       po_CtlStatus *st) {
  *hold = NULL;
  if (e->obj) {
    *hold = e;
    return e->obj;
  }
  const char *step = "holding a reader's parse of";
  json_object *o = po_CacheEntry_Parse_(e, t, &step);
  if (o && !(*hold = po_Cache_NewEntry_("", o, NULL, 0, &(po_CacheMeta_){.generation = 0}))) {
    json_object_put(o);
    o = NULL;
    step = "holding a reader's parse of";
  }
  /* said before e is let go: its key may go with it (the cache replaced it meanwhile) */
  if (!o) po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory %s the cached text of %s %s", step, resource, e->key);
  po_CacheEntry_Unref_(e);
  return o;
}

void po_CacheEntry_Ref_(po_CacheEntry_ *e) { atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed); }

void po_CacheEntry_Unref_(po_CacheEntry_ *e) {
  if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1) return;
  /* The last holder: no other thread can see the tree any more, so json-c's plain (not atomic)
   * reference count is ours alone here. */
  json_object_put(e->obj);
  free(e);
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
      old->next = NULL;
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
      e->next = NULL;
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
      n += sizeof *e + strlen(e->key) + (e->packed_len ? e->packed_len : e->json ? e->json_len + 1 : 0) + strlen(e->rv) +
           strlen(e->uid) + 3;
  return n;
}
