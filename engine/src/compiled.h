/* Private: the compiled form of one patch (ARCHITECTURE.md section 4): the field chain resolved
 * against the schema and the value converted to the target's types, once, so applying it is a
 * walk and a few stores. */
#ifndef PO_ENGINE_COMPILED_H_
#define PO_ENGINE_COMPILED_H_

#include "internal.h"

/* ---- the path resolver (resolve.c): the one walk of a patch path over the schema ---------- */

typedef enum {
  kPo_Resolve_Ok = 0,
  kPo_Resolve_EmptyPath,      /* "" or "/": "non-empty, non-root Path is required;" + fields */
  kPo_Resolve_EmptySegment,   /* "a//b" */
  kPo_Resolve_UnknownField,   /* `segment` is no field of `at` */
  kPo_Resolve_ThroughMap,     /* a further segment below a map field (the last of `fields`) */
  kPo_Resolve_ThroughRepeated,
  kPo_Resolve_ThroughAny,
  kPo_Resolve_ThroughScalar,
  kPo_Resolve_TooDeep,        /* more than 32 segments (beyond Consul) */
  kPo_Resolve_NoMemory,
} po_ResolveError;

typedef struct {
  const po_Schema *schema;     /* what the path was resolved in (its name tables) */
  const upb_MessageDef *root;
  const po_FieldInfo **fields; /* the field of each resolved segment, outermost first; in the
                                * arena, or (one segment) &one: valid while this po_Resolved is */
  const po_FieldInfo *one;
  size_t count;                /* resolved segments; on success the last is the target */
  size_t segments;             /* segments in the path */
  po_ResolveError error;
  const upb_MessageDef *at;    /* the message the failing segment was looked up in */
  const char *segment;         /* the failing segment (not NUL-terminated), into the path */
  size_t segment_len;
} po_Resolved;

/* Resolves `path` against `root` (Consul's rules: leading slashes stripped, exact proto field
 * names, no member access below map, repeated, Any or non-message fields). `fields` is in the
 * arena, or in r itself for a one-segment path (do not copy r by value). False with r->error
 * set at the first problem. */
bool po_Path_Resolve(const po_Schema *schema, const upb_MessageDef *root, const char *path, po_Arena *a,
                     po_Resolved *r);
/* The field the path names; NULL unless resolved. */
const upb_FieldDef *po_Resolved_Target(const po_Resolved *r);
/* Consul's exact text for a failed resolve, into status (kPo_Status_Patch); always false. */
bool po_Resolved_Error(const po_Resolved *r, bool debug, po_Arena *a, po_Status *st);
/* A did-you-mean for an unknown field, or NULL (`judged_for`: po_CompileOptions.judged_for). */
const char *po_Resolved_Hint(const po_Resolved *r, const char *judged_for, const po_ApiReleases *releases, po_Arena *a);

typedef enum {
  kPo_SetKind_Scalar,   /* a scalar or enum field */
  kPo_SetKind_Wrapper,  /* a google.protobuf.*Value field from a scalar */
  kPo_SetKind_List,     /* a repeated scalar or enum field, replaced whole */
  kPo_SetKind_Message,  /* a message field replaced by a new one with only the named children */
} po_SetKind;

typedef struct po_Setter {
  po_SetKind kind;
  const upb_FieldDef *field;          /* the field set on its parent */
  const po_FieldInfo *info;           /* its layout, sub-message, wrapper (schema-owned) */
  upb_MessageValue value;             /* scalar; the inner value of a wrapper */
  const upb_FieldDef *wrapper_value;  /* the wrapper's `value` field */
  upb_MessageValue *items;            /* list elements */
  size_t item_count;
  struct po_Setter *children;         /* message children, in the value's key order */
  size_t child_count;
  const po_Value *source;             /* the patch value it was converted from */
} po_Setter;

typedef struct {
  po_Op op;
  const po_Schema *schema;            /* its name tables (po_Schema_FindField) */
  const upb_MessageDef *root;
  const po_FieldInfo **chain;         /* intermediate message fields, outermost first */
  size_t chain_len;
  const upb_FieldDef *target;         /* the field the path names */
  const po_FieldInfo *target_info;    /* and what compile and apply need of it */
  po_Setter set;                      /* add only */
} po_CompiledPatch;

typedef struct {
  bool debug;
  bool hints;
  bool envoy_rules;
  bool deprecations;
  const char *judged_for;  /* po_CompileOptions.judged_for */
  const po_ApiReleases *releases; /* po_CompileOptions.releases */
  /* A patch setting one part of a Duration or Timestamp (`.../seconds`): the value the override's
   * last other patch with the same resource filter sets the other part to (NULL: none), and that
   * patch's index. Both land on every resource this one patches: the rules judge the two together. */
  const po_Value *other_part;
  int other_idx;
} po_PatchOptions;

/* Resolves and converts one patch against `root`. On failure `status` has Consul's exact text
 * and *hint (if not NULL) a did-you-mean suggestion or NULL. Envoy-rule violations and
 * deprecations go to `diags` (may be NULL) under `patch_index`, and do not fail the compile. */
bool po_CompiledPatch_Compile(const po_Schema *schema, const upb_MessageDef *root,
                              const po_Patch *patch, const po_PatchOptions *opts, po_Arena *a,
                              po_CompiledPatch *out, const char **hint, po_Diagnostics *diags,
                              int patch_index, po_Status *status);
/* The add step alone: `v` converted for the resolved cp->target into *set (what a second input
 * convention's verdict needs, without walking the path again). Consul's text on failure. */
bool po_CompiledPatch_Convert(const po_CompiledPatch *cp, const po_Value *v, const po_PatchOptions *opts,
                              po_Arena *a, po_Setter *set, const char **hint, po_Status *st);
/* Applies a compiled patch; allocations go to `arena` (the message's). false only on no memory. */
bool po_CompiledPatch_Apply(const po_CompiledPatch *cp, upb_Message *msg, upb_Arena *arena);

/* Consul's fieldType(): "uint32", "enum", "google.protobuf.Duration", "repeated string", "map".
 * A repeated field's name is written into the caller's buf (kPo_FieldTypeMax bytes), so two
 * names are two texts (adv-27: a thread-local buffer made the second overwrite the first). */
enum { kPo_FieldTypeMax = 512 };
const char *po_FieldType(const upb_FieldDef *f, char buf[kPo_FieldTypeMax]);
/* Go's protoreflect.Kind name of a field ("int32", "sint64", "message", ...). */
const char *po_KindName(const upb_FieldDef *f);
/* Consul's field list: "available <FullName> fields:\n" + names (first 10 unless debug), and
 * its length in *len (when not NULL). Without debug, the copy kept in m's field index (as long
 * as the schema lives); otherwise, or with no schema, built in `a`. Read-only. NULL: no memory. */
const char *po_FieldList(const po_Schema *schema, const upb_MessageDef *m, bool debug, po_Arena *a, size_t *len);
/* What an unknown field's error needs of m, derived once and kept by the schema
 * (field_index.c). NULL without a schema or out of memory (callers then use upb's defs). */
typedef struct {
  uint64_t classes;          /* bit (c & 63) set for each byte c of the field's name */
  const char *json;          /* its JSON name (upb_FieldDef_JsonName) */
  size_t json_len;
} po_FieldHintInfo;
typedef struct {
  const po_FieldInfo *infos; /* m's fields in declaration order (po_Schema_Fields) */
  int count;
  size_t list_len;
  const char *list;          /* po_FieldList without debug */
  po_FieldHintInfo fields[]; /* per field, declaration order */
} po_FieldIndex;
const po_FieldIndex *po_FieldIndex_Get(const po_Schema *schema, const upb_MessageDef *m);
/* Go's %v of a float64 (shortest round-trip form, "1e+300", "-1.5", "1234"). */
void po_FormatGoFloat(double d, char *buf, size_t size);
/* fmt's %v of a float64 (strconv 'g', shortest digits), as mapstructure prints values. */
void po_FormatGoFloatV(double d, char *buf, size_t size);

/* Envoy's protoc-gen-validate rules (pgv.c, pgv_string.c): the one evaluator, field by field.
 * The one walker that applies it to messages is value_rules.c (po_Rules_*). Each returns a
 * violation text ("150 violates uint32 lte 100") in the arena, or NULL when the rules hold. */
/* (A repeated field's item: by its `items` rules.) */
const char *po_Pgv_CheckScalar(const po_Schema *s, const upb_FieldDef *f, upb_MessageValue v,
                               po_Arena *a);
/* A list `arr` (NULL: empty) of field f: max_items, unique, and
 * min_items when `with_min` (not for a list merged into one the value does not show). */
const char *po_Pgv_CheckList(const po_Schema *s, const upb_FieldDef *f, const upb_Array *arr, bool with_min,
                             po_Arena *a);
/* A map (NULL: empty): max_pairs, its scalar keys' and values' rules, min_pairs when `with_min`. */
const char *po_Pgv_CheckMap(const po_Schema *s, const upb_FieldDef *f, const upb_Map *map, bool with_min,
                            po_Arena *a);
/* The rules of field f (NULL: none) on the Duration, Timestamp or Any `msg` of type m it holds. */
const char *po_Pgv_CheckMessageValue(const po_Schema *s, const upb_FieldDef *f, const upb_MessageDef *m,
                                     const upb_Message *msg, po_Arena *a);
/* The Duration or Timestamp rules of field f on every value from lo to hi (a patch that sets one
 * part of it: the other is whatever the resource has): a violation only when all break it. */
const char *po_Pgv_CheckTimeRange(const po_Schema *s, const upb_FieldDef *f, int64_t lo_s, int32_t lo_n,
                                  int64_t hi_s, int32_t hi_n, po_Arena *a);
/* In a whole message m: the first required child msg lacks (message.required, duration,
 * timestamp or any required), then the first required oneof with no member set. */
const char *po_Pgv_CheckRequired(const po_Schema *s, const upb_MessageDef *m, const upb_Message *msg, po_Arena *a);
const char *po_Pgv_CheckOneofs(const po_Schema *s, const upb_MessageDef *m, const upb_Message *msg, po_Arena *a);
/* What removing field f (from a message that has it) leaves: a required field or oneof member
 * gone, a list or map emptied, a proto3 scalar back at its default. */
const char *po_Pgv_CheckRemove(const po_Schema *s, const upb_FieldDef *f, po_Arena *a);
/* The rules of field f of a decoded message on what msg holds there, not descending: a list's
 * count (min_items, and an empty list, only when `whole`: a merged list keeps the items the value
 * does not show), a map's, a set wrapper's value, a set scalar, and when `whole` a proto3 scalar
 * at its default too (unless ignore_empty). Messages: the caller's (po_Pgv_CheckMessageValue). */
const char *po_Pgv_CheckField(const po_Schema *s, const upb_Message *msg, const upb_FieldDef *f, bool whole,
                              po_Arena *a);
/* When a rule kind set on field f is one the evaluator does not judge: a sentence naming it. */
const char *po_Pgv_Unjudged(const po_Schema *s, const upb_FieldDef *f, po_Arena *a);
/* Whether a RE2 `pattern` is judged (it translates to POSIX syntax). */
bool po_Pgv_PatternJudged(const char *re, po_Arena *a);
/* Whether m holds something at field f: a non-empty list or map, a set field, a proto3 scalar
 * not at its default (which cannot be told from absent). */
bool po_Pgv_Holds(const upb_Message *m, const upb_FieldDef *f);
/* Remembers, for the arena's life, each field's rules looked up in arena `a` (a walk over a big
 * value asks for the same fields' again and again). false when out of memory (not turned on). */
bool po_Pgv_MemoRules(po_Arena *a);
/* A scratch arena for a rule walk: its failures recorded in `track` (which outlives it), the
 * memo of rules on. NULL when out of memory: noted in `owner` (the caller's arena) and said in st. */
po_Arena *po_Pgv_Scratch(po_ArenaTrack *track, po_Arena *owner, po_Status *st);
/* For tests: field f's rules in arena `a` are `rules` (a validate.FieldRules of type def), as if
 * its options said so (the memo must be on). Rule kinds no field of the snapshot uses are tested
 * through it (tests/engine/test_pgv_kinds.c). */
bool po_Pgv_MemoPut_(po_Arena *a, const upb_FieldDef *f, const upb_Message *rules, const upb_MessageDef *def);
/* Whether message field f is required when absent (message.required, or its well-known type's
 * own `required`; never for a oneof member: PGV judges it only when set). */
bool po_Pgv_Required(const po_Schema *s, const upb_FieldDef *f, po_Arena *a);
/* message.skip on f: PGV does not look inside the message it holds. */
bool po_Pgv_Skips(const po_Schema *s, const upb_FieldDef *f, po_Arena *a);
/* Whether scalar x of field f is empty and f's rules say ignore_empty (PGV then skips them). */
bool po_Pgv_SkipsEmpty(const po_Schema *s, const upb_FieldDef *f, upb_MessageValue x, po_Arena *a);

/* A did-you-mean for an unknown field name of `m` (len bytes, not NUL-terminated), or NULL
 * (hint.c). The candidates come from `schema`'s table of m (NULL: from upb). */
const char *po_Hint_UnknownField(const po_Schema *schema, const upb_MessageDef *m, const char *name, size_t len,
                                 const char *judged_for, const po_ApiReleases *releases, po_Arena *a);
/* When `name` is a field another embedded snapshot (or a newer Envoy API we have evidence of)
 * has on `m` but `schema`'s snapshot lacks: a sentence saying which (newer.c). NULL otherwise. */
const char *po_Hint_NewerField(const po_Schema *schema, const upb_MessageDef *m, const char *name, size_t len,
                               const char *judged_for, const po_ApiReleases *releases, po_Arena *a);
/* What would work, for a value field `f` refused (hint.c): an enum's closest name and its valid
 * names, a Duration's accepted forms. NULL when there is nothing useful to add. */
const char *po_Hint_Value(const upb_FieldDef *f, const po_Value *v, po_Arena *a);

/* Envoy's own checks on a google.protobuf.Duration (MessageUtil::validateDurationFields, on every
 * Duration of a config it loads): no negative part, nanos at most 999999999, seconds at most
 * 315576000000. `has_*` false: that part is not known (a patch setting only the other one).
 * Returns the violation text, or NULL. */
const char *po_Duration_Check(bool has_seconds, int64_t seconds, bool has_nanos, int64_t nanos,
                              po_Arena *a);
/* Parses a friendly Duration ("5s", "1.5s", "250ms", "1h30m", "-2s"). 0: not a duration;
 * 1: parsed; 2: parsed but beyond int64 seconds (no Duration can hold it). */
int po_Duration_Parse(const char *s, int64_t *seconds, int32_t *nanos);

#endif
