/* Issue 24 in the reconciler: every PropertyOverride is judged by the Envoy API snapshot of the
 * release its target's mesh runs (po_TargetOptions: --consul-version, --istio-version,
 * --envoy-gateway-version), its status says which (status.envoyApi, the Accepted message), and
 * a Deprecated condition lists the fields that snapshot deprecates while they are set; a
 * restarted controller finds that status current and writes nothing. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_api.h"
#include "mesh_test.h"
#include "po/meshes/mesh.h"
#include "po/webhook/admission.h"

/* Options naming the releases given ("1.22"; NULL: the mesh's default), as the controller sets
 * them from its flags; Istio's minor too (MERGE_AND_REPLACE_LIST reads it). */
static po_TargetOptions releases(const char *consul, const char *istio, const char *eg) {
  po_TargetOptions o = {0};
  const char *given[kPo_MeshSlots] = {[kPo_Mesh_Consul] = consul, [kPo_Mesh_Istio] = istio, [kPo_Mesh_EnvoyGateway] = eg};
  for (int m = 0; m < kPo_MeshSlots; m++) {
    if (!given[m]) continue;
    o.release[m] = po_MeshReleases_Find(po_Mesh_Ops((po_Mesh)m)->releases, given[m]);
    assert_non_null(o.release[m]);
  }
  if (istio) sscanf(istio, "1.%d", &o.istio_minor);
  return o;
}

static const char *kP50 = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                          "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50}]";
/* deprecated in every embedded snapshot (Cluster.use_tcp_for_dns_lookups) */
static const char *kDeprecated = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                                 "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":50},"
                                 "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                                 "\"op\":\"add\",\"path\":\"/use_tcp_for_dns_lookups\",\"value\":true}]";

/* Listener.tcp_keepalive: in go-control-plane envoy v1.37.0 (Istio 1.28 to 1.31) and not in
 * v1.32.4 (Consul, Istio 1.26 and 1.27) */
static const char *kKeepalive = "[{\"resourceFilter\":{\"resourceType\":\"listener\",\"trafficDirection\":\"inbound\"},"
                                "\"op\":\"add\",\"path\":\"/tcp_keepalive/keepalive_probes\",\"value\":3}]";
/* Cluster.dns_jitter: in every embedded snapshot, deprecated in each (the DNS settings moved into
 * the DnsCluster extension) */
static const char *kJitter = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                             "\"op\":\"add\",\"path\":\"/dns_jitter\",\"value\":\"2s\"}]";

static po_ReconcileResult web(Fake *fx) { return rec(fx, "ServiceDefaults/default/web"); }
static json_object *api(Fake *fx, const char *name) { return get(get(po_of(fx, name), "status"), "envoyApi"); }
static const char *api_field(Fake *fx, const char *name, const char *k) {
  return json_object_get_string(get(api(fx, name), k));
}
static const char *accepted_message(Fake *fx, const char *name) {
  return json_object_get_string(get(condition(fx, name, "Accepted"), "message"));
}

/* The default Consul release (1.22) and its snapshot, named in status.envoyApi and in the
 * Accepted message; --consul-version 1.21 says 1.21. */
static void test_status_names_the_snapshot(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kP50);
  assert_true(web(fx).ok);
  assert_non_null(api(fx, "a"));
  assert_string_equal(api_field(fx, "a", "mesh"), "Consul");
  assert_string_equal(api_field(fx, "a", "release"), "1.22");
  assert_string_equal(api_field(fx, "a", "snapshot"), "v1.32.4");
  assert_string_equal(accepted_message(fx, "a"), "1 patch is valid for Consul and Envoy (judged against go-control-plane "
                                             "envoy v1.32.4, the Envoy API of Consul 1.22)");

  po_TargetOptions o = releases("1.21", NULL, NULL);
  po_TargetIndex_SetOptions(fx->ix, &o);
  apply_override(fx, "b", 1, "web", kP50);
  assert_true(web(fx).ok);
  assert_string_equal(api_field(fx, "b", "release"), "1.21");
  assert_non_null(strstr(accepted_message(fx, "b"), "the Envoy API of Consul 1.21"));
}

/* A field the snapshot deprecates: the override is accepted and programmed, and a Deprecated
 * condition names the field and the snapshot (one Warning Event); the field removed, the
 * condition goes. */
static void test_deprecated_condition_comes_and_goes(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kDeprecated);
  int events = fx->events;
  assert_true(web(fx).ok);
  assert_string_equal(json_object_get_string(get(condition(fx, "a", "Accepted"), "status")), "True");
  assert_string_equal(json_object_get_string(get(condition(fx, "a", "Programmed"), "status")), "True");
  json_object *d = condition(fx, "a", "Deprecated");
  assert_non_null(d);
  assert_string_equal(json_object_get_string(get(d, "status")), "True");
  assert_string_equal(json_object_get_string(get(d, "reason")), "DeprecatedFields");
  assert_int_equal(json_object_get_int64(get(d, "observedGeneration")), 1);
  const char *m = json_object_get_string(get(d, "message"));
  assert_non_null(strstr(m, "1 field set here is deprecated (judged against go-control-plane envoy v1.32.4, the Envoy "
                            "API of Consul 1.22)"));
  assert_non_null(strstr(m, "patches[1]: /use_tcp_for_dns_lookups: field 'use_tcp_for_dns_lookups' of "
                            "envoy.config.cluster.v3.Cluster is deprecated"));
  assert_null(strstr(m, "max_ejection_percent"));
  assert_true(fx->events > events);
  assert_string_equal(fx->last_event_reason, "DeprecatedFields");
  /* current: nothing written again */
  int statuses = fx->status_patches;
  assert_true(web(fx).ok);
  assert_int_equal(fx->status_patches, statuses);

  apply_override(fx, "a", 2, "web", kP50);
  assert_true(web(fx).ok);
  assert_null(condition(fx, "a", "Deprecated"));
  assert_int_equal(json_object_array_length(get(get(po_of(fx, "a"), "status"), "conditions")), 2);
  assert_string_equal(json_object_get_string(get(condition(fx, "a", "Programmed"), "reason")), "Programmed");
}

/* A restarted controller (a new index, the objects as the informers list them) finds the status
 * it wrote current, Deprecated condition and envoyApi included: no write. */
static void test_restart_writes_nothing(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kDeprecated);
  assert_true(web(fx).ok);
  /* what must survive the restart unwritten: the snapshot named and the Deprecated condition */
  assert_string_equal(api_field(fx, "a", "snapshot"), "v1.32.4");
  assert_non_null(condition(fx, "a", "Deprecated"));
  json_object *before = copy(get(po_of(fx, "a"), "status"));
  int statuses = fx->status_patches, writes = fx->target_writes;
  restart_with(fx, "a");
  assert_true(web(fx).ok);
  assert_int_equal(fx->status_patches, statuses);
  assert_int_equal(fx->target_writes, writes);
  assert_true(json_object_equal(before, get(po_of(fx, "a"), "status")));
  json_object_put(before);
}

/* The webhook's verdict on a PropertyOverride, or a ServiceDefaults when `group` says so
 * (CREATE) under the mesh options `o`: allowed, or the denial in *msg (a copy; "" when allowed). */
static bool admitted_as(json_object *po, const char *group, const char *kind, const po_TargetOptions *o, char *msg,
                        size_t size) {
  json_object *r = json_object_new_object(), *req = json_object_new_object(), *k = json_object_new_object();
  json_object_object_add(k, "group", json_object_new_string(group));
  json_object_object_add(k, "version", json_object_new_string("v1alpha1"));
  json_object_object_add(k, "kind", json_object_new_string(kind));
  json_object_object_add(req, "uid", json_object_new_string("uid-1"));
  json_object_object_add(req, "kind", k);
  json_object_object_add(req, "operation", json_object_new_string("CREATE"));
  json_object_object_add(req, "namespace", json_object_new_string("default"));
  json_object_object_add(req, "object", copy(po));
  json_object_object_add(r, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
  json_object_object_add(r, "kind", json_object_new_string("AdmissionReview"));
  json_object_object_add(r, "request", req);
  const char *body = json_object_to_json_string(r);
  po_Arena *a = po_Arena_New();
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  json_object *resp = po_Admission_Review(body, strlen(body), &(po_AdmissionOptions){.targets = o}, a, &st);
  assert_non_null(resp);
  json_object *response = get(resp, "response");
  bool ok = json_object_get_boolean(get(response, "allowed"));
  snprintf(msg, size, "%s", ok ? "" : json_object_get_string(get(get(response, "status"), "message")));
  json_object_put(resp);
  po_Arena_Free(a);
  json_object_put(r);
  return ok;
}

static bool admitted(json_object *po, const po_TargetOptions *o, char *msg, size_t size) {
  return admitted_as(po, "propertyoverride.io", "PropertyOverride", o, msg, size);
}

/* The webhook's ServiceDefaults route judges builtin/property-override entries with Consul's
 * snapshot, and its denial says which: Listener.tcp_keepalive (not in v1.32.4) refused naming
 * Consul 1.22's API, or 1.21's under --consul-version 1.21. */
static void test_consul_route_names_the_snapshot(void **state) {
  (void)state;
  char text[2048], msg[8192];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\",\"metadata\":{\"name\":\"web\","
           "\"namespace\":\"default\"},\"spec\":{\"envoyExtensions\":[{\"name\":\"builtin/property-override\","
           "\"arguments\":{\"patches\":%s}}]}}", kKeepalive);
  json_object *sd = json_tokener_parse(text);
  assert_non_null(sd);
  static const struct {
    const char *consul, *want;
  } kCases[] = {{NULL, "judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22"},
                {"1.21", "judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.21"}};
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    po_TargetOptions o = releases(kCases[i].consul, NULL, NULL);
    assert_false(admitted_as(sd, "consul.hashicorp.com", "ServiceDefaults", &o, msg, sizeof msg));
    assert_non_null(strstr(msg, "no match for field 'tcp_keepalive'"));
    size_t ml = strlen(msg), wl = strlen(kCases[i].want);
    assert_true(ml > wl && msg[ml - wl - 1] == '\n' && !strcmp(msg + ml - wl, kCases[i].want));
  }
  json_object_put(sd);
}

/* An EnvoyFilter written by hand is judged by the snapshot of the Istio release the controller
 * runs against, as its PropertyOverrides are: Listener.tcp_keepalive refused under Istio 1.27
 * (v1.32.4, named in the denial), admitted under 1.30 (v1.37.0). */
static void test_native_route_uses_the_release(void **state) {
  (void)state;
  json_object *ef = json_tokener_parse(
      "{\"apiVersion\":\"networking.istio.io/v1alpha3\",\"kind\":\"EnvoyFilter\",\"metadata\":{\"name\":\"ka\","
      "\"namespace\":\"default\"},\"spec\":{\"configPatches\":[{\"applyTo\":\"LISTENER\",\"match\":{\"context\":"
      "\"SIDECAR_INBOUND\"},\"patch\":{\"operation\":\"MERGE\",\"value\":{\"tcp_keepalive\":{\"keepalive_probes\":3}}}}]}}");
  assert_non_null(ef);
  char msg[8192];
  po_TargetOptions o = releases(NULL, "1.27", NULL);
  assert_false(admitted_as(ef, "networking.istio.io", "EnvoyFilter", &o, msg, sizeof msg));
  assert_non_null(strstr(msg, "tcp_keepalive"));
  assert_non_null(strstr(msg, "\njudged against go-control-plane envoy v1.32.4, the Envoy API of Istio 1.27"));
  o = releases(NULL, "1.30", NULL);
  assert_true(admitted_as(ef, "networking.istio.io", "EnvoyFilter", &o, msg, sizeof msg));
  json_object_put(ef);
}

/* The webhook and the reconciler give one verdict on the same object under the same options,
 * and name the same snapshot: each case admitted exactly when the reconciler's Accepted is True,
 * and a denial ends with the line the Accepted=False message ends with. */
static void test_webhook_and_reconciler_agree(void **state) {
  Fake *fx = *state;
  static const char *kRemove = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                               "\"op\":\"remove\",\"path\":\"/outlier_detection\"}]";
  static const char *kBad = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                            "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":150}]";
  static const struct {
    const char *kind, *target, **patches;
    const char *consul, *istio, *eg; /* the releases configured (NULL: the mesh's default) */
    bool accepted;
    const char *judged;
  } kCases[] = {
      {"ServiceDefaults", "web", &kP50, NULL, NULL, NULL, true, "the Envoy API of Consul 1.22"},
      {"ServiceDefaults", "web", &kBad, NULL, NULL, NULL, false, "judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22"},
      {"ServiceDefaults", "web", &kBad, "1.21", NULL, NULL, false, "the Envoy API of Consul 1.21"},
      {"ServiceDefaults", "web", &kDeprecated, NULL, NULL, NULL, true, "the Envoy API of Consul 1.22"},
      {"Service", "web", &kP50, NULL, "1.30", NULL, true, "the Envoy API of Istio 1.30"},
      {"Service", "web", &kRemove, NULL, "1.30", NULL, false, "judged against go-control-plane envoy v1.37.0, the Envoy API of Istio 1.30"},
      {"Service", "web", &kBad, NULL, "1.27", NULL, false, "judged against go-control-plane envoy v1.32.4, the Envoy API of Istio 1.27"},
      {"Service", "web", &kBad, NULL, NULL, NULL, false, "judged against go-control-plane envoy v1.37.0, the Envoy API of Istio 1.31"},
      {"ServiceDefaults", "web", &kKeepalive, NULL, NULL, NULL, false,
       "judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22"},
      {"Service", "web", &kKeepalive, NULL, "1.30", NULL, true, "judged against go-control-plane envoy v1.37.0, the Envoy API of Istio 1.30"},
      {"Service", "web", &kKeepalive, NULL, "1.27", NULL, false, "judged against go-control-plane envoy v1.32.4, the Envoy API of Istio 1.27"},
      {"ServiceDefaults", "web", &kJitter, NULL, NULL, NULL, true, "the Envoy API of Consul 1.22"},
      {"Gateway", "gw", &kBad, NULL, NULL, "1.5", false, "judged against go-control-plane envoy v1.32.4, the Envoy API of Envoy Gateway 1.5"},
      {"Gateway", "gw", &kBad, NULL, NULL, NULL, false, "judged against go-control-plane envoy v1.37.0, the Envoy API of Envoy Gateway 1.9"},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    char name[32], text[2048], key[300], msg[8192];
    snprintf(name, sizeof name, "c%zu", i);
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"generation\":1,\"uid\":\"uid-%s\"},"
             "\"spec\":{\"targetRef\":{\"kind\":\"%s\",\"name\":\"%s\"},\"patches\":%s}}",
             name, name, kCases[i].kind, kCases[i].target, *kCases[i].patches);
    json_object *po = json_tokener_parse(text);
    assert_non_null(po);
    po_TargetOptions o = releases(kCases[i].consul, kCases[i].istio, kCases[i].eg);
    bool allowed = admitted(po, &o, msg, sizeof msg);
    po_TargetIndex_SetOptions(fx->ix, &o);
    po_Reconcile_OverrideKey(po, key, sizeof key);
    store_override(fx, "default", name, po);
    rec(fx, key);
    const char *accepted = json_object_get_string(get(condition(fx, name, "Accepted"), "status"));
    assert_non_null(accepted);
    if (allowed != !strcmp(accepted, "True") || allowed != kCases[i].accepted) {
      fail_msg("case %zu: webhook %s, reconciler Accepted=%s (want %s): %s", i, allowed ? "allowed" : "denied", accepted,
               kCases[i].accepted ? "accepted" : "refused", msg);
    }
    const char *am = accepted_message(fx, name);
    assert_non_null(strstr(am, kCases[i].judged));
    if (!allowed) {
      /* the same last line in both */
      const char *nl = strrchr(am, '\n');
      assert_non_null(nl);
      assert_non_null(strstr(msg, kCases[i].judged));
      size_t ml = strlen(msg), tl = strlen(nl + 1);
      assert_true(ml >= tl && !strcmp(msg + ml - tl, nl + 1));
    }
  }
}

/* A field only newer snapshots have: a Consul target (Consul 1.22: v1.32.4) refuses it, naming
 * the snapshot and those that have it; an Istio 1.30 target (v1.37.0) programs it. dns_jitter,
 * which v1.32.4 has but deprecates, is programmed on Consul with the Deprecated condition. */
static void test_field_judged_by_the_mesh_release(void **state) {
  Fake *fx = *state;
  apply_override(fx, "a", 1, "web", kKeepalive);
  assert_true(web(fx).ok);
  json_object *acc = condition(fx, "a", "Accepted");
  assert_string_equal(json_object_get_string(get(acc, "status")), "False");
  const char *m = json_object_get_string(get(acc, "message"));
  assert_non_null(strstr(m, "no match for field 'tcp_keepalive'"));
  assert_non_null(strstr(m, "in go-control-plane envoy v1.37.0 and v1.40.0 but not in go-control-plane envoy v1.32.4"));
  assert_non_null(strstr(m, "\njudged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22"));
  assert_string_equal(api_field(fx, "a", "snapshot"), "v1.32.4");

  po_TargetOptions o = releases(NULL, "1.30", NULL);
  po_TargetIndex_SetOptions(fx->ix, &o);
  char text[1024];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"b\","
           "\"namespace\":\"default\",\"generation\":1,\"uid\":\"uid-po-b\"},\"spec\":{\"targetRef\":{\"kind\":\"Service\","
           "\"name\":\"api\"},\"patches\":%s}}", kKeepalive);
  put(fx, "Service/default/api", json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"api\","
                                                "\"namespace\":\"default\"},\"spec\":{\"selector\":{\"app\":\"api\"}}}"));
  store_override(fx, "default", "b", json_tokener_parse(text));
  assert_true(rec(fx, "Service/default/api").ok);
  assert_string_equal(json_object_get_string(get(condition(fx, "b", "Accepted"), "status")), "True");
  assert_string_equal(json_object_get_string(get(condition(fx, "b", "Programmed"), "status")), "True");
  assert_string_equal(api_field(fx, "b", "snapshot"), "v1.37.0");
  assert_string_equal(api_field(fx, "b", "release"), "1.30");
  json_object *ef = slot_obj(fx, "EnvoyFilter/default/propertyoverride-b");
  assert_non_null(ef);
  assert_non_null(strstr(json_object_to_json_string_ext(ef, JSON_C_TO_STRING_PLAIN), "\"keepalive_probes\":3"));

  apply_override(fx, "c", 1, "web", kJitter);
  assert_true(web(fx).ok);
  assert_string_equal(json_object_get_string(get(condition(fx, "c", "Programmed"), "status")), "True");
  assert_non_null(strstr(json_object_get_string(get(condition(fx, "c", "Deprecated"), "message")),
                         "patches[0]: /dns_jitter: field 'dns_jitter' of envoy.config.cluster.v3.Cluster is deprecated"));
}

/* A controller restarted under another Istio release (--istio-version, or istiod's label read
 * at start) judges the same PropertyOverride by that release's snapshot: status.envoyApi follows
 * it, and so does the Deprecated condition: Cluster.http_protocol_options is deprecated in every
 * snapshot, Http1ProtocolOptions.use_balsa_parser in v1.37.0 and not in v1.32.4, so the
 * condition names one field or two, and nothing of the other release's is left (adv-24). */
static void test_restart_under_another_release(void **state) {
  Fake *fx = *state;
  static const char *kBalsa = "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
                              "\"op\":\"add\",\"path\":\"/http_protocol_options/use_balsa_parser\",\"value\":true}]";
  static const struct {
    const char *istio, *snapshot;
    bool balsa; /* use_balsa_parser named deprecated */
  } kSteps[] = {{"1.27", "v1.32.4", false}, {"1.28", "v1.37.0", true}, {"1.27", "v1.32.4", false}, {"1.31", "v1.37.0", true}};
  char text[1024];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"b\","
           "\"namespace\":\"default\",\"generation\":1,\"uid\":\"uid-po-b\"},\"spec\":{\"targetRef\":{\"kind\":\"Service\","
           "\"name\":\"api\"},\"patches\":%s}}", kBalsa);
  put(fx, "Service/default/api", json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"api\","
                                                "\"namespace\":\"default\"},\"spec\":{\"selector\":{\"app\":\"api\"}}}"));
  store_override(fx, "default", "b", json_tokener_parse(text));
  for (size_t i = 0; i < sizeof kSteps / sizeof kSteps[0]; i++) {
    if (i) restart_with(fx, "b");
    po_TargetOptions o = releases(NULL, kSteps[i].istio, NULL);
    po_TargetIndex_SetOptions(fx->ix, &o);
    assert_true(rec(fx, "Service/default/api").ok);
    assert_string_equal(json_object_get_string(get(condition(fx, "b", "Accepted"), "status")), "True");
    assert_string_equal(json_object_get_string(get(condition(fx, "b", "Programmed"), "status")), "True");
    if (strcmp(api_field(fx, "b", "release"), kSteps[i].istio) || strcmp(api_field(fx, "b", "snapshot"), kSteps[i].snapshot)) {
      fail_msg("step %zu (Istio %s): status.envoyApi says %s %s", i, kSteps[i].istio, api_field(fx, "b", "release"),
               api_field(fx, "b", "snapshot"));
    }
    assert_non_null(strstr(accepted_message(fx, "b"), kSteps[i].snapshot));
    json_object *d = condition(fx, "b", "Deprecated");
    assert_non_null(d);
    const char *m = json_object_get_string(get(d, "message"));
    assert_int_equal(json_object_get_int64(get(d, "observedGeneration")), 1);
    if (!strstr(m, kSteps[i].snapshot) || (strstr(m, "use_balsa_parser") != NULL) != kSteps[i].balsa ||
        !strstr(m, kSteps[i].balsa ? "2 fields set here are deprecated" : "1 field set here is deprecated")) {
      fail_msg("step %zu (Istio %s): Deprecated says: %s", i, kSteps[i].istio, m);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_status_names_the_snapshot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deprecated_condition_comes_and_goes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restart_writes_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_webhook_and_reconciler_agree, setup, teardown),
      cmocka_unit_test_setup_teardown(test_field_judged_by_the_mesh_release, setup, teardown),
      cmocka_unit_test_setup_teardown(test_consul_route_names_the_snapshot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_native_route_uses_the_release, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restart_under_another_release, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
