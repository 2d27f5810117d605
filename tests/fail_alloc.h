/* One allocation made to fail, for tests that sweep every allocation of a call: a test binary
 * that includes this (once, in one file) replaces malloc, calloc, realloc and free with glibc's
 * own, except that the allocation numbered g_fail_at (1-based, counted from the last reset of
 * g_count) returns NULL. The counters are this test binary's process state alone: the allocator
 * has no context to hand them through. Not for sanitizer builds (their allocator is not glibc's). */
#ifndef PO_TESTS_FAIL_ALLOC_H
#define PO_TESTS_FAIL_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static long g_fail_at = -1, g_count;
static bool fails(void) { return g_fail_at > 0 && ++g_count == g_fail_at; }
void *malloc(size_t n) { return fails() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fails() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fails() ? NULL : __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

#endif
