/* The operations server over loopback, with libcurl. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/manager.h"
#include "po/runtime/ops.h"

typedef struct {
  char body[65536];
  size_t len;
} Body;

static size_t on_data(char *p, size_t size, size_t n, void *arg) {
  Body *b = arg;
  size_t len = size * n;
  if (b->len + len >= sizeof b->body) len = sizeof b->body - 1 - b->len;
  memcpy(b->body + b->len, p, len);
  b->len += len;
  b->body[b->len] = '\0';
  return size * n;
}

/* GET http://127.0.0.1:port<path>; returns the status, fills body and content type. */
static long get(int port, const char *path, Body *b, char *type, size_t type_cap) {
  char url[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
  CURL *c = curl_easy_init();
  assert_non_null(c);
  b->len = 0;
  b->body[0] = '\0';
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  assert_int_equal(curl_easy_perform(c), CURLE_OK);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  char *ct = NULL;
  curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
  if (type) snprintf(type, type_cap, "%s", ct ? ct : "");
  curl_easy_cleanup(c);
  return code;
}

static atomic_bool synced;

static bool informers_synced(void *ctx, char *reason, size_t cap) {
  if (atomic_load(&synced)) return true;
  snprintf(reason, cap, "cache for propertyoverrides not synced");
  return false;
}

static bool always_ok(void *ctx, char *reason, size_t cap) { return true; }

static void probes_and_metrics_over_loopback(void **state) {
  po_Metrics *m = po_Metrics_New();
  po_Series_Inc(po_Family_WithLabels(po_Metrics_Find(m, PO_M_RECONCILE_ERRORS), "po"));
  po_CtlStatus st;
  po_OpsServer *s = po_OpsServer_New(&(po_OpsOptions){.address = "127.0.0.1:0", .metrics = m}, &st);
  assert_non_null(s);
  assert_true(po_OpsServer_AddReadyCheck(s, "informers-synced", informers_synced, NULL, &st));
  assert_true(po_OpsServer_AddReadyCheck(s, "webhook", always_ok, NULL, &st));
  assert_false(po_OpsServer_AddReadyCheck(s, "webhook", always_ok, NULL, &st));
  assert_string_equal(st.message, "readyz check \"webhook\" is already registered");
  assert_false(po_OpsServer_AddReadyCheck(s, "bad name", always_ok, NULL, &st));
  assert_true(po_OpsServer_Start(s, &st));
  int port = po_OpsServer_Port(s);
  assert_true(port > 0);

  Body b;
  char type[128];
  assert_int_equal(get(port, "/healthz", &b, type, sizeof type), 200);
  assert_string_equal(b.body, "ok");
  assert_string_equal(type, "text/plain; charset=utf-8");
  assert_int_equal(get(port, "/healthz?verbose", &b, NULL, 0), 200);
  assert_string_equal(b.body, "[+]ping ok\nhealthz check passed\n");
  assert_int_equal(get(port, "/livez", &b, NULL, 0), 200);

  assert_int_equal(get(port, "/readyz", &b, NULL, 0), 500);
  assert_string_equal(b.body,
                      "[-]informers-synced failed: reason withheld\n[+]webhook ok\nreadyz check failed\n");
  assert_int_equal(get(port, "/readyz?verbose", &b, NULL, 0), 500);
  assert_string_equal(b.body,
                      "[-]informers-synced failed: cache for propertyoverrides not synced\n"
                      "[+]webhook ok\nreadyz check failed\n");
  assert_int_equal(get(port, "/readyz?verbose&exclude=informers-synced", &b, NULL, 0), 200);
  assert_string_equal(b.body, "[+]informers-synced excluded: ok\n[+]webhook ok\nreadyz check passed\n");
  assert_int_equal(get(port, "/readyz/informers-synced", &b, NULL, 0), 500);
  assert_string_equal(b.body, "internal server error: cache for propertyoverrides not synced\n");
  assert_int_equal(get(port, "/readyz/nope", &b, NULL, 0), 404);

  atomic_store(&synced, true);
  assert_int_equal(get(port, "/readyz", &b, NULL, 0), 200);
  assert_string_equal(b.body, "ok");
  assert_int_equal(get(port, "/readyz?verbose", &b, NULL, 0), 200);
  assert_string_equal(b.body, "[+]informers-synced ok\n[+]webhook ok\nreadyz check passed\n");
  assert_int_equal(get(port, "/readyz/informers-synced", &b, NULL, 0), 200);
  assert_string_equal(b.body, "ok");

  assert_int_equal(get(port, "/metrics", &b, type, sizeof type), 200);
  assert_string_equal(type, "text/plain; version=0.0.4; charset=utf-8");
  assert_string_equal(b.body,
                      "# HELP controller_runtime_reconcile_errors_total Total number of "
                      "reconciliation errors per controller\n"
                      "# TYPE controller_runtime_reconcile_errors_total counter\n"
                      "controller_runtime_reconcile_errors_total{controller=\"po\"} 1\n");
  assert_int_equal(get(port, "/nothing", &b, NULL, 0), 404);
  po_OpsServer_Stop(s);
  assert_int_equal(po_OpsServer_Port(s), 0);
  po_OpsServer_Free(s);
  po_Metrics_Free(m);
}

static void listen_addresses_parse_like_flags(void **state) {
  po_ListenAddr a;
  po_CtlStatus st;
  assert_true(po_ListenAddr_Parse("127.0.0.1:8080", &a, &st));
  assert_string_equal(a.host, "127.0.0.1");
  assert_int_equal(a.port, 8080);
  assert_true(po_ListenAddr_Parse(":8080", &a, &st));
  assert_string_equal(a.host, "");
  assert_int_equal(a.port, 8080);
  assert_true(po_ListenAddr_Parse("[::1]:0", &a, &st));
  assert_string_equal(a.host, "::1");
  assert_int_equal(a.port, 0);
  assert_true(po_ListenAddr_Parse("0", &a, &st));
  assert_true(a.disabled);
  assert_false(po_ListenAddr_Parse("8080", &a, &st));
  assert_string_equal(st.message, "listen address \"8080\": expected host:port, :port or 0 (disabled)");
  assert_false(po_ListenAddr_Parse("host:http", &a, &st));
  assert_string_equal(st.message,
                      "listen address \"host:http\": port \"http\" is not a number from 0 to 65535");
  assert_false(po_ListenAddr_Parse(":70000", &a, &st));
  assert_false(po_ListenAddr_Parse("::1:80", &a, &st));
  assert_string_equal(st.message, "listen address \"::1:80\": an IPv6 host must be written [addr]:port");
}

static void every_interface_with_a_picked_port(void **state) {
  po_CtlStatus st;
  po_OpsServer *s = po_OpsServer_New(&(po_OpsOptions){.address = ":0"}, &st);
  assert_non_null(s);
  assert_true(po_OpsServer_Start(s, &st));
  assert_true(po_OpsServer_Port(s) > 0);
  Body b;
  assert_int_equal(get(po_OpsServer_Port(s), "/readyz?verbose", &b, NULL, 0), 200);
  assert_string_equal(b.body, "readyz check passed\n"); /* no checks registered */
  po_OpsServer_Free(s);
}

static void disabled_address_does_not_listen(void **state) {
  po_CtlStatus st;
  po_OpsServer *s = po_OpsServer_New(&(po_OpsOptions){.address = "0"}, &st);
  assert_non_null(s);
  assert_true(po_OpsServer_Start(s, &st));
  assert_int_equal(po_OpsServer_Port(s), 0);
  po_OpsServer_Free(s);
  assert_null(po_OpsServer_New(&(po_OpsOptions){.address = "nope"}, &st));
  assert_int_equal(st.code, kPo_Ctl_Usage);
}

/* There is no process-wide registry: a server given none serves no /metrics, and a controller
 * and a manager given none record nothing and still work. */
static void no_registry_no_metrics(void **state) {
  static Body b;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_OpsServer *s = po_OpsServer_New(&(po_OpsOptions){.address = "127.0.0.1:0"}, &st);
  assert_non_null(s);
  assert_true(po_OpsServer_Start(s, &st));
  assert_int_equal(get(po_OpsServer_Port(s), "/metrics", &b, NULL, 0), 404);
  assert_int_equal(get(po_OpsServer_Port(s), "/healthz", &b, NULL, 0), 200);
  po_OpsServer_Free(s);
  po_Manager *mgr = po_Manager_New(&(po_ManagerOptions){.lease_name = "l"}, &st);
  assert_non_null(mgr);
  assert_true(po_Manager_Start(mgr, &st));
  assert_true(po_Manager_BecameLeader(mgr, &st));
  po_Manager_LostLeadership(mgr);
  assert_true(po_Manager_Stop(mgr));
  po_Manager_Free(mgr);
}

int main(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(probes_and_metrics_over_loopback),
      cmocka_unit_test(listen_addresses_parse_like_flags),
      cmocka_unit_test(every_interface_with_a_picked_port),
      cmocka_unit_test(disabled_address_does_not_listen),
      cmocka_unit_test(no_registry_no_metrics),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  curl_global_cleanup();
  return rc;
}
