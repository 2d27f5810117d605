/* EnvoyFilters written by hand, checked against Envoy's schema (istio.h, the last section). */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"
#include "po/meshes/istio.h"
#include "po/targets/any_type.h"

#include "po/targets/native_error.h"

enum { kMaxConfigPatches = kPo_MaxPatchesPerOverride * 10 };

const char *po_Istio_PatchMessage(const char *apply_to) {
  static const struct {
    const char *apply_to, *message;
  } kMap[] = {
      {"CLUSTER", "envoy.config.cluster.v3.Cluster"},
      {"LISTENER", "envoy.config.listener.v3.Listener"},
      {"FILTER_CHAIN", "envoy.config.listener.v3.FilterChain"},
      {"NETWORK_FILTER", "envoy.config.listener.v3.Filter"},
      {"HTTP_FILTER", "envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter"},
      {"ROUTE_CONFIGURATION", "envoy.config.route.v3.RouteConfiguration"},
      {"VIRTUAL_HOST", "envoy.config.route.v3.VirtualHost"},
      {"HTTP_ROUTE", "envoy.config.route.v3.Route"},
      {"LISTENER_FILTER", "envoy.config.listener.v3.ListenerFilter"},
      {"EXTENSION_CONFIG", "envoy.config.core.v3.TypedExtensionConfig"},
  };
  for (size_t i = 0; apply_to && i < sizeof kMap / sizeof *kMap; i++) {
    if (!strcmp(kMap[i].apply_to, apply_to)) return kMap[i].message;
  }
  return NULL;
}

static bool add(po_Diagnostics *d, po_Severity sev, int i, const char *path, const char *msg) {
  return po_Diagnostics_Add(d, sev, kPo_DiagKind_Target, i, path, msg) != NULL;
}

enum { kMaxFindDepth = 64 };

/* The depth of the first value below `v` that is a zero scalar or a list, depth-first, with the
 * keys on the way in keys[0..depth-1]; -1 when none. The path is printed once, at the end: printed
 * at every level it would cost each member the length of its whole path, and a wide object under
 * long keys (a Struct in metadata) would cost width times path length in memory. */
static int find_depth(const json_object *v, bool list, const char **keys, int depth) {
  if (depth > kMaxFindDepth) return -1;
  switch (json_object_get_type(v)) {
    case json_type_object: {
      json_object_object_foreach((json_object *)v, k, c) {
        if (depth == kMaxFindDepth) return -1;
        keys[depth] = k;
        int hit = find_depth(c, list, keys, depth + 1);
        if (hit >= 0) return hit;
      }
      return -1;
    }
    case json_type_array: return list ? depth : -1;
    case json_type_boolean: return !list && !json_object_get_boolean(v) ? depth : -1;
    case json_type_int: return !list && json_object_get_int64(v) == 0 ? depth : -1;
    case json_type_double: return !list && json_object_get_double(v) == 0 ? depth : -1;
    case json_type_string: return !list && json_object_get_string_len(v) == 0 ? depth : -1;
    default: return -1;
  }
}

/* The first JSON path below `v` holding a zero scalar or a list ("" for `v` itself); NULL when
 * none (or out of memory). */
static const char *find(const json_object *v, bool list, po_Arena *a) {
  const char *keys[kMaxFindDepth];
  int hit = find_depth(v, list, keys, 0);
  if (hit < 0) return NULL;
  po_TextBuf t = {.a = a};
  for (int i = 0; i < hit; i++) {
    po_TextBuf_Puts(&t, "/");
    po_TextBuf_Puts(&t, keys[i]);
  }
  return t.oom ? NULL : t.buf ? t.buf : "";
}

/* `v` copied without `drop` (a member or element somewhere in it); NULL when out of memory. */
static po_Value *without(const po_Value *v, const po_Value *drop, po_Arena *a, int depth) {
  size_t n = po_Value_Size(v), len = 0;
  po_Value *c = NULL;
  if (depth > 64) return NULL;
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Map:
      if (!(c = po_Value_NewMap(a))) return NULL;
      for (size_t i = 0; i < n; i++) {
        if (po_Value_At(v, i) == drop) continue;
        po_Value *e = without(po_Value_At(v, i), drop, a, depth + 1);
        if (!e || !po_Value_MapPut(a, c, po_Value_KeyAt(v, i), e)) return NULL;
      }
      return c;
    case kPo_ValueKind_List:
      if (!(c = po_Value_NewList(a))) return NULL;
      for (size_t i = 0; i < n; i++) {
        if (po_Value_At(v, i) == drop) continue;
        po_Value *e = without(po_Value_At(v, i), drop, a, depth + 1);
        if (!e || !po_Value_ListAppend(a, c, e)) return NULL;
      }
      return c;
    case kPo_ValueKind_Bool: return po_Value_NewBool(a, po_Value_Bool(v));
    case kPo_ValueKind_Int: return po_Value_NewInt(a, po_Value_Int(v));
    case kPo_ValueKind_Float: return po_Value_NewFloat(a, po_Value_Float(v));
    case kPo_ValueKind_String: {
      const char *t = po_Value_String(v, &len);
      return po_Value_NewString(a, t ? t : "", len);
    }
    default: return po_Value_NewNull(a);
  }
}

typedef struct {
  const po_Value *root;
  const po_EnvoyApi *api;    /* the snapshot the value is judged by */
  const char *msg, *encoded; /* the message's name, and the value decoded and encoded again */
  size_t encoded_len;
  int checks;                /* string members looked at (bounded: each costs a decode) */
  size_t *work;              /* bytes decoded by those checks in this EnvoyFilter, all patches */
  bool oom;
  const char *keys[kMaxFindDepth]; /* the path down to the member looked at (list indexes: NULL) */
  size_t idx[kMaxFindDepth];
} Zero;

/* A string that can decode to a zero: an enum value's name (upper case, digits, '_') or a
 * number ("0", "-0", "0.0"); anything else is a string field's value, set whatever it is. */
static bool maybe_zero(const char *t, size_t len) {
  bool name = len > 0 && t[0] >= 'A' && t[0] <= 'Z', number = len > 0;
  for (size_t k = 0; k < len; k++) {
    char c = t[k];
    name = name && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
    number = number && (c == '0' || c == '-' || c == '.' || c == '+');
  }
  return name || number;
}

/* Whether the decoded message is the same without `c`: the member set nothing. Decoded in an
 * arena of its own, freed at once, so the checks of one value never hold more than one decode. */
static bool sets_nothing(Zero *z, const po_Value *c) {
  po_Arena *s = po_Arena_New();
  po_Value *rest = s ? without(z->root, c, s, 0) : NULL;
  const char *text = rest ? po_Value_ToJson(rest, s) : NULL;
  po_Status st;
  po_Status_Clear(&st);
  po_Message *m = text ? po_Message_ParseJson(z->api, z->msg, text, strlen(text), s, &st) : NULL;
  size_t elen = 0;
  const char *enc = m ? po_Message_ToJson(m, s, &elen, &st) : NULL;
  /* a value deeper than `without` copies is not looked at; memory that ran out in the arena
   * (po_Engine_OutOfMemory: upb may leave a part out silently) is said, so the one-shot
   * commands say so rather than a verdict */
  z->oom |= !s || (rest && !text) || (!enc && st.code == kPo_Status_NoMemory) || po_Engine_OutOfMemory(s);
  bool same = enc && elen == z->encoded_len && !memcmp(enc, z->encoded, elen);
  po_Arena_Free(s);
  return same;
}

/* Out of the decoded message a member leaves nothing: a zero in proto3 (no presence). A string
 * member cannot be told zero from its JSON (an enum's first value by name, lb_policy:
 * ROUND_ROBIN; a number written as "0"), so it is left out and the rest decoded: when the
 * message encodes the same, the member set nothing. Fields with presence (oneof members,
 * optional, wrappers, messages) change it and are not named. Returns the depth of the first
 * such member (its path in z->keys/idx), depth-first, or -1. At most kMaxZeroChecks members are
 * looked at, each a decode of the whole value, and no more than kMaxZeroWork bytes decoded in
 * all the EnvoyFilter's patches: 17 such members beside a list of 150,000 strings took one
 * review from 0.13 s to 0.96 s of CPU (1.5 MB: 0.35 s to 3.2 s); a value of 600 KB now gets one
 * look, one over 1 MiB none (the finding is a warning: a huge value may go without it). The
 * path is printed once, for the hit. */
enum { kMaxZeroChecks = 16, kMaxZeroWork = 1 << 20 };
static int zero_by_name(Zero *z, const po_Value *v, int depth) {
  if (depth >= kMaxFindDepth || z->oom) return -1;
  bool map = po_Value_Kind(v) == kPo_ValueKind_Map;
  if (!map && po_Value_Kind(v) != kPo_ValueKind_List) return -1;
  size_t n = po_Value_Size(v);
  for (size_t i = 0; i < n; i++) {
    const po_Value *c = po_Value_At(v, i);
    z->keys[depth] = map ? po_Value_KeyAt(v, i) : NULL;
    z->idx[depth] = i;
    size_t len = 0;
    const char *t = po_Value_Kind(c) == kPo_ValueKind_String ? po_Value_String(c, &len) : NULL;
    if (t && map && maybe_zero(t, len)) {
      if (z->checks++ >= kMaxZeroChecks || *z->work + z->encoded_len > kMaxZeroWork) return -1;
      *z->work += z->encoded_len;
      if (sets_nothing(z, c)) return depth + 1;
      if (z->oom) return -1;
      continue;
    }
    int hit = zero_by_name(z, c, depth + 1);
    if (hit >= 0 || z->oom) return hit;
  }
  return -1;
}

static const char *zero_path(const Zero *z, int hit, po_Arena *a) {
  po_TextBuf t = {.a = a};
  for (int i = 0; i < hit; i++) {
    char num[24];
    snprintf(num, sizeof num, "%zu", z->idx[i]);
    po_TextBuf_Puts(&t, "/");
    po_TextBuf_Puts(&t, z->keys[i] ? z->keys[i] : num);
  }
  return t.oom ? NULL : t.buf ? t.buf : "";
}

/* Envoy's rules on a patch value (po_Message_CheckRules): MERGE merges it into the generated
 * object, so only what it sets is judged; ADD, INSERT_* and REPLACE put it in whole, so every
 * rule applies (a required field it lacks too). Other operations carry no value Istio uses. */
static bool check_rules(const po_Message *pm, const char *op, int i, const char *where, po_Arena *a,
                        po_Diagnostics *d) {
  po_ValueScope scope;
  if (!op) return true;
  if (!strcmp(op, "MERGE")) scope = kPo_ValueScope_Merge;
  else if (!strcmp(op, "MERGE_AND_REPLACE_LIST")) scope = kPo_ValueScope_MergeReplaceLists;
  else if (!strcmp(op, "ADD") || !strcmp(op, "REPLACE") || !strncmp(op, "INSERT_", 7)) scope = kPo_ValueScope_Whole;
  else return true;
  po_Diagnostics *found = po_Diagnostics_New(a);
  po_Status st;
  po_Status_Clear(&st);
  if (!found || !po_Message_CheckRules(pm, 0, NULL, scope, i, found, &st)) return false;
  for (size_t k = 0; k < po_Diagnostics_Count(found); k++) {
    const po_Diagnostic *f = po_Diagnostics_At(found, k);
    if (!add(d, f->severity, i, where, po_Arena_Printf(a, "%s.patch.value%s: %s", where, f->path, f->message))) {
      return false;
    }
  }
  return true;
}

static bool one_of(const char *s, const char *const *list) {
  for (; s && *list; list++) {
    if (!strcmp(s, *list)) return true;
  }
  return false;
}

/* What Istio's own ValidateEnvoyFilter (pkg/config/validation/envoyfilter) refuses in one
 * configPatch before it looks at the value, in its order, or NULL: no applyTo, no patch, no
 * operation, no value for an operation other than REMOVE, and a match on another class of object
 * than applyTo patches (a listener, route configuration or cluster match). Istio then refuses the
 * whole EnvoyFilter (the API server denies it where Istio's webhook runs). */
static const char *istio_refuses(const json_object *cp, const char *where, po_Arena *a) {
  static const char *const kListener[] = {"LISTENER", "FILTER_CHAIN", "NETWORK_FILTER", "HTTP_FILTER", NULL};
  static const char *const kRoute[] = {"ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE", NULL};
  json_object *patch = po_Json_Get(cp, "patch"), *match = po_Json_Get(cp, "match");
  const char *apply_to = po_Json_String(cp, "applyTo"), *op = po_Json_String(patch, "operation");
  if (!apply_to || !*apply_to || !strcmp(apply_to, "INVALID")) {
    return po_Arena_Printf(a, "%s.applyTo: missing: Istio refuses the EnvoyFilter (\"Envoy filter: missing applyTo\"); "
                              "name what the patch applies to (CLUSTER, LISTENER, HTTP_FILTER, ...)", where);
  }
  if (!patch) {
    return po_Arena_Printf(a, "%s.patch: missing: Istio refuses the EnvoyFilter (\"Envoy filter: missing patch\")",
                           where);
  }
  if (!op || !*op || !strcmp(op, "INVALID")) {
    return po_Arena_Printf(a, "%s.patch.operation: missing: Istio refuses the EnvoyFilter (\"Envoy filter: missing "
                              "patch operation\"); name one (MERGE, ADD, REMOVE, ...)", where);
  }
  if (strcmp(op, "REMOVE") != 0 && !po_Json_Get(patch, "value")) {
    return po_Arena_Printf(a, "%s.patch.value: missing with operation %s: Istio refuses the EnvoyFilter (\"Envoy "
                              "filter: missing patch value for non-remove operation\")", where, op);
  }
  bool listener = po_Json_Get(match, "listener") != NULL, route = po_Json_Get(match, "routeConfiguration") != NULL,
       cluster = po_Json_Get(match, "cluster") != NULL;
  if (!listener && !route && !cluster) return NULL; /* no object match: any object of the class */
  const char *cls = one_of(apply_to, kListener) ? "listener" : one_of(apply_to, kRoute) ? "route configuration"
                    : !strcmp(apply_to, "CLUSTER") ? "cluster" : NULL;
  bool fits = !cls || (!strcmp(cls, "listener") ? listener : !strcmp(cls, "cluster") ? cluster : route);
  if (fits) return NULL;
  return po_Arena_Printf(a, "%s.match: a %s match with applyTo %s: Istio refuses the EnvoyFilter (\"Envoy filter: "
                            "applyTo for %s class objects cannot have non %s match\"); match.%s, or no object match",
                         where, listener ? "listener" : route ? "routeConfiguration" : "cluster", apply_to,
                         !strcmp(cls, "route configuration") ? "http route" : cls,
                         !strcmp(cls, "route configuration") ? "route configuration" : cls,
                         !strcmp(cls, "listener") ? "listener" : !strcmp(cls, "cluster") ? "cluster"
                                                                                          : "routeConfiguration");
}

bool po_Istio_CheckEnvoyFilter(const json_object *ef, const po_NativeJudge *j, po_Arena *a, po_Diagnostics *d) {
  const po_EnvoyApi *api = j->api;
  json_object *cps = po_Json_Get(po_Json_Get(ef, "spec"), "configPatches");
  if (!json_object_is_type(cps, json_type_array)) return true;
  size_t n = json_object_array_length(cps);
  if (n > kMaxConfigPatches) {
    return add(d, kPo_Severity_Error, -1, NULL,
               po_Arena_Printf(a, "spec.configPatches: %zu patches; at most %d are checked in one EnvoyFilter", n,
                               kMaxConfigPatches));
  }
  size_t zero_work = 0; /* kMaxZeroWork */
  for (size_t i = 0; i < n; i++) {
    json_object *cp = json_object_array_get_idx(cps, i), *patch = po_Json_Get(cp, "patch");
    const char *apply_to = po_Json_String(cp, "applyTo"), *op = po_Json_String(patch, "operation");
    json_object *value = po_Json_Get(patch, "value");
    const char *where = po_Arena_Printf(a, "spec.configPatches[%zu]", i);
    if (!where) return false;
    const char *refused = istio_refuses(cp, where, a);
    if (refused) {
      if (!add(d, kPo_Severity_Error, (int)i, where, refused)) return false;
      continue;
    }
    if (apply_to && op && !strcmp(apply_to, "CLUSTER") && !strncmp(op, "INSERT_", 7)) {
      if (!add(d, kPo_Severity_Warning, (int)i, where,
               po_Arena_Printf(a, "%s: %s on CLUSTER is treated as ADD: clusters have no order "
                                  "(istio/istio#37107)", where, op))) return false;
    }
    /* REMOVE uses no value: one left over is never a denial (Istio decodes it leniently, and
     * only a value that does not decode at all makes it drop the patch: said as a warning) */
    bool unused = value && op && !strcmp(op, "REMOVE");
    if (unused && !add(d, kPo_Severity_Warning, (int)i, where,
                       po_Arena_Printf(a, "%s.patch.value: operation REMOVE uses no value: remove it", where))) {
      return false;
    }
    const char *msg = po_Istio_PatchMessage(apply_to);
    if (!value || !msg) continue;
    po_Status st;
    po_Status_Clear(&st);
    /* the engine's writer, in the arena: json-c's, out of memory, can return a text with pieces
     * missing (its printbuf appends go unchecked), which would decode as some other error */
    po_Value *pv = po_Value_FromJsonC(value, a, &st);
    const char *text = pv ? po_Value_ToPrettyJson(pv, a) : NULL;
    if (!text) return false;
    po_Message *pm = po_Message_ParseJson(api, msg, text, strlen(text), a, &st);
    if (!pm) {
      if (st.code == kPo_Status_NoMemory) return false;
      const char *unknown = po_AnyType_FirstUnknown(api, value, a);
      if (unknown) {
        if (!add(d, kPo_Severity_Warning, (int)i, where,
                 po_Arena_Printf(a, "%s.patch.value: not checked: @type %s is not in Envoy's schema (an Istio-only type "
                                    "such as stats.PluginConfig or a TypedStruct; else check the URL)",
                                 where, unknown))) return false;
        continue;
      }
      /* named by the field, not by a line of the indented text the decoder read */
      const char *what = NULL, *at = po_Native_ErrorPointer(pv, st.message, a, &what);
      const char *verb = unused ? "unused by REMOVE, does not decode (Istio may drop the patch) as" : "not a valid";
      const char *hint = po_Native_UnknownFieldHint(j, msg, pv, at, what, a);
      if (!hint) return false;
      const char *why = po_Arena_Printf(a, "%s.patch.value%s: %s %s for applyTo %s: %s%s", where, at ? at : "", verb, msg,
                                        apply_to, at ? what : st.message, hint);
      if (!add(d, unused ? kPo_Severity_Warning : kPo_Severity_Error, (int)i, where, why)) return false;
      continue;
    }
    if (unused) continue;
    if (!check_rules(pm, op, (int)i, where, a, d)) return false;
    if (op && !strcmp(op, "MERGE")) {
      const char *z = find(value, false, a), *l = find(value, true, a);
      if (!z) { /* a zero by name: a string member that sets nothing */
        Zero zs = {.root = pv, .api = api, .msg = msg, .work = &zero_work};
        zs.encoded = po_Message_ToJson(pm, a, &zs.encoded_len, &st);
        if (!zs.encoded && st.code == kPo_Status_NoMemory) return false;
        int hit = zs.encoded ? zero_by_name(&zs, pv, 0) : -1;
        if (zs.oom || (hit >= 0 && !(z = zero_path(&zs, hit, a)))) return false;
      }
      if (z && !add(d, kPo_Severity_Warning, (int)i, where,
                    po_Arena_Printf(a, "%s.patch.value%s: a zero value under MERGE is unset in proto3 and is not "
                                       "copied: the field keeps its generated value (unless it is a oneof member "
                                       "or optional)", where, z))) return false;
      if (l && !add(d, kPo_Severity_Warning, (int)i, where,
                    po_Arena_Printf(a, "%s.patch.value%s: a list under MERGE is appended to the generated one, not "
                                       "put in its place (MERGE_AND_REPLACE_LIST, Istio 1.31+, replaces it)",
                                    where, l))) return false;
    }
  }
  return true;
}
