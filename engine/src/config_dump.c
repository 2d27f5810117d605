/* Envoy's admin /config_dump read into resources (po_ConfigDump_ParseJson), for `preview`.
 *
 * The dump is read a piece at a time ("the dump streamed" below): the text is split by its
 * structure and each piece decoded by upb's JSON decoder on its own (every `@type` resolved
 * against the pool), in an arena freed after it - each entry of a per-type dump's resource lists
 * (Clusters/Listeners/Routes/EndpointsConfigDump), each other configs[] entry whole (the
 * bootstrap), each other member as a one-member object of its message. Each resource is an Any,
 * kept as its bytes (copied out of the piece's arena) until po_DumpResource_Decode/_DecodeIn
 * needs it: preview decodes only the resources a patch matches, and lists the others by the
 * name read from field 1 alone. The scan only finds where values end and checks the punctuation
 * between them; every value is upb's to read and judge. Cost: linear in the input (the scan
 * twice over a per-type dump's members, one JSON decode of each piece, a top-level field scan of
 * each resource, a binary decode of each resource asked for); memory the text, the resources'
 * bytes and a record each (docs/benchmarks.md, "the dump read a piece at a time": upb's decode of
 * the whole kept every level of every nested Any, 9x to 37x the text); each piece's decode is
 * held to a budget ("what one piece may cost" below). A json-c split of the
 * dump was tried earlier and measured slower: json-c's tree of a 3 MB dump cost 164 M
 * instructions to build and free against upb's 129 M for the whole preview. */
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "upb/decode.h"
#include "upb/def.h"

/* ConfigDump's message not found: a file of the schema that did not load for lack of memory (the
 * schema's sticky state says so), or truly missing. Not "not in the schema" for the first (adv-27,
 * cli_adv27_oom: preview said so, exit 2, with no word of memory). */
static bool no_config_dump(const po_Schema *s, po_Status *st) {
  if (po_Schema_OutOfMemory(s)) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), false;
  return po_Status_Set(st, kPo_Status_NotFound, "envoy.admin.v3.ConfigDump is not in the schema"), false;
}

static const upb_FieldDef *field(const upb_MessageDef *d, const char *name) {
  return upb_MessageDef_FindFieldByName(d, name);
}

static const char *string_of(const upb_Message *m, const upb_MessageDef *d, const char *name, po_Arena *a) {
  const upb_FieldDef *f = field(d, name);
  if (!f || upb_FieldDef_CType(f) != kUpb_CType_String || upb_FieldDef_IsRepeated(f)) return "";
  upb_StringView v = upb_Message_Get(m, f).str_val;
  if (!v.size) return ""; /* no copy of nothing (a version_info per resource) */
  char *s = po_Arena_Strndup(a, v.data, v.size);
  return s ? s : "";
}

/* The message a set singular message field holds, or NULL. */
static const upb_Message *sub(const upb_Message *m, const upb_MessageDef *d, const char *name,
                              const upb_MessageDef **sd) {
  const upb_FieldDef *f = field(d, name);
  if (!f || !upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f) || !upb_Message_Has(m, f)) return NULL;
  *sd = upb_FieldDef_MessageSubDef(f);
  return upb_Message_Get(m, f).msg_val;
}

static const upb_Array *list(const upb_Message *m, const upb_MessageDef *d, const char *name,
                             const upb_MessageDef **ed) {
  const upb_FieldDef *f = field(d, name);
  if (!f || !upb_FieldDef_IsSubMessage(f) || !upb_FieldDef_IsRepeated(f) || upb_FieldDef_IsMap(f)) return NULL;
  *ed = upb_FieldDef_MessageSubDef(f);
  return upb_Message_Get(m, f).array_val;
}

/* upb's decode of a message's bytes (an Any's value), aliasing its strings; NULL with st set,
 * upb's status in words (a number says nothing to whoever took the dump). */
static upb_Message *decode_bytes(const po_Schema *s, const upb_MessageDef *def, upb_StringView v, const char *where,
                                 po_Arena *a, po_Status *st) {
  upb_Message *m = upb_Message_New(def, po_Arena_Upb(a));
  if (!m) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  upb_DecodeStatus ds = upb_Decode(v.data, v.size, m, upb_MessageDef_MiniTable(def),
                                   upb_DefPool_ExtensionRegistry(po_Schema_Pool(s)), kUpb_DecodeOption_AliasString,
                                   po_Arena_Upb(a));
  if (ds != kUpb_DecodeStatus_Ok) {
    const char *why = ds == kUpb_DecodeStatus_BadUtf8          ? "a string is not valid UTF-8"
                      : ds == kUpb_DecodeStatus_MaxDepthExceeded ? "nested deeper than upb's 64 levels of messages"
                      : ds == kUpb_DecodeStatus_OutOfMemory      ? "out of memory"
                                                                 : "malformed bytes";
    po_Status_Set(st, ds == kUpb_DecodeStatus_OutOfMemory ? kPo_Status_NoMemory : kPo_Status_Parse, "%s: invalid %s: %s", where,
                  upb_MessageDef_FullName(def), why);
    return NULL;
  }
  return m;
}

/* An Any unpacked into a message of the pool; NULL with st set when its type is unknown or its
 * bytes do not decode. `where` names the place for the error. */
static upb_Message *unpack(const po_Schema *s, const upb_Message *any, const upb_MessageDef *anyd,
                           const upb_MessageDef **def, const char *where, po_Arena *a, po_Status *st) {
  upb_StringView url = upb_Message_Get(any, field(anyd, "type_url")).str_val;
  upb_StringView val = upb_Message_Get(any, field(anyd, "value")).str_val;
  size_t from = url.size; /* the type name is what follows the URL's last '/' */
  while (from > 0 && url.data[from - 1] != '/') from--;
  char *name = po_Arena_Strndup(a, url.size ? url.data + from : "", url.size - from);
  if (!name) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  *def = po_Schema_FindMessage(s, name);
  if (!*def) {
    po_Status_Set(st, kPo_Status_NotFound, "%s: type '%.*s' is not in the Envoy v3 schema", where, (int)url.size,
                  url.data ? url.data : "");
    return NULL;
  }
  /* The Any's bytes live in this arena as long as the message: its strings (the nested Anys'
   * bytes above all) are aliased, not copied, which halves what a dump costs in memory. */
  return decode_bytes(s, *def, val, where, a, st);
}

/* The resources' array, malloc'd and grown by realloc (large blocks grow in place, by mremap),
 * freed with the arena: doubling it inside the arena left every outgrown copy behind, most of
 * the memory of a dump of many small resources. */
typedef struct {
  po_DumpResource *p;
} Owned;

static void free_owned(void *ud) { free(((Owned *)ud)->p); }

typedef struct {
  po_ConfigDump *out;
  Owned *owned;
  size_t cap;
  po_Arena *a;
  po_Status *st;
  const po_Schema *s; /* the snapshot's schema every piece is decoded with */
  size_t configs;   /* configs[] entries met */
  size_t other_cap; /* out->other_configs' room */
  size_t budget;    /* what one piece's decode may take: max(4x the dump, kMinPieceBudget) */
} Reader;

/* ---- what one piece may cost ----
 * upb's JSON decode of a piece can cost far more than its text: a google.protobuf.Struct is a
 * message per JSON value (`[{},{},...]`: ~330 bytes per 3-byte `{}`), an Any keeps each nested
 * level's encoding (a string under 25 Anys: 25 copies), and an Any of a type the schema lacks
 * goes through json-c's tree. A 9 MB dump made 1 GB. So each piece is decoded in an arena with
 * a budget: its allocator counts what the arena takes and fails past the budget, and the piece
 * is refused, saying where and how much it was allowed, instead of the machine's memory being
 * the limit. The budget is max(4x the dump, kMinPieceBudget): a real resource (10,000 endpoints,
 * 3 MB of JSON) takes a few times its text. */
enum { kMinPieceBudget = 32 << 20 };

typedef struct {
  po_ArenaTrack track; /* first: upb hands the allocator back as this; failed: out of memory */
  size_t used, limit;
  bool over;
} Budget;

static void *budget_func(upb_alloc *alloc, void *ptr, size_t oldsize, size_t size) {
  Budget *b = (Budget *)alloc;
  if (size == 0) {
    free(ptr);
    return NULL;
  }
  /* an arena's blocks are only ever added (freed with it): what it took is the running sum */
  size_t grow = size > oldsize ? size - oldsize : 0;
  if (b->used + grow > b->limit) {
    b->over = true;
    return NULL;
  }
  void *n = realloc(ptr, size);
  if (!n) b->track.failed = true;
  else b->used += grow;
  return n;
}

/* A scratch arena for one piece, its allocations counted against r->budget. */
static po_Arena *piece_arena(Reader *r, Budget *b) {
  *b = (Budget){{{budget_func}, false}, 0, r->budget, false};
  po_Arena *a = po_Arena_Wrap(upb_Arena_Init(NULL, 0, &b->track.alloc), &b->track.failed);
  if (!a) po_Arena_NoteOutOfMemory_(r->a);
  return a;
}

/* After a piece's decode: over its budget is a refusal naming the piece, whatever upb said
 * (its decoder does not check every allocation: a piece read short is no verdict). */
static bool within_budget(Reader *r, const Budget *b, const char *where) {
  if (!b || !b->over) return true;
  po_Status_Set(r->st, kPo_Status_Limit, "%s: decoding it takes more than %zu MiB, the most one resource (or other piece "
                "of the dump) may take: 4x the dump's size, at least %d MiB; refused (a google.protobuf.Struct of "
                "very many values, or Anys nested deep, cost upb hundreds of bytes per byte of JSON)",
                where, b->limit >> 20, kMinPieceBudget >> 20);
  return false;
}

/* A resource, kept until po_DumpResource_Decode needs the message: its Any's bytes, in the
 * arena (aliased when a per-type dump was decoded whole, copied out of the piece's scratch arena
 * when it was streamed: binary, about half the JSON text it came from). */
struct po_DumpPending {
  const po_Schema *s;
  const upb_MessageDef *def;
  upb_StringView bytes;
  po_Arena *arena;
};

po_Message *po_DumpResource_DecodeIn(const po_DumpResource *r, po_Arena *a, po_Status *st) {
  if (r->message && r->message->arena == a) return r->message;
  struct po_DumpPending *p = r->pending;
  if (!p) return po_Status_Set(st, kPo_Status_Invalid, "%s: no resource", r->where ? r->where : "dump"), NULL;
  upb_Message *m = decode_bytes(p->s, p->def, p->bytes, r->where, a, st);
  po_Message *pm = m ? po_Arena_Malloc(a, sizeof *pm) : NULL;
  if (m && !pm) po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  if (!pm) return NULL;
  *pm = (po_Message){p->def, m, a, p->s};
  return pm;
}

po_Message *po_DumpResource_Decode(po_DumpResource *r, po_Status *st) {
  if (r->message) return r->message;
  po_Message *m = r->pending ? po_DumpResource_DecodeIn(r, r->pending->arena, st) : NULL;
  if (!r->pending) po_Status_Set(st, kPo_Status_Invalid, "%s: no resource", r->where ? r->where : "dump");
  r->message = m;
  return m;
}

/* The resource's name without decoding it: field 1 of Cluster, Listener and RouteConfiguration
 * is `name`, of ClusterLoadAssignment `cluster_name` (checked against the schema, not assumed),
 * so its bytes read as a google.protobuf.StringValue (`string value = 1`) give the name, upb
 * skipping every other top-level field as an unknown one without descending into it. The
 * scratch arena holds those unknown bytes and is freed at once. NULL when field 1 is not the
 * name (a schema that differs): the caller then decodes the resource. */
static const char *name_of(const po_Schema *s, const upb_MessageDef *def, const char *name_field, upb_StringView v,
                           po_Arena *a) {
  const upb_FieldDef *f1 = upb_MessageDef_FindFieldByNumber(def, 1);
  if (!f1 || strcmp(upb_FieldDef_Name(f1), name_field) || upb_FieldDef_CType(f1) != kUpb_CType_String ||
      upb_FieldDef_IsRepeated(f1)) {
    return NULL;
  }
  po_Status st;
  po_Status_Clear(&st);
  const upb_MessageDef *sv = po_Schema_FindMessage(s, "google.protobuf.StringValue");
  po_Arena *scratch = sv ? po_Arena_New() : NULL;
  if (!scratch) return po_Arena_NoteOutOfMemory_(a), NULL;
  upb_Message *m = decode_bytes(s, sv, v, "", scratch, &st);
  const char *name = m ? string_of(m, sv, "value", a) : NULL;
  po_Arena_FreeInto(scratch, a);
  return name;
}

/* What a resource slot holds that is not a resource, for the error: its type's name, or, when
 * it is the placeholder of an Any whose type no snapshot has (a google.protobuf.StringValue
 * saying "(a type.googleapis.com/...: ...)", below), what that placeholder says: the type the
 * dump named, not google.protobuf.StringValue. */
static const char *found_type(Reader *r, const upb_MessageDef *def, upb_StringView val) {
  const char *name = upb_MessageDef_FullName(def);
  if (!r->out->unknown_types || strcmp(name, "google.protobuf.StringValue") != 0) return name;
  po_Status st;
  po_Status_Clear(&st);
  upb_Message *m = decode_bytes(r->s, def, val, "", r->a, &st);
  const char *said = m ? string_of(m, def, "value", r->a) : NULL;
  return said && !strncmp(said, "(a ", 3) ? said : name;
}

static bool push(Reader *r, const upb_Message *any, const upb_MessageDef *anyd, po_DumpState state,
                 const char *version, const char *where, bool streamed) {
  const po_Schema *s = r->s;
  upb_StringView url = upb_Message_Get(any, field(anyd, "type_url")).str_val;
  upb_StringView val = upb_Message_Get(any, field(anyd, "value")).str_val;
  size_t from = url.size; /* the type name is what follows the URL's last '/' */
  while (from > 0 && url.data[from - 1] != '/') from--;
  /* the name looked up from the stack when it fits: a copy in the arena per resource was 32
   * bytes of every record */
  char small[256];
  size_t tl = url.size - from;
  char *tname = tl < sizeof small ? small : po_Arena_Malloc(r->a, tl + 1);
  if (!tname) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
  if (tl) memcpy(tname, url.data + from, tl);
  tname[tl] = '\0';
  const upb_MessageDef *def = po_Schema_FindMessage(s, tname);
  if (!def) {
    po_Status_Set(r->st, kPo_Status_NotFound, "%s: type '%.*s' is not in the Envoy v3 schema", where, (int)url.size,
                  url.data ? url.data : "");
    return false;
  }
  const char *rt = po_Schema_ResourceTypeOf(def);
  po_ResourceType t = rt ? po_ResourceType_Parse(rt) : kPo_ResourceType_Unknown;
  if (t == kPo_ResourceType_Unknown) {
    po_Status_Set(r->st, kPo_Status_Parse, "%s: expected a Cluster, ClusterLoadAssignment, Listener or RouteConfiguration, found %s",
                  where, found_type(r, def, val));
    return false;
  }
  po_ConfigDump *d = r->out;
  if (d->count == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    if (!r->owned) {
      r->owned = po_Arena_Malloc(r->a, sizeof *r->owned);
      if (!r->owned || !upb_Arena_AddCleanup(po_Arena_Upb(r->a), r->owned, free_owned)) {
        r->owned = NULL;
        return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
      }
    }
    po_DumpResource *n = realloc(r->owned->p, cap * sizeof *n);
    if (!n) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
    r->owned->p = n;
    d->resources = n;
    r->cap = cap;
  }
  struct po_DumpPending *p = po_Arena_Malloc(r->a, sizeof *p);
  if (!p) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
  *p = (struct po_DumpPending){.s = s, .def = def, .bytes = val, .arena = r->a};
  if (streamed && val.size) { /* the piece's scratch arena goes after it: the bytes are copied */
    char *copy = po_Arena_Malloc(r->a, val.size);
    if (!copy) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
    memcpy(copy, val.data, val.size);
    p->bytes = (upb_StringView){copy, val.size};
  }
  po_DumpResource *res = &d->resources[d->count++];
  const char *name_field = t == kPo_ResourceType_ClusterLoadAssignment ? "cluster_name" : "name";
  *res = (po_DumpResource){
      .type = t,
      .state = state,
      .version_info = version ? version : "",
      .where = po_Arena_Strndup(r->a, where, strlen(where)),
      .pending = p,
  };
  if (!res->where) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
  /* Decoded at once: a route of a per-type dump decoded whole (Consul's classification looks
   * inside it; a streamed one is decoded by po_Mesh_Classify when it asks, and freed), or a
   * resource whose name the shortcut cannot read (decoded from the bytes at hand). Any other
   * waits for a patch to match it. */
  res->name = t == kPo_ResourceType_Route && !streamed ? NULL : name_of(s, def, name_field, val, r->a);
  if (!res->name && streamed) {
    po_Arena *scratch = po_Arena_New();
    if (!scratch) return po_Arena_NoteOutOfMemory_(r->a), po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
    upb_Message *m = decode_bytes(s, def, val, res->where, scratch, r->st);
    res->name = m ? string_of(m, def, name_field, r->a) : NULL;
    po_Arena_FreeInto(scratch, r->a);
    if (!m) return false;
  } else if (!res->name) {
    po_Message *m = po_DumpResource_Decode(res, r->st);
    if (!m) return false;
    res->name = string_of(m->msg, def, name_field, r->a);
  }
  return true;
}

/* One list of entries of a per-type dump: each entry holds the resource's Any in field `res`
 * (for dynamic listeners: inside the state message `state_field`). */
static bool entries(Reader *r, const upb_Message *dump, const upb_MessageDef *dd, const char *list_name,
                    const char *res, po_DumpState state, int config) {
  const upb_MessageDef *ed = NULL;
  const upb_Array *arr = list(dump, dd, list_name, &ed);
  for (size_t i = 0; arr && i < upb_Array_Size(arr); i++) {
    const upb_Message *e = upb_Array_Get(arr, i).msg_val;
    const upb_MessageDef *anyd = NULL;
    const upb_Message *any = sub(e, ed, res, &anyd);
    if (!any) continue; /* an entry without its resource (an error_state only): nothing to preview */
    char where[160];
    snprintf(where, sizeof where, "configs[%d].%s[%zu].%s", config, list_name, i, res);
    if (!push(r, any, anyd, state, string_of(e, ed, "version_info", r->a), where, false)) return false;
  }
  return true;
}

static bool listeners(Reader *r, const upb_Message *dump, const upb_MessageDef *dd, int config) {
  if (!entries(r, dump, dd, "static_listeners", "listener", kPo_DumpState_Static, config)) return false;
  static const struct {
    const char *field;
    po_DumpState state;
  } kStates[] = {{"active_state", kPo_DumpState_Active},
                 {"warming_state", kPo_DumpState_Warming},
                 {"draining_state", kPo_DumpState_Draining}};
  const upb_MessageDef *ed = NULL;
  const upb_Array *arr = list(dump, dd, "dynamic_listeners", &ed);
  for (size_t i = 0; arr && i < upb_Array_Size(arr); i++) {
    const upb_Message *e = upb_Array_Get(arr, i).msg_val;
    for (size_t k = 0; k < sizeof kStates / sizeof kStates[0]; k++) {
      const upb_MessageDef *sd = NULL, *anyd = NULL;
      const upb_Message *s = sub(e, ed, kStates[k].field, &sd);
      const upb_Message *any = s ? sub(s, sd, "listener", &anyd) : NULL;
      if (!any) continue;
      char where[160];
      snprintf(where, sizeof where, "configs[%d].dynamic_listeners[%zu].%s.listener", config, i, kStates[k].field);
      if (!push(r, any, anyd, kStates[k].state, string_of(s, sd, "version_info", r->a), where, false)) return false;
    }
  }
  return true;
}

/* After upb's "Type was not found" (which names only a line and column): the first `@type` of
 * the text that the schema does not have, so the error can name it. A scan of the text for
 * error reporting only; the dump itself is read by upb. */
static const char *unknown_type(const po_Schema *s, const char *json, size_t len, po_Arena *a) {
  static const char kKey[] = "\"@type\"";
  const char *end = json + len;
  for (const char *p = json; p < end && (p = memchr(p, '"', (size_t)(end - p))) != NULL; p++) {
    if ((size_t)(end - p) < sizeof kKey || memcmp(p, kKey, sizeof kKey - 1) != 0) continue;
    const char *v = p + sizeof kKey - 1;
    while (v < end && (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n' || *v == ':')) v++;
    if (v >= end || *v != '"') continue;
    v++;
    const char *q = memchr(v, '"', (size_t)(end - v));
    if (!q) return NULL;
    const char *name = v;
    for (const char *c = v; c < q; c++) name = *c == '/' ? c + 1 : name;
    char *n = po_Arena_Strndup(a, name, (size_t)(q - name));
    if (n && !po_Schema_FindMessage(s, n)) return po_Arena_Strndup(a, v, (size_t)(q - v));
    p = q;
  }
  return NULL;
}

/* ---- a dump naming types the schema lacks ----
 * Real dumps carry configurations of a mesh's own extensions (Istio's metadata exchange, stats
 * filters) as Anys of types no Envoy API has; upb cannot decode an Any it cannot resolve, and the
 * whole dump would be refused. No patch can reach inside an Any (a path cannot go through one),
 * so such a value only has to survive as something: it is replaced, before upb reads the dump, by
 * a google.protobuf.StringValue saying what it was, and counted. The rewrite goes through
 * json-c's tree (a copy of the text), only after upb has refused the dump for that reason. */

enum { kMaxJsonDepth = 512 };

typedef struct {
  const po_Schema *s;
  po_Arena *a;
  size_t count;
  const char *first;
  bool oom;
} Fix;

static bool unknown_any(Fix *f, json_object *o) {
  json_object *t = NULL;
  if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "@type", &t) ||
      !json_object_is_type(t, json_type_string)) {
    return false;
  }
  const char *url = json_object_get_string(t), *name = url;
  for (const char *c = url; *c; c++) name = *c == '/' ? c + 1 : name;
  if (po_Schema_FindMessage(f->s, name)) return false;
  if (!f->first) f->first = po_Arena_Strndup(f->a, url, strlen(url));
  f->count++;
  return true;
}

static json_object *placeholder(Fix *f, json_object *o) {
  json_object *t = NULL;
  json_object_object_get_ex(o, "@type", &t);
  char *text = po_Arena_Printf(f->a, "(a %s: a type the Envoy API this build has lacks)", json_object_get_string(t));
  json_object *p = json_object_new_object();
  if (!text || !p ||
      json_object_object_add(p, "@type", json_object_new_string("type.googleapis.com/google.protobuf.StringValue")) ||
      json_object_object_add(p, "value", json_object_new_string(text))) {
    f->oom = true;
  }
  return p;
}

static void fix_tree(Fix *f, json_object *j) {
  if (json_object_is_type(j, json_type_object)) {
    json_object_object_foreach(j, key, val) {
      if (unknown_any(f, val)) json_object_object_add(j, key, placeholder(f, val)); /* replaces in place */
      else fix_tree(f, val);
    }
  } else if (json_object_is_type(j, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(j); i++) {
      json_object *val = json_object_array_get_idx(j, i);
      if (unknown_any(f, val)) json_object_array_put_idx(j, i, placeholder(f, val));
      else fix_tree(f, val);
    }
  }
}

/* The dump's text with every Any of an unknown type replaced; NULL when it does not parse. */
static const char *without_unknown_types(const po_Schema *s, const char *json, size_t len, po_Arena *a,
                                         size_t *out_len, po_ConfigDump *out) {
  json_tokener *tok = json_tokener_new_ex(kMaxJsonDepth);
  if (!tok) return po_Arena_NoteOutOfMemory_(a), NULL;
  json_object *root = json_tokener_parse_ex(tok, json, (int)len);
  bool ok = root && json_tokener_get_error(tok) == json_tokener_success;
  /* memory, not the dump (cmake/json-c-patches/tokener-oom.patch): decode_piece says so */
  if (json_tokener_get_error(tok) == json_tokener_error_memory) po_Arena_NoteOutOfMemory_(a);
  /* json-c stops after one value: what follows it is kept after the rewritten text, so upb's
   * decode of the whole still refuses text after the dump (two dumps appended into one file). */
  size_t end = ok ? json_tokener_get_parse_end(tok) : len;
  if (end > len) end = len;
  json_tokener_free(tok);
  const char *text = NULL;
  if (ok) {
    Fix f = {s, a, 0, NULL, false};
    fix_tree(&f, root);
    const char *t = f.oom ? NULL : json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    text = t ? po_Arena_Printf(a, "%s%.*s", t, (int)(len - end), json + end) : NULL;
    if (!text) po_Arena_NoteOutOfMemory_(a); /* the fix, the writer (printbuf-oom.patch) or the copy */
    if (text) {
      *out_len = strlen(text);
      out->unknown_types = f.count;
      out->first_unknown_type = f.first;
    }
  }
  json_object_put(root);
  return text;
}

/* Consul's bootstrap tags every stat with the proxy's datacenter and service: the stats tags
 * `consul.source.datacenter` / `consul.source.service` (fixed_value) of
 * bootstrap.stats_config.stats_tags. NULL without. */
static const char *consul_tag(const upb_Message *bcd, const upb_MessageDef *bcdd, const char *tag, po_Arena *a) {
  const upb_MessageDef *bd = NULL, *sd = NULL, *td = NULL;
  const upb_Message *b = sub(bcd, bcdd, "bootstrap", &bd);
  const upb_Message *sc = b ? sub(b, bd, "stats_config", &sd) : NULL;
  const upb_Array *tags = sc ? list(sc, sd, "stats_tags", &td) : NULL;
  for (size_t i = 0; tags && i < upb_Array_Size(tags); i++) {
    const upb_Message *t = upb_Array_Get(tags, i).msg_val;
    const char *dc = string_of(t, td, "fixed_value", a);
    if (!strcmp(string_of(t, td, "tag_name", a), tag) && *dc) return dc;
  }
  return NULL;
}

/* ---- the proxy's versions, from its bootstrap's node ----
 * Envoy fills node.user_agent_build_version with its own version when it starts, so the dump's
 * bootstrap names the Envoy that runs (a hand-made bootstrap may say user_agent_version in
 * words instead: its first version-like number is taken). Istio's injector puts the mesh
 * release in the node metadata (ISTIO_VERSION). preview judges the proxy with the snapshot these
 * name. */

/* The first "N.N" or "N.N.N" of s (digits not part of a longer run of digits and dots before),
 * as text; NULL when none. */
static const char *version_in(const char *s, po_Arena *a, int *major, int *minor) {
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9' || (p > s && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.'))) continue;
    char *end = NULL;
    long ma = strtol(p, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9') continue;
    long mi = strtol(end + 1, &end, 10);
    if (*end == '.' && end[1] >= '0' && end[1] <= '9') strtol(end + 1, &end, 10);
    if (ma > 1000 || mi > 1000) continue; /* not a release number (a date, an address) */
    *major = (int)ma;
    *minor = (int)mi;
    return po_Arena_Strndup(a, p, (size_t)(end - p));
  }
  return NULL;
}

/* node.user_agent_build_version.version as "major.minor.patch". */
static const char *build_version(const upb_Message *node, const upb_MessageDef *nd, po_Arena *a, int *major,
                                 int *minor) {
  const upb_MessageDef *bd = NULL, *vd = NULL;
  const upb_Message *b = sub(node, nd, "user_agent_build_version", &bd);
  const upb_Message *v = b ? sub(b, bd, "version", &vd) : NULL;
  const upb_FieldDef *fma = v ? field(vd, "major_number") : NULL, *fmi = v ? field(vd, "minor_number") : NULL,
                     *fp = v ? field(vd, "patch") : NULL;
  if (!fma || !fmi || !fp) return NULL;
  uint32_t ma = upb_Message_Get(v, fma).uint32_val, mi = upb_Message_Get(v, fmi).uint32_val,
           pa = upb_Message_Get(v, fp).uint32_val;
  if (!ma && !mi) return NULL; /* 0.0: not said */
  *major = (int)(ma > 1000 ? 1000 : ma);
  *minor = (int)(mi > 1000 ? 1000 : mi);
  return po_Arena_Printf(a, "%u.%u.%u", ma, mi, pa);
}

/* A string member of node.metadata (a google.protobuf.Struct), or NULL. */
static const char *node_metadata(const upb_Message *node, const upb_MessageDef *nd, const char *key, po_Arena *a) {
  const upb_MessageDef *sd = NULL;
  const upb_Message *md = sub(node, nd, "metadata", &sd);
  const upb_FieldDef *ff = md ? field(sd, "fields") : NULL;
  if (!ff || !upb_FieldDef_IsMap(ff)) return NULL;
  const upb_Map *m = upb_Message_Get(md, ff).map_val;
  upb_MessageValue val;
  upb_MessageValue k = {.str_val = {key, strlen(key)}};
  if (!m || !upb_Map_Get(m, k, &val) || !val.msg_val) return NULL;
  const upb_MessageDef *vd = upb_FieldDef_MessageSubDef(upb_MessageDef_FindFieldByNumber(upb_FieldDef_MessageSubDef(ff), 2));
  const char *s = vd ? string_of(val.msg_val, vd, "string_value", a) : "";
  return *s ? s : NULL;
}

static void bootstrap_versions(const upb_Message *bcd, const upb_MessageDef *bcdd, po_ConfigDump *out, po_Arena *a) {
  const upb_MessageDef *bd = NULL, *nd = NULL;
  const upb_Message *b = sub(bcd, bcdd, "bootstrap", &bd);
  const upb_Message *node = b ? sub(b, bd, "node", &nd) : NULL;
  if (!node) return;
  out->envoy_version = build_version(node, nd, a, &out->envoy_major, &out->envoy_minor);
  const char *text = out->envoy_version ? "" : string_of(node, nd, "user_agent_version", a);
  if (*text) out->envoy_version = version_in(text, a, &out->envoy_major, &out->envoy_minor);
  out->istio_version = node_metadata(node, nd, "ISTIO_VERSION", a);
}

/* One configs[] entry decoded whole (its Any unpacked): the per-type dumps' resources kept as
 * bytes, the bootstrap's tags and versions read, others named. */
static bool one_config(Reader *r, const upb_Message *d, const upb_MessageDef *dd, size_t i) {
  po_ConfigDump *out = r->out;
  po_Status *st = r->st;
  const char *n = upb_MessageDef_FullName(dd);
  int ci = (int)i;
  if (!strcmp(n, "envoy.admin.v3.ClustersConfigDump")) {
    return entries(r, d, dd, "static_clusters", "cluster", kPo_DumpState_Static, ci) &&
           entries(r, d, dd, "dynamic_active_clusters", "cluster", kPo_DumpState_Active, ci) &&
           entries(r, d, dd, "dynamic_warming_clusters", "cluster", kPo_DumpState_Warming, ci);
  } else if (!strcmp(n, "envoy.admin.v3.ListenersConfigDump")) {
    return listeners(r, d, dd, ci);
  } else if (!strcmp(n, "envoy.admin.v3.RoutesConfigDump")) {
    return entries(r, d, dd, "static_route_configs", "route_config", kPo_DumpState_Static, ci) &&
           entries(r, d, dd, "dynamic_route_configs", "route_config", kPo_DumpState_Active, ci);
  } else if (!strcmp(n, "envoy.admin.v3.EndpointsConfigDump")) {
    return entries(r, d, dd, "static_endpoint_configs", "endpoint_config", kPo_DumpState_Static, ci) &&
           entries(r, d, dd, "dynamic_endpoint_configs", "endpoint_config", kPo_DumpState_Active, ci);
  } else if (!strncmp(n, "envoy.admin.v3.ClustersConfigDump.", 34) || !strncmp(n, "envoy.admin.v3.ListenersConfigDump.", 35) ||
             !strncmp(n, "envoy.admin.v3.RoutesConfigDump.", 32) || !strncmp(n, "envoy.admin.v3.EndpointsConfigDump.", 35)) {
    /* /config_dump?resource=... (or ?mask= with it) lists single entries, not the per-type
     * dumps: taken as "something else", every resource would be missing and every patch
     * reported as matching nothing. An entry does not say which list it came from (a
     * DynamicCluster is active or warming alike), so it is refused, saying what to take. */
    po_Status_Set(st, kPo_Status_Parse, "configs[%zu]: a single %s, as /config_dump?resource=... gives: whether it is "
                  "active, warming or draining is not in it; take the whole /config_dump (?include_eds for endpoints)", i, n);
    return false;
  }
  if (out->other_count == r->other_cap) {
    const char **bigger = po_Arena_Malloc(r->a, r->other_cap * 2 * sizeof *bigger);
    if (!bigger) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), false;
    memcpy(bigger, out->other_configs, out->other_count * sizeof *bigger);
    out->other_configs = bigger;
    r->other_cap *= 2;
  }
  out->other_configs[out->other_count++] = n; /* bootstrap, secrets, ...: not patched by a mesh */
  if (!strcmp(n, "envoy.admin.v3.BootstrapConfigDump")) {
    out->consul_datacenter = consul_tag(d, dd, "consul.source.datacenter", r->a);
    out->consul_service = consul_tag(d, dd, "consul.source.service", r->a);
    bootstrap_versions(d, dd, out, r->a);
  }
  return true;
}

/* ---- the dump streamed ----
 * A dump is mostly its per-type dumps' lists of resources, and upb's decode of the whole keeps
 * every level of every nested Any in one arena (9x to 37x the text: 1.69 GB for 46 MB). So the
 * text is split by its structure, and each piece decoded by upb on its own, in an arena freed
 * after it: a configs[] entry that is not a per-type dump whole (the bootstrap), each entry of a
 * per-type dump's resource lists (a DynamicCluster, a DynamicListener...), and every other
 * member as a one-member object of its message (`{"version_info": "1"}`: upb judges its key and
 * value). Nothing is skipped unseen: the scan below only finds where values end and checks the
 * punctuation between them; every value is read by upb, with upb's words for what is wrong in
 * it (positions made the dump's own). What stays is the text (resources are decoded again from
 * it when a patch matches them: po_DumpResource_DecodeIn) and a record per resource. A key
 * written with escapes, or an `@type` that is, is not recognised by the scan: its value goes to
 * upb whole, which reads it as before (memory as before, for that piece). */

typedef struct {
  const char *s;
  size_t len, at;
  const char *err; /* skip_value's: what is wrong, at err_at (a ']' closing a '{'); else NULL */
  size_t err_at;
} Scan;

static void ws(Scan *x) {
  while (x->at < x->len && (x->s[x->at] == ' ' || x->s[x->at] == '\t' || x->s[x->at] == '\n' || x->s[x->at] == '\r')) x->at++;
}

static bool skip_string(Scan *x) {
  if (x->at >= x->len || x->s[x->at] != '"') return false;
  for (x->at++; x->at < x->len; x->at++) {
    char c = x->s[x->at];
    if (c == '\\') x->at++;
    else if (c == '"') return x->at++, true;
  }
  return false;
}

enum { kMaxScanDepth = 4096 }; /* far past upb's own limit of nesting: a value deeper is refused */

/* Past one value: a string, an object or array (brackets matched, strings skipped), or a run of
 * scalar characters. upb reads it later, but a value the scan skips unread (an @type member,
 * told apart by it) must be JSON too: a ']' closing a '{' is an error at its offset (x->err). */
static bool skip_value(Scan *x) {
  if (x->at >= x->len) return false;
  char c = x->s[x->at];
  if (c == '"') return skip_string(x);
  if (c == '{' || c == '[') {
    unsigned char open[kMaxScanDepth / 8]; /* a bit a level: set for '{' */
    size_t depth = 0;
    while (x->at < x->len) {
      c = x->s[x->at];
      if (c == '"') {
        if (!skip_string(x)) return false;
        continue;
      }
      if (c == '{' || c == '[') {
        if (depth == kMaxScanDepth) {
          x->err = "nested deeper than 4096 levels", x->err_at = x->at;
          return false;
        }
        if (c == '{') open[depth / 8] |= (unsigned char)(1u << (depth % 8));
        else open[depth / 8] &= (unsigned char)~(1u << (depth % 8));
        depth++;
      } else if (c == '}' || c == ']') {
        bool brace = (open[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
        if (brace != (c == '}')) {
          x->err = brace ? "Expected: ',' or '}'" : "Expected: ',' or ']'", x->err_at = x->at;
          return false;
        }
        if (--depth == 0) return x->at++, true;
      }
      x->at++;
    }
    return false;
  }
  size_t from = x->at;
  while (x->at < x->len && !strchr(",]}: \t\r\n\"{[", x->s[x->at])) x->at++;
  return x->at > from;
}

static bool key_is(const Scan *x, size_t k, size_t kend, const char *name) {
  size_t n = strlen(name);
  return kend - k == n + 2 && !memcmp(x->s + k + 1, name, n);
}

/* 1-based line and 0-based column of an offset, as upb counts them. */
static void position(const char *s, size_t off, int *line, int *col) {
  *line = 1;
  size_t bol = 0;
  for (size_t i = 0; i < off; i++) {
    if (s[i] == '\n') (*line)++, bol = i + 1;
  }
  *col = (int)(off - bol);
}

typedef struct {
  Reader *r;
  const char *text; /* the whole dump, for positions */
  size_t len;
} Stream;

static bool syntax(Stream *x, size_t at, const char *what) {
  int line, col;
  position(x->text, at, &line, &col);
  po_Status_Set(x->r->st, kPo_Status_Parse, "invalid envoy.admin.v3.ConfigDump JSON: Error parsing JSON @%d:%d: %s", line, col, what);
  return false;
}

/* upb's "@L:C" in a piece's error made the dump's: the piece began at `off`. */
static void fix_position(Stream *x, size_t off, size_t prefix, po_Status *st) {
  char *at = strstr(st->message, "Error parsing JSON @");
  int l = 0, c = 0, used = 0;
  if (!at || sscanf(at, "Error parsing JSON @%d:%d%n", &l, &c, &used) != 2) return;
  int bl, bc;
  position(x->text, off, &bl, &bc);
  /* the piece may have had `prefix` bytes of ours before it, on its first line */
  int line = l <= 1 ? bl : bl + l - 1, col = l <= 1 ? bc + c - (int)prefix : c;
  if (col < 0) col = 0;
  char rest[sizeof st->message];
  snprintf(rest, sizeof rest, "%s", at + used);
  snprintf(at, sizeof st->message - (size_t)(at - st->message), "Error parsing JSON @%d:%d%s", line, col, rest);
}

/* upb's decode of one piece of the text as `def`, in `a`; an Any of a type the schema lacks
 * replaced by a placeholder as for the whole dump (counted into `count` when given: only the
 * first read of a piece counts). */
/* json-c's tree of a text, per value: measured ~100 bytes (an object, its slot in its parent,
 * a key's copy) on a list of 500,000 numbers; counted as 160 to stay on the safe side. */
enum { kJsoncPerValue = 160 };

/* The values of a JSON text, at most (a ',' '{' '[' outside strings, and one). */
static size_t values_in(const char *text, size_t len) {
  size_t n = 1;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c == '"') {
      for (i++; i < len && text[i] != '"'; i++) i += text[i] == '\\';
    } else if (c == ',' || c == '{' || c == '[') {
      n++;
    }
  }
  return n;
}

static upb_Message *decode_piece(const po_Schema *s, const upb_MessageDef *def, const char *text, size_t len,
                                 po_Arena *a, Budget *b, Reader *count, po_Status *st) {
  upb_Message *m = po_Json_Decode(s, def, text, len, po_Arena_Upb(a), st);
  /* json-c's tree is malloc'd, outside the arena: its cost is counted before it is built */
  if (!m && b && !b->over && strstr(st->message, "Type was not found") &&
      values_in(text, len) > (b->limit - b->used) / kJsoncPerValue) {
    b->over = true;
  }
  if (b && b->over) return NULL; /* the caller says so (within_budget) */
  if (!m && len < (size_t)INT_MAX && strstr(st->message, "Type was not found")) {
    po_ConfigDump found = {0};
    size_t flen = 0;
    const char *fixed = without_unknown_types(s, text, len, a, &flen, &found);
    if (fixed && found.unknown_types) {
      po_Status_Clear(st);
      m = po_Json_Decode(s, def, fixed, flen, po_Arena_Upb(a), st);
      if (m && count) {
        count->out->unknown_types += found.unknown_types;
        if (!count->out->first_unknown_type && found.first_unknown_type) {
          count->out->first_unknown_type = po_Arena_Strndup(count->a, found.first_unknown_type, strlen(found.first_unknown_type));
        }
      }
    }
  }
  /* upb's JSON decoder does not check every allocation it makes (an empty submessage whose
   * allocation failed is left out, silently): a piece decoded while memory ran out is no
   * verdict on the dump, and never a resource read short (po_Arena_New's allocator records
   * every failure) */
  if (po_Engine_OutOfMemory(a)) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  if (!m && strstr(st->message, "Type was not found")) {
    const char *t = unknown_type(s, text, len, a);
    if (t) {
      size_t at = strlen(st->message);
      snprintf(st->message + at, sizeof st->message - at,
               " (the first unknown one is '%s': the dump names a type the Envoy v3 API this build "
               "validates against does not have, such as a mesh's own filter configuration)", t);
    }
  }
  return m;
}

/* One member `"key": value` (text from the key to the value's end) read by upb as the only
 * member of a `def`: what the scan does not stream is still upb's to judge. */
static upb_Message *member(Stream *x, const upb_MessageDef *def, size_t k, size_t vend, const char *where, po_Arena *a,
                           Budget *b) {
  const po_Schema *s = x->r->s;
  char *obj = po_Arena_Malloc(a, vend - k + 3);
  if (!obj && !within_budget(x->r, b, where ? where : "the dump's top level")) return NULL;
  if (!obj) return po_Status_Set(x->r->st, kPo_Status_NoMemory, "out of memory"), NULL;
  obj[0] = '{';
  memcpy(obj + 1, x->text + k, vend - k);
  obj[vend - k + 1] = '}';
  obj[vend - k + 2] = '\0';
  upb_Message *m = decode_piece(s, def, obj, vend - k + 2, a, b, x->r, x->r->st);
  if (!within_budget(x->r, b, where ? where : "the dump's top level")) return NULL;
  if (!m) {
    fix_position(x, k, 1, x->r->st);
    if (where) po_Status_Prefix(x->r->st, "%s: ", where);
  }
  return m;
}

typedef struct {
  const char *list;        /* the per-type dump's field */
  const char *state_field; /* dynamic_listeners: which states hold a listener */
  const char *res;         /* the entry's field holding the Any */
  po_DumpState state;
} ListSpec;

static const ListSpec kLists[] = {
    {"static_clusters", NULL, "cluster", kPo_DumpState_Static},
    {"dynamic_active_clusters", NULL, "cluster", kPo_DumpState_Active},
    {"dynamic_warming_clusters", NULL, "cluster", kPo_DumpState_Warming},
    {"static_listeners", NULL, "listener", kPo_DumpState_Static},
    {"dynamic_listeners", "active_state", "listener", kPo_DumpState_Active}, /* and the other states */
    {"static_route_configs", NULL, "route_config", kPo_DumpState_Static},
    {"dynamic_route_configs", NULL, "route_config", kPo_DumpState_Active},
    {"static_endpoint_configs", NULL, "endpoint_config", kPo_DumpState_Static},
    {"dynamic_endpoint_configs", NULL, "endpoint_config", kPo_DumpState_Active},
};

/* The Any an entry holds (inside its state message for a dynamic listener), or NULL. */
static const upb_Message *entry_any(const upb_Message *e, const upb_MessageDef *ed, const char *state_field,
                                    const char *res_field, const upb_MessageDef **anyd, const upb_MessageDef **sd,
                                    const upb_Message **state) {
  *state = e;
  *sd = ed;
  if (state_field) {
    *state = sub(e, ed, state_field, sd);
    if (!*state) return NULL;
  }
  return sub(*state, *sd, res_field, anyd);
}

/* One entry of a resource list, decoded by upb in a scratch arena; its resource recorded with
 * its Any's bytes, copied out, to be decoded when asked. */
static bool stream_entry(Stream *x, const ListSpec *ls, const upb_MessageDef *ed, size_t from, size_t to, int config,
                         size_t index) {
  Reader *r = x->r;
  const po_Schema *s = r->s;
  Budget b;
  po_Arena *scratch = piece_arena(r, &b);
  if (!scratch) return po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
  upb_Message *e = decode_piece(s, ed, x->text + from, to - from, scratch, &b, r, r->st);
  bool ok = e != NULL;
  char piece[160];
  snprintf(piece, sizeof piece, "configs[%d].%s[%zu]", config, ls->list, index);
  if (!within_budget(r, &b, piece)) {
    po_Arena_FreeInto(scratch, r->a);
    return false;
  }
  if (!ok) {
    fix_position(x, from, 0, r->st);
    po_Status_Prefix(r->st, "configs[%d].%s[%zu]: ", config, ls->list, index);
  }
  static const struct {
    const char *field;
    po_DumpState state;
  } kStates[] = {{"active_state", kPo_DumpState_Active},
                 {"warming_state", kPo_DumpState_Warming},
                 {"draining_state", kPo_DumpState_Draining}};
  size_t nstates = ls->state_field ? sizeof kStates / sizeof kStates[0] : 1;
  for (size_t k = 0; ok && k < nstates; k++) {
    const char *sf = ls->state_field ? kStates[k].field : NULL;
    const upb_MessageDef *anyd = NULL, *sd = NULL;
    const upb_Message *state = NULL;
    const upb_Message *any = entry_any(e, ed, sf, ls->res, &anyd, &sd, &state);
    if (!any) continue; /* an entry without its resource (an error_state only): nothing to preview */
    char where[160];
    if (sf) snprintf(where, sizeof where, "configs[%d].%s[%zu].%s.%s", config, ls->list, index, sf, ls->res);
    else snprintf(where, sizeof where, "configs[%d].%s[%zu].%s", config, ls->list, index, ls->res);
    ok = push(r, any, anyd, sf ? kStates[k].state : ls->state, string_of(state, sd, "version_info", r->a), where, true);
  }
  po_Arena_FreeInto(scratch, r->a);
  return ok;
}

/* The members of the object at x->at, each handed to fn with its key's and value's extents. */
typedef bool (*MemberFn)(Stream *x, void *ctx, size_t k, size_t kend, size_t v, size_t vend);

static bool members(Stream *x, Scan *sc, MemberFn fn, void *ctx) {
  ws(sc);
  if (sc->at >= sc->len || sc->s[sc->at] != '{') return syntax(x, sc->at, "Expected: '{'");
  sc->at++;
  ws(sc);
  if (sc->at < sc->len && sc->s[sc->at] == '}') return sc->at++, true;
  for (;;) {
    ws(sc);
    size_t k = sc->at;
    if (!skip_string(sc)) return syntax(x, k, "Expected: '\"'");
    size_t kend = sc->at;
    ws(sc);
    if (sc->at >= sc->len || sc->s[sc->at] != ':') return syntax(x, sc->at, "Expected: ':'");
    sc->at++;
    ws(sc);
    size_t v = sc->at;
    if (!skip_value(sc)) return syntax(x, sc->err ? sc->err_at : v, sc->err ? sc->err : "Expected a value");
    if (fn && !fn(x, ctx, k, kend, v, sc->at)) return false;
    ws(sc);
    if (sc->at < sc->len && sc->s[sc->at] == ',') {
      sc->at++;
      continue;
    }
    if (sc->at < sc->len && sc->s[sc->at] == '}') return sc->at++, true;
    return syntax(x, sc->at, "Expected: ',' or '}'");
  }
}

typedef struct {
  size_t index;       /* in configs[] */
  const char *type;   /* the @type's text (raw), or NULL */
  size_t type_len;
  const upb_MessageDef *def;
} Config;

/* A configs[] entry's "@type": exactly one, a string (the streamed reader skips every @type
 * member unread, so what upb's decode of the whole refused is refused here). */
static bool find_type(Stream *x, void *ctx, size_t k, size_t kend, size_t v, size_t vend) {
  Config *c = ctx;
  if (!key_is(&(Scan){x->text, x->len, 0, NULL, 0}, k, kend, "@type")) return true;
  char what[96];
  if (c->type) {
    snprintf(what, sizeof what, "configs[%zu]: \"@type\" given twice (an Any has one)", c->index);
    return syntax(x, k, what);
  }
  if (x->text[v] != '"') {
    snprintf(what, sizeof what, "configs[%zu]: \"@type\" must be a string (a type URL)", c->index);
    return syntax(x, v, what);
  }
  c->type = x->text + v + 1;
  c->type_len = vend - v - 2;
  return true;
}

static bool stream_member(Stream *x, void *ctx, size_t k, size_t kend, size_t v, size_t vend) {
  Config *c = ctx;
  Scan key = {x->text, x->len, 0, NULL, 0};
  if (key_is(&key, k, kend, "@type")) return true;
  for (size_t i = 0; i < sizeof kLists / sizeof kLists[0]; i++) {
    const ListSpec *ls = &kLists[i];
    const upb_FieldDef *f = field(c->def, ls->list);
    /* proto3 JSON takes the field's name or its JSON name (dynamicActiveClusters) */
    if (!f || !(key_is(&key, k, kend, ls->list) || key_is(&key, k, kend, upb_FieldDef_JsonName(f))) || x->text[v] != '[') continue;
    const upb_MessageDef *ed = NULL;
    if (!upb_FieldDef_IsSubMessage(f) || !upb_FieldDef_IsRepeated(f)) break;
    ed = upb_FieldDef_MessageSubDef(f);
    Scan sc = {x->text, vend, v + 1, NULL, 0};
    ws(&sc);
    if (sc.at < vend && x->text[sc.at] == ']') return true;
    for (size_t index = 0;; index++) {
      ws(&sc);
      size_t from = sc.at;
      if (!skip_value(&sc)) return syntax(x, sc.err ? sc.err_at : from, sc.err ? sc.err : "Expected a value");
      if (!stream_entry(x, ls, ed, from, sc.at, (int)c->index, index)) return false;
      ws(&sc);
      if (sc.at < vend && x->text[sc.at] == ',') {
        sc.at++;
        continue;
      }
      if (sc.at < vend && x->text[sc.at] == ']') return true;
      return syntax(x, sc.at, "Expected: ',' or ']'");
    }
  }
  char where[64];
  snprintf(where, sizeof where, "configs[%zu]", c->index);
  /* any other member (version_info), or a list under a key the scan did not recognise (written
   * with escapes): upb reads it as the only member of the per-type dump, in the dump's arena,
   * and its resources, if any, are read as from a dump decoded whole */
  Budget b;
  po_Arena *scratch = piece_arena(x->r, &b);
  if (!scratch) return po_Status_Set(x->r->st, kPo_Status_NoMemory, "out of memory"), false;
  upb_Message *d = member(x, c->def, k, vend, where, scratch, &b);
  bool lists = false; /* only then is it read again where its records may alias it */
  for (size_t i = 0; d && i < sizeof kLists / sizeof kLists[0]; i++) {
    const upb_MessageDef *ed = NULL;
    const upb_Array *arr = list(d, c->def, kLists[i].list, &ed);
    lists |= arr && upb_Array_Size(arr) > 0;
  }
  po_Arena_FreeInto(scratch, x->r->a);
  if (!d) return false;
  if (!lists) return true;
  d = member(x, c->def, k, vend, where, x->r->a, NULL);
  return d && one_config(x->r, d, c->def, c->index);
}

static const char *const kStreamed[] = {"envoy.admin.v3.ClustersConfigDump", "envoy.admin.v3.ListenersConfigDump",
                                        "envoy.admin.v3.RoutesConfigDump", "envoy.admin.v3.EndpointsConfigDump"};

/* configs[i]: a per-type dump streamed member by member; anything else decoded whole. */
static bool stream_config(Stream *x, size_t from, size_t to, size_t index) {
  Reader *r = x->r;
  const po_Schema *s = r->s;
  Config c = {.index = index};
  Scan sc = {x->text, to, from, NULL, 0};
  if (x->text[from] == '{' && !members(x, &sc, find_type, &c)) return false;
  for (size_t i = 0; c.type && i < sizeof kStreamed / sizeof kStreamed[0]; i++) {
    size_t n = strlen(kStreamed[i]);
    const char *slash = c.type + c.type_len;
    while (slash > c.type && slash[-1] != '/') slash--;
    if ((size_t)(c.type + c.type_len - slash) == n && !memcmp(slash, kStreamed[i], n) && !memchr(c.type, '\\', c.type_len)) {
      c.def = po_Schema_FindMessage(s, kStreamed[i]);
    }
  }
  if (c.def) {
    sc = (Scan){x->text, to, from, NULL, 0};
    return members(x, &sc, stream_member, &c);
  }
  /* decoded whole, then unpacked: as the element of a one-entry dump, so that an entry whose
   * own type the schema lacks becomes a placeholder and is counted, as in a dump decoded whole */
  const upb_MessageDef *cd = po_Schema_FindMessage(s, "envoy.admin.v3.ConfigDump");
  if (!cd) return no_config_dump(s, r->st);
  static const char kPre[] = "{\"configs\":[";
  char where[64];
  snprintf(where, sizeof where, "configs[%zu]", index);
  bool ok = false;
  /* pass 0 in a scratch arena; a per-type dump (its @type written with escapes) again in the
   * dump's, whose records alias its bytes */
  for (int pass = 0; pass < 2 && !ok; pass++) {
    Budget b;
    po_Arena *scratch = pass == 0 ? piece_arena(r, &b) : NULL, *in = pass == 0 ? scratch : r->a;
    char *wrapped = in ? po_Arena_Malloc(in, sizeof kPre - 1 + (to - from) + 3) : NULL;
    if (!wrapped && pass == 0 && scratch && !within_budget(r, &b, where)) return po_Arena_FreeInto(scratch, r->a), false;
    if (!wrapped) return po_Arena_FreeInto(scratch, r->a), po_Status_Set(r->st, kPo_Status_NoMemory, "out of memory"), false;
    size_t wl = 0;
    memcpy(wrapped, kPre, sizeof kPre - 1);
    wl += sizeof kPre - 1;
    memcpy(wrapped + wl, x->text + from, to - from);
    wl += to - from;
    memcpy(wrapped + wl, "]}", 3);
    wl += 2;
    size_t unknown_before = r->out->unknown_types;
    upb_Message *one = decode_piece(s, cd, wrapped, wl, in, pass == 0 ? &b : NULL, r, r->st);
    if (pass == 0 && !within_budget(r, &b, where)) return po_Arena_FreeInto(scratch, r->a), false;
    const upb_MessageDef *anyd = NULL, *dd = NULL;
    const upb_Array *configs = one ? list(one, cd, "configs", &anyd) : NULL;
    if (!one) {
      fix_position(x, from, sizeof kPre - 1, r->st);
      return po_Arena_FreeInto(scratch, r->a), false;
    }
    if (!configs || upb_Array_Size(configs) != 1) {
      po_Status_Set(r->st, kPo_Status_Parse, "%s: not one entry", where);
      return po_Arena_FreeInto(scratch, r->a), false;
    }
    const upb_Message *any = upb_Array_Get(configs, 0).msg_val;
    upb_StringView url = upb_Message_Get(any, field(anyd, "type_url")).str_val;
    bool streamable = false;
    for (size_t i = 0; i < sizeof kStreamed / sizeof kStreamed[0]; i++) {
      size_t n = strlen(kStreamed[i]);
      streamable |= url.size >= n && !memcmp(url.data + url.size - n, kStreamed[i], n);
    }
    if (pass == 0 && streamable) {
      r->out->unknown_types = unknown_before; /* counted again by pass 1 */
      po_Arena_FreeInto(scratch, r->a);
      continue;
    }
    upb_Message *d = unpack(r->s, any, anyd, &dd, where, in, r->st);
    ok = d && one_config(r, d, dd, index);
    po_Arena_FreeInto(scratch, r->a);
    if (!ok) return false;
  }
  return ok;
}

static bool top_member(Stream *x, void *ctx, size_t k, size_t kend, size_t v, size_t vend) {
  const upb_MessageDef *cd = ctx;
  Scan key = {x->text, x->len, 0, NULL, 0};
  if (!key_is(&key, k, kend, "configs") || x->text[v] != '[') {
    /* another member: upb's to judge (an unknown field is its error); "configs" written with
     * escapes is read whole, in the dump's arena, as the dump was before it was streamed */
    Budget b;
    po_Arena *scratch = piece_arena(x->r, &b);
    if (!scratch) return po_Status_Set(x->r->st, kPo_Status_NoMemory, "out of memory"), false;
    upb_Message *d = member(x, cd, k, vend, NULL, scratch, &b);
    const upb_MessageDef *anyd = NULL;
    const upb_Array *configs = d ? list(d, cd, "configs", &anyd) : NULL;
    bool any_config = configs && upb_Array_Size(configs) > 0;
    po_Arena_FreeInto(scratch, x->r->a);
    if (!d) return false;
    if (!any_config) return true;
    d = member(x, cd, k, vend, NULL, x->r->a, NULL); /* again where the records may alias it */
    if (!d) return false;
    configs = list(d, cd, "configs", &anyd);
    for (size_t i = 0; configs && i < upb_Array_Size(configs); i++) {
      const upb_MessageDef *dd = NULL;
      size_t index = x->r->configs++;
      char where[64];
      snprintf(where, sizeof where, "configs[%zu]", index);
      upb_Message *one = unpack(x->r->s, upb_Array_Get(configs, i).msg_val, anyd, &dd, where, x->r->a, x->r->st);
      if (!one || !one_config(x->r, one, dd, index)) return false;
    }
    return true;
  }
  Scan sc = {x->text, vend, v + 1, NULL, 0};
  ws(&sc);
  if (sc.at < vend && x->text[sc.at] == ']') return true;
  for (;;) {
    ws(&sc);
    size_t from = sc.at;
    if (!skip_value(&sc)) return syntax(x, sc.err ? sc.err_at : from, sc.err ? sc.err : "Expected a value");
    Reader *r = x->r;
    size_t index = r->configs++;
    if (!stream_config(x, from, sc.at, index)) return false;
    ws(&sc);
    if (sc.at < vend && x->text[sc.at] == ',') {
      sc.at++;
      continue;
    }
    if (sc.at < vend && x->text[sc.at] == ']') return true;
    return syntax(x, sc.at, "Expected: ',' or ']'");
  }
}

bool po_ConfigDump_ParseJson(const po_EnvoyApi *api, const char *json, size_t len, po_Arena *a, po_ConfigDump *out,
                             po_Status *st) {
  memset(out, 0, sizeof *out);
  out->api = po_EnvoyApi_Or_(api);
  const po_Schema *s = po_EnvoyApi_Schema_(api, a, st);
  if (!s) return false;
  const upb_MessageDef *cd = po_Schema_FindMessage(s, "envoy.admin.v3.ConfigDump");
  if (!cd) return no_config_dump(s, st);
  Reader r = {out, NULL, 0, a, st, s, 0, 0, len > SIZE_MAX / 4 ? SIZE_MAX : len * 4};
  if (r.budget < (size_t)kMinPieceBudget) r.budget = kMinPieceBudget;
  Stream x = {&r, json, len};
  Scan sc = {json, len, 0, NULL, 0};
  ws(&sc);
  if (sc.at == len) return po_Status_Set(st, kPo_Status_Parse, "invalid envoy.admin.v3.ConfigDump JSON: empty input"), false;
  /* configs[] entries are counted as they come; other_configs grows with them */
  size_t cap = 16;
  out->other_configs = po_Arena_Malloc(a, cap * sizeof *out->other_configs);
  if (!out->other_configs) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), false;
  r.other_cap = cap;
  if (!members(&x, &sc, top_member, (void *)cd)) return false;
  ws(&sc);
  if (sc.at < len) return syntax(&x, sc.at, "Unexpected text after the JSON value");
  if (r.owned && out->count < r.cap) { /* the room doubling left is given back */
    po_DumpResource *exact = realloc(r.owned->p, (out->count ? out->count : 1) * sizeof *exact);
    if (exact) r.owned->p = out->resources = exact;
  }
  return true;
}

const char *po_DumpState_Name(po_DumpState s) {
  switch (s) {
    case kPo_DumpState_Static: return "static";
    case kPo_DumpState_Active: return "active";
    case kPo_DumpState_Warming: return "warming";
    case kPo_DumpState_Draining: return "draining";
  }
  return "unknown";
}
