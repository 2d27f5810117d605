/* po_Arena_NewLarge (engine/src/arena_large.c): blocks of 2 MB and more are advised as huge
 * pages (the kernel's VM_HUGEPAGE, "hg" in /proc/self/smaps), smaller ones come from malloc;
 * every size reads and writes where the arena says and the whole arena frees cleanly (leaks
 * and overruns are found by the ASan and valgrind stages, where this test runs too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "po/engine.h"

/* test_out_of_memory_is_per_arena asks for more than any address space holds and needs malloc's
 * answer, NULL; ASan aborts on such a size unless told to answer as malloc does. The ASAN_OPTIONS
 * of the ASan stage (leaks, abort_on_error) still apply: they override only what they name. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* Whether the mapping holding p carries the madvise(MADV_HUGEPAGE) flag; -1 when no mapping of
 * /proc/self/smaps holds it. */
static int advised_huge(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int in = 0, found = -1;
  while (found < 0 && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    } else if (in && !strncmp(line, "VmFlags:", 8)) {
      found = strstr(line, " hg") != NULL;
    }
  }
  fclose(f);
  return found;
}

static void test_large_blocks_advised_huge(void **state) {
  (void)state;
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) skip(); /* no THP in this kernel */
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* every block is malloc'd under ASan (arena_large.c), so that overruns stay visible */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  skip();
#endif
#endif
  po_Arena *a = po_Arena_NewLarge();
  assert_non_null(a);
  char *small = po_Arena_Malloc(a, 1000);
  char *big = po_Arena_Malloc(a, 5u << 20); /* zeroed: every page touched */
  assert_non_null(small);
  assert_non_null(big);
  assert_int_equal(advised_huge(big), 1);
  assert_int_equal(advised_huge(big + (5u << 20) - 1), 1);
  /* po_Arena_New's blocks stay malloc's, as before */
  po_Arena *plain = po_Arena_New();
  char *pbig = po_Arena_Malloc(plain, 5u << 20);
  assert_non_null(pbig);
  assert_int_equal(advised_huge(pbig), 0);
  po_Arena_Free(plain);
  po_Arena_Free(a);
}

static void test_sizes_round_trip(void **state) {
  (void)state;
  static const size_t kSizes[] = {2, 255, 4096, (2u << 20) - 64, 2u << 20, (2u << 20) + 1, 7u << 20, 100, 33u << 20};
  po_Arena *a = po_Arena_NewLarge();
  assert_non_null(a);
  char *blocks[sizeof kSizes / sizeof kSizes[0]];
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; i++) {
    blocks[i] = po_Arena_Malloc(a, kSizes[i]);
    assert_non_null(blocks[i]);
    assert_int_equal(((uintptr_t)blocks[i]) % 8, 0);
    assert_int_equal(blocks[i][0], 0);
    assert_int_equal(blocks[i][kSizes[i] - 1], 0);
    blocks[i][0] = (char)(i + 1);
    blocks[i][kSizes[i] - 1] = (char)(i + 2);
  }
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; i++) {
    assert_int_equal(blocks[i][0], (char)(i + 1));
    assert_int_equal(blocks[i][kSizes[i] - 1], (char)(i + 2));
  }
  /* many small allocations: the arena's doubling blocks cross the 2 MB line on the way */
  for (int i = 0; i < 100000; i++) assert_non_null(po_Arena_Strndup(a, "0123456789abcdef0123456789abcdef", 32));
  po_Arena_Free(a);
}

/* po_Arena_Printf formats into a 256-byte stack buffer first: texts at each side of its size
 * (255 characters fit with the NUL, 256 are formatted again at their size) come out whole. */
static void test_printf_at_the_stack_size(void **state) {
  (void)state;
  static const int kLens[] = {0, 1, 254, 255, 256, 257, 511, 4096};
  po_Arena *a = po_Arena_New();
  assert_non_null(a);
  char want[4100];
  for (size_t i = 0; i < sizeof kLens / sizeof kLens[0]; i++) {
    int n = kLens[i];
    for (int k = 0; k < n; k++) want[k] = (char)('a' + k % 26);
    want[n] = '\0';
    char *got = po_Arena_Printf(a, "%s", want);
    assert_non_null(got);
    assert_string_equal(got, want);
    char *two = po_Arena_Printf(a, "%.*s|%d", n > 3 ? n - 3 : 0, want, 7); /* a format, not only %s */
    assert_non_null(two);
    assert_int_equal(strlen(two), (size_t)(n > 3 ? n - 3 : 0) + 2);
  }
  po_Arena_Free(a);
}

/* Memory that runs out is the arena's own (no process-wide flag): another arena, another
 * caller's or thread's, never takes it for its own; a scratch arena's reaches the arena of the
 * call that made it through po_Arena_FreeInto; an arena that lost nothing says so. 2^50 bytes
 * are more than any address space here holds, so the allocation fails for real. */
static void test_out_of_memory_is_per_arena(void **state) {
  (void)state;
  const size_t kTooMuch = (size_t)1 << 50;
  po_ArenaFit fit = {0};
  po_Arena *kinds[] = {po_Arena_New(), po_Arena_NewLarge(), po_Arena_NewFitted(&fit)};
  for (size_t k = 0; k < 3; k++) {
    po_Arena *a = kinds[k], *b = po_Arena_New(), *scratch = po_Arena_New(), *c = po_Arena_New();
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(scratch);
    assert_non_null(c);
    assert_false(po_Engine_OutOfMemory(a));
    assert_null(po_Arena_Malloc(a, kTooMuch));
    assert_true(po_Engine_OutOfMemory(a));
    assert_false(po_Engine_OutOfMemory(b)); /* a's failure, not b's */
    assert_non_null(po_Arena_Malloc(a, 64)); /* a still serves what fits, and still says so */
    assert_true(po_Engine_OutOfMemory(a));
    assert_null(po_Arena_Malloc(scratch, kTooMuch));
    po_Arena_FreeInto(scratch, b); /* a call made with b ran out in its scratch arena */
    assert_true(po_Engine_OutOfMemory(b));
    po_Arena *fine = po_Arena_New();
    assert_non_null(po_Arena_Malloc(fine, 64));
    po_Arena_FreeInto(fine, c); /* a scratch arena that lost nothing passes nothing on */
    assert_false(po_Engine_OutOfMemory(c));
    po_Arena_Free(a);
    po_Arena_Free(b);
    po_Arena_Free(c);
  }
}

/* Fitted arenas (po_Arena_NewFitted) cost about what they use: arenas of one shape (2,000 bytes in
 * 40-byte pieces, as a compiled PropertyOverride is many small pieces) end within 10% of it plus
 * the arena's own header, where doubling blocks took 256 + 512 + 1,024 + 2,048 + headers; a mix
 * of 1,000- and 8,000-byte arenas stays within 1.7 times what it uses (1.57 measured; doubling
 * blocks take about 2 times, and a fit at the largest need would give every small one 8 KB); one
 * far larger than the fit grows by what it needs; every byte given is writable (the ASan and
 * valgrind stages check the blocks). */
/* What `bytes` written in 40-byte pieces take of an arena: under ASan upb follows each piece with
 * a 32-byte poisoned guard (UPB_ASAN, upb/arena.h), so the bounds below count it there. */
#if defined(__SANITIZE_ADDRESS__)
enum { kUpbGuard = 32 };
#else
enum { kUpbGuard = 0 };
#endif
static size_t cost(size_t bytes) { return (bytes + 39) / 40 * (40 + kUpbGuard); }

static size_t fill(po_ArenaFit *fit, size_t bytes, po_Arena **out) {
  po_Arena *a = po_Arena_NewFitted(fit);
  assert_non_null(a);
  for (size_t n = 0; n < bytes; n += 40) memset(po_Arena_Malloc(a, 40), 0xab, 40);
  po_ArenaFit_Learn(fit, a);
  *out = a;
  return po_Arena_Footprint(a);
}

static void test_fitted_arenas_cost_what_they_use(void **state) {
  (void)state;
  enum { kArenas = 200 };
  static po_Arena *kept[kArenas];
  po_ArenaFit one = {0}, mixed = {0};
  size_t last = 0, total = 0, used = 0;
  for (int i = 0; i < kArenas; i++) last = fill(&one, 2000, &kept[i]);
  print_message("one shape: the last of %d arenas of 2,000 bytes takes %zu\n", kArenas, last);
  assert_true(last <= cost(2000) * 11 / 10 + 256);
  for (int i = 0; i < kArenas; i++) po_Arena_Free(kept[i]);
  for (int i = 0; i < kArenas; i++) {
    size_t bytes = i % 2 ? 8000 : 1000;
    size_t got = fill(&mixed, bytes, &kept[i]);
    if (i >= kArenas / 2) total += got, used += cost(bytes);
  }
  print_message("mixed: %zu bytes taken for %zu used\n", total, used);
  assert_true(total <= used * 17 / 10);
  for (int i = 0; i < kArenas; i++) po_Arena_Free(kept[i]);
  po_Arena *big;
  size_t got = fill(&one, 64000, &big);
  assert_true(got <= 2 * cost(64000) + 4096);
  po_Arena_Free(big);
  assert_int_equal(po_Arena_Footprint(kept[0] = po_Arena_New()), 0); /* not fitted: not counted */
  po_Arena_Free(kept[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_large_blocks_advised_huge),
                                     cmocka_unit_test(test_out_of_memory_is_per_arena),
                                     cmocka_unit_test(test_sizes_round_trip),
                                     cmocka_unit_test(test_printf_at_the_stack_size),
                                     cmocka_unit_test(test_fitted_arenas_cost_what_they_use)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
