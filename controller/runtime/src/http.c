/* The HTTP server layer (po/runtime/http.h): one libmicrohttpd daemon per server, its limits,
 * the request body and the responses. TLS credentials are http_tls.c's. */
#include "po/runtime/http.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_tls.h"

enum { kMaxLogsPerSecond = 5 };
/* Requests whose reservation reached this give their freed memory back to the system. */
static const size_t kTrimAbove = (size_t)8 << 20;
/* Declared bodies of this size or more are mapped (body_alloc). */
static const size_t kMapAbove = (size_t)256 << 10;
/* A body is reserved as it arrives, in steps of this (po_HttpRequest's charge_body). */
static const size_t kBodyStep = (size_t)64 << 10;
/* A body's deadline: this many seconds from its headers, plus one per MiB declared (the API
 * server sends a body at once; 2 s cut honest 2.9 MB bodies when 128 arrived at once on two
 * cores). */
enum { kBodySeconds = 5 };

struct po_HttpServer {
  po_HttpOptions opt;
  char name[64];
  char address[300];
  po_ListenAddr addr;
  unsigned limit; /* connections, as file descriptors allow */
  po_HttpTls *tls;
  struct MHD_Daemon *d;
  uint16_t port;
  pthread_mutex_t log_mu;
  time_t log_second; /* libmicrohttpd's messages: at most kMaxLogsPerSecond each second */
  unsigned log_count, log_dropped;
  /* Connections whose request has not begun (Conn, below), swept by `sweeper`. */
  pthread_mutex_t conn_mu;
  pthread_cond_t conn_cv;
  struct Conn *conns;
  bool sweeping, stop_sweeping;
  pthread_t sweeper;
};

/* libmicrohttpd's timeout is one of silence, so a client sending a byte of its headers (or of
 * its TLS handshake) every few seconds is never cut: 4,096 slots held by 16 addresses for hours
 * (slowloris). Each connection therefore has a deadline for its next request's headers: its
 * start (or the end of its previous request, plus idle_timeout) plus header_timeout and
 * request_timeout. A sweeper shuts down the socket of one past it (shutdown, not close: the
 * descriptor stays libmicrohttpd's, which sees the end of the stream and cleans up; it is
 * removed from the list before libmicrohttpd closes it, so a reused number is never hit). */
typedef struct Conn {
  int fd;
  bool begun; /* its request's headers are in: request_timeout (accumulate) takes over */
  bool cut;
  struct timespec deadline;
  struct Conn *prev, *next;
} Conn;

struct po_HttpRequest {
  po_HttpServer *s;
  struct MHD_Connection *c;
  const char *method, *url;
  char *buf;
  size_t len, cap;
  size_t declared; /* Content-Length (0: none) */
  size_t charged;  /* bytes reserved on the budget, released in `completed` */
  size_t reading;  /* of those, what po_Budget_TryRead reserved (a large body not complete yet) */
  size_t estimate; /* of those, what the handler's work was estimated at (decode_factor) */
  double deadline; /* seconds from the headers for the whole body (body_deadline) */
  bool too_big;
  bool answered; /* refused before its body: the rest of it is ignored */
  bool busy;     /* the body did not fit while it arrived: the rest is ignored, then 429 */
  bool mapped;   /* buf is an anonymous mapping of cap bytes (body_alloc), not malloc'd */
  struct timespec start;
};

/* --- connection deadlines (Conn) --------------------------------------------------------- */

static void deadline_in(po_HttpServer *s, Conn *k, unsigned extra) {
  clock_gettime(CLOCK_MONOTONIC, &k->deadline);
  k->deadline.tv_sec += (time_t)s->opt.header_timeout + (time_t)s->opt.request_timeout + (time_t)extra;
}

static Conn *conn_of(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci ? ci->socket_context : NULL;
}

/* A request's headers are in (begun) or it is complete (the next one's deadline starts). */
static void conn_mark(po_HttpServer *s, struct MHD_Connection *c, bool begun) {
  pthread_mutex_lock(&s->conn_mu);
  Conn *k = conn_of(c);
  if (k) {
    k->begun = begun;
    if (!begun) deadline_in(s, k, s->opt.idle_timeout);
  }
  pthread_mutex_unlock(&s->conn_mu);
}

static void *sweep(void *arg) {
  po_HttpServer *s = arg;
  pthread_mutex_lock(&s->conn_mu);
  while (!s->stop_sweeping) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t); /* pthread_cond_timedwait's default clock */
    t.tv_nsec += 250 * 1000 * 1000;
    if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&s->conn_cv, &s->conn_mu, &t);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned cut = 0;
    for (Conn *k = s->conns; k; k = k->next) {
      if (k->begun || k->cut || now.tv_sec < k->deadline.tv_sec ||
          (now.tv_sec == k->deadline.tv_sec && now.tv_nsec < k->deadline.tv_nsec))
        continue;
      shutdown(k->fd, SHUT_RDWR);
      k->cut = true;
      cut++;
    }
    if (cut && s->opt.refused) {
      pthread_mutex_unlock(&s->conn_mu);
      double late = (double)s->opt.header_timeout + (double)s->opt.request_timeout;
      for (unsigned i = 0; i < cut; i++) s->opt.refused(s->opt.ctx, 408, late);
      pthread_mutex_lock(&s->conn_mu);
    }
  }
  pthread_mutex_unlock(&s->conn_mu);
  return NULL;
}

/* --- responses ---------------------------------------------------------------------------- */

static bool queue(po_HttpRequest *rq, unsigned status, const char *type, char *body, size_t len,
                  enum MHD_ResponseMemoryMode mode) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
  if (!r) {
    if (mode == MHD_RESPMEM_MUST_FREE) free(body);
    return false;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  enum MHD_Result ret = MHD_queue_response(rq->c, status, r);
  MHD_destroy_response(r);
  return ret == MHD_YES;
}

bool po_HttpRequest_Respond(po_HttpRequest *rq, unsigned status, const char *content_type,
                            const char *body, size_t len) {
  return queue(rq, status, content_type, (char *)(body ? body : ""), body ? len : 0,
               MHD_RESPMEM_MUST_COPY);
}

bool po_HttpRequest_RespondOwned(po_HttpRequest *rq, unsigned status, const char *content_type,
                                 char *body, size_t len) {
  if (!body) return po_HttpRequest_Respond(rq, status, content_type, "", 0);
  return queue(rq, status, content_type, body, len, MHD_RESPMEM_MUST_FREE);
}

bool po_HttpRequest_Text(po_HttpRequest *rq, unsigned status, const char *text) {
  return po_HttpRequest_Respond(rq, status, "text/plain; charset=utf-8", text, strlen(text));
}

bool po_HttpRequest_Busy(po_HttpRequest *rq, const char *text) {
  struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
  if (!r) return false;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  /* Whole seconds: client-go reads Retry-After with Atoi and retries only when it parses. */
  MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  enum MHD_Result ret = MHD_queue_response(rq->c, MHD_HTTP_TOO_MANY_REQUESTS, r);
  MHD_destroy_response(r);
  return ret == MHD_YES;
}

/* --- the request --------------------------------------------------------------------------- */

const char *po_HttpRequest_Method(const po_HttpRequest *rq) { return rq->method; }
const char *po_HttpRequest_Path(const po_HttpRequest *rq) { return rq->url; }

const char *po_HttpRequest_Body(const po_HttpRequest *rq, size_t *len) {
  if (len) *len = rq->len;
  return rq->buf ? rq->buf : "";
}

double po_HttpRequest_Seconds(const po_HttpRequest *rq) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - rq->start.tv_sec) + (double)(t1.tv_nsec - rq->start.tv_nsec) / 1e9;
}

typedef struct {
  const char *key, *value; /* value NULL: any */
  bool found;
} ArgQuery;

static enum MHD_Result find_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value) {
  (void)kind;
  ArgQuery *q = cls;
  if (strcmp(key, q->key) != 0) return MHD_YES;
  if (q->value && (!value || strcmp(value, q->value) != 0)) return MHD_YES;
  q->found = true;
  return MHD_NO;
}

/* "?verbose" has no value, so MHD_lookup_connection_value cannot tell it from absence. */
bool po_HttpRequest_HasArg(const po_HttpRequest *rq, const char *key) {
  ArgQuery q = {key, NULL, false};
  MHD_get_connection_values(rq->c, MHD_GET_ARGUMENT_KIND, find_arg, &q);
  return q.found;
}

bool po_HttpRequest_HasArgValue(const po_HttpRequest *rq, const char *key, const char *value) {
  ArgQuery q = {key, value, false};
  MHD_get_connection_values(rq->c, MHD_GET_ARGUMENT_KIND, find_arg, &q);
  return q.found;
}

/* --- body accumulation and refusals -------------------------------------------------------- */

static void refused(po_HttpServer *s, po_HttpRequest *rq, int status) {
  if (s->opt.refused) s->opt.refused(s->opt.ctx, status, po_HttpRequest_Seconds(rq));
}

static enum MHD_Result too_large(po_HttpServer *s, po_HttpRequest *rq) {
  char msg[128];
  snprintf(msg, sizeof msg, "request body over %zu bytes\n", s->opt.max_body);
  refused(s, rq, 413);
  return po_HttpRequest_Respond(rq, 413, "text/plain", msg, strlen(msg)) ? MHD_YES : MHD_NO;
}

/* Adds n bytes to the request's reservation: 0, 413 or 429 (po_HttpRequest_Reserve). */
static unsigned reserve(po_HttpServer *s, po_HttpRequest *rq, size_t n) {
  po_Budget *b = s->opt.budget;
  if (!b || n == 0) return 0;
  if (n > po_Budget_Bytes(b) || rq->charged > po_Budget_Bytes(b) - n) return 413;
  if (!po_Budget_TryGrow(b, rq->charged, n)) return 429;
  rq->charged += n;
  return 0;
}

unsigned po_HttpRequest_Reserve(po_HttpRequest *rq, size_t n) {
  po_HttpServer *s = rq->s;
  if (!s->opt.budget) return 0;
  if (n <= rq->estimate) { /* the estimate was enough: the rest goes back */
    po_Budget_Release(s->opt.budget, rq->estimate - n);
    rq->charged -= rq->estimate - n;
    rq->estimate = n;
    return 0;
  }
  unsigned over = reserve(s, rq, n - rq->estimate);
  if (!over) rq->estimate = n;
  return over;
}

static enum MHD_Result over_budget(po_HttpServer *s, po_HttpRequest *rq, unsigned status) {
  char msg[200];
  refused(s, rq, (int)status);
  if (status == 413) {
    snprintf(msg, sizeof msg, "request of %zu bytes over the whole memory budget of this server (%zu bytes)\n",
             rq->declared, po_Budget_Bytes(s->opt.budget));
    return po_HttpRequest_Respond(rq, 413, "text/plain", msg, strlen(msg)) ? MHD_YES : MHD_NO;
  }
  snprintf(msg, sizeof msg, "%s: the requests in flight hold its memory budget; retry in a second\n", s->name);
  return po_HttpRequest_Busy(rq, msg) ? MHD_YES : MHD_NO;
}

/* The request's headers are in. */
static enum MHD_Result begin(po_HttpServer *s, struct MHD_Connection *c, void **ctx) {
  po_HttpRequest *rq = calloc(1, sizeof *rq);
  if (!rq) return MHD_NO;
  rq->c = c;
  rq->s = s;
  clock_gettime(CLOCK_MONOTONIC, &rq->start);
  *ctx = rq;
  conn_mark(s, c, true);
  /* Each request has the short timeout until it is complete (a keep-alive connection had the
   * long one since its previous request). */
  MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->opt.header_timeout);
  /* Kubernetes' clients always send a Content-Length. A chunked body is refused: its chunk
   * sizes, extensions and trailers can be trickled without delivering data, so no deadline on
   * the body could be checked. */
  const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
  if (te && strcasecmp(te, "identity") != 0) {
    /* MHD cannot answer before such a body is read, so the connection is closed. */
    refused(s, rq, 411);
    return MHD_NO;
  }
  /* A declared body over the limit is refused before it is read, and before MHD would answer
   * `Expect: 100-continue` with 100 (it does not once a response is queued). */
  const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (cl) {
    char *end = NULL;
    unsigned long long n = strtoull(cl, &end, 10);
    if (end != cl && n > s->opt.max_body) {
      rq->too_big = true;
      return too_large(s, rq);
    }
    if (end != cl) rq->declared = (size_t)n;
  }
  /* Nothing is reserved before a byte of the body is here: a client that sends headers and
   * then nothing (or a byte every few seconds) must not hold the budget (80 such connections
   * held all of it, and every review was 429). The body is reserved as it arrives
   * (charge_body), within half the budget for all bodies being read, and the handler's work
   * once it is complete. Only a request that can never fit is refused now. */
  size_t own = s->opt.request_cost + rq->declared + 1;
  if (s->opt.budget && own > po_Budget_Bytes(s->opt.budget)) {
    rq->answered = true; /* whatever of the body still comes is not kept */
    return over_budget(s, rq, 413);
  }
  /* The API server sends a body at once: a body gets kBodySeconds plus one second per MiB,
   * within request_timeout, and is cut (408) past that, its reservation freed. */
  rq->deadline = (double)kBodySeconds + (double)rq->declared / (double)(1u << 20);
  if (rq->deadline > (double)s->opt.request_timeout) rq->deadline = (double)s->opt.request_timeout;
  return MHD_YES;
}

/* A large declared body's buffer is an anonymous mapping of its whole length: no copy as it
 * grows, and its pages become resident only as the body is written into them, which is what
 * charge_body reserves (in kBodyStep steps); unmapped, they are the system's again at once. A
 * malloc'd one could come from an arena's already resident memory, and stay in it once freed
 * (8 threads' arenas held 158 MiB under a 96 MiB budget). Others are malloc'd, doubling. */
static bool body_alloc(po_HttpRequest *rq, size_t cap) {
  if (!rq->buf && rq->declared + 1 >= kMapAbove && cap == rq->declared + 1) {
    void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return false;
    rq->buf = m;
    rq->mapped = true;
    /* pages as written: a huge page would make a few bytes hold 2 MiB (THP "always") */
    (void)madvise(m, cap, MADV_NOHUGEPAGE);
  } else {
    char *nb = realloc(rq->buf, cap);
    if (!nb) return false;
    rq->buf = nb;
  }
  rq->cap = cap;
  return true;
}

static void body_free(po_HttpRequest *rq) {
  if (rq->mapped) munmap(rq->buf, rq->cap);
  else free(rq->buf);
  rq->buf = NULL;
  rq->cap = 0;
  rq->mapped = false;
}

/* Reserves n more bytes for the body being read: a small request (its whole body within
 * budget/64) as any small reservation, a large one within the eighth of the budget that large
 * bodies being read share (po_Budget_TryRead). False: it does not fit now. */
static bool charge_body(po_HttpServer *s, po_HttpRequest *rq, size_t n) {
  po_Budget *b = s->opt.budget;
  if (!b || n == 0) return true;
  size_t all = po_Budget_Bytes(b);
  if (s->opt.request_cost + rq->declared + 1 <= all / 64) {
    if (reserve(s, rq, n)) return false;
    return true;
  }
  if (!po_Budget_TryRead(b, n)) return false;
  rq->charged += n;
  rq->reading += n;
  return true;
}

/* Gives back n bytes the body no longer holds (its buffer before it grew). */
static void uncharge_body(po_HttpServer *s, po_HttpRequest *rq, size_t n) {
  po_Budget *b = s->opt.budget;
  if (!b || n == 0) return;
  size_t r = n < rq->reading ? n : rq->reading;
  if (r) po_Budget_ReadDone(b, r);
  rq->reading -= r;
  po_Budget_Release(b, n);
  rq->charged -= n;
}

/* The body is complete (or the request ends): its reservation is no longer a body being read. */
static void done_reading(po_HttpServer *s, po_HttpRequest *rq) {
  if (!rq->reading) return;
  po_Budget_ReadDone(s->opt.budget, rq->reading);
  rq->reading = 0;
}

/* Part of the body. Bounded: at most max_body bytes are kept, doubling from 16 KiB. */
static enum MHD_Result accumulate(po_HttpServer *s, po_HttpRequest *rq, const char *data, size_t *size) {
  /* The whole request within request_timeout of its headers: a client trickling its body byte
   * by byte is never silent long enough for the inactivity timeout. */
  if (po_HttpRequest_Seconds(rq) > rq->deadline) {
    refused(s, rq, 408);
    return MHD_NO;
  }
  if (rq->len + *size > s->opt.max_body) {
    /* Only a body without a declared length gets here (a declared one is refused in begin);
     * MHD cannot answer while a body is being read, so the connection is closed rather than
     * the rest read. */
    rq->too_big = true;
    refused(s, rq, 413);
    return MHD_NO;
  }
  /* What has arrived is reserved (kBodyStep steps, with request_cost), not what was declared;
   * the buffer follows (body_alloc). One that does not fit now is not kept; it is answered 429
   * once it is in (an answer cannot be sent while a body is being read). */
  size_t need = rq->len + *size + 1;
  if (!rq->too_big && !rq->busy) {
    size_t whole = s->opt.request_cost + rq->declared + 1;
    size_t want = s->opt.request_cost + (need + kBodyStep - 1) / kBodyStep * kBodyStep;
    if (rq->declared + 1 >= need && want > whole) want = whole;
    size_t cap = rq->cap;
    if (need > cap) {
      if (rq->declared + 1 >= need && rq->declared + 1 >= kMapAbove) {
        cap = rq->declared + 1;
      } else {
        cap = cap ? cap * 2 : kBodyStep;
        while (cap < need) cap *= 2;
        if (rq->declared + 1 >= need && cap > rq->declared + 1) cap = rq->declared + 1;
      }
      /* malloc'd: the whole new buffer is reserved (and the old one while it is copied) */
      if (!(rq->declared + 1 >= kMapAbove && cap == rq->declared + 1) && want < s->opt.request_cost + cap + rq->cap)
        want = s->opt.request_cost + cap + rq->cap;
    }
    if (want > rq->charged && !charge_body(s, rq, want - rq->charged)) {
      rq->busy = true;
      body_free(rq);
      uncharge_body(s, rq, rq->charged);
    } else if (cap > rq->cap) {
      size_t old = rq->mapped ? 0 : rq->cap;
      if (!body_alloc(rq, cap)) return MHD_NO;
      if (old && rq->charged > s->opt.request_cost + cap) uncharge_body(s, rq, old);
    }
  }
  if (!rq->too_big && !rq->busy) {
    memcpy(rq->buf + rq->len, data, *size);
    rq->buf[rq->len + *size] = '\0';
  }
  rq->len += *size;
  *size = 0;
  return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *data_size, void **ctx) {
  (void)version;
  po_HttpServer *s = cls;
  po_HttpRequest *rq = *ctx;
  if (!rq) return begin(s, c, ctx);
  if (rq->answered) {
    *data_size = 0;
    return MHD_YES;
  }
  if (*data_size) return accumulate(s, rq, data, data_size);
  /* The request is complete: from now on the connection may idle as long as keep-alive allows.
   * Until here (handshake, headers and body) it had the short timeout. */
  MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->opt.idle_timeout);
  if (rq->too_big) return too_large(s, rq);
  done_reading(s, rq);
  if (rq->busy) return over_budget(s, rq, 429);
  /* The body is complete: reserved now are its bytes and request_cost (a request without a body
   * reserves request_cost here), and the handler's work is estimated at decode_factor times the
   * body (cut to what is left of the budget; the handler sets the exact figure). Decoding may
   * use the whole budget. */
  if (s->opt.budget) {
    size_t all = po_Budget_Bytes(s->opt.budget);
    size_t own = s->opt.request_cost + rq->len + 1;
    size_t f = s->opt.decode_factor;
    size_t estimate = f && rq->len > SIZE_MAX / f ? SIZE_MAX : rq->len * f;
    if (own > all) own = all;
    if (estimate > all - own) estimate = all - own;
    size_t more = own > rq->charged ? own - rq->charged : 0;
    unsigned over = reserve(s, rq, more + estimate);
    if (over) return over_budget(s, rq, over);
    rq->estimate = estimate;
  }
  rq->method = method;
  rq->url = url;
  return s->opt.handler(s->opt.ctx, rq) ? MHD_YES : MHD_NO;
}

static void completed(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode code) {
  (void)code;
  po_HttpRequest *rq = *ctx;
  if (rq) {
    po_HttpServer *s = cls;
    conn_mark(s, c, false);
    done_reading(s, rq);
    body_free(rq);
    if (rq->charged) {
      /* glibc keeps what a thread freed in that thread's arena: after large requests on each of
       * the server's threads, the process would hold each one's high-water mark (261 MiB under
       * a 96 MiB budget with eight threads: tests/webhook/test_webhook_load). A large one's
       * memory is handed back to the system before its reservation is, so resident memory
       * follows the budget. So is a large body's request's, decoded or not: with bodies read
       * beside decodes, the arenas otherwise kept 30 MiB past the budget now and then. */
#ifdef __GLIBC__
      if (rq->charged >= kTrimAbove || rq->declared >= kMapAbove) malloc_trim(0);
#endif
      po_Budget_Release(s->opt.budget, rq->charged);
    }
    free(rq);
  }
  *ctx = NULL;
}

/* --- libmicrohttpd's messages and TLS sessions ---------------------------------------------- */

/* libmicrohttpd's own messages (a client over its limit, a failed handshake) arrive once per
 * connection: under a flood of connections, logging each would be a second flood. A few a
 * second are kept, and how many were dropped is said with the next one kept. */
static void mhd_log(void *cls, const char *fmt, va_list ap) {
  po_HttpServer *s = cls;
  if (!s->opt.log) return;
  time_t now = time(NULL);
  pthread_mutex_lock(&s->log_mu);
  if (now != s->log_second) {
    s->log_second = now;
    s->log_count = 0;
  }
  bool keep = s->log_count < kMaxLogsPerSecond;
  unsigned dropped = 0;
  if (keep) {
    s->log_count++;
    dropped = s->log_dropped;
    s->log_dropped = 0;
  } else {
    s->log_dropped++;
  }
  pthread_mutex_unlock(&s->log_mu);
  if (!keep) return;
  char msg[256];
  vsnprintf(msg, sizeof msg, fmt, ap);
  size_t k = strlen(msg);
  while (k > 0 && (msg[k - 1] == '\n' || msg[k - 1] == '.')) msg[--k] = '\0'; /* "...\.\n" */
  po_Log_Info(s->opt.log, msg, po_Str("server", s->name), po_Int("dropped", dropped));
}

/* MHD hands us the session before the handshake: bind it to this server's credentials. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code) {
  po_HttpServer *s = cls;
  if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    Conn *k = *socket_ctx;
    pthread_mutex_lock(&s->conn_mu);
    if (k && k->prev) k->prev->next = k->next;
    else if (k) s->conns = k->next;
    if (k && k->next) k->next->prev = k->prev;
    pthread_mutex_unlock(&s->conn_mu);
    free(k);
    *socket_ctx = NULL;
    return;
  }
  if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
  const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  Conn *k = fi ? calloc(1, sizeof *k) : NULL;
  if (k) { /* without memory for it, the connection has libmicrohttpd's timeout alone */
    k->fd = fi->connect_fd;
    deadline_in(s, k, 0);
    pthread_mutex_lock(&s->conn_mu);
    k->next = s->conns;
    if (s->conns) s->conns->prev = k;
    s->conns = k;
    pthread_mutex_unlock(&s->conn_mu);
    *socket_ctx = k;
  }
  if (!s->tls) return;
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (ci && ci->tls_session) po_HttpTls_Attach(s->tls, (gnutls_session_t)ci->tls_session);
}

/* --- lifecycle ----------------------------------------------------------------------------- */

/* The connection limit that file descriptors allow: the soft RLIMIT_NOFILE is raised towards the
 * hard one when `want` (plus room for the rest of the process) needs it, else `want` is lowered.
 * 0 when not even a few connections fit. */
static unsigned connection_limit(unsigned want) {
  enum { kReserve = 256 }; /* informers, the API client, logs, certificate files, other servers */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return want;
  rlim_t need = (rlim_t)want + kReserve;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    struct rlimit up = rl;
    up.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &up) == 0) rl = up;
  }
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need) return want;
  return rl.rlim_cur > 2 * kReserve ? (unsigned)(rl.rlim_cur - kReserve) : 0;
}

po_HttpServer *po_HttpServer_New(const po_HttpOptions *opts, po_CtlStatus *st) {
  const char *name = opts && opts->name ? opts->name : "http server";
  if (!opts || !opts->address || !opts->handler)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "%s: an address and a handler are required", name), NULL;
  if (!opts->cert_file != !opts->key_file)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "both a certificate and a key file are needed for TLS"), NULL;
  po_HttpServer *s = calloc(1, sizeof *s);
  if (!s) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "%s: out of memory", name), NULL;
  pthread_mutex_init(&s->log_mu, NULL);
  pthread_mutex_init(&s->conn_mu, NULL);
  pthread_cond_init(&s->conn_cv, NULL);
  s->opt = *opts;
  snprintf(s->name, sizeof s->name, "%s", name);
  snprintf(s->address, sizeof s->address, "%s", opts->address);
  s->opt.name = s->name;
  s->opt.address = s->address;
  s->opt.cert_file = s->opt.key_file = NULL; /* http_tls keeps its own copies */
  if (!s->opt.max_body) s->opt.max_body = 3u << 20;
  if (!s->opt.request_cost) s->opt.request_cost = 64u << 10;
  if (!s->opt.max_connections) s->opt.max_connections = 4096;
  if (!s->opt.max_per_client) s->opt.max_per_client = 256;
  if (!s->opt.header_timeout) s->opt.header_timeout = 5;
  if (!s->opt.request_timeout) s->opt.request_timeout = 10;
  if (!s->opt.idle_timeout) s->opt.idle_timeout = 30;
#ifdef __GLIBC__
  /* One malloc arena per thread (8 per CPU) each keeps what a decode left in it past malloc_trim
   * (fragments, its heap's top): with 8 threads and bodies read beside decodes, 20 to 40 MiB past
   * the budget now and then (test_webhook_load: up to 131 MiB of a 128 bound). Two arenas keep
   * that to two threads' worth; the threads wait little on them (decodes run one or two at a
   * time under the budget). Process-wide: set once, before the threads start. */
  if (s->opt.budget) mallopt(M_ARENA_MAX, 2);
#endif
  if (!s->opt.threads) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    s->opt.threads = n > 0 ? (unsigned)n : 2;
  }
  if (!po_ListenAddr_Parse(opts->address, &s->addr, st)) goto fail;
  if (s->addr.disabled) return s;
  s->limit = connection_limit(s->opt.max_connections);
  if (!s->limit) {
    po_CtlStatus_Set(st, kPo_Ctl_System, "too few file descriptors (RLIMIT_NOFILE) for a connection limit");
    goto fail;
  }
  if (opts->cert_file && !(s->tls = po_HttpTls_New(opts->cert_file, opts->key_file, opts->log, st)))
    goto fail;
  return s;
fail:
  po_HttpServer_Free(s);
  return NULL;
}

bool po_HttpServer_Disabled(const po_HttpServer *s) { return s->addr.disabled; }

/* Starts the daemon on one candidate address (po_ListenAddr_Bind tries them in order). */
static bool start_daemon(void *ctx, const struct sockaddr *sa, bool v6, bool dual_stack) {
  po_HttpServer *s = ctx;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (v6) flags |= MHD_USE_IPv6;
  if (dual_stack) flags |= MHD_USE_DUAL_STACK;
  /* Idle clients cannot starve others: each client address gets at most max_per_client
   * connections, one silent for header_timeout before its TLS handshake and request are
   * complete is closed, and there are slots for many clients (epoll: no FD_SETSIZE). */
  /* The logger first, so that it gets the messages about the options after it. One thread is
   * the daemon's own polling thread, without a pool (MHD warns about a pool of 0 or 1): the
   * pool size goes last, where MHD_OPTION_END can stand in for it. */
  struct MHD_OptionItem common[] = {
      {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, s},
      {MHD_OPTION_SOCK_ADDR, 0, (void *)sa},
      {MHD_OPTION_CONNECTION_LIMIT, s->limit, NULL},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->opt.max_per_client, NULL},
      {MHD_OPTION_CONNECTION_TIMEOUT, s->opt.header_timeout, NULL},
      {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, s},
      {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s},
      {s->opt.threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, s->opt.threads, NULL},
      {MHD_OPTION_END, 0, NULL},
  };
  if (s->tls) {
    flags |= MHD_USE_TLS;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_ARRAY, common,
                            MHD_OPTION_HTTPS_CERT_CALLBACK, po_HttpTls_CertCallback,
                            MHD_OPTION_HTTPS_PRIORITIES, po_kHttpTlsPriorities, MHD_OPTION_END);
  } else {
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_ARRAY, common, MHD_OPTION_END);
  }
  return s->d != NULL;
}

bool po_HttpServer_Start(po_HttpServer *s, po_CtlStatus *st) {
  if (s->d || s->addr.disabled) return true;
  po_CtlStatus inner;
  po_CtlStatus_Clear(&inner);
  if (!po_ListenAddr_Bind(&s->addr, start_daemon, s, &inner) && inner.code == kPo_Ctl_Usage)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "%s: %s", s->name, inner.message);
  if (!s->d)
    return po_CtlStatus_Set(st, kPo_Ctl_System,
                            "%s: cannot listen on \"%s\" (address in use or not local?)", s->name,
                            s->address);
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
  s->port = di ? di->port : (uint16_t)s->addr.port;
  s->stop_sweeping = false;
  if (pthread_create(&s->sweeper, NULL, sweep, s) != 0) {
    po_HttpServer_Stop(s);
    return po_CtlStatus_Set(st, kPo_Ctl_System, "%s: cannot start a thread", s->name);
  }
  s->sweeping = true;
  return true;
}

uint16_t po_HttpServer_Port(const po_HttpServer *s) { return s->d ? s->port : 0; }

void po_HttpServer_Stop(po_HttpServer *s) {
  if (!s->d) return;
  MHD_stop_daemon(s->d); /* every connection closed: the list is empty */
  s->d = NULL;
  s->port = 0;
  if (s->sweeping) {
    pthread_mutex_lock(&s->conn_mu);
    s->stop_sweeping = true;
    pthread_cond_signal(&s->conn_cv);
    pthread_mutex_unlock(&s->conn_mu);
    pthread_join(s->sweeper, NULL);
    s->sweeping = false;
  }
}

void po_HttpServer_Free(po_HttpServer *s) {
  if (!s) return;
  po_HttpServer_Stop(s);
  po_HttpTls_Free(s->tls);
  pthread_mutex_destroy(&s->log_mu);
  pthread_mutex_destroy(&s->conn_mu);
  pthread_cond_destroy(&s->conn_cv);
  free(s);
}

static bool runnable_start(void *ctx, po_CtlStatus *st) { return po_HttpServer_Start(ctx, st); }
static bool runnable_stop(void *ctx, int64_t deadline) {
  (void)deadline; /* MHD_stop_daemon joins its threads; handlers are short */
  po_HttpServer_Stop(ctx);
  return true;
}

po_Runnable po_HttpServer_Runnable(po_HttpServer *s) {
  return (po_Runnable){.name = s->name, .start = runnable_start, .stop = runnable_stop, .ctx = s,
                       .needs_leader = false};
}
