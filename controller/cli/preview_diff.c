/* preview's output pieces: a resource's JSON as indented lines with sorted keys, and a unified
 * diff of two such texts (Myers' O(ND) algorithm; no Debian C library offers a line diff). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preview.h"

/* ================================ indented JSON ================================ */

/* The indenting itself is the engine's (po_Value_ToPrettyJson): the resources' texts come
 * straight from their messages (po_Message_ToPrettyJson), and the two must agree byte for byte. */
char *po_Preview_PrettyJson(const char *json, size_t len, po_Arena *a, po_Status *st) {
  const po_Value *v = po_Value_ParseJson(json, len, a, st);
  char *out = v ? po_Value_ToPrettyJson(v, a) : NULL;
  if (v && !out) po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return out;
}

char *po_Preview_PrettyValue(const po_Value *v, po_Arena *a) { return po_Value_ToPrettyJson(v, a); }

/* ================================ unified diff ================================ */

typedef struct {
  const char *p;
  size_t n; /* without the '\n' */
} Line;

static Line *split(const char *s, size_t *count, po_Arena *a) {
  size_t n = 0;
  for (const char *p = s; *p; p++) n += *p == '\n';
  if (*s && s[strlen(s) - 1] != '\n') n++;
  Line *l = po_Arena_Malloc(a, (n ? n : 1) * sizeof *l);
  if (!l) return NULL;
  size_t i = 0;
  for (const char *p = s; *p && i < n; i++) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    l[i] = (Line){p, len};
    p += len + (nl ? 1 : 0);
  }
  *count = n;
  return l;
}

static bool same(Line x, Line y) { return x.n == y.n && !memcmp(x.p, y.p, x.n); }

/* One step of the edit script, in order: ' ' both, '-' only before, '+' only after. */
typedef struct {
  char op;
  size_t ai, bi; /* the line's index in before ('-', ' ') and after ('+', ' ') */
} Edit;

/* Myers' greedy shortest edit script between a[0..n) and b[0..m), written to e (room for n+m);
 * returns its length, or SIZE_MAX when it needs more than kPo_DiffMaxEdits edits (or no memory). */
static size_t myers(const Line *a, size_t n, const Line *b, size_t m, size_t ao, size_t bo, Edit *e, po_Arena *ar) {
  long N = (long)n, M = (long)m, maxd = N + M;
  if (maxd > kPo_DiffMaxEdits) maxd = kPo_DiffMaxEdits;
  long off = maxd + 1;
  long *v = po_Arena_Malloc(ar, (size_t)(2 * maxd + 3) * sizeof *v);
  long **trace = po_Arena_Malloc(ar, (size_t)(maxd + 1) * sizeof *trace);
  if (!v || !trace) return SIZE_MAX;
  v[off + 1] = 0;
  long D = -1;
  for (long d = 0; d <= maxd && D < 0; d++) {
    /* the V of the previous step, for k in -d-1 .. d+1, kept for the walk back */
    trace[d] = po_Arena_Malloc(ar, (size_t)(2 * d + 3) * sizeof **trace);
    if (!trace[d]) return SIZE_MAX;
    memcpy(trace[d], v + off - d - 1, (size_t)(2 * d + 3) * sizeof *v);
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      long y = x - k;
      while (x < N && y < M && same(a[x], b[y])) x++, y++;
      v[off + k] = x;
      if (x >= N && y >= M) {
        D = d;
        break;
      }
    }
  }
  if (D < 0) return SIZE_MAX;
  /* walk back from (N, M), writing the script from its end */
  size_t total = (size_t)((N + M - D) / 2 + D); /* (N + M - D) / 2 kept lines and D edits */
  size_t at = total;
  long x = N, y = M;
  for (long d = D; d >= 0; d--) {
    const long *pv = trace[d] + d + 1; /* pv[k] for k in -d-1 .. d+1 */
    long k = x - y;
    long pk = (k == -d || (k != d && pv[k - 1] < pv[k + 1])) ? k + 1 : k - 1;
    long px = d ? pv[pk] : 0, py = d ? px - pk : 0;
    while (x > px && y > py) {
      x--, y--;
      e[--at] = (Edit){' ', ao + (size_t)x, bo + (size_t)y};
    }
    if (d == 0) break;
    if (x == px) e[--at] = (Edit){'+', ao + (size_t)x, bo + (size_t)(--y)};
    else e[--at] = (Edit){'-', ao + (size_t)(--x), bo + (size_t)y};
  }
  return total;
}

bool po_Preview_Diff(const char *before, const char *after, const char *label, po_Arena *ar, FILE *out) {
  if (!strcmp(before, after)) return true;
  size_t n = 0, m = 0;
  Line *a = split(before, &n, ar), *b = split(after, &m, ar);
  Edit *e = a && b ? po_Arena_Malloc(ar, (n + m + 1) * sizeof *e) : NULL;
  if (!e) return false;
  size_t head = 0, tail = 0, ne = 0;
  while (head < n && head < m && same(a[head], b[head])) head++;
  while (tail < n - head && tail < m - head && same(a[n - 1 - tail], b[m - 1 - tail])) tail++;
  for (size_t i = 0; i < head; i++) e[ne++] = (Edit){' ', i, i};
  size_t mid = myers(a + head, n - head - tail, b + head, m - head - tail, head, head, e + ne, ar);
  if (mid == SIZE_MAX) {
    /* too different for a minimal script within the bound: the middle replaced whole */
    for (size_t i = head; i < n - tail; i++) e[ne++] = (Edit){'-', i, head};
    for (size_t j = head; j < m - tail; j++) e[ne++] = (Edit){'+', n - tail, j};
  } else {
    ne += mid;
  }
  for (size_t i = 0; i < tail; i++) e[ne++] = (Edit){' ', n - tail + i, m - tail + i};

  fprintf(out, "--- a/%s\n+++ b/%s\n", label, label);
  enum { kContext = 3 };
  size_t i = 0;
  while (i < ne) {
    while (i < ne && e[i].op == ' ') i++;
    if (i == ne) break;
    /* a hunk: from kContext before this change to kContext after the last change that lies
     * within 2 * kContext unchanged lines of the one before it */
    size_t start = i >= kContext ? i - kContext : 0, end = i;
    for (size_t j = i; j < ne; j++) {
      if (e[j].op != ' ') end = j;
      else if (j - end > 2 * kContext) break;
    }
    size_t stop = end + kContext + 1 < ne ? end + kContext + 1 : ne;
    size_t as = 0, bs = 0;
    for (size_t j = start; j < stop; j++) as += e[j].op != '+', bs += e[j].op != '-';
    /* 1-based first lines; a range of 0 lines names the line before it (the format's rule) */
    size_t a0 = as ? e[start].ai + 1 : e[start].ai, b0 = bs ? e[start].bi + 1 : e[start].bi;
    fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", a0, as, b0, bs);
    for (size_t j = start; j < stop; j++) {
      const Line *l = e[j].op == '+' ? &b[e[j].bi] : &a[e[j].ai];
      fprintf(out, "%c%.*s\n", e[j].op, (int)l->n, l->p);
    }
    i = stop;
  }
  return true;
}
