/* The envelope both admission routes share: an AdmissionReview v1 request body, bounded before it
 * is decoded, and exactly one JSON value. */
#include "review.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"

/* Memory goes by the number of JSON values, not bytes: json-c spends about half a kilobyte on an
 * empty object, so a 3 MiB body of `{},{},...` would cost over 800 MB (seen). One linear scan
 * (strings skipped) counts them before anything is allocated; a review over the bounds is
 * refused. The bounds hold the largest objects the limits admit (10,000 patches in one
 * ServiceDefaults, in object and oldObject) with room to spare. */
enum { kMaxContainers = 100000, kMaxValues = 400000 };

void po_Review_Count(const char *body, size_t len, size_t *containers_out, size_t *values_out) {
  size_t containers = 0, values = 0;
  bool in_string = false, in_scalar = false;
  for (size_t i = 0; i < len; i++) {
    char c = body[i];
    if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') in_string = false;
      continue;
    }
    bool scalar_char = !strchr("{}[],: \t\r\n\"", c);
    if (scalar_char && !in_scalar) values++;
    in_scalar = scalar_char;
    if (c == '"') {
      in_string = true;
      values++; /* keys counted too: each is an allocation as well */
    } else if (c == '{' || c == '[') {
      containers++;
      values++;
    }
  }
  *containers_out = containers;
  *values_out = values;
}

static bool too_complex(const char *body, size_t len, char *error, size_t size) {
  size_t containers, values;
  po_Review_Count(body, len, &containers, &values);
  if (containers <= kMaxContainers && values <= kMaxValues) return false;
  snprintf(error, size,
           "the AdmissionReview holds %zu JSON objects and arrays and %zu values in all; at most %d and %d are "
           "decoded (no PropertyOverride or Consul object within the per-object limits comes near them)",
           containers, values, kMaxContainers, kMaxValues);
  return true;
}

json_object *po_Review_Parse(const char *body, size_t len, int *http_status, char *error, size_t size) {
  *http_status = 200;
  if (too_complex(body, len, error, size)) {
    *http_status = 413;
    return NULL;
  }
  json_tokener *tok = json_tokener_new_ex(64);
  json_object *review = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
  bool bad_json = !review || json_tokener_get_error(tok) != json_tokener_success;
  /* One JSON value and nothing after it but whitespace: a body with more is not what the API
   * server sends, and accepting it would decide on a prefix. */
  size_t end = tok ? json_tokener_get_parse_end(tok) : 0;
  if (tok) json_tokener_free(tok);
  while (!bad_json && end < len && strchr(" \t\r\n", body[end]) && body[end]) end++;
  if (end != len) bad_json = true;
  json_object *req = po_Json_Get(review, "request");
  json_object *uidv = po_Json_Get(req, "uid");
  const char *uid = po_Json_String(req, "uid");
  /* A uid with a NUL in it would be echoed cut short: the API server would not match it. */
  bool bad_uid = uid && strlen(uid) != (size_t)json_object_get_string_len(uidv);
  const char *api = po_Json_String(review, "apiVersion"), *kind = po_Json_String(review, "kind");
  if (bad_json || bad_uid || !req || !uid || !api || strcmp(api, "admission.k8s.io/v1") != 0 || !kind ||
      strcmp(kind, "AdmissionReview") != 0) {
    *http_status = 400;
    snprintf(error, size, "%s",
             bad_json  ? "the body is not one JSON value (malformed, or followed by more than whitespace)"
             : bad_uid ? "request.uid contains a NUL character"
                       : "the body is not an admission.k8s.io/v1 AdmissionReview request with a uid");
    json_object_put(review);
    return NULL;
  }
  return review;
}

json_object *po_Review_Wrap(json_object *response) {
  json_object *out = json_object_new_object();
  json_object_object_add(out, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
  json_object_object_add(out, "kind", json_object_new_string("AdmissionReview"));
  json_object_object_add(out, "response", response);
  return out;
}
