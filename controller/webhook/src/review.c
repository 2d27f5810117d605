/* The envelope both admission routes share: an AdmissionReview v1 request body, bounded before it
 * is decoded, and exactly one JSON value. */
#include "review.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"

/* Memory goes by the number of JSON values, not bytes: json-c spends about half a kilobyte on an
 * empty object, so a 3 MiB body of `{},{},...` would cost over 800 MB (seen). One linear scan
 * (strings skipped) counts them before anything is allocated; a review over the bounds is
 * refused. The bounds hold the largest objects the limits admit (10,000 patches in one
 * ServiceDefaults, in object and oldObject) with room to spare.
 *
 * The count is only right for the JSON it knows, so it refuses the rest, and the decoder is
 * json-c's strict tokener: its default one also takes '...' strings and comments, and a '"'
 * inside one of those hid a million objects from the count (priced 15 MiB, held 794 MiB). Raw
 * control characters inside strings (RFC 8259 forbids them; json-c's strict mode still takes
 * them) are refused here: each would be echoed as a six-byte \u00XX escape. */
enum { kMaxContainers = 100000, kMaxValues = 400000 };
/* request.uid is a UUID (36 bytes) from the API server; it is echoed in the answer. */
enum { kMaxUid = 128 };

static bool scalar_char(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '+' ||
         c == '.';
}

/* Whether the string of body[from, to) is the key "value" or "Value" (a patch's value). */
static bool value_key(const char *s, size_t len) {
  return len == 5 && (!memcmp(s, "value", 5) || !memcmp(s, "Value", 5));
}

static int hex(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string with a \u escape, short enough to be a key or a kind name (kMaxEscapedName bytes as
 * written): decoded into `out` (ASCII as itself, anything else as 0x80), its length returned. */
enum { kMaxEscapedName = 96 };
static size_t unescape(const char *p, size_t len, char *out) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (p[i] != '\\' || i + 1 >= len) {
      out[n++] = p[i];
      continue;
    }
    char e = p[++i];
    if (e == 'u' && i + 4 < len) {
      int v = 0;
      for (int k = 1; k <= 4; k++) v = hex(p[i + k]) < 0 || v < 0 ? -1 : v * 16 + hex(p[i + k]);
      out[n++] = v >= 0 && v < 0x80 ? (char)v : (char)0x80;
      i += 4;
    } else {
      out[n++] = e; /* \" \\ \/ as themselves; \n and the like are no letters either way */
    }
  }
  return n;
}

void po_Review_Count(const char *body, size_t len, po_ReviewCount *out) {
  size_t containers = 0, values = 0, in_containers = 0, in_values = 0;
  size_t depth = 0, value_depth = SIZE_MAX; /* inside a patch value while depth > value_depth */
  size_t string_start = 0;
  bool in_string = false, in_scalar = false, last_value_key = false, after_value_key = false, string_u = false;
  *out = (po_ReviewCount){0};
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)body[i];
    if (in_string) {
      if (c == '\\') {
        if (i + 1 < len && body[i + 1] == 'u') string_u = true;
        i++;
      } else if (c == '"') {
        in_string = false;
        last_value_key = value_key(body + string_start, i - string_start);
        /* Only a \u escape can spell a letter: "v\u0061lue", "Envoy\u0046ilter". */
        if (string_u && i - string_start <= kMaxEscapedName) {
          char d[kMaxEscapedName];
          size_t n = unescape(body + string_start, i - string_start, d);
          last_value_key = value_key(d, n);
          for (size_t k = 0; k + 5 <= n && !out->escaped_envoy; k++) out->escaped_envoy = !memcmp(d + k, "Envoy", 5);
        }
      } else if (c < 0x20) {
        out->bad = "a raw control character inside a string (RFC 8259: write it escaped, \\u00XX)";
        out->bad_at = i;
        out->bad_byte = c;
        return;
      }
      continue;
    }
    bool scalar = scalar_char(c);
    bool starts = (scalar && !in_scalar) || c == '"' || c == '{' || c == '[';
    in_scalar = scalar;
    if (starts) {
      values++; /* keys counted too: each is an allocation as well */
      bool inside = value_depth != SIZE_MAX || after_value_key;
      in_values += inside;
      if (c == '{' || c == '[') {
        containers++;
        in_containers += inside;
        if (after_value_key && value_depth == SIZE_MAX) value_depth = depth;
        depth++;
      }
      after_value_key = false;
      if (c == '"') {
        in_string = true;
        string_u = false;
        string_start = i + 1;
      }
      continue;
    }
    if (scalar) continue;
    if (c == '}' || c == ']') {
      if (depth) depth--;
      if (depth == value_depth) value_depth = SIZE_MAX;
    } else if (c == ':') {
      after_value_key = last_value_key;
    } else if (!strchr(",: \t\r\n", c) || c == '\0') {
      out->bad = c == '\'' ? "a single-quoted string (JSON strings are double-quoted)"
                 : c == '/' ? "a comment (JSON has none)"
                            : "a character JSON does not allow outside a string";
      out->bad_at = i;
      out->bad_byte = c;
      return;
    }
    if (c != ':') last_value_key = false;
  }
  out->containers = containers;
  out->values = values;
  out->in_value_containers = in_containers;
  out->in_value_values = in_values;
}

/* The refusal's HTTP status beside its code (po_CtlStatus_Set clears it); false. */
static bool answer(po_CtlStatus *st, long http_status) {
  st->http_status = http_status;
  return false;
}

json_object *po_Review_Parse(const char *body, size_t len, po_CtlStatus *st) {
  po_CtlStatus local;
  if (!st) st = &local; /* the caller's may be NULL, as everywhere */
  po_CtlStatus_Clear(st);
  st->http_status = 200;
  po_ReviewCount n;
  po_Review_Count(body, len, &n);
  if (n.bad) {
    po_CtlStatus_Set(st, kPo_Ctl_BadRequest, "the body is not JSON (RFC 8259): %s at byte %zu (0x%02x)", n.bad, n.bad_at,
                     n.bad_byte);
    answer(st, 400);
    return NULL;
  }
  if (n.containers > kMaxContainers || n.values > kMaxValues) {
    po_CtlStatus_Set(st, kPo_Ctl_RequestTooLarge,
             "the AdmissionReview holds %zu JSON objects and arrays and %zu values in all; at most %d and %d are "
             "decoded (no PropertyOverride or Consul object within the per-object limits comes near them)",
             n.containers, n.values, kMaxContainers, kMaxValues);
    answer(st, 413);
    return NULL;
  }
  json_tokener *tok = json_tokener_new_ex(64);
  bool have_tok = tok != NULL;
  if (tok) json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  json_object *review = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
  bool bad_json = !review || json_tokener_get_error(tok) != json_tokener_success;
  /* One JSON value and nothing after it but whitespace: a body with more is not what the API
   * server sends, and accepting it would decide on a prefix. */
  size_t end = tok ? json_tokener_get_parse_end(tok) : 0;
  enum json_tokener_error jerr = tok ? json_tokener_get_error(tok) : json_tokener_error_parse_eof;
  if (tok) json_tokener_free(tok);
  while (!bad_json && end < len && strchr(" \t\r\n", body[end]) && body[end]) end++;
  if (end != len) bad_json = true;
  if (bad_json) {
    po_CtlStatus_Set(st, kPo_Ctl_BadRequest,
                     "the body is not one JSON value: %s at byte %zu (malformed, or followed by more than whitespace)",
                     !have_tok ? "out of memory" : jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                                                               : "more after the value",
                     end);
    answer(st, 400);
    json_object_put(review);
    return NULL;
  }
  json_object *req = po_Json_Get(review, "request");
  json_object *uidv = po_Json_Get(req, "uid");
  const char *uid = po_Json_String(req, "uid");
  size_t uid_len = uid ? (size_t)json_object_get_string_len(uidv) : 0;
  /* A uid with a NUL in it would be echoed cut short: the API server would not match it. */
  bool bad_uid = uid && strlen(uid) != uid_len;
  bool long_uid = uid_len > kMaxUid;
  const char *api = po_Json_String(review, "apiVersion"), *kind = po_Json_String(review, "kind");
  if (bad_uid || long_uid || !req || !uid || !api || strcmp(api, "admission.k8s.io/v1") != 0 || !kind ||
      strcmp(kind, "AdmissionReview") != 0) {
    if (long_uid)
      po_CtlStatus_Set(st, kPo_Ctl_BadRequest,
                       "request.uid is %zu bytes: the API server's uids are UUIDs (36 bytes); at most %d are taken",
                       uid_len, kMaxUid);
    else
      po_CtlStatus_Set(st, kPo_Ctl_BadRequest, "%s",
                       bad_uid ? "request.uid contains a NUL character"
                               : "the body is not an admission.k8s.io/v1 AdmissionReview request with a uid");
    answer(st, 400);
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

bool po_Review_By(json_object *request, const char *username) {
  const char *user = po_Json_String(po_Json_Get(request, "userInfo"), "username");
  return username && *username && user && strcmp(user, username) == 0;
}
