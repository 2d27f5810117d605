/* Build-time tool: the index of a FileDescriptorSet (where each file's bytes are, which files it
 * imports, which file defines each message, enum and extension), as C tables for
 * proto/src/schema.c's on-demand loading.   index INPUT.pb OUTPUT.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/descriptor.upb.h"

typedef struct {
  char *name;
  size_t file;
} Sym;

static Sym *syms;
static size_t nsyms, capsyms;

static void add_sym(const char *prefix, upb_StringView name, size_t file) {
  if (nsyms == capsyms) {
    capsyms = capsyms ? capsyms * 2 : 1024;
    syms = realloc(syms, capsyms * sizeof *syms);
    if (!syms) { perror("index"); exit(1); }
  }
  size_t pl = strlen(prefix);
  char *s = malloc(pl + name.size + 2);
  if (!s) { perror("index"); exit(1); }
  if (pl) { memcpy(s, prefix, pl); s[pl++] = '.'; }
  memcpy(s + pl, name.data, name.size);
  s[pl + name.size] = '\0';
  syms[nsyms].name = s;
  syms[nsyms++].file = file;
}

static void add_enums(const char *prefix, const google_protobuf_EnumDescriptorProto *const *e, size_t n, size_t file) {
  for (size_t i = 0; i < n; i++) add_sym(prefix, google_protobuf_EnumDescriptorProto_name(e[i]), file);
}

static void add_exts(const char *prefix, const google_protobuf_FieldDescriptorProto *const *x, size_t n, size_t file) {
  for (size_t i = 0; i < n; i++) add_sym(prefix, google_protobuf_FieldDescriptorProto_name(x[i]), file);
}

static void add_messages(const char *prefix, const google_protobuf_DescriptorProto *const *m, size_t n, size_t file) {
  for (size_t i = 0; i < n; i++) {
    add_sym(prefix, google_protobuf_DescriptorProto_name(m[i]), file);
    const char *full = syms[nsyms - 1].name;
    size_t k = 0;
    const google_protobuf_DescriptorProto *const *nested = google_protobuf_DescriptorProto_nested_type(m[i], &k);
    add_messages(full, nested, k, file);
    const google_protobuf_EnumDescriptorProto *const *en = google_protobuf_DescriptorProto_enum_type(m[i], &k);
    add_enums(full, en, k, file);
    const google_protobuf_FieldDescriptorProto *const *ex = google_protobuf_DescriptorProto_extension(m[i], &k);
    add_exts(full, ex, k, file);
  }
}

static int by_name(const void *x, const void *y) { return strcmp(((const Sym *)x)->name, ((const Sym *)y)->name); }

static int fail(const char *what) {
  fprintf(stderr, "index: %s\n", what);
  return 1;
}

/* A base-128 varint at *p (before end), or -1 when malformed. */
static long long varint(const unsigned char **p, const unsigned char *end) {
  unsigned long long v = 0;
  for (int shift = 0; *p < end && shift < 64; shift += 7) {
    unsigned char b = *(*p)++;
    v |= (unsigned long long)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v > (1ull << 40) ? -1 : (long long)v;
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc != 3) return fail("usage: index INPUT.pb OUTPUT.c");
  FILE *in = fopen(argv[1], "rb");
  if (!in) { perror(argv[1]); return 1; }
  size_t cap = 1 << 20, len = 0;
  unsigned char *buf = malloc(cap);
  for (size_t n; buf && (n = fread(buf + len, 1, cap - len, in)) > 0;) {
    len += n;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  if (!buf || ferror(in)) return fail("cannot read the descriptor set");
  fclose(in);

  /* FileDescriptorSet: only `repeated FileDescriptorProto file = 1` (tag 0x0a). */
  size_t nfiles = 0, capfiles = 1024;
  struct { size_t off, size; char *name; } *files = malloc(capfiles * sizeof *files);
  upb_Arena *arena = upb_Arena_New();
  FILE *out = fopen(argv[2], "w");
  if (!files || !arena || !out) return fail("out of memory or cannot write the output");
  fprintf(out, "/* Generated from %s by proto/tools/index.c; do not edit. */\n#include \"schema_index.h\"\n\n", argv[1]);
  size_t *deps = NULL, ndeps = 0, capdeps = 0;
  fprintf(out, "const po_SchemaFileIndex po_envoy_files[] = {\n");
  for (const unsigned char *p = buf, *end = buf + len; p < end;) {
    long long tag = varint(&p, end), size = tag == 0x0a ? varint(&p, end) : -1;
    if (size < 0 || size > end - p) return fail("not a FileDescriptorSet of files only");
    if (nfiles == capfiles) files = realloc(files, (capfiles *= 2) * sizeof *files);
    if (!files) return fail("out of memory");
    files[nfiles].off = (size_t)(p - buf);
    files[nfiles].size = (size_t)size;
    const google_protobuf_FileDescriptorProto *f = google_protobuf_FileDescriptorProto_parse((const char *)p, (size_t)size, arena);
    if (!f) return fail("a file does not parse");
    upb_StringView name = google_protobuf_FileDescriptorProto_name(f), pkg = google_protobuf_FileDescriptorProto_package(f);
    files[nfiles].name = strndup(name.data, name.size);
    char *prefix = strndup(pkg.data, pkg.size);
    size_t n = 0, first_dep = ndeps;
    const upb_StringView *imports = google_protobuf_FileDescriptorProto_dependency(f, &n);
    for (size_t i = 0; i < n; i++) {
      size_t k = 0;
      while (k < nfiles && (strlen(files[k].name) != imports[i].size || memcmp(files[k].name, imports[i].data, imports[i].size))) k++;
      if (k == nfiles) return fail("an import comes after its importer (protoc's --include_imports order expected)");
      if (ndeps == capdeps) deps = realloc(deps, (capdeps = capdeps ? capdeps * 2 : 1024) * sizeof *deps);
      if (!deps) return fail("out of memory");
      deps[ndeps++] = k;
    }
    /* The count is set by the accessor: read it only after the call. */
    const google_protobuf_DescriptorProto *const *msgs = google_protobuf_FileDescriptorProto_message_type(f, &n);
    add_messages(prefix, msgs, n, nfiles);
    const google_protobuf_EnumDescriptorProto *const *enums = google_protobuf_FileDescriptorProto_enum_type(f, &n);
    add_enums(prefix, enums, n, nfiles);
    const google_protobuf_FieldDescriptorProto *const *exts = google_protobuf_FileDescriptorProto_extension(f, &n);
    add_exts(prefix, exts, n, nfiles);
    fprintf(out, "  {%zu, %zu, %zu, %zu}, /* %s */\n", files[nfiles].off, files[nfiles].size, first_dep, ndeps - first_dep,
            files[nfiles].name);
    free(prefix);
    nfiles++;
    p += size;
  }
  fprintf(out, "};\nconst size_t po_envoy_file_count = %zu;\n\nconst uint32_t po_envoy_file_deps[] = {", nfiles);
  for (size_t i = 0; i < ndeps; i++) fprintf(out, "%s%zu,", i % 16 ? "" : "\n  ", deps[i]);
  fprintf(out, "\n  0};\n\nconst po_SchemaSymbolIndex po_envoy_symbols[] = {\n");
  qsort(syms, nsyms, sizeof *syms, by_name);
  for (size_t i = 0; i < nsyms; i++) fprintf(out, "  {\"%s\", %zu},\n", syms[i].name, syms[i].file);
  fprintf(out, "};\nconst size_t po_envoy_symbol_count = %zu;\n", nsyms);
  if (fclose(out) != 0) { perror(argv[2]); return 1; }
  upb_Arena_Free(arena);
  return 0;
}
