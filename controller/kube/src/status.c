/* metav1.Status decoding into a po_CtlStatus. The reason string wins over the HTTP code, since the
 * server uses one code (e.g. 409) for several reasons (AlreadyExists, Conflict). */
#include "po/kube/status.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* From k8s.io/apimachinery/pkg/apis/meta/v1 StatusReason values. */
static const struct {
  const char *reason;
  po_CtlCode code;
} kReasons[] = {
    {"BadRequest", kPo_Ctl_BadRequest},
    {"Unauthorized", kPo_Ctl_Unauthorized},
    {"Forbidden", kPo_Ctl_Forbidden},
    {"NotFound", kPo_Ctl_NotFound},
    {"AlreadyExists", kPo_Ctl_AlreadyExists},
    {"Conflict", kPo_Ctl_Conflict},
    {"Gone", kPo_Ctl_Gone},
    {"Expired", kPo_Ctl_Gone},
    {"Invalid", kPo_Ctl_Invalid},
    {"TooManyRequests", kPo_Ctl_TooManyRequests},
    {"ServerTimeout", kPo_Ctl_ServerTimeout},
    {"Timeout", kPo_Ctl_Timeout},
    {"InternalError", kPo_Ctl_Internal},
    {"ServiceUnavailable", kPo_Ctl_ServiceUnavailable},
    {"MethodNotAllowed", kPo_Ctl_MethodNotAllowed},
    {"UnsupportedMediaType", kPo_Ctl_UnsupportedMediaType},
    {"RequestEntityTooLarge", kPo_Ctl_RequestTooLarge},
};

static po_CtlCode code_for_http(long http) {
  switch (http) {
    case 400: return kPo_Ctl_BadRequest;
    case 401: return kPo_Ctl_Unauthorized;
    case 403: return kPo_Ctl_Forbidden;
    case 404: return kPo_Ctl_NotFound;
    case 405: return kPo_Ctl_MethodNotAllowed;
    case 409: return kPo_Ctl_Conflict;
    case 410: return kPo_Ctl_Gone;
    case 413: return kPo_Ctl_RequestTooLarge;
    case 415: return kPo_Ctl_UnsupportedMediaType;
    case 422: return kPo_Ctl_Invalid;
    case 429: return kPo_Ctl_TooManyRequests;
    case 500: return kPo_Ctl_Internal;
    case 502: return kPo_Ctl_Internal;
    case 503: return kPo_Ctl_ServiceUnavailable;
    case 504: return kPo_Ctl_ServerTimeout;
    default: return http >= 500 ? kPo_Ctl_Internal : kPo_Ctl_OtherHttp;
  }
}

bool po_KubeStatus_FromObject(po_CtlStatus *st, long http_status, struct json_object *status) {
  if (!st) return false;
  po_CtlStatus_Clear(st);
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
    snprintf(st->message, sizeof st->message, "HTTP %ld %s", code, po_CtlCode_Name(st->code));
  return false;
}

bool po_KubeStatus_FromResponse(po_CtlStatus *st, long http_status, const char *body, size_t len) {
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
