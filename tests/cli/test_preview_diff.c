/* preview's unified diff (controller/cli/preview_diff.c), checked by applying it: for texts
 * made by a fixed PRNG (lines from a small alphabet, so that lines repeat and the diff has
 * choices to make), the diff read back hunk by hunk must turn the before text into the after
 * text, its hunk headers must count the lines they hold, and equal texts give no output. Sizes
 * run past kPo_DiffMaxEdits, where the middle is shown replaced whole. Also the indented JSON:
 * keys sorted, nesting, escapes, numbers as they read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "preview.h"

static unsigned long long rng = 88172645463325252ull;
static unsigned next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (unsigned)rng; }

static char *text(size_t lines, unsigned alphabet) {
  char *t = malloc(lines * 8 + 1), *p = t;
  for (size_t i = 0; i < lines; i++) p += sprintf(p, "l%u\n", next() % alphabet);
  *p = '\0';
  return t;
}

/* b: a copy of a with some lines changed, dropped and inserted */
static char *mutate(const char *a, unsigned rate) {
  char *b = malloc(strlen(a) * 3 + 64), *q = b;
  for (const char *p = a; *p;) {
    const char *nl = strchr(p, '\n');
    unsigned r = next() % 100;
    if (r < rate) q += sprintf(q, "x%u\n", next() % 5);           /* changed */
    else if (r < 2 * rate) ;                                      /* dropped */
    else { memcpy(q, p, (size_t)(nl + 1 - p)); q += nl + 1 - p; } /* kept */
    if (r >= 2 * rate && r < 3 * rate) q += sprintf(q, "n%u\n", next() % 5); /* inserted */
    p = nl + 1;
  }
  *q = '\0';
  return b;
}

/* Applies the unified diff `d` to `a`; NULL when it does not apply. */
static char *apply(const char *a, const char *d) {
  size_t alen = strlen(a);
  char *out = malloc(alen + strlen(d) + 1), *o = out;
  const char *ap = a; /* next unread line of a */
  size_t aline = 1;
  const char *p = strchr(d, '\n') + 1; /* "--- a/..." */
  p = strchr(p, '\n') + 1;             /* "+++ b/..." */
  while (*p) {
    size_t a0, as, b0, bs;
    if (sscanf(p, "@@ -%zu,%zu +%zu,%zu @@", &a0, &as, &b0, &bs) != 4) return free(out), NULL;
    p = strchr(p, '\n') + 1;
    size_t first = as ? a0 : a0 + 1; /* a range of 0 lines names the line before */
    while (aline < first) { /* copy unchanged lines up to the hunk */
      const char *nl = strchr(ap, '\n');
      if (!nl) return free(out), NULL;
      memcpy(o, ap, (size_t)(nl + 1 - ap)); o += nl + 1 - ap; ap = nl + 1; aline++;
    }
    size_t seen_a = 0, seen_b = 0;
    while (*p && *p != '@') {
      const char *nl = strchr(p, '\n');
      size_t n = (size_t)(nl - p);
      if (*p == ' ' || *p == '-') { /* must match a's line */
        const char *anl = strchr(ap, '\n');
        if (!anl || (size_t)(anl - ap) != n - 1 || memcmp(ap, p + 1, n - 1)) return free(out), NULL;
        if (*p == ' ') { memcpy(o, ap, n); o += n - 1; *o++ = '\n'; }
        ap = anl + 1; aline++; seen_a++;
        seen_b += *p == ' ';
      } else if (*p == '+') {
        memcpy(o, p + 1, n - 1); o += n - 1; *o++ = '\n'; seen_b++;
      } else {
        return free(out), NULL;
      }
      p = nl + 1;
    }
    if (seen_a != as || seen_b != bs) return free(out), NULL;
  }
  strcpy(o, ap);
  return out;
}

/* not inlined: gcc 12 takes open_memstream's buffer for a dangling local (-Wdangling-pointer) */
__attribute__((noinline)) static char *diff(const char *a, const char *b, po_Arena *ar) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_true(po_Preview_Diff(a, b, "x", ar, f));
  fclose(f);
  return buf;
}

static void test_diff_applies(void **state) {
  (void)state;
  static const struct { size_t lines; unsigned alphabet, rate; int rounds; } kCases[] = {
      {1, 2, 30, 50}, {5, 3, 20, 200}, {40, 4, 10, 200}, {300, 6, 5, 50}, {3000, 8, 20, 3}, {6000, 3, 40, 2},
  };
  for (size_t c = 0; c < sizeof kCases / sizeof kCases[0]; c++) {
    for (int r = 0; r < kCases[c].rounds; r++) {
      po_Arena *ar = po_Arena_New();
      char *a = text(kCases[c].lines, kCases[c].alphabet), *b = mutate(a, kCases[c].rate);
      char *d = diff(a, b, ar);
      if (!strcmp(a, b)) {
        assert_string_equal(d, "");
      } else {
        char *got = apply(a, d);
        if (!got || strcmp(got, b)) fail_msg("case %zu round %d: the diff does not turn a into b:\n%s", c, r, d);
        free(got);
      }
      free(a); free(b); free(d);
      po_Arena_Free(ar);
    }
  }
  /* to and from nothing */
  po_Arena *ar = po_Arena_New();
  char *d = diff("", "a\nb\n", ar);
  assert_string_equal(d, "--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  free(d);
  d = diff("a\n", "", ar);
  assert_string_equal(d, "--- a/x\n+++ b/x\n@@ -1,1 +0,0 @@\n-a\n");
  free(d);
  po_Arena_Free(ar);
}

static void test_pretty(void **state) {
  (void)state;
  po_Arena *ar = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  static const char kIn[] = "{\"b\":[1,2.5,{\"z\":null,\"a\":true}],\"a\":{},\"c\":[],\"d\":\"q\\\"\\n\\u0001\",\"e\":1e+300,\"f\":0.1}";
  const char *got = po_Preview_PrettyJson(kIn, sizeof kIn - 1, ar, &st);
  assert_string_equal(got,
                      "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2.5,\n    {\n      \"a\": true,\n      \"z\": null\n    }\n  ],\n"
                      "  \"c\": [],\n  \"d\": \"q\\\"\\n\\u0001\",\n  \"e\": 1e+300,\n  \"f\": 0.1\n}\n");
  assert_null(po_Preview_PrettyJson("{", 1, ar, &st));
  assert_int_equal(st.code, kPo_Status_Parse); /* the text's fault, not memory's */
  /* integers: zero, signs, the int64 ends */
  static const char kInts[] = "[0,-7,42,9223372036854775807,-9223372036854775808]";
  assert_string_equal(po_Preview_PrettyJson(kInts, sizeof kInts - 1, ar, &st),
                      "[\n  0,\n  -7,\n  42,\n  9223372036854775807,\n  -9223372036854775808\n]\n");
  po_Arena_Free(ar);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_diff_applies), cmocka_unit_test(test_pretty)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
