/* OpenAPI v3: /openapi/v3 lists one document per group/version; each document carries the CRD
 * schemas (kubectl explain) and a PATCH path per resource that declares the fieldValidation
 * parameter, which is how kubectl 1.32 decides to validate on the server. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static void reversed_group(const char *group, char *out, size_t outsz) {
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s", group);
  out[0] = 0;
  size_t o = 0;
  for (;;) {
    char *dot = strrchr(tmp, '.');
    const char *part = dot ? dot + 1 : tmp;
    o += (size_t)snprintf(out + o, outsz > o ? outsz - o : 0, "%s%s", o ? "." : "", part);
    if (!dot) break;
    *dot = 0;
  }
}

static json_object *gvk(const po_As_Resource *r, const char *version) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "group", json_object_new_string(r->group));
  json_object_object_add(o, "kind", json_object_new_string(r->kind));
  json_object_object_add(o, "version", json_object_new_string(version));
  return o;
}

static json_object *param(const char *name, const char *in) {
  json_object *p = json_object_new_object();
  json_object_object_add(p, "name", json_object_new_string(name));
  json_object_object_add(p, "in", json_object_new_string(in));
  if (!strcmp(in, "path")) json_object_object_add(p, "required", json_object_new_boolean(1));
  json_object *s = json_object_new_object();
  json_object_object_add(s, "type", json_object_new_string("string"));
  json_object_object_add(p, "schema", s);
  return p;
}

static json_object *full_schema(const po_As_Resource *r, const char *version) {
  json_object *sch = po_As_Copy(po_As_Resource_Schema(r, version));
  if (!sch) {
    sch = json_object_new_object();
    json_object_object_add(sch, "type", json_object_new_string("object"));
    json_object_object_add(sch, "x-kubernetes-preserve-unknown-fields", json_object_new_boolean(1));
  }
  json_object *props = po_As_Get(sch, "properties");
  if (!props) {
    props = json_object_new_object();
    json_object_object_add(sch, "properties", props);
  }
  static const char *const docs[][2] = {
      {"apiVersion", "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"},
      {"kind", "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}};
  for (int i = 0; i < 2; i++)
    if (!po_As_Get(props, docs[i][0])) {
      json_object *p = json_object_new_object();
      json_object_object_add(p, "type", json_object_new_string("string"));
      json_object_object_add(p, "description", json_object_new_string(docs[i][1]));
      json_object_object_add(props, docs[i][0], p);
    }
  json_object *meta = json_object_new_object();
  json_object_object_add(meta, "type", json_object_new_string("object"));
  json_object_object_add(meta, "description", json_object_new_string("Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"));
  json_object_object_add(props, "metadata", meta);
  json_object *ext = json_object_new_array();
  json_object_array_add(ext, gvk(r, version));
  json_object_object_add(sch, "x-kubernetes-group-version-kind", ext);
  return sch;
}

json_object *po_As_OpenApi_GroupVersion(const char *group, const char *version) {
  json_object *paths = json_object_new_object(), *schemas = json_object_new_object();
  bool any = false;
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered || strcmp(r->group, group) != 0 || !po_As_Resource_Serves(r, version)) continue;
    any = true;
    char prefix[300], path[600], name[400], rg[256];
    if (group[0]) snprintf(prefix, sizeof prefix, "/apis/%s/%s", group, version);
    else snprintf(prefix, sizeof prefix, "/api/%s", version);
    snprintf(path, sizeof path, "%s%s/%s/{name}", prefix, r->namespaced ? "/namespaces/{namespace}" : "", r->plural);
    json_object *op = json_object_new_object();
    json_object *params = json_object_new_array();
    json_object_array_add(params, param("name", "path"));
    if (r->namespaced) json_object_array_add(params, param("namespace", "path"));
    json_object_array_add(params, param("dryRun", "query"));
    json_object_array_add(params, param("fieldManager", "query"));
    json_object_array_add(params, param("fieldValidation", "query"));
    json_object_array_add(params, param("force", "query"));
    json_object_object_add(op, "parameters", params);
    json_object_object_add(op, "x-kubernetes-group-version-kind", gvk(r, version));
    json_object_object_add(op, "responses", json_object_new_object());
    json_object *item = json_object_new_object();
    json_object_object_add(item, "patch", op);
    json_object_object_add(paths, path, item);
    reversed_group(group[0] ? group : "core", rg, sizeof rg);
    snprintf(name, sizeof name, "%s%s.%s.%s", group[0] ? "" : "io.k8s.api.", rg, version, r->kind);
    if (!group[0]) snprintf(name, sizeof name, "io.k8s.api.core.%s.%s", version, r->kind);
    json_object_object_add(schemas, name, full_schema(r, version));
  }
  if (!any) {
    json_object_put(paths);
    json_object_put(schemas);
    return NULL;
  }
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "openapi", json_object_new_string("3.0.0"));
  json_object *info = json_object_new_object();
  json_object_object_add(info, "title", json_object_new_string("Kubernetes"));
  json_object_object_add(info, "version", json_object_new_string("v1.32.0"));
  json_object_object_add(doc, "info", info);
  json_object_object_add(doc, "paths", paths);
  json_object *comp = json_object_new_object();
  json_object_object_add(comp, "schemas", schemas);
  json_object_object_add(doc, "components", comp);
  return doc;
}

static void add_root(json_object *paths, const char *group, const char *version) {
  char key[300], url[600];
  if (group[0]) snprintf(key, sizeof key, "apis/%s/%s", group, version);
  else snprintf(key, sizeof key, "api/%s", version);
  if (po_As_Get(paths, key)) return;
  json_object *doc = po_As_OpenApi_GroupVersion(group, version);
  if (!doc) return;
  /* FNV-1a of the document: the hash changes exactly when the document does */
  const char *s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  json_object_put(doc);
  snprintf(url, sizeof url, "/openapi/v3/%s?hash=%016llX", key, (unsigned long long)h);
  json_object *e = json_object_new_object();
  json_object_object_add(e, "serverRelativeURL", json_object_new_string(url));
  json_object_object_add(paths, key, e);
}

json_object *po_As_OpenApi_Root(void) {
  json_object *paths = json_object_new_object();
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered) continue;
    for (int v = 0; v < r->nversions; v++) add_root(paths, r->group, r->versions[v]);
  }
  json_object *o = json_object_new_object();
  json_object_object_add(o, "paths", paths);
  return o;
}
