/* Target keys: "ServiceDefaults/<ns>/<name>", "ProxyDefaults/<ns>/global" (Consul);
 * "Service/<ns>/<name>", "Mesh/<ns>/global" (Istio); "Gateway/<ns>/<name>" (Envoy Gateway). */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"
#include "po/reconcile/reconcile.h"

void po_Reconcile_TargetKey(po_TargetKind kind, const char *ns, const char *name, char *key, size_t size) {
  snprintf(key, size, "%s/%s/%s", po_TargetKind_Name(kind), ns ? ns : "", name ? name : "");
}

/* The key a spec points at, in namespace ns ("" when it names none). Without a group the kind
 * decides (override.c's rule); a group that does not own the kind names nothing (validation
 * says so). Consul targets: ServiceDefaults/ProxyDefaults; Istio: Service and Mesh ("global":
 * mesh-wide, like ProxyDefaults, so its key is per namespace too); Envoy Gateway: Gateway. */
static void key_of_spec(const char *ns, const json_object *spec, char *key, size_t size) {
  const char *kind = po_Json_String(po_Json_Get(spec, "targetRef"), "kind");
  const char *name = po_Json_String(po_Json_Get(spec, "targetRef"), "name");
  const char *group = po_Json_String(po_Json_Get(spec, "targetRef"), "group");
  po_TargetKind k = kPo_TargetKind_ServiceDefaults;
  bool found = !kind || po_TargetKind_Parse(kind, &k); /* no kind: ServiceDefaults */
  key[0] = '\0';
  if (!found || (group && strcmp(group, po_TargetKind_Group(k)) != 0)) return;
  bool wide = po_TargetKind_MeshWide(k);
  if (!wide && (!name || !*name)) return;
  /* A ServiceDefaults of spec.targetRef.namespace: the reconcile of that target is where the
   * tenancy policy allows it or refuses it (TargetNotAllowed). The other kinds are never of
   * another namespace: they stay listed under their own, where they are refused. */
  const char *tns = po_Json_String(po_Json_Get(spec, "targetRef"), "namespace");
  if (k == kPo_TargetKind_ServiceDefaults && tns && *tns) ns = tns;
  po_Reconcile_TargetKey(k, ns, wide ? "global" : name, key, size);
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

bool po_Reconcile_Claims(const po_Tenancy *t, const json_object *po) {
  char key[600], why[512];
  po_Reconcile_OverrideKey(po, key, sizeof key);
  /* "Kind/ns/name": a key names a kind this reconciler knows and its namespace */
  char *ns = strchr(key, '/'), *end = ns ? strchr(ns + 1, '/') : NULL;
  if (!end) return false;
  *ns++ = '\0';
  *end = '\0';
  po_TargetKind k;
  if (!po_TargetKind_Parse(key, &k)) return false;
  const char *from = po_Json_String(po_Json_Get(po, "metadata"), "namespace");
  const char *tns = po_Json_String(po_Json_Get(po_Json_Get(po, "spec"), "targetRef"), "namespace");
  if (!from) return false;
  return po_Tenancy_Allows(t, k, from, why, sizeof why) &&
         po_Tenancy_AllowsNamespace(t, k, from, tns ? tns : "", why, sizeof why) &&
         po_Tenancy_AllowsNamespace(t, k, from, ns, why, sizeof why);
}
