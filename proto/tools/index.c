/* Build-time tool: the embedded Envoy API snapshots, as C for proto/src/schema.c.
 *   index OUTPUT.c DEFAULT VERSION SET.pb [VERSION SET.pb ...]
 * Each SET.pb is one snapshot's trimmed FileDescriptorSet (proto/tools/trim.c), oldest first;
 * DEFAULT is the index of the default one. Written: one array of pieces (FileDescriptorProtos) in
 * which a piece byte-identical in several snapshots is stored once, and per snapshot an index:
 * where each of its files' bytes are, which files it imports, which file defines each message,
 * enum and extension (for on-demand loading), and its version. schema.c reassembles a snapshot's
 * whole set from its index (test_schema_trimmed checks it is byte for byte the SET.pb). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/schema_index.h"
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

/* ---- pieces and names, each stored once ---- */

typedef struct {
  unsigned char *bytes;
  size_t len, cap, count;
  struct { uint64_t hash; size_t off, size; } *slots;
} Store;
enum { kSlots = 1 << 15 };
static Store g_pieces, g_names;

static uint64_t fnv(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h | 1; /* 0 marks an empty slot */
}

/* The offset of these bytes in the store: an identical entry's, or a new one's. */
static size_t intern(Store *st, const unsigned char *p, size_t n) {
  if (!st->slots && !(st->slots = calloc(kSlots, sizeof *st->slots))) exit(fail("out of memory"));
  uint64_t h = fnv(p, n);
  size_t i = (size_t)h & (kSlots - 1);
  for (; st->slots[i].hash; i = (i + 1) & (kSlots - 1)) {
    if (st->slots[i].hash == h && st->slots[i].size == n && memcmp(st->bytes + st->slots[i].off, p, n) == 0)
      return st->slots[i].off;
  }
  if (++st->count > kSlots / 2) exit(fail("more entries than the table holds: raise kSlots"));
  if (st->len + n > st->cap) {
    st->cap = (st->len + n) * 2;
    if (!(st->bytes = realloc(st->bytes, st->cap))) exit(fail("out of memory"));
  }
  memcpy(st->bytes + st->len, p, n);
  st->slots[i].hash = h, st->slots[i].off = st->len, st->slots[i].size = n;
  st->len += n;
  return st->slots[i].off;
}

static void put_bytes(FILE *out, const char *name, const Store *st) {
  fprintf(out, "const unsigned char %s[] = {\n", name);
  for (size_t i = 0; i < st->len; i++) fprintf(out, "%d,%s", st->bytes[i], (i + 1) % 24 ? "" : "\n");
  fprintf(out, "0};\nconst size_t %s_size = %zu;\n\n", name, st->len);
}

static unsigned char *read_set(const char *path, size_t *len) {
  FILE *in = fopen(path, "rb");
  if (!in) { perror(path); exit(1); }
  size_t cap = 1 << 20;
  unsigned char *buf = malloc(cap);
  *len = 0;
  for (size_t n; buf && (n = fread(buf + *len, 1, cap - *len, in)) > 0;) {
    *len += n;
    if (*len == cap) buf = realloc(buf, cap *= 2);
  }
  if (!buf || ferror(in)) exit(fail("cannot read a descriptor set"));
  fclose(in);
  return buf;
}

/* Snapshot k: its pieces interned, its file, import and symbol tables written (files_k, deps_k,
 * symbols_k); returns its file count, *symbols its symbol count. */
static size_t index_set(FILE *out, int k, const char *path, size_t *symbols) {
  size_t len;
  unsigned char *buf = read_set(path, &len);
  size_t nfiles = 0, capfiles = 1024;
  char **names = malloc(capfiles * sizeof *names);
  upb_Arena *arena = upb_Arena_New();
  if (!names || !arena) exit(fail("out of memory"));
  size_t *deps = NULL, ndeps = 0, capdeps = 0;
  nsyms = 0;
  fprintf(out, "static const po_SchemaFileIndex files_%d[] = {\n", k);
  for (const unsigned char *p = buf, *end = buf + len; p < end;) {
    long long tag = varint(&p, end), size = tag == 0x0a ? varint(&p, end) : -1;
    if (size < 0 || size > end - p) exit(fail("not a FileDescriptorSet of files only"));
    if (nfiles == capfiles && !(names = realloc(names, (capfiles *= 2) * sizeof *names))) exit(fail("out of memory"));
    const google_protobuf_FileDescriptorProto *f = google_protobuf_FileDescriptorProto_parse((const char *)p, (size_t)size, arena);
    if (!f) exit(fail("a file does not parse"));
    upb_StringView name = google_protobuf_FileDescriptorProto_name(f), pkg = google_protobuf_FileDescriptorProto_package(f);
    names[nfiles] = strndup(name.data, name.size);
    char *prefix = strndup(pkg.data, pkg.size);
    size_t n = 0, first_dep = ndeps;
    const upb_StringView *imports = google_protobuf_FileDescriptorProto_dependency(f, &n);
    for (size_t i = 0; i < n; i++) {
      size_t j = 0;
      while (j < nfiles && (strlen(names[j]) != imports[i].size || memcmp(names[j], imports[i].data, imports[i].size))) j++;
      if (j == nfiles) exit(fail("an import comes after its importer (protoc's --include_imports order expected)"));
      if (ndeps == capdeps && !(deps = realloc(deps, (capdeps = capdeps ? capdeps * 2 : 1024) * sizeof *deps))) exit(fail("out of memory"));
      deps[ndeps++] = j;
    }
    /* The count is set by the accessor: read it only after the call. */
    const google_protobuf_DescriptorProto *const *msgs = google_protobuf_FileDescriptorProto_message_type(f, &n);
    add_messages(prefix, msgs, n, nfiles);
    const google_protobuf_EnumDescriptorProto *const *enums = google_protobuf_FileDescriptorProto_enum_type(f, &n);
    add_enums(prefix, enums, n, nfiles);
    const google_protobuf_FieldDescriptorProto *const *exts = google_protobuf_FileDescriptorProto_extension(f, &n);
    add_exts(prefix, exts, n, nfiles);
    fprintf(out, "  {%zu, %lld, %zu, %zu}, /* %s */\n", intern(&g_pieces, p, (size_t)size), size, first_dep, ndeps - first_dep, names[nfiles]);
    free(prefix);
    nfiles++;
    p += size;
  }
  fprintf(out, "};\n\nstatic const uint32_t deps_%d[] = {", k);
  for (size_t i = 0; i < ndeps; i++) fprintf(out, "%s%zu,", i % 16 ? "" : "\n  ", deps[i]);
  fprintf(out, "\n  0};\n\nstatic const po_SchemaSymbolIndex symbols_%d[] = {\n", k);
  qsort(syms, nsyms, sizeof *syms, by_name);
  for (size_t i = 0; i < nsyms; i++) {
    size_t off = intern(&g_names, (const unsigned char *)syms[i].name, strlen(syms[i].name) + 1);
    fprintf(out, "  {%zu, %zu}, /* %s */\n", off, syms[i].file, syms[i].name);
    free(syms[i].name);
  }
  fprintf(out, "};\n\n");
  for (size_t i = 0; i < nfiles; i++) free(names[i]);
  free(names), free(deps), free(buf);
  upb_Arena_Free(arena);
  *symbols = nsyms;
  return nfiles;
}

int main(int argc, char **argv) {
  if (argc < 5 || argc % 2 == 0) return fail("usage: index OUTPUT.c DEFAULT VERSION SET.pb [VERSION SET.pb ...]");
  int count = (argc - 3) / 2, def = atoi(argv[2]);
  if (def < 0 || def >= count) return fail("DEFAULT is not the index of a snapshot given");
  FILE *out = fopen(argv[1], "w");
  if (!out) { perror(argv[1]); return 1; }
  fprintf(out, "/* Generated by proto/tools/index.c; do not edit. */\n#include \"schema_index.h\"\n\n");
  fprintf(out, "_Static_assert(%d <= kPo_SchemaMaxSnapshots, \"more snapshots than schema.c has slots for\");\n\n", count);
  size_t files[kPo_SchemaMaxSnapshots], symbols[kPo_SchemaMaxSnapshots], sizes[kPo_SchemaMaxSnapshots], total = 0;
  if (count > kPo_SchemaMaxSnapshots) return fail("too many snapshots");
  for (int k = 0; k < count; k++) {
    size_t before = g_pieces.len;
    files[k] = index_set(out, k, argv[4 + 2 * k], &symbols[k]);
    FILE *in = fopen(argv[4 + 2 * k], "rb");
    if (!in || fseek(in, 0, SEEK_END) != 0) return fail("cannot size a descriptor set");
    sizes[k] = (size_t)ftell(in), total += sizes[k];
    fclose(in);
    printf("index: %s: %zu files, %zu symbols, %zu bytes, %zu of them new\n", argv[3 + 2 * k], files[k], symbols[k], sizes[k], g_pieces.len - before);
  }
  fprintf(out, "const po_SchemaSnapshotIndex po_envoy_snapshots[] = {\n");
  for (int k = 0; k < count; k++) {
    fprintf(out, "  {\"%s\", files_%d, %zu, deps_%d, symbols_%d, %zu, %zu},\n", argv[3 + 2 * k], k, files[k], k, k, symbols[k], sizes[k]);
  }
  fprintf(out, "};\nconst size_t po_envoy_snapshot_count = %d, po_envoy_snapshot_default = %d;\n\n", count, def);
  put_bytes(out, "po_envoy_pieces", &g_pieces);
  put_bytes(out, "po_envoy_symbol_names", &g_names);
  if (fclose(out) != 0) { perror(argv[1]); return 1; }
  printf("index: %zu distinct pieces in %zu bytes for %d snapshots of %zu bytes together (%zu saved); %zu distinct names in %zu bytes\n",
         g_pieces.count, g_pieces.len, count, total, total - g_pieces.len, g_names.count, g_names.len);
  return 0;
}
