/* Watch streams: newline-delimited JSON events read from the event ring by libmicrohttpd's
 * content-reader callback, which blocks (one thread per connection) on po_as.cond. */
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver.h"

typedef struct Watch {
  po_As_Resource *res;
  char *av, *ns;
  po_As_Selector *sel;
  uint64_t pos;
  bool bookmarks, table, expired, finish, drop, initial_end;
  struct timespec deadline, next_bookmark;
  json_object **initial;
  size_t ninitial, iinitial;
  char *pending;
  size_t plen, poff;
  int sent, drop_every;
  char *version;
  int fd; /* the client's socket, watched for hang-ups while idle; -1 unknown */
} Watch;

/* A client that went away is noticed only when writing; an idle stream checks the socket
 * instead, so abandoned watches do not hold a thread until their timeout. */
static bool client_gone(const Watch *w) {
  if (w->fd < 0) return false;
  struct pollfd pfd = {.fd = w->fd, .events = POLLRDHUP};
  return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static void ts_add_ms(struct timespec *t, long ms) {
  t->tv_sec += ms / 1000;
  t->tv_nsec += (ms % 1000) * 1000000L;
  if (t->tv_nsec >= 1000000000L) {
    t->tv_sec++;
    t->tv_nsec -= 1000000000L;
  }
}

static bool ts_before(const struct timespec *a, const struct timespec *b) {
  return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static const char *type_name(int t) { return t == kPo_As_Added ? "ADDED" : t == kPo_As_Modified ? "MODIFIED" : "DELETED"; }

static void set_pending(Watch *w, const char *type, char *objtext) {
  free(w->pending);
  w->pending = po_As_Printf("{\"type\":\"%s\",\"object\":%s}\n", type, objtext);
  w->plen = strlen(w->pending);
  w->poff = 0;
  free(objtext);
}

static void emit_object(Watch *w, const char *type, json_object *obj) {
  char *s;
  if (w->table) {
    json_object *t = po_As_Table(w->res, w->version, &obj, 1, false);
    s = strdup(json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN));
    json_object_put(t);
  } else {
    s = po_As_Serialize(obj, w->av);
  }
  set_pending(w, type, s);
  w->sent++;
  if (w->drop_every > 0 && w->sent >= w->drop_every) {
    w->finish = true;
    w->drop = true;
  }
}

static void emit_expired(Watch *w, const char *why) {
  char *s = po_As_Printf("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"%s\",\"reason\":\"Expired\",\"code\":410}", why);
  set_pending(w, "ERROR", s);
  w->finish = true;
}

static bool matches(Watch *w, json_object *obj) {
  if (!obj) return false;
  if (w->ns) {
    const char *ns = po_As_MetaStr(obj, "namespace");
    if (!ns || strcmp(ns, w->ns) != 0) return false;
  }
  return po_As_Selector_Match(w->sel, obj);
}

/* Lock held. The fault holdWatchMs: an event of a held resource not sent before it is that old
 * (a watch lagging its writes, as one behind a slow or restarted apiserver cache). 0: send it; 1:
 * waited (the lock released meanwhile: the ring may have moved, look again); -1: the stream's
 * deadline came first (it ends without it). */
static int held(Watch *w, const po_As_Event *e) {
  const po_As_Faults *f = &po_as.faults;
  if (f->hold_watch_ms <= 0 || (f->hold_watch_resource[0] && strcmp(f->hold_watch_resource, w->res->plural) != 0))
    return 0;
  struct timespec now, due = e->at;
  ts_add_ms(&due, f->hold_watch_ms);
  clock_gettime(CLOCK_REALTIME, &now);
  if (!ts_before(&now, &due)) return 0;
  if (!ts_before(&now, &w->deadline)) return -1;
  if (ts_before(&w->deadline, &due)) due = w->deadline;
  pthread_cond_timedwait(&po_as.cond, &po_as.mu, &due);
  return 1;
}

/* Lock held. Produces the next chunk into w->pending; false = the stream ends now. */
static bool produce(Watch *w) {
  for (;;) {
    if (po_as.stopping || !w->res->registered) return false;
    if (w->expired) {
      char why[128];
      snprintf(why, sizeof why, "too old resource version: %" PRIu64 " (%" PRIu64 ")", w->pos, po_as.compacted_rv + 1);
      w->expired = false;
      emit_expired(w, why);
      return true;
    }
    if (w->iinitial < w->ninitial) {
      emit_object(w, "ADDED", w->initial[w->iinitial++]);
      return true;
    }
    if (w->initial_end) { /* the watch-list protocol: initial state complete at this version */
      w->initial_end = false;
      char *s = po_As_Printf("{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%" PRIu64
                             "\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}", w->res->kind, w->av, w->pos);
      set_pending(w, "BOOKMARK", s);
      return true;
    }
    if (w->pos < po_as.compacted_rv) {
      w->expired = true;
      continue;
    }
    if (w->pos < po_as.rv && po_as.ring_len > 0) {
      uint64_t first = po_as.ring[po_as.ring_head].rv;
      uint64_t want = w->pos + 1;
      if (want < first) {
        w->expired = true;
        continue;
      }
      size_t idx = (size_t)(want - first);
      if (idx < po_as.ring_len) {
        po_As_Event *e = &po_as.ring[(po_as.ring_head + idx) % po_as.ring_cap];
        int h = e->res == w->res ? held(w, e) : 0;
        if (h < 0) return false;
        if (h) continue;
        w->pos = e->rv;
        if (e->res != w->res) continue;
        bool now = e->type != kPo_As_Deleted && matches(w, e->obj);
        bool before = e->type == kPo_As_Deleted ? matches(w, e->obj) : (e->old && matches(w, e->old));
        if (e->type == kPo_As_Added) before = false;
        const char *type = NULL;
        if (now && before) type = "MODIFIED";
        else if (now) type = e->type == kPo_As_Modified ? "ADDED" : type_name(e->type);
        else if (before) type = "DELETED";
        if (!type) continue;
        emit_object(w, type, e->obj);
        return true;
      }
    }
    /* nothing to send: wait for an event, the next bookmark or the deadline */
    struct timespec now, wake = w->deadline;
    clock_gettime(CLOCK_REALTIME, &now);
    if (!ts_before(&now, &w->deadline)) return false;
    if (w->bookmarks) {
      if (!ts_before(&now, &w->next_bookmark)) {
        w->next_bookmark = now;
        ts_add_ms(&w->next_bookmark, po_as.bookmark_ms);
        char *s = po_As_Printf("{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%" PRIu64 "\"}}",
                               w->res->kind, w->av, w->pos);
        set_pending(w, "BOOKMARK", s);
        return true;
      }
      if (ts_before(&w->next_bookmark, &wake)) wake = w->next_bookmark;
    }
    struct timespec check = now;
    ts_add_ms(&check, 500);
    if (ts_before(&check, &wake)) wake = check;
    if (pthread_cond_timedwait(&po_as.cond, &po_as.mu, &wake) == ETIMEDOUT && client_gone(w)) return false;
  }
}

static ssize_t reader(void *cls, uint64_t off, char *buf, size_t max) {
  (void)off;
  Watch *w = cls;
  if (w->poff >= w->plen) {
    if (w->finish) return w->drop ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
    pthread_mutex_lock(&po_as.mu);
    bool more = produce(w);
    pthread_mutex_unlock(&po_as.mu);
    if (!more) return MHD_CONTENT_READER_END_OF_STREAM;
  }
  size_t n = w->plen - w->poff;
  if (n > max) n = max;
  memcpy(buf, w->pending + w->poff, n);
  w->poff += n;
  return (ssize_t)n;
}

static void release(void *cls) {
  Watch *w = cls;
  pthread_mutex_lock(&po_as.mu);
  for (size_t i = 0; i < w->ninitial; i++) json_object_put(w->initial[i]);
  po_as.watches--;
  pthread_mutex_unlock(&po_as.mu);
  free(w->initial);
  free(w->pending);
  free(w->av);
  free(w->ns);
  free(w->version);
  po_As_Selector_Free(w->sel);
  free(w);
}

struct MHD_Response *po_As_Watch_Start(po_As_Request *q, struct MHD_Connection *c, po_As_Reply *r) {
  char msg[512] = "";
  po_As_Selector *sel = po_As_Selector_Parse(q->label_selector, q->field_selector, msg, sizeof msg);
  if (!sel) {
    po_As_Reply_Status(r, 400, "BadRequest", msg, NULL);
    return NULL;
  }
  Watch *w = calloc(1, sizeof *w);
  w->res = q->res;
  w->sel = sel;
  w->av = po_As_ApiVersion(q->res, q->version);
  w->version = strdup(q->version);
  w->ns = q->res->namespaced ? po_As_Strdup(q->ns) : NULL;
  w->bookmarks = q->bookmarks;
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  w->fd = ci ? ci->connect_fd : -1;
  w->table = po_As_WantsTable(q->accept);
  clock_gettime(CLOCK_REALTIME, &w->deadline);
  w->next_bookmark = w->deadline;
  ts_add_ms(&w->next_bookmark, po_as.bookmark_ms);
  ts_add_ms(&w->deadline, (q->timeout_seconds > 0 ? q->timeout_seconds : 1800) * 1000L);
  const char *rv = q->resource_version;
  uint64_t from = 0;
  if (rv && rv[0] && strcmp(rv, "0") != 0) {
    char *end;
    from = strtoull(rv, &end, 10);
    if (*end || !from) {
      free(w->av);
      free(w->version);
      free(w->ns);
      po_As_Selector_Free(sel);
      free(w);
      po_As_Reply_Status(r, 400, "BadRequest", "resourceVersion: Invalid value: must be a number", NULL);
      return NULL;
    }
  }
  pthread_mutex_lock(&po_as.mu);
  po_as.watches++;
  w->drop_every = po_as.faults.drop_watch_every;
  if (po_As_Faults_Roll(po_as.faults.force_410_percent)) po_as.faults.force_410++;
  if (po_as.faults.force_410 > 0) {
    po_as.faults.force_410--;
    w->expired = true;
    w->pos = from ? from : po_as.rv;
  } else if (!from || q->send_initial) {
    w->initial_end = q->send_initial && q->bookmarks;
    w->pos = po_as.rv;
    w->initial = malloc((q->res->nitems + 1) * sizeof *w->initial);
    for (size_t i = 0; i < q->res->nitems; i++)
      if (matches(w, q->res->items[i].obj)) w->initial[w->ninitial++] = json_object_get(q->res->items[i].obj);
  } else {
    w->pos = from;
    if (w->pos < po_as.compacted_rv) w->expired = true;
  }
  pthread_mutex_unlock(&po_as.mu);
  struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, reader, w, release);
  MHD_add_response_header(resp, "Content-Type", "application/json");
  MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
  return resp;
}
