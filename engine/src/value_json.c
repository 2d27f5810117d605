/* JSON <-> po_Value, through json-c. */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "value_stream.h"

enum { kMaxDepth = 64 };

/* ---- integer literals beyond int64 ----
 * json-c clamps them (-9223372036854775809 reads as INT64_MIN) and keeps no text. Before json-c
 * sees the input, each such literal is replaced by a string of the same length, `"\u0000K..."`
 * (K its index, padded with dots), so positions in parse errors stay right; reading the tree,
 * such a string becomes a float64 carrying the literal as written. The scan is one linear pass
 * and copies the input only when a literal is found. */
typedef struct {
  const char **lits; /* as written, NUL-terminated, in the arena */
  size_t count;
} BigInts;

static bool beyond_int64(const char *p, size_t n) {
  bool neg = p[0] == '-';
  const char *d = p + neg;
  size_t len = n - neg;
  const char *limit = neg ? "9223372036854775808" : "9223372036854775807";
  if (len != 19) return len > 19;
  return memcmp(d, limit, 19) > 0;
}

/* The input with big literals replaced (or `text` itself when there are none). */
static const char *mark_big_ints(const char *text, size_t len, po_Arena *a, BigInts *out) {
  char *copy = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < len;) {
    char c = text[i];
    if (c == '"') {
      for (i++; i < len && text[i] != '"'; i++) if (text[i] == '\\') i++;
      i++;
      continue;
    }
    if (c != '-' && !(c >= '0' && c <= '9')) { i++; continue; }
    size_t start = i++;
    bool integer = true;
    while (i < len && (strchr("0123456789", text[i]) || (text[i] && strchr(".eE+-", text[i])))) {
      if (!(text[i] >= '0' && text[i] <= '9')) integer = false;
      i++;
    }
    size_t n = i - start;
    if (!integer || n < 19 || !beyond_int64(text + start, n)) continue;
    if (!copy) {
      copy = po_Arena_Malloc(a, len + 1);
      if (!copy) return NULL;
      memcpy(copy, text, len);
    }
    char head[32];
    int hn = snprintf(head, sizeof head, "\"\\u0000%zu", out->count);
    if (hn < 0 || (size_t)hn + 1 > n) continue; /* cannot happen: n >= 19 */
    memcpy(copy + start, head, (size_t)hn);
    memset(copy + start + hn, '.', n - (size_t)hn - 1);
    copy[start + n - 1] = '"';
    if (out->count == cap) {
      cap = cap ? cap * 2 : 4;
      const char **nl = po_Arena_Malloc(a, cap * sizeof *nl);
      if (!nl) return NULL;
      if (out->count) memcpy(nl, out->lits, out->count * sizeof *nl);
      out->lits = nl;
    }
    if (!(out->lits[out->count++] = po_Arena_Strndup(a, text + start, n))) return NULL;
  }
  return copy ? copy : text;
}

/* The literal a marker string stands for, or NULL when the string is an ordinary one. */
static const char *big_int_of(const char *s, size_t len, const BigInts *b) {
  if (!b || !b->count || len < 2 || s[0] != '\0') return NULL;
  size_t k = 0, i = 1;
  for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) k = k * 10 + (size_t)(s[i] - '0');
  if (i == 1 || k >= b->count) return NULL;
  for (; i < len; i++) if (s[i] != '.') return NULL;
  return strlen(b->lits[k]) == len + 7 ? b->lits[k] : NULL; /* `"\u0000` and `"` became one NUL */
}

static po_Value *from_jsonc(const json_object *j, po_Arena *a, int depth, const BigInts *big,
                            po_Status *st) {
  if (depth > kMaxDepth) {
    po_Status_Set(st, kPo_Status_Limit, "value nested deeper than %d levels", kMaxDepth);
    return NULL;
  }
  po_Value *v = NULL;
  switch (json_object_get_type(j)) {
    case json_type_null: v = po_Value_NewNull(a); break;
    case json_type_boolean: v = po_Value_NewBool(a, json_object_get_boolean(j)); break;
    case json_type_int: {
      /* Literals beyond int64 were marked before parsing (po_Value_ParseJson); a json-c tree
       * built elsewhere can only be clamped here, and then says so by its uint64 copy. */
      int64_t i = json_object_get_int64(j);
      uint64_t u = json_object_get_uint64(j);
      if (i == INT64_MAX && u > (uint64_t)INT64_MAX) {
        v = po_Value_NewFloat(a, (double)u);
      } else {
        v = po_Value_NewInt(a, i);
      }
      break;
    }
    case json_type_double: {
      double d = json_object_get_double(j);
      if (isnan(d) || isinf(d)) {
        po_Status_Set(st, kPo_Status_Parse, "%s is not a JSON number", json_object_to_json_string((json_object *)j));
        return NULL;
      }
      v = po_Value_NewFloat(a, d);
      break;
    }
    case json_type_string: {
      const char *s = json_object_get_string((json_object *)j);
      size_t len = (size_t)json_object_get_string_len(j);
      const char *lit = big_int_of(s, len, big);
      if (lit) {
        v = po_Value_NewFloat(a, strtod(lit, NULL));
        if (v) v->lit = lit;
      } else {
        v = po_Value_NewString(a, s, len);
      }
      break;
    }
    case json_type_array: {
      v = po_Value_NewList(a);
      size_t n = json_object_array_length(j);
      if (v && !po_Value_Reserve_(a, v, n)) v = NULL;
      for (size_t i = 0; v && i < n; i++) {
        po_Value *e = from_jsonc(json_object_array_get_idx(j, i), a, depth + 1, big, st);
        if (!e) return NULL;
        if (!po_Value_ListAppend(a, v, e)) v = NULL;
      }
      break;
    }
    case json_type_object: {
      v = po_Value_NewMap(a);
      if (v && !po_Value_Reserve_(a, v, (size_t)json_object_object_length(j))) v = NULL;
      json_object_object_foreach((json_object *)j, key, val) {
        if (!v) break;
        po_Value *e = from_jsonc(val, a, depth + 1, big, st);
        if (!e) return NULL;
        /* json-c already kept one value per key (the last, as Go's encoding/json does): a
         * scan per key here made a large object quadratic (a webhook stall). */
        if (!po_Value_MapAppendUnique(a, v, key, e)) v = NULL;
      }
      break;
    }
  }
  if (!v) po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return v;
}

po_Value *po_Value_FromJsonC(const json_object *j, po_Arena *a, po_Status *st) {
  return from_jsonc(j, a, 0, NULL, st);
}

static void offset_to_pos(const char *text, size_t off, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* json-c over [text, text+len): true with the tree in *out (NULL is JSON's null), or false with
 * the error's offset in *err_at (len for an input that ended early) and its description (NULL:
 * out of memory). */
static bool tokenize(const char *text, size_t len, int depth, json_object **out, size_t *err_at, const char **why) {
  *out = NULL;
  *why = NULL;
  json_tokener *tok = json_tokener_new_ex(depth);
  if (!tok) return *err_at = 0, false;
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  json_object *j = json_tokener_parse_ex(tok, text, (int)len);
  enum json_tokener_error err = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  if (err == json_tokener_continue && !j) {
    /* A bare number at the end may still continue: a NUL byte ends the input. */
    j = json_tokener_parse_ex(tok, "", 1);
    err = json_tokener_get_error(tok);
    if (err != json_tokener_success) err = json_tokener_continue; /* report: input ended */
    end = len;
  }
  *why = NULL;
  if (err == json_tokener_error_memory) { /* cmake/json-c-patches/tokener-oom.patch */
    json_object_put(j);
    json_tokener_free(tok);
    return *err_at = 0, false;
  }
  if (err == json_tokener_continue) {
    json_object_put(j);
    j = NULL;
    *err_at = len;
    *why = "unexpected end of JSON input";
  } else if (err != json_tokener_success) {
    json_object_put(j);
    j = NULL;
    *err_at = end;
    *why = json_tokener_error_desc(err);
  } else {
    size_t rest = end;
    while (rest < len && strchr(" \t\r\n", text[rest])) rest++;
    if (rest < len) {
      json_object_put(j);
      j = NULL;
      *err_at = rest;
      *why = "data after the value";
    }
  }
  json_tokener_free(tok);
  *out = j;
  return !*why;
}

/* Where a key of the JSON text (known valid; when the text is a key itself, it) holds \u0000, or
 * len: json-c keeps keys as C strings and would cut such a key, which could then take another
 * key's place. One pass over the text. */
static size_t nul_key_at(const char *t, size_t len, bool text_is_a_key) {
  for (size_t i = 0; i < len; i++) {
    if (t[i] != '"') continue;
    size_t start = i;
    bool nul = false;
    for (i++; i < len && t[i] != '"'; i++) {
      if (t[i] != '\\') continue;
      if (i + 5 < len && !memcmp(t + i + 1, "u0000", 5)) nul = true;
      i++; /* the escaped character: an escaped quote does not end the string */
    }
    size_t k = i + 1;
    while (k < len && strchr(" \t\r\n", t[k])) k++;
    if (nul && (text_is_a_key || (k < len && t[k] == ':'))) return start;
  }
  return len;
}

/* The whole (marked) text as one value, errors with line and column. */
static po_Value *parse_marked(const char *text, size_t len, const BigInts *big, po_Arena *a, po_Status *st) {
  size_t at = 0;
  const char *why = NULL;
  json_object *j;
  if (!tokenize(text, len, kMaxDepth, &j, &at, &why)) {
    int line, col;
    if (!why) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
    offset_to_pos(text, at, &line, &col);
    if (at == len && !strcmp(why, "unexpected end of JSON input")) {
      po_Status_Set(st, kPo_Status_Parse, "line %d, column %d: %s", line, col, why);
    } else {
      po_Status_Set(st, kPo_Status_Parse, "line %d, column %d: invalid JSON: %s", line, col, why);
    }
    return NULL;
  }
  /* only once the text is known valid JSON, so that a syntax error earlier or later is said first */
  size_t nul = nul_key_at(text, len, false);
  if (nul < len) {
    json_object_put(j);
    int line, col;
    offset_to_pos(text, nul, &line, &col);
    return po_Status_Set(st, kPo_Status_Parse, "line %d, column %d: %s", line, col, kPo_NulKeyRefused), NULL;
  }
  po_Value *v = from_jsonc(j, a, 0, big, st);
  json_object_put(j);
  return v;
}

po_Value *po_Value_ParseJson(const char *text, size_t len, po_Arena *a, po_Status *st) {
  if (len > INT32_MAX) {
    po_Status_Set(st, kPo_Status_Limit, "JSON input of %zu bytes is too large", len);
    return NULL;
  }
  BigInts big = {0};
  text = mark_big_ints(text, len, a, &big);
  if (!text) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  return parse_marked(text, len, &big, a, st);
}

/* ---- one object at a time (po_Value_StreamJson) -------------------------------------------------
 * json-c has no event interface and builds a whole tree (about 0.5 KB per object), so a root
 * object is cut by a structural scan: each top-level key, each top-level value, and each element
 * of the first `items` array, is handed to json-c on its own, with a depth limit that keeps the
 * whole within kMaxDepth. Anything the scan does not expect (including every error json-c finds
 * in a piece) makes the whole text be parsed as po_Value_ParseJson parses it, so errors and
 * results are exactly its own. */

typedef enum { kScanDone, kScanWhole, kScanError } ScanResult;

static size_t skip_ws(const char *t, size_t i, size_t len) {
  while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) i++;
  return i;
}

/* The end of the value starting at i, by brackets and strings only (json-c checks the rest);
 * 0 when no value can start there or the text ends inside it. */
static size_t value_end(const char *t, size_t i, size_t len) {
  if (i >= len) return 0;
  char c = t[i];
  if (c == '"' || c == '{' || c == '[') {
    size_t depth = 0;
    bool in_str = false;
    for (; i < len; i++) {
      char x = t[i];
      if (in_str) {
        if (x == '\\') i++;
        else if (x == '"') {
          in_str = false;
          if (!depth) return i + 1;
        }
      } else if (x == '"') {
        in_str = true;
      } else if (x == '{' || x == '[') {
        depth++;
      } else if (x == '}' || x == ']') {
        if (!depth || !--depth) return i + 1;
      }
    }
    return 0;
  }
  if (!(c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n')) return 0;
  while (i < len && !strchr(",}] \t\r\n", t[i])) i++;
  return i;
}

/* What a piece is, and so the context json-c reads it in: the piece is wrapped so that json-c
 * is in the state the whole parse is in when it reaches the piece (an array element after '['
 * or ',', an object's value after ':', an object's key after '{' or ','), and its messages are
 * the whole parse's. */
typedef enum { kPieceItem, kPieceValue, kPieceKey } PieceKind;

/* One piece [start, end) of t. A syntax error inside it is reported where and as the whole parse
 * reports it (what precedes the piece was read already); one at or after its end, or of depth,
 * sets *whole instead: only the whole text says what json-c makes of it. */
static po_Value *piece(const char *t, size_t start, size_t end, PieceKind kind, const BigInts *big, po_Arena *a,
                       po_Status *st, bool *whole) {
  static const char *const kHead[] = {"[", "{\"\":", "{"}, *const kTail[] = {"]", "}", ":0}"};
  size_t hl = strlen(kHead[kind]), tl = strlen(kTail[kind]), n = end - start;
  char *w = malloc(hl + n + tl);
  if (!w) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  memcpy(w, kHead[kind], hl);
  memcpy(w + hl, t + start, n);
  memcpy(w + hl + n, kTail[kind], tl);
  size_t at;
  const char *why;
  json_object *j;
  /* the whole parse is 2 levels deep at an item (root, items), 1 at a value or a key */
  bool ok = tokenize(w, hl + n + tl, kMaxDepth - (kind == kPieceItem ? 1 : 0), &j, &at, &why);
  free(w);
  if (!ok) {
    if (!why) {
      po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
    } else if (at >= hl && at - hl + 1 < n && strcmp(why, json_tokener_error_desc(json_tokener_error_depth)) != 0) {
      int line, col;
      offset_to_pos(t, start + at - hl, &line, &col);
      po_Status_Set(st, kPo_Status_Parse, "line %d, column %d: invalid JSON: %s", line, col, why);
    } else {
      *whole = true;
    }
    return NULL;
  }
  /* a NUL in a key (this one, or one inside): the whole text's reading says it */
  if (nul_key_at(t + start, n, kind == kPieceKey) < n) {
    json_object_put(j);
    *whole = true;
    return NULL;
  }
  po_Value *v = NULL;
  if (kind == kPieceItem) {
    v = json_object_array_length(j) == 1 ? from_jsonc(json_object_array_get_idx(j, 0), a, 2, big, st) : NULL;
  } else {
    struct json_object_iterator it = json_object_iter_begin(j);
    if (json_object_object_length(j) == 1) {
      v = kind == kPieceKey ? po_Value_NewString(a, json_object_iter_peek_name(&it), strlen(json_object_iter_peek_name(&it)))
                            : from_jsonc(json_object_iter_peek_value(&it), a, 1, big, st);
    }
  }
  if (!v && po_Status_IsOk(st)) *whole = true; /* not one element: the scan was wrong */
  if (!v && !po_Status_IsOk(st) && st->code != kPo_Status_NoMemory) {
    /* A value json-c reads but ours refuses (a number beyond a double): the whole parse reads
     * all the text first, so a syntax error after this piece is its error, not this one; only
     * the whole text says which comes first (fuzz_stream). */
    po_Status_Clear(st);
    *whole = true;
  }
  json_object_put(j);
  return v;
}

static ScanResult scan_items(const char *t, size_t *i, size_t len, const BigInts *big, po_StreamCtx *c, po_Status *st) {
  size_t at = skip_ws(t, *i + 1, len);
  if (at < len && t[at] == ']') return *i = at + 1, kScanDone;
  for (long n = 0;; n++) {
    size_t end = value_end(t, at, len);
    if (!end) return kScanWhole;
    po_Arena *item = po_StreamCtx_Arena(c);
    if (!item) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), kScanError;
    bool whole = false;
    po_Value *v = piece(t, at, end, kPieceItem, big, item, st, &whole);
    bool ok = v && po_StreamCtx_Object(c, 1, n, v, st);
    po_Arena_Free(item);
    if (!ok) return whole ? kScanWhole : kScanError;
    at = skip_ws(t, end, len);
    if (at < len && t[at] == ']') return *i = at + 1, kScanDone;
    if (at >= len || t[at] != ',') return kScanWhole;
    at = skip_ws(t, at + 1, len);
  }
}

static ScanResult scan_root(const char *t, size_t len, const BigInts *big, po_StreamCtx *c, po_Arena *a, po_Status *st) {
  size_t i = skip_ws(t, 0, len);
  if (i >= len || t[i] != '{') return kScanWhole;
  po_Value *head = po_Value_NewMap(a);
  if (!head) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), kScanError;
  bool streamed = false, whole = false;
  i = skip_ws(t, i + 1, len);
  if (i < len && t[i] == '}') i++;
  else {
    for (;;) {
      if (i >= len || t[i] != '"') return kScanWhole;
      size_t kend = value_end(t, i, len);
      po_Value *k = kend ? piece(t, i, kend, kPieceKey, big, a, st, &whole) : NULL;
      if (!k) return !kend || whole ? kScanWhole : kScanError;
      size_t klen;
      const char *key = po_Value_String(k, &klen);
      /* a NUL in a key: the whole-text reading refuses it, with the same words as for a file */
      if (!key || strlen(key) != klen) return kScanWhole;
      i = skip_ws(t, kend, len);
      if (i >= len || t[i] != ':') return kScanWhole;
      i = skip_ws(t, i + 1, len);
      bool items = !strcmp(key, "items");
      if (items && streamed) return kScanWhole;
      if (items && i < len && t[i] == '[' && !po_Value_Get(head, "items")) {
        streamed = true;
        ScanResult res = scan_items(t, &i, len, big, c, st);
        if (res != kScanDone) return res;
      } else {
        size_t vend = value_end(t, i, len);
        po_Value *v = vend ? piece(t, i, vend, kPieceValue, big, a, st, &whole) : NULL;
        if (!v) return !vend || whole ? kScanWhole : kScanError;
        if (!po_Value_MapPut(a, head, key, v)) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), kScanError;
        i = vend;
      }
      i = skip_ws(t, i, len);
      if (i < len && t[i] == '}') {
        i++;
        break;
      }
      if (i >= len || t[i] != ',') return kScanWhole;
      i = skip_ws(t, i + 1, len);
    }
  }
  if (skip_ws(t, i, len) != len) return kScanWhole;
  if (!streamed) return po_StreamCtx_Document(c, 1, head, st) ? kScanDone : kScanError;
  const po_ValueStream *vs = c->s;
  return vs->is_list && vs->is_list(vs->ctx, head) ? kScanDone : kScanWhole;
}

bool po_Value_StreamJson(const char *text, size_t len, const po_ValueStream *vs, po_Status *st) {
  if (len > INT32_MAX) return po_Status_Set(st, kPo_Status_Limit, "JSON input of %zu bytes is too large", len);
  po_StreamCtx c;
  po_StreamCtx_Init(&c, vs);
  po_Arena *a = po_StreamCtx_Arena(&c);
  if (!a) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  BigInts big = {0};
  const char *marked = mark_big_ints(text, len, a, &big);
  ScanResult res = marked ? scan_root(marked, len, &big, &c, a, st) : kScanError;
  if (!marked) po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  bool ok = res == kScanDone;
  if (res == kScanWhole) {
    /* Handed over again from a whole parse, which also finds the exact error when there is one. */
    ok = !c.objects || po_StreamCtx_Retract(&c, 1, st);
    po_Value *v = ok ? parse_marked(marked, len, &big, a, st) : NULL;
    ok = v && po_StreamCtx_Document(&c, 1, v, st);
  }
  po_Arena_Free(a);
  /* memory that ran out anywhere in the stream (a value of the tree, the caller's own work) is
   * no verdict on the text, whatever was read */
  if (c.failed) ok = po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return ok;
}

json_object *po_Value_ToJsonC(const po_Value *v) {
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Null: return NULL; /* json-c's null */
    case kPo_ValueKind_Bool: return json_object_new_boolean(v->u.b);
    case kPo_ValueKind_Int: return json_object_new_int64(v->u.i);
    case kPo_ValueKind_Float: return v->lit ? json_object_new_double_s(v->u.d, v->lit) : json_object_new_double(v->u.d);
    case kPo_ValueKind_String: return json_object_new_string_len(v->u.s.ptr, (int)v->u.s.len);
    case kPo_ValueKind_List: {
      json_object *arr = json_object_new_array_ext((int)v->u.agg.len);
      for (size_t i = 0; arr && i < v->u.agg.len; i++) {
        /* A child that could not be made is out of memory, never a null in its place: a tree
         * missing a value would be written as if it were whole. */
        const po_Value *c = v->u.agg.items[i];
        json_object *x = po_Value_ToJsonC(c);
        if ((!x && po_Value_Kind(c) != kPo_ValueKind_Null) || json_object_array_add(arr, x) != 0) {
          json_object_put(x);
          json_object_put(arr);
          return NULL;
        }
      }
      return arr;
    }
    case kPo_ValueKind_Map: {
      json_object *obj = json_object_new_object();
      for (size_t i = 0; obj && i < v->u.agg.len; i++) {
        const po_Value *c = v->u.agg.items[i];
        json_object *x = po_Value_ToJsonC(c);
        if ((!x && po_Value_Kind(c) != kPo_ValueKind_Null) || json_object_object_add(obj, v->u.agg.keys[i], x) != 0) {
          json_object_put(x);
          json_object_put(obj);
          return NULL;
        }
      }
      return obj;
    }
  }
  return NULL;
}

char *po_Value_ToJson(const po_Value *v, po_Arena *a) {
  json_object *j = po_Value_ToJsonC(v);
  /* NULL is json-c's null only for a null: else memory ran out, and json-c would print the NULL
   * as "null", a value that is not v. json-c's writer returns NULL when its buffer cannot grow. */
  const char *s = j || po_Value_Kind(v) == kPo_ValueKind_Null
                      ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                      : NULL;
  char *out = s ? po_Arena_Strndup(a, s, strlen(s)) : NULL;
  json_object_put(j);
  return out;
}
