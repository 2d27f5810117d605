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

/* The key a spec points at, in namespace ns ("" when it names none). */
static void key_of_spec(const char *ns, const json_object *spec, char *key, size_t size) {
  const char *kind = str(spec, "targetRef", "kind", NULL);
  const char *name = str(spec, "targetRef", "name", NULL);
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

void po_Reconcile_OverrideKey(const json_object *po, char *key, size_t size) {
  json_object *spec = NULL;
  json_object_object_get_ex(po, "spec", &spec);
  key_of_spec(str(po, "metadata", "namespace", NULL), spec, key, size);
}

/* Reads only (no json-c references taken): the object may be one the informer shares. */
void po_Reconcile_HeldKey(const json_object *po, char *key, size_t size) {
  key[0] = '\0';
  json_object *st = NULL, *lv = NULL, *spec = NULL;
  if (!json_object_object_get_ex(po, "status", &st) || !json_object_object_get_ex(st, "lastValid", &lv) ||
      !json_object_object_get_ex(lv, "spec", &spec) || !json_object_object_get_ex(po, "metadata", NULL)) {
    return;
  }
  char current[600];
  key_of_spec(str(po, "metadata", "namespace", NULL), spec, key, size);
  po_Reconcile_OverrideKey(po, current, sizeof current);
  if (strcmp(key, current) == 0) key[0] = '\0';
}
