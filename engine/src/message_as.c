/* A message moved between snapshots (po_Message_As) and the fields its snapshot lacks
 * (po_Message_Lacked), for `preview`: it reads a proxy's /config_dump with the newest snapshot
 * (so no field a current proxy carries refuses the dump) and judges the overrides with the
 * snapshot of the proxy's mesh release, whose message types a compiled override applies to.
 *
 * The move goes through the binary form, protobuf's own answer to two versions of a schema:
 * field numbers never change meaning, so what the older snapshot knows decodes as itself and
 * what it lacks stays as unknown fields, re-encoded untouched when the message is moved back to
 * a snapshot that has them. Nested Anys stay bytes either way. Cost: one encode and one decode,
 * linear in the message; po_Message_Lacked walks it once. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "upb/decode.h"
#include "upb/encode.h"
#include "upb/reflection.h"

po_Message *po_Message_As(const po_EnvoyApi *api, po_Message *m, po_Arena *a, po_Status *st) {
  const po_Schema *s = po_EnvoyApi_Schema_(api, a, st);
  if (!s) return NULL;
  if (s == m->schema) return m;
  const char *name = upb_MessageDef_FullName(m->def);
  const upb_MessageDef *def = po_Schema_FindMessage(s, name);
  if (!def) {
    po_Status_Set(st, kPo_Status_NotFound, "%s is not in %s", name, po_EnvoyApi_Name(api));
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0;
  upb_EncodeStatus es = upb_Encode(m->msg, upb_MessageDef_MiniTable(m->def), 0, po_Arena_Upb(a), &buf, &len);
  upb_Message *n = es == kUpb_EncodeStatus_Ok ? upb_Message_New(def, po_Arena_Upb(a)) : NULL;
  /* the encoding lives in `a` as long as the message: its strings alias it */
  upb_DecodeStatus ds = n ? upb_Decode(buf, len, n, upb_MessageDef_MiniTable(def),
                                       upb_DefPool_ExtensionRegistry(po_Schema_Pool(s)), kUpb_DecodeOption_AliasString,
                                       po_Arena_Upb(a))
                          : kUpb_DecodeStatus_OutOfMemory;
  po_Message *pm = ds == kUpb_DecodeStatus_Ok ? po_Arena_Malloc(a, sizeof *pm) : NULL;
  bool oom = es == kUpb_EncodeStatus_OutOfMemory || ds == kUpb_DecodeStatus_OutOfMemory || ds == kUpb_DecodeStatus_Ok;
  if (!pm && oom) po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  else if (!pm) po_Status_Set(st, kPo_Status_Invalid, "%s does not move to %s (nested too deep)", name, po_EnvoyApi_Name(api));
  if (!pm) return NULL;
  *pm = (po_Message){.def = def, .msg = n, .arena = a, .schema = s};
  return pm;
}

/* ---- the fields a message carries that its snapshot lacks ---- */

enum { kMaxLacked = 64 }; /* distinct fields told apart; past it each new one still counts */

typedef struct {
  const po_Schema *names; /* the snapshot that names them */
  po_Arena *a;
  const char **out;
  size_t max, count;
  struct {
    const upb_MessageDef *def;
    uint32_t number;
  } seen[kMaxLacked]; /* the fields met: each is told once, where it is first met */
  char path[512];
} Lacked;

/* The field numbers of the unknown bytes of one message, each one a "lacked" entry at path. */
static void unknown_fields(Lacked *l, const upb_MessageDef *def, const char *data, size_t len, size_t at) {
  const char *p = data, *end = data + len;
  const upb_MessageDef *named = po_Schema_FindMessage(l->names, upb_MessageDef_FullName(def));
  while (p < end) {
    uint64_t tag = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
      uint8_t b = (uint8_t)*p++;
      tag |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    uint32_t number = (uint32_t)(tag >> 3), wire = (uint32_t)(tag & 7);
    uint64_t skip = 0;
    if (wire == 0) {
      while (p < end && (*p++ & 0x80)) {}
    } else if (wire == 2) {
      for (int shift = 0; p < end && shift < 64; shift += 7) {
        uint8_t b = (uint8_t)*p++;
        skip |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
      }
    } else {
      skip = wire == 1 ? 8 : wire == 5 ? 4 : (uint64_t)(end - p); /* a group: not in proto3; the rest */
    }
    p = skip > (uint64_t)(end - p) ? end : p + skip;
    bool seen = false; /* each field once (list entries, repeated fields repeat it) */
    size_t known = l->count < kMaxLacked ? l->count : kMaxLacked;
    for (size_t i = 0; i < known && !seen; i++) seen = l->seen[i].def == def && l->seen[i].number == number;
    if (seen) continue;
    if (l->count < kMaxLacked) {
      l->seen[l->count].def = def;
      l->seen[l->count].number = number;
    }
    const upb_FieldDef *f = named ? upb_MessageDef_FindFieldByNumber(named, number) : NULL;
    if (l->count < l->max) {
      l->out[l->count] = f ? po_Arena_Printf(l->a, "%.*s/%s", (int)at, l->path, upb_FieldDef_Name(f))
                           : po_Arena_Printf(l->a, "%.*s/(field %u of %s)", (int)at, l->path, (unsigned)number,
                                             upb_MessageDef_FullName(def));
    }
    l->count++;
  }
}

static void walk(Lacked *l, const upb_Message *msg, const upb_MessageDef *def, size_t at, int depth) {
  size_t ulen = 0;
  const char *u = upb_Message_GetUnknown(msg, &ulen);
  if (ulen) unknown_fields(l, def, u, ulen, at);
  if (depth > 100) return; /* deeper than upb decodes: never */
  size_t iter = kUpb_Message_Begin;
  const upb_FieldDef *f;
  upb_MessageValue v;
  while (upb_Message_Next(msg, def, NULL, &f, &v, &iter)) {
    if (!upb_FieldDef_IsSubMessage(f)) continue;
    const upb_MessageDef *sd = upb_FieldDef_MessageSubDef(f);
    int w = snprintf(l->path + at, sizeof l->path - at, "/%s", upb_FieldDef_Name(f));
    size_t next = w > 0 && at + (size_t)w < sizeof l->path ? at + (size_t)w : at;
    if (upb_FieldDef_IsMap(f)) {
      /* a map's values: the path names the map (its keys are data, not schema) */
      const upb_FieldDef *vf = upb_MessageDef_FindFieldByNumber(sd, 2);
      if (!vf || !upb_FieldDef_IsSubMessage(vf)) continue;
      size_t mi = kUpb_Map_Begin;
      while (upb_MapIterator_Next(v.map_val, &mi)) {
        walk(l, upb_MapIterator_Value(v.map_val, mi).msg_val, upb_FieldDef_MessageSubDef(vf), next, depth + 1);
      }
    } else if (upb_FieldDef_IsRepeated(f)) {
      for (size_t i = 0; i < upb_Array_Size(v.array_val); i++) {
        int wi = snprintf(l->path + next, sizeof l->path - next, "/%zu", i);
        size_t ni = wi > 0 && next + (size_t)wi < sizeof l->path ? next + (size_t)wi : next;
        walk(l, upb_Array_Get(v.array_val, i).msg_val, sd, ni, depth + 1);
      }
    } else {
      walk(l, v.msg_val, sd, next, depth + 1);
    }
  }
}

/* Whether m carries no unknown field anywhere: its encodings with and without them are of one
 * size. Two encodes cost a third of the walk below on a cluster, and a judged resource almost
 * always carries none. false when it cannot tell (out of memory): the walk then decides. */
static bool none_unknown(const po_Message *m) {
  po_Arena *scratch = po_Arena_New();
  char *buf = NULL;
  size_t all = 0, known = 1;
  const upb_MiniTable *mt = upb_MessageDef_MiniTable(m->def);
  bool ok = scratch && upb_Encode(m->msg, mt, 0, po_Arena_Upb(scratch), &buf, &all) == kUpb_EncodeStatus_Ok &&
            upb_Encode(m->msg, mt, kUpb_EncodeOption_SkipUnknown, po_Arena_Upb(scratch), &buf, &known) ==
                kUpb_EncodeStatus_Ok;
  po_Arena_Free(scratch);
  return ok && all == known;
}

size_t po_Message_Lacked(const po_Message *m, const po_EnvoyApi *names, po_Arena *a, const char **out, size_t max) {
  if (none_unknown(m)) return 0;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_EnvoyApi_Schema_(names, a, &st);
  if (!s) s = m->schema;
  Lacked l = {.names = s, .a = a, .out = out, .max = max};
  l.path[0] = '\0';
  walk(&l, m->msg, m->def, 0, 0);
  return l.count;
}
