/* Private to targets: reading json-c trees that may hold anything (objects from the API server
 * or from users), where a missing key or a wrong type is simply "absent". */
#ifndef PO_TARGETS_JSON_GET_H_
#define PO_TARGETS_JSON_GET_H_

#include <json-c/json.h>

static inline json_object *po_Json_Get(const json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* The string at key k, or NULL when absent or not a string. */
static inline const char *po_Json_String(const json_object *o, const char *k) {
  json_object *v = po_Json_Get(o, k);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

#endif
