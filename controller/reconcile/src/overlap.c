/* Overlaps between the accepted PropertyOverrides of one target, found by the engine on the
 * compiled overrides' resolved field chains wherever both filters can match one resource.
 * Reported in Programmed (reason Overlapping), never refused. */
#include <stdio.h>
#include <string.h>

#include "overlap.h"

struct po_OverlapIndex {
  const po_OverlapPeer *peers;
  size_t n;
  const char ***effects; /* [peer][patch]: op and value as JSON; NULL rows for peers taking no part */
  size_t patches;        /* of every peer taking part */
  bool skipped;          /* over the budget of pairs */
};

static const char *effect_of(const po_Override *o, size_t p, po_Arena *ar) {
  const po_Value *v = po_Override_Arguments(o)->patches[p].value;
  const char *json = v ? po_Value_ToJson(v, ar) : "";
  return json ? po_Arena_Printf(ar, "%d %s", (int)po_Override_Op(o, p), json) : NULL;
}

po_OverlapIndex *po_OverlapIndex_New(const po_OverlapPeer *peers, size_t n, po_Arena *ar) {
  po_OverlapIndex *ix = po_Arena_Malloc(ar, sizeof *ix);
  if (!ix) return NULL;
  *ix = (po_OverlapIndex){.peers = peers, .n = n};
  for (size_t i = 0; i < n; i++) {
    if (peers[i].override) ix->patches += po_Override_PatchCount(peers[i].override);
  }
  /* Pairs of patches of different peers: at most patches^2 / 2. */
  if (ix->patches > 1 && (double)ix->patches * (double)ix->patches / 2 > (double)kPo_OverlapMaxPairs) {
    ix->skipped = true;
    return ix;
  }
  ix->effects = n ? po_Arena_Malloc(ar, n * sizeof *ix->effects) : NULL;
  if (n && !ix->effects) return NULL;
  for (size_t i = 0; i < n; i++) {
    const po_Override *o = peers[i].override;
    if (!o) continue;
    size_t m = po_Override_PatchCount(o);
    ix->effects[i] = m ? po_Arena_Malloc(ar, m * sizeof **ix->effects) : NULL;
    if (m && !ix->effects[i]) return NULL;
    for (size_t p = 0; p < m; p++) {
      if (!(ix->effects[i][p] = effect_of(o, p, ar))) return NULL;
    }
  }
  return ix;
}

typedef struct {
  const char **ex, **ey; /* the two peers' effects */
  bool found;
  po_Conflict first;
} Scan;

/* Setting one field to the same thing twice is no overlap: nothing depends on the order. */
static void on_conflict(const po_Conflict *c, void *ctx) {
  Scan *s = ctx;
  if (s->found) return;
  if (c->kind == kPo_ConflictKind_SameField && strcmp(s->ex[c->a_patch], s->ey[c->b_patch]) == 0) return;
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

bool po_Overlap_Of(const po_OverlapIndex *ix, size_t i, char *out, size_t size) {
  out[0] = '\0';
  const po_OverlapPeer *peers = ix->peers;
  const po_Override *x = peers[i].override;
  if (x && ix->skipped) {
    snprintf(out, size, "overlaps not checked: the %zu patches on this target are over the check's bound of %d pairs",
             ix->patches, (int)kPo_OverlapMaxPairs);
    return false;
  }
  for (size_t j = 0; x && j < ix->n; j++) {
    const po_Override *y = j != i ? peers[j].override : NULL;
    if (!y) continue;
    Scan s = {.ex = ix->effects[i], .ey = ix->effects[j]};
    po_Override_Conflicts(x, y, on_conflict, &s);
    if (!s.found) continue;
    describe(&s.first, x, y, peers[j].name, strcmp(peers[j].name, peers[i].name) > 0, out, size);
    return true;
  }
  return false;
}
