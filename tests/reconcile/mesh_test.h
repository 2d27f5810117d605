/* The reading helpers of the one-object-per-PropertyOverride mesh tests (test_istio_reconcile,
 * test_eg_reconcile), over fake_api.h: PropertyOverrides of namespace default. */
#ifndef PO_TESTS_RECONCILE_MESH_TEST_H_
#define PO_TESTS_RECONCILE_MESH_TEST_H_

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>

#include "fake_api.h"

static inline json_object *obj(Fake *fx, const char *key) { return slot_obj(fx, key); }
static inline json_object *po_of(Fake *fx, const char *name) {
  char k[300];
  snprintf(k, sizeof k, "po/default/%s", name);
  return obj(fx, k);
}
static inline json_object *condition(Fake *fx, const char *name, const char *type) {
  return override_condition(fx, "default", name, type);
}
static inline const char *reason(Fake *fx, const char *name) { return json_object_get_string(get(condition(fx, name, "Programmed"), "reason")); }
static inline const char *message(Fake *fx, const char *name) {
  return json_object_get_string(get(condition(fx, name, "Programmed"), "message"));
}
static inline const char *annotation(json_object *o, const char *k) { return annotation_of(o, k); }
static inline po_ReconcileResult rec(Fake *fx, const char *key) { return reconcile_key(fx, key); }

/* status.lastValid of PropertyOverride default/name set by hand (as `kubectl patch
 * --subresource=status` would) to {generation, its spec with `patches`}. */
static inline void forge_last_valid(Fake *fx, const char *name, int64_t generation, const char *patches) {
  json_object *o = po_of(fx, name), *st = get(o, "status");
  if (!st) json_object_object_add(o, "status", st = json_object_new_object());
  json_object *spec = copy(get(o, "spec")), *lv = json_object_new_object();
  json_object_object_add(spec, "patches", json_tokener_parse(patches));
  json_object_object_add(lv, "generation", json_object_new_int64(generation));
  json_object_object_add(lv, "spec", spec);
  json_object_object_add(st, "lastValid", lv);
  bump(fx, o);
}

/* A restarted controller: a new index, PropertyOverride default/name indexed again as the
 * informers would list it. */
static inline void restart_with(Fake *fx, const char *name) {
  po_TargetIndex_Free(fx->ix);
  fx->ix = po_TargetIndex_New();
  store_override(fx, "default", name, copy(po_of(fx, name)));
}

#endif
