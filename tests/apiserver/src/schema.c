/* Structural-schema checks for custom resources, with the real server's field-error texts:
 * type, required, enum, maxItems/minItems, maxLength/minLength, maximum/minimum, nullable;
 * unknown fields are pruned (and reported, for fieldValidation Warn/Strict); `default`s are
 * applied to missing properties. CEL rules are not evaluated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static void add_cause(po_As_Causes *out, const char *reason, const char *field, const char *msg) {
  if (!out->causes) out->causes = json_object_new_array();
  json_object *c = json_object_new_object();
  json_object_object_add(c, "reason", json_object_new_string(reason));
  json_object_object_add(c, "message", json_object_new_string(msg));
  json_object_object_add(c, "field", json_object_new_string(field));
  json_object_array_add(out->causes, c);
}

static void value_text(json_object *v, char *out, size_t outsz) {
  if (!v) snprintf(out, outsz, "null");
  else if (json_object_is_type(v, json_type_string)) snprintf(out, outsz, "\"%s\"", json_object_get_string(v));
  else if (json_object_is_type(v, json_type_object)) snprintf(out, outsz, "\"object\"");
  else if (json_object_is_type(v, json_type_array)) snprintf(out, outsz, "\"array\"");
  else snprintf(out, outsz, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static const char *type_name(json_object *v) {
  if (!v) return "null";
  switch (json_object_get_type(v)) {
    case json_type_boolean: return "boolean";
    case json_type_int: return "integer";
    case json_type_double: return "number";
    case json_type_string: return "string";
    case json_type_array: return "array";
    case json_type_object: return "object";
    default: return "null";
  }
}

static bool type_ok(const char *want, json_object *v, bool int_or_string) {
  const char *have = type_name(v);
  if (int_or_string) return !strcmp(have, "integer") || !strcmp(have, "string");
  if (!want) return true;
  if (!strcmp(want, have)) return true;
  if (!strcmp(want, "number") && !strcmp(have, "integer")) return true;
  if (!strcmp(want, "integer") && !strcmp(have, "number")) {
    double d = json_object_get_double(v);
    return d == floor(d);
  }
  return false;
}

static void validate(json_object *sch, json_object *v, const char *path, po_As_Causes *out, bool root);

static void check_object(json_object *sch, json_object *v, const char *path, po_As_Causes *out, bool root) {
  json_object *props = po_As_Get(sch, "properties");
  json_object *addl = po_As_Get(sch, "additionalProperties");
  bool preserve = json_object_get_boolean(po_As_Get(sch, "x-kubernetes-preserve-unknown-fields"));
  bool embedded = json_object_get_boolean(po_As_Get(sch, "x-kubernetes-embedded-resource"));
  /* defaults first, so required checks see them */
  if (props) {
    json_object_object_foreach(props, pk, ps) {
      json_object *def = po_As_Get(ps, "default");
      if (def && !po_As_Get(v, pk)) json_object_object_add(v, pk, po_As_Copy(def));
    }
  }
  json_object *req = po_As_Get(sch, "required");
  for (size_t i = 0; req && i < json_object_array_length(req); i++) {
    const char *k = json_object_get_string(json_object_array_get_idx(req, i));
    if (k && !json_object_object_get_ex(v, k, NULL)) {
      char f[1024];
      snprintf(f, sizeof f, "%s%s%s", path, path[0] ? "." : "", k);
      add_cause(out, "FieldValueRequired", f, "Required value");
    }
  }
  json_object *maxp = po_As_Get(sch, "maxProperties");
  if (maxp && json_object_object_length(v) > json_object_get_int(maxp)) {
    char m[256];
    snprintf(m, sizeof m, "Too many: %d: must have at most %d items", json_object_object_length(v), json_object_get_int(maxp));
    add_cause(out, "FieldValueTooMany", path, m);
  }
  /* collect keys first: pruning while iterating is unsafe */
  char *keys[512];
  int nkeys = 0;
  json_object_object_foreach(v, ck, cval) {
    (void)cval;
    if (nkeys < 512) keys[nkeys++] = strdup(ck);
  }
  for (int i = 0; i < nkeys; i++) {
    const char *k = keys[i];
    json_object *val = po_As_Get(v, k);
    char f[1024];
    snprintf(f, sizeof f, "%s%s%s", path, path[0] ? "." : "", k);
    if ((root || embedded) && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata"))) {
      free(keys[i]);
      continue;
    }
    json_object *ps = po_As_Get(props, k);
    if (ps) validate(ps, val, f, out, false);
    else if (addl && json_object_is_type(addl, json_type_object)) validate(addl, val, f, out, false);
    else if (!preserve && !(addl && json_object_get_boolean(addl))) {
      if (!out->unknown) out->unknown = json_object_new_array();
      json_object_array_add(out->unknown, json_object_new_string(f));
      json_object_object_del(v, k);
    }
    free(keys[i]);
  }
}

static void validate(json_object *sch, json_object *v, const char *path, po_As_Causes *out, bool root) {
  if (!sch) return;
  char vt[256], m[1024];
  const char *type = po_As_GetStr(sch, "type");
  bool ios = json_object_get_boolean(po_As_Get(sch, "x-kubernetes-int-or-string"));
  if (!v) {
    if (json_object_get_boolean(po_As_Get(sch, "nullable")) || (!type && !ios)) return;
    snprintf(m, sizeof m, "Invalid value: \"null\": %s in body must be of type %s: \"null\"", path, type ? type : "string");
    add_cause(out, "FieldValueTypeInvalid", path, m);
    return;
  }
  if (!type_ok(type, v, ios)) {
    value_text(v, vt, sizeof vt);
    snprintf(m, sizeof m, "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"", type_name(v), path,
             ios ? "int-or-string" : type, type_name(v));
    add_cause(out, "FieldValueTypeInvalid", path, m);
    return;
  }
  json_object *en = po_As_Get(sch, "enum");
  if (en && json_object_is_type(en, json_type_array)) {
    bool found = false;
    for (size_t i = 0; i < json_object_array_length(en); i++)
      if (po_As_Equal(json_object_array_get_idx(en, i), v)) found = true;
    if (!found) {
      value_text(v, vt, sizeof vt);
      size_t o = (size_t)snprintf(m, sizeof m, "Unsupported value: %s: supported values: ", vt);
      for (size_t i = 0; i < json_object_array_length(en) && o < sizeof m; i++) {
        char e[256];
        value_text(json_object_array_get_idx(en, i), e, sizeof e);
        o += (size_t)snprintf(m + o, sizeof m - o, "%s%s", i ? ", " : "", e);
      }
      add_cause(out, "FieldValueNotSupported", path, m);
    }
  }
  if (json_object_is_type(v, json_type_string)) {
    int len = json_object_get_string_len(v);
    json_object *mx = po_As_Get(sch, "maxLength"), *mn = po_As_Get(sch, "minLength");
    if (mx && len > json_object_get_int(mx)) {
      snprintf(m, sizeof m, "Too long: may not be more than %d bytes", json_object_get_int(mx));
      add_cause(out, "FieldValueTooLong", path, m);
    }
    if (mn && len < json_object_get_int(mn)) {
      value_text(v, vt, sizeof vt);
      snprintf(m, sizeof m, "Invalid value: %s: %s in body should be at least %d chars long", vt, path, json_object_get_int(mn));
      add_cause(out, "FieldValueInvalid", path, m);
    }
  }
  if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
    double d = json_object_get_double(v);
    json_object *mx = po_As_Get(sch, "maximum"), *mn = po_As_Get(sch, "minimum");
    value_text(v, vt, sizeof vt);
    if (mx && d > json_object_get_double(mx)) {
      snprintf(m, sizeof m, "Invalid value: %s: %s in body should be less than or equal to %s", vt, path,
               json_object_to_json_string(mx));
      add_cause(out, "FieldValueInvalid", path, m);
    }
    if (mn && d < json_object_get_double(mn)) {
      snprintf(m, sizeof m, "Invalid value: %s: %s in body should be greater than or equal to %s", vt, path,
               json_object_to_json_string(mn));
      add_cause(out, "FieldValueInvalid", path, m);
    }
  }
  if (json_object_is_type(v, json_type_array)) {
    size_t n = json_object_array_length(v);
    json_object *mx = po_As_Get(sch, "maxItems"), *mn = po_As_Get(sch, "minItems");
    if (mx && (int)n > json_object_get_int(mx)) {
      snprintf(m, sizeof m, "Too many: %zu: must have at most %d items", n, json_object_get_int(mx));
      add_cause(out, "FieldValueTooMany", path, m);
    }
    if (mn && (int)n < json_object_get_int(mn)) {
      snprintf(m, sizeof m, "Invalid value: %zu: %s in body should have at least %d items", n, path, json_object_get_int(mn));
      add_cause(out, "FieldValueInvalid", path, m);
    }
    json_object *items = po_As_Get(sch, "items");
    for (size_t i = 0; items && i < n; i++) {
      char f[1024];
      snprintf(f, sizeof f, "%s[%zu]", path, i);
      validate(items, json_object_array_get_idx(v, i), f, out, false);
    }
  }
  if (json_object_is_type(v, json_type_object)) check_object(sch, v, path, out, root);
}

void po_As_Schema_Validate(json_object *schema, json_object *obj, po_As_Causes *out) {
  validate(schema, obj, "", out, true);
}
