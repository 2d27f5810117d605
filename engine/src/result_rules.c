/* po_Override_ApplyChecked: po_Override_Apply, then Envoy's protoc-gen-validate rules on the
 * messages the patches created on the way to their targets (preview's "Envoy-rule errors in
 * the result").
 *
 * Why only those: a compile already checks the value each patch sets (po_Pgv_CheckScalar and
 * friends) and each remove of a required field; the resource's other parts are what Envoy
 * accepted. What no compile can see is an `add` whose path passes through a message the
 * resource did not have: the add creates it empty but for the target, and its other fields may
 * break Envoy's rules (`/load_assignment/policy/overprovisioning_factor` on an EDS cluster
 * creates a ClusterLoadAssignment without the `cluster_name` Envoy requires). Parents that
 * existed are not re-checked, so the cost is one presence walk per matching patch unless a
 * parent is created: then one rules lookup per field of each created message. */
#include <string.h>

#include "compiled.h"
#include "override_ir.h"

/* The message a set singular message field holds, or NULL when unset. */
static const upb_Message *child(const upb_Message *m, const upb_FieldDef *f) {
  return upb_Message_Has(m, f) ? upb_Message_Get(m, f).msg_val : NULL;
}

/* The index in cp->chain of the first parent `m` lacks, or chain_len when it has them all. */
static size_t first_absent(const po_CompiledPatch *cp, const upb_Message *m) {
  for (size_t i = 0; i < cp->chain_len; i++) {
    if (!(m = child(m, cp->chain[i]->def))) return i;
  }
  return cp->chain_len;
}

/* The path of proto field names down to chain[upto] (inclusive), for messages. */
static const char *chain_path(const po_CompiledPatch *cp, size_t upto, po_Arena *a) {
  const char *p = "";
  for (size_t i = 0; i <= upto && p; i++) p = po_Arena_Printf(a, "%s/%s", p, upb_FieldDef_Name(cp->chain[i]->def));
  return p;
}

/* Whether the field's rules for its kind say `ignore_empty` (PGV skips the rules for an empty
 * value: a created message's unset fields are empty). */
static bool ignores_empty(const po_Schema *s, const upb_FieldDef *f, po_Arena *a) {
  const upb_MessageDef *rd = NULL;
  const upb_Message *r = po_Schema_FieldRules(s, f, po_Arena_Upb(a), &rd);
  const upb_FieldDef *kf = r ? upb_MessageDef_FindFieldByName(rd, po_KindName(f)) : NULL;
  if (!kf || !upb_FieldDef_IsSubMessage(kf) || !upb_Message_Has(r, kf)) return false;
  const upb_MessageDef *kd = upb_FieldDef_MessageSubDef(kf);
  const upb_FieldDef *ie = upb_MessageDef_FindFieldByName(kd, "ignore_empty");
  const upb_Message *k = upb_Message_Get(r, kf).msg_val;
  return ie && upb_FieldDef_CType(ie) == kUpb_CType_Bool && upb_Message_Get(k, ie).bool_val;
}

static bool is_empty(const upb_FieldDef *f, upb_MessageValue x) {
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_String:
    case kUpb_CType_Bytes: return x.str_val.size == 0;
    case kUpb_CType_Bool: return !x.bool_val;
    case kUpb_CType_Float: return x.float_val == 0;
    case kUpb_CType_Double: return x.double_val == 0;
    case kUpb_CType_Int64:
    case kUpb_CType_UInt64: return x.int64_val == 0;
    default: return x.int32_val == 0;
  }
}

static void check_message(const po_Schema *s, const upb_Message *msg, const upb_MessageDef *d, const char *where,
                          size_t patch, const char *path, po_Arena *a, po_Diagnostics *out) {
  for (int i = 0; i < upb_MessageDef_FieldCount(d); i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(d, i);
    const char *v = NULL;
    if (upb_FieldDef_IsRepeated(f)) {
      const upb_Array *arr = upb_FieldDef_IsMap(f) ? NULL : upb_Message_Get(msg, f).array_val;
      if (!upb_FieldDef_IsMap(f)) v = po_Pgv_CheckList(s, f, arr ? upb_Array_Size(arr) : 0, a);
    } else if (upb_FieldDef_IsSubMessage(f)) {
      if (!upb_Message_Has(msg, f)) {
        v = po_Pgv_CheckRemove(s, f, a) ? po_Arena_Printf(a, "Envoy requires '%s'", upb_FieldDef_Name(f)) : NULL;
      } else {
        const upb_MessageDef *sd = upb_FieldDef_MessageSubDef(f);
        const upb_FieldDef *vf = upb_MessageDef_FindFieldByName(sd, "value");
        /* a wrapper's rules are its value's; other messages were checked when set */
        if (vf && !strncmp(upb_MessageDef_FullName(sd), "google.protobuf.", 16) && upb_MessageDef_FieldCount(sd) == 1) {
          v = po_Pgv_CheckScalar(s, f, upb_Message_Get(upb_Message_Get(msg, f).msg_val, vf), a);
        }
      }
    } else if (upb_FieldDef_HasPresence(f)) {
      /* a oneof member or an optional scalar: its rules apply only when it is set */
      if (upb_Message_Has(msg, f)) v = po_Pgv_CheckScalar(s, f, upb_Message_Get(msg, f), a);
    } else {
      /* a proto3 scalar is checked with its value, default or not (PGV does so), unless its
       * rules ignore an empty one and it is (upb_Message_Has would assert: no presence) */
      upb_MessageValue x = upb_Message_Get(msg, f);
      if (!(is_empty(f, x) && ignores_empty(s, f, a))) v = po_Pgv_CheckScalar(s, f, x, a);
    }
    if (!v) continue;
    const char *text = po_Arena_Printf(a, "the %s this patch creates at %s breaks Envoy's rule on '%s': %s",
                                       upb_MessageDef_FullName(d), where, upb_FieldDef_Name(f), v);
    if (text) po_Diagnostics_Add(out, kPo_Severity_Error, kPo_DiagKind_EnvoyRule, (int)patch, path, text);
  }
}

bool po_Override_ApplyChecked(const po_Override *o, po_Message *m, const po_Payload *p, bool *patched,
                              po_Diagnostics *rule_errors, po_Status *st) {
  size_t n = o->valid ? o->args.patch_count : 0;
  size_t *absent = n ? po_Arena_Malloc(m->arena, n * sizeof *absent) : NULL;
  if (n && !absent) return po_Status_Set(st, kPo_ErrNoMemory, "out of memory"), false;
  for (size_t i = 0; i < n; i++) {
    const po_CompiledPatch *cp = &o->compiled[i];
    bool applies = cp->target && cp->root == m->def && cp->op == kPo_Op_Add &&
                   (!p || o->bare || po_ResourceFilter_Matches(&o->args.patches[i].resource_filter, p));
    absent[i] = applies ? first_absent(cp, m->msg) : SIZE_MAX;
  }
  if (!po_Override_Apply(o, m, p, patched, st)) return false;
  const po_Schema *s = po_Engine_Schema(st);
  if (!s) return false;
  for (size_t i = 0; i < n; i++) {
    const po_CompiledPatch *cp = &o->compiled[i];
    if (absent[i] == SIZE_MAX || absent[i] >= cp->chain_len) continue;
    /* every message from the first created one down is new; checked once per patch, after all
     * the override's patches (a later patch may fill in what an earlier one's parent needs) */
    const upb_Message *msg = m->msg;
    for (size_t k = 0; k < cp->chain_len && msg; k++) {
      msg = child(msg, cp->chain[k]->def);
      if (k < absent[i] || !msg) continue;
      check_message(s, msg, upb_FieldDef_MessageSubDef(cp->chain[k]->def), chain_path(cp, k, m->arena), i,
                    o->args.patches[i].path, m->arena, rule_errors);
    }
  }
  return true;
}
