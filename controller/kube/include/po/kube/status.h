/* The client's errors are the controller's one status family (po/base/status.h: po_CtlStatus,
 * kPo_Ctl_* codes). What is the client's own is decoding the API server's answers into one. */
#ifndef PO_KUBE_STATUS_H
#define PO_KUBE_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "po/base/status.h"

/* Decodes a non-2xx answer: the metav1.Status body when there is one (reason, code, message
 * kept), else the HTTP status alone. Always returns false. */
bool po_KubeStatus_FromResponse(po_CtlStatus *st, long http_status, const char *body, size_t len);

/* Same, from a metav1.Status object already parsed (a watch ERROR event). Returns false. */
struct json_object;
bool po_KubeStatus_FromObject(po_CtlStatus *st, long http_status, struct json_object *status);

#endif
