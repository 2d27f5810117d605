/* The one rule walk (po_Rules_Walk, rules_walk.h): which of Envoy's protoc-gen-validate rules a
 * decoded message is judged by, and where each finding is; the rules themselves are pgv.c's. Its
 * users: a PropertyOverride patch at compile (patch_rules.c), preview's result (result_rules.c),
 * and here po_Message_CheckRules on a native patch value, an EnvoyFilter's `patch.value` or an
 * EnvoyPatchPolicy's `operation.value`, once decoded strictly (neither Istio nor Envoy Gateway
 * checks these rules at admission: Envoy NACKs the result later, istio/istio#43383).
 *
 * What is judged depends on how much of its message the value is (po_ValueScope, engine.h):
 * - Whole (Istio ADD, INSERT_*, REPLACE; a JSON Patch add or replace, which replaces an object
 *   member whole, RFC 6902 4.1): the value is what Envoy gets, so every rule of every field of
 *   every message in it applies, absent fields included: message.required (and duration, timestamp,
 *   any required), a required oneof with no member, min_items on an absent list, min_pairs on an
 *   absent map, a proto3 scalar at its default unless its rules say ignore_empty.
 * - Merge (Istio MERGE, Go's proto.Merge): fields the value leaves out keep their generated
 *   values, which we do not see, so only what the value sets is judged, in its sub-messages too
 *   (they are merged likewise). A list is appended to: max_items and its items' rules are judged,
 *   min_items not. A list's message items and a map's values are put in whole: Whole below them.
 *   A proto3 scalar at its default is not set (and MERGE would not copy it): not judged.
 * - MergeReplaceLists (Istio MERGE_AND_REPLACE_LIST): as Merge, but a list the value sets
 *   replaces the generated one: min_items too.
 * An Any (a typed_config) is unpacked by its type URL and its message judged in the Any's place
 * and scope (Envoy checks the same rules when it builds the extension, and NACKs): most
 * hand-written EnvoyFilter values are filters' typed_configs. Its bytes are aliased, not copied
 * (nested Anys stay linear). A field with message.skip is not entered. A rule kind pgv.c does not
 * judge is said as a warning once per field and walk (kPo_DiagKind_EnvoyRuleNotJudged).
 *
 * Cost: one visit per message the value holds, and per field of each one rules lookup (its
 * options decoded, in a scratch arena freed at the end): linear in the value's size times the
 * widest message's field count (rules memoized per field). With a `chain` the walk follows only the
 * patch's path above the value (a live resource: linear in the path). Recursion stops
 * kPo_RulesMaxDepth levels below the value, with a
 * warning (upb's JSON decoder has refused deeper values already). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "rules_walk.h"
#include "upb/decode.h"

const char *po_Rules_Pointer(po_RuleWalk *w, size_t from, size_t n) {
  po_TextBuf t = {.a = w->a};
  po_TextBuf_Put(&t, "", 0);
  for (size_t i = from; i < n; i++) {
    const po_RuleStep *s = &w->steps[i];
    char num[32];
    if (s->field) {
      po_TextBuf_Put(&t, "/", 1), po_TextBuf_Puts(&t, upb_FieldDef_Name(s->field));
    } else if (!s->key_field) {
      snprintf(num, sizeof num, "/%zu", s->index), po_TextBuf_Puts(&t, num);
    } else {
      po_TextBuf_Put(&t, "/", 1);
      upb_MessageValue k = s->key;
      switch (upb_FieldDef_CType(s->key_field)) {
        case kUpb_CType_String:
          for (size_t j = 0; j < k.str_val.size; j++) {
            char c = k.str_val.data[j];
            if (c == '~') po_TextBuf_Put(&t, "~0", 2);
            else if (c == '/') po_TextBuf_Put(&t, "~1", 2);
            else po_TextBuf_Put(&t, &c, 1);
          }
          continue;
        case kUpb_CType_Bool: snprintf(num, sizeof num, "%s", k.bool_val ? "true" : "false"); break;
        case kUpb_CType_Int32: snprintf(num, sizeof num, "%" PRId32, k.int32_val); break;
        case kUpb_CType_UInt32: snprintf(num, sizeof num, "%" PRIu32, k.uint32_val); break;
        case kUpb_CType_Int64: snprintf(num, sizeof num, "%" PRId64, k.int64_val); break;
        default: snprintf(num, sizeof num, "%" PRIu64, k.uint64_val); break;
      }
      po_TextBuf_Puts(&t, num);
    }
  }
  return t.oom ? NULL : t.buf;
}

static void found_kind(po_RuleWalk *w, size_t n, bool message_level, po_Severity sev, po_DiagKind kind,
                       const char *text) {
  if (text && !w->oom) w->found(w, n, message_level, sev, kind, text);
}

static void found(po_RuleWalk *w, size_t n, bool message_level, po_Severity sev, const char *text) {
  found_kind(w, n, message_level, sev, kPo_DiagKind_EnvoyRule, text);
}

/* A rule kind on f that is not judged: said once per field and walk. */
static void say_unjudged(po_RuleWalk *w, const upb_FieldDef *f, size_t n) {
  for (size_t i = 0; i < w->warned_len; i++) if (w->warned[i] == f) return;
  const char *u = po_Pgv_Unjudged(w->s, f, w->scratch);
  if (!u) return;
  if (w->warned_len < sizeof w->warned / sizeof *w->warned) w->warned[w->warned_len++] = f;
  found_kind(w, n, false, kPo_Severity_Warning, kPo_DiagKind_EnvoyRuleNotJudged, u);
}

static void walk_message(po_RuleWalk *w, const upb_Message *msg, const upb_MessageDef *md, const upb_FieldDef *holder,
                         size_t depth, bool whole);

/* A list's items, at depth `depth`: scalar items by their `items` rules, message items whole. */
static void walk_list(po_RuleWalk *w, const upb_Message *msg, const upb_FieldDef *f, size_t depth) {
  const upb_Array *arr = upb_Message_Get(msg, f).array_val;
  size_t n = arr ? upb_Array_Size(arr) : 0;
  const upb_MessageDef *sd = upb_FieldDef_IsSubMessage(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
  if (sd && po_Pgv_Skips(w->s, f, w->scratch)) return;
  bool judged = depth >= w->value_depth;
  for (size_t i = 0; i < n && !w->oom; i++) {
    w->steps[depth - 1] = (po_RuleStep){.index = i};
    if (sd) walk_message(w, upb_Array_Get(arr, i).msg_val, sd, NULL, depth, true);
    else if (judged) found(w, depth, false, kPo_Severity_Error, po_Pgv_CheckScalar(w->s, f, upb_Array_Get(arr, i), w->scratch));
  }
}

/* A map's message values, whole (a merge puts each in place of the generated entry's). */
static void walk_map(po_RuleWalk *w, const upb_Message *msg, const upb_FieldDef *f, size_t depth) {
  const upb_MessageDef *entry = upb_FieldDef_MessageSubDef(f);
  const upb_FieldDef *kf = upb_MessageDef_FindFieldByNumber(entry, 1), *vf = upb_MessageDef_FindFieldByNumber(entry, 2);
  const upb_Map *map = upb_Message_Get(msg, f).map_val;
  if (!map || !kf || !vf || !upb_FieldDef_IsSubMessage(vf)) return;
  const upb_MessageDef *vd = upb_FieldDef_MessageSubDef(vf);
  for (size_t it = kUpb_Map_Begin; upb_MapIterator_Next(map, &it) && !w->oom;) {
    w->steps[depth - 1] = (po_RuleStep){.key_field = kf, .key = upb_MapIterator_Key(map, it)};
    walk_message(w, upb_MapIterator_Value(map, it).msg_val, vd, NULL, depth, true);
  }
}

/* The message an Any at `depth` holds, walked in its place (its JSON form has the message's
 * fields beside "@type"). A type the schema lacks, or bytes that do not decode, are left alone:
 * the decoder that packed them has judged them already. */
static void walk_any(po_RuleWalk *w, const upb_Message *any, const upb_MessageDef *md, size_t depth, bool whole) {
  upb_StringView url = upb_Message_Get(any, upb_MessageDef_FindFieldByNumber(md, 1)).str_val;
  upb_StringView bytes = upb_Message_Get(any, upb_MessageDef_FindFieldByNumber(md, 2)).str_val;
  size_t start = url.size;
  while (start > 0 && url.data[start - 1] != '/') start--;
  char *name = po_Arena_Strndup(w->scratch, url.data + start, url.size - start);
  if (!name) {
    w->oom = true;
    return;
  }
  const upb_MessageDef *sd = url.size ? po_Schema_FindMessage(w->s, name) : NULL;
  if (!sd) return;
  upb_Message *inner = upb_Message_New(sd, po_Arena_Upb(w->scratch));
  if (!inner) {
    w->oom = true;
    return;
  }
  upb_DecodeStatus ds = upb_Decode(bytes.data, bytes.size, inner, upb_MessageDef_MiniTable(sd),
                                   upb_DefPool_ExtensionRegistry(po_Schema_Pool(w->s)), kUpb_DecodeOption_AliasString,
                                   po_Arena_Upb(w->scratch));
  if (ds == kUpb_DecodeStatus_OutOfMemory) w->oom = true;
  if (ds != kUpb_DecodeStatus_Ok) return;
  walk_message(w, inner, sd, NULL, depth, whole);
}

/* Whether field f at step depth fd (its message at fd - 1) is the value or below it. */
static bool judged_here(const po_RuleWalk *w, const upb_Message *msg, const upb_FieldDef *f, size_t fd) {
  if (fd > w->value_depth) return true;
  if (fd < w->value_depth) return false;
  if (w->chain) return w->chain[fd - 1] == f;
  /* at the value's own depth below a scaffold (an EnvoyPatchPolicy path), only the field the
   * path names is the value: its siblings are the scaffold's, absent */
  return w->value_field ? !strcmp(upb_FieldDef_Name(f), w->value_field) || !strcmp(upb_FieldDef_JsonName(f), w->value_field)
                        : po_Pgv_Holds(msg, f);
}

/* The message-level rules of msg at `depth`: its own (a Duration's bounds, an Any's type URL,
 * Envoy's Duration validity) and, when whole, the required children and oneofs it lacks. */
static bool judge_message(po_RuleWalk *w, const upb_Message *msg, const upb_MessageDef *md, const upb_FieldDef *holder,
                          size_t depth, bool whole) {
  upb_WellKnown wk = upb_MessageDef_WellKnownType(md);
  if (wk == kUpb_WellKnown_Duration) {
    const upb_FieldDef *sf = upb_MessageDef_FindFieldByNumber(md, 1), *nf = upb_MessageDef_FindFieldByNumber(md, 2);
    const char *v = po_Duration_Check(true, upb_Message_Get(msg, sf).int64_val, true,
                                      upb_Message_Get(msg, nf).int32_val, w->scratch);
    /* an invalid Duration's own bounds (gt 0s, ...) would only restate it, as for a patch */
    found(w, depth, true, kPo_Severity_Error, v ? v : po_Pgv_CheckMessageValue(w->s, holder, md, msg, w->scratch));
    return false;
  }
  found(w, depth, true, kPo_Severity_Error, po_Pgv_CheckMessageValue(w->s, holder, md, msg, w->scratch));
  if (whole) found(w, depth, true, kPo_Severity_Error, po_Pgv_CheckRequired(w->s, md, msg, w->scratch));
  if (wk == kUpb_WellKnown_Timestamp) return false;
  if (depth >= w->value_depth + kPo_RulesMaxDepth) {
    if (!w->deep) found_kind(w, depth, true, kPo_Severity_Warning, kPo_DiagKind_EnvoyRuleNotJudged,
                             po_Arena_Printf(w->scratch, "more than %d levels deep: Envoy's rules not checked below",
                                             kPo_RulesMaxDepth));
    w->deep = true;
    return false;
  }
  return true;
}

/* msg, of type md, held by field `holder` (NULL: the root, a list item, a map value), at `depth`
 * steps from the root. Judged when at the value's depth or below it. */
static void walk_message(po_RuleWalk *w, const upb_Message *msg, const upb_MessageDef *md, const upb_FieldDef *holder,
                         size_t depth, bool whole) {
  if (upb_MessageDef_WellKnownType(md) == kUpb_WellKnown_Any) {
    if (depth >= w->value_depth) {
      found(w, depth, true, kPo_Severity_Error, po_Pgv_CheckMessageValue(w->s, holder, md, msg, w->scratch));
      walk_any(w, msg, md, depth, whole);
    }
    return;
  }
  if (depth >= w->value_depth) {
    if (!judge_message(w, msg, md, holder, depth, whole)) return;
  } else if (depth >= kPo_RulesMaxScaffold) {
    return;
  }
  for (int i = 0; i < upb_MessageDef_FieldCount(md) && !w->oom; i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(md, i);
    size_t fd = depth + 1;
    if (w->chain && fd <= w->value_depth && w->chain[depth] != f) continue; /* not on the patch's path */
    w->steps[depth] = (po_RuleStep){.field = f};
    bool here = judged_here(w, msg, f, fd);
    if (here) {
      bool w_list = whole || (w->replace_lists && upb_FieldDef_IsRepeated(f) && po_Pgv_Holds(msg, f));
      found(w, fd, false, kPo_Severity_Error, po_Pgv_CheckField(w->s, msg, f, w_list, w->scratch));
      if (whole || po_Pgv_Holds(msg, f)) say_unjudged(w, f, fd);
    }
    if (!here && !w->chain && fd + 1 == w->value_depth && upb_FieldDef_IsMap(f)) {
      /* the path's last step is a key of this map (an EnvoyPatchPolicy add of
       * /metadata/filter_metadata/KEY): the scaffold holds that one entry, whose key is the
       * patch's as much as its value is (keys and scalar values rules; max_pairs is the whole map's) */
      found(w, fd, false, kPo_Severity_Error, po_Pgv_CheckMap(w->s, f, upb_Message_Get(msg, f).map_val, false, w->scratch));
    }
    if (upb_FieldDef_IsMap(f)) {
      walk_map(w, msg, f, fd + 1);
    } else if (upb_FieldDef_IsRepeated(f)) {
      walk_list(w, msg, f, fd + 1);
    } else if (upb_FieldDef_IsSubMessage(f) && upb_Message_Has(msg, f)) {
      const upb_MessageDef *sd = upb_FieldDef_MessageSubDef(f);
      upb_WellKnown swk = upb_MessageDef_WellKnownType(sd);
      if (swk >= kUpb_WellKnown_DoubleValue && swk <= kUpb_WellKnown_BoolValue) continue; /* CheckField's */
      if (here && po_Pgv_Skips(w->s, f, w->scratch)) continue;
      walk_message(w, upb_Message_Get(msg, f).msg_val, sd, f, fd, whole);
    }
  }
}

void po_Rules_Walk(po_RuleWalk *w, const upb_Message *msg, const upb_MessageDef *md, bool whole) {
  walk_message(w, msg, md, NULL, 0, whole);
}

/* ---- native values ---- */

typedef struct {
  int patch;
  po_Diagnostics *out;
} Native;

static void native_found(po_RuleWalk *w, size_t n, bool message_level, po_Severity sev, po_DiagKind kind,
                         const char *violation) {
  (void)message_level;
  Native *nv = w->ctx;
  const char *path = po_Rules_Pointer(w, w->value_depth, n), *text = po_Arena_Strndup(w->a, violation, strlen(violation));
  if (!path || !text || !po_Diagnostics_Add(nv->out, sev, kind, nv->patch, path, text)) w->oom = true;
}

bool po_Message_CheckRules(const po_Message *m, size_t value_depth, const char *value_field, po_ValueScope scope,
                           int patch_index, po_Diagnostics *out, po_Status *st) {
  const po_Schema *s = m->schema;
  if (value_depth > kPo_RulesMaxScaffold) {
    return po_Status_Set(st, kPo_Status_Limit, "the value is %zu steps deep in its message; at most %d are checked",
                         value_depth, kPo_RulesMaxScaffold);
  }
  po_ArenaTrack track; /* a lookup or a text not allocated would be a finding silently lost */
  po_Arena *scratch = po_Pgv_Scratch(&track, m->arena, st);
  if (!scratch) return false;
  Native nv = {patch_index, out};
  po_RuleWalk *w = po_Arena_Malloc(scratch, sizeof *w);
  if (!w) {
    po_Arena_FreeInto(scratch, m->arena);
    return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  }
  *w = (po_RuleWalk){.s = s, .scratch = scratch, .a = m->arena, .value_depth = value_depth, .value_field = value_field,
                     .replace_lists = scope == kPo_ValueScope_MergeReplaceLists, .found = native_found, .ctx = &nv};
  po_Rules_Walk(w, m->msg, m->def, scope == kPo_ValueScope_Whole);
  bool oom = w->oom || track.failed;
  po_Arena_FreeInto(scratch, m->arena);
  if (oom) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return true;
}

const char *po_Message_CheckRemove(const po_EnvoyApi *api, const char *message_full_name, const char *field, po_Arena *a,
                                   po_Status *st) {
  const po_Schema *s = po_EnvoyApi_Schema_(api, a, st);
  const upb_MessageDef *md = s && message_full_name ? po_Schema_FindMessage(s, message_full_name) : NULL;
  const upb_FieldDef *f = md && field ? upb_MessageDef_FindFieldByName(md, field) : NULL;
  if (md && field && !f) f = upb_MessageDef_FindByJsonName(md, field);
  if (!f) return NULL;
  po_ArenaTrack track; /* the rules' lookups: a scratch arena, the text copied into `a` */
  po_Arena *scratch = po_Pgv_Scratch(&track, a, st);
  if (!scratch) return NULL;
  const char *v = po_Pgv_CheckRemove(s, f, scratch);
  const char *out = v ? po_Arena_Strndup(a, v, strlen(v)) : NULL;
  bool oom = track.failed || (v && !out);
  po_Arena_FreeInto(scratch, a);
  if (oom) po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  return oom ? NULL : out;
}
