/* metav1.Status decoding into po_KubeErr. The reason string wins over the HTTP code, since the
 * server uses one code (e.g. 409) for several reasons (AlreadyExists, Conflict). */
#include "po/kube/status.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
  po_KubeErr code;
  const char *name;
} kNames[] = {
    {kPo_KubeErr_Ok, "Ok"},
    {kPo_KubeErr_BadRequest, "BadRequest"},
    {kPo_KubeErr_Unauthorized, "Unauthorized"},
    {kPo_KubeErr_Forbidden, "Forbidden"},
    {kPo_KubeErr_NotFound, "NotFound"},
    {kPo_KubeErr_AlreadyExists, "AlreadyExists"},
    {kPo_KubeErr_Conflict, "Conflict"},
    {kPo_KubeErr_Gone, "Gone"},
    {kPo_KubeErr_Invalid, "Invalid"},
    {kPo_KubeErr_TooManyRequests, "TooManyRequests"},
    {kPo_KubeErr_ServerTimeout, "ServerTimeout"},
    {kPo_KubeErr_Internal, "Internal"},
    {kPo_KubeErr_ServiceUnavailable, "ServiceUnavailable"},
    {kPo_KubeErr_MethodNotAllowed, "MethodNotAllowed"},
    {kPo_KubeErr_UnsupportedMediaType, "UnsupportedMediaType"},
    {kPo_KubeErr_RequestTooLarge, "RequestTooLarge"},
    {kPo_KubeErr_Timeout, "Timeout"},
    {kPo_KubeErr_OtherHttp, "OtherHttp"},
    {kPo_KubeErr_Transport, "Transport"},
    {kPo_KubeErr_Config, "Config"},
    {kPo_KubeErr_Decode, "Decode"},
    {kPo_KubeErr_NoMemory, "NoMemory"},
    {kPo_KubeErr_Usage, "Usage"},
    {kPo_KubeErr_Stopped, "Stopped"},
    {kPo_KubeErr_Io, "Io"},
};

const char *po_KubeErr_Name(po_KubeErr code) {
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; i++)
    if (kNames[i].code == code) return kNames[i].name;
  return "Unknown";
}

bool po_KubeErr_IsRetryable(po_KubeErr code) {
  switch (code) {
    case kPo_KubeErr_TooManyRequests:
    case kPo_KubeErr_ServerTimeout:
    case kPo_KubeErr_Internal:
    case kPo_KubeErr_ServiceUnavailable:
    case kPo_KubeErr_Timeout:
    case kPo_KubeErr_Transport:
      return true;
    default:
      return false;
  }
}

void po_KubeStatus_Clear(po_KubeStatus *st) {
  if (!st) return;
  st->code = kPo_KubeErr_Ok;
  st->http_status = 0;
  st->reason[0] = '\0';
  st->message[0] = '\0';
}

bool po_KubeStatus_Set(po_KubeStatus *st, po_KubeErr code, const char *fmt, ...) {
  if (!st) return false;
  st->code = code;
  st->http_status = 0;
  st->reason[0] = '\0';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->message, sizeof st->message, fmt, ap);
  va_end(ap);
  return false;
}

/* From k8s.io/apimachinery/pkg/apis/meta/v1 StatusReason values. */
static const struct {
  const char *reason;
  po_KubeErr code;
} kReasons[] = {
    {"BadRequest", kPo_KubeErr_BadRequest},
    {"Unauthorized", kPo_KubeErr_Unauthorized},
    {"Forbidden", kPo_KubeErr_Forbidden},
    {"NotFound", kPo_KubeErr_NotFound},
    {"AlreadyExists", kPo_KubeErr_AlreadyExists},
    {"Conflict", kPo_KubeErr_Conflict},
    {"Gone", kPo_KubeErr_Gone},
    {"Expired", kPo_KubeErr_Gone},
    {"Invalid", kPo_KubeErr_Invalid},
    {"TooManyRequests", kPo_KubeErr_TooManyRequests},
    {"ServerTimeout", kPo_KubeErr_ServerTimeout},
    {"Timeout", kPo_KubeErr_Timeout},
    {"InternalError", kPo_KubeErr_Internal},
    {"ServiceUnavailable", kPo_KubeErr_ServiceUnavailable},
    {"MethodNotAllowed", kPo_KubeErr_MethodNotAllowed},
    {"UnsupportedMediaType", kPo_KubeErr_UnsupportedMediaType},
    {"RequestEntityTooLarge", kPo_KubeErr_RequestTooLarge},
};

static po_KubeErr code_for_http(long http) {
  switch (http) {
    case 400: return kPo_KubeErr_BadRequest;
    case 401: return kPo_KubeErr_Unauthorized;
    case 403: return kPo_KubeErr_Forbidden;
    case 404: return kPo_KubeErr_NotFound;
    case 405: return kPo_KubeErr_MethodNotAllowed;
    case 409: return kPo_KubeErr_Conflict;
    case 410: return kPo_KubeErr_Gone;
    case 413: return kPo_KubeErr_RequestTooLarge;
    case 415: return kPo_KubeErr_UnsupportedMediaType;
    case 422: return kPo_KubeErr_Invalid;
    case 429: return kPo_KubeErr_TooManyRequests;
    case 500: return kPo_KubeErr_Internal;
    case 502: return kPo_KubeErr_Internal;
    case 503: return kPo_KubeErr_ServiceUnavailable;
    case 504: return kPo_KubeErr_ServerTimeout;
    default: return http >= 500 ? kPo_KubeErr_Internal : kPo_KubeErr_OtherHttp;
  }
}

bool po_KubeStatus_FromObject(po_KubeStatus *st, long http_status, struct json_object *status) {
  if (!st) return false;
  po_KubeStatus_Clear(st);
  json_object *v;
  long code = http_status;
  if (status && json_object_object_get_ex(status, "code", &v) && json_object_is_type(v, json_type_int))
    code = (long)json_object_get_int64(v);
  /* A watch ERROR event has no HTTP status of its own: the Status' code stands in. */
  st->http_status = http_status ? http_status : code;
  st->code = code_for_http(code);
  if (status && json_object_object_get_ex(status, "reason", &v) && json_object_is_type(v, json_type_string)) {
    const char *r = json_object_get_string(v);
    snprintf(st->reason, sizeof st->reason, "%s", r);
    for (size_t i = 0; i < sizeof kReasons / sizeof kReasons[0]; i++)
      if (strcmp(kReasons[i].reason, r) == 0) st->code = kReasons[i].code;
  }
  if (status && json_object_object_get_ex(status, "message", &v) && json_object_is_type(v, json_type_string))
    snprintf(st->message, sizeof st->message, "%s", json_object_get_string(v));
  else
    snprintf(st->message, sizeof st->message, "HTTP %ld %s", code, po_KubeErr_Name(st->code));
  return false;
}

bool po_KubeStatus_FromResponse(po_KubeStatus *st, long http_status, const char *body, size_t len) {
  if (!st) return false;
  json_object *obj = NULL;
  if (body && len) {
    json_tokener *tok = json_tokener_new();
    if (tok) {
      obj = json_tokener_parse_ex(tok, body, (int)(len > 1 << 20 ? 1 << 20 : len));
      json_tokener_free(tok);
    }
    json_object *kind;
    if (obj && !(json_object_object_get_ex(obj, "kind", &kind) &&
                 json_object_is_type(kind, json_type_string) &&
                 strcmp(json_object_get_string(kind), "Status") == 0)) {
      json_object_put(obj);
      obj = NULL;
    }
  }
  po_KubeStatus_FromObject(st, http_status, obj);
  st->http_status = http_status;
  if (!obj && body && len) {
    /* Not a Status (a proxy's HTML page, plain text): keep the start of it. */
    int n = len > 200 ? 200 : (int)len;
    snprintf(st->message, sizeof st->message, "HTTP %ld: %.*s", http_status, n, body);
  }
  json_object_put(obj);
  return false;
}
