/* What the validating decision reads, so that the configurations' matchConditions may leave
 * out exactly the writes it allows anyway (deploy/base/webhook.yaml, issue 21 item 4):
 *   - a PropertyOverride is judged on its spec and namespace alone: whatever its labels,
 *     annotations, finalizers or owners say, the verdict is the same, and an update that leaves
 *     spec as it was is allowed (matchCondition spec-changed);
 *   - a ServiceDefaults/ProxyDefaults is judged on its builtin/property-override entries alone:
 *     an update that leaves them as they were, wherever other extensions moved, is allowed even
 *     when they would now be refused (matchCondition entries-changed); one that adds, changes,
 *     removes one of several or reorders them is judged;
 *   - a ServiceDefaults/ProxyDefaults write by the controller itself (controller_user, the
 *     username in request.userInfo) is allowed unread (matchCondition not-the-controller); one by
 *     anybody else, or with no controller_user set, is judged.
 * A new rule of the webhook that reads anything else must change these tests and the
 * matchConditions together. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"
#include "po/webhook/admission.h"

/* The AdmissionReview of `op` on `obj` (JSON text) with `old` (JSON text, NULL: none), sent by
 * `user`. */
static char *review_by(const char *user, const char *group, const char *kind, const char *op, const char *obj,
                       const char *old) {
  const char fmt[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
                     "\"kind\":{\"group\":\"%s\",\"version\":\"v1alpha1\",\"kind\":\"%s\"},\"operation\":\"%s\","
                     "\"namespace\":\"team-a\",\"userInfo\":{\"username\":\"%s\"},\"object\":%s,\"oldObject\":%s}}";
  size_t n = sizeof fmt + strlen(user) + strlen(group) + strlen(kind) + strlen(op) + strlen(obj) +
             (old ? strlen(old) : 4);
  char *body = malloc(n);
  snprintf(body, n, fmt, group, kind, op, user, obj, old ? old : "null");
  return body;
}
static char *review(const char *group, const char *kind, const char *op, const char *obj, const char *old) {
  return review_by("alice", group, kind, op, obj, old);
}

/* allowed: 1, denied: 0. */
static int decide_with(char *body, const po_AdmissionOptions *opt) {
  po_Arena *a = po_Arena_New();
  po_CtlStatus st;
  json_object *out = po_Admission_Review(body, strlen(body), opt, a, &st);
  free(body);
  if (!out) fail_msg("no answer (%d): %s", (int)st.http_status, st.message);
  int allowed = json_object_get_boolean(json_object_object_get(json_object_object_get(out, "response"), "allowed"));
  json_object_put(out);
  po_Arena_Free(a);
  return allowed;
}
static int decide(char *body) { return decide_with(body, NULL); }

/* ---- PropertyOverrides ---------------------------------------------------------------------- */

static const char kGoodSpec[] =
    "{\"targetRef\":{\"name\":\"api\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
    "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]}";
static const char kBadSpec[] =
    "{\"targetRef\":{\"name\":\"api\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
    "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":150}]}";

/* Everything metadata can carry that is not the name or namespace. */
static const char *const kMetadata[] = {
    "",
    ",\"labels\":{\"team\":\"a\",\"app.kubernetes.io/managed-by\":\"propertyoverride\"}",
    (",\"annotations\":{\"propertyoverride.io/written\":\"at=2026-01-01T00:00:00Z spec=0 status=0\","
     "\"propertyoverride.io/created\":\"u\",\"propertyoverride.io/owner-uid\":\"u\"}"),
    ",\"finalizers\":[\"propertyoverride.io/finalizer\",\"other.example/x\"]",
    ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"x\",\"uid\":\"u\"}]",
    ",\"generation\":7,\"uid\":\"u-1\",\"resourceVersion\":\"42\"",
};

static char *override(const char *metadata, const char *spec) {
  const char fmt[] = "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                     "\"metadata\":{\"name\":\"p\",\"namespace\":\"team-a\"%s},\"spec\":%s}";
  size_t n = sizeof fmt + strlen(metadata) + strlen(spec);
  char *s = malloc(n);
  snprintf(s, n, fmt, metadata, spec);
  return s;
}

static int override_decision(const char *op, const char *metadata, const char *spec, const char *old_metadata,
                             const char *old_spec) {
  char *o = override(metadata, spec), *p = old_spec ? override(old_metadata, old_spec) : NULL;
  int r = decide(review("propertyoverride.io", "PropertyOverride", op, o, p));
  free(o);
  free(p);
  return r;
}

static void test_override_verdict_ignores_metadata(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kMetadata / sizeof *kMetadata; i++) {
    assert_int_equal(override_decision("CREATE", kMetadata[i], kGoodSpec, NULL, NULL), 1);
    assert_int_equal(override_decision("CREATE", kMetadata[i], kBadSpec, NULL, NULL), 0);
    /* a spec change is judged, whatever metadata comes with it */
    assert_int_equal(override_decision("UPDATE", kMetadata[i], kBadSpec, "", kGoodSpec), 0);
    assert_int_equal(override_decision("UPDATE", kMetadata[i], kGoodSpec, "", kBadSpec), 1);
  }
}

/* A stored PropertyOverride the webhook would now refuse (written while it was off): any
 * metadata-only update passes, so a finalizer can always be removed. */
static void test_override_metadata_only_update_allowed(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kMetadata / sizeof *kMetadata; i++) {
    for (size_t k = 0; k < sizeof kMetadata / sizeof *kMetadata; k++) {
      assert_int_equal(override_decision("UPDATE", kMetadata[i], kBadSpec, kMetadata[k], kBadSpec), 1);
    }
  }
}

/* ---- ServiceDefaults / ProxyDefaults -------------------------------------------------------- */

#define LUA "{\"name\":\"builtin/lua\",\"arguments\":{\"ProxyType\":\"connect-proxy\",\"Listener\":\"inbound\",\"Script\":\"x\"}}"
#define PATCH(v)                                                                                                     \
  "{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"add\","             \
  "\"Path\":\"/outlier_detection/max_ejection_percent\",\"Value\":" #v "}"
#define ENTRY(v) "{\"name\":\"builtin/property-override\",\"arguments\":{\"Patches\":[" PATCH(v) "]}}"
#define GOOD ENTRY(50)
#define GOOD2 ENTRY(40)
#define BAD ENTRY(150) /* refused: max_ejection_percent is at most 100 */
#define BAD2 ENTRY(160)
#define SD(protocol, list)                                                                                            \
  "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\",\"metadata\":{\"name\":\"api\","   \
  "\"namespace\":\"team-a\"},\"spec\":{\"protocol\":\"" protocol "\",\"envoyExtensions\":[" list "]}}"

static int sd(const char *op, const char *obj, const char *old) {
  return decide(review("consul.hashicorp.com", "ServiceDefaults", op, obj, old));
}

static void test_consul_entries_unchanged_allowed(void **state) {
  (void)state;
  /* the entries as they were, though the webhook would refuse them now */
  assert_int_equal(sd("UPDATE", SD("grpc", LUA "," BAD), SD("http", LUA "," BAD)), 1);  /* protocol */
  assert_int_equal(sd("UPDATE", SD("http", LUA "," BAD), SD("http", BAD)), 1);         /* moved by another */
  assert_int_equal(sd("UPDATE", SD("http", BAD), SD("http", BAD "," LUA)), 1);          /* another removed */
  assert_int_equal(sd("UPDATE", SD("http", BAD "," LUA "," BAD2), SD("http", LUA "," BAD "," BAD2)), 1);
  assert_int_equal(decide(review("consul.hashicorp.com", "ProxyDefaults", "UPDATE", SD("grpc", BAD), SD("http", BAD))), 1);
}

static void test_consul_entries_changed_judged(void **state) {
  (void)state;
  assert_int_equal(sd("CREATE", SD("http", BAD), NULL), 0);
  assert_int_equal(sd("UPDATE", SD("http", BAD), SD("http", GOOD)), 0);                 /* changed */
  assert_int_equal(sd("UPDATE", SD("http", GOOD "," BAD), SD("http", GOOD)), 0);        /* added */
  assert_int_equal(sd("UPDATE", SD("http", BAD), SD("http", BAD "," GOOD)), 0);         /* one of two removed */
  assert_int_equal(sd("UPDATE", SD("http", BAD2 "," BAD), SD("http", BAD "," BAD2)), 0); /* reordered */
  assert_int_equal(sd("UPDATE", SD("http", BAD), SD("http", LUA)), 0);                  /* the first */
  /* judged and valid */
  assert_int_equal(sd("UPDATE", SD("http", GOOD "," GOOD2), SD("http", GOOD)), 1);
  /* removing the last one is always allowed */
  assert_int_equal(sd("UPDATE", SD("http", LUA), SD("http", LUA "," BAD)), 1);
}

#define CONTROLLER "system:serviceaccount:propertyoverride-system:propertyoverride-controller"

/* A ServiceDefaults/ProxyDefaults review sent by `user`, decided with `opt`. */
static int target_by(const char *user, const char *kind, const char *op, const char *obj, const char *old,
                     const po_AdmissionOptions *opt) {
  return decide_with(review_by(user, "consul.hashicorp.com", kind, op, obj, old), opt);
}

/* The controller's own target writes: allowed unread, whatever they hold; anybody else's, and the
 * same username when no controller_user is set, judged. PropertyOverrides are judged whoever
 * writes them (the controller never writes a spec). */
static void test_controller_target_writes_allowed(void **state) {
  (void)state;
  const po_AdmissionOptions me = {.controller_user = CONTROLLER};
  const po_AdmissionOptions empty = {.controller_user = ""};
  const char *kinds[] = {"ServiceDefaults", "ProxyDefaults"};
  for (int k = 0; k < 2; k++) {
    assert_int_equal(target_by(CONTROLLER, kinds[k], "UPDATE", SD("http", BAD), SD("http", GOOD), &me), 1);
    assert_int_equal(target_by(CONTROLLER, kinds[k], "CREATE", SD("http", BAD), NULL, &me), 1);
    assert_int_equal(target_by("alice", kinds[k], "UPDATE", SD("http", BAD), SD("http", GOOD), &me), 0);
    assert_int_equal(target_by(CONTROLLER "x", kinds[k], "UPDATE", SD("http", BAD), SD("http", GOOD), &me), 0);
    assert_int_equal(target_by(CONTROLLER, kinds[k], "UPDATE", SD("http", BAD), SD("http", GOOD), NULL), 0);
    assert_int_equal(target_by("", kinds[k], "UPDATE", SD("http", BAD), SD("http", GOOD), &empty), 0);
  }
  char *o = override("", kBadSpec);
  char *po_review = review_by(CONTROLLER, "propertyoverride.io", "PropertyOverride", "CREATE", o, NULL);
  assert_int_equal(decide_with(po_review, &me), 0);
  free(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_override_verdict_ignores_metadata),
      cmocka_unit_test(test_override_metadata_only_update_allowed),
      cmocka_unit_test(test_consul_entries_unchanged_allowed),
      cmocka_unit_test(test_consul_entries_changed_judged),
      cmocka_unit_test(test_controller_target_writes_allowed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
