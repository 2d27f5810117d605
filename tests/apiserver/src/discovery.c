/* Legacy (unaggregated) discovery: /api, /api/v1, /apis, /apis/G, /apis/G/V. kubectl asks for
 * aggregated discovery first and falls back when the reply's type is the legacy one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static json_object *strs(char **v, int n) {
  json_object *a = json_object_new_array();
  for (int i = 0; i < n; i++) json_object_array_add(a, json_object_new_string(v[i]));
  return a;
}

/* Kubernetes version priority: GA > beta > alpha > anything else; higher numbers first. */
static int version_rank(const char *v, int *major, int *minor) {
  *major = *minor = 0;
  if (v[0] != 'v' || v[1] < '0' || v[1] > '9') return 0;
  char *end;
  *major = (int)strtol(v + 1, &end, 10);
  if (!*end) return 3;
  if (!strncmp(end, "beta", 4)) {
    *minor = (int)strtol(end + 4, &end, 10);
    return *end ? 0 : 2;
  }
  if (!strncmp(end, "alpha", 5)) {
    *minor = (int)strtol(end + 5, &end, 10);
    return *end ? 0 : 1;
  }
  return 0;
}

static int cmp_version(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  int xa, xb, ya, yb;
  int rx = version_rank(x, &xa, &xb), ry = version_rank(y, &ya, &yb);
  if (rx != ry) return ry - rx;
  if (rx == 0) return strcmp(x, y);
  if (xa != ya) return ya - xa;
  return yb - xb;
}

/* Versions served in a group, by priority. Returns count; out holds borrowed strings. */
static int group_versions(const char *group, const char **out, int max) {
  int n = 0;
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered || strcmp(r->group, group) != 0) continue;
    for (int v = 0; v < r->nversions; v++) {
      bool have = false;
      for (int k = 0; k < n; k++)
        if (!strcmp(out[k], r->versions[v])) have = true;
      if (!have && n < max) out[n++] = r->versions[v];
    }
  }
  qsort(out, (size_t)n, sizeof *out, cmp_version);
  return n;
}

static json_object *gv(const char *group, const char *version) {
  json_object *o = json_object_new_object();
  char b[300];
  snprintf(b, sizeof b, "%s/%s", group, version);
  json_object_object_add(o, "groupVersion", json_object_new_string(b));
  json_object_object_add(o, "version", json_object_new_string(version));
  return o;
}

json_object *po_As_Discovery_Api(void) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "kind", json_object_new_string("APIVersions"));
  json_object *v = json_object_new_array();
  json_object_array_add(v, json_object_new_string("v1"));
  json_object_object_add(o, "versions", v);
  json_object *cidrs = json_object_new_array();
  json_object *c = json_object_new_object();
  json_object_object_add(c, "clientCIDR", json_object_new_string("0.0.0.0/0"));
  json_object_object_add(c, "serverAddress", json_object_new_string(po_as.host_port));
  json_object_array_add(cidrs, c);
  json_object_object_add(o, "serverAddressByClientCIDRs", cidrs);
  return o;
}

static json_object *group_obj(const char *group) {
  const char *vs[32];
  int n = group_versions(group, vs, 32);
  if (n == 0) return NULL;
  json_object *g = json_object_new_object();
  json_object_object_add(g, "name", json_object_new_string(group));
  json_object *arr = json_object_new_array();
  for (int i = 0; i < n; i++) json_object_array_add(arr, gv(group, vs[i]));
  json_object_object_add(g, "versions", arr);
  json_object_object_add(g, "preferredVersion", gv(group, vs[0]));
  return g;
}

json_object *po_As_Discovery_Apis(void) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "kind", json_object_new_string("APIGroupList"));
  json_object_object_add(o, "apiVersion", json_object_new_string("v1"));
  json_object *groups = json_object_new_array();
  const char *seen[256];
  int nseen = 0;
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered || !r->group[0]) continue;
    bool have = false;
    for (int k = 0; k < nseen; k++)
      if (!strcmp(seen[k], r->group)) have = true;
    if (have || nseen >= 256) continue;
    seen[nseen++] = r->group;
    json_object *g = group_obj(r->group);
    if (g) json_object_array_add(groups, g);
  }
  json_object_object_add(o, "groups", groups);
  return o;
}

json_object *po_As_Discovery_Group(const char *group) {
  json_object *g = group_obj(group);
  if (!g) return NULL;
  json_object_object_add(g, "kind", json_object_new_string("APIGroup"));
  json_object_object_add(g, "apiVersion", json_object_new_string("v1"));
  return g;
}

static json_object *verbs(const char *const *v) {
  json_object *a = json_object_new_array();
  for (; *v; v++) json_object_array_add(a, json_object_new_string(*v));
  return a;
}

json_object *po_As_Discovery_Resources(const char *group, const char *version) {
  json_object *list = json_object_new_array();
  bool any = false;
  static const char *const all[] = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};
  static const char *const sub[] = {"get", "patch", "update", NULL};
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered || strcmp(r->group, group) != 0 || !po_As_Resource_Serves(r, version)) continue;
    any = true;
    json_object *e = json_object_new_object();
    json_object_object_add(e, "name", json_object_new_string(r->plural));
    json_object_object_add(e, "singularName", json_object_new_string(r->singular));
    json_object_object_add(e, "namespaced", json_object_new_boolean(r->namespaced));
    json_object_object_add(e, "kind", json_object_new_string(r->kind));
    json_object_object_add(e, "verbs", verbs(all));
    if (r->nshort) json_object_object_add(e, "shortNames", strs(r->short_names, r->nshort));
    if (r->ncategories) json_object_object_add(e, "categories", strs(r->categories, r->ncategories));
    json_object_array_add(list, e);
    if (r->has_status) {
      json_object *s = json_object_new_object();
      char b[300];
      snprintf(b, sizeof b, "%s/status", r->plural);
      json_object_object_add(s, "name", json_object_new_string(b));
      json_object_object_add(s, "singularName", json_object_new_string(""));
      json_object_object_add(s, "namespaced", json_object_new_boolean(r->namespaced));
      json_object_object_add(s, "kind", json_object_new_string(r->kind));
      json_object_object_add(s, "verbs", verbs(sub));
      json_object_array_add(list, s);
    }
  }
  if (!any) {
    json_object_put(list);
    return NULL;
  }
  json_object *o = json_object_new_object();
  json_object_object_add(o, "kind", json_object_new_string("APIResourceList"));
  json_object_object_add(o, "apiVersion", json_object_new_string("v1"));
  char b[300];
  if (group[0]) snprintf(b, sizeof b, "%s/%s", group, version);
  else snprintf(b, sizeof b, "%s", version);
  json_object_object_add(o, "groupVersion", json_object_new_string(b));
  json_object_object_add(o, "resources", list);
  return o;
}

/* ---- aggregated discovery (apidiscovery.k8s.io/v2), what kubectl 1.32 asks for first ------- */

static json_object *gvk_obj(const char *group, const char *version, const char *kind) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "group", json_object_new_string(group));
  json_object_object_add(o, "version", json_object_new_string(version));
  json_object_object_add(o, "kind", json_object_new_string(kind));
  return o;
}

static json_object *aggregated_resources(const char *group, const char *version) {
  static const char *const all[] = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};
  static const char *const sub[] = {"get", "patch", "update", NULL};
  json_object *list = json_object_new_array();
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered || strcmp(r->group, group) != 0 || !po_As_Resource_Serves(r, version)) continue;
    json_object *e = json_object_new_object();
    json_object_object_add(e, "resource", json_object_new_string(r->plural));
    json_object_object_add(e, "responseKind", gvk_obj(group, version, r->kind));
    json_object_object_add(e, "scope", json_object_new_string(r->namespaced ? "Namespaced" : "Cluster"));
    json_object_object_add(e, "singularResource", json_object_new_string(r->singular));
    json_object_object_add(e, "verbs", verbs(all));
    if (r->nshort) json_object_object_add(e, "shortNames", strs(r->short_names, r->nshort));
    if (r->ncategories) json_object_object_add(e, "categories", strs(r->categories, r->ncategories));
    if (r->has_status) {
      json_object *subs = json_object_new_array();
      json_object *s = json_object_new_object();
      json_object_object_add(s, "subresource", json_object_new_string("status"));
      json_object_object_add(s, "responseKind", gvk_obj(group, version, r->kind));
      json_object_object_add(s, "verbs", verbs(sub));
      json_object_array_add(subs, s);
      json_object_object_add(e, "subresources", subs);
    }
    json_object_array_add(list, e);
  }
  return list;
}

static json_object *aggregated_group(const char *group) {
  const char *vs[32];
  int n = group_versions(group, vs, 32);
  if (n == 0) return NULL;
  json_object *g = json_object_new_object();
  json_object *meta = json_object_new_object();
  if (group[0]) json_object_object_add(meta, "name", json_object_new_string(group));
  json_object_object_add(g, "metadata", meta);
  json_object *versions = json_object_new_array();
  for (int i = 0; i < n; i++) { /* preferred (highest priority) first */
    json_object *v = json_object_new_object();
    json_object_object_add(v, "version", json_object_new_string(vs[i]));
    json_object_object_add(v, "resources", aggregated_resources(group, vs[i]));
    json_object_object_add(v, "freshness", json_object_new_string("Current"));
    json_object_array_add(versions, v);
  }
  json_object_object_add(g, "versions", versions);
  return g;
}

json_object *po_As_Discovery_Aggregated(bool core) {
  json_object *items = json_object_new_array();
  if (core) {
    json_object *g = aggregated_group("");
    if (g) json_object_array_add(items, g);
  } else {
    const char *seen[256];
    int nseen = 0;
    for (size_t i = 0; i < po_as.nres; i++) {
      po_As_Resource *r = po_as.res[i];
      if (!r->registered || !r->group[0]) continue;
      bool have = false;
      for (int k = 0; k < nseen; k++)
        if (!strcmp(seen[k], r->group)) have = true;
      if (have || nseen >= 256) continue;
      seen[nseen++] = r->group;
      json_object *g = aggregated_group(r->group);
      if (g) json_object_array_add(items, g);
    }
  }
  json_object *o = json_object_new_object();
  json_object_object_add(o, "kind", json_object_new_string("APIGroupDiscoveryList"));
  json_object_object_add(o, "apiVersion", json_object_new_string("apidiscovery.k8s.io/v2"));
  json_object_object_add(o, "metadata", json_object_new_object());
  json_object_object_add(o, "items", items);
  return o;
}
