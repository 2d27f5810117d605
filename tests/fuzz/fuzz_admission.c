/* AdmissionReview bodies -> po_Admission_Review: any bytes must give either a 400 with a reason
 * or a well-formed response for the request's uid; never a crash, leak or hang. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "po/webhook/admission.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  po_Arena *a = po_Arena_New();
  if (!a) return 0;
  po_CtlStatus st;
  json_object *out = po_Admission_Review((const char *)data, size, NULL, a, &st);
  if (out) {
    json_object *resp = NULL, *allowed = NULL, *uid = NULL;
    if (st.http_status != 200 || !json_object_object_get_ex(out, "response", &resp) ||
        !json_object_object_get_ex(resp, "allowed", &allowed) || !json_object_object_get_ex(resp, "uid", &uid)) {
      abort();
    }
    json_object_put(out);
  } else if (st.http_status != 400 || st.message[0] == '\0') {
    abort();
  }
  po_Arena_Free(a);
  return 0;
}
