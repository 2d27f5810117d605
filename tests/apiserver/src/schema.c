/* Structural-schema checks for custom resources, with the real server's field-error texts:
 * type, required, enum, maxItems/minItems, maxLength/minLength, maximum/minimum, nullable;
 * allOf/anyOf/oneOf/not; x-kubernetes-validations (a CEL subset, cel.c); unknown fields are
 * pruned (and reported, for fieldValidation Warn/Strict); `default`s are applied to missing
 * properties. */
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
static void check_combinators(json_object *sch, json_object *v, const char *path, po_As_Causes *out);
static void check_rules(json_object *sch, json_object *v, const char *path, po_As_Causes *out);

static void check_object(json_object *sch, json_object *v, const char *path, po_As_Causes *out, bool root) {
  json_object *props = po_As_Get(sch, "properties");
  json_object *addl = po_As_Get(sch, "additionalProperties");
  bool preserve = json_object_get_boolean(po_As_Get(sch, "x-kubernetes-preserve-unknown-fields"));
  bool embedded = json_object_get_boolean(po_As_Get(sch, "x-kubernetes-embedded-resource"));
  /* defaults first, so required checks see them */
  if (props && !out->probe) {
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
    else if (!preserve && !(addl && json_object_get_boolean(addl)) && !out->probe) {
      if (!out->unknown) out->unknown = json_object_new_array();
      json_object_array_add(out->unknown, json_object_new_string(f));
      json_object_object_del(v, k);
    }
    free(keys[i]);
  }
}

/* The causes v has against sch (NULL: satisfied). Checked on a copy, with no pruning. */
static json_object *probe_causes(json_object *sch, json_object *v, const char *path) {
  po_As_Causes probe = {.probe = true};
  json_object *c = po_As_Copy(v);
  validate(sch, c, path, &probe, false);
  json_object_put(c);
  json_object_put(probe.unknown);
  return probe.causes;
}

static void composite(po_As_Causes *out, const char *path, json_object *v, const char *what) {
  char vt[256], m[512];
  value_text(v, vt, sizeof vt);
  snprintf(m, sizeof m, "Invalid value: %s: %s", vt, what);
  add_cause(out, "FieldValueInvalid", path, m);
}

static void merge_causes(po_As_Causes *out, json_object *causes) {
  for (size_t i = 0; causes && i < json_object_array_length(causes); i++) {
    if (!out->causes) out->causes = json_object_new_array();
    json_object_array_add(out->causes, json_object_get(json_object_array_get_idx(causes, i)));
  }
}

/* allOf / anyOf / oneOf / not, reported as kube-openapi does: anyOf and oneOf add their
 * composite error and the errors of the best failing alternative (here: the one with the
 * fewest errors); allOf adds every alternative's errors and then its composite error. */
static void check_combinators(json_object *sch, json_object *v, const char *path, po_As_Causes *out) {
  json_object *all = po_As_Get(sch, "allOf"), *any = po_As_Get(sch, "anyOf"), *one = po_As_Get(sch, "oneOf");
  json_object *not = po_As_Get(sch, "not");
  for (int which = 0; which < 2; which++) {
    json_object *alts = which == 0 ? any : one;
    if (!alts || !json_object_is_type(alts, json_type_array)) continue;
    json_object *best = NULL;
    int valid = 0;
    for (size_t i = 0; i < json_object_array_length(alts); i++) {
      json_object *c = probe_causes(json_object_array_get_idx(alts, i), v, path);
      if (!c) {
        valid++;
        if (which == 0) break;
        continue;
      }
      if (!best || json_object_array_length(c) < json_object_array_length(best)) {
        json_object_put(best);
        best = c;
      } else {
        json_object_put(c);
      }
    }
    if (which == 0 && !valid) {
      composite(out, path, v, "must validate at least one schema (anyOf)");
      merge_causes(out, best);
    } else if (which == 1 && valid != 1) {
      char m[128];
      if (valid == 0) snprintf(m, sizeof m, "must validate one and only one schema (oneOf). Found none valid");
      else snprintf(m, sizeof m, "must validate one and only one schema (oneOf). Found %d valid alternatives", valid);
      composite(out, path, v, m);
      if (!valid) merge_causes(out, best);
    }
    json_object_put(best);
  }
  if (all && json_object_is_type(all, json_type_array)) {
    size_t valid = 0, n = json_object_array_length(all);
    for (size_t i = 0; i < n; i++) {
      json_object *c = probe_causes(json_object_array_get_idx(all, i), v, path);
      if (!c) valid++;
      merge_causes(out, c);
      json_object_put(c);
    }
    if (valid != n) composite(out, path, v, valid ? "must validate all the schemas (allOf)" : "must validate all the schemas (allOf). None validated");
  }
  if (not) {
    json_object *c = probe_causes(not, v, path);
    if (!c) composite(out, path, v, "must not validate the schema (not)");
    json_object_put(c);
  }
}

struct po_As_PendingRule {
  json_object *sch, *v; /* borrowed: both outlive the validation */
  char *path;
};

/* x-kubernetes-validations are collected during the schema walk and run afterwards, and only
 * when no type or enum error blocks them, as the real server does. */
static void check_rules(json_object *sch, json_object *v, const char *path, po_As_Causes *out) {
  if (out->probe || !po_As_Get(sch, "x-kubernetes-validations")) return;
  if (out->nrules == out->caprules) {
    out->caprules = out->caprules ? out->caprules * 2 : 8;
    out->rules = realloc(out->rules, out->caprules * sizeof *out->rules);
  }
  out->rules[out->nrules++] = (struct po_As_PendingRule){sch, v, strdup(path)};
}

/* The CEL subset of cel.c; rules outside it are skipped. */
static void run_rules(json_object *sch, json_object *v, const char *path, po_As_Causes *out) {
  json_object *rules = po_As_Get(sch, "x-kubernetes-validations");
  for (size_t i = 0; rules && json_object_is_type(rules, json_type_array) && i < json_object_array_length(rules); i++) {
    json_object *r = json_object_array_get_idx(rules, i);
    const char *rule = po_As_GetStr(r, "rule");
    if (!rule) continue;
    char err[256] = "", m[1024], f[1024];
    int res = po_As_Cel_Eval(rule, v, err, sizeof err);
    if (res == 1) continue;
    if (res < 0) {
      po_As_Log(kPo_As_LogDebug, "CEL rule outside the supported subset, not enforced: %s", rule);
      continue;
    }
    const char *msg = po_As_GetStr(r, "message"), *fp = po_As_GetStr(r, "fieldPath"), *reason = po_As_GetStr(r, "reason");
    snprintf(f, sizeof f, "%s%s", path, fp ? (path[0] || fp[0] != '.' ? fp : fp + 1) : "");
    const char *tn = type_name(v);
    if (fp) {
      json_object *target = po_As_JsonPath(v, fp);
      tn = type_name(target);
      json_object_put(target);
    }
    if (res == 2) snprintf(m, sizeof m, "Invalid value: \"%s\": %s evaluating rule: %s", tn, err, rule);
    else if (msg) snprintf(m, sizeof m, "Invalid value: \"%s\": %s", tn, msg);
    else snprintf(m, sizeof m, "Invalid value: \"%s\": failed rule: %s", tn, rule);
    add_cause(out, reason ? reason : "FieldValueInvalid", f, m);
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
  check_combinators(sch, v, path, out);
  check_rules(sch, v, path, out);
}

void po_As_Schema_Validate(json_object *schema, json_object *obj, po_As_Causes *out) {
  validate(schema, obj, "", out, true);
  bool blocked = false;
  for (size_t i = 0; out->causes && i < json_object_array_length(out->causes); i++) {
    const char *reason = po_As_GetStr(json_object_array_get_idx(out->causes, i), "reason");
    if (reason && (!strcmp(reason, "FieldValueTypeInvalid") || !strcmp(reason, "FieldValueNotSupported"))) blocked = true;
  }
  if (blocked && out->nrules)
    add_cause(out, "FieldValueInvalid", "<nil>",
              "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation");
  for (size_t i = 0; i < out->nrules; i++) {
    if (!blocked) run_rules(out->rules[i].sch, out->rules[i].v, out->rules[i].path, out);
    free(out->rules[i].path);
  }
  free(out->rules);
  out->rules = NULL;
  out->nrules = out->caprules = 0;
}
