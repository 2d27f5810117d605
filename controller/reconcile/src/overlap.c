/* Overlaps between accepted PropertyOverrides whose entries reach the same proxies, found by the
 * engine on the compiled overrides' resolved field chains wherever both filters can match one
 * resource. Reported in Programmed (reason Overlapping), never refused: both entries stay, in
 * their deterministic order, and each side's message names the other and the winner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "po/base/text.h"

enum { kShown = 3 }; /* overlapping peers a message names */

struct po_OverlapIndex {
  const po_OverlapPeer *peers;
  size_t n;
  /* [peer][patch]: op and value as JSON, made when a comparison first needs it (most pairs
   * share no field: making them all for every reconcile was 0.06 M instructions a
   * PropertyOverride); NULL rows for peers taking no part */
  const char ***effects;
  po_Arena *ar;          /* where they are made */
  bool *oom;             /* one could not be made (po_OverlapIndex_OutOfMemory) */
  size_t own_patches, patches;
  bool skipped;          /* over the budget of pairs */
  /* From the last reconcile's memo (NULL without one): whether peer i was compared with every
   * peer then (row), whether peer j took part then (col); a pair of both is answered by `prev`. */
  const po_OverlapMemo *prev;
  bool *row, *col;
  /* What this reconcile learns, per peer: 1 compared with every peer it meets, 2 its scan ended
   * at the fourth overlap; and the peers it overlaps (up to kShown + 1). */
  unsigned char *state;
  size_t (*hits)[kShown + 1];
  unsigned char *nhits;
  size_t *checks;        /* engine comparisons made (po_OverlapIndex_Checks) */
  struct Candidates *cands; /* what candidates() reads, made by its first call */
};

/* A peer's id and its place among the peers. */
typedef struct {
  po_JsonHash id;
  size_t at;
} IdAt;

/* Made by the first po_Overlap_Of of a peer with a row (made): the peers without a column,
 * ascending (fresh), the others' ids sorted with their places (ids), and room for one peer's
 * candidates (cand). NULL fresh once made: out of memory, every pair is visited as before. */
struct Candidates {
  bool made;
  size_t *fresh, nfresh, *cand;
  IdAt *ids;
  size_t nids;
};

static int id_cmp(po_JsonHash a, po_JsonHash b) {
  if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
  return a.lo < b.lo ? -1 : a.lo > b.lo;
}
static int by_id(const void *a, const void *b) { return id_cmp(*(const po_JsonHash *)a, *(const po_JsonHash *)b); }
static int by_pair(const void *a, const void *b) {
  const po_OverlapPair *x = a, *y = b;
  int c = id_cmp(x->x, y->x);
  return c ? c : id_cmp(x->y, y->y);
}
static bool has_id(po_JsonHash h) { return h.lo || h.hi; }

po_JsonHash po_Overlap_PeerId(const po_CompiledEntry *e, po_OverlapTier tier, const char *target) {
  /* fixed-width fields first, then the two strings each ended by its NUL: no two field lists
   * make the same bytes */
  unsigned char buf[2048];
  size_t ul = strlen(e->uid), tl = strlen(target), n = 0;
  uint64_t fixed[5] = {e->hash.lo, e->hash.hi, (uint64_t)e->generation, e->record, (uint64_t)tier};
  if (sizeof fixed + ul + tl + 2 > sizeof buf) return (po_JsonHash){0, 0}; /* no id: compared every time */
  memcpy(buf, fixed, sizeof fixed), n += sizeof fixed;
  memcpy(buf + n, e->uid, ul + 1), n += ul + 1;
  memcpy(buf + n, target, tl + 1), n += tl + 1;
  po_JsonHash h = po_Hash_Bytes(buf, n);
  if (!has_id(h)) h.lo = 1; /* zero means none */
  return h;
}

/* "<name>.<namespace>" of a against that of b, byte by byte as Go compares strings, without
 * building them. */
static int dotted_cmp(const po_OverlapIstio *a, const po_OverlapIstio *b) {
  const char *ap[2] = {a->filter_name, a->filter_ns}, *bp[2] = {b->filter_name, b->filter_ns};
  int ai = 0, bi = 0;
  const char *x = ap[0], *y = bp[0];
  for (;;) {
    /* the next byte of each: the part's, the '.' between the parts, or the end (-1) */
    int cx = *x ? (unsigned char)*x : ai == 0 ? '.' : -1;
    int cy = *y ? (unsigned char)*y : bi == 0 ? '.' : -1;
    if (cx != cy) return cx < cy ? -1 : 1;
    if (cx < 0) return 0;
    if (*x) x++;
    else x = ap[++ai];
    if (*y) y++;
    else y = bp[++bi];
  }
}

typedef enum {
  kIstioKnown,        /* the order is Istio's */
  kIstioNoVersion,    /* root against workload namespace at different priorities, release unknown */
  kIstioNoTime,       /* a tie that Istio breaks by creation time, and a time is not known */
} IstioCertainty;

/* Istio's order of two peers (overlap.h, po_OverlapIstio), and how sure it is; `why` (may be
 * NULL) says by what, for the message of b ("this one") about a (the other). */
static int istio_order(const po_OverlapPeer *a, const po_OverlapPeer *b, IstioCertainty *sure, char *why, size_t size) {
  const po_OverlapIstio *ia = a->istio, *ib = b->istio;
  int minor = ia->minor ? ia->minor : ib->minor;
  *sure = kIstioKnown;
  if (ia->root != ib->root) {
    int root_first = ia->root ? -1 : 1;
    if (minor && minor < kPo_IstioMinorPriorityAcrossNamespaces) {
      if (why) snprintf(why, size, "Istio 1.%d applies the root namespace's EnvoyFilters before a workload namespace's, whatever "
               "their priorities", minor);
      return root_first;
    }
    if (a->priority == b->priority) {
      if (why) snprintf(why, size, "same priority %ld, and Istio applies the root namespace's EnvoyFilter first", (long)a->priority);
      return root_first;
    }
    if (!minor) *sure = kIstioNoVersion;
  }
  if (a->priority != b->priority) {
    int c = a->priority < b->priority ? -1 : 1;
    if (*sure == kIstioNoVersion) {
      if (why) snprintf(why, size, "Istio 1.%d and later apply the lower priority first (%ld and %ld), earlier releases the root "
               "namespace's EnvoyFilter first; say which Istio with --istio-version",
               (int)kPo_IstioMinorPriorityAcrossNamespaces, (long)a->priority, (long)b->priority);
    } else {
      if (why) snprintf(why, size, "priority %ld %s this one's %ld", (long)a->priority, c > 0 ? ">" : "<", (long)b->priority);
    }
    return c;
  }
  if (!ia->created || !ib->created || !*ia->created || !*ib->created) {
    *sure = kIstioNoTime;
    if (why) snprintf(why, size, "same priority %ld: Istio applies them in the order their EnvoyFilters were created, and %s's "
             "creation time is not known yet", (long)a->priority,
             !ia->created || !*ia->created ? ia->filter_name : ib->filter_name);
    return dotted_cmp(ia, ib);
  }
  /* RFC 3339 in UTC with whole seconds, as the API server writes them: the text orders as time */
  int t = strcmp(ia->created, ib->created);
  if (t) {
    if (why) snprintf(why, size, "same priority %ld; Istio applies the older EnvoyFilter first: created %s, this one's %s",
             (long)a->priority, ia->created, ib->created);
    return t < 0 ? -1 : 1;
  }
  if (why) snprintf(why, size, "same priority %ld and creation second; Istio then orders by EnvoyFilter <name>.<namespace>",
           (long)a->priority);
  return dotted_cmp(ia, ib);
}

int po_Overlap_Order(const po_OverlapPeer *a, const po_OverlapPeer *b) {
  if (a->istio && b->istio) {
    IstioCertainty sure;
    return istio_order(a, b, &sure, NULL, 0);
  }
  if (a->tier != b->tier) return a->tier < b->tier ? -1 : 1;
  if (a->priority != b->priority) return a->priority < b->priority ? -1 : 1;
  int c = strcmp(a->name, b->name);
  return c ? c : strcmp(a->ns, b->ns);
}

static const char *effect_of(const po_Override *o, size_t p, po_Arena *ar) {
  const po_Value *v = po_Override_Arguments(o)->patches[p].value;
  const char *json = v ? po_Value_ToJson(v, ar) : "";
  if (!json) return NULL;
  /* "<op> <json>": composed, not printed (a status's sentences are made without snprintf,
   * test_overlap_sentences_are_not_printed) */
  size_t cap = strlen(json) + 24;
  char *e = po_Arena_Malloc(ar, cap);
  if (!e) return NULL;
  po_Text t = po_Text_At(e, cap);
  po_Text_PutSize(&t, (size_t)po_Override_Op(o, p)), po_Text_Put(&t, " "), po_Text_Put(&t, json);
  return e;
}

/* Two peers' entries reach the same proxies: one target's, or a ProxyDefaults one and a
 * ServiceDefaults one (the proxy-defaults entries apply to every service). */
static bool meet(const po_OverlapPeer *x, const po_OverlapPeer *y) {
  /* a target's own peers share its key's pointer: no compare for every pair of them */
  return x->tier != y->tier || x->target == y->target || strcmp(x->target, y->target) == 0;
}

/* Whether peer i's row and peer j's column are the memo's (sorted arrays: log time each). */
static bool answer_from(po_OverlapIndex *ix, const po_OverlapMemo *prev, po_Arena *ar) {
  ix->prev = prev;
  size_t n = ix->n ? ix->n : 1;
  ix->row = po_Arena_Malloc(ar, n * sizeof *ix->row);
  ix->col = po_Arena_Malloc(ar, n * sizeof *ix->col);
  ix->state = po_Arena_Malloc(ar, n * sizeof *ix->state);
  ix->hits = po_Arena_Malloc(ar, n * sizeof *ix->hits);
  ix->nhits = po_Arena_Malloc(ar, n * sizeof *ix->nhits);
  ix->checks = po_Arena_Malloc(ar, sizeof *ix->checks);
  ix->cands = po_Arena_Malloc(ar, sizeof *ix->cands);
  if (!ix->row || !ix->col || !ix->state || !ix->hits || !ix->nhits || !ix->checks || !ix->cands) return false;
  for (size_t i = 0; prev && i < ix->n; i++) {
    po_JsonHash id = ix->peers[i].id;
    if (!has_id(id) || !ix->peers[i].override) continue;
    ix->row[i] = prev->nscanned && bsearch(&id, prev->scanned, prev->nscanned, sizeof id, by_id);
    ix->col[i] = prev->nseen && bsearch(&id, prev->seen, prev->nseen, sizeof id, by_id);
  }
  return true;
}

po_OverlapIndex *po_OverlapIndex_New(const po_OverlapPeer *peers, size_t n, po_Arena *ar) {
  return po_OverlapIndex_NewFrom(peers, n, NULL, ar);
}

po_OverlapIndex *po_OverlapIndex_NewFrom(const po_OverlapPeer *peers, size_t n, const po_OverlapMemo *prev, po_Arena *ar) {
  po_OverlapIndex *ix = po_Arena_Malloc(ar, sizeof *ix);
  if (!ix) return NULL;
  *ix = (po_OverlapIndex){.peers = peers, .n = n, .ar = ar, .oom = po_Arena_Malloc(ar, sizeof *ix->oom)};
  if (!ix->oom || !answer_from(ix, prev, ar)) return NULL;
  *ix->oom = false;
  for (size_t i = 0; i < n; i++) {
    if (!peers[i].override) continue;
    size_t m = po_Override_PatchCount(peers[i].override);
    ix->patches += m;
    if (peers[i].own) ix->own_patches += m;
  }
  if ((double)ix->own_patches * (double)ix->patches > (double)kPo_OverlapMaxPairs) {
    ix->skipped = true;
    return ix;
  }
  ix->effects = n ? po_Arena_Malloc(ar, n * sizeof *ix->effects) : NULL;
  if (n && !ix->effects) return NULL;
  for (size_t i = 0; i < n; i++) {
    const po_Override *o = peers[i].override;
    ix->effects[i] = NULL;
    if (!o) continue;
    size_t m = po_Override_PatchCount(o);
    ix->effects[i] = m ? po_Arena_Malloc(ar, m * sizeof **ix->effects) : NULL;
    if (m && !ix->effects[i]) return NULL;
    for (size_t p = 0; p < m; p++) ix->effects[i][p] = NULL;
  }
  return ix;
}

bool po_OverlapIndex_OutOfMemory(const po_OverlapIndex *ix) { return *ix->oom; }

typedef struct {
  const po_Override *x, *y;
  const char **ex, **ey; /* the two peers' effects, made on first use */
  po_Arena *ar;
  bool *oom;
  bool found;
  po_Conflict first;
} Scan;

/* Patch p's effect, made now if it was not yet; NULL when out of memory (said in *oom). */
static const char *effect(const char **row, const po_Override *o, size_t p, po_Arena *ar, bool *oom) {
  if (!row[p] && !(row[p] = effect_of(o, p, ar))) *oom = true;
  return row[p];
}

/* Setting one field to the same thing twice is no overlap, nor is removing a message and a field
 * inside it (the field is absent after both, in either order): nothing depends on the order. An
 * effect that could not be made (out of memory) reads as different: the overlap is said, and the
 * reconcile, told by po_OverlapIndex_OutOfMemory, writes no status. */
static void on_conflict(const po_Conflict *c, void *ctx) {
  Scan *s = ctx;
  if (s->found) return;
  if (c->kind == kPo_ConflictKind_SameField) {
    const char *a = effect(s->ex, s->x, c->a_patch, s->ar, s->oom), *b = effect(s->ey, s->y, c->b_patch, s->ar, s->oom);
    if (a && b && strcmp(a, b) == 0) return;
  }
  if (c->kind == kPo_ConflictKind_ParentReplaced && po_Override_Op(s->x, c->a_patch) == kPo_Op_Remove &&
      po_Override_Op(s->y, c->b_patch) == kPo_Op_Remove) {
    return;
  }
  s->found = true;
  s->first = *c;
}

static const char *verb(const po_Override *o, size_t patch) {
  return po_Override_Op(o, patch) == kPo_Op_Remove ? "removes" : "replaces";
}

/* "the other is applied after this one (why), so it wins where both match". The sentences are
 * composed by appending (po/base/text.h): each overlapping PropertyOverride's message names up to
 * three peers on every reconcile of its target, and formatting those with snprintf was a sixth of
 * a reconcile at 50 (about 6,700 instructions a sentence). */
static void order_clause(const po_OverlapPeer *x, const po_OverlapPeer *y, const char *other, char *out, size_t size) {
  bool after = po_Overlap_Order(y, x) > 0;
  char why_buf[480];
  po_Text why = po_Text_At(why_buf, sizeof why_buf), o = po_Text_At(out, size);
  if (x->istio && y->istio) {
    IstioCertainty sure;
    after = istio_order(y, x, &sure, why_buf, sizeof why_buf) > 0;
    if (sure != kIstioKnown) {
      po_Text_Put(&o, "the order of "), po_Text_Put(&o, other), po_Text_Put(&o, " and this one is Istio's ("), po_Text_Put(&o, why_buf);
      po_Text_Put(&o, "), so which one wins where both match is not known");
      return;
    }
  } else if (x->tier != y->tier) {
    po_Text_Put(&why, "Consul applies ProxyDefaults extensions before ServiceDefaults ones");
  } else if (x->priority != y->priority) {
    po_Text_Put(&why, "priority "), po_Text_PutI64(&why, (long)y->priority), po_Text_Put(&why, after ? " > " : " < ");
    po_Text_Put(&why, "this one's "), po_Text_PutI64(&why, (long)x->priority);
  } else {
    po_Text_Put(&why, "same priority "), po_Text_PutI64(&why, (long)x->priority), po_Text_Put(&why, ", then by name");
  }
  po_Text_Put(&o, other), po_Text_Put(&o, " is applied "), po_Text_Put(&o, after ? "after" : "before"), po_Text_Put(&o, " this one (");
  po_Text_Put(&o, why_buf), po_Text_Put(&o, "), so "), po_Text_Put(&o, after ? other : "this one"), po_Text_Put(&o, " wins where both match");
}

/* "patches[<i>] <path>" */
static void put_patch(po_Text *t, size_t i, const char *path) {
  po_Text_Put(t, "patches["), po_Text_PutSize(t, i), po_Text_Put(t, "] "), po_Text_Put(t, path);
}

/* One sentence per kind, then the order and the winner. */
static void describe(const po_Conflict *c, const po_OverlapPeer *px, const po_OverlapPeer *py, char *out, size_t size) {
  const po_Override *x = px->override, *y = py->override;
  const char *xp = po_Override_Arguments(x)->patches[c->a_patch].path;
  const char *yp = po_Override_Arguments(y)->patches[c->b_patch].path;
  char other_buf[600], order[2048], who_buf[620];
  /* Across targets, the other's target too: its namespace may not be this one's. */
  po_Text other = po_Text_At(other_buf, sizeof other_buf), who = po_Text_At(who_buf, sizeof who_buf), o = po_Text_At(out, size);
  po_Text_Put(&other, py->ns), po_Text_Put(&other, "/"), po_Text_Put(&other, py->name);
  if (px->tier != py->tier) po_Text_Put(&other, " ("), po_Text_Put(&other, py->where), po_Text_Put(&other, ")");
  po_Text_Put(&who, py->ns), po_Text_Put(&who, "/"), po_Text_Put(&who, py->name);
  order_clause(px, py, who_buf, order, sizeof order);
  put_patch(&o, c->a_patch, xp);
  switch (c->kind) {
    case kPo_ConflictKind_ParentReplaced:
      if (c->a_is_parent) {
        po_Text_Put(&o, " "), po_Text_Put(&o, verb(x, c->a_patch)), po_Text_Put(&o, " "), po_Text_Put(&o, c->where);
        po_Text_Put(&o, ", which holds PropertyOverride "), po_Text_Put(&o, other_buf), po_Text_Put(&o, " ");
        put_patch(&o, c->b_patch, yp);
      } else {
        po_Text_Put(&o, " sets a field inside "), po_Text_Put(&o, c->where), po_Text_Put(&o, ", which PropertyOverride "), po_Text_Put(&o, other_buf);
        po_Text_Put(&o, " "), put_patch(&o, c->b_patch, yp), po_Text_Put(&o, " "), po_Text_Put(&o, verb(y, c->b_patch));
      }
      break;
    case kPo_ConflictKind_OneofSibling:
      po_Text_Put(&o, " and PropertyOverride "), po_Text_Put(&o, other_buf), po_Text_Put(&o, " "), put_patch(&o, c->b_patch, yp);
      po_Text_Put(&o, " set different members of oneof "), po_Text_Put(&o, c->where), po_Text_Put(&o, " of "), po_Text_Put(&o, c->message);
      break;
    default:
      po_Text_Put(&o, " and PropertyOverride "), po_Text_Put(&o, other_buf), po_Text_Put(&o, " patches["), po_Text_PutSize(&o, c->b_patch);
      po_Text_Put(&o, "] set "), po_Text_Put(&o, c->where), po_Text_Put(&o, " differently");
      break;
  }
  po_Text_Put(&o, "; "), po_Text_Put(&o, order);
}

static bool known_pair(const po_OverlapMemo *m, po_JsonHash x, po_JsonHash y) {
  po_OverlapPair p = {x, y};
  return m->nfound && bsearch(&p, m->found, m->nfound, sizeof p, by_pair);
}

static int by_id_at(const void *a, const void *b) {
  const IdAt *x = a, *y = b;
  int c = id_cmp(x->id, y->id);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}
static int by_place(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* The tables candidates() reads, made once per index (out of memory: fresh stays NULL). */
static void make_candidates(const po_OverlapIndex *ix, struct Candidates *c) {
  c->made = true;
  size_t n = ix->n ? ix->n : 1;
  size_t *fresh = po_Arena_Malloc(ix->ar, n * sizeof *fresh), *cand = po_Arena_Malloc(ix->ar, n * sizeof *cand);
  IdAt *ids = po_Arena_Malloc(ix->ar, n * sizeof *ids);
  if (!fresh || !cand || !ids) return;
  for (size_t j = 0; j < ix->n; j++) {
    if (!ix->col[j]) fresh[c->nfresh++] = j;
    else ids[c->nids++] = (IdAt){ix->peers[j].id, j};
  }
  qsort(ids, c->nids, sizeof *ids, by_id_at);
  c->fresh = fresh, c->cand = cand, c->ids = ids;
}

/* The peers that peer i, compared with every peer it met at the last reconcile (its row), must
 * be compared with now, ascending: those that took no part then (no column), and those of then
 * that the memo says it overlapped (a pair of two peers of then that the memo does not list is
 * no overlap: it is skipped in po_Overlap_Of's loop too). *n their count; NULL: not made (out of
 * memory), visit every peer. Each reconcile visited every pair of its target's peers, n*n for n
 * PropertyOverrides on the target; this is the changed peers and the known overlaps per peer. */
/* The first of n sorted elements of `size` bytes whose leading id (a po_OverlapPair's x, an IdAt's
 * id) is not below key: where key's run starts, or n. */
static size_t first_of(const void *base, size_t n, size_t size, po_JsonHash key) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (id_cmp(*(const po_JsonHash *)((const char *)base + mid * size), key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static const size_t *candidates(const po_OverlapIndex *ix, size_t i, size_t *n) {
  struct Candidates *c = ix->cands;
  if (!c->made) make_candidates(ix, c);
  if (!c->fresh) return NULL;
  memcpy(c->cand, c->fresh, c->nfresh * sizeof *c->cand);
  size_t k = c->nfresh;
  const po_OverlapMemo *m = ix->prev;
  po_JsonHash x = ix->peers[i].id;
  /* the memo's pairs of x: a run of the sorted pairs */
  size_t lo = m ? first_of(m->found, m->nfound, sizeof *m->found, x) : 0;
  for (size_t f = lo; m && f < m->nfound && id_cmp(m->found[f].x, x) == 0; f++) {
    /* a pair listed again (two peers of one id: a hash's collision) adds nothing new: taken once,
     * the peers added are all distinct (no column: fresh; one id's run each), at most n */
    if (f > lo && id_cmp(m->found[f - 1].y, m->found[f].y) == 0) continue;
    /* every peer with that id and a column (ids are per compiled form and place: one, as a rule) */
    for (size_t a = first_of(c->ids, c->nids, sizeof *c->ids, m->found[f].y);
         a < c->nids && id_cmp(c->ids[a].id, m->found[f].y) == 0 && k < ix->n; a++)
      c->cand[k++] = c->ids[a].at;
  }
  if (k > c->nfresh) qsort(c->cand, k, sizeof *c->cand, by_place);
  *n = k;
  return c->cand;
}

bool po_Overlap_Of(const po_OverlapIndex *ix, size_t i, char *out, size_t size) {
  out[0] = '\0';
  const po_OverlapPeer *peers = ix->peers;
  const po_Override *x = peers[i].override;
  if (x && ix->skipped) {
    snprintf(out, size,
             "overlaps not checked: %zu patches of this target's PropertyOverrides against the %zu patches of "
             "those they meet are over the check's bound of %d pairs",
             ix->own_patches, ix->patches, (int)kPo_OverlapMaxPairs);
    return false;
  }
  /* The first overlap with each of the first kShown peers it meets, then whether there are more:
   * one across targets must not hide behind one of the same target (or the reverse). Not how
   * many more: a count in every peer's status changed with every arrival on the target, a
   * status write per PropertyOverride per arrival (N*N/T), and once one more is found the scan
   * can stop. */
  size_t found = 0, len = 0, ncand = ix->n;
  ix->nhits[i] = 0;
  /* a peer of the last reconcile's full scan: only the pairs the memo cannot answer (the index is
   * the caller's, for this reconcile only: its tables are made on first use) */
  const size_t *cand = x && ix->row[i] ? candidates(ix, i, &ncand) : NULL;
  if (!cand) ncand = ix->n;
  for (size_t c = 0; x && c < ncand && found <= kShown; c++) {
    size_t j = cand ? cand[c] : c;
    const po_Override *y = j != i ? peers[j].override : NULL;
    if (!y || !meet(&peers[i], &peers[j])) continue;
    /* known not to overlap since the last reconcile: no engine check */
    if (ix->row[i] && ix->col[j] && !known_pair(ix->prev, peers[i].id, peers[j].id)) continue;
    Scan s = {.x = x, .y = y, .ex = ix->effects[i], .ey = ix->effects[j], .ar = ix->ar, .oom = ix->oom};
    po_Override_Conflicts(x, y, on_conflict, &s);
    (*ix->checks)++;
    if (!s.found) continue;
    ix->hits[i][ix->nhits[i]++] = j;
    if (found++ >= kShown) continue;
    if (len + 8 >= size) continue;
    po_Text t = {out, size, len};
    if (found > 1) po_Text_Put(&t, "; also ");
    describe(&s.first, &peers[i], &peers[j], out + t.len, size - t.len);
    len = strlen(out);
  }
  po_Text t = {out, size, len};
  if (found > kShown) po_Text_Put(&t, PO_OVERLAP_MORE);
  if (x) ix->state[i] = found > kShown ? 2 : 1;
  return found > 0;
}

size_t po_OverlapIndex_Checks(const po_OverlapIndex *ix) { return *ix->checks; }

bool po_OverlapIndex_Memo(const po_OverlapIndex *ix, po_OverlapMemo *out, po_Arena *ar) {
  *out = (po_OverlapMemo){0};
  size_t n = ix->n ? ix->n : 1, pairs = 0;
  for (size_t i = 0; i < ix->n; i++) pairs += ix->state[i] == 1 ? ix->nhits[i] : 0;
  out->seen = po_Arena_Malloc(ar, n * sizeof *out->seen);
  out->scanned = po_Arena_Malloc(ar, n * sizeof *out->scanned);
  out->found = po_Arena_Malloc(ar, (pairs ? pairs : 1) * sizeof *out->found);
  if (!out->seen || !out->scanned || !out->found) return false;
  if (ix->skipped) return true; /* nothing compared: nothing known */
  for (size_t i = 0; i < ix->n; i++) {
    const po_OverlapPeer *p = &ix->peers[i];
    if (!p->override || !has_id(p->id)) continue;
    out->seen[out->nseen++] = p->id;
    if (ix->state[i] != 1) continue;
    out->scanned[out->nscanned++] = p->id;
    for (size_t h = 0; h < ix->nhits[i]; h++) {
      po_JsonHash y = ix->peers[ix->hits[i][h]].id;
      if (has_id(y)) out->found[out->nfound++] = (po_OverlapPair){p->id, y};
    }
  }
  qsort(out->seen, out->nseen, sizeof *out->seen, by_id);
  qsort(out->scanned, out->nscanned, sizeof *out->scanned, by_id);
  qsort(out->found, out->nfound, sizeof *out->found, by_pair);
  return true;
}
