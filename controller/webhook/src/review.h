/* The AdmissionReview envelope shared by the validating and the mutating route (private). */
#ifndef PO_WEBHOOK_REVIEW_H_
#define PO_WEBHOOK_REVIEW_H_

#include <json-c/json.h>
#include <stddef.h>

/* The decoded review (a new reference) when the body is one AdmissionReview v1 request with a
 * uid; else NULL, *http_status 400 (or 413 over the JSON value bounds) and `error` saying why. */
json_object *po_Review_Parse(const char *body, size_t len, int *http_status, char *error, size_t size);
/* The JSON objects and arrays (containers) and the values of all kinds, keys included, in the
 * body: what decoding it costs goes by these (one linear scan, strings skipped, nothing
 * allocated). */
void po_Review_Count(const char *body, size_t len, size_t *containers, size_t *values);
/* {apiVersion, kind: AdmissionReview, response} around `response` (taken). */
json_object *po_Review_Wrap(json_object *response);

#endif
