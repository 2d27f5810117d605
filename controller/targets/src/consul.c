#include "po/targets/consul.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define SOURCE_KEY "PropertyOverride"

const char *po_Consul_Resource(po_TargetKind kind) {
  return kind == kPo_TargetProxyDefaults ? "proxydefaults" : "servicedefaults";
}

json_object *po_Consul_Arguments(const po_CompiledOverride *c) {
  json_object *args = po_Value_ToJsonC(c->consul_arguments);
  if (!args) return NULL;
  json_object *src = json_object_new_object();
  json_object_object_add(src, "name", json_object_new_string(c->name));
  json_object_object_add(src, "generation", json_object_new_int64(c->generation));
  json_object_object_add(args, SOURCE_KEY, src);
  return args;
}

static json_object *get(const json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* The source of an envoyExtensions entry when it is ours. */
static bool ours(json_object *entry, const char **owner, int64_t *gen) {
  json_object *name = get(entry, "name"), *src = get(get(entry, "arguments"), SOURCE_KEY);
  if (!name || strcmp(json_object_get_string(name), PO_EXTENSION_NAME) != 0) return false;
  json_object *on = get(src, "name");
  if (!on || !json_object_is_type(on, json_type_string)) return false;
  *owner = json_object_get_string(on);
  *gen = json_object_get_int64(get(src, "generation"));
  return true;
}

size_t po_Consul_OwnedEntries(const json_object *target, po_ConsulEntry *out, size_t cap) {
  json_object *list = get(get(target, "spec"), "envoyExtensions");
  size_t n = 0;
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *e = json_object_array_get_idx(list, i);
    const char *owner;
    int64_t gen;
    if (!ours(e, &owner, &gen)) continue;
    if (n < cap) out[n] = (po_ConsulEntry){owner, gen, get(e, "arguments")};
    n++;
  }
  return n;
}

static int by_owner(const void *x, const void *y) {
  return strcmp(((const po_ConsulEntry *)x)->owner, ((const po_ConsulEntry *)y)->owner);
}

/* A deep copy (json-c has one: json_object_deep_copy). */
static json_object *copy(const json_object *o) {
  json_object *c = NULL;
  return json_object_deep_copy((json_object *)o, &c, NULL) == 0 ? c : NULL;
}

static bool only_extensions_left(json_object *spec) {
  json_object_object_foreach(spec, k, v) {
    if (strcmp(k, "envoyExtensions") == 0) {
      if (json_object_array_length(v) > 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

po_ConsulPlan po_Consul_Plan(const json_object *current, po_TargetKind kind, const char *ns, const char *name,
                             const po_ConsulEntry *entries, size_t n) {
  po_ConsulPlan plan = {0};
  json_object *obj = current ? copy(current) : NULL;
  if (!obj) {
    if (n == 0) return plan; /* nothing there, nothing wanted */
    plan.create = true;
    obj = json_object_new_object();
    json_object_object_add(obj, "apiVersion", json_object_new_string(PO_CONSUL_GROUP "/" PO_CONSUL_VERSION));
    json_object_object_add(obj, "kind", json_object_new_string(po_TargetKind_Name(kind)));
    json_object *meta = json_object_new_object(), *labels = json_object_new_object(), *ann = json_object_new_object();
    json_object_object_add(meta, "name", json_object_new_string(name));
    if (ns && *ns) json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(labels, "app.kubernetes.io/managed-by", json_object_new_string("propertyoverride"));
    json_object_object_add(ann, "propertyoverride.io/created", json_object_new_string("true"));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(meta, "annotations", ann);
    json_object_object_add(obj, "metadata", meta);
  }
  json_object *spec = get(obj, "spec");
  if (!spec || !json_object_is_type(spec, json_type_object)) {
    spec = json_object_new_object();
    json_object_object_add(obj, "spec", spec);
  }
  json_object *old = get(spec, "envoyExtensions");
  json_object *list = json_object_new_array();
  for (size_t i = 0; old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
    json_object *e = json_object_array_get_idx(old, i);
    const char *owner;
    int64_t gen;
    if (!ours(e, &owner, &gen)) json_object_array_add(list, json_object_get(e));
  }
  po_ConsulEntry *sorted = malloc((n ? n : 1) * sizeof *sorted);
  if (sorted) {
    memcpy(sorted, entries, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_owner);
    for (size_t i = 0; i < n; i++) {
      json_object *e = json_object_new_object();
      json_object_object_add(e, "name", json_object_new_string(PO_EXTENSION_NAME));
      json_object_object_add(e, "required", json_object_new_boolean(0));
      json_object_object_add(e, "arguments", copy(sorted[i].arguments));
      json_object_array_add(list, e);
    }
    free(sorted);
  }
  bool changed = !old ? json_object_array_length(list) > 0 : !json_object_equal(old, list);
  if (old || json_object_array_length(list) > 0) json_object_object_add(spec, "envoyExtensions", list);
  else json_object_put(list);
  const char *created = json_object_get_string(get(get(get(obj, "metadata"), "annotations"), "propertyoverride.io/created"));
  if (!plan.create && created && !strcmp(created, "true") && only_extensions_left(spec)) {
    plan.remove = true;
    plan.changed = true;
    json_object_put(obj);
    return plan;
  }
  plan.changed = plan.create || changed;
  plan.object = obj;
  return plan;
}
