/* The AdmissionReview envelope shared by the validating and the mutating route (private). */
#ifndef PO_WEBHOOK_REVIEW_H_
#define PO_WEBHOOK_REVIEW_H_

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "po/base/status.h"

/* The decoded review (a new reference) when the body is one AdmissionReview v1 request with a
 * uid (st: Ok, http_status 200); else NULL with st saying why: BadRequest (http_status 400), or
 * RequestTooLarge (413) over the JSON value bounds. */
json_object *po_Review_Parse(const char *body, size_t len, po_CtlStatus *st);
/* What one linear scan of the body finds, before anything is allocated: the JSON objects and
 * arrays (containers) and the values of all kinds, keys included (what decoding costs goes by
 * these), of those the ones inside a patch's value (under a "value" or "Value" key: the checks
 * convert these again; a key written with \u escapes is read decoded), whether a short string
 * written with \u escapes spells "Envoy" (a kind name need not be written plainly), and the
 * first thing strict JSON (RFC 8259) does not allow that the scan would miscount: a single-quoted string, a comment, any other character
 * outside strings, or a raw control character inside one (bad, at byte bad_at; counts 0). */
typedef struct {
  size_t containers, values;
  size_t in_value_containers, in_value_values;
  bool escaped_envoy;
  const char *bad;
  size_t bad_at;
  unsigned bad_byte;
} po_ReviewCount;
void po_Review_Count(const char *body, size_t len, po_ReviewCount *out);
/* Whether the request was sent by `username` (request.userInfo.username, exactly); never for a
 * NULL or empty username: the controller's own writes, when its username is known
 * (--controller-username), on both routes. */
bool po_Review_By(json_object *request, const char *username);
/* {apiVersion, kind: AdmissionReview, response} around `response` (taken). */
json_object *po_Review_Wrap(json_object *response);

#endif
