/* The AdmissionReview envelope shared by the validating and the mutating route (private). */
#ifndef PO_WEBHOOK_REVIEW_H_
#define PO_WEBHOOK_REVIEW_H_

#include <json-c/json.h>
#include <stddef.h>

/* The decoded review (a new reference) when the body is one AdmissionReview v1 request with a
 * uid; else NULL, *http_status 400 (or 413 over the JSON value bounds) and `error` saying why. */
json_object *po_Review_Parse(const char *body, size_t len, int *http_status, char *error, size_t size);
/* {apiVersion, kind: AdmissionReview, response} around `response` (taken). */
json_object *po_Review_Wrap(json_object *response);

#endif
