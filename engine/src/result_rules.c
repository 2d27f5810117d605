/* po_Override_ApplyChecked: po_Override_Apply, then Envoy's protoc-gen-validate rules on what
 * each matching add patch made of the resource (preview's "Envoy-rule errors in the result"):
 * the messages it created on the way to its target and the value it set, both whole, judged by
 * the one rule walk (rules_walk.h) on the patched resource itself.
 *
 * A compile judges the value a patch sets already (patch_rules.c), and says what a parent it
 * creates would break only as a condition, since it cannot know the resource. Here the
 * resource is known: an `add` whose path passes through a message the resource did not have
 * creates it empty but for the target (`/load_assignment/policy/overprovisioning_factor` on an
 * EDS cluster creates a ClusterLoadAssignment without the `cluster_name` Envoy requires), and the
 * value message is judged as what it is in its place (`/transport_socket {}`: no name). Parents
 * that existed are not re-judged (the rest of the resource is what Envoy accepted), so the cost is
 * one presence walk per matching patch, then one rules lookup per field of each created or set
 * message: the walk follows the patch's path only. */
#include <string.h>

#include "internal.h"
#include "override_ir.h"
#include "rules_walk.h"

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

typedef struct {
  const upb_MessageDef *root;
  size_t unit_depth; /* the steps to what the patch sets whole: above it, what it created */
  size_t patch;
  const char *path;
  po_Diagnostics *out;
} Result;

/* The type of the message at steps[0..n). */
static const upb_MessageDef *type_at(const po_RuleWalk *w, const upb_MessageDef *m, size_t n) {
  const upb_FieldDef *last = NULL;
  for (size_t i = 0; i < n && m; i++) {
    const po_RuleStep *s = &w->steps[i];
    if (s->field) {
      last = s->field;
      m = upb_FieldDef_IsSubMessage(last) && !upb_FieldDef_IsMap(last) && !upb_FieldDef_IsRepeated(last)
              ? upb_FieldDef_MessageSubDef(last) : m;
    } else if (last) {
      const upb_MessageDef *e = upb_FieldDef_MessageSubDef(last);
      const upb_FieldDef *v = s->key_field && e ? upb_MessageDef_FindFieldByNumber(e, 2) : NULL;
      m = s->key_field ? (v && upb_FieldDef_IsSubMessage(v) ? upb_FieldDef_MessageSubDef(v) : NULL) : e;
    }
  }
  return m;
}

static void result_found(po_RuleWalk *w, size_t n, bool message_level, po_Severity sev, po_DiagKind kind,
                         const char *text) {
  Result *r = w->ctx;
  /* the message the finding is in: for a list item's, the one holding the list */
  size_t fs = n;
  while (!message_level && fs > 1 && !w->steps[fs - 1].field) fs--;
  size_t at = message_level ? n : fs - 1;
  const upb_MessageDef *m = type_at(w, r->root, at);
  const char *where = po_Rules_Pointer(w, 0, at);
  const char *verb = at < r->unit_depth ? "creates" : "sets";
  const char *msg =
      message_level
          ? po_Arena_Printf(w->a, "the %s this patch %s at %s breaks Envoy's rules: %s", m ? upb_MessageDef_FullName(m) : "message",
                            verb, where ? where : "", text)
          : po_Arena_Printf(w->a, "the %s this patch %s at %s breaks Envoy's rule on '%s': %s",
                            m ? upb_MessageDef_FullName(m) : "message", verb, where ? where : "",
                            upb_FieldDef_Name(w->steps[fs - 1].field), text);
  if (!msg || !po_Diagnostics_Add(r->out, sev, kind, (int)r->patch, r->path, msg)) w->oom = true;
}

/* A wrapper or a Duration or Timestamp: a patch through its value or one of its parts leaves
 * all of it known (preview: the resource is here), so all of it is judged. */
static bool whole_parent(const upb_FieldDef *f) {
  upb_WellKnown wk = upb_FieldDef_IsSubMessage(f) ? upb_MessageDef_WellKnownType(upb_FieldDef_MessageSubDef(f))
                                                  : kUpb_WellKnown_Unspecified;
  return (wk >= kUpb_WellKnown_DoubleValue && wk <= kUpb_WellKnown_BoolValue) || wk == kUpb_WellKnown_Duration ||
         wk == kUpb_WellKnown_Timestamp;
}

/* One patch's created parents (from chain[absent]) and value, on the patched message m. */
static bool judge(const po_Schema *s, const po_CompiledPatch *cp, size_t absent, po_Message *m, size_t patch,
                  const char *path, po_Arena *scratch, po_Diagnostics *out) {
  size_t k = cp->chain_len;
  const upb_FieldDef **chain = po_Arena_Malloc(scratch, (k + 1) * sizeof *chain);
  po_RuleWalk *w = po_Arena_Malloc(scratch, sizeof *w);
  if (!chain || !w) return false;
  for (size_t i = 0; i < k; i++) chain[i] = cp->chain[i]->def;
  chain[k] = cp->target;
  Result r = {.root = m->def, .unit_depth = k && whole_parent(chain[k - 1]) ? k : k + 1, .patch = patch, .path = path, .out = out};
  /* judged from the first message the patch created, else from what it set whole */
  size_t from = absent < k ? absent + 1 : r.unit_depth;
  *w = (po_RuleWalk){.s = s, .scratch = scratch, .a = m->arena, .value_depth = from, .chain = chain,
                     .found = result_found, .ctx = &r};
  po_Rules_Walk(w, m->msg, m->def, true);
  return !w->oom;
}

bool po_Override_ApplyChecked(const po_Override *o, po_Message *m, const po_Payload *p, bool *patched,
                              po_Diagnostics *rule_errors, po_Status *st) {
  size_t n = o->valid ? o->args.patch_count : 0;
  size_t *absent = n ? po_Arena_Malloc(m->arena, n * sizeof *absent) : NULL;
  if (n && !absent) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), false;
  for (size_t i = 0; i < n; i++) {
    const po_CompiledPatch *cp = &o->compiled[i];
    bool applies = cp->target && cp->root == m->def && cp->op == kPo_Op_Add &&
                   (!p || o->bare || po_ResourceFilter_Matches(&o->args.patches[i].resource_filter, p));
    absent[i] = applies ? first_absent(cp, m->msg) : SIZE_MAX;
  }
  if (!po_Override_Apply(o, m, p, patched, st)) return false;
  const po_Schema *s = o->schema;
  po_ArenaTrack track; /* a lookup or a text not allocated would be a finding silently lost */
  po_Arena *scratch = po_Pgv_Scratch(&track, m->arena, st);
  if (!scratch) return false;
  /* checked once per patch, after all the override's patches (a later patch may fill in what
   * an earlier one's parent needs) */
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    if (absent[i] == SIZE_MAX) continue;
    ok = judge(s, &o->compiled[i], absent[i], m, i, o->args.patches[i].path, scratch, rule_errors);
  }
  ok = ok && !track.failed;
  po_Arena_FreeInto(scratch, m->arena);
  return ok || po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
}
