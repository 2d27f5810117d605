#include "po/webhook/admission.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"
#include "po/meshes/consul.h"
#include "po/meshes/consul_check.h"
#include "po/meshes/eg.h"
#include "po/meshes/mesh.h"
#include "po/meshes/istio.h"
#include "po/targets/override.h"
#include "review.h"

/* Denials keep their first errors whole and count the rest (po_CompiledOverride_Describe): the
 * API server passes the message on to the client as it is, so a bound here is the only one. */
enum { kMaxWarnings = 16, kMaxWarningLen = 256, kMaxDenialBytes = 16384 };

static bool warnings_full(json_object *warnings) { return json_object_array_length(warnings) >= kMaxWarnings; }

static void add_warning(json_object *warnings, const char *w) {
  if (warnings_full(warnings)) return;
  char buf[kMaxWarningLen];
  snprintf(buf, sizeof buf, "%s", w); /* the API server truncates long warnings anyway */
  json_object_array_add(warnings, json_object_new_string(buf));
}

/* PropertyOverride: the message for a denial, or NULL when accepted. */
static const char *check_override(json_object *obj, const char *req_ns, const po_Tenancy *tenancy,
                                  const po_TargetOptions *targets, po_Arena *a, json_object *warnings) {
  po_CompiledOverride c;
  if (po_CompiledOverride_FromObject(obj, targets, a, &c) == kPo_CompileOutcome_NoMemory) return "out of memory validating the object";
  /* The request's namespace is where the object is being written, whatever its metadata says. */
  const char *ns = req_ns && *req_ns ? req_ns : c.ns;
  char why[768];
  if (!po_Tenancy_Allows(tenancy, c.target_kind, ns, why, sizeof why)) {
    return po_Arena_Printf(a, "PropertyOverride %s%s%s: spec.targetRef: %s", ns, *ns ? "/" : "", c.name, why);
  }
  if (!po_Tenancy_AllowsNamespace(tenancy, c.target_kind, ns, c.target_ns, why, sizeof why)) {
    return po_Arena_Printf(a, "PropertyOverride %s%s%s: spec.targetRef.namespace: %s", ns, *ns ? "/" : "", c.name, why);
  }
  for (size_t i = 0; i < po_Diagnostics_Count(c.diags); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(c.diags, i);
    if (x->severity == kPo_Severity_Warning && !warnings_full(warnings)) {
      add_warning(warnings, po_Arena_Printf(a, "patches[%d]: %s", x->patch_index, x->message));
    }
  }
  if (c.accepted) return NULL;
  const char *d = po_CompiledOverride_Describe(&c, true, false, kMaxDenialBytes, a);
  /* the last line says which Envoy API judged it: the target's mesh release's snapshot */
  return po_Arena_Printf(a, "PropertyOverride %s%s%s is invalid (%zu error%s):\n%s%s%s", c.ns, *c.ns ? "/" : "", c.name,
                         po_Diagnostics_ErrorCount(c.diags), po_Diagnostics_ErrorCount(c.diags) == 1 ? "" : "s",
                         d ? d : "", c.judged_by && *c.judged_by ? "\n" : "", c.judged_by ? c.judged_by : "");
}

/* ServiceDefaults / ProxyDefaults: every builtin/property-override entry (the check the CLI's
 * validate shares, controller/targets/consul_check.h). */
static const char *check_consul(json_object *obj, const char *kind, const po_TargetOptions *targets, po_Arena *a,
                                json_object *warnings) {
  po_ConsulExtensionCheck *checks = NULL;
  bool oom = false;
  /* Consul's release (the controller's --consul-version, else the table's default) and its
   * snapshot judge the entries, as they judge a PropertyOverride of a Consul target and as
   * validate judges them; the denial and each error's hint say which (consul@1.21) */
  po_TargetOptions o = {0};
  if (targets) o = *targets;
  po_Mesh_FillReleases(&o);
  const po_EnvoyApi *api = po_TargetOptions_Api(&o, kPo_Mesh_Consul);
  const char *judged_by = po_Mesh_JudgedBy(kPo_Mesh_Consul, o.release[kPo_Mesh_Consul], api, &o, a);
  if (!judged_by) return "out of memory validating the object";
  size_t n = po_ConsulObject_CheckRelease(obj, o.release[kPo_Mesh_Consul], api, a, &checks, &oom);
  if (oom) return "out of memory validating the object";
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < po_Diagnostics_Count(checks[i].diags); k++) {
      const po_Diagnostic *x = po_Diagnostics_At(checks[i].diags, k);
      if (x->severity == kPo_Severity_Warning && !warnings_full(warnings)) {
        add_warning(warnings, po_Arena_Printf(a, "spec.envoyExtensions[%zu] Patches[%d]: %s", checks[i].entry_index,
                                              x->patch_index, x->message));
      }
    }
  }
  const char *d = po_ConsulObject_Describe(obj, kind, checks, n, kMaxDenialBytes, a);
  if (!d) return NULL;
  const char *m = po_Arena_Printf(a, "%s\n%s", d, judged_by);
  return m ? m : "out of memory validating the object"; /* never an allow */
}

/* What the controller writes itself carries this label (po_Istio_EnvoyFilter, po_EG_EnvoyPatchPolicy):
 * it came from a PropertyOverride this webhook already accepted, and the controller must never be
 * blocked by its own webhook. The configuration leaves these writes out (matchConditions on the
 * label and on the controller's username); this is the same rule for a configuration without them.
 * A hand-made object with the label opts out of the check, as a webhook left disabled would. */
static bool generated_by_us(json_object *obj) {
  const char *m = po_Json_String(po_Json_Get(po_Json_Get(obj, "metadata"), "labels"), "app.kubernetes.io/managed-by");
  return m && !strcmp(m, "propertyoverride");
}

/* Whether the update leaves the builtin/property-override entries of spec.envoyExtensions as they
 * were: the same entries in the same order, wherever other extensions moved. They are all that
 * check_consul reads, so an update that keeps them (a protocol change, another extension added
 * or moved) brings nothing new to judge: whatever stored them is not this writer's doing. The
 * configuration's matchCondition entries-changed (deploy/base/webhook.yaml) says exactly this in
 * CEL, so a webhook the API server cannot reach blocks no such write; this is the same rule for
 * a configuration without it. Compared whole and in order, as the CEL list equality does: a
 * reorder among them is judged again (cheap, and the limits hold either way). */
static bool consul_entries_unchanged(json_object *obj, json_object *old) {
  json_object *a = po_Json_Get(po_Json_Get(obj, "spec"), "envoyExtensions");
  json_object *b = po_Json_Get(po_Json_Get(old, "spec"), "envoyExtensions");
  size_t na = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
  size_t nb = json_object_is_type(b, json_type_array) ? json_object_array_length(b) : 0;
  size_t i = 0, k = 0;
  for (;;) {
    json_object *x = NULL, *y = NULL;
    for (; i < na && !x; i++) {
      json_object *e = json_object_array_get_idx(a, i);
      const char *n = po_Json_String(e, "name");
      if (n && !strcmp(n, PO_EXTENSION_NAME)) x = e;
    }
    for (; k < nb && !y; k++) {
      json_object *e = json_object_array_get_idx(b, k);
      const char *n = po_Json_String(e, "name");
      if (n && !strcmp(n, PO_EXTENSION_NAME)) y = e;
    }
    if (!x || !y) return !x && !y;
    if (!json_object_equal(x, y)) return false;
  }
}

/* po_TextBuf_Puts for a string that may be NULL (an arena printf out of memory). */
static void put(po_TextBuf *t, const char *s) {
  if (s) po_TextBuf_Puts(t, s);
  else t->oom = true;
}

/* A mesh's own object written by hand (an EnvoyFilter, an EnvoyPatchPolicy: po_MeshOps.
 * check_native): the checks `validate -f` runs (istio.h, eg.h).
 * Their messages already say where (spec.configPatches[i] / spec.jsonPatches[i] and the path) and
 * what is valid. Errors deny, the first ones whole within kMaxDenialBytes and then a count;
 * warnings go to the response's warnings. */
static const char *check_native(json_object *obj, const char *req_ns, const char *kind, const po_MeshOps *mesh,
                                const po_TargetOptions *targets, po_Arena *a, json_object *warnings) {
  /* judged by the snapshot of the mesh release the controller runs against, as its
   * PropertyOverrides are; the denial's last line says which */
  po_TargetOptions o = {0};
  if (targets) o = *targets;
  po_Mesh_FillReleases(&o);
  const po_EnvoyApi *api = po_TargetOptions_Api(&o, mesh->mesh);
  const char *judged_by = po_Mesh_JudgedBy(mesh->mesh, o.release[mesh->mesh], api, &o, a);
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!d || !judged_by || !po_Mesh_CheckNative(mesh, obj, &o, a, d)) return "out of memory validating the object";
  size_t errors = po_Diagnostics_ErrorCount(d), shown = 0;
  const char *ns = req_ns && *req_ns ? req_ns : po_Json_Meta(obj, "namespace"), *name = po_Json_Meta(obj, "name");
  /* kubectl create of a generateName object: no name yet */
  if (!*name && *po_Json_Meta(obj, "generateName")) name = po_Arena_Printf(a, "%s*", po_Json_Meta(obj, "generateName"));
  po_TextBuf t = {.a = a};
  put(&t, po_Arena_Printf(a, "%s %s%s%s is invalid (%zu error%s):", kind, ns, *ns ? "/" : "",
                          name ? name : "", errors, errors == 1 ? "" : "s"));
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, i);
    if (x->severity == kPo_Severity_Warning) {
      add_warning(warnings, x->message);
    } else if (shown == 0 || t.len + strlen(x->message) < kMaxDenialBytes) {
      /* The first is shown even when it alone is over the bound (it may echo a huge path or
       * value): then cut, on a UTF-8 boundary, and marked. */
      size_t n = strlen(x->message);
      bool cut = n > kMaxDenialBytes;
      if (cut) {
        n = kMaxDenialBytes;
        while (n > 0 && ((unsigned char)x->message[n] & 0xC0) == 0x80) n--;
      }
      po_TextBuf_Puts(&t, "\n");
      po_TextBuf_Put(&t, x->message, n);
      if (cut) po_TextBuf_Puts(&t, " [...]");
      shown++;
    }
  }
  if (errors == 0) return NULL;
  if (shown < errors) {
    put(&t, po_Arena_Printf(a, "\n(%zu more error%s not shown)", errors - shown, errors - shown == 1 ? "" : "s"));
  }
  put(&t, "\n");
  put(&t, judged_by);
  return t.oom || !t.buf ? "out of memory validating the object" : t.buf;
}

/* What deciding a review holds at most beside its body, measured (tests/webhook/test_webhook_cost
 * runs each shape in a fresh process and compares its peak resident memory with this): json-c's
 * tree (per container, per value, and the strings' copies, per byte), the compiled patches and
 * their diagnostics (per container: each patch is one), and the answer (request.uid is at most
 * 128 bytes, denials and warnings are bounded: kCostFixed; a mutation's patch is the stored
 * entries, within the body: in kCostPerByte). Patch values are converted again: a
 * PropertyOverride's into the engine's value tree (kValue*: 180 bytes per value held in a list
 * of 400,000 strings, priced 116), and an EnvoyFilter's or EnvoyPatchPolicy's once more by their
 * checks (kNative*: an internal tree, JSON text, decoded and encoded: 410 bytes per value, 2,230
 * per {"a":1} object). The reservations come to 1.2 to 1.7 times the peaks measured. */
enum {
  kCostPerByte = 5,
  kCostPerContainer = 1024,
  kCostPerValue = 96,
  kCostFixed = 256 << 10,
  kValuePerValue = 112,
  kNativePerContainer = 200,
  kNativePerValue = 300,
};

/* Whether `w` (of n bytes) occurs in body: linear in practice (memchr for its first byte). */
static bool contains(const char *body, size_t len, const char *w, size_t n) {
  for (const char *p = body, *end = body + len; (size_t)(end - p) >= n;) {
    const char *q = memchr(p, w[0], (size_t)(end - p) - n + 1);
    if (!q) return false;
    if (!memcmp(q, w, n)) return true;
    p = q + 1;
  }
  return false;
}

size_t po_Admission_Cost(const char *body, size_t len) {
  po_ReviewCount n;
  po_Review_Count(body, len, &n);
  if (n.bad) return kCostFixed; /* refused (400) before anything is decoded */
  size_t cost = kCostFixed + len * kCostPerByte + n.containers * kCostPerContainer + n.values * kCostPerValue;
  cost += n.in_value_values * kValuePerValue;
  /* EnvoyFilter and EnvoyPatchPolicy values: priced again for a body that may be one, that is
   * one that names "Envoy", plainly or with \\u escapes. Only an overestimate for the others. */
  if (n.escaped_envoy || contains(body, len, "Envoy", 5)) {
    cost += n.in_value_containers * kNativePerContainer + n.in_value_values * kNativePerValue;
  }
  return cost;
}

json_object *po_Admission_Review(const char *body, size_t len, const po_AdmissionOptions *opt, po_Arena *a,
                                 po_CtlStatus *st) {
  const po_Tenancy *tenancy = opt ? opt->tenancy : NULL;
  const po_TargetOptions *targets = opt ? opt->targets : NULL;
  json_object *review = po_Review_Parse(body, len, st);
  if (!review) return NULL;
  json_object *req = po_Json_Get(review, "request");
  const char *uid = po_Json_String(req, "uid");
  json_object *resp = json_object_new_object(), *warnings = json_object_new_array();
  json_object_object_add(resp, "uid", json_object_new_string(uid));
  const char *op = po_Json_String(req, "operation");
  json_object *obj = po_Json_Get(req, "object");
  json_object *rk = po_Json_Get(req, "kind");
  const char *group = po_Json_String(rk, "group"), *k = po_Json_String(rk, "kind");
  const char *denial = NULL;
  const po_MeshOps *native = NULL;
  if (obj && json_object_is_type(obj, json_type_object) && (!op || strcmp(op, "DELETE") != 0) && k) {
    json_object *old = po_Json_Get(req, "oldObject");
    /* Updates that leave the spec as it was (finalizers, labels, deletion) are never refused:
     * an object that became invalid under a newer schema must still be deletable. */
    bool spec_unchanged = old && json_object_equal(po_Json_Get(old, "spec"), po_Json_Get(obj, "spec"));
    bool deleting = po_Json_Get(po_Json_Get(obj, "metadata"), "deletionTimestamp") != NULL;
    if (spec_unchanged || deleting) {
      /* allowed */
    } else if (group && !strcmp(group, PO_OVERRIDE_GROUP) && !strcmp(k, "PropertyOverride")) {
      denial = check_override(obj, po_Json_String(req, "namespace"), tenancy, targets, a, warnings);
    } else if (group && !strcmp(group, PO_CONSUL_GROUP) && (!strcmp(k, "ServiceDefaults") || !strcmp(k, "ProxyDefaults"))) {
      if (!po_Review_By(req, opt ? opt->controller_user : NULL) && (!old || !consul_entries_unchanged(obj, old))) {
        denial = check_consul(obj, k, targets, a, warnings);
      }
    } else if ((native = po_Mesh_ForNative(group, k)) && !generated_by_us(obj)) {
      denial = check_native(obj, po_Json_String(req, "namespace"), k, native, targets, a, warnings);
    }
  }
  json_object_object_add(resp, "allowed", json_object_new_boolean(!denial));
  if (denial) {
    json_object *status = json_object_new_object();
    json_object_object_add(status, "code", json_object_new_int(422));
    json_object_object_add(status, "reason", json_object_new_string("Invalid"));
    json_object_object_add(status, "message", json_object_new_string(denial));
    json_object_object_add(resp, "status", status);
  }
  if (json_object_array_length(warnings) > 0) json_object_object_add(resp, "warnings", warnings);
  else json_object_put(warnings);
  json_object_put(review);
  return po_Review_Wrap(resp);
}
