#include "po/targets/any_type.h"

#include <string.h>

static const char *first_unknown(const po_EnvoyApi *api, const json_object *v, po_Arena *a, int depth) {
  if (depth > 64) return NULL;
  if (json_object_is_type(v, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(v); i++) {
      const char *t = first_unknown(api, json_object_array_get_idx(v, i), a, depth + 1);
      if (t) return t;
    }
    return NULL;
  }
  if (!json_object_is_type(v, json_type_object)) return NULL;
  json_object_object_foreach((json_object *)v, k, c) {
    if (!strcmp(k, "@type") && json_object_is_type(c, json_type_string)) {
      const char *url = json_object_get_string(c), *slash = strrchr(url, '/');
      po_Status st;
      po_Status_Clear(&st);
      if (!po_Message_New(api, slash ? slash + 1 : url, a, &st) && st.code != kPo_Status_NoMemory) return url;
      continue;
    }
    const char *t = first_unknown(api, c, a, depth + 1);
    if (t) return t;
  }
  return NULL;
}

const char *po_AnyType_FirstUnknown(const po_EnvoyApi *api, const json_object *v, po_Arena *a) {
  return first_unknown(api, v, a, 0);
}
