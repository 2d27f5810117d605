/* The two fake servers of the digest tests, compared (digest_pair.h). */
#include "digest_pair.h"

#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "consul_digest.h"
#include "json_hash.h"
#include "po/base/json.h"
#include "po/reconcile/reconcile.h"

/* The digest the index keeps for a target, against the object at the version it names. */
void check_digest(World *w, const char *key) {
  Fake *fx = w->fx[0];
  Slot *s = slot(fx, key, false);
  if (!s || !s->obj) return;
  const char *uid = po_Json_Meta(s->obj, "uid"), *rv = po_Json_Meta(s->obj, "resourceVersion");
  po_Arena *a = po_Arena_New();
  po_TargetDigest d;
  if (po_TargetIndex_Digest(fx->ix, key, uid, rv, a, &d)) {
    w->checked_digests++;
    po_TargetDigest want = {0};
    po_ConsulDigest_Meta(s->obj, &want);
    assert_string_equal(d.uid, want.uid);
    assert_string_equal(d.rv, want.rv);
    assert_int_equal(d.created, want.created);
    assert_int_equal(d.managed, want.managed);
    assert_int_equal(d.spec_object, want.spec_object);
    assert_int_equal(d.spec_other, want.spec_other);
    assert_int_equal(d.list, want.list);
    json_object *list = get(get(s->obj, "spec"), "envoyExtensions");
    assert_int_equal(d.n, list ? json_object_array_length(list) : 0);
    for (size_t i = 0; i < d.n; i++) {
      json_object *e = json_object_array_get_idx(list, i);
      po_TargetSlot x;
      po_ConsulDigest_Slot(e, uid, &x);
      const po_TargetSlot *y = &d.slots[i];
      assert_int_equal(y->mark, x.mark);
      assert_int_equal(y->ext, x.ext);
      assert_int_equal(y->patches, x.patches);
      if (x.mark != kPo_Slot_Bound) continue;
      assert_int_equal(y->exact, x.exact);
      assert_int_equal(y->required, x.required);
      assert_int_equal(y->priority, x.priority);
      assert_int_equal(y->generation, x.generation);
      assert_string_equal(y->owner, x.owner);
      assert_string_equal(y->uid, x.uid);
      assert_string_equal(y->ns, x.ns);
      po_JsonHash h = po_Json_HashExcept(get(e, "arguments"), "PropertyOverride");
      if (!po_JsonHash_Equal(y->hash, h)) fail_msg("%s element %zu: the digest's hash is not its arguments'", key, i);
    }
  }
  po_Arena_Free(a);
}

/* Every slot of both servers the same. */
void same_servers(World *w, const char *when) {
  for (int i = 0; i < kMax; i++) {
    const Slot *x = &w->fx[0]->slots[i], *y = &w->fx[1]->slots[i];
    if (strcmp(x->key, y->key) != 0) fail_msg("%s: slot %d is %s in one server, %s in the other", when, i, x->key, y->key);
    const char *tx = x->obj ? json_object_to_json_string_ext(x->obj, JSON_C_TO_STRING_PLAIN) : "(none)";
    const char *ty = y->obj ? json_object_to_json_string_ext(y->obj, JSON_C_TO_STRING_PLAIN) : "(none)";
    /* the same JSON (an object's members in any order: each server keeps the order its writes made) */
    if ((x->obj == NULL) != (y->obj == NULL) || (x->obj && !json_object_equal(x->obj, y->obj))) {
      fprintf(stderr, "%s: %s differs\nfrom its digest: %s\nfrom its object: %s\n", when, x->key, tx, ty);
      fail_msg("%s: %s differs (above)", when, x->key);
    }
  }
  assert_int_equal(w->fx[0]->events, w->fx[1]->events);
  assert_int_equal(w->fx[0]->target_events, w->fx[1]->target_events);
}

void reconcile_both(World *w, const char *key, const char *when) {
  po_ReconcileResult r[2];
  Slot *before = slot(w->fx[1], key, false);
  char *was = before && before->obj ? strdup(json_object_to_json_string_ext(before->obj, JSON_C_TO_STRING_PLAIN)) : NULL;
  for (int f = 0; f < 2; f++) r[f] = po_Reconcile(&w->fx[f]->io, w->fx[f]->ix, key);
  assert_false(r[1].from_digest);
  w->reconciles++;
  w->from_digest += r[0].from_digest;
  w->digest_object += r[0].digest_object;
  if (r[0].ok != r[1].ok || r[0].targets_written != r[1].targets_written || r[0].statuses_written != r[1].statuses_written ||
      r[0].conflict != r[1].conflict) {
    fprintf(stderr, "%s before: %s\n", key, was ? was : "(none)");
    Slot *after = slot(w->fx[1], key, false);
    fprintf(stderr, "%s after (from the object): %s\n", key, after && after->obj ? json_object_to_json_string_ext(after->obj, JSON_C_TO_STRING_PLAIN) : "(none)");
    fail_msg("%s, %s: from the digest ok %d, %d target and %d status writes (%s); from the object ok %d, %d and %d (%s)", when,
             key, r[0].ok, r[0].targets_written, r[0].statuses_written, r[0].error, r[1].ok, r[1].targets_written,
             r[1].statuses_written, r[1].error);
  }
  free(was);
  assert_int_equal(w->fx[0]->lent, 0);
  assert_int_equal(w->fx[1]->lent, 0);
  same_servers(w, when);
  check_digest(w, key);
}

/* One of the edits by others both tests make of a target's spec (kind 0-5): an extension added
 * somewhere, an element dropped, two swapped, an entry's patch value changed, a copy of an entry
 * appended (its marker bound elsewhere when r2 is odd: a look-alike), another field set. The list
 * is made first when there is none (but for kind 5). */
void edit_extensions(json_object *spec, int kind, uint32_t r1, uint32_t r2) {
  json_object *list = get(spec, "envoyExtensions");
  size_t n = list ? json_object_array_length(list) : 0;
  if (!list && kind != 5) {
    list = json_object_new_array();
    json_object_object_add(spec, "envoyExtensions", list);
  }
  switch (kind) {
    case 0: { /* another extension, somewhere */
      size_t at = n ? r1 % (n + 1) : 0;
      json_object *grown = json_object_new_array();
      for (size_t i = 0; i <= n; i++) {
        if (i == at) json_object_array_add(grown, json_tokener_parse("{\"name\":\"builtin/lua\",\"arguments\":{\"Script\":\"x\"}}"));
        if (i < n) json_object_array_add(grown, json_object_get(json_object_array_get_idx(list, i)));
      }
      json_object_object_add(spec, "envoyExtensions", grown);
      break;
    }
    case 1: /* an element dropped */
      if (n) json_object_array_del_idx(list, r1 % n, 1);
      break;
    case 2: /* two swapped */
      if (n > 1) {
        size_t i = r1 % n, j = r2 % n;
        json_object *x = copy(json_object_array_get_idx(list, i)), *y = copy(json_object_array_get_idx(list, j));
        json_object_array_put_idx(list, i, y);
        json_object_array_put_idx(list, j, x);
      }
      break;
    case 3: { /* an entry's patch value changed by hand */
      json_object *e = n ? json_object_array_get_idx(list, r1 % n) : NULL;
      json_object *ps = get(get(e, "arguments"), "Patches");
      json_object *p = ps && json_object_is_type(ps, json_type_array) ? json_object_array_get_idx(ps, 0) : NULL;
      if (p) json_object_object_add(p, "Value", json_object_new_int((int)(r2 % 100)));
      break;
    }
    case 4: { /* a copy of an entry, its marker bound elsewhere (a look-alike), or as it is */
      json_object *e = n ? copy(json_object_array_get_idx(list, r1 % n)) : NULL;
      json_object *m = get(get(e, "arguments"), "PropertyOverride");
      if (m && r2 % 2) json_object_object_add(m, "targetUID", json_object_new_string("uid-elsewhere"));
      if (e) json_object_array_add(list, e);
      break;
    }
    default: /* another field of the spec */
      json_object_object_add(spec, "protocol", json_object_new_string(r1 % 2 ? "http" : "grpc"));
      break;
  }
}
