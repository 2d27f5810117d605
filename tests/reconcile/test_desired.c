/* po_Reconcile_Desired, the mutating webhook's question: the spec.envoyExtensions the controller
 * would write into an incoming version of a target, from the same load and plan as po_Reconcile
 * (tests/reconcile/fake_api.c holds the caches). Never a write, never an Event; nothing taken
 * from the incoming object's own entries but what the plan keeps of everybody else's. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/reconcile/reconcile.h"
#include "po/meshes/consul.h"

#include "fake_api.h"

static const char *kGood = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";
static const char *kGood2 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":30}]";

static json_object *target(Fake *fx) { return slot(fx, "ServiceDefaults/default/web", false)->obj; }
static json_object *ext_of(json_object *o) { return get(get(o, "spec"), "envoyExtensions"); }
static po_ReconcileResult reconcile(Fake *fx) { return po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/default/web"); }

/* The git version of web: protocol and a lua entry, no entries of ours; uid as stored. */
static json_object *git_version(Fake *fx) {
  json_object *o = json_tokener_parse(
      "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
      "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"protocol\":\"grpc\","
      "\"envoyExtensions\":[{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}}]}}");
  json_object_object_add(get(o, "metadata"), "uid", json_object_new_string(json_object_get_string(get(get(target(fx), "metadata"), "uid"))));
  return o;
}

static po_DesiredResult desired(Fake *fx, json_object *incoming, json_object **list) {
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  int writes = fx->target_writes, patches = fx->override_patches + fx->status_patches, events = fx->events + fx->target_events;
  po_DesiredResult d = po_Reconcile_Desired(&fx->io, fx->ix, kPo_TargetKind_ServiceDefaults, incoming, list, &st);
  /* a question, never a write or an Event */
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(fx->override_patches + fx->status_patches, patches);
  assert_int_equal(fx->events + fx->target_events, events);
  assert_int_equal(fx->lent, 0);
  return d;
}

/* web with the lua entry from git, then a and b programmed by the reconciler. */
static void programmed(Fake *fx) {
  put(fx, "ServiceDefaults/default/web",
      json_tokener_parse("{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                         "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"protocol\":\"http\","
                         "\"envoyExtensions\":[{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}}]}}"));
  apply_override(fx, "a", 1, "web", kGood);
  apply_override(fx, "b", 1, "web", kGood2);
  assert_true(reconcile(fx).ok);
  assert_int_equal(json_object_array_length(ext_of(target(fx))), 3);
}

static void test_stripped_write_gets_exactly_the_reconcilers_entries(void **state) {
  Fake *fx = *state;
  programmed(fx);
  json_object *in = git_version(fx), *list = NULL;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  /* what the reconciler wrote, byte for byte: the lua entry as it came, then a, then b */
  assert_true(json_object_equal(list, ext_of(target(fx))));
  json_object_put(list);
  /* the object as it will be stored holds it: nothing more to say */
  json_object_object_add(get(in, "spec"), "envoyExtensions", copy(ext_of(target(fx))));
  list = NULL;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Keep);
  assert_null(list);
  json_object_put(in);
}

/* issue 21: a git re-apply (no entries of ours) after a restart, while a is invalid: its
 * status.lastValid is proved by the stored target's entry (what the controller wrote), not by
 * the incoming object, so the answer still carries a's last valid entry; a forged record gets
 * nothing. */
static void test_stripped_write_after_a_restart_keeps_the_last_valid_entry(void **state) {
  Fake *fx = *state;
  static const char *kBad = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":150}]";
  programmed(fx);
  apply_override(fx, "a", 2, "web", kBad);
  assert_true(reconcile(fx).ok);
  json_object *before = copy(ext_of(target(fx)));
  po_TargetIndex_Free(fx->ix); /* a new process */
  fx->ix = po_TargetIndex_New();
  store_override(fx, "default", "a", copy(slot(fx, "po/default/a", false)->obj));
  store_override(fx, "default", "b", copy(slot(fx, "po/default/b", false)->obj));
  json_object *in = git_version(fx), *list = NULL;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  assert_true(json_object_equal(list, before));
  json_object_put(list);
  /* the record forged to another valid value: a's entry is not in the answer */
  json_object *p0 = json_object_array_get_idx(get(get(get(get(slot(fx, "po/default/a", false)->obj, "status"), "lastValid"), "spec"),
                                                  "patches"), 0);
  json_object_object_add(p0, "value", json_object_new_int(33));
  bump(fx, slot(fx, "po/default/a", false)->obj);
  list = NULL;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  assert_null(strstr(json_object_to_json_string(list), "\"Value\":33"));
  json_object_put(list);
  json_object_put(in);
  json_object_put(before);
}

/* A PropertyOverride cached but not readable (out of memory decompressing its text) is not an
 * absent one: no answer at all (the webhook says error), never one without its live entry, which
 * would let a git re-apply drop it (before: Set, with a's entry alone). */
static void test_unreadable_override_gives_no_answer(void **state) {
  Fake *fx = *state;
  programmed(fx);
  apply_override(fx, "b", 2, "web", kGood); /* changed: read, not learnt from the memo */
  json_object *in = git_version(fx), *list = NULL;
  fx->unreadable = "po/default/b";
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_DesiredResult d = po_Reconcile_Desired(&fx->io, fx->ix, kPo_TargetKind_ServiceDefaults, in, &list, &st);
  fx->unreadable = NULL;
  assert_int_equal(d, kPo_Desired_Error);
  assert_null(list);
  assert_int_equal(st.code, kPo_Ctl_NoMemory);
  assert_non_null(strstr(st.message, "po/default/b"));
  assert_int_equal(fx->lent, 0);
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set); /* readable again: both entries */
  assert_int_equal(json_object_array_length(list), 3);
  json_object_put(list);
  json_object_put(in);
}

static void test_other_extensions_come_from_the_write_not_the_store(void **state) {
  Fake *fx = *state;
  programmed(fx);
  json_object *in = git_version(fx), *list = NULL;
  /* git changes the lua entry and adds another: those are the writer's, kept as written */
  json_object *lua = json_object_array_get_idx(ext_of(in), 0);
  json_object_object_add(get(lua, "arguments"), "Script", json_object_new_string("y"));
  json_object_array_add(ext_of(in), json_tokener_parse("{\"name\":\"builtin/aws/lambda\",\"arguments\":{\"ARN\":\"z\"}}"));
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  assert_int_equal(json_object_array_length(list), 4);
  assert_string_equal(json_object_get_string(get(get(json_object_array_get_idx(list, 0), "arguments"), "Script")), "y");
  assert_string_equal(json_object_get_string(get(json_object_array_get_idx(list, 1), "name")), "builtin/aws/lambda");
  assert_true(json_object_equal(json_object_array_get_idx(list, 2), json_object_array_get_idx(ext_of(target(fx)), 1)));
  json_object_put(list);
  json_object_put(in);
}

static void test_stale_entry_in_the_write_is_replaced_by_the_current_one(void **state) {
  Fake *fx = *state;
  programmed(fx);
  json_object *stale = copy(ext_of(target(fx))); /* a's and b's entries at generation 1, as git might hold them */
  apply_override(fx, "a", 2, "web", kGood2);       /* a moves on; the reconciler has not run yet */
  json_object *in = git_version(fx), *list = NULL;
  json_object_object_add(get(in, "spec"), "envoyExtensions", stale);
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  json_object *ma = get(get(json_object_array_get_idx(list, 1), "arguments"), "PropertyOverride");
  assert_string_equal(json_object_get_string(get(ma, "name")), "a");
  assert_int_equal(json_object_get_int(get(ma, "generation")), 2);
  json_object_put(list);
  json_object_put(in);
}

static void test_forged_entry_is_not_made_ours(void **state) {
  Fake *fx = *state;
  programmed(fx);
  json_object *in = git_version(fx), *list = NULL;
  /* a marker naming a with the wrong uid: a look-alike, kept as the writer's, never counted as a */
  json_object_array_add(ext_of(in), json_tokener_parse(
      "{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"a\",\"generation\":9,"
      "\"uid\":\"forged\",\"targetUID\":\"forged\"},\"Patches\":[]}}"));
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  assert_int_equal(json_object_array_length(list), 4); /* lua, the look-alike, a, b */
  assert_string_equal(json_object_get_string(get(get(get(json_object_array_get_idx(list, 1), "arguments"), "PropertyOverride"), "uid")), "forged");
  assert_int_equal(json_object_get_int(get(get(get(json_object_array_get_idx(list, 2), "arguments"), "PropertyOverride"), "generation")), 1);
  json_object_put(list);
  json_object_put(in);
}

static void test_entry_the_controller_removes_does_not_come_back(void **state) {
  Fake *fx = *state;
  programmed(fx);
  char k[] = "po/default/a";
  json_object_object_add(get(slot(fx, k, false)->obj, "metadata"), "deletionTimestamp", json_object_new_string("2026-12-01T00:00:01Z"));
  bump(fx, slot(fx, k, false)->obj);
  json_object *in = git_version(fx), *list = NULL;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  assert_int_equal(json_object_array_length(list), 2); /* lua and b: a is being deleted */
  assert_string_equal(json_object_get_string(get(get(get(json_object_array_get_idx(list, 1), "arguments"), "PropertyOverride"), "name")), "b");
  json_object_put(list);
  json_object_put(in);
}

static void test_unclaimed_override_is_not_added(void **state) {
  Fake *fx = *state;
  programmed(fx);
  apply_override(fx, "c", 1, "web", kGood); /* no finalizer yet: the reconciler has not claimed it */
  json_object *in = git_version(fx), *list = NULL;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  assert_int_equal(json_object_array_length(list), 3); /* lua, a, b */
  json_object_put(list);
  json_object_put(in);
}

static void test_nothing_said_before_the_caches_synced_or_without_a_uid(void **state) {
  Fake *fx = *state;
  programmed(fx);
  json_object *in = git_version(fx), *list = NULL;
  fx->unsynced = true;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_NotSynced);
  assert_null(list);
  fx->unsynced = false;
  json_object_object_del(get(in, "metadata"), "uid"); /* a CREATE: the server has not assigned it yet */
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Keep);
  assert_null(list);
  json_object_put(in);
}

/* The answer carries every field of an entry the reconciler plans: spec.priority puts a (priority
 * 10) after b, spec.required is written into a's entry. An answer that ordered by name alone, or
 * left required out, would differ from the reconciler's write, and the webhook and the controller
 * would undo each other's writes on every apply. */
static void test_answer_orders_by_priority_and_carries_required(void **state) {
  Fake *fx = *state;
  programmed(fx);
  apply_override(fx, "a", 2, "web", kGood);
  json_object *a = slot(fx, "po/default/a", false)->obj;
  json_object_object_add(get(a, "spec"), "priority", json_object_new_int(10));
  json_object_object_add(get(a, "spec"), "required", json_object_new_boolean(1));
  bump(fx, a);
  assert_true(reconcile(fx).ok);
  json_object *ext = ext_of(target(fx));
  assert_int_equal(json_object_array_length(ext), 3);
  assert_string_equal(json_object_get_string(get(get(get(json_object_array_get_idx(ext, 2), "arguments"), "PropertyOverride"), "name")), "a");
  assert_true(json_object_get_boolean(get(json_object_array_get_idx(ext, 2), "required")));
  json_object *in = git_version(fx), *list = NULL;
  assert_int_equal(desired(fx, in, &list), kPo_Desired_Set);
  assert_true(json_object_equal(list, ext));
  json_object_put(list);
  json_object_put(in);
}

/* adv11: the mutating webhook's answer for a write of shop/web never carries the entry of a
 * PropertyOverride of a namespace the policy does not list, even one whose status.lastValid was
 * forged to name targetRef.namespace shop (its spec invalid, so the record would be kept). */
static void test_adv_desired_ignores_forged_cross_namespace_record(void **state) {
  Fake *fx = *state;
  fx->tenancy.n_cross = 0;
  apply_override_ns(fx, "shop", "own", 1, "web", NULL, kGood);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/shop/web").ok);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/shop/web").ok);
  apply_override_ns(fx, "team-x", "a", 1, "web", NULL, kGood2);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/team-x/web").ok);
  assert_true(po_Reconcile(&fx->io, fx->ix, "ServiceDefaults/team-x/web").ok);
  json_object *lv = get(get(slot(fx, "po/team-x/a", false)->obj, "status"), "lastValid");
  assert_non_null(lv);
  json_object_object_add(get(get(lv, "spec"), "targetRef"), "namespace", json_object_new_string("shop"));
  apply_override_ns(fx, "team-x", "a", 2, "web",
                    NULL, "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                          "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":150}]");
  json_object *incoming = copy(slot(fx, "ServiceDefaults/shop/web", false)->obj);
  json_object_object_del(get(incoming, "spec"), "envoyExtensions"); /* a write from git, without ours */
  json_object *list = NULL;
  po_DesiredResult d = desired(fx, incoming, &list);
  assert_int_equal(d, kPo_Desired_Set);
  for (size_t i = 0; list && i < json_object_array_length(list); i++) {
    const char *uid = json_object_get_string(get(get(get(json_object_array_get_idx(list, i), "arguments"), "PropertyOverride"), "uid"));
    if (uid && !strcmp(uid, "uid-po-team-x-a")) fail_msg("the webhook merges team-x/a's entry into shop/web: %s", json_object_to_json_string(list));
  }
  json_object_put(list);
  json_object_put(incoming);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_stripped_write_gets_exactly_the_reconcilers_entries, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stripped_write_after_a_restart_keeps_the_last_valid_entry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_extensions_come_from_the_write_not_the_store, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unreadable_override_gives_no_answer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_entry_in_the_write_is_replaced_by_the_current_one, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_entry_is_not_made_ours, setup, teardown),
      cmocka_unit_test_setup_teardown(test_entry_the_controller_removes_does_not_come_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unclaimed_override_is_not_added, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nothing_said_before_the_caches_synced_or_without_a_uid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_answer_orders_by_priority_and_carries_required, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv_desired_ignores_forged_cross_namespace_record, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
