/* JSON and binary codecs over upb, with errors as po_Status. */
#include <stdio.h>
#include <string.h>

#include "schema_internal.h"
#include "upb/decode.h"
#include "upb/encode.h"
#include "upb/json_decode.h"
#include "upb/json_encode.h"
#include "upb/reflection.h"

enum { kPoPathMax = 1024 };

/* Whether upb's JSON error is its decoder running out of memory (json-decode-oom.patch and
 * map-new-oom.patch make every failed allocation say exactly "Error parsing JSON @L:C: Out of
 * memory"): no verdict on the text, so not "invalid ... JSON". A text cannot produce it: upb's
 * other errors after "@L:C: " start otherwise ("No such field: Out of memory" included). */
static bool json_out_of_memory(const char *e) {
  int line = 0, col = 0, at = 0;
  if (!e || sscanf(e, "Error parsing JSON @%d:%d: %n", &line, &col, &at) != 2 || at == 0) return false;
  return strcmp(e + at, "Out of memory") == 0;
}

upb_Message *po_Json_Decode(const po_Schema *s, const upb_MessageDef *m, const char *json,
                            size_t len, upb_Arena *arena, po_Status *status) {
  size_t i = 0;
  while (i < len && strchr(" \t\r\n", json[i]) && json[i]) i++;
  if (i == len) {
    /* upb takes no input as an empty message; no input is no JSON value at all. */
    po_Status_Set(status, kPo_Status_Parse, "invalid %s JSON: empty input", upb_MessageDef_FullName(m));
    return NULL;
  }
  /* upb's JSON reader looks one byte past an unterminated string (json_decode.c checks *ptr
   * before the end): give it a NUL-terminated copy, so no caller's buffer is overread. */
  char *copy = upb_Arena_Malloc(arena, len + 1);
  if (!copy) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
  memcpy(copy, json, len);
  copy[len] = '\0';
  json = copy;
  upb_Message *msg = upb_Message_New(m, arena);
  if (!msg) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
  upb_Status st;
  upb_Status_Clear(&st);
  po_Schema_NeedJsonTypes_(s, json, len);
  bool ok = upb_JsonDecode(json, len, msg, m, s->pool, 0, arena, &st);
  /* On demand, an "@type" the scan could not read (escaped) names a file not loaded yet. */
  if (!ok && po_Schema_NeedAll_(s)) {
    upb_Status_Clear(&st);
    msg = upb_Message_New(m, arena);
    if (!msg) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
    ok = upb_JsonDecode(json, len, msg, m, s->pool, 0, arena, &st);
  }
  /* Not complete after po_Schema_NeedAll_: its files could not all be loaded (out of memory).
   * Whatever upb said then ("Type was not found" above all) is not about the text: saying it
   * would make a preview replace a known Any by a placeholder and go on as if all were well. */
  if (!ok && !s->complete) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
  if (!ok && json_out_of_memory(upb_Status_ErrorMessage(&st))) {
    return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
  }
  if (!ok) {
    po_Status_Set(status, kPo_Status_Parse, "invalid %s JSON: %s", upb_MessageDef_FullName(m),
                  upb_Status_ErrorMessage(&st));
    return NULL;
  }
  return msg;
}

/* ---- what makes a message unencodable as JSON ----
 * upb's encoder says only "bad duration" / "bad timestamp". The proto3 JSON mapping (Go's
 * protojson, and upb) has no form for a Duration beyond +-315576000000 seconds, with nanos beyond
 * +-999999999 or of the other sign than seconds, nor for a Timestamp outside years 1..9999 or with
 * nanos outside 0..999999999. The first such value, depth first in field order, is named by its
 * path of proto field names (linear in the message; bounded depth, as upb's own encoder). */

enum { kMaxWalkDepth = 100 };

static const char *bad_wkt(const upb_MessageDef *m, const upb_Message *msg, po_Status *st, const char *path) {
  const char *name = upb_MessageDef_FullName(m);
  bool dur = !strcmp(name, "google.protobuf.Duration"), ts = !strcmp(name, "google.protobuf.Timestamp");
  if (!dur && !ts) return NULL;
  int64_t sec = upb_Message_Get(msg, upb_MessageDef_FindFieldByNumber(m, 1)).int64_val;
  int32_t ns = upb_Message_Get(msg, upb_MessageDef_FindFieldByNumber(m, 2)).int32_val;
  bool ok = dur ? sec >= -315576000000 && sec <= 315576000000 && ns >= -999999999 && ns <= 999999999 &&
                      !((sec < 0 && ns > 0) || (sec > 0 && ns < 0))
                : sec >= -62135596800 && sec <= 253402300799 && ns >= 0 && ns <= 999999999;
  if (ok) return NULL;
  po_Status_Set(st, kPo_Status_Invalid,
                "%s: %s {seconds: %lld, nanos: %d} has no JSON form (%s)", *path ? path : "/", name,
                (long long)sec, (int)ns,
                dur ? "seconds within +-315576000000, nanos within +-999999999, both of one sign"
                    : "seconds within years 1 to 9999, nanos 0 to 999999999");
  return st->message;
}

static bool find_bad(const upb_DefPool *pool, const upb_MessageDef *m, const upb_Message *msg, char *path,
                     size_t at, int depth, po_Status *st) {
  if (depth > kMaxWalkDepth) return false;
  path[at] = '\0';
  if (bad_wkt(m, msg, st, path)) return true;
  const upb_FieldDef *f;
  upb_MessageValue v;
  size_t iter = kUpb_Message_Begin;
  while (upb_Message_Next(msg, m, pool, &f, &v, &iter)) {
    const upb_MessageDef *sub = upb_FieldDef_MessageSubDef(f);
    if (upb_FieldDef_IsMap(f)) {
      const upb_FieldDef *vf = upb_MessageDef_FindFieldByNumber(sub, 2);
      const upb_MessageDef *vm = upb_FieldDef_MessageSubDef(vf);
      if (!vm) continue;
      int n = snprintf(path + at, kPoPathMax - at, "/%s", upb_FieldDef_Name(f));
      if (n < 0 || (size_t)n >= kPoPathMax - at) continue;
      size_t mi = kUpb_Map_Begin;
      while (upb_MapIterator_Next(v.map_val, &mi)) {
        if (find_bad(pool, vm, upb_MapIterator_Value(v.map_val, mi).msg_val, path, at + (size_t)n, depth + 1, st)) return true;
      }
    } else if (sub && upb_FieldDef_IsRepeated(f)) {
      for (size_t i = 0; i < upb_Array_Size(v.array_val); i++) {
        int n = snprintf(path + at, kPoPathMax - at, "/%s/%zu", upb_FieldDef_Name(f), i);
        if (n < 0 || (size_t)n >= kPoPathMax - at) break;
        if (find_bad(pool, sub, upb_Array_Get(v.array_val, i).msg_val, path, at + (size_t)n, depth + 1, st)) return true;
      }
    } else if (sub) {
      int n = snprintf(path + at, kPoPathMax - at, "/%s", upb_FieldDef_Name(f));
      if (n < 0 || (size_t)n >= kPoPathMax - at) continue;
      if (find_bad(pool, sub, v.msg_val, path, at + (size_t)n, depth + 1, st)) return true;
    }
  }
  return false;
}

char *po_Json_Encode(const po_Schema *s, const upb_MessageDef *m, const upb_Message *msg,
                     upb_Arena *arena, size_t *len, po_Status *status) {
  const int opts = upb_JsonEncode_UseProtoNames;
  upb_Status st;
  /* One pass into a guessed buffer; a second, exactly sized, only when the guess was short. */
  size_t cap = 4096;
  for (int pass = 0; pass < 2; pass++) {
    char *buf = upb_Arena_Malloc(arena, cap);
    if (!buf) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
    upb_Status_Clear(&st);
    size_t need = upb_JsonEncode(msg, m, s->pool, opts, buf, cap, &st);
    /* On demand, an Any's type may be in a file not loaded yet: load them all, once. */
    if (need == (size_t)-1 && po_Schema_NeedAll_(s)) {
      pass--;
      continue;
    }
    if (need == (size_t)-1) {
      char path[kPoPathMax];
      po_Status why;
      po_Status_Clear(&why);
      /* proto/upb-patches/json-encode-oom.patch: an Any's decode out of memory */
      if (!strcmp(upb_Status_ErrorMessage(&st), "Out of memory")) {
        return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
      }
      if (find_bad(s->pool, m, msg, path, 0, 0, &why)) {
        po_Status_Set(status, kPo_Status_Invalid, "cannot encode %s as JSON: %s", upb_MessageDef_FullName(m), why.message);
      } else {
        po_Status_Set(status, kPo_Status_Parse, "cannot encode %s as JSON: %s", upb_MessageDef_FullName(m),
                      upb_Status_ErrorMessage(&st));
      }
      return NULL;
    }
    if (need < cap) {
      if (len) *len = need;
      return buf;
    }
    cap = need + 1;
  }
  po_Status_Set(status, kPo_Status_Internal, "JSON encoder size changed between passes");
  return NULL;
}

upb_Message *po_Binary_Decode(const po_Schema *s, const upb_MessageDef *m, const char *buf,
                              size_t len, upb_Arena *arena, po_Status *status) {
  upb_Message *msg = upb_Message_New(m, arena);
  if (!msg) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
  upb_DecodeStatus ds = upb_Decode(buf, len, msg, upb_MessageDef_MiniTable(m),
                                   upb_DefPool_ExtensionRegistry(s->pool), 0, arena);
  if (ds == kUpb_DecodeStatus_OutOfMemory) return po_Status_Set(status, kPo_Status_NoMemory, "out of memory"), NULL;
  if (ds != kUpb_DecodeStatus_Ok) {
    po_Status_Set(status, kPo_Status_Parse, "invalid %s protobuf (decode status %d)",
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
    po_Status_Set(status, kPo_Status_Internal, "cannot encode %s (status %d)",
                  upb_MessageDef_FullName(m), (int)es);
    return NULL;
  }
  if (len) *len = n;
  return buf;
}
