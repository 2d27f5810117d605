#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    po_Status_Set(st, kPo_Status_NoMemory, "%s: out of memory", path);
  }
  free(m);
  return buf;
}

const char *po_Cli_FileType(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

/* Says the limit in MiB, and the size when it is known (a regular file: before any read). */
static void too_large(po_Status *st, const char *path, size_t max, const struct stat *sb) {
  if (sb) {
    po_Status_Set(st, kPo_Status_Limit, "%s: %lld bytes, larger than %zu MiB: refused without reading it", path,
                  (long long)sb->st_size, max >> 20);
  } else {
    po_Status_Set(st, kPo_Status_Limit, "%s: %slarger than %zu MiB: refused (read up to the limit, no further)", path,
                  strcmp(path, "-") ? "" : "stdin is ", max >> 20);
  }
}

/* The one reader of every file the one-shot commands take (validate, render, preview, patch).
 * A file named by path is opened with O_NONBLOCK, so a FIFO without a writer cannot block the
 * open, and then refused unless fstat calls it a regular file: a FIFO would block the read
 * forever (a CI job that never ends) and /dev/zero never ends; to read a pipe, give it as
 * stdin (`-f - <fifo`), where the shell's own open is what waits. A regular file over `max` is
 * refused from its size, before a byte is read. Stdin ("-") is read whatever it is, but only
 * up to `max`: what a pipe brings cannot be known before it is read. */
char *po_Cli_ReadFileMalloc(const char *path, size_t max, size_t *len, po_Status *st) {
  bool std = strcmp(path, "-") == 0;
  int fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno; /* the kernel's allocation failing is memory, not the file */
    po_Status_Set(st, e == ENOMEM ? kPo_Status_NoMemory : kPo_Status_Io, "%s: cannot open: %s", path, strerror(e));
    return NULL;
  }
  struct stat sb;
  bool regular = false;
  if (fstat(fd, &sb) != 0) {
    po_Status_Set(st, kPo_Status_Io, "%s: cannot stat: %s", path, strerror(errno));
    if (!std) close(fd);
    return NULL;
  }
  regular = S_ISREG(sb.st_mode);
  if (!std && !regular) {
    po_Status_Set(st, kPo_Status_Io, "%s: %s, not a regular file: refused (reading it could block or never end; a pipe "
                  "can be given as stdin, -)", path, po_Cli_FileType(sb.st_mode));
    close(fd);
    return NULL;
  }
  if (regular && sb.st_size >= 0 && (uint64_t)sb.st_size > max) {
    too_large(st, path, max, &sb);
    if (!std) close(fd);
    return NULL;
  }
  /* A file named by path stays O_NONBLOCK while it is read: a regular file's read never waits,
   * but some files fstat calls regular do (/proc/kmsg: size 0, its read waits for the kernel's
   * next message, forever in a CI job; a repository can plant a link to it). EAGAIN from such a
   * file is a refusal naming it, not a wait. */
  /* A regular file is read into a buffer of its size plus one byte, which tells whether it grew
   * since fstat (a doubling buffer touches up to twice the input; 200,000-item Lists are
   * 60-90 MB); pipes grow by doubling up to max + 1, each old copy freed. */
  size_t cap = regular && sb.st_size >= 0 ? (size_t)sb.st_size + 2 : (size_t)1 << 16, n = 0;
  if (cap > max + 2) cap = max + 2;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      po_Status_Set(st, kPo_Status_NoMemory, "%s: out of memory", path);
      break;
    }
    ssize_t got = read(fd, buf + n, cap - n - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && !std && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      po_Status_Set(st, kPo_Status_Io, "%s: would block: not a file whose content can be read now (refused; a pipe "
                    "can be given as stdin, -)", path);
      free(buf);
      buf = NULL;
      break;
    }
    if (got < 0) {
      po_Status_Set(st, kPo_Status_Io, "%s: read error: %s", path, strerror(errno));
      free(buf);
      buf = NULL;
      break;
    }
    n += (size_t)got;
    if (n > max) { /* more than max bytes arrived: over the limit */
      too_large(st, path, max, NULL);
      free(buf);
      buf = NULL;
      break;
    }
    if (got == 0) break;
    if (n + 1 < cap) continue;
    size_t bigger_cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
    char *bigger = realloc(buf, bigger_cap);
    if (!bigger) free(buf);
    buf = bigger;
    cap = bigger_cap;
  }
  if (!std) close(fd);
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
    po_Status_Set(st, kPo_Status_Parse, "%s: expected one YAML document, found %zu", path, count);
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
