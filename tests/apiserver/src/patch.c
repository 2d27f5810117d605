/* Patches: JSON merge patch (RFC 7386), an approximation of strategic merge patch for the
 * built-in kinds, and JSON patch (RFC 6902). Server-side apply lives in apply.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

json_object *po_As_MergePatch(json_object *target, json_object *patch) {
  if (!patch || !json_object_is_type(patch, json_type_object)) {
    json_object_put(target);
    return po_As_Copy(patch);
  }
  if (!target || !json_object_is_type(target, json_type_object)) {
    json_object_put(target);
    target = json_object_new_object();
  }
  json_object_object_foreach(patch, k, v) {
    if (!v) {
      json_object_object_del(target, k);
      continue;
    }
    json_object *cur = json_object_get(po_As_Get(target, k));
    json_object_object_add(target, k, po_As_MergePatch(cur, v));
  }
  return target;
}

/* ---- strategic merge patch (approximation) ------------------------------------------------ */

static const char *merge_key_of(json_object *elem) {
  static const char *keys[] = {"name", "port", "containerPort", "type", "mountPath", "ip"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (po_As_Get(elem, keys[i])) return keys[i];
  return NULL;
}

static bool same_key(json_object *a, json_object *b, const char *key) {
  json_object *x = po_As_Get(a, key), *y = po_As_Get(b, key);
  return x && y && po_As_Equal(x, y);
}

static json_object *smp(json_object *target, json_object *patch);

static json_object *smp_list(json_object *target, json_object *patch, const char *field) {
  size_t n = json_object_array_length(patch);
  json_object *first = n ? json_object_array_get_idx(patch, 0) : NULL;
  const char *key = first && json_object_is_type(first, json_type_object) ? merge_key_of(first) : NULL;
  if (!target || !json_object_is_type(target, json_type_array)) {
    json_object_put(target);
    target = json_object_new_array();
    if (!key) {
      json_object_put(target);
      return po_As_Copy(patch);
    }
  }
  if (!key) {
    if (strcmp(field, "finalizers") == 0) { /* a set-like list */
      for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(patch, i);
        bool have = false;
        for (size_t j = 0; j < json_object_array_length(target); j++)
          if (po_As_Equal(json_object_array_get_idx(target, j), v)) have = true;
        if (!have) json_object_array_add(target, po_As_Copy(v));
      }
      return target;
    }
    json_object_put(target);
    return po_As_Copy(patch);
  }
  for (size_t i = 0; i < n; i++) {
    json_object *pe = json_object_array_get_idx(patch, i);
    const char *directive = po_As_GetStr(pe, "$patch");
    size_t j, m = json_object_array_length(target);
    for (j = 0; j < m; j++)
      if (same_key(json_object_array_get_idx(target, j), pe, key)) break;
    if (directive && strcmp(directive, "delete") == 0) {
      if (j < m) json_object_array_del_idx(target, j, 1);
      continue;
    }
    if (j < m) {
      json_object *cur = json_object_get(json_object_array_get_idx(target, j));
      json_object_array_put_idx(target, j, smp(cur, pe));
    } else {
      json_object_array_add(target, smp(NULL, pe));
    }
  }
  return target;
}

static json_object *smp(json_object *target, json_object *patch) {
  if (!patch || !json_object_is_type(patch, json_type_object)) {
    json_object_put(target);
    return po_As_Copy(patch);
  }
  const char *directive = po_As_GetStr(patch, "$patch");
  if (directive && strcmp(directive, "replace") == 0) {
    json_object_put(target);
    json_object *c = po_As_Copy(patch);
    json_object_object_del(c, "$patch");
    return c;
  }
  if (!target || !json_object_is_type(target, json_type_object)) {
    json_object_put(target);
    target = json_object_new_object();
  }
  json_object_object_foreach(patch, k, v) {
    if (k[0] == '$') {
      const char *pfx = "$deleteFromPrimitiveList/";
      if (strncmp(k, pfx, strlen(pfx)) == 0 && v && json_object_is_type(v, json_type_array)) {
        json_object *list = po_As_Get(target, k + strlen(pfx));
        for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(v); i++)
          for (size_t j = json_object_array_length(list); j-- > 0;)
            if (po_As_Equal(json_object_array_get_idx(list, j), json_object_array_get_idx(v, i)))
              json_object_array_del_idx(list, j, 1);
      }
      continue; /* $setElementOrder, $retainKeys: ordering and retention are approximated */
    }
    if (!v) {
      json_object_object_del(target, k);
      continue;
    }
    json_object *cur = json_object_get(po_As_Get(target, k));
    if (json_object_is_type(v, json_type_array))
      json_object_object_add(target, k, smp_list(cur, v, k));
    else
      json_object_object_add(target, k, smp(cur, v));
  }
  return target;
}

json_object *po_As_StrategicPatch(json_object *target, json_object *patch) { return smp(target, patch); }

/* ---- JSON patch -------------------------------------------------------------------------- */

/* Resolve a JSON pointer to its parent container and the last token (unescaped). */
static json_object *resolve_parent(json_object *root, const char *ptr, char *last, size_t lastsz) {
  if (ptr[0] != '/') return NULL;
  json_object *cur = root;
  const char *p = ptr + 1;
  for (;;) {
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char tok[512];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < sizeof tok; i++) {
      if (p[i] == '~' && i + 1 < n && p[i + 1] == '1') tok[o++] = '/', i++;
      else if (p[i] == '~' && i + 1 < n && p[i + 1] == '0') tok[o++] = '~', i++;
      else tok[o++] = p[i];
    }
    tok[o] = 0;
    if (!e) {
      snprintf(last, lastsz, "%s", tok);
      return cur;
    }
    if (json_object_is_type(cur, json_type_object)) cur = po_As_Get(cur, tok);
    else if (json_object_is_type(cur, json_type_array)) {
      char *end;
      long idx = strtol(tok, &end, 10);
      if (*end || idx < 0 || (size_t)idx >= json_object_array_length(cur)) return NULL;
      cur = json_object_array_get_idx(cur, (size_t)idx);
    } else return NULL;
    if (!cur) return NULL;
    p = e + 1;
  }
}

static bool array_index(json_object *arr, const char *tok, bool allow_end, size_t *idx) {
  size_t n = json_object_array_length(arr);
  if (allow_end && strcmp(tok, "-") == 0) {
    *idx = n;
    return true;
  }
  char *end;
  long v = strtol(tok, &end, 10);
  if (!tok[0] || *end || v < 0 || (size_t)v > n || (!allow_end && (size_t)v == n)) return false;
  *idx = (size_t)v;
  return true;
}

static json_object *ptr_get(json_object *root, const char *ptr) {
  if (!ptr[0]) return root;
  char last[512];
  json_object *parent = resolve_parent(root, ptr, last, sizeof last);
  if (!parent) return NULL;
  if (json_object_is_type(parent, json_type_object)) return po_As_Get(parent, last);
  size_t i;
  if (json_object_is_type(parent, json_type_array) && array_index(parent, last, false, &i))
    return json_object_array_get_idx(parent, i);
  return NULL;
}

static bool ptr_remove(json_object *root, const char *ptr, json_object **removed) {
  char last[512];
  json_object *parent = resolve_parent(root, ptr, last, sizeof last);
  if (!parent) return false;
  if (json_object_is_type(parent, json_type_object)) {
    json_object *v = po_As_Get(parent, last);
    if (!v && !json_object_object_get_ex(parent, last, NULL)) return false;
    if (removed) *removed = json_object_get(v);
    json_object_object_del(parent, last);
    return true;
  }
  size_t i;
  if (json_object_is_type(parent, json_type_array) && array_index(parent, last, false, &i)) {
    if (removed) *removed = json_object_get(json_object_array_get_idx(parent, i));
    json_object_array_del_idx(parent, i, 1);
    return true;
  }
  return false;
}

static bool ptr_add(json_object *root, const char *ptr, json_object *value /* taken */) {
  char last[512];
  json_object *parent = resolve_parent(root, ptr, last, sizeof last);
  if (!parent) {
    json_object_put(value);
    return false;
  }
  if (json_object_is_type(parent, json_type_object)) {
    json_object_object_add(parent, last, value);
    return true;
  }
  size_t i;
  if (json_object_is_type(parent, json_type_array) && array_index(parent, last, true, &i)) {
    if (i == json_object_array_length(parent)) json_object_array_add(parent, value);
    else { /* json-c 0.16 has no insert: shift the tail right by one */
      size_t n = json_object_array_length(parent);
      json_object_array_add(parent, NULL);
      for (size_t k = n; k > i; k--)
        json_object_array_put_idx(parent, k, json_object_get(json_object_array_get_idx(parent, k - 1)));
      json_object_array_put_idx(parent, i, value);
    }
    return true;
  }
  json_object_put(value);
  return false;
}

json_object *po_As_JsonPatch(json_object *target, json_object *ops, char *msg, size_t msgsz) {
  if (!ops || !json_object_is_type(ops, json_type_array)) {
    snprintf(msg, msgsz, "json patch must be an array of operations");
    json_object_put(target);
    return NULL;
  }
  for (size_t i = 0; i < json_object_array_length(ops); i++) {
    json_object *op = json_object_array_get_idx(ops, i);
    const char *name = po_As_GetStr(op, "op"), *path = po_As_GetStr(op, "path");
    const char *from = po_As_GetStr(op, "from");
    json_object *value = po_As_Get(op, "value");
    bool ok = name && path;
    if (!ok) {
      snprintf(msg, msgsz, "operation %zu: \"op\" and \"path\" are required", i);
    } else if (strcmp(name, "add") == 0) {
      ok = path[0] ? ptr_add(target, path, po_As_Copy(value)) : false;
      if (!path[0]) {
        json_object_put(target);
        target = po_As_Copy(value);
        ok = true;
      }
    } else if (strcmp(name, "remove") == 0) {
      ok = ptr_remove(target, path, NULL);
    } else if (strcmp(name, "replace") == 0) {
      ok = ptr_remove(target, path, NULL) && ptr_add(target, path, po_As_Copy(value));
    } else if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
      json_object *v = NULL;
      if (!from) ok = false;
      else if (name[0] == 'm') ok = ptr_remove(target, from, &v);
      else {
        v = po_As_Copy(ptr_get(target, from));
        ok = v != NULL || ptr_get(target, from) != NULL;
      }
      ok = ok && ptr_add(target, path, v);
    } else if (strcmp(name, "test") == 0) {
      json_object *cur = ptr_get(target, path);
      if (!po_As_Equal(cur, value)) {
        snprintf(msg, msgsz, "testing value %s failed", path);
        json_object_put(target);
        return NULL;
      }
    } else {
      snprintf(msg, msgsz, "Unexpected kind: %s", name);
      ok = false;
    }
    if (!ok) {
      if (!msg[0]) snprintf(msg, msgsz, "the server rejected our request due to an error in our request: %s operation does not apply: doc is missing path: \"%s\"", name, path ? path : "");
      json_object_put(target);
      return NULL;
    }
  }
  return target;
}
