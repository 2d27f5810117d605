/* An informer: list, then watch, into a thread-safe cache of one kind, with handlers.
 *
 * One thread per informer runs list -> watch(resourceVersion, bookmarks, jittered timeout) ->
 * watch again from the last resourceVersion seen. 410 Gone (HTTP status or ERROR event) means
 * relist; the relist is diffed against the cache, so objects deleted while the watch was down
 * are delivered as deletions. Failures reconnect with po_Backoff (0.8 s -> 30 s, jitter,
 * reset after 2 min healthy).
 *
 * The cache holds each object as compact JSON text keyed "namespace/name" (or "name" for
 * cluster-scoped kinds), with its resourceVersion: small (a json-c tree costs about 13 times its
 * text: 17 KB for a 1.3 KB PropertyOverride, measured), and safe to share between threads
 * because readers get their own parsed copy. Handlers run on the
 * informer's thread, after the cache is updated, without locks held; objects passed to them
 * are borrowed for the call. */
#ifndef PO_KUBE_INFORMER_H
#define PO_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/kube/client.h"

struct json_object;
typedef struct po_Informer po_Informer;

typedef struct {
  void (*on_add)(void *ctx, struct json_object *obj);
  void (*on_update)(void *ctx, struct json_object *old_obj, struct json_object *new_obj);
  /* obj is the last state known: the DELETED event's object, or the cached one after a relist. */
  void (*on_delete)(void *ctx, struct json_object *obj);
  void *ctx;
  /* on_update gets old_obj NULL: the old object is not parsed for a handler that never reads it
   * (each update would otherwise parse the object twice). */
  bool no_old_object;
} po_InformerHandlers;

typedef struct {
  po_KubeRef ref;              /* group/version/resource; ns NULL: all namespaces */
  const char *label_selector;
  const char *field_selector;
  long page_size;              /* list pagination; 0: 500 */
  long min_watch_timeout_s;    /* timeoutSeconds drawn from [min, 2*min); 0: 300 */
  int64_t backoff_initial_ns;  /* 0: 800 ms */
  int64_t backoff_max_ns;      /* 0: 30 s */
  int64_t backoff_reset_ns;    /* 0: 2 min */
  uint64_t seed;               /* jitter; 0: from the clock */
} po_InformerOptions;

/* Counters for tests, logs and benchmarks. */
typedef struct {
  uint64_t lists, watches, events, relists_gone, watch_errors, adds, updates, deletes;
} po_InformerStats;

bool po_Informer_New(po_KubeClient *client, const po_InformerOptions *opt,
                     const po_InformerHandlers *handlers, po_Informer **out, po_CtlStatus *st);
/* Starts the thread. */
bool po_Informer_Start(po_Informer *inf, po_CtlStatus *st);
/* Whether the first list has been delivered to the cache and the handlers, and the informer
 * still runs (a stopped one is no longer synced). */
bool po_Informer_HasSynced(po_Informer *inf);
/* Blocks until synced (true) or timeout_ms passed / the informer stopped (false). */
bool po_Informer_WaitForSync(po_Informer *inf, long timeout_ms);
/* Ends the watch promptly and joins the thread. Idempotent. */
void po_Informer_Stop(po_Informer *inf);
void po_Informer_Free(po_Informer *inf);

/* A parsed copy of the cached object (the caller's to change and put), or NULL when absent.
 * ns NULL or "" for cluster-scoped objects. */
struct json_object *po_Informer_Get(po_Informer *inf, const char *ns, const char *name);
/* The cached object's resourceVersion, uid and generation, without parsing it; false (all empty)
 * when absent: what lets a reader parse only the objects that changed since it last looked. The
 * three together name one state of one object: a resourceVersion alone can come back for another
 * object (a delete and create with the same name after an etcd restore reuses numbers). */
typedef struct {
  char rv[128];
  char uid[128];
  int64_t generation; /* 0 when the object has none */
} po_InformerVersion;
bool po_Informer_Version(po_Informer *inf, const char *ns, const char *name, po_InformerVersion *v);
size_t po_Informer_Count(po_Informer *inf);
/* Calls fn for each cached object (parsed, borrowed for the call), under the cache's read lock:
 * keep fn short and do not call back into the informer. rv is its resourceVersion. */
void po_Informer_ForEach(po_Informer *inf,
                         void (*fn)(void *ctx, const char *key, const struct json_object *obj, const char *rv),
                         void *ctx);
/* The resourceVersion the informer would resume from. Copies into buf. */
void po_Informer_LastResourceVersion(po_Informer *inf, char *buf, size_t size);
po_InformerStats po_Informer_Stats(po_Informer *inf);
/* Bytes the cache holds (entries and hash slots), for the memory benchmark. */
size_t po_Informer_CacheBytes(po_Informer *inf);

#endif
