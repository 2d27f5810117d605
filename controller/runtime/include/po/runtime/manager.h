/* The manager: starts and stops every runnable of the process, follows leadership, and turns
 * SIGTERM/SIGINT into an orderly stop within a deadline.
 *
 *   Start            non-leader runnables, in registration order (informers, webhook, probes)
 *   BecameLeader     leader runnables (controllers), in registration order; gauge
 *                    leader_election_master_status{name=lease} = 1
 *   LostLeadership   leader runnables stopped at once, in reverse order; gauge = 0
 *   Stop             1. non-leader runnables marked stop_early (informers: watches stop),
 *                    2. leader runnables (controllers: workers drain in-flight keys),
 *                    3. the lease is released through the release callback (only if leading),
 *                    4. the other non-leader runnables (webhook and probe servers close);
 *                    each step in reverse registration order, all within stop_timeout
 *   Run              Start, wait for SIGTERM/SIGINT (or RequestStop), Stop; returns the exit code:
 *                    0 when everything stopped in time, 1 when a start failed, the deadline
 *                    passed or a second signal arrived.
 * Transitions are serialised; runnable callbacks must not call back into the manager (except
 * po_Manager_RequestStop, which is always safe, even from a signal handler). */
#ifndef PO_RUNTIME_MANAGER_H
#define PO_RUNTIME_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "po/runtime/log.h"
#include "po/runtime/metrics.h"
#include "po/runtime/runnable.h"
#include "po/runtime/status.h"

typedef struct {
  po_Logger *log;            /* NULL: no logs */
  po_Metrics *metrics;       /* NULL: no leader gauge */
  const char *lease_name;    /* label of leader_election_master_status; NULL: no gauge */
  int64_t stop_timeout_ns;   /* the whole orderly stop; 0: 30 s (controller-runtime's default) */
  /* Releases the lease after the leader runnables stopped (client-go's ReleaseOnCancel). */
  bool (*release_lease)(void *ctx, int64_t deadline);
  void *release_ctx;
  /* Run: when the deadline passes (or on a second signal), _exit(1) at once instead of returning
   * 1 with runnables still stopping. The CLI sets it; tests do not. */
  bool exit_process_on_timeout;
} po_ManagerOptions;

typedef struct po_Manager po_Manager;

po_Manager *po_Manager_New(const po_ManagerOptions *opts, po_CtlStatus *st);
/* Frees (Stop first if still running). */
void po_Manager_Free(po_Manager *m);

/* Before Start. The runnable is copied. */
bool po_Manager_Add(po_Manager *m, const po_Runnable *r, po_CtlStatus *st);

/* Starts the non-leader runnables; on a failure stops those already started (reverse order). */
bool po_Manager_Start(po_Manager *m, po_CtlStatus *st);
/* Leader election hooks (called by the lease elector's thread). BecameLeader returns false when a
 * leader runnable failed to start; the manager then also requests a stop (exit code 1). */
bool po_Manager_BecameLeader(po_Manager *m, po_CtlStatus *st);
void po_Manager_LostLeadership(po_Manager *m);
bool po_Manager_IsLeader(po_Manager *m);

/* The orderly stop (idempotent). true when everything stopped before the deadline. */
bool po_Manager_Stop(po_Manager *m);

/* Wakes Run as a signal would. Async-signal-safe. */
void po_Manager_RequestStop(po_Manager *m);

/* Installs SIGTERM/SIGINT handlers (restored before returning), Start, waits, Stop. Only one
 * manager may Run at a time in a process. Returns the exit code (see above). */
int po_Manager_Run(po_Manager *m);

#endif
