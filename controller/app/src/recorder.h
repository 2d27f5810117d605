/* The Event recorder: the reconcile hands Events over and never waits for a POST; a background
 * runnable posts them, coalesced the way client-go's EventRecorder and correlator do.
 *
 *   - An Event is held `hold_ms` before it is posted. Meanwhile:
 *       the same (object uid, type, reason, message) again only counts (count, lastTimestamp);
 *       a newer Normal Event on the same object replaces a pending Normal one (the older
 *       transition lasted less than the hold: "Accepted" is followed at once by "Programmed").
 *     Warnings are never replaced by anything.
 *   - Once posted, the same Event again within `window_ms` becomes a series update (a merge
 *     PATCH of count and lastTimestamp on the posted Event, itself held and coalesced), not a
 *     new object.
 *   - At most `capacity` Events are remembered. When full, the oldest posted one is forgotten
 *     (a later repeat is then a new Event); when every slot is still pending the new Event is
 *     dropped and counted (`dropped`): Events are best effort, the status holds the truth.
 * Cost per Record: one hash lookup under a mutex; per flush: a scan of at most `capacity`. */
#ifndef PO_APP_RECORDER_H_
#define PO_APP_RECORDER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/kube/client.h"
#include "po/runtime/metrics.h"
#include "po/runtime/runnable.h"

struct json_object;
typedef struct po_EventRecorder po_EventRecorder;

typedef struct {
  int64_t hold_ms;   /* how long a new Event waits for its successors (default 1000) */
  int64_t window_ms; /* how long a posted Event takes repeats as a series (default 600000) */
  size_t capacity;   /* Events remembered (default 4096) */
  /* a counter family with one label, result: recorded, posted, patched, coalesced, superseded,
   * dropped, failed (may be NULL) */
  po_MetricFamily *metric;
} po_EventRecorderOptions;

typedef struct {
  uint64_t recorded, posted, patched, coalesced, superseded, dropped, failed;
} po_EventRecorderStats;

/* NULL when out of memory. The client is borrowed and must outlive the recorder. */
po_EventRecorder *po_EventRecorder_New(po_KubeClient *client, const po_EventRecorderOptions *o);
/* Frees what is still pending without posting it (Stop posts it). */
void po_EventRecorder_Free(po_EventRecorder *r);
/* `about` is read now (namespace, name, uid); nothing is kept of it. Never blocks on IO. */
void po_EventRecorder_Record(po_EventRecorder *r, const char *api_version, const char *kind, struct json_object *about,
                             const char *type, const char *reason, const char *message);
/* Posts everything pending now, on the caller's thread (Stop uses it; so do tests). */
void po_EventRecorder_Flush(po_EventRecorder *r);
po_EventRecorderStats po_EventRecorder_Stats(po_EventRecorder *r);
/* Its flusher thread as a runnable (not leader-only); its stop posts what is pending. */
po_Runnable po_EventRecorder_Runnable(po_EventRecorder *r);

#endif
