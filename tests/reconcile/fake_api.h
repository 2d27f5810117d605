/* A tiny API server in memory for the reconcile tests: slots of objects by key
 * ("po/<ns>/<name>", "<Kind>/<ns>/<name>"), resourceVersions, uids, merge patches, finalizers,
 * conflicts on demand, and the IO table po_Reconcile reads and writes it through. Reads lend a
 * copy and check, when it comes back, that the reconcile did not change it. Nothing is global:
 * a test's server, index, tenancy policy and IO table are one Fake, which every helper takes
 * first and the IO table's callbacks find in their ctx. */
#ifndef PO_TESTS_RECONCILE_FAKE_API_H_
#define PO_TESTS_RECONCILE_FAKE_API_H_

#include <stdbool.h>

#include "po/reconcile/reconcile.h"
#include "po/meshes/consul.h"

struct json_object;

enum { kMax = 1024 };
typedef struct {
  char key[300];
  json_object *obj;
  bool hidden; /* on the server, not in the cache yet: a create whose event has not come (create_lags) */
} Slot;
/* Non-zero while the fixture checks a write (check_json_patch): test_reconcile_scale counts the
 * reconciler's strcmp and snprintf calls, not the fixture's. */
extern int fake_checking;

typedef struct Fake {
  Slot slots[kMax];
  int rv;
  int target_writes, override_patches, status_patches, uids;
  int target_json_patches; /* target updates sent as a JSON Patch (po_Consul_Delta), each checked to make the planned object */
  int last_json_patch_ops; /* the last one's operations, the resourceVersion's included */
  bool conflict_next;
  int conflict_at; /* the target write attempt (1-based) that meets a conflict; 0: none */
  int fail_at;     /* the target write attempt (1-based) that fails (kPo_WriteResult_Failed); 0: none */
  int attempts;
  bool unsynced;
  int target_events;
  char last_target_reason[64];
  int events;      /* Events about PropertyOverrides */
  bool status_lags; /* status writes succeed but the cache keeps the old object (a lagging watch) */
  bool target_lags; /* target updates succeed (answered) but the cache keeps the version written over
                       until fake_deliver_echo: the echo of the last one waits in echo */
  struct json_object *echo;
  bool create_lags; /* target creates succeed (answered) but the cache shows no object until fake_show_created */
  int create_conflicts; /* target creates answered AlreadyExists (409) */
  bool answer_lost; /* target updates are applied but answered as failed (a timeout after the commit) */
  int live_reads;   /* targets read from the "server" (read_target), not the cache */
  bool echo_due;    /* the last target update's echo is asked about (IsOwnTargetEcho) at the next read */
  char echo_key[300];
  int status_fails; /* the next this many status writes fail (kPo_WriteResult_Failed), as a 500 would */
  int target_fails; /* the next this many target writes fail (kPo_WriteResult_Failed), as a refusing webhook would */
  int override_fails; /* the next this many PropertyOverride patches (not status) fail likewise */
  int overrides_gone; /* the next this many PropertyOverride patches (not status) answer NotFound, the object
                         left in its slot: deleted on the server (it had no finalizer), the cache not told yet */
  const char *fail_text; /* the error of those failures (NULL: "injected failure") */
  int lent; /* objects read and not released yet */
  /* A slot's key ("po/<ns>/<name>", "<Kind>/<ns>/<name>") whose reads fail as a cache's read that
   * ran out of memory does (po_Informer_Get: cached, not readable; never absent); NULL: none. */
  const char *unreadable;
  int unreadable_reads; /* reads that failed so (injected or a failed copy) */
  int override_reads; /* PropertyOverrides read (lent) */
  bool answer_unfinalized; /* a finalizer write's answer lists no finalizer of ours (a mutating webhook took it out) */
  const char *now; /* what io->now says (NULL: 2026-12-01T00:00:00Z) */
  char last_event_reason[64];
  void (*check_write)(struct Fake *fx, struct json_object *obj); /* sees every target written (obj NULL: a delete) */
  po_TargetIndex *ix;  /* the index, as the informer handlers keep it */
  po_Tenancy tenancy;  /* the tenancy policy io hands out (from namespace "mesh") */
  int warnings;        /* Warning Events about PropertyOverrides */
  bool no_digest;      /* target_version says nothing: every reconcile reads the target's object */
  int digest_patches;  /* target updates planned from a digest (a JSON Patch without the object) */
  po_ReconcileIO io;   /* the IO table over this server: io.ctx is the fixture */
} Fake;

/* A fixture: a server of its own, an empty index, the IO table over them; every test gets one
 * (setup), passes it explicitly, and frees it (teardown checks every read was handed back). */
Fake *fake_new(void);
void fake_free(Fake *fx);

struct json_object *get(struct json_object *o, const char *k);
Slot *slot(Fake *fx, const char *key, bool create);
void bump(Fake *fx, struct json_object *o);
void put(Fake *fx, const char *key, struct json_object *o);
struct json_object *copy(struct json_object *o);
/* cmocka's setup and teardown: *s is a fake_new() fixture, freed by teardown. */
int setup(void **s);
int teardown(void **s);
/* A PropertyOverride of namespace default (uid "uid-po-<name>") stored and indexed as the
 * informer handlers would. */
void apply_override(Fake *fx, const char *name, int gen, const char *target, const char *patches);
/* The same in namespace ns, with spec.targetRef.namespace when target_ns is not NULL (uid
 * "uid-po-NS-NAME" outside default). */
void apply_override_ns(Fake *fx, const char *ns, const char *name, int gen, const char *target, const char *target_ns,
                       const char *patches);
/* A PropertyOverride object stored (taken) as the server keeps it over the one there (its
 * finalizers, annotations and status kept) and indexed as the informer handlers would. */
void store_override(Fake *fx, const char *ns, const char *name, struct json_object *o);
/* The last lagged target update's echo into the cache (target_lags), as its watch event brings
 * it; whether the index took it as our own echo (not reconciled) is returned. */
bool fake_deliver_echo(Fake *fx);
/* Every target created under create_lags into the cache, as their ADDED events bring them. */
void fake_show_created(Fake *fx);
/* The object of key deleted by someone else, its DELETE event handled: a mesh object's tells the
 * index (po_TargetIndex_ObjectSeen, as the controller's handlers do). */
void fake_delete(Fake *fx, const char *key);
/* po_Reconcile of a key through the fixture's IO table, its error printed, every lent object checked handed back. */
po_ReconcileResult reconcile_key(Fake *fx, const char *key);
/* metadata.annotations[k] of o, or NULL. */
const char *annotation_of(struct json_object *o, const char *k);
/* The object of a slot, or NULL. */
struct json_object *slot_obj(Fake *fx, const char *key);
/* A condition of the stored PropertyOverride ns/name, or NULL. */
struct json_object *override_condition(Fake *fx, const char *ns, const char *name, const char *type);

#endif
