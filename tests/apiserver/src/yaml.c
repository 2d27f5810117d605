/* YAML (libyaml events) to json-c, with the YAML 1.2 core schema's plain-scalar typing, which is
 * what Kubernetes' sigs.k8s.io/yaml does for manifests. Anchors and aliases are supported. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "apiserver.h"

typedef struct Anchor {
  char *name;
  json_object *value;
} Anchor;

typedef struct Ctx {
  yaml_parser_t parser;
  char *msg;
  size_t msgsz;
  Anchor anchors[64];
  int nanchors;
} Ctx;

static void remember(Ctx *c, const yaml_char_t *anchor, json_object *v) {
  if (!anchor || c->nanchors >= 64) return;
  c->anchors[c->nanchors].name = strdup((const char *)anchor);
  c->anchors[c->nanchors].value = json_object_get(v);
  c->nanchors++;
}

static json_object *plain_scalar(const char *s, size_t n) {
  if (n == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0)
    return NULL;
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return json_object_new_boolean(1);
  if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return json_object_new_boolean(0);
  char *end;
  errno = 0;
  if ((s[0] >= '0' && s[0] <= '9') || ((s[0] == '-' || s[0] == '+') && n > 1)) {
    long long i = strtoll(s, &end, 10);
    if (*end == 0 && errno == 0) return json_object_new_int64(i);
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
      i = strtoll(s + 2, &end, s[1] == 'x' ? 16 : 8);
      if (*end == 0) return json_object_new_int64(i);
    }
    errno = 0;
    double d = strtod(s, &end);
    if (*end == 0 && errno == 0 && strpbrk(s, "0123456789")) return json_object_new_double(d);
  }
  if (!strcmp(s, ".inf") || !strcmp(s, ".Inf")) return json_object_new_double(1e308 * 10);
  return json_object_new_string_len(s, (int)n);
}

static bool parse_node(Ctx *c, yaml_event_t *ev, json_object **out);

static bool next(Ctx *c, yaml_event_t *ev) {
  if (!yaml_parser_parse(&c->parser, ev)) {
    snprintf(c->msg, c->msgsz, "yaml: line %zu column %zu: %s", c->parser.problem_mark.line + 1,
             c->parser.problem_mark.column + 1, c->parser.problem ? c->parser.problem : "syntax error");
    return false;
  }
  return true;
}

static bool parse_node(Ctx *c, yaml_event_t *ev, json_object **out) {
  *out = NULL;
  switch (ev->type) {
    case YAML_SCALAR_EVENT: {
      const char *s = (const char *)ev->data.scalar.value;
      size_t n = ev->data.scalar.length;
      const char *tag = (const char *)ev->data.scalar.tag;
      if ((tag && strcmp(tag, YAML_STR_TAG) == 0) || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        *out = json_object_new_string_len(s, (int)n);
      else
        *out = plain_scalar(s, n);
      remember(c, ev->data.scalar.anchor, *out);
      return true;
    }
    case YAML_ALIAS_EVENT:
      for (int i = 0; i < c->nanchors; i++)
        if (strcmp(c->anchors[i].name, (const char *)ev->data.alias.anchor) == 0) {
          *out = po_As_Copy(c->anchors[i].value);
          return true;
        }
      snprintf(c->msg, c->msgsz, "yaml: unknown anchor \"%s\"", ev->data.alias.anchor);
      return false;
    case YAML_SEQUENCE_START_EVENT: {
      json_object *arr = json_object_new_array();
      const yaml_char_t *anchor = ev->data.sequence_start.anchor;
      for (;;) {
        yaml_event_t e;
        if (!next(c, &e)) { json_object_put(arr); return false; }
        if (e.type == YAML_SEQUENCE_END_EVENT) { yaml_event_delete(&e); break; }
        json_object *v;
        bool ok = parse_node(c, &e, &v);
        yaml_event_delete(&e);
        if (!ok) { json_object_put(arr); return false; }
        json_object_array_add(arr, v);
      }
      remember(c, anchor, arr);
      *out = arr;
      return true;
    }
    case YAML_MAPPING_START_EVENT: {
      json_object *obj = json_object_new_object();
      const yaml_char_t *anchor = ev->data.mapping_start.anchor;
      for (;;) {
        yaml_event_t k;
        if (!next(c, &k)) { json_object_put(obj); return false; }
        if (k.type == YAML_MAPPING_END_EVENT) { yaml_event_delete(&k); break; }
        if (k.type != YAML_SCALAR_EVENT && k.type != YAML_ALIAS_EVENT) {
          /* JSON objects have string keys; Kubernetes' YAML decoder rejects the rest too */
          snprintf(c->msg, c->msgsz, "yaml: line %zu: mapping keys must be scalars", k.start_mark.line + 1);
          yaml_event_delete(&k);
          json_object_put(obj);
          return false;
        }
        json_object *key;
        bool ok = parse_node(c, &k, &key);
        yaml_event_delete(&k);
        if (!ok) { json_object_put(obj); return false; }
        if (key && (json_object_is_type(key, json_type_object) || json_object_is_type(key, json_type_array))) {
          snprintf(c->msg, c->msgsz, "yaml: mapping keys must be scalars");
          json_object_put(key);
          json_object_put(obj);
          return false;
        }
        yaml_event_t v;
        if (!next(c, &v)) { json_object_put(key); json_object_put(obj); return false; }
        json_object *val;
        ok = parse_node(c, &v, &val);
        yaml_event_delete(&v);
        if (!ok) { json_object_put(key); json_object_put(obj); return false; }
        const char *ks = key ? json_object_get_string(key) : "null";
        if (strcmp(ks, "<<") == 0 && val && json_object_is_type(val, json_type_object)) {
          json_object_object_foreach(val, mk, mv) {
            if (!po_As_Get(obj, mk)) json_object_object_add(obj, mk, json_object_get(mv));
          }
          json_object_put(val);
        } else {
          json_object_object_add(obj, ks, val);
        }
        json_object_put(key);
      }
      remember(c, anchor, obj);
      *out = obj;
      return true;
    }
    default:
      snprintf(c->msg, c->msgsz, "yaml: unexpected event %d", (int)ev->type);
      return false;
  }
}

json_object *po_As_Yaml_Parse(const char *text, size_t len, char *msg, size_t msgsz) {
  Ctx c = {.msg = msg, .msgsz = msgsz};
  yaml_parser_initialize(&c.parser);
  yaml_parser_set_input_string(&c.parser, (const unsigned char *)text, len);
  json_object *docs = json_object_new_array();
  bool ok = true;
  for (;;) {
    yaml_event_t ev;
    if (!next(&c, &ev)) { ok = false; break; }
    yaml_event_type_t t = ev.type;
    if (t == YAML_STREAM_END_EVENT) { yaml_event_delete(&ev); break; }
    if (t == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&ev);
      yaml_event_t root;
      if (!next(&c, &root)) { ok = false; break; }
      json_object *doc = NULL;
      if (root.type != YAML_DOCUMENT_END_EVENT) {
        ok = parse_node(&c, &root, &doc);
        yaml_event_delete(&root);
        if (!ok) break;
        yaml_event_t end;
        if (!next(&c, &end)) { json_object_put(doc); ok = false; break; }
        yaml_event_delete(&end);
      } else {
        yaml_event_delete(&root);
      }
      if (doc) json_object_array_add(docs, doc); /* empty documents are skipped, as kubectl does */
      continue;
    }
    yaml_event_delete(&ev);
  }
  for (int i = 0; i < c.nanchors; i++) {
    free(c.anchors[i].name);
    json_object_put(c.anchors[i].value);
  }
  yaml_parser_delete(&c.parser);
  if (!ok) {
    json_object_put(docs);
    return NULL;
  }
  return docs;
}
