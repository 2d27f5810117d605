/* Texts a cache keeps unpacked for a while (po_InformerOptions.text_pack_delay_ms): the keys of
 * entries stored with their text as it came, oldest first, each with when it was stored and its
 * size. An object written several times in a row (a PropertyOverride: created, then our
 * finalizer, then our status, all inside a burst's hold) was compressed once per version, each
 * about 65,000 instructions; only the version that stays needs it. The informer's watch thread
 * asks which are due (older than the delay, or the oldest while their sizes together are over
 * the bound) and packs each whose entry its cache still holds; one replaced since is skipped (it
 * was freed unpacked). Private to the informer, used from its one writer thread: no lock. */
#ifndef PO_KUBE_PACK_LATER_H
#define PO_KUBE_PACK_LATER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  char *key;         /* malloc'd */
  const void *entry; /* the cache entry stored unpacked: compared, never dereferenced here */
  size_t bytes;
  int64_t at_ns;
} po_PackLaterItem_;

typedef struct {
  po_PackLaterItem_ *ring;
  size_t head, count, cap;
  size_t bytes;       /* of the pending texts */
  int64_t delay_ns;
  size_t max_bytes;
} po_PackLater_;

void po_PackLater_Init_(po_PackLater_ *p, int64_t delay_ns, size_t max_bytes);
void po_PackLater_Free_(po_PackLater_ *p);
/* Whether a text of `bytes` may wait: never past the bound by itself. */
bool po_PackLater_Fits_(const po_PackLater_ *p, size_t bytes);
/* Notes the entry of key stored unpacked at now_ns. False when out of memory: the caller packs
 * it now. */
bool po_PackLater_Note_(po_PackLater_ *p, const char *key, const void *entry, size_t bytes, int64_t now_ns);
/* The oldest item due at now_ns (older than the delay, or while the pending texts are over the
 * bound), taken out: the caller frees its key. False when none is due. */
bool po_PackLater_Next_(po_PackLater_ *p, int64_t now_ns, po_PackLaterItem_ *out);

#endif
