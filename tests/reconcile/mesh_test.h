/* The reading helpers of the one-object-per-PropertyOverride mesh tests (test_istio_reconcile,
 * test_eg_reconcile), over fake_api.h: PropertyOverrides of namespace default. */
#ifndef PO_TESTS_RECONCILE_MESH_TEST_H_
#define PO_TESTS_RECONCILE_MESH_TEST_H_

#include <json-c/json.h>
#include <stdio.h>

#include "fake_api.h"

static inline json_object *obj(const char *key) { return slot_obj(key); }
static inline json_object *po_of(const char *name) {
  char k[300];
  snprintf(k, sizeof k, "po/default/%s", name);
  return obj(k);
}
static inline json_object *condition(const char *name, const char *type) {
  return override_condition("default", name, type);
}
static inline const char *reason(const char *name) { return json_object_get_string(get(condition(name, "Programmed"), "reason")); }
static inline const char *message(const char *name) {
  return json_object_get_string(get(condition(name, "Programmed"), "message"));
}
static inline const char *annotation(json_object *o, const char *k) { return annotation_of(o, k); }
static inline po_ReconcileResult rec(const char *key) { return reconcile_key(key); }

#endif
