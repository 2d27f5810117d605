/* The resource registry: built-in kinds and the resources CRDs register. Resource structs are
 * never freed (a deleted CRD only marks its resource unregistered), so watch streams and
 * events may keep pointers to them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static po_As_Resource *add_resource(const char *group, const char *plural) {
  po_As_Resource *r = po_As_Registry_FindGR(group, plural);
  if (r) return r;
  r = calloc(1, sizeof *r);
  r->group = strdup(group);
  r->plural = strdup(plural);
  po_as.res = realloc(po_as.res, (po_as.nres + 1) * sizeof *po_as.res);
  po_as.res[po_as.nres++] = r;
  return r;
}

static void set_str(char **dst, const char *v) {
  free(*dst);
  *dst = po_As_Strdup(v);
}

static void clear_lists(po_As_Resource *r) {
  for (int i = 0; i < r->nversions; i++) free(r->versions[i]);
  for (int i = 0; i < r->nshort; i++) free(r->short_names[i]);
  for (int i = 0; i < r->ncategories; i++) free(r->categories[i]);
  r->nversions = r->nshort = r->ncategories = 0;
}

static void builtin(const char *group, const char *version, const char *plural, const char *singular,
                    const char *kind, bool namespaced, bool has_status, bool has_generation,
                    const char *shortname) {
  po_As_Resource *r = add_resource(group, plural);
  clear_lists(r);
  set_str(&r->singular, singular);
  set_str(&r->kind, kind);
  char lk[128];
  snprintf(lk, sizeof lk, "%sList", kind);
  set_str(&r->list_kind, lk);
  r->versions[r->nversions++] = strdup(version);
  set_str(&r->storage_version, version);
  if (shortname) r->short_names[r->nshort++] = strdup(shortname);
  r->namespaced = namespaced;
  r->has_status = has_status;
  r->has_generation = has_generation;
  r->registered = true;
}

void po_As_Registry_AddBuiltins(void) {
  builtin("", "v1", "namespaces", "namespace", "Namespace", false, true, false, "ns");
  builtin("", "v1", "configmaps", "configmap", "ConfigMap", true, false, false, "cm");
  builtin("", "v1", "secrets", "secret", "Secret", true, false, false, NULL);
  builtin("", "v1", "events", "event", "Event", true, false, false, "ev");
  builtin("", "v1", "services", "service", "Service", true, true, false, "svc");
  builtin("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, false, false, "sa");
  builtin("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, false, false, NULL);
  builtin("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
          "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", false, false, true, NULL);
  builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
          "CustomResourceDefinition", false, true, true, "crd");
  /* Stored only (no controllers behind them), so that deploy/ manifests can be applied. */
  builtin("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
          "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", false, false, true, NULL);
  builtin("apps", "v1", "deployments", "deployment", "Deployment", true, true, true, "deploy");
  builtin("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, false, false, NULL);
  builtin("rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true, false, false, NULL);
  builtin("rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", false, false, false, NULL);
  builtin("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false,
          false, false, NULL);
  po_As_Registry_FindGR("apiextensions.k8s.io", "customresourcedefinitions")->categories[0] = strdup("api-extensions");
  po_As_Registry_FindGR("apiextensions.k8s.io", "customresourcedefinitions")->ncategories = 1;
}

po_As_Resource *po_As_Registry_FindGR(const char *group, const char *plural) {
  for (size_t i = 0; i < po_as.nres; i++)
    if (strcmp(po_as.res[i]->group, group) == 0 && strcmp(po_as.res[i]->plural, plural) == 0) return po_as.res[i];
  return NULL;
}

bool po_As_Resource_Serves(const po_As_Resource *r, const char *version) {
  for (int i = 0; i < r->nversions; i++)
    if (strcmp(r->versions[i], version) == 0) return true;
  return false;
}

po_As_Resource *po_As_Registry_Find(const char *group, const char *version, const char *plural) {
  po_As_Resource *r = po_As_Registry_FindGR(group, plural);
  if (!r || !r->registered || !po_As_Resource_Serves(r, version)) return NULL;
  return r;
}

po_As_Resource *po_As_Registry_FindKind(const char *group, const char *kind) {
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (r->registered && strcmp(r->group, group) == 0 && r->kind && strcmp(r->kind, kind) == 0) return r;
  }
  return NULL;
}

json_object *po_As_Resource_Schema(const po_As_Resource *r, const char *version) {
  return r->schemas ? po_As_Get(r->schemas, version) : NULL;
}

static void copy_strings(json_object *arr, char **dst, int *n, int max) {
  *n = 0;
  if (!arr || !json_object_is_type(arr, json_type_array)) return;
  for (size_t i = 0; i < json_object_array_length(arr) && *n < max; i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(arr, i));
    if (s) dst[(*n)++] = strdup(s);
  }
}

bool po_As_Registry_ApplyCrd(json_object *crd, char *msg, size_t msgsz) {
  json_object *spec = po_As_Get(crd, "spec");
  json_object *names = po_As_Get(spec, "names");
  const char *group = po_As_GetStr(spec, "group");
  const char *plural = po_As_GetStr(names, "plural");
  const char *kind = po_As_GetStr(names, "kind");
  json_object *versions = po_As_Get(spec, "versions");
  if (!group || !plural || !kind || !versions || !json_object_is_type(versions, json_type_array) ||
      json_object_array_length(versions) == 0) {
    snprintf(msg, msgsz, "spec.group, spec.names.plural, spec.names.kind and spec.versions are required");
    return false;
  }
  char want[512];
  snprintf(want, sizeof want, "%s.%s", plural, group);
  const char *name = po_As_MetaStr(crd, "name");
  if (!name || strcmp(name, want) != 0) {
    snprintf(msg, msgsz, "metadata.name: Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group", name ? name : "");
    return false;
  }
  const char *scope = po_As_GetStr(spec, "scope");
  po_As_Resource *r = add_resource(group, plural);
  clear_lists(r);
  const char *singular = po_As_GetStr(names, "singular");
  char lower[256];
  if (!singular) {
    snprintf(lower, sizeof lower, "%s", kind);
    for (char *p = lower; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    singular = lower;
  }
  set_str(&r->singular, singular);
  set_str(&r->kind, kind);
  const char *lk = po_As_GetStr(names, "listKind");
  char lkb[256];
  if (!lk) {
    snprintf(lkb, sizeof lkb, "%sList", kind);
    lk = lkb;
  }
  set_str(&r->list_kind, lk);
  copy_strings(po_As_Get(names, "shortNames"), r->short_names, &r->nshort, 8);
  copy_strings(po_As_Get(names, "categories"), r->categories, &r->ncategories, 8);
  r->namespaced = !scope || strcmp(scope, "Cluster") != 0;
  r->is_crd = true;
  r->has_generation = true;
  r->has_status = false;
  json_object_put(r->schemas);
  json_object_put(r->columns);
  r->schemas = json_object_new_object();
  r->columns = json_object_new_object();
  set_str(&r->storage_version, NULL);
  for (size_t i = 0; i < json_object_array_length(versions); i++) {
    json_object *v = json_object_array_get_idx(versions, i);
    const char *vn = po_As_GetStr(v, "name");
    json_object *served = po_As_Get(v, "served");
    if (!vn) continue;
    if (json_object_get_boolean(po_As_Get(v, "storage")) || !r->storage_version) set_str(&r->storage_version, vn);
    if (served && !json_object_get_boolean(served)) continue;
    if (r->nversions < 8) r->versions[r->nversions++] = strdup(vn);
    json_object *sch = po_As_Get(po_As_Get(v, "schema"), "openAPIV3Schema");
    if (sch) json_object_object_add(r->schemas, vn, json_object_get(sch));
    json_object *cols = po_As_Get(v, "additionalPrinterColumns");
    if (cols) json_object_object_add(r->columns, vn, json_object_get(cols));
    if (po_As_Get(po_As_Get(v, "subresources"), "status")) r->has_status = true;
  }
  r->registered = r->nversions > 0;
  return true;
}

void po_As_Registry_RemoveCrd(json_object *crd) {
  json_object *spec = po_As_Get(crd, "spec");
  const char *group = po_As_GetStr(spec, "group");
  const char *plural = po_As_GetStr(po_As_Get(spec, "names"), "plural");
  po_As_Resource *r = group && plural ? po_As_Registry_FindGR(group, plural) : NULL;
  if (r && r->is_crd) r->registered = false;
}
