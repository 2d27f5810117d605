/* adv-27: po_FieldType's names are the caller's: two repeated fields named one after the other
 * are two texts (a thread-local buffer made the second name overwrite the first, so a message
 * naming both fields said the second twice). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "compiled.h"
#include "internal.h"

static void test_two_repeated_names(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_EnvoyApi_Schema_(NULL, NULL, &st);
  assert_non_null(s);
  const upb_MessageDef *m = po_Schema_FindMessage(s, "envoy.config.cluster.v3.Cluster");
  assert_non_null(m);
  const upb_FieldDef *hc = upb_MessageDef_FindFieldByName(m, "health_checks");
  const upb_FieldDef *dns = upb_MessageDef_FindFieldByName(m, "dns_resolvers");
  assert_non_null(hc);
  assert_non_null(dns);
  char b1[kPo_FieldTypeMax], b2[kPo_FieldTypeMax];
  const char *first = po_FieldType(hc, b1), *second = po_FieldType(dns, b2);
  assert_string_equal(first, "repeated envoy.config.core.v3.HealthCheck");
  assert_string_equal(second, "repeated envoy.config.core.v3.Address");
  assert_string_equal(po_FieldType(upb_MessageDef_FindFieldByName(m, "name"), b1), "string");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_two_repeated_names)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
