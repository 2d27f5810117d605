/* The JSON Patch of a plan's change to spec.envoyExtensions (po_Consul_Delta). */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "po/meshes/consul.h"

/* More operations than this and the whole object is written instead (the API server takes at
 * most 10,000; a reconcile changes a handful: one per PropertyOverride that came, went or
 * changed, and a target holds at most kPo_MaxExtensionsPerConsulObject entries). */
enum { kMaxOps = 1000 };

/* More cells than this in the middle's edit table and the middle is removed and added whole
 * (each cell a pointer compare: 128 KB and ~65 K compares at most; a reconcile's middle is a
 * few entries long). */
enum { kMaxCells = 1 << 16 };

static json_object *args_of(json_object *e) {
  json_object *v = NULL;
  return json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "arguments", &v) ? v : NULL;
}

/* The same entry in both lists, as the plan made them: one object (another extension: the plan
 * shares it), or a wrapper built anew around the very arguments the target held (ours, current).
 * Arguments that are not the same object differ: no deep compare, which would walk two
 * PropertyOverrides' patches to their first difference (an entry rebuilt equal is then removed
 * and added, which is still exact). The edit table below compares the same way. */
static bool same(json_object *a, json_object *b) {
  if (a == b) return true;
  json_object *x = args_of(a);
  return x && x == args_of(b) && json_object_equal(a, b);
}

static void put_json(po_TextBuf *t, json_object *v) {
  size_t n = 0;
  const char *s = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &n);
  if (!s) t->oom = true;
  else po_TextBuf_Put(t, s, n);
}

/* An "add" always says its value: a JSON null member is NULL here (json-c writes it "null"). */
static void put_op(po_TextBuf *t, const char *op, size_t at, bool add, json_object *value) {
  char head[96];
  int n = snprintf(head, sizeof head, ",{\"op\":\"%s\",\"path\":\"/spec/envoyExtensions/%zu\"", op, at);
  po_TextBuf_Put(t, head, (size_t)n);
  if (add) {
    po_TextBuf_Puts(t, ",\"value\":");
    put_json(t, value);
  }
  po_TextBuf_Put(t, "}", 1);
}

/* The operations between the common head (p entries) and tail: mo old entries become mn new
 * ones. The fewest by the longest common subsequence of the two (entries kept in place between
 * two PropertyOverrides that joined apart), when the table is small; else all removed, then all
 * added. Each operation's index is into the list as the ones before it left it. False: more
 * than kMaxOps operations, or out of memory. */
static bool middle(po_TextBuf *t, json_object *old, json_object *list, size_t p, size_t mo, size_t mn) {
  uint16_t *lcs = NULL; /* lcs[i * (mn + 1) + j]: of old[p + i..] and list[p + j..] */
  if (mo && mn && (mo + 1) * (mn + 1) <= kMaxCells) {
    /* each side's entries and arguments looked up once, not once per cell */
    json_object **eo = po_Arena_Malloc(t->a, 2 * (mo + mn) * sizeof *eo), **ao = eo + mo, **en = ao + mo, **an = en + mn;
    if (!eo || !(lcs = po_Arena_Malloc(t->a, (mo + 1) * (mn + 1) * sizeof *lcs))) return false;
    for (size_t i = 0; i < mo; i++) ao[i] = args_of(eo[i] = json_object_array_get_idx(old, p + i));
    for (size_t j = 0; j < mn; j++) an[j] = args_of(en[j] = json_object_array_get_idx(list, p + j));
    for (size_t i = mo + 1; i-- > 0;) {
      for (size_t j = mn + 1; j-- > 0;) {
        uint16_t *c = &lcs[i * (mn + 1) + j];
        if (i == mo || j == mn) *c = 0;
        else if (eo[i] == en[j] || (ao[i] && ao[i] == an[j] && json_object_equal(eo[i], en[j])))
          *c = (uint16_t)(lcs[(i + 1) * (mn + 1) + j + 1] + 1);
        else *c = lcs[(i + 1) * (mn + 1) + j] > lcs[i * (mn + 1) + j + 1] ? lcs[(i + 1) * (mn + 1) + j] : lcs[i * (mn + 1) + j + 1];
      }
    }
  }
  size_t kept = lcs ? lcs[0] : 0;
  if (mo + mn - 2 * kept > kMaxOps) return false;
  size_t i = 0, j = 0, at = p;
  while (i < mo || j < mn) {
    /* kept: the table says a match here starts the longest common run from (i, j) */
    bool keep = lcs && i < mo && j < mn && lcs[i * (mn + 1) + j] == lcs[(i + 1) * (mn + 1) + j + 1] + 1 &&
                lcs[i * (mn + 1) + j] > lcs[(i + 1) * (mn + 1) + j] && lcs[i * (mn + 1) + j] > lcs[i * (mn + 1) + j + 1];
    if (keep) {
      i++, j++, at++;
    } else if (i < mo && (j == mn || !lcs || lcs[(i + 1) * (mn + 1) + j] >= lcs[i * (mn + 1) + j + 1])) {
      put_op(t, "remove", at, false, NULL); /* on a tie the old one goes first: a changed entry is replaced in place */
      i++;
    } else {
      put_op(t, "add", at++, true, json_object_array_get_idx(list, p + j++));
    }
  }
  return true;
}

const char *po_Consul_Delta(const json_object *old_list, const json_object *new_list, const char *rv,
                            const json_object *annotations, po_Arena *a, size_t *len) {
  *len = 0;
  if (!new_list || !json_object_is_type(new_list, json_type_array) || !rv || !*rv) return NULL;
  po_TextBuf t = {.a = a};
  /* The version read, written back: the API server refuses the patch (409 Conflict) when the
   * object is no longer that version, as it does an update carrying it, once the operations
   * applied to the object it holds; when they cannot (a list a tenant shortened), it answers 422
   * first, and the caller sends the whole object over the same version to tell which it was.
   * ("test" would answer 422 either way.) */
  json_object *v = json_object_new_string(rv);
  if (!v) return NULL;
  po_TextBuf_Puts(&t, "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":");
  put_json(&t, v);
  json_object_put(v);
  po_TextBuf_Put(&t, "}", 1);
  if (annotations) {
    /* the whole map ("add" replaces the member): over the version read, it is that version's
     * annotations with ours set, nothing of anyone else's lost */
    po_TextBuf_Puts(&t, ",{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":");
    put_json(&t, (json_object *)annotations);
    po_TextBuf_Put(&t, "}", 1);
  }
  json_object *old = (json_object *)old_list, *list = (json_object *)new_list;
  if (!old || !json_object_is_type(old, json_type_array)) {
    /* absent or not a list: the whole list ("add" replaces a member that is there) */
    po_TextBuf_Puts(&t, ",{\"op\":\"add\",\"path\":\"/spec/envoyExtensions\",\"value\":");
    put_json(&t, list);
    po_TextBuf_Put(&t, "}", 1);
  } else {
    size_t n0 = json_object_array_length(old), n1 = json_object_array_length(list), p = 0, s = 0;
    while (p < n0 && p < n1 && same(json_object_array_get_idx(old, p), json_object_array_get_idx(list, p))) p++;
    while (s < n0 - p && s < n1 - p &&
           same(json_object_array_get_idx(old, n0 - 1 - s), json_object_array_get_idx(list, n1 - 1 - s)))
      s++;
    if (!middle(&t, old, list, p, n0 - p - s, n1 - p - s)) return NULL;
  }
  po_TextBuf_Put(&t, "]", 1);
  if (t.oom || !t.buf) return NULL;
  *len = t.len;
  return t.buf;
}
