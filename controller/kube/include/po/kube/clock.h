/* Injectable time. All timing decisions in this module (rate limit, retry delays, watch
 * reconnects, lease expiry) go through a po_Clock so unit tests can drive them with a fake clock.
 * The token bucket, the backoff and the PRNG they use are the controller's one set, in
 * po/base/rate.h (included here for this module's users). */
#ifndef PO_KUBE_CLOCK_H
#define PO_KUBE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "po/base/rate.h"

typedef struct po_Clock {
  int64_t (*monotonic_ns)(void *ctx); /* never goes back; for intervals and deadlines */
  int64_t (*wall_ns)(void *ctx);      /* Unix time in ns; for timestamps written to objects */
  void (*sleep_ns)(void *ctx, int64_t ns);
  void *ctx;
} po_Clock;

/* CLOCK_MONOTONIC, CLOCK_REALTIME and nanosleep. Static, shared. */
const po_Clock *po_Clock_System(void);

#endif
