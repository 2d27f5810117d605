/* The class tags of a patch (ours.h): read from Envoy's schema (po_Explain), never from what
 * either side did with it, so a class is what a patch is, and the tally can tell the issue's
 * classes apart from a mismatch of a new kind. */
#include <string.h>

#include "ours.h"

static void tag(struct json_object *tags, const char *t) {
  for (size_t i = 0; i < json_object_array_length(tags); i++)
    if (strcmp(json_object_get_string(json_object_array_get_idx(tags, i)), t) == 0) return;
  json_object_array_add(tags, json_object_new_string(t));
}

static bool has_key_deep(struct json_object *v, const char *key) {
  if (json_object_is_type(v, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(v); i++)
      if (has_key_deep(json_object_array_get_idx(v, i), key)) return true;
  } else if (json_object_is_type(v, json_type_object)) {
    json_object_object_foreach(v, k, sub) {
      if (strcmp(k, key) == 0 || has_key_deep(sub, key)) return true;
    }
  }
  return false;
}

/* Two keys of the object value that are members of one oneof of the message at `query`. */
static bool two_of_a_oneof(const char *query, struct json_object *value, po_Arena *a) {
  po_Explanation ex;
  po_Status st;
  po_Status_Clear(&st);
  if (!json_object_is_type(value, json_type_object) || !po_Explain(&(po_ExplainOptions){.api = po_EgOracle_Api()}, query, a, &ex, &st)) return false;
  for (size_t i = 0; i < ex.field_count; i++) {
    if (!ex.fields[i].oneof || !json_object_object_get_ex(value, ex.fields[i].name, NULL)) continue;
    for (size_t k = i + 1; k < ex.field_count; k++)
      if (ex.fields[k].oneof && strcmp(ex.fields[k].oneof, ex.fields[i].oneof) == 0 &&
          json_object_object_get_ex(value, ex.fields[k].name, NULL))
        return true;
  }
  return false;
}

/* Walks the path's prefixes: any segment a oneof member (C1), the last one's type (A). */
static const po_ExplainField *last_field(const char *rtype, const char *path, bool *oneof, po_Arena *a) {
  const po_ExplainField *f = NULL;
  for (const char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    po_Explanation ex;
    po_Status st;
    po_Status_Clear(&st);
    const char *q = po_Arena_Printf(a, "%s%.*s", rtype, (int)(p - path), path);
    if (!po_Explain(&(po_ExplainOptions){.api = po_EgOracle_Api()}, q, a, &ex, &st) || !ex.field) return NULL;
    f = ex.field;
    *oneof = *oneof || f->oneof != NULL;
    if (*p == '\0') return f;
  }
}

void po_EgTags_Add(struct json_object *patch, struct json_object *tags, po_Arena *a) {
  struct json_object *filter = NULL, *v = NULL, *value = NULL;
  json_object_object_get_ex(patch, "resourceFilter", &filter);
  const char *rtype = json_object_object_get_ex(filter, "resourceType", &v) ? json_object_get_string(v) : "";
  const char *path = json_object_object_get_ex(patch, "path", &v) ? json_object_get_string(v) : "";
  bool has_value = json_object_object_get_ex(patch, "value", &value);
  if (!rtype || !path || path[0] != '/') return;
  if (strcmp(path, "/name") == 0 || (strcmp(rtype, "cluster-load-assignment") == 0 && strcmp(path, "/cluster_name") == 0))
    tag(tags, "B");
  bool oneof = false;
  const po_ExplainField *f = last_field(rtype, path, &oneof, a);
  if (!f || !has_value) return;
  if (oneof) tag(tags, "C1");
  if (f->detail && strncmp(f->detail, "wrapper of ", 11) == 0 && json_object_is_type(value, json_type_object))
    tag(tags, "A");
  if (two_of_a_oneof(po_Arena_Printf(a, "%s%s", rtype, path), value, a)) tag(tags, "C2");
  if (has_key_deep(value, "type_url")) tag(tags, "D");
}
