/* The HTTP front: libmicrohttpd callbacks, bearer-token auth, admin endpoints, fault hooks,
 * and routing of Kubernetes API paths to discovery, OpenAPI, objects and watches. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "apiserver.h"

static char **g_tokens;
static int g_ntokens;

typedef struct Conn {
  char *body;
  size_t len, cap;
  bool too_big;
} Conn;

enum { kMaxBody = 8 << 20 }; /* the real server's limit is 3 MiB per object; 8 MiB per request here */

static enum MHD_Result send_reply(struct MHD_Connection *c, po_As_Reply *r) {
  const char *body = r->body ? r->body : "";
  size_t n = strlen(body);
  struct MHD_Response *resp = MHD_create_response_from_buffer(n, (void *)body, MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(resp, "Content-Type", r->content_type ? r->content_type : "application/json");
  MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
  for (int i = 0; i < r->nwarnings; i++) {
    /* RFC 7234 warn-text is a quoted string */
    char esc[2048];
    size_t o = 0;
    for (const char *p = r->warnings[i]; *p && o + 3 < sizeof esc; p++) {
      if (*p == '"' || *p == '\\') esc[o++] = '\\';
      esc[o++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
    }
    esc[o] = 0;
    char *h = po_As_Printf("299 - \"%s\"", esc);
    MHD_add_response_header(resp, "Warning", h);
    free(h);
  }
  if (r->retry_after > 0) {
    char ra[16];
    snprintf(ra, sizeof ra, "%d", r->retry_after);
    MHD_add_response_header(resp, "Retry-After", ra);
  }
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)(r->code ? r->code : 500), resp);
  MHD_destroy_response(resp);
  return ret;
}

static bool authorized(struct MHD_Connection *c) {
  if (g_ntokens == 0) return true;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  if (!h || strncmp(h, "Bearer ", 7) != 0) return false;
  for (int i = 0; i < g_ntokens; i++)
    if (!strcmp(h + 7, g_tokens[i])) return true;
  return false;
}

static const char *arg(struct MHD_Connection *c, const char *k) {
  return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
}

static bool arg_true(struct MHD_Connection *c, const char *k) {
  const char *v = arg(c, k);
  return v && (!strcmp(v, "true") || !strcmp(v, "1"));
}

static void not_found(po_As_Reply *r) {
  po_As_Reply_Status(r, 404, "NotFound", "the server could not find the requested resource", NULL);
}

static void reply_locked_json(po_As_Reply *r, json_object *(*fn)(void)) {
  pthread_mutex_lock(&po_as.mu);
  json_object *o = fn();
  pthread_mutex_unlock(&po_as.mu);
  po_As_Reply_Json(r, 200, o);
}

static json_object *version_json(void) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "major", json_object_new_string("1"));
  json_object_object_add(o, "minor", json_object_new_string("32"));
  json_object_object_add(o, "gitVersion", json_object_new_string("v1.32.0-po-apiserver"));
  json_object_object_add(o, "gitCommit", json_object_new_string("0000000000000000000000000000000000000000"));
  json_object_object_add(o, "gitTreeState", json_object_new_string("clean"));
  json_object_object_add(o, "buildDate", json_object_new_string("2026-01-01T00:00:00Z"));
  json_object_object_add(o, "goVersion", json_object_new_string("go1.23.0"));
  json_object_object_add(o, "compiler", json_object_new_string("gc"));
  json_object_object_add(o, "platform", json_object_new_string("linux/amd64"));
  return o;
}

static json_object *stats_json(void) {
  json_object *o = json_object_new_object();
  size_t n = 0;
  for (size_t i = 0; i < po_as.nres; i++) n += po_as.res[i]->registered ? po_as.res[i]->nitems : 0;
  json_object_object_add(o, "resourceVersion", json_object_new_int64((int64_t)po_as.rv));
  json_object_object_add(o, "compactedResourceVersion", json_object_new_int64((int64_t)po_as.compacted_rv));
  json_object_object_add(o, "objects", json_object_new_int64((int64_t)n));
  json_object_object_add(o, "watches", json_object_new_int64((int64_t)po_as.watches));
  json_object_object_add(o, "requests", json_object_new_int64((int64_t)po_as.requests));
  return o;
}

/* Does one media range of Accept ask for application/json with g=apidiscovery.k8s.io, v=v2 and
 * as=APIGroupDiscoveryList (in any order)? */
static bool wants_aggregated(const char *accept) {
  if (!accept) return false;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", accept);
  for (char *save = NULL, *range = strtok_r(buf, ",", &save); range; range = strtok_r(NULL, ",", &save)) {
    bool json = false, g = false, v = false, as = false;
    for (char *s2 = NULL, *p = strtok_r(range, ";", &s2); p; p = strtok_r(NULL, ";", &s2)) {
      while (*p == ' ') p++;
      char *end = p + strlen(p);
      while (end > p && end[-1] == ' ') *--end = 0;
      if (!strcmp(p, "application/json")) json = true;
      else if (!strcmp(p, "g=apidiscovery.k8s.io")) g = true;
      else if (!strcmp(p, "v=v2")) v = true;
      else if (!strcmp(p, "as=APIGroupDiscoveryList")) as = true;
    }
    if (json && g && v && as) return true;
  }
  return false;
}

/* Returns a streaming response for watches, else NULL with r filled. */
static struct MHD_Response *route(struct MHD_Connection *c, const char *url, const char *method, Conn *cc,
                                  po_As_Reply *r) {
  char path[2048];
  snprintf(path, sizeof path, "%s", url);
  char *seg[16];
  int n = 0;
  for (char *save = NULL, *t = strtok_r(path, "/", &save); t && n < 16; t = strtok_r(NULL, "/", &save)) seg[n++] = t;
  bool get = !strcmp(method, "GET");
  if (n == 1 && (!strcmp(seg[0], "healthz") || !strcmp(seg[0], "livez") || !strcmp(seg[0], "readyz"))) {
    r->code = 200;
    r->body = strdup("ok");
    r->content_type = "text/plain; charset=utf-8";
    return NULL;
  }
  if (n == 1 && !strcmp(seg[0], "version")) {
    po_As_Reply_Json(r, 200, version_json());
    return NULL;
  }
  if (n >= 1 && !strcmp(seg[0], "admin")) {
    if (n == 2 && !strcmp(seg[1], "faults")) {
      if (!strcmp(method, "POST") || !strcmp(method, "PUT")) {
        json_object *in = cc->body ? json_tokener_parse(cc->body) : NULL;
        char msg[512] = "";
        pthread_mutex_lock(&po_as.mu);
        bool ok = po_As_Faults_Set(in, msg, sizeof msg);
        pthread_mutex_unlock(&po_as.mu);
        json_object_put(in);
        if (!ok) {
          po_As_Reply_Status(r, 400, "BadRequest", msg, NULL);
          return NULL;
        }
      }
      reply_locked_json(r, po_As_Faults_Json);
      return NULL;
    }
    if (n == 2 && !strcmp(seg[1], "stats")) {
      reply_locked_json(r, stats_json);
      return NULL;
    }
    not_found(r);
    return NULL;
  }
  if (n >= 1 && !strcmp(seg[0], "openapi")) {
    if (n == 2 && !strcmp(seg[1], "v3")) {
      reply_locked_json(r, po_As_OpenApi_Root);
      return NULL;
    }
    if (n >= 4 && !strcmp(seg[1], "v3")) {
      json_object *doc = NULL;
      pthread_mutex_lock(&po_as.mu);
      if (n == 4 && !strcmp(seg[2], "api")) doc = po_As_OpenApi_GroupVersion("", seg[3]);
      if (n == 5 && !strcmp(seg[2], "apis")) doc = po_As_OpenApi_GroupVersion(seg[3], seg[4]);
      pthread_mutex_unlock(&po_as.mu);
      if (doc) po_As_Reply_Json(r, 200, doc);
      else not_found(r);
      return NULL;
    }
    not_found(r); /* no /openapi/v2: kubectl then relies on v3 and server-side validation */
    return NULL;
  }
  int base;
  const char *group, *version;
  /* Aggregated discovery when the client offers it (kubectl 1.32 does), else the legacy lists. */
  bool aggregated = wants_aggregated(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"));
  if (n == 1 && aggregated && (!strcmp(seg[0], "api") || !strcmp(seg[0], "apis"))) {
    pthread_mutex_lock(&po_as.mu);
    json_object *o = po_As_Discovery_Aggregated(!strcmp(seg[0], "api"));
    pthread_mutex_unlock(&po_as.mu);
    po_As_Reply_Json(r, 200, o);
    r->content_type = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    return NULL;
  }
  if (n >= 1 && !strcmp(seg[0], "api")) {
    if (n == 1) {
      reply_locked_json(r, po_As_Discovery_Api);
      return NULL;
    }
    group = "";
    version = seg[1];
    base = 2;
  } else if (n >= 1 && !strcmp(seg[0], "apis")) {
    if (n == 1) {
      reply_locked_json(r, po_As_Discovery_Apis);
      return NULL;
    }
    if (n == 2) {
      pthread_mutex_lock(&po_as.mu);
      json_object *g = po_As_Discovery_Group(seg[1]);
      pthread_mutex_unlock(&po_as.mu);
      if (g) po_As_Reply_Json(r, 200, g);
      else not_found(r);
      return NULL;
    }
    group = seg[1];
    version = seg[2];
    base = 3;
  } else {
    not_found(r);
    return NULL;
  }
  int m = n - base;
  char **s = seg + base;
  if (m == 0) {
    pthread_mutex_lock(&po_as.mu);
    json_object *l = po_As_Discovery_Resources(group, version);
    pthread_mutex_unlock(&po_as.mu);
    if (l) po_As_Reply_Json(r, 200, l);
    else not_found(r);
    return NULL;
  }
  po_As_Request q = {.method = method, .group = group, .version = version};
  const char *plural;
  if (!strcmp(s[0], "namespaces") && m >= 3 && !(m == 3 && (!strcmp(s[2], "status") || !strcmp(s[2], "finalize")))) {
    if (m > 5) {
      not_found(r);
      return NULL;
    }
    q.ns = s[1];
    plural = s[2];
    q.name = m > 3 ? s[3] : NULL;
    q.sub = m > 4 ? s[4] : NULL;
  } else {
    if (m > 3) {
      not_found(r);
      return NULL;
    }
    plural = s[0];
    q.name = m > 1 ? s[1] : NULL;
    q.sub = m > 2 ? s[2] : NULL;
  }
  pthread_mutex_lock(&po_as.mu);
  q.res = po_As_Registry_Find(group, version, plural);
  pthread_mutex_unlock(&po_as.mu);
  if (!q.res || (q.ns && !q.res->namespaced)) {
    not_found(r);
    return NULL;
  }
  q.body = cc->body;
  q.body_len = cc->len;
  q.content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
  q.accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
  q.label_selector = arg(c, "labelSelector");
  q.field_selector = arg(c, "fieldSelector");
  q.continue_token = arg(c, "continue");
  q.resource_version = arg(c, "resourceVersion");
  q.rv_match = arg(c, "resourceVersionMatch");
  q.field_manager = arg(c, "fieldManager");
  q.field_validation = arg(c, "fieldValidation");
  q.dry_run = arg(c, "dryRun");
  q.include_object = arg(c, "includeObject");
  q.propagation_policy = arg(c, "propagationPolicy");
  q.force = arg_true(c, "force");
  q.watch = arg_true(c, "watch");
  q.bookmarks = arg_true(c, "allowWatchBookmarks");
  q.send_initial = arg_true(c, "sendInitialEvents");
  const char *lim = arg(c, "limit"), *to = arg(c, "timeoutSeconds");
  q.limit = lim ? strtol(lim, NULL, 10) : 0;
  q.timeout_seconds = to ? strtol(to, NULL, 10) : 0;
  if (get && q.watch && !q.name) return po_As_Watch_Start(&q, c, r);
  po_As_Objects_Handle(&q, r);
  return NULL;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_size, void **con_cls) {
  (void)cls;
  (void)version;
  Conn *cc = *con_cls;
  if (!cc) {
    cc = calloc(1, sizeof *cc);
    *con_cls = cc;
    return MHD_YES;
  }
  if (*upload_size) {
    if (cc->len + *upload_size > kMaxBody) cc->too_big = true;
    else {
      if (cc->len + *upload_size + 1 > cc->cap) {
        cc->cap = (cc->len + *upload_size + 1) * 2;
        cc->body = realloc(cc->body, cc->cap);
      }
      memcpy(cc->body + cc->len, upload_data, *upload_size);
      cc->len += *upload_size;
      cc->body[cc->len] = 0;
    }
    *upload_size = 0;
    return MHD_YES;
  }
  po_As_Reply r = {0};
  pthread_mutex_lock(&po_as.mu);
  po_as.requests++;
  int latency = po_as.faults.latency_ms;
  pthread_mutex_unlock(&po_as.mu);
  bool public_path = !strcmp(url, "/healthz") || !strcmp(url, "/livez") || !strcmp(url, "/readyz") || !strcmp(url, "/version");
  struct MHD_Response *stream = NULL;
  if (!public_path && !authorized(c)) {
    po_As_Reply_Status(&r, 401, "Unauthorized", "Unauthorized", NULL);
  } else if (cc->too_big) {
    po_As_Reply_Status(&r, 413, "RequestEntityTooLarge", "Request entity too large: limit is 8388608", NULL);
  } else {
    if (latency > 0 && strncmp(url, "/admin", 6) != 0) {
      struct timespec ts = {latency / 1000, (latency % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    }
    /* faults are decided under the lock: route() calls po_As_Faults_Intercept via this wrapper */
    pthread_mutex_lock(&po_as.mu);
    bool api = !strncmp(url, "/api", 4);
    bool faulted = api && po_As_Faults_Intercept(&r);
    pthread_mutex_unlock(&po_as.mu);
    if (!faulted) stream = route(c, url, method, cc, &r);
  }
  po_As_Log(kPo_As_LogDebug, "%s %s -> %d", method, url, stream ? 200 : r.code);
  enum MHD_Result ret;
  if (stream) {
    ret = MHD_queue_response(c, 200, stream);
    MHD_destroy_response(stream);
  } else {
    ret = send_reply(c, &r);
  }
  po_As_Reply_Free(&r);
  return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
  (void)cls;
  (void)c;
  (void)toe;
  Conn *cc = *con_cls;
  if (cc) {
    free(cc->body);
    free(cc);
  }
  *con_cls = NULL;
}

struct MHD_Daemon *po_As_Router_Start(const po_As_Listen *l, int *bound_port, char *msg, size_t msgsz) {
  g_tokens = l->tokens;
  g_ntokens = l->ntokens;
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  /* poll(), not select(): no FD_SETSIZE ceiling on open connections (each watch holds one) */
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
  const char *host = l->host && l->host[0] ? l->host : "127.0.0.1";
  struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)l->port);
  } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons((uint16_t)l->port);
    flags |= MHD_USE_IPv6;
  } else if (!strcmp(host, "localhost")) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)l->port);
    s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else {
    snprintf(msg, msgsz, "--listen: \"%s\" is not an IP address (use 127.0.0.1, ::1 or localhost)", host);
    return NULL;
  }
  if (l->cert_pem) flags |= MHD_USE_TLS;
  struct MHD_Daemon *d;
  if (l->cert_pem)
    d = MHD_start_daemon(flags, 0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                         MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 0u,
                         MHD_OPTION_HTTPS_MEM_CERT, l->cert_pem, MHD_OPTION_HTTPS_MEM_KEY, l->key_pem,
                         MHD_OPTION_LISTEN_BACKLOG_SIZE, 256u, MHD_OPTION_CONNECTION_LIMIT, 4000u, MHD_OPTION_END);
  else
    d = MHD_start_daemon(flags, 0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                         MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 0u,
                         MHD_OPTION_LISTEN_BACKLOG_SIZE, 256u, MHD_OPTION_CONNECTION_LIMIT, 4000u, MHD_OPTION_END);
  if (!d) {
    snprintf(msg, msgsz, "cannot listen on %s:%d", host, l->port);
    return NULL;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  *bound_port = info ? info->port : l->port;
  return d;
}
