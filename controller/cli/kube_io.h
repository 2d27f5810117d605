/* The reconcile's IO table over the informers' caches (reads) and the REST client (writes). */
#ifndef PO_CLI_KUBE_IO_H_
#define PO_CLI_KUBE_IO_H_

#include "po/kube/client.h"
#include "po/kube/informer.h"
#include "po/reconcile/reconcile.h"

enum { kPo_MaxNamespaces = 16 };

typedef struct {
  po_KubeClient *client;
  /* per watched namespace ("" = all namespaces, a single entry) */
  const char *namespaces[kPo_MaxNamespaces];
  size_t ns_count;
  po_Informer *overrides[kPo_MaxNamespaces];
  po_Informer *service_defaults[kPo_MaxNamespaces];
  po_Informer *proxy_defaults[kPo_MaxNamespaces];
} po_KubeIO;

po_ReconcileIO po_KubeIO_Table(po_KubeIO *k);

extern const po_KubeRef kPo_OverridesRef, kPo_ServiceDefaultsRef, kPo_ProxyDefaultsRef;

#endif
