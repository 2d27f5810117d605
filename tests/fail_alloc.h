/* One allocation made to fail, for tests that sweep every allocation of a call: a test binary
 * that includes this (once, in one file) replaces malloc, calloc, realloc and free with glibc's
 * own, except that the allocation numbered g_fail_at (1-based, counted from the last reset of
 * g_count) returns NULL. The counters are this test binary's process state alone: the allocator
 * has no context to hand them through. Not for sanitizer builds (their allocator is not glibc's). */
#ifndef PO_TESTS_FAIL_ALLOC_H
#define PO_TESTS_FAIL_ALLOC_H

#include <execinfo.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static long g_fail_at = -1, g_count;
/* PO_OOM_TRACE=1 prints where the failing allocation was made (addr2line -f -e <test> <offset>). */
static bool fails(void) {
  bool f = g_fail_at > 0 && ++g_count == g_fail_at;
  if (f && getenv("PO_OOM_TRACE")) {
    void *b[24];
    backtrace_symbols_fd(b, backtrace(b, 24), 2);
  }
  return f;
}
void *malloc(size_t n) { return fails() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fails() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fails() ? NULL : __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

/* PO_OOM_TRACE=1 also prints, from a child a crash ends, the crash's backtrace ("crashed:" first). */
static void fail_alloc_crashed(int sig) {
  static const char head[] = "crashed:\n";
  void *b[32];
  if (write(2, head, sizeof head - 1) < 0) _exit(128 + sig);
  backtrace_symbols_fd(b, backtrace(b, 32), 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* fork() for one armed run in a child: what is buffered is flushed first (or the child prints it
 * again), and the child takes the default action of the crash signals (a test framework's
 * handlers would carry a crash inside a library back into its runner: the parent counts it). */
static inline pid_t fail_alloc_fork(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE};
    bool trace = getenv("PO_OOM_TRACE") != NULL;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], trace ? fail_alloc_crashed : SIG_DFL);
  }
  return pid;
}

/* The child's exit code; -1 when a signal ended it (a crash inside a library), -2 when there is
 * no such child. */
static inline int fail_alloc_wait(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -2;
  return WIFSIGNALED(status) ? -1 : WEXITSTATUS(status);
}

#endif
