/* A message built by two patches, judged as Envoy Gateway judges it: after the first alone
 * (eg_stepwise.h; issue 23 class I).
 *
 * For a later add i and an earlier add j of the same PropertyOverride reaching a common resource,
 * the message M where their paths part (or where j's object value ends along i's path) holds,
 * after j's entry, only what j put there, unless Envoy Gateway generated M (eg_generated.c) or a
 * patch before j already reached into it. j's part of M is decoded as M and judged by Envoy's
 * rules on a whole message (po_Message_CheckRules, the engine's reading of protoc-gen-validate)
 * and the oneofs marked `(validate.required)`: when the field i sets is one M then lacks, j's
 * entry fails Envoy Gateway's validation although the final result is valid. Cost: the earlier
 * patches (at most kPo_MaxPatchesPerOverride) times the path's length, and one decode and one
 * schema lookup of M per such pair. */
#include "eg_stepwise.h"

#include <string.h>

#include "eg_generated.h"
#include "po/engine.h"

/* The number of leading segments patches j and i resolve to the same fields. */
static size_t common(const po_Override *o, size_t j, size_t i) {
  size_t nj = po_Override_SegmentCount(o, j), ni = po_Override_SegmentCount(o, i), m = 0;
  for (; m < nj && m < ni; m++) {
    po_PathSegment x, y;
    if (!po_Override_Segment(o, j, m, &x) || !po_Override_Segment(o, i, m, &y) || strcmp(x.full_name, y.full_name)) {
      break;
    }
  }
  return m;
}

/* Whether earlier patch j is an add that can meet patch i on one resource. */
static bool eligible(const po_CompiledOverride *c, size_t j, size_t i) {
  const po_Override *o = c->override;
  return po_Override_Op(o, j) == kPo_Op_Add && po_Override_ResourceType(o, j) == po_Override_ResourceType(o, i) &&
         po_Override_Direction(o, j) == po_Override_Direction(o, i) && po_EG_Meets(c, j, i);
}

/* Whether a patch before j already reached into the message at depth d of patch i's path. */
static bool touched_before(const po_CompiledOverride *c, size_t j, size_t i, size_t d) {
  for (size_t k = 0; k < j; k++) {
    if (eligible(c, k, i) && po_Override_SegmentCount(c->override, k) >= d && common(c->override, k, i) >= d) return true;
  }
  return false;
}

/* Whether M (decoded from `part`, what j put there) lacks field s, which Envoy requires: a
 * violation of Envoy's rules at s, a `required` rule of s, or no member of s's required oneof. */
static bool lacks(const char *msg, const po_Value *part, const po_PathSegment *s, po_Arena *a, bool *oom) {
  const char *json = po_Value_ToJson(part, a);
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = json ? po_Message_ParseJson(msg, json, strlen(json), a, &st) : NULL;
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!json || !d) return *oom = true, false;
  if (!m) return false; /* j's own value does not decode: said elsewhere, not this */
  if (!po_Message_CheckRules(m, 0, NULL, kPo_ValueScope_Whole, -1, d, &st)) {
    *oom = st.code == kPo_ErrNoMemory;
    return false;
  }
  size_t n = strlen(s->name);
  for (size_t k = 0; k < po_Diagnostics_Count(d); k++) {
    const char *p = po_Diagnostics_At(d, k)->path, *text = po_Diagnostics_At(d, k)->message;
    if (p && p[0] == '/' && !strncmp(p + 1, s->name, n) && (p[1 + n] == '\0' || p[1 + n] == '/')) return true;
    const char *want = po_Arena_Printf(a, "lacks '%s'", s->name);
    if (!want) return *oom = true, false;
    if (text && strstr(text, want)) return true;
  }
  po_Explanation ex = {0};
  if (!po_Explain(msg, a, &ex, &st)) return *oom = po_Engine_OutOfMemory(), false;
  bool required = false;
  for (size_t f = 0; f < ex.field_count; f++) {
    const po_ExplainField *x = &ex.fields[f];
    bool set = po_Value_Get(part, x->name) || po_Value_Get(part, x->json_name);
    /* a Duration's or an Any's `required` (the rules the engine judges are message.required) */
    if (!x->oneof && !strcmp(x->name, s->name)) return !set && x->rules && strstr(x->rules, " required");
    if (!s->oneof || !x->oneof || strcmp(x->oneof, s->oneof)) continue;
    if (set) return false;
    required |= x->oneof_required;
  }
  return required;
}

/* "/a/b", segments 0..d-1 of patch i. */
static const char *pointer_to(const po_Override *o, size_t i, size_t d, po_Arena *a) {
  po_TextBuf t = {.a = a};
  for (size_t m = 0; m < d; m++) {
    po_PathSegment s;
    if (!po_Override_Segment(o, i, m, &s)) return NULL;
    po_TextBuf_Puts(&t, "/");
    po_TextBuf_Puts(&t, s.name);
  }
  return t.oom ? NULL : t.buf;
}

/* j's part of the message at depth d of patch i's path, and that depth: where the paths part,
 * or where j's object value (j's path a prefix of i's) first lacks i's next field. *d is 0 when
 * j puts nothing into a message i later completes. */
static po_Value *part_of(const po_CompiledOverride *c, size_t j, size_t i, po_Arena *a, size_t *d, bool *oom) {
  const po_Override *o = c->override;
  size_t nj = po_Override_SegmentCount(o, j), ni = po_Override_SegmentCount(o, i), p = common(o, j, i);
  *d = 0;
  po_Value *v = po_Override_SetJson(o, j, a);
  if (!v) return *oom = true, NULL;
  if (p == 0 || p >= ni) return NULL; /* the resource itself; or i sets what j's path runs through */
  if (p < nj) {                       /* the paths part at depth p: nest j's value under its names */
    for (size_t m = nj; m-- > p;) {
      po_PathSegment s;
      po_Value *map = po_Value_NewMap(a);
      if (!map || !po_Override_Segment(o, j, m, &s) || !po_Value_MapPut(a, map, s.name, v)) return *oom = true, NULL;
      v = map;
    }
    *d = p;
    return v;
  }
  for (size_t m = nj; m < ni; m++) { /* j set an ancestor of i's field whole */
    po_PathSegment s;
    if (po_Value_Kind(v) != kPo_ValueKind_Map || !po_Override_Segment(o, i, m, &s)) return NULL;
    const po_Value *next = po_Value_Get(v, s.name);
    if (!next) {
      *d = m;
      return v;
    }
    v = (po_Value *)next;
  }
  return NULL;
}

bool po_EG_StepCheck(const po_CompiledOverride *c, size_t i, po_Arena *a, const char **out) {
  const po_Override *o = c->override;
  *out = NULL;
  if (po_Override_Op(o, i) != kPo_Op_Add) return true;
  for (size_t j = 0; j < i; j++) {
    if (!eligible(c, j, i)) continue;
    size_t d;
    bool oom = false;
    po_Value *part = part_of(c, j, i, a, &d, &oom);
    if (oom) return false;
    po_PathSegment s;
    if (!part || !d || po_EG_GeneratesMessage(o, i, d) || touched_before(c, j, i, d) ||
        !po_Override_Segment(o, i, d, &s)) {
      continue;
    }
    const char *msg = po_Arena_Strndup(a, s.full_name, strlen(s.full_name) - strlen(s.name) - 1);
    if (!msg) return false;
    if (!lacks(msg, part, &s, a, &oom)) {
      if (oom) return false;
      continue;
    }
    const char *parent = pointer_to(o, i, d, a);
    if (!parent) return false;
    *out = po_Arena_Printf(
        a, "Patches[%zu] of this PropertyOverride creates %s (%s) without '%s', which Envoy requires, and this "
           "patch adds it after: Envoy Gateway validates the resource after each jsonPatches entry, not once after "
           "all of them as Consul does, so Patches[%zu]'s entry alone fails (the policy becomes Invalid, none of its "
           "patches applied). Set %s whole in one patch, to an object holding '%s' and the rest it needs (or write "
           "an EnvoyPatchPolicy by hand whose one add sets it whole)",
        j, parent, msg, s.name, j, parent, s.name);
    return *out != NULL;
  }
  return true;
}
