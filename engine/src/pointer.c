/* What each segment of an RFC 6901 pointer into a message's protojson document is
 * (po_Pointer_Segments, engine.h): the schema says where a segment of digits is a list index and
 * where an object key (a map's key, a Struct's key), and where a segment names a field by its
 * JSON name, which a document written with proto field names (Envoy Gateway's) does not have. */
#include <string.h>

#include "compiled.h"

/* Where the walk is: inside a message, a map, a repeated field, or somewhere the schema does not
 * say (below a scalar, an Any, a Value, a message written as a string). */
typedef enum { kIn_Message, kIn_Map, kIn_List, kIn_Unknown } In;

/* Messages protojson writes as a string or a bare value: nothing below them has fields. */
static bool opaque(const upb_MessageDef *m) {
  upb_WellKnown wk = upb_MessageDef_WellKnownType(m);
  return wk == kUpb_WellKnown_Duration || wk == kUpb_WellKnown_Timestamp || wk == kUpb_WellKnown_FieldMask ||
         (wk >= kUpb_WellKnown_DoubleValue && wk <= kUpb_WellKnown_BoolValue);
}

/* Where a field's value puts the walk: m gets its message. */
static In into(const upb_FieldDef *f, const upb_MessageDef **m) {
  *m = upb_FieldDef_IsSubMessage(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
  if (upb_FieldDef_IsMap(f)) return kIn_Map;
  if (upb_FieldDef_IsRepeated(f)) return kIn_List;
  return *m && !opaque(*m) ? kIn_Message : kIn_Unknown;
}

static bool digits_or_end(const char *s, size_t n) {
  if (n == 1 && *s == '-') return true;
  if (!n) return false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

/* One segment in message m: its kind, and where the walk goes next (*f: the field it names). */
static In step_message(const upb_MessageDef **m, const upb_FieldDef **fp, const char *seg, size_t n,
                       po_PointerSeg *out) {
  upb_WellKnown wk = upb_MessageDef_WellKnownType(*m);
  if (wk == kUpb_WellKnown_Struct) {
    out->kind = kPo_PointerSeg_StructKey; /* a Struct is a JSON object: any text is a key */
    return kIn_Unknown;                   /* its value is a Value: an object, a list or a scalar */
  }
  if (wk == kUpb_WellKnown_ListValue) {
    out->kind = digits_or_end(seg, n) ? kPo_PointerSeg_Index : kPo_PointerSeg_Unknown;
    return kIn_Unknown;
  }
  if (wk == kUpb_WellKnown_Any || wk == kUpb_WellKnown_Value) return kIn_Unknown; /* its @type decides */
  const upb_FieldDef *f = upb_MessageDef_FindFieldByNameWithSize(*m, seg, n);
  if (f) {
    out->kind = kPo_PointerSeg_Field;
  } else if ((f = upb_MessageDef_FindByJsonNameWithSize(*m, seg, n)) != NULL) {
    out->kind = kPo_PointerSeg_JsonName;
  } else {
    out->message = upb_MessageDef_FullName(*m); /* no such field in it */
    return kIn_Unknown;
  }
  out->field = upb_FieldDef_Name(f);
  out->message = upb_MessageDef_FullName(*m);
  *fp = f;
  return into(f, m);
}

size_t po_Pointer_Segments(const po_EnvoyApi *api, const char *message_full_name, const char *pointer,
                           po_PointerSeg *out, size_t max) {
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_EnvoyApi_Schema_(api, NULL, &st);
  const upb_MessageDef *m = s ? po_Schema_FindMessage(s, message_full_name) : NULL;
  const upb_FieldDef *container = NULL; /* the map or repeated field the walk is in */
  In in = m ? kIn_Message : kIn_Unknown;
  size_t count = 0;
  for (const char *p = pointer; *p == '/' && count < max;) {
    const char *seg = p + 1, *end = strchr(seg, '/');
    size_t n = end ? (size_t)(end - seg) : strlen(seg);
    po_PointerSeg *o = &out[count++];
    *o = (po_PointerSeg){.kind = kPo_PointerSeg_Unknown};
    switch (in) {
      case kIn_Message:
        in = step_message(&m, &container, seg, n, o);
        break;
      case kIn_Map: {
        o->kind = kPo_PointerSeg_MapKey;
        const upb_FieldDef *v = upb_MessageDef_FindFieldByNumber(upb_FieldDef_MessageSubDef(container), 2);
        in = v ? into(v, &m) : kIn_Unknown;
        if (v && in != kIn_Message) in = kIn_Unknown; /* a map's value is never a list or map itself */
        break;
      }
      case kIn_List:
        o->kind = digits_or_end(seg, n) ? kPo_PointerSeg_Index : kPo_PointerSeg_Unknown;
        m = upb_FieldDef_IsSubMessage(container) ? upb_FieldDef_MessageSubDef(container) : NULL;
        in = m && !opaque(m) && o->kind == kPo_PointerSeg_Index ? kIn_Message : kIn_Unknown;
        break;
      case kIn_Unknown: break;
    }
    p = seg + n;
  }
  return count;
}
