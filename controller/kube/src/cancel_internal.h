#ifndef PO_KUBE_CANCEL_INTERNAL_H
#define PO_KUBE_CANCEL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "po/kube/client.h"

struct po_KubeCancel {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  atomic_bool fired;
  void *multi; /* CURLM * of the watch in progress, or NULL */
};

void po_KubeCancel_SetMulti_(po_KubeCancel *c, void *multi);

#endif
