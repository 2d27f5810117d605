/* Overlaps between the accepted PropertyOverrides of one target, found by the engine on the
 * compiled overrides' resolved field chains wherever both filters can match one resource.
 * Reported in Programmed (reason Overlapping), never refused. */
#include <stdio.h>
#include <string.h>

#include "overlap.h"

/* Setting one field to the same thing twice is no overlap: nothing depends on the order. */
static bool same_effect(const po_Override *x, size_t p, const po_Override *y, size_t q, po_Arena *ar) {
  if (po_Override_Op(x, p) != po_Override_Op(y, q)) return false;
  const po_Value *a = po_Override_Arguments(x)->patches[p].value, *b = po_Override_Arguments(y)->patches[q].value;
  if (!a || !b) return !a && !b;
  const char *s = po_Value_ToJson(a, ar), *t = po_Value_ToJson(b, ar);
  return s && t && strcmp(s, t) == 0;
}

typedef struct {
  const po_Override *x, *y;
  po_Arena *ar;
  bool found;
  po_Conflict first;
} Scan;

static void on_conflict(const po_Conflict *c, void *ctx) {
  Scan *s = ctx;
  if (s->found) return;
  if (c->kind == kPo_ConflictKind_SameField && same_effect(s->x, c->a_patch, s->y, c->b_patch, s->ar)) return;
  s->found = true;
  s->first = *c;
}

static const char *verb(const po_Override *o, size_t patch) {
  return po_Override_Op(o, patch) == kPo_Op_Remove ? "removes" : "replaces";
}

/* One sentence per kind; `after`: the other PropertyOverride's entry is applied after this one's
 * (entries are ordered by name), so its effect is the one left where both match. */
static void describe(const po_Conflict *c, const po_Override *x, const po_Override *y, const char *other, bool after,
                     char *out, size_t size) {
  const char *xp = po_Override_Arguments(x)->patches[c->a_patch].path;
  const char *yp = po_Override_Arguments(y)->patches[c->b_patch].path;
  const char *order = after ? "after" : "before";
  switch (c->kind) {
    case kPo_ConflictKind_ParentReplaced:
      if (c->a_is_parent) {
        snprintf(out, size,
                 "patches[%zu] %s %s the message that holds PropertyOverride %s patches[%zu] %s; %s is applied %s, "
                 "so where both match %s",
                 c->a_patch, xp, verb(x, c->a_patch), other, c->b_patch, yp, other, order,
                 after ? "its value is set again over this one" : "this one discards its value");
      } else {
        snprintf(out, size,
                 "patches[%zu] %s sets a field inside what PropertyOverride %s patches[%zu] %s %s; %s is applied %s, "
                 "so where both match %s",
                 c->a_patch, xp, other, c->b_patch, yp, verb(y, c->b_patch), other, order,
                 after ? "it discards this value" : "this value is set again over it");
      }
      return;
    case kPo_ConflictKind_OneofSibling:
      snprintf(out, size,
               "patches[%zu] %s and PropertyOverride %s patches[%zu] %s set different members of oneof %s of %s; "
               "%s is applied %s, so where both match %s",
               c->a_patch, xp, other, c->b_patch, yp, c->where, c->message, other, order,
               after ? "its member wins" : "this one's member wins");
      return;
    default:
      snprintf(out, size,
               "patches[%zu] %s overlaps PropertyOverride %s patches[%zu], which sets it differently; %s is "
               "applied %s, so where both match its value %s",
               c->a_patch, xp, other, c->b_patch, other, order, after ? "wins" : "is overridden by this one");
      return;
  }
}

void po_Overlap_Of(const po_OverlapPeer *peers, size_t n, size_t i, po_Arena *ar, char *out, size_t size) {
  out[0] = '\0';
  const po_Override *x = peers[i].override;
  for (size_t j = 0; x && j < n; j++) {
    const po_Override *y = j != i ? peers[j].override : NULL;
    if (!y) continue;
    Scan s = {.x = x, .y = y, .ar = ar};
    po_Override_Conflicts(x, y, on_conflict, &s);
    if (!s.found) continue;
    describe(&s.first, x, y, peers[j].name, strcmp(peers[j].name, peers[i].name) > 0, out, size);
    return;
  }
}
