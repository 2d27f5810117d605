#include "kube_io.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "po/base/json.h"
#include "po/meshes/consul.h"
#include "po/meshes/eg.h"

const po_KubeRef kPo_OverridesRef = {.group = "propertyoverride.io", .version = "v1alpha1", .resource = "propertyoverrides"};
const po_KubeRef kPo_ServiceDefaultsRef = {.group = PO_CONSUL_GROUP, .version = PO_CONSUL_VERSION, .resource = "servicedefaults"};
const po_KubeRef kPo_ProxyDefaultsRef = {.group = PO_CONSUL_GROUP, .version = PO_CONSUL_VERSION, .resource = "proxydefaults"};
const po_KubeRef kPo_ServicesRef = {.group = "", .version = "v1", .resource = "services"};
const po_KubeRef kPo_EnvoyFiltersRef = {.group = "networking.istio.io", .version = "v1alpha3", .resource = "envoyfilters"};
const po_KubeRef kPo_GatewaysRef = {.group = "gateway.networking.k8s.io", .version = "v1", .resource = "gateways"};
const po_KubeRef kPo_HTTPRoutesRef = {.group = "gateway.networking.k8s.io", .version = "v1", .resource = "httproutes"};
const po_KubeRef kPo_EnvoyPatchPoliciesRef = {.group = "gateway.envoyproxy.io", .version = "v1alpha1",
                                              .resource = "envoypatchpolicies"};

static size_t slot_of(po_KubeIO *k, const char *ns) {
  for (size_t i = 0; i < k->ns_count; i++) {
    if (!k->namespaces[i][0] || strcmp(k->namespaces[i], ns) == 0) return i;
  }
  return (size_t)-1;
}

/* References into the informers' caches (po_InformerRef): the shared tree of an informer that
 * keeps trees, else a parse for this reader (app.c says which informer keeps what); read-only
 * either way. NULL with st not Ok: cached but not readable (po_Informer_Get), never absent. An
 * unwatched namespace or a kind not enabled has nothing cached: absent. */
static const json_object *get_from(po_Informer *from, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  po_InformerRef *r = NULL;
  po_CtlStatus_Clear(st);
  const json_object *o = from ? po_Informer_Get(from, ns, name, &r, st) : NULL;
  *ref = r;
  return o;
}

static const json_object *get_override(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  po_KubeIO *k = ctx;
  size_t i = slot_of(k, ns);
  return get_from(i == (size_t)-1 ? NULL : k->overrides[i], ns, name, ref, st);
}

/* The informer caching targets of kind in namespace ns, NULL when none does. */
static po_Informer *targets_of(po_KubeIO *k, po_TargetKind kind, const char *ns) {
  size_t i = slot_of(k, ns);
  if (i == (size_t)-1) return NULL;
  switch (kind) {
    case kPo_TargetKind_ProxyDefaults: return k->proxy_defaults[i];
    case kPo_TargetKind_ServiceDefaults: return k->service_defaults[i];
    case kPo_TargetKind_Service: return atomic_load(&k->istio) ? k->services[i] : NULL; /* Istio enabled */
    case kPo_TargetKind_Gateway: return k->gateways[i];  /* NULL unless Envoy Gateway is enabled */
    default: return NULL;                                /* Mesh: no object */
  }
}

static const json_object *get_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, void **ref,
                                     po_CtlStatus *st) {
  return get_from(targets_of(ctx, kind, ns), ns, name, ref, st);
}

static bool version_of(po_Informer *from, const char *ns, const char *name, po_OverrideVersion *v);

static bool target_version(void *ctx, po_TargetKind kind, const char *ns, const char *name, po_OverrideVersion *v) {
  return version_of(targets_of(ctx, kind, ns), ns, name, v);
}

static po_Informer *filters_of(po_KubeIO *k, const char *ns) {
  if (!atomic_load(&k->istio)) return NULL;
  size_t i = slot_of(k, ns);
  if (i != (size_t)-1) return k->filters[i];
  return k->root_ns && ns && !strcmp(ns, k->root_ns) ? k->root_filters : NULL;
}

static const json_object *get_filter(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  return get_from(filters_of(ctx, ns), ns, name, ref, st);
}

static const json_object *get_policy(void *ctx, const char *ns, const char *name, void **ref, po_CtlStatus *st) {
  po_KubeIO *k = ctx;
  size_t i = slot_of(k, ns);
  return get_from(i == (size_t)-1 ? NULL : k->policies[i], ns, name, ref, st);
}

typedef struct {
  const char *ns, *gateway;
  const char *const *whole;
  size_t n_whole;
  json_object *out;
  bool ok;
} RoutesOf;

/* Under the cache's read lock: only the routes naming the Gateway are copied, whole when a
 * PropertyOverride of it follows their namespace, else the stub it reads of them. */
static void route_of(void *ctx, const char *key, const json_object *obj, const char *rv) {
  (void)key; (void)rv;
  RoutesOf *r = ctx;
  if (!r->ok || !po_EG_RouteNamesGateway(obj, r->ns, r->gateway)) return;
  json_object *c = po_EG_RouteCopy(obj, po_EG_NamespaceIn(r->whole, r->n_whole, po_Json_Meta(obj, "namespace")));
  r->ok = c && json_object_array_add(r->out, c) == 0;
  if (!r->ok) json_object_put(c);
}

/* Every watched namespace's HTTPRoutes: a route of another namespace attaches where the
 * Gateway's listeners allow it (po_EG_EnvoyPatchPolicy judges). Linear in the HTTPRoutes cached. */
static json_object *gateway_routes(void *ctx, const char *ns, const char *gateway, const char *const *whole,
                                   size_t n_whole) {
  po_KubeIO *k = ctx;
  RoutesOf r = {.ns = ns, .gateway = gateway, .whole = whole, .n_whole = n_whole, .out = json_object_new_array(), .ok = true};
  for (size_t i = 0; r.out && i < k->ns_count; i++) {
    /* a route cached but not parsed (out of memory) would be left out of the policy: none then */
    if (k->routes[i] && !po_Informer_ForEach(k->routes[i], route_of, &r)) r.ok = false;
  }
  if (!r.ok) {
    json_object_put(r.out);
    return NULL;
  }
  return r.out;
}

/* One HTTPRoute whole (what is read of it), when the bound lets its rules in (po_ReconcileIO.route). */
static json_object *route_whole(void *ctx, const char *ns, const char *name) {
  po_KubeIO *k = ctx;
  size_t i = slot_of(k, ns);
  void *r = NULL;
  po_CtlStatus st;
  const json_object *o = get_from(i == (size_t)-1 ? NULL : k->routes[i], ns, name, &r, &st);
  if (!o && st.code != kPo_Ctl_Ok) return NULL; /* cached, not readable: never "gone" */
  json_object *c = o ? po_EG_RouteCopy(o, true) : json_object_new_object(); /* gone: no rules */
  po_InformerRef_Release(r);
  return c;
}

_Static_assert(sizeof((po_OverrideVersion *)0)->rv == sizeof((po_InformerVersion *)0)->rv &&
                   sizeof((po_OverrideVersion *)0)->uid == sizeof((po_InformerVersion *)0)->uid,
               "version_of copies the informer's version whole");
/* The cached object's version from informer `from` (NULL: none), without reading it. */
static bool version_of(po_Informer *from, const char *ns, const char *name, po_OverrideVersion *v) {
  po_InformerVersion iv;
  *v = (po_OverrideVersion){.generation = 0};
  if (!from || !po_Informer_Version(from, ns, name, &iv)) return false;
  /* both NUL-terminated in buffers of one size (checked below): copied whole */
  memcpy(v->rv, iv.rv, sizeof v->rv);
  memcpy(v->uid, iv.uid, sizeof v->uid);
  v->generation = iv.generation;
  return true;
}

static bool override_version(void *ctx, const char *ns, const char *name, po_OverrideVersion *v) {
  po_KubeIO *k = ctx;
  size_t i = slot_of(k, ns);
  return version_of(i == (size_t)-1 ? NULL : k->overrides[i], ns, name, v);
}

static void release(void *ctx, void *ref) {
  (void)ctx;
  po_InformerRef_Release(ref);
}

static po_WriteResult result_of(const po_CtlStatus *st) {
  switch (st->code) {
    case kPo_Ctl_Ok: return kPo_WriteResult_Ok;
    case kPo_Ctl_Conflict:
    case kPo_Ctl_AlreadyExists: return kPo_WriteResult_Conflict;
    case kPo_Ctl_NotFound: return kPo_WriteResult_NotFound;
    default: return kPo_WriteResult_Failed;
  }
}

/* A write the API server accepted: counted by resource, and its time kept. */
static void wrote(po_KubeIO *k, const char *resource) {
  po_Series_Inc(po_Family_WithLabels(k->writes, resource));
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  po_Series_Set(k->last_write, (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) / 1e6);
}

static po_WriteResult write_ref(po_KubeIO *k, po_KubeRef ref, const char *ns, const char *name, json_object *obj,
                                bool create, const char *rv, json_object **written, po_CtlStatus *st) {
  ref.ns = ns;
  po_CtlStatus_Clear(st);
  /* The answer is parsed only when the caller wants it: the informer brings the same object
   * anyway, and a target's answer grows with its entries. */
  json_object *out = NULL, **want = written ? &out : NULL;
  bool ok;
  if (!obj) {
    ref.name = name;
    po_KubeDeleteOptions d = {.precondition_resource_version = rv};
    ok = po_KubeClient_Delete(k->client, &ref, &d, want, st);
  } else if (create) {
    ok = po_KubeClient_Create(k->client, &ref, obj, want, st);
  } else {
    ref.name = name;
    ok = po_KubeClient_Update(k->client, &ref, obj, want, st);
  }
  if (ok) wrote(k, ref.resource);
  if (written && ok) *written = out;
  else json_object_put(out);
  return ok ? kPo_WriteResult_Ok : result_of(st);
}

/* A Consul target in a namespace this controller does not watch (--namespace): nothing cached
 * there, so it reads as absent, and a create would go to a namespace its RBAC does not cover (the
 * chart binds only the watched ones) or, allowed, make an object it never sees again. Refused
 * without a request, as EnvoyFilters and EnvoyPatchPolicies are. */
static bool target_unwatched(po_KubeIO *k, const char *ns, po_CtlStatus *st) {
  if (slot_of(k, ns) != (size_t)-1) return false;
  po_CtlStatus_Set(st, kPo_Ctl_Usage, "namespace '%s' is not watched by this controller (--namespace)", ns);
  return true;
}

static po_WriteResult write_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                   bool create, const char *rv, json_object **written, po_CtlStatus *st) {
  po_CtlStatus_Clear(st);
  if (target_unwatched(ctx, ns, st)) return kPo_WriteResult_Failed;
  return write_ref(ctx, kind == kPo_TargetKind_ProxyDefaults ? kPo_ProxyDefaultsRef : kPo_ServiceDefaultsRef, ns, name, obj,
                   create, rv, written, st);
}

static po_WriteResult update_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, json_object *obj,
                                    const char *patch, size_t patch_len, po_WrittenVersion *written, po_CtlStatus *st) {
  po_KubeIO *k = ctx;
  po_KubeRef ref = kind == kPo_TargetKind_ProxyDefaults ? kPo_ProxyDefaultsRef : kPo_ServiceDefaultsRef;
  ref.ns = ns;
  ref.name = name;
  po_CtlStatus_Clear(st);
  if (target_unwatched(k, ns, st)) {
    *written = (po_WrittenVersion){.uid = {0}};
    return kPo_WriteResult_Failed;
  }
  po_KubeWritten w;
  po_KubePatchOptions json_patch = {.type = kPo_KubePatch_Json};
  bool ok = patch ? po_KubeClient_PatchVersion(k->client, &ref, &json_patch, patch, patch_len, &w, st)
                  : po_KubeClient_UpdateVersion(k->client, &ref, obj, &w, st);
  /* The API server applies the patch's operations to the object it holds before it compares the
   * version: one that moved on (a tenant's edit the cache has not seen) can fail them first, a
   * 422 for what is a conflict. The whole object, over the same version, tells which it was: a
   * 409, or the object's own refusal. */
  /* (No object: a reconcile from the target's digest, which drops the digest on any failure, so
   * its retry reads the object and sends it whole if need be.) */
  if (!ok && patch && obj && st->code == kPo_Ctl_Invalid) {
    ok = po_KubeClient_UpdateVersion(k->client, &ref, obj, &w, st);
    /* "written": the patch was wrong for an object that had not moved on (never seen in the
     * tests: the count makes one visible) */
    const char *outcome = ok                                 ? "written"
                          : st->code == kPo_Ctl_Conflict ? "conflict"
                          : st->code == kPo_Ctl_Invalid  ? "refused"
                                                         : "failed";
    if (k->patches_resent) po_Series_Inc(po_Family_WithLabels(k->patches_resent, outcome));
  }
  *written = (po_WrittenVersion){.uid = {0}};
  if (!ok) return result_of(st);
  wrote(k, ref.resource);
  snprintf(written->uid, sizeof written->uid, "%s", w.uid);
  snprintf(written->rv, sizeof written->rv, "%s", w.rv);
  return kPo_WriteResult_Ok;
}

/* A live read (release_guard in the Consul reconcile): deletions only, one a reconcile at most.
 * An unwatched namespace is absent, as get_target has it: nothing is written there and no cache
 * shows it, so an entry found there could never be removed and its finalizer would wait for
 * good. */
static json_object *read_target(void *ctx, po_TargetKind kind, const char *ns, const char *name, po_CtlStatus *st) {
  po_KubeIO *k = ctx;
  po_KubeRef ref = kind == kPo_TargetKind_ProxyDefaults ? kPo_ProxyDefaultsRef : kPo_ServiceDefaultsRef;
  ref.ns = ns;
  ref.name = name;
  po_CtlStatus_Clear(st);
  if (slot_of(k, ns) == (size_t)-1) {
    po_CtlStatus_Set(st, kPo_Ctl_NotFound, "namespace '%s' is not watched by this controller (--namespace)", ns);
    return NULL;
  }
  json_object *out = NULL;
  if (!po_KubeClient_Get(k->client, &ref, &out, st)) return NULL;
  return out;
}

static po_WriteResult write_filter(void *ctx, const char *ns, const char *name, json_object *obj, bool create,
                                   const char *rv, json_object **written, po_CtlStatus *st) {
  if (!filters_of(ctx, ns)) {
    /* Unwatched: a create would never be seen again, and could not be told ours. */
    po_CtlStatus_Set(st, kPo_Ctl_Usage, "namespace '%s' is not watched by this controller (--namespace)", ns);
    return kPo_WriteResult_Failed;
  }
  return write_ref(ctx, kPo_EnvoyFiltersRef, ns, name, obj, create, rv, written, st);
}

static po_WriteResult write_policy(void *ctx, const char *ns, const char *name, json_object *obj, bool create,
                                   const char *rv, json_object **written, po_CtlStatus *st) {
  po_KubeIO *k = ctx;
  size_t i = slot_of(k, ns);
  if (i == (size_t)-1 || !k->policies[i]) {
    po_CtlStatus_Set(st, kPo_Ctl_Usage, "namespace '%s' is not watched by this controller (--namespace)", ns);
    return kPo_WriteResult_Failed;
  }
  return write_ref(ctx, kPo_EnvoyPatchPoliciesRef, ns, name, obj, create, rv, written, st);
}

static po_WriteResult patch_override(void *ctx, const char *ns, const char *name, bool status, json_object *patch,
                                     po_WrittenVersion *written, po_CtlStatus *st) {
  po_KubeIO *k = ctx;
  po_KubeRef ref = kPo_OverridesRef;
  ref.ns = ns;
  ref.name = name;
  ref.subresource = status ? "status" : NULL;
  po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
  po_CtlStatus_Clear(st);
  const char *body = json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN);
  if (!body) { /* json-c's writer ran out of memory: nothing sent */
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (the PropertyOverride patch)");
    return result_of(st);
  }
  bool ok;
  if (written) { /* the answer's version, read without a parse */
    po_KubeWritten w;
    po.answer_finalizer = status ? NULL : PO_FINALIZER;
    ok = po_KubeClient_PatchVersion(k->client, &ref, &po, body, strlen(body), &w, st);
    *written = (po_WrittenVersion){.generation = ok ? w.generation : 0, .finalized = ok && w.has_finalizer};
    if (ok) {
      snprintf(written->uid, sizeof written->uid, "%s", w.uid);
      snprintf(written->rv, sizeof written->rv, "%s", w.rv);
    }
  } else {
    ok = po_KubeClient_Patch(k->client, &ref, &po, body, strlen(body), NULL, st); /* the answer is not needed */
  }
  if (ok) wrote(k, status ? "propertyoverrides/status" : "propertyoverrides");
  return ok ? kPo_WriteResult_Ok : result_of(st);
}

static void now(void *ctx, char buf[32]) {
  (void)ctx;
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Events go to the recorder (coalesced, posted by its own thread); without one (a table built
 * by hand) they are dropped. */
static void post_event(po_KubeIO *k, const char *api_version, const char *kind, json_object *about, const char *type,
                       const char *reason, const char *message) {
  if (k->recorder) po_EventRecorder_Record(k->recorder, api_version, kind, about, type, reason, message);
}

static void event(void *ctx, json_object *about, const char *type, const char *reason, const char *message) {
  post_event(ctx, "propertyoverride.io/v1alpha1", "PropertyOverride", about, type, reason, message);
}

/* ---- look-alikes: reported once per target revision ---- */

typedef struct Seen {
  struct Seen *next;
  char *key; /* "reason kind ns/name" */
  char rv[64];
} Seen;

struct po_SeenRevisions {
  pthread_mutex_t mu;
  Seen *buckets[4096];
};

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* True the first time this (key, resourceVersion) is seen: a reconcile repeats for many reasons,
 * a report should not. */
static bool first_sighting(po_KubeIO *k, const char *key, const char *rv) {
  if (!k->seen) return true; /* no table (out of memory at start): report every time */
  struct po_SeenRevisions *sr = k->seen;
  size_t b = hash(key) % (sizeof sr->buckets / sizeof sr->buckets[0]);
  pthread_mutex_lock(&sr->mu);
  Seen *e = sr->buckets[b];
  while (e && strcmp(e->key, key) != 0) e = e->next;
  if (!e && (e = calloc(1, sizeof *e))) {
    if ((e->key = strdup(key))) {
      e->next = sr->buckets[b];
      sr->buckets[b] = e;
    } else {
      free(e);
      e = NULL;
    }
  }
  bool first = !e || strcmp(e->rv, rv) != 0;
  if (e) snprintf(e->rv, sizeof e->rv, "%s", rv);
  pthread_mutex_unlock(&sr->mu);
  return first;
}

static void target_event(void *ctx, po_TargetKind kind, json_object *about, const char *type, const char *reason,
                         const char *message) {
  po_KubeIO *k = ctx;
  char key[700];
  snprintf(key, sizeof key, "%s %s %s/%s", reason, po_TargetKind_Name(kind), po_Json_Meta(about, "namespace"), po_Json_Meta(about, "name"));
  if (!first_sighting(k, key, po_Json_Meta(about, "resourceVersion"))) return;
  if (k->foreign_markers) po_Series_Inc(po_Family_WithLabels(k->foreign_markers, strcmp(reason, "ForeignObject") ? "entry" : "object"));
  post_event(k, PO_CONSUL_GROUP "/" PO_CONSUL_VERSION, po_TargetKind_Name(kind), about, type, reason, message);
}

void po_KubeIO_Init(po_KubeIO *k) {
  if ((k->seen = calloc(1, sizeof *k->seen))) pthread_mutex_init(&k->seen->mu, NULL);
}

void po_KubeIO_Free(po_KubeIO *k) {
  struct po_SeenRevisions *sr = k->seen;
  if (!sr) return;
  for (size_t b = 0; b < sizeof sr->buckets / sizeof sr->buckets[0]; b++) {
    for (Seen *e = sr->buckets[b], *next; e; e = next) {
      next = e->next;
      free(e->key);
      free(e);
    }
  }
  pthread_mutex_destroy(&sr->mu);
  free(sr);
  k->seen = NULL;
}

bool po_KubeIO_Synced(po_KubeIO *k, char *reason, size_t cap) {
  bool istio = atomic_load(&k->istio); /* its informers are read only once it is on */
  if (istio && k->root_filters && !po_Informer_HasSynced(k->root_filters)) {
    if (reason) snprintf(reason, cap, "the EnvoyFilter cache of namespace '%s' not synced", k->root_ns);
    return false;
  }
  for (size_t i = 0; i < k->ns_count; i++) {
    po_Informer *all[] = {k->overrides[i], k->service_defaults[i], k->proxy_defaults[i], istio ? k->services[i] : NULL,
                          istio ? k->filters[i] : NULL, k->gateways[i], k->routes[i], k->policies[i]};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++) {
      if (!all[j] || po_Informer_HasSynced(all[j])) continue;
      if (reason) {
        /* why, when the list or watch failed: a cache that never syncs says so (F1, issue 21) */
        char why[400];
        bool failed = po_Informer_LastError(all[j], why, sizeof why);
        snprintf(reason, cap, "caches of namespace '%s' not synced%s%.400s", k->namespaces[i][0] ? k->namespaces[i] : "*",
                 failed ? ": the last " : "", failed ? why : "");
      }
      return false;
    }
  }
  return true;
}

static bool synced(void *ctx) { return po_KubeIO_Synced(ctx, NULL, 0); }

po_ReconcileIO po_KubeIO_Table(po_KubeIO *k) {
  return (po_ReconcileIO){get_override, get_target, write_target, patch_override, now, event, k, synced, target_event,
                          k->tenancy, release, override_version, NULL, NULL,
                          /* while Istio may still turn on, po_App_Reconcile leaves them out until it does */
                          atomic_load(&k->istio) || k->istio_later ? get_filter : NULL,
                          atomic_load(&k->istio) || k->istio_later ? write_filter : NULL, k->eg ? get_policy : NULL,
                          k->eg ? write_policy : NULL, k->eg ? gateway_routes : NULL, NULL, NULL,
                          k->eg ? route_whole : NULL, update_target, read_target, target_version};
}
