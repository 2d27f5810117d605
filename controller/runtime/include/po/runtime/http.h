/* The process's one HTTP server layer (libmicrohttpd, optionally GnuTLS), under the admission
 * webhook and the operations server: the listen address (po/runtime/listen.h), the daemon and its
 * limits, TLS with certificate reload, the request body, the refusals and the responses.
 *
 * Bounded against hostile or idle clients, the same way for every server:
 *   - at most max_connections connections (raised towards RLIMIT_NOFILE, else lowered to fit)
 *     and at most max_per_client from one client address;
 *   - each request has header_timeout seconds of allowed silence until it is complete (a
 *     keep-alive connection gets idle_timeout between requests), and request_timeout seconds
 *     from its headers to the end of its body, so a trickled body is cut too; the TLS
 *     handshake and headers of a request must be in within header_timeout + request_timeout
 *     of the connection's start (or of the previous request's end plus idle_timeout), so
 *     headers trickled a byte at a time are cut as well (the socket is shut down, 408 to
 *     `refused`);
 *   - a declared body over max_body is answered 413 before it is read (also under
 *     `Expect: 100-continue`); a chunked body is refused by closing the connection (its chunk
 *     framing can be trickled without delivering data, so no deadline could be checked);
 *   - a body must be in within 5 s plus 1 s per MiB declared (at most request_timeout): the
 *     API server sends it at once; past that it is cut (408, the connection closed);
 *   - with a memory budget (po/runtime/budget.h), a request reserves nothing before its body
 *     arrives, then what has arrived (64 KiB steps, with request_cost): a client that sends
 *     headers and then nothing, or a byte every few seconds, holds nothing of it. A large body
 *     (request_cost and body over budget/64) is reserved within the eighth of the budget that
 *     large bodies being read share (po_Budget_TryRead), its buffer an anonymous mapping whose
 *     pages become resident as it is written. Once the body is complete, decode_factor times it
 *     is reserved for the handler's work (which sets the exact cost, po_HttpRequest_Reserve:
 *     more, or some back); an estimate past the budget is cut to what the body leaves of it.
 *     A body that does not fit while it arrives is not kept and is answered 429 with
 *     `Retry-After: 1` once it is in; one whose body alone is larger than the whole budget
 *     413 before it is read; so the bytes held for requests never pass the budget, however many
 *     clients send at once; a reservation of 8 MiB or more hands its freed memory back to the
 *     system (malloc_trim) before it ends;
 *   - TLS 1.2/1.3, AEAD suites, ECDHE only; the certificate and key files are re-read when they
 *     change (checked at most once a second, at handshakes); a pair that fails to load keeps
 *     the previous one.
 * The handler runs once per request, with the whole body in memory, on one of the server's
 * threads: it must be thread-safe. */
#ifndef PO_RUNTIME_HTTP_H
#define PO_RUNTIME_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/runtime/budget.h"
#include "po/runtime/listen.h"
#include "po/runtime/log.h"
#include "po/runtime/runnable.h"
#include "po/runtime/status.h"

typedef struct po_HttpServer po_HttpServer;
/* One request; valid only during the handler's call. */
typedef struct po_HttpRequest po_HttpRequest;

/* Answers rq with one po_HttpRequest_Respond* call and returns its result; false closes the
 * connection without an answer. */
typedef bool (*po_HttpHandler)(void *ctx, po_HttpRequest *rq);

typedef struct {
  const char *name;      /* in messages and as the runnable's name; NULL: "http server" */
  const char *address;   /* po/runtime/listen.h; "0" disables the server (Start does nothing) */
  const char *cert_file; /* PEM chain; both NULL: plain HTTP */
  const char *key_file;  /* PEM private key */
  unsigned threads;          /* 0: the number of CPUs */
  unsigned max_connections;  /* 0: 4096 */
  unsigned max_per_client;   /* connections per client IP address; 0: 256 */
  unsigned header_timeout;   /* seconds of silence allowed until a request is complete; 0: 5 */
  unsigned request_timeout;  /* seconds from the headers to the end of the body; 0: 10 */
  unsigned idle_timeout;     /* seconds a keep-alive connection may idle between requests; 0: 30 */
  size_t max_body;           /* bytes; 0: 3 MiB */
  /* Borrowed; NULL: requests are bounded one by one (max_body) but not together. */
  po_Budget *budget;
  size_t request_cost; /* bytes reserved per request beside its body (buffers, answer); 0: 64 KiB */
  /* The handler's work on a body is estimated at this many times the body, reserved once the
   * body is complete, before the handler runs; the handler sets the exact figure with
   * po_HttpRequest_Reserve. 0: nothing beyond the body (the handler reserves its own). */
  unsigned decode_factor;
  po_HttpHandler handler;
  void *ctx;
  /* The refusals the layer answers itself (408 body deadline, 411 chunked, 413 too large, 429
   * over the budget), for metrics; may be NULL. seconds: since the request's headers. */
  void (*refused)(void *ctx, int http_status, double seconds);
  /* libmicrohttpd's messages (at most 5 a second, with a count of those dropped) and certificate
   * reload failures; borrowed; NULL: not logged. */
  po_Logger *log;
} po_HttpOptions;

/* Checks the options, parses the address and loads the certificate; nothing listens yet. NULL
 * with st filled: kPo_Ctl_Usage for a bad address or option (st names which), kPo_Ctl_System for
 * a certificate that does not load or too few file descriptors. */
po_HttpServer *po_HttpServer_New(const po_HttpOptions *opts, po_CtlStatus *st);
void po_HttpServer_Free(po_HttpServer *s); /* stops it first */

/* True when the address was "0": Start binds nothing. */
bool po_HttpServer_Disabled(const po_HttpServer *s);
bool po_HttpServer_Start(po_HttpServer *s, po_CtlStatus *st); /* a started server: true */
/* The bound port (the picked one when the address said 0); 0 when not listening. */
uint16_t po_HttpServer_Port(const po_HttpServer *s);
/* Returns once no handler runs any more; Start may be called again. */
void po_HttpServer_Stop(po_HttpServer *s);
/* Start and Stop as a manager runnable (needs_leader false: it serves on every replica). */
po_Runnable po_HttpServer_Runnable(po_HttpServer *s);

const char *po_HttpRequest_Method(const po_HttpRequest *rq);
const char *po_HttpRequest_Path(const po_HttpRequest *rq); /* without the query */
/* The body, NUL-terminated ("" when there was none); *len its length (may be NULL). */
const char *po_HttpRequest_Body(const po_HttpRequest *rq, size_t *len);
/* Whether the query has the argument ("?verbose" counts), or the argument with that value. */
bool po_HttpRequest_HasArg(const po_HttpRequest *rq, const char *key);
bool po_HttpRequest_HasArgValue(const po_HttpRequest *rq, const char *key, const char *value);
double po_HttpRequest_Seconds(const po_HttpRequest *rq); /* since the headers arrived */

/* Sets the handler's work on this request at n bytes, beside the body: gives back what the
 * estimate (decode_factor times the body) reserved beyond n, or reserves the rest on the
 * server's budget (all released when the answer is sent); the request's own reservation is its
 * own: alone on the server, it may grow to the whole budget. 0 when done (always, without a
 * budget), else the status to answer with: 413 when the request's whole reservation would be
 * over the whole budget (it can never be served), 429 when it does not fit now (answer with
 * po_HttpRequest_Busy). */
unsigned po_HttpRequest_Reserve(po_HttpRequest *rq, size_t n);
/* 429 Too Many Requests with `Retry-After: 1` and `text` (text/plain): what the layer answers
 * itself for a request over the budget. The Kubernetes API server's webhook client retries it
 * after that second, up to 10 times within the webhook's timeout (client-go's rest client). */
bool po_HttpRequest_Busy(po_HttpRequest *rq, const char *text);

/* The answer, copied. Every answer carries `X-Content-Type-Options: nosniff`. */
bool po_HttpRequest_Respond(po_HttpRequest *rq, unsigned status, const char *content_type,
                            const char *body, size_t len);
/* The answer in a malloc'd buffer, which this takes (and frees, also on failure). */
bool po_HttpRequest_RespondOwned(po_HttpRequest *rq, unsigned status, const char *content_type,
                                 char *body, size_t len);
/* text/plain; charset=utf-8. */
bool po_HttpRequest_Text(po_HttpRequest *rq, unsigned status, const char *text);

#endif
