/* The watch stream parser, on json-c's incremental tokener: the tokener keeps its state across
 * chunks, so no line buffer is needed; we only skip the whitespace between objects ourselves
 * (to tell "between events" from "inside one" for the size bound and for Finish). */
#include "po/kube/watch_parser.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

struct po_WatchParser {
  json_tokener *tok;
  size_t max_event, pending; /* bytes of the event being read */
  size_t offset;             /* bytes consumed before the current event */
  size_t events;
  bool in_event, failed;
  po_KubeStatus err;
};

po_WatchParser *po_WatchParser_New(size_t max_event_bytes) {
  po_WatchParser *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  /* Objects nest deeper than json-c's default 32 (managedFields, CRD schemas). */
  p->tok = json_tokener_new_ex(256);
  if (!p->tok) {
    free(p);
    return NULL;
  }
  json_tokener_set_flags(p->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                     JSON_TOKENER_VALIDATE_UTF8);
  p->max_event = max_event_bytes ? max_event_bytes : (size_t)64 << 20;
  return p;
}

void po_WatchParser_Free(po_WatchParser *p) {
  if (!p) return;
  json_tokener_free(p->tok);
  free(p);
}

size_t po_WatchParser_Offset(const po_WatchParser *p) { return p->offset + p->pending; }

static po_WatchFeedResult fail(po_WatchParser *p, po_KubeStatus *st, const char *what, const char *detail) {
  p->failed = true;
  po_KubeStatus_Set(&p->err, kPo_KubeErr_Decode, "watch stream: event %zu (at byte %zu): %s%s%s",
                    p->events + 1, p->offset, what, detail ? ": " : "", detail ? detail : "");
  if (st) *st = p->err;
  return kPo_WatchFeed_Error;
}

static const struct {
  const char *name;
  po_KubeWatchEventType type;
} kTypes[] = {{"ADDED", kPo_KubeWatch_Added},
              {"MODIFIED", kPo_KubeWatch_Modified},
              {"DELETED", kPo_KubeWatch_Deleted},
              {"BOOKMARK", kPo_KubeWatch_Bookmark},
              {"ERROR", kPo_KubeWatch_Error}};

static po_WatchFeedResult dispatch(po_WatchParser *p, json_object *ev, po_KubeWatchFn fn, void *ctx,
                                   po_KubeStatus *st) {
  json_object *t, *o;
  if (!json_object_is_type(ev, json_type_object))
    return fail(p, st, "expected a JSON object {\"type\":..., \"object\":...}", json_type_to_name(json_object_get_type(ev)));
  if (!json_object_object_get_ex(ev, "type", &t) || !json_object_is_type(t, json_type_string))
    return fail(p, st, "expected \"type\" to be a string", NULL);
  const char *ts = json_object_get_string(t);
  int k = -1;
  for (int i = 0; i < 5; i++)
    if (strcmp(kTypes[i].name, ts) == 0) k = i;
  if (k < 0)
    return fail(p, st, "expected type ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, found", ts);
  if (!json_object_object_get_ex(ev, "object", &o) || !json_object_is_type(o, json_type_object))
    return fail(p, st, "expected \"object\" to be a JSON object", NULL);
  p->events++;
  return fn(ctx, kTypes[k].type, o) ? kPo_WatchFeed_More : kPo_WatchFeed_Stop;
}

po_WatchFeedResult po_WatchParser_Feed(po_WatchParser *p, const char *data, size_t len,
                                       po_KubeWatchFn fn, void *ctx, po_KubeStatus *st) {
  if (p->failed) {
    if (st) *st = p->err;
    return kPo_WatchFeed_Error;
  }
  while (len > 0) {
    if (!p->in_event) {
      while (len > 0 && (*data == ' ' || *data == '\n' || *data == '\r' || *data == '\t')) {
        data++;
        len--;
        p->offset++;
      }
      if (!len) break;
      p->in_event = true;
      p->pending = 0;
    }
    /* json-c takes an int length; feed huge chunks in slices. */
    int n = len > (1u << 30) ? 1 << 30 : (int)len;
    json_object *ev = json_tokener_parse_ex(p->tok, data, n);
    enum json_tokener_error e = json_tokener_get_error(p->tok);
    if (e == json_tokener_continue) {
      p->pending += (size_t)n;
      data += n;
      len -= (size_t)n;
      if (p->pending > p->max_event) return fail(p, st, "event larger than the limit", NULL);
      continue;
    }
    if (e != json_tokener_success) return fail(p, st, "invalid JSON", json_tokener_error_desc(e));
    size_t used = json_tokener_get_parse_end(p->tok);
    json_tokener_reset(p->tok);
    data += used;
    len -= used;
    p->pending += used;
    p->offset += p->pending;
    p->pending = 0;
    p->in_event = false;
    po_WatchFeedResult r = dispatch(p, ev, fn, ctx, st);
    json_object_put(ev);
    if (r != kPo_WatchFeed_More) return r;
  }
  return kPo_WatchFeed_More;
}

bool po_WatchParser_Finish(po_WatchParser *p, po_KubeStatus *st) {
  if (p->failed) {
    if (st) *st = p->err;
    return false;
  }
  if (p->in_event) {
    fail(p, st, "stream ended inside an event", NULL);
    return false;
  }
  return true;
}
