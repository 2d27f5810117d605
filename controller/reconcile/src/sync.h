/* Private to reconcile: whether consul-k8s has synced a target since our last write into it, the
 * verdict behind Programmed under --consul-sync-status=require (docs/crd.md, "Programmed").
 *
 * consul-k8s reports on every config-entry object one `Synced` condition (True, False, or Unknown
 * with reason ConsulAgentError when Consul refused an update) and status.lastSyncedTime, with no
 * observedGeneration, and writes no status at all when the object already matches Consul and
 * Synced is already True. So "synced after our write" is decided from a record we keep on the
 * target itself (it survives restarts and failovers), the annotation
 *     propertyoverride.io/written: "at=<RFC 3339> spec=<16 hex> status=<16 hex>"
 * written with our entries: when, a hash of the spec written, and a hash of the status the target
 * had at that moment. consul-k8s rewrites the Synced condition (with a new lastTransitionTime,
 * one-second precision) on every status write it makes, so a status that differs from the
 * recorded one was written after our write, whatever the clocks of the two controllers say.
 * Two cases keep that exact:
 *   - a write whose spec is the one last recorded (a restore of our own entries, an annotation
 *     alone) keeps the old record: consul-k8s may see nothing new and write no status;
 *   - a write in the second of the status it would record, or the second either side of it
 *     (the two clocks a fraction apart), is put off until that second is past (the next status
 *     write could otherwise be identical, time and all). */
#ifndef PO_RECONCILE_SYNC_H_
#define PO_RECONCILE_SYNC_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/reconcile/reconcile.h"

struct json_object;

#define PO_WRITTEN_ANNOTATION "propertyoverride.io/written"

typedef struct {
  bool present;
  int64_t at;           /* Unix seconds of our write */
  uint64_t spec_hash;   /* po_Json_HashStable of the spec written (stored: stable across processes) */
  uint64_t status_hash; /* po_Sync_StatusHash of the status the target had then */
} po_WriteRecord;

/* RFC 3339 ("2026-12-02T05:00:01Z", fractions and offsets allowed) as Unix seconds; -1 when it
 * is not one. */
int64_t po_Sync_ParseTime(const char *s);
/* The record on a target; present false when absent or malformed (then it is as if absent: a
 * target written by an older version, or by hand). */
po_WriteRecord po_Sync_ReadRecord(const struct json_object *target);
/* Writes the record into metadata.annotations of `target` (our own copy); false when out of
 * memory. */
bool po_Sync_SetRecord(struct json_object *target, const po_WriteRecord *r);
uint64_t po_Sync_StatusHash(const struct json_object *target);
/* The latest time consul-k8s wrote into the target's status (lastSyncedTime, the Synced
 * condition's lastTransitionTime), -1 when none. */
int64_t po_Sync_LastStatusTime(const struct json_object *target);

typedef enum { kPo_SyncState_Live = 0, kPo_SyncState_Pending, kPo_SyncState_Failed } po_SyncState;

typedef struct {
  po_SyncState state;
  bool timed_out;         /* Pending for longer than the policy's timeout */
  int64_t recheck_in_s;   /* Pending, not timed out: when the timeout falls due (0: never) */
  char message[1024];     /* for the Programmed condition (Pending, SyncFailed) */
} po_SyncVerdict;

/* The verdict for our entries in `target` (as the cache has it, or as just written) with the
 * record `w` in effect, at Unix time `now`; `where` names the target in messages. A NULL policy
 * or the ignore mode: always Live. */
void po_Sync_Judge(const po_SyncPolicy *p, const struct json_object *target, const po_WriteRecord *w, int64_t now,
                   const char *where, po_SyncVerdict *v);
/* The record our last write into the target `key` carried, as this process wrote it (in memory:
 * a tenant who may update the target can edit or remove the annotation, not this); false when
 * this process wrote none (a restart, another replica's write, a failed write). Lives in
 * index.c, with the rest of what the index remembers of our target writes. */
bool po_TargetIndex_OwnRecord(po_TargetIndex *ix, const char *key, po_WriteRecord *r);

/* The sentence a timed-out Pending message starts with: the one-time Warning Event is raised
 * when the old Programmed message did not start with it. */
#define PO_SYNC_TIMEOUT_PREFIX "consul-k8s has not reported"

#endif
