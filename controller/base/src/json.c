#include "po/base/json.h"

json_object *po_Json_Get(const json_object *o, const char *k) {
  json_object *v = NULL;
  /* json_object_object_get_ex accepts any type and says false for non-objects. */
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

const char *po_Json_String(const json_object *o, const char *k) {
  json_object *v = po_Json_Get(o, k);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *po_Json_StringOr(const json_object *o, const char *k, const char *dflt) {
  const char *s = po_Json_String(o, k);
  return s ? s : dflt;
}

const char *po_Json_Meta(const json_object *obj, const char *k) {
  return po_Json_StringOr(po_Json_Get(obj, "metadata"), k, "");
}

bool po_Json_Put(json_object *o, const char *k, json_object *v) {
  if (!v) return false;
  if (json_object_object_add(o, k, v) != 0) {
    json_object_put(v);
    return false;
  }
  return true;
}

bool po_Json_Append(json_object *l, json_object *v) {
  if (!v) return false;
  if (json_object_array_add(l, v) != 0) {
    json_object_put(v);
    return false;
  }
  return true;
}
