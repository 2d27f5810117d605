/* A REST client for any group/version/resource of a Kubernetes API server.
 *
 * Thread-safety: one po_KubeClient may be used by any number of threads at once. Each request
 * borrows an idle CURL easy handle from the client's pool (making one when none is idle), so
 * concurrent requests never share a handle; all handles share one CURLSH (connection cache, DNS,
 * TLS sessions) guarded by the client's locks, so connections are reused across threads. The
 * QPS/burst limiter is one token bucket per client, behind a mutex.
 *
 * Ownership: json_object results are new references the caller must json_object_put(); inputs
 * are borrowed. Create/Update serialize their input, and json-c caches that text inside the
 * object: do not let another thread use the same json_object during the call.
 *
 * Watches can be cancelled (po_KubeCancel), and a list's waits for the rate limiter and retries
 * (po_KubeListOptions.cancel); a request in flight ends by its timeout. */
#ifndef PO_KUBE_CLIENT_H
#define PO_KUBE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/base/clock.h"
#include "po/base/rate.h"
#include "po/kube/config.h"
#include "po/kube/status.h"

struct json_object;
typedef struct po_KubeClient po_KubeClient;

/* Called after every HTTP exchange (each retry counts), for metrics such as
 * rest_client_requests_total{code,method}. code is 0 when no answer arrived. From any thread. */
typedef void (*po_KubeRequestObserver)(void *ctx, const char *method, long code, double seconds);

typedef struct {
  double qps;              /* 0: 20 (controller-runtime's default); < 0: no limit */
  int burst;               /* 0: 30 */
  long timeout_ms;         /* a whole non-watch request; 0: 30000 */
  long connect_timeout_ms; /* 0: 10000 */
  int max_retries;         /* 0: 5; < 0: none */
  const po_Clock *clock;   /* NULL: po_Clock_System() */
  const char *user_agent;  /* NULL: "propertyoverride/<version>" */
  uint64_t seed;           /* jitter seed; 0: derived from the clock */
  po_KubeRequestObserver observer;
  void *observer_ctx;
  /* HTTP/2 (offered in TLS's ALPN) for requests and watches; false: HTTP/1.1 with keep-alive.
   * HTTP/1.1 is the default: libcurl's HTTP/2 (7.88) cost a third more CPU per request (two TLS
   * writes and more polls per exchange), and saves no connection here, since each transfer runs in
   * its own multi handle and is never multiplexed with another (controller/kube/README.md). */
  bool http2;
} po_KubeClientOptions;

/* What a request addresses. group "" or NULL is the core group (/api/v1). ns NULL or "" is
 * cluster scope (or all namespaces for list and watch); name NULL addresses the collection. */
typedef struct {
  const char *group;
  const char *version;
  const char *resource;
  const char *ns;
  const char *name;
  const char *subresource; /* e.g. "status"; NULL for the object itself */
} po_KubeRef;

typedef struct {
  const char *label_selector;
  const char *field_selector;
  long limit;                  /* page size; 0: server default (everything) */
  const char *continue_token;
  const char *resource_version;
  /* NULL, or a stop that ends the rate limiter's and the retries' waits (kPo_Ctl_Stopped): an
   * informer's list at a low QPS otherwise holds its stop for a token's worth of seconds. */
  struct po_KubeCancel *cancel;
} po_KubeListOptions;

typedef enum {
  kPo_KubePatch_Merge = 0, /* application/merge-patch+json (RFC 7386) */
  kPo_KubePatch_Apply = 1, /* application/apply-patch+yaml: server-side apply, needs field_manager */
  kPo_KubePatch_Json = 2,  /* application/json-patch+json (RFC 6902) */
} po_KubePatchType;

typedef struct {
  po_KubePatchType type;
  const char *field_manager;
  bool force; /* apply only: take ownership of conflicting fields */
  /* PatchVersion only: po_KubeWritten.has_finalizer says whether the answer's
   * metadata.finalizers lists this one (NULL: not asked) */
  const char *answer_finalizer;
} po_KubePatchOptions;

typedef struct {
  const char *propagation_policy;           /* "Foreground", "Background", "Orphan" or NULL */
  const char *precondition_uid;             /* fail with Conflict unless the uid matches */
  const char *precondition_resource_version;
  bool has_grace_period;                    /* false: the server's default grace period */
  long grace_period_seconds;
} po_KubeDeleteOptions;

typedef enum {
  kPo_KubeWatch_Added = 0,
  kPo_KubeWatch_Modified = 1,
  kPo_KubeWatch_Deleted = 2,
  kPo_KubeWatch_Bookmark = 3,
  kPo_KubeWatch_Error = 4, /* only from po_WatchParser; po_KubeClient_Watch turns it into a failure */
} po_KubeWatchEventType;

/* One watch event. Return false to end the watch (the call then returns true). The object is
 * borrowed for the call; take a reference to keep it. */
typedef bool (*po_KubeWatchFn)(void *ctx, po_KubeWatchEventType type, struct json_object *object);
/* The same, with the object's own bytes as the server sent them (valid JSON, borrowed for the
 * call), for a caller that keeps text: no serialising of what was just parsed. text is NULL
 * when the bytes could not be located (po_WatchParser_ObjectText says when). */
typedef bool (*po_KubeWatchTextFn)(void *ctx, po_KubeWatchEventType type, struct json_object *object,
                                   const char *text, size_t len);

/* A watch event's head, read from its bytes before any parse (po_KubeWatchOptions.peek). The
 * strings and bytes are borrowed for the call. */
typedef struct {
  po_KubeWatchEventType type;             /* ADDED, MODIFIED or DELETED */
  const char *ns, *name, *uid, *rv;       /* "" when absent (ns, uid) */
  int64_t generation;                     /* 0: absent */
  bool deleting;                          /* metadata.deletionTimestamp set */
  const char *object;                     /* the object's bytes as they arrived */
  size_t object_len;
  /* metadata.managedFields (the member and a comma) at [managed_at, managed_at + managed_len) of
   * object, found by the head's scan, when managed_cut */
  bool managed_cut;
  size_t managed_at, managed_len;
} po_KubeWatchHead;
/* Asked first for each event whose head reads plainly; true when the caller took the event as
 * it is (its bytes): it is then neither parsed nor given to fn. For a caller that knows some
 * events by their head alone (its own writes coming back, by uid and resourceVersion) and so
 * has no use for their trees. */
typedef bool (*po_KubeWatchPeekFn)(void *ctx, const po_KubeWatchHead *head);

typedef struct {
  const char *label_selector;
  const char *field_selector;
  const char *resource_version;
  long timeout_seconds;   /* server-side timeout; 0: none */
  bool allow_bookmarks;
  po_KubeWatchTextFn text_fn; /* when set, called instead of po_KubeClient_Watch's fn */
  po_KubeWatchPeekFn peek;    /* when set, asked before each event is parsed (with the watch's ctx) */
  bool cut_managed_fields;    /* events parsed without metadata.managedFields (po_WatchParser_SetCutManagedFields) */
} po_KubeWatchOptions;

/* A cancellation token for watches (and the sleeps between retries): fire it from any thread
 * and a blocked po_KubeClient_Watch returns promptly with kPo_Ctl_Stopped. */
typedef struct po_KubeCancel po_KubeCancel;
po_KubeCancel *po_KubeCancel_New(void);
void po_KubeCancel_Fire(po_KubeCancel *c);
bool po_KubeCancel_Fired(const po_KubeCancel *c);
/* Sleeps up to ns; returns false at once when (or if) the token fires. */
bool po_KubeCancel_Sleep(po_KubeCancel *c, int64_t ns);
void po_KubeCancel_Free(po_KubeCancel *c);

bool po_KubeClient_New(po_KubeConfig *cfg, const po_KubeClientOptions *opt, po_KubeClient **out,
                       po_CtlStatus *st);
/* After every other thread has finished with the client. cfg is not freed. */
void po_KubeClient_Free(po_KubeClient *c);
/* Idle connections kept for reuse, shared by all the client's threads. */
enum { kPo_KubeMaxIdleConnections = 64 };
/* How deep the objects the API server sends may nest, and so how deep every parser of its
 * answers (client.c, watch_parser.c, informer.c) must go: the API server decodes JSON with
 * sigs.k8s.io/json, Go's encoding/json scanner (internal/golang/encoding/json/scanner.go,
 * maxNestingDepth = 10000, "exceeded max depth"), so a custom resource whose schema preserves
 * unknown fields (status.lastValid.spec, a ServiceDefaults' extension arguments) is stored
 * nested up to 10,000 levels. A smaller limit here made one such object fail the list or watch
 * of every object of its kind: the controller stopped, or never became ready. json-c's tokener
 * keeps its own stack on the heap (10,000 x 40 bytes), and json-c's recursive walkers (put,
 * copy, equal, serialize) use under 1 MiB of stack at this depth (tests/kube/test_kube_deep.c). */
enum { kPo_KubeMaxObjectDepth = 10000 };
/* The tokeners' limit: an object at kPo_KubeMaxObjectDepth inside a list (the list and its items
 * array: two levels more; a watch event adds one), plus one because json-c's max_depth N admits
 * N - 1 levels. */
enum { kPo_KubeMaxJsonDepth = kPo_KubeMaxObjectDepth + 3 };
/* New connections (TCP + TLS handshakes) the client's requests made so far (watches not
 * counted): a few per thread when connections are reused, one per request when not. */
uint64_t po_KubeClient_Connections(po_KubeClient *c);
/* Answers the client's requests and watches got, by the HTTP version they came in: [0] HTTP/1.x,
 * [1] HTTP/2 (what po_KubeClientOptions.http2 chose, as the server agreed to it). */
void po_KubeClient_HttpVersions(po_KubeClient *c, uint64_t counts[2]);

bool po_KubeClient_Get(po_KubeClient *c, const po_KubeRef *ref, struct json_object **out,
                       po_CtlStatus *st);
/* One page: a List object with items and metadata.{resourceVersion,continue}. */
bool po_KubeClient_List(po_KubeClient *c, const po_KubeRef *ref, const po_KubeListOptions *opt,
                        struct json_object **out, po_CtlStatus *st);
/* One page as the server's bytes (malloc'd, NUL-terminated, *len without the NUL), for a reader
 * that takes the items one at a time (the informer) instead of a tree of the whole page. */
bool po_KubeClient_ListBytes(po_KubeClient *c, const po_KubeRef *ref, const po_KubeListOptions *opt,
                             char **body, size_t *len, po_CtlStatus *st);
/* Every page, following continue tokens (limit = page size): one List with all items and the
 * resourceVersion of the first page (the snapshot the pages belong to). */
bool po_KubeClient_ListAll(po_KubeClient *c, const po_KubeRef *ref, const po_KubeListOptions *opt,
                           struct json_object **out, po_CtlStatus *st);
/* ref->name is ignored (the name is in obj). AlreadyExists on a taken name. */
bool po_KubeClient_Create(po_KubeClient *c, const po_KubeRef *ref, struct json_object *obj,
                          struct json_object **out, po_CtlStatus *st);
/* PUT; ref->name NULL takes obj's metadata.name. Conflict when obj's resourceVersion is stale.
 * Set ref->subresource = "status" to update status only. */
bool po_KubeClient_Update(po_KubeClient *c, const po_KubeRef *ref, struct json_object *obj,
                          struct json_object **out, po_CtlStatus *st);
/* What a write's answer says of the object it made, read from the answer's bytes (no parse):
 * its metadata.uid and metadata.resourceVersion ("" when the answer does not say them plainly)
 * and metadata.generation (0 when it does not say it). Such a write asks for its answer as a
 * PartialObjectMetadata (its metadata only; a server that cannot serve one answers the object). */
typedef struct {
  char uid[128];
  char rv[64];
  int64_t generation;
  bool has_finalizer; /* PatchVersion: po_KubePatchOptions.answer_finalizer is in metadata.finalizers */
} po_KubeWritten;
/* po_KubeClient_Update, with *written (never NULL) what the answer says of the object the update
 * made (po_KubeWritten). */
bool po_KubeClient_UpdateVersion(po_KubeClient *c, const po_KubeRef *ref, struct json_object *obj,
                                 po_KubeWritten *written, po_CtlStatus *st);
bool po_KubeClient_Patch(po_KubeClient *c, const po_KubeRef *ref, const po_KubePatchOptions *opt,
                         const char *body, size_t len, struct json_object **out, po_CtlStatus *st);
/* po_KubeClient_Patch, with *written (never NULL) what the answer says of the object the patch
 * made (po_KubeWritten), read without a parse: the caller knows its own write's echo by it. */
bool po_KubeClient_PatchVersion(po_KubeClient *c, const po_KubeRef *ref, const po_KubePatchOptions *opt,
                                const char *body, size_t len, po_KubeWritten *written, po_CtlStatus *st);
/* out (may be NULL) gets the object as the server returned it (with deletionTimestamp when
 * finalizers hold it) or the Status. */
bool po_KubeClient_Delete(po_KubeClient *c, const po_KubeRef *ref, const po_KubeDeleteOptions *opt,
                          struct json_object **out, po_CtlStatus *st);

/* Streams watch events to fn until the server ends the stream (returns true), fn returns false
 * (true), cancel fires (kPo_Ctl_Stopped), the stream is malformed (kPo_Ctl_Decode), or
 * the server answers an error or sends an ERROR event (decoded: 410 is kPo_Ctl_Gone).
 * Never retried: the informer owns reconnects. */
bool po_KubeClient_Watch(po_KubeClient *c, const po_KubeRef *ref, const po_KubeWatchOptions *opt,
                         po_KubeWatchFn fn, void *ctx, po_KubeCancel *cancel, po_CtlStatus *st);

/* ns/name of ref as a URL path (for messages and tests): writes into buf, returns false when
 * it does not fit or ref is incomplete. */
bool po_KubeRef_Path(const po_KubeRef *ref, char *buf, size_t size);

/* Percent-encodes s for a query value into buf (RFC 3986 unreserved kept). */
bool po_Kube_QueryEscape(const char *s, char *buf, size_t size);

#endif
