/* A Consul target's digest read from its object, and the JSON Patch of a plan over a digest
 * (consul_digest.h). The reading mirrors po_Consul_OwnedEntries' and entry_current's
 * (consul_reconcile.c): a digest says of an entry exactly what those read of its element, so a
 * reconcile from the digest decides as one from the object (tests/reconcile's
 * test_digest_differs_in_nothing runs both). */
#include "consul_digest.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "po/base/json.h"
#include "po/meshes/consul.h"
#include "po/meshes/consul_check.h"

#define SOURCE_KEY "PropertyOverride"

void po_ConsulDigest_Slot(const json_object *element, const char *target_uid, po_TargetSlot *s) {
  *s = (po_TargetSlot){.mark = kPo_Slot_Unmarked};
  const char *name = po_Json_String(element, "name");
  json_object *args = po_Json_Get(element, "arguments"), *src = po_Json_Get(args, SOURCE_KEY);
  s->ext = name && strcmp(name, PO_EXTENSION_NAME) == 0;
  if (s->ext) s->patches = (uint32_t)po_ConsulEntry_PatchCount(args);
  po_ConsulEntry e;
  po_ConsulMark m = po_Consul_MarkOf(element, target_uid, &e);
  if (m == kPo_ConsulMark_LookAlike) s->mark = kPo_Slot_LookAlike;
  if (m != kPo_ConsulMark_Bound) return;
  json_object *req = po_Json_Get(element, "required"), *gen = po_Json_Get(src, "generation");
  s->mark = kPo_Slot_Bound;
  s->owner = e.owner;
  s->uid = e.uid;
  s->ns = e.ns ? e.ns : "";
  s->generation = e.generation;
  s->priority = e.priority;
  s->required = e.required;
  s->exact = json_object_is_type(element, json_type_object) && json_object_object_length((json_object *)element) == 3 &&
             req && json_object_is_type(req, json_type_boolean) && gen && json_object_is_type(gen, json_type_int) &&
             json_object_is_type(src, json_type_object) &&
             json_object_object_length(src) == 4 + (s->priority != 0) + (*s->ns != 0);
}

void po_ConsulDigest_Meta(const json_object *target, po_TargetDigest *d) {
  snprintf(d->uid, sizeof d->uid, "%s", po_Json_Meta(target, "uid"));
  snprintf(d->rv, sizeof d->rv, "%s", po_Json_Meta(target, "resourceVersion"));
  d->created = po_Owned_CreatedBy(target);
  const char *managed = po_Json_String(po_Json_Get(po_Json_Get(target, "metadata"), "labels"), "app.kubernetes.io/managed-by");
  d->managed = managed && strcmp(managed, "propertyoverride") == 0;
  json_object *spec = po_Json_Get(target, "spec"), *list = po_Json_Get(spec, "envoyExtensions");
  d->spec_object = spec && json_object_is_type(spec, json_type_object);
  d->spec_other = false;
  if (d->spec_object) {
    json_object_object_foreach(spec, k, v) {
      (void)v;
      if (strcmp(k, "envoyExtensions") != 0) d->spec_other = true;
    }
  }
  d->list = list && json_object_is_type(list, json_type_array);
}

/* More operations than this and the object is planned and written instead (po_Consul_Delta's bound). */
enum { kMaxOps = 1000 };

static void put_op(po_TextBuf *t, const char *op, size_t at) {
  char head[96];
  int n = snprintf(head, sizeof head, ",{\"op\":\"%s\",\"path\":\"/spec/envoyExtensions/%zu\"", op, at);
  po_TextBuf_Put(t, head, (size_t)n);
}

const char *po_ConsulDigest_Delta(size_t n0, const po_ConsulPlanned *planned, size_t n, const char *rv, po_Arena *a,
                                  size_t *len) {
  *len = 0;
  if (!rv || !*rv) return NULL;
  size_t kept = 0, last = 0;
  for (size_t j = 0; j < n; j++) {
    if (!planned[j].from) continue;
    if (planned[j].from <= last || planned[j].from > n0) return NULL; /* moved: the longest common run decides */
    last = planned[j].from;
    kept++;
  }
  if ((n0 - kept) + (n - kept) > kMaxOps) return NULL;
  /* which old elements stay (one bit each would do; a target holds at most a few hundred) */
  bool *stays = n0 ? po_Arena_Malloc(a, n0 * sizeof *stays) : NULL;
  if (n0 && !stays) return NULL;
  for (size_t i = 0; i < n0; i++) stays[i] = false;
  for (size_t j = 0; j < n; j++) if (planned[j].from) stays[planned[j].from - 1] = true;
  po_TextBuf t = {.a = a};
  json_object *v = json_object_new_string(rv);
  const char *quoted = v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : NULL;
  if (quoted) {
    po_TextBuf_Puts(&t, "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":");
    po_TextBuf_Puts(&t, quoted);
  }
  json_object_put(v);
  if (!quoted) return NULL;
  po_TextBuf_Put(&t, "}", 1);
  /* Removed last first, so each index is still the old list's; what is left is the kept elements
   * in the planned order, and each new one is added at its final place, first first. */
  for (size_t i = n0; i-- > 0;) {
    if (stays[i]) continue;
    put_op(&t, "remove", i);
    po_TextBuf_Put(&t, "}", 1);
  }
  for (size_t j = 0; j < n; j++) {
    if (planned[j].from) continue;
    size_t alen = 0;
    const char *args = json_object_to_json_string_length((json_object *)planned[j].arguments, JSON_C_TO_STRING_PLAIN, &alen);
    if (!args) return NULL;
    put_op(&t, "add", j);
    po_TextBuf_Puts(&t, ",\"value\":{\"name\":\"" PO_EXTENSION_NAME "\",\"required\":");
    po_TextBuf_Puts(&t, planned[j].required ? "true" : "false");
    po_TextBuf_Puts(&t, ",\"arguments\":");
    po_TextBuf_Put(&t, args, alen);
    po_TextBuf_Put(&t, "}}", 2);
  }
  po_TextBuf_Put(&t, "]", 1);
  if (t.oom || !t.buf) return NULL;
  *len = t.len;
  return t.buf;
}
