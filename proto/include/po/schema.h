/* The Envoy v3 schema: every message of the envoy v3 .proto files of each embedded snapshot
 * (go-control-plane's envoy module at the versions proto/snapshots.tsv lists), embedded at build
 * time; a snapshot loads into a upb pool of its own. A pool is immutable once loaded, so one
 * po_Schema is shared read-only by all threads. Returned defs live as long as the schema. */
#ifndef PO_SCHEMA_H_
#define PO_SCHEMA_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/status.h"
#include "upb/arena.h"
#include "upb/def.h"
#include "upb/msg.h"

typedef struct po_Schema po_Schema;

/* The embedded Envoy API snapshots, oldest first, each one descriptor set. */
size_t po_Schema_SnapshotCount(void);
/* Snapshot i's version ("v1.32.4"); NULL past the end. Static. */
const char *po_Schema_SnapshotVersion(size_t i);
/* The index of the default snapshot (v1.32.4: Consul's, what nothing else names). */
size_t po_Schema_SnapshotDefault(void);
/* The process-wide schema of snapshot i: loaded on first use (thread-safe: under the snapshot's
 * lock) and kept once loaded; the mode po_Schema_LoadOnDemand chose applies to every snapshot.
 * NULL with *status filled when i is past the end (NotFound) or memory ran out loading it
 * (NoMemory): that failure is this caller's, nothing is kept, and the next call loads again. */
const po_Schema *po_Schema_GetSnapshot(size_t i, po_Status *status);
/* The default snapshot's schema: po_Schema_GetSnapshot(po_Schema_SnapshotDefault(), status). */
const po_Schema *po_Schema_Get(po_Status *status);
/* The version of the snapshot `s` was loaded from ("v1.32.4"); NULL for po_Schema_New's. */
const char *po_Schema_Version(const po_Schema *s);

/* Whether snapshot i's process-wide schema has been loaded (a load that failed is not): what this
 * process has paid for. How a test sees that a question about a snapshot did not load it. */
bool po_Schema_SnapshotLoaded(size_t i);

/* Whether snapshot i's message `message` (full name) has a field named exactly `name` (`len`
 * bytes, not NUL-terminated; not a JSON or oneof name): what po_Schema_FindField answers on that
 * snapshot loaded whole, without loading it. It reads only the embedded piece defining the
 * message (found through the snapshot's symbol index), walking its wire format without
 * allocating, so asking every other snapshot about one unknown field costs a few thousand
 * instructions, not their schemas. Thread-safe. */
typedef enum {
  kPo_SnapshotField_Absent,      /* no such message in snapshot i, or no such field on it */
  kPo_SnapshotField_Present,
  kPo_SnapshotField_Deprecated,  /* present, with `[deprecated = true]` (po_Schema_FieldDeprecated) */
  kPo_SnapshotField_Unreadable,  /* the piece is no protobuf (it cannot be: each loaded at build
                                  * time; said, not hidden): no verdict */
} po_SnapshotField;
po_SnapshotField po_Schema_SnapshotHasField(size_t i, const char *message, const char *name, size_t len);

/* Before the first po_Schema_Get(Snapshot): load the embedded schemas on demand, only the files that
 * define what is looked up (and their imports), instead of all of it. For single-threaded
 * processes only (one-shot commands): lookups then add to the pool. The mode is fixed when the
 * schema is first loaded: false (and nothing changes) when it was already loaded whole. */
bool po_Schema_LoadOnDemand(void);

/* A schema from a serialized FileDescriptorSet (files in protoc's order, dependencies first). */
po_Schema *po_Schema_New(const void *descriptor_set, size_t size, po_Status *status);
void po_Schema_Free(po_Schema *schema);

/* True once a lookup of this schema loaded on demand could not add a file for lack of memory:
 * from then on a NULL from a lookup is no verdict on the name. Sticky, and the on-demand schema's
 * alone (a single-threaded one-shot process's); a one-shot command checks it before giving any
 * verdict or output. Never set on a schema loaded whole: a name table or rules decode that fails
 * there is the asking call's (the lookup's NULL, the caller's arena) and is tried again. */
bool po_Schema_OutOfMemory(const po_Schema *schema);

/* A cache a user of the schema keeps in it, made once and freed with the schema: the engine's
 * compiled `pattern` rules (each pattern compiled once, not once a value), which thus belong
 * to the snapshot whose rules name them, not to the process. `kind` (a static object) names
 * the cache: on the first call `make` builds it (NULL: out of memory, so the caller does without
 * and the next call tries again); po_Schema_Free frees it with `free`. Made without a lock and
 * published by compare-and-swap (two threads racing both make one; the loser's is freed at once),
 * so `make` must be cheap and have no effect beyond the object. At most kPo_SchemaCacheKinds
 * kinds a schema; another gets NULL. Whatever the object holds it guards itself. */
enum { kPo_SchemaCacheKinds = 4 };
typedef struct {
  void *(*make)(void);
  void (*free)(void *cache);
} po_SchemaCacheKind;
void *po_Schema_Cache(const po_Schema *schema, const po_SchemaCacheKind *kind);
const upb_DefPool *po_Schema_Pool(const po_Schema *schema);
size_t po_Schema_FileCount(const po_Schema *schema);
/* By full name ("envoy.config.cluster.v3.Cluster"), or NULL: no such message, or (on demand)
 * its file could not be loaded for lack of memory, which po_Schema_OutOfMemory then tells. */
const upb_MessageDef *po_Schema_FindMessage(const po_Schema *schema, const char *full_name);

/* What compiling and applying a patch asks of a field, read from upb once, when the name table
 * of its message is built (upb's getters are out-of-line calls, a dozen per compile). Lives as
 * long as the schema. */
typedef struct {
  const upb_FieldDef *def;
  const upb_MiniTable_Field *layout;     /* upb_FieldDef_MiniTable */
  const upb_MessageDef *message;         /* the sub-message (message and map fields), else NULL */
  const upb_MiniTable *message_layout;   /* its mini table */
  const upb_EnumDef *enum_def;           /* enum fields, else NULL */
  const upb_FieldDef *wrapper_value;     /* google.protobuf.*Value fields: the wrapper's `value` */
  const upb_MiniTable_Field *wrapper_value_layout;
  upb_CType wrapper_value_ctype;
  upb_CType ctype;
  upb_WellKnown wkt;                     /* of `message`; kUpb_WellKnown_Unspecified otherwise */
  bool repeated, map, submessage;        /* upb_FieldDef_IsRepeated, _IsMap, _IsSubMessage */
  uint32_t name_len;                     /* of `name` */
  const char *name;                      /* upb_FieldDef_Name (upb finds it with a strrchr) */
} po_FieldInfo;

/* A field of `m` by its exact proto name (not a JSON or oneof name), or NULL: what
 * upb_MessageDef_FindFieldByNameWithSize answers, from a table built on the first lookup in `m`
 * (thread-safe; about a third of upb's cost per lookup). `name` need not be NUL-terminated. */
const upb_FieldDef *po_Schema_FindField(const po_Schema *schema, const upb_MessageDef *m,
                                        const char *name, size_t len);
/* The same lookup with what the request path needs of the field. NULL when `m` has no such
 * field, and also when the table could not be built (out of memory): a caller that must tell
 * the two apart asks upb on NULL. */
const po_FieldInfo *po_Schema_FindFieldInfo(const po_Schema *schema, const upb_MessageDef *m,
                                            const char *name, size_t len);
/* Every field of `m` in declaration order (entry i is upb_MessageDef_Field(m, i)), from the same
 * table; *count their number. NULL when the table could not be built (out of memory). What an
 * unknown field's error walks: Consul's field list and the did-you-mean search. */
const po_FieldInfo *po_Schema_Fields(const po_Schema *schema, const upb_MessageDef *m, int *count);
/* One block per message where a layer above keeps what it derives from the message's fields
 * once (the engine: an unknown field's error text and its did-you-mean index), built on first
 * need, not with the table: most messages never need it. NULL until set. */
const void *po_Schema_MessageExtra(const po_Schema *schema, const upb_MessageDef *m);
/* Publishes `block` (from malloc; the schema frees it) as m's extra unless another thread did
 * first, and returns the one published: when that is not `block`, the caller frees `block`.
 * NULL when m's table could not be built (out of memory; `block` is the caller's still). */
const void *po_Schema_SetMessageExtra(const po_Schema *schema, const upb_MessageDef *m, void *block);
/* A value of `e` by its exact name, or NULL: upb_EnumDef_FindValueByNameWithSize, likewise. */
const upb_EnumValueDef *po_Schema_FindEnumValue(const po_Schema *schema, const upb_EnumDef *e,
                                                const char *name, size_t len);

/* Consul's resource types ("cluster", "cluster-load-assignment", "route", "listener") and the
 * Envoy message each names; NULL for anything else. */
const upb_MessageDef *po_Schema_ResourceMessage(const po_Schema *schema, const char *resource_type);
const char *po_Schema_ResourceTypeOf(const upb_MessageDef *m);

/* Codecs. JSON input takes proto names and JSON names; `@type` Anys must name messages of the
 * pool. JSON output uses the original proto field names. Results live in `arena`. */
upb_Message *po_Json_Decode(const po_Schema *schema, const upb_MessageDef *m, const char *json,
                            size_t len, upb_Arena *arena, po_Status *status);
/* NUL-terminated; *len (if not NULL) gets its length. */
char *po_Json_Encode(const po_Schema *schema, const upb_MessageDef *m, const upb_Message *msg,
                     upb_Arena *arena, size_t *len, po_Status *status);
upb_Message *po_Binary_Decode(const po_Schema *schema, const upb_MessageDef *m, const char *buf,
                              size_t len, upb_Arena *arena, po_Status *status);
char *po_Binary_Encode(const upb_MessageDef *m, const upb_Message *msg, upb_Arena *arena,
                       size_t *len, po_Status *status);

/* Where the embedded schemas come from: "go-control-plane envoy module
 * (github.com/envoyproxy/go-control-plane/envoy) v1.32.4, v1.37.0, v1.40.0", every embedded
 * version, oldest first. Static. */
const char *po_Schema_Snapshot(void);

/* Field annotations. The protoc-gen-validate rules of a field (a validate.FieldRules message of
 * the pool, in `arena`), or NULL when it has none; *rules_def gets validate.FieldRules. */
const upb_Message *po_Schema_FieldRules(const po_Schema *schema, const upb_FieldDef *f,
                                        upb_Arena *arena, const upb_MessageDef **rules_def);
/* `option (validate.required) = true` on a oneof: PGV then refuses a message with no member of
 * it set (124 oneofs of the snapshot have it: Address's, SocketAddress's port_specifier, ...). */
bool po_Schema_OneofRequired(const po_Schema *schema, const upb_OneofDef *o, upb_Arena *arena);
/* A note the engine derives from a field's rules once per schema (which rule kinds it does not
 * judge), kept with the schema's decoded rules: *known is false until po_Schema_SetFieldNote
 * has set it (NULL is a note too: none). The text is copied. */
const char *po_Schema_FieldNote(const po_Schema *schema, const upb_FieldDef *f, bool *known);
void po_Schema_SetFieldNote(const po_Schema *schema, const upb_FieldDef *f, const char *note);
/* `[deprecated = true]` on the field, or on the message or enum value it names. */
bool po_Schema_FieldDeprecated(const upb_FieldDef *f);

#endif
