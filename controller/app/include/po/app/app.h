/* The controller process: the Kubernetes client, the informers and the reconciler (leader only),
 * the admission webhook (every replica), self-managed certificate renewal, probes and metrics,
 * and leader election, each a runnable that one po_Manager starts and stops.
 *
 *   po_App_New   builds everything and binds the servers; a failure here is a failure to start
 *                (bad kubeconfig, an address in use, unusable certificates)
 *   po_App_Run   the manager's Run: start, wait for SIGTERM/SIGINT, orderly stop; the exit code
 *   po_App_Free  frees what New built (after Run returned, or instead of it)
 *
 * Nothing is global: two apps may live in one process (tests), though only one may Run at a
 * time (the manager's signal handling). The options' strings are borrowed for the app's life. */
#ifndef PO_APP_APP_H
#define PO_APP_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "po/runtime/log.h"
#include "po/runtime/status.h"

enum { kPo_AppMaxNamespaces = 16, kPo_AppMaxSans = 16, kPo_AppMaxProxyDefaultsFrom = 64 };

typedef enum { kPo_CertMode_Files = 0, kPo_CertMode_SelfManaged = 1 } po_CertMode;
/* Programming Istio targets (Service, Mesh): auto (the default) when the API server serves
 * networking.istio.io/v1alpha3 EnvoyFilters (checked at start, then every istio_recheck_s until
 * it does: Istio installed later is picked up without a restart), on, or off. Only when enabled
 * are Services and EnvoyFilters watched; until then PropertyOverrides of Istio targets say
 * MeshNotEnabled. */
typedef enum { kPo_IstioMode_Auto = 0, kPo_IstioMode_On, kPo_IstioMode_Off } po_IstioMode;
/* The same three modes for Envoy Gateway targets (Gateway): auto (the default) when the API server
 * serves gateway.envoyproxy.io/v1alpha1 EnvoyPatchPolicies at start. Only when enabled are
 * Gateways, HTTPRoutes and EnvoyPatchPolicies watched. */
typedef po_IstioMode po_MeshEnableMode;

typedef struct {
  const char *kubeconfig, *context;         /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
  const char *namespaces[kPo_AppMaxNamespaces];
  size_t n_namespaces;                      /* 0: all namespaces */
  const char *proxydefaults_from[kPo_AppMaxProxyDefaultsFrom]; /* "*" for any */
  size_t n_proxydefaults_from;              /* 0: only the controller's own namespace */
  /* --allow-cross-namespace-from values (comma lists of namespaces, parsed by po_Tenancy_AllowCrossNamespace) */
  const char *cross_namespace_from[kPo_AppMaxProxyDefaultsFrom];
  size_t n_cross_namespace_from;            /* 0: nobody may name another namespace */
  int workers;
  /* A target's reconciles start at least this long apart (po_Controller_EnqueueSpaced): an
   * informer event on a quiet target queues it at once, later ones wait for the window after the
   * last start, so a burst on one target (N PropertyOverrides created in a row) is one reconcile
   * per window, not N. 0: every event at once. */
  double target_batch_window_s;
  /* Bursts (po_WorkqueueOptions.burst_*): an event less than target_burst_quiet_s after the one
   * before it (of any target) is in a burst, and its target's reconcile waits until the burst
   * pauses (then at once), at most target_burst_max_s (then not before its batching window
   * ends): a stream of creates over many targets, each seeing one every few seconds, is one
   * reconcile per target per target_burst_max_s, not one per create. The first event after a
   * pause waits for nothing. Either 0, or target_batch_window_s 0: no burst hold. */
  double target_burst_quiet_s;
  double target_burst_max_s;
  /* Programmed=True waits for consul-k8s's Synced status after our write (true, the default),
   * or means written (false: clusters without consul-k8s). */
  bool consul_sync_require;
  double consul_sync_timeout_s;             /* Pending longer than this: a Warning Event (0: never) */
  /* Consul namespaces with mirroring are on: the same target name in two Kubernetes namespaces
   * is two Consul config entries. Off (the default): a target is not created where one of its
   * name exists in another namespace. */
  bool consul_namespace_mirroring;
  po_IstioMode istio;
  po_MeshEnableMode envoy_gateway;
  double istio_recheck_s;                   /* auto, not served yet: checked again this often (60) */
  const char *cluster_domain;               /* Istio's service names (NULL: cluster.local) */
  int istio_minor;                          /* the Istio release 1.N (0: not configured: read from the cluster, else
                                             * assumed the newest listed, po_Istio_JudgedMinor) */
  /* The Consul and Envoy Gateway releases ("1.22", "v1.9.1"; NULL: not configured). With
   * istio_minor they choose the Envoy API snapshot each mesh's targets are judged by; not
   * configured, Istio's and Envoy Gateway's are read from the cluster at start, else each mesh's
   * default is taken (controller/app/src/releases.c). A release the mesh's table lacks fails the
   * start (kPo_Ctl_Usage). */
  const char *consul_version, *envoy_gateway_version;
  const char *istio_root_namespace;         /* Mesh targets' EnvoyFilters (NULL: istio-system) */
  double qps;
  int burst;
  bool kube_http2;                          /* HTTP/2 to the API server (po_KubeClientOptions.http2; false: HTTP/1.1) */
  long list_page_size;                      /* the informers' list pages (0: kPo_InformerPageSize; < 0: unpaginated) */

  const char *webhook_address;              /* "0": no webhook */
  bool webhook_insecure;                    /* plain HTTP (tests only) */
  /* What the webhook's requests in flight may hold together, bodies and decoding (bytes; 0:
   * kPo_WebhookMemoryBudgetMiB); beyond it they are answered 429 with Retry-After. */
  size_t webhook_memory_budget;
  po_CertMode cert_mode;
  const char *cert_file, *key_file;         /* kPo_CertMode_Files */
  const char *secret, *service, *webhook_config, *cert_dir; /* kPo_CertMode_SelfManaged */
  const char *sans[kPo_AppMaxSans];
  size_t n_sans;
  double renew_interval_s;                  /* self-managed: how often to check (0: 12 hours) */
  /* The API server's username for this controller (system:serviceaccount:NS:NAME): its writes
   * pass the mutating webhook unchanged. NULL: none exempt. */
  const char *controller_user;

  const char *probe_address;                /* "0": no /healthz, /readyz, /metrics */
  bool leader_elect;
  const char *lease_namespace;              /* NULL: the kubeconfig's namespace */
  const char *lease_name;
  double lease_s, renew_deadline_s, retry_period_s;
  double grace_s;                           /* the whole orderly stop */
  po_LogLevel log_level;
} po_AppOptions;

/* The defaults every flag documents (controller-runtime's where it has one). */
void po_AppOptions_Init(po_AppOptions *o);

typedef struct po_App po_App;

/* NULL and st filled when the process cannot start: the client's own code for the kubeconfig
 * and the client (kPo_Ctl_Config, kPo_Ctl_Io, ...), kPo_Ctl_Usage for the options,
 * kPo_Ctl_Start for a server or the certificates. */
po_App *po_App_New(const po_AppOptions *o, po_CtlStatus *st);
/* 0 after an orderly stop; 1 when a start failed, the stop did not finish in time or a second
 * signal arrived. */
int po_App_Run(po_App *app);
void po_App_Free(po_App *app);

#endif
