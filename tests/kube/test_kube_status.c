/* metav1.Status decoding into typed errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <string.h>

#include "po/kube/client.h"
#include "po/kube/status.h"

static void check(long http, const char *body, po_CtlCode code, const char *reason, const char *msg) {
  po_CtlStatus st;
  assert_false(po_KubeStatus_FromResponse(&st, http, body, body ? strlen(body) : 0));
  if (st.code != code || strcmp(st.reason, reason) != 0 || strcmp(st.message, msg) != 0) {
    print_error("HTTP %ld: want %s/%s/%s got %s/%s/%s\n", http, po_CtlCode_Name(code), reason, msg,
                po_CtlCode_Name(st.code), st.reason, st.message);
    fail();
  }
  assert_int_equal(st.http_status, http);
}

#define STATUS(code, reason, msg)                                                                \
  "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"" msg \
  "\",\"reason\":\"" reason "\",\"code\":" #code "}"

static void test_reasons(void **state) {
  check(404, STATUS(404, "NotFound", "configmaps \\\"x\\\" not found"), kPo_Ctl_NotFound, "NotFound",
        "configmaps \"x\" not found");
  check(409, STATUS(409, "AlreadyExists", "configmaps \\\"x\\\" already exists"), kPo_Ctl_AlreadyExists,
        "AlreadyExists", "configmaps \"x\" already exists");
  check(409, STATUS(409, "Conflict", "the object has been modified"), kPo_Ctl_Conflict, "Conflict",
        "the object has been modified");
  check(422, STATUS(422, "Invalid", "spec.x: Required value"), kPo_Ctl_Invalid, "Invalid", "spec.x: Required value");
  check(403, STATUS(403, "Forbidden", "no"), kPo_Ctl_Forbidden, "Forbidden", "no");
  check(401, STATUS(401, "Unauthorized", "Unauthorized"), kPo_Ctl_Unauthorized, "Unauthorized", "Unauthorized");
  check(410, STATUS(410, "Expired", "too old resource version"), kPo_Ctl_Gone, "Expired", "too old resource version");
  check(410, STATUS(410, "Gone", "gone"), kPo_Ctl_Gone, "Gone", "gone");
  check(429, STATUS(429, "TooManyRequests", "slow down"), kPo_Ctl_TooManyRequests, "TooManyRequests", "slow down");
  check(504, STATUS(504, "Timeout", "t"), kPo_Ctl_Timeout, "Timeout", "t");
  check(500, STATUS(500, "ServerTimeout", "st"), kPo_Ctl_ServerTimeout, "ServerTimeout", "st");
  check(500, STATUS(500, "InternalError", "boom"), kPo_Ctl_Internal, "InternalError", "boom");
  check(503, STATUS(503, "ServiceUnavailable", "later"), kPo_Ctl_ServiceUnavailable, "ServiceUnavailable", "later");
  check(400, STATUS(400, "BadRequest", "bad"), kPo_Ctl_BadRequest, "BadRequest", "bad");
  check(405, STATUS(405, "MethodNotAllowed", "m"), kPo_Ctl_MethodNotAllowed, "MethodNotAllowed", "m");
  check(415, STATUS(415, "UnsupportedMediaType", "u"), kPo_Ctl_UnsupportedMediaType, "UnsupportedMediaType", "u");
  check(413, STATUS(413, "RequestEntityTooLarge", "big"), kPo_Ctl_RequestTooLarge, "RequestEntityTooLarge", "big");
}

static void test_without_status(void **state) {
  /* No reason: the HTTP code decides. */
  check(409, "{\"kind\":\"Status\",\"code\":409,\"message\":\"c\"}", kPo_Ctl_Conflict, "", "c");
  check(503, NULL, kPo_Ctl_ServiceUnavailable, "", "HTTP 503 ServiceUnavailable");
  check(502, "<html>Bad Gateway</html>", kPo_Ctl_Internal, "", "HTTP 502: <html>Bad Gateway</html>");
  check(418, "{\"kind\":\"Pod\"}", kPo_Ctl_OtherHttp, "", "HTTP 418: {\"kind\":\"Pod\"}");
  check(599, "", kPo_Ctl_Internal, "", "HTTP 599 Internal");
  check(404, "{not json", kPo_Ctl_NotFound, "", "HTTP 404: {not json");
  /* An unknown reason keeps the code's mapping and the reason text. */
  check(500, STATUS(500, "SomethingNew", "m"), kPo_Ctl_Internal, "SomethingNew", "m");
}

static void test_watch_error_event_object(void **state) {
  json_object *o = json_tokener_parse(STATUS(410, "Expired", "too old resource version: 5 (13)"));
  po_CtlStatus st;
  assert_false(po_KubeStatus_FromObject(&st, 0, o));
  assert_int_equal(st.code, kPo_Ctl_Gone);
  assert_int_equal(st.http_status, 410);
  assert_string_equal(st.message, "too old resource version: 5 (13)");
  json_object_put(o);
}

static void test_names_and_retryable(void **state) {
  assert_string_equal(po_CtlCode_Name(kPo_Ctl_Conflict), "Conflict");
  assert_string_equal(po_CtlCode_Name((po_CtlCode)999), "Unknown");
  assert_true(po_CtlCode_IsRetryable(kPo_Ctl_TooManyRequests));
  assert_true(po_CtlCode_IsRetryable(kPo_Ctl_Transport));
  assert_false(po_CtlCode_IsRetryable(kPo_Ctl_Conflict));
  assert_false(po_CtlCode_IsRetryable(kPo_Ctl_NotFound));
  /* One family with the runtime: its codes follow the client's, numbers never reused. */
  assert_string_equal(po_CtlCode_Name(kPo_Ctl_System), "System");
  assert_string_equal(po_CtlCode_Name(kPo_Ctl_Start), "Start");
  assert_string_equal(po_CtlCode_Name(kPo_Ctl_Deadline), "Deadline");
  assert_int_equal(kPo_Ctl_Io, 36);
  assert_int_equal(kPo_Ctl_Deadline, 39);
  assert_false(po_CtlCode_IsRetryable(kPo_Ctl_System));
}

static void test_paths(void **state) {
  char buf[256];
  po_KubeRef cm = {"", "v1", "configmaps", "ns1", "a", NULL};
  assert_true(po_KubeRef_Path(&cm, buf, sizeof buf));
  assert_string_equal(buf, "/api/v1/namespaces/ns1/configmaps/a");
  po_KubeRef st = {"example.io", "v1alpha1", "widgets", "ns1", "w", "status"};
  assert_true(po_KubeRef_Path(&st, buf, sizeof buf));
  assert_string_equal(buf, "/apis/example.io/v1alpha1/namespaces/ns1/widgets/w/status");
  po_KubeRef all = {NULL, "v1", "namespaces", NULL, NULL, NULL};
  assert_true(po_KubeRef_Path(&all, buf, sizeof buf));
  assert_string_equal(buf, "/api/v1/namespaces");
  po_KubeRef bad = {NULL, NULL, "x", NULL, NULL, NULL};
  assert_false(po_KubeRef_Path(&bad, buf, sizeof buf));
  assert_false(po_KubeRef_Path(&cm, buf, 10));
  assert_true(po_Kube_QueryEscape("app in (a,b),!x", buf, sizeof buf));
  assert_string_equal(buf, "app%20in%20%28a%2Cb%29%2C%21x");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reasons), cmocka_unit_test(test_without_status),
      cmocka_unit_test(test_watch_error_event_object), cmocka_unit_test(test_names_and_retryable),
      cmocka_unit_test(test_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
