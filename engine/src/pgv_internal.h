/* Private to the rule evaluator (pgv.c, pgv_string.c): reading a validate.*Rules message by
 * reflection. A rules message is small (a handful of set fields), so looking members up by name
 * costs little next to decoding the field's options, which the memo (po_Pgv_MemoRules) saves. */
#ifndef PO_ENGINE_PGV_INTERNAL_H_
#define PO_ENGINE_PGV_INTERNAL_H_

#include "compiled.h"

/* Whether a singular field is set. upb_Message_Has asserts on fields without presence (proto3
 * scalars such as Duration.seconds): for those, set means non-zero. */
bool po_Pgv_Present_(const upb_Message *m, const upb_FieldDef *f);

/* The sub-message `name` of a rules message, when set; *sd gets its type. */
static inline const upb_Message *po_Pgv_Sub_(const upb_Message *m, const upb_MessageDef *d, const char *name,
                                             const upb_MessageDef **sd) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || !upb_FieldDef_IsSubMessage(f) || upb_FieldDef_IsRepeated(f) || !upb_Message_Has(m, f)) return NULL;
  *sd = upb_FieldDef_MessageSubDef(f);
  return upb_Message_Get(m, f).msg_val;
}

/* The singular scalar member `name`, when set (non-zero for a member without presence). */
static inline bool po_Pgv_Get_(const upb_Message *m, const upb_MessageDef *d, const char *name,
                               const upb_FieldDef **fo, upb_MessageValue *v) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || upb_FieldDef_IsRepeated(f) || !po_Pgv_Present_(m, f)) return false;
  *fo = f;
  *v = upb_Message_Get(m, f);
  return true;
}

/* A bool member that is set and true. */
static inline bool po_Pgv_Flag_(const upb_Message *m, const upb_MessageDef *d, const char *name) {
  const upb_FieldDef *f;
  upb_MessageValue v;
  return po_Pgv_Get_(m, d, name, &f, &v) && upb_FieldDef_CType(f) == kUpb_CType_Bool && v.bool_val;
}

/* The repeated member `name`, when it has items. */
static inline const upb_Array *po_Pgv_List_(const upb_Message *m, const upb_MessageDef *d, const char *name,
                                            const upb_FieldDef **fo) {
  const upb_FieldDef *f = upb_MessageDef_FindFieldByName(d, name);
  if (!f || !upb_FieldDef_IsRepeated(f)) return NULL;
  *fo = f;
  const upb_Array *arr = upb_Message_Get(m, f).array_val;
  return arr && upb_Array_Size(arr) ? arr : NULL;
}

/* StringRules or BytesRules `k` (of type kd) on value v: NULL, or the violation. `s`, the schema
 * the rules come from, keeps the compiled `pattern`s (NULL: each compiled for the value). */
const char *po_Pgv_CheckString_(const po_Schema *s, const upb_Message *k, const upb_MessageDef *kd,
                                upb_StringView v, bool bytes, po_Arena *a);

#endif
