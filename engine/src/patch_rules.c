/* A compile's judgment of one PropertyOverride patch by Envoy's protoc-gen-validate rules: what
 * Envoy's validator will say of the message the patch leaves, whatever the path's form.
 *
 * An add is applied to an empty copy of its root (po_CompiledPatch_Apply: the parents it walks
 * through are created, the value set) and that copy walked by the one rule walk (rules_walk.h),
 * every message below the root whole: the value's unset fields too (a required oneof or child, a
 * string left empty against min_len, a list against min_items). Each finding is then one of:
 * - certain, when it is inside what the patch sets whole: the target's value, or the wrapper a
 *   `/value` path fills (a wrapper has no other field, so `/max_ejection_percent/value 101` is
 *   judged by max_ejection_percent's `lte 100`). An error.
 * - conditional, in a parent the patch creates only when the resource lacks it
 *   (`/upstream_bind_config/source_address/address` creates a SocketAddress without the port its
 *   oneof requires, if there was none). No compile can know the resource: a warning that says so
 *   and leaves it to `preview`, which judges the patched resource (result_rules.c).
 * A Duration or Timestamp set a part at a time (`/connect_timeout/nanos 0`) is what the patch
 * sets, like a wrapper through `/value`, and judged as the patch leaves it on a resource without
 * it (the other part 0), as Envoy's validator judges the patched empty resource: an error that
 * says so and how to set the whole Duration. When another patch of the override sets the other
 * part on every resource this one patches (the same type and direction: override.c finds it),
 * the two are judged together as the value they leave, once, at the later patch. A remove is judged on what it leaves
 * (po_Pgv_CheckRemove; a wrapper's value back at zero; a Duration part at zero: an error when
 * every value of the other part breaks the rule, else a warning left to preview).
 * Cost: the messages of the path only (a patch value is one message deep, Consul's PatchStruct
 * sets no nested maps), one rules lookup per field of each (the schema keeps each field's rules
 * decoded: proto/src/rules.c). */
#include <string.h>

#include "internal.h"
#include "rules_walk.h"

typedef struct {
  const char *path; /* the patch's */
  int idx;
  po_Diagnostics *d;
  size_t unit_depth;          /* the steps to what the patch sets whole */
  const upb_FieldDef *unit;   /* and its field */
  const char *part;           /* a Duration's or Timestamp's part the patch sets, or NULL */
  const po_Schema *s;
  const po_CompiledPatch *cp;
  const po_PatchOptions *o;   /* its other_part: the override's patch setting the other part */
  bool conditional;           /* conditional findings still said (none once an error is certain) */
} Patch;

static void add(po_RuleWalk *w, po_Severity sev, po_DiagKind kind, const char *text) {
  Patch *p = w->ctx;
  if (!text || !po_Diagnostics_Add(p->d, sev, kind, p->idx, p->path, text)) w->oom = true;
}

/* The Duration or Timestamp as this patch and the override's patch setting its other part leave
 * it together (Patches[i] /seconds 5, Patches[j] /nanos 500: 5.0000005s), judged as one value,
 * whether or not either part alone breaks a rule; said once, at the later of the two. */
static void both_parts(po_RuleWalk *w, Patch *p, const char *at) {
  if (p->idx < p->o->other_idx) return;
  const po_Value *ov = p->o->other_part;
  bool seconds = upb_FieldDef_Number(p->cp->target) == 1;
  int64_t mine = seconds ? p->cp->set.value.int64_val : p->cp->set.value.int32_val, other = po_Value_Int(ov);
  int64_t sec = seconds ? mine : other;
  if ((seconds ? other : mine) < -999999999 || (seconds ? other : mine) > 999999999) return; /* its own error */
  int32_t nanos = (int32_t)(seconds ? other : mine);
  const char *v = po_Pgv_CheckTimeRange(p->s, p->unit, sec, nanos, sec, nanos, w->a);
  if (!v) return;
  add(w, kPo_Severity_Error, kPo_DiagKind_EnvoyRule,
      po_Arena_Printf(w->a, "%s: %s (with Patches[%d], which sets its %s to %lld)", at, v, p->o->other_idx,
                      seconds ? "nanos" : "seconds", (long long)other));
}

static void patch_found(po_RuleWalk *w, size_t n, bool message_level, po_Severity sev, po_DiagKind kind,
                        const char *text) {
  Patch *p = w->ctx;
  const char *at = po_Rules_Pointer(w, 0, n);
  if (!at) {
    w->oom = true;
    return;
  }
  bool certain = n >= p->unit_depth && w->steps[p->unit_depth - 1].field == p->unit;
  if (certain && p->part && n == p->unit_depth && message_level && p->o->other_part) return; /* both_parts */
  if (certain && p->part && n == p->unit_depth && message_level) {
    /* the Duration as this patch leaves it where the resource has none */
    add(w, sev, kind,
        po_Arena_Printf(w->a, "%s: %s (this patch sets only its %s: the rest is the resource's, or 0 where the "
                              "resource has no %s; set it whole, %s {\"seconds\": S, \"nanos\": N}, to say what it is)",
                        at, text, p->part, upb_FieldDef_Name(p->unit), at));
    return;
  }
  if (certain || sev == kPo_Severity_Warning) {
    add(w, sev, kind, po_Arena_Printf(w->a, "%s: %s", at, text));
    return;
  }
  if (!p->conditional) return;
  size_t fs = n; /* the field step: a list item's finding is in the message holding the list */
  while (!message_level && fs > 1 && !w->steps[fs - 1].field) fs--;
  const char *created = po_Rules_Pointer(w, 0, message_level ? n : fs - 1);
  add(w, kPo_Severity_Warning, kPo_DiagKind_EnvoyRuleIfResource,
      po_Arena_Printf(w->a, "if the resource has no %s, this patch creates one that Envoy refuses: %s: %s (a compile "
                            "cannot know the resource: `propertyoverride preview` judges it on a proxy's configuration)",
                      created ? created : "", at, text));
}

static bool is_time(const upb_MessageDef *m) {
  upb_WellKnown wk = m ? upb_MessageDef_WellKnownType(m) : kUpb_WellKnown_Unspecified;
  return wk == kUpb_WellKnown_Duration || wk == kUpb_WellKnown_Timestamp;
}

static bool is_wrapper(const upb_MessageDef *m) {
  upb_WellKnown wk = m ? upb_MessageDef_WellKnownType(m) : kUpb_WellKnown_Unspecified;
  return wk >= kUpb_WellKnown_DoubleValue && wk <= kUpb_WellKnown_BoolValue;
}

/* The rules of Duration or Timestamp field h on what a patch leaves when it sets part `t`
 * (seconds or nanos) to `v` (removed: 0) and the other part is anything. */
static const char *time_part(const po_Schema *s, const upb_FieldDef *h, const upb_FieldDef *t, int64_t v,
                             po_Arena *a) {
  bool duration = upb_MessageDef_WellKnownType(upb_FieldDef_MessageSubDef(h)) == kUpb_WellKnown_Duration;
  /* the range each part can take: a Duration Envoy loads is not negative (po_Duration_Check) */
  int64_t smin = duration ? 0 : INT64_C(-62135596800), smax = duration ? INT64_C(315576000000) : INT64_C(253402300799);
  if (upb_FieldDef_Number(t) == 1) return po_Pgv_CheckTimeRange(s, h, v, 0, v, 999999999, a);
  return po_Pgv_CheckTimeRange(s, h, smin, (int32_t)v, smax, (int32_t)v, a);
}

/* The pointer of the path's parents: where a Duration set a part at a time is. */
static const char *chain_pointer(const po_CompiledPatch *cp, po_Arena *a) {
  po_TextBuf t = {.a = a};
  for (size_t i = 0; i < cp->chain_len; i++) {
    po_TextBuf_Put(&t, "/", 1);
    po_TextBuf_Puts(&t, upb_FieldDef_Name(cp->chain[i]->def));
  }
  return t.buf ? t.buf : "";
}

/* A remove: what clearing the target leaves, in a message that has it (else it does nothing). */
static void judge_remove(const po_Schema *s, const po_CompiledPatch *cp, Patch *p, po_Arena *a) {
  const char *v = po_Pgv_CheckRemove(s, cp->target, a);
  const upb_FieldDef *h = cp->chain_len ? cp->chain[cp->chain_len - 1]->def : NULL;
  const upb_MessageDef *hm = h ? upb_FieldDef_MessageSubDef(h) : NULL;
  if (!v && is_wrapper(hm)) {
    upb_MessageValue zero;
    memset(&zero, 0, sizeof zero);
    v = po_Pgv_CheckScalar(s, h, zero, a);
    if (v) v = po_Arena_Printf(a, "the %s it leaves holds the zero value: %s", upb_FieldDef_Name(h), v);
  } else if (!v && is_time(hm)) {
    v = time_part(s, h, cp->target, 0, a);
    /* not on every resource: on one whose other part is zero too */
    const char *zero = v ? NULL : po_Pgv_CheckTimeRange(s, h, 0, 0, 0, 0, a);
    if (zero) {
      po_Diagnostics_Add(p->d, kPo_Severity_Warning, kPo_DiagKind_EnvoyRuleIfResource, p->idx, p->path,
                         po_Arena_Printf(a, "if the resource's %s has no %s either, what this remove leaves breaks Envoy's "
                                            "rule: %s (a compile cannot know the resource: `propertyoverride preview` "
                                            "judges it on a proxy's configuration)",
                                         chain_pointer(cp, a), upb_FieldDef_Number(cp->target) == 1 ? "nanos" : "seconds",
                                         zero));
    }
  }
  if (v) po_Diagnostics_Add(p->d, kPo_Severity_Error, kPo_DiagKind_EnvoyRule, p->idx, p->path,
                            po_Arena_Printf(a, "%s: %s", p->path, v));
}

bool po_Rules_JudgePatch(const po_Schema *s, const po_CompiledPatch *cp, const po_PatchOptions *o, const char *path,
                         int idx, po_Arena *a, po_Diagnostics *d) {
  if (!cp->target) return true;
  Patch p = {.path = path, .idx = idx, .d = d, .conditional = true, .s = s, .cp = cp, .o = o};
  if (cp->op == kPo_Op_Remove) {
    judge_remove(s, cp, &p, a);
    return true;
  }
  size_t k = cp->chain_len;
  const upb_FieldDef *h = k ? cp->chain[k - 1]->def : NULL;
  const upb_MessageDef *hm = h ? upb_FieldDef_MessageSubDef(h) : NULL;
  /* what the patch sets whole: its target, or the wrapper whose value it sets, or the Duration
   * or Timestamp one part of which it sets */
  bool parent_unit = is_wrapper(hm) || is_time(hm);
  p.unit_depth = parent_unit ? k : k + 1;
  p.unit = parent_unit ? h : cp->target;
  p.part = is_time(hm) ? upb_FieldDef_Name(cp->target) : NULL;
  /* the copy, the walk's lookups and texts in an arena of this call: an override's arena keeps
   * only the findings (10,000 patches would otherwise keep 46 MB of copies) */
  po_ArenaTrack track;
  po_Arena *scratch = po_Arena_NewTracked_(&track);
  if (!scratch) return po_Arena_NoteOutOfMemory_(a), false;
  const upb_FieldDef *first = k ? cp->chain[0]->def : cp->target;
  po_RuleWalk w = {.s = s, .scratch = scratch, .a = a, .value_depth = 1, .chain = &first, .found = patch_found,
                   .ctx = &p};
  upb_Message *root = upb_Message_New(cp->root, po_Arena_Upb(scratch));
  bool applied = root && po_CompiledPatch_Apply(cp, root, po_Arena_Upb(scratch));
  if (applied) po_Rules_Walk(&w, root, cp->root, true);
  if (applied && p.part && o->other_part) {
    const char *slash = strrchr(path, '/');
    const char *at = po_Arena_Printf(a, "%.*s", slash ? (int)(slash - path) : 0, path);
    if (at) both_parts(&w, &p, at);
    else w.oom = true;
  }
  po_Arena_FreeInto(scratch, a);
  /* a lookup or a text that could not be allocated would be a finding silently lost */
  return applied && !w.oom && !track.failed;
}
