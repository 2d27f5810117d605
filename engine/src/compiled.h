/* Private: the compiled form of one patch (DESIGN.md section 1): the field chain resolved
 * against the schema and the value converted to the target's types, once, so applying it is a
 * walk and a few stores. */
#ifndef PO_ENGINE_COMPILED_H_
#define PO_ENGINE_COMPILED_H_

#include "internal.h"

typedef enum {
  kPo_SetScalar,   /* a scalar or enum field */
  kPo_SetWrapper,  /* a google.protobuf.*Value field from a scalar */
  kPo_SetList,     /* a repeated scalar or enum field, replaced whole */
  kPo_SetMessage,  /* a message field replaced by a new one with only the named children */
} po_SetKind;

typedef struct po_Setter {
  po_SetKind kind;
  const upb_FieldDef *field;          /* the field set on its parent */
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
  const upb_MessageDef *root;
  const upb_FieldDef **chain;         /* intermediate message fields, outermost first */
  size_t chain_len;
  const upb_FieldDef *target;         /* the field the path names */
  po_Setter set;                      /* add only */
} po_CompiledPatch;

typedef struct {
  bool debug;
  bool hints;
  bool envoy_rules;
  bool deprecations;
} po_PatchOptions;

/* Resolves and converts one patch against `root`. On failure `status` has Consul's exact text
 * and *hint (if not NULL) a did-you-mean suggestion or NULL. Envoy-rule violations and
 * deprecations go to `diags` (may be NULL) under `patch_index`, and do not fail the compile. */
bool po_CompiledPatch_Compile(const po_Schema *schema, const upb_MessageDef *root,
                              const po_Patch *patch, const po_PatchOptions *opts, po_Arena *a,
                              po_CompiledPatch *out, const char **hint, po_Diagnostics *diags,
                              int patch_index, po_Status *status);
/* Applies a compiled patch; allocations go to `arena` (the message's). false only on no memory. */
bool po_CompiledPatch_Apply(const po_CompiledPatch *cp, upb_Message *msg, upb_Arena *arena);

/* Consul's fieldType(): "uint32", "enum", "google.protobuf.Duration", "repeated string", "map". */
const char *po_FieldType(const upb_FieldDef *f);
/* Go's protoreflect.Kind name of a field ("int32", "sint64", "message", ...). */
const char *po_KindName(const upb_FieldDef *f);
/* Consul's field list: "available <FullName> fields:\n" + names (first 10 unless debug). */
char *po_FieldList(const upb_MessageDef *m, bool debug, po_Arena *a);
/* Go's %v of a float64 (shortest round-trip form, "1e+300", "-1.5", "1234"). */
void po_FormatGoFloat(double d, char *buf, size_t size);

/* Envoy's protoc-gen-validate rules for a value about to be set (pgv.c). Returns a violation
 * text ("150 violates uint32 lte 100") in the arena, or NULL when the value satisfies them. */
const char *po_Pgv_CheckScalar(const po_Schema *s, const upb_FieldDef *f, upb_MessageValue v,
                               po_Arena *a);
const char *po_Pgv_CheckList(const po_Schema *s, const upb_FieldDef *f, size_t count, po_Arena *a);
const char *po_Pgv_CheckMessage(const po_Schema *s, const upb_FieldDef *f,
                                const po_Setter *set, po_Arena *a);
const char *po_Pgv_CheckRemove(const po_Schema *s, const upb_FieldDef *f, po_Arena *a);

/* A did-you-mean for an unknown field name of `m`, or NULL (hint.c). */
const char *po_Hint_UnknownField(const upb_MessageDef *m, const char *name, po_Arena *a);
/* When `name` is a field newer Envoy APIs have on `m` but this snapshot lacks: a sentence saying
 * so (newer.c). NULL otherwise. */
const char *po_Hint_NewerField(const upb_MessageDef *m, const char *name, po_Arena *a);
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
