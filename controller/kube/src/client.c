/* The REST client: a pool of CURL easy handles over one CURLSH, a token bucket, retries. */
#include "po/kube/client.h"

#include <curl/curl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_internal.h"
#include "json_scan.h"
#include "po/base/json.h"

#ifndef PO_VERSION
#define PO_VERSION "0.0.0"
#endif

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* ---- CURLSH locking ---------------------------------------------------------------------- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ctx) {
  po_KubeClient *c = ctx;
  pthread_mutex_lock(&c->share_locks[(unsigned)data % PO_SHARE_LOCKS]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ctx) {
  po_KubeClient *c = ctx;
  pthread_mutex_unlock(&c->share_locks[(unsigned)data % PO_SHARE_LOCKS]);
}

/* ---- lifecycle --------------------------------------------------------------------------- */

bool po_KubeClient_New(po_KubeConfig *cfg, const po_KubeClientOptions *opt, po_KubeClient **out,
                       po_CtlStatus *st) {
  *out = NULL;
  pthread_once(&g_curl_once, curl_init_once);
  if (!cfg || !po_KubeConfig_Server(cfg))
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "po_KubeClient_New: a configuration with a server is required");
  po_KubeClient *c = calloc(1, sizeof *c);
  if (!c) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  c->cfg = cfg;
  if (opt) c->opt = *opt;
  if (c->opt.qps == 0) c->opt.qps = 20;
  if (c->opt.burst == 0) c->opt.burst = 30;
  if (c->opt.timeout_ms == 0) c->opt.timeout_ms = 30000;
  if (c->opt.connect_timeout_ms == 0) c->opt.connect_timeout_ms = 10000;
  if (c->opt.max_retries == 0) c->opt.max_retries = 5;
  if (c->opt.max_retries < 0) c->opt.max_retries = 0;
  if (!c->opt.clock) c->opt.clock = po_Clock_System();
  c->user_agent = strdup(c->opt.user_agent ? c->opt.user_agent : "propertyoverride/" PO_VERSION);
  c->opt.user_agent = c->user_agent;
  po_Rand_Seed(&c->rand, c->opt.seed ? c->opt.seed
                                     : (uint64_t)c->opt.clock->monotonic_ns(c->opt.clock->ctx) ^ (uintptr_t)c);
  po_TokenBucket_Init(&c->bucket, c->opt.qps, c->opt.burst);
  pthread_mutex_init(&c->pool_lock, NULL);
  pthread_mutex_init(&c->rl_lock, NULL);
  for (int i = 0; i < PO_SHARE_LOCKS; i++) pthread_mutex_init(&c->share_locks[i], NULL);
  c->share = curl_share_init();
  if (!c->user_agent || !c->share) {
    po_KubeClient_Free(c);
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  }
  curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
  curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
  curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
  curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  *out = c;
  return true;
}

uint64_t po_KubeClient_Connections(po_KubeClient *c) { return atomic_load(&c->connections); }

void po_KubeClient_HttpVersions(po_KubeClient *c, uint64_t counts[2]) {
  counts[0] = atomic_load(&c->http_versions[0]);
  counts[1] = atomic_load(&c->http_versions[1]);
}

void po_KubeClient_NoteVersion_(po_KubeClient *c, CURL *h) {
  long v = 0;
  if (curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &v) != CURLE_OK || v == 0) return;
  atomic_fetch_add(&c->http_versions[v == CURL_HTTP_VERSION_2_0 ? 1 : 0], 1);
}

/* ---- the requests' header lists ---------------------------------------------------------- */

/* The header lists every request sends, one per content type, built once per bearer token
 * (rotated tokens are re-read by the configuration) instead of five allocations per request.
 * Reference counted: a request in flight keeps the set it started with when the token changes. */
static const char *const kContentTypes[] = {NULL, "application/json", "application/merge-patch+json",
                                            "application/json-patch+json", "application/apply-patch+yaml"};
enum { kNContentTypes = sizeof kContentTypes / sizeof kContentTypes[0] };

/* What a request asks back (Accept): the object as JSON, or only its metadata. A write whose
 * answer is read for metadata alone (po_KubeClient_PatchVersion, po_KubeClient_UpdateVersion: uid,
 * resourceVersion, generation, finalizers) asks for a PartialObjectMetadata, which kube-apiserver
 * serves for writes as for reads: a 50-entry ServiceDefaults answers ~1 KB instead of ~20 KB, which
 * the server no longer encodes nor the client receives. application/json follows in the list for
 * a server that cannot (tests/apiserver answers the object whole; written_of reads both alike). */
enum { kAnswerObject, kAnswerMetadata, kNAnswers };
static const char *const kAccepts[kNAnswers] = {
    "Accept: application/json", "Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"};

typedef struct po_KubeHeaders_ {
  int refs;
  char *token;
  struct curl_slist *lists[kNAnswers][kNContentTypes];
} Headers;

static void headers_unref(Headers *hs) {
  if (!hs || --hs->refs > 0) return;
  for (int a = 0; a < kNAnswers; a++)
    for (int i = 0; i < kNContentTypes; i++) curl_slist_free_all(hs->lists[a][i]);
  free(hs->token);
  free(hs);
}

static struct curl_slist *append(struct curl_slist *l, const char *h) {
  struct curl_slist *n = l ? curl_slist_append(l, h) : NULL;
  if (!n) curl_slist_free_all(l);
  return n;
}

static Headers *headers_new(const char *tok) {
  Headers *hs = calloc(1, sizeof *hs);
  if (!hs || !(hs->token = strdup(tok))) {
    free(hs);
    return NULL;
  }
  hs->refs = 1;
  char *auth = malloc(strlen(tok) + 32);
  bool ok = auth != NULL;
  if (ok) snprintf(auth, strlen(tok) + 32, "Authorization: Bearer %s", tok);
  for (int a = 0; ok && a < kNAnswers; a++) {
    for (int i = 0; ok && i < kNContentTypes; i++) {
      /* No "Expect: 100-continue" round trip before large bodies. */
      struct curl_slist *l = append(curl_slist_append(NULL, kAccepts[a]), "Expect:");
      if (tok[0]) l = append(l, auth);
      if (kContentTypes[i]) {
        char ct[128];
        snprintf(ct, sizeof ct, "Content-Type: %s", kContentTypes[i]);
        l = append(l, ct);
      }
      ok = (hs->lists[a][i] = l) != NULL;
    }
  }
  free(auth);
  if (!ok) {
    headers_unref(hs);
    return NULL;
  }
  return hs;
}

/* The set for this token (a reference), NULL when out of memory. */
static Headers *headers_for(po_KubeClient *c, const char *tok) {
  pthread_mutex_lock(&c->pool_lock);
  Headers *hs = c->headers;
  if (hs && strcmp(hs->token, tok) == 0) {
    hs->refs++;
    pthread_mutex_unlock(&c->pool_lock);
    return hs;
  }
  pthread_mutex_unlock(&c->pool_lock);
  Headers *fresh = headers_new(tok);
  if (!fresh) return NULL;
  atomic_fetch_add(&c->header_builds, 1);
  pthread_mutex_lock(&c->pool_lock);
  Headers *old = c->headers;
  c->headers = fresh;
  fresh->refs++; /* the client's and the caller's */
  headers_unref(old);
  pthread_mutex_unlock(&c->pool_lock);
  return fresh;
}

static void headers_release(po_KubeClient *c, Headers *hs) {
  pthread_mutex_lock(&c->pool_lock);
  headers_unref(hs);
  pthread_mutex_unlock(&c->pool_lock);
}

static struct curl_slist *headers_list(const Headers *hs, int answer, const char *content_type) {
  for (int i = 1; content_type && i < kNContentTypes; i++)
    if (strcmp(kContentTypes[i], content_type) == 0) return hs->lists[answer][i];
  return content_type ? NULL : hs->lists[answer][0];
}

uint64_t po_KubeClient_HeaderBuilds_(po_KubeClient *c) { return atomic_load(&c->header_builds); }

uint64_t po_KubeClient_AnswerBytes_(po_KubeClient *c) { return atomic_load(&c->answer_bytes); }

void po_KubeClient_Free(po_KubeClient *c) {
  if (!c) return;
  headers_unref(c->headers);
  for (int i = 0; i < c->n_idle; i++) curl_easy_cleanup(c->idle[i]);
  free(c->idle);
  if (c->share) curl_share_cleanup(c->share);
  for (int i = 0; i < PO_SHARE_LOCKS; i++) pthread_mutex_destroy(&c->share_locks[i]);
  pthread_mutex_destroy(&c->pool_lock);
  pthread_mutex_destroy(&c->rl_lock);
  free(c->user_agent);
  free(c);
}

/* A handle of the pool, *fresh when it was just made (not yet set up by exchange). */
static CURL *take_handle(po_KubeClient *c, bool *fresh) {
  CURL *h = NULL;
  pthread_mutex_lock(&c->pool_lock);
  if (c->n_idle) h = c->idle[--c->n_idle];
  pthread_mutex_unlock(&c->pool_lock);
  *fresh = h == NULL;
  return h ? h : curl_easy_init();
}

CURL *po_KubeClient_TakeHandle_(po_KubeClient *c) {
  bool fresh;
  return take_handle(c, &fresh);
}

void po_KubeClient_ReturnHandle_(po_KubeClient *c, CURL *h) {
  if (!h) return;
  pthread_mutex_lock(&c->pool_lock);
  if (c->n_idle == c->cap_idle) {
    int cap = c->cap_idle ? c->cap_idle * 2 : 8;
    CURL **n = realloc(c->idle, (size_t)cap * sizeof *n);
    if (n) {
      c->idle = n;
      c->cap_idle = cap;
    }
  }
  if (c->n_idle < c->cap_idle) {
    c->idle[c->n_idle++] = h;
    h = NULL;
  }
  pthread_mutex_unlock(&c->pool_lock);
  if (h) curl_easy_cleanup(h);
}

void po_KubeClient_RateLimit_(po_KubeClient *c) { po_KubeClient_RateLimitCancel_(c, NULL); }

/* A wait of the client's: on the system clock a cancel's sleep (a stop wakes it), on another
 * clock (tests) that clock's sleep. */
static bool wait_ns(po_KubeClient *c, po_KubeCancel *cancel, int64_t ns) {
  const po_Clock *k = c->opt.clock;
  if (cancel && k == po_Clock_System()) return po_KubeCancel_Sleep(cancel, ns);
  if (ns > 0) k->sleep_ns(k->ctx, ns);
  return !po_KubeCancel_Fired(cancel);
}

bool po_KubeClient_RateLimitCancel_(po_KubeClient *c, po_KubeCancel *cancel) {
  const po_Clock *k = c->opt.clock;
  pthread_mutex_lock(&c->rl_lock);
  int64_t wait = po_TokenBucket_Reserve(&c->bucket, k->monotonic_ns(k->ctx));
  pthread_mutex_unlock(&c->rl_lock);
  return wait > 0 ? wait_ns(c, cancel, wait) : !po_KubeCancel_Fired(cancel);
}

double po_KubeClient_Jitter_(po_KubeClient *c) {
  pthread_mutex_lock(&c->rl_lock);
  double u = po_Rand_Unit(&c->rand);
  pthread_mutex_unlock(&c->rl_lock);
  return u;
}

/* ---- paths and queries ------------------------------------------------------------------- */

bool po_KubeRef_Path(const po_KubeRef *r, char *buf, size_t size) {
  if (!r || !r->version || !*r->version || !r->resource || !*r->resource) return false;
  int n;
  if (r->group && *r->group)
    n = snprintf(buf, size, "/apis/%s/%s", r->group, r->version);
  else
    n = snprintf(buf, size, "/api/%s", r->version);
  size_t used = n < 0 ? size : (size_t)n;
#define PO_APPEND(...)                                               \
  do {                                                               \
    if (used >= size) return false;                                  \
    int w_ = snprintf(buf + used, size - used, __VA_ARGS__);         \
    if (w_ < 0 || (size_t)w_ >= size - used) return false;           \
    used += (size_t)w_;                                              \
  } while (0)
  if (r->ns && *r->ns) PO_APPEND("/namespaces/%s", r->ns);
  PO_APPEND("/%s", r->resource);
  if (r->name && *r->name) {
    PO_APPEND("/%s", r->name);
    if (r->subresource && *r->subresource) PO_APPEND("/%s", r->subresource);
  }
#undef PO_APPEND
  return used < size;
}

bool po_Kube_QueryEscape(const char *s, char *buf, size_t size) {
  static const char hex[] = "0123456789ABCDEF";
  size_t n = 0;
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    bool keep = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                ch == '-' || ch == '.' || ch == '_' || ch == '~';
    if (n + (keep ? 1 : 3) >= size) return false;
    if (keep) {
      buf[n++] = (char)ch;
    } else {
      buf[n++] = '%';
      buf[n++] = hex[ch >> 4];
      buf[n++] = hex[ch & 15];
    }
  }
  if (n >= size) return false;
  buf[n] = '\0';
  return true;
}

/* Appends "&key=escaped(value)" (without the '&' when q is empty). */
bool po_Query_Add_(char *q, size_t size, const char *key, const char *value) {
  if (!value || !*value) return true;
  size_t used = strlen(q);
  char esc[2048];
  if (!po_Kube_QueryEscape(value, esc, sizeof esc)) return false;
  int w = snprintf(q + used, size - used, "%s%s=%s", used ? "&" : "", key, esc);
  return w >= 0 && (size_t)w < size - used;
}

/* ---- one exchange ------------------------------------------------------------------------ */

static size_t on_body(char *ptr, size_t sz, size_t nm, void *ud) {
  po_Buf_ *b = ud;
  size_t n = sz * nm;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 16384;
    while (cap < b->len + n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) return 0;
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, ptr, n);
  b->len += n;
  b->data[b->len] = '\0';
  return n;
}

static size_t on_header(char *ptr, size_t sz, size_t nm, void *ud) {
  long *retry_after = ud;
  size_t n = sz * nm;
  if (n > 12 && strncasecmp(ptr, "Retry-After:", 12) == 0) {
    char tmp[32];
    size_t l = n - 12 < sizeof tmp - 1 ? n - 12 : sizeof tmp - 1;
    memcpy(tmp, ptr + 12, l);
    tmp[l] = '\0';
    char *end;
    long v = strtol(tmp, &end, 10);
    /* Only delay-seconds; an HTTP-date falls back to our own backoff. */
    if (end != tmp && v >= 0) *retry_after = v;
  }
  return n;
}

/* What every request and watch of this client sets alike: done once per pooled handle. */
static void setup_constant(po_KubeClient *c, CURL *h) {
  po_KubeConfig *cfg = c->cfg;
  curl_easy_setopt(h, CURLOPT_SHARE, c->share);
  curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opt.connect_timeout_ms);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  /* po_KubeClientOptions.http2: HTTP/1.1 unless asked (curl would offer HTTP/2 over TLS). */
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, c->opt.http2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
  /* Each easy handle runs in a private multi whose idle-connection limit applies to the whole
   * shared cache: curl's default (4) closed a connection on nearly every return once a few
   * workers ran at once, and each request then paid a new TLS handshake and CA load (measured:
   * 1,505 connections for 300 PropertyOverrides, 5 per object, most of the controller's CPU). */
  curl_easy_setopt(h, CURLOPT_MAXCONNECTS, (long)kPo_KubeMaxIdleConnections);
  /* kube-apiserver closes an HTTP/1.1 connection idle for 90 s, and libcurl 7.88 takes one whose
   * TLS close_notify is waiting to be read for alive: it would send the next request into it and,
   * with no answer, again on a fresh connection, which a write may not do (on_prereq): each write
   * after 90 s of quiet failed as maybe applied (test_kube_write_once idle 95). Connections idle
   * 60 s are not reused (curl's default is 118 s). */
  curl_easy_setopt(h, CURLOPT_MAXAGE_CONN, 60L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* gzip if the server offers it (reads only: below) */
  size_t len;
  const char *blob;
  if ((blob = po_KubeConfig_CaData(cfg, &len)) != NULL) {
    struct curl_blob b = {(void *)blob, len, CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
  } else if (po_KubeConfig_CaFile(cfg)) {
    curl_easy_setopt(h, CURLOPT_CAINFO, po_KubeConfig_CaFile(cfg));
  }
  if ((blob = po_KubeConfig_CertData(cfg, &len)) != NULL) {
    struct curl_blob b = {(void *)blob, len, CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (po_KubeConfig_CertFile(cfg)) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, po_KubeConfig_CertFile(cfg));
  }
  if ((blob = po_KubeConfig_KeyData(cfg, &len)) != NULL) {
    struct curl_blob b = {(void *)blob, len, CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (po_KubeConfig_KeyFile(cfg)) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, po_KubeConfig_KeyFile(cfg));
  }
  if (po_KubeConfig_InsecureSkipTlsVerify(cfg)) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

bool po_KubeClient_Setup_(po_KubeClient *c, CURL *h, const char *method, const char *url,
                          struct curl_slist **headers, const char *content_type, po_CtlStatus *st) {
  po_KubeConfig *cfg = c->cfg;
  curl_easy_reset(h);
  setup_constant(c, h);
  curl_easy_setopt(h, CURLOPT_URL, url);
  if (strcmp(method, "GET") != 0) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  char tok[8192], auth[8300];
  if (!po_KubeConfig_Token(cfg, tok, sizeof tok, st)) return false;
  /* No "Expect: 100-continue" round trip before large bodies. */
  struct curl_slist *hl = curl_slist_append(NULL, "Accept: application/json");
  if (hl) {
    struct curl_slist *n = curl_slist_append(hl, "Expect:");
    if (!n) curl_slist_free_all(hl);
    hl = n;
  }
  if (hl && tok[0]) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
    struct curl_slist *n = curl_slist_append(hl, auth);
    if (!n) curl_slist_free_all(hl);
    hl = n;
  }
  if (hl && content_type) {
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
    struct curl_slist *n = curl_slist_append(hl, ct);
    if (!n) curl_slist_free_all(hl);
    hl = n;
  }
  if (!hl) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  *headers = hl;
  return true;
}

bool po_KubeClient_Url_(po_KubeClient *c, const po_KubeRef *ref, const char *query, char *url,
                        size_t size, po_CtlStatus *st) {
  char path[1024];
  if (!po_KubeRef_Path(ref, path, sizeof path))
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "request needs version and resource (path too long or incomplete)");
  int n = snprintf(url, size, "%s%s%s%s", po_KubeConfig_Server(c->cfg), path, query && *query ? "?" : "",
                   query ? query : "");
  if (n < 0 || (size_t)n >= size) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "request URL too long");
  return true;
}

/* Whether curl failed before any byte of the request could have reached the server. */
static bool not_sent(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
         rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SSL_CONNECT_ERROR;
}

/* The attempts of one exchange that reached the point of sending (libcurl calls this once the
 * connection is up, just before it writes the request). libcurl sends any request again on a
 * fresh connection when a reused one closed without a byte of answer (a kept-alive connection
 * the server timed out, but also a server that stored a write and died before answering): a
 * write is refused a second send (the transfer fails with CURLE_ABORTED_BY_CALLBACK), and once
 * sent it is never retried by the client either, whatever error follows (a reconnect refused
 * while the server restarts is CURLE_COULDNT_CONNECT, which alone would look unsent). */
typedef struct {
  int sends;
  bool write;
} Attempts;

static int on_prereq(void *ud, char *ip, char *local_ip, int port, int local_port) {
  (void)ip, (void)local_ip, (void)port, (void)local_port;
  Attempts *a = ud;
  return a->sends++ > 0 && a->write ? CURL_PREREQFUNC_ABORT : CURL_PREREQFUNC_OK;
}

/* What one attempt sets on its handle: a pooled handle keeps what is the same for every request
 * (the share, TLS files, timeouts, callbacks), set once when fresh; the request's own options are
 * set every time, each of them, so nothing of the previous request (its verb, its body, its
 * headers) is left over. */
static bool set_request(po_KubeClient *c, CURL *h, bool fresh, const char *method, bool safe, const char *url,
                        struct curl_slist *headers, const char *body, size_t len, po_Buf_ *resp, long *retry_after,
                        Attempts *sends) {
  if (fresh) {
    setup_constant(c, h);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->opt.timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, on_prereq);
  }
  curl_easy_setopt(h, CURLOPT_PREREQDATA, sends);
  /* URL and CUSTOMREQUEST are copied: a failed copy leaves no URL, or the verb GET (a POST with a
   * body): such a request is not sent. */
  bool ok = curl_easy_setopt(h, CURLOPT_URL, url) == CURLE_OK;
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L); /* back to a GET without a body */
  /* A write's answer is the one object, which kube-apiserver gzips only past 128 KB (its
   * defaultGzipThresholdBytes; a list, in practice): no Accept-Encoding to build and no decoders
   * to set up for writes, 6% of a PATCH's instructions (tests/kube/bench_request.sh: 137 K ->
   * 129 K). A target that large comes back plain, which costs its bytes on the wire, not CPU. */
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, safe ? "" : NULL);
  ok = curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, safe && !strcmp(method, "GET") ? NULL : method) == CURLE_OK && ok;
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, retry_after);
  if (body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  } else if (!safe && strcmp(method, "DELETE") != 0) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
  }
  return ok;
}

/* A transfer that failed (rc): said in st; true when it may be tried again. A write that was
 * sent is never repeated (on_prereq), and its error says it may have been applied. */
static bool transport_failure(CURLcode rc, const char *method, const char *url, bool safe, const Attempts *sends,
                              po_CtlStatus *st) {
  if (!safe && sends->sends > 0)
    po_CtlStatus_Set(st, kPo_Ctl_Transport, "%s %s: %s (the request was sent and may have been applied)", method, url,
                     rc == CURLE_ABORTED_BY_CALLBACK ? "the connection closed before an answer" : curl_easy_strerror(rc));
  else
    po_CtlStatus_Set(st, kPo_Ctl_Transport, "%s %s: %s", method, url, curl_easy_strerror(rc));
  return safe || (not_sent(rc) && sends->sends == 0);
}

/* The wait before attempt + 1: the server's Retry-After seconds (at most 30), else 0.1 s doubling
 * to 6.4 s with up to half of it again at random. */
static int64_t retry_delay(po_KubeClient *c, int attempt, long retry_after) {
  if (retry_after >= 0) return (retry_after > 30 ? 30 : retry_after) * 1000000000LL;
  int64_t delay = 100000000LL << (attempt < 6 ? attempt : 6);
  return delay + (int64_t)((double)delay * 0.5 * po_KubeClient_Jitter_(c));
}

/* The raw exchange under the verbs: method, ref, extra query ("a=b&c=d", already escaped, may be
 * NULL), body. Returns true on 2xx with *body_out (malloc'd, NUL-terminated; may be NULL to
 * discard). Retries as documented in the README. */
static bool exchange_c(po_KubeClient *c, const char *method, const po_KubeRef *ref, const char *query, int answer,
                       const char *content_type, const char *body, size_t len, char **body_out,
                       size_t *len_out, po_KubeCancel *cancel, po_CtlStatus *st) {
  if (body_out) *body_out = NULL;
  if (len_out) *len_out = 0;
  char url[8192];
  if (!po_KubeClient_Url_(c, ref, query, url, sizeof url, st)) return false;
  bool safe = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  const po_Clock *k = c->opt.clock;
  po_CtlStatus tmp;
  if (!st) st = &tmp;
  for (int attempt = 0;; attempt++) {
    if (!po_KubeClient_RateLimitCancel_(c, cancel)) return po_CtlStatus_Set(st, kPo_Ctl_Stopped, "%s %s: stopped", method, url);
    char tok[8192];
    if (!po_KubeConfig_Token(c->cfg, tok, sizeof tok, st)) return false;
    Headers *hs = headers_for(c, tok);
    if (!hs) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (request headers)");
    struct curl_slist *headers = headers_list(hs, answer, content_type);
    if (!headers) {
      headers_release(c, hs);
      return po_CtlStatus_Set(st, kPo_Ctl_Usage, "no header list for content type '%s'", content_type);
    }
    bool fresh;
    CURL *h = take_handle(c, &fresh);
    if (!h) {
      headers_release(c, hs);
      return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (curl handle)");
    }
    Attempts sends = {.write = !safe};
    po_Buf_ resp = {0};
    long retry_after = -1;
    bool set = set_request(c, h, fresh, method, safe, url, headers, body, len, &resp, &retry_after, &sends);
    int64_t t0 = k->monotonic_ns(k->ctx);
    CURLcode rc = set ? curl_easy_perform(h) : CURLE_OUT_OF_MEMORY;
    long http = 0, connects = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    if (curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0) {
      atomic_fetch_add(&c->connections, (uint64_t)connects);
    }
    if (http) po_KubeClient_NoteVersion_(c, h);
    double secs = (double)(k->monotonic_ns(k->ctx) - t0) / 1e9;
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, NULL);
    curl_easy_setopt(h, CURLOPT_PREREQDATA, NULL);
    headers_release(c, hs);
    po_KubeClient_ReturnHandle_(c, h);
    if (c->opt.observer) c->opt.observer(c->opt.observer_ctx, method, rc == CURLE_OK ? http : 0, secs);
    bool retry = false;
    if (rc != CURLE_OK) {
      retry = transport_failure(rc, method, url, safe, &sends, st);
    } else if (http >= 200 && http < 300) {
      atomic_fetch_add(&c->answer_bytes, (uint64_t)resp.len);
      if (body_out) {
        if (!resp.data) resp.data = strdup("");
        *body_out = resp.data;
        resp.data = NULL;
      }
      if (len_out) *len_out = resp.len;
      free(resp.data);
      po_CtlStatus_Clear(st);
      st->http_status = http;
      return true;
    } else {
      po_KubeStatus_FromResponse(st, http, resp.data, resp.len);
      /* 429 means the server refused before doing anything, so any verb may be repeated. */
      retry = http == 429 || (safe && (http == 500 || http == 502 || http == 503 || http == 504));
    }
    free(resp.data);
    if (!retry || attempt >= c->opt.max_retries) return false;
    if (!wait_ns(c, cancel, retry_delay(c, attempt, retry_after)))
      return po_CtlStatus_Set(st, kPo_Ctl_Stopped, "%s %s: stopped", method, url);
  }
}

static bool exchange(po_KubeClient *c, const char *method, const po_KubeRef *ref, const char *query,
                     const char *content_type, const char *body, size_t len, char **body_out,
                     size_t *len_out, po_CtlStatus *st) {
  return exchange_c(c, method, ref, query, kAnswerObject, content_type, body, len, body_out, len_out, NULL, st);
}

/* A write whose answer is read for its metadata alone (kAnswerMetadata). */
static bool exchange_meta(po_KubeClient *c, const char *method, const po_KubeRef *ref, const char *query,
                          const char *content_type, const char *body, size_t len, char **body_out, size_t *len_out,
                          po_CtlStatus *st) {
  return exchange_c(c, method, ref, query, kAnswerMetadata, content_type, body, len, body_out, len_out, NULL, st);
}

/* ---- verbs ------------------------------------------------------------------------------- */

bool po_Kube_ParseJson_(const char *body, size_t len, json_object **out, const char *what,
                        po_CtlStatus *st) {
  json_tokener *tok = json_tokener_new_ex(kPo_KubeMaxJsonDepth);
  if (!tok) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  json_object *o = NULL;
  if (len <= (size_t)1 << 30) o = json_tokener_parse_ex(tok, body, (int)len);
  enum json_tokener_error e = json_tokener_get_error(tok);
  json_tokener_free(tok);
  if (e != json_tokener_success || !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return po_CtlStatus_Set(st, kPo_Ctl_Decode, "%s: the server's answer is not a JSON object (%s)",
                             what, e != json_tokener_success ? json_tokener_error_desc(e) : "other type");
  }
  *out = o;
  return true;
}

static bool do_json(po_KubeClient *c, const char *method, const po_KubeRef *ref, const char *query,
                    const char *ctype, const char *body, size_t len, json_object **out, po_CtlStatus *st) {
  char *resp = NULL;
  size_t rlen = 0;
  if (out) *out = NULL;
  if (!exchange(c, method, ref, query, ctype, body, len, out ? &resp : NULL, &rlen, st)) return false;
  if (!out) return true;
  long http = st ? st->http_status : 0;
  bool ok = po_Kube_ParseJson_(resp, rlen, out, method, st);
  free(resp);
  if (ok && st) st->http_status = http;
  return ok;
}

bool po_KubeClient_Get(po_KubeClient *c, const po_KubeRef *ref, json_object **out, po_CtlStatus *st) {
  if (!ref->name || !*ref->name) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "get needs a name");
  return do_json(c, "GET", ref, NULL, NULL, NULL, 0, out, st);
}

static bool list_query(const po_KubeListOptions *o, char *q, size_t size) {
  q[0] = '\0';
  if (!o) return true;
  char lim[32] = "";
  if (o->limit > 0) snprintf(lim, sizeof lim, "%ld", o->limit);
  return po_Query_Add_(q, size, "labelSelector", o->label_selector) &&
         po_Query_Add_(q, size, "fieldSelector", o->field_selector) && po_Query_Add_(q, size, "limit", lim) &&
         po_Query_Add_(q, size, "continue", o->continue_token) &&
         po_Query_Add_(q, size, "resourceVersion", o->resource_version);
}

bool po_KubeClient_List(po_KubeClient *c, const po_KubeRef *ref, const po_KubeListOptions *opt,
                        json_object **out, po_CtlStatus *st) {
  char q[6144];
  if (!list_query(opt, q, sizeof q)) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "list options too long");
  po_KubeRef r = *ref;
  r.name = NULL;
  r.subresource = NULL;
  return do_json(c, "GET", &r, q, NULL, NULL, 0, out, st);
}

bool po_KubeClient_ListBytes(po_KubeClient *c, const po_KubeRef *ref, const po_KubeListOptions *opt,
                             char **body, size_t *len, po_CtlStatus *st) {
  char q[6144];
  *body = NULL;
  *len = 0;
  if (!list_query(opt, q, sizeof q)) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "list options too long");
  po_KubeRef r = *ref;
  r.name = NULL;
  r.subresource = NULL;
  return exchange_c(c, "GET", &r, q, kAnswerObject, NULL, NULL, 0, body, len, opt ? opt->cancel : NULL, st);
}

/* metadata.key, NULL when absent (not "": an empty continue token ends the list too, but an
 * absent name must not become the name ""). */
static const char *meta_str(json_object *o, const char *key) { return po_Json_String(po_Json_Get(o, "metadata"), key); }

bool po_KubeClient_ListAll(po_KubeClient *c, const po_KubeRef *ref, const po_KubeListOptions *opt,
                           json_object **out, po_CtlStatus *st) {
  *out = NULL;
  po_KubeListOptions o = {0};
  if (opt) o = *opt;
  json_object *all = NULL, *items = NULL;
  char *cont = NULL;
  for (int page = 0;; page++) {
    o.continue_token = cont;
    /* A continued page must not also name a resourceVersion (the token carries it). */
    if (page > 0) o.resource_version = NULL;
    json_object *l;
    bool ok = po_KubeClient_List(c, ref, &o, &l, st);
    free(cont);
    cont = NULL;
    if (!ok) {
      json_object_put(all);
      return false;
    }
    json_object *its;
    if (!json_object_object_get_ex(l, "items", &its) || !(json_object_is_type(its, json_type_array) ||
                                                          json_object_is_type(its, json_type_null))) {
      json_object_put(l);
      json_object_put(all);
      return po_CtlStatus_Set(st, kPo_Ctl_Decode, "list: the answer has no items array");
    }
    /* Every item kept or the list fails: a list short of one would read as that object deleted. */
    bool kept = true;
    if (!all) {
      all = l;
      kept = (items = json_object_new_array()) != NULL;
      for (size_t i = 0; kept && json_object_is_type(its, json_type_array) && i < json_object_array_length(its); i++)
        kept = po_Json_Append(items, json_object_get(json_object_array_get_idx(its, i)));
      kept = po_Json_Put(all, "items", items) && kept; /* items released by it on failure */
    } else {
      for (size_t i = 0; kept && json_object_is_type(its, json_type_array) && i < json_object_array_length(its); i++)
        kept = po_Json_Append(items, json_object_get(json_object_array_get_idx(its, i)));
    }
    if (!kept) {
      if (l != all) json_object_put(l);
      json_object_put(all);
      return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (list items)");
    }
    /* A continued page that begins as the first did is the list begun again: the token did not
     * reach the server (libcurl 7.88 sends a request without its query when copying the query
     * fails), and its pages would be read twice. */
    json_object *first = NULL, *head = NULL; /* on the first page its is released already (replaced by items) */
    if (l != all && json_object_is_type(its, json_type_array)) {
      first = json_object_array_get_idx(items, 0);
      head = json_object_array_get_idx(its, 0);
    }
    bool restarted = first && head && *po_Json_Meta(first, "name") &&
                     !strcmp(po_Json_Meta(first, "uid"), po_Json_Meta(head, "uid")) &&
                     !strcmp(po_Json_Meta(first, "namespace"), po_Json_Meta(head, "namespace")) &&
                     !strcmp(po_Json_Meta(first, "name"), po_Json_Meta(head, "name"));
    const char *next = meta_str(l, "continue");
    bool more = next && *next;
    if (more && !restarted) cont = strdup(next);
    if (l != all) json_object_put(l);
    if (restarted || (more && !cont)) {
      json_object_put(all);
      return restarted ? po_CtlStatus_Set(st, kPo_Ctl_Transport, "list: a continued page began the list again")
                       : po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (list continue token)");
    }
    if (!cont) break;
  }
  json_object *m;
  if (json_object_object_get_ex(all, "metadata", &m)) json_object_object_del(m, "continue");
  *out = all;
  return true;
}

/* An object's text to send (json-c's, valid until obj changes); NULL when json-c's writer ran out
 * of memory, said in st: never an empty body in its place. */
static const char *body_of(json_object *obj, size_t *len, po_CtlStatus *st) {
  const char *body = json_object_to_json_string_length(obj, JSON_C_TO_STRING_PLAIN, len);
  if (!body) po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (the body to write)");
  return body;
}

bool po_KubeClient_Create(po_KubeClient *c, const po_KubeRef *ref, json_object *obj, json_object **out,
                          po_CtlStatus *st) {
  po_KubeRef r = *ref;
  r.name = NULL;
  r.subresource = NULL;
  size_t len;
  const char *body = body_of(obj, &len, st);
  if (!body) return false;
  return do_json(c, "POST", &r, NULL, "application/json", body, len, out, st);
}

bool po_KubeClient_Update(po_KubeClient *c, const po_KubeRef *ref, json_object *obj, json_object **out,
                          po_CtlStatus *st) {
  po_KubeRef r = *ref;
  if (!r.name || !*r.name) r.name = meta_str(obj, "name");
  if (!r.name) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "update needs a name (ref or metadata.name)");
  size_t len;
  const char *body = body_of(obj, &len, st);
  if (!body) return false;
  return do_json(c, "PUT", &r, NULL, "application/json", body, len, out, st);
}

/* A string member of the answer's metadata, copied when plain (no escape) and short enough. */
static void answer_meta(const char *md, size_t md_len, const char *key, char *buf, size_t size) {
  const char *v;
  size_t n;
  buf[0] = 0;
  if (po_JsonScan_MemberFirst_(md, md_len, key, &v, &n)) po_JsonScan_PlainString_(v, n, buf, size);
}

/* What an answer's metadata says of the object written, read by a scan (no tree: a target's
 * answer is ~25 KB at 50 entries, and only three members of it are used). The answer is the API
 * server's text, each key once: the walk ends at metadata, not past the spec after it. */
static void written_of(const char *resp, size_t rlen, po_KubeWritten *w) {
  const char *md, *v;
  size_t md_len, n;
  if (!resp || !po_JsonScan_MemberFirst_(resp, rlen, "metadata", &md, &md_len)) return;
  answer_meta(md, md_len, "uid", w->uid, sizeof w->uid);
  answer_meta(md, md_len, "resourceVersion", w->rv, sizeof w->rv);
  if (po_JsonScan_MemberFirst_(md, md_len, "generation", &v, &n) && n > 0 && n < 19) {
    int64_t g = 0;
    for (size_t i = 0; i < n && g >= 0; i++) g = v[i] >= '0' && v[i] <= '9' ? g * 10 + (v[i] - '0') : -1;
    w->generation = g > 0 ? g : 0;
  }
}

/* Whether the answer's metadata.finalizers lists name (as a plain string), by a scan. */
static bool lists_finalizer(const char *resp, size_t rlen, const char *name) {
  const char *md, *list, *v;
  size_t md_len, list_len, n;
  if (!resp || !po_JsonScan_MemberFirst_(resp, rlen, "metadata", &md, &md_len) ||
      !po_JsonScan_MemberFirst_(md, md_len, "finalizers", &list, &list_len))
    return false;
  const char *at = list, *end = list + list_len;
  char buf[256];
  for (size_t i = 0; po_JsonScan_NextElement_(&at, end, i, &v, &n) == 1; i++) {
    if (po_JsonScan_PlainString_(v, n, buf, sizeof buf) && strcmp(buf, name) == 0) return true;
  }
  return false;
}

/* The answer's bytes are the object the server stored: its metadata is read by a scan
 * (written_of). */
bool po_KubeClient_UpdateVersion(po_KubeClient *c, const po_KubeRef *ref, json_object *obj, po_KubeWritten *written,
                                 po_CtlStatus *st) {
  *written = (po_KubeWritten){.uid = {0}};
  po_KubeRef r = *ref;
  if (!r.name || !*r.name) r.name = meta_str(obj, "name");
  if (!r.name) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "update needs a name (ref or metadata.name)");
  size_t len, rlen = 0;
  char *resp = NULL;
  const char *body = body_of(obj, &len, st);
  if (!body) return false;
  if (!exchange_meta(c, "PUT", &r, NULL, "application/json", body, len, &resp, &rlen, st)) return false;
  written_of(resp, rlen, written);
  free(resp);
  return true;
}

/* A patch's content type and query ("" or "fieldManager=...&force=true"); false (st set) when the
 * options cannot be sent. */
static bool patch_request(const po_KubeRef *ref, const po_KubePatchOptions *opt, const char **ct, char q[512],
                          po_CtlStatus *st) {
  po_KubePatchOptions o = {0};
  if (opt) o = *opt;
  if (!ref->name || !*ref->name) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "patch needs a name");
  *ct = o.type == kPo_KubePatch_Apply  ? "application/apply-patch+yaml"
        : o.type == kPo_KubePatch_Json ? "application/json-patch+json"
                                       : "application/merge-patch+json";
  if (o.type == kPo_KubePatch_Apply && (!o.field_manager || !*o.field_manager))
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "server-side apply needs a field manager");
  q[0] = '\0';
  if (!po_Query_Add_(q, 512, "fieldManager", o.field_manager) ||
      !po_Query_Add_(q, 512, "force", o.type == kPo_KubePatch_Apply && o.force ? "true" : NULL))
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "field manager name too long");
  return true;
}

bool po_KubeClient_Patch(po_KubeClient *c, const po_KubeRef *ref, const po_KubePatchOptions *opt,
                         const char *body, size_t len, json_object **out, po_CtlStatus *st) {
  const char *ct = NULL;
  char q[512];
  if (!patch_request(ref, opt, &ct, q, st)) return false;
  return do_json(c, "PATCH", ref, q, ct, body, len, out, st);
}

bool po_KubeClient_PatchVersion(po_KubeClient *c, const po_KubeRef *ref, const po_KubePatchOptions *opt,
                                const char *body, size_t len, po_KubeWritten *written, po_CtlStatus *st) {
  *written = (po_KubeWritten){.uid = {0}};
  const char *ct = NULL;
  char q[512];
  if (!patch_request(ref, opt, &ct, q, st)) return false;
  size_t rlen = 0;
  char *resp = NULL;
  if (!exchange_meta(c, "PATCH", ref, q, ct, body, len, &resp, &rlen, st)) return false;
  written_of(resp, rlen, written);
  if (opt && opt->answer_finalizer) written->has_finalizer = lists_finalizer(resp, rlen, opt->answer_finalizer);
  free(resp);
  return true;
}

bool po_KubeClient_Delete(po_KubeClient *c, const po_KubeRef *ref, const po_KubeDeleteOptions *opt,
                          json_object **out, po_CtlStatus *st) {
  if (!ref->name || !*ref->name) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "delete needs a name");
  /* Every member checked: a delete that lost its preconditions to a failed allocation could
   * remove an object made again since (another uid), so nothing is sent then. */
  json_object *d = json_object_new_object(), *p = NULL;
  bool ok = d && po_Json_Put(d, "kind", json_object_new_string("DeleteOptions")) &&
            po_Json_Put(d, "apiVersion", json_object_new_string("v1"));
  if (ok && opt && opt->propagation_policy)
    ok = po_Json_Put(d, "propagationPolicy", json_object_new_string(opt->propagation_policy));
  if (ok && opt && opt->has_grace_period)
    ok = po_Json_Put(d, "gracePeriodSeconds", json_object_new_int64(opt->grace_period_seconds));
  if (ok && opt && (opt->precondition_uid || opt->precondition_resource_version)) {
    ok = po_Json_Put(d, "preconditions", p = json_object_new_object()); /* p owned by d (or released) */
    if (ok && opt->precondition_uid) ok = po_Json_Put(p, "uid", json_object_new_string(opt->precondition_uid));
    if (ok && opt->precondition_resource_version)
      ok = po_Json_Put(p, "resourceVersion", json_object_new_string(opt->precondition_resource_version));
  }
  if (!ok) {
    json_object_put(d);
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (delete options)");
  }
  size_t len;
  const char *body = body_of(d, &len, st);
  ok = body && do_json(c, "DELETE", ref, NULL, "application/json", body, len, out, st);
  json_object_put(d);
  return ok;
}
