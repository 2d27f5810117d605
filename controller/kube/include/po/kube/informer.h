/* An informer: list, then watch, into a thread-safe cache of one kind, with handlers.
 *
 * One thread per informer runs list -> watch(resourceVersion, bookmarks, jittered timeout) ->
 * watch again from the last resourceVersion seen. 410 Gone (HTTP status or ERROR event) means
 * relist; the relist is diffed against the cache, so objects deleted while the watch was down
 * are delivered as deletions. Failures reconnect with po_Backoff (0.8 s -> 30 s, jitter,
 * reset after 2 min healthy).
 *
 * The cache is keyed "namespace/name" (or "name" for cluster-scoped kinds) and keeps, per
 * informer (po_InformerOptions.keep_parsed), either each object's parsed json-c tree, shared
 * read-only by every reader, or its JSON text (as the server sent it; compressed when asked,
 * compress_text), parsed for each reader.
 * A tree costs about 13 times its text (17 KB for a 1.3 KB PropertyOverride, measured): trees
 * suit a kind with few objects read often, text one with many. Handlers run on the informer's
 * thread, after the cache is updated, without locks held; objects passed to them are borrowed
 * for the call and read-only (with keep_parsed they are the cached trees). */
#ifndef PO_KUBE_INFORMER_H
#define PO_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/kube/client.h"

struct json_object;
typedef struct po_Informer po_Informer;
typedef struct po_InformerVersion po_InformerVersion;

typedef struct {
  void (*on_add)(void *ctx, struct json_object *obj);
  void (*on_update)(void *ctx, struct json_object *old_obj, struct json_object *new_obj);
  /* obj is the last state known: the DELETED event's object, or the cached one after a relist. */
  void (*on_delete)(void *ctx, struct json_object *obj);
  void *ctx;
  /* on_update gets old_obj NULL: the old object is not parsed for a handler that never reads it
   * (each update would otherwise parse the object twice). */
  bool no_old_object;
  /* When set, called for an update instead of on_update, with what the cache recorded of the
   * old object (resourceVersion, uid, generation, deletion) instead of the object: no parse of
   * the old text for a handler that needs only those. */
  void (*on_update_version)(void *ctx, const po_InformerVersion *old_version, struct json_object *new_obj);
  /* When set (and the cache keeps text, untransformed), asked for each update from the watch
   * before it is parsed, with what its bytes say of it (key "ns/name" or "name", and version):
   * true when the caller knows that version as the object a write of its own made (the uid and
   * resourceVersion the write's answer carried) and has nothing to do for it. The cache then
   * keeps the event's bytes (as for any event: managedFields cut) and nothing is parsed nor
   * delivered. Asked once per event; after false the event goes the usual way. Asked before the
   * cache changes: what must see the cache hold that version goes in own_cached. */
  bool (*own_version)(void *ctx, const char *key, const po_InformerVersion *version);
  /* When set, told after own_version said true, once the cache holds that version (as a handler
   * of an event the usual way is told after the cache holds it): a reader it wakes reads that
   * version, not the one before. Not told when the entry could not be made (out of memory). */
  void (*own_cached)(void *ctx, const char *key, const po_InformerVersion *version);
} po_InformerHandlers;

/* Objects per page of an informer's list. On kube-apiserver each page is a consistent read of
 * its own (0.7-1.1 s of server time each, whatever its size up to thousands: docs/benchmarks.md),
 * so a cold start's list of 100,000 took minutes in pages of 500; the informer holds one page's
 * bytes at a time (~2 KB an object) and parses one item at a time. */
enum { kPo_InformerPageSize = 5000 };

typedef struct {
  po_KubeRef ref;              /* group/version/resource; ns NULL: all namespaces */
  const char *label_selector;
  const char *field_selector;
  long page_size;              /* objects per list page; 0: kPo_InformerPageSize; < 0: one unpaginated list */
  long min_watch_timeout_s;    /* timeoutSeconds drawn from [min, 2*min); 0: 300 */
  int64_t backoff_initial_ns;  /* 0: 800 ms */
  int64_t backoff_max_ns;      /* 0: 30 s */
  int64_t backoff_reset_ns;    /* 0: 2 min */
  uint64_t seed;               /* jitter; 0: from the clock */
  /* The cache keeps parsed trees, handed out by reference (no parse per po_Informer_Get, no
   * text made per event); otherwise compact text, parsed for each reader (13 times smaller). */
  bool keep_parsed;
  /* A text cache leaves metadata.managedFields out of what it keeps unless this is set: no
   * reader here uses it (a write of an object without it keeps the server's: the API server
   * takes an update's empty managedFields as "unchanged"), and on a real API server it is a
   * third or more of an object's text (an entry per field manager, each listing the fields it
   * set). A kept tree is the server's object, whole. */
  bool keep_managed_fields;
  /* When set, what the cache keeps of each object: transform(obj) returns a new reference to a
   * copy of the parts its readers use (NULL: out of memory, as for any cache entry), cached
   * instead of obj, so the cache costs what is read rather than what was written. The cached
   * metadata (resourceVersion, uid, generation, deletion) is taken from obj itself. Readers
   * (po_Informer_Get, po_Informer_ForEach, on_update's old object, on_delete after a relist)
   * see the copy; on_add, on_update's new object and a DELETED event's object are the server's. */
  struct json_object *(*transform)(const struct json_object *obj);
  /* A text cache keeps each text compressed (zstd, lossless: readers get the same bytes) when
   * that is smaller, against text_dictionary[0..text_dictionary_len) when given (raw content,
   * copied: text like the kind's objects, so each keeps only what differs; NULL: none). For a kind
   * with many objects alike (PropertyOverrides: ~2.5 KB each, a fifth of that compressed): each
   * store compresses and each reader decompresses, a few microseconds for a few KB. */
  bool compress_text;
  const void *text_dictionary;
  size_t text_dictionary_len;
  /* zstd's level for compress_text (0: 1). Negative levels trade size for speed: a Consul
   * target, stored at each write and read at each reconcile, takes -3 (po_App_TextOptions). */
  int text_level;
  /* With compress_text: a watch event's text is kept as it came for text_pack_delay_ms (0: not at
   * all), then compressed at the first event or bookmark after that, unless the object changed
   * again meanwhile (its next event's text replaces it, kept the same way): an object written
   * several times in a row (a PropertyOverride: created, then the controller's finalizer, then
   * its status, within a burst's hold) is compressed once, not once per version (each about
   * 65,000 instructions). At most text_pack_pending_bytes (0: kPo_InformerPackPendingBytes) wait:
   * past that the oldest are compressed at once, whatever their age. A list's texts are
   * compressed as they are stored. */
  long text_pack_delay_ms;
  size_t text_pack_pending_bytes;
} po_InformerOptions;
enum { kPo_InformerPackPendingBytes = 4 << 20 };

/* Counters for tests, logs and benchmarks. */
typedef struct {
  uint64_t lists, watches, events, relists_gone, watch_errors, adds, updates, deletes;
  uint64_t events_parsed; /* watch events whose trees were built */
  uint64_t own_versions;  /* updates taken unparsed, by handlers.own_version */
  uint64_t texts_packed_late; /* texts compressed after text_pack_delay_ms (the others were replaced first) */
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

/* What the cache recorded of an object besides its content: its resourceVersion, uid,
 * generation and whether it is being deleted, read without parsing it. The first three together
 * name one state of one object: a resourceVersion alone can come back for another object (a
 * delete and create with the same name after an etcd restore reuses numbers). */
struct po_InformerVersion {
  char rv[128];
  char uid[128];
  int64_t generation; /* 0 when the object has none */
  bool deleting;      /* metadata.deletionTimestamp is set */
};

/* A reader's hold on one cached object. */
typedef struct po_InformerRef po_InformerRef;

/* The cached object, or NULL (ns NULL or "" for cluster-scoped objects): with st->code kPo_Ctl_Ok
 * when absent, with kPo_Ctl_NoMemory when it is cached but could not be handed out (memory ran
 * out decompressing or parsing its text, or holding the parse; st->message says which and names
 * the resource and key). That is never an absent object: a caller that took it for one would
 * write as if the object were gone (a reconcile dropping a live PropertyOverride's entry). It stays
 * valid, unchanged, until po_InformerRef_Release(*ref), whatever the informer does meanwhile.
 * With keep_parsed it is the cache's own tree, shared with every other reader and thread, so it
 * is strictly read-only: never change it, never json_object_get/put it or any part of it (json-c's
 * reference counts are not atomic), never serialise it or call json_object_get_string on a
 * non-string in it (json-c writes the text into the object): deep-copy what you must keep or
 * change. Without keep_parsed it is a parse made for this call (same rules, for one code path). */
const struct json_object *po_Informer_Get(po_Informer *inf, const char *ns, const char *name, po_InformerRef **ref,
                                          po_CtlStatus *st);
/* NULL is a no-op; any thread. */
void po_InformerRef_Release(po_InformerRef *ref);
/* The cached object's version; false (all empty) when absent: what lets a reader parse only the
 * objects that changed since it last looked. */
bool po_Informer_Version(po_Informer *inf, const char *ns, const char *name, po_InformerVersion *v);
size_t po_Informer_Count(po_Informer *inf);
/* Calls fn for each cached object (parsed, borrowed for the call, read-only as with Get), under the cache's read lock:
 * keep fn short and do not call back into the informer. rv is its resourceVersion. false when some
 * object could not be parsed (out of memory; fn was not called for it, and was for the others):
 * the walk did not see the whole cache. */
bool po_Informer_ForEach(po_Informer *inf,
                         void (*fn)(void *ctx, const char *key, const struct json_object *obj, const char *rv),
                         void *ctx);
/* The same without parsing: each cached key ("namespace/name", or "name" cluster-scoped) and
 * resourceVersion. */
void po_Informer_ForEachKey(po_Informer *inf, void (*fn)(void *ctx, const char *key, const char *rv), void *ctx);
/* The resourceVersion the informer would resume from. Copies into buf. */
void po_Informer_LastResourceVersion(po_Informer *inf, char *buf, size_t size);
po_InformerStats po_Informer_Stats(po_Informer *inf);
/* The last failed list or watch (the API server's or the decoder's words, with the resource), ""
 * when the last one succeeded: so a cache that never syncs says why (the readiness reason) instead
 * of retrying silently. Writes at most size bytes; returns whether there is one. */
bool po_Informer_LastError(po_Informer *inf, char *buf, size_t size);
/* Bytes the cache holds (entries, texts and hash slots; not parsed trees), for the memory benchmark. */
size_t po_Informer_CacheBytes(po_Informer *inf);

#endif
