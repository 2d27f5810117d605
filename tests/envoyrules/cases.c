/* The case list, the seeded PRNG, and the fixed corpus file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static uint64_t hash_of(const po_DiffCase *x) {
  uint64_t h = 1469598103934665603u;
  const char *parts[] = {x->resource, x->path, x->value, x->form};
  for (size_t i = 0; i < 4; i++) {
    for (const char *p = parts[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
    h = (h ^ 0xff) * 1099511628211u;
  }
  return h;
}

static bool same(const po_DiffCase *x, const po_DiffCase *y) {
  return !strcmp(x->resource, y->resource) && !strcmp(x->path, y->path) && !strcmp(x->value, y->value) &&
         !strcmp(x->form, y->form);
}

/* The slot of x in the set: where it is, or the empty one where it would go. */
static size_t *slot(const po_DiffCases *c, const po_DiffCase *x) {
  size_t i = hash_of(x) & (c->seen_cap - 1);
  while (c->seen[i] && !same(&c->items[c->seen[i] - 1], x)) i = (i + 1) & (c->seen_cap - 1);
  return &c->seen[i];
}

static bool grow_seen(po_DiffCases *c) {
  size_t cap = c->seen_cap ? 2 * c->seen_cap : 4096;
  size_t *old = c->seen, old_cap = c->seen_cap;
  c->seen = po_Arena_Malloc(c->a, cap * sizeof *c->seen);
  if (!c->seen) return false;
  c->seen_cap = cap;
  for (size_t i = 0; i < old_cap; i++) {
    if (old[i]) *slot(c, &c->items[old[i] - 1]) = old[i];
  }
  return true;
}

bool po_DiffCases_Add(po_DiffCases *c, const char *resource, const char *path, const char *value, const char *kind,
                      const char *form) {
  if (!path || !value || !kind) return false;
  po_DiffCase x = {resource, path, value, kind, form, false};
  if (2 * (c->len + 1) > c->seen_cap && !grow_seen(c)) return false;
  size_t *at = slot(c, &x);
  if (*at) return true;
  if (c->len == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 1024;
    po_DiffCase *v = po_Arena_Malloc(c->a, cap * sizeof *v);
    if (!v) return false;
    if (c->len) memcpy(v, c->items, c->len * sizeof *v);
    c->items = v, c->cap = cap;
  }
  c->items[c->len++] = x;
  *slot(c, &x) = c->len;
  return true;
}

uint64_t po_DiffRng_Next(po_DiffRng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

uint64_t po_DiffRng_Below(po_DiffRng *r, uint64_t n) { return n ? po_DiffRng_Next(r) % n : 0; }

/* One corpus line: five tab-separated fields; the value is JSON text, so it holds no tab or
 * newline of its own (JSON escapes them in strings). */
static bool corpus_line(po_DiffCases *out, char *line, const char *file, int lineno) {
  char *f[5];
  size_t n = 0;
  for (char *p = line; n < 5; n++) {
    f[n] = p;
    char *tab = strchr(p, '\t');
    if (!tab) {
      n++;
      break;
    }
    *tab = '\0';
    p = tab + 1;
  }
  if (n != 5) {
    fprintf(stderr, "%s:%d: want 5 tab-separated fields (resource, path, value, kind, form), got %zu\n", file, lineno, n);
    return false;
  }
  po_Arena *a = out->a;
  const char *s[5];
  for (size_t i = 0; i < 5; i++) s[i] = po_Arena_Strndup(a, f[i], strlen(f[i]));
  if (!po_DiffCases_Add(out, s[0], s[1], s[2], s[3], s[4])) return false;
  out->items[out->len - 1].corpus = true;
  return true;
}

bool po_DiffCorpus_Load(const char *file, po_DiffCases *out) {
  FILE *fp = fopen(file, "r");
  if (!fp) {
    fprintf(stderr, "corpus %s: %s\n", file, strerror(errno));
    return false;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineno = 0;
  bool ok = true;
  while (ok && (len = getline(&line, &cap, fp)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (len == 0 || line[0] == '#') continue;
    ok = corpus_line(out, line, file, lineno);
  }
  free(line);
  fclose(fp);
  return ok;
}

void po_DiffCorpus_Write(FILE *f, const po_DiffCase *c) {
  fprintf(f, "%s\t%s\t%s\t%s\t%s\n", c->resource, c->path, c->value, c->kind, c->form);
}
