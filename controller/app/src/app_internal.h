/* The app's state, shared by its files: app.c builds and frees it, events.c feeds the workqueue
 * from the informers and reconciles, leadership.c follows the lease, renewal.c keeps
 * self-managed certificates fresh. One per po_App_New; nothing static. */
#ifndef PO_APP_INTERNAL_H
#define PO_APP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kube_io.h"
#include "po/app/app.h"
#include "po/kube/config.h"
#include "po/kube/lease.h"
#include "po/reconcile/reconcile.h"
#include "po/runtime/controller.h"
#include "po/runtime/manager.h"
#include "po/runtime/metrics.h"
#include "po/runtime/ops.h"
#include "po/targets/tenancy.h"
#include "po/webhook/server.h"
#include "selfcert.h"

/* periodic.c: `tick` every interval on a thread of its own, as a runnable (stop_early) whose
 * stop wakes the wait, joins the thread, then calls `after_stop` (may be NULL). A tick returning
 * false ends the thread (done). */
typedef struct {
  const char *name;
  int64_t interval_ns;
  bool (*tick)(void *ctx);
  void (*after_stop)(void *ctx);
  void *ctx;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  bool stopping, running;
  pthread_t thread;
} po_Periodic;
bool po_Periodic_Init(po_Periodic *p, const char *name, int64_t interval_ns, bool (*tick)(void *ctx),
                      void (*after_stop)(void *ctx), void *ctx);
void po_Periodic_Destroy(po_Periodic *p);
po_Runnable po_Periodic_Runnable(po_Periodic *p);
bool po_Periodic_Stopping(po_Periodic *p); /* a tick may end early */

/* Self-managed certificates: checked every interval (renewal.c). */
typedef struct {
  po_KubeClient *client;
  po_SelfCertOptions opt;
  po_Logger *log;
  po_Periodic every;
} po_Renewal;

/* --istio=auto while EnvoyFilters are not served: a thread the manager stops lists them every
 * interval; once they are, it makes and starts the Istio informers (it stops them too), turns
 * Istio on (po_KubeIO.istio) and enqueues the Istio targets (istio_detect.c). */
typedef struct {
  struct po_App *app;
  po_Periodic every;
  bool started;         /* the informers it made were started: stopped with it */
} po_IstioDetect;

/* The controller's workers, started once every cache has synced (start_gate.c): a thread waits
 * for them without a deadline, so a stop can wake it; workers tells whether it started them.
 * live (read by the informers' handlers without the lock) is set just before the start enqueues
 * every cached key: until then a handler's enqueue is one that start makes anyway. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cond;
  pthread_t thread;
  bool running, stopping, workers, ready;
  atomic_bool live;
  po_Series *m_wait, *m_started; /* propertyoverride_cache_sync_wait_seconds, _workers_start_time_seconds */
} po_StartGate;
bool po_StartGate_Init(po_StartGate *g, po_Metrics *metrics);
void po_StartGate_Destroy(po_StartGate *g);

/* Why a key was queued (propertyoverride_reconcile_enqueues_total{reason}), and why a watch event
 * was not (propertyoverride_watch_events_ignored_total{reason}): what a reconcile costs is
 * multiplied by how often it runs, and these say what made it run (events.c). */
typedef enum {
  kPo_AppEnqueue_Override,        /* a PropertyOverride added or changed (not our own write) */
  kPo_AppEnqueue_OverrideMoved,   /* the target it left, or the one holding its last valid generation */
  kPo_AppEnqueue_OverrideRelated, /* the other side of a ProxyDefaults (Mesh) overlap */
  kPo_AppEnqueue_OverrideDeleted,
  kPo_AppEnqueue_Target,          /* a target added or changed (not our own write) */
  kPo_AppEnqueue_TargetDeleted,   /* the target, and those of its name elsewhere that waited */
  kPo_AppEnqueue_MeshObject,      /* Services, EnvoyFilters, Gateways, HTTPRoutes, EnvoyPatchPolicies */
  kPo_AppEnqueue_Reconcile,       /* a reconcile's own request (po_ReconcileIO.enqueue) */
  kPo_AppEnqueue_HeldGone,        /* a held entry our write removed or wrote back, seen in the cache (po_TargetIndex_TakeHeldGone) */
  kPo_AppEnqueue_Leadership,      /* everything the caches hold, at leadership */
  kPo_AppEnqueue_Count
} po_AppEnqueue;
typedef enum {
  kPo_AppIgnored_OwnOverrideWrite, /* our finalizer or status write coming back */
  kPo_AppIgnored_OwnTargetWrite,   /* our target write coming back */
  kPo_AppIgnored_Unchanged,        /* a PropertyOverride update that changed nothing a reconcile reads */
  kPo_AppIgnored_OwnOverrideVersion, /* our finalizer write coming back, known by its version: not parsed */
  kPo_AppIgnored_Count
} po_AppIgnored;

/* Leading without an election: the manager is still inside Start when this runnable starts, so
 * BecameLeader is called from a thread of its own, joined by po_App_Free. */
typedef struct {
  struct po_App *app;
  pthread_t thread;
  bool running;
} po_LeadAlone;

struct po_App {
  po_AppOptions o;
  po_Logger *log;
  po_Metrics *metrics;
  po_KubeConfig *cfg;
  po_KubeIO io;
  po_Tenancy tenancy;
  po_SyncPolicy sync;
  po_TargetNames *names; /* which namespaces hold which target names (the informer handlers) */
  po_TargetOptions target_options; /* the mesh options (cluster domain, Istio release, root namespace) */
  po_ReconcileIO table;
  po_TargetIndex *index;
  po_Controller *controller;
  po_Manager *manager;
  po_LeaderElector *elector;
  po_WebhookServer *webhook;
  po_OpsServer *ops;
  po_MetricFamily *wh_requests, *wh_latency, *wh_mutations;
  po_Series *wh_inflight, *wh_budget, *wh_refusals; /* the webhook's memory budget */
  po_MetricFamily *istio_enabled; /* propertyoverride_istio_enabled */
  po_Series *enqueues[kPo_AppEnqueue_Count], *ignored[kPo_AppIgnored_Count];
  /* Consul targets' reconciles by what they read of the target: its digest, the digest and then
   * the object, or the object (propertyoverride_target_reads_total{from}) */
  po_Series *target_reads[3];
  po_IstioDetect istio_detect;
  bool istio_detect_ready;
  po_Renewal renewal;
  bool renewal_ready;
  po_LeadAlone alone;
  po_StartGate gate;
  char cert_path[4200], key_path[4200];
  char identity[300];
  long sync_timeout_ms;
  bool releasing;
};

/* releases.c: the release each mesh runs, into target_options.release. The configured ones,
 * checked against each mesh's table before anything is built (a release without a snapshot is
 * kPo_Ctl_Usage, naming those there are); then, after the Istio and Envoy Gateway checks (only a
 * mesh programmed is asked), the others read from the cluster where they can be; logged. */
bool po_App_CheckReleases(struct po_App *app, po_CtlStatus *st);
void po_App_MeshReleases(struct po_App *app);
/* Of the control-plane Services `items` (a List's items, label selector `selector`), the oldest
 * release of the mesh's table one is labelled with (app.kubernetes.io/version): a canary upgrade
 * has one Service per revision, and the oldest is the strictest for what every proxy accepts.
 * NULL when none is, `why` saying why (no Service, no label, a release without a snapshot).
 * `seen` gets each Service and its label ("istiod 1.30.2, istiod-1-31 1.31.0"), bounded. */
const po_MeshRelease *po_App_OldestRelease(po_Mesh mesh, struct json_object *items, const char *selector, char *why,
                                           size_t size, char *seen, size_t seen_size);

/* events.c */
typedef enum {
  kPo_AppWatch_Overrides,
  kPo_AppWatch_ServiceDefaults,
  kPo_AppWatch_ProxyDefaults,
  kPo_AppWatch_Services,
  kPo_AppWatch_Filters,
  kPo_AppWatch_Gateways,  /* Envoy Gateway: a Gateway's change reconciles it */
  kPo_AppWatch_Routes,    /* an HTTPRoute's change reconciles every Gateway its parentRefs name */
  kPo_AppWatch_Policies,  /* an EnvoyPatchPolicy's (Envoy Gateway's status) reconciles its Gateway */
} po_AppWatch;
po_InformerHandlers po_App_Handlers(struct po_App *app, po_AppWatch what);

/* app.c: how the informer of `what` keeps its texts (compress_text and its dictionary; the rest
 * of o untouched), one place for the app and for test_memory_per_override's count. */
void po_App_TextOptions(po_AppWatch what, po_InformerOptions *o);
/* Queues a target key as an informer event does (the batching window); app is the po_App. For
 * the reconcile's IO table (po_ReconcileIO.enqueue). */
void po_App_EnqueueKey(void *app, const char *key);
/* The series of both counters above, registered in app->metrics; false when out of memory. */
bool po_App_RegisterEnqueueMetrics(struct po_App *app);
po_Result po_App_Reconcile(void *ctx, const char *key, po_Logger *log);
po_Runnable po_App_ControllerRunnable(struct po_App *app);
/* Every cached PropertyOverride and target, enqueued at once (events.c): at the workers' start. */
void po_App_EnqueueAll(struct po_App *app);

/* leadership.c */
po_Runnable po_App_LeadershipRunnable(struct po_App *app);
bool po_App_ReleaseLease(void *ctx, int64_t deadline);
void po_App_LeaderCallbacks(struct po_App *app, po_LeaderElectionOptions *lo);
void po_App_JoinLeadAlone(struct po_App *app);

/* app.c: the Istio informers (Services and EnvoyFilters of every watched namespace, and the root
 * namespace's EnvoyFilters when it is not watched) made into app->io; with `manage` each is a
 * runnable of the manager, else their maker starts and stops them. */
bool po_App_NewIstioInformers(struct po_App *app, bool manage, po_CtlStatus *st);

/* istio_detect.c */
/* What the API server says of a kind: served; not served (404: discovery does not know its
 * group, version or resource); or it could not be told (the connection refused, a 5xx, a
 * timeout, a 403: after the client's own retries), which is no answer about the kind and must
 * never turn a mesh off. */
typedef enum { kPo_Served_Yes, kPo_Served_No, kPo_Served_Unknown } po_Served;
/* Whether the API server serves EnvoyFilters: one List of at most one item, in a watched
 * namespace (the permission the informer needs). Unless served, st says what it answered. */
po_Served po_App_IstioServed(struct po_App *app, po_CtlStatus *st);
/* The same for any kind (Envoy Gateway's EnvoyPatchPolicies: --envoy-gateway=auto). */
po_Served po_App_KindServed(struct po_App *app, po_KubeRef ref, po_CtlStatus *st);
bool po_IstioDetect_Init(po_IstioDetect *d, struct po_App *app, int64_t interval_ns);
void po_IstioDetect_Destroy(po_IstioDetect *d);
po_Runnable po_IstioDetect_Runnable(po_IstioDetect *d);

/* renewal.c */
bool po_Renewal_Init(po_Renewal *r, po_KubeClient *c, const po_SelfCertOptions *o, po_Logger *log, int64_t interval_ns);
void po_Renewal_Destroy(po_Renewal *r);
po_Runnable po_Renewal_Runnable(po_Renewal *r);

#endif
