#include "po/targets/native_error.h"

#include <stdlib.h>
#include <string.h>

const char *po_Native_ErrorPointer(const po_Value *v, const char *message, po_Arena *a, const char **what) {
  *what = NULL;
  const char *at = message ? strstr(message, "JSON @") : NULL;
  if (!at) return NULL;
  char *end = NULL;
  long line = strtol(at + 6, &end, 10);
  if (end == at + 6 || *end != ':' || line < 1 || line > 1L << 30) return NULL;
  const char *rest = strstr(end, ": ");
  if (!rest) return NULL;
  const char *pointer = po_Value_PrettyJsonPointerAt(v, (int)line, a);
  if (pointer) *what = rest + 2;
  return pointer;
}

/* The member of map or list `v` that one pointer segment names (seg[0..n)), or NULL. */
static const po_Value *member(const po_Value *v, const char *seg, size_t n, po_Arena *a) {
  if (po_Value_Kind(v) == kPo_ValueKind_List) {
    char *end;
    unsigned long i = strtoul(seg, &end, 10);
    return end == seg + n && n ? po_Value_At(v, i) : NULL;
  }
  char *key = po_Arena_Strndup(a, seg, n);
  return key ? po_Value_Get(v, key) : NULL;
}

/* The message the member at `pointer` is looked for in: the last object on the way holding an
 * `@type` (an Any's value: its type) and the rest of the pointer below it, else `msg` and the
 * whole pointer; then the schema's walk. NULL when the walk does not end in a message. */
static const char *parent_message(const po_EnvoyApi *api, const char *msg, const po_Value *doc, const char *pointer,
                                  po_Arena *a) {
  static const char kTypePrefix[] = "type.googleapis.com/";
  const char *rest = pointer;
  const po_Value *v = doc;
  for (const char *p = pointer; v && *p == '/';) {
    const char *seg = p + 1, *end = strchr(seg, '/');
    if (!end) break; /* the last segment: the unknown member itself */
    v = member(v, seg, (size_t)(end - seg), a);
    const char *type = po_Value_Kind(v) == kPo_ValueKind_Map ? po_Value_String(po_Value_Get(v, "@type"), NULL) : NULL;
    if (type && !strncmp(type, kTypePrefix, sizeof kTypePrefix - 1)) msg = type + sizeof kTypePrefix - 1, rest = end;
    p = end;
  }
  enum { kMaxSegments = 64 };
  po_PointerSeg segs[kMaxSegments];
  size_t n = po_Pointer_Segments(api, msg, rest, segs, kMaxSegments);
  /* the last segment is the unknown member; the walk says the message it is no field of */
  return n && segs[n - 1].kind == kPo_PointerSeg_Unknown ? segs[n - 1].message : NULL;
}

const char *po_Native_UnknownFieldHint(const po_NativeJudge *j, const char *msg, const po_Value *doc,
                                       const char *pointer, const char *what, po_Arena *a) {
  static const char kNoSuchField[] = "No such field: ";
  if (!what || !pointer || strncmp(what, kNoSuchField, sizeof kNoSuchField - 1) != 0) return "";
  const char *in = parent_message(j->api, msg, doc, pointer, a);
  if (!in) return "";
  const char *hint = po_Hint_FieldOfOtherApis(j->api, in, what + sizeof kNoSuchField - 1, j->judged_for, j->releases, a);
  if (!hint) return po_Engine_OutOfMemory(a) ? NULL : "";
  return po_Arena_Printf(a, " (%s)", hint);
}
