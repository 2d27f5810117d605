/* A cache's texts kept compressed (zstd, with a dictionary of what the kind's objects look like).
 *
 * Why: a PropertyOverride's text is ~2.5 KB on a real API server (managedFields already cut),
 * most of it the same keys and the same sentences as every other one (its status: the conditions'
 * messages, lastValid repeating the spec), and at 100,000 those texts were the largest part of
 * the controller's memory. Compressed against a dictionary of that shape they keep a fraction of
 * it, and give back the exact bytes (zstd is lossless): every reader sees what the server sent.
 *
 * The dictionary and its prepared forms are read-only once made and shared by every thread; the
 * compression and decompression contexts and the text buffer are each thread's own (thread-local,
 * freed when the thread ends). */
#ifndef PO_KUBE_COMPACT_H
#define PO_KUBE_COMPACT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct po_TextCodec_ po_TextCodec_;

/* dict: raw content (any bytes not starting with zstd's dictionary magic number; the more like
 * the texts, the smaller they keep), copied; NULL or empty: none. NULL when out of memory. */
po_TextCodec_ *po_TextCodec_New_(const void *dict, size_t dict_len, int level);
void po_TextCodec_Free_(po_TextCodec_ *c);

/* Compresses the text made of a[0..alen) then b[0..blen) (the text around a cut) into the calling
 * thread's buffer; *out is valid until the thread's next call into this file. Returns the
 * compressed size, or 0 when compressing failed or would not be smaller (the caller keeps the
 * text as it is). */
size_t po_TextCodec_Pack_(const po_TextCodec_ *c, const char *a, size_t alen, const char *b, size_t blen,
                          const char **out);

/* The text of packed[0..len), raw_len bytes then a NUL, in the calling thread's buffer (valid
 * until the thread's next call into this file); NULL when out of memory or when the bytes are
 * not what Pack made (never, for an entry of the cache). */
const char *po_TextCodec_Unpack_(const po_TextCodec_ *c, const char *packed, size_t len, size_t raw_len);

#endif
