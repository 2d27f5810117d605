/* The informer: a list/watch loop on its own thread feeding a locked cache and the handlers. */
#include "po/kube/informer.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "client_internal.h"
#include "compact.h"
#include "json_scan.h"
#include "pack_later.h"
#include "po/base/json.h"

struct po_Informer {
  po_KubeClient *client;
  po_InformerOptions opt;
  po_InformerHandlers h;
  char *group, *version, *resource, *ns, *label, *field;
  po_KubeCancel *cancel;
  pthread_t thread;
  bool started, joined;

  pthread_rwlock_t cache_lock; /* guards cache */
  po_Cache_ cache;
  po_TextCodec_ *codec; /* po_InformerOptions.compress_text; NULL: texts kept as they are */
  po_PackLater_ later;  /* watch events' texts not packed yet (text_pack_delay_ms); the watch thread's */

  pthread_mutex_t lock; /* guards synced, last_rv, stats; cond signals synced/stopped */
  pthread_cond_t cond;
  bool synced, ended;
  char last_rv[128];
  po_InformerStats stats;
  char last_error[400]; /* po_Informer_LastError; guarded by lock */

  po_Backoff backoff;
  po_Rand rand;
};

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

bool po_Informer_New(po_KubeClient *client, const po_InformerOptions *opt,
                     const po_InformerHandlers *handlers, po_Informer **out, po_CtlStatus *st) {
  *out = NULL;
  if (!opt || !opt->ref.version || !opt->ref.resource)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "informer needs ref.version and ref.resource");
  po_Informer *f = calloc(1, sizeof *f);
  if (!f) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  f->client = client;
  f->opt = *opt;
  if (handlers) f->h = *handlers;
  if (!f->opt.page_size) f->opt.page_size = kPo_InformerPageSize;
  if (f->opt.page_size < 0) f->opt.page_size = 0; /* the list option's "no limit" */
  if (!f->opt.min_watch_timeout_s) f->opt.min_watch_timeout_s = 300;
  if (!f->opt.backoff_initial_ns) f->opt.backoff_initial_ns = 800000000LL;
  if (!f->opt.backoff_max_ns) f->opt.backoff_max_ns = 30000000000LL;
  if (!f->opt.backoff_reset_ns) f->opt.backoff_reset_ns = 120000000000LL;
  f->group = dup_or_null(opt->ref.group);
  f->version = dup_or_null(opt->ref.version);
  f->resource = dup_or_null(opt->ref.resource);
  f->ns = dup_or_null(opt->ref.ns);
  f->label = dup_or_null(opt->label_selector);
  f->field = dup_or_null(opt->field_selector);
  f->opt.ref = (po_KubeRef){f->group, f->version, f->resource, f->ns, NULL, NULL};
  f->opt.label_selector = f->label;
  f->opt.field_selector = f->field;
  f->cancel = po_KubeCancel_New();
  pthread_rwlock_init(&f->cache_lock, NULL);
  pthread_mutex_init(&f->lock, NULL);
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&f->cond, &a);
  pthread_condattr_destroy(&a);
  bool ok = f->version && f->resource && f->cancel && po_Cache_Init_(&f->cache);
  if (ok && opt->compress_text && !opt->keep_parsed)
    ok = (f->codec = po_TextCodec_New_(opt->text_dictionary, opt->text_dictionary_len, opt->text_level)) != NULL;
  f->opt.text_dictionary = NULL; /* the codec's copy is what is used */
  po_PackLater_Init_(&f->later, f->codec ? (int64_t)opt->text_pack_delay_ms * 1000000 : 0,
                     opt->text_pack_pending_bytes ? opt->text_pack_pending_bytes : kPo_InformerPackPendingBytes);
  if (!ok) {
    po_Informer_Free(f);
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  }
  po_Backoff_Init(&f->backoff, f->opt.backoff_initial_ns, f->opt.backoff_max_ns, 2.0, 1.0,
                  f->opt.backoff_reset_ns);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  po_Rand_Seed(&f->rand, opt->seed ? opt->seed : (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uintptr_t)f);
  *out = f;
  return true;
}

void po_Informer_Free(po_Informer *f) {
  if (!f) return;
  po_Informer_Stop(f);
  po_Cache_Destroy_(&f->cache);
  po_PackLater_Free_(&f->later);
  po_TextCodec_Free_(f->codec);
  pthread_rwlock_destroy(&f->cache_lock);
  pthread_mutex_destroy(&f->lock);
  pthread_cond_destroy(&f->cond);
  po_KubeCancel_Free(f->cancel);
  free(f->group);
  free(f->version);
  free(f->resource);
  free(f->ns);
  free(f->label);
  free(f->field);
  free(f);
}

/* ---- object helpers ---------------------------------------------------------------------- */

/* metadata.key as a string; NULL when absent or not a string (an object without a name has no key). */
static const char *meta(json_object *o, const char *key) { return po_Json_String(po_Json_Get(o, "metadata"), key); }

static bool key_of(json_object *o, char *buf, size_t size) {
  const char *ns = meta(o, "namespace"), *name = meta(o, "name");
  if (!name || !*name) return false;
  int n = ns && *ns ? snprintf(buf, size, "%s/%s", ns, name) : snprintf(buf, size, "%s", name);
  return n > 0 && (size_t)n < size;
}

/* One tokener per thread, reset between parses: even a tokener of depth 256 was an 8 KB calloc,
 * which glibc serves only after consolidating its fast bins, and made per parse it cost more than
 * the parse of a 25 KB target itself (6.6% of the controller's CPU at 5,000, profiled); at
 * kPo_KubeMaxJsonDepth it is ~400 KB. Freed when its thread ends. */
static pthread_key_t g_tokener_key;
static pthread_once_t g_tokener_once = PTHREAD_ONCE_INIT;
static bool g_tokener_key_ok;

static void free_tokener(void *t) { json_tokener_free(t); }
static void make_tokener_key(void) { g_tokener_key_ok = pthread_key_create(&g_tokener_key, free_tokener) == 0; }

static json_tokener *thread_tokener(bool *owned) {
  pthread_once(&g_tokener_once, make_tokener_key);
  json_tokener *t = g_tokener_key_ok ? pthread_getspecific(g_tokener_key) : NULL;
  *owned = false;
  if (t) {
    json_tokener_reset(t);
    return t;
  }
  if (!(t = json_tokener_new_ex(kPo_KubeMaxJsonDepth))) return NULL;
  if (!g_tokener_key_ok || pthread_setspecific(g_tokener_key, t) != 0) *owned = true; /* freed after this parse */
  return t;
}

/* A text entry's object, parsed for one reader (the caller puts it); NULL when memory ran out. */
static json_object *parse_entry(const po_CacheEntry_ *e) {
  bool owned;
  json_tokener *t = thread_tokener(&owned);
  const char *step;
  json_object *o = po_CacheEntry_Parse_(e, t, &step);
  if (owned) json_tokener_free(t);
  return o;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A text entry of key: packed now, or, for a watch event's text (later) when the informer packs
 * late (po_InformerOptions.text_pack_delay_ms), kept as it came and noted (pack_later.h; packed
 * now when the note cannot be made). */
static po_CacheEntry_ *store_text(po_Informer *f, const char *key, const char *text, size_t len, const po_CacheMeta_ *m,
                                  bool later) {
  size_t kept = len - (m->cut_len <= len ? m->cut_len : 0);
  if (later && m->codec && po_PackLater_Fits_(&f->later, kept)) {
    po_CacheMeta_ raw = *m;
    raw.codec = NULL;
    po_CacheEntry_ *e = po_Cache_NewEntry_(key, NULL, text, len, &raw);
    if (e && po_PackLater_Note_(&f->later, key, e, kept, now_ns())) return e;
    po_CacheEntry_Unref_(e);
  }
  return po_Cache_NewEntry_(key, NULL, text, len, m);
}

/* The entry of an object, with the metadata a reader may ask for without parsing it: the tree
 * itself (a reference taken: the event or the list page that holds it is put after this) for an
 * informer that keeps trees; else text: the bytes the server sent (a watch event's when the watch
 * located them, a list item's), else the compact serialisation (no serialising of what was just
 * parsed when the bytes are at hand). cut: the caller took managedFields out of the bytes;
 * later: a watch event's text, which may be packed late (store_text). */
static po_CacheEntry_ *entry_of(po_Informer *f, const char *key, json_object *o, const char *text, size_t len,
                                bool cut, bool later) {
  json_object *md = po_Json_Get(o, "metadata"), *g = po_Json_Get(md, "generation");
  po_CacheMeta_ m = {.rv = meta(o, "resourceVersion"), .uid = meta(o, "uid"),
                     .generation = g && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0,
                     .deleting = po_Json_Get(md, "deletionTimestamp") != NULL, .codec = f->codec};
  json_object *kept = f->opt.transform ? f->opt.transform(o) : json_object_get(o);
  if (!kept) return NULL;
  if (f->opt.keep_parsed) {
    po_CacheEntry_ *e = po_Cache_NewEntry_(key, kept, NULL, 0, &m);
    if (!e) json_object_put(kept);
    return e;
  }
  if (kept != o) { /* the server's bytes are the whole object: serialise the copy */
    text = NULL;
    cut = false;
  }
  if (!text) text = json_object_to_json_string_length(kept, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
  /* metadata.managedFields is left out of the text (po_InformerOptions.keep_managed_fields) */
  /* (unless the caller cut it already: a list item) */
  if (text && !cut && !f->opt.keep_managed_fields) po_JsonScan_ManagedFields_(text, len, &m.cut_at, &m.cut_len);
  po_CacheEntry_ *e = text ? store_text(f, key, text, len, &m, later) : NULL;
  json_object_put(kept);
  return e;
}

/* src into dst, cut to its size: asked once per PropertyOverride of a target on every reconcile
 * (po_Informer_Version), where two snprintf calls cost more than the lookup. */
static void copy_cut(char *dst, size_t size, const char *src) {
  size_t n = strnlen(src, size - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void version_of(const po_CacheEntry_ *e, po_InformerVersion *v) {
  copy_cut(v->rv, sizeof v->rv, e->rv);
  copy_cut(v->uid, sizeof v->uid, e->uid);
  v->generation = e->generation;
  v->deleting = e->deleting;
}

static void set_rv(po_Informer *f, const char *rv) {
  if (!rv || !*rv) return;
  pthread_mutex_lock(&f->lock);
  snprintf(f->last_rv, sizeof f->last_rv, "%s", rv);
  pthread_mutex_unlock(&f->lock);
}

#define PO_STAT(f, field, n)         \
  do {                               \
    pthread_mutex_lock(&(f)->lock);  \
    (f)->stats.field += (n);         \
    pthread_mutex_unlock(&(f)->lock); \
  } while (0)

static bool key_for(const char *ns, const char *name, char key[512]);

/* ---- events ------------------------------------------------------------------------------ */

static void deliver_upsert(po_Informer *f, json_object *obj, po_CacheEntry_ *old) {
  if (old) {
    PO_STAT(f, updates, 1);
    if (f->h.on_update_version) {
      po_InformerVersion v;
      version_of(old, &v);
      f->h.on_update_version(f->h.ctx, &v, obj);
    } else if (f->h.on_update) {
      /* Parsed only for a handler that reads it: a target's text is ~25 KB at 50 entries, and
       * every write of it comes back here. A kept tree costs nothing to give. */
      json_object *o = f->h.no_old_object ? NULL : old->obj ? old->obj : parse_entry(old);
      f->h.on_update(f->h.ctx, o, obj);
      if (o != old->obj) json_object_put(o);
    }
  } else {
    PO_STAT(f, adds, 1);
    if (f->h.on_add) f->h.on_add(f->h.ctx, obj);
  }
}

/* The texts kept unpacked that are due (pack_later.h), packed where the cache still holds that
 * very entry; one replaced since was freed as it was. Only this thread writes the cache: the
 * entry looked at is the one replaced. Out of memory: left unpacked (a reader gets the same bytes
 * either way). */
static void pack_due(po_Informer *f) {
  if (!f->later.count) return;
  int64_t now = now_ns();
  po_PackLaterItem_ it;
  while (po_PackLater_Next_(&f->later, now, &it)) {
    pthread_rwlock_rdlock(&f->cache_lock);
    po_CacheEntry_ *cur = po_Cache_Get_(&f->cache, it.key);
    /* that entry, unpacked (a freed one's address reused by a packed entry is not packed again) */
    bool same = cur && (const void *)cur == it.entry && cur->json && !cur->packed_len;
    if (same) po_CacheEntry_Ref_(cur);
    pthread_rwlock_unlock(&f->cache_lock);
    if (same) {
      po_CacheMeta_ m = {.rv = cur->rv, .uid = cur->uid, .generation = cur->generation, .deleting = cur->deleting,
                         .codec = f->codec};
      po_CacheEntry_ *e = po_Cache_NewEntry_(it.key, NULL, cur->json, cur->json_len, &m);
      if (e) {
        pthread_rwlock_wrlock(&f->cache_lock);
        po_CacheEntry_ *old = po_Cache_Put_(&f->cache, e);
        pthread_rwlock_unlock(&f->cache_lock);
        po_CacheEntry_Unref_(old);
        PO_STAT(f, texts_packed_late, 1);
      }
      po_CacheEntry_Unref_(cur);
    }
    free(it.key);
  }
}

/* text: the object's bytes as the server sent them, when the watch located them. */
static bool on_watch_event(void *ctx, po_KubeWatchEventType type, json_object *obj, const char *text, size_t len) {
  po_Informer *f = ctx;
  pack_due(f);
  const char *rv = meta(obj, "resourceVersion");
  PO_STAT(f, events, 1);
  PO_STAT(f, events_parsed, 1);
  if (type == kPo_KubeWatch_Bookmark) {
    set_rv(f, rv);
    return true;
  }
  char key[512];
  if (!key_of(obj, key, sizeof key)) {
    set_rv(f, rv); /* an object without a name cannot be cached; skip it, keep going */
    return true;
  }
  if (type == kPo_KubeWatch_Deleted) {
    pthread_rwlock_wrlock(&f->cache_lock);
    po_CacheEntry_ *old = po_Cache_Remove_(&f->cache, key);
    pthread_rwlock_unlock(&f->cache_lock);
    set_rv(f, rv);
    if (old) {
      PO_STAT(f, deletes, 1);
      if (f->h.on_delete) f->h.on_delete(f->h.ctx, obj);
    }
    po_CacheEntry_Unref_(old);
    return true;
  }
  po_CacheEntry_ *e = entry_of(f, key, obj, text, len, false, true);
  if (!e) return false; /* out of memory: end the watch; the retry relists */
  pthread_rwlock_wrlock(&f->cache_lock);
  po_CacheEntry_ *old = po_Cache_Put_(&f->cache, e);
  pthread_rwlock_unlock(&f->cache_lock);
  set_rv(f, rv);
  deliver_upsert(f, obj, old);
  po_CacheEntry_Unref_(old);
  return true;
}

static bool on_watch_event_obj(void *ctx, po_KubeWatchEventType type, json_object *obj) {
  return on_watch_event(ctx, type, obj, NULL, 0);
}

/* An update the handlers know by its version as their own write's object (own_version): its
 * bytes cached as they came, nothing parsed, nothing delivered. Only for a key already cached (an
 * add goes the usual way: the handlers index it), and only this thread writes the cache, so the
 * entry looked at is the one replaced. */
static bool on_watch_head(void *ctx, const po_KubeWatchHead *h) {
  po_Informer *f = ctx;
  pack_due(f);
  char key[512];
  if (h->type != kPo_KubeWatch_Modified || !*h->uid || !key_for(h->ns, h->name, key)) return false;
  pthread_rwlock_rdlock(&f->cache_lock);
  bool cached = po_Cache_Get_(&f->cache, key) != NULL;
  pthread_rwlock_unlock(&f->cache_lock);
  po_InformerVersion v = {.generation = h->generation, .deleting = h->deleting};
  snprintf(v.rv, sizeof v.rv, "%s", h->rv);
  snprintf(v.uid, sizeof v.uid, "%s", h->uid);
  if (!cached || !f->h.own_version(f->h.ctx, key, &v)) return false;
  po_CacheMeta_ m = {.rv = h->rv, .uid = h->uid, .generation = h->generation, .deleting = h->deleting, .codec = f->codec};
  if (!f->opt.keep_managed_fields && h->managed_cut) m.cut_at = h->managed_at, m.cut_len = h->managed_len;
  po_CacheEntry_ *e = store_text(f, key, h->object, h->object_len, &m, true);
  PO_STAT(f, events, 1);
  if (!e) { /* out of memory: the cache keeps the older version; the relist after the watch ends fixes it */
    PO_STAT(f, watch_errors, 1);
    return true;
  }
  pthread_rwlock_wrlock(&f->cache_lock);
  po_CacheEntry_ *old = po_Cache_Put_(&f->cache, e);
  pthread_rwlock_unlock(&f->cache_lock);
  set_rv(f, h->rv);
  PO_STAT(f, updates, 1);
  PO_STAT(f, own_versions, 1);
  po_CacheEntry_Unref_(old);
  if (f->h.own_cached) f->h.own_cached(f->h.ctx, key, &v);
  return true;
}

/* ---- list and diff ----------------------------------------------------------------------- */

/* For entries of the old cache that the relist no longer has: deliver their deletion. */
typedef struct {
  po_Informer *f;
  po_Cache_ *fresh;
  size_t kept; /* entries put back: their change could not be told (kept_back) */
} GoneCtx;

/* A change a relist found but could not tell the handlers (the entry's text could not be read:
 * out of memory decompressing or parsing it): the cache goes back to what the handlers last saw
 * of key, `was` (NULL: nothing, the key was new), so that the next relist, which the caller asks
 * for, finds the same change and tells it. Told nothing, a deleted Consul target would be taken
 * as present for good (test_kube_gone_unreadable). Only this thread writes the cache. */
static void kept_back(po_Informer *f, po_Cache_ *cache, const char *key, po_CacheEntry_ *was) {
  po_CacheEntry_ *out;
  pthread_rwlock_wrlock(&f->cache_lock);
  if (was) {
    po_CacheEntry_Ref_(was);
    out = po_Cache_Put_(cache, was);
  } else {
    out = po_Cache_Remove_(cache, key);
  }
  pthread_rwlock_unlock(&f->cache_lock);
  po_CacheEntry_Unref_(out);
}

static void deliver_if_gone(void *ctx, po_CacheEntry_ *e) {
  GoneCtx *g = ctx;
  if (po_Cache_Get_(g->fresh, e->key)) return;
  json_object *o = e->obj ? e->obj : parse_entry(e);
  if (!o) {
    kept_back(g->f, g->fresh, e->key, e);
    g->kept++;
    return;
  }
  PO_STAT(g->f, deletes, 1);
  if (g->f->h.on_delete) g->f->h.on_delete(g->f->h.ctx, o);
  if (o != e->obj) json_object_put(o);
}

/* A relist in progress. On the first list (direct: nothing cached, never synced) each item goes
 * into the cache and to the handlers as it is read, with the tree just parsed: every one is an
 * add, there is nothing to compare, and a second parse of each (100,000 at a cold start) is
 * saved. Otherwise into a fresh cache swapped in at the end, the changed keys kept (pending) to
 * be told to the handlers once the new cache is whole. */
typedef struct {
  po_Informer *f;
  bool direct;
  po_Cache_ fresh;
  char **pending;
  size_t npending, cap;
} Relist;

static bool note_pending(Relist *r, const char *key, po_CtlStatus *st) {
  if (r->npending == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 256;
    char **np = realloc(r->pending, cap * sizeof *np);
    if (!np) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
    r->pending = np;
    r->cap = cap;
  }
  if (!(r->pending[r->npending] = strdup(key))) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  r->npending++;
  return true;
}

/* One listed item: its tree (the caller puts it) and its bytes as the server sent them. */
static bool take_item(Relist *r, json_object *it, const char *text, size_t len, po_CtlStatus *st) {
  po_Informer *f = r->f;
  char key[512];
  if (!key_of(it, key, sizeof key)) return true; /* an object without a name cannot be cached */
  po_CacheEntry_ *e = entry_of(f, key, it, text, len, true, false);
  if (!e) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  if (r->direct) {
    pthread_rwlock_wrlock(&f->cache_lock);
    po_CacheEntry_ *old = po_Cache_Put_(&f->cache, e);
    pthread_rwlock_unlock(&f->cache_lock);
    deliver_upsert(f, it, old);
    po_CacheEntry_Unref_(old);
    return true;
  }
  po_CacheEntry_Unref_(po_Cache_Put_(&r->fresh, e));
  po_CacheEntry_ *was = po_Cache_Get_(&f->cache, key);
  if (was && strcmp(was->rv, e->rv) == 0 && *e->rv) return true;
  return note_pending(r, key, st);
}

/* One element of a page's items, parsed on its own: the tree lives while it is taken. Its
 * metadata.managedFields is cut from the page's bytes first (unless kept): the cache drops it
 * anyway, and parsed it was two thirds of an object's allocations (207 against ~60 for a
 * ConfigMap applied once). Those bytes are then checked only for brackets and quotes. */
static bool take_text(Relist *r, char *text, size_t len, int page, size_t i, po_CtlStatus *st) {
  size_t cut_at, cut_len;
  if (!r->f->opt.keep_managed_fields && po_JsonScan_ManagedFieldsFirst_(text, len, &cut_at, &cut_len)) {
    memmove(text + cut_at, text + cut_at + cut_len, len - cut_at - cut_len);
    len -= cut_len;
  }
  bool owned;
  json_tokener *t = thread_tokener(&owned);
  if (!t) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  json_object *it = len <= (size_t)1 << 30 ? json_tokener_parse_ex(t, text, (int)len) : NULL;
  enum json_tokener_error err = json_tokener_get_error(t);
  bool whole = err == json_tokener_success && json_tokener_get_parse_end(t) == len;
  json_tokener_reset(t);
  if (owned) json_tokener_free(t);
  bool ok = whole ? take_item(r, it, text, len, st)
                  : po_CtlStatus_Set(st, kPo_Ctl_Decode, "list: page %d, item %zu: not one JSON value (%s)", page + 1, i,
                                     err != json_tokener_success ? json_tokener_error_desc(err) : "bytes after it");
  json_object_put(it);
  return ok;
}

/* The page without its items ("items":null in their place), parsed: the list's metadata, and a
 * check of every byte the items' own parses do not see. */
static json_object *page_shell(const char *body, size_t len, const char *items, size_t items_len, po_CtlStatus *st) {
  size_t head = (size_t)(items - body), tail = len - head - items_len;
  char *text = malloc(head + 4 + tail + 1);
  if (!text) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
    return NULL;
  }
  memcpy(text, body, head);
  memcpy(text + head, "null", 4);
  memcpy(text + head + 4, items + items_len, tail);
  json_object *o = NULL;
  bool ok = po_Kube_ParseJson_(text, head + 4 + tail, &o, "list", st);
  free(text);
  return ok ? o : NULL;
}

/* One page: read from the server's bytes item by item, so that at most one item's tree is alive
 * (a page's tree was ~10x its bytes); *cont gets the continue token (NULL: the last page). */
static bool list_page(Relist *r, po_KubeListOptions *lo, int page, char *list_rv, size_t rv_size, char **cont,
                      po_CtlStatus *st) {
  char *body = NULL;
  size_t len = 0;
  *cont = NULL;
  if (!po_KubeClient_ListBytes(r->f->client, &r->f->opt.ref, lo, &body, &len, st)) return false;
  const char *items = NULL, *end = body + len;
  size_t items_len = 0;
  if (!po_JsonScan_Member_(body, len, "items", &items, &items_len)) {
    free(body);
    return po_CtlStatus_Set(st, kPo_Ctl_Decode, "list: the answer is not an object with an items array");
  }
  json_object *shell = page_shell(body, len, items, items_len, st);
  if (!shell) {
    free(body);
    return false;
  }
  bool ok = true;
  if (page == 0 && meta(shell, "resourceVersion")) snprintf(list_rv, rv_size, "%s", meta(shell, "resourceVersion"));
  const char *next = meta(shell, "continue");
  if (next && *next && !(*cont = strdup(next))) ok = po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  json_object_put(shell);
  if (ok && !(items_len == 4 && memcmp(items, "null", 4) == 0)) {
    const char *at = items, *v;
    size_t n = 0, vl;
    int more;
    /* take_text may shorten the element in place: the walk is already past it */
    while (ok && (more = po_JsonScan_NextElement_(&at, end, n, &v, &vl)) == 1)
      ok = take_text(r, body + (v - body), vl, page, n++, st);
    if (ok && more < 0) ok = po_CtlStatus_Set(st, kPo_Ctl_Decode, "list: page %d: items is not an array of objects (after item %zu)", page + 1, n);
  }
  free(body);
  if (!ok) {
    free(*cont);
    *cont = NULL;
  }
  return ok;
}

/* Lists page by page (see Relist), swaps the fresh cache in, then tells the handlers what
 * changed: adds and updates for the keys whose resourceVersion differs, deletions for keys that
 * are gone. Only this thread writes the cache, so it reads it here without the lock. */
static bool relist(po_Informer *f, po_CtlStatus *st) {
  po_KubeListOptions lo = {f->label, f->field, f->opt.page_size, NULL, NULL, f->cancel};
  PO_STAT(f, lists, 1);
  pthread_mutex_lock(&f->lock);
  Relist r = {.f = f, .direct = !f->synced && f->cache.count == 0};
  pthread_mutex_unlock(&f->lock);
  if (!r.direct && !po_Cache_Init_(&r.fresh)) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  char *cont = NULL, list_rv[128] = "";
  bool ok = true;
  for (int page = 0; ok; page++) {
    lo.continue_token = cont;
    char *next = NULL;
    ok = list_page(&r, &lo, page, list_rv, sizeof list_rv, &next, st);
    free(cont);
    cont = next;
    if (!cont) break;
  }
  free(cont);
  if (!ok || r.direct) {
    for (size_t i = 0; i < r.npending; i++) free(r.pending[i]);
    free(r.pending);
    if (!r.direct) po_Cache_Destroy_(&r.fresh);
    if (!ok) return false;
  } else {
    pthread_rwlock_wrlock(&f->cache_lock);
    po_Cache_ old = f->cache;
    f->cache = r.fresh;
    pthread_rwlock_unlock(&f->cache_lock);
    set_rv(f, list_rv);
    size_t kept = 0;
    for (size_t i = 0; i < r.npending; i++) {
      po_CacheEntry_ *now = po_Cache_Get_(&f->cache, r.pending[i]);
      po_CacheEntry_ *was = po_Cache_Remove_(&old, r.pending[i]);
      json_object *o = !now ? NULL : now->obj ? now->obj : parse_entry(now);
      if (o) deliver_upsert(f, o, was);
      else if (now) kept_back(f, &f->cache, r.pending[i], was), kept++;
      if (now && o && o != now->obj) json_object_put(o);
      po_CacheEntry_Unref_(was);
      free(r.pending[i]);
    }
    free(r.pending);
    GoneCtx g = {f, &f->cache, 0};
    po_Cache_ForEach_(&old, deliver_if_gone, &g);
    po_Cache_Destroy_(&old);
    kept += g.kept;
    /* Not synced anew: the next relist (after the run loop's backoff) tells what these could not. */
    if (kept) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory telling %zu change%s the list found; listing again",
                                      kept, kept == 1 ? "" : "s");
  }
  set_rv(f, list_rv);
  pthread_mutex_lock(&f->lock);
  f->synced = true;
  pthread_cond_broadcast(&f->cond);
  pthread_mutex_unlock(&f->lock);
  return true;
}

/* ---- the loop ---------------------------------------------------------------------------- */

static void note_error(po_Informer *f, const char *what, const po_CtlStatus *st) {
  pthread_mutex_lock(&f->lock);
  if (st) snprintf(f->last_error, sizeof f->last_error, "%s %.60s: %.300s", what, f->opt.ref.resource ? f->opt.ref.resource : "", st->message);
  else f->last_error[0] = 0;
  pthread_mutex_unlock(&f->lock);
}

bool po_Informer_LastError(po_Informer *f, char *buf, size_t size) {
  pthread_mutex_lock(&f->lock);
  bool any = f->last_error[0] != 0;
  if (size) snprintf(buf, size, "%s", f->last_error);
  pthread_mutex_unlock(&f->lock);
  return any;
}

static void *run(void *arg) {
  po_Informer *f = arg;
  bool need_list = true;
  while (!po_KubeCancel_Fired(f->cancel)) {
    po_CtlStatus st;
    if (need_list) {
      if (!relist(f, &st)) {
        if (st.code == kPo_Ctl_Stopped || po_KubeCancel_Fired(f->cancel)) break;
        note_error(f, "list", &st);
        PO_STAT(f, watch_errors, 1);
        po_KubeCancel_Sleep(f->cancel, po_Backoff_Next(&f->backoff, now_ns(), &f->rand));
        continue;
      }
      need_list = false;
      note_error(f, NULL, NULL);
    }
    char rv[128];
    po_Informer_LastResourceVersion(f, rv, sizeof rv);
    long min = f->opt.min_watch_timeout_s;
    /* An informer that keeps text takes the object's bytes from the stream; one that keeps
     * trees has no use for them. */
    bool text = !f->opt.keep_parsed;
    po_KubeWatchOptions wo = {f->label, f->field, rv, min + (long)((double)min * po_Rand_Unit(&f->rand)), true,
                              text ? on_watch_event : NULL,
                              text && !f->opt.transform && f->h.own_version ? on_watch_head : NULL,
                              /* the text cache drops it: never parsed (a kept tree is the object whole) */
                              text && !f->opt.keep_managed_fields};
    uint64_t before;
    pthread_mutex_lock(&f->lock);
    before = f->stats.events;
    f->stats.watches++;
    pthread_mutex_unlock(&f->lock);
    int64_t t0 = now_ns();
    bool ok = po_KubeClient_Watch(f->client, &f->opt.ref, &wo, on_watch_event_obj, f, f->cancel, &st);
    if (po_KubeCancel_Fired(f->cancel)) break;
    if (ok) {
      /* A clean end after timeoutSeconds: watch again at once. A stream closed at once and
       * empty is a misbehaving server or proxy: do not spin on it. */
      pthread_mutex_lock(&f->lock);
      bool idle = f->stats.events == before;
      pthread_mutex_unlock(&f->lock);
      if (idle && now_ns() - t0 < 1000000000LL)
        po_KubeCancel_Sleep(f->cancel, po_Backoff_Next(&f->backoff, now_ns(), &f->rand));
      continue;
    }
    if (st.code == kPo_Ctl_Gone) {
      PO_STAT(f, relists_gone, 1);
      need_list = true;
      continue;
    }
    note_error(f, "watch", &st);
    PO_STAT(f, watch_errors, 1);
    po_KubeCancel_Sleep(f->cancel, po_Backoff_Next(&f->backoff, now_ns(), &f->rand));
  }
  pthread_mutex_lock(&f->lock);
  f->ended = true;
  pthread_cond_broadcast(&f->cond);
  pthread_mutex_unlock(&f->lock);
  return NULL;
}

bool po_Informer_Start(po_Informer *f, po_CtlStatus *st) {
  if (f->started) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "informer already started");
  /* The thread parses and caches objects nested up to kPo_KubeMaxJsonDepth: a stack of a known
   * size, whatever RLIMIT_STACK the container gives (address space; pages touched as used). */
  pthread_attr_t attr;
  bool attr_ok = pthread_attr_init(&attr) == 0;
  if (attr_ok) pthread_attr_setstacksize(&attr, (size_t)8 << 20);
  int rc = pthread_create(&f->thread, attr_ok ? &attr : NULL, run, f);
  if (attr_ok) pthread_attr_destroy(&attr);
  if (rc != 0)
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "cannot start the informer thread");
  f->started = true;
  return true;
}

void po_Informer_Stop(po_Informer *f) {
  if (!f->started || f->joined) return;
  po_KubeCancel_Fire(f->cancel);
  pthread_join(f->thread, NULL);
  f->joined = true;
}

bool po_Informer_HasSynced(po_Informer *f) {
  pthread_mutex_lock(&f->lock);
  /* A stopped informer's cache no longer follows the server: whoever gates writes on this
   * (the reconciler) must stop writing. */
  bool s = f->synced && !f->ended;
  pthread_mutex_unlock(&f->lock);
  return s;
}

bool po_Informer_WaitForSync(po_Informer *f, long timeout_ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (int64_t)timeout_ms * 1000000;
  ts.tv_sec = (time_t)(end / 1000000000);
  ts.tv_nsec = (long)(end % 1000000000);
  pthread_mutex_lock(&f->lock);
  while (!f->synced && !f->ended)
    if (pthread_cond_timedwait(&f->cond, &f->lock, &ts) != 0) break;
  bool s = f->synced;
  pthread_mutex_unlock(&f->lock);
  return s;
}

/* "ns/name" (or "name"), copied, not printed: every read of the cache makes one (a reconcile's
 * version check of each PropertyOverride of its target). False when it does not fit. */
static bool key_for(const char *ns, const char *name, char key[512]) {
  if (!name) return false;
  size_t a = ns && *ns ? strlen(ns) : 0, b = strlen(name);
  if ((a ? a + 1 : 0) + b >= 512) return false;
  char *p = key;
  if (a) memcpy(p, ns, a), p += a, *p++ = '/';
  memcpy(p, name, b + 1);
  return true;
}

/* A reference is an entry: the cached one (its tree is handed out as it is), or for a text
 * entry a loose one made to hold the reader's parse, so both release the same way. The parse
 * runs outside the lock: the entry's reference keeps its text alive. */
const json_object *po_Informer_Get(po_Informer *f, const char *ns, const char *name, po_InformerRef **ref,
                                   po_CtlStatus *st) {
  char key[512];
  *ref = NULL;
  po_CtlStatus_Clear(st);
  if (!key_for(ns, name, key)) return NULL; /* longer than any key cached */
  pthread_rwlock_rdlock(&f->cache_lock);
  po_CacheEntry_ *e = po_Cache_Get_(&f->cache, key);
  if (e) po_CacheEntry_Ref_(e);
  pthread_rwlock_unlock(&f->cache_lock);
  if (!e) return NULL;
  bool owned = false;
  json_tokener *t = e->obj ? NULL : thread_tokener(&owned);
  po_CacheEntry_ *hold;
  const json_object *o = po_CacheEntry_Lend_(e, t, f->resource, &hold, st);
  if (owned) json_tokener_free(t);
  *ref = (po_InformerRef *)hold;
  return o;
}

void po_InformerRef_Release(po_InformerRef *ref) { po_CacheEntry_Unref_((po_CacheEntry_ *)ref); }

bool po_Informer_Version(po_Informer *f, const char *ns, const char *name, po_InformerVersion *v) {
  char key[512];
  *v = (po_InformerVersion){.generation = 0};
  if (!key_for(ns, name, key)) return false;
  pthread_rwlock_rdlock(&f->cache_lock);
  po_CacheEntry_ *e = po_Cache_Get_(&f->cache, key);
  if (e) version_of(e, v);
  pthread_rwlock_unlock(&f->cache_lock);
  return e != NULL;
}

size_t po_Informer_Count(po_Informer *f) {
  pthread_rwlock_rdlock(&f->cache_lock);
  size_t n = f->cache.count;
  pthread_rwlock_unlock(&f->cache_lock);
  return n;
}

typedef struct {
  void (*fn)(void *, const char *, const json_object *, const char *);
  void *ctx;
  size_t unread; /* entries that could not be parsed (out of memory) */
} ForEachCtx;

static void each(void *ctx, po_CacheEntry_ *e) {
  ForEachCtx *c = ctx;
  json_object *o = e->obj ? e->obj : parse_entry(e);
  if (o) c->fn(c->ctx, e->key, o, e->rv);
  else c->unread++;
  if (o != e->obj) json_object_put(o);
}

bool po_Informer_ForEach(po_Informer *f, void (*fn)(void *, const char *, const json_object *, const char *),
                         void *ctx) {
  ForEachCtx c = {fn, ctx, 0};
  pthread_rwlock_rdlock(&f->cache_lock);
  po_Cache_ForEach_(&f->cache, each, &c);
  pthread_rwlock_unlock(&f->cache_lock);
  return c.unread == 0;
}

typedef struct {
  void (*fn)(void *, const char *, const char *);
  void *ctx;
} ForEachKeyCtx;

static void each_key(void *ctx, po_CacheEntry_ *e) {
  ForEachKeyCtx *c = ctx;
  c->fn(c->ctx, e->key, e->rv);
}

void po_Informer_ForEachKey(po_Informer *f, void (*fn)(void *, const char *, const char *), void *ctx) {
  ForEachKeyCtx c = {fn, ctx};
  pthread_rwlock_rdlock(&f->cache_lock);
  po_Cache_ForEach_(&f->cache, each_key, &c);
  pthread_rwlock_unlock(&f->cache_lock);
}

void po_Informer_LastResourceVersion(po_Informer *f, char *buf, size_t size) {
  pthread_mutex_lock(&f->lock);
  snprintf(buf, size, "%s", f->last_rv);
  pthread_mutex_unlock(&f->lock);
}

po_InformerStats po_Informer_Stats(po_Informer *f) {
  pthread_mutex_lock(&f->lock);
  po_InformerStats s = f->stats;
  pthread_mutex_unlock(&f->lock);
  return s;
}

size_t po_Informer_CacheBytes(po_Informer *f) {
  pthread_rwlock_rdlock(&f->cache_lock);
  size_t n = po_Cache_Bytes_(&f->cache);
  pthread_rwlock_unlock(&f->cache_lock);
  return n;
}
