/* The keyed hash of a JSON tree (json_hash.h): SipHash-c-d, 128-bit output, as its authors
 * specify it (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012), written here
 * from that description: SipHash-2-4 for the stored hash, SipHash-1-3 for the process's own. */
#include "json_hash.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* ---- the key: 128 random bits, drawn once ---- */

typedef struct {
  uint64_t k0, k1;
} Key;

/* How a tree is hashed: the key and the rounds (c per message word, d per finalisation). The
 * stored hash (po_Json_HashStable) keeps SipHash-2-4 and its layout (node): every process and
 * version must compute the value already stored on targets (test_json_hash pins it). The
 * process's own hash is never stored nor shown, so it takes SipHash-1-3 (the variant hash tables
 * use against chosen-key flooding; without the key nobody computes a value, so nobody aims at a
 * collision) and a layout streamed in whole words (stream). Together under half the instructions
 * on a target's entries (docs/benchmarks.md, "The process's own hash"). */
typedef struct {
  const Key *key;
  int c, d;
} Params;

static Key g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void draw_key(void) {
  uint64_t k[2] = {0, 0};
  size_t got = 0;
  while (got < sizeof k) {
    ssize_t n = getrandom((unsigned char *)k + got, sizeof k - got, 0);
    if (n <= 0) break;
    got += (size_t)n;
  }
  if (got < sizeof k) {
    /* No kernel randomness (a seccomp profile refusing getrandom): the clock and addresses are a
     * poor key, but one nobody outside the process reads; the hash stays correct either way. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    k[0] ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)&ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    k[1] ^= (uint64_t)ts.tv_sec * 0xbf58476d1ce4e5b9ULL ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&g_key;
  }
  g_key.k0 = k[0];
  g_key.k1 = k[1];
}

/* ---- SipHash-2-4, 128-bit output, fed in pieces ---- */

typedef struct {
  uint64_t v0, v1, v2, v3;
  uint64_t tail;  /* bytes not yet making a whole 64-bit word, little-endian */
  unsigned ntail; /* how many */
  uint64_t len;   /* bytes fed in all */
  int c, d;       /* rounds per word, per finalisation */
} Sip;

static inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

static inline void round_(Sip *s) {
  s->v0 += s->v1;
  s->v1 = rotl(s->v1, 13);
  s->v1 ^= s->v0;
  s->v0 = rotl(s->v0, 32);
  s->v2 += s->v3;
  s->v3 = rotl(s->v3, 16);
  s->v3 ^= s->v2;
  s->v0 += s->v3;
  s->v3 = rotl(s->v3, 21);
  s->v3 ^= s->v0;
  s->v2 += s->v1;
  s->v1 = rotl(s->v1, 17);
  s->v1 ^= s->v2;
  s->v2 = rotl(s->v2, 32);
}

static void sip_init(Sip *s, const Params *p) {
  const Key *k = p->key;
  s->c = p->c;
  s->d = p->d;
  s->v0 = k->k0 ^ 0x736f6d6570736575ULL;
  s->v1 = k->k1 ^ 0x646f72616e646f6dULL ^ 0xee; /* 0xee: the 128-bit variant */
  s->v2 = k->k0 ^ 0x6c7967656e657261ULL;
  s->v3 = k->k1 ^ 0x7465646279746573ULL;
  s->tail = 0;
  s->ntail = 0;
  s->len = 0;
}

/* n rounds, unrolled (n is 1 to 4: SipHash-1-3 and 2-4; a loop was a fifth of the finalisation) */
static inline void rounds(Sip *s, int n) {
  switch (n) {
    case 4: round_(s); /* fall through */
    case 3: round_(s); /* fall through */
    case 2: round_(s); /* fall through */
    default: round_(s);
  }
}

static inline void compress(Sip *s, uint64_t m) {
  s->v3 ^= m;
  rounds(s, s->c);
  s->v0 ^= m;
}

static inline uint64_t load_le64(const unsigned char *b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
  return v; /* compilers make this one load on little-endian machines */
}

/* Bytes first into the partial word, then whole words straight from the input, then the rest:
 * the same message words as one byte at a time (the stored form, po_Json_HashStable, must not
 * change: test_json_hash pins it), a fraction of the work on the long strings of a target. */
static void sip_feed(Sip *s, const void *p, size_t n) {
  const unsigned char *b = p;
  s->len += n;
  while (n && s->ntail) {
    s->tail |= (uint64_t)*b++ << (8 * s->ntail);
    n--;
    if (++s->ntail == 8) {
      compress(s, s->tail);
      s->tail = 0;
      s->ntail = 0;
    }
  }
  if (s->ntail) return; /* all of it went into the partial word */
  for (; n >= 8; b += 8, n -= 8) compress(s, load_le64(b));
  for (size_t i = 0; i < n; i++) s->tail |= (uint64_t)b[i] << (8 * i);
  s->ntail = (unsigned)n;
}

static po_JsonHash sip_final(Sip *s) {
  compress(s, s->tail | (s->len << 56));
  s->v2 ^= 0xee;
  rounds(s, s->d);
  po_JsonHash h;
  h.lo = s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
  s->v1 ^= 0xdd;
  rounds(s, s->d);
  h.hi = s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
  return h;
}

static void feed_u64(Sip *s, uint64_t v) {
  if (s->ntail == 0) { /* a whole word: no bytes to shift through */
    s->len += 8;
    compress(s, v);
    return;
  }
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  sip_feed(s, b, 8);
}

static void feed_hash(Sip *s, po_JsonHash h) {
  feed_u64(s, h.lo);
  feed_u64(s, h.hi);
}

/* ---- the tree ---- */

static bool skipped(const char *k, const char *const *skip, size_t nskip) {
  for (size_t i = 0; i < nskip; i++) if (strcmp(k, skip[i]) == 0) return true;
  return false;
}

/* A member of an object fed into its own hash m (key: its name, kl bytes). */
typedef void (*MemberFeed)(Sip *m, const Params *prm, const char *key, size_t kl, const json_object *v);

/* An object's members (but those skipped), each hashed on its own by feed, fed into s as their
 * count and the lane-wise sum of their hashes: the sum is what makes the members' order not count.
 * Both layouts share it; they differ only in what feed puts into a member's hash. */
static void feed_members(Sip *s, const Params *prm, const json_object *o, const char *const *skip, size_t nskip,
                         MemberFeed feed) {
  po_JsonHash sum = {0, 0};
  uint64_t n = 0;
  json_object_object_foreach((json_object *)o, k, v) {
    if (skipped(k, skip, nskip)) continue;
    Sip m;
    sip_init(&m, prm);
    feed(&m, prm, k, strlen(k), v);
    po_JsonHash h = sip_final(&m);
    sum.lo += h.lo;
    sum.hi += h.hi;
    n++;
  }
  feed_u64(s, n);
  feed_hash(s, sum);
}

static po_JsonHash node(const Params *key, const json_object *o, const char *const *skip, size_t nskip);

/* The stored layout's member: its name's length, its name, its value's own hash. */
static void stored_member(Sip *m, const Params *prm, const char *key, size_t kl, const json_object *v) {
  feed_u64(m, kl);
  sip_feed(m, key, kl);
  feed_hash(m, node(prm, v, NULL, 0));
}

/* The stored layout: every node its own hash, fed into its parent's; a one-byte tag. */
static po_JsonHash node(const Params *key, const json_object *o, const char *const *skip, size_t nskip) {
  Sip s;
  sip_init(&s, key);
  json_type t = json_object_get_type(o);
  unsigned char tag = (unsigned char)t;
  sip_feed(&s, &tag, 1);
  switch (t) {
    case json_type_null: break;
    case json_type_boolean: {
      unsigned char b = (unsigned char)json_object_get_boolean(o);
      sip_feed(&s, &b, 1);
      break;
    }
    case json_type_double: {
      double d = json_object_get_double(o); /* not get_string: that writes a buffer into the object */
      uint64_t bits;
      memcpy(&bits, &d, sizeof bits);
      feed_u64(&s, bits);
      break;
    }
    case json_type_int: /* both readings: json-c keeps an int64 or a uint64 */
      feed_u64(&s, (uint64_t)json_object_get_int64(o));
      feed_u64(&s, json_object_get_uint64(o));
      break;
    case json_type_string: {
      size_t n = (size_t)json_object_get_string_len(o);
      feed_u64(&s, n);
      sip_feed(&s, json_object_get_string((json_object *)o), n);
      break;
    }
    case json_type_array: {
      size_t n = json_object_array_length(o);
      feed_u64(&s, n);
      for (size_t i = 0; i < n; i++) feed_hash(&s, node(key, json_object_array_get_idx(o, i), NULL, 0));
      break;
    }
    case json_type_object: feed_members(&s, key, o, skip, nskip, stored_member); break;
  }
  return sip_final(&s);
}

static void stream(Sip *s, const Params *key, const json_object *o, const char *const *skip, size_t nskip);

/* The streamed layout's member: its value streamed, then its name's length and its name. */
static void streamed_member(Sip *m, const Params *prm, const char *key, size_t kl, const json_object *v) {
  stream(m, prm, v, NULL, 0);
  feed_u64(m, kl);
  sip_feed(m, key, kl);
}

/* The process's layout: a tree streamed into one hash in whole words, each value as its type's
 * word, then what it holds: a boolean a word, a double its bits, an integer both readings, a
 * string its length and its bytes padded with zeros to a word, an array its length and each
 * element so; an object its member count and the lane-wise sum of its members' own hashes (the
 * member's value streamed so, then its name's length and its name), which is what makes the
 * members' order not count. Tags and lengths make the stream say one tree only, so two trees
 * hash the same only by a SipHash collision; only an object's members are finalised on their
 * own (not every node and member, as in the stored layout: two finalisations of 128-bit output
 * were most of the cost on a target's entries). */
static void stream(Sip *s, const Params *key, const json_object *o, const char *const *skip, size_t nskip) {
  static const unsigned char kZeros[8] = {0};
  json_type t = json_object_get_type(o);
  feed_u64(s, (uint64_t)t);
  switch (t) {
    case json_type_null: break;
    case json_type_boolean: feed_u64(s, (uint64_t)json_object_get_boolean(o)); break;
    case json_type_double: {
      double d = json_object_get_double(o);
      uint64_t bits;
      memcpy(&bits, &d, sizeof bits);
      feed_u64(s, bits);
      break;
    }
    case json_type_int:
      feed_u64(s, (uint64_t)json_object_get_int64(o));
      feed_u64(s, json_object_get_uint64(o));
      break;
    case json_type_string: {
      size_t n = (size_t)json_object_get_string_len(o);
      feed_u64(s, n);
      sip_feed(s, json_object_get_string((json_object *)o), n);
      if (n & 7) sip_feed(s, kZeros, 8 - (n & 7));
      break;
    }
    case json_type_array: {
      size_t n = json_object_array_length(o);
      feed_u64(s, n);
      for (size_t i = 0; i < n; i++) stream(s, key, json_object_array_get_idx(o, i), NULL, 0);
      break;
    }
    case json_type_object: feed_members(s, key, o, skip, nskip, streamed_member); break;
  }
}

static po_JsonHash keyed(const Params *key, const json_object *o, const char *const *skip, size_t nskip) {
  Sip s;
  sip_init(&s, key);
  stream(&s, key, o, skip, nskip);
  return sip_final(&s);
}

static const Params *process_key(void) {
  static const Params kOwn = {&g_key, 1, 3};
  pthread_once(&g_key_once, draw_key);
  return &kOwn;
}

po_JsonHash po_Json_Hash(const json_object *o) { return keyed(process_key(), o, NULL, 0); }
po_JsonHash po_Json_HashExcept(const json_object *o, const char *key) { return keyed(process_key(), o, &key, 1); }
po_JsonHash po_Json_HashExceptAll(const json_object *o, const char *const *keys, size_t n) {
  return keyed(process_key(), o, keys, n);
}

/* A fixed key (the first 16 bytes of SipHash's own test key, 00 01 .. 0f): every process and
 * version computes the same value. */
uint64_t po_Json_HashStable(const json_object *o) {
  static const Key kStableKey = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
  static const Params kStable = {&kStableKey, 2, 4};
  return node(&kStable, o, NULL, 0).lo;
}

po_JsonHash po_Hash_Bytes(const void *p, size_t n) {
  Sip s;
  sip_init(&s, process_key());
  sip_feed(&s, p, n);
  return sip_final(&s);
}

uint64_t po_Hash_String(const char *str, size_t n) { return po_Hash_Bytes(str, n).lo; }

po_JsonHash po_Hash_SipWith_(uint64_t k0, uint64_t k1, int c, int d, const void *p, size_t n) {
  const Key k = {k0, k1};
  const Params prm = {&k, c, d};
  Sip s;
  sip_init(&s, &prm);
  sip_feed(&s, p, n);
  return sip_final(&s);
}
