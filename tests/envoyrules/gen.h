/* Private to the generator (gen.c: the walk and the path forms; gen_values.c: values on and
 * around each rule's boundaries, read from the embedded schema's validate.FieldRules). */
#ifndef PO_TESTS_ENVOYRULES_GEN_H_
#define PO_TESTS_ENVOYRULES_GEN_H_

#include "diff.h"
#include "po/schema.h"
#include "upb/reflection.h"

/* A field's rules: the FieldRules message and the member of its `type` oneof that is set
 * ("uint32", "string", "duration", ... or NULL), with that member's message. */
typedef struct {
  const upb_Message *r;
  const upb_MessageDef *rd;
  const char *type;           /* the member's name, or NULL (only `message` rules, or none) */
  const upb_Message *k;       /* the member's rules message */
  const upb_MessageDef *kd;
} po_DiffRules;

/* false when the field has no rules at all. */
bool po_DiffRules_Of(const po_Schema *s, const upb_FieldDef *f, upb_Arena *ua, po_DiffRules *out);
/* A scalar constraint of a rules message, when set. */
bool po_DiffRules_Get(const upb_Message *m, const upb_MessageDef *d, const char *name, upb_MessageValue *v,
                      const upb_FieldDef **f);
/* A repeated constraint (`in`, `not_in`), NULL when empty. */
const upb_Array *po_DiffRules_List(const upb_Message *m, const upb_MessageDef *d, const char *name,
                                   const upb_FieldDef **f);
/* message.required on the field. */
bool po_DiffRules_MessageRequired(const po_DiffRules *r);
/* The oneof's (validate.required) option. */
bool po_Diff_OneofRequired(const po_Schema *s, const upb_OneofDef *o, upb_Arena *ua);

/* A value given to a field, and what it aims at. */
typedef struct {
  const char *json;  /* JSON text */
  const char *kind;  /* "uint32.lte", ... */
} po_DiffValue;

typedef struct {
  po_DiffValue *v;
  size_t n, cap;
} po_DiffValues;

/* Values on and around every boundary of the field's rules, for the scalar (or wrapped scalar,
 * or enum) the field holds; `extra` more drawn at random near a random boundary. Strings and
 * numbers in JSON as Consul's wire convention reads them. */
bool po_DiffValues_Scalar(const po_DiffRules *r, const upb_FieldDef *scalar, po_Arena *a, po_DiffRng *rng,
                          size_t extra, po_DiffValues *out);
/* A value the field's rules probably accept (best effort: the oracle judges), or NULL when the
 * field cannot be given one in an object value (a message, list, map or bytes). */
const char *po_DiffValues_Valid(const po_Schema *s, const upb_FieldDef *f, upb_Arena *ua, po_Arena *a);

/* Durations (and Timestamps: the same two fields) around the rule's boundaries, as seconds and
 * nanos pairs; seconds-only and nanos-only values for the /seconds and /nanos forms. */
typedef struct {
  int64_t seconds;
  int64_t nanos;     /* int64 so that an out-of-range int32 can be written */
  const char *kind;
} po_DiffDur;

typedef struct {
  po_DiffDur *v;
  size_t n, cap;
} po_DiffDurs;

bool po_DiffDurs_Of(const po_DiffRules *r, po_Arena *a, po_DiffRng *rng, size_t extra, po_DiffDurs *out);

/* A message's own full name is in "google.protobuf." (a wrapper, Duration, Struct ...). */
bool po_Diff_IsWellKnown(const upb_MessageDef *m);
/* The wrapped scalar of a google.protobuf.*Value field, or the field itself. */
const upb_FieldDef *po_Diff_Scalar(const upb_FieldDef *f);

#endif
