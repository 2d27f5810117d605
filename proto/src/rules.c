/* Field and oneof annotations: protoc-gen-validate rules and deprecation.
 *
 * The generated descriptor.upb.h does not know the validate.rules extension (1071 on
 * FieldOptions), so upb keeps it as unknown bytes. Re-encoding the options and decoding them as
 * the pool's own FieldOptions, with the pool's extension registry, turns those bytes into a
 * typed validate.FieldRules message. That costs a few hundred nanoseconds a field, and a compile
 * judges every field of the messages a patch sets whole (issue 22): each field's rules are
 * decoded once per schema and kept (the rule cache below), as the name tables keep lookups. */
#include <stdint.h>
#include <string.h>

#include "google/protobuf/descriptor.upb.h"
#include "schema_internal.h"
#include "upb/decode.h"
#include "upb/reflection.h"

/* ---- the rule cache ----------------------------------------------------------------------------
 * Open addressing on the def's address (a field's or a oneof's), fixed size. A reader probes
 * without a lock: a slot's value is stored before its key (release), so a key seen (acquire) has
 * its value. A miss decodes under rule_lock into the schema's rule_arena and publishes; a full
 * table (never with the snapshot's ~1,100 annotated fields and oneofs) answers by decoding into
 * the caller's arena, uncached. */

enum { kSlots = 8192, kMaxFill = kSlots / 2 };

struct po_RuleSlot {
  _Atomic(const void *) key;
  _Atomic(const void *) value; /* the rules message; kNone: none; for a oneof kTrue or kNone */
};

static const char kNone, kTrue;

static size_t slot_of(const void *key, size_t i) {
  return ((((uintptr_t)key >> 3) * UINT64_C(0x9E3779B97F4A7C15)) + i) & (kSlots - 1);
}

/* The cached value of key, or NULL when not cached. */
static const void *cached(const po_Schema *s, const void *key) {
  struct po_RuleSlot *t = atomic_load_explicit(&((po_Schema *)s)->rule_slots, memory_order_acquire);
  for (size_t i = 0; t && i < kSlots; i++) {
    struct po_RuleSlot *e = &t[slot_of(key, i)];
    const void *k = atomic_load_explicit(&e->key, memory_order_acquire);
    if (!k) return NULL;
    if (k == key) return atomic_load_explicit(&e->value, memory_order_relaxed);
  }
  return NULL;
}

static void lock(po_Schema *s) {
  int free_ = 0;
  while (!atomic_compare_exchange_weak_explicit(&s->rule_lock, &free_, 1, memory_order_acquire, memory_order_relaxed)) {
    free_ = 0;
  }
}

static void unlock(po_Schema *s) { atomic_store_explicit(&s->rule_lock, 0, memory_order_release); }

/* Under the lock: the table and its arena, made on first use; NULL when out of memory. */
static upb_Arena *cache_arena(po_Schema *s) {
  if (!atomic_load_explicit(&s->rule_slots, memory_order_relaxed)) {
    s->rule_arena = s->rule_arena ? s->rule_arena : upb_Arena_New();
    struct po_RuleSlot *t = s->rule_arena ? calloc(kSlots, sizeof *t) : NULL;
    if (!t) return NULL;
    atomic_store_explicit(&s->rule_slots, t, memory_order_release);
  }
  return s->rule_arena;
}

/* Under the lock: key -> value, unless the table is full. */
static void publish(po_Schema *s, const void *key, const void *value) {
  if (s->rule_count >= kMaxFill) return;
  struct po_RuleSlot *t = atomic_load_explicit(&s->rule_slots, memory_order_relaxed);
  for (size_t i = 0; i < kSlots; i++) {
    struct po_RuleSlot *e = &t[slot_of(key, i)];
    const void *k = atomic_load_explicit(&e->key, memory_order_relaxed);
    if (k == key) return;
    if (k) continue;
    atomic_store_explicit(&e->value, value, memory_order_relaxed);
    atomic_store_explicit(&e->key, key, memory_order_release);
    s->rule_count++;
    return;
  }
}

void po_Schema_FreeRules_(po_Schema *s) {
  free(atomic_load_explicit(&s->rule_slots, memory_order_relaxed));
  if (s->rule_arena) upb_Arena_Free(s->rule_arena);
  s->rule_slots = NULL;
  s->rule_arena = NULL;
}

/* ---- decoding ---- */

/* The field's rules (NULL: none); *failed when memory ran out, which is no verdict. */
static const upb_Message *decode_field_rules(const po_Schema *s, const upb_FieldDef *f, upb_Arena *arena,
                                             bool *failed) {
  size_t len = 0;
  char *bytes = google_protobuf_FieldOptions_serialize(upb_FieldDef_Options(f), arena, &len);
  upb_Message *opts = bytes ? upb_Message_New(s->field_options, arena) : NULL;
  if (!opts) return *failed = true, NULL;
  upb_DecodeStatus ds = upb_Decode(bytes, len, opts, upb_MessageDef_MiniTable(s->field_options),
                                   upb_DefPool_ExtensionRegistry(s->pool), 0, arena);
  if (ds == kUpb_DecodeStatus_OutOfMemory) *failed = true;
  if (ds != kUpb_DecodeStatus_Ok) return NULL;
  return upb_Message_Has(opts, s->rules_ext) ? upb_Message_Get(opts, s->rules_ext).msg_val : NULL;
}

static bool decode_oneof_required(const po_Schema *s, const upb_OneofDef *o, upb_Arena *arena, bool *failed) {
  size_t len = 0;
  char *bytes = google_protobuf_OneofOptions_serialize(upb_OneofDef_Options(o), arena, &len);
  upb_Message *opts = bytes ? upb_Message_New(s->oneof_options, arena) : NULL;
  if (!opts) return *failed = true, false;
  upb_DecodeStatus ds = upb_Decode(bytes, len, opts, upb_MessageDef_MiniTable(s->oneof_options),
                                   upb_DefPool_ExtensionRegistry(s->pool), 0, arena);
  if (ds == kUpb_DecodeStatus_OutOfMemory) *failed = true;
  return ds == kUpb_DecodeStatus_Ok && upb_Message_Has(opts, s->required_ext) &&
         upb_Message_Get(opts, s->required_ext).bool_val;
}

const upb_Message *po_Schema_FieldRules(const po_Schema *cs, const upb_FieldDef *f,
                                        upb_Arena *arena, const upb_MessageDef **rules_def) {
  if (!upb_FieldDef_HasOptions(f)) return NULL;
  po_Schema_NeedRules_(cs);
  if (!cs->rules_ext || !cs->field_options) return NULL;
  if (rules_def) *rules_def = upb_FieldDef_MessageSubDef(cs->rules_ext);
  const void *v = cached(cs, f);
  if (v) return v == &kNone ? NULL : v;
  po_Schema *s = (po_Schema *)cs; /* the cache grows behind the const view, under its lock */
  bool failed = false;
  lock(s);
  const upb_Message *r = NULL;
  if ((v = cached(s, f))) {
    r = v == &kNone ? NULL : v;
  } else {
    upb_Arena *ca = cache_arena(s);
    r = ca ? decode_field_rules(s, f, ca, &failed) : NULL;
    if (ca && !failed) publish(s, f, r ? (const void *)r : &kNone);
    /* no memory for the cache: decoded into the caller's arena, uncached (the next call tries
     * the cache again); a decode that ran out of memory there too is no answer, and the caller's
     * arena knows it (its allocator recorded the failure: po_Engine_OutOfMemory), not the
     * schema, which other callers share */
    if (!ca || failed) {
      failed = false;
      r = decode_field_rules(s, f, arena, &failed);
    }
  }
  unlock(s);
  return r;
}

bool po_Schema_OneofRequired(const po_Schema *cs, const upb_OneofDef *o, upb_Arena *arena) {
  if (!upb_OneofDef_HasOptions(o)) return false;
  po_Schema_NeedRules_(cs);
  if (!cs->required_ext || !cs->oneof_options) return false;
  const void *v = cached(cs, o);
  if (v) return v == &kTrue;
  po_Schema *s = (po_Schema *)cs;
  bool failed = false, r;
  lock(s);
  if ((v = cached(s, o))) {
    r = v == &kTrue;
  } else {
    upb_Arena *ca = cache_arena(s);
    r = ca ? decode_oneof_required(s, o, ca, &failed) : false;
    if (ca && !failed) publish(s, o, r ? &kTrue : &kNone);
    if (!ca || failed) { /* as for a field's rules */
      failed = false;
      r = decode_oneof_required(s, o, arena, &failed);
    }
  }
  unlock(s);
  return r;
}

/* A note's key: the field's address plus one, which no def has (defs are aligned). */
static const void *note_key(const upb_FieldDef *f) { return (const char *)f + 1; }

const char *po_Schema_FieldNote(const po_Schema *s, const upb_FieldDef *f, bool *known) {
  const void *v = cached(s, note_key(f));
  *known = v != NULL;
  return v == &kNone ? NULL : v;
}

void po_Schema_SetFieldNote(const po_Schema *cs, const upb_FieldDef *f, const char *note) {
  po_Schema *s = (po_Schema *)cs;
  lock(s);
  upb_Arena *ca = cached(s, note_key(f)) ? NULL : cache_arena(s);
  char *copy = ca && note ? upb_Arena_Malloc(ca, strlen(note) + 1) : NULL;
  if (copy) memcpy(copy, note, strlen(note) + 1);
  if (ca && (copy || !note)) publish(s, note_key(f), copy ? copy : &kNone);
  /* not kept for lack of memory: asked again next time, no verdict lost */
  unlock(s);
}

bool po_Schema_FieldDeprecated(const upb_FieldDef *f) {
  return upb_FieldDef_HasOptions(f) &&
         google_protobuf_FieldOptions_deprecated(upb_FieldDef_Options(f));
}
