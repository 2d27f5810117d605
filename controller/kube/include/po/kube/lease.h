/* Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.
 *
 * Expiry is judged on the local monotonic clock from when this process last saw the lease
 * change (never by comparing the server's timestamps with ours), so clock skew between
 * replicas does not matter. All timing goes through opt.clock; po_LeaderElector_Tick does one
 * attempt and says when the next is due, so unit tests drive it with a fake clock and a fake
 * po_LeaseApi. */
#ifndef PO_KUBE_LEASE_H
#define PO_KUBE_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "po/kube/client.h"
#include "po/base/clock.h"
#include "po/base/rate.h"

struct json_object;
typedef struct po_LeaderElector po_LeaderElector;

/* How the elector reads and writes its Lease; NULL in the options means "through the client". */
typedef struct {
  bool (*get)(void *ctx, const char *ns, const char *name, struct json_object **out, po_CtlStatus *st);
  bool (*create)(void *ctx, const char *ns, struct json_object *lease, struct json_object **out,
                 po_CtlStatus *st);
  bool (*update)(void *ctx, const char *ns, struct json_object *lease, struct json_object **out,
                 po_CtlStatus *st);
  void *ctx;
} po_LeaseApi;

typedef struct {
  const char *ns, *name;       /* the Lease */
  const char *identity;        /* holderIdentity: unique per replica (e.g. pod name + random) */
  int64_t lease_duration_ns;   /* 0: 15 s */
  int64_t renew_deadline_ns;   /* 0: 10 s */
  int64_t retry_period_ns;     /* 0: 2 s */
  const po_Clock *clock;       /* NULL: system */
  po_KubeClient *client;       /* used when api is NULL */
  const po_LeaseApi *api;
  /* Called from the elector's thread (or Tick's caller). on_stopped_leading fires the moment
   * leadership is lost or released: stop acting as leader at once. */
  void (*on_started_leading)(void *ctx);
  void (*on_stopped_leading)(void *ctx);
  void (*on_new_leader)(void *ctx, const char *identity); /* "" when the lease was released */
  void *ctx;
  uint64_t seed;               /* retry jitter; 0: from the clock */
} po_LeaderElectionOptions;

/* Validates lease_duration > renew_deadline > 1.2 * retry_period (client-go's rule). */
bool po_LeaderElector_New(const po_LeaderElectionOptions *opt, po_LeaderElector **out, po_CtlStatus *st);
void po_LeaderElector_Free(po_LeaderElector *le); /* stops the thread; does not release */

/* One acquire-or-renew attempt at clock now; returns the ns until the next attempt is due. */
int64_t po_LeaderElector_Tick(po_LeaderElector *le);
bool po_LeaderElector_IsLeader(const po_LeaderElector *le);
/* Gives the lease up when held (holderIdentity cleared, leaseDurationSeconds 1), firing
 * on_stopped_leading. Not while the thread runs: use Stop(le, true). */
bool po_LeaderElector_Release(po_LeaderElector *le, po_CtlStatus *st);

/* Runs Tick on a thread until Stop. */
bool po_LeaderElector_Start(po_LeaderElector *le, po_CtlStatus *st);
/* Stops the thread promptly; with release, gives the lease up (on shutdown). */
void po_LeaderElector_Stop(po_LeaderElector *le, bool release);

#endif
