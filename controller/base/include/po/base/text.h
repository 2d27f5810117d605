/* A message composed by appending into a caller's buffer, cut as snprintf cuts (at most cap - 1
 * bytes, always ended). For the texts every reconcile makes for every PropertyOverride of its
 * target (statuses, overlap sentences): snprintf cost thousands of instructions a call there. */
#ifndef PO_BASE_TEXT_H
#define PO_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  char *p;
  size_t cap, len;
} po_Text;

/* An empty text in p (cap bytes; cap 0 writes nothing). */
static inline po_Text po_Text_At(char *p, size_t cap) {
  if (cap) p[0] = '\0';
  return (po_Text){p, cap, 0};
}
static inline void po_Text_PutN(po_Text *t, const char *s, size_t n) {
  if (t->len + 1 >= t->cap) return;
  size_t room = t->cap - 1 - t->len;
  if (n > room) n = room;
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}
static inline void po_Text_Put(po_Text *t, const char *s) { po_Text_PutN(t, s, strlen(s)); }
/* A decimal, as %lld and %zu write it. */
static inline void po_Text_PutNum(po_Text *t, bool negative, unsigned long long v) {
  char d[24];
  size_t i = sizeof d;
  do d[--i] = (char)('0' + v % 10), v /= 10;
  while (v);
  if (negative) d[--i] = '-';
  po_Text_PutN(t, d + i, sizeof d - i);
}
static inline void po_Text_PutI64(po_Text *t, int64_t v) {
  po_Text_PutNum(t, v < 0, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
}
static inline void po_Text_PutSize(po_Text *t, size_t v) { po_Text_PutNum(t, false, v); }

#endif
