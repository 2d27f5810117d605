/* The one path resolver: a patch path -> the chain of field definitions it names, with Consul's
 * rules for every segment (docs/consul-semantics.md). Compile (patch.c), friendly values
 * (friendly.c) and explain (explain.c) all walk paths through here, so a path one of them
 * accepts is a path the others accept, and the error a user sees is the same everywhere.
 *
 * Consul's order: the whole path empty or "/" first; then per segment, left to right: an empty
 * name, an unknown name, and (when another segment follows) a map, repeated, Any or non-message
 * parent. Resolution fails at the first problem and says which, so each caller can word or
 * code it as it needs (po_Resolved_Error gives Consul's text). */
#define _GNU_SOURCE /* strchrnul */
#include <string.h>

#include "compiled.h"

/* Beyond Consul: recursive messages (matchers) would let a path nest without bound, past what
 * Envoy or any encoder reads back. Consul's own errors in the first segments win. */
enum { kMaxDepth = 32 };

/* One pass over the path: the chain is gathered on the stack (at most kMaxDepth fields) and
 * copied to the arena once it is known (a one-segment path keeps its field in r itself), so
 * the common one- to three-segment path costs a strchr (libc's vectorised scan: faster than a
 * byte loop on these 15-40 byte paths, measured) and a table lookup per segment. The segment count is only needed for the too-deep
 * error, and counted there. */
bool po_Path_Resolve(const po_Schema *schema, const upb_MessageDef *root, const char *path, po_Arena *a,
                     po_Resolved *r) {
  r->schema = schema;
  r->root = root;
  r->at = root;
  r->fields = NULL;
  r->count = 0;
  r->segments = 0;
  r->segment = NULL;
  r->segment_len = 0;
  if (!path) path = "";
  if (path[0] == '\0' || (path[0] == '/' && path[1] == '\0')) {
    r->error = kPo_Resolve_EmptyPath;
    return false;
  }
  const char *p = path;
  while (*p == '/') p++;
  const char *end = strchrnul(p, '/'); /* one scan for the last segment too */
  if (!*end && end != p) {
    /* One segment (lb_policy, outlier_detection): one lookup, nothing to keep but the field. */
    const po_FieldInfo *f = po_Schema_FindFieldInfo(schema, root, p, (size_t)(end - p));
    if (f) {
      r->one = f;
      r->fields = &r->one;
      r->count = 1;
      r->error = kPo_Resolve_Ok;
      return true;
    }
  }
  const po_FieldInfo *chain[kMaxDepth];
  size_t count = 0;
  const upb_MessageDef *m = root;
  po_ResolveError error = kPo_Resolve_Ok;
  for (;;) {
    if (count == kMaxDepth) {
      error = kPo_Resolve_TooDeep;
      size_t segs = 1;
      for (const char *q = path + strspn(path, "/"); *q; q++) segs += *q == '/';
      r->segments = segs;
      break;
    }
    if (count) end = strchrnul(p, '/');
    size_t len = (size_t)(end - p);
    r->segment = p;
    r->segment_len = len;
    r->at = m;
    if (len == 0) {
      error = kPo_Resolve_EmptySegment;
      break;
    }
    const po_FieldInfo *f = po_Schema_FindFieldInfo(schema, m, p, len);
    if (!f) {
      /* No table (out of memory) and no such field look alike here; upb tells them apart. No
       * message at all is one an on-demand load could not add for lack of memory. */
      error = !m || upb_MessageDef_FindFieldByNameWithSize(m, p, len) ? kPo_Resolve_NoMemory
                                                                       : kPo_Resolve_UnknownField;
      break;
    }
    chain[count++] = f;
    if (!*end) break;
    error = f->map                       ? kPo_Resolve_ThroughMap
            : f->repeated                ? kPo_Resolve_ThroughRepeated
            : f->wkt == kUpb_WellKnown_Any ? kPo_Resolve_ThroughAny
            : !f->submessage             ? kPo_Resolve_ThroughScalar
                                         : kPo_Resolve_Ok;
    if (error != kPo_Resolve_Ok) break;
    m = f->message;
    p = end + 1;
  }
  r->error = error;
  if (error == kPo_Resolve_NoMemory) return false;
  if (count == 1) {
    /* The common one-segment path: no chain to keep, so no arena copy (fields points into r). */
    r->one = chain[0];
    r->fields = &r->one;
    r->count = 1;
  } else if (count) {
    r->fields = upb_Arena_Malloc(po_Arena_Upb(a), count * sizeof *r->fields); /* filled at once */
    if (!r->fields) {
      r->error = kPo_Resolve_NoMemory;
      return false;
    }
    for (size_t i = 0; i < count; i++) r->fields[i] = chain[i]; /* a few: no memcpy call */
    r->count = count;
  }
  return error == kPo_Resolve_Ok;
}

const upb_FieldDef *po_Resolved_Target(const po_Resolved *r) {
  return r->error == kPo_Resolve_Ok && r->count ? r->fields[r->count - 1]->def : NULL;
}

bool po_Resolved_Error(const po_Resolved *r, bool debug, po_Arena *a, po_Status *st) {
  const upb_FieldDef *last = r->count ? r->fields[r->count - 1]->def : NULL;
  switch (r->error) {
    case kPo_Resolve_Ok: return true;
    case kPo_Resolve_NoMemory: return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
    case kPo_Resolve_EmptyPath: {
      const char *list = po_FieldList(r->schema, r->root, debug, a, NULL);
      return po_Status_Set(st, kPo_Status_Patch, "non-empty, non-root Path is required;\n%s", list ? list : "");
    }
    case kPo_Resolve_EmptySegment: return po_Status_Set(st, kPo_Status_Patch, "empty field name in path");
    case kPo_Resolve_UnknownField: {
      size_t ll = 0;
      const char *list = po_FieldList(r->schema, r->at, debug, a, &ll);
      /* Copied when it fits (the usual case: ten names), formatted (and truncated) otherwise. */
      if (st && 22 + r->segment_len + ll < sizeof st->message) {
        char *p = st->message;
        memcpy(p, "no match for field '", 20);
        memcpy(p + 20, r->segment, r->segment_len);
        memcpy(p + 20 + r->segment_len, "'!\n", 3);
        memcpy(p + 23 + r->segment_len, list ? list : "", ll + 1);
        st->code = kPo_Status_Patch;
        return false;
      }
      return po_Status_Set(st, kPo_Status_Patch, "no match for field '%.*s'!\n%s", (int)r->segment_len, r->segment,
                           list ? list : "");
    }
    case kPo_Resolve_ThroughMap:
      return po_Status_Set(st, kPo_Status_Patch,
                           "path contains member of map field '%s'; map field member access is not supported",
                           upb_FieldDef_Name(last));
    case kPo_Resolve_ThroughRepeated:
      return po_Status_Set(st, kPo_Status_Patch,
                           "path contains member of repeated field '%s'; repeated field member access is not supported",
                           upb_FieldDef_Name(last));
    case kPo_Resolve_ThroughAny:
      return po_Status_Set(st, kPo_Status_Patch, "variant-type message fields (google.protobuf.Any) are not supported");
    case kPo_Resolve_ThroughScalar:
      return po_Status_Set(st, kPo_Status_Patch,
                           "path contains member of non-message field '%s' (type '%s'); this type does not support "
                           "child fields",
                           upb_FieldDef_Name(last), po_KindName(last));
    case kPo_Resolve_TooDeep:
      return po_Status_Set(st, kPo_Status_Patch, "path has %zu segments; at most %d are supported", r->segments,
                           kMaxDepth);
  }
  return po_Status_Set(st, kPo_Status_Internal, "unexpected resolve error %d", (int)r->error);
}

const char *po_Resolved_Hint(const po_Resolved *r, const char *judged_for, const po_ApiReleases *releases, po_Arena *a) {
  if (r->error != kPo_Resolve_UnknownField) return NULL;
  return po_Hint_UnknownField(r->schema, r->at, r->segment, r->segment_len, judged_for, releases, a);
}
