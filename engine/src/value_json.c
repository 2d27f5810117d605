/* JSON <-> po_Value, through json-c. */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

enum { kMaxDepth = 64 };

static po_Value *from_jsonc(const json_object *j, po_Arena *a, int depth, po_Status *st) {
  if (depth > kMaxDepth) {
    po_Status_Set(st, kPo_ErrLimit, "value nested deeper than %d levels", kMaxDepth);
    return NULL;
  }
  po_Value *v = NULL;
  switch (json_object_get_type(j)) {
    case json_type_null: v = po_Value_NewNull(a); break;
    case json_type_boolean: v = po_Value_NewBool(a, json_object_get_boolean(j)); break;
    case json_type_int: {
      /* json-c clamps integers beyond int64 to INT64_MAX while keeping a uint64 copy; beyond
       * int64 a literal is no Go int anyway, so it becomes float64 (as encoding/json makes it). */
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
        po_Status_Set(st, kPo_ErrParse, "%s is not a JSON number", json_object_to_json_string((json_object *)j));
        return NULL;
      }
      v = po_Value_NewFloat(a, d);
      break;
    }
    case json_type_string:
      v = po_Value_NewString(a, json_object_get_string((json_object *)j),
                             (size_t)json_object_get_string_len(j));
      break;
    case json_type_array: {
      v = po_Value_NewList(a);
      size_t n = json_object_array_length(j);
      for (size_t i = 0; v && i < n; i++) {
        po_Value *e = from_jsonc(json_object_array_get_idx(j, i), a, depth + 1, st);
        if (!e) return NULL;
        if (!po_Value_ListAppend(a, v, e)) v = NULL;
      }
      break;
    }
    case json_type_object: {
      v = po_Value_NewMap(a);
      json_object_object_foreach((json_object *)j, key, val) {
        if (!v) break;
        po_Value *e = from_jsonc(val, a, depth + 1, st);
        if (!e) return NULL;
        if (!po_Value_MapPut(a, v, key, e)) v = NULL;
      }
      break;
    }
  }
  if (!v) po_Status_Set(st, kPo_ErrNoMemory, "out of memory");
  return v;
}

po_Value *po_Value_FromJsonC(const json_object *j, po_Arena *a, po_Status *st) {
  return from_jsonc(j, a, 0, st);
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

po_Value *po_Value_ParseJson(const char *text, size_t len, po_Arena *a, po_Status *st) {
  if (len > INT32_MAX) {
    po_Status_Set(st, kPo_ErrLimit, "JSON input of %zu bytes is too large", len);
    return NULL;
  }
  json_tokener *tok = json_tokener_new_ex(kMaxDepth);
  if (!tok) return po_Status_Set(st, kPo_ErrNoMemory, "out of memory"), NULL;
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
  po_Value *v = NULL;
  int line, col;
  if (err == json_tokener_continue) {
    json_object_put(j);
    j = NULL;
    offset_to_pos(text, len, &line, &col);
    po_Status_Set(st, kPo_ErrParse, "line %d, column %d: unexpected end of JSON input", line, col);
  } else if (err != json_tokener_success) {
    offset_to_pos(text, end, &line, &col);
    po_Status_Set(st, kPo_ErrParse, "line %d, column %d: invalid JSON: %s", line, col,
                  json_tokener_error_desc(err));
  } else {
    size_t rest = end;
    while (rest < len && strchr(" \t\r\n", text[rest])) rest++;
    if (rest < len) {
      offset_to_pos(text, rest, &line, &col);
      po_Status_Set(st, kPo_ErrParse, "line %d, column %d: invalid JSON: data after the value",
                    line, col);
    } else {
      v = po_Value_FromJsonC(j, a, st);
    }
  }
  json_object_put(j);
  json_tokener_free(tok);
  return v;
}

json_object *po_Value_ToJsonC(const po_Value *v) {
  switch (po_Value_Kind(v)) {
    case kPo_ValueNull: return NULL; /* json-c's null */
    case kPo_ValueBool: return json_object_new_boolean(v->u.b);
    case kPo_ValueInt: return json_object_new_int64(v->u.i);
    case kPo_ValueFloat: return json_object_new_double(v->u.d);
    case kPo_ValueString: return json_object_new_string_len(v->u.s.ptr, (int)v->u.s.len);
    case kPo_ValueList: {
      json_object *arr = json_object_new_array_ext((int)v->u.agg.len);
      for (size_t i = 0; arr && i < v->u.agg.len; i++) {
        json_object_array_add(arr, po_Value_ToJsonC(v->u.agg.items[i]));
      }
      return arr;
    }
    case kPo_ValueMap: {
      json_object *obj = json_object_new_object();
      for (size_t i = 0; obj && i < v->u.agg.len; i++) {
        json_object_object_add(obj, v->u.agg.keys[i], po_Value_ToJsonC(v->u.agg.items[i]));
      }
      return obj;
    }
  }
  return NULL;
}

char *po_Value_ToJson(const po_Value *v, po_Arena *a) {
  json_object *j = po_Value_ToJsonC(v);
  const char *s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  char *out = po_Arena_Strndup(a, s, strlen(s));
  json_object_put(j);
  return out;
}
