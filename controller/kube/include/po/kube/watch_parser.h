/* Incremental parser of a watch response: newline-delimited JSON objects
 * {"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR", "object": {...}}.
 *
 * Bytes may arrive split anywhere (inside a token, a UTF-8 sequence, an escape); the events
 * delivered are the same for every split. Anything that is not a well-formed event is an error
 * that sticks: the caller drops the connection and watches again. One parser per stream; not
 * thread-safe. */
#ifndef PO_KUBE_WATCH_PARSER_H
#define PO_KUBE_WATCH_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "po/kube/client.h"
#include "po/kube/status.h"

typedef struct po_WatchParser po_WatchParser;

typedef enum {
  kPo_WatchFeed_More = 0,  /* everything consumed; feed more */
  kPo_WatchFeed_Stop = 1,  /* the callback asked to stop */
  kPo_WatchFeed_Error = 2, /* malformed stream; st says where and what */
} po_WatchFeedResult;

/* max_event_bytes bounds one event (0: 64 MiB), so a stream without delimiters cannot grow
 * memory without limit. NULL when out of memory. */
po_WatchParser *po_WatchParser_New(size_t max_event_bytes);
void po_WatchParser_Free(po_WatchParser *p);

/* The object passed to fn is borrowed for the call. */
po_WatchFeedResult po_WatchParser_Feed(po_WatchParser *p, const char *data, size_t len,
                                       po_KubeWatchFn fn, void *ctx, po_CtlStatus *st);
/* During a callback from Feed or Finish: the bytes of the event's "object" exactly as they
 * arrived (valid JSON; they live until the callback returns), or NULL (*len 0) when they are not
 * in one piece (an event over several lines whose lines came in separate reads) or not found
 * plainly (an escaped key). One
 * pass over the event's bytes, no allocation; only callers that keep text pay for it. */
const char *po_WatchParser_ObjectText(const po_WatchParser *p, size_t *len);
/* Asks peek (with ctx) about each event before it is parsed, when its head can be read from
 * its bytes (the event whole in one fed chunk, its metadata's strings plain): an event peek takes
 * is counted, skipped, and never parsed nor given to Feed's fn. NULL: every event is parsed. With a
 * peek, which events fn gets depends on how the bytes were cut (an event split between two reads
 * is not offered): the peek must take only what fn would have done nothing more with. */
void po_WatchParser_SetPeek(po_WatchParser *p, po_KubeWatchPeekFn peek, void *ctx);
/* cut true: each event whole in one fed chunk is parsed without its object's
 * metadata.managedFields (cut from a copy of its bytes, which po_WatchParser_ObjectText then
 * gives), for a caller that drops it anyway; an event split between reads, or one the copy cannot
 * be made of, is parsed whole. */
void po_WatchParser_SetCutManagedFields(po_WatchParser *p, bool cut);
/* Events taken by peek, and events parsed (json-c trees built), so far. */
size_t po_WatchParser_Peeked(const po_WatchParser *p);
size_t po_WatchParser_Parsed(const po_WatchParser *p);
/* At end of stream: delivers a last event not followed by a newline; an error when an event
 * was cut off. */
bool po_WatchParser_Finish(po_WatchParser *p, po_KubeWatchFn fn, void *ctx, po_CtlStatus *st);

#endif
