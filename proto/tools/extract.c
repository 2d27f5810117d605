/* Build-time tool: the Envoy v3 FileDescriptorSet of one go-control-plane `envoy` module version,
 * taken from the raw descriptors protoc-gen-go embeds in each .pb.go file, without compiling Go
 * or running protoc.   extract OUT.pb DIR...
 *
 * Every *.pb.go under the DIRs (the envoy module and the modules its descriptors import, as
 * scripts/fetch-envoy-api.sh downloaded them) is read for its `file_..._rawDesc` literal, which
 * protoc-gen-go writes as `[]byte{0x0a, ...}` (older), `string([]byte{...})` (v1.36.1 to 1.36.5)
 * or Go string literals joined by `+` over lines (newer). Written: every envoy/<...>/v3/<...>.proto
 * and everything it imports, transitively, each file after its imports (protoc's
 * --include_imports order: roots sorted by name, imports in declaration order). A file some
 * import needs that no .pb.go holds is an error naming it and its importer. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *name;              /* the FileDescriptorProto's name, "envoy/config/core/v3/base.proto" */
  unsigned char *bytes;    /* the serialized FileDescriptorProto */
  size_t size;
  char *source;            /* the .pb.go it came from */
  char **deps;             /* its imports, in declaration order */
  size_t dep_count;
  int state;               /* 0 unvisited, 1 being written (its imports first), 2 written */
  char *conflict;          /* another .pb.go with a different descriptor of the same name */
} File;

static File *g_files;
static size_t g_count, g_cap;

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("extract: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) die("out of memory");
  return p;
}

static char *xstrndup(const char *s, size_t n) {
  char *d = xrealloc(NULL, n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* ---- the Go literal ----------------------------------------------------------------------------- */

typedef struct {
  unsigned char *data;
  size_t len, cap;
} Buf;

static void put(Buf *b, unsigned char c) {
  if (b->len == b->cap) b->data = xrealloc(b->data, b->cap = b->cap ? b->cap * 2 : 4096);
  b->data[b->len++] = c;
}

static void put_utf8(Buf *b, unsigned long r) {
  if (r < 0x80) put(b, (unsigned char)r);
  else if (r < 0x800) put(b, (unsigned char)(0xc0 | r >> 6)), put(b, (unsigned char)(0x80 | (r & 0x3f)));
  else if (r < 0x10000) {
    put(b, (unsigned char)(0xe0 | r >> 12)), put(b, (unsigned char)(0x80 | ((r >> 6) & 0x3f)));
    put(b, (unsigned char)(0x80 | (r & 0x3f)));
  } else {
    put(b, (unsigned char)(0xf0 | r >> 18)), put(b, (unsigned char)(0x80 | ((r >> 12) & 0x3f)));
    put(b, (unsigned char)(0x80 | ((r >> 6) & 0x3f))), put(b, (unsigned char)(0x80 | (r & 0x3f)));
  }
}

/* `n` digits of base `base` at p, or -1. */
static long digits(const char *p, int n, int base) {
  long v = 0;
  for (int i = 0; i < n; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
    if (d >= base) return -1;
    v = v * base + d;
  }
  return v;
}

/* An interpreted string literal after its opening quote, with Go's escapes; returns the text
 * after the closing quote, or NULL when malformed. */
static const char *go_string(const char *p, const char *end, Buf *b) {
  static const char kSimple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\''\"\"";
  while (p < end && *p != '"') {
    if (*p == '\n') return NULL;
    if (*p != '\\') { put(b, (unsigned char)*p++); continue; }
    if (++p >= end) return NULL;
    const char *s = strchr(kSimple, *p);
    long v;
    if (s && *p && (s - kSimple) % 2 == 0) put(b, (unsigned char)s[1]), p++;
    else if (*p == 'x' && end - p > 2 && (v = digits(p + 1, 2, 16)) >= 0) put(b, (unsigned char)v), p += 3;
    else if (*p >= '0' && *p <= '7' && end - p > 2 && (v = digits(p, 3, 8)) >= 0 && v < 256) put(b, (unsigned char)v), p += 3;
    else if (*p == 'u' && end - p > 4 && (v = digits(p + 1, 4, 16)) >= 0) put_utf8(b, (unsigned long)v), p += 5;
    else if (*p == 'U' && end - p > 8 && (v = digits(p + 1, 8, 16)) >= 0 && v <= 0x10ffff) put_utf8(b, (unsigned long)v), p += 9;
    else return NULL;
  }
  return p < end ? p + 1 : NULL;
}

static const char *skip_space(const char *p, const char *end) {
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
      while (p < end && *p != '\n') p++;
      continue;
    }
    return p;
  }
}

/* `{0x0a, 0x25, ...}` after `[]byte`: integer literals (hex, octal or decimal) up to the `}`. */
static const char *go_bytes(const char *p, const char *end, Buf *b) {
  if (p >= end || *p != '{') return NULL;
  for (p = skip_space(p + 1, end); p < end && *p != '}'; p = skip_space(p, end)) {
    char *q;
    unsigned long v = strtoul(p, &q, 0);
    if (q == p || v > 255) return NULL;
    put(b, (unsigned char)v);
    p = skip_space(q, end);
    if (p < end && *p == ',') p++;
  }
  return p < end ? p + 1 : NULL;
}

/* The literal after `rawDesc = `: `[]byte{...}`, `string([]byte{...})`, or string literals
 * (interpreted or raw) joined by `+`. False when it is none of these. */
static bool go_literal(const char *p, const char *end, Buf *b) {
  p = skip_space(p, end);
  bool wrapped = end - p > 7 && memcmp(p, "string(", 7) == 0;
  if (wrapped) p += 7;
  if (end - p > 6 && memcmp(p, "[]byte", 6) == 0) {
    p = go_bytes(p + 6, end, b);
    return p && (!wrapped || (p < end && *p == ')'));
  }
  if (wrapped) return false;
  for (;;) {
    if (p < end && *p == '"') p = go_string(p + 1, end, b);
    else if (p < end && *p == '`') {
      const char *q = memchr(p + 1, '`', (size_t)(end - p - 1));
      if (!q) return false;
      for (const char *c = p + 1; c < q; c++) if (*c != '\r') put(b, (unsigned char)*c);
      p = q + 1;
    } else return false;
    if (!p) return false;
    const char *q = skip_space(p, end);
    if (q >= end || *q != '+') return true;
    p = skip_space(q + 1, end);
  }
}

/* ---- the FileDescriptorProto's name and imports ------------------------------------------------- */

static bool varint(const unsigned char **p, const unsigned char *end, uint64_t *v) {
  *v = 0;
  for (int shift = 0; *p < end && shift < 64; shift += 7) {
    unsigned char c = *(*p)++;
    *v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return true;
  }
  return false;
}

/* Fills f->name and f->deps from fields 1 (name) and 3 (dependency); false when malformed. */
static bool read_header(File *f) {
  const unsigned char *p = f->bytes, *end = f->bytes + f->size;
  while (p < end) {
    uint64_t tag, n;
    if (!varint(&p, end, &tag)) return false;
    switch (tag & 7) {
      case 0: if (!varint(&p, end, &n)) return false; break;
      case 1: if (end - p < 8) return false; p += 8; break;
      case 5: if (end - p < 4) return false; p += 4; break;
      case 2:
        if (!varint(&p, end, &n) || n > (uint64_t)(end - p)) return false;
        if (tag == 0x0a) f->name = xstrndup((const char *)p, (size_t)n);
        if (tag == 0x1a) {
          f->deps = xrealloc(f->deps, (f->dep_count + 1) * sizeof *f->deps);
          f->deps[f->dep_count++] = xstrndup((const char *)p, (size_t)n);
        }
        p += n;
        break;
      default: return false; /* groups: no descriptor has them */
    }
  }
  return f->name != NULL;
}

/* ---- the .pb.go files --------------------------------------------------------------------------- */

static char *read_all(const char *path, size_t *len) {
  FILE *in = fopen(path, "rb");
  if (!in) die("cannot read %s", path);
  size_t cap = 1 << 16, n;
  char *buf = xrealloc(NULL, cap);
  *len = 0;
  while ((n = fread(buf + *len, 1, cap - *len, in)) > 0) {
    *len += n;
    if (*len == cap) buf = xrealloc(buf, cap *= 2);
  }
  if (ferror(in)) die("cannot read %s", path);
  fclose(in);
  buf[*len] = '\0';
  return buf;
}

/* The declaration `var file_..._rawDesc = ` or `const file_..._rawDesc = ` at a line start: the
 * text after its `=`, or NULL when the file has none (the _vtproto.pb.go files). */
static const char *find_raw_desc(const char *text) {
  for (const char *p = text; (p = strstr(p, "_rawDesc = ")) != NULL; p++) {
    const char *line = p;
    while (line > text && line[-1] != '\n') line--;
    size_t kw = strncmp(line, "var file_", 9) == 0 ? 4 : strncmp(line, "const file_", 11) == 0 ? 6 : 0;
    if (kw && !memchr(line + kw, ' ', (size_t)(p - line) - kw)) return p + strlen("_rawDesc = ");
  }
  return NULL;
}

/* Frees what f holds; its source stays when another file's conflict names it. */
static void drop_file(File *f, bool keep_source) {
  for (size_t i = 0; i < f->dep_count; i++) free(f->deps[i]);
  free(f->deps);
  free(f->name);
  free(f->bytes);
  if (!keep_source) free(f->source);
}

static void add_file(File *f) {
  for (size_t i = 0; i < g_count; i++) {
    if (strcmp(g_files[i].name, f->name) != 0) continue;
    bool differs = g_files[i].size != f->size || memcmp(g_files[i].bytes, f->bytes, f->size) != 0;
    if (differs) g_files[i].conflict = f->source;
    drop_file(f, differs);
    return; /* the same descriptor twice (a module vendoring another's): one is enough */
  }
  if (g_count == g_cap) g_files = xrealloc(g_files, (g_cap = g_cap ? g_cap * 2 : 1024) * sizeof *g_files);
  g_files[g_count++] = *f;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st, (void)ftw;
  size_t n = strlen(path);
  if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".pb.go") != 0) return 0;
  if (n >= 14 && strcmp(path + n - 14, "_vtproto.pb.go") == 0) return 0;
  size_t len;
  char *text = read_all(path, &len);
  const char *lit = find_raw_desc(text);
  if (lit) {
    Buf b = {0};
    File f = {0};
    if (!go_literal(lit, text + len, &b)) die("%s: the rawDesc literal is not a Go []byte or string literal", path);
    f.bytes = b.data, f.size = b.len, f.source = xstrndup(path, n);
    if (!read_header(&f)) die("%s: the raw descriptor is not a FileDescriptorProto with a name", path);
    add_file(&f);
  }
  free(text);
  return 0;
}

/* ---- the set ------------------------------------------------------------------------------------ */

static File *find(const char *name) {
  for (size_t i = 0; i < g_count; i++) if (strcmp(g_files[i].name, name) == 0) return &g_files[i];
  return NULL;
}

static void put_varint(FILE *out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) fputc((int)(v & 0x7f) | 0x80, out);
  fputc((int)v, out);
}

/* Writes f after its imports; `by` names the importer for the error of a missing file. */
static void write_file(FILE *out, const char *name, const char *by, size_t *written) {
  File *f = find(name);
  if (!f) die("%s (imported by %s) is in no .pb.go file under the module folders given: the modules "
              "that go.mod requires are incomplete (scripts/fetch-envoy-api.sh lists them)", name, by);
  if (f->state == 2) return;
  if (f->state == 1) die("%s imports itself through %s", name, by);
  if (f->conflict) die("%s is described differently by %s and %s", name, f->source, f->conflict);
  f->state = 1;
  for (size_t i = 0; i < f->dep_count; i++) write_file(out, f->deps[i], f->name, written);
  fputc(0x0a, out);
  put_varint(out, f->size);
  fwrite(f->bytes, 1, f->size, out);
  f->state = 2;
  ++*written;
}

static bool is_root(const char *name) {
  size_t n = strlen(name);
  return strncmp(name, "envoy/", 6) == 0 && strstr(name, "/v3/") && n > 6 && strcmp(name + n - 6, ".proto") == 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  if (argc < 3) die("usage: extract OUT.pb DIR...");
  for (int i = 2; i < argc; i++) {
    if (nftw(argv[i], visit, 32, FTW_PHYS) != 0) die("cannot walk %s", argv[i]);
  }
  char **roots = xrealloc(NULL, g_count * sizeof *roots);
  size_t nroots = 0;
  for (size_t i = 0; i < g_count; i++) if (is_root(g_files[i].name)) roots[nroots++] = g_files[i].name;
  if (nroots == 0) die("no envoy/**/v3/*.proto descriptor in any .pb.go under %s", argv[2]);
  qsort(roots, nroots, sizeof *roots, by_name);
  FILE *out = fopen(argv[1], "wb");
  if (!out) die("cannot write %s", argv[1]);
  size_t written = 0;
  for (size_t i = 0; i < nroots; i++) write_file(out, roots[i], "the Envoy v3 API", &written);
  if (fclose(out) != 0) die("cannot write %s", argv[1]);
  printf("extract: %s: %zu files (%zu envoy v3), from %zu .pb.go descriptors\n", argv[1], written, nroots, g_count);
  free(roots);
  for (size_t i = 0; i < g_count; i++) drop_file(&g_files[i], false);
  free(g_files);
  return 0;
}
