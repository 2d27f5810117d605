/* The ownership decision for one mesh object per PropertyOverride (owned.h). */
#include "po/targets/owned.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"

#define OWNER_UID_KEY "propertyoverride.io/owner-uid"

/* The length of the UTF-8 character at p (n bytes left) as Go's encoding/json decodes it
 * (utf8.DecodeRune): 0 when invalid (a bad lead or continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, cut short), *rune its code point when valid. */
static size_t utf8_char(const unsigned char *p, size_t n, unsigned *rune) {
  unsigned b = p[0];
  size_t len = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 0;
  if (!len || len > n || b >= 0xF5) return 0;
  unsigned r = b & (0x7F >> len);
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    r = (r << 6) | (p[i] & 0x3F);
  }
  if ((len == 3 && (r < 0x800 || (r >= 0xD800 && r <= 0xDFFF))) || (len == 4 && (r < 0x10000 || r > 0x10FFFF))) return 0;
  *rune = r;
  return len;
}

/* The bytes n bytes at s take as Go's encoding/json (the API server, so etcd) writes them, an
 * upper bound: '<', '>' and '&' as \u003c (HTML escaping, on by default), U+2028 and U+2029 as
 * \u2028, each byte of invalid UTF-8 as \ufffd; `raw` (s is a string's value, not JSON text):
 * the quotes, and '"', '\\' and '/' as two bytes (json-c writes "\/"), a control character as
 * six (\u00XX; Go writes some as two). In JSON text those escapes are there already, and '<',
 * '>', '&' and bytes of 0x80 and above occur only inside strings. */
static size_t go_bytes(const unsigned char *s, size_t n, bool raw) {
  size_t out = raw ? 2 : 0;
  for (size_t i = 0; i < n;) {
    unsigned c = s[i], rune = 0;
    if (c < 0x80) {
      out += c == '<' || c == '>' || c == '&' ? 6
             : !raw                           ? 1
             : c < 0x20                       ? 6
             : c == '"' || c == '\\' || c == '/' ? 2
                                              : 1;
      i++;
      continue;
    }
    size_t len = utf8_char(s + i, n - i, &rune);
    if (!len) {
      out += 6; /* \ufffd */
      i++;
      continue;
    }
    out += rune == 0x2028 || rune == 0x2029 ? 6 : len;
    i += len;
  }
  return out;
}

#define CREATED_KEY "propertyoverride.io/created"

po_OwnedCreated po_Owned_CreatedBy(const json_object *obj) {
  const char *c = po_Json_String(po_Json_Get(po_Json_Get(obj, "metadata"), "annotations"), CREATED_KEY);
  if (!c) return kPo_OwnedCreated_No;
  return *po_Json_Meta(obj, "uid") && strcmp(c, po_Json_Meta(obj, "uid")) == 0 ? kPo_OwnedCreated_Us : kPo_OwnedCreated_Foreign;
}

bool po_Owned_MarkCreated(json_object *obj) {
  json_object *meta = po_Json_Get(obj, "metadata");
  if (!meta) return false;
  json_object *ann = po_Json_Get(meta, "annotations");
  if ((!ann || !json_object_is_type(ann, json_type_object)) && !po_Json_Put(meta, "annotations", ann = json_object_new_object()))
    return false;
  return po_Json_Put(ann, CREATED_KEY, json_object_new_string(po_Json_Meta(obj, "uid")));
}

size_t po_Owned_JsonBytes(json_object *v) {
  size_t n = 0;
  const char *t = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
  return t ? go_bytes((const unsigned char *)t, n, false) : 0;
}

size_t po_Owned_StringBytes(const char *s) {
  return go_bytes((const unsigned char *)(s ? s : ""), s ? strlen(s) : 0, true);
}

static const char *annotation(const json_object *o, const char *key) {
  return po_Json_String(po_Json_Get(po_Json_Get(o, "metadata"), "annotations"), key);
}

/* o's metadata.annotations, created when absent; NULL when out of memory. */
static json_object *annotations_of(json_object *o) {
  json_object *md = po_Json_Get(o, "metadata"), *ann = po_Json_Get(md, "annotations");
  if (ann) return ann;
  if (!md || !(ann = json_object_new_object())) return NULL;
  return po_Json_Put(md, "annotations", ann) ? ann : NULL;
}

static bool same(const json_object *a, const json_object *b) {
  return json_object_equal((json_object *)a, (json_object *)b) != 0;
}

/* What a look-alike's status says, per kind: [kind][copy or restore, anything else]. */
static const char *const kForeign[][2] = {
    [kPo_Owned_EnvoyFilter] =
        {"an EnvoyFilter of this name exists whose propertyoverride.io/created annotation is not its own uid "
         "(a copy or a restore): it is left alone, and these patches are not programmed",
         "an EnvoyFilter of this name exists that this controller did not create for this PropertyOverride: "
         "it is left alone, and these patches are not programmed (delete or rename it)"},
    [kPo_Owned_EnvoyPatchPolicy] =
        {"an EnvoyPatchPolicy of this name exists whose propertyoverride.io/created annotation is not its own uid "
         "(a copy or a restore): it is left alone, and these patches are not programmed",
         "an EnvoyPatchPolicy of this name exists that this controller did not create for this PropertyOverride: "
         "it is left alone, and these patches are not programmed (delete or rename it)"},
};

bool po_Owned_MarkGeneration(json_object *desired, int64_t generation) {
  json_object *ann = annotations_of(desired);
  char g[24];
  snprintf(g, sizeof g, "%lld", (long long)generation);
  return ann && po_Json_Put(ann, PO_OWNED_GENERATION_KEY, json_object_new_string(g));
}

/* A copy of o for a write: every member copied but spec, which is `spec`, shared (json-c counts
 * references: no copy of what may be a megabyte of patches; the caller only writes the result and
 * never changes its spec). NULL when out of memory. */
static json_object *with_spec(const json_object *o, const json_object *spec) {
  json_object *w = json_object_new_object();
  bool ok = w != NULL;
  if (ok) {
    json_object_object_foreach((json_object *)o, k, v) {
      if (!ok || !strcmp(k, "spec")) continue;
      json_object *c = NULL;
      ok = json_object_deep_copy(v, &c, NULL) == 0 && po_Json_Put(w, k, c);
    }
  }
  ok = ok && (!spec || po_Json_Put(w, "spec", json_object_get((json_object *)spec)));
  if (!ok) {
    json_object_put(w);
    return NULL;
  }
  return w;
}

po_OwnedPlan po_Owned_Plan(const json_object *current, const json_object *desired, const char *owner_uid,
                           const char *created_uid, po_OwnedKind kind) {
  po_OwnedPlan p = {0};
  const char *owner = current ? annotation(current, OWNER_UID_KEY) : NULL;
  bool owner_ok = owner && owner_uid && *owner_uid && !strcmp(owner, owner_uid);
  po_OwnedCreated by = current ? po_Owned_CreatedBy(current) : kPo_OwnedCreated_No;
  /* Just created by the caller: the server's uid for it is the one the create answered. */
  bool fresh = current && by == kPo_OwnedCreated_No && owner_ok && created_uid && *created_uid &&
               !strcmp(po_Json_Meta(current, "uid"), created_uid);
  bool ours = current && owner_ok && by == kPo_OwnedCreated_Us;
  if (current && !ours && !fresh) {
    if (!desired) return p; /* not ours and not wanted: nothing to do, nothing to report */
    p.action = kPo_OwnedPlan_Foreign;
    unsigned k = (unsigned)kind < sizeof kForeign / sizeof kForeign[0] ? (unsigned)kind : 0;
    p.why = kForeign[k][by == kPo_OwnedCreated_Foreign ? 0 : 1];
    return p;
  }
  if (!desired) {
    if (current) p.action = kPo_OwnedPlan_Delete;
    return p;
  }
  json_object *want = NULL;
  if (!current) {
    if (!(want = with_spec(desired, po_Json_Get(desired, "spec")))) return (po_OwnedPlan){.out_of_memory = true};
    json_object *ann = annotations_of(want);
    if (!ann || !po_Json_Put(ann, OWNER_UID_KEY, json_object_new_string(owner_uid ? owner_uid : ""))) {
      json_object_put(want);
      return (po_OwnedPlan){.out_of_memory = true};
    }
    p.action = kPo_OwnedPlan_Create;
    p.object = want;
    return p;
  }
  /* Ours (or just created): the spec and our label as desired, everything else as it is. */
  const json_object *dlabels = po_Json_Get(po_Json_Get(desired, "metadata"), "labels");
  const json_object *clabels = po_Json_Get(po_Json_Get(current, "metadata"), "labels");
  bool labels_ok = true;
  if (json_object_is_type(dlabels, json_type_object)) {
    json_object_object_foreach((json_object *)dlabels, lk, lv) {
      const char *cv = po_Json_String(clabels, lk);
      if (!cv || strcmp(cv, json_object_get_string(lv)) != 0) labels_ok = false;
    }
  }
  /* and our annotations the desired ones carry (the generation written: po_Owned_MarkGeneration) */
  const json_object *dann = po_Json_Get(po_Json_Get(desired, "metadata"), "annotations");
  bool ann_ok = true;
  if (json_object_is_type(dann, json_type_object)) {
    json_object_object_foreach((json_object *)dann, ak, av) {
      const char *cv = annotation(current, ak);
      if (!cv || strcmp(cv, json_object_get_string(av)) != 0) ann_ok = false;
    }
  }
  if (!fresh && labels_ok && ann_ok && same(po_Json_Get(current, "spec"), po_Json_Get(desired, "spec"))) return p;
  if (!(want = with_spec(current, po_Json_Get(desired, "spec")))) return (po_OwnedPlan){.out_of_memory = true};
  json_object *md = po_Json_Get(want, "metadata"), *labels = po_Json_Get(md, "labels");
  bool ok = md != NULL;
  if (ok && !labels) ok = (labels = json_object_new_object()) && po_Json_Put(md, "labels", labels);
  if (ok && json_object_is_type(dlabels, json_type_object)) {
    json_object_object_foreach((json_object *)dlabels, k2, v2) {
      if (ok) ok = po_Json_Put(labels, k2, json_object_new_string(json_object_get_string(v2)));
    }
  }
  if (ok && !ann_ok) {
    json_object *ann = annotations_of(want);
    ok = ann != NULL;
    json_object_object_foreach((json_object *)dann, k3, v3) {
      if (ok) ok = po_Json_Put(ann, k3, json_object_new_string(json_object_get_string(v3)));
    }
  }
  if (ok && fresh) ok = po_Owned_MarkCreated(want);
  if (!ok || (fresh && po_Owned_CreatedBy(want) != kPo_OwnedCreated_Us)) {
    json_object_put(want);
    return (po_OwnedPlan){.out_of_memory = true};
  }
  p.action = kPo_OwnedPlan_Update;
  p.object = want;
  return p;
}

bool po_Owned_Holds(const json_object *current, const json_object *desired, const char *owner_uid, po_OwnedKind kind) {
  if (!current || !desired) return false;
  po_OwnedPlan p = po_Owned_Plan(current, desired, owner_uid, NULL, kind);
  json_object_put(p.object);
  return !p.out_of_memory && p.action == kPo_OwnedPlan_None;
}

int64_t po_Owned_Generation(const json_object *current, const char *owner_uid) {
  const char *owner = current ? annotation(current, OWNER_UID_KEY) : NULL, *g = current ? annotation(current, PO_OWNED_GENERATION_KEY) : NULL;
  if (!owner || !owner_uid || strcmp(owner, owner_uid) != 0 || po_Owned_CreatedBy(current) != kPo_OwnedCreated_Us || !g) return 0;
  char *end = NULL;
  long long v = strtoll(g, &end, 10);
  return end && end != g && !*end && v > 0 ? (int64_t)v : 0;
}
