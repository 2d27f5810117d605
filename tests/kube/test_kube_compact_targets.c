/* The cache's compressed texts for Consul targets (white-box: src/cache.h, src/compact.h), as the
 * app keeps ServiceDefaults and ProxyDefaults: no dictionary (po_App_TextOptions). Targets that
 * compress well (the controller's own entries), badly (foreign envoyExtensions with base64 blobs
 * and random UTF-8) or not at all, from 1 KB to the API server's ~1.5 MB limit (frames of many
 * zstd blocks, raw and compressed mixed), managedFields anywhere, and sizes at the thread
 * buffers' doubling edges: every one reads back byte-exact, from 8 threads at once, each packing
 * and unpacking its own while reading the others' entries (each thread's own contexts). At the
 * app's level for targets (-3: no entropy coding of literals) base64 and random UTF-8 barely
 * shrink, and are packed again at level 1 (compact.c); a target of only the controller's entries
 * always shrinks.
 *
 * Seeded: PO_COMPACT_SEED=N replays a run (the seed is printed); PO_COMPACT_CASES=N the number
 * of targets per thread (default 40). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "compact.h"
#include "json_scan.h"

typedef struct {
  char *s;
  size_t n, cap;
} Buf;

static void put(Buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->s = realloc(b->s, b->cap);
    if (!b->s) abort();
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

static void add(Buf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= sizeof tmp) abort();
  put(b, tmp, (size_t)k);
}

static uint64_t mix(uint64_t *r) { /* splitmix64 */
  uint64_t z = (*r += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static unsigned pick(uint64_t *r, unsigned n) { return (unsigned)(mix(r) % n); }

/* n bytes a JSON string may hold: base64, or random UTF-8 (2- and 3-byte sequences), or plain;
 * 4: hex digits, 5: decimal digits (hashes, keys, numbers: test_foreign_text_keeps_level_one_size). */
static void blob(Buf *b, uint64_t *r, size_t n, int kind) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n;) {
    char c[3];
    size_t k = 1;
    if (kind == 0) c[0] = b64[pick(r, 64)];
    else if (kind == 1) {
      unsigned cp = 0x80 + pick(r, 0xd000 - 0x80); /* below the surrogates */
      if (cp < 0x800) c[0] = (char)(0xc0 | (cp >> 6)), c[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
      else c[0] = (char)(0xe0 | (cp >> 12)), c[1] = (char)(0x80 | ((cp >> 6) & 0x3f)), c[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
    } else if (kind == 4) c[0] = "0123456789abcdef"[pick(r, 16)];
    else if (kind == 5) c[0] = (char)('0' + pick(r, 10));
    else c[0] = "abc "[pick(r, 4)];
    put(b, c, k);
    i += k;
  }
}

static void managed_fields(Buf *b, uint64_t *r) {
  add(b, "\"managedFields\":[{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:envoyExtensions\":{}}},\"manager\":\"propertyoverride\",\"operation\":\"Update\",\"time\":\"2026-12-06T05:00:%02uZ\"}],", pick(r, 60));
}

/* A ServiceDefaults of about `size` bytes: the controller's entries and foreign ones whose
 * arguments are blobs of `kind` (3: a mix). */
static void make_target(Buf *b, uint64_t *r, size_t size, int kind) {
  b->n = 0;
  bool mf = pick(r, 2), mf_first = pick(r, 2);
  add(b, "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\",\"metadata\":{");
  if (mf && mf_first) managed_fields(b, r);
  add(b, "\"name\":\"svc-%u\",\"namespace\":\"default\",\"resourceVersion\":\"%u\",\"uid\":\"%08x-0000-4000-8000-000000000000\"",
      pick(r, 1000), pick(r, 1u << 30), pick(r, 1u << 31));
  if (mf && !mf_first) add(b, ","), managed_fields(b, r), b->n--; /* no comma at the end */
  add(b, "},\"spec\":{\"protocol\":\"http\",\"envoyExtensions\":[");
  for (int i = 0; b->n < size; i++) {
    if (i) add(b, ",");
    int k = kind == 3 ? (int)pick(r, 3) : kind;
    if (pick(r, 3) == 0 || kind == 2) {
      add(b, "{\"name\":\"builtin/property-override\",\"required\":false,\"arguments\":{\"Debug\":false,\"ProxyType\":\"connect-proxy\",\"Patches\":[{\"ResourceFilter\":{\"TrafficDirection\":\"outbound\",\"ResourceType\":\"cluster\"},\"Op\":\"add\",\"Path\":\"/upstream_connection_options/tcp_keepalive/keepalive_probes\",\"Value\":%u}],\"propertyoverride.io/owner\":\"default/po-%05d\"}}", pick(r, 9), i);
    } else {
      add(b, "{\"name\":\"builtin/lua\",\"required\":true,\"arguments\":{\"ProxyType\":\"connect-proxy\",\"Listener\":\"inbound\",\"Script\":\"");
      size_t want = size - b->n < 64 ? 1 : 1 + pick(r, (unsigned)(size - b->n < 200000 ? size - b->n : 200000));
      blob(b, r, want, k);
      add(b, "\"}}");
    }
  }
  add(b, "]}}");
}

static po_CacheEntry_ *entry(const char *json, size_t len, const po_TextCodec_ *codec) {
  po_CacheMeta_ m = {.rv = "1", .uid = "u", .generation = 1, .codec = codec};
  po_JsonScan_ManagedFields_(json, len, &m.cut_at, &m.cut_len);
  return po_Cache_NewEntry_("default/svc", NULL, json, len, &m);
}

/* Shared between the threads: each one's latest entry, read by the others. */
enum { kThreads = 8, kSlots = kThreads };
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static po_CacheEntry_ *g_latest[kSlots];
static char *g_want[kSlots];
static po_TextCodec_ *g_codec;
static uint64_t g_seed, g_cases;

typedef struct {
  int id;
  size_t packed, plain, bytes, bad, own_plain;
} Worker;

static bool same(const po_CacheEntry_ *z, const char *want) {
  const char *got = po_CacheEntry_Text_(z);
  return got && strlen(got) == z->json_len && strcmp(got, want) == 0;
}

static void *work(void *arg) {
  Worker *w = arg;
  uint64_t r = g_seed * 1000003u + (uint64_t)w->id;
  Buf b = {0};
  /* sizes at the buffers' doubling edges, then up to the API server's limit */
  static const size_t edges[] = {4095, 4096, 4097, 131071, 131072, 131073, 262143, 524289, 1048575, 1048576, 1500000};
  for (uint64_t i = 0; i < g_cases; i++) {
    size_t size = i < sizeof edges / sizeof *edges ? edges[i] : 512 + pick(&r, i % 4 == 0 ? 1500000 : 60000);
    int kind = (int)pick(&r, 4);
    make_target(&b, &r, size, kind);
    po_CacheEntry_ *p = entry(b.s, b.n, NULL), *z = entry(b.s, b.n, g_codec);
    if (!p || !z) abort();
    char *want = strdup(p->json);
    if (!same(z, want)) {
      w->bad++;
      fprintf(stderr, "thread %d case %" PRIu64 ": %zu bytes (packed %zu) read back differently\n", w->id, i, b.n, z->packed_len);
    }
    w->packed += z->packed_len != 0;
    w->plain += z->packed_len == 0;
    w->own_plain += kind == 2 && z->packed_len == 0;
    w->bytes += b.n;
    /* publish, then read back every other thread's latest while they pack theirs */
    pthread_mutex_lock(&g_lock);
    po_CacheEntry_Unref_(g_latest[w->id]);
    free(g_want[w->id]);
    g_latest[w->id] = z;
    g_want[w->id] = want;
    po_CacheEntry_ *others[kSlots];
    char *wants[kSlots];
    for (int k = 0; k < kSlots; k++) {
      others[k] = g_latest[k];
      wants[k] = g_want[k] ? strdup(g_want[k]) : NULL;
      if (others[k]) po_CacheEntry_Ref_(others[k]);
    }
    pthread_mutex_unlock(&g_lock);
    for (int k = 0; k < kSlots; k++) {
      if (others[k] && !same(others[k], wants[k])) {
        w->bad++;
        fprintf(stderr, "thread %d: thread %d's entry read back differently\n", w->id, k);
      }
      po_CacheEntry_Unref_(others[k]);
      free(wants[k]);
    }
    po_CacheEntry_Unref_(p);
  }
  free(b.s);
  return NULL;
}

static uint64_t env_or(const char *name, uint64_t dflt) {
  const char *v = getenv(name);
  return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static void test_targets_round_trip(void **state) {
  (void)state;
  g_seed = env_or("PO_COMPACT_SEED", (uint64_t)time(NULL));
  g_cases = env_or("PO_COMPACT_CASES", 40);
  printf("test_targets_round_trip: seed %" PRIu64 " (PO_COMPACT_SEED), %" PRIu64 " targets x %d threads\n", g_seed, g_cases,
         kThreads);
  assert_non_null(g_codec = po_TextCodec_New_(NULL, 0, -3)); /* as po_App_TextOptions keeps targets */
  pthread_t t[kThreads];
  Worker w[kThreads] = {{0}};
  for (int i = 0; i < kThreads; i++) {
    w[i].id = i;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  size_t bad = 0, packed = 0, plain = 0, bytes = 0, own_plain = 0;
  for (int i = 0; i < kThreads; i++) {
    pthread_join(t[i], NULL);
    bad += w[i].bad, packed += w[i].packed, plain += w[i].plain, bytes += w[i].bytes, own_plain += w[i].own_plain;
  }
  printf("test_targets_round_trip: %zu kept compressed, %zu as they were, %.1f MB of text\n", packed, plain, bytes / 1e6);
  for (int k = 0; k < kSlots; k++) {
    po_CacheEntry_Unref_(g_latest[k]);
    free(g_want[k]);
  }
  po_TextCodec_Free_(g_codec);
  assert_int_equal(bad, 0);
  /* the controller's own entries repeat themselves: such a target is always kept packed */
  assert_int_equal(own_plain, 0);
  assert_true(packed > 0);
}

/* A foreign blob zstd's level -3 cannot shrink (it does not entropy-code literals) but level 1
 * can: hex (a hash, a key), decimal digits, base64, random UTF-8, in a target of the controller's
 * entries. Kept at the app's level for targets, such a target must not cost much more than it did
 * at level 1: a tenant's ServiceDefaults of 1.5 MB of hex is 1.5 MB kept at -3 against 0.74 MB at
 * level 1 (twice the memory per target, and the README promises only base64 may not shrink). The
 * bound: at most 5% of the text more than level 1 keeps (the controller's own entries, 2% at 1.5 MB,
 * stay within it). */
static void test_foreign_text_keeps_level_one_size(void **state) {
  (void)state;
  po_TextCodec_ *app = po_TextCodec_New_(NULL, 0, -3), *one = po_TextCodec_New_(NULL, 0, 1);
  assert_non_null(app);
  assert_non_null(one);
  static const int kinds[] = {4, 5, 0, 1, 2};
  static const char *const names[] = {"hex", "digits", "base64", "utf-8", "own"};
  static const size_t sizes[] = {200000, 1500000};
  Buf b = {0};
  size_t over = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
      uint64_t r = 1000 * k + z;
      b.n = 0;
      make_target(&b, &r, 20000, 2); /* 50-odd of the controller's entries, then one foreign blob */
      if (kinds[k] != 2) {
        b.n -= 3; /* before "]}}" */
        add(&b, ",{\"name\":\"builtin/lua\",\"required\":true,\"arguments\":{\"Script\":\"");
        blob(&b, &r, sizes[z] - b.n, kinds[k]);
        add(&b, "\"}}]}}");
      } else {
        make_target(&b, &r, sizes[z], 2);
      }
      const char *out;
      size_t pa = po_TextCodec_Pack_(app, b.s, b.n, "", 0, &out), p1 = po_TextCodec_Pack_(one, b.s, b.n, "", 0, &out);
      size_t ka = pa ? pa : b.n, k1 = p1 ? p1 : b.n;
      printf("test_foreign_text_keeps_level_one_size: %-6s %7zu bytes: %7zu kept at the app's level, %7zu at level 1\n", names[k], b.n, ka, k1);
      if (ka > k1 + b.n / 20) over++;
    }
  }
  free(b.s);
  po_TextCodec_Free_(app);
  po_TextCodec_Free_(one);
  assert_int_equal(over, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_targets_round_trip),
      cmocka_unit_test(test_foreign_text_keeps_level_one_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
