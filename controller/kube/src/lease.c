/* Leader election (client-go's tryAcquireOrRenew, on a step function). */
#include "po/kube/lease.h"

#include "po/base/json.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct po_LeaderElector {
  po_LeaderElectionOptions opt;
  char *ns, *name, *identity;
  po_LeaseApi api;
  atomic_bool leader;
  int64_t last_renew_ns;     /* monotonic time of the last successful acquire/renew */
  /* What we last saw, and when (monotonic) we first saw it that way. */
  char obs_holder[256], obs_renew[64];
  int64_t obs_transitions, obs_time_ns;
  bool observed;
  po_Rand rand;
  po_KubeCancel *cancel;
  pthread_t thread;
  bool running;
};

/* ---- the default API: the client ------------------------------------------------------- */

static po_KubeRef lease_ref(const char *ns, const char *name) {
  po_KubeRef r = {"coordination.k8s.io", "v1", "leases", ns, name, NULL};
  return r;
}

static bool client_get(void *ctx, const char *ns, const char *name, json_object **out, po_CtlStatus *st) {
  po_KubeRef r = lease_ref(ns, name);
  return po_KubeClient_Get(ctx, &r, out, st);
}

static bool client_create(void *ctx, const char *ns, json_object *lease, json_object **out, po_CtlStatus *st) {
  po_KubeRef r = lease_ref(ns, NULL);
  return po_KubeClient_Create(ctx, &r, lease, out, st);
}

static bool client_update(void *ctx, const char *ns, json_object *lease, json_object **out, po_CtlStatus *st) {
  po_KubeRef r = lease_ref(ns, NULL);
  return po_KubeClient_Update(ctx, &r, lease, out, st);
}

/* ---- lifecycle --------------------------------------------------------------------------- */

bool po_LeaderElector_New(const po_LeaderElectionOptions *opt, po_LeaderElector **out, po_CtlStatus *st) {
  *out = NULL;
  if (!opt || !opt->ns || !opt->name || !opt->identity || !*opt->identity)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "leader election needs ns, name and identity");
  if (!opt->api && !opt->client)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "leader election needs a client or an api");
  po_LeaderElector *le = calloc(1, sizeof *le);
  if (!le) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  le->opt = *opt;
  if (!le->opt.lease_duration_ns) le->opt.lease_duration_ns = 15000000000LL;
  if (!le->opt.renew_deadline_ns) le->opt.renew_deadline_ns = 10000000000LL;
  if (!le->opt.retry_period_ns) le->opt.retry_period_ns = 2000000000LL;
  if (!le->opt.clock) le->opt.clock = po_Clock_System();
  int64_t ld = le->opt.lease_duration_ns, rd = le->opt.renew_deadline_ns, rp = le->opt.retry_period_ns;
  if (!(ld > rd) || !((double)rd > 1.2 * (double)rp) || rp <= 0) {
    free(le);
    return po_CtlStatus_Set(st, kPo_Ctl_Usage,
                             "leader election: need lease duration > renew deadline > 1.2 x retry period "
                             "(got %.3f s, %.3f s, %.3f s)",
                             (double)ld / 1e9, (double)rd / 1e9, (double)rp / 1e9);
  }
  le->ns = strdup(opt->ns);
  le->name = strdup(opt->name);
  le->identity = strdup(opt->identity);
  le->cancel = po_KubeCancel_New();
  if (opt->api) {
    le->api = *opt->api;
  } else {
    le->api = (po_LeaseApi){client_get, client_create, client_update, opt->client};
  }
  po_Rand_Seed(&le->rand, opt->seed ? opt->seed : (uint64_t)le->opt.clock->monotonic_ns(le->opt.clock->ctx));
  if (!le->ns || !le->name || !le->identity || !le->cancel) {
    po_LeaderElector_Free(le);
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  }
  *out = le;
  return true;
}

void po_LeaderElector_Free(po_LeaderElector *le) {
  if (!le) return;
  if (le->running) po_LeaderElector_Stop(le, false);
  po_KubeCancel_Free(le->cancel);
  free(le->ns);
  free(le->name);
  free(le->identity);
  free(le);
}

bool po_LeaderElector_IsLeader(const po_LeaderElector *le) { return atomic_load(&le->leader); }

/* ---- the record -------------------------------------------------------------------------- */

static void micro_time(const po_LeaderElector *le, char *buf, size_t size) {
  int64_t w = le->opt.clock->wall_ns(le->opt.clock->ctx);
  time_t s = (time_t)(w / 1000000000);
  struct tm tm;
  gmtime_r(&s, &tm);
  char base[32];
  strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf, size, "%s.%06ldZ", base, (long)((w % 1000000000) / 1000));
}

static const char *spec_str(json_object *spec, const char *key) { return po_Json_StringOr(spec, key, ""); }

static int64_t spec_int(json_object *spec, const char *key) {
  json_object *v;
  if (spec && json_object_object_get_ex(spec, key, &v) && json_object_is_type(v, json_type_int))
    return json_object_get_int64(v);
  return 0;
}

static void observe(po_LeaderElector *le, json_object *lease, int64_t now) {
  json_object *spec = NULL;
  json_object_object_get_ex(lease, "spec", &spec);
  const char *holder = spec_str(spec, "holderIdentity"), *renew = spec_str(spec, "renewTime");
  int64_t tr = spec_int(spec, "leaseTransitions");
  bool holder_changed = !le->observed || strcmp(holder, le->obs_holder) != 0;
  if (holder_changed || strcmp(renew, le->obs_renew) != 0 || tr != le->obs_transitions) {
    snprintf(le->obs_holder, sizeof le->obs_holder, "%s", holder);
    snprintf(le->obs_renew, sizeof le->obs_renew, "%s", renew);
    le->obs_transitions = tr;
    le->obs_time_ns = now;
    le->observed = true;
    if (holder_changed && le->opt.on_new_leader) le->opt.on_new_leader(le->opt.ctx, holder);
  }
}

/* Fills spec for holder = us (or "" for a release). False when memory ran out: the Lease is then
 * not written (a null holder or renewTime written would hand the lease to another replica while
 * this one still takes itself for the leader). */
static bool fill_spec(po_LeaderElector *le, json_object *spec, const char *holder, bool keep_acquire,
                      int64_t transitions, int64_t duration_s) {
  char now[64];
  micro_time(le, now, sizeof now);
  return spec && po_Json_Put(spec, "holderIdentity", json_object_new_string(holder)) &&
         po_Json_Put(spec, "leaseDurationSeconds", json_object_new_int64(duration_s)) &&
         (keep_acquire || po_Json_Put(spec, "acquireTime", json_object_new_string(now))) &&
         po_Json_Put(spec, "renewTime", json_object_new_string(now)) &&
         po_Json_Put(spec, "leaseTransitions", json_object_new_int64(transitions));
}

static int64_t duration_s(const po_LeaderElector *le) {
  int64_t s = (le->opt.lease_duration_ns + 999999999) / 1000000000;
  return s < 1 ? 1 : s;
}

typedef enum { kTry_Ok, kTry_HeldByOther, kTry_Failed } TryResult;

static TryResult try_acquire_or_renew(po_LeaderElector *le, int64_t now) {
  po_CtlStatus st;
  json_object *lease = NULL;
  if (!le->api.get(le->api.ctx, le->ns, le->name, &lease, &st)) {
    if (st.code != kPo_Ctl_NotFound) return kTry_Failed;
    json_object *nl = json_object_new_object(), *md = NULL, *spec = NULL;
    bool built = nl && po_Json_Put(nl, "apiVersion", json_object_new_string("coordination.k8s.io/v1")) &&
                 po_Json_Put(nl, "kind", json_object_new_string("Lease")) && po_Json_Put(nl, "metadata", md = json_object_new_object()) &&
                 po_Json_Put(md, "name", json_object_new_string(le->name)) &&
                 po_Json_Put(md, "namespace", json_object_new_string(le->ns)) &&
                 po_Json_Put(nl, "spec", spec = json_object_new_object()) &&
                 fill_spec(le, spec, le->identity, false, 0, duration_s(le));
    if (!built) {
      json_object_put(nl);
      return kTry_Failed;
    }
    json_object *created = NULL;
    bool ok = le->api.create(le->api.ctx, le->ns, nl, &created, &st);
    if (ok) observe(le, created ? created : nl, now);
    json_object_put(created);
    json_object_put(nl);
    return ok ? kTry_Ok : kTry_Failed;
  }
  observe(le, lease, now);
  json_object *spec = NULL;
  if ((!json_object_object_get_ex(lease, "spec", &spec) || !json_object_is_type(spec, json_type_object)) &&
      !po_Json_Put(lease, "spec", spec = json_object_new_object())) {
    json_object_put(lease);
    return kTry_Failed;
  }
  const char *holder = spec_str(spec, "holderIdentity");
  bool mine = strcmp(holder, le->identity) == 0;
  if (*holder && !mine && now < le->obs_time_ns + le->opt.lease_duration_ns) {
    json_object_put(lease);
    return kTry_HeldByOther;
  }
  int64_t tr = spec_int(spec, "leaseTransitions");
  if (!fill_spec(le, spec, le->identity, mine && *spec_str(spec, "acquireTime"), mine ? tr : tr + 1, duration_s(le))) {
    json_object_put(lease);
    return kTry_Failed;
  }
  json_object *updated = NULL;
  bool ok = le->api.update(le->api.ctx, le->ns, lease, &updated, &st);
  if (ok) observe(le, updated ? updated : lease, now);
  json_object_put(updated);
  json_object_put(lease);
  return ok ? kTry_Ok : kTry_Failed;
}

static void lose(po_LeaderElector *le) {
  if (!atomic_exchange(&le->leader, false)) return;
  if (le->opt.on_stopped_leading) le->opt.on_stopped_leading(le->opt.ctx);
}

int64_t po_LeaderElector_Tick(po_LeaderElector *le) {
  const po_Clock *k = le->opt.clock;
  int64_t now = k->monotonic_ns(k->ctx);
  TryResult r = try_acquire_or_renew(le, now);
  if (atomic_load(&le->leader)) {
    if (r == kTry_Ok) {
      le->last_renew_ns = now;
    } else if (r == kTry_HeldByOther || now - le->last_renew_ns >= le->opt.renew_deadline_ns) {
      lose(le);
    }
  } else if (r == kTry_Ok) {
    le->last_renew_ns = now;
    atomic_store(&le->leader, true);
    if (le->opt.on_started_leading) le->opt.on_started_leading(le->opt.ctx);
  }
  if (atomic_load(&le->leader)) return le->opt.retry_period_ns;
  /* Candidates spread their attempts (client-go: JitterUntil with factor 1.2). */
  return le->opt.retry_period_ns + (int64_t)((double)le->opt.retry_period_ns * 1.2 * po_Rand_Unit(&le->rand));
}

bool po_LeaderElector_Release(po_LeaderElector *le, po_CtlStatus *st) {
  if (!atomic_load(&le->leader)) return true;
  json_object *lease = NULL;
  bool ok = le->api.get(le->api.ctx, le->ns, le->name, &lease, st);
  if (ok) {
    json_object *spec = NULL;
    json_object_object_get_ex(lease, "spec", &spec);
    if (spec && strcmp(spec_str(spec, "holderIdentity"), le->identity) == 0) {
      /* half filled, it is not written: the lease then runs out as after a crash */
      if (!fill_spec(le, spec, "", false, spec_int(spec, "leaseTransitions"), 1)) {
        ok = po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory (releasing the lease)");
      } else {
        json_object *updated = NULL;
        ok = le->api.update(le->api.ctx, le->ns, lease, &updated, st);
        json_object_put(updated);
      }
    }
    json_object_put(lease);
  }
  lose(le);
  return ok;
}

/* ---- thread ------------------------------------------------------------------------------ */

static void *run(void *arg) {
  po_LeaderElector *le = arg;
  while (!po_KubeCancel_Fired(le->cancel)) {
    int64_t wait = po_LeaderElector_Tick(le);
    if (!po_KubeCancel_Sleep(le->cancel, wait)) break;
  }
  return NULL;
}

bool po_LeaderElector_Start(po_LeaderElector *le, po_CtlStatus *st) {
  if (le->running) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "leader elector already running");
  if (pthread_create(&le->thread, NULL, run, le) != 0)
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "cannot start the leader election thread");
  le->running = true;
  return true;
}

void po_LeaderElector_Stop(po_LeaderElector *le, bool release) {
  if (le->running) {
    po_KubeCancel_Fire(le->cancel);
    pthread_join(le->thread, NULL);
    le->running = false;
  }
  po_CtlStatus st;
  if (release)
    po_LeaderElector_Release(le, &st);
  else
    lose(le);
}
