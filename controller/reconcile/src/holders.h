/* Private to reconcile: which Consul targets hold an entry of which PropertyOverride, by the id
 * its marker names ("uid/namespace/name", index.c: a look-alike carrying the uid under another
 * name or namespace is not one). A deleted PropertyOverride's finalizer is all that removes its entries (one
 * naming a PropertyOverride that no longer exists is someone else's, ForeignEntry), and once a
 * move is recorded (status.lastValid names the new target) nothing else links it to the target it
 * left: deleted before that target's reconcile removed the old entry, its finalizer went and the
 * entry stayed for good. So the release waits until no other target holds an entry of it
 * (reconcile.c, release_finalizer). Learnt from the targets as the watch brings them (the initial
 * list too: a restart or a new leader rebuilds it) and from our own writes, whose echoes are not
 * parsed. Two tables (strtable.h), by uid and by target key, linked both ways: a lookup costs the
 * uid's targets, an update the target's entries. Usually one target per PropertyOverride: about
 * 150 bytes each (the uid once, a node in each table, a pointer each way). Not thread-safe: the
 * index's lock guards it. */
#ifndef PO_RECONCILE_HOLDERS_H_
#define PO_RECONCILE_HOLDERS_H_

#include <stdbool.h>
#include <stddef.h>

#include "strtable.h"

typedef struct {
  po_StrTable by_uid;    /* Holder by the PropertyOverride's uid */
  po_StrTable by_target; /* Held by target key */
  /* Targets whose last update failed (out of memory): what they hold is not known, so they hold
   * every release (a fresh index after a restart knew nothing before: a superset of nothing is
   * too little) until an update of theirs succeeds in full. `unknown` counts those with a record
   * (Held.unknown); those whose record could not even be made are kept here, without an
   * allocation, and past four of them `overflow` refuses every release as out of
   * memory for as long as the process lives (the event handler says so). */
  size_t unknown;
  char lost[4][600];
  bool overflow;
  /* PropertyOverrides whose release went ahead (po_Holders_Claim), by id, oldest first: a
   * reconcile that planned an entry of one before its deletion was seen must not write it
   * (po_Holders_Writing). Kept kPo_HoldersReleasedS seconds: far longer than any reconcile. */
  po_StrTable released;
  struct Released *oldest, *newest;
} po_Holders;

void po_Holders_Free(po_Holders *h);
/* Target `key` holds an entry of each of uids[n] (ids) (duplicates allowed), and, when exact, of no
 * other. False when memory ran out: then nothing it held before was forgotten, and the target
 * holds every release until an update of it succeeds (some of uids may be missing). Forgetting
 * (exact, with fewer uids) never allocates. */
bool po_Holders_Set(po_Holders *h, const char *key, const char *const *uids, size_t n, bool exact);
/* What target `key` holds is not known (an update of it could not be made: out of memory): it
 * holds every release until an update of it succeeds in full. Never fails (holders.h: lost). */
void po_Holders_Unknown(po_Holders *h, const char *key);
/* The targets other than `except` (may be NULL) holding an entry of uid, or not known
 * (po_Holders_Set failed): "key\0key\0" (*count of them; the caller frees), NULL with *count 0
 * when none. NULL with *count > 0: out of memory, now or in an update whose target is lost. */
char *po_Holders_Of(const po_Holders *h, const char *uid, const char *except, size_t *count);
enum { kPo_HoldersReleasedS = 600 };
/* The release of id (no target but `except` holding an entry of it, as po_Holders_Of) is going
 * ahead: remembered at now_s, so that no write adds an entry of it after this. Returns the holders
 * as po_Holders_Of; only with none (NULL, *count 0) is the release remembered, and when that
 * runs out of memory *count is 1 (out of memory). */
char *po_Holders_Claim(po_Holders *h, const char *id, const char *except, long long now_s, size_t *count);
/* id's PropertyOverride is gone from the API server with our finalizer still on it (its DELETED
 * event): kube-apiserver lets a DELETE that read the object before our finalizer patch remove it
 * after that patch succeeded (kubernetes/kubernetes#77988), so the write that follows the patch
 * can put an entry of one that no longer exists. Remembered as released (*remembered false: out of
 * memory), so that no write adds an entry of it from now on and the reconciles of the targets
 * holding one remove it (po_Holders_Released); returns those targets as po_Holders_Of. */
char *po_Holders_Vanished(po_Holders *h, const char *id, long long now_s, size_t *count, bool *remembered);
/* Whether id was released (po_Holders_Claim, po_Holders_Vanished) within kPo_HoldersReleasedS:
 * an entry of it left in a target is ours to remove, not someone else's. */
bool po_Holders_Released(const po_Holders *h, const char *id);
/* A write about to put entries of ids[n] into `key`: false when one of them was released (the
 * write must not be made); else as po_Holders_Set (exact false) in *ok. */
bool po_Holders_Writing(po_Holders *h, const char *key, const char *const *ids, size_t n, bool *ok);
/* The bytes the tables hold (tests: the memory bound per PropertyOverride). */
size_t po_Holders_Bytes(const po_Holders *h);

#endif
