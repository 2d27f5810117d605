/* po_TargetIndex: PropertyOverride ("ns/name") -> target key, and its reverse (target key -> its
 * PropertyOverrides, sorted), in two hash tables (strtable.h): a lookup costs the target's own
 * PropertyOverrides, not the whole namespace's, and an update the same at any size. Each entry also
 * holds the PropertyOverride's compiled forms (compiled.h). Updates are rare next to lookups; a
 * mutex is enough. */
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "po/base/json.h"
#include "compiled.h"
#include "digest.h"
#include "holders.h"
#include "po/meshes/consul.h"
#include "po/reconcile/reconcile.h"
#include "overlap.h"
#include "strtable.h"
#include "sync.h"

/* Our last writes of a PropertyOverride (finalizer, then status), as what its watch events must
 * hold to be those writes coming back. One allocation, the uid last: the index's strings are
 * sized to what they hold (with fixed 128-byte uid and resourceVersion buffers a converged
 * PropertyOverride cost the index 987 bytes, 587 now: test_index_memory). */
typedef struct {
  int64_t generation;
  po_JsonHash spec;
  po_JsonHash status[2];   /* [0] after the finalizer write (the status then), [1] after the status write */
  bool has[2];
  uint64_t desired_status; /* po_Status_Hash of the status [1] was built from */
  /* The resourceVersion the finalizer write's answer said ("": the answer did not say it plainly,
   * or longer than etcd's decimal revisions ever are): its echo is known by it
   * (po_TargetIndex_IsOwnOverrideEcho), which waits for the answer while answered0 is false. */
  char rv0[24];
  bool answered0;
  char uid[];
} OwnPatch;

/* A po_OverrideMemo as kept (that one is the callers' fixed-size form), with its current and
 * held target keys: one allocation, the strings after the struct. rv has room for rv_room bytes,
 * at least kMemoRvRoom: a later resourceVersion of the same object (po_TargetIndex_IsOwnOverrideWrite
 * moves the memo to it) is written in place when it fits, else the memo stays where it was. */
typedef struct {
  int64_t generation;
  po_JsonHash spec_hash;
  uint64_t status_hash, written_hash; /* as po_OverrideMemo's */
  const char *uid, *key, *held;       /* in the block, after rv */
  size_t rv_room;
  char rv[];
} Memo;

enum { kMemoRvRoom = 24 }; /* any int64 in decimal, as etcd's revisions and our local server's */
enum { kMaxUid = 128 };    /* a longer uid is not noted (po_TargetIndex_NoteLastValid), as before */

typedef struct {
  po_StrNode node; /* first: the overrides table's node, keyed by po */
  char *target; /* target key */
  char *held;   /* the target its last valid generation is live in, when another; or NULL */
  /* Its compiled current spec and status.lastValid record (or NULL): released when it leaves the
   * index, replaced when either changes, so there are never more than two per PropertyOverride. */
  const po_CompiledEntry *compiled[2];
  Memo *memo;                /* what the last reconcile learnt (compiled.h), or NULL */
  OwnPatch *patch;           /* our last writes of it, until they come back (or NULL) */
  po_JsonHash seen;          /* what its last watch event held that a reconcile reads (po_TargetIndex_OverrideSeen) */
  bool has_seen;
  /* The last valid generation this process wrote into its target and recorded as its
   * status.lastValid (po_TargetIndex_NoteLastValid): uid, generation, keyed spec hash. */
  char *lv_uid;              /* NULL: none */
  int64_t lv_generation;     /* 0: none */
  po_JsonHash lv_hash;
  char po[];                 /* "ns/name", the overrides table's key */
} Entry;

/* Our last write of a target, as the version its watch event must have to be that write: the
 * uid and resourceVersion the server's answer carried. */
typedef struct {
  char *key;
  bool pending;           /* not seen back yet */
  bool in_flight;         /* sent, its answer not read yet: the version is not known yet */
  char over[64];          /* the resourceVersion it was written over ("" when unknown) */
  char uid[128], rv[64];  /* the object it made (po_TargetIndex_NoteTargetWritten) */
  po_WriteRecord record;  /* the write record (sync.h) that write carried, if any */
  bool awaited;           /* a reconcile found the cache behind it (po_TargetIndex_CacheBehind): its echo is reconciled */
  struct timespec answered_at; /* CLOCK_MONOTONIC, when its answer came */
} OwnWrite;

/* How long a target's event waits for the answer of a write of ours in flight (the event may be
 * that write's echo, which can come before its answer): a write's answer follows its commit at
 * once, so this bounds only a lost answer, which then costs a reconcile of the event (as any
 * event not known ours), never a missed one. */
enum { kOwnAnswerWaitMs = 3000 };

/* How long after a write's answer a cache that does not hold the version it made is taken as
 * behind it (po_TargetIndex_CacheBehind): an echo follows its answer within milliseconds, and a
 * broken watch is back within seconds. Past it the note is spent: a version that reached the
 * cache some way that never asked about it would otherwise put the target's reconciles off for
 * good. */
enum { kOwnEchoWaitMs = 30000 };

/* A mesh object (an EnvoyFilter, an EnvoyPatchPolicy) this process created: the uid the create's
 * answer gave, and when, until the object's cache is seen holding it (po_TargetIndex_ObjectMade). */
typedef struct {
  po_StrNode node; /* keyed by "kind/ns/name" (key, below) */
  char *key;
  char uid[128];
  struct timespec at; /* CLOCK_MONOTONIC */
} Made;

/* A target and the PropertyOverrides listed under it (their entries' po strings), sorted; one
 * listed both for its current spec and its held generation is there twice, side by side. Freed
 * when its last one goes. */
typedef struct {
  po_StrNode node; /* first: the targets table's node, keyed by key */
  char *key;
  const char **pos;
  size_t n, cap;
  po_OverlapMemo *overlaps; /* its last reconcile's (one allocation), or NULL */
  /* Set when a write of ours removed the entry of a PropertyOverride held here whose spec points
   * elsewhere: the resourceVersion written over ("" unknown). The homes' reconciles read the held
   * generation from this target's cache, so they are queued again by its next event of another
   * version (po_TargetIndex_TakeHeldGone). NULL: nothing pending. */
  char *held_gone_over;
  po_TargetDigestKept *digest; /* what a reconcile reads of it, at one version (digest.h), or NULL */
} Target;

/* The kinds whose links are counted: ForEachRelated asks whether any PropertyOverride targets a
 * ProxyDefaults (an Istio Mesh) before it reads the other kind's. */
static const char *const kKindPrefixes[] = {"ServiceDefaults/", "ProxyDefaults/", "Service/", "Mesh/"};
enum { kKindSlots = sizeof kKindPrefixes / sizeof *kKindPrefixes };

struct po_TargetIndex {
  pthread_mutex_t mu;
  pthread_cond_t answered; /* a target write's answer (or failure) noted: OwnWrite.in_flight cleared */
  po_StrTable overrides; /* Entry by po */
  po_StrTable targets;   /* Target by key: each entry's target, and its held target */
  size_t kind_links[kKindSlots];
  /* uids of targets this process created whose created annotation is not written yet */
  char **created;
  size_t ncreated, created_cap;
  uint64_t hits, misses; /* of the compiled forms */
  OwnWrite *own;    /* sorted by key: the last target write of ours per target, until its echo */
  size_t nown, own_cap;
  uint64_t echoes;  /* events recognised as our own writes */
  uint64_t waited_out; /* events that waited the whole bound for a write's answer */
  uint64_t cache_behind; /* reconciles put off because the cache did not hold our last write yet */
  po_StrTable made;      /* Made by "kind/ns/name": mesh objects we created, until the cache holds them */
  size_t made_prune_at;  /* the count at which expired Made notes are swept (amortised) */
  uint64_t event_hashes; /* JSON trees hashed to judge PropertyOverride events (po_TargetIndex_OverrideEvent) */
  uint64_t own_echoes;   /* PropertyOverride events known ours by their version, unparsed (IsOwnOverrideEcho) */
  po_TargetOptions options; /* the mesh options every compile uses (po_TargetIndex_SetOptions) */
  po_ArenaFit fit;          /* the first block of every compile's arena, learnt from the earlier ones */
  po_Holders holders;       /* which Consul targets hold an entry of which PropertyOverride (holders.h) */
};

void po_TargetIndex_SetOptions(po_TargetIndex *ix, const po_TargetOptions *o) {
  ix->options = o ? *o : (po_TargetOptions){0};
}

const po_TargetOptions *po_TargetIndex_Options(const po_TargetIndex *ix) { return &ix->options; }

po_TargetIndex *po_TargetIndex_New(void) {
  po_TargetIndex *ix = calloc(1, sizeof *ix);
  if (!ix) return NULL;
  pthread_mutex_init(&ix->mu, NULL);
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&ix->answered, &a);
  pthread_condattr_destroy(&a);
  return ix;
}

static void free_entry(void *ctx, po_StrNode *n) {
  (void)ctx;
  Entry *e = (Entry *)n;
  free(e->target);
  free(e->held);
  po_CompiledEntry_Release(e->compiled[0]);
  po_CompiledEntry_Release(e->compiled[1]);
  free(e->memo);
  free(e->patch);
  free(e->lv_uid);
  free(e);
}

static void free_target(void *ctx, po_StrNode *n) {
  (void)ctx;
  Target *t = (Target *)n;
  free(t->key);
  free(t->pos);
  free(t->overlaps);
  free(t->held_gone_over);
  free(t->digest);
  free(t);
}

static void free_made(void *ctx, po_StrNode *n) {
  (void)ctx;
  Made *m = (Made *)n;
  free(m->key);
  free(m);
}

void po_TargetIndex_Free(po_TargetIndex *ix) {
  if (!ix) return;
  po_StrTable_ForEach(&ix->overrides, free_entry, NULL);
  po_StrTable_ForEach(&ix->targets, free_target, NULL);
  po_StrTable_Free(&ix->overrides);
  po_StrTable_Free(&ix->targets);
  for (size_t i = 0; i < ix->nown; i++) free(ix->own[i].key);
  free(ix->own);
  po_StrTable_ForEach(&ix->made, free_made, NULL);
  po_StrTable_Free(&ix->made);
  po_Holders_Free(&ix->holders);
  for (size_t i = 0; i < ix->ncreated; i++) free(ix->created[i]);
  free(ix->created);
  pthread_mutex_destroy(&ix->mu);
  pthread_cond_destroy(&ix->answered);
  free(ix);
}

static Entry *find(const po_TargetIndex *ix, const char *po) {
  return (Entry *)po_StrTable_Find(&ix->overrides, po, po_StrTable_Hash(po));
}

static Target *find_target(const po_TargetIndex *ix, const char *key) {
  return (Target *)po_StrTable_Find(&ix->targets, key, po_StrTable_Hash(key));
}

/* "ns/name" into out (600 bytes, as every caller's), without formatting. */
static void po_key(char *out, size_t size, const char *ns, const char *name) {
  size_t a = ns ? strlen(ns) : 0, b = name ? strlen(name) : 0;
  if (a > size - 2) a = size - 2;
  if (b > size - 2 - a) b = size - 2 - a;
  memcpy(out, ns ? ns : "", a);
  out[a] = '/';
  memcpy(out + a + 1, name ? name : "", b);
  out[a + 1 + b] = '\0';
}

/* src into dst, cut at size - 1 bytes, ended. Not strncpy: it fills the rest of dst with NULs,
 * and the buffers are 128-600 bytes, four of them for each PropertyOverride of a target on every
 * reconcile (po_TargetIndex_MemoCompiled). */
static void copy_out(char *dst, size_t size, const char *src) {
  if (!size) return;
  if (!src) src = "";
  size_t n = strnlen(src, size - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* ---- the reverse links: per target, its PropertyOverrides, sorted ---- */

static int kind_slot(const char *key) {
  for (int k = 0; k < kKindSlots; k++) {
    if (strncmp(key, kKindPrefixes[k], strlen(kKindPrefixes[k])) == 0) return k;
  }
  return -1;
}

/* Where po is, or goes, in t's sorted list. */
static size_t pos_find(const Target *t, const char *po, bool *found) {
  size_t lo = 0, hi = t->n;
  *found = false;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(t->pos[mid], po);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The target of key with room for one more PropertyOverride, made when new (its key copied), so
 * that link_add cannot fail; NULL when out of memory (nothing changed). */
static Target *link_room(po_TargetIndex *ix, const char *key) {
  Target *t = find_target(ix, key);
  if (!t) {
    if (!po_StrTable_Ready(&ix->targets)) return NULL;
    t = calloc(1, sizeof *t);
    char *k = strdup(key);
    if (!t || !k) {
      free(t);
      free(k);
      return NULL;
    }
    t->key = k;
    t->node = (po_StrNode){.hash = po_StrTable_Hash(k), .key = k};
    po_StrTable_Insert(&ix->targets, &t->node);
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 4;
    const char **p = realloc(t->pos, cap * sizeof *p);
    if (!p) return NULL; /* a new target stays empty: listed nowhere, freed with the index */
    t->pos = p;
    t->cap = cap;
  }
  return t;
}

/* po is the entry's own string (stable while it holds it). Needs link_room(t). */
static void link_add(po_TargetIndex *ix, Target *t, const char *po) {
  bool found;
  size_t at = pos_find(t, po, &found);
  memmove(t->pos + at + 1, t->pos + at, (t->n - at) * sizeof *t->pos);
  t->pos[at] = po;
  t->n++;
  int k = kind_slot(t->key);
  if (k >= 0) ix->kind_links[k]++;
}

static void link_remove(po_TargetIndex *ix, const char *key, const char *po) {
  Target *t = key ? find_target(ix, key) : NULL;
  bool found;
  size_t at = t ? pos_find(t, po, &found) : 0;
  if (!t || !found) return;
  memmove(t->pos + at, t->pos + at + 1, (t->n - at - 1) * sizeof *t->pos);
  t->n--;
  int k = kind_slot(t->key);
  if (k >= 0) ix->kind_links[k]--;
  if (t->n == 0) {
    po_StrTable_Unlink(&ix->targets, &t->node);
    free_target(NULL, &t->node);
  }
}

bool po_TargetIndex_Set(po_TargetIndex *ix, const char *ns, const char *name, const char *target_key, char *old_key,
                        size_t size) {
  copy_out(old_key, size, "");
  char key[600];
  po_key(key, sizeof key, ns, name);
  pthread_mutex_lock(&ix->mu);
  Entry *e = find(ix, key);
  if (e && strcmp(e->target, target_key) == 0) { /* the usual update: a status write */
    copy_out(old_key, size, e->target);
    pthread_mutex_unlock(&ix->mu);
    return true;
  }
  size_t klen = strlen(key) + 1;
  Entry *fresh = e ? NULL : calloc(1, sizeof *fresh + klen);
  char *t = strdup(target_key);
  Target *room = t && (e || (fresh && po_StrTable_Ready(&ix->overrides))) ? link_room(ix, t) : NULL;
  if (!room) {
    pthread_mutex_unlock(&ix->mu);
    free(fresh);
    free(t);
    return false;
  }
  if (e) {
    copy_out(old_key, size, e->target);
    link_remove(ix, e->target, e->po);
    free(e->target);
    e->target = t;
    link_add(ix, room, e->po);
  } else {
    memcpy(fresh->po, key, klen);
    fresh->node = (po_StrNode){.hash = po_StrTable_Hash(fresh->po), .key = fresh->po};
    fresh->target = t;
    po_StrTable_Insert(&ix->overrides, &fresh->node);
    link_add(ix, room, fresh->po);
  }
  pthread_mutex_unlock(&ix->mu);
  return true;
}

bool po_TargetIndex_Remove(po_TargetIndex *ix, const char *ns, const char *name, char *old_key, size_t size) {
  char po[600];
  po_key(po, sizeof po, ns, name);
  pthread_mutex_lock(&ix->mu);
  Entry *e = find(ix, po);
  copy_out(old_key, size, e ? e->target : "");
  if (e) {
    link_remove(ix, e->target, e->po);
    link_remove(ix, e->held, e->po);
    po_StrTable_Unlink(&ix->overrides, &e->node);
    free_entry(NULL, &e->node);
  }
  pthread_mutex_unlock(&ix->mu);
  return true; /* a removal allocates nothing */
}

bool po_TargetIndex_SetHeld(po_TargetIndex *ix, const char *ns, const char *name, const char *held_key, char *old_held,
                            size_t size) {
  char po[600];
  po_key(po, sizeof po, ns, name);
  copy_out(old_held, size, "");
  pthread_mutex_lock(&ix->mu);
  Entry *e = find(ix, po);
  if (!e) {
    pthread_mutex_unlock(&ix->mu);
    return true;
  }
  copy_out(old_held, size, e->held ? e->held : "");
  if ((!e->held && !(held_key && *held_key)) || (e->held && held_key && strcmp(e->held, held_key) == 0)) {
    pthread_mutex_unlock(&ix->mu);
    return true; /* unchanged */
  }
  char *h = held_key && *held_key ? strdup(held_key) : NULL;
  Target *room = h ? link_room(ix, h) : NULL;
  if (held_key && *held_key && !room) {
    pthread_mutex_unlock(&ix->mu);
    free(h);
    return false;
  }
  link_remove(ix, e->held, e->po);
  free(e->held);
  e->held = h;
  if (h) link_add(ix, room, e->po);
  pthread_mutex_unlock(&ix->mu);
  return true;
}

/* A PropertyOverride listed under a target both for its current spec and its held generation
 * is there twice, side by side, and is returned once. Each name goes to out + count * stride
 * (size bytes), `namespace/name` when qualified, else the name alone. */
static size_t lookup_run(po_TargetIndex *ix, const char *target_key, char *out, size_t stride, size_t cap,
                         bool qualified) {
  size_t count = 0;
  pthread_mutex_lock(&ix->mu);
  const Target *t = find_target(ix, target_key);
  const char *prev = NULL;
  for (size_t i = 0; t && i < t->n; i++) {
    const char *po = t->pos[i];
    if (prev && strcmp(prev, po) == 0) continue;
    prev = po;
    const char *slash = qualified ? NULL : strchr(po, '/');
    if (count < cap) copy_out(out + count * stride, stride, slash ? slash + 1 : po);
    count++;
  }
  pthread_mutex_unlock(&ix->mu);
  return count;
}

size_t po_TargetIndex_Lookup(po_TargetIndex *ix, const char *target_key, char (*names)[254], size_t cap) {
  return lookup_run(ix, target_key, (char *)names, sizeof *names, cap, false);
}

size_t po_TargetIndex_LookupQualified(po_TargetIndex *ix, const char *target_key, char (*refs)[320], size_t cap) {
  return lookup_run(ix, target_key, (char *)refs, sizeof *refs, cap, true);
}

size_t po_TargetIndex_Count(po_TargetIndex *ix) {
  pthread_mutex_lock(&ix->mu);
  size_t n = ix->overrides.count;
  pthread_mutex_unlock(&ix->mu);
  return n;
}

/* ---- targets created but not yet annotated ---- */

void po_TargetIndex_NoteCreated(po_TargetIndex *ix, const char *uid) {
  if (!uid || !*uid) return;
  pthread_mutex_lock(&ix->mu);
  if (ix->ncreated == ix->created_cap) {
    size_t cap = ix->created_cap ? ix->created_cap * 2 : 16;
    char **c = realloc(ix->created, cap * sizeof *c);
    if (c) {
      ix->created = c;
      ix->created_cap = cap;
    }
  }
  char *d = ix->ncreated < ix->created_cap ? strdup(uid) : NULL;
  if (d) ix->created[ix->ncreated++] = d;
  pthread_mutex_unlock(&ix->mu);
}

bool po_TargetIndex_WasCreated(po_TargetIndex *ix, const char *uid, bool forget) {
  bool found = false;
  pthread_mutex_lock(&ix->mu);
  for (size_t i = 0; uid && i < ix->ncreated; i++) {
    if (strcmp(ix->created[i], uid) != 0) continue;
    found = true;
    if (forget) {
      free(ix->created[i]);
      ix->created[i] = ix->created[--ix->ncreated];
    }
    break;
  }
  pthread_mutex_unlock(&ix->mu);
  return found;
}

/* ---- compiled forms ---- */

static bool matches(const po_CompiledEntry *e, const char *uid, int64_t generation, po_JsonHash hash) {
  return e && e->generation == generation && po_JsonHash_Equal(e->hash, hash) && strcmp(e->uid, uid) == 0;
}

const po_CompiledEntry *po_TargetIndex_Compiled(po_TargetIndex *ix, const json_object *obj, po_CompileWhich which,
                                                bool *oom) {
  *oom = false;
  const char *ns = po_Json_Meta(obj, "namespace"), *name = po_Json_Meta(obj, "name"), *uid = po_Json_Meta(obj, "uid");
  int64_t generation;
  po_JsonHash hash;
  if (!po_CompiledEntry_KeyOf(obj, which, &generation, &hash)) return NULL;
  char po[600];
  po_key(po, sizeof po, ns, name);
  pthread_mutex_lock(&ix->mu);
  Entry *at = find(ix, po);
  const po_CompiledEntry *hit =
      at && matches(at->compiled[which], uid, generation, hash) ? po_CompiledEntry_Ref(at->compiled[which]) : NULL;
  if (hit) ix->hits++;
  pthread_mutex_unlock(&ix->mu);
  if (hit) return hit;
  /* Compiled without the lock (it is the expensive part); two workers racing on the same
   * PropertyOverride (its current and its held target) both compile, the second keeps its own. */
  po_CompiledEntry *e = po_CompiledEntry_Make(obj, which, uid, generation, hash, &ix->options, &ix->fit, oom);
  if (!e) return NULL;
  pthread_mutex_lock(&ix->mu);
  ix->misses++;
  at = find(ix, po);
  /* Kept only while the PropertyOverride is in the index: one deleted meanwhile leaves nothing. */
  if (at) {
    po_CompiledEntry_Release(at->compiled[which]);
    at->compiled[which] = po_CompiledEntry_Ref(e);
  }
  pthread_mutex_unlock(&ix->mu);
  return e;
}

static void count_compiled(void *ctx, po_StrNode *n) {
  const Entry *e = (const Entry *)n;
  *(size_t *)ctx += (e->compiled[0] != NULL) + (e->compiled[1] != NULL);
}

po_TargetIndexStats po_TargetIndex_Stats(po_TargetIndex *ix) {
  pthread_mutex_lock(&ix->mu);
  po_TargetIndexStats s = {ix->overrides.count, 0, ix->hits, ix->misses, ix->echoes, ix->event_hashes, ix->waited_out,
                          ix->cache_behind, ix->own_echoes};
  po_StrTable_ForEach(&ix->overrides, count_compiled, &s.compiled);
  pthread_mutex_unlock(&ix->mu);
  return s;
}

/* ---- memos ---- */

static Entry *entry_of(po_TargetIndex *ix, const char *ns, const char *name) {
  char po[600];
  po_key(po, sizeof po, ns, name);
  return find(ix, po);
}

/* Under the lock: e's memo when it is for version v, copied out. */
static bool memo_of(const Entry *e, const po_OverrideVersion *v, po_OverrideMemo *m, char *key, char *held, size_t size) {
  bool ok = e && e->memo && *v->rv && strcmp(e->memo->rv, v->rv) == 0 && strcmp(e->memo->uid, v->uid) == 0 &&
            e->memo->generation == v->generation;
  if (ok) {
    const Memo *c = e->memo;
    *m = (po_OverrideMemo){.generation = c->generation, .spec_hash = c->spec_hash, .status_hash = c->status_hash,
                           .written_hash = c->written_hash};
    copy_out(m->rv, sizeof m->rv, c->rv);
    copy_out(m->uid, sizeof m->uid, c->uid);
    copy_out(key, size, c->key);
    copy_out(held, size, c->held);
  }
  return ok;
}

bool po_TargetIndex_MemoCompiled(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideVersion *v,
                                 po_OverrideMemo *m, char *key, char *held, size_t size, const po_CompiledEntry **ce) {
  *ce = NULL;
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  bool ok = memo_of(e, v, m, key, held, size);
  if (ok && matches(e->compiled[kPo_CompileWhich_Current], m->uid, m->generation, m->spec_hash)) {
    *ce = po_CompiledEntry_Ref(e->compiled[kPo_CompileWhich_Current]);
    ix->hits++;
  }
  pthread_mutex_unlock(&ix->mu);
  return ok;
}

/* The kept form of m and its keys, one block (NULL when out of memory). */
static Memo *memo_new(const po_OverrideMemo *m, const char *key, const char *held) {
  size_t rl = strlen(m->rv) + 1, ul = strlen(m->uid) + 1, kl = strlen(key) + 1, hl = strlen(held) + 1;
  size_t room = rl > kMemoRvRoom ? rl : kMemoRvRoom;
  Memo *c = malloc(sizeof *c + room + ul + kl + hl);
  if (!c) return NULL;
  char *uid = c->rv + room, *k = uid + ul, *h = k + kl;
  *c = (Memo){.generation = m->generation, .spec_hash = m->spec_hash, .status_hash = m->status_hash,
              .written_hash = m->written_hash, .uid = uid, .key = k, .held = h, .rv_room = room};
  memcpy(c->rv, m->rv, rl);
  memcpy(uid, m->uid, ul);
  memcpy(k, key, kl);
  memcpy(h, held, hl);
  return c;
}

void po_TargetIndex_MemoSet(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideMemo *m,
                            const char *key, const char *held) {
  Memo *c = memo_new(m, key, held);
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  if (e) {
    free(e->memo);
    e->memo = c; /* NULL (out of memory): none, and the object is read next time */
    c = NULL;
  }
  pthread_mutex_unlock(&ix->mu);
  free(c);
}

void po_TargetIndex_MemoStatus(po_TargetIndex *ix, const char *ns, const char *name, const char *rv, uint64_t status_hash) {
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  if (e && e->memo && strcmp(e->memo->rv, rv) == 0) e->memo->status_hash = status_hash;
  pthread_mutex_unlock(&ix->mu);
}

void po_TargetIndex_MemoWritten(po_TargetIndex *ix, const char *ns, const char *name, const char *rv, uint64_t written_hash) {
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  if (e && e->memo && strcmp(e->memo->rv, rv) == 0) {
    e->memo->written_hash = written_hash;
    /* what was found at rv is no longer what the server has: our write replaced it */
    e->memo->status_hash = 0;
  }
  pthread_mutex_unlock(&ix->mu);
}

void po_TargetIndex_NoteLastValid(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                  int64_t generation, po_JsonHash hash) {
  if (!uid || strlen(uid) >= kMaxUid) return;
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  /* as noted already (every reconcile notes every PropertyOverride of its target again): no copy */
  if (e && e->lv_uid && e->lv_generation == generation && e->lv_hash.lo == hash.lo && e->lv_hash.hi == hash.hi &&
      strcmp(e->lv_uid, uid) == 0) {
    pthread_mutex_unlock(&ix->mu);
    return;
  }
  pthread_mutex_unlock(&ix->mu);
  char *u = strdup(uid);
  pthread_mutex_lock(&ix->mu);
  e = entry_of(ix, ns, name);
  if (e && u) {
    free(e->lv_uid);
    e->lv_uid = u;
    u = NULL;
    e->lv_generation = generation;
    e->lv_hash = hash;
  } else if (e) {
    e->lv_generation = 0; /* out of memory: none rather than an older one */
  }
  pthread_mutex_unlock(&ix->mu);
  free(u);
}

static void forget_last_valid(void *ctx, po_StrNode *n) {
  (void)ctx;
  ((Entry *)n)->lv_generation = 0;
}

void po_TargetIndex_ForgetLastValid(po_TargetIndex *ix) {
  pthread_mutex_lock(&ix->mu);
  po_StrTable_ForEach(&ix->overrides, forget_last_valid, NULL);
  pthread_mutex_unlock(&ix->mu);
}

bool po_TargetIndex_IsOwnLastValid(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                   int64_t generation, po_JsonHash hash) {
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  bool yes = e && e->lv_generation > 0 && e->lv_generation == generation && uid && !strcmp(e->lv_uid, uid) &&
             po_JsonHash_Equal(e->lv_hash, hash);
  pthread_mutex_unlock(&ix->mu);
  return yes;
}

/* ---- a target's overlap memo (overlap.h) ---- */

static size_t memo_bytes(const po_OverlapMemo *m) {
  return sizeof *m + (m->nseen + m->nscanned) * sizeof(po_JsonHash) + m->nfound * sizeof(po_OverlapPair);
}

/* One block: the struct, then its three arrays (each of 8-byte aligned elements). */
static void memo_copy(const po_OverlapMemo *m, po_OverlapMemo *into) {
  po_JsonHash *seen = (po_JsonHash *)(into + 1), *scanned = seen + m->nseen;
  po_OverlapPair *found = (po_OverlapPair *)(scanned + m->nscanned);
  memcpy(seen, m->seen, m->nseen * sizeof *seen);
  memcpy(scanned, m->scanned, m->nscanned * sizeof *scanned);
  memcpy(found, m->found, m->nfound * sizeof *found);
  *into = (po_OverlapMemo){seen, m->nseen, scanned, m->nscanned, found, m->nfound};
}

bool po_TargetIndex_OverlapMemo(po_TargetIndex *ix, const char *target_key, po_OverlapMemo *out, po_Arena *ar) {
  pthread_mutex_lock(&ix->mu);
  const Target *t = find_target(ix, target_key);
  po_OverlapMemo *m = t && t->overlaps ? po_Arena_Malloc(ar, memo_bytes(t->overlaps)) : NULL;
  if (m) memo_copy(t->overlaps, m);
  pthread_mutex_unlock(&ix->mu);
  if (m) *out = *m;
  return m != NULL;
}

void po_TargetIndex_SetOverlapMemo(po_TargetIndex *ix, const char *target_key, const po_OverlapMemo *m) {
  po_OverlapMemo *c = m ? malloc(memo_bytes(m)) : NULL;
  if (c) memo_copy(m, c);
  pthread_mutex_lock(&ix->mu);
  Target *t = find_target(ix, target_key);
  if (t) {
    free(t->overlaps);
    t->overlaps = c; /* NULL (out of memory, or forgotten): every pair compared next time */
    c = NULL;
  }
  pthread_mutex_unlock(&ix->mu);
  free(c);
}

bool po_TargetIndex_Digest(po_TargetIndex *ix, const char *target_key, const char *uid, const char *rv, po_Arena *a,
                           po_TargetDigest *out) {
  pthread_mutex_lock(&ix->mu);
  const Target *t = find_target(ix, target_key);
  const po_TargetDigest *d = t && t->digest ? po_TargetDigest_Head(t->digest) : NULL;
  bool ok = d && uid && rv && *d->uid && *d->rv && !strcmp(d->uid, uid) && !strcmp(d->rv, rv) &&
            po_TargetDigest_CopyTo(t->digest, a, out);
  pthread_mutex_unlock(&ix->mu);
  return ok;
}

void po_TargetIndex_SetDigest(po_TargetIndex *ix, const char *target_key, const po_TargetDigest *d) {
  po_TargetDigestKept *c = po_TargetDigest_Keep(d);
  pthread_mutex_lock(&ix->mu);
  Target *t = find_target(ix, target_key);
  if (t) {
    free(t->digest);
    t->digest = c; /* NULL (none, or out of memory): the next reconcile reads the object */
    c = NULL;
  }
  pthread_mutex_unlock(&ix->mu);
  free(c);
}

/* ---- across targets: the ProxyDefaults' PropertyOverrides meet every ServiceDefaults' ---- */

static const char *kind_prefix(po_TargetKind kind) {
  switch (kind) {
    case kPo_TargetKind_ProxyDefaults: return "ProxyDefaults/";
    case kPo_TargetKind_Service: return "Service/";
    case kPo_TargetKind_IstioMesh: return "Mesh/";
    default: return "ServiceDefaults/";
  }
}

typedef struct {
  const char *prefix;
  size_t plen;
  Target **out;
  size_t n;
} OfKind;

static void of_kind(void *ctx, po_StrNode *node) {
  OfKind *k = ctx;
  Target *t = (Target *)node;
  if (t->n && strncmp(t->key, k->prefix, k->plen) == 0) {
    if (k->out) k->out[k->n] = t;
    k->n++;
  }
}

static int by_key(const void *a, const void *b) {
  return strcmp((*(Target *const *)a)->key, (*(Target *const *)b)->key);
}

/* Linear in the targets and the links of the kind: it runs at a target's deletion and, while a
 * PropertyOverride targets a ProxyDefaults, on a change of one of its related keys. */
char *po_TargetIndex_LinksOfKind(po_TargetIndex *ix, po_TargetKind kind, size_t *count) {
  *count = 0;
  pthread_mutex_lock(&ix->mu);
  OfKind k = {.prefix = kind_prefix(kind), .plen = strlen(kind_prefix(kind))};
  po_StrTable_ForEach(&ix->targets, of_kind, &k);
  Target **sorted = malloc((k.n ? k.n : 1) * sizeof *sorted);
  size_t n = k.n, bytes = 1, links = 0;
  k.out = sorted;
  k.n = 0;
  if (sorted) po_StrTable_ForEach(&ix->targets, of_kind, &k);
  if (sorted) qsort(sorted, n, sizeof *sorted, by_key);
  for (size_t i = 0; sorted && i < n; i++) {
    for (size_t j = 0; j < sorted[i]->n; j++) bytes += strlen(sorted[i]->key) + strlen(sorted[i]->pos[j]) + 2;
  }
  char *block = sorted ? malloc(bytes) : NULL, *p = block;
  for (size_t i = 0; block && i < n; i++) {
    size_t kl = strlen(sorted[i]->key) + 1;
    for (size_t j = 0; j < sorted[i]->n; j++, links++) {
      size_t pl = strlen(sorted[i]->pos[j]) + 1;
      memcpy(p, sorted[i]->key, kl);
      memcpy(p + kl, sorted[i]->pos[j], pl);
      p += kl + pl;
    }
  }
  if (block) *count = links;
  pthread_mutex_unlock(&ix->mu);
  free(sorted);
  return block;
}

typedef struct {
  char *at;
  size_t bytes, n;
} TargetKeys;

static void key_size(void *ctx, po_StrNode *node) {
  TargetKeys *k = ctx;
  const Target *t = (const Target *)node;
  if (!t->n) return;
  k->bytes += strlen(t->key) + 1;
  k->n++;
}

static void key_copy(void *ctx, po_StrNode *node) {
  TargetKeys *k = ctx;
  const Target *t = (const Target *)node;
  size_t len = strlen(t->key) + 1;
  if (!t->n) return;
  memcpy(k->at, t->key, len);
  k->at += len;
}

/* Linear in the targets: the start of the workers enqueues each. */
char *po_TargetIndex_TargetKeys(po_TargetIndex *ix, size_t *count) {
  *count = 0;
  pthread_mutex_lock(&ix->mu);
  TargetKeys k = {.bytes = 1};
  po_StrTable_ForEach(&ix->targets, key_size, &k);
  char *block = malloc(k.bytes);
  if (block) {
    k.at = block;
    po_StrTable_ForEach(&ix->targets, key_copy, &k);
    *count = k.n;
  }
  pthread_mutex_unlock(&ix->mu);
  return block;
}

bool po_TargetIndex_ForEachRelated(po_TargetIndex *ix, const char *key, void (*fn)(void *ctx, const char *key),
                                   void *ctx) {
  /* Istio's Mesh and Service targets relate as Consul's ProxyDefaults and ServiceDefaults do:
   * the mesh-wide EnvoyFilters (root namespace) reach every sidecar a Service's one does. */
  po_TargetKind other, wide;
  if (strncmp(key, "ProxyDefaults/", strlen("ProxyDefaults/")) == 0) other = kPo_TargetKind_ServiceDefaults, wide = kPo_TargetKind_ProxyDefaults;
  else if (strncmp(key, "ServiceDefaults/", strlen("ServiceDefaults/")) == 0) other = wide = kPo_TargetKind_ProxyDefaults;
  else if (strncmp(key, "Mesh/", strlen("Mesh/")) == 0) other = kPo_TargetKind_Service, wide = kPo_TargetKind_IstioMesh;
  else if (strncmp(key, "Service/", strlen("Service/")) == 0) other = wide = kPo_TargetKind_IstioMesh;
  else return true;
  /* No ProxyDefaults PropertyOverride, no relation: a ServiceDefaults change costs nothing more
   * (the usual case, and the one the 10,000-PropertyOverride benchmark runs). A ProxyDefaults
   * key always relates: the last one of it just removed still named in ServiceDefaults statuses. */
  pthread_mutex_lock(&ix->mu);
  size_t wide_links = ix->kind_links[kind_slot(kind_prefix(wide))];
  pthread_mutex_unlock(&ix->mu);
  if (wide_links == 0 && other == wide) return true;
  size_t n;
  char *block = po_TargetIndex_LinksOfKind(ix, other, &n);
  if (!block) return false;
  const char *p = block, *prev = NULL;
  for (size_t i = 0; i < n; i++) {
    const char *k = p, *po = k + strlen(k) + 1;
    p = po + strlen(po) + 1;
    if (prev && strcmp(prev, k) == 0) continue; /* links of one target are one run */
    prev = k;
    fn(ctx, k);
  }
  free(block);
  return true;
}

/* ---- our own target writes, told apart when the watch brings them back ---- */

static size_t own_find(const po_TargetIndex *ix, const char *key, bool *found) {
  size_t lo = 0, hi = ix->nown;
  *found = false;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(ix->own[mid].key, key);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Under the lock: the note of key, added when missing (NULL: out of memory, the echo is then
 * reconciled, as any event). k is the caller's copy of key, taken when the note is added. */
static OwnWrite *own_note(po_TargetIndex *ix, const char *key, char **k) {
  bool found;
  size_t at = own_find(ix, key, &found);
  if (found) return &ix->own[at];
  if (!*k) return NULL;
  if (ix->nown == ix->own_cap) {
    size_t cap = ix->own_cap ? ix->own_cap * 2 : 64;
    OwnWrite *o = realloc(ix->own, cap * sizeof *o);
    if (!o) return NULL;
    ix->own = o;
    ix->own_cap = cap;
  }
  memmove(ix->own + at + 1, ix->own + at, (ix->nown - at) * sizeof *ix->own);
  ix->own[at] = (OwnWrite){.key = *k};
  ix->nown++;
  *k = NULL;
  return &ix->own[at];
}

/* Before the write: its echo can come through the watch before its answer does, so the event
 * that finds the note in flight waits for the answer (po_TargetIndex_IsOwnTargetEcho). Nothing of
 * the written object is hashed: its answer names the version it made. */
static void note_target_write(po_TargetIndex *ix, const char *key, const char *over, const po_WriteRecord *rec);

void po_TargetIndex_NoteTargetWriteOver(po_TargetIndex *ix, const char *key, const char *over) {
  po_WriteRecord none = {.present = false};
  note_target_write(ix, key, over && strlen(over) < sizeof ((OwnWrite *)0)->over ? over : "", &none);
}

void po_TargetIndex_NoteTargetWrite(po_TargetIndex *ix, const char *key, const json_object *written) {
  if (!written) { /* the write failed, or its answer was lost: nothing known to come back */
    pthread_mutex_lock(&ix->mu);
    bool found;
    size_t at = own_find(ix, key, &found);
    if (found) ix->own[at].pending = ix->own[at].in_flight = false, ix->own[at].record.present = false;
    pthread_cond_broadcast(&ix->answered);
    pthread_mutex_unlock(&ix->mu);
    return;
  }
  char over[64] = "";
  json_object *rv = po_Json_Get(po_Json_Get(written, "metadata"), "resourceVersion");
  if (rv && json_object_is_type(rv, json_type_string) && json_object_get_string_len(rv) < (int)sizeof over) {
    snprintf(over, sizeof over, "%s", json_object_get_string(rv));
  }
  po_WriteRecord rec = po_Sync_ReadRecord(written);
  note_target_write(ix, key, over, &rec);
}

static void note_target_write(po_TargetIndex *ix, const char *key, const char *over, const po_WriteRecord *rec) {
  char *k = strdup(key);
  pthread_mutex_lock(&ix->mu);
  OwnWrite *w = own_note(ix, key, &k);
  if (w) {
    w->pending = w->in_flight = true;
    w->awaited = false;
    w->uid[0] = w->rv[0] = 0;
    snprintf(w->over, sizeof w->over, "%s", over);
    w->record = *rec;
  }
  pthread_mutex_unlock(&ix->mu);
  free(k);
}

void po_TargetIndex_NoteTargetWritten(po_TargetIndex *ix, const char *key, const char *uid, const char *rv) {
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = own_find(ix, key, &found);
  if (found && ix->own[at].in_flight) {
    OwnWrite *w = &ix->own[at];
    w->in_flight = false;
    bool known = uid && rv && *uid && *rv && strlen(uid) < sizeof w->uid && strlen(rv) < sizeof w->rv;
    /* an answer that does not say its version: its echo is reconciled, as any event */
    if (!known) w->pending = false;
    else snprintf(w->uid, sizeof w->uid, "%s", uid), snprintf(w->rv, sizeof w->rv, "%s", rv);
    clock_gettime(CLOCK_MONOTONIC, &w->answered_at);
  }
  pthread_cond_broadcast(&ix->answered);
  pthread_mutex_unlock(&ix->mu);
}

bool po_TargetIndex_OwnRecord(po_TargetIndex *ix, const char *key, po_WriteRecord *r) {
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = own_find(ix, key, &found);
  bool ok = found && ix->own[at].record.present;
  if (ok) *r = ix->own[at].record;
  pthread_mutex_unlock(&ix->mu);
  return ok;
}

/* When a wait for a write's answer that starts now ends (CLOCK_MONOTONIC, ix->answered's clock). */
static struct timespec answer_deadline(void) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += kOwnAnswerWaitMs / 1000;
  until.tv_nsec += (long)(kOwnAnswerWaitMs % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  return until;
}

/* Under the lock: waits (bounded, kOwnAnswerWaitMs) while the write noted at key is in flight;
 * returns the note (it may have moved) or NULL. An answer not come by then is taken as lost: the
 * note is spent (its late answer finds it no longer in flight), so neither this event's second
 * ask (its tree, after its head) nor any later event of the target waits the bound out again. */
static OwnWrite *own_answered(po_TargetIndex *ix, const char *key) {
  struct timespec until = answer_deadline();
  for (;;) {
    bool found;
    size_t at = own_find(ix, key, &found);
    if (!found) return NULL;
    if (!ix->own[at].in_flight) return &ix->own[at];
    if (pthread_cond_timedwait(&ix->answered, &ix->mu, &until) != 0) {
      at = own_find(ix, key, &found);
      if (found && ix->own[at].in_flight) {
        ix->waited_out++;
        ix->own[at].in_flight = ix->own[at].pending = false;
      }
      return found ? &ix->own[at] : NULL;
    }
  }
}

bool po_TargetIndex_IsOwnTargetEcho(po_TargetIndex *ix, const char *key, const char *uid, const char *rv) {
  if (!uid || !rv) return false;
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = own_find(ix, key, &found);
  OwnWrite *w = found && ix->own[at].pending ? &ix->own[at] : NULL;
  /* The version written over, delivered late (the cache had it before its handler ran), is not
   * our write whatever its answer says, and leaves the note for the echo still to come. */
  if (!w || (*w->over && strcmp(rv, w->over) == 0)) {
    pthread_mutex_unlock(&ix->mu);
    return false;
  }
  w = own_answered(ix, key);
  /* Awaited: a reconcile read the version written over and put its judgement off until this
   * version is in the cache (po_TargetIndex_CacheBehind), so it is reconciled like any event. */
  bool echo = w && w->pending && strcmp(w->rv, rv) == 0 && strcmp(w->uid, uid) == 0;
  bool own = echo && !w->awaited;
  /* The awaited echo keeps its note: the informer asks by the event's head before it caches the
   * version, and a recheck in between would read the version written over, no longer behind. The
   * reconcile that finds the cache holding it spends it (po_TargetIndex_CacheBehind). */
  if (echo && w->awaited) {
    pthread_mutex_unlock(&ix->mu);
    return false;
  }
  /* Otherwise the note is spent. A target's events come in resourceVersion order: another
   * version than the one we wrote over, and not ours, means ours came and went unseen (a watch
   * broken after our write, a relist that brings only a later version), and its echo will never
   * come. An answer lost: the event is reconciled (at worst a reconcile more, never one less). */
  if (w) w->pending = false, w->in_flight = false;
  if (own) ix->echoes++;
  pthread_mutex_unlock(&ix->mu);
  return own;
}

/* Milliseconds since t (CLOCK_MONOTONIC). */
static int64_t ms_since(const struct timespec *t) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

bool po_TargetIndex_CacheBehind(po_TargetIndex *ix, const char *key, const char *uid, const char *rv) {
  if (!uid || !rv) return false;
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = own_find(ix, key, &found);
  OwnWrite *w = found && ix->own[at].pending && !ix->own[at].in_flight ? &ix->own[at] : NULL;
  bool behind = false;
  /* Another uid: the object we wrote is gone and this one was created after it (an update needs
   * the object it replaces), so the cache is ahead of the note, not behind it. Our version: the
   * cache holds it; an awaited echo's note is spent here (its event was not taken as ours), a
   * note not awaited stays for its echo's event (asked before the cache takes it, or by a relist
   * after its swap). */
  if (w && strcmp(w->uid, uid) != 0) w->pending = false;
  else if (w && strcmp(w->rv, rv) == 0) w->pending = !w->awaited;
  else if (w) {
    if (ms_since(&w->answered_at) > kOwnEchoWaitMs) {
      w->pending = false; /* spent: see kOwnEchoWaitMs */
    } else {
      behind = w->awaited = true;
      ix->cache_behind++;
    }
  }
  pthread_mutex_unlock(&ix->mu);
  return behind;
}

/* ---- mesh objects we created, until their cache holds them ---- */

/* "kind/ns/name" into buf (copied, not printed: this runs for every mesh object of every
 * reconcile); false when it does not fit (no note is made or found for it). */
static bool made_key(const char *kind, const char *ns, const char *name, char *buf, size_t size) {
  size_t a = strlen(kind), b = strlen(ns), c = strlen(name);
  if (a + b + c + 3 > size) return false;
  memcpy(buf, kind, a);
  buf[a] = '/';
  memcpy(buf + a + 1, ns, b);
  buf[a + 1 + b] = '/';
  memcpy(buf + a + b + 2, name, c + 1);
  return true;
}
enum { kMadeKeyMax = 640 }; /* a kind, a namespace (63) and a name (253), with room */

/* The expired notes, collected first (ForEach must not unlink), unlinked after. */
typedef struct {
  Made **list;
  size_t n, cap;
} MadeSweep;

static void collect_expired(void *ctx, po_StrNode *n) {
  MadeSweep *sw = ctx;
  Made *m = (Made *)n;
  if (ms_since(&m->at) <= kOwnEchoWaitMs || sw->n == sw->cap) return;
  sw->list[sw->n++] = m;
}

/* Under the lock: the notes past kOwnEchoWaitMs dropped once the table doubled since the last
 * sweep (amortised: each note is looked at a bounded number of times). A note whose object no
 * reconcile read again would otherwise stay for good. */
static void made_prune(po_TargetIndex *ix) {
  if (ix->made.count < ix->made_prune_at) return;
  MadeSweep sw = {.list = malloc(ix->made.count * sizeof(Made *)), .cap = ix->made.count};
  if (sw.list) po_StrTable_ForEach(&ix->made, collect_expired, &sw);
  for (size_t i = 0; i < sw.n; i++) {
    po_StrTable_Unlink(&ix->made, &sw.list[i]->node);
    free_made(NULL, &sw.list[i]->node);
  }
  free(sw.list);
  ix->made_prune_at = ix->made.count * 2 > 64 ? ix->made.count * 2 : 64;
}

void po_TargetIndex_NoteObjectCreated(po_TargetIndex *ix, const char *kind, const char *ns, const char *name,
                                      const char *uid) {
  char buf[kMadeKeyMax];
  if (!uid || strlen(uid) >= sizeof((Made *)0)->uid || !made_key(kind, ns, name, buf, sizeof buf)) return;
  Made *m = calloc(1, sizeof *m);
  char *key = m ? strdup(buf) : NULL;
  if (!key) { /* out of memory: the reconcile judges the cache as before this note */
    free(m);
    return;
  }
  m->key = key;
  m->node.key = key;
  m->node.hash = po_StrTable_Hash(key);
  snprintf(m->uid, sizeof m->uid, "%s", uid);
  clock_gettime(CLOCK_MONOTONIC, &m->at);
  pthread_mutex_lock(&ix->mu);
  Made *was = (Made *)po_StrTable_Find(&ix->made, key, m->node.hash);
  if (was) {
    po_StrTable_Unlink(&ix->made, &was->node);
    free_made(NULL, &was->node);
  }
  made_prune(ix);
  bool in = po_StrTable_Insert(&ix->made, &m->node);
  pthread_mutex_unlock(&ix->mu);
  if (!in) free_made(NULL, &m->node);
}

/* Under the lock: the note of key, or NULL (none, or none at all: no hash computed). */
static Made *made_find(po_TargetIndex *ix, const char *kind, const char *ns, const char *name) {
  char buf[kMadeKeyMax];
  if (ix->made.count == 0 || !made_key(kind, ns, name, buf, sizeof buf)) return NULL;
  return (Made *)po_StrTable_Find(&ix->made, buf, po_StrTable_Hash(buf));
}

po_ObjectMade po_TargetIndex_ObjectMade(po_TargetIndex *ix, const char *kind, const char *ns, const char *name,
                                      const char *cached_uid) {
  pthread_mutex_lock(&ix->mu);
  Made *m = made_find(ix, kind, ns, name);
  po_ObjectMade r = kPo_ObjectMade_No;
  if (m && ms_since(&m->at) > kOwnEchoWaitMs) { /* waited for long enough: spent */
    po_StrTable_Unlink(&ix->made, &m->node);
    free_made(NULL, &m->node);
  } else if (m) {
    r = cached_uid && strcmp(cached_uid, m->uid) == 0 ? kPo_ObjectMade_Cached : kPo_ObjectMade_Behind;
    if (r == kPo_ObjectMade_Behind) ix->cache_behind++;
  }
  pthread_mutex_unlock(&ix->mu);
  return r;
}

void po_TargetIndex_ObjectSeen(po_TargetIndex *ix, const char *kind, const char *ns, const char *name, const char *uid) {
  pthread_mutex_lock(&ix->mu);
  Made *m = made_find(ix, kind, ns, name);
  if (m && (!uid || strcmp(uid, m->uid) != 0)) { /* deleted, or another object of that name: not ours to wait for */
    po_StrTable_Unlink(&ix->made, &m->node);
    free_made(NULL, &m->node);
  }
  pthread_mutex_unlock(&ix->mu);
}

bool po_TargetIndex_IsOwnTargetWrite(po_TargetIndex *ix, const char *key, const json_object *obj) {
  return po_TargetIndex_IsOwnTargetEcho(ix, key, po_Json_Meta(obj, "uid"), po_Json_Meta(obj, "resourceVersion"));
}

void po_TargetIndex_NoteHeldGone(po_TargetIndex *ix, const char *key, const char *over_rv) {
  char *over = strdup(over_rv ? over_rv : "");
  pthread_mutex_lock(&ix->mu);
  Target *t = over ? find_target(ix, key) : NULL;
  if (t) {
    free(t->held_gone_over);
    t->held_gone_over = over;
    over = NULL;
  }
  pthread_mutex_unlock(&ix->mu);
  free(over); /* no PropertyOverride listed there (all gone) or out of memory: the caller's enqueue stands */
}

char *po_TargetIndex_TakeHeldGone(po_TargetIndex *ix, const char *key, const char *rv, size_t *count) {
  *count = 0;
  pthread_mutex_lock(&ix->mu);
  Target *t = find_target(ix, key);
  /* The version written over, delivered late (the cache had it before its handler ran), says
   * nothing new: the write's echo or a later version will come. */
  if (!t || !t->held_gone_over || (rv && *t->held_gone_over && strcmp(rv, t->held_gone_over) == 0)) {
    pthread_mutex_unlock(&ix->mu);
    return NULL;
  }
  size_t size = 0;
  for (int pass = 0; pass < 2; pass++) {
    char *block = pass ? malloc(size ? size : 1) : NULL, *p = block;
    if (pass && !block) break; /* out of memory: kept pending for the next event */
    const char *prev = NULL;
    for (size_t i = 0; i < t->n; i++) {
      if (prev && strcmp(prev, t->pos[i]) == 0) continue;
      prev = t->pos[i];
      const Entry *e = find(ix, t->pos[i]);
      if (!e || !e->held || strcmp(e->held, key) != 0 || strcmp(e->target, key) == 0) continue;
      size_t l = strlen(e->target) + 1;
      if (pass) {
        memcpy(p, e->target, l);
        p += l;
        (*count)++;
      } else {
        size += l;
      }
    }
    if (pass) {
      free(t->held_gone_over);
      t->held_gone_over = NULL;
      pthread_mutex_unlock(&ix->mu);
      return block;
    }
  }
  pthread_mutex_unlock(&ix->mu);
  return NULL;
}

/* ---- our own PropertyOverride writes, told apart when the watch brings them back ---- */

static bool has_our_finalizer(const json_object *obj) {
  json_object *f = po_Json_Get(po_Json_Get(obj, "metadata"), "finalizers");
  for (size_t i = 0; f && json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++) {
    json_object *s = json_object_array_get_idx(f, i);
    if (json_object_is_type(s, json_type_string) && strcmp(json_object_get_string(s), PO_FINALIZER) == 0) return true;
  }
  return false;
}

void po_TargetIndex_NoteOverrideWrite(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideMemo *m,
                                      int which, const json_object *status, uint64_t desired_status, bool failed) {
  po_JsonHash h = failed ? (po_JsonHash){0, 0} : po_Json_Hash(status);
  size_t ul = strlen(m->uid) + 1;
  OwnPatch *fresh = failed ? NULL : calloc(1, sizeof *fresh + ul);
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  if (e && failed) {
    if (e->patch) e->patch->has[which] = false;
  } else if (e) {
    OwnPatch *p = e->patch;
    /* another version of the object than the one noted before: start over */
    if (p && (strcmp(p->uid, m->uid) != 0 || p->generation != m->generation || !po_JsonHash_Equal(p->spec, m->spec_hash))) {
      free(p);
      p = e->patch = NULL;
    }
    if (!p && fresh) p = e->patch = fresh, fresh = NULL, memcpy(p->uid, m->uid, ul);
    if (p) { /* else (out of memory): its echo is reconciled, as before */
      p->generation = m->generation;
      p->spec = m->spec_hash;
      p->status[which] = h;
      p->has[which] = true;
      if (which == 1) p->desired_status = desired_status;
      else p->rv0[0] = '\0', p->answered0 = false; /* a new finalizer write: its answer is still to come */
    }
  }
  pthread_mutex_unlock(&ix->mu);
  free(fresh);
}

void po_TargetIndex_NoteOverrideAnswer(po_TargetIndex *ix, const char *ns, const char *name, const po_WrittenVersion *w) {
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  OwnPatch *p = e ? e->patch : NULL;
  /* still waited for (its echo may have come first, told by its content) */
  if (p && p->has[0] && !p->answered0) {
    p->answered0 = true;
    /* of the version noted, saying its version plainly, and holding our finalizer (a mutating
     * webhook that took it out made an object its content must be judged by) */
    size_t l = w ? strlen(w->rv) : 0;
    if (w && w->finalized && l > 0 && l < sizeof p->rv0 && w->generation == p->generation && strcmp(p->uid, w->uid) == 0)
      memcpy(p->rv0, w->rv, l + 1);
  }
  pthread_mutex_unlock(&ix->mu);
}

/* Under the lock: the finalizer write noted for ns/name of this uid and generation, once its
 * answer came; NULL when there is none, or while the answer is still on its way. An echo that
 * comes before its answer is not waited for (as a target's is): it is told by its content, parsed
 * and cached at once, as before, so the cache holds our finalizer before the target write that
 * follows is sent. Waiting, the cache took it only after the answer, and the mutating webhook,
 * asked during that target write, could read the version without our finalizer and drop the
 * new entry from the write (its view adds no entry for a PropertyOverride not yet claimed);
 * the write's echo, known ours by its version, then hid it (e2e_gitsync_real, 2 runs in 14). */
static OwnPatch *finalizer_answered(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                    int64_t generation) {
  Entry *e = entry_of(ix, ns, name);
  OwnPatch *p = e ? e->patch : NULL;
  if (!p || !p->has[0] || !p->answered0 || p->generation != generation || strcmp(p->uid, uid) != 0) return NULL;
  return p;
}

bool po_TargetIndex_FinalizerWritten(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                     int64_t generation) {
  if (!uid || !*uid) return false;
  pthread_mutex_lock(&ix->mu);
  OwnPatch *p = finalizer_answered(ix, ns, name, uid, generation);
  bool written = p && *p->rv0; /* answered, and the object it made lists our finalizer */
  pthread_mutex_unlock(&ix->mu);
  return written;
}

bool po_TargetIndex_IsOwnOverrideEcho(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                      const char *rv, int64_t generation, bool deleting) {
  if (deleting || !uid || !*uid || !rv || !*rv) return false;
  pthread_mutex_lock(&ix->mu);
  OwnPatch *p = finalizer_answered(ix, ns, name, uid, generation);
  bool ours = p && *p->rv0 && strcmp(p->rv0, rv) == 0;
  if (ours) {
    p->has[0] = false; /* once */
    p->rv0[0] = '\0';
    Entry *e = entry_of(ix, ns, name);
    if (e) e->has_seen = false; /* not hashed: the next event is judged against nothing (Changed) */
    ix->own_echoes++;
  }
  pthread_mutex_unlock(&ix->mu);
  return ours;
}

/* One watch event's spec and status, hashed at most once for both judgements below (each was
 * hashed by each: SipHash was 18% of a cold start at 100,000). */
typedef struct {
  const json_object *obj;
  bool done;
  po_JsonHash spec, status;
  int noted; /* whether a write of ours to it was pending when override_seen looked (-1: not asked) */
} EventHash;

/* Under the lock: a write of ours to this uid and generation waits for its echo. */
static bool write_noted(const Entry *e, const char *uid, int64_t generation) {
  return e && e->patch && (e->patch->has[0] || e->patch->has[1]) && strcmp(e->patch->uid, uid) == 0 &&
         e->patch->generation == generation;
}

static int64_t generation_of(const json_object *obj) {
  json_object *g = po_Json_Get(po_Json_Get(obj, "metadata"), "generation");
  return g && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0;
}

static void event_hash(EventHash *h, unsigned *trees) {
  if (h->done) return;
  h->spec = po_Json_Hash(po_Json_Get(h->obj, "spec"));
  h->status = po_Json_Hash(po_Json_Get(h->obj, "status"));
  h->done = true;
  *trees += 2;
}

static bool own_override_write(po_TargetIndex *ix, EventHash *h, unsigned *trees) {
  const json_object *obj = h->obj;
  const char *ns = po_Json_Meta(obj, "namespace"), *name = po_Json_Meta(obj, "name"), *uid = po_Json_Meta(obj, "uid");
  json_object *meta = po_Json_Get(obj, "metadata"), *g = po_Json_Get(meta, "generation");
  const char *rv = po_Json_Meta(obj, "resourceVersion");
  if (h->noted == 0 || !*rv || po_Json_Get(meta, "deletionTimestamp") || !has_our_finalizer(obj)) return false;
  int64_t generation = g && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0;
  Entry *e = NULL;
  if (h->noted < 0) { /* else override_seen just looked, under the same lock */
    pthread_mutex_lock(&ix->mu);
    bool noted = write_noted(entry_of(ix, ns, name), uid, generation);
    pthread_mutex_unlock(&ix->mu);
    if (!noted) return false;
  }
  event_hash(h, trees);
  po_JsonHash spec = h->spec, status = h->status;
  char key[600], held[600];
  po_Reconcile_OverrideKey(obj, key, sizeof key);
  po_Reconcile_HeldKey(obj, held, sizeof held);
  pthread_mutex_lock(&ix->mu);
  ix->event_hashes += *trees;
  *trees = 0;
  e = entry_of(ix, ns, name);
  OwnPatch *p = e ? e->patch : NULL;
  int which = -1;
  if (p && strcmp(p->uid, uid) == 0 && p->generation == generation && po_JsonHash_Equal(p->spec, spec)) {
    if (p->has[1] && po_JsonHash_Equal(p->status[1], status)) which = 1;
    else if (p->has[0] && po_JsonHash_Equal(p->status[0], status)) which = 0;
  }
  if (which >= 0) {
    p->has[which] = false; /* once */
    /* The status we wrote is there: what the next reconcile would learn by reading it, learnt
     * now, so that it does not read the object at all. */
    if (which == 1 && e->memo && strcmp(e->memo->uid, uid) == 0 && e->memo->generation == generation &&
        po_JsonHash_Equal(e->memo->spec_hash, spec) && strlen(rv) < e->memo->rv_room && strcmp(e->memo->key, key) == 0 &&
        strcmp(e->memo->held, held) == 0) {
      snprintf(e->memo->rv, e->memo->rv_room, "%s", rv);
      e->memo->status_hash = p->desired_status;
      e->memo->written_hash = 0;
    }
  }
  pthread_mutex_unlock(&ix->mu);
  return which >= 0;
}

/* ---- what a PropertyOverride's last watch event held ---- */

/* The parts a reconcile reads, as one keyed hash: fixed-width fields, then the uid. */
static po_JsonHash read_part(EventHash *h, unsigned *trees) {
  const json_object *obj = h->obj;
  json_object *meta = po_Json_Get(obj, "metadata"), *g = po_Json_Get(meta, "generation");
  event_hash(h, trees);
  po_JsonHash fin = po_Json_Hash(po_Json_Get(meta, "finalizers"));
  ++*trees;
  uint64_t fixed[8] = {h->spec.lo, h->spec.hi, h->status.lo, h->status.hi, fin.lo, fin.hi,
                       g && json_object_is_type(g, json_type_int) ? (uint64_t)json_object_get_int64(g) : 0,
                       po_Json_Get(meta, "deletionTimestamp") != NULL};
  unsigned char buf[sizeof fixed + 256];
  const char *uid = po_Json_Meta(obj, "uid");
  size_t ul = strlen(uid);
  if (ul > 255) ul = 255;
  memcpy(buf, fixed, sizeof fixed);
  memcpy(buf + sizeof fixed, uid, ul);
  return po_Hash_Bytes(buf, sizeof fixed + ul);
}

/* record false: nothing hashed, and what was recorded is forgotten, so the next event recorded
 * is judged changed whatever it holds (never unchanged against a version older than this one). */
static bool override_seen(po_TargetIndex *ix, EventHash *h, bool record, unsigned *trees) {
  po_JsonHash v = record ? read_part(h, trees) : (po_JsonHash){0, 0}; /* hashed without the lock */
  const char *uid = po_Json_Meta(h->obj, "uid");
  int64_t generation = generation_of(h->obj);
  pthread_mutex_lock(&ix->mu);
  ix->event_hashes += *trees;
  *trees = 0;
  Entry *e = entry_of(ix, po_Json_Meta(h->obj, "namespace"), po_Json_Meta(h->obj, "name"));
  bool same = record && e && e->has_seen && po_JsonHash_Equal(e->seen, v);
  if (e) e->seen = v, e->has_seen = record;
  h->noted = write_noted(e, uid, generation); /* one lookup for both judgements */
  pthread_mutex_unlock(&ix->mu);
  return same;
}

bool po_TargetIndex_OverrideSeen(po_TargetIndex *ix, const json_object *obj) {
  EventHash h = {.obj = obj, .noted = -1};
  unsigned trees = 0;
  return override_seen(ix, &h, true, &trees);
}

bool po_TargetIndex_IsOwnOverrideWrite(po_TargetIndex *ix, const json_object *obj) {
  EventHash h = {.obj = obj, .noted = -1};
  unsigned trees = 0;
  return own_override_write(ix, &h, &trees);
}

po_OverrideEvent po_TargetIndex_OverrideEvent(po_TargetIndex *ix, const json_object *obj, bool own_check, bool record) {
  EventHash h = {.obj = obj, .noted = -1};
  unsigned trees = 0;
  bool same = override_seen(ix, &h, record, &trees);
  if (own_check && own_override_write(ix, &h, &trees)) return kPo_OverrideEvent_OwnWrite;
  return same ? kPo_OverrideEvent_Unchanged : kPo_OverrideEvent_Changed;
}

/* ---- which Consul targets hold an entry of which PropertyOverride (holders.h) ---- */

/* The namespace of a target key ("Kind/ns/name"): its length, *ns set to where it starts. */
static size_t key_ns(const char *key, const char **ns) {
  const char *a = strchr(key, '/'), *b = a ? strchr(a + 1, '/') : NULL;
  *ns = a ? a + 1 : "";
  return b ? (size_t)(b - (a + 1)) : 0;
}

/* "uid/ns/name" at p, copied, not printed (every entry of the target, every reconcile: sprintf was
 * 1% of the controller's instructions); returns past its NUL. */
static char *id_at(char *p, const char *uid, const char *ns, size_t nslen, const char *name) {
  size_t ul = strlen(uid), nl = strlen(name);
  memcpy(p, uid, ul), p += ul, *p++ = '/';
  memcpy(p, ns, nslen), p += nslen, *p++ = '/';
  memcpy(p, name, nl + 1);
  return p + nl + 1;
}

/* The holders' ids of n entries of the target `key`, "uid/namespace/name" (a uid, a namespace
 * and a name hold no '/'): the PropertyOverride the target's reconcile would look up for it
 * (load_bound_owners: the marker's namespace, else the target's), so only an entry that
 * reconcile removes holds a release. A look-alike carrying the uid under another name, or under
 * another namespace (a tenant's own object naming another tenant's PropertyOverride without its
 * namespace: someone else's, never removed), holds none: waited for, it would hold the finalizer
 * for as long as its holder kept sending events. One block (the caller frees); NULL when out of
 * memory. */
static char **holder_ids(const char *key, const char *const *nss, const char *const *names, const char *const *uids,
                         size_t n) {
  const char *tns;
  size_t tlen = key_ns(key, &tns);
  size_t size = n * sizeof(char *);
  for (size_t i = 0; i < n; i++) {
    size += strlen(uids[i]) + strlen(names[i]) + 3 + (nss && nss[i] && *nss[i] ? strlen(nss[i]) : tlen);
  }
  char **ids = malloc(size ? size : 1), *p = (char *)(ids + n);
  for (size_t i = 0; ids && i < n; i++) {
    ids[i] = p;
    bool own_ns = nss && nss[i] && *nss[i];
    p = id_at(p, uids[i], own_ns ? nss[i] : tns, own_ns ? strlen(nss[i]) : tlen, names[i]);
  }
  return ids;
}

/* A note that could not be made (out of memory): the target holds every release until one of
 * it succeeds (po_Holders_Unknown). After a restart the index knew nothing of it: kept as it
 * was, a release elsewhere would go while it holds an entry. False, for the caller to return. */
static bool note_unknown(po_TargetIndex *ix, const char *target_key) {
  pthread_mutex_lock(&ix->mu);
  po_Holders_Unknown(&ix->holders, target_key);
  pthread_mutex_unlock(&ix->mu);
  return false;
}

static bool note_entries(po_TargetIndex *ix, const char *target_key, const char *const *nss, const char *const *names,
                         const char *const *uids, size_t n, bool exact, bool event) {
  char **ids = holder_ids(target_key, nss, names, uids, n);
  if (!ids) return note_unknown(ix, target_key);
  pthread_mutex_lock(&ix->mu);
  /* An event while a write of ours is not seen back yet: a version before it (the watch is in
   * order), missing what that write added (an entry moved here). It adds, forgets nothing; the
   * write's own note says what the target holds. */
  bool found;
  size_t at = event ? own_find(ix, target_key, &found) : 0;
  if (event && found && (ix->own[at].pending || ix->own[at].in_flight)) exact = false;
  bool ok = po_Holders_Set(&ix->holders, target_key, (const char *const *)ids, n, exact);
  pthread_mutex_unlock(&ix->mu);
  free(ids);
  return ok;
}

bool po_TargetIndex_NoteEntries(po_TargetIndex *ix, const char *target_key, const char *const *nss,
                                const char *const *names, const char *const *uids, size_t n, bool exact) {
  return note_entries(ix, target_key, nss, names, uids, n, exact, false);
}

int po_TargetIndex_NoteWriting(po_TargetIndex *ix, const char *target_key, const char *const *nss,
                               const char *const *names, const char *const *uids, size_t n) {
  char **ids = holder_ids(target_key, nss, names, uids, n);
  if (!ids) return note_unknown(ix, target_key), 0;
  bool ok = true;
  pthread_mutex_lock(&ix->mu);
  bool allowed = po_Holders_Writing(&ix->holders, target_key, (const char *const *)ids, n, &ok);
  pthread_mutex_unlock(&ix->mu);
  free(ids);
  return !allowed ? -1 : ok ? 1 : 0;
}

bool po_TargetIndex_NoteTargetEntries(po_TargetIndex *ix, const char *target_key, const json_object *target) {
  /* room for every extension: counting ours first would read each marker twice */
  json_object *list = po_Json_Get(po_Json_Get(target, "spec"), "envoyExtensions");
  size_t n = list && json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
  po_ConsulEntry *e = n ? malloc(n * sizeof *e) : NULL;
  const char **strs = n ? malloc(3 * n * sizeof *strs) : NULL;
  if (n && (!e || !strs)) {
    free(e);
    free(strs);
    return note_unknown(ix, target_key);
  }
  /* ours: named builtin/property-override and bound to this very object's uid */
  n = n ? po_Consul_OwnedEntries(target, NULL, 0, e, n, NULL) : 0;
  for (size_t i = 0; i < n; i++) strs[i] = e[i].owner, strs[n + i] = e[i].uid, strs[2 * n + i] = e[i].ns;
  bool ok = note_entries(ix, target_key, strs ? strs + 2 * n : NULL, strs, strs ? strs + n : NULL, n, true, true);
  free(e);
  free(strs);
  return ok;
}

/* The holders' id of a PropertyOverride ("uid/namespace/name", holders.h; the caller frees), or
 * NULL when out of memory. */
static char *entry_id(const char *ns, const char *name, const char *uid) {
  char *id = malloc(strlen(uid) + strlen(ns) + strlen(name) + 3);
  if (id) id_at(id, uid, ns, strlen(ns), name);
  return id;
}

char *po_TargetIndex_EntryHolders(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                  const char *except, size_t *count) {
  *count = 0;
  char *id = entry_id(ns, name, uid);
  if (!id) return *count = 1, NULL;
  pthread_mutex_lock(&ix->mu);
  char *keys = po_Holders_Of(&ix->holders, id, except, count);
  pthread_mutex_unlock(&ix->mu);
  free(id);
  return keys;
}

char *po_TargetIndex_ClaimRelease(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                   const char *except, size_t *count) {
  *count = 0;
  char *id = entry_id(ns, name, uid);
  if (!id) return *count = 1, NULL;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  pthread_mutex_lock(&ix->mu);
  char *keys = po_Holders_Claim(&ix->holders, id, except, (long long)now.tv_sec, count);
  pthread_mutex_unlock(&ix->mu);
  free(id);
  return keys;
}

char *po_TargetIndex_OverrideVanished(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                      size_t *count, bool *remembered) {
  *count = 0;
  *remembered = false;
  char *id = entry_id(ns, name, uid);
  if (!id) return NULL;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  pthread_mutex_lock(&ix->mu);
  char *keys = po_Holders_Vanished(&ix->holders, id, (long long)now.tv_sec, count, remembered);
  pthread_mutex_unlock(&ix->mu);
  free(id);
  return keys;
}

bool po_TargetIndex_WasReleased(po_TargetIndex *ix, const char *ns, const char *name, const char *uid) {
  char id[900];
  if ((size_t)snprintf(id, sizeof id, "%s/%s/%s", uid, ns, name) >= sizeof id) return false;
  pthread_mutex_lock(&ix->mu);
  bool yes = po_Holders_Released(&ix->holders, id);
  pthread_mutex_unlock(&ix->mu);
  return yes;
}

size_t po_TargetIndex_EntryHoldersBytes(po_TargetIndex *ix) {
  pthread_mutex_lock(&ix->mu);
  size_t b = po_Holders_Bytes(&ix->holders);
  pthread_mutex_unlock(&ix->mu);
  return b;
}
