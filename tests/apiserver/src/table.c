/* The server-side Table format (meta.k8s.io/v1) that kubectl get asks for: a CRD's
 * additionalPrinterColumns (simple JSONPath), kubectl-like columns for the built-ins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver.h"

/* ---- JSONPath subset: .a.b, [N], ['key'], [?(@.k=="v")] ---------------------------------- */

json_object *po_As_JsonPath(json_object *obj, const char *path) {
  const char *p = path;
  if (*p == '{') p++;
  json_object *cur = obj;
  while (*p && *p != '}' && cur) {
    if (*p == '.') {
      p++;
      const char *s = p;
      while (*p && *p != '.' && *p != '[' && *p != '}') p++;
      if (p == s) continue;
      char key[256];
      snprintf(key, sizeof key, "%.*s", (int)(p - s), s);
      cur = po_As_Get(cur, key);
    } else if (*p == '[') {
      p++;
      if (*p == '?') { /* [?(@.k=="v")] */
        const char *at = strstr(p, "@.");
        const char *eq = strstr(p, "==");
        const char *end = strstr(p, ")]");
        if (!at || !eq || !end) return NULL;
        char key[256], val[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - at - 2), at + 2);
        const char *v = eq + 2;
        while (*v == ' ') v++;
        char q = *v;
        if (q == '"' || q == '\'') v++;
        const char *ve = v;
        while (ve < end && *ve != q) ve++;
        snprintf(val, sizeof val, "%.*s", (int)(ve - v), v);
        json_object *found = NULL;
        for (size_t i = 0; json_object_is_type(cur, json_type_array) && i < json_object_array_length(cur); i++) {
          json_object *el = json_object_array_get_idx(cur, i);
          const char *s = po_As_GetStr(el, key);
          if (s && !strcmp(s, val)) {
            found = el;
            break;
          }
        }
        cur = found;
        p = end + 2;
      } else if (*p == '\'' || *p == '"') {
        char q = *p++;
        const char *s = p;
        while (*p && *p != q) p++;
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(p - s), s);
        cur = po_As_Get(cur, key);
        while (*p && *p != ']') p++;
        if (*p) p++;
      } else {
        long idx = strtol(p, (char **)&p, 10);
        if (!json_object_is_type(cur, json_type_array)) return NULL;
        size_t n = json_object_array_length(cur);
        if (idx < 0) idx += (long)n;
        cur = idx >= 0 && (size_t)idx < n ? json_object_array_get_idx(cur, (size_t)idx) : NULL;
        while (*p && *p != ']') p++;
        if (*p) p++;
      }
    } else {
      return NULL;
    }
  }
  return cur ? json_object_get(cur) : NULL;
}

/* ---- columns --------------------------------------------------------------------------------- */

typedef struct Col {
  const char *name, *type, *path;
  int priority;
} Col;

static const Col kNs[] = {{"Status", "string", ".status.phase", 0}, {"Age", "date", ".metadata.creationTimestamp", 0}, {0}};
static const Col kCm[] = {{"Data", "integer", "#count:.data", 0}, {"Age", "date", ".metadata.creationTimestamp", 0}, {0}};
static const Col kSecret[] = {{"Type", "string", ".type", 0}, {"Data", "integer", "#count:.data", 0},
                              {"Age", "date", ".metadata.creationTimestamp", 0}, {0}};
static const Col kSvc[] = {{"Type", "string", ".spec.type", 0}, {"Cluster-IP", "string", ".spec.clusterIP", 0},
                           {"External-IP", "string", "#none", 0}, {"Port(s)", "string", "#ports", 0},
                           {"Age", "date", ".metadata.creationTimestamp", 0}, {0}};
static const Col kSa[] = {{"Secrets", "integer", "#count:.secrets", 0}, {"Age", "date", ".metadata.creationTimestamp", 0}, {0}};
static const Col kLease[] = {{"Holder", "string", ".spec.holderIdentity", 0}, {"Age", "date", ".metadata.creationTimestamp", 0}, {0}};
static const Col kVwc[] = {{"Webhooks", "integer", "#count:.webhooks", 0}, {"Age", "date", ".metadata.creationTimestamp", 0}, {0}};
static const Col kCrd[] = {{"Created At", "string", ".metadata.creationTimestamp", 0}, {0}};
static const Col kEv[] = {{"Last Seen", "date", ".lastTimestamp", 0}, {"Type", "string", ".type", 0},
                          {"Reason", "string", ".reason", 0}, {"Object", "string", "#involved", 0},
                          {"Message", "string", ".message", 0}, {0}};
static const Col kDefault[] = {{"Age", "date", ".metadata.creationTimestamp", 0}, {0}};

static const Col *builtin_cols(const po_As_Resource *r) {
  static const struct { const char *group, *plural; const Col *cols; } map[] = {
      {"", "namespaces", kNs}, {"", "configmaps", kCm}, {"", "secrets", kSecret}, {"", "services", kSvc},
      {"", "serviceaccounts", kSa}, {"", "events", kEv}, {"coordination.k8s.io", "leases", kLease},
      {"admissionregistration.k8s.io", "validatingwebhookconfigurations", kVwc},
      {"apiextensions.k8s.io", "customresourcedefinitions", kCrd}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(map[i].group, r->group) && !strcmp(map[i].plural, r->plural)) return map[i].cols;
  return kDefault;
}

static json_object *special(json_object *obj, const char *path) {
  if (!strncmp(path, "#count:", 7)) {
    json_object *v = po_As_JsonPath(obj, path + 7);
    int n = 0;
    if (v && json_object_is_type(v, json_type_object)) n = json_object_object_length(v);
    if (v && json_object_is_type(v, json_type_array)) n = (int)json_object_array_length(v);
    json_object_put(v);
    return json_object_new_int(n);
  }
  if (!strcmp(path, "#none")) return json_object_new_string("<none>");
  if (!strcmp(path, "#ports")) {
    json_object *ports = po_As_Get(po_As_Get(obj, "spec"), "ports");
    char b[512] = "";
    size_t o = 0;
    for (size_t i = 0; ports && i < json_object_array_length(ports) && o < sizeof b; i++) {
      json_object *p = json_object_array_get_idx(ports, i);
      const char *proto = po_As_GetStr(p, "protocol");
      o += (size_t)snprintf(b + o, sizeof b - o, "%s%d/%s", i ? "," : "", json_object_get_int(po_As_Get(p, "port")),
                            proto ? proto : "TCP");
    }
    return json_object_new_string(o ? b : "<none>");
  }
  if (!strcmp(path, "#involved")) {
    json_object *io = po_As_Get(obj, "involvedObject");
    const char *k = po_As_GetStr(io, "kind"), *n = po_As_GetStr(io, "name");
    char b[512];
    snprintf(b, sizeof b, "%s/%s", k ? k : "", n ? n : "");
    for (char *c = b; *c && *c != '/'; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    return json_object_new_string(b);
  }
  return NULL;
}

static json_object *coldef(const char *name, const char *type, const char *format, const char *desc, int priority) {
  json_object *c = json_object_new_object();
  json_object_object_add(c, "name", json_object_new_string(name));
  json_object_object_add(c, "type", json_object_new_string(type));
  json_object_object_add(c, "format", json_object_new_string(format ? format : ""));
  json_object_object_add(c, "description", json_object_new_string(desc ? desc : ""));
  json_object_object_add(c, "priority", json_object_new_int(priority));
  return c;
}

/* apimachinery's HumanDuration, which the real server uses for date cells ("5m", "2d3h"). */
static void human_duration(long long s, char *out, size_t outsz) {
  if (s < -1) { snprintf(out, outsz, "<invalid>"); return; }
  if (s < 0) s = 0;
  long long m = s / 60, h = s / 3600, d = h / 24;
  if (s < 120) snprintf(out, outsz, "%llds", s);
  else if (m < 10) (s % 60) ? snprintf(out, outsz, "%lldm%llds", m, s % 60) : snprintf(out, outsz, "%lldm", m);
  else if (m < 180) snprintf(out, outsz, "%lldm", m);
  else if (h < 8) (m % 60) ? snprintf(out, outsz, "%lldh%lldm", h, m % 60) : snprintf(out, outsz, "%lldh", h);
  else if (h < 48) snprintf(out, outsz, "%lldh", h);
  else if (h < 192) (h % 24) ? snprintf(out, outsz, "%lldd%lldh", d, h % 24) : snprintf(out, outsz, "%lldd", d);
  else if (h < 24LL * 365 * 2) snprintf(out, outsz, "%lldd", d);
  else if (h < 24LL * 365 * 8) snprintf(out, outsz, "%lldy%lldd", d / 365, d % 365);
  else snprintf(out, outsz, "%lldy", d / 365);
}

static json_object *age_cell(const char *ts) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm)) return json_object_new_string(ts);
  char b[32];
  human_duration((long long)(time(NULL) - timegm(&tm)), b, sizeof b);
  return json_object_new_string(b);
}

/* A cell keeps the column's type: strings for string, ages for date, numbers and booleans. */
static json_object *cell(json_object *v, const char *type) {
  if (!v) return NULL;
  if (!strcmp(type, "date") && json_object_is_type(v, json_type_string)) return age_cell(json_object_get_string(v));
  if (!strcmp(type, "integer") && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
    return json_object_new_int64(json_object_get_int64(v));
  if (!strcmp(type, "number") && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
    return json_object_new_double(json_object_get_double(v));
  if (!strcmp(type, "boolean") && json_object_is_type(v, json_type_boolean)) return json_object_new_boolean(json_object_get_boolean(v));
  if (json_object_is_type(v, json_type_string)) return json_object_new_string(json_object_get_string(v));
  return json_object_new_string(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

json_object *po_As_Table(po_As_Resource *r, const char *version, json_object **objs, size_t n, bool include_object) {
  json_object *t = json_object_new_object();
  json_object_object_add(t, "kind", json_object_new_string("Table"));
  json_object_object_add(t, "apiVersion", json_object_new_string("meta.k8s.io/v1"));
  json_object_object_add(t, "metadata", json_object_new_object());
  json_object *defs = json_object_new_array();
  json_object_array_add(defs, coldef("Name", "string", "name",
                                     "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names", 0));
  json_object *crdcols = r->is_crd && r->columns ? po_As_Get(r->columns, version) : NULL;
  const Col *bc = r->is_crd ? (crdcols ? NULL : kDefault) : builtin_cols(r);
  size_t ncols = 0;
  if (crdcols) {
    for (size_t i = 0; i < json_object_array_length(crdcols); i++) {
      json_object *c = json_object_array_get_idx(crdcols, i);
      json_object_array_add(defs, coldef(po_As_GetStr(c, "name") ? po_As_GetStr(c, "name") : "", po_As_GetStr(c, "type") ? po_As_GetStr(c, "type") : "string",
                                         po_As_GetStr(c, "format"), po_As_GetStr(c, "description"),
                                         json_object_get_int(po_As_Get(c, "priority"))));
    }
    ncols = json_object_array_length(crdcols);
  } else {
    for (const Col *c = bc; c->name; c++, ncols++)
      json_object_array_add(defs, coldef(c->name, c->type, NULL, c->name, c->priority));
  }
  json_object_object_add(t, "columnDefinitions", defs);
  json_object *rows = json_object_new_array();
  char *av = po_As_ApiVersion(r, version);
  for (size_t i = 0; i < n; i++) {
    json_object *o = objs[i];
    json_object *row = json_object_new_object();
    json_object *cells = json_object_new_array();
    json_object_array_add(cells, json_object_new_string(po_As_MetaStr(o, "name") ? po_As_MetaStr(o, "name") : ""));
    for (size_t c = 0; c < ncols; c++) {
      const char *path, *type;
      if (crdcols) {
        json_object *cd = json_object_array_get_idx(crdcols, c);
        path = po_As_GetStr(cd, "jsonPath");
        type = po_As_GetStr(cd, "type");
      } else {
        path = bc[c].path;
        type = bc[c].type;
      }
      if (!type) type = "string";
      json_object *v = !path ? NULL : path[0] == '#' ? special(o, path) : po_As_JsonPath(o, path);
      json_object_array_add(cells, cell(v, type));
      json_object_put(v);
    }
    json_object_object_add(row, "cells", cells);
    json_object *ro;
    if (include_object) {
      char *s = po_As_Serialize(o, av);
      ro = json_tokener_parse(s);
      free(s);
    } else {
      ro = json_object_new_object();
      json_object_object_add(ro, "kind", json_object_new_string("PartialObjectMetadata"));
      json_object_object_add(ro, "apiVersion", json_object_new_string("meta.k8s.io/v1"));
      json_object *meta = po_As_Copy(po_As_Get(o, "metadata"));
      json_object_object_del(meta, "managedFields");
      json_object_object_add(ro, "metadata", meta);
    }
    json_object_object_add(row, "object", ro);
    json_object_array_add(rows, row);
  }
  free(av);
  json_object_object_add(t, "rows", rows);
  return t;
}
