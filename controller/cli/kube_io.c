#include "kube_io.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
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

static const char *meta_str(json_object *o, const char *k) {
  json_object *m = NULL, *v = NULL;
  return json_object_object_get_ex(o, "metadata", &m) && json_object_object_get_ex(m, k, &v) ? json_object_get_string(v) : "";
}

static void event(void *ctx, json_object *about, const char *type, const char *reason, const char *message) {
  po_KubeIO *k = ctx;
  char ts[32], name[300];
  now(NULL, ts);
  unsigned long long uniq = (unsigned long long)time(NULL) * 1000003ull ^ (unsigned long long)(uintptr_t)about;
  snprintf(name, sizeof name, "%.200s.%llx", meta_str(about, "name"), uniq);
  json_object *ev = json_object_new_object(), *md = json_object_new_object(), *obj = json_object_new_object(),
              *src = json_object_new_object();
  json_object_object_add(ev, "apiVersion", json_object_new_string("v1"));
  json_object_object_add(ev, "kind", json_object_new_string("Event"));
  json_object_object_add(md, "name", json_object_new_string(name));
  json_object_object_add(md, "namespace", json_object_new_string(meta_str(about, "namespace")));
  json_object_object_add(ev, "metadata", md);
  json_object_object_add(obj, "apiVersion", json_object_new_string("propertyoverride.io/v1alpha1"));
  json_object_object_add(obj, "kind", json_object_new_string("PropertyOverride"));
  json_object_object_add(obj, "namespace", json_object_new_string(meta_str(about, "namespace")));
  json_object_object_add(obj, "name", json_object_new_string(meta_str(about, "name")));
  json_object_object_add(obj, "uid", json_object_new_string(meta_str(about, "uid")));
  json_object_object_add(ev, "involvedObject", obj);
  json_object_object_add(ev, "type", json_object_new_string(type));
  json_object_object_add(ev, "reason", json_object_new_string(reason));
  char msg[1024]; /* events are for people: the status has the whole text */
  snprintf(msg, sizeof msg, "%s", message);
  json_object_object_add(ev, "message", json_object_new_string(msg));
  json_object_object_add(src, "component", json_object_new_string("propertyoverride-controller"));
  json_object_object_add(ev, "source", src);
  json_object_object_add(ev, "firstTimestamp", json_object_new_string(ts));
  json_object_object_add(ev, "lastTimestamp", json_object_new_string(ts));
  json_object_object_add(ev, "count", json_object_new_int(1));
  po_KubeRef ref = {.group = "", .version = "v1", .resource = "events", .ns = meta_str(about, "namespace")};
  po_KubeStatus st;
  po_KubeStatus_Clear(&st);
  json_object *out = NULL;
  po_KubeClient_Create(k->client, &ref, ev, &out, &st);
  json_object_put(out);
  json_object_put(ev);
}

po_ReconcileIO po_KubeIO_Table(po_KubeIO *k) {
  return (po_ReconcileIO){get_override, get_target, write_target, patch_override, now, event, k};
}
