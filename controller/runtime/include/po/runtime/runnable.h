/* Something the manager starts and stops: informers, controllers (workers), the webhook server,
 * the operations server. */
#ifndef PO_RUNTIME_RUNNABLE_H
#define PO_RUNTIME_RUNNABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/runtime/status.h"

typedef struct {
  const char *name;  /* for logs and errors; copied by the manager */
  /* Starts the runnable's own threads and returns at once. false (and st filled) on failure. */
  bool (*start)(void *ctx, po_CtlStatus *st);
  /* Stops it: returns once it has stopped or when the monotonic clock reaches deadline
   * (absolute ns, as po_RtClock_Now(po_RtClock_Real())). Returns true when it stopped cleanly. */
  bool (*stop)(void *ctx, int64_t deadline);
  void *ctx;
  /* Runs only while this process holds the leader lease (controllers); the others (informers,
   * webhook, operations server) run on every replica. */
  bool needs_leader;
  /* Non-leader runnables only: stopped first, before the workers drain (informers: stop the
   * watches so nothing new arrives while in-flight work finishes). Servers (webhook, probes)
   * leave it false and keep serving until the very end of the stop. */
  bool stop_early;
} po_Runnable;

#endif
