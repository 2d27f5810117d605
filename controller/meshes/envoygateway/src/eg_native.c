/* EnvoyPatchPolicies written by hand, checked against Envoy's schema (eg.h, the last section).
 *
 * A JSON Patch value is decoded where Envoy Gateway decodes it: in the resource the type URL
 * names, after the patch put it at its path. Without the generated resource at hand, the value is
 * nested along the path instead ({"a": {"b": [value]}} for /a/b/0) and that document decoded as
 * the resource, strictly (an unknown field, a wrong type or a bad enum name is an error, as
 * protojson's Unmarshal in Envoy Gateway refuses it, but only once applied, as Programmed=False). */
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "po/meshes/eg.h"
#include "po/targets/any_type.h"

#include "po/targets/native_error.h"
#include "eg_generated.h"

enum { kMaxJsonPatches = kPo_MaxPatchesPerOverride * 10, kMaxSegments = 64 };

static const char kTypePrefix[] = "type.googleapis.com/";

/* The Envoy message of one of the five type URLs Envoy Gateway's CRD allows, or NULL. */
static const char *message_of(const char *url) {
  static const char *const kMessages[] = {
      "envoy.config.listener.v3.Listener", "envoy.config.route.v3.RouteConfiguration",
      "envoy.config.cluster.v3.Cluster", "envoy.config.endpoint.v3.ClusterLoadAssignment",
      "envoy.extensions.transport_sockets.tls.v3.Secret"};
  if (!url || strncmp(url, kTypePrefix, sizeof kTypePrefix - 1) != 0) return NULL;
  for (size_t i = 0; i < sizeof kMessages / sizeof *kMessages; i++) {
    if (!strcmp(url + sizeof kTypePrefix - 1, kMessages[i])) return kMessages[i];
  }
  return NULL;
}

static bool add(po_Diagnostics *d, po_Severity sev, int i, const char *msg) {
  return msg && po_Diagnostics_Add(d, sev, kPo_DiagKind_Target, i, NULL, msg) != NULL;
}

/* An array index segment of RFC 6901 ("0", "12") or RFC 6902's "-" (the end). */
static bool index_segment(const char *s, size_t n) {
  if (n == 1 && *s == '-') return true;
  if (!n || n > 9) return false;
  for (size_t k = 0; k < n; k++) {
    if (s[k] < '0' || s[k] > '9') return false;
  }
  return true;
}

/* Whether segment k of `path` in message `msg` is a list index: where the schema says so (a
 * repeated field, a ListValue), or where it does not know (below an Any or a Value) and the
 * segment is digits or "-", as RFC 6901 reads it. Digits are a key where the schema says the
 * segment is one: of a map (/metadata/filter_metadata/0) or of a Struct
 * (/metadata/filter_metadata/example.com/2024). */
static bool is_index(const po_PointerSeg *segs, size_t nsegs, size_t k, const char *seg, size_t len) {
  po_PointerSegKind kind = k < nsegs ? segs[k].kind : kPo_PointerSeg_Unknown;
  return kind == kPo_PointerSeg_Index || (kind == kPo_PointerSeg_Unknown && index_segment(seg, len));
}

/* A pointer into nest()'s document, as a pointer into the resource: its first segments are the
 * path's (where nest() wrote every list index as 0), so those are taken from `path`; what lies
 * below the path is the pointer's own. */
static const char *in_resource(const char *path, const char *pointer, po_Arena *a) {
  const char *p = path, *q = pointer;
  while (*p == '/' && *q == '/') { /* one segment of each */
    p = strchr(p + 1, '/');
    q = strchr(q + 1, '/');
    if (!p) p = path + strlen(path);
    if (!q) q = pointer + strlen(pointer);
  }
  /* q past the path: the path, then the rest of the pointer; else the pointer ended inside it */
  return *p ? po_Arena_Strndup(a, path, (size_t)(p - path)) : po_Arena_Printf(a, "%s%s", path, q);
}

/* `value` nested along `path` (RFC 6901, "~1" and "~0" unescaped) in the message `msg`: an
 * all-digit segment is a list index, or a map's or Struct's key (is_index); a new reference, or NULL
 * when out of memory. *too_deep when the path has more segments than are checked. */
static json_object *nest(const po_EnvoyApi *api, const char *msg, const char *path, const json_object *value, po_Arena *a, bool *too_deep) {
  const char *segs[kMaxSegments];
  size_t lens[kMaxSegments], n = 0;
  for (const char *p = path; *p == '/';) {
    const char *s = p + 1, *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (n == kMaxSegments) {
      *too_deep = true;
      return NULL;
    }
    segs[n] = s, lens[n++] = len;
    p = s + len;
  }
  po_PointerSeg kinds[kMaxSegments];
  size_t nkinds = po_Pointer_Segments(api, msg, path, kinds, kMaxSegments);
  json_object *cur = NULL;
  if (value && json_object_deep_copy((json_object *)value, &cur, NULL) != 0) return NULL; /* NULL: a JSON null */
  while (n-- > 0) {
    json_object *up;
    if (is_index(kinds, nkinds, n, segs[n], lens[n])) {
      up = json_object_new_array();
      if (!up || json_object_array_add(up, cur) != 0) json_object_put(cur), json_object_put(up), up = NULL;
    } else {
      char *key = po_Arena_Malloc(a, lens[n] + 1);
      size_t kl = 0;
      for (size_t k = 0; key && k < lens[n]; k++) {
        if (segs[n][k] == '~' && k + 1 < lens[n] && (segs[n][k + 1] == '0' || segs[n][k + 1] == '1')) {
          key[kl++] = segs[n][++k] == '0' ? '~' : '/';
        } else {
          key[kl++] = segs[n][k];
        }
      }
      up = key ? json_object_new_object() : NULL;
      if (up && json_object_object_add(up, key, cur) != 0) json_object_put(up), up = NULL;
      if (!up) json_object_put(cur);
    }
    if (!up) return NULL;
    cur = up;
  }
  return cur;
}

/* Whether a decode failure comes from an Any whose @type the value cannot carry (the value is
 * put inside a typed_config: only the generated resource says which message it holds). */
static bool any_without_type(const char *msg) {
  return msg && (strstr(msg, "@type") || strstr(msg, "google.protobuf.Any"));
}

/* Envoy's rules on the value decoded at its path (po_Message_CheckRules): add and replace put it
 * in place of what the path names, whole (RFC 6902: an add onto an existing member replaces it),
 * so every rule of the field at the path and of all the value holds applies. The messages the
 * path runs through are the generated resource's (or created by EnsurePathExistsOnAdd): not
 * judged, nor the count of a list the path indexes. */
static bool check_rules(const po_Message *pm, const char *path, int idx, const char *where, po_Arena *a,
                        po_Diagnostics *d) {
  size_t depth = 0;
  for (const char *p = path; *p; p++) depth += *p == '/';
  /* the last step names the field the value is (judged even at its default: "" is a value
   * here), unless it is a list index; "~1" and "~0" unescaped */
  const char *last = strrchr(path, '/');
  char *field = NULL;
  po_PointerSeg kinds[kMaxSegments];
  size_t nkinds = po_Pointer_Segments(po_Message_Api(pm), po_Message_FullName(pm), path, kinds, kMaxSegments);
  if (last && depth && !is_index(kinds, nkinds, depth - 1, last + 1, strlen(last + 1))) {
    size_t n = strlen(last + 1), k = 0;
    if (!(field = po_Arena_Malloc(a, n + 1))) return false;
    for (const char *p = last + 1; *p; p++) {
      if (*p == '~' && (p[1] == '0' || p[1] == '1')) field[k++] = *++p == '0' ? '~' : '/';
      else field[k++] = *p;
    }
  }
  po_Diagnostics *found = po_Diagnostics_New(a);
  po_Status st;
  po_Status_Clear(&st);
  if (!found || !po_Message_CheckRules(pm, depth, field, kPo_ValueScope_Whole, idx, found, &st)) {
    return found && st.code != kPo_Status_NoMemory; /* kPo_Status_Limit: nest() has refused such paths */
  }
  for (size_t k = 0; k < po_Diagnostics_Count(found); k++) {
    const po_Diagnostic *f = po_Diagnostics_At(found, k);
    const char *text = *path ? po_Arena_Printf(a, "%s.operation.value%s (at %s%s): %s", where, f->path, path, f->path,
                                               f->message)
                             : po_Arena_Printf(a, "%s.operation.value%s: %s", where, f->path, f->message);
    if (!add(d, f->severity, idx, text)) return false;
  }
  return true;
}

/* Whether `path` itself goes inside an Any of `msg`: the path alone, its value null (unset),
 * fails to decode for want of an "@type". Otherwise an Any without "@type" is the value's own
 * fault, which Envoy Gateway's protojson refuses too. */
/* `doc` (taken) decoded as `msg`, *pv its value tree (for naming an error's field); NULL with st
 * set when it does not decode, NULL with *oom when memory ran out. Through the engine's writer, in the arena: json-c's, out of memory, can return
 * a text with pieces missing (its printbuf appends go unchecked), which would decode as some
 * other error. */
static po_Message *decode(const po_EnvoyApi *api, const char *msg, json_object *doc, po_Arena *a, po_Status *st, bool *oom, po_Value **pv) {
  *pv = po_Value_FromJsonC(doc, a, st);
  json_object_put(doc);
  const char *text = *pv ? po_Value_ToPrettyJson(*pv, a) : NULL;
  *oom = !text;
  return text ? po_Message_ParseJson(api, msg, text, strlen(text), a, st) : NULL;
}

static bool path_enters_any(const po_EnvoyApi *api, const char *msg, const char *path, po_Arena *a) {
  bool too_deep = false, oom = false;
  json_object *null = NULL, *doc = nest(api, msg, path, null, a, &too_deep);
  if (!doc) return true; /* out of memory or too deep: as before, not checked */
  po_Status st;
  po_Status_Clear(&st);
  po_Value *pv = NULL;
  return !decode(api, msg, doc, a, &st, &oom, &pv) && (oom || any_without_type(st.message));
}

/* A path segment that is a field's JSON name (connectTimeout for connect_timeout): Envoy Gateway
 * writes the generated resource with proto field names, so the path is not there. Replace,
 * remove and test then fail (the policy becomes Programmed=False, Invalid); an add creates a
 * second member that protojson reads as the same field, which it refuses when the generated
 * resource has the field set, and accepts only where it is absent. The first such segment. */
static bool check_json_names(const po_EnvoyApi *api, const char *msg, const char *path, const char *op, int idx, const char *where,
                             po_Arena *a, po_Diagnostics *d) {
  po_PointerSeg segs[kMaxSegments];
  size_t n = po_Pointer_Segments(api, msg, path, segs, kMaxSegments);
  const char *p = path;
  for (size_t k = 0; k < n; k++, p = strchr(p + 1, '/')) {
    if (segs[k].kind != kPo_PointerSeg_JsonName) continue;
    bool fails = !strcmp(op, "replace") || !strcmp(op, "remove") || !strcmp(op, "test");
    const char *end = strchr(p + 1, '/');
    return add(d, fails ? kPo_Severity_Error : kPo_Severity_Warning, idx,
               po_Arena_Printf(a, "%s.operation.path: '%.*s' is the JSON name of %s's field '%s': Envoy Gateway "
                                  "writes the generated resource with proto field names, so %s (write %.*s/%s%s)",
                               where, (int)(end ? end - p - 1 : (ptrdiff_t)strlen(p + 1)), p + 1, segs[k].message,
                               segs[k].field,
                               fails ? po_Arena_Printf(a, "op %s finds nothing there and fails (the policy becomes "
                                                          "Programmed=False, Invalid)", op)
                                     : "where the generated resource has the field set, the patched resource holds "
                                       "both names and protojson refuses it (Programmed=False, Invalid)",
                               (int)(p - path), path, segs[k].field, end ? end : ""));
  }
  return true;
}

/* "~" and "/" of a key escaped for a pointer (RFC 6901). */
static const char *pointer_key(const char *key, po_Arena *a) {
  po_TextBuf t = {.a = a};
  for (const char *p = key; *p; p++) po_TextBuf_Puts(&t, *p == '~' ? "~0" : *p == '/' ? "~1" : (char[2]){*p, 0});
  return t.oom ? NULL : t.buf ? t.buf : "";
}

typedef struct {
  const po_EnvoyApi *api;
  const char *msg, *where;
  int idx;
  po_Arena *a;
  po_Diagnostics *d;
  size_t budget; /* objects still to look into: the value's size bounds it, this bounds the cost */
} Dups;

/* Two members of one object of the value naming one field, by its proto name and its JSON name
 * (consecutive_5xx and consecutive5xx): protojson's Unmarshal refuses the duplicate field, so
 * Envoy Gateway fails the entry whatever it generated. `at` is the object's pointer in the
 * resource. The first such pair; false only when out of memory. */
static bool find_dups(Dups *x, const json_object *v, const char *at, int depth, bool *found) {
  if (*found || depth > kMaxSegments || !x->budget) return true;
  x->budget--;
  if (json_object_is_type(v, json_type_array)) {
    const char *item = po_Arena_Printf(x->a, "%s/0", at);
    if (!item) return false;
    for (size_t k = 0; k < json_object_array_length(v); k++) {
      if (!find_dups(x, json_object_array_get_idx(v, k), item, depth + 1, found)) return false;
    }
    return true;
  }
  if (!json_object_is_type(v, json_type_object)) return true;
  size_t n = (size_t)json_object_object_length(v), k = 0;
  const char **fields = po_Arena_Malloc(x->a, (n ? n : 1) * sizeof *fields);
  const char **keys = po_Arena_Malloc(x->a, (n ? n : 1) * sizeof *keys);
  if (!fields || !keys) return false;
  json_object_object_foreach((json_object *)v, key, val) {
    const char *esc = pointer_key(key, x->a), *ptr = esc ? po_Arena_Printf(x->a, "%s/%s", at, esc) : NULL;
    if (!ptr) return false;
    po_PointerSeg segs[kMaxSegments];
    size_t ns = po_Pointer_Segments(x->api, x->msg, ptr, segs, kMaxSegments);
    const po_PointerSeg *last = ns ? &segs[ns - 1] : NULL;
    bool field = last && (last->kind == kPo_PointerSeg_Field || last->kind == kPo_PointerSeg_JsonName);
    for (size_t m = 0; field && m < k; m++) {
      if (!fields[m] || strcmp(fields[m], last->field) != 0) continue;
      *found = true;
      return add(x->d, kPo_Severity_Error, x->idx,
                 po_Arena_Printf(x->a, "%s.operation.value at %s: '%s' and '%s' are one field of %s (its proto and JSON "
                                       "names): protojson refuses the duplicate field, so Envoy Gateway fails the entry "
                                       "(the policy becomes Programmed=False, Invalid) whatever it generated; keep one",
                                 x->where, *at ? at : "(the whole resource)", keys[m], key, last->message));
    }
    fields[k] = field ? last->field : NULL;
    keys[k++] = key;
    if (!find_dups(x, val, ptr, depth + 1, found)) return false;
    if (*found) return true;
  }
  return true;
}

static po_ResourceType resource_type_of(const char *msg) {
  if (!strcmp(msg, "envoy.config.listener.v3.Listener")) return kPo_ResourceType_Listener;
  if (!strcmp(msg, "envoy.config.cluster.v3.Cluster")) return kPo_ResourceType_Cluster;
  if (!strcmp(msg, "envoy.config.route.v3.RouteConfiguration")) return kPo_ResourceType_Route;
  if (!strcmp(msg, "envoy.config.endpoint.v3.ClusterLoadAssignment")) return kPo_ResourceType_ClusterLoadAssignment;
  return kPo_ResourceType_Unknown;
}

/* An add whose path sets a member of a oneof beside the member Envoy Gateway generates there
 * (eg_generated.c's table, the one the PropertyOverride check reads): the add leaves the generated
 * member in place, and protojson refuses the resource with both (issue 23 C1). An error where
 * Envoy Gateway generates the member on every such resource, a warning where only on the clusters
 * of Service backends. The first such segment; false only when out of memory. */
static bool check_generated_oneof(const po_EnvoyApi *api, const char *msg, const char *path, int idx, const char *where, po_Arena *a,
                                  po_Diagnostics *d) {
  po_ResourceType rt = resource_type_of(msg);
  po_PointerSeg segs[kMaxSegments];
  size_t n = po_Pointer_Segments(api, msg, path, segs, kMaxSegments);
  po_TextBuf parent = {.a = a};
  po_TextBuf_Puts(&parent, "");
  for (size_t k = 0; k < n && rt != kPo_ResourceType_Unknown; k++) {
    if (segs[k].kind != kPo_PointerSeg_Field && segs[k].kind != kPo_PointerSeg_JsonName) return true;
    po_Explanation ex = {0};
    po_Status st;
    po_Status_Clear(&st);
    if (!po_Explain(&(po_ExplainOptions){.api = api}, segs[k].message, a, &ex, &st)) return !po_Engine_OutOfMemory(a);
    const char *oneof = NULL;
    for (size_t f = 0; f < ex.field_count; f++) {
      if (!strcmp(ex.fields[f].name, segs[k].field)) oneof = ex.fields[f].oneof;
    }
    bool always = false;
    const char *gen = oneof && parent.buf ? po_EG_GeneratedMember(rt, parent.buf, oneof, &always) : NULL;
    if (gen && strcmp(gen, segs[k].field) != 0) {
      return add(d, always ? kPo_Severity_Error : kPo_Severity_Warning, idx,
                 po_Arena_Printf(a, "%s.operation.path: '%s' is a member of oneof '%s' of %s, whose member Envoy "
                                    "Gateway generates as '%s' %s: the add leaves '%s' in place beside it, and "
                                    "protojson refuses the resource with both (the policy becomes Programmed=False, "
                                    "Invalid); remove /%s%s%s in an entry before this one%s%s%s",
                                 where, segs[k].field, oneof, segs[k].message, gen,
                                 always ? "in every such resource" : "on the cluster of every Service backend", gen,
                                 parent.buf, *parent.buf ? "/" : "", gen,
                                 *parent.buf ? ", or replace /" : "", parent.buf,
                                 *parent.buf ? " whole with an object holding the member you want" : ""));
    }
    if (k) po_TextBuf_Puts(&parent, "/");
    po_TextBuf_Puts(&parent, segs[k].field);
    if (parent.oom) return false;
  }
  return true;
}

/* What removing the field a pointer ends in breaks of Envoy's rules (po_Message_CheckRemove), or
 * NULL: a list index or a map key, or nothing required there. */
static const char *remove_breaks(const po_EnvoyApi *api, const char *msg, const char *pointer, po_Arena *a, bool *oom) {
  po_PointerSeg kinds[kMaxSegments];
  size_t depth = 0, n = po_Pointer_Segments(api, msg, pointer, kinds, kMaxSegments);
  for (const char *p = pointer; *p; p++) depth += *p == '/';
  *oom = false;
  if (!n || n != depth) return NULL;
  const po_PointerSeg *last = &kinds[n - 1];
  if (last->kind != kPo_PointerSeg_Field && last->kind != kPo_PointerSeg_JsonName) return NULL;
  po_Status st;
  po_Status_Clear(&st);
  const char *why = po_Message_CheckRemove(api, last->message, last->field, a, &st);
  *oom = st.code == kPo_Status_NoMemory;
  return why;
}

/* The value of an add or replace (test: decoded only) at path, as the resource message msg: decoded
 * strictly, then judged by Envoy's rules; why it could not be decoded, said where. The caller's
 * verdict: false only when out of memory. */
static bool check_value(const po_NativeJudge *j, const char *msg, const char *op, const char *path, json_object *value, int idx,
                        const char *where, po_Arena *a, po_Diagnostics *d) {
  const po_EnvoyApi *api = j->api;
  bool too_deep = false;
  json_object *doc = nest(api, msg, path, value, a, &too_deep);
  if (too_deep) {
    return add(d, kPo_Severity_Warning, idx,
               po_Arena_Printf(a, "%s.operation.path: more than %d segments: the value is not checked", where,
                               kMaxSegments));
  }
  if (!doc) return false;
  po_Status st;
  po_Status_Clear(&st);
  bool oom = false;
  po_Value *pv = NULL;
  po_Message *pm = decode(api, msg, doc, a, &st, &oom, &pv);
  if (oom) return false;
  if (pm) return !strcmp(op, "test") || check_rules(pm, path, idx, where, a, d);
  if (st.code == kPo_Status_NoMemory) return false;
  const char *unknown = po_AnyType_FirstUnknown(api, value, a);
  if (unknown) {
    return add(d, kPo_Severity_Warning, idx,
               po_Arena_Printf(a, "%s.operation.value at %s: not checked: @type %s is not in Envoy's schema here (e.g. "
                                  "a TypedStruct); if Envoy Gateway does not know it either, Programmed=False", where,
                               *path ? path : "(the whole resource)", unknown));
  }
  if (*path && any_without_type(st.message) && path_enters_any(api, msg, path, a)) {
    return add(d, kPo_Severity_Warning, idx,
               po_Arena_Printf(a, "%s.operation.value at %s: not checked: the path goes inside a google.protobuf.Any "
                                  "(a typed_config), whose message only the generated resource names (%s)",
                               where, path, st.message));
  }
  /* named by the field, not by a line of the indented text the decoder read */
  const char *what = NULL, *at = po_Native_ErrorPointer(pv, st.message, a, &what);
  const char *hint = po_Native_UnknownFieldHint(j, msg, pv, at, what, a);
  at = at ? in_resource(path, at, a) : NULL;
  if (!hint) return false;
  return add(d, kPo_Severity_Error, idx,
             po_Arena_Printf(a, "%s.operation.value: not a valid value at %s of %s (protojson, proto field names; "
                                "wrappers are bare, Durations strings such as \"5s\"): %s%s",
                             where, at && *at ? at : *path ? path : "(the whole resource)", msg, at ? what : st.message,
                             hint));
}

/* One spec.jsonPatches entry, read once for the steps that check it. */
typedef struct {
  const po_EnvoyApi *api; /* the snapshot judging it (the Envoy Gateway release's) */
  const char *where, *msg, *op, *path, *from, *json_path;
  json_object *value;
  bool has_value;
  int idx;
  po_Arena *a;
  po_Diagnostics *d;
} Entry;

/* What a step of check_one says: go on to the next step, or the entry is done (an error said,
 * the rest would only repeat it), or out of memory. */
typedef enum { kEntry_Next, kEntry_Done, kEntry_NoMemory } EntryStep;

static EntryStep said(bool added) { return added ? kEntry_Done : kEntry_NoMemory; }

/* The entry's op and where it points: a known JSON Patch op, a pointer (or Envoy Gateway 1.2+'s
 * jsonPath, where the places are known only from the generated resource: e->path becomes NULL, so
 * the value is not checked against the schema, the rest is), an empty path only with add. */
static EntryStep check_place(Entry *e) {
  static const char *const kOps[] = {"add", "remove", "replace", "move", "copy", "test"};
  bool known = false;
  for (size_t k = 0; e->op && k < sizeof kOps / sizeof *kOps; k++) known |= !strcmp(e->op, kOps[k]);
  if (!known) {
    return said(add(e->d, kPo_Severity_Error, e->idx,
                    po_Arena_Printf(e->a, "%s.operation.op: '%s' is not a JSON Patch operation (add, remove, replace, "
                                          "move, copy or test)", e->where, e->op ? e->op : "(none)")));
  }
  if (e->json_path && *e->json_path) {
    if (e->path && *e->path && *e->path != '/') {
      return said(add(e->d, kPo_Severity_Error, e->idx,
                      po_Arena_Printf(e->a, "%s.operation.path: '%s' is not an RFC 6901 pointer: it starts with '/' "
                                            "(with jsonPath it is relative to each match, e.g. /typed_config)",
                                      e->where, e->path)));
    }
    if (!add(e->d, kPo_Severity_Warning, e->idx,
             po_Arena_Printf(e->a, "%s.operation.jsonPath: the places it selects are known only from the generated "
                                   "resource: the value is not checked against %s", e->where, e->msg))) {
      return kEntry_NoMemory;
    }
    e->path = NULL;
  } else if (!e->path || (*e->path && *e->path != '/')) {
    return said(add(e->d, kPo_Severity_Error, e->idx,
                    po_Arena_Printf(e->a, "%s.operation.path: '%s' is not an RFC 6901 pointer: it starts with '/' (e.g. "
                                          "/outlier_detection/consecutive_5xx, proto field names)",
                                    e->where, e->path ? e->path : "(none)")));
  }
  if (e->path && !*e->path && strcmp(e->op, "add") != 0) {
    return said(add(e->d, kPo_Severity_Error, e->idx,
                    po_Arena_Printf(e->a, "%s.operation.path: empty with op %s: only add takes an empty path (it "
                                          "adds the value as a whole new resource)", e->where, e->op)));
  }
  return kEntry_Next;
}

/* What the op needs and what it risks: a value (add, replace, test) or a from (move, copy); a
 * value given where none is taken; test changing nothing; a remove of what Envoy requires; a
 * remove or replace of a member the generated resource may leave out. */
static EntryStep check_operands(Entry *e) {
  const char *op = e->op, *path = e->path, *from = e->from;
  bool wants_value = !strcmp(op, "add") || !strcmp(op, "replace") || !strcmp(op, "test");
  bool wants_from = !strcmp(op, "move") || !strcmp(op, "copy");
  /* JSON null is a value (json-c's NULL): protojson reads it as the field unset, nothing to decode */
  if (wants_value && !e->has_value) {
    return said(add(e->d, kPo_Severity_Error, e->idx, po_Arena_Printf(e->a, "%s.operation.value: required with op %s", e->where, op)));
  }
  if (wants_from && (!from || *from != '/')) {
    return said(add(e->d, kPo_Severity_Error, e->idx,
                    po_Arena_Printf(e->a, "%s.operation.from: required with op %s: an RFC 6901 pointer in the same "
                                          "resource", e->where, op)));
  }
  if (!wants_value && e->has_value &&
      !add(e->d, kPo_Severity_Warning, e->idx,
           po_Arena_Printf(e->a, "%s.operation.value: ignored with op %s (only add, replace and test take a value)",
                           e->where, op))) {
    return kEntry_NoMemory;
  }
  if (!strcmp(op, "test") &&
      !add(e->d, kPo_Severity_Warning, e->idx,
           po_Arena_Printf(e->a, "%s: op test changes nothing; when the value differs it fails, and the policy "
                                 "becomes Programmed=False (Invalid)", e->where))) {
    return kEntry_NoMemory;
  }
  if (!strcmp(op, "remove") || !strcmp(op, "move")) {
    const char *gone = !strcmp(op, "move") ? from : path, *why = NULL;
    bool oom_remove = false;
    if (gone && *gone == '/' && !(why = remove_breaks(e->api, e->msg, gone, e->a, &oom_remove)) && oom_remove) return kEntry_NoMemory;
    /* absent, the op fails; present, Envoy refuses what it leaves: no outcome is valid */
    if (why) return said(add(e->d, kPo_Severity_Error, e->idx, po_Arena_Printf(e->a, "%s: op %s of %s: %s", e->where, op, gone, why)));
  }
  /* replace, as remove, wants the member there (RFC 6902 4.3): "doc is missing key" otherwise */
  bool names_it = path && (!strcmp(path, "/name") || !strcmp(path, "/cluster_name")); /* found by it: there */
  if ((!strcmp(op, "remove") || !strcmp(op, "move") || (!strcmp(op, "replace") && path && *path && !names_it)) &&
      !add(e->d, kPo_Severity_Warning, e->idx,
           po_Arena_Printf(e->a, "%s: op %s fails (the policy becomes Programmed=False, Invalid, and none of its "
                                 "patches apply) when %s is absent from the generated resource, and protojson leaves "
                                 "out every field at its default value (0, false, \"\", an empty list)%s",
                           e->where, op, !strcmp(op, "move") ? from : path ? path : e->json_path,
                           !strcmp(op, "replace") ? "; an add sets the field whether it is there or not" : ""))) {
    return kEntry_NoMemory;
  }
  return kEntry_Next;
}

static bool check_one(const po_NativeJudge *j, const json_object *jp, size_t i, po_Arena *a, po_Diagnostics *d) {
  const po_EnvoyApi *api = j->api;
  json_object *op_obj = po_Json_Get(jp, "operation");
  Entry e = {.api = api, .where = po_Arena_Printf(a, "spec.jsonPatches[%zu]", i), .op = po_Json_String(op_obj, "op"),
             .path = po_Json_String(op_obj, "path"), .from = po_Json_String(op_obj, "from"),
             .json_path = po_Json_String(op_obj, "jsonPath"), .idx = (int)i, .a = a, .d = d};
  if (!e.where) return false;
  const char *url = po_Json_String(jp, "type"), *name = po_Json_String(jp, "name");
  e.has_value = json_object_object_get_ex(op_obj, "value", &e.value);
  e.msg = message_of(url);
  if (!e.msg) {
    return add(d, kPo_Severity_Error, e.idx,
               po_Arena_Printf(a, "%s.type: '%s' is not a resource Envoy Gateway patches (%s%s, %sRouteConfiguration, "
                                  "%sCluster, %sClusterLoadAssignment or %sSecret of their envoy.*.v3 packages)",
                               e.where, url ? url : "(none)", kTypePrefix, "envoy.config.listener.v3.Listener",
                               kTypePrefix, kTypePrefix, kTypePrefix, kTypePrefix));
  }
  if ((!name || !*name) &&
      !add(d, kPo_Severity_Error, e.idx,
           po_Arena_Printf(a, "%s.name: required: the generated resource's name (e.g. default/eg/http for a "
                              "listener, httproute/default/backend/rule/0 for a cluster)", e.where))) {
    return false;
  }
  EntryStep step = check_place(&e);
  if (step == kEntry_Next) step = check_operands(&e);
  if (step != kEntry_Next) return step == kEntry_Done;
  const char *path = e.path, *op = e.op;
  bool wants_value = !strcmp(op, "add") || !strcmp(op, "replace") || !strcmp(op, "test");
  if (path && !check_json_names(api, e.msg, path, op, e.idx, e.where, a, d)) return false;
  if (path && !strcmp(op, "add") && !check_generated_oneof(api, e.msg, path, e.idx, e.where, a, d)) return false;
  if (path && wants_value && e.value && strcmp(op, "test") != 0) {
    Dups x = {api, e.msg, e.where, e.idx, a, d, 1u << 16};
    bool found = false;
    if (!find_dups(&x, e.value, path, 0, &found)) return false;
    if (found) return true;
  }
  if (!wants_value || !e.value || !path) return true;
  return check_value(j, e.msg, op, path, e.value, e.idx, e.where, a, d);
}

bool po_EG_CheckEnvoyPatchPolicy(const json_object *epp, const po_NativeJudge *j, po_Arena *a, po_Diagnostics *d) {
  json_object *spec = po_Json_Get(epp, "spec");
  const char *type = po_Json_String(spec, "type");
  if (!type || strcmp(type, "JSONPatch") != 0) {
    if (!add(d, kPo_Severity_Error, -1,
             po_Arena_Printf(a, "spec.type: '%s': JSONPatch is the only type", type ? type : "(none)"))) return false;
  }
  json_object *ref = po_Json_Get(spec, "targetRef");
  const char *kind = po_Json_String(ref, "kind");
  if (!kind || (strcmp(kind, "Gateway") != 0 && strcmp(kind, "GatewayClass") != 0)) {
    if (!add(d, kPo_Severity_Warning, -1,
             po_Arena_Printf(a, "spec.targetRef.kind: '%s': Envoy Gateway applies an EnvoyPatchPolicy to a Gateway "
                                "(or to a GatewayClass when mergeGateways is on); this one patches nothing",
                             kind ? kind : "(none)"))) return false;
  }
  json_object *jps = po_Json_Get(spec, "jsonPatches");
  size_t n = json_object_is_type(jps, json_type_array) ? json_object_array_length(jps) : 0;
  if (n == 0) {
    return add(d, kPo_Severity_Warning, -1, "spec.jsonPatches: none: this EnvoyPatchPolicy patches nothing");
  }
  if (n > kMaxJsonPatches) {
    return add(d, kPo_Severity_Error, -1,
               po_Arena_Printf(a, "spec.jsonPatches: %zu patches; at most %d are checked in one EnvoyPatchPolicy", n,
                               kMaxJsonPatches));
  }
  for (size_t i = 0; i < n; i++) {
    if (!check_one(j, json_object_array_get_idx(jps, i), i, a, d)) return false;
  }
  return true;
}
