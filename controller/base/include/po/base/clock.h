/* The controller's one clock: injectable time. Every timing decision (the client's rate limit
 * and retry delays, watch reconnects, lease expiry, the workqueue's delays, the manager's stop
 * deadline) reads a po_Clock, so tests drive them with a fake one. The runtime's po_RtClock adds
 * condition-variable waits on top and hands its time out as a po_Clock (po_RtClock_Source), so
 * one fake clock drives the client and the runtime alike. */
#ifndef PO_BASE_CLOCK_H
#define PO_BASE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct po_Clock {
  int64_t (*monotonic_ns)(void *ctx); /* never goes back; for intervals and deadlines */
  int64_t (*wall_ns)(void *ctx);      /* Unix time in ns; for timestamps written to objects */
  void (*sleep_ns)(void *ctx, int64_t ns);
  void *ctx;
} po_Clock;

/* CLOCK_MONOTONIC, CLOCK_REALTIME and nanosleep. Static, shared. */
const po_Clock *po_Clock_System(void);

#endif
