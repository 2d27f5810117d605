/* Following the lease: the elector's callbacks move the manager in and out of leadership, and
 * the lease is released after the leader runnables stopped. Without an election the replica
 * leads at once. */
#include <pthread.h>

#include "app_internal.h"

static void started_leading(void *ctx) {
  po_App *app = ctx;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  if (!po_Manager_BecameLeader(app->manager, &st)) po_Log_Error(app->log, "could not start as leader", po_Str("error", st.message));
}

static void stopped_leading(void *ctx) {
  po_App *app = ctx;
  if (__atomic_load_n(&app->releasing, __ATOMIC_SEQ_CST)) {
    po_Log_Info(app->log, "lease released");
    return;
  }
  po_Log_Warn(app->log, "leadership lost: reconciling stops");
  po_Manager_LostLeadership(app->manager);
  /* Another replica writes the records now: ours may be superseded by the time we lead again. */
  if (app->index) po_TargetIndex_ForgetLastValid(app->index);
}

static void new_leader(void *ctx, const char *who) {
  po_App *app = ctx;
  po_Log_Info(app->log, "leader", po_Str("identity", *who ? who : "(none)"));
}

void po_App_LeaderCallbacks(po_App *app, po_LeaderElectionOptions *lo) {
  lo->on_started_leading = started_leading;
  lo->on_stopped_leading = stopped_leading;
  lo->on_new_leader = new_leader;
  lo->ctx = app;
}

bool po_App_ReleaseLease(void *ctx, int64_t deadline) {
  (void)deadline;
  po_App *app = ctx;
  /* Releasing fires on_stopped_leading from inside the manager's own stop: it must not call
   * back into the manager then. */
  __atomic_store_n(&app->releasing, true, __ATOMIC_SEQ_CST);
  po_LeaderElector_Stop(app->elector, true);
  return true;
}

/* ---- with an election: the elector's own thread ---- */

static bool elector_start(void *ctx, po_CtlStatus *st) {
  po_CtlStatus ks;
  po_CtlStatus_Clear(&ks);
  if (po_LeaderElector_Start(ctx, &ks)) return true;
  return po_CtlStatus_Set(st, ks.code, "leader election: %s", ks.message); /* the client's code kept */
}

/* The elector stops in the manager's release step (po_App_ReleaseLease), after the workers. */
static bool elector_stop(void *ctx, int64_t deadline) { (void)ctx; (void)deadline; return true; }

/* ---- without: a thread of its own calls BecameLeader, since the manager is still inside Start
 * when this runnable starts ---- */

static void *lead_alone(void *ctx) {
  started_leading(ctx);
  return NULL;
}

static bool lead_alone_start(void *ctx, po_CtlStatus *st) {
  po_LeadAlone *l = ctx;
  if (pthread_create(&l->thread, NULL, lead_alone, l->app) != 0) return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot start a thread");
  l->running = true;
  return true;
}

/* Not joined here: the manager calls stops with its lock held, and the thread may be waiting
 * for that lock inside BecameLeader. po_App_Free joins it, after the manager stopped (by then
 * BecameLeader has returned or returns at once). */
static bool lead_alone_stop(void *ctx, int64_t deadline) { (void)ctx; (void)deadline; return true; }

void po_App_JoinLeadAlone(po_App *app) {
  if (app->alone.running) pthread_join(app->alone.thread, NULL);
  app->alone.running = false;
}

po_Runnable po_App_LeadershipRunnable(po_App *app) {
  if (app->elector) return (po_Runnable){.name = "leadership", .start = elector_start, .stop = elector_stop, .ctx = app->elector};
  app->alone.app = app;
  return (po_Runnable){.name = "leadership", .start = lead_alone_start, .stop = lead_alone_stop, .ctx = &app->alone};
}
