/* Loading the embedded Envoy descriptor set into a upb pool, and name lookups. */
#include "po/schema.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "google/protobuf/descriptor.upb.h"
#include "schema_index.h"
#include "schema_internal.h"

static const struct {
  const char *type;
  const char *message;
} kResources[] = {
    {"cluster", "envoy.config.cluster.v3.Cluster"},
    {"cluster-load-assignment", "envoy.config.endpoint.v3.ClusterLoadAssignment"},
    {"route", "envoy.config.route.v3.RouteConfiguration"},
    {"listener", "envoy.config.listener.v3.Listener"},
};
enum { kResourceCount = sizeof kResources / sizeof kResources[0] };

po_Schema *po_Schema_New(const void *set, size_t size, po_Status *status) {
  po_Schema *s = calloc(1, sizeof *s);
  if (!s) return po_Status_Set(status, kPo_Status_NoMemory, "schema: out of memory"), NULL;
  s->pool = upb_DefPool_New();
  upb_Arena *tmp = upb_Arena_New();
  if (!s->pool || !tmp) {
    po_Status_Set(status, kPo_Status_NoMemory, "schema: out of memory");
    goto fail;
  }
  const google_protobuf_FileDescriptorSet *fds =
      google_protobuf_FileDescriptorSet_parse((const char *)set, size, tmp);
  if (!fds) {
    po_Status_Set(status, kPo_Status_Parse, "schema: the descriptor set is not a FileDescriptorSet");
    goto fail;
  }
  size_t n = 0;
  const google_protobuf_FileDescriptorProto *const *files =
      google_protobuf_FileDescriptorSet_file(fds, &n);
  for (size_t i = 0; i < n; i++) {
    upb_Status st;
    upb_Status_Clear(&st);
    if (!upb_DefPool_AddFile(s->pool, files[i], &st)) {
      upb_StringView name = google_protobuf_FileDescriptorProto_name(files[i]);
      po_Status_Set(status, kPo_Status_Parse, "schema: %.*s: %s", (int)name.size, name.data,
                    upb_Status_ErrorMessage(&st));
      goto fail;
    }
  }
  s->file_count = n;
  s->complete = true;
  upb_Arena_Free(tmp);
  tmp = NULL;
  for (int i = 0; i < kResourceCount; i++) {
    s->resources[i] = upb_DefPool_FindMessageByName(s->pool, kResources[i].message);
    if (!s->resources[i]) {
      po_Status_Set(status, kPo_Status_NotFound, "schema: %s is not in the descriptor set",
                    kResources[i].message);
      goto fail;
    }
  }
  /* Optional: without validate.proto there are simply no rules to check. */
  po_Schema_FindRuleDefs_(s);
  return s;
fail:
  if (tmp) upb_Arena_Free(tmp);
  po_Schema_Free(s);
  return NULL;
}

void po_Schema_Free(po_Schema *s) {
  if (!s) return;
  if (s->pool) upb_DefPool_Free(s->pool);
  po_Schema_FreeNames_(s);
  po_Schema_FreeRules_(s);
  po_Schema_FreeCaches_(s);
  free(s->loaded);
  free(s);
}

/* ---- on demand --------------------------------------------------------------------------------
 * Loading all of a snapshot costs about 25 M instructions (7.5 M to parse its 0.5 MB set,
 * 18 M to build the defs of its ~400 files), 5x what a one-shot `validate -f` may spend in all.
 * A Cluster patch needs the ~90 files Cluster imports, transitively. On demand, the build-time
 * index (proto/tools/index.c) says where each file's bytes are, what it imports and which file
 * defines each name, so a lookup loads that file and its imports (imports first, as
 * upb_DefPool_AddFile requires) and nothing else. Adding to a upb_DefPool is not thread-safe,
 * so this is for single-threaded processes; the controller loads everything once. */

/* The process-wide schema's mode: chosen before its first load, fixed by that load. */
enum { kMode_Unset, kMode_OnDemand, kMode_Whole };
static _Atomic int g_mode = kMode_Unset;

bool po_Schema_LoadOnDemand(void) {
  int m = kMode_Unset;
  return atomic_compare_exchange_strong(&g_mode, &m, kMode_OnDemand) || m == kMode_OnDemand;
}

/* Adds file i after its imports; false when the set is broken (it cannot be: it loaded whole
 * at build time, but a failure is said, not hidden). Recursion depth is the import depth. */
static bool load_file(po_Schema *s, size_t i, upb_Arena *tmp, po_Status *status) {
  if (s->loaded[i]) return true;
  const po_SchemaFileIndex *fi = &s->snapshot->files[i];
  for (uint32_t d = 0; d < fi->dep_count; d++) {
    if (!load_file(s, s->snapshot->deps[fi->deps + d], tmp, status)) return false;
  }
  const google_protobuf_FileDescriptorProto *file = google_protobuf_FileDescriptorProto_parse(
      (const char *)po_envoy_pieces + fi->offset, fi->size, tmp);
  upb_Status st;
  upb_Status_Clear(&st);
  if (!file || !upb_DefPool_AddFile(s->pool, file, &st)) {
    po_Status_Set(status, kPo_Status_Parse, "schema: file %zu of the embedded set %s: %s", i,
                  s->snapshot->version, file ? upb_Status_ErrorMessage(&st) : "does not parse");
    return false;
  }
  s->loaded[i] = 1;
  return true;
}

/* A failure here is memory: the embedded set loaded whole at build time (test_schema_on_demand
 * loads every piece), so it is recorded as such (po_Schema_OutOfMemory) and never taken for a
 * missing name. On demand only: that schema is a single-threaded one-shot process's, whose one
 * command is the call the failure belongs to; a schema loaded whole never sets it. */
static bool load_files(po_Schema *s, size_t first, size_t end, po_Status *status) {
  upb_Arena *tmp = upb_Arena_New();
  if (!tmp) {
    s->oom = true;
    return po_Status_Set(status, kPo_Status_NoMemory, "schema: out of memory"), false;
  }
  bool ok = true;
  for (size_t i = first; ok && i < end; i++) ok = load_file(s, i, tmp, status);
  upb_Arena_Free(tmp);
  if (!ok) s->oom = true;
  return ok;
}

long po_Schema_FileOf_(const po_SchemaSnapshotIndex *snap, const char *name, size_t len) {
  size_t lo = 0, hi = snap->symbol_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const char *sym = (const char *)po_envoy_symbol_names + snap->symbols[mid].name;
    int c = strncmp(sym, name, len);
    if (c == 0 && sym[len] != '\0') c = 1;
    if (c == 0) return (long)snap->symbols[mid].file;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/* Loads the file defining `name` (not NUL-terminated) and its imports; false when no file does
 * or it would not load. */
static bool need_symbol(po_Schema *s, const char *name, size_t len) {
  if (s->complete) return false;
  long f = po_Schema_FileOf_(s->snapshot, name, len);
  po_Status st;
  po_Status_Clear(&st);
  return f >= 0 && !s->loaded[f] && load_files(s, (size_t)f, (size_t)f + 1, &st);
}

static po_Schema *new_on_demand(const po_SchemaSnapshotIndex *snap, po_Status *status) {
  po_Schema *s = calloc(1, sizeof *s);
  if (s) s->loaded = calloc(snap->file_count ? snap->file_count : 1, 1);
  if (s) s->pool = upb_DefPool_New();
  if (!s || !s->loaded || !s->pool) {
    po_Schema_Free(s);
    return po_Status_Set(status, kPo_Status_NoMemory, "schema: out of memory"), NULL;
  }
  s->file_count = snap->file_count;
  s->snapshot = snap;
  return s;
}

void po_Schema_NeedRules_(const po_Schema *cs) {
  po_Schema *s = (po_Schema *)cs; /* on demand only: the pool grows behind the const view */
  if (s->complete || s->rules_ext) return;
  static const char kOpts[] = "google.protobuf.FieldOptions", kRules[] = "validate.rules";
  need_symbol(s, kOpts, sizeof kOpts - 1);
  need_symbol(s, kRules, sizeof kRules - 1); /* validate.required is in the same file */
  po_Schema_FindRuleDefs_(s);
}

void po_Schema_FindRuleDefs_(po_Schema *s) {
  s->field_options = upb_DefPool_FindMessageByName(s->pool, "google.protobuf.FieldOptions");
  s->rules_ext = upb_DefPool_FindExtensionByName(s->pool, "validate.rules");
  s->oneof_options = upb_DefPool_FindMessageByName(s->pool, "google.protobuf.OneofOptions");
  s->required_ext = upb_DefPool_FindExtensionByName(s->pool, "validate.required");
}

void po_Schema_NeedJsonTypes_(const po_Schema *cs, const char *json, size_t len) {
  po_Schema *s = (po_Schema *)cs;
  if (s->complete) return;
  static const char kKey[] = "\"@type\"";
  const char *end = json + len;
  for (const char *p = json; p < end && (p = memchr(p, '"', (size_t)(end - p))) != NULL; p++) {
    if ((size_t)(end - p) < sizeof kKey || memcmp(p, kKey, sizeof kKey - 1) != 0) continue;
    const char *v = p + sizeof kKey - 1;
    while (v < end && strchr(" \t\r\n:", *v) && *v) v++;
    if (v >= end || *v != '"') continue;
    v++;
    const char *q = memchr(v, '"', (size_t)(end - v));
    if (!q) return;
    /* "type.googleapis.com/envoy.config.cluster.v3.Cluster": the name after the last '/'. */
    const char *name = v;
    for (const char *c = v; c < q; c++) if (*c == '/') name = c + 1;
    need_symbol(s, name, (size_t)(q - name));
    p = q;
  }
}

bool po_Schema_NeedAll_(const po_Schema *cs) {
  po_Schema *s = (po_Schema *)cs;
  if (s->complete) return false;
  po_Status st;
  po_Status_Clear(&st);
  bool ok = load_files(s, 0, s->snapshot->file_count, &st);
  s->complete = ok;
  /* po_Schema_NeedRules_ does nothing once the pool is complete: find the rules here, as a full
   * load does (without them, every later value would go unchecked by Envoy's rules). */
  if (ok && !s->rules_ext) po_Schema_FindRuleDefs_(s);
  return ok;
}

/* ---- the process-wide schemas ----------------------------------------------------------------- */

unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size) {
  if (i >= po_envoy_snapshot_count) return NULL;
  const po_SchemaSnapshotIndex *snap = &po_envoy_snapshots[i];
  unsigned char *set = malloc(snap->set_size ? snap->set_size : 1), *p = set;
  if (!set) return NULL;
  for (size_t f = 0; f < snap->file_count; f++) {
    const po_SchemaFileIndex *fi = &snap->files[f];
    *p++ = 0x0a; /* FileDescriptorSet.file */
    for (uint32_t v = fi->size; ; v >>= 7) {
      *p++ = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      if (v <= 0x7f) break;
    }
    memcpy(p, po_envoy_pieces + fi->offset, fi->size);
    p += fi->size;
  }
  *size = (size_t)(p - set);
  return set;
}

/* One per snapshot, loaded on its first use: `done` is set (release) once `schema` is complete,
 * so a later caller reads it without the lock. A load that fails (memory: the embedded set
 * loaded at build time) leaves `done` unset: the failure is the asking caller's (its status),
 * and the next caller loads again, under the lock, instead of the process keeping it. */
typedef struct {
  pthread_mutex_t lock;
  _Atomic bool done;
  po_Schema *schema;
} Slot;
static Slot g_slots[kPo_SchemaMaxSnapshots] = {
    {.lock = PTHREAD_MUTEX_INITIALIZER}, {.lock = PTHREAD_MUTEX_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER}, {.lock = PTHREAD_MUTEX_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER}, {.lock = PTHREAD_MUTEX_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER}, {.lock = PTHREAD_MUTEX_INITIALIZER}};
_Static_assert(kPo_SchemaMaxSnapshots == 8, "g_slots initializes eight locks");

/* Whole: the snapshot's set reassembled from the shared pieces, then loaded as po_Schema_New
 * loads any set (the copy costs a memcpy of ~0.6 MB against ~25 M instructions of upb). */
static po_Schema *load_snapshot(size_t i, po_Status *status) {
  int m = kMode_Unset;
  bool on_demand = !atomic_compare_exchange_strong(&g_mode, &m, kMode_Whole) && m == kMode_OnDemand;
  if (on_demand) return new_on_demand(&po_envoy_snapshots[i], status);
  size_t size = 0;
  unsigned char *set = po_Schema_SnapshotSet_(i, &size);
  po_Schema *s = set ? po_Schema_New(set, size, status) : NULL;
  free(set);
  if (!s) {
    /* the embedded set loaded whole at build time (tests/proto): what failed is memory, though
     * upb may word it as a parse error */
    po_Status_Set(status, kPo_Status_NoMemory, "schema: out of memory loading the embedded Envoy API %s",
                  po_envoy_snapshots[i].version);
    return NULL;
  }
  s->snapshot = &po_envoy_snapshots[i];
  return s;
}

size_t po_Schema_SnapshotCount(void) { return po_envoy_snapshot_count; }
const char *po_Schema_SnapshotVersion(size_t i) {
  return i < po_envoy_snapshot_count ? po_envoy_snapshots[i].version : NULL;
}
size_t po_Schema_SnapshotDefault(void) { return po_envoy_snapshot_default; }
const char *po_Schema_Version(const po_Schema *s) { return s && s->snapshot ? s->snapshot->version : NULL; }

const po_Schema *po_Schema_GetSnapshot(size_t i, po_Status *status) {
  if (i >= po_envoy_snapshot_count) {
    po_Status_Set(status, kPo_Status_NotFound, "schema: no snapshot %zu (%zu embedded)", i, po_envoy_snapshot_count);
    return NULL;
  }
  Slot *slot = &g_slots[i];
  if (atomic_load_explicit(&slot->done, memory_order_acquire)) return slot->schema;
  pthread_mutex_lock(&slot->lock);
  po_Schema *s = slot->schema; /* another caller may have loaded it while this one waited */
  if (!s) {
    po_Status st;
    po_Status_Clear(&st);
    s = slot->schema = load_snapshot(i, &st);
    if (s) atomic_store_explicit(&slot->done, true, memory_order_release);
    else if (status) *status = st;
  }
  pthread_mutex_unlock(&slot->lock);
  return s;
}

bool po_Schema_SnapshotLoaded(size_t i) {
  return i < po_envoy_snapshot_count && atomic_load_explicit(&g_slots[i].done, memory_order_acquire);
}

const po_Schema *po_Schema_Get(po_Status *status) { return po_Schema_GetSnapshot(po_envoy_snapshot_default, status); }

const upb_DefPool *po_Schema_Pool(const po_Schema *s) { return s->pool; }
bool po_Schema_OutOfMemory(const po_Schema *s) { return s && s->oom; }
size_t po_Schema_FileCount(const po_Schema *s) { return s->file_count; }

#ifndef PO_ENVOY_API_SNAPSHOT
#define PO_ENVOY_API_SNAPSHOT "unknown"
#endif
const char *po_Schema_Snapshot(void) { return PO_ENVOY_API_SNAPSHOT; }

const upb_MessageDef *po_Schema_FindMessage(const po_Schema *s, const char *name) {
  if (!name) return NULL;
  const upb_MessageDef *m = upb_DefPool_FindMessageByName(s->pool, name);
  if (!m && need_symbol((po_Schema *)s, name, strlen(name))) m = upb_DefPool_FindMessageByName(s->pool, name);
  return m;
}

const upb_MessageDef *po_Schema_ResourceMessage(const po_Schema *cs, const char *type) {
  if (!type) return NULL;
  po_Schema *s = (po_Schema *)cs; /* on demand, found once and kept */
  for (int i = 0; i < kResourceCount; i++) {
    if (strcmp(kResources[i].type, type) != 0) continue;
    if (!s->resources[i]) s->resources[i] = po_Schema_FindMessage(s, kResources[i].message);
    return s->resources[i];
  }
  return NULL;
}

const char *po_Schema_ResourceTypeOf(const upb_MessageDef *m) {
  const char *name = upb_MessageDef_FullName(m);
  for (int i = 0; i < kResourceCount; i++) {
    if (strcmp(kResources[i].message, name) == 0) return kResources[i].type;
  }
  return NULL;
}
