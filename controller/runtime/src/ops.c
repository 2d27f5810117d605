/* The operations server: probes and metrics, served by the HTTP layer (po/runtime/http.h). */
#include "po/runtime/ops.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/http.h"

typedef struct {
  char *name;
  po_CheckFn fn;
  void *ctx;
} Check;

typedef struct {
  Check *items;
  size_t n, cap;
} CheckList;

struct po_OpsServer {
  po_HttpServer *http;
  char address_text[300];
  po_Metrics *metrics;
  po_Logger *log;
  pthread_mutex_t mu; /* guards the check lists */
  CheckList ready, health;
};

static bool ping(void *ctx, char *reason, size_t cap) { return true; }

static bool valid_check_name(const char *s) {
  if (!s || !*s) return false;
  for (; *s; s++) {
    char c = *s;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '-' || c == '_' || c == '.'))
      return false;
  }
  return true;
}

static bool add_check(po_OpsServer *s, CheckList *l, const char *endpoint, const char *name,
                      po_CheckFn fn, void *ctx, po_CtlStatus *st) {
  if (!valid_check_name(name) || !fn)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage,
                           "%s check \"%s\": a name of letters, digits, '.', '_', '-' and a "
                           "function are required",
                           endpoint, name ? name : "(null)");
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < l->n; i++) {
    if (strcmp(l->items[i].name, name) == 0) {
      pthread_mutex_unlock(&s->mu);
      return po_CtlStatus_Set(st, kPo_Ctl_Usage, "%s check \"%s\" is already registered",
                             endpoint, name);
    }
  }
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 4;
    Check *items = realloc(l->items, cap * sizeof *items);
    if (!items) {
      pthread_mutex_unlock(&s->mu);
      return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "%s check \"%s\": out of memory", endpoint,
                             name);
    }
    l->items = items;
    l->cap = cap;
  }
  char *copy = strdup(name);
  if (!copy) {
    pthread_mutex_unlock(&s->mu);
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "%s check \"%s\": out of memory", endpoint,
                           name);
  }
  l->items[l->n++] = (Check){copy, fn, ctx};
  pthread_mutex_unlock(&s->mu);
  return true;
}

bool po_OpsServer_AddReadyCheck(po_OpsServer *s, const char *name, po_CheckFn fn, void *ctx,
                                po_CtlStatus *st) {
  return add_check(s, &s->ready, "readyz", name, fn, ctx, st);
}

bool po_OpsServer_AddHealthCheck(po_OpsServer *s, const char *name, po_CheckFn fn, void *ctx,
                                 po_CtlStatus *st) {
  return add_check(s, &s->health, "healthz", name, fn, ctx, st);
}

static bool handle(void *ctx, po_HttpRequest *rq);

po_OpsServer *po_OpsServer_New(const po_OpsOptions *opts, po_CtlStatus *st) {
  const char *address = opts && opts->address ? opts->address : ":8081";
  po_OpsServer *s = calloc(1, sizeof *s);
  if (!s) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "operations server: out of memory");
    return NULL;
  }
  snprintf(s->address_text, sizeof s->address_text, "%s", address);
  s->metrics = opts ? opts->metrics : NULL;
  s->log = opts ? opts->log : NULL;
  pthread_mutex_init(&s->mu, NULL);
  /* Probes and scrapes are small GETs from the kubelet and Prometheus: one thread, a few
   * connections, no bodies to speak of. The same bounds against idle or slow clients as the
   * webhook's, scaled down. */
  s->http = po_HttpServer_New(&(po_HttpOptions){.name = "operations server",
                                                .address = address,
                                                .threads = 1,
                                                .max_connections = 64,
                                                .max_per_client = 64,
                                                .header_timeout = 10,
                                                .request_timeout = 10,
                                                .idle_timeout = 10,
                                                .max_body = 4096,
                                                .handler = handle,
                                                .ctx = s,
                                                .log = s->log},
                              st);
  if (!s->http || !po_OpsServer_AddHealthCheck(s, "ping", ping, NULL, st)) {
    po_OpsServer_Free(s);
    return NULL;
  }
  return s;
}

static void free_checks(CheckList *l) {
  for (size_t i = 0; i < l->n; i++) free(l->items[i].name);
  free(l->items);
}

void po_OpsServer_Free(po_OpsServer *s) {
  if (!s) return;
  po_HttpServer_Free(s->http);
  free_checks(&s->ready);
  free_checks(&s->health);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* --- request handling ------------------------------------------------------------------- */

typedef struct {
  char *data;
  size_t len, cap;
} Text;

static void text_add(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(Text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = t->cap - t->len;
    int n = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (t->data && (size_t)n < room) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + (size_t)n + 1) cap *= 2;
    char *d = realloc(t->data, cap);
    if (!d) return;
    t->data = d;
    t->cap = cap;
  }
}

/* Copies the list so checks run without the lock (a slow check must not block registration). */
static Check *snapshot(po_OpsServer *s, CheckList *l, size_t *n) {
  pthread_mutex_lock(&s->mu);
  *n = l->n;
  Check *copy = malloc((l->n ? l->n : 1) * sizeof *copy);
  if (copy && l->n) memcpy(copy, l->items, l->n * sizeof *copy);
  pthread_mutex_unlock(&s->mu);
  return copy;
}

static bool serve_checks(po_OpsServer *s, po_HttpRequest *rq, CheckList *l, const char *endpoint,
                         const char *only) {
  size_t n;
  Check *checks = snapshot(s, l, &n);
  if (!checks) return po_HttpRequest_Text(rq, 500, "internal server error: out of memory\n");
  bool verbose = po_HttpRequest_HasArg(rq, "verbose");
  if (only) {
    for (size_t i = 0; i < n; i++) {
      if (strcmp(checks[i].name, only) != 0) continue;
      char reason[256] = "";
      bool ok = checks[i].fn(checks[i].ctx, reason, sizeof reason);
      free(checks);
      if (ok) return po_HttpRequest_Text(rq, 200, "ok");
      char body[300];
      snprintf(body, sizeof body, "internal server error: %s\n", reason[0] ? reason : "failed");
      return po_HttpRequest_Text(rq, 500, body);
    }
    free(checks);
    return po_HttpRequest_Text(rq, 404, "404 page not found\n");
  }
  Text t = {0};
  bool healthy = true;
  for (size_t i = 0; i < n; i++) {
    if (po_HttpRequest_HasArgValue(rq, "exclude", checks[i].name)) {
      text_add(&t, "[+]%s excluded: ok\n", checks[i].name);
      continue;
    }
    char reason[256] = "";
    if (checks[i].fn(checks[i].ctx, reason, sizeof reason)) {
      text_add(&t, "[+]%s ok\n", checks[i].name);
    } else {
      healthy = false;
      text_add(&t, "[-]%s failed: %s\n", checks[i].name,
               verbose ? (reason[0] ? reason : "failed") : "reason withheld");
      po_Log_Info(s->log, "probe check failed", po_Str("endpoint", endpoint),
                  po_Str("check", checks[i].name), po_Str("reason", reason));
    }
  }
  free(checks);
  if (healthy && !verbose) {
    free(t.data);
    return po_HttpRequest_Text(rq, 200, "ok");
  }
  text_add(&t, "%s check %s\n", endpoint, healthy ? "passed" : "failed");
  if (!t.data) return po_HttpRequest_Text(rq, 500, "internal server error: out of memory\n");
  return po_HttpRequest_RespondOwned(rq, healthy ? 200 : 500, "text/plain; charset=utf-8", t.data, t.len);
}

static bool handle(void *ctx, po_HttpRequest *rq) {
  po_OpsServer *s = ctx;
  const char *method = po_HttpRequest_Method(rq), *url = po_HttpRequest_Path(rq);
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return po_HttpRequest_Text(rq, 405, "method not allowed: use GET\n");
  if (strcmp(url, "/metrics") == 0 && s->metrics) {
    char *text;
    size_t len;
    if (!po_Metrics_Write(s->metrics, &text, &len))
      return po_HttpRequest_Text(rq, 500, "internal server error: out of memory\n");
    return po_HttpRequest_RespondOwned(rq, 200, PO_METRICS_CONTENT_TYPE, text, len);
  }
  static const struct {
    const char *prefix;
    const char *endpoint;
    bool ready;
  } kProbes[] = {{"/healthz", "healthz", false}, {"/livez", "livez", false},
                 {"/readyz", "readyz", true}};
  for (size_t i = 0; i < sizeof kProbes / sizeof kProbes[0]; i++) {
    size_t n = strlen(kProbes[i].prefix);
    if (strncmp(url, kProbes[i].prefix, n) != 0) continue;
    CheckList *l = kProbes[i].ready ? &s->ready : &s->health;
    if (url[n] == '\0' || (url[n] == '/' && url[n + 1] == '\0'))
      return serve_checks(s, rq, l, kProbes[i].endpoint, NULL);
    if (url[n] == '/') return serve_checks(s, rq, l, kProbes[i].endpoint, url + n + 1);
  }
  return po_HttpRequest_Text(rq, 404, "404 page not found\n");
}

/* --- lifecycle --------------------------------------------------------------------------- */

bool po_OpsServer_Start(po_OpsServer *s, po_CtlStatus *st) {
  if (po_HttpServer_Port(s->http) || po_HttpServer_Disabled(s->http)) return true;
  if (!po_HttpServer_Start(s->http, st)) return false;
  po_Log_Info(s->log, "serving probes and metrics", po_Str("address", s->address_text),
              po_Int("port", po_HttpServer_Port(s->http)));
  return true;
}

int po_OpsServer_Port(const po_OpsServer *s) { return po_HttpServer_Port(s->http); }

void po_OpsServer_Stop(po_OpsServer *s) { po_HttpServer_Stop(s->http); }

static bool runnable_start(void *ctx, po_CtlStatus *st) { return po_OpsServer_Start(ctx, st); }
static bool runnable_stop(void *ctx, int64_t deadline) {
  po_OpsServer_Stop(ctx);
  return true;
}

po_Runnable po_OpsServer_Runnable(po_OpsServer *s) {
  return (po_Runnable){.name = "operations-server", .start = runnable_start,
                       .stop = runnable_stop, .ctx = s, .needs_leader = false};
}
