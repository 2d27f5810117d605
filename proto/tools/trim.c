/* Build-time tool: the descriptor set without what the engine never reads, so upb builds less.
 *   trim INPUT.pb OUTPUT.pb
 *
 * Kept: every message, enum, field and extension, as protoc wrote them, and in options only the
 * standard fields (numbers below 1000: map_entry, packed, deprecated, allow_alias, ...) and
 * protoc-gen-validate's (1071, 1072). Dropped: services, source info, and the other extension
 * options (udpa/xds/envoy annotations: versioning, migration, sensitivity, status), which upb
 * otherwise re-serializes and re-parses for nearly every message and field. Each file's imports
 * then become the files that define what it still uses (field types, extendees, validate's
 * extensions), in the set's order; public and weak import lists go with them. Most Envoy files
 * import annotation files only for their options, so a lookup loads about a third fewer files.
 * tests/proto/test_schema_trimmed.c checks the result against the full set, field by field.
 *
 * Plain protobuf wire format, no upb: the tool is a filter over bytes, and the few message types
 * it descends into are the stable ones of google/protobuf/descriptor.proto. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "trim: %s\n", what);
  exit(1);
}

/* ---- bytes ---- */

typedef struct {
  unsigned char *p;
  size_t len, cap;
} Buf;

static void put(Buf *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p) fail("out of memory");
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
}

static void put_varint(Buf *b, uint64_t v) {
  unsigned char t[10];
  size_t n = 0;
  do {
    t[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  put(b, t, n);
}

static uint64_t get_varint(const unsigned char **p, const unsigned char *end) {
  uint64_t v = 0;
  for (int shift = 0; *p < end && shift < 64; shift += 7) {
    unsigned char c = *(*p)++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  fail("malformed varint");
  return 0;
}

/* One field at *p: its number, wire type, and where its bytes (all of them, tag included) and
 * its payload (length-delimited only) are. */
typedef struct {
  uint32_t number;
  int wire;
  const unsigned char *start, *end, *data;
  size_t size;
} Field;

static Field next_field(const unsigned char **p, const unsigned char *end) {
  Field f = {.start = *p};
  uint64_t tag = get_varint(p, end);
  f.number = (uint32_t)(tag >> 3);
  f.wire = (int)(tag & 7);
  switch (f.wire) {
    case 0: get_varint(p, end); break;
    case 1: *p += 8; break;
    case 5: *p += 4; break;
    case 2:
      f.size = (size_t)get_varint(p, end);
      f.data = *p;
      *p += f.size;
      break;
    default: fail("unsupported wire type (groups)");
  }
  if (*p > end) fail("truncated field");
  f.end = *p;
  return f;
}

/* ---- what each descriptor message holds ---- */

typedef enum { kFile, kMessage, kField, kOneof, kEnum, kEnumValue, kOptions } Kind;

typedef struct {
  Buf refs;        /* referenced full names (no leading dot), NUL-separated */
  int validate;    /* a PGV option was kept */
} Uses;

static void add_ref(Uses *u, const unsigned char *name, size_t n) {
  if (n && name[0] == '.') name++, n--;
  put(&u->refs, name, n);
  put(&u->refs, "", 1);
}

/* The trimmed copy of message [p, end) of the given kind, appended to out; false when nothing
 * is left (options only). */
static int trim(Kind kind, const unsigned char *p, const unsigned char *end, Buf *out, Uses *u);

static void descend(Kind kind, const Field *f, Buf *out, Uses *u) {
  Buf sub = {0};
  if (trim(kind, f->data, f->data + f->size, &sub, u) || kind != kOptions) {
    put_varint(out, (uint64_t)f->number << 3 | 2);
    put_varint(out, sub.len);
    if (sub.len) put(out, sub.p, sub.len);
  }
  free(sub.p);
}

static int trim(Kind kind, const unsigned char *p, const unsigned char *end, Buf *out, Uses *u) {
  size_t before = out->len;
  while (p < end) {
    Field f = next_field(&p, end);
    uint32_t n = f.number;
    switch (kind) {
      case kFile: /* 3 dependency, 10 public, 11 weak: recomputed; 6 service, 9 source info: dropped */
        if (n == 3 || n == 6 || n == 9 || n == 10 || n == 11) continue;
        if (n == 4) { descend(kMessage, &f, out, u); continue; }
        if (n == 5) { descend(kEnum, &f, out, u); continue; }
        if (n == 7) { descend(kField, &f, out, u); continue; }
        if (n == 8) { descend(kOptions, &f, out, u); continue; }
        break;
      case kMessage:
        if (n == 2 || n == 6) { descend(kField, &f, out, u); continue; }
        if (n == 3) { descend(kMessage, &f, out, u); continue; }
        if (n == 4) { descend(kEnum, &f, out, u); continue; }
        if (n == 7) { descend(kOptions, &f, out, u); continue; }
        if (n == 8) { descend(kOneof, &f, out, u); continue; }
        break;
      case kField:
        if ((n == 2 || n == 6) && f.wire == 2) add_ref(u, f.data, f.size); /* extendee, type_name */
        if (n == 8) { descend(kOptions, &f, out, u); continue; }
        break;
      case kOneof:
        if (n == 2) { descend(kOptions, &f, out, u); continue; }
        break;
      case kEnum:
        if (n == 2) { descend(kEnumValue, &f, out, u); continue; }
        if (n == 3) { descend(kOptions, &f, out, u); continue; }
        break;
      case kEnumValue:
        if (n == 3) { descend(kOptions, &f, out, u); continue; }
        break;
      case kOptions:
        if (n == 1071 || n == 1072) u->validate = 1;
        else if (n >= 1000) continue;
        break;
    }
    put(out, f.start, (size_t)(f.end - f.start));
  }
  return out->len > before;
}

/* ---- which piece defines each name ----
 * A piece is a set of a file's top-level messages and enums (or its extensions) that refer to
 * one another in a cycle (a strongly connected component; usually one message with its nested
 * types). Each piece becomes a file of its own, so loading a message loads the pieces it uses,
 * not every message of every file it touches. */

typedef struct {
  char *name;
  size_t file, node; /* node: index among the file's top-level messages and enums; n_tops: extensions */
} Sym;

static Sym *syms;
static size_t nsyms, capsyms;

static char *define(const char *prefix, const unsigned char *name, size_t n, size_t file, size_t node) {
  size_t pl = strlen(prefix);
  char *s = malloc(pl + n + 2);
  if (!s) fail("out of memory");
  memcpy(s, prefix, pl);
  if (pl) s[pl++] = '.';
  memcpy(s + pl, name, n);
  s[pl + n] = '\0';
  if (nsyms == capsyms) {
    capsyms = capsyms ? capsyms * 2 : 4096;
    syms = realloc(syms, capsyms * sizeof *syms);
    if (!syms) fail("out of memory");
  }
  syms[nsyms++] = (Sym){s, file, node};
  return s;
}

/* The name (field 1) of a message, enum or field descriptor. */
static Field name_of(const unsigned char *p, const unsigned char *end) {
  while (p < end) {
    Field f = next_field(&p, end);
    if (f.number == 1 && f.wire == 2) return f;
  }
  fail("a descriptor without a name");
  return (Field){0};
}

/* A message's nested messages (3), enums (4) and extensions (6), all in the top-level node. */
static void define_nested(const char *prefix, const unsigned char *p, const unsigned char *end, size_t file, size_t node) {
  while (p < end) {
    Field f = next_field(&p, end);
    if (f.wire != 2 || !(f.number == 3 || f.number == 4 || f.number == 6)) continue;
    Field nm = name_of(f.data, f.data + f.size);
    char *full = define(prefix, nm.data, nm.size, file, node);
    if (f.number == 3) define_nested(full, f.data, f.data + f.size, file, node);
  }
}

static int by_name(const void *x, const void *y) { return strcmp(((const Sym *)x)->name, ((const Sym *)y)->name); }

static const Sym *sym_of(const char *name) {
  Sym key = {.name = (char *)name};
  return bsearch(&key, syms, nsyms, sizeof *syms, by_name);
}

/* ---- one file's nodes, their edges, and the pieces (Tarjan's SCCs, dependencies first) ---- */

typedef struct {
  Field item;      /* the message (4), enum (5); for the extensions node, unused */
  Buf body;        /* trimmed, with its field tag: what goes into the piece */
  Uses uses;
  size_t index, low;
  int on_stack, visited;
  long piece;
} Node;

typedef struct {
  char *name, *package;
  Field syntax;    /* field 12, or number 0 */
  Node *nodes;
  size_t n;        /* nodes, the extensions node last when there is one */
} File;

static File *files;
static size_t nfiles;
static char **piece_names;
static size_t npieces, cappieces;
static const Sym *validate_sym;
static Buf out;

static size_t *stack, depth, counter;

static void emit_piece(File *f, size_t *members, size_t count);

/* The nodes of file fi that node v refers to (same file), through fn. */
static void each_edge(size_t fi, Node *v, void (*fn)(size_t fi, size_t w)) {
  for (size_t off = 0; off < v->uses.refs.len; off += strlen((char *)v->uses.refs.p + off) + 1) {
    const Sym *s = sym_of((char *)v->uses.refs.p + off);
    if (!s) fail("a type a field uses is defined nowhere in the set");
    if (s->file == fi) fn(fi, s->node);
    else if (s->file > fi) fail("an import comes after its importer (protoc's --include_imports order expected)");
  }
  if (v->uses.validate && validate_sym && validate_sym->file == fi) fn(fi, validate_sym->node);
}

static void strongconnect(size_t fi, size_t vi);

/* Tarjan's algorithm in two passes over a node's edges: first the recursion into unvisited
 * successors, then the low links of those on the stack. */
static void visit_edge(size_t fi, size_t wi) {
  if (!files[fi].nodes[wi].visited) strongconnect(fi, wi);
}

static size_t current_low_target;

static void lower(size_t fi, size_t wi) {
  Node *w = &files[fi].nodes[wi];
  Node *v = &files[fi].nodes[current_low_target];
  /* the low link of a successor still on the stack (one in our component): after a recursion
   * it may reach further back than its own index */
  if (w->on_stack && w->low < v->low) v->low = w->low;
  if (!w->on_stack && w->piece < 0) fail("internal: edge to an unfinished node off the stack");
}

static void strongconnect(size_t fi, size_t vi) {
  File *f = &files[fi];
  Node *v = &f->nodes[vi];
  v->visited = 1;
  v->index = v->low = counter++;
  stack[depth++] = vi;
  v->on_stack = 1;
  each_edge(fi, v, visit_edge);
  current_low_target = vi;
  each_edge(fi, v, lower);
  if (v->low == v->index) {
    size_t count = 0, *members = malloc(f->n * sizeof *members);
    if (!members) fail("out of memory");
    size_t w;
    do {
      w = stack[--depth];
      f->nodes[w].on_stack = 0;
      members[count++] = w;
    } while (w != vi);
    emit_piece(f, members, count);
    free(members);
  }
}

static void emit_piece(File *f, size_t *members, size_t count) {
  size_t fi = (size_t)(f - files);
  long id = (long)npieces;
  for (size_t k = 0; k < count; k++) f->nodes[members[k]].piece = id;
  /* named after the file and its first member, so messages say where they came from */
  Node *first = &f->nodes[members[count - 1]];
  char *name;
  if (first->item.number) {
    Field nm = name_of(first->item.data, first->item.data + first->item.size);
    name = malloc(strlen(f->name) + nm.size + 2);
    if (!name) fail("out of memory");
    sprintf(name, "%s#%.*s", f->name, (int)nm.size, (const char *)nm.data);
  } else {
    name = malloc(strlen(f->name) + 12);
    if (!name) fail("out of memory");
    sprintf(name, "%s#extensions", f->name);
  }
  if (npieces == cappieces) {
    cappieces = cappieces ? cappieces * 2 : 1024;
    piece_names = realloc(piece_names, cappieces * sizeof *piece_names);
    if (!piece_names) fail("out of memory");
  }
  piece_names[npieces++] = name;

  Buf file = {0};
  put_varint(&file, 1 << 3 | 2);
  put_varint(&file, strlen(name));
  put(&file, name, strlen(name));
  if (*f->package) {
    put_varint(&file, 2 << 3 | 2);
    put_varint(&file, strlen(f->package));
    put(&file, f->package, strlen(f->package));
  }
  if (f->syntax.number) put(&file, f->syntax.start, (size_t)(f->syntax.end - f->syntax.start));
  unsigned char *need = calloc(npieces, 1);
  if (!need) fail("out of memory");
  for (size_t k = count; k-- > 0;) {
    Node *v = &f->nodes[members[k]];
    put(&file, v->body.p, v->body.len);
    for (size_t off = 0; off < v->uses.refs.len; off += strlen((char *)v->uses.refs.p + off) + 1) {
      const Sym *s = sym_of((char *)v->uses.refs.p + off);
      long dep = files[s->file].nodes[s->node].piece;
      if (dep < 0) fail("internal: a piece before what it uses");
      need[dep] = 1;
    }
    if (v->uses.validate) {
      if (!validate_sym) fail("PGV options without validate.proto in the set");
      long vp = files[validate_sym->file].nodes[validate_sym->node].piece;
      if (vp < 0 && validate_sym->file != fi) fail("internal: validate.proto not yet emitted");
      if (vp >= 0) need[vp] = 1;
    }
  }
  need[id] = 0;
  for (size_t k = 0; k < npieces; k++) {
    if (!need[k]) continue;
    put_varint(&file, 3 << 3 | 2);
    put_varint(&file, strlen(piece_names[k]));
    put(&file, piece_names[k], strlen(piece_names[k]));
  }
  free(need);
  put_varint(&out, 1 << 3 | 2);
  put_varint(&out, file.len);
  put(&out, file.p, file.len);
  free(file.p);
}

int main(int argc, char **argv) {
  if (argc != 3) return fail("usage: trim INPUT.pb OUTPUT.pb");
  FILE *in = fopen(argv[1], "rb");
  if (!in) { perror(argv[1]); return 1; }
  Buf set = {0};
  unsigned char chunk[1 << 16];
  for (size_t n; (n = fread(chunk, 1, sizeof chunk, in)) > 0;) put(&set, chunk, n);
  if (ferror(in)) return fail("cannot read the descriptor set");
  fclose(in);

  /* FileDescriptorSet: `repeated FileDescriptorProto file = 1` only. Pass 1: the files, their
   * top-level nodes, and every name. */
  size_t capfiles = 0;
  for (const unsigned char *p = set.p, *end = set.p + set.len; p < end;) {
    Field f = next_field(&p, end);
    if (f.number != 1 || f.wire != 2) return fail("not a FileDescriptorSet of files only");
    if (nfiles == capfiles) {
      capfiles = capfiles ? capfiles * 2 : 512;
      files = realloc(files, capfiles * sizeof *files);
      if (!files) return fail("out of memory");
    }
    File *file = &files[nfiles];
    memset(file, 0, sizeof *file);
    Field nm = name_of(f.data, f.data + f.size);
    file->name = strndup((const char *)nm.data, nm.size);
    file->package = strdup("");
    size_t tops = 0, exts = 0;
    for (const unsigned char *q = f.data, *qe = f.data + f.size; q < qe;) {
      Field g = next_field(&q, qe);
      if (g.number == 2 && g.wire == 2) { free(file->package); file->package = strndup((const char *)g.data, g.size); }
      if (g.number == 12) file->syntax = g;
      if (g.number == 4 || g.number == 5) tops++;
      if (g.number == 7) exts++;
    }
    file->n = tops + (exts ? 1 : 0);
    file->nodes = calloc(file->n ? file->n : 1, sizeof *file->nodes);
    if (!file->nodes) return fail("out of memory");
    size_t k = 0;
    for (const unsigned char *q = f.data, *qe = f.data + f.size; q < qe;) {
      Field g = next_field(&q, qe);
      Kind kind = g.number == 4 ? kMessage : g.number == 5 ? kEnum : kField;
      if (g.number == 4 || g.number == 5) {
        Node *v = &file->nodes[k];
        v->item = g;
        v->piece = -1;
        Field gn = name_of(g.data, g.data + g.size);
        char *full = define(file->package, gn.data, gn.size, nfiles, k);
        if (g.number == 4) define_nested(full, g.data, g.data + g.size, nfiles, k);
        descend(kind, &g, &v->body, &v->uses);
        k++;
      } else if (g.number == 7) {
        Node *v = &file->nodes[tops];
        v->piece = -1;
        Field gn = name_of(g.data, g.data + g.size);
        define(file->package, gn.data, gn.size, nfiles, tops);
        descend(kField, &g, &v->body, &v->uses);
      }
    }
    nfiles++;
  }
  qsort(syms, nsyms, sizeof *syms, by_name);
  validate_sym = sym_of("validate.rules");

  /* Pass 2: each file's pieces, dependencies first. */
  size_t maxn = 1;
  for (size_t i = 0; i < nfiles; i++) if (files[i].n > maxn) maxn = files[i].n;
  stack = malloc(maxn * sizeof *stack);
  if (!stack) return fail("out of memory");
  for (size_t i = 0; i < nfiles; i++) {
    depth = counter = 0;
    for (size_t v = 0; v < files[i].n; v++) if (!files[i].nodes[v].visited) strongconnect(i, v);
  }
  FILE *o = fopen(argv[2], "wb");
  if (!o || fwrite(out.p, 1, out.len, o) != out.len || fclose(o) != 0) { perror(argv[2]); return 1; }
  fprintf(stderr, "trim: %zu files, %zu pieces, %zu -> %zu bytes\n", nfiles, npieces, set.len, out.len);
  return 0;
}
