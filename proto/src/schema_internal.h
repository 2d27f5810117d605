/* Private: the po_Schema layout, shared by the files of proto/src. */
#ifndef PO_SCHEMA_INTERNAL_H_
#define PO_SCHEMA_INTERNAL_H_

#include <stdatomic.h>
#include <stdlib.h>

#include "po/schema.h"
#include "schema_index.h"

/* Name tables (names.c), one per message or enum looked up in, built on first use. */
typedef struct po_NameTable po_NameTable;
enum { kPo_NameBucketBits = 12 };

struct po_Schema {
  upb_DefPool *pool;
  const po_SchemaSnapshotIndex *snapshot; /* the embedded snapshot it is, NULL for po_Schema_New's */
  size_t file_count;
  const upb_MessageDef *resources[4];    /* in the order of kResources (on demand: once found) */
  const upb_MessageDef *field_options;   /* the pool's google.protobuf.FieldOptions */
  const upb_FieldDef *rules_ext;         /* validate.rules (extension 1071), or NULL */
  const upb_MessageDef *oneof_options;   /* the pool's google.protobuf.OneofOptions */
  const upb_FieldDef *required_ext;      /* validate.required (OneofOptions 1071), or NULL */
  /* The rules of each field (and the required flag of each oneof) once decoded (rules.c): looked
   * up without a lock, filled under rule_lock into rule_arena; freed with the schema. */
  _Atomic(struct po_RuleSlot *) rule_slots;
  upb_Arena *rule_arena;
  size_t rule_count;
  _Atomic int rule_lock;
  /* On demand (po_Schema_LoadOnDemand): which files of the embedded set are in the pool, and
   * whether all are. NULL / true for a schema loaded whole. */
  unsigned char *loaded;
  bool complete;
  /* On demand only, sticky: a file could not be added for lack of memory, so a NULL from a
   * lookup may mean "not loaded" rather than "no such name" (po_Schema_OutOfMemory). */
  _Atomic bool oom;
  _Atomic(po_NameTable *) names[1 << kPo_NameBucketBits]; /* by owner def; lists, never shrunk */
  /* Users' caches (po_Schema_Cache, schema_cache.c): published by compare-and-swap, never
   * replaced, freed with the schema. */
  _Atomic(struct po_SchemaCacheSlot *) caches[kPo_SchemaCacheKinds];
};

/* Frees the name tables (po_Schema_Free). */
void po_Schema_FreeNames_(po_Schema *s);
/* Frees the rules cache (rules.c). */
void po_Schema_FreeRules_(po_Schema *s);
/* Frees the users' caches (schema_cache.c). */
void po_Schema_FreeCaches_(po_Schema *s);

/* On demand, the validate.rules defs (field_options, rules_ext, oneof_options, required_ext)
 * once their files are loaded. A schema loaded whole has them already. */
void po_Schema_NeedRules_(const po_Schema *s);
/* Finds those defs in the pool as it is (a whole load, or once every file is in). */
void po_Schema_FindRuleDefs_(po_Schema *s);
/* On demand, the files defining the messages a JSON text names in "@type" (a linear scan); a
 * schema loaded whole has them already. */
void po_Schema_NeedJsonTypes_(const po_Schema *s, const char *json, size_t len);
/* On demand, every file, so a type named where no scan looks (an Any inside a binary message)
 * resolves; true when that loaded anything (the caller then tries once more). */
bool po_Schema_NeedAll_(const po_Schema *s);

/* The file of snapshot `snap` defining `name` (not NUL-terminated; a message, enum or extension,
 * nested ones too), by a binary search of its symbol index, or -1. */
long po_Schema_FileOf_(const po_SchemaSnapshotIndex *snap, const char *name, size_t len);

/* Snapshot i's whole (trimmed) FileDescriptorSet reassembled from the shared pieces, from malloc
 * (the caller frees it), *size its length; NULL past the end or out of memory. What a whole load
 * reads; tests/proto compare it with build/proto/envoy-<version>_trimmed.pb byte for byte. */
unsigned char *po_Schema_SnapshotSet_(size_t i, size_t *size);

#endif
