/* JSON and binary codecs over upb, with errors as po_Status. */
#include <string.h>

#include "schema_internal.h"
#include "upb/decode.h"
#include "upb/encode.h"
#include "upb/json_decode.h"
#include "upb/json_encode.h"
#include "upb/reflection.h"

upb_Message *po_Json_Decode(const po_Schema *s, const upb_MessageDef *m, const char *json,
                            size_t len, upb_Arena *arena, po_Status *status) {
  size_t i = 0;
  while (i < len && strchr(" \t\r\n", json[i]) && json[i]) i++;
  if (i == len) {
    /* upb takes no input as an empty message; no input is no JSON value at all. */
    po_Status_Set(status, kPo_ErrParse, "invalid %s JSON: empty input", upb_MessageDef_FullName(m));
    return NULL;
  }
  /* upb's JSON reader looks one byte past an unterminated string (json_decode.c checks *ptr
   * before the end): give it a NUL-terminated copy, so no caller's buffer is overread. */
  char *copy = upb_Arena_Malloc(arena, len + 1);
  if (!copy) return po_Status_Set(status, kPo_ErrNoMemory, "out of memory"), NULL;
  memcpy(copy, json, len);
  copy[len] = '\0';
  json = copy;
  upb_Message *msg = upb_Message_New(m, arena);
  if (!msg) return po_Status_Set(status, kPo_ErrNoMemory, "out of memory"), NULL;
  upb_Status st;
  upb_Status_Clear(&st);
  if (!upb_JsonDecode(json, len, msg, m, s->pool, 0, arena, &st)) {
    po_Status_Set(status, kPo_ErrParse, "invalid %s JSON: %s", upb_MessageDef_FullName(m),
                  upb_Status_ErrorMessage(&st));
    return NULL;
  }
  return msg;
}

char *po_Json_Encode(const po_Schema *s, const upb_MessageDef *m, const upb_Message *msg,
                     upb_Arena *arena, size_t *len, po_Status *status) {
  const int opts = upb_JsonEncode_UseProtoNames;
  upb_Status st;
  /* One pass into a guessed buffer; a second, exactly sized, only when the guess was short. */
  size_t cap = 4096;
  for (int pass = 0; pass < 2; pass++) {
    char *buf = upb_Arena_Malloc(arena, cap);
    if (!buf) return po_Status_Set(status, kPo_ErrNoMemory, "out of memory"), NULL;
    upb_Status_Clear(&st);
    size_t need = upb_JsonEncode(msg, m, s->pool, opts, buf, cap, &st);
    if (need == (size_t)-1) {
      po_Status_Set(status, kPo_ErrParse, "cannot encode %s as JSON: %s",
                    upb_MessageDef_FullName(m), upb_Status_ErrorMessage(&st));
      return NULL;
    }
    if (need < cap) {
      if (len) *len = need;
      return buf;
    }
    cap = need + 1;
  }
  po_Status_Set(status, kPo_ErrInternal, "JSON encoder size changed between passes");
  return NULL;
}

upb_Message *po_Binary_Decode(const po_Schema *s, const upb_MessageDef *m, const char *buf,
                              size_t len, upb_Arena *arena, po_Status *status) {
  upb_Message *msg = upb_Message_New(m, arena);
  if (!msg) return po_Status_Set(status, kPo_ErrNoMemory, "out of memory"), NULL;
  upb_DecodeStatus ds = upb_Decode(buf, len, msg, upb_MessageDef_MiniTable(m),
                                   upb_DefPool_ExtensionRegistry(s->pool), 0, arena);
  if (ds != kUpb_DecodeStatus_Ok) {
    po_Status_Set(status, kPo_ErrParse, "invalid %s protobuf (decode status %d)",
                  upb_MessageDef_FullName(m), (int)ds);
    return NULL;
  }
  return msg;
}

char *po_Binary_Encode(const upb_MessageDef *m, const upb_Message *msg, upb_Arena *arena,
                       size_t *len, po_Status *status) {
  char *buf = NULL;
  size_t n = 0;
  upb_EncodeStatus es = upb_Encode(msg, upb_MessageDef_MiniTable(m), 0, arena, &buf, &n);
  if (es != kUpb_EncodeStatus_Ok) {
    po_Status_Set(status, kPo_ErrInternal, "cannot encode %s (status %d)",
                  upb_MessageDef_FullName(m), (int)es);
    return NULL;
  }
  if (len) *len = n;
  return buf;
}
