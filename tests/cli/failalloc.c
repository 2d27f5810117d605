/* LD_PRELOAD shim for t_render_oom.sh: PO_FAIL_ALLOC_AT=N makes the Nth allocation of the
 * process (malloc, calloc or realloc, counted together) return NULL; PO_COUNT_ALLOC=FILE writes
 * the number of allocations made to FILE at exit, so the script knows how far to go. glibc lets
 * a preloaded library define the allocator and reach its own through the __libc_ names. */
#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static long g_count, g_fail_at = -2; /* -2: not read yet; -1: never fail */

static int fails(void) {
  if (g_fail_at == -2) {
    const char *e = getenv("PO_FAIL_ALLOC_AT"); /* getenv does not allocate */
    g_fail_at = e && *e ? strtol(e, NULL, 10) : -1;
  }
  if (++g_count != g_fail_at) return 0;
  errno = ENOMEM; /* as glibc's own allocator does: fopen and friends report it through errno */
  if (getenv("PO_FAIL_ALLOC_TRACE")) { /* where it failed, for a failure to debug */
    void *b[16];
    backtrace_symbols_fd(b, backtrace(b, 16), 2);
  }
  return 1;
}

void *malloc(size_t n) { return fails() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fails() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fails() ? NULL : __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

__attribute__((destructor)) static void report(void) {
  const char *f = getenv("PO_COUNT_ALLOC");
  if (!f || !*f) return;
  long n = g_count;
  FILE *o = fopen(f, "w");
  if (o) {
    fprintf(o, "%ld\n", n);
    fclose(o);
  }
}
