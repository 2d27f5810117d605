/* The object store (a sorted array of entries per resource) and the event ring that watches
 * read. Every mutation takes the next global resourceVersion and appends one event; the ring
 * keeps the last N events (the compaction window). Caller holds po_as.mu. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver.h"

char *po_As_Key(const char *ns, const char *name) {
  return po_As_Printf("%s/%s", ns ? ns : "", name ? name : "");
}

static size_t lower_bound(po_As_Resource *r, const char *key, bool *found) {
  size_t lo = 0, hi = r->nitems;
  *found = false;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(r->items[mid].key, key);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

po_As_Entry *po_As_Store_Get(po_As_Resource *r, const char *ns, const char *name) {
  char *key = po_As_Key(r->namespaced ? ns : NULL, name);
  bool found;
  size_t i = lower_bound(r, key, &found);
  free(key);
  return found ? &r->items[i] : NULL;
}

size_t po_As_Store_Lower(po_As_Resource *r, const char *after) {
  if (!after) return 0;
  bool found;
  size_t i = lower_bound(r, after, &found);
  return found ? i + 1 : i;
}

void po_As_Store_Record(po_As_Resource *r, int type, json_object *obj, json_object *old) {
  if (po_as.ring_cap == 0) {
    po_as.compacted_rv = po_as.rv;
  } else {
    if (po_as.ring_len == po_as.ring_cap) {
      po_As_Event *e = &po_as.ring[po_as.ring_head];
      po_as.compacted_rv = e->rv;
      json_object_put(e->obj);
      json_object_put(e->old);
      po_as.ring_head = (po_as.ring_head + 1) % po_as.ring_cap;
      po_as.ring_len--;
    }
    po_As_Event *e = &po_as.ring[(po_as.ring_head + po_as.ring_len) % po_as.ring_cap];
    e->rv = po_as.rv;
    e->type = type;
    e->res = r;
    e->obj = json_object_get(obj);
    e->old = json_object_get(old);
    clock_gettime(CLOCK_REALTIME, &e->at);
    po_as.ring_len++;
  }
  po_as.dirty = true;
  pthread_cond_broadcast(&po_as.cond);
}

static void set_rv(json_object *obj) {
  char b[32];
  snprintf(b, sizeof b, "%" PRIu64, ++po_as.rv);
  json_object_object_add(po_As_Meta(obj), "resourceVersion", json_object_new_string(b));
}

void po_As_Store_Put(po_As_Resource *r, json_object *obj, int type) {
  set_rv(obj);
  char *key = po_As_Key(r->namespaced ? po_As_MetaStr(obj, "namespace") : NULL, po_As_MetaStr(obj, "name"));
  bool found;
  size_t i = lower_bound(r, key, &found);
  json_object *old = NULL;
  if (found) {
    old = r->items[i].obj;
    r->items[i].obj = obj;
    free(key);
  } else {
    if (r->nitems == r->capitems) {
      r->capitems = r->capitems ? r->capitems * 2 : 16;
      r->items = realloc(r->items, r->capitems * sizeof *r->items);
    }
    memmove(&r->items[i + 1], &r->items[i], (r->nitems - i) * sizeof *r->items);
    r->items[i].key = key;
    r->items[i].obj = obj;
    r->nitems++;
  }
  po_As_Store_Record(r, found ? type : kPo_As_Added, obj, old);
  json_object_put(old);
}

void po_As_Store_Remove(po_As_Resource *r, const char *ns, const char *name, json_object *final_obj) {
  char *key = po_As_Key(r->namespaced ? ns : NULL, name);
  bool found;
  size_t i = lower_bound(r, key, &found);
  free(key);
  if (!found) {
    json_object_put(final_obj);
    return;
  }
  json_object *old = r->items[i].obj;
  free(r->items[i].key);
  memmove(&r->items[i], &r->items[i + 1], (r->nitems - i - 1) * sizeof *r->items);
  r->nitems--;
  /* The DELETED event carries the object's last state at a new resourceVersion. */
  json_object *fin = final_obj ? final_obj : po_As_Copy(old);
  set_rv(fin);
  po_As_Store_Record(r, kPo_As_Deleted, fin, NULL);
  json_object_put(fin);
  json_object_put(old);
}
