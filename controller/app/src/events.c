/* What the informers feed the workqueue, and the reconcile the workers run: the target index
 * follows every PropertyOverride, and every change enqueues each target it may affect. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"
#include "po/base/json.h"
#include "po/runtime/clock.h"
#include "po/meshes/eg.h"
#include "po/meshes/istio.h"

/* Informer events: a target's reconciles start at least one batching window apart. The first
 * event of a target that has not run within the window queues it at once; every later one
 * within the window waits for the window's end (the workqueue remembers when each key last
 * started), so N PropertyOverrides created in a row against one target cost one reconcile per
 * window (one parse of the target, one plan, one write) instead of N: each reconcile costs as
 * much as the target's whole set, so reconciling one at a time grew as N*N/T. A change waits at
 * most one window, none when the target was quiet. An event during the target's reconcile waits
 * for the window after that reconcile's start: nothing is lost. Within a burst (events less
 * than --target-burst-quiet apart, of any target) the first event of a quiet target is held too,
 * until the burst pauses, at most --target-burst-max (the workqueue's burst hold): a stream of
 * creates over many targets, each seeing one every few seconds, passed every window's leading
 * edge and cost a reconcile of the whole target per create (issue 26). */
static void count(po_Series *s) {
  if (s) po_Series_Inc(s);
}

static void enqueue(po_App *app, const char *key, po_AppEnqueue why) {
  if (!key || !*key || !app->controller) return;
  count(app->enqueues[why]);
  int64_t window = (int64_t)(app->o.target_batch_window_s * 1e9);
  if (window > 0) po_Controller_EnqueueSpaced(app->controller, key, window);
  else po_Controller_Enqueue(app->controller, key);
}

void po_App_EnqueueKey(void *app, const char *key) { enqueue(app, key, kPo_AppEnqueue_Reconcile); }

/* At leadership every key goes at once: there is no burst to wait for, the caches are complete. */
static void enqueue_now(po_App *app, const char *key, po_AppEnqueue why) {
  if (!key || !*key || !app->controller) return;
  count(app->enqueues[why]);
  po_Controller_Enqueue(app->controller, key);
}

bool po_App_RegisterEnqueueMetrics(po_App *app) {
  static const char *const kEnqueue[kPo_AppEnqueue_Count] = {
      [kPo_AppEnqueue_Override] = "override",          [kPo_AppEnqueue_OverrideMoved] = "override-moved",
      [kPo_AppEnqueue_OverrideRelated] = "override-related", [kPo_AppEnqueue_OverrideDeleted] = "override-deleted",
      [kPo_AppEnqueue_Target] = "target",              [kPo_AppEnqueue_TargetDeleted] = "target-deleted",
      [kPo_AppEnqueue_MeshObject] = "mesh-object",     [kPo_AppEnqueue_Reconcile] = "reconcile",
      [kPo_AppEnqueue_HeldGone] = "held-entry-gone",      [kPo_AppEnqueue_Leadership] = "leadership"};
  static const char *const kIgnored[kPo_AppIgnored_Count] = {[kPo_AppIgnored_OwnOverrideWrite] = "own-override-write",
                                                             [kPo_AppIgnored_OwnTargetWrite] = "own-target-write",
                                                             [kPo_AppIgnored_Unchanged] = "unchanged",
                                                             [kPo_AppIgnored_OwnOverrideVersion] = "own-override-version"};
  static const char *const rl[] = {"reason"};
  po_MetricFamily *enq = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_reconcile_enqueues_total",
      "Target keys queued, by what queued them (a key queued again before it ran is one reconcile): override "
      "(a PropertyOverride added or changed), override-moved (the target it left or holding its last valid "
      "generation), override-related (the other side of a ProxyDefaults or Mesh overlap), override-deleted, target "
      "(a target added or changed by someone else), target-deleted, mesh-object (Services, EnvoyFilters, Gateways, "
      "HTTPRoutes, EnvoyPatchPolicies), reconcile (asked by a reconcile), leadership (everything cached).",
      1, rl, 0, NULL);
  po_MetricFamily *ign = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_watch_events_ignored_total",
      "Watch events that queued nothing, by why: own-override-write and own-target-write (our own write coming back "
      "as written), own-override-version (our finalizer write coming back, known by the version its answer said: "
      "not parsed), unchanged (a PropertyOverride update that changed nothing a reconcile reads: a label, an "
      "annotation, managedFields).",
      1, rl, 0, NULL);
  static const char *const kReads[3] = {"digest", "digest-then-object", "object"};
  static const char *const fl[] = {"from"};
  po_MetricFamily *reads = po_Metrics_Register(
      app->metrics, kPo_Metric_Counter, "propertyoverride_target_reads_total",
      "Reconciles of ServiceDefaults and ProxyDefaults, by what they read of the target: digest (what this "
      "controller knows the version the cache holds to be, its own last write or the last it read: the object is "
      "not read), digest-then-object (the reconcile needed more than the digest says), object (no digest of that "
      "version; under --consul-sync-status=require always).",
      1, fl, 0, NULL);
  if (!enq || !ign || !reads) return false;
  for (int i = 0; i < 3; i++) {
    if (!(app->target_reads[i] = po_Family_WithLabels(reads, kReads[i]))) return false;
  }
  for (int i = 0; i < kPo_AppEnqueue_Count; i++) {
    if (!(app->enqueues[i] = po_Family_WithLabels(enq, kEnqueue[i]))) return false;
  }
  for (int i = 0; i < kPo_AppIgnored_Count; i++) {
    if (!(app->ignored[i] = po_Family_WithLabels(ign, kIgnored[i]))) return false;
  }
  return true;
}

/* ---- informer handlers: keep the index and enqueue targets ---- */

/* Until the workers start (every cache synced, start_gate.c) the handlers only index: the start
 * enqueues every cached key once, so an enqueue per event of the initial lists (100,000 at a
 * cold start) is work done twice, and a batching window's delayed copy reconciled its target a
 * second time after the start's. */
static bool live(po_App *app) { return atomic_load(&app->gate.live); }

static void enqueue_cb(void *ctx, const char *key) { enqueue(ctx, key, kPo_AppEnqueue_OverrideRelated); }

/* A ProxyDefaults PropertyOverride meets every ServiceDefaults one (Consul applies its entries to
 * every service, first): when what takes part in overlaps changes (a new generation, a
 * deletion), the other side's statuses are refreshed too. Status writes change neither, so
 * they cost nothing more. */
static void enqueue_related(po_App *app, const char *key) {
  if (!po_TargetIndex_ForEachRelated(app->index, key, enqueue_cb, app)) {
    po_Log_Error(app->log, "out of memory: the targets sharing proxies with this one are not reconciled",
                 po_Str("key", key));
  }
}

/* What takes part in overlaps: the generation and the deletion. The informer records both for
 * the old object, so it need not be parsed again (a generation of 0, unknown, counts as changed). */
static bool overlap_input_changed(const po_InformerVersion *old, const json_object *obj) {
  if (!old) return true;
  json_object *m = po_Json_Get(obj, "metadata"), *g = po_Json_Get(m, "generation");
  return old->generation == 0 || !g || !json_object_is_type(g, json_type_int) || json_object_get_int64(g) != old->generation ||
         old->deleting != (po_Json_Get(m, "deletionTimestamp") != NULL);
}

/* A cache key ("namespace/name") split: the namespace into ns, the name returned. */
static const char *split_cache_key(const char *cache_key, char ns[254]) {
  const char *slash = strchr(cache_key, '/'), *name = cache_key;
  ns[0] = '\0';
  if (slash && (size_t)(slash - cache_key) < 254) {
    memcpy(ns, cache_key, (size_t)(slash - cache_key));
    ns[slash - cache_key] = '\0';
    name = slash + 1;
  }
  return name;
}

static void override_changed(void *ctx, const po_InformerVersion *old_version, json_object *obj) {
  po_App *app = ctx;
  const char *ns = po_Json_Meta(obj, "namespace"), *name = po_Json_Meta(obj, "name");
  char key[600], old[600];
  po_Reconcile_OverrideKey(obj, key, sizeof key);
  if (!po_TargetIndex_Set(app->index, ns, name, key, old, sizeof old)) {
    /* Said, not dropped silently: its target's reconcile still finds it by its entry there. */
    po_Log_Error(app->log, "out of memory: the PropertyOverride is missing from the target index",
                 po_Str("namespace", ns), po_Str("name", name));
  }
  char held[600], old_held[600];
  po_Reconcile_HeldKey(obj, held, sizeof held);
  if (!po_TargetIndex_SetHeld(app->index, ns, name, held, old_held, sizeof old_held)) {
    po_Log_Error(app->log, "out of memory: the target holding the PropertyOverride's last valid generation is not indexed",
                 po_Str("namespace", ns), po_Str("name", name));
  }
  bool moved = strcmp(old, key) != 0 || strcmp(old_held, held) != 0;
  /* Our own finalizer or status write coming back, nothing else changed: the reconcile that wrote
   * it did all there was to do (each echo cost a reconcile of the whole target a window later).
   * Else nothing a reconcile reads changed since the last event of it (a label, an annotation,
   * managedFields): its target has nothing to do. Recorded for every event, ours too, once the
   * workers run: before, the start queues every target, and an initial list's 100,000 hashes
   * were 18% of a cold start's CPU; the next event of each is then judged changed. */
  po_OverrideEvent judged = po_TargetIndex_OverrideEvent(app->index, obj, !moved, live(app));
  if (judged == kPo_OverrideEvent_OwnWrite) {
    count(app->ignored[kPo_AppIgnored_OwnOverrideWrite]);
    return;
  }
  if (!moved && judged == kPo_OverrideEvent_Unchanged && old_version) {
    count(app->ignored[kPo_AppIgnored_Unchanged]);
    return;
  }
  if (!live(app)) return;
  enqueue(app, key, kPo_AppEnqueue_Override);
  if (strcmp(old, key) != 0) enqueue(app, old, kPo_AppEnqueue_OverrideMoved); /* targetRef moved: the old target drops it */
  if (*held) enqueue(app, held, kPo_AppEnqueue_OverrideMoved);                /* where its last valid generation is live */
  if (*old_held && strcmp(old_held, held) != 0) enqueue(app, old_held, kPo_AppEnqueue_OverrideMoved);
  if (overlap_input_changed(old_version, obj)) {
    enqueue_related(app, key);
    if (*old && strcmp(old, key) != 0) enqueue_related(app, old);
  }
}

static void override_added(void *ctx, json_object *obj) { override_changed(ctx, NULL, obj); }
/* Our finalizer write coming back, known by its head (the informer's own_version, before any
 * parse): the version that write's answer said (po_TargetIndex_IsOwnOverrideEcho). It changed
 * nothing a reconcile reads: nothing is parsed, judged or queued (each such event was a parse and
 * two hashes of the whole object). Any other event goes through override_changed. */
static bool override_own(void *ctx, const char *cache_key, const po_InformerVersion *v) {
  po_App *app = ctx;
  char ns[254];
  const char *name = split_cache_key(cache_key, ns);
  if (!po_TargetIndex_IsOwnOverrideEcho(app->index, ns, name, v->uid, v->rv, v->generation, v->deleting)) return false;
  count(app->ignored[kPo_AppIgnored_OwnOverrideVersion]);
  return true;
}
static void override_updated(void *ctx, const po_InformerVersion *old_version, json_object *obj) {
  override_changed(ctx, old_version, obj);
}
/* Whether the object carries our finalizer. */
static bool has_our_finalizer(const json_object *obj) {
  json_object *f = po_Json_Get(po_Json_Get(obj, "metadata"), "finalizers");
  for (size_t i = 0; f && json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(f, i));
    if (s && strcmp(s, PO_FINALIZER) == 0) return true;
  }
  return false;
}

/* Gone with our finalizer still on it: not our release (that removes the finalizer first), but
 * kube-apiserver's race (kubernetes/kubernetes#77988: a DELETE that read the object before our
 * finalizer patch removes it after the patch succeeded), and the reconcile that made the patch
 * may have written its entry, or be about to. Remembered as released (no write adds an entry of
 * it any more) and every target holding one queued: their reconciles remove it as ours. */
static void override_vanished(po_App *app, const json_object *obj) {
  size_t n = 0;
  bool remembered;
  char *keys = po_TargetIndex_OverrideVanished(app->index, po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"),
                                               po_Json_Meta(obj, "uid"), &n, &remembered);
  if (!remembered || (!keys && n > 0)) {
    po_Log_Error(app->log, "out of memory: a PropertyOverride deleted with its finalizer on may leave its entry",
                 po_Str("name", po_Json_Meta(obj, "name")));
  }
  for (const char *p = keys; p && n > 0; n--, p += strlen(p) + 1) enqueue_now(app, p, kPo_AppEnqueue_OverrideDeleted);
  free(keys);
}

static void override_deleted(void *ctx, json_object *obj) {
  po_App *app = ctx;
  char old[600];
  if (has_our_finalizer(obj)) override_vanished(app, obj);
  po_TargetIndex_Remove(app->index, po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"), old, sizeof old);
  enqueue(app, old, kPo_AppEnqueue_OverrideDeleted);
  enqueue_related(app, old);
}

/* The homes of PropertyOverrides whose held entry a write of ours removed from this target, or
 * wrote back (po_TargetIndex_TakeHeldGone), now that the cache holds that write or a later version. */
static void enqueue_held_gone(po_App *app, const char *key, const char *rv) {
  size_t n = 0;
  char *homes = po_TargetIndex_TakeHeldGone(app->index, key, rv, &n);
  for (const char *p = homes; n > 0; n--, p += strlen(p) + 1) enqueue(app, p, kPo_AppEnqueue_HeldGone);
  free(homes);
}

/* Which PropertyOverrides the target holds an entry of (po_TargetIndex_NoteTargetEntries; obj
 * NULL: deleted, none): a deleted one's finalizer waits for every target holding one. Parsed for
 * every event not our own write (those the reconcile noted), the initial list's too: a restart or
 * a new leader learns what the targets hold there. Out of memory: said, the target holds every
 * release until a note of it succeeds (po_Holders_Unknown: after a restart nothing was known of
 * it), and it is reconciled (its reconcile notes its entries, or fails and is retried). */
static void note_entries(po_App *app, const char *key, const json_object *obj) {
  if (po_TargetIndex_NoteTargetEntries(app->index, key, obj)) return;
  po_Log_Error(app->log, "out of memory: the PropertyOverrides a target holds entries of are not indexed",
               po_Str("key", key));
  if (live(app)) enqueue_now(app, key, kPo_AppEnqueue_Target);
}

static void target_event(po_App *app, po_TargetKind kind, json_object *obj) {
  /* a target we created, now in the cache, or another object of its name (po_TargetIndex_ObjectMade) */
  po_TargetIndex_ObjectSeen(app->index, po_TargetKind_Name(kind), po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"),
                            po_Json_Meta(obj, "uid"));
  if (!po_TargetNames_Set(app->names, kind, po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"), true)) {
    po_Log_Error(app->log, "out of memory: a target is missing from the names index", po_Str("name", po_Json_Meta(obj, "name")));
  }
  char key[600];
  po_Reconcile_TargetKey(kind, po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"), key, sizeof key);
  /* Drift (someone rewrote the target, e.g. a GitOps apply without our entries) is repaired at
   * once, not a batching window later: every moment without our entries is one consul-k8s can
   * sync to the proxies. Our own writes come back here too: one whose content is exactly what the
   * reconcile wrote is not reconciled again (that reconcile did everything else there was to do;
   * it cost a parse of the whole target and a pass over all its PropertyOverrides, about one per
   * PropertyOverride in a burst). */
  enqueue_held_gone(app, key, po_Json_Meta(obj, "resourceVersion"));
  if (po_TargetIndex_IsOwnTargetWrite(app->index, key, obj)) {
    count(app->ignored[kPo_AppIgnored_OwnTargetWrite]);
    return;
  }
  note_entries(app, key, obj);
  if (live(app)) enqueue_now(app, key, kPo_AppEnqueue_Target);
}
/* The target key of a cache key. */
static void target_key_of(po_TargetKind kind, const char *cache_key, char key[600]) {
  char ns[254];
  const char *name = split_cache_key(cache_key, ns);
  po_Reconcile_TargetKey(kind, ns, name, key, 600);
}

/* A target's update known by its head (the informer's own_version, before any parse): our own
 * write's echo, by the uid and resourceVersion the write's answer carried. Nothing is queued for
 * it; the names index has the target already (only updates of cached keys are asked). */
static bool target_own_version(po_App *app, po_TargetKind kind, const char *cache_key, const po_InformerVersion *v) {
  char key[600];
  target_key_of(kind, cache_key, key);
  if (!po_TargetIndex_IsOwnTargetEcho(app->index, key, v->uid, v->rv)) return false;
  count(app->ignored[kPo_AppIgnored_OwnTargetWrite]);
  return true;
}
/* The echo cached (own_cached): what target_event does for an echo, without the tree, the
 * held-gone marks that waited for the cache to hold this version. Queued from own_version, before
 * the cache held it, a home's reconcile could read the version written over and say the held
 * generation still live, its mark spent (test_informer_own_version's own_cached). */
static void target_own_cached(po_App *app, po_TargetKind kind, const char *cache_key, const po_InformerVersion *v) {
  char key[600];
  target_key_of(kind, cache_key, key);
  enqueue_held_gone(app, key, v->rv);
}
static bool sd_own(void *ctx, const char *key, const po_InformerVersion *v) {
  return target_own_version(ctx, kPo_TargetKind_ServiceDefaults, key, v);
}
static bool pd_own(void *ctx, const char *key, const po_InformerVersion *v) {
  return target_own_version(ctx, kPo_TargetKind_ProxyDefaults, key, v);
}
static void sd_own_cached(void *ctx, const char *key, const po_InformerVersion *v) {
  target_own_cached(ctx, kPo_TargetKind_ServiceDefaults, key, v);
}
static void pd_own_cached(void *ctx, const char *key, const po_InformerVersion *v) {
  target_own_cached(ctx, kPo_TargetKind_ProxyDefaults, key, v);
}

/* A target deleted while PropertyOverrides point at it is theirs to re-create (and their statuses
 * must stop saying Programmed): queued at once, like drift. A target nobody points at reconciles
 * to nothing. */
static void target_gone(po_App *app, po_TargetKind kind, json_object *obj) {
  const char *ns = po_Json_Meta(obj, "namespace"), *name = po_Json_Meta(obj, "name");
  po_TargetIndex_ObjectSeen(app->index, po_TargetKind_Name(kind), ns, name, NULL); /* gone: not waited for */
  po_TargetNames_Set(app->names, kind, ns, name, false);
  char key[600];
  po_Reconcile_TargetKey(kind, ns, name, key, sizeof key);
  note_entries(app, key, NULL);
  enqueue_now(app, key, kPo_AppEnqueue_TargetDeleted);
  enqueue_held_gone(app, key, NULL);
  /* The targets of that name in other namespaces that waited for this one to go
   * (TargetInOtherNamespace: consul-k8s keeps one config entry per name) may be written now:
   * nothing else would reconcile them. Linear in the PropertyOverrides of this kind, once per
   * deletion of a target. */
  size_t n = 0, len = name ? strlen(name) : 0;
  char *links = len ? po_TargetIndex_LinksOfKind(app->index, kind, &n) : NULL;
  const char *p = links, *last = "";
  for (size_t i = 0; i < n; i++) {
    const char *k = p;
    p += strlen(p) + 1; /* the key, then "ns/name" */
    p += strlen(p) + 1;
    size_t kl = strlen(k);
    if (!strcmp(k, last) || !strcmp(k, key) || kl <= len + 1 || k[kl - len - 1] != '/' || strcmp(k + kl - len, name)) continue;
    last = k;
    enqueue_now(app, k, kPo_AppEnqueue_TargetDeleted);
  }
  free(links);
}
static void sd_add(void *ctx, json_object *o) { target_event(ctx, kPo_TargetKind_ServiceDefaults, o); }
static void sd_delete(void *ctx, json_object *o) { target_gone(ctx, kPo_TargetKind_ServiceDefaults, o); }
static void pd_delete(void *ctx, json_object *o) { target_gone(ctx, kPo_TargetKind_ProxyDefaults, o); }
static void sd_update(void *ctx, json_object *a, json_object *o) { (void)a; target_event(ctx, kPo_TargetKind_ServiceDefaults, o); }
static void pd_add(void *ctx, json_object *o) { target_event(ctx, kPo_TargetKind_ProxyDefaults, o); }
static void pd_update(void *ctx, json_object *a, json_object *o) { (void)a; target_event(ctx, kPo_TargetKind_ProxyDefaults, o); }

/* ---- Istio: a Service's selector and the EnvoyFilters ---- */

/* A Service's change (its selector: which pods its EnvoyFilters select) or deletion (ours go) is
 * reconciled at once, like a Consul target's drift. A Service without PropertyOverrides
 * reconciles to nothing. */
static void service_event(void *ctx, json_object *obj) {
  char key[600];
  po_Reconcile_TargetKey(kPo_TargetKind_Service, po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"), key, sizeof key);
  enqueue_now(ctx, key, kPo_AppEnqueue_MeshObject);
}
static void svc_update(void *ctx, json_object *a, json_object *o) { (void)a; service_event(ctx, o); }

typedef struct {
  po_App *app;
  const char *name;
} MeshOwner;

/* The PropertyOverride <po> of namespace ns a mesh object of ours is named after
 * (propertyoverride-<po>): its target reconciled. */
static void enqueue_owner(po_App *app, const char *ns, const char *po) {
  void *ref = NULL;
  po_CtlStatus st;
  const json_object *owner = app->table.get_override(app->table.ctx, ns, po, &ref, &st);
  if (!owner && st.code != kPo_Ctl_Ok) /* cached, not readable: its target is not known here */
    po_Log_Error(app->log, "the target of the PropertyOverride a mesh object is named after is not reconciled",
                 po_Str("error", st.message));
  if (owner) {
    char key[600];
    po_Reconcile_OverrideKey(owner, key, sizeof key);
    enqueue_now(app, key, kPo_AppEnqueue_MeshObject);
    if (app->table.release) app->table.release(app->table.ctx, ref);
  }
}

/* An EnvoyFilter named like ours: the target of the PropertyOverride it belongs to is
 * reconciled (drift repaired, a deleted one written again, a look-alike reported).
 * "propertyoverride-<name>": a Service target's, the PropertyOverride <name> of its namespace;
 * in Istio's root namespace also a Mesh one's of the name earlier versions used (the Mesh
 * targets holding a PropertyOverride <name>, of any namespace). "propertyoverride.<ns>.<name>"
 * (or its hashed form past 253 characters) in the root namespace: the Mesh target whose
 * PropertyOverride gets that name (po_Istio_MeshFilterName). The index's Mesh links are a few. */
static void filter_event(void *ctx, json_object *obj) {
  po_App *app = ctx;
  const char *ns = po_Json_Meta(obj, "namespace"), *name = po_Json_Meta(obj, "name");
  static const char kPrefix[] = "propertyoverride-", kMeshPrefix[] = "propertyoverride.";
  bool service_name = strncmp(name, kPrefix, sizeof kPrefix - 1) == 0;
  const char *po = name + sizeof kPrefix - 1;
  if (service_name) enqueue_owner(app, ns, po);
  if (strcmp(ns, app->target_options.istio_root_namespace) != 0) return;
  bool mesh_name = strncmp(name, kMeshPrefix, sizeof kMeshPrefix - 1) == 0;
  if (!service_name && !mesh_name) return;
  size_t n;
  char *block = po_TargetIndex_LinksOfKind(app->index, kPo_TargetKind_IstioMesh, &n);
  po_Arena *ar = mesh_name && block && n ? po_Arena_New() : NULL;
  const char *p = block;
  for (size_t i = 0; block && i < n; i++) {
    const char *k = p, *who = k + strlen(k) + 1, *slash = strchr(who, '/');
    p = who + strlen(who) + 1;
    if (!slash) continue;
    if (service_name && !strcmp(slash + 1, po)) enqueue_now(app, k, kPo_AppEnqueue_MeshObject);
    if (!ar) continue;
    char pns[254];
    snprintf(pns, sizeof pns, "%.*s", (int)(slash - who), who);
    const char *mine = po_Istio_MeshFilterName(pns, slash + 1, ar);
    if (mine && !strcmp(mine, name)) enqueue_now(app, k, kPo_AppEnqueue_MeshObject);
  }
  po_Arena_Free(ar);
  free(block);
}
/* Told to the index first: an object of ours created and not cached yet is waited for
 * (po_TargetIndex_ObjectMade) until an event says it is there, gone (uid NULL) or replaced. */
static void seen(void *ctx, const char *kind, json_object *obj, bool gone) {
  po_App *app = ctx;
  po_TargetIndex_ObjectSeen(app->index, kind, po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"),
                            gone ? NULL : po_Json_Meta(obj, "uid"));
}
static void ef_add(void *ctx, json_object *o) {
  seen(ctx, "EnvoyFilter", o, false);
  filter_event(ctx, o);
}
static void ef_update(void *ctx, json_object *a, json_object *o) { (void)a; ef_add(ctx, o); }
static void ef_gone(void *ctx, json_object *o) {
  seen(ctx, "EnvoyFilter", o, true);
  filter_event(ctx, o);
}

/* ---- Envoy Gateway: Gateways, HTTPRoutes and EnvoyPatchPolicies ---- */

static void gateway_key(void *ctx, const char *ns, const char *name) {
  char key[600];
  po_Reconcile_TargetKey(kPo_TargetKind_Gateway, ns, name, key, sizeof key);
  enqueue_now(ctx, key, kPo_AppEnqueue_MeshObject);
}
/* A Gateway's listeners name its xDS listeners and decide which routes attach; its deletion
 * deletes ours. A Gateway without PropertyOverrides reconciles to nothing. */
static void gateway_event(void *ctx, json_object *obj) {
  gateway_key(ctx, po_Json_Meta(obj, "namespace"), po_Json_Meta(obj, "name"));
}
static void gw_update(void *ctx, json_object *a, json_object *o) { (void)a; gateway_event(ctx, o); }
/* An HTTPRoute's rules name the clusters (httproute/<ns>/<route>/rule/<i>): every Gateway its
 * parentRefs name, before and after the change, is reconciled so the names stay right. */
static void route_event(void *ctx, json_object *obj) { po_EG_RouteParents(obj, gateway_key, ctx); }
static void route_update(void *ctx, json_object *old_obj, json_object *o) {
  if (old_obj) route_event(ctx, old_obj);
  route_event(ctx, o);
}
/* An EnvoyPatchPolicy: Envoy Gateway's status of ours (Programmed), drift, a deletion, a
 * look-alike: the target of the PropertyOverride it is named after. */
static void policy_event(void *ctx, json_object *obj) {
  static const char kPrefix[] = "propertyoverride-";
  const char *name = po_Json_Meta(obj, "name");
  if (!strncmp(name, kPrefix, sizeof kPrefix - 1)) enqueue_owner(ctx, po_Json_Meta(obj, "namespace"), name + sizeof kPrefix - 1);
}
static void epp_add(void *ctx, json_object *o) {
  seen(ctx, "EnvoyPatchPolicy", o, false);
  policy_event(ctx, o);
}
static void epp_update(void *ctx, json_object *a, json_object *o) { (void)a; epp_add(ctx, o); }
static void epp_gone(void *ctx, json_object *o) {
  seen(ctx, "EnvoyPatchPolicy", o, true);
  policy_event(ctx, o);
}

po_InformerHandlers po_App_Handlers(po_App *app, po_AppWatch what) {
  switch (what) {
    /* The targets' handlers never read the old object: the informer need not parse it for them
     * (a target is ~25 KB at 50 entries). The PropertyOverrides' handler reads only the old
     * generation and deletion, which the informer recorded: whether they changed decides if the
     * other side of a ProxyDefaults overlap is refreshed (overlap_input_changed); without them every
     * update looked like a new generation. */
    case kPo_AppWatch_Overrides:
      return (po_InformerHandlers){.on_add = override_added, .on_update_version = override_updated,
                                   .on_delete = override_deleted, .ctx = app, .own_version = override_own};
    case kPo_AppWatch_ServiceDefaults:
      return (po_InformerHandlers){.on_add = sd_add, .on_update = sd_update, .on_delete = sd_delete, .ctx = app, .no_old_object = true,
                                   .own_version = sd_own, .own_cached = sd_own_cached};
    case kPo_AppWatch_Services:
      return (po_InformerHandlers){.on_add = service_event, .on_update = svc_update, .on_delete = service_event, .ctx = app, .no_old_object = true};
    case kPo_AppWatch_Filters:
      return (po_InformerHandlers){.on_add = ef_add, .on_update = ef_update, .on_delete = ef_gone, .ctx = app, .no_old_object = true};
    case kPo_AppWatch_Gateways:
      return (po_InformerHandlers){.on_add = gateway_event, .on_update = gw_update, .on_delete = gateway_event, .ctx = app, .no_old_object = true};
    case kPo_AppWatch_Routes:
      return (po_InformerHandlers){.on_add = route_event, .on_update = route_update, .on_delete = route_event, .ctx = app};
    case kPo_AppWatch_Policies:
      return (po_InformerHandlers){.on_add = epp_add, .on_update = epp_update, .on_delete = epp_gone, .ctx = app, .no_old_object = true};
    case kPo_AppWatch_ProxyDefaults: break;
  }
  return (po_InformerHandlers){.on_add = pd_add, .on_update = pd_update, .on_delete = pd_delete, .ctx = app, .no_old_object = true,
                               .own_version = pd_own, .own_cached = pd_own_cached};
}

/* ---- at leadership everything the caches know is enqueued: keys are dropped while no
 * controller runs ---- */

typedef struct {
  po_App *app;
  po_TargetKind kind;
} EnqueueAll;

static void enqueue_cached(void *ctx, const char *key, const char *rv) {
  (void)rv;
  EnqueueAll *e = ctx;
  char ns[254] = "", k[600];
  const char *slash = strchr(key, '/'), *name = key; /* the cache's key: "namespace/name" */
  if (slash && (size_t)(slash - key) < sizeof ns) {
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    name = slash + 1;
  }
  po_Reconcile_TargetKey(e->kind, ns, name, k, sizeof k);
  enqueue_now(e->app, k, kPo_AppEnqueue_Leadership);
}

/* The targets, from their informers' keys, and every target a PropertyOverride names (current or
 * held: one the PropertyOverride re-creates may have no object), from the index the handlers kept:
 * nothing parsed (at 100,000 a parse of each cached PropertyOverride was 2.6 s of the start). */
void po_App_EnqueueAll(po_App *app) {
  for (size_t i = 0; i < app->io.ns_count; i++) {
    EnqueueAll sd = {app, kPo_TargetKind_ServiceDefaults}, pd = {app, kPo_TargetKind_ProxyDefaults};
    po_Informer_ForEachKey(app->io.service_defaults[i], enqueue_cached, &sd);
    po_Informer_ForEachKey(app->io.proxy_defaults[i], enqueue_cached, &pd);
  }
  size_t n = 0;
  char *keys = po_TargetIndex_TargetKeys(app->index, &n);
  if (!keys) {
    po_Log_Error(app->log, "out of memory: the PropertyOverrides' targets are not reconciled at the start");
    return;
  }
  for (const char *k = keys; n > 0; n--, k += strlen(k) + 1) enqueue_now(app, k, kPo_AppEnqueue_Leadership);
  free(keys);
}

/* ---- reconcile ---- */

po_Result po_App_Reconcile(void *ctx, const char *key, po_Logger *log) {
  po_App *app = ctx;
  /* Istio off (yet): its targets say MeshNotEnabled (no EnvoyFilter IO), as under --istio=off */
  po_ReconcileIO io = app->table;
  if (!atomic_load(&app->io.istio)) io.get_filter = NULL, io.write_filter = NULL;
  po_ReconcileResult r = po_Reconcile(&io, app->index, key);
  /* the keys of Consul targets (po_Reconcile_TargetKey) */
  if (!strncmp(key, "ServiceDefaults/", 16) || !strncmp(key, "ProxyDefaults/", 14))
    count(app->target_reads[r.digest_object ? 1 : r.from_digest ? 0 : 2]);
  if (r.ok && (r.targets_written || r.statuses_written)) {
    po_Log_Info(log, "reconciled", po_Int("targetWrites", r.targets_written), po_Int("statusWrites", r.statuses_written));
  }
  if (r.conflict) po_Log_Debug(log, "conflict; retrying", po_Str("error", r.error));
  return r.result;
}
