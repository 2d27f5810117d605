/* Typed errors of the Kubernetes client.
 *
 * Every fallible function returns bool and fills a caller-owned po_KubeStatus, whose buffers are
 * fixed so that failing never allocates. Codes are never renumbered; new ones go at the end. */
#ifndef PO_KUBE_STATUS_H
#define PO_KUBE_STATUS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
  kPo_KubeErr_Ok = 0,
  /* metav1.Status reasons, decoded from the server's answer. */
  kPo_KubeErr_BadRequest = 1,
  kPo_KubeErr_Unauthorized = 2,
  kPo_KubeErr_Forbidden = 3,
  kPo_KubeErr_NotFound = 4,
  kPo_KubeErr_AlreadyExists = 5,
  kPo_KubeErr_Conflict = 6,
  kPo_KubeErr_Gone = 7,             /* 410: Gone or Expired (resourceVersion compacted) */
  kPo_KubeErr_Invalid = 8,          /* 422 */
  kPo_KubeErr_TooManyRequests = 9,  /* 429 */
  kPo_KubeErr_ServerTimeout = 10,   /* 500 ServerTimeout / 504 */
  kPo_KubeErr_Internal = 11,        /* 500 */
  kPo_KubeErr_ServiceUnavailable = 12, /* 503 */
  kPo_KubeErr_MethodNotAllowed = 13,
  kPo_KubeErr_UnsupportedMediaType = 14,
  kPo_KubeErr_RequestTooLarge = 15,
  kPo_KubeErr_Timeout = 16,         /* reason Timeout (request could not complete in time) */
  kPo_KubeErr_OtherHttp = 17,       /* any other non-2xx status */
  /* Client-side failures. */
  kPo_KubeErr_Transport = 30,       /* connection failed, reset, TLS error, client timeout */
  kPo_KubeErr_Config = 31,          /* kubeconfig / in-cluster configuration unusable */
  kPo_KubeErr_Decode = 32,          /* the server sent something that is not what was expected */
  kPo_KubeErr_NoMemory = 33,
  kPo_KubeErr_Usage = 34,           /* the caller passed something invalid */
  kPo_KubeErr_Stopped = 35,         /* the operation was cancelled by a stop request */
  kPo_KubeErr_Io = 36,              /* a local file could not be read */
} po_KubeErr;

typedef struct {
  po_KubeErr code;
  long http_status;      /* 0 when no HTTP answer was received */
  char reason[48];       /* metav1.Status reason as sent by the server ("" when none) */
  char message[640];     /* human-readable: the server's message, or what went wrong where */
} po_KubeStatus;

/* The enum value's name without prefix, e.g. "NotFound"; "Unknown" for numbers not in the enum. */
const char *po_KubeErr_Name(po_KubeErr code);

/* Whether a server error is worth retrying for a safe verb (429, 5xx, transport). */
bool po_KubeErr_IsRetryable(po_KubeErr code);

void po_KubeStatus_Clear(po_KubeStatus *st);

/* Sets code and a printf-formatted message; always returns false so callers can
 * `return po_KubeStatus_Set(...)`. st may be NULL. */
bool po_KubeStatus_Set(po_KubeStatus *st, po_KubeErr code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Decodes a non-2xx answer: the metav1.Status body when there is one (reason, code, message
 * kept), else the HTTP status alone. Always returns false. */
bool po_KubeStatus_FromResponse(po_KubeStatus *st, long http_status, const char *body, size_t len);

/* Same, from a metav1.Status object already parsed (a watch ERROR event). Returns false. */
struct json_object;
bool po_KubeStatus_FromObject(po_KubeStatus *st, long http_status, struct json_object *status);

#endif
