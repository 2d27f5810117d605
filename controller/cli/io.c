#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stdint.h>

#include "cli.h"

enum { kMaxInput = 64 << 20 };

/* The whole-tree readers' input (render, patch, one document): at most 64 MiB, in the arena. */
char *po_Cli_ReadFile(const char *path, po_Arena *a, size_t *len, po_Status *st) {
  size_t n = 0;
  char *m = po_Cli_ReadFileMalloc(path, kMaxInput, &n, st);
  if (!m) return NULL;
  char *buf = po_Arena_Malloc(a, n + 1);
  if (buf) {
    memcpy(buf, m, n + 1);
    *len = n;
  } else {
    po_Status_Set(st, kPo_ErrNoMemory, "%s: out of memory", path);
  }
  free(m);
  return buf;
}

char *po_Cli_ReadFileMalloc(const char *path, size_t max, size_t *len, po_Status *st) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    int e = errno; /* fopen's own allocation failing is memory, not the file */
    po_Status_Set(st, e == ENOMEM ? kPo_ErrNoMemory : kPo_ErrIo, "%s: cannot open: %s", path, strerror(e));
    return NULL;
  }
  /* A regular file is read into a buffer of its size (a doubling buffer touches up to twice
   * the input; 200,000-item Lists are 60-90 MB); pipes grow by doubling, each old copy freed. */
  struct stat sb;
  size_t cap = 1 << 16, n = 0;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0 && (uint64_t)sb.st_size < max) {
    cap = (size_t)sb.st_size + 2;
  }
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      po_Status_Set(st, kPo_ErrNoMemory, "%s: out of memory", path);
      break;
    }
    n += fread(buf + n, 1, cap - n - 1, f);
    if (ferror(f)) {
      po_Status_Set(st, kPo_ErrIo, "%s: read error: %s", path, strerror(errno));
      free(buf);
      buf = NULL;
      break;
    }
    if (feof(f)) break;
    if (cap >= max) { /* the buffer holds cap - 1 bytes and more follow: over the limit */
      po_Status_Set(st, kPo_ErrLimit, "%s: larger than %zu MiB", path, max >> 20);
      free(buf);
      buf = NULL;
      break;
    }
    char *bigger = realloc(buf, cap * 2);
    if (!bigger) free(buf);
    buf = bigger;
    cap *= 2;
  }
  if (f != stdin) fclose(f);
  if (buf) {
    buf[n] = '\0';
    *len = n;
  }
  return buf;
}

static bool looks_like_json(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (strchr(" \t\r\n", text[i])) continue;
    return text[i] == '{' || text[i] == '[';
  }
  return false;
}

po_Value *po_Cli_ParseDocument(const char *path, const char *text, size_t len, po_Arena *a, po_Status *st) {
  if (looks_like_json(text, len)) {
    po_Value *v = po_Value_ParseJson(text, len, a, st);
    if (!v) po_Status_Prefix(st, "%s: ", path);
    return v;
  }
  po_Value **docs = NULL;
  size_t count = 0;
  if (!po_Value_ParseYaml(text, len, a, &docs, &count, st)) {
    po_Status_Prefix(st, "%s: ", path);
    return NULL;
  }
  if (count != 1) {
    po_Status_Set(st, kPo_ErrParse, "%s: expected one YAML document, found %zu", path, count);
    return NULL;
  }
  return docs[0];
}

bool po_Cli_Flush(FILE *out, const char *cmd, const char *what) {
  errno = 0;
  bool flushed = fflush(out) == 0;
  int err = errno;
  if (flushed && !ferror(out)) return true;
  /* The reason is fflush's when it failed; an earlier failed write left only the stream's error
   * flag, whose errno is long gone. */
  fprintf(stderr, "propertyoverride %s: cannot write %s: %s\n", cmd, what, !flushed && err ? strerror(err) : "write error");
  return false;
}
