/* A target's digest kept by the index (digest.h): one allocation holding the slots and their
 * strings, copied into a reconcile's arena when read, so the kept one is never shared with a
 * reconcile in flight. */
#include "digest.h"

#include <stdlib.h>
#include <string.h>

/* The bytes of d's strings (each with its NUL). */
static size_t strings_size(const po_TargetDigest *d) {
  size_t n = 0;
  for (size_t i = 0; i < d->n; i++) {
    const po_TargetSlot *s = &d->slots[i];
    if (s->mark == kPo_Slot_Bound) n += strlen(s->owner) + strlen(s->uid) + strlen(s->ns) + 3;
  }
  return n;
}

static const char *put_string(char **at, const char *s) {
  size_t l = strlen(s) + 1;
  memcpy(*at, s, l);
  const char *r = *at;
  *at += l;
  return r;
}

/* d copied into mem (sizeof *d, the slots, then the strings), the copy returned. */
static po_TargetDigest *flatten(const po_TargetDigest *d, void *mem) {
  po_TargetDigest *c = mem;
  *c = *d;
  c->slots = (po_TargetSlot *)(c + 1);
  char *at = (char *)(c->slots + d->n);
  for (size_t i = 0; i < d->n; i++) {
    po_TargetSlot *s = &c->slots[i];
    *s = d->slots[i];
    if (s->mark != kPo_Slot_Bound) {
      s->owner = s->uid = s->ns = NULL;
      continue;
    }
    s->owner = put_string(&at, s->owner);
    s->uid = put_string(&at, s->uid);
    s->ns = put_string(&at, s->ns ? s->ns : "");
  }
  return c;
}

static size_t bytes_of(const po_TargetDigest *d) { return sizeof *d + d->n * sizeof *d->slots + strings_size(d); }

po_TargetDigest *po_TargetDigest_Keep(const po_TargetDigest *d) {
  void *mem = d ? malloc(bytes_of(d)) : NULL;
  return mem ? flatten(d, mem) : NULL;
}

bool po_TargetDigest_CopyTo(const po_TargetDigest *kept, po_Arena *a, po_TargetDigest *out) {
  void *mem = po_Arena_Malloc(a, bytes_of(kept));
  if (!mem) return false;
  *out = *flatten(kept, mem);
  return true;
}
