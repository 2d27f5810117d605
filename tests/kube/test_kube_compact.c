/* The cache's compressed texts (white-box: src/cache.h, src/compact.h): every text reads back
 * exactly as stored (managedFields cut, as for a plain entry), and a PropertyOverride as the
 * converged one looks on a real API server (fields, names and peers of many shapes, not one
 * workload's) keeps the bytes it is bounded to.
 *
 * Seeded: PO_COMPACT_SEED=N replays a run (the seed is printed); PO_COMPACT_CASES=N sets the
 * number of generated objects (default 4,000). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../seeded.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cache.h"
#include "compact.h"
#include "json_scan.h"

/* The app's PropertyOverride dictionary (controller/app/src/override_dict.c). */
extern const char kPo_App_OverrideDictionary[];
extern const size_t kPo_App_OverrideDictionaryLen;

static uint64_t g_rng;
static uint64_t next(void) { return po_Seeded_Next(&g_rng); }
static unsigned pick(unsigned n) { return po_Seeded_Pick(&g_rng, n); }

static uint64_t env_or(const char *name, uint64_t dflt) {
  const char *v = getenv(name);
  return v && *v ? strtoull(v, NULL, 10) : dflt;
}

/* A growable text. */
typedef struct {
  char *s;
  size_t n, cap;
} Buf;

static void add(Buf *b, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int k = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  assert_true(k >= 0);
  if (b->n + (size_t)k + 1 > b->cap) {
    b->cap = (b->n + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    assert_non_null(b->s);
  }
  vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
  b->n += (size_t)k;
  va_end(ap);
}

static void uid(char *out) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 0, j = 0; i < 36; i++) out[i] = i == 8 || i == 13 || i == 18 || i == 23 ? '-' : hex[(next() >> (j++ % 60)) & 15];
  out[36] = '\0';
}

static void stamp(char *out, size_t size) {
  snprintf(out, size, "2026-%02u-%02uT%02u:%02u:%02uZ", 1 + pick(12), 1 + pick(28), pick(24), pick(60), pick(60));
}

/* A name: of the shapes users give (words and numbers), sometimes with characters JSON escapes. */
static void name(char *out, size_t size, const char *prefix) {
  static const char *odd[] = {"\\u00e9", "\\\"", "\\\\", "\\n", "\\u2028", "-x.y"};
  static const char *word[] = {"payments", "checkout", "retries", "timeouts", "edge", "api", "canary", "eu-west"};
  switch (pick(4)) {
  case 0: snprintf(out, size, "%s-%06u", prefix, pick(1000000)); break;
  case 1: snprintf(out, size, "%s-%s", word[pick(8)], word[pick(8)]); break;
  case 2: snprintf(out, size, "%s-%s-%u", word[pick(8)], prefix, pick(100)); break;
  default: snprintf(out, size, "%s%s%u", prefix, odd[pick(6)], pick(1000)); break;
  }
}

/* What a patch sets, of several resource types and fields (not only the benchmark's one). */
typedef struct {
  const char *type, *dir, *path, *message;
} Field;

static const Field kFields[] = {
    {"cluster", "outbound", "/outlier_detection/max_ejection_percent", "envoy.config.cluster.v3.OutlierDetection.max_ejection_percent"},
    {"cluster", "outbound", "/connect_timeout", "envoy.config.cluster.v3.Cluster.connect_timeout"},
    {"cluster", "inbound", "/circuit_breakers/thresholds", "envoy.config.cluster.v3.CircuitBreakers.thresholds"},
    {"listener", "inbound", "/per_connection_buffer_limit_bytes", "envoy.config.listener.v3.Listener.per_connection_buffer_limit_bytes"},
    {"listener", "outbound", "/tcp_fast_open_queue_length", "envoy.config.listener.v3.Listener.tcp_fast_open_queue_length"},
    {"route", "outbound", "/virtual_hosts/0/retry_policy/num_retries", "envoy.config.route.v3.RetryPolicy.num_retries"},
    {"cluster-load-assignment", "outbound", "/policy/overprovisioning_factor", "envoy.config.endpoint.v3.ClusterLoadAssignment.Policy.overprovisioning_factor"},
};

/* One PropertyOverride as the API server serves it (keys sorted), in one of the states it goes
 * through: created, finalizer added, status written (valid, overlapping up to three peers, invalid
 * with a last valid generation kept), being deleted; with managedFields when full is set. */
static void make_override(Buf *b, bool full, bool converged) {
  char id[40], ts[32], when[32], po[64], svc[64], ns[24];
  uid(id);
  stamp(ts, sizeof ts);
  stamp(when, sizeof when);
  name(po, sizeof po, "po");
  name(svc, sizeof svc, "svc");
  snprintf(ns, sizeof ns, pick(2) ? "default" : "team-%u", pick(50));
  unsigned gen = 1 + pick(converged ? 1 : 5), value = 1 + pick(99), state = converged ? 2 : pick(5), npatch = 1 + (converged ? 0 : pick(3));
  b->n = 0;
  add(b, "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{");
  add(b, "\"creationTimestamp\":\"%s\",", ts);
  if (state == 4) add(b, "\"deletionGracePeriodSeconds\":0,\"deletionTimestamp\":\"%s\",", when);
  if (state >= 1) add(b, "\"finalizers\":[\"propertyoverride.io/finalizer\"],");
  add(b, "\"generation\":%u,", gen);
  if (full) {
    add(b, "\"managedFields\":[{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"
           "{\"f:spec\":{\".\":{},\"f:patches\":{},\"f:targetRef\":{\".\":{},\"f:name\":{}}}},\"manager\":\"python\","
           "\"operation\":\"Update\",\"time\":\"%s\"}", ts);
    if (state >= 1)
      add(b, ",{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":"
             "{\"f:finalizers\":{\".\":{},\"v:\\\"propertyoverride.io/finalizer\\\"\":{}}}},\"manager\":\"propertyoverride\","
             "\"operation\":\"Update\",\"time\":\"%s\"}", when);
    add(b, "],");
  }
  add(b, "\"name\":\"%s\",\"namespace\":\"%s\",\"resourceVersion\":\"%u\",\"uid\":\"%s\"},", po, ns, 1000 + pick(9000000), id);
  Buf spec = {0};
  add(&spec, "{\"patches\":[");
  const Field *f = &kFields[pick(sizeof kFields / sizeof *kFields)];
  for (unsigned i = 0; i < npatch; i++) {
    const Field *fi = i ? &kFields[pick(sizeof kFields / sizeof *kFields)] : f;
    add(&spec, "%s{\"op\":\"add\",\"path\":\"%s\",\"resourceFilter\":{\"resourceType\":\"%s\","
               "\"trafficDirection\":\"%s\"},\"value\":%u}", i ? "," : "", fi->path, fi->type, fi->dir, value + i);
  }
  add(&spec, "],\"targetRef\":{\"name\":\"%s\"}}", svc);
  add(b, "\"spec\":%s", spec.s);
  if (state >= 2) {
    add(b, ",\"status\":{\"conditions\":[{\"lastTransitionTime\":\"%s\",\"message\":", when);
    if (state == 3)
      add(b, "\"spec.patches[0].path: %sx is not a field of %s\","
             "\"observedGeneration\":%u,\"reason\":\"Invalid\",\"status\":\"False\",\"type\":\"Accepted\"}", f->path,
          f->message, gen);
    else
      add(b, "\"%u patch%s valid for Consul and Envoy (judged against go-control-plane envoy v1.32.4, the Envoy API of "
             "Consul 1.22)\",\"observedGeneration\":%u,\"reason\":\"Accepted\",\"status\":\"True\",\"type\":\"Accepted\"}",
          npatch, npatch > 1 ? "es are" : " is", gen);
    unsigned peers = converged ? 3 : pick(4), live = state == 3 && gen > 1 ? gen - 1 : gen;
    add(b, ",{\"lastTransitionTime\":\"%s\",\"message\":\"generation %u is live in ServiceDefaults %s/%s", when, live, ns, svc);
    for (unsigned p = 0; p < peers; p++) {
      char peer[64];
      name(peer, sizeof peer, "po");
      bool after = pick(2);
      add(b, "; patches[0] %s and PropertyOverride %s/%s patches[0] set %s differently; %s/%s is applied %s this one "
             "(same priority 0, then by name), so %s%s%s wins where both match",
          f->path, ns, peer, f->message, ns, peer, after ? "after" : "before", after ? ns : "this one", after ? "/" : "",
          after ? peer : "");
    }
    add(b, "\",\"observedGeneration\":%u,\"reason\":\"%s\",\"status\":\"True\",\"type\":\"Programmed\"}],", gen,
        peers ? "Overlapping" : "Programmed");
    add(b, "\"envoyApi\":{\"mesh\":\"Consul\",\"release\":\"1.22\",\"snapshot\":\"v1.32.4\"},\"lastValid\":{\"generation\":%u,"
           "\"spec\":%s},\"observedGeneration\":%u,\"programmedGeneration\":%u,\"target\":{\"apiVersion\":"
           "\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\",\"name\":\"%s\",\"namespace\":\"%s\"}}",
        live, spec.s, gen, live, svc, ns);
  }
  add(b, "}");
  free(spec.s);
}

static po_CacheEntry_ *entry(const char *json, size_t len, const po_TextCodec_ *codec) {
  po_CacheMeta_ m = {.rv = "1", .uid = "u", .generation = 1, .codec = codec};
  po_JsonScan_ManagedFields_(json, len, &m.cut_at, &m.cut_len);
  return po_Cache_NewEntry_("ns/name", NULL, json, len, &m);
}

/* What a reader gets, copied (po_CacheEntry_Text_ of a packed entry is the thread's buffer). */
static char *read_back(const po_CacheEntry_ *e) {
  const char *t = po_CacheEntry_Text_(e);
  assert_non_null(t);
  assert_int_equal(strlen(t), e->json_len);
  return strdup(t);
}

/* Generated PropertyOverrides in every state, with and without managedFields, and random bytes:
 * a compressed entry reads back the very bytes a plain one holds, and parses to the server's
 * object without managedFields. */
static void test_round_trip(void **state) {
  (void)state;
  uint64_t seed = env_or("PO_COMPACT_SEED", (uint64_t)time(NULL)), cases = env_or("PO_COMPACT_CASES", 4000);
  g_rng = seed;
  printf("test_round_trip: seed %" PRIu64 " (PO_COMPACT_SEED), %" PRIu64 " cases\n", seed, cases);
  po_TextCodec_ *dict = po_TextCodec_New_(kPo_App_OverrideDictionary, kPo_App_OverrideDictionaryLen, 0), *none = po_TextCodec_New_(NULL, 0, 0);
  assert_non_null(dict);
  assert_non_null(none);
  Buf b = {0};
  size_t packed = 0, plain = 0;
  for (uint64_t i = 0; i < cases; i++) {
    if (i % 10 == 9) { /* bytes that are no PropertyOverride, some that do not compress */
      b.n = 0;
      unsigned n = pick(4096);
      for (unsigned k = 0; k < n; k++) add(&b, "%c", (char)(pick(4) ? 1 + pick(255) : 'a'));
    } else {
      make_override(&b, pick(2), false);
    }
    const po_TextCodec_ *codec = i % 3 == 2 ? none : dict;
    po_CacheEntry_ *p = entry(b.s, b.n, NULL), *z = entry(b.s, b.n, codec);
    assert_non_null(p);
    assert_non_null(z);
    char *want = read_back(p), *got = read_back(z);
    assert_int_equal(z->json_len, p->json_len);
    assert_string_equal(got, want);
    packed += z->packed_len != 0;
    plain += z->packed_len == 0;
    if (i % 10 != 9) { /* the server's object without managedFields, whatever the text's form */
      json_object *server = json_tokener_parse(b.s), *kept = json_tokener_parse(got);
      assert_non_null(server);
      assert_non_null(kept);
      json_object_object_del(json_object_object_get(server, "metadata"), "managedFields");
      assert_true(json_object_equal(server, kept));
      json_object_put(server);
      json_object_put(kept);
    }
    free(want);
    free(got);
    po_CacheEntry_Unref_(p);
    po_CacheEntry_Unref_(z);
  }
  printf("test_round_trip: %zu kept compressed, %zu as they were (not smaller)\n", packed, plain);
  assert_true(packed > cases / 2);
  free(b.s);
  po_TextCodec_Free_(dict);
  po_TextCodec_Free_(none);
}

/* The bytes a cached converged PropertyOverride keeps (entry, key, text, resourceVersion, uid),
 * counted as po_Informer_CacheBytes counts them, for converged ones of many shapes on a real API server:
 * the status written, three peers named in the overlap message, managedFields in the text. */
static void test_bytes_per_override(void **state) {
  (void)state;
  g_rng = env_or("PO_COMPACT_SEED", 26);
  po_TextCodec_ *dict = po_TextCodec_New_(kPo_App_OverrideDictionary, kPo_App_OverrideDictionaryLen, 0);
  assert_non_null(dict);
  po_Cache_ c;
  assert_true(po_Cache_Init_(&c));
  enum { kN = 1000 };
  Buf b = {0};
  size_t text = 0, slots0 = 0;
  for (int i = 0; i < kN; i++) {
    make_override(&b, true, true);
    char key[96];
    snprintf(key, sizeof key, "default/po-%06d", i);
    po_CacheMeta_ m = {.rv = "1234567", .uid = "0b6f8a52-3c1e-4d7a-9f20-5e8c1b2a7d44", .generation = 1, .codec = dict};
    po_JsonScan_ManagedFields_(b.s, b.n, &m.cut_at, &m.cut_len);
    text += b.n - m.cut_len;
    po_CacheEntry_Unref_(po_Cache_Put_(&c, po_Cache_NewEntry_(key, NULL, b.s, b.n, &m)));
  }
  slots0 = c.nslots * sizeof *c.slots;
  size_t per = (po_Cache_Bytes_(&c) - slots0) / kN;
  printf("test_bytes_per_override: text without managedFields %zu bytes, kept %zu bytes an entry (%zu of it the entry's fields)\n",
         text / kN, per, sizeof(po_CacheEntry_));
  /* Plain, this is the text plus ~150 bytes (2.6 KB here); compressed against the app's dictionary,
   * a third of that leaves room for names and messages longer than the benchmark's. */
  assert_true(per <= 800);
  free(b.s);
  po_Cache_Destroy_(&c);
  po_TextCodec_Free_(dict);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_bytes_per_override),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
