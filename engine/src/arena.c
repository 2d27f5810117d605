/* po_Arena: a upb arena, so engine data and the Envoy messages it patches share one lifetime. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---- memory running out ----------------------------------------------------------------------
 * A NULL deep in compile, decode or explain cannot always say why it is NULL (a lookup's NULL
 * is "no such field" to its caller). So every po_Arena allocates through this allocator, which
 * records a failure process-wide: a one-shot command asks po_Engine_OutOfMemory before giving
 * a verdict, and says "out of memory" (exit 2) instead of calling a valid input invalid. */
static _Atomic bool g_oom;

static void *recording_func(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  (void)alloc;
  (void)oldsize;
  if (size == 0) {
    free(ptr);
    return NULL;
  }
  void *n = realloc(ptr, size);
  if (!n) g_oom = true;
  return n;
}

static upb_alloc kRecordingAlloc = {recording_func};

void po_Engine_NoteOutOfMemory_(void) { g_oom = true; }

bool po_Engine_OutOfMemory(void) {
  if (g_oom) return true;
  const po_Schema *s = po_Schema_Get(NULL);
  return !s || po_Schema_OutOfMemory(s);
}

po_Arena *po_Arena_New(void) {
  upb_Arena *u = upb_Arena_Init(NULL, 0, &kRecordingAlloc);
  if (!u) g_oom = true;
  po_Arena *a = po_Arena_Wrap(u);
  if (!a) g_oom = true;
  return a;
}

/* The recording allocator that also marks its own po_ArenaTrack: a scratch arena's failure seen
 * by the call that made it, whatever the process-wide flag said before. */
static void *tracking_func(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  void *n = recording_func(alloc, ptr, oldsize, size);
  if (size && !n) ((po_ArenaTrack *)alloc)->failed = true;
  return n;
}

po_Arena *po_Arena_NewTracked_(po_ArenaTrack *t) {
  t->alloc.func = tracking_func;
  t->failed = false;
  upb_Arena *u = upb_Arena_Init(NULL, 0, &t->alloc);
  po_Arena *a = u ? po_Arena_Wrap(u) : NULL;
  if (!a) {
    g_oom = true;
    t->failed = true;
  }
  return a;
}

po_Arena *po_Arena_Wrap(upb_Arena *u) {
  if (!u) return NULL;
  po_Arena *a = upb_Arena_Malloc(u, sizeof *a);
  if (!a) {
    upb_Arena_Free(u);
    return NULL;
  }
  a->upb = u;
  a->rules_memo = NULL;
  return a;
}

void po_Arena_Free(po_Arena *a) {
  if (a) upb_Arena_Free(a->upb);
}

void *po_Arena_Malloc(po_Arena *a, size_t size) {
  void *p = upb_Arena_Malloc(a->upb, size ? size : 1);
  if (p) memset(p, 0, size);
  return p;
}

char *po_Arena_Strndup(po_Arena *a, const char *s, size_t len) {
  char *p = upb_Arena_Malloc(a->upb, len + 1);
  if (!p) return NULL;
  if (len) memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

char *po_Arena_Printf(po_Arena *a, const char *fmt, ...) {
  /* Formatted once into the stack when it fits (nearly always: labels, notes; preview formats
   * one per resource), else measured there and formatted again at its size. */
  char small[256];
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  char *p = n < 0 ? NULL : upb_Arena_Malloc(a->upb, (size_t)n + 1);
  if (p && (size_t)n < sizeof small) memcpy(p, small, (size_t)n + 1);
  else if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

void po_TextBuf_Put(po_TextBuf *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : t->initial ? t->initial : 256;
    while (cap < t->len + n + 1) cap *= 2;
    /* not zeroed: every byte up to len is written before it is read (a memset was 4% of an
     * every-cluster preview) */
    char *nb = upb_Arena_Malloc(t->a->upb, cap);
    if (!nb) {
      t->oom = true;
      return;
    }
    if (t->len) memcpy(nb, t->buf, t->len);
    t->buf = nb;
    t->cap = cap;
  }
  if (n) memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

void po_TextBuf_Puts(po_TextBuf *t, const char *s) { po_TextBuf_Put(t, s, strlen(s)); }
