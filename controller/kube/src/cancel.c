/* po_KubeCancel: a flag, a condition variable for sleeps, and the curl multi handle of the
 * watch in progress (woken with curl_multi_wakeup so a stop does not wait for the next poll). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "cancel_internal.h"

po_KubeCancel *po_KubeCancel_New(void) {
  po_KubeCancel *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->lock, NULL);
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&c->cond, &a);
  pthread_condattr_destroy(&a);
  return c;
}

void po_KubeCancel_Free(po_KubeCancel *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->lock);
  pthread_cond_destroy(&c->cond);
  free(c);
}

void po_KubeCancel_Fire(po_KubeCancel *c) {
  pthread_mutex_lock(&c->lock);
  atomic_store(&c->fired, true);
  if (c->multi) curl_multi_wakeup((CURLM *)c->multi);
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

bool po_KubeCancel_Fired(const po_KubeCancel *c) { return c && atomic_load(&c->fired); }

bool po_KubeCancel_Sleep(po_KubeCancel *c, int64_t ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (ns > 0 ? ns : 0);
  ts.tv_sec = (time_t)(end / 1000000000);
  ts.tv_nsec = (long)(end % 1000000000);
  pthread_mutex_lock(&c->lock);
  while (!atomic_load(&c->fired)) {
    if (pthread_cond_timedwait(&c->cond, &c->lock, &ts) != 0) break;
  }
  bool fired = atomic_load(&c->fired);
  pthread_mutex_unlock(&c->lock);
  return !fired;
}

void po_KubeCancel_SetMulti_(po_KubeCancel *c, void *multi) {
  if (!c) return;
  pthread_mutex_lock(&c->lock);
  c->multi = multi;
  pthread_mutex_unlock(&c->lock);
}
