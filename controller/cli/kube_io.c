#include "kube_io.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "po/targets/consul.h"

const po_KubeRef kPo_OverridesRef = {.group = "propertyoverride.io", .version = "v1alpha1", .resource = "propertyoverrides"};
const po_KubeRef kPo_ServiceDefaultsRef = {.group = PO_CONSUL_GROUP, .version = PO_CONSUL_VERSION, .resource = "servicedefaults"};
const po_KubeRef kPo_ProxyDefaultsRef = {.group = PO_CONSUL_GROUP, .version = PO_CONSUL_VERSION, .resource = "proxydefaults"};

static size_t slot_of(po_KubeIO *k, const char *ns) {
  for (size_t i = 0; i < k->ns_count; i++) {
    if (!k->namespaces[i][0] || strcmp(k->namespaces[i], ns) == 0) return i;
  }
  return (size_t)-1;
}

static json_object *get_override(void *ctx, const char *ns, const char *name) {
  po_KubeIO *k = ctx;
  size_t i = slot_of(k, ns);
  return i == (size_t)-1 ? NULL : po_Informer_Get(k->overrides[i], ns, name);
}

static json_object *get_target(void *ctx, po_TargetKind kind, const char *ns, const char *name) {
  po_KubeIO *k = ctx;
  size_t i = slot_of(k, ns);
  if (i == (size_t)-1) return NULL;
  return po_Informer_Get(kind == kPo_TargetProxyDefaults ? k->proxy_defaults[i] : k->service_defaults[i], ns, name);
}

static po_WriteResult result_of(const po_KubeStatus *st, char *err, size_t size) {
  snprintf(err, size, "%s", st->message);
  switch (st->code) {
    case kPo_KubeErr_Ok: return kPo_WriteOk;
    case kPo_KubeErr_Conflict:
    case kPo_KubeErr_AlreadyExists: return kPo_WriteConflict;
    case kPo_KubeErr_NotFound: return kPo_WriteNotFound;
    default: return kPo_WriteFailed;
  }
}

static po_WriteResult write_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                   bool create, const char *rv, char *err, size_t size) {
  po_KubeIO *k = ctx;
  po_KubeRef ref = kind == kPo_TargetProxyDefaults ? kPo_ProxyDefaultsRef : kPo_ServiceDefaultsRef;
  ref.ns = ns;
  po_KubeStatus st;
  po_KubeStatus_Clear(&st);
  json_object *out = NULL;
  bool ok;
  if (!obj) {
    ref.name = name;
    po_KubeDeleteOptions d = {.precondition_resource_version = rv};
    ok = po_KubeClient_Delete(k->client, &ref, &d, &out, &st);
  } else if (create) {
    ok = po_KubeClient_Create(k->client, &ref, obj, &out, &st);
  } else {
    ref.name = name;
    ok = po_KubeClient_Update(k->client, &ref, obj, &out, &st);
  }
  json_object_put(out);
  return ok ? kPo_WriteOk : result_of(&st, err, size);
}

static po_WriteResult patch_override(void *ctx, const char *ns, const char *name, bool status, json_object *patch,
                                     char *err, size_t size) {
  po_KubeIO *k = ctx;
  po_KubeRef ref = kPo_OverridesRef;
  ref.ns = ns;
  ref.name = name;
  ref.subresource = status ? "status" : NULL;
  po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
  po_KubeStatus st;
  po_KubeStatus_Clear(&st);
  json_object *out = NULL;
  const char *body = json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN);
  bool ok = po_KubeClient_Patch(k->client, &ref, &po, body, strlen(body), &out, &st);
  json_object_put(out);
  return ok ? kPo_WriteOk : result_of(&st, err, size);
}

static void now(void *ctx, char buf[32]) {
  (void)ctx;
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

po_ReconcileIO po_KubeIO_Table(po_KubeIO *k) {
  return (po_ReconcileIO){get_override, get_target, write_target, patch_override, now, k};
}
