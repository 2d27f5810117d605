/* Target keys: "ServiceDefaults/<ns>/<name>", "ProxyDefaults/<ns>/global". */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/reconcile/reconcile.h"

static const char *str(const json_object *o, const char *a, const char *b, const char *c) {
  json_object *x = (json_object *)o;
  const char *path[] = {a, b, c};
  for (int i = 0; i < 3 && path[i]; i++) {
    if (!json_object_object_get_ex(x, path[i], &x)) return NULL;
  }
  return json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
}

void po_Reconcile_TargetKey(po_TargetKind kind, const char *ns, const char *name, char *key, size_t size) {
  snprintf(key, size, "%s/%s/%s", po_TargetKind_Name(kind), ns ? ns : "", name ? name : "");
}

void po_Reconcile_OverrideKey(const json_object *po, char *key, size_t size) {
  const char *ns = str(po, "metadata", "namespace", NULL);
  const char *kind = str(po, "spec", "targetRef", "kind");
  const char *name = str(po, "spec", "targetRef", "name");
  bool proxy = kind && strcmp(kind, "ProxyDefaults") == 0;
  if (kind && !proxy && strcmp(kind, "ServiceDefaults") != 0) {
    key[0] = '\0'; /* an unknown kind names no target; validation says so */
    return;
  }
  if (!proxy && (!name || !*name)) {
    key[0] = '\0';
    return;
  }
  po_Reconcile_TargetKey(proxy ? kPo_TargetProxyDefaults : kPo_TargetServiceDefaults, ns, proxy ? "global" : name, key, size);
}

void po_Reconcile_HeldKey(const json_object *po, char *key, size_t size) {
  key[0] = '\0';
  json_object *st = NULL, *lv = NULL, *spec = NULL, *meta = NULL;
  if (!json_object_object_get_ex(po, "status", &st) || !json_object_object_get_ex(st, "lastValid", &lv) ||
      !json_object_object_get_ex(lv, "spec", &spec) || !json_object_object_get_ex(po, "metadata", &meta)) {
    return;
  }
  /* The key po_Reconcile_OverrideKey gives for the recorded spec, in the object's namespace. */
  json_object *syn = json_object_new_object(), *m = json_object_new_object(), *ns = NULL;
  if (json_object_object_get_ex(meta, "namespace", &ns)) json_object_object_add(m, "namespace", json_object_get(ns));
  json_object_object_add(syn, "metadata", m);
  json_object_object_add(syn, "spec", json_object_get(spec));
  char current[600];
  po_Reconcile_OverrideKey(syn, key, size);
  po_Reconcile_OverrideKey(po, current, sizeof current);
  if (strcmp(key, current) == 0) key[0] = '\0';
  json_object_put(syn);
}
