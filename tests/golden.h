/* The golden files of the C tests (tests/reconcile, tests/targets, tests/webhook): what a test
 * produced compared byte for byte with the file that holds what it should produce, or, with
 * PO_UPDATE_GOLDEN=1 (the one variable every golden file of the project obeys, the shell tests'
 * included), the file rewritten, to be reviewed as a diff. Header-only: a test includes it and
 * adds tests/ to its include path. */
#ifndef PO_TESTS_GOLDEN_H_
#define PO_TESTS_GOLDEN_H_

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether this run rewrites the golden files. */
static inline bool po_Golden_Updating(void) {
  const char *v = getenv("PO_UPDATE_GOLDEN");
  return v && !strcmp(v, "1");
}

/* The whole file at path, NUL-terminated (malloc'd; *len its length when len is not NULL), or
 * NULL when it cannot be read. */
static inline char *po_Golden_Read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) {
    b[n] = '\0';
    if (len) *len = (size_t)n;
  }
  return b;
}

/* got (len bytes) against the golden file at path: true when they are the same, or when this
 * run rewrote the file with got; false, having said why on stderr (got included), otherwise. */
static inline bool po_Golden_Check(const char *path, const char *got, size_t len) {
  size_t want_len = 0;
  char *want = po_Golden_Read(path, &want_len);
  bool same = want && want_len == len && memcmp(want, got, len) == 0;
  free(want);
  if (same) return true;
  if (po_Golden_Updating()) {
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(got, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "%s: cannot write\n", path);
    else fprintf(stderr, "wrote %s\n", path);
    return ok;
  }
  fprintf(stderr, "%s %s (PO_UPDATE_GOLDEN=1 writes it; review the diff); what the test gives now:\n%.*s\n", path,
          want ? "differs" : "is missing", (int)len, got);
  return false;
}

#endif
