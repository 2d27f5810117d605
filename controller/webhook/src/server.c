#include "po/webhook/server.h"

#include <arpa/inet.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "po/engine.h"
#include "po/runtime/listen.h"
#include "po/webhook/admission.h"

enum { kMaxRetired = 64, kMaxLogsPerSecond = 5 };

/* TLS 1.2 and 1.3 only; AEAD ciphers (AES-GCM, ChaCha20-Poly1305) with ECDHE key exchange, so
 * every session has forward secrecy; no SHA-1 signatures. The API server (Go's crypto/tls)
 * negotiates TLS 1.3, or one of these TLS 1.2 suites; TLS 1.0/1.1, CBC and SHA-1 MAC suites are gone. */
static const char kTlsPriorities[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:"
    "-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:-SIGN-DSA-SHA1:%SERVER_PRECEDENCE";

typedef struct {
  gnutls_pcert_st *certs;
  unsigned count;
  gnutls_privkey_t key;
} Creds;

struct po_WebhookServer {
  struct MHD_Daemon *d;
  po_WebhookOptions opt;
  char *cert_file, *key_file;
  pthread_mutex_t mu;
  Creds cur;
  /* Replaced credentials stay alive: a handshake in another thread may still hold them. */
  Creds retired[kMaxRetired];
  int retired_count;
  struct timespec cert_mtime, key_mtime;
  time_t last_check;
  time_t log_second;     /* libmicrohttpd's messages: at most kMaxLogsPerSecond each second */
  unsigned log_count, log_dropped;
  uint16_t port;
  unsigned limit; /* connections, as file descriptors allow */
};

static struct timespec mtime_of(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return (struct timespec){0, 0};
  return st.st_mtim;
}

static bool read_all(const char *path, gnutls_datum_t *out) {
  return gnutls_load_file(path, out) == GNUTLS_E_SUCCESS;
}

static void creds_free(Creds *c) {
  for (unsigned i = 0; i < c->count; i++) gnutls_pcert_deinit(&c->certs[i]);
  free(c->certs);
  if (c->key) gnutls_privkey_deinit(c->key);
  memset(c, 0, sizeof *c);
}

static bool creds_load(const char *cert_file, const char *key_file, Creds *out, char *err, size_t size) {
  gnutls_datum_t cert = {0}, key = {0};
  Creds c = {0};
  bool ok = false;
  if (!read_all(cert_file, &cert)) { snprintf(err, size, "%s: cannot read the certificate", cert_file); goto done; }
  if (!read_all(key_file, &key)) { snprintf(err, size, "%s: cannot read the key", key_file); goto done; }
  unsigned max = 16;
  c.certs = calloc(max, sizeof *c.certs);
  if (!c.certs) goto done;
  c.count = max;
  int rc = gnutls_pcert_list_import_x509_raw(c.certs, &c.count, &cert, GNUTLS_X509_FMT_PEM, 0);
  if (rc < 0 || c.count == 0) {
    c.count = 0;
    snprintf(err, size, "%s: not a PEM certificate chain: %s", cert_file, gnutls_strerror(rc));
    goto done;
  }
  if (gnutls_privkey_init(&c.key) < 0 ||
      (rc = gnutls_privkey_import_x509_raw(c.key, &key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
    snprintf(err, size, "%s: not a PEM private key: %s", key_file, gnutls_strerror(rc));
    goto done;
  }
  *out = c;
  ok = true;
done:
  if (!ok) creds_free(&c);
  gnutls_free(cert.data);
  gnutls_free(key.data);
  return ok;
}

static bool same_time(struct timespec a, struct timespec b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

/* Called with s->mu held. */
static void maybe_reload(po_WebhookServer *s) {
  time_t now = time(NULL);
  if (now == s->last_check) return;
  s->last_check = now;
  struct timespec cm = mtime_of(s->cert_file), km = mtime_of(s->key_file);
  if (same_time(cm, s->cert_mtime) && same_time(km, s->key_mtime)) return;
  Creds c;
  char err[512];
  if (!creds_load(s->cert_file, s->key_file, &c, err, sizeof err)) {
    fprintf(stderr, "{\"level\":\"error\",\"logger\":\"webhook\",\"msg\":\"certificate reload failed; keeping the previous one\",\"error\":\"%s\"}\n", err);
    s->cert_mtime = cm;
    s->key_mtime = km;
    return;
  }
  if (s->retired_count < kMaxRetired) s->retired[s->retired_count++] = s->cur;
  /* Past that many rotations in one process life, the oldest pair is long out of any handshake. */
  else { creds_free(&s->retired[0]); memmove(s->retired, s->retired + 1, sizeof s->retired[0] * (kMaxRetired - 1)); s->retired[kMaxRetired - 1] = s->cur; }
  s->cur = c;
  s->cert_mtime = cm;
  s->key_mtime = km;
}

static int cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                         const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
                         unsigned int *pcert_length, gnutls_privkey_t *privkey) {
  (void)req_ca_dn; (void)nreqs; (void)algos; (void)nalgos;
  po_WebhookServer *s = gnutls_session_get_ptr(session);
  if (!s) return -1;
  pthread_mutex_lock(&s->mu);
  maybe_reload(s);
  *pcert = s->cur.certs;
  *pcert_length = s->cur.count;
  *privkey = s->cur.key;
  pthread_mutex_unlock(&s->mu);
  return *pcert_length ? 0 : -1;
}

/* libmicrohttpd's own messages (a client over its limit, a failed handshake) arrive once per
 * connection: under a flood of connections, logging each would be a second flood. A few a
 * second are kept, and how many were dropped is said with the next one kept. */
static void mhd_log(void *cls, const char *fmt, va_list ap) {
  po_WebhookServer *s = cls;
  time_t now = time(NULL);
  pthread_mutex_lock(&s->mu);
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
  pthread_mutex_unlock(&s->mu);
  if (!keep) return;
  char msg[256], esc[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  size_t k = 0;
  for (const char *p = msg; *p && k + 7 < sizeof esc; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\') esc[k++] = '\\', esc[k++] = (char)c;
    else if (c >= 0x20) esc[k++] = (char)c;
  }
  while (k > 0 && esc[k - 1] == '.') k--; /* MHD ends its sentences with a period and newline */
  esc[k] = '\0';
  fprintf(stderr, "{\"level\":\"info\",\"logger\":\"webhook.http\",\"msg\":\"%s\",\"dropped\":%u}\n", esc, dropped);
}

/* MHD hands us the session before the handshake: remember which server it belongs to. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx, enum MHD_ConnectionNotificationCode code) {
  (void)socket_ctx;
  po_WebhookServer *s = cls;
  if (code != MHD_CONNECTION_NOTIFY_STARTED || !s->cert_file) return;
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (ci && ci->tls_session) gnutls_session_set_ptr((gnutls_session_t)ci->tls_session, s);
}

typedef struct {
  char *buf;
  size_t len, cap;
  bool too_big;
  struct timespec start;
} Request;

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type, const char *body) {
  struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, "Content-Type", type);
  enum MHD_Result ret = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ret;
}

static double since(struct timespec t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static enum MHD_Result too_large(po_WebhookServer *s, struct MHD_Connection *c, Request *rq) {
  char msg[128];
  snprintf(msg, sizeof msg, "request body over %zu bytes\n", s->opt.max_body);
  if (s->opt.observe) s->opt.observe(s->opt.observe_ctx, 413, false, since(rq->start));
  return respond(c, 413, "text/plain", msg);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *data_size, void **ctx) {
  (void)version;
  po_WebhookServer *s = cls;
  Request *rq = *ctx;
  if (!rq) {
    rq = calloc(1, sizeof *rq);
    if (!rq) return MHD_NO;
    clock_gettime(CLOCK_MONOTONIC, &rq->start);
    *ctx = rq;
    /* Each request has the short timeout until it is complete (a keep-alive connection had the
     * long one since its previous request). */
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->opt.handshake_timeout);
    /* The API server always sends a Content-Length. A chunked body is refused: its chunk sizes,
     * extensions and trailers can be trickled without delivering data, so no deadline on the
     * body could be checked. */
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (te && strcasecmp(te, "identity") != 0) {
      /* MHD cannot answer before such a body is read, so the connection is closed. */
      if (s->opt.observe) s->opt.observe(s->opt.observe_ctx, 411, false, since(rq->start));
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
        return too_large(s, c, rq);
      }
    }
    return MHD_YES;
  }
  if (*data_size) {
    /* The whole request within request_timeout of its headers: a client trickling its body
     * byte by byte is never silent long enough for the inactivity timeout. */
    if (since(rq->start) > (double)s->opt.request_timeout) {
      if (s->opt.observe) s->opt.observe(s->opt.observe_ctx, 408, false, since(rq->start));
      return MHD_NO;
    }
    if (rq->len + *data_size > s->opt.max_body) {
      /* Only a chunked body gets here (a declared one is refused above); MHD cannot answer while
       * a body is being read, so the connection is closed rather than the rest read. */
      rq->too_big = true;
      if (s->opt.observe) s->opt.observe(s->opt.observe_ctx, 413, false, since(rq->start));
      return MHD_NO;
    } else if (!rq->too_big) {
      if (rq->len + *data_size + 1 > rq->cap) {
        size_t cap = rq->cap ? rq->cap : 16384;
        while (cap < rq->len + *data_size + 1) cap *= 2;
        char *nb = realloc(rq->buf, cap);
        if (!nb) return MHD_NO;
        rq->buf = nb;
        rq->cap = cap;
      }
      memcpy(rq->buf + rq->len, data, *data_size);
      rq->len += *data_size;
    }
    *data_size = 0;
    return MHD_YES;
  }
  /* The request is complete: from now on the connection may idle as long as keep-alive allows.
   * Until here (handshake, headers and body) it had the short timeout (po_WebhookServer_Start). */
  MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->opt.idle_timeout);
  if (strcmp(method, "GET") == 0 && (strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0)) {
    return respond(c, 200, "text/plain", "ok");
  }
  if (strcmp(url, "/validate") != 0) return respond(c, 404, "text/plain", "not found: POST AdmissionReviews to /validate\n");
  if (strcmp(method, "POST") != 0) return respond(c, 405, "text/plain", "method not allowed: POST AdmissionReviews to /validate\n");
  if (rq->too_big) return too_large(s, c, rq);
  po_Arena *a = po_Arena_New();
  if (!a) return respond(c, 500, "text/plain", "out of memory\n");
  int status = 200;
  char err[256] = "";
  json_object *out = po_Admission_Review(rq->buf ? rq->buf : "", rq->len, s->opt.tenancy, a, &status, err, sizeof err);
  enum MHD_Result ret;
  bool allowed = false;
  if (out) {
    json_object *resp = NULL, *al = NULL;
    if (json_object_object_get_ex(out, "response", &resp) && json_object_object_get_ex(resp, "allowed", &al)) {
      allowed = json_object_get_boolean(al);
    }
    ret = respond(c, 200, "application/json", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(out);
  } else {
    char msg[300];
    snprintf(msg, sizeof msg, "%s\n", err);
    ret = respond(c, (unsigned)status, "text/plain", msg);
  }
  po_Arena_Free(a);
  if (s->opt.observe) s->opt.observe(s->opt.observe_ctx, status, allowed, since(rq->start));
  return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode code) {
  (void)cls; (void)c; (void)code;
  Request *rq = *ctx;
  if (rq) {
    free(rq->buf);
    free(rq);
  }
  *ctx = NULL;
}

/* The connection limit that file descriptors allow: the soft RLIMIT_NOFILE is raised towards the
 * hard one when `want` (plus room for the rest of the process) needs it, else `want` is lowered.
 * 0 when not even a few connections fit. */
static unsigned connection_limit(unsigned want) {
  enum { kReserve = 256 }; /* informers, the API client, logs, certificate files */
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

/* Starts the daemon on one candidate address (po_ListenAddr_Bind tries them in order). */
static bool start_daemon(void *ctx, const struct sockaddr *sa, bool v6, bool dual_stack) {
  po_WebhookServer *s = ctx;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (v6) flags |= MHD_USE_IPv6;
  if (dual_stack) flags |= MHD_USE_DUAL_STACK;
  /* Idle clients cannot starve others: each client address gets at most max_per_client
   * connections, one silent for handshake_timeout before its TLS handshake and request headers
   * are complete is closed, and there are slots for many clients (epoll: no FD_SETSIZE). */
  struct MHD_OptionItem common[] = {
      {MHD_OPTION_SOCK_ADDR, 0, (void *)sa},
      {MHD_OPTION_THREAD_POOL_SIZE, s->opt.threads, NULL},
      {MHD_OPTION_CONNECTION_LIMIT, s->limit, NULL},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->opt.max_per_client, NULL},
      {MHD_OPTION_CONNECTION_TIMEOUT, s->opt.handshake_timeout, NULL},
      {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, s},
      {MHD_OPTION_END, 0, NULL},
  };
  if (s->cert_file) {
    flags |= MHD_USE_TLS;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
                            MHD_OPTION_ARRAY, common, MHD_OPTION_HTTPS_CERT_CALLBACK,
                            cert_callback, MHD_OPTION_HTTPS_PRIORITIES, kTlsPriorities, MHD_OPTION_NOTIFY_CONNECTION,
                            on_connection, s, MHD_OPTION_END);
  } else {
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
                            MHD_OPTION_ARRAY, common, MHD_OPTION_END);
  }
  return s->d != NULL;
}

po_WebhookServer *po_WebhookServer_Start(const po_WebhookOptions *opt, char *err, size_t size) {
  po_WebhookServer *s = calloc(1, sizeof *s);
  if (!s) return snprintf(err, size, "out of memory"), NULL;
  s->opt = *opt;
  if (!s->opt.max_body) s->opt.max_body = 3u << 20;
  if (!s->opt.max_connections) s->opt.max_connections = 4096;
  if (!s->opt.max_per_client) s->opt.max_per_client = 256;
  if (!s->opt.handshake_timeout) s->opt.handshake_timeout = 5;
  if (!s->opt.idle_timeout) s->opt.idle_timeout = 30;
  if (!s->opt.request_timeout) s->opt.request_timeout = 10;
  if (!s->opt.threads) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    s->opt.threads = n > 0 ? (unsigned)n : 2;
  }
  pthread_mutex_init(&s->mu, NULL);
  po_ListenAddr addr;
  po_CtlStatus rs;
  po_CtlStatus_Clear(&rs);
  if (!po_ListenAddr_Parse(opt->address, &addr, &rs)) {
    snprintf(err, size, "%s", rs.message);
    goto fail;
  }
  if (addr.disabled) {
    snprintf(err, size, "listen address \"0\" disables the webhook: there is nothing to start");
    goto fail;
  }
  s->limit = connection_limit(s->opt.max_connections);
  if (!s->limit) {
    snprintf(err, size, "too few file descriptors (RLIMIT_NOFILE) for a connection limit");
    goto fail;
  }
  if (opt->cert_file || opt->key_file) {
    if (!opt->cert_file || !opt->key_file) {
      snprintf(err, size, "both a certificate and a key file are needed for TLS");
      goto fail;
    }
    s->cert_file = strdup(opt->cert_file);
    s->key_file = strdup(opt->key_file);
    if (!creds_load(s->cert_file, s->key_file, &s->cur, err, size)) goto fail;
    s->cert_mtime = mtime_of(s->cert_file);
    s->key_mtime = mtime_of(s->key_file);
    s->last_check = time(NULL);
  }
  if (!po_ListenAddr_Bind(&addr, start_daemon, s, &rs)) {
    if (rs.code == kPo_Ctl_Usage) snprintf(err, size, "%s", rs.message);
    else snprintf(err, size, "cannot listen on %s", opt->address);
    goto fail;
  }
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
  s->port = di ? di->port : 0;
  return s;
fail:
  po_WebhookServer_Stop(s);
  return NULL;
}

uint16_t po_WebhookServer_Port(const po_WebhookServer *s) { return s->port; }


void po_WebhookServer_Stop(po_WebhookServer *s) {
  if (!s) return;
  if (s->d) MHD_stop_daemon(s->d);
  creds_free(&s->cur);
  for (int i = 0; i < s->retired_count; i++) creds_free(&s->retired[i]);
  free(s->cert_file);
  free(s->key_file);
  pthread_mutex_destroy(&s->mu);
  free(s);
}
