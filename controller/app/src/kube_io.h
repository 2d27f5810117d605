/* The reconcile's IO table over the informers' caches (reads) and the REST client (writes). */
#ifndef PO_APP_KUBE_IO_H_
#define PO_APP_KUBE_IO_H_

#include <stdatomic.h>

#include "po/kube/client.h"
#include "po/kube/informer.h"
#include "po/reconcile/reconcile.h"
#include "po/runtime/metrics.h"
#include "po/app/app.h"
#include "po/targets/tenancy.h"
#include "recorder.h"

enum { kPo_MaxNamespaces = kPo_AppMaxNamespaces };

typedef struct {
  po_KubeClient *client;
  /* per watched namespace ("" = all namespaces, a single entry) */
  const char *namespaces[kPo_MaxNamespaces];
  size_t ns_count;
  po_Informer *overrides[kPo_MaxNamespaces];
  po_Informer *service_defaults[kPo_MaxNamespaces];
  po_Informer *proxy_defaults[kPo_MaxNamespaces];
  /* Istio (only when enabled: istio true): core Services (their selectors) and EnvoyFilters per
   * watched namespace, and the EnvoyFilters of Istio's root namespace when it is not watched
   * (root_filters, for Mesh targets). Under --istio=auto it may turn true while the reconciles
   * run (istio_later: istio_detect.c sets the informers first, then the flag, which every reader
   * loads before the informers: an atomic, release then acquire). */
  atomic_bool istio;
  bool istio_later;
  po_Informer *services[kPo_MaxNamespaces];
  po_Informer *filters[kPo_MaxNamespaces];
  po_Informer *root_filters;
  const char *root_ns;
  /* Envoy Gateway (only when enabled: eg true): Gateways, HTTPRoutes (their parentRefs and
   * rules: the cluster names) and EnvoyPatchPolicies (ours, with Envoy Gateway's status) per
   * watched namespace. */
  bool eg;
  po_Informer *gateways[kPo_MaxNamespaces];
  po_Informer *routes[kPo_MaxNamespaces];
  po_Informer *policies[kPo_MaxNamespaces];
  const po_Tenancy *tenancy;
  /* propertyoverride_foreign_markers_total{kind}: look-alikes reported, once per target revision */
  po_MetricFamily *foreign_markers;
  /* propertyoverride_writes_total{resource} and propertyoverride_last_write_time_seconds: what
   * the reconciles wrote and when they last did (the benchmark's settle signal) */
  po_MetricFamily *writes;
  po_Series *last_write;
  /* propertyoverride_target_patches_resent_total{outcome}: a target's JSON Patch refused as
   * Invalid, sent again whole over the same version, and what that said */
  po_MetricFamily *patches_resent;
  struct po_SeenRevisions *seen; /* which target revisions were reported already */
  po_EventRecorder *recorder;    /* Events, coalesced and posted off the reconcile's thread (the app's) */
} po_KubeIO;

/* Allocates what the table keeps between calls (the reported revisions); before the first use.
 * Free releases it (not the client or the informers, which the app owns). */
void po_KubeIO_Init(po_KubeIO *k);
void po_KubeIO_Free(po_KubeIO *k);
po_ReconcileIO po_KubeIO_Table(po_KubeIO *k);
/* Whether every informer has synced (the reconcile's gate and the readiness check). When not,
 * `reason` (may be NULL) says which namespace's caches are missing. */
bool po_KubeIO_Synced(po_KubeIO *k, char *reason, size_t cap);

/* The PropertyOverride informer's compression dictionary (override_dict.c): text shaped like a
 * PropertyOverride as the API server serves it. */
extern const char kPo_App_OverrideDictionary[];
extern const size_t kPo_App_OverrideDictionaryLen;
extern const po_KubeRef kPo_OverridesRef, kPo_ServiceDefaultsRef, kPo_ProxyDefaultsRef, kPo_ServicesRef, kPo_EnvoyFiltersRef;
extern const po_KubeRef kPo_GatewaysRef, kPo_HTTPRoutesRef, kPo_EnvoyPatchPoliciesRef;

#endif
