/* The operations HTTP server (libmicrohttpd): /healthz (alias /livez), /readyz and /metrics.
 *
 * Health and readiness answer like Kubernetes' and controller-runtime's probes:
 *   GET /readyz            200 "ok"                         when every check passes
 *   GET /readyz?verbose    200 "[+]informers-synced ok\n...readyz check passed\n"
 *   failure (any form)     500 "[-]informers-synced failed: reason withheld\n...readyz check failed\n"
 *                          (with ?verbose the reason is shown instead of "reason withheld")
 *   ?exclude=NAME          skips a check ("[+]NAME excluded: ok")
 *   GET /readyz/NAME       that check alone: 200 "ok" or 500 "internal server error: reason\n"
 * /healthz always has the check "ping". /metrics serves the registry with content type
 * PO_METRICS_CONTENT_TYPE. */
#ifndef PO_RUNTIME_OPS_H
#define PO_RUNTIME_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "po/runtime/listen.h"
#include "po/runtime/log.h"
#include "po/runtime/metrics.h"
#include "po/runtime/runnable.h"
#include "po/runtime/status.h"



/* A check: true when healthy; otherwise false and a short reason in reason[cap]. Called from
 * the server's thread: it must be thread-safe and quick. */
typedef bool (*po_CheckFn)(void *ctx, char *reason, size_t cap);

typedef struct {
  const char *address;  /* see po/runtime/listen.h; NULL: ":8081" */
  po_Metrics *metrics;  /* NULL: /metrics answers 404 */
  po_Logger *log;       /* NULL: no logs */
} po_OpsOptions;

typedef struct po_OpsServer po_OpsServer;

po_OpsServer *po_OpsServer_New(const po_OpsOptions *opts, po_CtlStatus *st);
void po_OpsServer_Free(po_OpsServer *s);

/* Checks may be added before or after Start. Names: [A-Za-z0-9._-]+, unique per endpoint. */
bool po_OpsServer_AddReadyCheck(po_OpsServer *s, const char *name, po_CheckFn fn, void *ctx,
                                po_CtlStatus *st);
bool po_OpsServer_AddHealthCheck(po_OpsServer *s, const char *name, po_CheckFn fn, void *ctx,
                                 po_CtlStatus *st);

bool po_OpsServer_Start(po_OpsServer *s, po_CtlStatus *st);
/* The bound port (the picked one when the address said 0); 0 when not listening. */
int po_OpsServer_Port(const po_OpsServer *s);
void po_OpsServer_Stop(po_OpsServer *s);

/* The server as a manager runnable (needs_leader false). */
po_Runnable po_OpsServer_Runnable(po_OpsServer *s);

#endif
