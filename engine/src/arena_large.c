/* po_Arena_NewLarge: an arena for one input of many megabytes (preview's /config_dump), whose big
 * blocks are mapped with transparent huge pages.
 *
 * Why: upb's arena doubles its blocks, so a 14.5 MB dump ends in blocks of 29, 58 and 116 MB
 * from malloc, i.e. fresh mmaps in 4 KB pages: about 30,000 page faults for the 117 MB it
 * touches, 0.2-0.3 s of sys time on this machine (a fault costs microseconds on a busy VM,
 * not the 0.4 us of zeroing the page), and as many TLB misses when upb's decoder walks the
 * tree. The memory is all used (the dump's decoded tree), so there is no smaller amount to
 * touch; touching it in 2 MB pages takes about 60 faults for the same bytes (measured:
 * docs/benchmarks.md, preview, "huge pages"). Where the kernel has no transparent huge pages,
 * or has none free, madvise changes nothing and the blocks are ordinary pages.
 *
 * Blocks below kLarge come from malloc (small arenas cost what they always did). Every block
 * starts with a header saying how it was obtained: upb frees a block without its size. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* A huge page on x86-64 and on arm64 with 4 KB pages; below it a block gains nothing. */
enum { kLarge = 2 << 20 };

/* Under AddressSanitizer every block comes from malloc: ASan sees an overrun past a malloc'd
 * block (its redzone), not past the end of a private mapping, so the sanitizer stages keep
 * checking what the Release build maps. */
#if defined(__SANITIZE_ADDRESS__)
#define PO_ARENA_LARGE_MAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PO_ARENA_LARGE_MAPS 0
#endif
#endif
#ifndef PO_ARENA_LARGE_MAPS
#define PO_ARENA_LARGE_MAPS 1
#endif

typedef struct {
  size_t size;   /* what the block's user asked for */
  size_t mapped; /* the length of the mapping; 0 when malloc'd */
} Head;          /* 16 bytes: keeps the 16-byte alignment upb's blocks need */

static void *large_map(size_t size) {
  size_t len = (sizeof(Head) + size + kLarge - 1) / kLarge * kLarge;
  if (len < size) return NULL; /* overflow */
  /* One huge page more than needed, then the unaligned ends are unmapped: a huge page can only
   * back a 2 MB-aligned range. */
  char *raw = mmap(NULL, len + kLarge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *base = (char *)(((uintptr_t)raw + kLarge - 1) & ~(uintptr_t)(kLarge - 1));
  if (base > raw) munmap(raw, (size_t)(base - raw));
  if (raw + len + kLarge > base + len) munmap(base + len, (size_t)(raw + len + kLarge - (base + len)));
  (void)madvise(base, len, MADV_HUGEPAGE); /* advice: refused where there are no huge pages */
  Head *h = (Head *)base;
  *h = (Head){size, len};
  return h + 1;
}

static void large_free(void *p) {
  if (!p) return;
  Head *h = (Head *)p - 1;
  if (h->mapped) munmap(h, h->mapped);
  else free(h);
}

static void *large_alloc(size_t size) {
  if (PO_ARENA_LARGE_MAPS && size >= kLarge) return large_map(size);
  if (size > SIZE_MAX - sizeof(Head)) return NULL;
  Head *h = malloc(sizeof(Head) + size);
  if (!h) return NULL;
  *h = (Head){size, 0};
  return h + 1;
}

/* upb's allocator interface: size 0 frees, a NULL ptr allocates, otherwise a resize (upb's
 * arena never resizes its blocks; done by copy for completeness). */
static void *large_func(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  (void)oldsize;
  if (size == 0) {
    large_free(ptr);
    return NULL;
  }
  void *n = large_alloc(size);
  if (!n) ((po_ArenaTrack *)alloc)->failed = true; /* as po_Arena_New's arenas record it */
  if (n && ptr) {
    size_t had = ((Head *)ptr - 1)->size;
    memcpy(n, ptr, had < size ? had : size);
    large_free(ptr);
  }
  return n;
}

po_Arena *po_Arena_NewLarge(void) { return po_Arena_NewOwnTrack_(large_func); }
