/* Name lookups on the request path: a field of a message by name, a value of an enum by name.
 *
 * upb answers both with its strtable (upb_MessageDef_FindFieldByNameWithSize,
 * upb_EnumDef_FindValueByNameWithSize): about 110 instructions each, most of them a
 * general-purpose string hash and the table's tagged-value decoding. Compiling a one-segment
 * enum patch does two of them, a third of what it may cost to be 5x faster than Consul
 * (docs/benchmarks.md). Here each message or enum gets, the first time it is looked up in, an
 * open-addressing table of its names with a word-at-a-time hash (a few instructions per 8
 * bytes) and the hash, length and name kept side by side, so a hit is one probe, one
 * comparison of two integers and one of the bytes.
 *
 * The tables answer exactly what upb answers (same names: fields only, not oneofs or JSON
 * names; enum value names exactly), and test_schema_names checks that for every message and
 * enum of the pool.
 *
 * Threads: the pool is shared read-only by every worker, so tables are built lazily without a
 * lock. A table is complete before it is published (a release compare-and-swap onto its
 * bucket's list, read with acquire); two threads building the same one at once both succeed,
 * and the loser's copy is freed at once. Tables are only freed with the schema. Memory: one
 * table per message or enum actually looked up in, 24 bytes per slot at most 50% full. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "schema_internal.h"

typedef struct {
  uint32_t hash;
  uint32_t len;
  const char *name;  /* the def's own NUL-terminated name */
  const void *def;   /* po_FieldInfo (in the table's `infos`) or upb_EnumValueDef */
} Slot;

struct po_NameTable {
  const void *owner;           /* the upb_MessageDef or upb_EnumDef */
  struct po_NameTable *next;   /* the bucket's list */
  uint32_t mask;               /* slots - 1, slots a power of two */
  int count;                   /* names */
  po_FieldInfo *infos;         /* a message's fields, in the same allocation; NULL for an enum */
  _Atomic(void *) extra;       /* po_Schema_SetMessageExtra's block; freed with t */
  Slot slots[];
};

/* Reads within [p, p + n) only (a segment of a path is not NUL-terminated where it ends). */
static inline uint64_t load64(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static inline uint32_t load32(const char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline uint32_t name_hash(const char *p, size_t n) {
  const uint64_t k = 0x9e3779b97f4a7c15u;
  uint64_t h = (uint64_t)n * k;
  if (n >= 8) {
    /* The first and the last 8 bytes (overlapping when n < 16) and the length: no loop. Names
     * that differ only in their middle share a hash; the comparison still tells them apart. */
    h = (h ^ load64(p)) * k;
    h = (h ^ load64(p + n - 8)) * k;
  } else if (n >= 4) {
    h = (h ^ (load32(p) | (uint64_t)load32(p + n - 4) << 32)) * k;
  } else if (n) {
    h = (h ^ ((uint64_t)(unsigned char)p[0] | (uint64_t)(unsigned char)p[n / 2] << 8 |
              (uint64_t)(unsigned char)p[n - 1] << 16)) * k;
  }
  return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* memcmp(a, b, n) == 0 for the short names of the API, without a call. */
static inline bool name_eq(const char *a, const char *b, size_t n) {
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 < n; i += 8) {
      if (load64(a + i) != load64(b + i)) return false;
    }
    return load64(a + n - 8) == load64(b + n - 8);
  }
  if (n >= 4) return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
  for (size_t i = 0; i < n; i++) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

static size_t bucket_of(const void *owner) {
  uint64_t x = (uint64_t)(uintptr_t)owner * 0x9e3779b97f4a7c15u;
  return (size_t)(x >> (64 - kPo_NameBucketBits));
}

/* Inlined into the two lookups (a call and its register saves cost as much as the probe). */
static inline __attribute__((always_inline)) po_NameTable *find_table(const po_Schema *s, const void *owner) {
  po_NameTable *t = atomic_load_explicit(&s->names[bucket_of(owner)], memory_order_acquire);
  while (t && t->owner != owner) t = t->next;
  return t;
}

static void field_info(const upb_FieldDef *f, po_FieldInfo *fi) {
  fi->def = f;
  fi->layout = upb_FieldDef_MiniTable(f);
  fi->ctype = upb_FieldDef_CType(f);
  fi->repeated = upb_FieldDef_IsRepeated(f);
  fi->map = upb_FieldDef_IsMap(f);
  fi->submessage = upb_FieldDef_IsSubMessage(f);
  fi->wkt = kUpb_WellKnown_Unspecified;
  if (fi->submessage) {
    fi->message = upb_FieldDef_MessageSubDef(f);
    fi->message_layout = upb_MessageDef_MiniTable(fi->message);
    fi->wkt = upb_MessageDef_WellKnownType(fi->message);
    if (fi->wkt >= kUpb_WellKnown_DoubleValue && fi->wkt <= kUpb_WellKnown_BoolValue) {
      fi->wrapper_value = upb_MessageDef_Field(fi->message, 0);
      fi->wrapper_value_layout = upb_FieldDef_MiniTable(fi->wrapper_value);
      fi->wrapper_value_ctype = upb_FieldDef_CType(fi->wrapper_value);
    }
  } else if (fi->ctype == kUpb_CType_Enum) {
    fi->enum_def = upb_FieldDef_EnumSubDef(f);
  }
}

typedef const char *(*NameOf)(const void *owner, int i, po_NameTable *t, const void **def);

static const char *field_name(const void *owner, int i, po_NameTable *t, const void **def) {
  const upb_FieldDef *f = upb_MessageDef_Field(owner, i);
  po_FieldInfo *fi = &t->infos[i];
  field_info(f, fi);
  fi->name = upb_FieldDef_Name(f);
  fi->name_len = (uint32_t)strlen(fi->name);
  *def = fi;
  return fi->name;
}

static const char *enum_value_name(const void *owner, int i, po_NameTable *t, const void **def) {
  (void)t;
  const upb_EnumValueDef *v = upb_EnumDef_Value(owner, i);
  *def = v;
  return upb_EnumValueDef_Name(v);
}

/* Builds and publishes the table of `owner`; NULL only when out of memory, which marks nothing:
 * the next lookup builds it again, and the caller tells the NULL apart by asking upb (the name is
 * there: no memory; it is not: no such name), so the failure is that call's, not the schema's.
 * `infos`: room for a po_FieldInfo per name (a message's table). */
static po_NameTable *build_table(const po_Schema *cs, const void *owner, int count, bool infos, NameOf name_of) {
  po_Schema *s = (po_Schema *)cs; /* the tables grow behind the const view, atomically */
  uint32_t slots = 4;
  while (slots < 2 * (uint32_t)count) slots *= 2;
  size_t size = sizeof(po_NameTable) + slots * sizeof(Slot);
  po_NameTable *t = calloc(1, size + (infos ? (size_t)count * sizeof(po_FieldInfo) : 0));
  if (!t) return NULL;
  t->owner = owner;
  t->mask = slots - 1;
  t->count = count;
  if (infos) t->infos = (po_FieldInfo *)((char *)t + size);
  for (int i = 0; i < count; i++) {
    const void *def;
    const char *name = name_of(owner, i, t, &def);
    size_t len = infos ? t->infos[i].name_len : strlen(name);
    uint32_t h = name_hash(name, len);
    uint32_t at = h & t->mask;
    while (t->slots[at].name) at = (at + 1) & t->mask;
    t->slots[at] = (Slot){.hash = h, .len = (uint32_t)len, .name = name, .def = def};
  }
  _Atomic(po_NameTable *) *head = &s->names[bucket_of(owner)];
  po_NameTable *old = atomic_load_explicit(head, memory_order_acquire);
  for (;;) {
    for (po_NameTable *o = old; o; o = o->next) {
      if (o->owner == owner) { /* another thread published it first */
        free(t);
        return o;
      }
    }
    t->next = old;
    if (atomic_compare_exchange_weak_explicit(head, &old, t, memory_order_release, memory_order_acquire)) {
      return t;
    }
  }
}

static inline __attribute__((always_inline)) const void *lookup(const po_NameTable *t, const char *name,
                                                                size_t len) {
  uint32_t h = name_hash(name, len);
  for (uint32_t at = h & t->mask;; at = (at + 1) & t->mask) {
    const Slot *e = &t->slots[at];
    if (!e->name) return NULL;
    if (e->hash == h && e->len == len && name_eq(e->name, name, len)) return e->def;
  }
}

const po_FieldInfo *po_Schema_FindFieldInfo(const po_Schema *s, const upb_MessageDef *m, const char *name,
                                            size_t len) {
  if (!m) return NULL; /* a message a failed load left out: po_Schema_OutOfMemory says so */
  po_NameTable *t = find_table(s, m);
  if (!t) t = build_table(s, m, upb_MessageDef_FieldCount(m), true, field_name);
  return t ? lookup(t, name, len) : NULL;
}

static po_NameTable *message_table(const po_Schema *s, const upb_MessageDef *m) {
  po_NameTable *t = find_table(s, m);
  return t ? t : build_table(s, m, upb_MessageDef_FieldCount(m), true, field_name);
}

const po_FieldInfo *po_Schema_Fields(const po_Schema *s, const upb_MessageDef *m, int *count) {
  po_NameTable *t = m ? message_table(s, m) : NULL;
  *count = t ? t->count : 0;
  return t ? t->infos : NULL;
}

const void *po_Schema_MessageExtra(const po_Schema *s, const upb_MessageDef *m) {
  po_NameTable *t = m ? find_table(s, m) : NULL;
  return t ? atomic_load_explicit(&t->extra, memory_order_acquire) : NULL;
}

const void *po_Schema_SetMessageExtra(const po_Schema *s, const upb_MessageDef *m, void *block) {
  po_NameTable *t = m ? message_table(s, m) : NULL;
  if (!t) return NULL;
  /* complete before it is published (release); a later reader's acquire sees all of it */
  void *none = NULL;
  if (atomic_compare_exchange_strong_explicit(&t->extra, &none, block, memory_order_release, memory_order_acquire)) {
    return block;
  }
  return none;
}

const upb_FieldDef *po_Schema_FindField(const po_Schema *s, const upb_MessageDef *m, const char *name,
                                        size_t len) {
  if (!m) return NULL; /* a message a failed load left out: po_Schema_OutOfMemory says so */
  const po_FieldInfo *fi = s ? po_Schema_FindFieldInfo(s, m, name, len) : NULL;
  return fi ? fi->def : upb_MessageDef_FindFieldByNameWithSize(m, name, len);
}

const upb_EnumValueDef *po_Schema_FindEnumValue(const po_Schema *s, const upb_EnumDef *e, const char *name,
                                                size_t len) {
  if (!e) return NULL; /* an enum a failed load left out: po_Schema_OutOfMemory says so */
  if (!s) return upb_EnumDef_FindValueByNameWithSize(e, name, len);
  po_NameTable *t = find_table(s, e);
  if (!t) t = build_table(s, e, upb_EnumDef_ValueCount(e), false, enum_value_name);
  if (!t) return upb_EnumDef_FindValueByNameWithSize(e, name, len);
  return lookup(t, name, len);
}

void po_Schema_FreeNames_(po_Schema *s) {
  for (size_t i = 0; i < (size_t)1 << kPo_NameBucketBits; i++) {
    po_NameTable *t = atomic_load_explicit(&s->names[i], memory_order_relaxed);
    while (t) {
      po_NameTable *next = t->next;
      free(atomic_load_explicit(&t->extra, memory_order_relaxed));
      free(t);
      t = next;
    }
  }
}
