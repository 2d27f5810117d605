/* The mutating route's decision (po_Admission_Mutate) with a stand-in for the app's callback:
 * which writes are asked about at all, what the callback sees (the incoming object with the
 * stored uid, never oldObject's entries), and the JSONPatch that comes back. */
#include <gnutls/gnutls.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/webhook/mutate.h"

/* ---- the stand-in: records what it was asked, answers what the test says ---- */
static struct {
  int calls;
  po_TargetKind kind;
  json_object *seen;     /* a copy of the object it was given */
  po_MutateDecision answer;
  const char *list;      /* the list it answers Set with */
} g;

static po_MutateDecision fake_desired(void *ctx, po_TargetKind kind, const json_object *object, json_object **extensions,
                                      po_CtlStatus *st) {
  (void)ctx;
  g.calls++;
  g.kind = kind;
  json_object_put(g.seen);
  g.seen = NULL;
  json_object_deep_copy((json_object *)object, &g.seen, NULL);
  if (g.answer == kPo_Mutate_Set) *extensions = json_tokener_parse(g.list);
  if (g.answer == kPo_Mutate_Error) po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  return g.answer;
}

static int setup(void **s) {
  (void)s;
  memset(&g, 0, sizeof g);
  g.answer = kPo_Mutate_Set;
  g.list = "[{\"name\":\"builtin/lua\"},{\"name\":\"builtin/property-override\",\"required\":false,\"arguments\":"
           "{\"PropertyOverride\":{\"name\":\"a\",\"generation\":2,\"uid\":\"u-a\",\"targetUID\":\"u-web\"}}}]";
  return 0;
}
static int teardown(void **s) {
  (void)s;
  json_object_put(g.seen);
  return 0;
}

/* The stored web: a look-alike x, and a's entry at generation 1 (the plan's has generation 2). */
static const char *kOld = "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\",\"uid\":\"u-web\"},\"spec\":{\"envoyExtensions\":"
                          "[{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"x\",\"uid\":\"forged\"}}},"
                          "{\"name\":\"builtin/property-override\",\"required\":false,\"arguments\":{\"PropertyOverride\":"
                          "{\"name\":\"a\",\"generation\":1,\"uid\":\"u-a\",\"targetUID\":\"u-web\"},\"Patches\":[]}}]}}";
/* The stored web once the controller removed a's entry (a was deleted; its finalizer went next). */
static const char *kOldWithoutA = "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\",\"uid\":\"u-web\"},\"spec\":"
                                  "{\"envoyExtensions\":[{\"name\":\"builtin/lua\"}]}}";
static const char *kNew = "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"protocol\":\"http\",\"envoyExtensions\":[{\"name\":\"builtin/lua\"}]}}";

/* An AdmissionReview request; NULL members are left out. */
static char *review(const char *group, const char *kind, const char *op, const char *obj, const char *old, const char *user,
                    const char *sub) {
  char *b = malloc(8192);
  snprintf(b, 8192,
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"r-1\","
           "\"kind\":{\"group\":\"%s\",\"version\":\"v1alpha1\",\"kind\":\"%s\"},\"namespace\":\"shop\",\"operation\":\"%s\""
           "%s%s%s%s%s%s%s%s%s}}",
           group, kind, op, obj ? ",\"object\":" : "", obj ? obj : "", old ? ",\"oldObject\":" : "", old ? old : "",
           user ? ",\"userInfo\":{\"username\":\"" : "", user ? user : "", user ? "\"}" : "",
           sub ? ",\"subResource\":\"status\"" : "", "");
  return b;
}

static po_MutateOptions opts(void) { return (po_MutateOptions){.desired = fake_desired, .controller_user = "system:serviceaccount:po:ctl"}; }

/* The answer's response member (a new reference), after the common checks: uid echoed, allowed. */
static json_object *answer(const char *body, const po_MutateOptions *o, const char **outcome) {
  po_CtlStatus st;
  json_object *out = po_Admission_Mutate(body, strlen(body), o, &st, outcome);
  assert_non_null(out);
  assert_int_equal(st.http_status, 200);
  json_object *resp = NULL;
  assert_true(json_object_object_get_ex(out, "response", &resp));
  json_object *v = NULL;
  assert_true(json_object_object_get_ex(resp, "uid", &v));
  assert_string_equal(json_object_get_string(v), "r-1");
  assert_true(json_object_object_get_ex(resp, "allowed", &v) && json_object_get_boolean(v));
  json_object_get(resp);
  json_object_put(out);
  return resp;
}

static json_object *patch_ops(json_object *resp) {
  json_object *p = NULL, *t = NULL;
  if (!json_object_object_get_ex(resp, "patch", &p)) return NULL;
  assert_true(json_object_object_get_ex(resp, "patchType", &t));
  assert_string_equal(json_object_get_string(t), "JSONPatch");
  const char *b64 = json_object_get_string(p);
  assert_null(strchr(b64, '\n'));
  gnutls_datum_t in = {(unsigned char *)b64, (unsigned)strlen(b64)}, out = {0};
  assert_int_equal(gnutls_base64_decode2(&in, &out), 0);
  char *text = calloc(1, out.size + 1);
  memcpy(text, out.data, out.size);
  gnutls_free(out.data);
  json_object *ops = json_tokener_parse(text);
  free(text);
  assert_non_null(ops);
  return ops;
}

static void test_stripped_update_gets_the_planned_list(void **s) {
  (void)s;
  char *b = review("consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOld, "kubectl-user", NULL);
  const char *outcome = NULL;
  po_MutateOptions o = opts();
  json_object *resp = answer(b, &o, &outcome);
  assert_string_equal(outcome, "patched");
  assert_int_equal(g.calls, 1);
  assert_int_equal(g.kind, kPo_TargetKind_ServiceDefaults);
  /* the callback saw the incoming object, with the stored uid and the request's namespace, and
   * nothing of oldObject's entries (the forged x is not there to be kept) */
  json_object *meta = NULL, *spec = NULL, *v = NULL;
  json_object_object_get_ex(g.seen, "metadata", &meta);
  assert_true(json_object_object_get_ex(meta, "uid", &v));
  assert_string_equal(json_object_get_string(v), "u-web");
  assert_true(json_object_object_get_ex(meta, "namespace", &v));
  assert_string_equal(json_object_get_string(v), "shop");
  json_object_object_get_ex(g.seen, "spec", &spec);
  json_object *want_spec = NULL;
  json_object *nw = json_tokener_parse(kNew);
  json_object_object_get_ex(nw, "spec", &want_spec);
  assert_true(json_object_equal(spec, want_spec));
  json_object_put(nw);
  /* one operation: the list replaced, exactly as the callback planned it */
  json_object *ops = patch_ops(resp), *want = json_tokener_parse(g.list);
  assert_int_equal(json_object_array_length(ops), 1);
  json_object *op = json_object_array_get_idx(ops, 0);
  json_object_object_get_ex(op, "op", &v);
  assert_string_equal(json_object_get_string(v), "add");
  json_object_object_get_ex(op, "path", &v);
  assert_string_equal(json_object_get_string(v), "/spec/envoyExtensions");
  json_object_object_get_ex(op, "value", &v);
  assert_true(json_object_equal(v, want));
  assert_true(json_object_object_get_ex(resp, "warnings", &v));
  assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(v, 0)), "(0 in the request, 1 stored"));
  json_object_put(want);
  json_object_put(ops);
  json_object_put(resp);
  free(b);
}

/* A replica whose caches lag the controller's (another replica, a watch reconnecting) still sees
 * a, already deleted: the controller removed a's entry, then a's finalizer, and a is gone. A
 * GitOps apply now must not get a's entry back: with a gone, nothing would ever remove it (the
 * controller takes an entry naming no existing PropertyOverride for someone else's). The webhook
 * keeps entries the stored object holds; it never adds one. */
static void test_entry_missing_from_the_stored_object_is_not_added(void **s) {
  (void)s;
  char *b = review("consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOldWithoutA, "kubectl-user", NULL);
  const char *outcome = NULL;
  po_MutateOptions o = opts();
  json_object *resp = answer(b, &o, &outcome); /* the stand-in answers lua + a, as the lagging cache would */
  assert_int_equal(g.calls, 1);
  assert_null(patch_ops(resp));
  assert_string_equal(outcome, "unchanged");
  json_object_put(resp);
  free(b);
  /* with another extension to restore as well, the patch carries it but not a */
  g.list = "[{\"name\":\"builtin/lua\"},{\"name\":\"builtin/property-override\",\"required\":false,\"arguments\":"
           "{\"PropertyOverride\":{\"name\":\"a\",\"generation\":2,\"uid\":\"u-a\",\"targetUID\":\"u-web\"}}},"
           "{\"name\":\"builtin/property-override\",\"arguments\":{\"PropertyOverride\":{\"name\":\"x\",\"uid\":\"forged\"}}}]";
  b = review("consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOldWithoutA, "kubectl-user", NULL);
  resp = answer(b, &o, &outcome);
  json_object *ops = patch_ops(resp), *v = NULL;
  assert_non_null(ops);
  json_object_object_get_ex(json_object_array_get_idx(ops, 0), "value", &v);
  assert_int_equal(json_object_array_length(v), 2); /* the stand-in's answer without a */
  assert_null(strstr(json_object_get_string(v), "u-a"));
  json_object_put(ops);
  json_object_put(resp);
  free(b);
}

/* A replica whose caches lag plans an older generation of an entry than the stored one (a at
 * generation 2 while the leader already wrote generation 3): answering with it would take the
 * stored object back to generation 2 until the leader's repair, a revision a never-regress
 * observer flags and consul-k8s may sync. The stored entry stays as it is, verbatim. */
static void test_lagging_replica_does_not_lower_a_generation(void **s) {
  (void)s;
  const char *old3 = "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\",\"uid\":\"u-web\"},\"spec\":{\"envoyExtensions\":"
                     "[{\"name\":\"builtin/lua\"},{\"name\":\"builtin/property-override\",\"required\":false,\"arguments\":"
                     "{\"PropertyOverride\":{\"name\":\"a\",\"generation\":3,\"uid\":\"u-a\",\"targetUID\":\"u-web\"}}}]}}";
  char *b = review("consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, old3, "kubectl-user", NULL);
  po_MutateOptions o = opts();
  json_object *resp = answer(b, &o, NULL), *ops = patch_ops(resp);
  if (ops) {
    json_object *v = NULL, *e = NULL, *m = NULL;
    json_object_object_get_ex(json_object_array_get_idx(ops, 0), "value", &v);
    json_object_object_get_ex(json_object_array_get_idx(v, 1), "arguments", &e);
    json_object_object_get_ex(e, "PropertyOverride", &m);
    json_object_object_get_ex(m, "generation", &e);
    assert_int_equal(json_object_get_int(e), 3);
    json_object_put(ops);
  }
  json_object_put(resp);
  free(b);
  /* the plan's newer generation still replaces an older stored one (kOld holds a at 1) */
  b = review("consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOld, "kubectl-user", NULL);
  resp = answer(b, &o, NULL);
  ops = patch_ops(resp);
  assert_non_null(ops);
  json_object *v = NULL, *e = NULL, *m = NULL;
  json_object_object_get_ex(json_object_array_get_idx(ops, 0), "value", &v);
  json_object_object_get_ex(json_object_array_get_idx(v, 1), "arguments", &e);
  json_object_object_get_ex(e, "PropertyOverride", &m);
  json_object_object_get_ex(m, "generation", &e);
  assert_int_equal(json_object_get_int(e), 2);
  json_object_put(ops);
  json_object_put(resp);
  free(b);
}

static void test_object_without_spec_gets_a_spec(void **s) {
  (void)s;
  char *b = review("consul.hashicorp.com", "ProxyDefaults", "UPDATE", "{\"metadata\":{\"name\":\"global\"}}", kOld, NULL, NULL);
  po_MutateOptions o = opts();
  json_object *resp = answer(b, &o, NULL), *ops = patch_ops(resp), *v = NULL;
  assert_int_equal(g.kind, kPo_TargetKind_ProxyDefaults);
  json_object_object_get_ex(json_object_array_get_idx(ops, 0), "path", &v);
  assert_string_equal(json_object_get_string(v), "/spec");
  json_object_object_get_ex(json_object_array_get_idx(ops, 0), "value", &v);
  assert_non_null(json_object_object_get(v, "envoyExtensions"));
  json_object_put(ops);
  json_object_put(resp);
  free(b);
}

/* Each of these passes unchanged without asking the callback. */
static void test_writes_not_asked_about(void **s) {
  (void)s;
  struct {
    const char *group, *kind, *op, *obj, *old, *user, *sub, *outcome;
  } cases[] = {
      {"propertyoverride.io", "PropertyOverride", "UPDATE", kNew, kOld, NULL, NULL, "unchanged"},
      {"example.com", "ServiceDefaults", "UPDATE", kNew, kOld, NULL, NULL, "unchanged"},
      {"consul.hashicorp.com", "ServiceIntentions", "UPDATE", kNew, kOld, NULL, NULL, "unchanged"},
      /* CREATE: no uid to bind entries to yet */
      {"consul.hashicorp.com", "ServiceDefaults", "CREATE", kNew, NULL, NULL, NULL, "unchanged"},
      {"consul.hashicorp.com", "ServiceDefaults", "DELETE", NULL, kOld, NULL, NULL, "unchanged"},
      {"consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOld, NULL, "status", "unchanged"},
      /* being deleted: the controller is removing its entries */
      {"consul.hashicorp.com", "ServiceDefaults", "UPDATE",
       "{\"metadata\":{\"name\":\"web\",\"deletionTimestamp\":\"2026-12-01T00:00:00Z\"},\"spec\":{}}", kOld, NULL, NULL, "unchanged"},
      /* the controller's own write: only it may remove its entries */
      {"consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOld, "system:serviceaccount:po:ctl", NULL, "exempt"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    g.calls = 0;
    char *b = review(cases[i].group, cases[i].kind, cases[i].op, cases[i].obj, cases[i].old, cases[i].user, cases[i].sub);
    const char *outcome = NULL;
    po_MutateOptions o = opts();
    json_object *resp = answer(b, &o, &outcome);
    if (g.calls != 0 || strcmp(outcome, cases[i].outcome) != 0) fail_msg("case %zu: %d calls, outcome %s", i, g.calls, outcome);
    assert_null(patch_ops(resp));
    json_object_put(resp);
    free(b);
  }
}

static void test_no_answer_passes_unchanged(void **s) {
  (void)s;
  po_MutateDecision answers[] = {kPo_Mutate_Keep, kPo_Mutate_NotReady, kPo_Mutate_Error};
  const char *outcomes[] = {"unchanged", "not-synced", "error"};
  for (int i = 0; i < 3; i++) {
    g.answer = answers[i];
    char *b = review("consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOld, NULL, NULL);
    const char *outcome = NULL;
    po_MutateOptions o = opts();
    json_object *resp = answer(b, &o, &outcome);
    assert_string_equal(outcome, outcomes[i]);
    assert_null(patch_ops(resp));
    json_object_put(resp);
    free(b);
  }
  /* no callback wired (the webhook without the controller's caches): unchanged */
  char *b = review("consul.hashicorp.com", "ServiceDefaults", "UPDATE", kNew, kOld, NULL, NULL);
  po_MutateOptions none = {0};
  json_object *resp = answer(b, &none, NULL);
  assert_null(patch_ops(resp));
  json_object_put(resp);
  free(b);
}

/* ---- a new PropertyOverride and the finalizer ---- */

static struct {
  int calls;
  bool answer;
  bool held;   /* what the last call was asked: an object that holds the finalizer */
  char ns[64]; /* the namespace the object it was given says */
} gc;

static bool fake_claims(void *ctx, const json_object *object, bool held) {
  (void)ctx;
  gc.held = held;
  gc.calls++;
  json_object *meta = NULL, *ns = NULL;
  gc.ns[0] = '\0';
  if (json_object_object_get_ex(object, "metadata", &meta) && json_object_object_get_ex(meta, "namespace", &ns))
    snprintf(gc.ns, sizeof gc.ns, "%s", json_object_get_string(ns));
  return gc.answer;
}

static po_MutateOptions finalizing(void) {
  po_MutateOptions o = opts();
  o.finalizer = "propertyoverride.io/finalizer";
  o.claims = fake_claims;
  return o;
}

static void test_new_override_gets_the_finalizer(void **s) {
  (void)s;
  struct {
    const char *obj, *path, *value; /* the one operation expected: path and its value as JSON */
  } cases[] = {
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\"},\"spec\":{}}", "/metadata/finalizers",
       "[\"propertyoverride.io/finalizer\"]"},
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"finalizers\":null},\"spec\":{}}", "/metadata/finalizers",
       "[\"propertyoverride.io/finalizer\"]"},
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"finalizers\":[]},\"spec\":{}}", "/metadata/finalizers/-",
       "\"propertyoverride.io/finalizer\""},
      /* someone else's finalizers stay, in their order; ours is appended */
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"finalizers\":[\"example.com/x\",\"propertyoverride.io/finalizer2\"]},"
       "\"spec\":{}}",
       "/metadata/finalizers/-", "\"propertyoverride.io/finalizer\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    gc.calls = 0;
    gc.answer = true;
    char *b = review("propertyoverride.io", "PropertyOverride", "CREATE", cases[i].obj, NULL, NULL, NULL);
    const char *outcome = NULL;
    po_MutateOptions o = finalizing();
    json_object *resp = answer(b, &o, &outcome);
    assert_string_equal(outcome, "finalized");
    assert_int_equal(gc.calls, 1);
    assert_false(gc.held); /* a new one: the claim, not the release */
    assert_int_equal(g.calls, 0); /* the targets' question is not asked */
    json_object *ops = patch_ops(resp), *want = json_tokener_parse(cases[i].value), *v = NULL;
    assert_non_null(ops);
    assert_int_equal(json_object_array_length(ops), 1);
    json_object *op = json_object_array_get_idx(ops, 0);
    assert_true(json_object_object_get_ex(op, "op", &v));
    assert_string_equal(json_object_get_string(v), "add");
    assert_true(json_object_object_get_ex(op, "path", &v));
    assert_string_equal(json_object_get_string(v), cases[i].path);
    assert_true(json_object_object_get_ex(op, "value", &v));
    if (!json_object_equal(v, want)) fail_msg("case %zu: value %s", i, json_object_to_json_string(v));
    assert_false(json_object_object_get_ex(resp, "warnings", &v)); /* routine: nothing to tell the writer */
    json_object_put(want);
    json_object_put(ops);
    json_object_put(resp);
    free(b);
  }
}

/* The claim is judged on the object as the store will hold it: its namespace from the request
 * when the object does not say it. */
static void test_claim_sees_the_request_namespace(void **s) {
  (void)s;
  gc.calls = 0;
  gc.answer = true;
  char *b = review("propertyoverride.io", "PropertyOverride", "CREATE", "{\"metadata\":{\"name\":\"a\"},\"spec\":{}}", NULL,
                   NULL, NULL);
  po_MutateOptions o = finalizing();
  const char *outcome = NULL;
  json_object *resp = answer(b, &o, &outcome);
  assert_string_equal(outcome, "finalized");
  assert_int_equal(gc.calls, 1);
  assert_string_equal(gc.ns, "shop");
  json_object_put(resp);
  free(b);
}

/* Each passes unchanged; `asked`: whether the claim was asked first. */
static void test_override_writes_not_finalized(void **s) {
  (void)s;
  static const char *kCreated = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\"},\"spec\":{}}";
  struct {
    const char *op, *obj, *sub;
    bool claims, wired, asked;
  } cases[] = {
      /* already there, in any place */
      {"CREATE", "{\"metadata\":{\"name\":\"a\",\"finalizers\":[\"propertyoverride.io/finalizer\"]}}", NULL, true, true, false},
      {"CREATE", "{\"metadata\":{\"name\":\"a\",\"finalizers\":[1,\"x\",\"propertyoverride.io/finalizer\"]}}", NULL, true, true, false},
      /* no list: the API server refuses the object, nothing to patch */
      {"CREATE", "{\"metadata\":{\"name\":\"a\",\"finalizers\":\"propertyoverride.io/finalizer\"}}", NULL, true, true, false},
      {"CREATE", "{\"metadata\":\"a\"}", NULL, true, true, false},
      /* not claimed: the controller would not add it (no target named, a refused namespace) */
      {"CREATE", kCreated, NULL, false, true, true},
      /* an update of an object that never had it, a delete, a subresource */
      {"UPDATE", kCreated, NULL, true, true, false},
      {"DELETE", kCreated, NULL, true, true, false},
      {"CREATE", kCreated, "status", true, true, false},
      /* not wired (a webhook without the controller) */
      {"CREATE", kCreated, NULL, true, false, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    gc.calls = 0;
    gc.answer = cases[i].claims;
    char *b = review("propertyoverride.io", "PropertyOverride", cases[i].op, cases[i].obj,
                     !strcmp(cases[i].op, "CREATE") ? NULL : cases[i].obj, NULL, cases[i].sub);
    const char *outcome = NULL;
    po_MutateOptions o = cases[i].wired ? finalizing() : opts();
    json_object *resp = answer(b, &o, &outcome);
    if (strcmp(outcome, "unchanged") != 0 || gc.calls != (cases[i].asked ? 1 : 0) || g.calls != 0)
      fail_msg("case %zu: outcome %s, %d claims, %d desired", i, outcome, gc.calls, g.calls);
    assert_null(patch_ops(resp));
    json_object_put(resp);
    free(b);
  }
}

/* An update that would drop the finalizer from a claimed object not being deleted keeps it (a
 * server-side apply by the manager that created it, a PUT of the git version), saying why; not
 * the controller's own update, not a deleted object's (the way out of a stuck deletion), not a
 * status write, not one the controller does not claim (a namespace it does not watch). */
static void test_update_dropping_the_finalizer_keeps_it(void **s) {
  (void)s;
  static const char *kHeld = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\",\"finalizers\":"
                             "[\"example.com/x\",\"propertyoverride.io/finalizer\"]},\"spec\":{}}";
  struct {
    const char *obj, *user, *sub, *outcome, *path, *value; /* path NULL: no patch */
    bool claims;
  } cases[] = {
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\"},\"spec\":{\"x\":1}}", NULL, NULL, "finalizer-kept",
       "/metadata/finalizers", "[\"propertyoverride.io/finalizer\"]", true},
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"finalizers\":[\"example.com/x\"]}}", NULL, NULL,
       "finalizer-kept", "/metadata/finalizers/-", "\"propertyoverride.io/finalizer\"", true},
      /* not claimed: nothing would ever remove it */
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\"},\"spec\":{\"x\":1}}", NULL, NULL, "unchanged", NULL, NULL,
       false},
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\"}}", "system:serviceaccount:po:ctl", NULL, "exempt", NULL, NULL,
       true},
      {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\"}}", NULL, "status", "unchanged", NULL, NULL, true},
      {kHeld, NULL, NULL, "unchanged", NULL, NULL, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    gc.calls = 0;
    gc.answer = cases[i].claims;
    char *b = review("propertyoverride.io", "PropertyOverride", "UPDATE", cases[i].obj, kHeld, cases[i].user, cases[i].sub);
    const char *outcome = NULL;
    po_MutateOptions o = finalizing();
    json_object *resp = answer(b, &o, &outcome);
    int asked = !strcmp(cases[i].outcome, "finalizer-kept") || !cases[i].claims;
    if (strcmp(outcome, cases[i].outcome) != 0 || gc.calls != asked || (asked && !gc.held))
      fail_msg("case %zu: outcome %s, %d claims (held %d)", i, outcome, gc.calls, gc.held);
    json_object *ops = patch_ops(resp), *v = NULL;
    if (!cases[i].path) {
      assert_null(ops);
    } else {
      assert_int_equal(json_object_array_length(ops), 1);
      json_object *op = json_object_array_get_idx(ops, 0), *want = json_tokener_parse(cases[i].value);
      assert_true(json_object_object_get_ex(op, "path", &v));
      assert_string_equal(json_object_get_string(v), cases[i].path);
      assert_true(json_object_object_get_ex(op, "value", &v) && json_object_equal(v, want));
      assert_true(json_object_object_get_ex(resp, "warnings", &v));
      assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(v, 0)),
                             "metadata.finalizers: propertyoverride.io/finalizer was kept"));
      json_object_put(want);
    }
    json_object_put(ops);
    json_object_put(resp);
    free(b);
  }
}

/* adv27: an update of an object being deleted is never changed, however its body reads. The API
 * server keeps the stored deletionTimestamp whatever an update's body says (rest.BeforeUpdate runs
 * after mutating admission: "an update can never remove/change a deletion timestamp"), as it
 * keeps the stored uid (view_of). So a PUT of an object being deleted whose body leaves
 * metadata.deletionTimestamp out (a manifest's shape: `kubectl neat`, an object rebuilt from a
 * typed struct) and drops our finalizer is the hand removal out of a stuck deletion, and must
 * pass unchanged; measured on the real kube-apiserver (tests/e2e/t_adv27_finalizer_put_deleting.sh):
 * the webhook put it back with its warning and the deletion stayed stuck. oldObject says it. */
static void test_adv27_update_of_a_deleted_object_without_its_timestamp_left_alone(void **s) {
  (void)s;
  static const char *kDeleting = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\","
                                 "\"deletionTimestamp\":\"2026-12-01T00:00:00Z\",\"deletionGracePeriodSeconds\":0,"
                                 "\"finalizers\":[\"propertyoverride.io/finalizer\"]},\"spec\":{}}";
  const char *bodies[] = {
      /* the PUT's body: no deletionTimestamp, no finalizers */
      "{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\"},\"spec\":{}}",
      /* finalizers null, as a merge patch {"metadata":{"finalizers":null,"deletionTimestamp":null}} leaves it */
      "{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\",\"finalizers\":null},\"spec\":{}}",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
    gc.calls = 0;
    gc.answer = true;
    char *b = review("propertyoverride.io", "PropertyOverride", "UPDATE", bodies[i], kDeleting, NULL, NULL);
    const char *outcome = NULL;
    po_MutateOptions o = finalizing();
    json_object *resp = answer(b, &o, &outcome);
    json_object *ops = patch_ops(resp);
    if (ops || strcmp(outcome, "unchanged") != 0)
      fail_msg("case %zu: an update of an object being deleted was changed: outcome %s, patch %s", i, outcome,
               ops ? json_object_to_json_string(ops) : "none");
    json_object_put(resp);
    free(b);
  }
}

/* An object being deleted (the stored object's deletionTimestamp): an apply of a manifest that
 * listed finalizers and changed them replaces the whole list on the real kube-apiserver, ours
 * too, so ours is kept: server-side (the request's field manager's Apply entry listed them and
 * lists none in the incoming object, the same second or not) and client-side (the last-applied
 * annotation listed them and this request changed it). Every other update that drops it is the
 * hand removal and is left alone: another manager's, kubectl's hand edits' (an Apply entry of that
 * name, a tenant's, trimmed by the hand removal: t_adv27d_finalizer_patch_manager_apply),
 * an Update entry, an annotation left as it was. */
static void test_deleting_object_keeps_it_from_an_apply_that_changes_the_list_only(void **s) {
  (void)s;
  /* managedFields with one entry: manager, operation, time, whether it lists finalizers */
#define PO_TEST_MF(m, op, t, fin)                                                                          \
  "\"managedFields\":[{\"manager\":\"" m "\",\"operation\":\"" op "\",\"time\":\"" t "\",\"fieldsType\":" \
  "\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{" fin "},\"f:spec\":{}}}]"
#define PO_TEST_FIN "\"f:finalizers\":{\"v:\\\"example.com/keep\\\"\":{}}"
#define PO_TEST_LAST(fin)                                                                                  \
  "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"metadata\\\":{\\\"name\\\":\\\"a\\\"" \
  fin "},\\\"spec\\\":{}}\"}"
  static const char *kOldHead =
      "{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\",\"deletionTimestamp\":\"2026-12-01T00:00:00Z\","
      "\"finalizers\":[\"example.com/keep\",\"propertyoverride.io/finalizer\"],";
  static const char *kNewHead = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\",";
  struct {
    const char *old_meta, *new_meta, *manager, *outcome;
    const char *options_kind; /* NULL: PatchOptions; the real server sends UpdateOptions for both */
  } cases[] = {
      /* server-side: flux listed finalizers at :00 and lists none at :09 */
      {PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN), PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:09Z", ""),
       "flux", "finalizer-kept", NULL},
      /* the same entries, the request by another manager (kubectl patch) */
      {PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN), PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:09Z", ""),
       "kubectl-patch", "unchanged", NULL},
      /* two applies in one second: the entry's time is to the second */
      {PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN), PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:00Z", ""),
       "flux", "finalizer-kept", NULL},
      /* a forged Apply entry named as the hand removal's manager, as it was */
      {PO_TEST_MF("kubectl-patch", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN),
       PO_TEST_MF("kubectl-patch", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN), "kubectl-patch", "unchanged", NULL},
      /* kubectl patch's manager: the hand removal, never an apply (the real server trims a
         tenant's Apply entry of that name along with the finalizers it removes) */
      {PO_TEST_MF("kubectl-patch", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN),
       PO_TEST_MF("kubectl-patch", "Apply", "2026-12-01T00:00:00Z", ""), "kubectl-patch", "unchanged", NULL},
      /* an Update entry is no apply */
      {PO_TEST_MF("flux", "Update", "2026-12-01T00:00:00Z", PO_TEST_FIN), PO_TEST_MF("flux", "Update", "2026-12-01T00:00:09Z", ""),
       "flux", "unchanged", NULL},
      /* it never listed finalizers */
      {PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:00Z", ""), PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:09Z", ""), "flux",
       "unchanged", NULL},
      /* client-side: the annotation listed them and, changed, lists none, another list, an empty one */
      {PO_TEST_LAST(",\\\"finalizers\\\":[\\\"example.com/keep\\\"]"), PO_TEST_LAST(""), "kubectl-client-side-apply",
       "finalizer-kept", NULL},
      {PO_TEST_LAST(",\\\"finalizers\\\":[\\\"example.com/keep\\\"]"), PO_TEST_LAST(",\\\"finalizers\\\":[\\\"example.com/x\\\"]"),
       "kubectl-client-side-apply", "finalizer-kept", NULL},
      {PO_TEST_LAST(",\\\"finalizers\\\":[\\\"example.com/keep\\\"]"), PO_TEST_LAST(",\\\"finalizers\\\":[]"),
       "argocd-controller", "finalizer-kept", NULL},
      /* the annotation as it was: the hand removal of an object applied client-side */
      {PO_TEST_LAST(",\\\"finalizers\\\":[\\\"example.com/keep\\\"]"), PO_TEST_LAST(",\\\"finalizers\\\":[\\\"example.com/keep\\\"]"),
       "kubectl-patch", "unchanged", NULL},
      /* it never listed finalizers */
      {PO_TEST_LAST(""), PO_TEST_LAST(",\\\"labels\\\":{\\\"x\\\":\\\"y\\\"}"), "kubectl-client-side-apply", "unchanged", NULL},
      /* kubectl edit's and replace's managers neither */
      {PO_TEST_MF("kubectl-edit", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN),
       PO_TEST_MF("kubectl-edit", "Apply", "2026-12-01T00:00:00Z", ""), "kubectl-edit", "unchanged", "UpdateOptions"},
      {PO_TEST_MF("kubectl-replace", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN),
       PO_TEST_MF("kubectl-replace", "Apply", "2026-12-01T00:00:00Z", ""), "kubectl-replace", "unchanged", "UpdateOptions"},
      /* an apply reaches admission with UpdateOptions (the real kube-apiserver's) */
      {PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN), PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:09Z", ""),
       "flux", "finalizer-kept", "UpdateOptions"},
      /* no manager named */
      {PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:00Z", PO_TEST_FIN), PO_TEST_MF("flux", "Apply", "2026-12-01T00:00:09Z", ""), NULL,
       "unchanged", NULL},
  };
#undef PO_TEST_MF
#undef PO_TEST_FIN
#undef PO_TEST_LAST
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char old[4096], now[4096], body[16384], options[128] = "";
    snprintf(old, sizeof old, "%s%s},\"spec\":{}}", kOldHead, cases[i].old_meta);
    snprintf(now, sizeof now, "%s%s},\"spec\":{}}", kNewHead, cases[i].new_meta);
    if (cases[i].manager)
      snprintf(options, sizeof options, ",\"options\":{\"kind\":\"%s\",\"fieldManager\":\"%s\"}",
               cases[i].options_kind ? cases[i].options_kind : "PatchOptions", cases[i].manager);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"r-1\","
             "\"kind\":{\"group\":\"propertyoverride.io\",\"version\":\"v1alpha1\",\"kind\":\"PropertyOverride\"},"
             "\"namespace\":\"shop\",\"operation\":\"UPDATE\",\"object\":%s,\"oldObject\":%s%s}}",
             now, old, options);
    gc.calls = 0;
    gc.answer = true;
    const char *outcome = NULL;
    po_MutateOptions o = finalizing();
    json_object *resp = answer(body, &o, &outcome);
    if (strcmp(outcome, cases[i].outcome) != 0) fail_msg("case %zu: outcome %s", i, outcome);
    json_object *ops = patch_ops(resp);
    bool patched = ops != NULL, kept = strcmp(cases[i].outcome, "finalizer-kept") == 0;
    assert_true(patched == kept);
    json_object *w = NULL;
    if (kept) { /* the hand removal the webhook leaves alone, named */
      assert_true(json_object_object_get_ex(resp, "warnings", &w));
      assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(w, 0)),
                             "To remove it by hand: kubectl patch --type=merge -p '{\"metadata\":{\"finalizers\":null}}'"));
    }
    json_object_put(ops);
    json_object_put(resp);
  }
}

/* adv27d: the cluster admin's hand removal (kubectl patch --type=merge, field manager kubectl-patch)
 * of a PropertyOverride being deleted whose tenant applied it server-side as kubectl-patch
 * (`kubectl apply --server-side --field-manager=kubectl-patch`, or a written managedFields entry)
 * listing finalizers and spec fields. The real kube-apiserver takes an Update's removed fields from
 * every manager's set, so the Apply entry arrives without f:finalizers, its time as it was, and
 * stays (it still owns f:spec): exactly this review, measured on the real server by
 * tests/e2e/t_adv27d_finalizer_patch_manager_apply.sh. It is the documented hand removal and must
 * be left alone (454e1cc3 dropped the time check that told it from an apply). */
static void test_adv27d_hand_removal_trims_an_apply_entry_of_its_manager(void **s) {
  (void)s;
  const char *body =
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"r-1\","
      "\"kind\":{\"group\":\"propertyoverride.io\",\"version\":\"v1alpha1\",\"kind\":\"PropertyOverride\"},"
      "\"namespace\":\"shop\",\"operation\":\"UPDATE\","
      "\"object\":{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\","
      "\"managedFields\":[{\"manager\":\"kubectl-patch\",\"operation\":\"Apply\",\"time\":\"2026-12-01T00:00:00Z\","
      "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:targetRef\":{}}}}]},\"spec\":{}},"
      "\"oldObject\":{\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\",\"uid\":\"u-a\","
      "\"deletionTimestamp\":\"2026-12-01T00:00:05Z\","
      "\"finalizers\":[\"example.com/tenant\",\"propertyoverride.io/finalizer\"],"
      "\"managedFields\":[{\"manager\":\"kubectl-patch\",\"operation\":\"Apply\",\"time\":\"2026-12-01T00:00:00Z\","
      "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:finalizers\":{\".\":{},"
      "\"v:\\\"example.com/tenant\\\"\":{}}},\"f:spec\":{\"f:targetRef\":{}}}}]},\"spec\":{}},"
      "\"options\":{\"kind\":\"PatchOptions\",\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":\"kubectl-patch\"}}}";
  gc.calls = 0;
  gc.answer = true;
  const char *outcome = NULL;
  po_MutateOptions o = finalizing();
  json_object *resp = answer(body, &o, &outcome);
  json_object *ops = patch_ops(resp);
  if (ops) fail_msg("the hand removal was undone: outcome %s, patch %s", outcome, json_object_to_json_string(ops));
  assert_string_equal(outcome, "unchanged");
  json_object_put(ops);
  json_object_put(resp);
}

static void test_not_a_review_is_400(void **s) {
  (void)s;
  const char *bodies[] = {"{", "[]", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                          "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"x\"}}"};
  for (size_t i = 0; i < 4; i++) {
    po_CtlStatus st;
    po_MutateOptions o = opts();
    assert_null(po_Admission_Mutate(bodies[i], strlen(bodies[i]), &o, &st, NULL));
    assert_int_equal(st.http_status, 400);
    assert_true(st.message[0] != '\0');
  }
  assert_int_equal(g.calls, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_stripped_update_gets_the_planned_list, setup, teardown),
      cmocka_unit_test_setup_teardown(test_entry_missing_from_the_stored_object_is_not_added, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lagging_replica_does_not_lower_a_generation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_object_without_spec_gets_a_spec, setup, teardown),
      cmocka_unit_test_setup_teardown(test_writes_not_asked_about, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_answer_passes_unchanged, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_override_gets_the_finalizer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_claim_sees_the_request_namespace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_override_writes_not_finalized, setup, teardown),
      cmocka_unit_test_setup_teardown(test_update_dropping_the_finalizer_keeps_it, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv27_update_of_a_deleted_object_without_its_timestamp_left_alone, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deleting_object_keeps_it_from_an_apply_that_changes_the_list_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_adv27d_hand_removal_trims_an_apply_entry_of_its_manager, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_a_review_is_400, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
