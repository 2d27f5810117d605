/* Small helpers on json-c objects, time, uuids and replies. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "apiserver.h"

po_As_Server po_as = {.mu = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

void po_As_Log(int level, const char *fmt, ...) {
  if (level > po_as.log_level) return;
  static const char *names[] = {"error", "warn", "info", "debug"};
  char ts[32];
  po_As_Now(ts);
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s po-apiserver %s: %s\n", ts, names[level], line);
}

json_object *po_As_Get(json_object *o, const char *field) {
  json_object *v = NULL;
  if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, field, &v)) return v;
  return NULL;
}

const char *po_As_GetStr(json_object *o, const char *field) {
  json_object *v = po_As_Get(o, field);
  return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

json_object *po_As_Meta(json_object *o) {
  json_object *m = po_As_Get(o, "metadata");
  if (!m || !json_object_is_type(m, json_type_object)) {
    m = json_object_new_object();
    json_object_object_add(o, "metadata", m);
  }
  return m;
}

const char *po_As_MetaStr(json_object *o, const char *field) {
  return po_As_GetStr(po_As_Get(o, "metadata"), field);
}

json_object *po_As_Copy(json_object *o) {
  json_object *c = NULL;
  if (!o) return NULL;
  if (json_object_deep_copy(o, &c, NULL) != 0) return NULL;
  return c;
}

bool po_As_Equal(json_object *a, json_object *b) { return json_object_equal(a, b) != 0; }

char *po_As_Strdup(const char *s) { return s ? strdup(s) : NULL; }

char *po_As_Printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

void po_As_Now(char out[32]) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void po_As_Uuid(char out[37]) {
  unsigned char b[16];
  if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
    for (int i = 0; i < 16; i++) b[i] = (unsigned char)rand();
  }
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
           b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

char *po_As_ApiVersion(const po_As_Resource *r, const char *version) {
  if (!r->group[0]) return po_As_Strdup(version);
  return po_As_Printf("%s/%s", r->group, version);
}

/* The stored object's apiVersion is swapped for the requested one only while it is printed:
 * objects are stored once for every served version (conversion strategy None). */
char *po_As_Serialize(json_object *obj, const char *api_version) {
  const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
  const char *cur = po_As_GetStr(obj, "apiVersion");
  if (!api_version || !cur || strcmp(cur, api_version) == 0)
    return strdup(json_object_to_json_string_ext(obj, flags));
  json_object *saved = json_object_get(po_As_Get(obj, "apiVersion"));
  json_object_object_add(obj, "apiVersion", json_object_new_string(api_version));
  char *s = strdup(json_object_to_json_string_ext(obj, flags));
  json_object_object_add(obj, "apiVersion", saved);
  return s;
}

char *po_As_Base64(const unsigned char *data, size_t n) {
  static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = malloc(4 * ((n + 2) / 3) + 1), *p = out;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)data[i] << 16;
    if (i + 1 < n) v |= (unsigned)data[i + 1] << 8;
    if (i + 2 < n) v |= data[i + 2];
    *p++ = tbl[(v >> 18) & 63];
    *p++ = tbl[(v >> 12) & 63];
    *p++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
    *p++ = i + 2 < n ? tbl[v & 63] : '=';
  }
  *p = 0;
  return out;
}

/* ---- replies ---------------------------------------------------------------------------- */

void po_As_Reply_Json(po_As_Reply *r, int code, json_object *body) {
  free(r->body);
  r->code = code;
  r->body = strdup(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  r->content_type = "application/json";
  json_object_put(body);
}

const char *po_As_ReasonForCode(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "";
  }
}

void po_As_Reply_Status(po_As_Reply *r, int code, const char *reason, const char *message,
                        json_object *details) {
  json_object *s = json_object_new_object();
  json_object_object_add(s, "kind", json_object_new_string("Status"));
  json_object_object_add(s, "apiVersion", json_object_new_string("v1"));
  json_object_object_add(s, "metadata", json_object_new_object());
  json_object_object_add(s, "status", json_object_new_string(code < 400 ? "Success" : "Failure"));
  if (message) json_object_object_add(s, "message", json_object_new_string(message));
  if (!reason) reason = po_As_ReasonForCode(code);
  if (reason && reason[0]) json_object_object_add(s, "reason", json_object_new_string(reason));
  if (details) json_object_object_add(s, "details", details);
  json_object_object_add(s, "code", json_object_new_int(code));
  po_As_Reply_Json(r, code, s);
}

void po_As_Reply_Warn(po_As_Reply *r, const char *fmt, ...) {
  if (r->nwarnings >= (int)(sizeof r->warnings / sizeof r->warnings[0])) return;
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) >= 0) r->warnings[r->nwarnings++] = s;
  va_end(ap);
}

void po_As_Reply_Free(po_As_Reply *r) {
  free(r->body);
  for (int i = 0; i < r->nwarnings; i++) free(r->warnings[i]);
  memset(r, 0, sizeof *r);
}
