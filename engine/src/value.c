/* po_Value: the JSON/YAML tree patches and arguments arrive as, typed as Go would type them. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "value_stream.h"

po_ValueKind po_Value_Kind(const po_Value *v) { return v ? v->kind : kPo_ValueKind_Null; }
bool po_Value_Bool(const po_Value *v) { return v && v->kind == kPo_ValueKind_Bool && v->u.b; }
int64_t po_Value_Int(const po_Value *v) { return v && v->kind == kPo_ValueKind_Int ? v->u.i : 0; }

double po_Value_Float(const po_Value *v) {
  if (!v) return 0;
  if (v->kind == kPo_ValueKind_Float) return v->u.d;
  if (v->kind == kPo_ValueKind_Int) return (double)v->u.i;
  return 0;
}

const char *po_Value_String(const po_Value *v, size_t *len) {
  if (!v || v->kind != kPo_ValueKind_String) {
    if (len) *len = 0;
    return NULL;
  }
  if (len) *len = v->u.s.len;
  return v->u.s.ptr;
}

size_t po_Value_Size(const po_Value *v) {
  return v && (v->kind == kPo_ValueKind_Map || v->kind == kPo_ValueKind_List) ? v->u.agg.len : 0;
}

const po_Value *po_Value_At(const po_Value *v, size_t i) {
  return i < po_Value_Size(v) ? v->u.agg.items[i] : NULL;
}

const char *po_Value_KeyAt(const po_Value *v, size_t i) {
  return v && v->kind == kPo_ValueKind_Map && i < v->u.agg.len ? v->u.agg.keys[i] : NULL;
}

const po_Value *po_Value_Get(const po_Value *v, const char *key) {
  if (!v || v->kind != kPo_ValueKind_Map) return NULL;
  /* Last one wins, as with encoding/json and json-c. */
  for (size_t i = v->u.agg.len; i-- > 0;) {
    if (strcmp(v->u.agg.keys[i], key) == 0) return v->u.agg.items[i];
  }
  return NULL;
}

po_Pos po_Value_Pos(const po_Value *v) { return v ? v->pos : (po_Pos){0, 0}; }
void po_Value_SetPos(po_Value *v, po_Pos pos) { if (v) v->pos = pos; }

const char *po_Value_GoType(const po_Value *v) {
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: return "<nil>";
    case kPo_ValueKind_Bool: return "bool";
    case kPo_ValueKind_Int: return "int";
    case kPo_ValueKind_Float: return "float64";
    case kPo_ValueKind_String: return "string";
    case kPo_ValueKind_Map: return "map[string]interface {}";
    case kPo_ValueKind_List: break;
  }
  size_t n = v->u.agg.len;
  if (n == 0 || v->untyped) return "[]interface {}";
  po_ValueKind first = po_Value_Kind(v->u.agg.items[0]);
  bool any_float = false;
  for (size_t i = 0; i < n; i++) {
    po_ValueKind k = po_Value_Kind(v->u.agg.items[i]);
    bool num = k == kPo_ValueKind_Int || k == kPo_ValueKind_Float;
    bool first_num = first == kPo_ValueKind_Int || first == kPo_ValueKind_Float;
    if (k != first && !(num && first_num)) return "[]interface {}";
    if (k == kPo_ValueKind_Float) any_float = true;
  }
  switch (first) {
    case kPo_ValueKind_Int:
    case kPo_ValueKind_Float: return any_float ? "[]float64" : "[]int";
    case kPo_ValueKind_String: return "[]string";
    case kPo_ValueKind_Bool: return "[]bool";
    default: return "[]interface {}";
  }
}

static po_Value *new_value(po_Arena *a, po_ValueKind k) {
  po_Value *v = po_Arena_Malloc(a, sizeof *v);
  if (v) v->kind = k;
  return v;
}

po_Value *po_Value_NewNull(po_Arena *a) { return new_value(a, kPo_ValueKind_Null); }
po_Value *po_Value_NewMap(po_Arena *a) { return new_value(a, kPo_ValueKind_Map); }
po_Value *po_Value_NewList(po_Arena *a) { return new_value(a, kPo_ValueKind_List); }

po_Value *po_Value_NewBool(po_Arena *a, bool b) {
  po_Value *v = new_value(a, kPo_ValueKind_Bool);
  if (v) v->u.b = b;
  return v;
}

po_Value *po_Value_NewInt(po_Arena *a, int64_t i) {
  po_Value *v = new_value(a, kPo_ValueKind_Int);
  if (v) v->u.i = i;
  return v;
}

po_Value *po_Value_NewFloat(po_Arena *a, double d) {
  po_Value *v = new_value(a, kPo_ValueKind_Float);
  if (v) v->u.d = d;
  return v;
}

po_Value *po_Value_NewString(po_Arena *a, const char *s, size_t len) {
  po_Value *v = new_value(a, kPo_ValueKind_String);
  if (!v) return NULL;
  v->u.s.ptr = po_Arena_Strndup(a, s, len);
  v->u.s.len = len;
  return v->u.s.ptr ? v : NULL;
}

/* Room for `cap` items (and keys) in all; what was there is copied, the old arrays stay in the arena. */
static bool reserve(po_Arena *a, po_Value *v, size_t cap) {
  po_Value **items = po_Arena_Malloc(a, cap * sizeof *items);
  if (!items) return false;
  if (v->u.agg.len) memcpy(items, v->u.agg.items, v->u.agg.len * sizeof *items);
  v->u.agg.items = items;
  if (v->kind == kPo_ValueKind_Map) {
    const char **keys = po_Arena_Malloc(a, cap * sizeof *keys);
    if (!keys) return false;
    if (v->u.agg.len) memcpy(keys, v->u.agg.keys, v->u.agg.len * sizeof *keys);
    v->u.agg.keys = keys;
  }
  v->u.agg.cap = cap;
  return true;
}

static bool grow(po_Arena *a, po_Value *v) {
  return v->u.agg.len < v->u.agg.cap || reserve(a, v, v->u.agg.cap ? v->u.agg.cap * 2 : 4);
}

bool po_Value_Reserve_(po_Arena *a, po_Value *v, size_t n) {
  return !v || (v->kind != kPo_ValueKind_Map && v->kind != kPo_ValueKind_List) || n <= v->u.agg.cap ||
         reserve(a, v, n);
}

/* The key copied first: a copy that fails leaves the map as it was (an entry with a NULL key was
 * appended before, and the next put to the map compared its key with it). */
static bool append_entry(po_Arena *a, po_Value *map, const char *key, po_Value *v) {
  const char *k = grow(a, map) ? po_Arena_Strndup(a, key, strlen(key)) : NULL;
  if (!k) return false;
  map->u.agg.keys[map->u.agg.len] = k;
  map->u.agg.items[map->u.agg.len++] = v;
  return true;
}

bool po_Value_MapPut(po_Arena *a, po_Value *map, const char *key, po_Value *v) {
  if (!map || map->kind != kPo_ValueKind_Map || !key) return false;
  for (size_t i = 0; i < map->u.agg.len; i++) {
    if (strcmp(map->u.agg.keys[i], key) == 0) {
      map->u.agg.items[i] = v;
      return true;
    }
  }
  return append_entry(a, map, key, v);
}

/* Copied with no spare room: a copy is read, not grown (a later put reserves anew). */
static po_Value *copy_value(const po_Value *v, po_Arena *a) {
  po_Value *c = po_Arena_Malloc(a, sizeof *c);
  if (!c) return NULL;
  *c = *v;
  if ((v->lit && !(c->lit = po_Arena_Strndup(a, v->lit, strlen(v->lit)))) ||
      (v->text && !(c->text = po_Arena_Strndup(a, v->text, strlen(v->text))))) {
    return NULL;
  }
  if (v->kind == kPo_ValueKind_String) return (c->u.s.ptr = po_Arena_Strndup(a, v->u.s.ptr, v->u.s.len)) ? c : NULL;
  if (v->kind != kPo_ValueKind_Map && v->kind != kPo_ValueKind_List) return c;
  size_t n = v->u.agg.len;
  c->u.agg.items = NULL, c->u.agg.keys = NULL, c->u.agg.len = c->u.agg.cap = 0;
  if (n && !reserve(a, c, n)) return NULL;
  c->u.agg.len = n;
  for (size_t i = 0; i < n; i++) {
    if (!(c->u.agg.items[i] = copy_value(v->u.agg.items[i], a))) return NULL;
    if (v->kind == kPo_ValueKind_Map &&
        !(c->u.agg.keys[i] = po_Arena_Strndup(a, v->u.agg.keys[i], strlen(v->u.agg.keys[i])))) {
      return NULL;
    }
  }
  return c;
}

po_Value *po_Value_Copy(const po_Value *v, po_Arena *a) { return v ? copy_value(v, a) : NULL; }

bool po_Value_MapAppendUnique(po_Arena *a, po_Value *map, const char *key, po_Value *v) {
  if (!map || map->kind != kPo_ValueKind_Map || !key) return false;
  return append_entry(a, map, key, v);
}

bool po_Value_ListAppend(po_Arena *a, po_Value *list, po_Value *v) {
  if (!list || list->kind != kPo_ValueKind_List || !grow(a, list)) return false;
  list->u.agg.items[list->u.agg.len++] = v;
  return true;
}

/* ---- streams (po_Value_StreamYaml/Json): counted arenas and the hand-over ------------------ */

/* Each block carries its size in front (upb frees with size 0), so `live` can go down again. */
enum { kBlockHead = 16 };

static void *count_alloc(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  (void)oldsize;
  po_StreamCtx *c = (po_StreamCtx *)alloc;
  if (ptr) {
    char *head = (char *)ptr - kBlockHead;
    size_t old;
    memcpy(&old, head, sizeof old);
    c->live -= old;
    if (!size) {
      free(head);
      return NULL;
    }
    char *grown = realloc(head, size + kBlockHead);
    if (!grown) {
      c->live += old;
      c->failed = true; /* as po_Arena_New's arenas record it */
      return NULL;
    }
    head = grown;
    memcpy(head, &size, sizeof size);
    c->live += size;
    if (c->live > c->peak) c->peak = c->live;
    return head + kBlockHead;
  }
  if (!size) return NULL;
  char *head = malloc(size + kBlockHead);
  if (!head) return c->failed = true, NULL;
  memcpy(head, &size, sizeof size);
  c->live += size;
  if (c->live > c->peak) c->peak = c->live;
  return head + kBlockHead;
}

void po_StreamCtx_Init(po_StreamCtx *c, const po_ValueStream *s) {
  memset(c, 0, sizeof *c);
  c->alloc.func = count_alloc;
  c->s = s;
}

po_Arena *po_StreamCtx_Arena(po_StreamCtx *c) {
  po_Arena *a = po_Arena_Wrap(upb_Arena_Init(NULL, 0, &c->alloc), &c->failed);
  if (!a) c->failed = true;
  return a;
}

static void note_peak(po_StreamCtx *c) {
  if (c->s->stats && c->peak > c->s->stats->peak_bytes) c->s->stats->peak_bytes = c->peak;
}

bool po_StreamCtx_Object(po_StreamCtx *c, int doc, long item, const po_Value *v, po_Status *st) {
  po_Arena *a = po_StreamCtx_Arena(c);
  if (!a) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  po_StreamObject o = {.doc = doc, .item = item, .value = v};
  bool ok = c->s->object(c->s->ctx, &o, a, st);
  note_peak(c);
  if (po_Engine_OutOfMemory(a)) c->failed = true; /* the callback's work too: the stream says so */
  po_Arena_Free(a);
  c->objects++;
  if (c->s->stats) c->s->stats->objects++;
  if (!ok && po_Status_IsOk(st)) po_Status_Set(st, kPo_Status_Invalid, "stopped by the caller");
  return ok;
}

bool po_StreamCtx_Document(po_StreamCtx *c, int doc, const po_Value *v, po_Status *st) {
  note_peak(c);
  const po_Value *items = po_Value_Get(v, "items");
  if (po_Value_Kind(v) == kPo_ValueKind_Map && po_Value_Kind(items) == kPo_ValueKind_List && c->s->is_list &&
      c->s->is_list(c->s->ctx, v)) {
    for (size_t i = 0; i < po_Value_Size(items); i++) {
      if (!po_StreamCtx_Object(c, doc, (long)i, po_Value_At(items, i), st)) return false;
    }
    return true;
  }
  return po_StreamCtx_Object(c, doc, -1, v, st);
}

bool po_StreamCtx_Retract(po_StreamCtx *c, int doc, po_Status *st) {
  if (c->s->stats) c->s->stats->retracted++;
  if (!c->s->retract || c->s->retract(c->s->ctx, doc)) return true;
  if (po_Status_IsOk(st)) po_Status_Set(st, kPo_Status_Invalid, "stopped by the caller");
  return false;
}
