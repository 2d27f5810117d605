/* po_Arena: a upb arena, so engine data and the Envoy messages it patches share one lifetime. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "upb/internal/upb.h" /* upb_Arena.last_size: po_Arena_NewFitted */

/* ---- memory running out ----------------------------------------------------------------------
 * A NULL deep in compile, decode or explain cannot always say why it is NULL (a lookup's NULL
 * is "no such field" to its caller). So every po_Arena allocates through an allocator that
 * records a failure in the arena's own po_ArenaTrack: a one-shot command asks
 * po_Engine_OutOfMemory of the arenas it used before giving a verdict, and says "out of memory"
 * (exit 2) instead of calling a valid input invalid. Per arena, never process-wide: two callers
 * (threads, tests) never see each other's failures. */
static void *recording_func(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  (void)oldsize;
  if (size == 0) {
    free(ptr);
    return NULL;
  }
  void *n = realloc(ptr, size);
  if (!n) ((po_ArenaTrack *)alloc)->failed = true;
  return n;
}

void po_Arena_NoteOutOfMemory_(po_Arena *a) {
  if (a) a->noted_oom = true;
}

bool po_Engine_OutOfMemory(const po_Arena *a) {
  if (a && (a->noted_oom || (a->alloc_failed && *a->alloc_failed))) return true;
  /* A snapshot that did not load is noted in the asking call's arena (po_EnvoyApi_Schema_); only
   * an on-demand schema (a one-shot process's) keeps a failure of its own. */
  return po_EnvoyApi_OnDemandOutOfMemory_();
}

po_Arena *po_Arena_NewOwnTrack_(upb_alloc_func *func) {
  /* the record outlives every allocation of the arena, so it cannot live in it */
  po_ArenaTrack *t = malloc(sizeof *t);
  if (!t) return NULL;
  *t = (po_ArenaTrack){{func}, false};
  po_Arena *a = po_Arena_Wrap(upb_Arena_Init(NULL, 0, &t->alloc), &t->failed);
  if (!a) {
    free(t);
    return NULL;
  }
  a->owned = t;
  return a;
}

po_Arena *po_Arena_New(void) { return po_Arena_NewOwnTrack_(recording_func); }

/* ---- fitted arenas (engine.h) -------------------------------------------------------------
 * One malloc holds the allocator's record, what the arena took beyond it and the first block;
 * the arena owns it (po_Arena.owned: freed after upb frees the later blocks). */
typedef struct {
  po_ArenaTrack track; /* first: the upb_alloc upb calls is its first member */
  size_t first;        /* the first block's bytes */
  size_t later;        /* bytes of the blocks upb asked for after it */
} Fitted;

enum { kFitDefault = 1024, kFitMin = 256, kFitMax = 64 << 10 };

static void *fitted_func(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  if (!ptr && size) ((Fitted *)alloc)->later += size; /* upb only allocates and frees blocks */
  return recording_func(alloc, ptr, oldsize, size);
}

po_Arena *po_Arena_NewFitted(po_ArenaFit *fit) {
  size_t first = __atomic_load_n(&fit->first, __ATOMIC_RELAXED);
  if (!first) first = kFitDefault;
  Fitted *f = malloc(sizeof *f + first);
  if (!f) return NULL;
  *f = (Fitted){{{fitted_func}, false}, first, 0};
  upb_Arena *u = upb_Arena_Init(f + 1, first, &f->track.alloc);
  if (u) {
    /* upb sizes the next block at twice the last: after a first block of the fit, an arena that
     * needs a few bytes more would take another fit and a half. From 256 bytes up, outgrowing
     * the fit costs about what is used beyond it. */
    u->last_size = 128;
    /* upb_Arena_Init leaves this unset on a caller's block (its own first block sets it), and
     * the first block upb adds reads it (valgrind, test_engine_arena). */
    u->freelist_tail = NULL;
  }
  po_Arena *a = po_Arena_Wrap(u, &f->track.failed);
  if (!a) {
    free(f);
    return NULL;
  }
  a->owned = f;
  a->fitted = true;
  return a;
}

void po_ArenaFit_Learn(po_ArenaFit *fit, po_Arena *a) {
  if (!a || !a->fitted) return;
  const Fitted *f = a->owned;
  /* What the arena needed: all it took but the room left in its last block (space left behind in
   * an earlier block counts as needed: the next arena's one block would not have that gap). */
  size_t need = f->first + f->later - _upb_ArenaHas(a->upb), want = need + need / 32;
  if (want < kFitMin) want = kFitMin;
  if (want > kFitMax) want = kFitMax;
  size_t cur = __atomic_load_n(&fit->first, __ATOMIC_RELAXED);
  if (!cur) cur = kFitDefault;
  /* A moving average, not the largest: a larger object than the fit grows its arena by what it
   * needs more (po_Arena_NewFitted), while a fit at the largest would give every smaller one
   * that much. Objects of one shape converge on their need in a few dozen arenas. */
  size_t next = want >= cur ? cur + (want - cur) / 8 + 1 : cur - (cur - want) / 8;
  __atomic_store_n(&fit->first, (next + 15) / 16 * 16, __ATOMIC_RELAXED);
}

size_t po_Arena_Footprint(const po_Arena *a) {
  if (!a || !a->fitted) return 0;
  const Fitted *f = a->owned;
  return sizeof *f + f->first + f->later;
}

po_Arena *po_Arena_NewTracked_(po_ArenaTrack *t) {
  t->alloc.func = recording_func;
  t->failed = false;
  po_Arena *a = po_Arena_Wrap(upb_Arena_Init(NULL, 0, &t->alloc), &t->failed);
  if (!a) t->failed = true;
  return a;
}

po_Arena *po_Arena_Wrap(upb_Arena *u, const bool *failed) {
  if (!u) return NULL;
  po_Arena *a = upb_Arena_Malloc(u, sizeof *a);
  if (!a) {
    upb_Arena_Free(u);
    return NULL;
  }
  *a = (po_Arena){.upb = u, .alloc_failed = failed};
  return a;
}

void po_Arena_Free(po_Arena *a) {
  if (!a) return;
  void *owned = a->owned; /* a lives in the arena: read before it goes */
  upb_Arena_Free(a->upb);
  free(owned);
}

void po_Arena_FreeInto(po_Arena *a, po_Arena *into) {
  if (a && into && (a->noted_oom || (a->alloc_failed && *a->alloc_failed))) into->noted_oom = true;
  po_Arena_Free(a);
}

void *po_Arena_Malloc(po_Arena *a, size_t size) {
  void *p = upb_Arena_Malloc(a->upb, size ? size : 1);
  if (p) memset(p, 0, size);
  return p;
}

void *po_Arena_Grow(po_Arena *a, void *items, size_t count, size_t *cap, size_t size, size_t first) {
  if (count < *cap) return items;
  size_t n = *cap ? *cap * 2 : first;
  if (!n || n < *cap || n > SIZE_MAX / (size ? size : 1)) return NULL;
  void *bigger = upb_Arena_Malloc(a->upb, n * size);
  if (!bigger) return NULL;
  if (count) memcpy(bigger, items, count * size);
  *cap = n;
  return bigger;
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
