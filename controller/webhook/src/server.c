/* The webhook's HTTPS server: the admission routes over the process's one HTTP layer
 * (po/runtime/http.h), which holds the daemon, its limits, TLS and the request body. */
#include "po/webhook/server.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"
#include "po/runtime/budget.h"
#include "po/runtime/http.h"
#include "po/runtime/log.h"
#include "po/webhook/admission.h"
#include "po/webhook/mutate.h"

struct po_WebhookServer {
  po_WebhookOptions opt;
  po_Budget *budget; /* what requests in flight may hold, bodies and decoding together */
  po_Logger *log;  /* the HTTP layer's messages, as JSON lines on stderr */
  po_Logger *owned; /* log, when the options gave none */
  po_HttpServer *http;
};

static void observe(po_WebhookServer *s, int status, bool allowed, double seconds) {
  if (s->opt.observe) s->opt.observe(s->opt.observe_ctx, status, allowed, seconds);
}

static void refused(void *ctx, int status, double seconds) { observe(ctx, status, false, seconds); }

static void budget_changed(void *ctx, size_t in_flight) {
  po_WebhookServer *s = ctx;
  if (s->opt.observe_budget) s->opt.observe_budget(s->opt.observe_ctx, in_flight, false);
}

static void budget_refused(void *ctx, size_t asked) {
  (void)asked;
  po_WebhookServer *s = ctx;
  if (s->opt.observe_budget) s->opt.observe_budget(s->opt.observe_ctx, 0, true);
}

/* The body is in (the HTTP layer reserved its bytes as they arrived); decoding it costs a multiple
 * of it that depends on its shape and kind (po_Admission_Cost, one scan), reserved before
 * anything is decoded. No estimate is reserved before that: the body alone holds nothing of
 * the budget while it is read (a sender that sends nothing must hold nothing), and the scan is
 * the exact figure. False: answered (429 or 413). */
static bool reserve_decode(po_WebhookServer *s, po_HttpRequest *rq, const char *body, size_t len, bool *ok) {
  size_t cost = po_Admission_Cost(body, len);
  unsigned over = po_HttpRequest_Reserve(rq, cost);
  if (!over) return true;
  char msg[300];
  if (over == 429) {
    snprintf(msg, sizeof msg,
             "webhook busy: the reviews in flight hold its memory budget (%zu bytes); retry in a second\n",
             po_Budget_Bytes(s->budget));
    *ok = po_HttpRequest_Busy(rq, msg);
  } else {
    snprintf(msg, sizeof msg,
             "deciding this review would hold %zu bytes beside its %zu, over the webhook's whole memory budget "
             "(%zu bytes, --webhook-memory-budget)\n",
             cost, len, po_Budget_Bytes(s->budget));
    *ok = po_HttpRequest_Text(rq, 413, msg);
  }
  observe(s, (int)over, false, po_HttpRequest_Seconds(rq));
  return false;
}

static bool respond(po_HttpRequest *rq, json_object *out, const po_CtlStatus *st) {
  if (!out) {
    char msg[300];
    snprintf(msg, sizeof msg, "%.255s\n", st->message);
    return po_HttpRequest_Text(rq, (unsigned)st->http_status, msg);
  }
  const char *text = json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  bool ok = po_HttpRequest_Respond(rq, 200, "application/json", text, strlen(text));
  json_object_put(out);
  return ok;
}

static bool handle_mutate(po_WebhookServer *s, po_HttpRequest *rq) {
  po_CtlStatus st;
  size_t len;
  const char *body = po_HttpRequest_Body(rq, &len), *outcome = "error";
  bool ok;
  if (!reserve_decode(s, rq, body, len, &ok)) return ok;
  json_object *out = po_Admission_Mutate(body, len, &s->opt.mutate, &st, &outcome);
  ok = respond(rq, out, &st);
  if (s->opt.observe_mutate && out) s->opt.observe_mutate(s->opt.observe_ctx, outcome);
  observe(s, (int)st.http_status, out != NULL, po_HttpRequest_Seconds(rq));
  return ok;
}

static bool handle(void *ctx, po_HttpRequest *rq) {
  po_WebhookServer *s = ctx;
  const char *method = po_HttpRequest_Method(rq), *url = po_HttpRequest_Path(rq);
  if (strcmp(method, "GET") == 0 && (strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0))
    return po_HttpRequest_Text(rq, 200, "ok");
  bool mutate = strcmp(url, "/mutate") == 0;
  if (!mutate && strcmp(url, "/validate") != 0)
    return po_HttpRequest_Text(rq, 404, "not found: POST AdmissionReviews to /validate or /mutate\n");
  if (strcmp(method, "POST") != 0)
    return po_HttpRequest_Text(rq, 405, "method not allowed: POST AdmissionReviews to /validate or /mutate\n");
  if (mutate) return handle_mutate(s, rq);
  size_t len;
  const char *body = po_HttpRequest_Body(rq, &len);
  bool ok, allowed = false;
  if (!reserve_decode(s, rq, body, len, &ok)) return ok;
  po_Arena *a = po_Arena_New();
  if (!a) return po_HttpRequest_Text(rq, 500, "out of memory\n");
  po_CtlStatus st;
  po_AdmissionOptions ao = {.tenancy = s->opt.tenancy, .targets = s->opt.targets, .controller_user = s->opt.mutate.controller_user};
  json_object *out = po_Admission_Review(body, len, &ao, a, &st);
  if (out) {
    json_object *resp = NULL, *al = NULL;
    if (json_object_object_get_ex(out, "response", &resp) && json_object_object_get_ex(resp, "allowed", &al))
      allowed = json_object_get_boolean(al);
    const char *text = json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    ok = po_HttpRequest_Respond(rq, 200, "application/json", text, strlen(text));
    json_object_put(out);
  } else {
    ok = respond(rq, NULL, &st);
  }
  po_Arena_Free(a);
  observe(s, (int)st.http_status, allowed, po_HttpRequest_Seconds(rq));
  return ok;
}

po_WebhookServer *po_WebhookServer_Start(const po_WebhookOptions *opt, po_CtlStatus *st) {
  po_CtlStatus local;
  if (!st) st = &local; /* the caller's may be NULL, as everywhere; the HTTP layer's code is read */
  po_WebhookServer *s = calloc(1, sizeof *s);
  if (!s) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory"), NULL;
  s->opt = *opt;
  po_CtlStatus_Clear(st);
  s->budget = po_Budget_New(&(po_BudgetOptions){.bytes = opt->memory_budget ? opt->memory_budget : (size_t)kPo_WebhookMemoryBudgetMiB << 20,
                                                .changed = budget_changed,
                                                .refused = budget_refused,
                                                .ctx = s},
                            st);
  if (!s->budget) {
    free(s);
    return NULL;
  }
  s->log = opt->log ? opt->log : (s->owned = po_Logger_New(&(po_LoggerOptions){.name = "webhook.http", .level = kPo_LogLevel_Info}));
  s->http = po_HttpServer_New(&(po_HttpOptions){.name = "webhook",
                                                .address = opt->address,
                                                .cert_file = opt->cert_file,
                                                .key_file = opt->key_file,
                                                .threads = opt->threads,
                                                .max_connections = opt->max_connections,
                                                .max_per_client = opt->max_per_client,
                                                .header_timeout = opt->handshake_timeout,
                                                .request_timeout = opt->request_timeout,
                                                .idle_timeout = opt->idle_timeout,
                                                .max_body = opt->max_body,
                                                .budget = s->budget,
                                                .handler = handle,
                                                .ctx = s,
                                                .refused = refused,
                                                .log = s->log},
                              st);
  if (!s->http) {
    goto fail;
  }
  if (po_HttpServer_Disabled(s->http)) {
    po_CtlStatus_Set(st, kPo_Ctl_Usage, "listen address \"0\" disables the webhook: there is nothing to start");
    goto fail;
  }
  if (!po_HttpServer_Start(s->http, st)) {
    if (st->code != kPo_Ctl_Usage) po_CtlStatus_Set(st, kPo_Ctl_System, "cannot listen on %s", opt->address);
    goto fail;
  }
  return s;
fail:
  po_WebhookServer_Stop(s);
  return NULL;
}

uint16_t po_WebhookServer_Port(const po_WebhookServer *s) { return po_HttpServer_Port(s->http); }

size_t po_WebhookServer_MemoryBudget(const po_WebhookServer *s) { return po_Budget_Bytes(s->budget); }

void po_WebhookServer_Stop(po_WebhookServer *s) {
  if (!s) return;
  po_HttpServer_Free(s->http);
  po_Budget_Free(s->budget);
  po_Logger_Free(s->owned);
  free(s);
}
