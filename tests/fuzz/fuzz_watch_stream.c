/* libFuzzer target: the watch stream parser. The input is fed whole and again cut at two
 * positions taken from its first bytes; both must give the same events and the same verdict.
 * Every object text the parser locates (po_WatchParser_ObjectText) must parse, alone and to its
 * last byte, to an object equal to the event's. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/kube/watch_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  uint64_t hash;
  int events;
  po_WatchParser *p;
} Sink;

static void check_text(const po_WatchParser *p, json_object *obj) {
  size_t len;
  const char *t = po_WatchParser_ObjectText(p, &len);
  if (!t) return;
  json_tokener *tok = json_tokener_new_ex(256);
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  json_object *again = json_tokener_parse_ex(tok, t, (int)len);
  bool ok = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len &&
            json_object_equal(again, obj);
  json_object_put(again);
  json_tokener_free(tok);
  if (!ok) abort();
}

static bool on_event(void *ctx, po_KubeWatchEventType type, json_object *obj) {
  Sink *s = ctx;
  check_text(s->p, obj);
  const char *j = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
  uint64_t h = s->hash ^ (uint64_t)type;
  for (; *j; j++) h = (h ^ (unsigned char)*j) * 0x100000001b3ull;
  s->hash = h;
  s->events++;
  return true;
}

static int run(const char *d, size_t n, size_t c1, size_t c2, Sink *s, char *msg) {
  po_WatchParser *p = po_WatchParser_New(1 << 16);
  s->p = p;
  po_CtlStatus st;
  size_t cuts[3] = {c1, c2, n};
  size_t at = 0;
  po_WatchFeedResult r = kPo_WatchFeed_More;
  for (int i = 0; i < 3 && r == kPo_WatchFeed_More; i++) {
    r = po_WatchParser_Feed(p, d + at, cuts[i] - at, on_event, s, &st);
    at = cuts[i];
  }
  if (r == kPo_WatchFeed_More && !po_WatchParser_Finish(p, on_event, s, &st)) r = kPo_WatchFeed_Error;
  if (r == kPo_WatchFeed_Error) snprintf(msg, 700, "%s", st.message);
  po_WatchParser_Free(p);
  return (int)r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const char *d = (const char *)data + 2;
  size_t n = size - 2;
  size_t c1 = n ? data[0] % (n + 1) : 0;
  size_t c2 = c1 + (n - c1 ? data[1] % (n - c1 + 1) : 0);
  Sink a = {0}, b = {0};
  char ma[700] = "", mb[700] = "";
  int ra = run(d, n, n, n, &a, ma);
  int rb = run(d, n, c1, c2, &b, mb);
  if (ra != rb || a.events != b.events || a.hash != b.hash || strcmp(ma, mb) != 0) abort();
  return 0;
}
