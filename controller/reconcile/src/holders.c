/* Which Consul targets hold an entry of which PropertyOverride (holders.h). */
#include "holders.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct Held Held;

/* A PropertyOverride's uid and the targets holding an entry of it (usually one). */
typedef struct {
  po_StrNode node; /* first: by_uid's node, keyed by uid */
  Held **at;
  size_t n, cap;
  bool mark; /* named by the update in progress (po_Holders_Set) */
  char uid[];
} Holder;

/* A target and the uids its entries name. */
struct Held {
  po_StrNode node; /* first: by_target's node, keyed by key */
  Holder **of;
  size_t n, cap;
  bool unknown; /* its last update failed: it holds every release (po_Holders.unknown) */
  char key[];
};

static void free_holder(void *ctx, po_StrNode *n) {
  (void)ctx;
  free(((Holder *)n)->at);
  free(n);
}

static void free_held(void *ctx, po_StrNode *n) {
  (void)ctx;
  free(((Held *)n)->of);
  free(n);
}

/* A released PropertyOverride (po_Holders_Claim), in the table and the list by age. */
struct Released {
  po_StrNode node; /* first: released's node, keyed by id */
  struct Released *next;
  long long at;
  char id[];
};

static void free_released(void *ctx, po_StrNode *n) {
  (void)ctx;
  free(n);
}

void po_Holders_Free(po_Holders *h) {
  po_StrTable_ForEach(&h->released, free_released, NULL);
  po_StrTable_Free(&h->released);
  po_StrTable_ForEach(&h->by_uid, free_holder, NULL);
  po_StrTable_ForEach(&h->by_target, free_held, NULL);
  po_StrTable_Free(&h->by_uid);
  po_StrTable_Free(&h->by_target);
}

/* A record of `size` bytes whose string s follows at `at`, linked into t; NULL when out of memory. */
static po_StrNode *node_new(po_StrTable *t, size_t size, size_t at, const char *s) {
  size_t len = strlen(s);
  char *block = calloc(1, size + len + 1);
  if (!block) return NULL;
  memcpy(block + at, s, len + 1);
  po_StrNode *n = (po_StrNode *)block;
  n->key = block + at;
  n->hash = po_StrTable_Hash(n->key);
  if (!po_StrTable_Insert(t, n)) {
    free(block);
    return NULL;
  }
  return n;
}

/* Room for one more link on either side; false when out of memory. */
static bool grow_at(Holder *o) {
  if (o->n < o->cap) return true;
  size_t c = o->cap ? o->cap * 2 : 1;
  Held **a = realloc(o->at, c * sizeof *a);
  if (!a) return false;
  o->at = a;
  o->cap = c;
  return true;
}

static bool grow_of(Held *t) {
  if (t->n < t->cap) return true;
  size_t c = t->cap ? t->cap * 2 : 1;
  Holder **a = realloc(t->of, c * sizeof *a);
  if (!a) return false;
  t->of = a;
  t->cap = c;
  return true;
}

static void drop_holder(po_Holders *h, Holder *o) {
  po_StrTable_Unlink(&h->by_uid, &o->node);
  free_holder(NULL, &o->node);
}

/* Unlinks target t from holder o (the order of either list does not matter). */
static void unlink_pair(po_Holders *h, Held *t, size_t i) {
  Holder *o = t->of[i];
  for (size_t k = 0; k < o->n; k++) {
    if (o->at[k] == t) {
      o->at[k] = o->at[--o->n];
      break;
    }
  }
  t->of[i] = t->of[--t->n];
  if (o->n == 0) drop_holder(h, o);
}

/* A target whose record could not be made (holders.h: lost). */
static void note_lost(po_Holders *h, const char *key) {
  size_t free_at = sizeof h->lost / sizeof h->lost[0], len = strlen(key);
  for (size_t i = 0; i < sizeof h->lost / sizeof h->lost[0]; i++) {
    if (!strcmp(h->lost[i], key)) return;
    if (!h->lost[i][0] && free_at == sizeof h->lost / sizeof h->lost[0]) free_at = i;
  }
  if (free_at == sizeof h->lost / sizeof h->lost[0] || len >= sizeof h->lost[0]) {
    h->overflow = true;
    return;
  }
  memcpy(h->lost[free_at], key, len + 1);
}

static void forget_lost(po_Holders *h, const char *key) {
  for (size_t i = 0; i < sizeof h->lost / sizeof h->lost[0]; i++) {
    if (!strcmp(h->lost[i], key)) h->lost[i][0] = '\0';
  }
}

/* The target's last update failed or succeeded: an unknown one holds every release. */
static void set_unknown(po_Holders *h, Held *t, bool unknown) {
  if (t->unknown == unknown) return;
  t->unknown = unknown;
  if (unknown) h->unknown++;
  else h->unknown--;
}

void po_Holders_Unknown(po_Holders *h, const char *key) {
  Held *t = (Held *)po_StrTable_Find(&h->by_target, key, po_StrTable_Hash(key));
  if (!t) t = (Held *)node_new(&h->by_target, sizeof(Held), offsetof(Held, key), key);
  if (t) set_unknown(h, t, true);
  else note_lost(h, key);
}

bool po_Holders_Set(po_Holders *h, const char *key, const char *const *uids, size_t n, bool exact) {
  Held *t = (Held *)po_StrTable_Find(&h->by_target, key, po_StrTable_Hash(key));
  if (!t && n == 0) {
    if (exact) forget_lost(h, key); /* it holds nothing: known now */
    return true;
  }
  if (!t && !(t = (Held *)node_new(&h->by_target, sizeof(Held), offsetof(Held, key), key))) {
    note_lost(h, key);
    return false;
  }
  bool ok = true;
  /* Every write of a target names all its entries again, mostly in the order the last update
   * named them (a new one among them, or one gone, moves the rest): the leading ids that name the
   * holder already linked at the same place need no hash and no lookup (at 10,000 those lookups'
   * cache misses were most of an update's time). */
  size_t same = 0;
  for (; same < n && same < t->n && uids[same] && *uids[same] && strcmp(t->of[same]->uid, uids[same]) == 0; same++)
    t->of[same]->mark = true;
  for (size_t i = same; i < n; i++) {
    if (!uids[i] || !*uids[i]) continue;
    Holder *o = (Holder *)po_StrTable_Find(&h->by_uid, uids[i], po_StrTable_Hash(uids[i]));
    if (!o && !(o = (Holder *)node_new(&h->by_uid, sizeof(Holder), offsetof(Holder, uid), uids[i]))) {
      ok = false;
      continue;
    }
    bool linked = false;
    for (size_t k = 0; k < o->n && !linked; k++) linked = o->at[k] == t;
    if (!linked && (!grow_at(o) || !grow_of(t))) {
      if (o->n == 0) drop_holder(h, o);
      ok = false;
      continue;
    }
    if (!linked) {
      o->at[o->n++] = t;
      t->of[t->n++] = o;
    }
    o->mark = true;
  }
  /* what the target no longer holds is forgotten only after everything it holds was added: out
   * of memory leaves a superset */
  for (size_t i = t->n; i-- > 0;) {
    if (exact && ok && !t->of[i]->mark) unlink_pair(h, t, i);
    else t->of[i]->mark = false;
  }
  /* an update that failed leaves it holding every release; a whole exact one says all it holds
   * (one that only adds says nothing of what it held before: known or not, as it was) */
  if (!ok) set_unknown(h, t, true);
  else if (exact) set_unknown(h, t, false);
  if (ok && exact) forget_lost(h, key);
  if (t->n == 0 && !t->unknown) {
    po_StrTable_Unlink(&h->by_target, &t->node);
    free_held(NULL, &t->node);
  }
  return ok;
}

/* The unknown targets other than `except`, appended to the list (ctx). */
typedef struct {
  const char *except;
  char *out;
  size_t size, count;
} Unknown;

static void unknown_size(void *ctx, po_StrNode *n) {
  Unknown *u = ctx;
  const Held *t = (const Held *)n;
  if (!t->unknown || (u->except && !strcmp(t->key, u->except))) return;
  u->size += strlen(t->key) + 1;
  u->count++;
}

static void unknown_copy(void *ctx, po_StrNode *n) {
  Unknown *u = ctx;
  const Held *t = (const Held *)n;
  if (!t->unknown || (u->except && !strcmp(t->key, u->except))) return;
  size_t len = strlen(t->key) + 1;
  memcpy(u->out + u->size, t->key, len);
  u->size += len;
}

char *po_Holders_Of(const po_Holders *h, const char *uid, const char *except, size_t *count) {
  *count = 0;
  if (h->overflow) return *count = 1, NULL;
  const Holder *o = uid && *uid ? (const Holder *)po_StrTable_Find(&h->by_uid, uid, po_StrTable_Hash(uid)) : NULL;
  size_t size = 0;
  for (size_t k = 0; o && k < o->n; k++) {
    if ((except && !strcmp(o->at[k]->key, except)) || o->at[k]->unknown) continue; /* unknown: listed below */
    size += strlen(o->at[k]->key) + 1;
    (*count)++;
  }
  /* the unknown ones (a walk of the targets only while some are: an out of memory moment) */
  Unknown u = {except, NULL, 0, 0};
  if (h->unknown) po_StrTable_ForEach(&h->by_target, unknown_size, &u);
  for (size_t i = 0; i < sizeof h->lost / sizeof h->lost[0]; i++) {
    if (h->lost[i][0] && (!except || strcmp(h->lost[i], except) != 0)) u.size += strlen(h->lost[i]) + 1, u.count++;
  }
  *count += u.count;
  size += u.size;
  if (!*count) return NULL;
  char *out = malloc(size), *p = out;
  for (size_t k = 0; out && o && k < o->n; k++) {
    if ((except && !strcmp(o->at[k]->key, except)) || o->at[k]->unknown) continue;
    size_t len = strlen(o->at[k]->key) + 1;
    memcpy(p, o->at[k]->key, len);
    p += len;
  }
  if (out && u.count) {
    u.out = p;
    u.size = 0;
    if (h->unknown) po_StrTable_ForEach(&h->by_target, unknown_copy, &u);
    for (size_t i = 0; i < sizeof h->lost / sizeof h->lost[0]; i++) {
      if (!h->lost[i][0] || (except && !strcmp(h->lost[i], except))) continue;
      size_t len = strlen(h->lost[i]) + 1;
      memcpy(u.out + u.size, h->lost[i], len);
      u.size += len;
    }
  }
  return out;
}

/* id remembered as released at now_s (those past their time forgotten first: a reconcile
 * planned before them is long over); false when out of memory. */
static bool remember(po_Holders *h, const char *id, long long now_s) {
  while (h->oldest && h->oldest->at + kPo_HoldersReleasedS < now_s) {
    struct Released *r = h->oldest;
    h->oldest = r->next;
    if (!h->oldest) h->newest = NULL;
    po_StrTable_Unlink(&h->released, &r->node);
    free(r);
  }
  if (po_StrTable_Find(&h->released, id, po_StrTable_Hash(id))) return true;
  struct Released *r = (struct Released *)node_new(&h->released, sizeof *r, offsetof(struct Released, id), id);
  if (!r) return false;
  r->at = now_s;
  if (h->newest) h->newest->next = r;
  else h->oldest = r;
  h->newest = r;
  return true;
}

char *po_Holders_Claim(po_Holders *h, const char *id, const char *except, long long now_s, size_t *count) {
  char *keys = po_Holders_Of(h, id, except, count);
  if (*count) return keys;
  if (!remember(h, id, now_s)) *count = 1;
  return NULL;
}

char *po_Holders_Vanished(po_Holders *h, const char *id, long long now_s, size_t *count, bool *remembered) {
  *remembered = remember(h, id, now_s);
  return po_Holders_Of(h, id, NULL, count);
}

bool po_Holders_Released(const po_Holders *h, const char *id) {
  return h->oldest && po_StrTable_Find(&h->released, id, po_StrTable_Hash(id)) != NULL;
}

bool po_Holders_Writing(po_Holders *h, const char *key, const char *const *ids, size_t n, bool *ok) {
  for (size_t i = 0; h->oldest && i < n; i++) {
    if (po_StrTable_Find(&h->released, ids[i], po_StrTable_Hash(ids[i]))) return false;
  }
  *ok = po_Holders_Set(h, key, ids, n, false);
  return true;
}

static void holder_bytes(void *ctx, po_StrNode *n) {
  const Holder *o = (const Holder *)n;
  *(size_t *)ctx += sizeof *o + strlen(o->uid) + 1 + o->cap * sizeof *o->at;
}

static void held_bytes(void *ctx, po_StrNode *n) {
  const Held *t = (const Held *)n;
  *(size_t *)ctx += sizeof *t + strlen(t->key) + 1 + t->cap * sizeof *t->of;
}

size_t po_Holders_Bytes(const po_Holders *h) {
  size_t b = (h->by_uid.nslots + h->by_target.nslots) * sizeof(po_StrNode *);
  po_StrTable_ForEach(&h->by_uid, holder_bytes, &b);
  po_StrTable_ForEach(&h->by_target, held_bytes, &b);
  return b;
}
