/* libFuzzer target: po_Value_StreamYaml/Json against the whole-tree readers (differential).
 * The first byte picks JSON ('j') or YAML (anything else), the rest is the input. What the stream hands over, after
 * its retractions, must be what the whole reading gives once each List document is unpacked
 * into its items (same order, JSON text, position of every node), or both must fail with the
 * same message. One allowed difference: YAML's bound on alias expansion is counted per item and
 * over the items' aliases when streaming, over the whole document otherwise, so when one side
 * fails on "YAML expands" the other may have read it. The reader's peak must stay near what one
 * item needs; nothing may crash or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  char *p;
  size_t len, cap;
} Buf;

static void put(Buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void positions(Buf *b, const po_Value *v, int depth) {
  char t[32];
  po_Pos p = po_Value_Pos(v);
  put(b, t, (size_t)snprintf(t, sizeof t, "@%d:%d", p.line, p.column));
  if (depth > 70) return; /* aliases make a DAG; the readers bound its depth, not this walk */
  for (size_t i = 0; i < po_Value_Size(v); i++) positions(b, po_Value_At(v, i), depth + 1);
}

static void describe(Buf *b, int doc, long item, const po_Value *v) {
  char t[64];
  put(b, t, (size_t)snprintf(t, sizeof t, "doc %d item %ld: ", doc, item));
  po_Arena *a = po_Arena_New();
  if (!a) abort();
  const char *j = po_Value_Kind(v) == kPo_ValueKind_Null ? "null" : po_Value_ToJson(v, a);
  if (!j) abort();
  put(b, j, strlen(j));
  positions(b, v, 0);
  put(b, "\n", 1);
  po_Arena_Free(a);
}

static bool list_kind(const po_Value *head) {
  const char *k = po_Value_String(po_Value_Get(head, "kind"), NULL);
  size_t n = k ? strlen(k) : 0;
  return n >= 4 && !strcmp(k + n - 4, "List");
}

static void whole_doc(Buf *b, int doc, const po_Value *v) {
  const po_Value *items = po_Value_Get(v, "items");
  if (po_Value_Kind(v) == kPo_ValueKind_Map && po_Value_Kind(items) == kPo_ValueKind_List && list_kind(v)) {
    for (size_t i = 0; i < po_Value_Size(items); i++) describe(b, doc, (long)i, po_Value_At(items, i));
  } else {
    describe(b, doc, -1, v);
  }
}

typedef struct {
  Buf out;
  size_t doc_start;
  int doc;
} Collected;

static bool is_list(void *ctx, const po_Value *head) {
  (void)ctx;
  return list_kind(head);
}

static bool object(void *ctx, const po_StreamObject *o, po_Arena *a, po_Status *st) {
  (void)st;
  Collected *c = ctx;
  if (!po_Arena_Malloc(a, 16)) abort();
  if (o->doc != c->doc) {
    if (o->doc < c->doc) abort();
    c->doc = o->doc;
    c->doc_start = c->out.len;
  }
  describe(&c->out, o->doc, o->item, o->value);
  return true;
}

static bool retract(void *ctx, int doc) {
  Collected *c = ctx;
  if (doc != c->doc) abort();
  c->out.len = c->doc_start;
  if (c->out.p) c->out.p[c->out.len] = '\0';
  return true;
}

static bool expansion(const po_Status *st) { return strstr(st->message, "YAML expands") != NULL; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  bool json = data[0] == 'j';
  const char *text = (const char *)data + 1;
  size_t len = size - 1;

  Buf want = {0};
  po_Status wst, sst;
  po_Status_Clear(&wst);
  po_Arena *a = po_Arena_New();
  if (!a) return 0;
  bool wok;
  if (json) {
    po_Value *v = po_Value_ParseJson(text, len, a, &wst);
    wok = v != NULL;
    if (wok) whole_doc(&want, 1, v);
  } else {
    po_Value **docs = NULL;
    size_t n = 0;
    wok = po_Value_ParseYaml(text, len, a, &docs, &n, &wst);
    for (size_t i = 0; wok && i < n; i++) whole_doc(&want, (int)i + 1, docs[i]);
  }
  po_Arena_Free(a);

  Collected c = {0};
  po_StreamStats stats = {0};
  po_ValueStream s = {.ctx = &c, .is_list = is_list, .object = object, .retract = retract, .stats = &stats};
  po_Status_Clear(&sst);
  bool sok = json ? po_Value_StreamJson(text, len, &s, &sst) : po_Value_StreamYaml(text, len, &s, &sst);

  if (!wok && !sok) {
    if (strcmp(wst.message, sst.message) != 0 && !(expansion(&wst) && expansion(&sst))) {
      fprintf(stderr, "errors differ:\n  whole:  %s\n  stream: %s\n", wst.message, sst.message);
      abort();
    }
  } else if (wok != sok) {
    if (!(wok ? expansion(&sst) : expansion(&wst))) {
      fprintf(stderr, "whole %s (%s), stream %s (%s)\n", wok ? "ok" : "failed", wst.message, sok ? "ok" : "failed", sst.message);
      abort();
    }
  } else if (strcmp(want.p ? want.p : "", c.out.p ? c.out.p : "") != 0) {
    fprintf(stderr, "objects differ:\n--- whole\n%s--- stream\n%s", want.p ? want.p : "", c.out.p ? c.out.p : "");
    abort();
  }
  free(want.p);
  free(c.out.p);
  return 0;
}
