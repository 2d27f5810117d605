/* A target's digest kept by the index (digest.h): one allocation, its slots packed (the strings by
 * their offsets in one block after them, the empty namespace of a target's own PropertyOverrides
 * shared), and given back into a reconcile's arena with pointers, so the kept one is never shared
 * with a reconcile in flight. At 50 entries of 36-byte uids: about 95 bytes an entry kept, 116
 * with the slots as a reconcile reads them (test_memory_per_override). */
#include "digest.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  uint8_t mark;
  bool ext, exact, required;
  int32_t priority;
  uint32_t patches;
  uint32_t owner, uid, ns; /* offsets into the strings ("" at 0) */
  int64_t generation;
  po_JsonHash hash;
} Packed;

struct po_TargetDigestKept {
  po_TargetDigest head; /* slots NULL: `packed` holds them */
  size_t strings_len;
  Packed packed[];      /* head.n, then the strings */
};

static size_t strings_size(const po_TargetDigest *d) {
  size_t n = 1; /* the shared "" */
  for (size_t i = 0; i < d->n; i++) {
    const po_TargetSlot *s = &d->slots[i];
    if (s->mark != kPo_Slot_Bound) continue;
    n += strlen(s->owner) + strlen(s->uid) + 2;
    if (s->ns && *s->ns) n += strlen(s->ns) + 1;
  }
  return n;
}

static uint32_t put_string(char *strings, size_t *at, const char *s) {
  if (!s || !*s) return 0;
  size_t l = strlen(s) + 1, off = *at;
  memcpy(strings + off, s, l);
  *at += l;
  return (uint32_t)off;
}

po_TargetDigestKept *po_TargetDigest_Keep(const po_TargetDigest *d) {
  if (!d) return NULL;
  size_t slen = strings_size(d);
  if (slen > UINT32_MAX) return NULL;
  po_TargetDigestKept *k = malloc(sizeof *k + d->n * sizeof *k->packed + slen);
  if (!k) return NULL;
  k->head = *d;
  k->head.slots = NULL;
  k->strings_len = slen;
  char *strings = (char *)(k->packed + d->n);
  size_t at = 1;
  strings[0] = '\0';
  for (size_t i = 0; i < d->n; i++) {
    const po_TargetSlot *s = &d->slots[i];
    Packed *p = &k->packed[i];
    *p = (Packed){.mark = s->mark, .ext = s->ext, .exact = s->exact, .required = s->required, .priority = s->priority,
                  .patches = s->patches, .generation = s->generation, .hash = s->hash};
    if (s->mark != kPo_Slot_Bound) continue;
    p->owner = put_string(strings, &at, s->owner);
    p->uid = put_string(strings, &at, s->uid);
    p->ns = put_string(strings, &at, s->ns);
  }
  return k;
}

const po_TargetDigest *po_TargetDigest_Head(const po_TargetDigestKept *k) { return &k->head; }

bool po_TargetDigest_CopyTo(const po_TargetDigestKept *k, po_Arena *a, po_TargetDigest *out) {
  size_t n = k->head.n;
  po_TargetSlot *slots = po_Arena_Malloc(a, (n ? n : 1) * sizeof *slots);
  char *strings = po_Arena_Malloc(a, k->strings_len);
  if (!slots || !strings) return false;
  memcpy(strings, k->packed + n, k->strings_len);
  for (size_t i = 0; i < n; i++) {
    const Packed *p = &k->packed[i];
    slots[i] = (po_TargetSlot){.mark = p->mark, .ext = p->ext, .exact = p->exact, .required = p->required,
                               .priority = p->priority, .patches = p->patches, .generation = p->generation, .hash = p->hash};
    if (p->mark != kPo_Slot_Bound) continue;
    slots[i].owner = strings + p->owner;
    slots[i].uid = strings + p->uid;
    slots[i].ns = strings + p->ns;
  }
  *out = k->head;
  out->slots = slots;
  return true;
}
