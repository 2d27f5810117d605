/* Envoy's protoc-gen-validate rules under both snapshots: a value judged by the old and by the new,
 * and each violation only the new one finds reported as rule-tightened (a rule added, a bound
 * narrowed, a pattern made stricter). The engine judges a value the way `validate -f` does
 * (po_Message_CheckRules, the compile's rule walk); an Any's contents are bytes to that walk, so
 * each Any in a value is judged again as the message its @type names. */
#include <string.h>

#include "upgrade.h"

enum { kMaxSegments = 64 };

/* The value decoded as `message` in `api` and judged; *out NULL when it does not decode there (the
 * walk says why: a field or type gone). false when out of memory. */
static bool judge(po_UpgCtx *c, const po_EnvoyApi *api, const char *message, const po_Value *v, size_t depth,
                  const char *field, po_ValueScope scope, po_Diagnostics **out) {
  *out = NULL;
  const char *json = po_Value_ToJson(v, c->a);
  if (!json) return !(c->oom = true);
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = po_Message_ParseJson(api, message, json, strlen(json), c->a, &st);
  if (!m) return !(c->oom = st.code == kPo_Status_NoMemory);
  po_Diagnostics *d = po_Diagnostics_New(c->a);
  if (!d || !po_Message_CheckRules(m, depth, field, scope, c->patch, d, &st)) return !(c->oom = !d || st.code == kPo_Status_NoMemory);
  *out = d;
  return true;
}

static bool found_in(const po_Diagnostics *d, const po_Diagnostic *x) {
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *y = po_Diagnostics_At(d, i);
    if (y->severity == x->severity && y->kind == x->kind && y->patch_index == x->patch_index &&
        !strcmp(y->message, x->message) && !strcmp(y->path ? y->path : "", x->path ? x->path : "")) {
      return true;
    }
  }
  return false;
}

/* Each error of `to` that `from` lacks, at path + its own path. */
static bool report_new(po_UpgCtx *c, const po_Diagnostics *from, const po_Diagnostics *to, const char *path) {
  for (size_t i = 0; to && i < po_Diagnostics_Count(to); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(to, i);
    if (x->severity != kPo_Severity_Error || x->kind != kPo_DiagKind_EnvoyRule || found_in(from, x)) continue;
    const char *at = x->path && *x->path ? po_Arena_Printf(c->a, "%s%s%s", path, *x->path == '/' ? "" : "/", x->path) : path;
    if (!po_Upg_Add(c, PO_UPG_RULE, false, at, "%s in %s (%s's rules accept it)", x->message,
                    po_EnvoyApi_Version(c->to->api), po_EnvoyApi_Version(c->from->api))) return false;
  }
  return true;
}

static bool compare_anys(po_UpgCtx *c, const po_Value *v, const char *path);

static bool compare(po_UpgCtx *c, const char *message, const po_Value *v, size_t depth, const char *field,
                    po_ValueScope scope, const char *path) {
  po_Diagnostics *from = NULL, *to = NULL;
  if (!judge(c, c->from->api, message, v, depth, field, scope, &from)) return false;
  if (!from) return true; /* not valid JSON of it before the upgrade: validate's finding */
  if (!judge(c, c->to->api, message, v, depth, field, scope, &to)) return false;
  return report_new(c, from, to, path);
}

/* The map without its "@type": an Any's contents as a message of their own. */
static const po_Value *without_type(po_UpgCtx *c, const po_Value *x) {
  po_Value *m = po_Value_NewMap(c->a);
  for (size_t i = 0; m && i < po_Value_Size(x); i++) {
    if (strcmp(po_Value_KeyAt(x, i), "@type") != 0 && !po_Value_MapPut(c->a, m, po_Value_KeyAt(x, i), (po_Value *)po_Value_At(x, i))) {
      return NULL;
    }
  }
  return m;
}

/* Every Any in v judged as its @type, each once (an Any's own Anys by its judgment). */
static bool compare_anys(po_UpgCtx *c, const po_Value *v, const char *path) {
  po_ValueKind k = po_Value_Kind(v);
  if (k != kPo_ValueKind_Map && k != kPo_ValueKind_List) return true;
  const po_Value *t = k == kPo_ValueKind_Map ? po_Value_Get(v, "@type") : NULL;
  if (po_Value_Kind(t) == kPo_ValueKind_String) {
    const char *url = po_Value_String(t, NULL), *slash = strrchr(url, '/');
    const po_Value *body = without_type(c, v);
    if (!body) return !(c->oom = true);
    return compare(c, slash ? slash + 1 : url, body, 0, NULL, kPo_ValueScope_Whole, path) && compare_anys(c, body, path);
  }
  for (size_t i = 0; i < po_Value_Size(v); i++) {
    const char *p = k == kPo_ValueKind_Map ? po_Arena_Printf(c->a, "%s/%s", path, po_Value_KeyAt(v, i))
                                           : po_Arena_Printf(c->a, "%s/%zu", path, i);
    if (!p) return !(c->oom = true);
    if (!compare_anys(c, po_Value_At(v, i), p)) return false;
  }
  return true;
}

bool po_Upg_CompareValueRules(po_UpgCtx *c, const char *message, const po_Value *v, po_ValueScope scope, const char *path) {
  return compare(c, message, v, 0, NULL, scope, path) && compare_anys(c, v, path);
}

/* Segment i of an RFC 6901 pointer, unescaped (~1 is '/', ~0 is '~'). */
static const char *segment(po_UpgCtx *c, const char *ptr, size_t i) {
  const char *p = ptr;
  for (size_t k = 0; k <= i; k++) {
    if (*p != '/') return NULL;
    const char *s = ++p;
    p += strcspn(p, "/");
    if (k < i) continue;
    char *out = po_Arena_Strndup(c->a, s, (size_t)(p - s)), *w = out;
    for (const char *r = out; r && *r; r++) *w++ = r[0] == '~' && (r[1] == '0' || r[1] == '1') ? (r++, *r == '0' ? '~' : '/') : *r;
    if (w) *w = '\0';
    return out;
  }
  return NULL;
}

bool po_Upg_ComparePointerRules(po_UpgCtx *c, const char *message, const char *ptr, const po_Value *v) {
  po_PointerSeg segs[kMaxSegments];
  size_t n = po_Pointer_Segments(c->from->api, message, ptr, segs, kMaxSegments);
  const po_Value *inner = v;
  for (size_t s = n; s-- > 0;) {
    po_Value *wrap = segs[s].kind == kPo_PointerSeg_Index ? po_Value_NewList(c->a) : po_Value_NewMap(c->a);
    const char *key = segs[s].kind == kPo_PointerSeg_Field || segs[s].kind == kPo_PointerSeg_JsonName ? segs[s].field
                                                                                                       : segment(c, ptr, s);
    if (segs[s].kind == kPo_PointerSeg_Unknown) return true; /* not judged here: validate's walk says so */
    if (!wrap || !key) return !(c->oom = true);
    bool ok = segs[s].kind == kPo_PointerSeg_Index ? po_Value_ListAppend(c->a, wrap, (po_Value *)inner)
                                                   : po_Value_MapPut(c->a, wrap, key, (po_Value *)inner);
    if (!ok) return !(c->oom = true);
    inner = wrap;
  }
  bool field = n && (segs[n - 1].kind == kPo_PointerSeg_Field || segs[n - 1].kind == kPo_PointerSeg_JsonName);
  return compare(c, message, inner, n, field ? segs[n - 1].field : NULL, kPo_ValueScope_Whole, ptr) && compare_anys(c, v, ptr);
}

bool po_Upg_CompareCompiledRules(po_UpgCtx *c, const po_Diagnostics *from, const po_Diagnostics *to, const po_Value *patches) {
  for (size_t i = 0; i < po_Diagnostics_Count(to); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(to, i);
    if (x->severity != kPo_Severity_Error || x->kind != kPo_DiagKind_EnvoyRule || found_in(from, x)) continue;
    const po_Value *p = po_Value_Kind(patches) == kPo_ValueKind_List && x->patch_index >= 0
                            ? po_Value_At(patches, (size_t)x->patch_index) : NULL;
    c->patch = x->patch_index;
    c->pos = p && po_Value_Pos(p).line ? po_Value_Pos(p) : c->obj->pos;
    if (!po_Upg_Add(c, PO_UPG_RULE, false, x->path, "%s in %s (%s's rules accept it)", x->message,
                    po_EnvoyApi_Version(c->to->api), po_EnvoyApi_Version(c->from->api))) return false;
  }
  c->patch = -1;
  return true;
}
