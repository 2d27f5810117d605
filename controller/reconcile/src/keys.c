/* Target keys: "ServiceDefaults/<ns>/<name>", "ProxyDefaults/<ns>/global". */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"
#include "po/reconcile/reconcile.h"

void po_Reconcile_TargetKey(po_TargetKind kind, const char *ns, const char *name, char *key, size_t size) {
  snprintf(key, size, "%s/%s/%s", po_TargetKind_Name(kind), ns ? ns : "", name ? name : "");
}

/* The key a spec points at, for a PropertyOverride of namespace ns ("" when it names none). */
static void key_of_spec(const char *ns, const json_object *spec, char *key, size_t size) {
  const char *kind = po_Json_String(po_Json_Get(spec, "targetRef"), "kind");
  const char *name = po_Json_String(po_Json_Get(spec, "targetRef"), "name");
  const char *group = po_Json_String(po_Json_Get(spec, "targetRef"), "group");
  const char *tns = po_Json_String(po_Json_Get(spec, "targetRef"), "namespace");
  /* This reconciler programs Consul targets; the other meshes' (Service, Mesh, Gateway) name no
   * Consul object, whatever their name, and a group other than Consul's names none either. */
  if (group && strcmp(group, "consul.hashicorp.com") != 0) {
    key[0] = '\0';
    return;
  }
  bool proxy = kind && strcmp(kind, "ProxyDefaults") == 0;
  if (kind && !proxy && strcmp(kind, "ServiceDefaults") != 0) {
    key[0] = '\0'; /* an unknown kind names no target; validation says so */
    return;
  }
  if (!proxy && (!name || !*name)) {
    key[0] = '\0';
    return;
  }
  /* A ServiceDefaults of spec.targetRef.namespace: the reconcile of that target is where the
   * tenancy policy allows it or refuses it (TargetNotAllowed). A ProxyDefaults is never of
   * another namespace: it stays listed under its own, where it is refused. */
  if (!proxy && tns && *tns) ns = tns;
  po_Reconcile_TargetKey(proxy ? kPo_TargetProxyDefaults : kPo_TargetServiceDefaults, ns, proxy ? "global" : name, key, size);
}

void po_Reconcile_OverrideKey(const json_object *po, char *key, size_t size) {
  key_of_spec(po_Json_String(po_Json_Get(po, "metadata"), "namespace"), po_Json_Get(po, "spec"), key, size);
}

/* Reads only (no json-c references taken): the object may be one the informer shares. */
void po_Reconcile_HeldKey(const json_object *po, char *key, size_t size) {
  key[0] = '\0';
  json_object *spec = po_Json_Get(po_Json_Get(po_Json_Get(po, "status"), "lastValid"), "spec");
  if (!spec || !po_Json_Get(po, "metadata")) return;
  char current[600];
  key_of_spec(po_Json_String(po_Json_Get(po, "metadata"), "namespace"), spec, key, size);
  po_Reconcile_OverrideKey(po, current, sizeof current);
  if (strcmp(key, current) == 0) key[0] = '\0';
}
