/* Programmed under --consul-sync-status (controller/reconcile/src/sync.h): the verdict as data
 * (sync/judge.json: a target's status and our write record -> Live, Pending, Failed), then the
 * reconcile with consul-k8s's part played by hand: Pending -> Programmed, SyncFailed with
 * consul-k8s's message, the timeout's one Warning Event, a restore that keeps the record, a
 * write put off in the second of a status write, another PropertyOverride's write. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"
#include "sync.h"

/* ---- the verdict, as data ---- */

static void test_judge_cases(void **state) {
  (void)state;
  json_object *all = json_object_from_file(PO_SYNC_DIR "/judge.json");
  assert_non_null(all);
  json_object *cases = get(all, "cases");
  assert_true(json_object_array_length(cases) >= 10);
  for (size_t i = 0; i < json_object_array_length(cases); i++) {
    json_object *c = json_object_array_get_idx(cases, i), *want = get(c, "want");
    const char *name = json_object_get_string(get(c, "name"));
    json_object *t = json_tokener_parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"}}");
    json_object *st = get(c, "status");
    if (st && json_object_is_type(st, json_type_object)) json_object_object_add(t, "status", copy(st));
    json_object *rec = get(c, "record");
    if (rec && json_object_is_type(rec, json_type_object)) {
      uint64_t h = po_Sync_StatusHash(t);
      po_WriteRecord r = {.present = true, .at = po_Sync_ParseTime(json_object_get_string(get(rec, "at"))), .spec_hash = 7,
                          .status_hash = !strcmp(json_object_get_string(get(rec, "status")), "same") ? h : h ^ 1};
      assert_true(po_Sync_SetRecord(t, &r));
    }
    po_WriteRecord w = po_Sync_ReadRecord(t); /* through the annotation, as a restarted controller reads it */
    assert_int_equal(w.present, rec && json_object_is_type(rec, json_type_object));
    po_SyncPolicy p = {.mode = !strcmp(json_object_get_string(get(c, "mode")), "require") ? kPo_SyncMode_Require : kPo_SyncMode_Ignore,
                       .timeout_s = json_object_get_int64(get(c, "timeout"))};
    po_SyncVerdict v;
    po_Sync_Judge(&p, t, &w, po_Sync_ParseTime(json_object_get_string(get(c, "now"))), "ServiceDefaults default/web", &v);
    const char *states[] = {"Live", "Pending", "Failed"};
    if (strcmp(states[v.state], json_object_get_string(get(want, "state"))) != 0) {
      fail_msg("case '%s': state %s, want %s (%s)", name, states[v.state], json_object_get_string(get(want, "state")), v.message);
    }
    bool timed_out = get(want, "timedOut") && json_object_get_boolean(get(want, "timedOut"));
    if (v.timed_out != timed_out) fail_msg("case '%s': timedOut %d", name, v.timed_out);
    if (v.recheck_in_s != json_object_get_int64(get(want, "recheck"))) {
      fail_msg("case '%s': recheck in %lld s", name, (long long)v.recheck_in_s);
    }
    const char *msg = get(want, "message") ? json_object_get_string(get(want, "message")) : NULL;
    if (msg && !strstr(v.message, msg)) fail_msg("case '%s': message\n  %s\nlacks\n  %s", name, v.message, msg);
    json_object_put(t);
  }
  json_object_put(all);
}

static void test_parse_time(void **state) {
  (void)state;
  assert_int_equal(po_Sync_ParseTime("1970-01-01T00:00:00Z"), 0);
  assert_int_equal(po_Sync_ParseTime("2026-12-01T00:00:01Z"), 1796083201);
  assert_int_equal(po_Sync_ParseTime("2026-12-01T00:00:01.999999Z"), 1796083201); /* MicroTime: the second */
  assert_int_equal(po_Sync_ParseTime("2026-12-01T01:00:01+01:00"), 1796083201);
  assert_int_equal(po_Sync_ParseTime("2026-12-01T00:00:01"), -1); /* no zone */
  assert_int_equal(po_Sync_ParseTime("2026-13-01T00:00:01Z"), -1);
  assert_int_equal(po_Sync_ParseTime("yesterday"), -1);
  assert_int_equal(po_Sync_ParseTime(NULL), -1);
  /* a malformed record is as if absent */
  json_object *t = json_tokener_parse("{\"metadata\":{\"annotations\":{\"propertyoverride.io/written\":\"at=soon spec=1 status=2\"}}}");
  assert_false(po_Sync_ReadRecord(t).present);
  json_object_put(t);
}

/* ---- the reconcile, consul-k8s played by hand ---- */

static const char *kGood = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";
static const char *kGood2 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":30}]";

static po_SyncPolicy g_policy = {.mode = kPo_SyncMode_Require, .timeout_s = 120};

static po_ReconcileResult run(Fake *fx) {
  po_ReconcileIO io = fx->io;
  io.sync = &g_policy;
  return po_Reconcile(&io, fx->ix, "ServiceDefaults/default/web");
}

static json_object *target(Fake *fx) {
  Slot *s = slot(fx, "ServiceDefaults/default/web", false);
  return s ? s->obj : NULL;
}

static const char *cond(Fake *fx, const char *po, const char *field) {
  char k[300];
  snprintf(k, sizeof k, "po/default/%s", po);
  json_object *list = get(get(slot(fx, k, false)->obj, "status"), "conditions");
  for (size_t i = 0; list && i < json_object_array_length(list); i++) {
    json_object *c = json_object_array_get_idx(list, i);
    if (!strcmp(json_object_get_string(get(c, "type")), "Programmed")) return json_object_get_string(get(c, field));
  }
  return "";
}

/* What consul-k8s's status write does (SetSyncedCondition replaces the list; lastSyncedTime on
 * success), through the status subresource: a new resourceVersion. */
static void consul_k8s_status(Fake *fx, const char *status, const char *reason, const char *message, const char *when) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"conditions\":[{\"type\":\"Synced\",\"status\":\"%s\",\"reason\":\"%s\",\"message\":\"%s\","
           "\"lastTransitionTime\":\"%s\"}]%s%s%s}",
           status, reason, message, when, !strcmp(status, "True") ? ",\"lastSyncedTime\":\"" : "",
           !strcmp(status, "True") ? when : "", !strcmp(status, "True") ? "\"" : "");
  json_object_object_add(target(fx), "status", json_tokener_parse(text));
  bump(fx, target(fx));
}

static const char *record_of_target(Fake *fx) {
  return json_object_get_string(get(get(get(target(fx), "metadata"), "annotations"), PO_WRITTEN_ANNOTATION));
}

static void test_pending_then_programmed(void **state) {
  Fake *fx = *state;
  fx->now = "2026-12-01T00:00:00Z";
  apply_override(fx, "a", 1, "web", kGood);
  po_ReconcileResult r = run(fx);
  assert_true(r.ok);
  assert_non_null(record_of_target(fx));
  assert_string_equal(cond(fx, "a", "status"), "False");
  assert_string_equal(cond(fx, "a", "reason"), "Pending");
  assert_non_null(strstr(cond(fx, "a", "message"), "waiting for consul-k8s"));
  assert_int_equal(r.result.kind, kPo_Result_RequeueAfter); /* the timeout is checked without any event */
  assert_int_equal(r.recheck_in_s, 120);
  assert_int_equal(fx->warnings, 0); /* Pending is not a fault */
  /* consul-k8s's first sight: Unknown without a reason, still pending */
  fx->now = "2026-12-01T00:00:01Z";
  consul_k8s_status(fx, "Unknown", "", "", "2026-12-01T00:00:01Z");
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Pending");
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:01Z");
  r = run(fx);
  assert_true(r.ok);
  assert_string_equal(cond(fx, "a", "status"), "True");
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
  assert_string_equal(cond(fx, "a", "message"), "generation 1 is live in ServiceDefaults default/web, synced into Consul by consul-k8s");
  assert_int_equal(r.result.kind, kPo_Result_Success);
  int writes = fx->target_writes, statuses = fx->status_patches;
  assert_true(run(fx).ok); /* settled: nothing more */
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(fx->status_patches, statuses);
}

/* Under require every write that changes the entries records itself (the annotation): that
 * write is a JSON Patch of the change too, the annotations set whole, never the whole object (the
 * fixture checks each patch makes exactly the planned object, the record included). */
static void test_recorded_write_is_a_json_patch(void **state) {
  Fake *fx = *state;
  fx->now = "2026-12-01T00:00:00Z";
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok); /* created, then annotated and recorded with its entry: a patch */
  int patches = fx->target_json_patches;
  assert_true(patches >= 1);
  const char *first = record_of_target(fx);
  assert_non_null(first);
  char was[256];
  snprintf(was, sizeof was, "%s", first);
  fx->now = "2026-12-01T00:00:05Z";
  apply_override(fx, "b", 1, "web", kGood);
  assert_true(run(fx).ok);
  assert_int_equal(fx->target_json_patches, patches + 1);
  assert_int_equal(fx->last_json_patch_ops, 3); /* the version, the annotations (a new record), one add */
  assert_string_not_equal(record_of_target(fx), was);
  assert_string_equal(cond(fx, "b", "reason"), "Pending");
}

/* Under --consul-sync-status=require (the default) every valid write goes Pending, then
 * Programmed once consul-k8s synced it: neither the first status nor Pending <-> Programmed is an
 * Event (po_Status_IsNews), at the create or at an update; the status says it. (The first version
 * of the rule said Pending -> Programmed, one Event per create: the adversarial review's find.) */
static void test_plain_writes_under_require_are_not_news(void **state) {
  Fake *fx = *state;
  /* generation g of a written at `written`, consul-k8s syncing it at `synced`: Pending, then Programmed */
  const struct {
    int g;
    const char *written, *synced;
  } steps[] = {{1, "2026-12-01T00:00:00Z", "2026-12-01T00:00:01Z"}, /* the create */
               {2, "2026-12-01T00:00:05Z", "2026-12-01T00:00:06Z"}}; /* an update: Programmed -> Pending -> Programmed */
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    fx->now = steps[i].written;
    apply_override(fx, "a", steps[i].g, "web", kGood);
    assert_true(run(fx).ok);
    assert_string_equal(cond(fx, "a", "reason"), "Pending");
    fx->now = steps[i].synced;
    consul_k8s_status(fx, "True", "", "", steps[i].synced);
    assert_true(run(fx).ok);
    assert_string_equal(cond(fx, "a", "reason"), "Programmed");
    assert_int_equal(json_object_get_int(get(get(slot(fx, "po/default/a", false)->obj, "status"), "programmedGeneration")),
                     steps[i].g);
    assert_int_equal(fx->events, 0);
  }
}

static void test_sync_failed_with_consul_message(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  fx->now = "2026-12-01T00:00:05Z";
  consul_k8s_status(fx, "False", "ConsulAgentError", "writing config entry to consul: Unexpected response code: 500", "2026-12-01T00:00:05Z");
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "status"), "False");
  assert_string_equal(cond(fx, "a", "reason"), "SyncFailed");
  assert_non_null(strstr(cond(fx, "a", "message"), "(Synced=False, ConsulAgentError): writing config entry to consul: Unexpected response code: 500"));
  assert_string_equal(fx->last_event_reason, "SyncFailed");
  assert_int_equal(fx->warnings, 1);
}

static void test_timeout_event_once(void **state) {
  Fake *fx = *state;
  fx->now = "2026-12-01T00:00:00Z";
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  fx->now = "2026-12-01T00:01:00Z";
  po_ReconcileResult r = run(fx);
  assert_int_equal(r.recheck_in_s, 60);
  assert_int_equal(r.sync_timeouts, 0);
  fx->now = "2026-12-01T00:02:00Z";
  r = run(fx);
  assert_true(r.ok);
  assert_int_equal(r.sync_timeouts, 1);
  assert_string_equal(fx->last_event_reason, "SyncTimeout");
  assert_string_equal(cond(fx, "a", "reason"), "Pending");
  assert_non_null(strstr(cond(fx, "a", "message"), PO_SYNC_TIMEOUT_PREFIX " ServiceDefaults default/web synced within 2m"));
  assert_int_equal(r.result.kind, kPo_Result_Success); /* nothing more to wait for */
  int events = fx->events;
  fx->now = "2026-12-01T00:09:00Z";
  r = run(fx);
  assert_int_equal(r.sync_timeouts, 0); /* once */
  assert_int_equal(fx->events, events);
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:09:00Z"); /* late, but synced */
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
}

static void test_ignore_mode_written_is_programmed(void **state) {
  Fake *fx = *state;
  g_policy.mode = kPo_SyncMode_Ignore;
  apply_override(fx, "a", 1, "web", kGood);
  po_ReconcileResult r = run(fx);
  g_policy.mode = kPo_SyncMode_Require;
  assert_true(r.ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
  assert_null(record_of_target(fx)); /* nothing to wait for, nothing recorded */
}

/* Someone strips our entry (a GitOps apply of a copy without it) before consul-k8s saw anything:
 * the restore writes the very spec recorded, so the record stays and Programmed stays True
 * (consul-k8s finds Consul equal and writes no status). */
static void test_restore_keeps_record(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  fx->now = "2026-12-01T00:00:02Z";
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:02Z");
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
  char rec[256];
  snprintf(rec, sizeof rec, "%s", record_of_target(fx));
  json_object_object_del(get(target(fx), "spec"), "envoyExtensions");
  bump(fx, target(fx));
  fx->now = "2026-12-01T00:00:09Z";
  int writes = fx->target_writes;
  assert_true(run(fx).ok);
  assert_int_equal(fx->target_writes, writes + 1);
  assert_string_equal(record_of_target(fx), rec);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
}

/* A write in the second of consul-k8s's last status write (or the one either side of it, as the
 * clocks are never exactly together) is put off: the next status could otherwise be the same,
 * time and all, and the write would never look synced. */
static void test_write_put_off_in_the_second_of_a_status_write(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  fx->now = "2026-12-01T00:00:03Z";
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:03Z");
  assert_true(run(fx).ok);
  apply_override(fx, "a", 2, "web", kGood2);
  int writes = fx->target_writes;
  po_ReconcileResult r = run(fx);
  assert_true(r.ok);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(r.result.kind, kPo_Result_RequeueAfter);
  assert_int_equal(r.recheck_in_s, 1);
  fx->now = "2026-12-01T00:00:04Z"; /* still within a second of it (clocks a fraction apart) */
  assert_true(run(fx).ok);
  assert_int_equal(fx->target_writes, writes);
  fx->now = "2026-12-01T00:00:05Z";
  assert_true(run(fx).ok);
  assert_int_equal(fx->target_writes, writes + 1);
  assert_string_equal(cond(fx, "a", "reason"), "Pending");
  /* consul-k8s's clock ten minutes ahead: its status times are never "this second" by ours, and
   * the write is not put off for the skew */
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:10:04Z");
  apply_override(fx, "a", 3, "web", kGood);
  fx->now = "2026-12-01T00:00:06Z";
  assert_true(run(fx).ok);
  assert_int_equal(fx->target_writes, writes + 2);
}

/* A write for b's entry rewrites the target's record; a, synced already at its generation, keeps
 * Programmed=True (its entry is as Consul has it), b waits. */
static void test_other_entry_write_keeps_live_one(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  fx->now = "2026-12-01T00:00:02Z";
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:02Z");
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
  fx->now = "2026-12-01T00:00:05Z";
  apply_override(fx, "b", 1, "web", kGood2);
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "status"), "True");
  assert_string_equal(cond(fx, "b", "reason"), "Pending");
}


/* adv: consul-k8s's clock less than a second behind ours (NTP keeps nodes within that, not
 * within the same second): its last status write reads 00:00:03 while our clock says 00:00:04.
 * A write now is answered within the same second of consul-k8s's clock, with the very status it
 * wrote before (Synced=True, 00:00:03): the record's status hash matches and the write would look
 * unsynced forever. The write is put off until consul-k8s's second is surely past. */
static void test_write_put_off_under_subsecond_skew(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  fx->now = "2026-12-01T00:00:04Z"; /* consul-k8s's 00:00:03.6 */
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:03Z");
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
  apply_override(fx, "a", 2, "web", kGood2);
  int writes = fx->target_writes;
  assert_true(run(fx).ok);
  if (fx->target_writes > writes) {
    /* written at our 00:00:04.1 = consul-k8s's 00:00:03.7: its answer, in the same second */
    consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:03Z");
  } else {
    fx->now = "2026-12-01T00:00:05Z";
    assert_true(run(fx).ok);
    if (fx->target_writes == writes) {
      fx->now = "2026-12-01T00:00:06Z";
      assert_true(run(fx).ok);
    }
    assert_int_equal(fx->target_writes, writes + 1);
    consul_k8s_status(fx, "True", "", "", fx->now); /* any later second of consul-k8s's clock */
  }
  fx->now = "2026-12-01T00:00:30Z";
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
  /* and a clock a fraction ahead: consul-k8s's 00:00:31.2 is our 00:00:30.7 */
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:31Z");
  apply_override(fx, "a", 3, "web", kGood);
  writes = fx->target_writes;
  po_ReconcileResult r = run(fx);
  assert_true(r.ok);
  assert_int_equal(fx->target_writes, writes);
  assert_int_equal(r.recheck_in_s, 1);
}

/* adv: a tenant who may update the ServiceDefaults sets our record's time far in the future
 * (year 9999). The wait "until the timeout falls due" was timeout - (now - at): 2.5e11 s,
 * times 1e9 for RequeueAfter's nanoseconds, a signed overflow (a negative delay: a reconcile
 * loop). A record from the future waits no longer than the timeout between looks. */
static void test_forged_future_record_bounded_recheck(void **state) {
  Fake *fx = *state;
  fx->now = "2026-12-01T00:00:00Z";
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  json_object_object_add(get(get(target(fx), "metadata"), "annotations"), PO_WRITTEN_ANNOTATION,
                         json_object_new_string("at=9999-12-31T23:59:59Z spec=0000000000000001 status=0000000000000002"));
  bump(fx, target(fx));
  /* a restarted controller: only the annotation to go by */
  po_TargetIndex_Free(fx->ix);
  fx->ix = po_TargetIndex_New();
  fx->now = "2026-12-01T00:00:10Z";
  po_ReconcileResult r = run(fx);
  assert_true(r.ok);
  assert_string_equal(cond(fx, "a", "reason"), "Pending");
  assert_true(r.recheck_in_s > 0 && r.recheck_in_s <= 120);
  assert_int_equal(r.result.kind, kPo_Result_RequeueAfter);
  assert_true(r.result.requeue_after_ns > 0 && r.result.requeue_after_ns <= INT64_C(120000000000));
}

/* adv: a tenant who may update the ServiceDefaults (not its status) deletes our write record
 * while consul-k8s has not synced (it is down). Without a record the status as it is
 * (Synced=True from before our write) was taken as after it: Programmed=True for a write Consul
 * never got. The record this process wrote, kept in memory, wins while the spec is the one it
 * wrote (after a restart the annotation is all there is: docs/crd.md, known limit). */
static void test_forged_record_removal_keeps_pending(void **state) {
  Fake *fx = *state;
  fx->now = "2026-12-01T00:00:00Z";
  apply_override(fx, "a", 1, "web", kGood);
  assert_true(run(fx).ok);
  fx->now = "2026-12-01T00:00:01Z";
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:01Z");
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
  fx->now = "2026-12-01T00:00:05Z"; /* consul-k8s is down from here on */
  apply_override(fx, "a", 2, "web", kGood2);
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Pending");
  json_object_object_del(get(get(target(fx), "metadata"), "annotations"), PO_WRITTEN_ANNOTATION);
  bump(fx, target(fx));
  fx->now = "2026-12-01T00:00:10Z";
  assert_true(run(fx).ok);
  assert_string_not_equal(cond(fx, "a", "status"), "True");
  /* edited rather than removed: a status hash that is not the one recorded */
  json_object_object_add(get(get(target(fx), "metadata"), "annotations"), PO_WRITTEN_ANNOTATION,
                         json_object_new_string("at=2026-12-01T00:00:05Z spec=0000000000000001 status=0000000000000002"));
  bump(fx, target(fx));
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Pending");
  /* consul-k8s comes back and syncs: Programmed */
  fx->now = "2026-12-01T00:00:20Z";
  consul_k8s_status(fx, "True", "", "", "2026-12-01T00:00:20Z");
  assert_true(run(fx).ok);
  assert_string_equal(cond(fx, "a", "reason"), "Programmed");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_judge_cases),
      cmocka_unit_test(test_parse_time),
      cmocka_unit_test_setup_teardown(test_pending_then_programmed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_recorded_write_is_a_json_patch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_plain_writes_under_require_are_not_news, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sync_failed_with_consul_message, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout_event_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ignore_mode_written_is_programmed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restore_keeps_record, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_put_off_in_the_second_of_a_status_write, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_entry_write_keeps_live_one, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_put_off_under_subsecond_skew, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_future_record_bounded_recheck, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forged_record_removal_keeps_pending, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
