#include "po/targets/text.h"

#include <stdio.h>
#include <string.h>

void po_Text_Init(po_Text *t, po_Arena *a, size_t max_items, size_t max_bytes) {
  memset(t, 0, sizeof *t);
  t->t.a = a;
  t->max_items = max_items ? max_items : 1;
  t->max_bytes = max_bytes ? max_bytes : 1;
}

static void put(po_Text *t, const char *s, size_t n) { po_TextBuf_Put(&t->t, s, n); }

/* The longest prefix of s[0..n) that is at most `max` bytes and ends on a UTF-8 boundary. */
static size_t utf8_prefix(const char *s, size_t n, size_t max) {
  if (n <= max) return n;
  size_t k = max;
  while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
  return k;
}

bool po_Text_HasRoom(const po_Text *t, size_t weight) {
  return !t->full && t->items + weight <= t->max_items && (t->t.len == 0 || t->t.len < t->max_bytes);
}

bool po_Text_Fits(const po_Text *t, const char *s, size_t weight) {
  size_t n = strlen(s);
  if (t->t.len == 0 && t->items == 0) return n <= t->max_bytes && weight <= t->max_items;
  return !t->full && t->items + weight <= t->max_items && t->t.len + 1 + n <= t->max_bytes;
}

bool po_Text_Item(po_Text *t, const char *s, size_t weight) {
  size_t n = strlen(s);
  if (t->t.len == 0 && t->items == 0) {
    size_t k = utf8_prefix(s, n, t->max_bytes);
    put(t, s, k);
    if (k < n) put(t, " [...]", 6);
    t->items += weight;
    return true;
  }
  if (t->full || t->items + weight > t->max_items || t->t.len + 1 + n > t->max_bytes) {
    t->full = true;
    t->omitted += weight;
    return false;
  }
  put(t, "\n", 1);
  put(t, s, n);
  t->items += weight;
  return true;
}

void po_Text_Skip(po_Text *t, size_t weight) {
  t->full = true;
  t->omitted += weight;
}

const char *po_Text_Finish(po_Text *t, const char *noun) {
  if (t->t.oom) return "out of memory";
  if (t->t.len == 0 && t->items == 0) return NULL;
  if (t->omitted) {
    char tail[128];
    snprintf(tail, sizeof tail, "\n... and %zu more %s%s", t->omitted, noun, t->omitted == 1 ? "" : "s");
    put(t, tail, strlen(tail));
    if (t->t.oom) return "out of memory";
  }
  return t->t.buf;
}
