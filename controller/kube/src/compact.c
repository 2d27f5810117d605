/* zstd over a shared dictionary, with each thread's own contexts and buffers. */
#include "compact.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Level 1 unless the informer says otherwise, measured on PropertyOverride texts
 * (tests/kube/test_kube_compact.c prints the sizes): higher levels gained a few percent at two to
 * four times the time, and each of a PropertyOverride's ~3 watch events per create is compressed
 * once. */
enum { kDefaultLevel = 1 };

struct po_TextCodec_ {
  ZSTD_CDict *cdict; /* NULL: no dictionary */
  ZSTD_DDict *ddict;
  int level;
};

/* One thread's contexts and buffers: the packed bytes of its last Pack, the text of its last Unpack. */
typedef struct {
  ZSTD_CCtx *cctx;
  ZSTD_DCtx *dctx;
  char *pack, *text;
  size_t pack_cap, text_cap;
} Scratch;

static pthread_key_t g_scratch_key;
static pthread_once_t g_scratch_once = PTHREAD_ONCE_INIT;
static bool g_scratch_key_ok;

static void free_scratch(void *p) {
  Scratch *s = p;
  ZSTD_freeCCtx(s->cctx);
  ZSTD_freeDCtx(s->dctx);
  free(s->pack);
  free(s->text);
  free(s);
}

static void make_scratch_key(void) { g_scratch_key_ok = pthread_key_create(&g_scratch_key, free_scratch) == 0; }

static Scratch *scratch(void) {
  pthread_once(&g_scratch_once, make_scratch_key);
  if (!g_scratch_key_ok) return NULL;
  Scratch *s = pthread_getspecific(g_scratch_key);
  if (s) return s;
  if (!(s = calloc(1, sizeof *s))) return NULL;
  if (pthread_setspecific(g_scratch_key, s) != 0) {
    free(s);
    return NULL;
  }
  return s;
}

/* buf grown to at least n bytes (doubling: a thread's largest text sets its size). */
static bool reserve(char **buf, size_t *cap, size_t n) {
  if (*cap >= n) return true;
  size_t c = *cap ? *cap : 4096;
  while (c < n) c *= 2;
  char *p = realloc(*buf, c);
  if (!p) return false;
  *buf = p;
  *cap = c;
  return true;
}

po_TextCodec_ *po_TextCodec_New_(const void *dict, size_t dict_len, int level) {
  po_TextCodec_ *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->level = level ? level : kDefaultLevel;
  if (!dict || !dict_len) return c;
  /* Raw content (zstd's auto mode: bytes that do not start with its dictionary magic), copied. */
  c->cdict = ZSTD_createCDict(dict, dict_len, c->level);
  c->ddict = ZSTD_createDDict(dict, dict_len);
  if (!c->cdict || !c->ddict) {
    po_TextCodec_Free_(c);
    return NULL;
  }
  return c;
}

void po_TextCodec_Free_(po_TextCodec_ *c) {
  if (!c) return;
  ZSTD_freeCDict(c->cdict);
  ZSTD_freeDDict(c->ddict);
  free(c);
}

/* Both pieces streamed into one frame at `level`, into the thread's buffer: the text around a cut
 * is never joined in a copy. The frame records no content size and no checksum (the entry keeps
 * the size; 4 bytes each saved). 0 when it is not smaller than the text, or failed. */
static size_t pack_at(const po_TextCodec_ *c, Scratch *s, int level, const char *a, size_t alen, const char *b, size_t blen) {
  size_t n = alen + blen;
  ZSTD_CCtx *z = s->cctx;
  ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
  if (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 0)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_dictIDFlag, 0)) ||
      (c->cdict && ZSTD_isError(ZSTD_CCtx_refCDict(z, c->cdict))))
    return 0;
  /* Output bounded by the text's own size: a text that does not shrink is kept as it is. */
  ZSTD_outBuffer o = {s->pack, n, 0};
  ZSTD_inBuffer in = {a, alen, 0};
  while (in.pos < in.size) {
    size_t r = ZSTD_compressStream2(z, &o, &in, ZSTD_e_continue);
    if (ZSTD_isError(r) || (o.pos == o.size && in.pos < in.size)) return 0;
  }
  in = (ZSTD_inBuffer){b, blen, 0};
  for (;;) {
    size_t r = ZSTD_compressStream2(z, &o, &in, ZSTD_e_end);
    if (ZSTD_isError(r)) return 0;
    if (r == 0) break;
    if (o.pos == o.size) return 0; /* more to flush, no room left: not smaller */
  }
  return o.pos < n ? o.pos : 0;
}

/* A negative level does not entropy-code literals: a foreign blob of hex, digits, base64 or
 * random UTF-8 in a target then barely shrinks or not at all (1.5 MB of hex kept whole, against
 * 0.74 MB at level 1). Such a text, one the fast level left at more than half its size, is packed
 * again at level 1 (test_kube_compact_targets' test_foreign_text_keeps_level_one_size). Not under
 * kRetryFrom bytes, where the most that pass could save is a few hundred bytes and it would cost
 * a small target's store three times the instructions (a target of one of the controller's
 * entries, 0.9 KB, keeps 0.59 of itself at -3: 24 K instructions a store, 81 K with a second
 * pass); the controller's larger targets shrink to a fifth or less and never take it. */
enum { kRetryFrom = 4096 };
size_t po_TextCodec_Pack_(const po_TextCodec_ *c, const char *a, size_t alen, const char *b, size_t blen,
                          const char **out) {
  Scratch *s = scratch();
  size_t n = alen + blen;
  if (!s || (!s->cctx && !(s->cctx = ZSTD_createCCtx())) || !reserve(&s->pack, &s->pack_cap, n)) return 0;
  size_t k = pack_at(c, s, c->level, a, alen, b, blen);
  if (c->level < kDefaultLevel && !c->cdict && n >= kRetryFrom && (k == 0 || k > n / 2)) {
    size_t fast = k;
    k = pack_at(c, s, kDefaultLevel, a, alen, b, blen);
    if (fast && (k == 0 || k >= fast)) k = pack_at(c, s, c->level, a, alen, b, blen); /* rare: the fast one was smaller */
  }
  if (k == 0) return 0;
  *out = s->pack;
  return k;
}

const char *po_TextCodec_Unpack_(const po_TextCodec_ *c, const char *packed, size_t len, size_t raw_len) {
  Scratch *s = scratch();
  if (!s || (!s->dctx && !(s->dctx = ZSTD_createDCtx())) || !reserve(&s->text, &s->text_cap, raw_len + 1)) return NULL;
  ZSTD_DCtx *z = s->dctx;
  ZSTD_DCtx_reset(z, ZSTD_reset_session_and_parameters);
  if (c->ddict && ZSTD_isError(ZSTD_DCtx_refDDict(z, c->ddict))) return NULL;
  ZSTD_outBuffer o = {s->text, raw_len, 0};
  ZSTD_inBuffer in = {packed, len, 0};
  size_t r = ZSTD_decompressStream(z, &o, &in);
  if (ZSTD_isError(r) || r != 0 || o.pos != raw_len || in.pos != len) return NULL;
  s->text[raw_len] = '\0';
  return s->text;
}
