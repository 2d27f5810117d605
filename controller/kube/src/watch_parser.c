/* The watch stream parser, on json-c's incremental tokener.
 *
 * json-c's tokener is not split-proof: a chunk that ends inside a number lets garbage after the
 * boundary through ({"n":3 | -} parses as {"n":3}), and its UTF-8 check fails on a sequence cut
 * between chunks. So bytes are held back until a newline (the server ends every event with
 * one) and the tokener only ever sees chunks that end in whitespace, where no token can be cut;
 * UTF-8 is checked here, on the raw bytes, with state carried across chunks. Events spanning
 * several lines still work: the tokener keeps its state between lines. */
#include "po/kube/watch_parser.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"

struct po_WatchParser {
  json_tokener *tok;
  size_t max_event, pending; /* bytes of the event being read */
  size_t offset;             /* bytes consumed before the current event */
  size_t event_start;        /* offset where the event being read or dispatched began */
  size_t events;
  bool in_event, failed;
  /* UTF-8 validation state carried across chunks (json-c's own check does not survive a
   * sequence split between two chunks). */
  int u8_need;
  unsigned char u8_lo, u8_hi;
  po_CtlStatus err;
  char *buf; /* bytes after the last newline, not yet given to the tokener */
  size_t blen, bcap;
  size_t received; /* bytes given to Feed */
  /* The event being dispatched, when all its bytes were in one buffer (NULL otherwise): where
   * po_WatchParser_ObjectText finds the object's own text. */
  const char *ev_text;
  size_t ev_len;
  po_KubeWatchPeekFn peek; /* po_WatchParser_SetPeek */
  void *peek_ctx;
  size_t peeked, parsed;
  bool cut_managed;   /* po_WatchParser_SetCutManagedFields */
  char *scratch;      /* an event's bytes with its managedFields cut, as parsed */
  size_t scratch_cap;
};

/* Scratch kept between events up to this size; a larger one (an event of a big target) is
 * freed after its event, so a parser holds at most this beyond the event being read. */
enum { kScratchKeep = 256 * 1024 };

po_WatchParser *po_WatchParser_New(size_t max_event_bytes) {
  po_WatchParser *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  /* As deep as the API server stores (kPo_KubeMaxJsonDepth): json-c's default is 32. */
  p->tok = json_tokener_new_ex(kPo_KubeMaxJsonDepth);
  if (!p->tok) {
    free(p);
    return NULL;
  }
  json_tokener_set_flags(p->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
  p->max_event = max_event_bytes ? max_event_bytes : (size_t)64 << 20;
  return p;
}

void po_WatchParser_Free(po_WatchParser *p) {
  if (!p) return;
  json_tokener_free(p->tok);
  free(p->buf);
  free(p->scratch);
  free(p);
}


static po_WatchFeedResult fail(po_WatchParser *p, po_CtlStatus *st, const char *what, const char *detail) {
  p->failed = true;
  po_CtlStatus_Set(&p->err, kPo_Ctl_Decode, "watch stream: event %zu (at byte %zu): %s%s%s",
                    p->events + 1, p->event_start, what, detail ? ": " : "", detail ? detail : "");
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
                                   po_CtlStatus *st) {
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

/* How many leading bytes of data are valid UTF-8 given the state (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF); the state advances over them. */
static size_t utf8_prefix(po_WatchParser *p, const char *data, size_t len) {
  for (size_t i = 0; i < len; i++) {
    /* ASCII, most of an API server's bytes, eight at a time (a target's echo is ~20 KB: a byte
     * loop was 5.6 instructions a byte of every event) */
    if (!p->u8_need) {
      while (i + 8 <= len) {
        uint64_t w;
        memcpy(&w, data + i, sizeof w);
        if (w & 0x8080808080808080u) break;
        i += 8;
      }
      if (i >= len) break;
    }
    unsigned char b = (unsigned char)data[i];
    if (p->u8_need) {
      if (b < p->u8_lo || b > p->u8_hi) return i;
      p->u8_need--;
      p->u8_lo = 0x80;
      p->u8_hi = 0xBF;
      continue;
    }
    if (b < 0x80) continue;
    p->u8_lo = 0x80;
    p->u8_hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      p->u8_need = 1;
    } else if (b == 0xE0) {
      p->u8_need = 2, p->u8_lo = 0xA0;
    } else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) {
      p->u8_need = 2;
    } else if (b == 0xED) {
      p->u8_need = 2, p->u8_hi = 0x9F;
    } else if (b == 0xF0) {
      p->u8_need = 3, p->u8_lo = 0x90;
    } else if (b >= 0xF1 && b <= 0xF3) {
      p->u8_need = 3;
    } else if (b == 0xF4) {
      p->u8_need = 3, p->u8_hi = 0x8F;
    } else {
      return i;
    }
  }
  return len;
}

static po_WatchFeedResult feed_valid(po_WatchParser *p, const char *data, size_t len, po_KubeWatchFn fn,
                                     void *ctx, po_CtlStatus *st);

static po_WatchFeedResult hold(po_WatchParser *p, const char *data, size_t len, po_CtlStatus *st) {
  if (!len) return kPo_WatchFeed_More;
  if (p->blen + len > p->max_event) {
    if (!p->in_event) p->event_start = p->offset;
    return fail(p, st, "event larger than the limit", NULL);
  }
  if (p->blen + len > p->bcap) {
    size_t cap = p->bcap ? p->bcap : 4096;
    while (cap < p->blen + len) cap *= 2;
    char *b = realloc(p->buf, cap);
    if (!b) return fail(p, st, "out of memory", NULL);
    p->buf = b;
    p->bcap = cap;
  }
  memcpy(p->buf + p->blen, data, len);
  p->blen += len;
  return kPo_WatchFeed_More;
}

static po_WatchFeedResult feed_lines(po_WatchParser *p, const char *data, size_t len, po_KubeWatchFn fn,
                                     void *ctx, po_CtlStatus *st) {
  size_t upto = len;
  while (upto > 0 && data[upto - 1] != '\n') upto--;
  if (upto == 0) return hold(p, data, len, st);
  po_WatchFeedResult r;
  if (p->blen) {
    if ((r = hold(p, data, upto, st)) != kPo_WatchFeed_More) return r;
    size_t n = p->blen;
    p->blen = 0;
    r = feed_valid(p, p->buf, n, fn, ctx, st);
  } else {
    r = feed_valid(p, data, upto, fn, ctx, st);
  }
  if (r != kPo_WatchFeed_More) return r;
  return hold(p, data + upto, len - upto, st);
}

po_WatchFeedResult po_WatchParser_Feed(po_WatchParser *p, const char *data, size_t len,
                                       po_KubeWatchFn fn, void *ctx, po_CtlStatus *st) {
  if (p->failed) {
    if (st) *st = p->err;
    return kPo_WatchFeed_Error;
  }
  size_t ok = utf8_prefix(p, data, len);
  size_t bad_at = p->received + ok;
  p->received += len;
  po_WatchFeedResult r = feed_lines(p, data, ok, fn, ctx, st);
  if (r != kPo_WatchFeed_More || ok == len) return r;
  if (!p->in_event) p->event_start = p->offset;
  char where[48];
  snprintf(where, sizeof where, "byte %zu", bad_at);
  return fail(p, st, "invalid UTF-8", where);
}

/* ---- events known by their head ---------------------------------------------------------
 * An event whole in data (it starts at data[0]): its head scanned (json_scan.h: the top level and
 * the object's metadata, no allocation) and offered to peek. The bytes' UTF-8 is checked already;
 * their JSON is not (brackets and quotes only): peek takes only events it knows by uid and
 * resourceVersion to be an object the server stored, whose bytes the server wrote. Returns the
 * bytes the event took when peek took it, else 0 (the tokener then reads it as any event). */
static size_t peek_event(po_WatchParser *p, const char *data, const po_JsonScanEvent_ *e) {
  static const struct {
    const char *name;
    po_KubeWatchEventType type;
  } kPeekable[] = {{"ADDED", kPo_KubeWatch_Added}, {"MODIFIED", kPo_KubeWatch_Modified}, {"DELETED", kPo_KubeWatch_Deleted}};
  int k = -1;
  for (int i = 0; i < 3; i++)
    if (strcmp(kPeekable[i].name, e->type) == 0) k = i;
  if (k < 0) return 0;
  po_KubeWatchHead h = {kPeekable[k].type, e->ns,         e->name,         e->uid,        e->rv,
                        e->generation,      e->deleting,   e->object,       e->object_len, e->managed_cut,
                        e->managed_at,      e->managed_len};
  if (!p->peek(p->peek_ctx, &h)) return 0;
  p->events++;
  p->peeked++;
  return (size_t)(e->end - data);
}

void po_WatchParser_SetPeek(po_WatchParser *p, po_KubeWatchPeekFn peek, void *ctx) {
  p->peek = peek;
  p->peek_ctx = ctx;
}

void po_WatchParser_SetCutManagedFields(po_WatchParser *p, bool cut) { p->cut_managed = cut; }

/* The event whole in data (scanned: e), parsed with its object's metadata.managedFields cut out
 * (where the scan found it, as po_JsonScan_ManagedFields_ does: the last metadata's, which
 * json-c's tree would keep, with one comma, so the bytes stay one object), from a copy: on a real
 * API server managedFields is a third or more of an object's bytes and most of its allocations
 * (each field an object), all dropped by the cache anyway. *ev the tree, *n_cut the copy's length
 * (in p->scratch). False when there is nothing to cut, no memory for the copy, or json-c does not
 * take the copy whole as one event: the event is then parsed from data as any other (its errors
 * said as they always are). */
static bool parse_cut(po_WatchParser *p, const char *data, const po_JsonScanEvent_ *e, json_object **ev, size_t *n_cut) {
  if (!e->managed_cut) return false;
  size_t at = e->managed_at, cut = e->managed_len;
  size_t n = (size_t)(e->end - data), head = (size_t)(e->object - data) + at, m = n - cut;
  if (m > (size_t)1 << 30) return false;
  if (m > p->scratch_cap) {
    char *b = realloc(p->scratch, m);
    if (!b) return false;
    p->scratch = b;
    p->scratch_cap = m;
  }
  memcpy(p->scratch, data, head);
  memcpy(p->scratch + head, data + head + cut, n - head - cut);
  *ev = json_tokener_parse_ex(p->tok, p->scratch, (int)m);
  bool whole = json_tokener_get_error(p->tok) == json_tokener_success && json_tokener_get_parse_end(p->tok) == m;
  json_tokener_reset(p->tok);
  if (!whole) {
    json_object_put(*ev);
    *ev = NULL;
    return false;
  }
  *n_cut = m;
  return true;
}

/* The event parsed by parse_cut given to fn: its text (po_WatchParser_ObjectText) is the copy's. */
static po_WatchFeedResult dispatch_cut(po_WatchParser *p, json_object *ev, size_t m, po_KubeWatchFn fn, void *ctx,
                                       po_CtlStatus *st) {
  p->parsed++;
  p->ev_text = p->scratch;
  p->ev_len = m;
  po_WatchFeedResult r = dispatch(p, ev, fn, ctx, st);
  p->ev_text = NULL;
  json_object_put(ev);
  if (p->scratch_cap > kScratchKeep) {
    free(p->scratch);
    p->scratch = NULL;
    p->scratch_cap = 0;
  }
  return r;
}

size_t po_WatchParser_Peeked(const po_WatchParser *p) { return p->peeked; }
size_t po_WatchParser_Parsed(const po_WatchParser *p) { return p->parsed; }

static po_WatchFeedResult feed_valid(po_WatchParser *p, const char *data, size_t len,
                                       po_KubeWatchFn fn, void *ctx, po_CtlStatus *st) {
  while (len > 0) {
    if (!p->in_event) {
      while (len > 0 && (*data == ' ' || *data == '\n' || *data == '\r' || *data == '\t')) {
        data++;
        len--;
        p->offset++;
      }
      if (!len) break;
      /* Every event is an object: refuse anything else before the tokener sees it (json-c's
       * verdict on a bare number depends on where the chunk ends). */
      if (*data != '{') {
        p->event_start = p->offset;
        return fail(p, st, "expected a JSON object {\"type\":..., \"object\":...}", NULL);
      }
      p->in_event = true;
      p->pending = 0;
      p->event_start = p->offset;
    }
    po_JsonScanEvent_ head;
    if (p->pending == 0 && (p->peek || p->cut_managed) && po_JsonScan_Event_(data, data + len, &head)) {
      size_t used = p->peek ? peek_event(p, data, &head) : 0;
      json_object *ev = NULL;
      size_t m = 0;
      if (!used && p->cut_managed && parse_cut(p, data, &head, &ev, &m)) {
        used = (size_t)(head.end - data);
        p->offset += used;
        data += used;
        len -= used;
        p->in_event = false;
        po_WatchFeedResult r = dispatch_cut(p, ev, m, fn, ctx, st);
        if (r != kPo_WatchFeed_More) return r;
        continue;
      }
      if (used) {
        data += used;
        len -= used;
        p->offset += used;
        p->in_event = false;
        continue;
      }
    }
    /* json-c takes an int length; feed huge chunks in slices. */
    int n = len > (1u << 30) ? 1 << 30 : (int)len;
    bool whole = p->pending == 0; /* the event begins at data */
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
    p->parsed++;
    data += used;
    len -= used;
    p->pending += used;
    p->offset += p->pending;
    p->pending = 0;
    p->in_event = false;
    p->ev_text = whole ? data - used : NULL;
    p->ev_len = whole ? used : 0;
    po_WatchFeedResult r = dispatch(p, ev, fn, ctx, st);
    p->ev_text = NULL;
    json_object_put(ev);
    if (r != kPo_WatchFeed_More) return r;
  }
  return kPo_WatchFeed_More;
}

/* ---- the object's own text --------------------------------------------------------------
 * A scan of bytes json-c has just accepted as one event (json_scan.h): only the top level is
 * walked, so the cost is one pass over the bytes with no allocation (against json-c's serialising
 * of the tree: a printbuf grown per object, numbers formatted again). Anything unexpected gives
 * up; the caller then serialises. */

const char *po_WatchParser_ObjectText(const po_WatchParser *p, size_t *len) {
  const char *t;
  *len = 0;
  if (!p->ev_text || !po_JsonScan_Member_(p->ev_text, p->ev_len, "object", &t, len)) return NULL;
  return t;
}

bool po_WatchParser_Finish(po_WatchParser *p, po_KubeWatchFn fn, void *ctx, po_CtlStatus *st) {
  if (p->failed) {
    if (st) *st = p->err;
    return false;
  }
  if (p->blen) {
    /* The last event need not end with a newline; its end is the end of the stream. */
    size_t n = p->blen;
    p->blen = 0;
    po_WatchFeedResult r = feed_valid(p, p->buf, n, fn, ctx, st);
    if (r == kPo_WatchFeed_Error) return false;
    if (r == kPo_WatchFeed_Stop) return true;
  }
  if (p->in_event) {
    fail(p, st, "stream ended inside an event", NULL);
    return false;
  }
  return true;
}
