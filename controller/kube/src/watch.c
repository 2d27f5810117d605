/* po_KubeClient_Watch: one watch request on a curl multi handle (so a cancel can wake it), the
 * body fed straight into a po_WatchParser. */
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cancel_internal.h"
#include "client_internal.h"
#include "po/kube/watch_parser.h"

typedef struct {
  CURL *h;
  po_WatchParser *parser;
  po_KubeWatchFn fn;
  po_KubeWatchTextFn text_fn;
  void *ctx;
  long http;        /* 0 until headers arrived */
  po_Buf_ errbody;  /* body of a non-200 answer, for the Status */
  po_WatchFeedResult result;
  po_CtlStatus st; /* the parser's error, or the ERROR event's Status */
  bool stopped_by_fn, error_event;
} WatchState;

static bool on_event(void *ctx, po_KubeWatchEventType type, json_object *obj) {
  WatchState *w = ctx;
  if (type == kPo_KubeWatch_Error) {
    po_KubeStatus_FromObject(&w->st, 0, obj);
    w->error_event = true;
    return false;
  }
  bool more;
  if (w->text_fn) {
    size_t len;
    const char *text = po_WatchParser_ObjectText(w->parser, &len);
    more = w->text_fn(w->ctx, type, obj, text, len);
  } else {
    more = w->fn(w->ctx, type, obj);
  }
  if (!more) {
    w->stopped_by_fn = true;
    return false;
  }
  return true;
}

static size_t on_data(char *ptr, size_t sz, size_t nm, void *ud) {
  WatchState *w = ud;
  size_t n = sz * nm;
  if (!w->http) curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->http);
  if (w->http != 200) {
    if (w->errbody.len + n > (1u << 20)) return n; /* enough to decode a Status */
    if (w->errbody.len + n + 1 > w->errbody.cap) {
      size_t cap = (w->errbody.len + n + 1) * 2;
      char *d = realloc(w->errbody.data, cap);
      if (!d) return 0;
      w->errbody.data = d;
      w->errbody.cap = cap;
    }
    memcpy(w->errbody.data + w->errbody.len, ptr, n);
    w->errbody.len += n;
    w->errbody.data[w->errbody.len] = '\0';
    return n;
  }
  w->result = po_WatchParser_Feed(w->parser, ptr, n, on_event, w, &w->st);
  return w->result == kPo_WatchFeed_More ? n : 0; /* a short count aborts the transfer */
}

bool po_KubeClient_Watch(po_KubeClient *c, const po_KubeRef *ref, const po_KubeWatchOptions *opt,
                         po_KubeWatchFn fn, void *ctx, po_KubeCancel *cancel, po_CtlStatus *st) {
  po_KubeWatchOptions o = {0};
  if (opt) o = *opt;
  char q[6144] = "watch=true", to[32] = "";
  if (o.timeout_seconds > 0) snprintf(to, sizeof to, "%ld", o.timeout_seconds);
  if (!po_Query_Add_(q, sizeof q, "labelSelector", o.label_selector) ||
      !po_Query_Add_(q, sizeof q, "fieldSelector", o.field_selector) ||
      !po_Query_Add_(q, sizeof q, "resourceVersion", o.resource_version) ||
      !po_Query_Add_(q, sizeof q, "timeoutSeconds", to) ||
      !po_Query_Add_(q, sizeof q, "allowWatchBookmarks", o.allow_bookmarks ? "true" : NULL))
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "watch options too long");
  po_KubeRef r = *ref;
  r.name = NULL;
  r.subresource = NULL;
  char url[8192];
  if (!po_KubeClient_Url_(c, &r, q, url, sizeof url, st)) return false;
  if (po_KubeCancel_Fired(cancel)) return po_CtlStatus_Set(st, kPo_Ctl_Stopped, "watch stopped");

  if (!po_KubeClient_RateLimitCancel_(c, cancel)) return po_CtlStatus_Set(st, kPo_Ctl_Stopped, "watch stopped");
  WatchState w = {0};
  w.fn = fn;
  w.text_fn = o.text_fn;
  w.ctx = ctx;
  w.parser = po_WatchParser_New(0);
  if (w.parser && o.peek) po_WatchParser_SetPeek(w.parser, o.peek, ctx);
  if (w.parser) po_WatchParser_SetCutManagedFields(w.parser, o.cut_managed_fields);
  w.h = curl_easy_init();
  CURLM *m = curl_multi_init();
  struct curl_slist *headers = NULL;
  bool ok = w.parser && w.h && m;
  if (!ok) po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  if (ok) ok = po_KubeClient_Setup_(c, w.h, "GET", url, &headers, NULL, st);
  if (ok) {
    curl_easy_setopt(w.h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(w.h, CURLOPT_WRITEDATA, &w);
    /* The server ends the stream after timeoutSeconds; this only catches a dead peer. */
    if (o.timeout_seconds > 0) curl_easy_setopt(w.h, CURLOPT_TIMEOUT_MS, (o.timeout_seconds + 60) * 1000L);
    curl_easy_setopt(w.h, CURLOPT_LOW_SPEED_LIMIT, 0L);
    curl_multi_add_handle(m, w.h);
    po_KubeCancel_SetMulti_(cancel, m);
    int running = 1;
    int64_t t0 = c->opt.clock->monotonic_ns(c->opt.clock->ctx);
    while (running && !po_KubeCancel_Fired(cancel)) {
      if (curl_multi_perform(m, &running) != CURLM_OK) break;
      if (running) curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    po_KubeCancel_SetMulti_(cancel, NULL);
    CURLcode rc = CURLE_OK;
    bool done = false;
    int left;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &left)) != NULL)
      if (msg->msg == CURLMSG_DONE) {
        rc = msg->data.result;
        done = true;
      }
    if (!w.http) curl_easy_getinfo(w.h, CURLINFO_RESPONSE_CODE, &w.http);
    if (w.http) po_KubeClient_NoteVersion_(c, w.h);
    if (c->opt.observer)
      c->opt.observer(c->opt.observer_ctx, "GET", w.http,
                      (double)(c->opt.clock->monotonic_ns(c->opt.clock->ctx) - t0) / 1e9);
    curl_multi_remove_handle(m, w.h);
    if (po_KubeCancel_Fired(cancel) && !w.stopped_by_fn && !w.error_event) {
      ok = po_CtlStatus_Set(st, kPo_Ctl_Stopped, "watch stopped");
    } else if (w.stopped_by_fn) {
      po_CtlStatus_Clear(st);
    } else if (w.error_event) {
      if (st) *st = w.st;
      ok = false;
    } else if (w.result == kPo_WatchFeed_Error) {
      if (st) *st = w.st;
      ok = false;
    } else if (w.http && w.http != 200) {
      ok = po_KubeStatus_FromResponse(st, w.http, w.errbody.data, w.errbody.len);
    } else if (!done || rc != CURLE_OK) {
      ok = po_CtlStatus_Set(st, kPo_Ctl_Transport, "watch %s: %s", url,
                             done ? curl_easy_strerror(rc) : "transfer did not complete");
    } else if (!po_WatchParser_Finish(w.parser, on_event, &w, &w.st) || w.error_event) {
      if (st) *st = w.st; /* a cut-off event, or a final ERROR event without a newline */
      ok = false;
    } else {
      po_CtlStatus_Clear(st);
    }
  }
  if (w.h) curl_easy_setopt(w.h, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all(headers);
  if (w.h) curl_easy_cleanup(w.h);
  if (m) curl_multi_cleanup(m);
  po_WatchParser_Free(w.parser);
  free(w.errbody.data);
  return ok;
}
