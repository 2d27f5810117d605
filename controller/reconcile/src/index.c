/* po_TargetIndex: PropertyOverride ("ns/name") -> target key in one sorted array (a target's
 * PropertyOverrides are the run of its namespace), each entry also holding the PropertyOverride's
 * compiled forms (compiled.h). Updates are rare next to lookups; a mutex is enough. */
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "po/reconcile/reconcile.h"

typedef struct {
  char *po;     /* "ns/name" */
  char *target; /* target key */
  char *held;   /* the target its last valid generation is live in, when another; or NULL */
  /* Its compiled current spec and status.lastValid record (or NULL): released when it leaves the
   * index, replaced when either changes, so there are never more than two per PropertyOverride. */
  const po_CompiledEntry *compiled[2];
} Entry;

struct po_TargetIndex {
  pthread_mutex_t mu;
  Entry *by_po;     /* sorted by po */
  size_t len, cap;
  /* uids of targets this process created whose created annotation is not written yet */
  char **created;
  size_t ncreated, created_cap;
  uint64_t hits, misses; /* of the compiled forms */
};

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
  }
  free(ix->by_po);
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

bool po_TargetIndex_Set(po_TargetIndex *ix, const char *ns, const char *name, const char *target_key, char *old_key,
                        size_t size) {
  copy_out(old_key, size, "");
  size_t n = strlen(ns) + strlen(name) + 2;
  char *po = malloc(n), *t = strdup(target_key);
  if (!po || !t) {
    free(po);
    free(t);
    return false;
  }
  strcpy(po, ns);
  strcat(po, "/");
  strcat(po, name);
  pthread_mutex_lock(&ix->mu);
  bool found, ok = true;
  size_t at = find(ix, po, &found);
  if (found) {
    copy_out(old_key, size, ix->by_po[at].target);
    free(ix->by_po[at].target);
    ix->by_po[at].target = t;
    free(po);
  } else {
    if (ix->len == ix->cap) {
      size_t cap = ix->cap ? ix->cap * 2 : 64;
      Entry *e = realloc(ix->by_po, cap * sizeof *e);
      if (e) {
        ix->by_po = e;
        ix->cap = cap;
      }
    }
    if (ix->len < ix->cap) {
      memmove(ix->by_po + at + 1, ix->by_po + at, (ix->len - at) * sizeof *ix->by_po);
      ix->by_po[at] = (Entry){po, t, NULL, {NULL, NULL}};
      ix->len++;
    } else {
      free(po);
      free(t);
      ok = false;
    }
  }
  pthread_mutex_unlock(&ix->mu);
  return ok;
}

bool po_TargetIndex_Remove(po_TargetIndex *ix, const char *ns, const char *name, char *old_key, size_t size) {
  char po[600];
  snprintf(po, sizeof po, "%s/%s", ns, name);
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = find(ix, po, &found);
  copy_out(old_key, size, found ? ix->by_po[at].target : "");
  if (found) {
    free(ix->by_po[at].po);
    free(ix->by_po[at].target);
    free(ix->by_po[at].held);
    po_CompiledEntry_Release(ix->by_po[at].compiled[0]);
    po_CompiledEntry_Release(ix->by_po[at].compiled[1]);
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
  char *h = held_key && *held_key ? strdup(held_key) : NULL;
  copy_out(old_held, size, "");
  if (held_key && *held_key && !h) return false;
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = find(ix, po, &found);
  if (found) {
    copy_out(old_held, size, ix->by_po[at].held ? ix->by_po[at].held : "");
    free(ix->by_po[at].held);
    ix->by_po[at].held = h;
    h = NULL;
  }
  pthread_mutex_unlock(&ix->mu);
  free(h);
  return true;
}

/* Target keys hold the namespace ("Kind/ns/name"), and so do index keys ("ns/name"): the
 * overrides of a target are in its namespace, so only that namespace's run is scanned. */
size_t po_TargetIndex_Lookup(po_TargetIndex *ix, const char *target_key, char (*names)[254], size_t cap) {
  const char *ns = strchr(target_key, '/');
  if (!ns) return 0;
  ns++;
  const char *ns_end = strchr(ns, '/');
  if (!ns_end) return 0;
  size_t nl = (size_t)(ns_end - ns);
  char prefix[300];
  if (nl + 2 > sizeof prefix) return 0;
  memcpy(prefix, ns, nl);
  prefix[nl] = '/';
  prefix[nl + 1] = '\0';
  size_t count = 0;
  pthread_mutex_lock(&ix->mu);
  bool found;
  size_t at = find(ix, prefix, &found);
  for (size_t i = at; i < ix->len && strncmp(ix->by_po[i].po, prefix, nl + 1) == 0; i++) {
    if (strcmp(ix->by_po[i].target, target_key) != 0 && (!ix->by_po[i].held || strcmp(ix->by_po[i].held, target_key) != 0)) {
      continue;
    }
    if (count < cap) copy_out(names[count], sizeof names[count], ix->by_po[i].po + nl + 1);
    count++;
  }
  pthread_mutex_unlock(&ix->mu);
  return count;
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

static bool matches(const po_CompiledEntry *e, const char *uid, int64_t generation, uint64_t hash) {
  return e && e->generation == generation && e->hash == hash && strcmp(e->uid, uid) == 0;
}

const po_CompiledEntry *po_TargetIndex_Compiled(po_TargetIndex *ix, const json_object *obj, po_CompileWhich which,
                                                bool *oom) {
  *oom = false;
  json_object *meta = NULL, *v = NULL;
  json_object_object_get_ex(obj, "metadata", &meta);
  const char *ns = json_object_object_get_ex(meta, "namespace", &v) ? json_object_get_string(v) : "";
  const char *name = json_object_object_get_ex(meta, "name", &v) ? json_object_get_string(v) : "";
  const char *uid = json_object_object_get_ex(meta, "uid", &v) ? json_object_get_string(v) : "";
  int64_t generation;
  uint64_t hash;
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
  po_CompiledEntry *e = po_CompiledEntry_Make(obj, which, uid, generation, hash, oom);
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
  po_TargetIndexStats s = {ix->len, 0, ix->hits, ix->misses};
  for (size_t i = 0; i < ix->len; i++) s.compiled += (ix->by_po[i].compiled[0] != NULL) + (ix->by_po[i].compiled[1] != NULL);
  pthread_mutex_unlock(&ix->mu);
  return s;
}
