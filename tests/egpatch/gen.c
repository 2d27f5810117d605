/* The generator (gen.h). Paths are walked through the schema the product validates against, so
 * every kind of field the Envoy API has turns up in proportion to how often it exists: scalars,
 * enums (by name), wrappers (bare, and as objects, which protojson refuses), Durations (as text and
 * as objects), nested messages, repeated fields, maps, Anys (protojson's `@type` and Consul's
 * `type_url`), oneof members, and removes. Invalid patches are generated too: the product's
 * refusals are counted by reason. */
#include "gen.h"
#include "ours.h"

#include <string.h>

uint64_t po_EgRng_Next(po_EgRng *r) {
  /* splitmix64: one 64-bit state, any seed (0 too) gives a full-period sequence */
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint32_t po_EgRng_Below(po_EgRng *r, uint32_t n) { return (uint32_t)(po_EgRng_Next(r) % n); }

bool po_EgRng_Chance(po_EgRng *r, uint32_t percent) { return po_EgRng_Below(r, 100) < percent; }

static const char *const kStrings[] = {"x", "renamed", "10.0.0.9", "", "envoy.transport_sockets.raw_buffer",
                                       "backend", "a/b", "*"};
static const char *const kDurations[] = {"5s", "0.250s", "1s", "3600s", "0s", "0.000000001s"};
static const char *const kAnyTypes[] = {
    "type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer",
    "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
    "type.googleapis.com/google.protobuf.Duration"};

#define PICK(r, arr) ((arr)[po_EgRng_Below((r), (uint32_t)(sizeof(arr) / sizeof((arr)[0])))])

static bool is_wrapper(const char *type) {
  return strncmp(type, "google.protobuf.", 16) == 0 && strstr(type, "Value") != NULL &&
         strcmp(type, "google.protobuf.Value") != 0 && strcmp(type, "google.protobuf.ListValue") != 0;
}

/* The scalar kind a wrapper wraps ("wrapper of uint32"), else the type itself. */
static const char *scalar_kind(const po_ExplainField *f, const char *type) {
  if (f && f->detail && strncmp(f->detail, "wrapper of ", 11) == 0) return f->detail + 11;
  return type;
}

/* One of an enum's value names, from the detail "enum <FullName>: A, B, C"; NULL when none. */
static struct json_object *enum_value(po_EgRng *r, const po_ExplainField *f) {
  const char *names = f->detail ? strstr(f->detail, ": ") : NULL;
  if (!names) return NULL;
  names += 2;
  size_t n = 1;
  for (const char *p = names; *p; p++) n += *p == ',';
  size_t want = po_EgRng_Below(r, (uint32_t)n), i = 0;
  const char *start = names;
  for (const char *p = names;; p++) {
    if (*p == ',' || *p == '\0') {
      if (i++ == want) return json_object_new_string_len(start, (int)(p - start));
      if (*p == '\0') return NULL;
      start = p + 2;
    }
  }
}

static struct json_object *scalar_value(po_EgRng *r, const char *kind) {
  if (strcmp(kind, "bool") == 0) return json_object_new_boolean(po_EgRng_Chance(r, 60));
  if (strcmp(kind, "string") == 0 || strcmp(kind, "bytes") == 0) return json_object_new_string(PICK(r, kStrings));
  if (strcmp(kind, "double") == 0 || strcmp(kind, "float") == 0)
    return json_object_new_double(po_EgRng_Chance(r, 50) ? 0.5 : (double)po_EgRng_Below(r, 100));
  if (strstr(kind, "64")) {
    if (po_EgRng_Chance(r, 10)) return json_object_new_string("9007199254740993");
    return json_object_new_int64(po_EgRng_Below(r, 100000));
  }
  if (strstr(kind, "int32")) {
    static const int64_t vals[] = {0, 1, 5, 100, 1024, 4294967295LL, -1};
    int64_t v = PICK(r, vals);
    if (v < 0 && kind[0] == 'u') v = 7;
    return json_object_new_int64(v);
  }
  return NULL;
}

static struct json_object *any_value(po_EgRng *r) {
  struct json_object *o = json_object_new_object();
  const char *t = PICK(r, kAnyTypes);
  if (po_EgRng_Chance(r, 30)) { /* protojson's form */
    json_object_object_add(o, "@type", json_object_new_string(t));
    if (strstr(t, "Duration")) json_object_object_add(o, "value", json_object_new_string("5s"));
  } else { /* Consul's form of an Any: the message's own fields, as PatchStruct reads them */
    json_object_object_add(o, "type_url", json_object_new_string(t));
    if (po_EgRng_Chance(r, 20)) json_object_object_add(o, "value", json_object_new_string(""));
  }
  return o;
}

static struct json_object *field_value(po_EgRng *r, const char *rtype, const char *path,
                                       const po_ExplainField *f, int depth, po_Arena *a);

/* An object value for a message: 0 to 2 of its fields, sometimes two members of one oneof. */
static struct json_object *message_value(po_EgRng *r, const char *rtype, const char *path, int depth,
                                         po_Arena *a) {
  struct json_object *o = json_object_new_object();
  po_Explanation ex;
  po_Status st;
  po_Status_Clear(&st);
  if (depth > 2 || !po_Explain(&(po_ExplainOptions){.api = po_EgOracle_Api()}, po_Arena_Printf(a, "%s%s", rtype, path), a, &ex, &st) || !ex.field_count)
    return o;
  uint32_t n = po_EgRng_Below(r, 3);
  const po_ExplainField *first = NULL;
  if (po_EgRng_Chance(r, 25)) { /* start at a scalar oneof member (what an object value may set),
                                  * so that a second one may follow */
    size_t at = po_EgRng_Below(r, (uint32_t)ex.field_count);
    for (size_t k = 0; k < ex.field_count && !first; k++) {
      const po_ExplainField *f = &ex.fields[(at + k) % ex.field_count];
      if (f->oneof && !f->message) first = f;
    }
    if (first) {
      struct json_object *v = field_value(r, rtype, po_Arena_Printf(a, "%s/%s", path, first->name), first, depth + 1, a);
      if (v) json_object_object_add(o, first->name, v);
      n = 1;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    const po_ExplainField *f = &ex.fields[po_EgRng_Below(r, (uint32_t)ex.field_count)];
    if (first && first->oneof && po_EgRng_Chance(r, 70)) { /* a second member of the first's oneof */
      for (size_t k = 0; k < ex.field_count; k++)
        if (&ex.fields[k] != first && ex.fields[k].oneof && strcmp(ex.fields[k].oneof, first->oneof) == 0 &&
            (f == first || !ex.fields[k].message))
          f = &ex.fields[k];
    }
    if (!first) first = f;
    struct json_object *v = field_value(r, rtype, po_Arena_Printf(a, "%s/%s", path, f->name), f, depth + 1, a);
    if (v) json_object_object_add(o, f->name, v);
  }
  return o;
}

/* A value of the field's type, one element's worth (no list). */
static struct json_object *element_value(po_EgRng *r, const char *rtype, const char *path,
                                         const po_ExplainField *f, const char *type, int depth, po_Arena *a) {
  if (strcmp(type, "enum") == 0) return enum_value(r, f);
  if (strcmp(type, "google.protobuf.Duration") == 0) {
    if (po_EgRng_Chance(r, 85)) return json_object_new_string(PICK(r, kDurations));
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "seconds", json_object_new_int(5));
    return o;
  }
  if (strcmp(type, "google.protobuf.Any") == 0) return any_value(r);
  if (is_wrapper(type)) {
    struct json_object *v = scalar_value(r, scalar_kind(f, type));
    if (v && po_EgRng_Chance(r, 20)) { /* the wrapper as an object: {} or {value: v} */
      struct json_object *o = json_object_new_object();
      if (po_EgRng_Chance(r, 50)) json_object_object_add(o, "value", v);
      else json_object_put(v);
      return o;
    }
    return v;
  }
  struct json_object *v = scalar_value(r, type);
  if (v) return v;
  if (strcmp(type, "map") == 0) {
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "k", json_object_new_string("v"));
    return o;
  }
  return message_value(r, rtype, path, depth, a);
}

static struct json_object *field_value(po_EgRng *r, const char *rtype, const char *path,
                                       const po_ExplainField *f, int depth, po_Arena *a) {
  const char *type = f->type;
  if (f->repeated && strncmp(type, "repeated ", 9) == 0) {
    struct json_object *arr = json_object_new_array();
    uint32_t n = 1 + po_EgRng_Below(r, 2);
    for (uint32_t i = 0; i < n; i++) {
      struct json_object *v = element_value(r, rtype, path, f, type + 9, depth, a);
      if (v) json_object_array_add(arr, v);
    }
    return arr;
  }
  return element_value(r, rtype, path, f, type, depth, a);
}

/* Walks down from the resource: at each message a random field, descending into a singular
 * message (not a well-known type) about half the time. Returns the field the path ends at. */
static const po_ExplainField *walk(po_EgRng *r, const char *rtype, po_Arena *a, const char **path_out) {
  const char *path = "";
  const po_ExplainField *end = NULL;
  for (int depth = 0; depth < 4; depth++) {
    po_Explanation ex;
    po_Status st;
    po_Status_Clear(&st);
    if (!po_Explain(&(po_ExplainOptions){.api = po_EgOracle_Api()}, po_Arena_Printf(a, "%s%s", rtype, path), a, &ex, &st) || !ex.field_count) break;
    const po_ExplainField *f = &ex.fields[po_EgRng_Below(r, (uint32_t)ex.field_count)];
    path = po_Arena_Printf(a, "%s/%s", path, f->name);
    end = f;
    bool wkt = strncmp(f->type, "google.protobuf.", 16) == 0;
    if (!f->message || f->repeated || f->map || wkt || !f->traversable || depth == 3 || po_EgRng_Chance(r, 50))
      break;
  }
  if (end && is_wrapper(end->type) && po_EgRng_Chance(r, 10)) path = po_Arena_Printf(a, "%s/value", path);
  *path_out = path;
  return end;
}

static struct json_object *one_patch(po_EgRng *r, po_Arena *a) {
  static const char *const kTypes[] = {"cluster", "cluster", "cluster", "listener", "route", "cluster-load-assignment"};
  const char *rtype = PICK(r, kTypes);
  const char *path = NULL;
  const po_ExplainField *f = walk(r, rtype, a, &path);
  struct json_object *p = json_object_new_object(), *filter = json_object_new_object();
  json_object_object_add(filter, "resourceType", json_object_new_string(rtype));
  json_object_object_add(filter, "trafficDirection", json_object_new_string("outbound"));
  json_object_object_add(p, "resourceFilter", filter);
  bool remove = po_EgRng_Chance(r, 6) || !f;
  json_object_object_add(p, "op", json_object_new_string(remove ? "remove" : "add"));
  json_object_object_add(p, "path", json_object_new_string(path && *path ? path : "/name"));
  if (!remove) {
    struct json_object *v = NULL;
    if (strlen(path) > 6 && strcmp(path + strlen(path) - 6, "/value") == 0 && is_wrapper(f->type))
      v = scalar_value(r, scalar_kind(f, f->type));
    else
      v = field_value(r, rtype, path, f, 0, a);
    json_object_object_add(p, "value", v ? v : json_object_new_string("x"));
  }
  return p;
}

struct json_object *po_EgGen_Patches(po_EgRng *r, po_Arena *a) {
  struct json_object *arr = json_object_new_array();
  uint32_t n = 1 + (po_EgRng_Chance(r, 35) ? 1 + po_EgRng_Below(r, 2) : 0);
  for (uint32_t i = 0; i < n; i++) json_object_array_add(arr, one_patch(r, a));
  return arr;
}
