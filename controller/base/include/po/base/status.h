/* The controller's one status family: every fallible function of controller/ returns bool and
 * fills a caller-owned po_CtlStatus (NULL allowed), whose buffers are fixed so that failing never
 * allocates. One type for the client, the runtime and the app, so a client error passes through
 * a runnable's start or the app's construction whole, code and all. (The engine's po_Status is
 * the engine's: its messages are diagnostics of patches, not of a process.)
 *
 * Codes are never renumbered; new ones go at the end. */
#ifndef PO_BASE_STATUS_H
#define PO_BASE_STATUS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
  kPo_Ctl_Ok = 0,
  /* metav1.Status reasons, decoded from the API server's answer (po/kube/status.h). */
  kPo_Ctl_BadRequest = 1,
  kPo_Ctl_Unauthorized = 2,
  kPo_Ctl_Forbidden = 3,
  kPo_Ctl_NotFound = 4,
  kPo_Ctl_AlreadyExists = 5,
  kPo_Ctl_Conflict = 6,
  kPo_Ctl_Gone = 7,               /* 410: Gone or Expired (resourceVersion compacted) */
  kPo_Ctl_Invalid = 8,            /* 422 */
  kPo_Ctl_TooManyRequests = 9,    /* 429 */
  kPo_Ctl_ServerTimeout = 10,     /* 500 ServerTimeout / 504 */
  kPo_Ctl_Internal = 11,          /* 500 */
  kPo_Ctl_ServiceUnavailable = 12, /* 503 */
  kPo_Ctl_MethodNotAllowed = 13,
  kPo_Ctl_UnsupportedMediaType = 14,
  kPo_Ctl_RequestTooLarge = 15,
  kPo_Ctl_Timeout = 16,           /* reason Timeout (request could not complete in time) */
  kPo_Ctl_OtherHttp = 17,         /* any other non-2xx status */
  /* Failures on our side. */
  kPo_Ctl_Transport = 30,         /* connection failed, reset, TLS error, client timeout */
  kPo_Ctl_Config = 31,            /* kubeconfig / in-cluster configuration unusable */
  kPo_Ctl_Decode = 32,            /* the server sent something that is not what was expected */
  kPo_Ctl_NoMemory = 33,
  kPo_Ctl_Usage = 34,             /* the caller passed something invalid (a bad address, a NULL) */
  kPo_Ctl_Stopped = 35,           /* the operation was cancelled by a stop request */
  kPo_Ctl_Io = 36,                /* a local file could not be read */
  kPo_Ctl_System = 37,            /* a system call failed (pthread, pipe, bind) */
  kPo_Ctl_Start = 38,             /* a runnable refused to start */
  kPo_Ctl_Deadline = 39,          /* an orderly stop did not finish before its deadline */
} po_CtlCode;

typedef struct {
  po_CtlCode code;
  long http_status;      /* 0 when no HTTP answer was received */
  char reason[48];       /* metav1.Status reason as sent by the server ("" when none) */
  char message[640];     /* human-readable: the server's message, or what went wrong where */
} po_CtlStatus;

/* The enum value's name without prefix, e.g. "NotFound"; "Unknown" for numbers not in the enum. */
const char *po_CtlCode_Name(po_CtlCode code);
/* Whether a server error is worth retrying for a safe verb (429, 5xx, transport). */
bool po_CtlCode_IsRetryable(po_CtlCode code);

void po_CtlStatus_Clear(po_CtlStatus *st);
/* Sets code and a printf-formatted message (http_status and reason cleared); always returns
 * false so callers can `return po_CtlStatus_Set(...)`. st may be NULL. */
bool po_CtlStatus_Set(po_CtlStatus *st, po_CtlCode code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
