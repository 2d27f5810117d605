/* po_TargetIndex: PropertyOverride ("ns/name") -> target key, and its reverse, in one sorted
 * array each way (a lookup costs log n plus the target's own PropertyOverrides, not the whole
 * namespace's), each entry also holding the PropertyOverride's compiled forms (compiled.h).
 * Updates are rare next to lookups; a mutex is enough. */
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "compiled.h"
#include "po/reconcile/reconcile.h"
#include "sync.h"

/* Our last writes of a PropertyOverride (finalizer, then status), as what its watch events must
 * hold to be those writes coming back. */
typedef struct {
  char uid[128];
  int64_t generation;
  po_JsonHash spec;
  po_JsonHash status[2];   /* [0] after the finalizer write (the status then), [1] after the status write */
  bool has[2];
  uint64_t desired_status; /* po_Status_Hash of the status [1] was built from */
} OwnPatch;

typedef struct {
  char *po;     /* "ns/name" */
  char *target; /* target key */
  char *held;   /* the target its last valid generation is live in, when another; or NULL */
  /* Its compiled current spec and status.lastValid record (or NULL): released when it leaves the
   * index, replaced when either changes, so there are never more than two per PropertyOverride. */
  const po_CompiledEntry *compiled[2];
  po_OverrideMemo *memo;     /* what the last reconcile learnt (compiled.h), or NULL */
  char *memo_key, *memo_held;
  OwnPatch *patch;           /* our last writes of it, until they come back (or NULL) */
  /* The last valid generation this process wrote into its target and recorded as its
   * status.lastValid (po_TargetIndex_NoteLastValid): uid, generation, keyed spec hash. */
  char lv_uid[128];
  int64_t lv_generation;     /* 0: none */
  po_JsonHash lv_hash;
} Entry;

/* Our last write of a target, as the content its watch event must have to be that write. */
typedef struct {
  char *key;
  po_JsonHash body, meta; /* the object but metadata; metadata but what the server sets on a write */
  bool pending;           /* not seen back yet */
  char over[64];          /* the resourceVersion it was written over ("" when unknown) */
  po_WriteRecord record;  /* the write record (sync.h) that write carried, if any */
} OwnWrite;

/* A target's PropertyOverride: the strings are those of its Entry (po, and target or held). */
typedef struct {
  const char *target;
  const char *po;
} Link;

struct po_TargetIndex {
  pthread_mutex_t mu;
  Entry *by_po;     /* sorted by po */
  size_t len, cap;
  Link *links;      /* sorted by (target, po): each entry's target, and its held target */
  size_t nlinks, links_cap;
  /* uids of targets this process created whose created annotation is not written yet */
  char **created;
  size_t ncreated, created_cap;
  uint64_t hits, misses; /* of the compiled forms */
  OwnWrite *own;    /* sorted by key: the last target write of ours per target, until its echo */
  size_t nown, own_cap;
  uint64_t echoes;  /* events recognised as our own writes */
  po_TargetOptions options; /* the mesh options every compile uses (po_TargetIndex_SetOptions) */
  po_ArenaFit fit;          /* the first block of every compile's arena, learnt from the earlier ones */
};

void po_TargetIndex_SetOptions(po_TargetIndex *ix, const po_TargetOptions *o) {
  ix->options = o ? *o : (po_TargetOptions){0};
}

const po_TargetOptions *po_TargetIndex_Options(const po_TargetIndex *ix) { return &ix->options; }

po_TargetIndex *po_TargetIndex_New(void) {
  po_TargetIndex *ix = calloc(1, sizeof *ix);
  if (ix) pthread_mutex_init(&ix->mu, NULL);
  return ix;
}

void po_TargetIndex_Free(po_TargetIndex *ix) {
  if (!ix) return;
  for (size_t i = 0; i < ix->len; i++) {
    free(ix->by_po[i].po);
    free(ix->by_po[i].target);
    free(ix->by_po[i].held);
    po_CompiledEntry_Release(ix->by_po[i].compiled[0]);
    po_CompiledEntry_Release(ix->by_po[i].compiled[1]);
    free(ix->by_po[i].memo);
    free(ix->by_po[i].memo_key);
    free(ix->by_po[i].memo_held);
    free(ix->by_po[i].patch);
  }
  free(ix->by_po);
  free(ix->links);
  for (size_t i = 0; i < ix->nown; i++) free(ix->own[i].key);
  free(ix->own);
  for (size_t i = 0; i < ix->ncreated; i++) free(ix->created[i]);
  free(ix->created);
  pthread_mutex_destroy(&ix->mu);
  free(ix);
}

static size_t find(po_TargetIndex *ix, const char *po, bool *found) {
  size_t lo = 0, hi = ix->len;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(ix->by_po[mid].po, po);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  *found = false;
  return lo;
}

static void copy_out(char *dst, size_t size, const char *src) {
  if (!size) return;
  strncpy(dst, src ? src : "", size - 1);
  dst[size - 1] = '\0';
}

/* ---- the reverse links: (target, PropertyOverride), sorted, for a lookup in log time ---- */

static int link_cmp(const Link *l, const char *target, const char *po) {
  int c = strcmp(l->target, target);
  return c ? c : strcmp(l->po, po);
}

static size_t link_find(const po_TargetIndex *ix, const char *target, const char *po, bool *found) {
  size_t lo = 0, hi = ix->nlinks;
  *found = false;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = link_cmp(&ix->links[mid], target, po);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Room for one more entry and two more links, so that an update, once started, cannot fail. */
static bool reserve(po_TargetIndex *ix) {
  if (ix->len == ix->cap) {
    size_t cap = ix->cap ? ix->cap * 2 : 64;
    Entry *e = realloc(ix->by_po, cap * sizeof *e);
    if (!e) return false;
    ix->by_po = e;
    ix->cap = cap;
  }
  if (ix->nlinks + 2 > ix->links_cap) {
    size_t cap = ix->links_cap ? ix->links_cap * 2 : 128;
    Link *l = realloc(ix->links, cap * sizeof *l);
    if (!l) return false;
    ix->links = l;
    ix->links_cap = cap;
  }
  return true;
}

/* Both strings are the entry's own (stable while it holds them). Needs reserve(). */
static void link_add(po_TargetIndex *ix, const char *target, const char *po) {
  bool found;
  size_t at = link_find(ix, target, po, &found);
  memmove(ix->links + at + 1, ix->links + at, (ix->nlinks - at) * sizeof *ix->links);
  ix->links[at] = (Link){target, po};
  ix->nlinks++;
}

static void link_remove(po_TargetIndex *ix, const char *target, const char *po) {
  if (!target) return;
  bool found;
  size_t at = link_find(ix, target, po, &found);
  /* the same pair twice (held == target) is two links: remove the one whose strings are these */
  while (found && at < ix->nlinks && link_cmp(&ix->links[at], target, po) == 0) {
    if (ix->links[at].target == target) {
      memmove(ix->links + at, ix->links + at + 1, (ix->nlinks - at - 1) * sizeof *ix->links);
      ix->nlinks--;
      return;
    }
    at++;
  }
  while (found && at > 0 && link_cmp(&ix->links[at - 1], target, po) == 0) {
    at--;
    if (ix->links[at].target == target) {
      memmove(ix->links + at, ix->links + at + 1, (ix->nlinks - at - 1) * sizeof *ix->links);
      ix->nlinks--;
      return;
    }
  }
}

bool po_TargetIndex_Set(po_TargetIndex *ix, const char *ns, const char *name, const char *target_key, char *old_key,
                        size_t size) {
  copy_out(old_key, size, "");
  char key[600];
  snprintf(key, sizeof key, "%s/%s", ns, name);
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = find(ix, key, &found);
  if (found && strcmp(ix->by_po[at].target, target_key) == 0) { /* the usual update: a status write */
    copy_out(old_key, size, ix->by_po[at].target);
    pthread_mutex_unlock(&ix->mu);
    return true;
  }
  char *po = found ? NULL : strdup(key), *t = strdup(target_key);
  if (!t || (!found && !po) || !reserve(ix)) {
    pthread_mutex_unlock(&ix->mu);
    free(po);
    free(t);
    return false;
  }
  if (found) {
    Entry *e = &ix->by_po[at];
    copy_out(old_key, size, e->target);
    link_remove(ix, e->target, e->po);
    free(e->target);
    e->target = t;
    link_add(ix, e->target, e->po);
  } else {
    memmove(ix->by_po + at + 1, ix->by_po + at, (ix->len - at) * sizeof *ix->by_po);
    ix->by_po[at] = (Entry){.po = po, .target = t};
    ix->len++;
    link_add(ix, t, po);
  }
  pthread_mutex_unlock(&ix->mu);
  return true;
}

bool po_TargetIndex_Remove(po_TargetIndex *ix, const char *ns, const char *name, char *old_key, size_t size) {
  char po[600];
  snprintf(po, sizeof po, "%s/%s", ns, name);
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = find(ix, po, &found);
  copy_out(old_key, size, found ? ix->by_po[at].target : "");
  if (found) {
    Entry *e = &ix->by_po[at];
    link_remove(ix, e->target, e->po);
    link_remove(ix, e->held, e->po);
    free(e->po);
    free(e->target);
    free(e->held);
    po_CompiledEntry_Release(e->compiled[0]);
    po_CompiledEntry_Release(e->compiled[1]);
    free(e->memo);
    free(e->memo_key);
    free(e->memo_held);
    free(e->patch);
    memmove(ix->by_po + at, ix->by_po + at + 1, (ix->len - at - 1) * sizeof *ix->by_po);
    ix->len--;
  }
  pthread_mutex_unlock(&ix->mu);
  return true; /* a removal allocates nothing */
}

bool po_TargetIndex_SetHeld(po_TargetIndex *ix, const char *ns, const char *name, const char *held_key, char *old_held,
                            size_t size) {
  char po[600];
  snprintf(po, sizeof po, "%s/%s", ns, name);
  copy_out(old_held, size, "");
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = find(ix, po, &found);
  if (!found) {
    pthread_mutex_unlock(&ix->mu);
    return true;
  }
  Entry *e = &ix->by_po[at];
  copy_out(old_held, size, e->held ? e->held : "");
  if ((!e->held && !(held_key && *held_key)) || (e->held && held_key && strcmp(e->held, held_key) == 0)) {
    pthread_mutex_unlock(&ix->mu);
    return true; /* unchanged */
  }
  char *h = held_key && *held_key ? strdup(held_key) : NULL;
  if ((held_key && *held_key && !h) || !reserve(ix)) {
    pthread_mutex_unlock(&ix->mu);
    free(h);
    return false;
  }
  link_remove(ix, e->held, e->po);
  free(e->held);
  e->held = h;
  if (h) link_add(ix, h, e->po);
  pthread_mutex_unlock(&ix->mu);
  return true;
}

/* The links of a target are one run; a PropertyOverride listed there both for its current spec
 * and its held generation appears twice, side by side, and is returned once. Each name goes to
 * out + count * stride (size bytes), `namespace/name` when qualified, else the name alone. */
static size_t lookup_run(po_TargetIndex *ix, const char *target_key, char *out, size_t stride, size_t cap,
                         bool qualified) {
  size_t count = 0;
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = link_find(ix, target_key, "", &found);
  const char *prev = NULL;
  for (size_t i = at; i < ix->nlinks && strcmp(ix->links[i].target, target_key) == 0; i++) {
    const char *po = ix->links[i].po;
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
  size_t n = ix->len;
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
  snprintf(po, sizeof po, "%s/%s", ns, name);
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = find(ix, po, &found);
  const po_CompiledEntry *hit = found && matches(ix->by_po[at].compiled[which], uid, generation, hash)
                                    ? po_CompiledEntry_Ref(ix->by_po[at].compiled[which])
                                    : NULL;
  if (hit) ix->hits++;
  pthread_mutex_unlock(&ix->mu);
  if (hit) return hit;
  /* Compiled without the lock (it is the expensive part); two workers racing on the same
   * PropertyOverride (its current and its held target) both compile, the second keeps its own. */
  po_CompiledEntry *e = po_CompiledEntry_Make(obj, which, uid, generation, hash, &ix->options, &ix->fit, oom);
  if (!e) return NULL;
  pthread_mutex_lock(&ix->mu);
  ix->misses++;
  at = find(ix, po, &found);
  /* Kept only while the PropertyOverride is in the index: one deleted meanwhile leaves nothing. */
  if (found) {
    po_CompiledEntry_Release(ix->by_po[at].compiled[which]);
    ix->by_po[at].compiled[which] = po_CompiledEntry_Ref(e);
  }
  pthread_mutex_unlock(&ix->mu);
  return e;
}

po_TargetIndexStats po_TargetIndex_Stats(po_TargetIndex *ix) {
  pthread_mutex_lock(&ix->mu);
  po_TargetIndexStats s = {ix->len, 0, ix->hits, ix->misses, ix->echoes};
  for (size_t i = 0; i < ix->len; i++) s.compiled += (ix->by_po[i].compiled[0] != NULL) + (ix->by_po[i].compiled[1] != NULL);
  pthread_mutex_unlock(&ix->mu);
  return s;
}

/* ---- memos ---- */

static Entry *entry_of(po_TargetIndex *ix, const char *ns, const char *name) {
  char po[600];
  snprintf(po, sizeof po, "%s/%s", ns, name);
  bool found;
  size_t at = find(ix, po, &found);
  return found ? &ix->by_po[at] : NULL;
}

bool po_TargetIndex_MemoGet(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideVersion *v,
                            po_OverrideMemo *m, char *key, char *held, size_t size) {
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  bool ok = e && e->memo && *v->rv && strcmp(e->memo->rv, v->rv) == 0 && strcmp(e->memo->uid, v->uid) == 0 &&
            e->memo->generation == v->generation;
  if (ok) {
    *m = *e->memo;
    copy_out(key, size, e->memo_key);
    copy_out(held, size, e->memo_held);
  }
  pthread_mutex_unlock(&ix->mu);
  return ok;
}

void po_TargetIndex_MemoSet(po_TargetIndex *ix, const char *ns, const char *name, const po_OverrideMemo *m,
                            const char *key, const char *held) {
  po_OverrideMemo *c = malloc(sizeof *c);
  char *k = strdup(key), *h = strdup(held);
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  if (e) {
    free(e->memo);
    free(e->memo_key);
    free(e->memo_held);
    e->memo = NULL;
    e->memo_key = e->memo_held = NULL;
    if (c && k && h) {
      *c = *m;
      e->memo = c;
      e->memo_key = k;
      e->memo_held = h;
      c = NULL;
      k = h = NULL;
    }
  }
  pthread_mutex_unlock(&ix->mu);
  free(c);
  free(k);
  free(h);
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
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  if (e && uid && strlen(uid) < sizeof e->lv_uid) {
    snprintf(e->lv_uid, sizeof e->lv_uid, "%s", uid);
    e->lv_generation = generation;
    e->lv_hash = hash;
  }
  pthread_mutex_unlock(&ix->mu);
}

void po_TargetIndex_ForgetLastValid(po_TargetIndex *ix) {
  pthread_mutex_lock(&ix->mu);
  for (size_t i = 0; i < ix->len; i++) ix->by_po[i].lv_generation = 0;
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

const po_CompiledEntry *po_TargetIndex_CompiledFor(po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                                                   int64_t generation, po_JsonHash hash) {
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  const po_CompiledEntry *c = e && matches(e->compiled[kPo_CompileWhich_Current], uid, generation, hash)
                                  ? po_CompiledEntry_Ref(e->compiled[kPo_CompileWhich_Current])
                                  : NULL;
  if (c) ix->hits++;
  pthread_mutex_unlock(&ix->mu);
  return c;
}

/* ---- across targets: the ProxyDefaults' PropertyOverrides meet every ServiceDefaults' ---- */

/* The run of links whose target key starts with `prefix` ("ProxyDefaults/"): keys sort by kind
 * first, so it is one run, found in log time. */
static void kind_run(const po_TargetIndex *ix, const char *prefix, size_t *from, size_t *to) {
  bool found;
  size_t len = strlen(prefix);
  *from = link_find(ix, prefix, "", &found);
  *to = *from;
  while (*to < ix->nlinks && strncmp(ix->links[*to].target, prefix, len) == 0) (*to)++;
}

static const char *kind_prefix(po_TargetKind kind) {
  switch (kind) {
    case kPo_TargetKind_ProxyDefaults: return "ProxyDefaults/";
    case kPo_TargetKind_Service: return "Service/";
    case kPo_TargetKind_IstioMesh: return "Mesh/";
    default: return "ServiceDefaults/";
  }
}

char *po_TargetIndex_LinksOfKind(po_TargetIndex *ix, po_TargetKind kind, size_t *count) {
  *count = 0;
  pthread_mutex_lock(&ix->mu);
  size_t from, to, bytes = 1;
  kind_run(ix, kind_prefix(kind), &from, &to);
  for (size_t i = from; i < to; i++) bytes += strlen(ix->links[i].target) + strlen(ix->links[i].po) + 2;
  char *block = malloc(bytes), *p = block;
  for (size_t i = from; block && i < to; i++) {
    size_t kl = strlen(ix->links[i].target) + 1, pl = strlen(ix->links[i].po) + 1;
    memcpy(p, ix->links[i].target, kl);
    memcpy(p + kl, ix->links[i].po, pl);
    p += kl + pl;
  }
  if (block) *count = to - from;
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
  size_t pf, pt;
  kind_run(ix, kind_prefix(wide), &pf, &pt);
  pthread_mutex_unlock(&ix->mu);
  if (pf == pt && other == wide) return true;
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

/* What a reconcile reads of a target, without what the server sets on every write (its
 * resourceVersion, generation, managedFields, creationTimestamp): equal for our write and its
 * echo. Keyed hashes (json_hash.h): nobody can make other content pass for our write. */
static void content_of(const json_object *obj, po_JsonHash *body, po_JsonHash *meta) {
  static const char *const kServerSet[] = {"resourceVersion", "generation", "managedFields", "creationTimestamp"};
  *body = po_Json_HashExcept(obj, "metadata");
  *meta = po_Json_HashExceptAll(po_Json_Get(obj, "metadata"), kServerSet, sizeof kServerSet / sizeof *kServerSet);
}

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

void po_TargetIndex_NoteTargetWrite(po_TargetIndex *ix, const char *key, const json_object *written) {
  po_JsonHash body, meta;
  if (!written) { /* the write failed: forget it */
    pthread_mutex_lock(&ix->mu);
    bool found;
    size_t at = own_find(ix, key, &found);
    if (found) ix->own[at].pending = false, ix->own[at].record.present = false;
    pthread_mutex_unlock(&ix->mu);
    return;
  }
  content_of(written, &body, &meta);
  char over[64] = "";
  json_object *rv = po_Json_Get(po_Json_Get(written, "metadata"), "resourceVersion");
  if (rv && json_object_is_type(rv, json_type_string) && json_object_get_string_len(rv) < (int)sizeof over) {
    snprintf(over, sizeof over, "%s", json_object_get_string(rv));
  }
  po_WriteRecord rec = po_Sync_ReadRecord(written);
  char *k = strdup(key);
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = own_find(ix, key, &found);
  if (!found && k && ix->nown == ix->own_cap) {
    size_t cap = ix->own_cap ? ix->own_cap * 2 : 64;
    OwnWrite *o = realloc(ix->own, cap * sizeof *o);
    if (o) {
      ix->own = o;
      ix->own_cap = cap;
    }
  }
  if (found) {
    ix->own[at].body = body;
    ix->own[at].meta = meta;
    ix->own[at].pending = true;
    memcpy(ix->own[at].over, over, sizeof over);
    ix->own[at].record = rec;
  } else if (k && ix->nown < ix->own_cap) { /* else (out of memory): the echo is reconciled, as before */
    memmove(ix->own + at + 1, ix->own + at, (ix->nown - at) * sizeof *ix->own);
    ix->own[at] = (OwnWrite){k, body, meta, true, "", rec};
    memcpy(ix->own[at].over, over, sizeof over);
    ix->nown++;
    k = NULL;
  }
  pthread_mutex_unlock(&ix->mu);
  free(k);
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

bool po_TargetIndex_IsOwnTargetWrite(po_TargetIndex *ix, const char *key, const json_object *obj) {
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = own_find(ix, key, &found);
  bool pending = found && ix->own[at].pending;
  pthread_mutex_unlock(&ix->mu);
  if (!pending) return false;
  po_JsonHash body, meta; /* hashed without the lock: a 25 KB target is a few thousand nodes */
  content_of(obj, &body, &meta);
  pthread_mutex_lock(&ix->mu);
  at = own_find(ix, key, &found);
  bool own = found && ix->own[at].pending && po_JsonHash_Equal(ix->own[at].body, body) &&
             po_JsonHash_Equal(ix->own[at].meta, meta);
  if (own) {
    ix->own[at].pending = false; /* one echo per write */
    ix->echoes++;
  } else if (found && ix->own[at].pending && *ix->own[at].over) {
    /* A target's events come in resourceVersion order. Another version than the one we wrote
     * over, and not ours: ours came and went unseen (a watch broken after our write, a relist
     * that brings only a later version), and its echo will never come. Kept pending, it would
     * take a later restore of that very content (an old version, put back) for our echo and
     * leave it unreconciled. The version we wrote over may still come late (the cache had it
     * before its handler ran): that one leaves the note alone. */
    json_object *rv = po_Json_Get(po_Json_Get(obj, "metadata"), "resourceVersion");
    const char *s = rv && json_object_is_type(rv, json_type_string) ? json_object_get_string(rv) : "";
    if (strcmp(s, ix->own[at].over) != 0) ix->own[at].pending = false;
  }
  pthread_mutex_unlock(&ix->mu);
  return own;
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
  OwnPatch *fresh = failed ? NULL : calloc(1, sizeof *fresh);
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  if (e && failed) {
    if (e->patch) e->patch->has[which] = false;
  } else if (e) {
    OwnPatch *p = e->patch;
    /* another version of the object than the one noted before: start over */
    if (p && (strcmp(p->uid, m->uid) != 0 || p->generation != m->generation || !po_JsonHash_Equal(p->spec, m->spec_hash))) {
      *p = (OwnPatch){.generation = 0};
    }
    if (!p && fresh) p = e->patch = fresh, fresh = NULL;
    if (p) { /* else (out of memory): its echo is reconciled, as before */
      snprintf(p->uid, sizeof p->uid, "%s", m->uid);
      p->generation = m->generation;
      p->spec = m->spec_hash;
      p->status[which] = h;
      p->has[which] = true;
      if (which == 1) p->desired_status = desired_status;
    }
  }
  pthread_mutex_unlock(&ix->mu);
  free(fresh);
}

bool po_TargetIndex_IsOwnOverrideWrite(po_TargetIndex *ix, const json_object *obj) {
  const char *ns = po_Json_Meta(obj, "namespace"), *name = po_Json_Meta(obj, "name"), *uid = po_Json_Meta(obj, "uid");
  json_object *meta = po_Json_Get(obj, "metadata"), *g = po_Json_Get(meta, "generation");
  const char *rv = po_Json_Meta(obj, "resourceVersion");
  if (!*rv || po_Json_Get(meta, "deletionTimestamp") || !has_our_finalizer(obj)) return false;
  int64_t generation = g && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0;
  pthread_mutex_lock(&ix->mu);
  Entry *e = entry_of(ix, ns, name);
  bool noted = e && e->patch && (e->patch->has[0] || e->patch->has[1]) && strcmp(e->patch->uid, uid) == 0 &&
               e->patch->generation == generation;
  pthread_mutex_unlock(&ix->mu);
  if (!noted) return false;
  po_JsonHash spec = po_Json_Hash(po_Json_Get(obj, "spec")), status = po_Json_Hash(po_Json_Get(obj, "status"));
  char key[600], held[600];
  po_Reconcile_OverrideKey(obj, key, sizeof key);
  po_Reconcile_HeldKey(obj, held, sizeof held);
  pthread_mutex_lock(&ix->mu);
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
        po_JsonHash_Equal(e->memo->spec_hash, spec) && strlen(rv) < sizeof e->memo->rv && strcmp(e->memo_key, key) == 0 &&
        strcmp(e->memo_held, held) == 0) {
      snprintf(e->memo->rv, sizeof e->memo->rv, "%s", rv);
      e->memo->status_hash = p->desired_status;
      e->memo->written_hash = 0;
    }
  }
  pthread_mutex_unlock(&ix->mu);
  return which >= 0;
}
