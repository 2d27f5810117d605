/* --state FILE: every object and the resourceVersion counter, as one JSON document, written
 * atomically (temp file, fsync, rename) by a flusher thread at most every 50 ms after changes
 * (longer for large states, see flush_loop), and at shutdown. A crash loses at most the last
 * interval; the file is never half-written. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apiserver.h"

static pthread_t flusher;
static bool flusher_running, flusher_stop;
static char *state_path;

bool po_As_Persist_Load(const char *path, char *msg, size_t msgsz) {
  FILE *f = fopen(path, "rb");
  if (!f) return true; /* first start */
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  buf[got] = 0;
  json_tokener *tok = json_tokener_new_ex(kPo_As_MaxJsonDepth + 3); /* objects inside the file's lists */
  json_object *doc = tok ? json_tokener_parse_ex(tok, buf, (int)got) : NULL;
  json_tokener_free(tok);
  free(buf);
  json_object *objs = po_As_Get(doc, "objects");
  if (!doc || !objs || !json_object_is_type(objs, json_type_array)) {
    snprintf(msg, msgsz, "%s: not a po-apiserver state file", path);
    json_object_put(doc);
    return false;
  }
  /* CRDs first, so their resources exist when custom objects are loaded */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < json_object_array_length(objs); i++) {
      json_object *e = json_object_array_get_idx(objs, i);
      const char *g = po_As_GetStr(e, "group"), *rsc = po_As_GetStr(e, "resource");
      json_object *o = po_As_Get(e, "object");
      if (!g || !rsc || !o) continue;
      bool is_crd = !strcmp(g, "apiextensions.k8s.io") && !strcmp(rsc, "customresourcedefinitions");
      if ((pass == 0) != is_crd) continue;
      if (is_crd) {
        char m[256];
        if (!po_As_Registry_ApplyCrd(o, m, sizeof m)) po_As_Log(kPo_As_LogWarn, "state: CRD: %s", m);
      }
      po_As_Resource *r = po_As_Registry_FindGR(g, rsc);
      if (!r) {
        po_As_Log(kPo_As_LogWarn, "state: no resource %s/%s; object skipped", g, rsc);
        continue;
      }
      char *key = po_As_Key(r->namespaced ? po_As_MetaStr(o, "namespace") : NULL, po_As_MetaStr(o, "name"));
      if (r->nitems == r->capitems) {
        r->capitems = r->capitems ? r->capitems * 2 : 16;
        r->items = realloc(r->items, r->capitems * sizeof *r->items);
      }
      /* the file is written in key order, so appending keeps the array sorted; check anyway */
      if (r->nitems && strcmp(r->items[r->nitems - 1].key, key) >= 0) {
        po_As_Log(kPo_As_LogWarn, "state: %s out of order; skipped", key);
        free(key);
        continue;
      }
      r->items[r->nitems].key = key;
      r->items[r->nitems].obj = json_object_get(o);
      r->nitems++;
    }
  }
  po_as.rv = (uint64_t)json_object_get_int64(po_As_Get(doc, "resourceVersion"));
  po_as.compacted_rv = po_as.rv;
  json_object_put(doc);
  return true;
}

typedef struct Buf {
  char *p;
  size_t n, cap;
} Buf;

static void add(Buf *b, const char *s) {
  size_t n = strlen(s);
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, s, n + 1);
  b->n += n;
}

/* Lock held: the whole state as text. */
static char *snapshot(void) {
  Buf b = {0};
  char head[64];
  snprintf(head, sizeof head, "{\"resourceVersion\":%" PRIu64 ",\"objects\":[", po_as.rv);
  add(&b, head);
  bool first = true;
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered) continue;
    for (size_t j = 0; j < r->nitems; j++) {
      char *o = po_As_Serialize(r->items[j].obj, NULL);
      char *e = po_As_Printf("%s{\"group\":\"%s\",\"resource\":\"%s\",\"object\":%s}", first ? "" : ",\n", r->group, r->plural, o);
      add(&b, e);
      free(e);
      free(o);
      first = false;
    }
  }
  add(&b, "]}\n");
  return b.p;
}

static void flush_now(void) {
  pthread_mutex_lock(&po_as.mu);
  if (!po_as.dirty) {
    pthread_mutex_unlock(&po_as.mu);
    return;
  }
  po_as.dirty = false;
  char *text = snapshot();
  pthread_mutex_unlock(&po_as.mu);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", state_path);
  FILE *f = fopen(tmp, "wb");
  bool ok = f != NULL;
  if (f) {
    ok = fwrite(text, 1, strlen(text), f) == strlen(text);
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    fclose(f);
  }
  if (!ok || rename(tmp, state_path) != 0) {
    po_As_Log(kPo_As_LogError, "state: writing %s failed", state_path);
    pthread_mutex_lock(&po_as.mu);
    po_as.dirty = true;
    pthread_mutex_unlock(&po_as.mu);
  }
  free(text);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* The pause between flushes is 50 ms, or 4x the last flush when the state is large, so that
 * snapshots (taken under the lock) never hold the server for more than a fifth of the time. */
static void *flush_loop(void *arg) {
  (void)arg;
  long pause = 50;
  for (;;) {
    struct timespec ts = {pause / 1000, (pause % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    long t0 = now_ms();
    pthread_mutex_lock(&po_as.mu);
    bool stop = flusher_stop;
    pthread_mutex_unlock(&po_as.mu);
    flush_now();
    if (stop) return NULL;
    long took = now_ms() - t0;
    pause = took * 4 > 50 ? (took * 4 < 5000 ? took * 4 : 5000) : 50;
  }
}

void po_As_Persist_Start(const char *path) {
  state_path = strdup(path);
  po_as.dirty = true;
  flusher_running = pthread_create(&flusher, NULL, flush_loop, NULL) == 0;
}

void po_As_Persist_Stop(void) {
  if (!state_path) return;
  if (flusher_running) {
    pthread_mutex_lock(&po_as.mu);
    flusher_stop = true;
    pthread_mutex_unlock(&po_as.mu);
    pthread_join(flusher, NULL);
  }
  flush_now();
  free(state_path);
  state_path = NULL;
}
