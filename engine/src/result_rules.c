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

static void check_message(const po_Schema *s, const upb_Message *msg, const upb_MessageDef *d, const char *where,
                          size_t patch, const char *path, po_Arena *a, po_Diagnostics *out) {
  for (int i = 0; i < upb_MessageDef_FieldCount(d); i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(d, i);
    const char *v;
    if (upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsRepeated(f) && !upb_Message_Has(msg, f)) {
      v = po_Pgv_Required(s, f, a) ? po_Arena_Printf(a, "Envoy requires '%s'", upb_FieldDef_Name(f)) : NULL;
    } else {
      /* a whole message (created here); its set sub-messages other than wrappers were checked
       * when set, or are on the chain */
      v = po_Pgv_CheckField(s, msg, f, true, a);
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
