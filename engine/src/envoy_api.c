/* po_EnvoyApi: the embedded Envoy API snapshots (proto/'s po_Schema_Snapshot*), one static
 * record each, and the schema each loads on first use. The engine has no "current" snapshot:
 * every lookup is handed one (po_CompileOptions.api, an `api` parameter) or reads it from the
 * object it works on (a compiled override, a po_Message, a config dump). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* More snapshots than this are a build mistake, not a reason to allocate: proto/ embeds one per
 * go-control-plane version the supported mesh releases pin (three). */
enum { kMaxApis = 16 };

struct po_EnvoyApi {
  size_t index;        /* proto/'s snapshot index */
  const char *version; /* proto/'s "v1.37.0" (static) */
  int major, minor;    /* of the version; -1 when it is no "vX.Y.Z" */
  char name[64];       /* "go-control-plane envoy v1.37.0" */
  /* The schema, once loaded: the hot paths (compile, decode) read it with one load instead of
   * asking proto/ (a pthread_once each). NULL until then. */
  _Atomic(const po_Schema *) schema;
};

static po_EnvoyApi g_apis[kMaxApis];
static size_t g_count, g_default;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* A number of `s` into *out, returning the character after it; NULL when there is none. */
static const char *number(const char *s, int *out) {
  if (*s < '0' || *s > '9') return NULL;
  int n = 0;
  for (; *s >= '0' && *s <= '9' && n < 100000; s++) n = n * 10 + (*s - '0');
  *out = n;
  return s;
}

/* "v1.37.0" -> 1, 37; false for anything else (a snapshot not named by a module version). By
 * hand, not sscanf: every one-shot command pays this at start (docs/benchmarks.md, "CLI"). */
static bool parse_version(const char *v, int *major, int *minor) {
  int patch;
  const char *p = v && *v == 'v' ? number(v + 1, major) : NULL;
  p = p && *p == '.' ? number(p + 1, minor) : NULL;
  p = p && *p == '.' ? number(p + 1, &patch) : NULL;
  return p && *p == '\0';
}

static void init(void) {
  static const char kPrefix[] = "go-control-plane envoy ";
  size_t n = po_Schema_SnapshotCount();
  g_count = n < kMaxApis ? n : kMaxApis;
  for (size_t i = 0; i < g_count; i++) {
    po_EnvoyApi *a = &g_apis[i];
    a->index = i;
    a->version = po_Schema_SnapshotVersion(i);
    if (!a->version) a->version = "unknown";
    if (!parse_version(a->version, &a->major, &a->minor)) a->major = a->minor = -1;
    /* A module version is go-control-plane's; any other name stands for itself. */
    size_t pre = a->major >= 0 ? sizeof kPrefix - 1 : 0, vl = strlen(a->version);
    if (pre + vl >= sizeof a->name) vl = sizeof a->name - 1 - pre;
    memcpy(a->name, kPrefix, pre);
    memcpy(a->name + pre, a->version, vl);
    a->name[pre + vl] = '\0';
  }
  g_default = po_Schema_SnapshotDefault();
  if (g_default >= g_count) g_default = 0;
}

static inline void ensure(void) { pthread_once(&g_once, init); }

size_t po_EnvoyApi_Count(void) {
  ensure();
  return g_count;
}

const po_EnvoyApi *po_EnvoyApi_At(size_t i) {
  ensure();
  return i < g_count ? &g_apis[i] : NULL;
}

const po_EnvoyApi *po_EnvoyApi_Default(void) {
  ensure();
  return g_count ? &g_apis[g_default] : NULL;
}

const po_EnvoyApi *po_EnvoyApi_Newest(void) {
  ensure();
  return g_count ? &g_apis[g_count - 1] : NULL;
}

const po_EnvoyApi *po_EnvoyApi_Find(const char *version) {
  ensure();
  if (!version) return NULL;
  for (size_t i = 0; i < g_count; i++) {
    const char *v = g_apis[i].version;
    /* "1.37.0" names "v1.37.0" too: both are how people write a module version */
    if (!strcmp(v, version) || (v[0] == 'v' && !strcmp(v + 1, version))) return &g_apis[i];
  }
  return NULL;
}

const char *po_EnvoyApi_Version(const po_EnvoyApi *api) {
  api = po_EnvoyApi_Or_(api);
  return api ? api->version : "none";
}

const char *po_EnvoyApi_Name(const po_EnvoyApi *api) {
  api = po_EnvoyApi_Or_(api);
  return api ? api->name : "no embedded Envoy API";
}

const po_EnvoyApi *po_EnvoyApi_ForEnvoy(int major, int minor) {
  ensure();
  /* oldest first: the first at least as new as the proxy (an API version vX.Y.Z is Envoy X.Y's) */
  for (size_t i = 0; i < g_count; i++) {
    const po_EnvoyApi *a = &g_apis[i];
    if (a->major > major || (a->major == major && a->minor >= minor)) return a;
  }
  return po_EnvoyApi_Newest();
}

const po_EnvoyApi *po_EnvoyApi_Or_(const po_EnvoyApi *api) { return api ? api : po_EnvoyApi_Default(); }
size_t po_EnvoyApi_Index_(const po_EnvoyApi *api) { return po_EnvoyApi_Or_(api)->index; }

const po_Schema *po_EnvoyApi_Schema_(const po_EnvoyApi *api, po_Arena *a, po_Status *st) {
  api = po_EnvoyApi_Or_(api);
  if (!api) {
    if (st) po_Status_Set(st, kPo_Status_NotFound, "no Envoy API snapshot is embedded in this build");
    return NULL;
  }
  po_EnvoyApi *w = (po_EnvoyApi *)api; /* the record is static: only its cache is written */
  const po_Schema *s = atomic_load_explicit(&w->schema, memory_order_acquire);
  if (s) return s;
  po_Status local;
  po_Status_Clear(&local);
  s = po_Schema_GetSnapshot(api->index, st ? st : &local);
  if (!s) {
    /* An embedded snapshot that did not load ran out of memory (proto/ says so in the status):
     * this call's failure, noted in its arena; nothing is kept, the next call loads again. */
    po_Arena_NoteOutOfMemory_(a);
    return NULL;
  }
  atomic_store_explicit(&w->schema, s, memory_order_release);
  return s;
}

const po_EnvoyApi *po_EnvoyApi_OfSchema_(const po_Schema *s) {
  return s ? po_EnvoyApi_Find(po_Schema_Version(s)) : NULL;
}

bool po_EnvoyApi_OnDemandOutOfMemory_(void) {
  ensure();
  for (size_t i = 0; i < g_count; i++) {
    const po_Schema *s = atomic_load_explicit(&g_apis[i].schema, memory_order_acquire);
    if (s && po_Schema_OutOfMemory(s)) return true;
  }
  return false;
}

const char *po_EnvoyApi_Snapshot(void) { return po_Schema_Snapshot(); }
bool po_EnvoyApi_LoadOnDemand(void) { return po_Schema_LoadOnDemand(); }
