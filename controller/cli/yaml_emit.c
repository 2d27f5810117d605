/* json-c trees out as YAML through libyaml's emitter (which does the quoting and escaping
 * right), keys sorted so a rendered diff in a pull request shows only real changes. Strings some
 * YAML 1.1 or 1.2 reader would take for something else ("true", "y", "1.5", "0o17", "1:30",
 * "2001-12-14", "=", "null", "") are quoted (yaml_plain.c). */
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "gitops.h"

enum { kMaxDepth = 128 };

static int write_out(void *data, unsigned char *buf, size_t size) {
  return fwrite(buf, 1, size, (FILE *)data) == size;
}

/* `len` bytes of text, NULs included: a string may hold U+0000, which libyaml writes as "\0" in a
 * double-quoted scalar (a NUL is not printable, so it never leaves a scalar plain). */
static bool scalar_n(yaml_emitter_t *e, const char *text, size_t len, bool plain_ok) {
  yaml_event_t ev;
  if (len > INT_MAX) return false;
  /* An initializer copies its strings and fails when memory runs out: the event is then
   * unset, and emitting it would read garbage. */
  return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, plain_ok, 1,
                                      plain_ok ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE) &&
         yaml_emitter_emit(e, &ev);
}

static bool scalar(yaml_emitter_t *e, const char *text, bool plain_ok) {
  return scalar_n(e, text, strlen(text), plain_ok);
}

static int by_key(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static bool node(yaml_emitter_t *e, json_object *j, int depth) {
  yaml_event_t ev;
  if (depth > kMaxDepth) return false;
  switch (json_object_get_type(j)) {
    case json_type_null: return scalar(e, "null", true);
    case json_type_boolean: return scalar(e, json_object_get_boolean(j) ? "true" : "false", true);
    case json_type_int:
    case json_type_double: {
      const char *t = json_object_to_json_string(j); /* allocates its buffer: NULL when out of memory */
      return t && scalar(e, t, true);
    }
    case json_type_string: {
      const char *s = json_object_get_string(j);
      size_t len = (size_t)json_object_get_string_len(j);
      return scalar_n(e, s, len, len == strlen(s) && po_Cli_YamlPlainIsString(s));
    }
    case json_type_array: {
      if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
          !yaml_emitter_emit(e, &ev)) {
        return false;
      }
      for (size_t i = 0; i < json_object_array_length(j); i++) {
        if (!node(e, json_object_array_get_idx(j, i), depth + 1)) return false;
      }
      return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    case json_type_object: {
      size_t n = (size_t)json_object_object_length(j), k = 0;
      const char **keys = malloc((n ? n : 1) * sizeof *keys);
      if (!keys) return false;
      json_object_object_foreach(j, key, val) {
        (void)val;
        keys[k++] = key;
      }
      qsort(keys, n, sizeof *keys, by_key);
      bool ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) &&
                yaml_emitter_emit(e, &ev);
      for (size_t i = 0; ok && i < n; i++) {
        json_object *v = NULL;
        json_object_object_get_ex(j, keys[i], &v);
        ok = scalar(e, keys[i], po_Cli_YamlPlainIsString(keys[i])) && node(e, v, depth + 1);
      }
      free(keys);
      if (!ok) return false;
      return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
  }
  return false;
}

bool po_Cli_EmitYaml(json_object *const *objects, size_t n, FILE *out) {
  yaml_emitter_t e;
  yaml_event_t ev;
  if (!yaml_emitter_initialize(&e)) return false;
  yaml_emitter_set_output(&e, write_out, out);
  yaml_emitter_set_unicode(&e, 1);
  yaml_emitter_set_width(&e, -1); /* long strings stay on one line: easier to diff */
  bool ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev);
  for (size_t i = 0; ok && i < n; i++) {
    ok = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) && yaml_emitter_emit(&e, &ev) &&
         node(&e, objects[i], 0) && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev);
  }
  if (ok) {
    ok = yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) && yaml_emitter_flush(&e);
  }
  yaml_emitter_delete(&e);
  return ok;
}
