/* Private to the engine: layouts shared by its files, and the upb-level entry points the
 * benchmarks and tests use through po/engine_upb.h. */
#ifndef PO_ENGINE_INTERNAL_H_
#define PO_ENGINE_INTERNAL_H_

/* The readers' refusal of a mapping key holding U+0000 (value_yaml.c, value_json.c): keys are C
 * strings from the reader on, so such a key would be cut, and could then take another key's
 * place; a value keeps its NUL. */
#define kPo_NulKeyRefused                                                                                 \
  "a mapping key holding U+0000 (\\u0000): keys are kept as C strings here, so it would be cut (and " \
  "could take another key's place); refused rather than cut: remove the NUL from the key"

#include "po/engine.h"
#include "po/schema.h"
#include "upb/arena.h"
#include "upb/def.h"
#include "upb/msg.h"
#include "upb/reflection.h"

struct po_Arena {
  upb_Arena *upb;
  /* Envoy's rules of each field looked up in this arena, when po_Pgv_MemoRules turned it on
   * (pgv.c): a walk over a big native value asks for the same few hundred fields' rules again and
   * again, and each lookup decodes the field's options. Lives and dies with the arena. */
  struct po_RulesMemo *rules_memo;
  /* Memory running out, per arena (po_Engine_OutOfMemory): its allocator's record (NULL: an
   * allocator that keeps none), and failures noted in it (po_Arena_NoteOutOfMemory_: a scratch
   * arena of a call made with it, a regex's malloc). */
  const bool *alloc_failed;
  bool noted_oom;
  void *owned; /* the allocator's record when the arena owns it: freed after the arena */
  bool fitted; /* made by po_Arena_NewFitted: owned is its record and first block */
};

static inline upb_Arena *po_Arena_Upb(po_Arena *a) { return a->upb; }
/* A po_Arena living in, and owning, the upb arena u (arena.c); NULL (u freed) when out of memory.
 * `failed` (NULL: none) is where u's allocator records a failure, read by po_Engine_OutOfMemory;
 * it outlives the arena. */
po_Arena *po_Arena_Wrap(upb_Arena *u, const bool *failed);
/* An allocator that records its failures (failed), for an arena of its own: upb hands the
 * allocator back as this, so `alloc` is first. */
typedef struct {
  upb_alloc alloc;
  bool failed;
} po_ArenaTrack;
/* A scratch arena whose allocation failures `t` records (t->failed), for a call that must tell
 * "no finding" from "no memory to find it" (the rule walk of a compile). `t` outlives it. */
po_Arena *po_Arena_NewTracked_(po_ArenaTrack *t);
/* An arena whose allocator is `func` over a po_ArenaTrack the arena owns (func records failures
 * in it): po_Arena_New's and po_Arena_NewLarge's. NULL when out of memory. */
po_Arena *po_Arena_NewOwnTrack_(upb_alloc_func *func);
/* Records that memory ran out for work done with `a` (NULL: nothing to record in), for
 * po_Engine_OutOfMemory: an allocation outside its allocator (a regex, a table) that failed. */
void po_Arena_NoteOutOfMemory_(po_Arena *a);

struct po_Value {
  po_ValueKind kind;
  bool untyped; /* a list as encoding/json makes it: Go []interface {} whatever its elements */
  po_Pos pos;
  /* An integer literal beyond int64, as written: its kind is kPo_ValueKind_Float (no Go int holds
   * it; encoding/json makes it float64), but range checks and messages use the exact text. */
  const char *lit;
  /* A float64 that the wire convention made of an int literal: the literal, for messages only
   * (it converts as the float64 it is). */
  const char *text;
  union {
    bool b;
    int64_t i;
    double d;
    struct {
      const char *ptr;
      size_t len;
    } s;
    struct {
      po_Value **items;
      const char **keys; /* maps only */
      size_t len, cap;
    } agg;
  } u;
};

struct po_Message {
  const upb_MessageDef *def;
  upb_Message *msg;
  po_Arena *arena;
  const po_Schema *schema; /* the snapshot's schema `def` is of (its pool, its name tables) */
};

/* Appends an entry the caller knows is not in the map yet (po_Value_MapPut checks, in linear
 * time; the YAML reader keeps its own index for large maps). */
bool po_Value_MapAppendUnique(po_Arena *a, po_Value *map, const char *key, po_Value *v);
/* Room for n items in a list or map, when the count is known before they are added: growing by
 * doubling from 4 leaves the outgrown arrays in the arena (a compiled PropertyOverride keeps its
 * spec's values for its whole life). false when out of memory. */
bool po_Value_Reserve_(po_Arena *a, po_Value *v, size_t n);

/* For a scalar whose tag go-yaml v2 decodes to a string instead of resolving it (!!binary,
 * !!timestamp, !!merge, !!value and every other non-core tag:yaml.org,2002: tag): true, with
 * out and out_len what kubectl sends for it, or *error when kubectl refuses the value
 * (yaml_tags.c). False for no tag or a core one (null, bool, int, float, str). */
bool po_YamlTag_String(const char *tag, const char *s, size_t len, po_Arena *a, const char **out, size_t *out_len,
                       const char **error);

/* What Consul's decoder makes of a patch's Value (its type is `any`): a one-element untyped
 * list ([]interface {}, never a typed slice) is its element, with one-element lists in the maps
 * below unwrapped; [null] and null are NULL
 * (Go nil). decode.c; the wire verdict of a compile (override.c) uses it too. */
const po_Value *po_Value_DecodedAsAny(const po_Value *v, po_Arena *a);

/* The snapshot `api` names (NULL: po_EnvoyApi_Default()), envoy_api.c. */
const po_EnvoyApi *po_EnvoyApi_Or_(const po_EnvoyApi *api);
/* proto/'s index of the snapshot `api` is (po_Schema_SnapshotHasField's `i`). */
size_t po_EnvoyApi_Index_(const po_EnvoyApi *api);
/* Its schema, loaded on first use and then shared; NULL when it did not load (out of memory:
 * noted in `a`, which may be NULL, and said in `status`), and the next call loads it again. */
const po_Schema *po_EnvoyApi_Schema_(const po_EnvoyApi *api, po_Arena *a, po_Status *status);
/* The snapshot whose schema `s` is (po_Schema_Version); NULL for a schema from po_Schema_New. */
const po_EnvoyApi *po_EnvoyApi_OfSchema_(const po_Schema *s);
/* A schema loaded on demand (po_EnvoyApi_LoadOnDemand: a single-threaded one-shot process, whose
 * one command is the call) ran out of memory adding a file (po_Schema_OutOfMemory), so a lookup's
 * NULL was no verdict; never true of schemas loaded whole (po_Engine_OutOfMemory). */
bool po_EnvoyApi_OnDemandOutOfMemory_(void);


#endif
