/* The Event recorder (recorder.h): a bounded table of Events, keyed twice (by the whole Event,
 * for repeats; by object for the pending Normal one, for replacement), and a flusher thread. */
#include "recorder.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "po/base/json.h"
#include "po/runtime/clock.h"

enum { kNone = -1 };

typedef struct {
  bool used, posted, inflight;
  bool dirty;                  /* posted, and count moved past sent_count: a series update is due */
  char uid[64], type[16], reason[64], message[1024];
  char ns[254], name[254], api_version[128], kind[64], event_name[300];
  char first_ts[32], last_ts[32];
  int64_t count, sent_count;
  int64_t due_ns, posted_ns;
  int next_key, next_obj; /* hash chains */
  int prev_posted, next_posted; /* the posted list, oldest first (eviction order) */
  bool in_posted;
  uint64_t key_hash, obj_hash;
} Entry;

struct po_EventRecorder {
  po_KubeClient *client;
  po_EventRecorderOptions o;
  pthread_mutex_t mu;
  pthread_mutex_t flush_mu; /* one flush at a time (the flusher, Flush, the stop): `due` is shared */
  pthread_cond_t cond;
  pthread_t thread;
  bool running, stopping;
  Entry *e;
  int *key_buckets, *obj_buckets, *due; /* buckets: capacity each; due: scratch for a flush */
  size_t nbuckets;
  int *free_slots; /* a stack of unused slots */
  size_t nfree;
  int posted_head, posted_tail;
  uint64_t seq;
  po_EventRecorderStats stats;
};

/* A counter of the stats and its series in propertyoverride_events_total{result} (mutex held). */
static void bump(po_EventRecorder *r, uint64_t *stat, const char *result) {
  (*stat)++;
  if (r->o.metric) po_Series_Inc(po_Family_WithLabels(r->o.metric, result));
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull; /* a separator, so ("ab","c") and ("a","bc") differ */
}
static uint64_t key_hash(const char *uid, const char *type, const char *reason, const char *msg) {
  return fnv(fnv(fnv(fnv(1469598103934665603ull, uid), type), reason), msg);
}
static uint64_t obj_hash(const char *uid) { return fnv(1469598103934665603ull, uid); }

static int64_t mono_ns(void) { return po_RtClock_Now(po_RtClock_Real()); }

static void wall_ts(char buf[32]) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- the two chains ---- */

static void link_entry(po_EventRecorder *r, int i) {
  Entry *e = &r->e[i];
  size_t kb = e->key_hash % r->nbuckets, ob = e->obj_hash % r->nbuckets;
  e->next_key = r->key_buckets[kb];
  r->key_buckets[kb] = i;
  e->next_obj = r->obj_buckets[ob];
  r->obj_buckets[ob] = i;
}

static void unlink_chain(po_EventRecorder *r, int *head, int i, bool by_key) {
  for (int *p = head; *p != kNone; p = by_key ? &r->e[*p].next_key : &r->e[*p].next_obj) {
    if (*p == i) {
      *p = by_key ? r->e[i].next_key : r->e[i].next_obj;
      return;
    }
  }
}

static void unlink_entry(po_EventRecorder *r, int i) {
  unlink_chain(r, &r->key_buckets[r->e[i].key_hash % r->nbuckets], i, true);
  unlink_chain(r, &r->obj_buckets[r->e[i].obj_hash % r->nbuckets], i, false);
}

static void posted_append(po_EventRecorder *r, int i) {
  Entry *e = &r->e[i];
  e->prev_posted = r->posted_tail;
  e->next_posted = kNone;
  if (r->posted_tail != kNone) r->e[r->posted_tail].next_posted = i;
  else r->posted_head = i;
  r->posted_tail = i;
  e->in_posted = true;
}

static void posted_remove(po_EventRecorder *r, int i) {
  Entry *e = &r->e[i];
  if (!e->in_posted) return;
  if (e->prev_posted != kNone) r->e[e->prev_posted].next_posted = e->next_posted;
  else r->posted_head = e->next_posted;
  if (e->next_posted != kNone) r->e[e->next_posted].prev_posted = e->prev_posted;
  else r->posted_tail = e->prev_posted;
  e->in_posted = false;
}

static void forget(po_EventRecorder *r, int i) {
  unlink_entry(r, i);
  posted_remove(r, i);
  r->e[i].used = false;
  r->free_slots[r->nfree++] = i;
}

/* ---- recording ---- */

static int find_same(po_EventRecorder *r, uint64_t h, const char *uid, const char *type, const char *reason, const char *msg) {
  for (int i = r->key_buckets[h % r->nbuckets]; i != kNone; i = r->e[i].next_key) {
    const Entry *e = &r->e[i];
    if (e->key_hash == h && !strcmp(e->uid, uid) && !strcmp(e->type, type) && !strcmp(e->reason, reason) &&
        !strcmp(e->message, msg)) {
      return i;
    }
  }
  return kNone;
}

/* The pending (not yet posted, not being posted) Normal Event on this object, if any. */
static int find_pending_normal(po_EventRecorder *r, uint64_t h, const char *uid) {
  for (int i = r->obj_buckets[h % r->nbuckets]; i != kNone; i = r->e[i].next_obj) {
    const Entry *e = &r->e[i];
    if (!e->posted && !e->inflight && !strcmp(e->type, "Normal") && !strcmp(e->uid, uid)) return i;
  }
  return kNone;
}

/* A free slot, else the oldest posted one that owes no series update (forgotten), else none.
 * The walk skips only posted Events with an update due, so it is short. */
static int free_slot(po_EventRecorder *r) {
  if (!r->nfree) {
    int i = r->posted_head;
    while (i != kNone && (r->e[i].inflight || r->e[i].dirty)) i = r->e[i].next_posted;
    if (i == kNone) return kNone;
    forget(r, i);
  }
  return r->free_slots[--r->nfree];
}

static void fill(Entry *e, const char *type, const char *reason, const char *msg) {
  snprintf(e->type, sizeof e->type, "%s", type);
  snprintf(e->reason, sizeof e->reason, "%s", reason);
  snprintf(e->message, sizeof e->message, "%s", msg); /* Events are for people: the status has the whole text */
}

void po_EventRecorder_Record(po_EventRecorder *r, const char *api_version, const char *kind, json_object *about,
                             const char *type, const char *reason, const char *message) {
  const char *uid = po_Json_Meta(about, "uid");
  char msg[1024], ts[32];
  snprintf(msg, sizeof msg, "%s", message); /* compared as stored: truncated the same way */
  wall_ts(ts);
  int64_t now = mono_ns();
  uint64_t kh = key_hash(uid, type, reason, msg), oh = obj_hash(uid);
  pthread_mutex_lock(&r->mu);
  bump(r, &r->stats.recorded, "recorded");
  int i = find_same(r, kh, uid, type, reason, msg);
  if (i != kNone && r->e[i].posted && now - r->e[i].posted_ns > r->o.window_ms * PO_NS_PER_MS) {
    forget(r, i); /* past the window: a new Event */
    i = kNone;
  }
  if (i != kNone) { /* a repeat: counted; posted ones get a (held) series update */
    Entry *e = &r->e[i];
    e->count++;
    memcpy(e->last_ts, ts, sizeof ts);
    if (e->posted && !e->dirty) {
      e->dirty = true;
      e->due_ns = now + r->o.hold_ms * PO_NS_PER_MS;
    }
    bump(r, &r->stats.coalesced, "coalesced");
    pthread_mutex_unlock(&r->mu);
    return;
  }
  if (!strcmp(type, "Normal") && (i = find_pending_normal(r, oh, uid)) != kNone) {
    /* A transition that lasted less than the hold: the newer one takes its place and keeps the
     * older's due time, so a stream of changes cannot hold an object's Events back for ever. */
    unlink_entry(r, i);
    Entry *e = &r->e[i];
    fill(e, type, reason, msg);
    e->count = 1;
    memcpy(e->first_ts, ts, sizeof ts);
    memcpy(e->last_ts, ts, sizeof ts);
    e->key_hash = kh;
    link_entry(r, i);
    bump(r, &r->stats.superseded, "superseded");
    pthread_mutex_unlock(&r->mu);
    return;
  }
  if ((i = free_slot(r)) == kNone) {
    bump(r, &r->stats.dropped, "dropped");
    pthread_mutex_unlock(&r->mu);
    return;
  }
  Entry *e = &r->e[i];
  memset(e, 0, sizeof *e);
  e->used = true;
  snprintf(e->uid, sizeof e->uid, "%s", uid);
  snprintf(e->ns, sizeof e->ns, "%s", po_Json_Meta(about, "namespace"));
  snprintf(e->name, sizeof e->name, "%s", po_Json_Meta(about, "name"));
  snprintf(e->api_version, sizeof e->api_version, "%s", api_version);
  snprintf(e->kind, sizeof e->kind, "%s", kind);
  fill(e, type, reason, msg);
  e->count = 1;
  memcpy(e->first_ts, ts, sizeof ts);
  memcpy(e->last_ts, ts, sizeof ts);
  e->due_ns = now + r->o.hold_ms * PO_NS_PER_MS;
  e->key_hash = kh;
  e->obj_hash = oh;
  link_entry(r, i);
  pthread_mutex_unlock(&r->mu);
}

/* ---- posting ---- */

static void add_str(json_object *o, const char *k, const char *v) { json_object_object_add(o, k, json_object_new_string(v)); }

static json_object *event_object(const Entry *e) {
  json_object *ev = json_object_new_object(), *md = json_object_new_object(), *obj = json_object_new_object(),
              *src = json_object_new_object();
  add_str(ev, "apiVersion", "v1");
  add_str(ev, "kind", "Event");
  add_str(md, "name", e->event_name);
  add_str(md, "namespace", e->ns);
  json_object_object_add(ev, "metadata", md);
  add_str(obj, "apiVersion", e->api_version);
  add_str(obj, "kind", e->kind);
  add_str(obj, "namespace", e->ns);
  add_str(obj, "name", e->name);
  add_str(obj, "uid", e->uid);
  json_object_object_add(ev, "involvedObject", obj);
  add_str(ev, "type", e->type);
  add_str(ev, "reason", e->reason);
  add_str(ev, "message", e->message);
  add_str(src, "component", "propertyoverride-controller");
  json_object_object_add(ev, "source", src);
  add_str(ev, "firstTimestamp", e->first_ts);
  add_str(ev, "lastTimestamp", e->last_ts);
  json_object_object_add(ev, "count", json_object_new_int64(e->count));
  return ev;
}

/* One Event: POST when new, merge PATCH of count and lastTimestamp when posted. `e` is a copy
 * (the table's slot may be replaced meanwhile only by repeats, which touch count and
 * lastTimestamp). */
static bool send(po_EventRecorder *r, const Entry *e) {
  po_KubeRef ref = {.group = "", .version = "v1", .resource = "events", .ns = e->ns};
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  if (!e->posted) {
    json_object *ev = event_object(e);
    bool ok = ev && po_KubeClient_Create(r->client, &ref, ev, NULL, &st);
    json_object_put(ev);
    return ok;
  }
  ref.name = e->event_name;
  char body[128];
  int n = snprintf(body, sizeof body, "{\"count\":%lld,\"lastTimestamp\":\"%s\"}", (long long)e->count, e->last_ts);
  po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
  return po_KubeClient_Patch(r->client, &ref, &po, body, (size_t)n, NULL, &st);
}

/* Sends what is due (everything when `all`), stopping at `deadline` (0: none). */
static void flush_locked(po_EventRecorder *r, bool all, int64_t deadline);
static void flush(po_EventRecorder *r, bool all, int64_t deadline) {
  pthread_mutex_lock(&r->flush_mu);
  flush_locked(r, all, deadline);
  pthread_mutex_unlock(&r->flush_mu);
}

static void flush_locked(po_EventRecorder *r, bool all, int64_t deadline) {
  pthread_mutex_lock(&r->mu);
  int64_t now = mono_ns();
  size_t n = 0;
  for (size_t i = 0; i < r->o.capacity; i++) {
    Entry *e = &r->e[i];
    if (!e->used || e->inflight || (e->posted && !e->dirty) || (!all && e->due_ns > now)) continue;
    if (!e->posted) {
      /* Unique across restarts and replicas in practice: wall-clock ns, plus a sequence for two
       * in the same tick. */
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      snprintf(e->event_name, sizeof e->event_name, "%.200s.%llx", e->name,
               (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec + (unsigned long long)(++r->seq));
    }
    e->inflight = true;
    r->due[n++] = (int)i;
  }
  pthread_mutex_unlock(&r->mu);
  for (size_t k = 0; k < n; k++) {
    int i = r->due[k];
    pthread_mutex_lock(&r->mu);
    if (!all && r->stopping) { /* the stop posts the rest itself, within its deadline */
      for (size_t j = k; j < n; j++) r->e[r->due[j]].inflight = false;
      pthread_mutex_unlock(&r->mu);
      return;
    }
    Entry copy = r->e[i];
    pthread_mutex_unlock(&r->mu);
    bool ok = (deadline && mono_ns() >= deadline) ? false : send(r, &copy);
    pthread_mutex_lock(&r->mu);
    Entry *e = &r->e[i];
    e->inflight = false;
    if (!ok) { /* best effort: a failed Event is not retried (the status holds the truth) */
      bump(r, &r->stats.failed, "failed");
      forget(r, i);
    } else {
      if (copy.posted) bump(r, &r->stats.patched, "patched");
      else bump(r, &r->stats.posted, "posted");
      if (!copy.posted) {
        e->posted_ns = mono_ns();
        posted_append(r, i);
      }
      e->posted = true;
      e->sent_count = copy.count;
      e->dirty = e->count > e->sent_count; /* repeats that came while it was in flight */
      if (e->dirty) e->due_ns = mono_ns() + r->o.hold_ms * PO_NS_PER_MS;
    }
    pthread_mutex_unlock(&r->mu);
  }
}

void po_EventRecorder_Flush(po_EventRecorder *r) { flush(r, true, 0); }

po_EventRecorderStats po_EventRecorder_Stats(po_EventRecorder *r) {
  pthread_mutex_lock(&r->mu);
  po_EventRecorderStats s = r->stats;
  pthread_mutex_unlock(&r->mu);
  return s;
}

/* ---- the flusher ---- */

static void *flusher(void *arg) {
  po_EventRecorder *r = arg;
  /* A quarter of the hold between scans: an Event waits at most 1.25 holds. */
  int64_t tick = r->o.hold_ms * PO_NS_PER_MS / 4;
  if (tick < 10 * PO_NS_PER_MS) tick = 10 * PO_NS_PER_MS;
  pthread_mutex_lock(&r->mu);
  while (!r->stopping) {
    po_RtClock_WaitUntil(po_RtClock_Real(), &r->cond, &r->mu, mono_ns() + tick);
    if (r->stopping) break;
    pthread_mutex_unlock(&r->mu);
    flush(r, false, 0);
    pthread_mutex_lock(&r->mu);
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

static bool start(void *ctx, po_CtlStatus *st) {
  po_EventRecorder *r = ctx;
  r->stopping = false;
  if (pthread_create(&r->thread, NULL, flusher, r) != 0) return po_CtlStatus_Set(st, kPo_Ctl_Start, "event recorder: cannot start its thread");
  r->running = true;
  return true;
}

static bool stop(void *ctx, int64_t deadline) {
  po_EventRecorder *r = ctx;
  if (!r->running) return true;
  pthread_mutex_lock(&r->mu);
  r->stopping = true;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->mu);
  pthread_join(r->thread, NULL); /* at most one request in flight, bounded by the client's timeout */
  r->running = false;
  flush(r, true, deadline); /* the last reconciles' Events */
  return mono_ns() < deadline;
}

po_Runnable po_EventRecorder_Runnable(po_EventRecorder *r) {
  return (po_Runnable){.name = "event-recorder", .start = start, .stop = stop, .ctx = r};
}

/* ---- life ---- */

po_EventRecorder *po_EventRecorder_New(po_KubeClient *client, const po_EventRecorderOptions *o) {
  po_EventRecorder *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->client = client;
  r->o = o ? *o : (po_EventRecorderOptions){0};
  if (r->o.hold_ms <= 0) r->o.hold_ms = 1000;
  if (r->o.window_ms <= 0) r->o.window_ms = 600000;
  if (!r->o.capacity) r->o.capacity = 4096;
  r->nbuckets = r->o.capacity;
  r->e = calloc(r->o.capacity, sizeof *r->e);
  r->key_buckets = malloc(r->nbuckets * sizeof *r->key_buckets);
  r->obj_buckets = malloc(r->nbuckets * sizeof *r->obj_buckets);
  r->due = malloc(r->o.capacity * sizeof *r->due);
  r->free_slots = malloc(r->o.capacity * sizeof *r->free_slots);
  if (!r->e || !r->key_buckets || !r->obj_buckets || !r->due || !r->free_slots) {
    po_EventRecorder_Free(r);
    return NULL;
  }
  for (size_t i = 0; i < r->nbuckets; i++) r->key_buckets[i] = r->obj_buckets[i] = kNone;
  for (size_t i = r->o.capacity; i > 0; i--) r->free_slots[r->nfree++] = (int)(i - 1);
  r->posted_head = r->posted_tail = kNone;
  pthread_mutex_init(&r->mu, NULL);
  pthread_mutex_init(&r->flush_mu, NULL);
  po_RtClock_InitCond(&r->cond);
  return r;
}

void po_EventRecorder_Free(po_EventRecorder *r) {
  if (!r) return;
  if (r->e && r->key_buckets && r->obj_buckets && r->due && r->free_slots) { /* fully built: the mutex and condition exist */
    if (r->running) stop(r, mono_ns() + 5 * PO_NS_PER_S);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->flush_mu);
    pthread_cond_destroy(&r->cond);
  }
  free(r->e);
  free(r->key_buckets);
  free(r->obj_buckets);
  free(r->due);
  free(r->free_slots);
  free(r);
}
