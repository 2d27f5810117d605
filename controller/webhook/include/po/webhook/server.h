/* The webhook's HTTPS server, on the runtime's HTTP layer (po/runtime/http.h: libmicrohttpd +
 * GnuTLS): POST /validate takes AdmissionReview v1 (the validating decision, admission.h),
 * POST /mutate the mutating one (mutate.h), GET /healthz answers ok. Certificate and key are read from files and re-read when either file
 * changes (checked at most once a second, at handshakes), so rotated certificates (cert-manager,
 * Secret volume updates) are picked up without a restart; a file that fails to load keeps the
 * previous pair in use. TLS 1.2 and 1.3 only, AEAD suites with ECDHE. Each request gets its own
 * arena; a declared body over `max_body` is refused with 413 before it is read (also under
 * `Expect: 100-continue`), a chunked one by closing the connection; bodies and decoding in
 * flight together stay within `memory_budget` (429 with Retry-After beyond it). Safe to run beside the
 * controller: it reads nothing but its request. */
#ifndef PO_WEBHOOK_SERVER_H_
#define PO_WEBHOOK_SERVER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/targets/tenancy.h"
#include "po/webhook/mutate.h"

struct po_Logger; /* po/runtime/log.h */

/* The default memory budget of the requests in flight (po_WebhookOptions.memory_budget). With
 * the deployment's 256 MiB limit: the controller's steady state (61 MB at 10,000
 * PropertyOverrides, README "Performance") plus this plus the allocator's slack stays well
 * below it (docs/install.md, "Memory"). */
enum { kPo_WebhookMemoryBudgetMiB = 96 };
typedef struct po_WebhookServer po_WebhookServer;

typedef struct {
  const char *address;   /* po/runtime/listen.h: "HOST:PORT", "[V6]:PORT", ":PORT"; port 0 picks one */
  const char *cert_file; /* PEM; NULL with key_file NULL serves plain HTTP (tests only) */
  const char *key_file;
  size_t max_body;       /* 0: 3 MiB */
  /* What the requests in flight may hold together (po/runtime/budget.h): each reserves its
   * declared body before it is read, and what deciding it costs (po_Admission_Cost) before it is
   * decoded; one that does not fit now is answered 429 with Retry-After: 1 (the API server's
   * client retries it within the webhook's timeout), one larger than the whole budget 413.
   * 0: kPo_WebhookMemoryBudgetMiB MiB; at least 1 MiB. */
  size_t memory_budget;
  unsigned threads;      /* 0: number of CPUs */
  /* So that idle or slow clients cannot starve the API server (README.md, the webhook section): */
  unsigned max_connections;   /* 0: 4096 (lowered when RLIMIT_NOFILE cannot be raised for it) */
  unsigned max_per_client;    /* connections per client IP address; 0: 256 */
  /* libmicrohttpd's timeouts are of inactivity: a client that trickles its headers is held to
   * max_per_client rather than to these; a trickled body is cut by request_timeout. */
  unsigned handshake_timeout; /* seconds of silence allowed until the TLS handshake and the
                               * whole request (headers and body) are in; 0: 5 */
  unsigned request_timeout;   /* seconds from the headers to the end of the body; 0: 10 (the
                               * API server's own webhook timeout is at most 30, default 10) */
  unsigned idle_timeout;      /* seconds a connection may idle after a request (keep-alive); 0: 30 */
  /* Called once per request with its outcome, for metrics/logs; may be NULL. */
  void (*observe)(void *ctx, int http_status, bool allowed, double seconds);
  void *observe_ctx;
  const po_Tenancy *tenancy; /* who may target what (borrowed; NULL allows everything) */
  const po_TargetOptions *targets; /* the controller's mesh options (borrowed; NULL: the defaults) */
  po_MutateOptions mutate;   /* POST /mutate (desired NULL: every object passes unchanged) */
  /* Called with the budget's bytes in flight after each change (refusal false), and once per
   * refusal over it (refusal true, in_flight 0), for metrics; may be NULL. Called with the
   * budget's lock held. */
  void (*observe_budget)(void *ctx, size_t in_flight, bool refusal);
  /* Called once per /mutate answer with its outcome (mutate.h); may be NULL. */
  void (*observe_mutate)(void *ctx, const char *outcome);
  /* The HTTP layer's messages (refusals, dropped connections): the process's logger, so that
   * --log-level applies to them too (borrowed); NULL: a logger of the server's own at info. */
  struct po_Logger *log;
} po_WebhookOptions;

/* Starts serving; NULL with st saying why on failure. */
po_WebhookServer *po_WebhookServer_Start(const po_WebhookOptions *opt, po_CtlStatus *st);
uint16_t po_WebhookServer_Port(const po_WebhookServer *s);
size_t po_WebhookServer_MemoryBudget(const po_WebhookServer *s); /* bytes */
void po_WebhookServer_Stop(po_WebhookServer *s);

#endif
