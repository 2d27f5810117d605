/* Private: the one walk that judges Envoy's protoc-gen-validate rules on a decoded message
 * (value_rules.c), shared by its three users: native EnvoyFilter / EnvoyPatchPolicy values
 * (po_Message_CheckRules), a PropertyOverride patch at compile (patch_rules.c: its value set
 * into a scratch copy of the parents it creates) and preview (result_rules.c: the resource a
 * patch changed). The rules themselves are pgv.c's. */
#ifndef PO_ENGINE_RULES_WALK_H_
#define PO_ENGINE_RULES_WALK_H_

#include "compiled.h"

enum { kPo_RulesMaxDepth = 64, kPo_RulesMaxScaffold = 64, kPo_RulesMaxSteps = 64 + 64 + 2 };

/* One step of the path from the root: a field, a list item, or a map entry's key. */
typedef struct {
  const upb_FieldDef *field; /* a field's step; else an item's or a key's */
  size_t index;
  const upb_FieldDef *key_field; /* a map entry's step */
  upb_MessageValue key;
} po_RuleStep;

typedef struct po_RuleWalk po_RuleWalk;

/* A finding at steps[0..n): about the message at depth n when `message_level` (a required child
 * or oneof it lacks, a Duration's own bounds), else about the field steps[n-1] names (for a list
 * item's, the last field step before it). An error of kind kPo_DiagKind_EnvoyRule, or a warning
 * (kPo_DiagKind_EnvoyRuleNotJudged, or EnvoyRule: too deep to judge). */
typedef void (*po_RuleFound)(po_RuleWalk *w, size_t n, bool message_level, po_Severity sev, po_DiagKind kind,
                             const char *text);

struct po_RuleWalk {
  const po_Schema *s;
  po_Arena *scratch;  /* rule lookups (memoized) and violation texts */
  po_Arena *a;        /* the findings' texts: the caller's */
  /* Where the judged value is: value_depth steps below the root. Above it the message only nests
   * the value: nothing there is judged. With `chain`, the walk follows chain[0..value_depth)
   * there and nothing else (a live resource: its other parts are not the patch's); else it
   * descends every set message, and at value_depth the value is the field named value_field
   * (proto or JSON name) or, when NULL, whatever is held there. */
  size_t value_depth;
  const char *value_field;
  const upb_FieldDef *const *chain;
  bool replace_lists; /* Istio MERGE_AND_REPLACE_LIST */
  po_RuleFound found;
  void *ctx;
  po_RuleStep steps[kPo_RulesMaxSteps];
  bool oom, deep;
  const upb_FieldDef *warned[8]; /* fields whose rule kinds not judged were said already */
  size_t warned_len;
};

/* Judges msg (of type md) as the walk's value says; `whole`: the value is all of its message. */
void po_Rules_Walk(po_RuleWalk *w, const upb_Message *msg, const upb_MessageDef *md, bool whole);
/* The RFC 6901 pointer of steps[from..n) in w->a (proto names; "~", "/" of a key escaped). */
const char *po_Rules_Pointer(po_RuleWalk *w, size_t from, size_t n);

/* A compile's judgment of one patch (patch_rules.c): `cp`'s value set into a scratch copy of the
 * parents it creates, walked; what holds whatever the resource is goes to `d` as errors, what
 * holds only when the patch creates a parent as a warning that leaves it to preview. false when
 * memory ran out (then the findings are not all there: no verdict). */
bool po_Rules_JudgePatch(const po_Schema *s, const po_CompiledPatch *cp, const po_PatchOptions *o, const char *path,
                         int idx, po_Arena *a, po_Diagnostics *d);

#endif
