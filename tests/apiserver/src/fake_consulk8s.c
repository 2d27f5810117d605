/* FAKE consul-k8s: a test double, off unless --fake-consul-k8s is given. It plays the part of
 * consul-k8s's config-entry controller for ServiceDefaults and ProxyDefaults
 * (consul.hashicorp.com), as far as their status goes (control-plane/config-entries/controllers/
 * configentry_controller.go, api/v1alpha1/status.go): after a change of such an object it
 * "writes it into Consul" (remembers its spec) and sets one Synced condition and
 * status.lastSyncedTime, the way consul-k8s's UpdateStatus does (a status-only change: a new
 * resourceVersion, no new generation). Faithful where the controller under test depends on it:
 *   - Synced=True with lastSyncedTime = now after a sync (the conditions list replaced whole,
 *     lastTransitionTime = now on every status write, as SetSyncedCondition does);
 *   - no status write at all when the spec is the one "in Consul" and Synced is already True;
 *   - failure injection: the annotation consul-k8s-fake.propertyoverride.io/fail: MESSAGE makes
 *     "Consul" refuse the entry: Synced=False, reason ConsulAgentError, message
 *     "writing config entry to consul: MESSAGE" for an entry Consul never had, and Synced=Unknown
 *     with "updating config entry in consul: MESSAGE" for one it has (consul-k8s's two cases);
 *   - latency: --fake-consul-k8s-delay-ms MS, or the annotation
 *     consul-k8s-fake.propertyoverride.io/delay-ms: MS on the object, before a change is synced.
 * Not played: consul-k8s's own finalizer, namespaces mirroring, datacenter metadata, migration.
 * It reads the event ring (bounded by the compaction window) and works under po_as.mu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver.h"

#define FAIL_ANNOTATION "consul-k8s-fake.propertyoverride.io/fail"
#define DELAY_ANNOTATION "consul-k8s-fake.propertyoverride.io/delay-ms"

typedef struct {
  po_As_Resource *res;
  char *key;           /* "namespace/name" */
  json_object *consul; /* the spec "in Consul", or NULL */
  int64_t failed_generation; /* the generation last refused (consul-k8s retries, rewriting the status) */
  bool pending;
  int64_t due_ms;      /* when a pending change is synced */
} Entry;

static struct {
  bool on;
  int delay_ms;
  pthread_t thread;
  bool started;
  uint64_t seen_rv;
  Entry *items;
  size_t n, cap;
} fk;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool is_consul(const po_As_Resource *r) {
  return r && r->group && !strcmp(r->group, "consul.hashicorp.com") &&
         (!strcmp(r->plural, "servicedefaults") || !strcmp(r->plural, "proxydefaults"));
}

static Entry *entry(po_As_Resource *r, const char *key, bool create) {
  for (size_t i = 0; i < fk.n; i++) if (fk.items[i].res == r && !strcmp(fk.items[i].key, key)) return &fk.items[i];
  if (!create) return NULL;
  if (fk.n == fk.cap) {
    size_t cap = fk.cap ? fk.cap * 2 : 16;
    Entry *grown = realloc(fk.items, cap * sizeof *grown);
    if (!grown) return NULL;
    fk.items = grown;
    fk.cap = cap;
  }
  fk.items[fk.n] = (Entry){.res = r, .key = po_As_Strdup(key)};
  return &fk.items[fk.n++];
}

static void drop(Entry *e) {
  free(e->key);
  json_object_put(e->consul);
  *e = fk.items[--fk.n];
}

static const char *annotation(json_object *obj, const char *k) { return po_As_GetStr(po_As_Get(po_As_Meta(obj), "annotations"), k); }

static json_object *synced_condition(json_object *obj) {
  json_object *list = po_As_Get(po_As_Get(obj, "status"), "conditions");
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *c = json_object_array_get_idx(list, i);
    const char *t = po_As_GetStr(c, "type");
    if (t && !strcmp(t, "Synced")) return c;
  }
  return NULL;
}

/* consul-k8s's UpdateStatus: one Synced condition (the list replaced), lastSyncedTime on success. */
static void write_status(po_As_Resource *r, json_object *obj, const char *status, const char *reason, const char *message) {
  json_object *o = po_As_Copy(obj), *st = po_As_Get(o, "status");
  if (!st || !json_object_is_type(st, json_type_object)) json_object_object_add(o, "status", st = json_object_new_object());
  char now[32];
  po_As_Now(now);
  json_object *c = json_object_new_object(), *list = json_object_new_array();
  json_object_object_add(c, "type", json_object_new_string("Synced"));
  json_object_object_add(c, "status", json_object_new_string(status));
  json_object_object_add(c, "lastTransitionTime", json_object_new_string(now));
  json_object_object_add(c, "reason", json_object_new_string(reason));
  json_object_object_add(c, "message", json_object_new_string(message));
  json_object_array_add(list, c);
  json_object_object_add(st, "conditions", list);
  if (!strcmp(status, "True")) json_object_object_add(st, "lastSyncedTime", json_object_new_string(now));
  po_As_Log(kPo_As_LogInfo, "fake consul-k8s: %s %s Synced=%s %s", r->kind, po_As_MetaStr(o, "name"), status, message);
  po_As_Store_Put(r, o, kPo_As_Modified);
}

static bool same_condition(json_object *c, const char *status, const char *reason, const char *message) {
  const char *s = po_As_GetStr(c, "status"), *rs = po_As_GetStr(c, "reason"), *m = po_As_GetStr(c, "message");
  return c && s && !strcmp(s, status) && rs && !strcmp(rs, reason) && m && !strcmp(m, message);
}

/* ReconcileEntry, reduced to what the status shows. */
static void reconcile(Entry *e) {
  const char *slash = strchr(e->key, '/');
  char ns[256];
  snprintf(ns, sizeof ns, "%.*s", (int)(slash - e->key), e->key);
  po_As_Entry *se = po_As_Store_Get(e->res, ns, slash + 1);
  if (!se) return;
  json_object *obj = se->obj, *spec = po_As_Get(obj, "spec"), *c = synced_condition(obj);
  const char *fail = annotation(obj, FAIL_ANNOTATION);
  if (fail) {
    const char *status = e->consul ? "Unknown" : "False";
    char *msg = po_As_Printf("%s config entry %s consul: %s", e->consul ? "updating" : "writing", e->consul ? "in" : "to", fail);
    /* consul-k8s retries a refused entry (backoff up to 5 s), rewriting the status (a new
     * lastTransitionTime) each time; here once per generation, which is what a client sees
     * after each of its writes. */
    json_object *g = po_As_Get(po_As_Meta(obj), "generation");
    int64_t gen = g ? json_object_get_int64(g) : 0;
    if (!same_condition(c, status, "ConsulAgentError", msg) || gen != e->failed_generation) {
      e->failed_generation = gen;
      write_status(e->res, obj, status, "ConsulAgentError", msg);
    }
    free(msg);
    return;
  }
  bool matches = e->consul && (spec ? po_As_Equal(e->consul, spec) : false);
  const char *cs = po_As_GetStr(c, "status");
  if (matches && cs && !strcmp(cs, "True")) return; /* nothing written at all */
  if (!matches) {
    json_object_put(e->consul);
    e->consul = spec ? po_As_Copy(spec) : json_object_new_object();
  }
  write_status(e->res, obj, "True", "", "");
}

static int delay_of(json_object *obj) {
  const char *d = annotation(obj, DELAY_ANNOTATION);
  return d ? atoi(d) : fk.delay_ms;
}

/* New events since the last look: changed objects become pending, deleted ones are forgotten. */
static void scan(void) {
  for (size_t i = 0; i < po_as.ring_len; i++) {
    po_As_Event *ev = &po_as.ring[(po_as.ring_head + i) % po_as.ring_cap];
    if (ev->rv <= fk.seen_rv || !is_consul(ev->res)) continue;
    char *key = po_As_Key(po_As_MetaStr(ev->obj, "namespace"), po_As_MetaStr(ev->obj, "name"));
    Entry *e = entry(ev->res, key, ev->type != kPo_As_Deleted);
    free(key);
    if (!e) continue;
    if (ev->type == kPo_As_Deleted) {
      drop(e);
      continue;
    }
    if (!e->pending) {
      e->pending = true;
      e->due_ms = now_ms() + delay_of(ev->obj);
    }
  }
  fk.seen_rv = po_as.rv;
}

static void *run(void *arg) {
  (void)arg;
  pthread_mutex_lock(&po_as.mu);
  while (!po_as.stopping) {
    scan();
    int64_t now = now_ms(), next = now + 500;
    for (size_t i = 0; i < fk.n; i++) {
      Entry *e = &fk.items[i];
      if (!e->pending) continue;
      if (e->due_ms <= now) {
        e->pending = false;
        reconcile(e); /* its own status write comes back through scan: then nothing is due */
      } else if (e->due_ms < next) {
        next = e->due_ms;
      }
    }
    if (po_as.rv != fk.seen_rv) continue;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wait = next - now_ms();
    if (wait < 1) wait = 1;
    ts.tv_sec += wait / 1000;
    ts.tv_nsec += (wait % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&po_as.cond, &po_as.mu, &ts);
  }
  pthread_mutex_unlock(&po_as.mu);
  return NULL;
}

void po_As_FakeConsulK8s_Enable(int delay_ms) {
  fk.on = true;
  fk.delay_ms = delay_ms;
}

void po_As_FakeConsulK8s_Start(void) {
  if (!fk.on) return;
  pthread_mutex_lock(&po_as.mu);
  fk.seen_rv = 0; /* objects preloaded (--crd, --state) are synced too */
  pthread_mutex_unlock(&po_as.mu);
  fk.started = pthread_create(&fk.thread, NULL, run, NULL) == 0;
  po_As_Log(kPo_As_LogInfo, "fake consul-k8s: on (delay %d ms)", fk.delay_ms);
}

void po_As_FakeConsulK8s_Stop(void) {
  if (!fk.started) return;
  pthread_join(fk.thread, NULL); /* po_as.stopping is set and broadcast by the caller */
  fk.started = false;
  while (fk.n) drop(&fk.items[0]);
  free(fk.items);
  fk.items = NULL;
  fk.cap = 0;
}
