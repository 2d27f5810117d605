/* Server-side apply, approximated: each Apply manager owns the field set of the configuration
 * it last applied (fieldsV1 shape, lists atomic), kept in metadata.managedFields. Conflicts are
 * detected only against other Apply managers; non-apply writers own nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static bool skip_field(int depth, const char *parent, const char *k) {
  if (depth == 0 && (!strcmp(k, "apiVersion") || !strcmp(k, "kind"))) return true;
  if (depth == 1 && parent && !strcmp(parent, "metadata"))
    return !strcmp(k, "name") || !strcmp(k, "namespace") || !strcmp(k, "resourceVersion") ||
           !strcmp(k, "uid") || !strcmp(k, "generation") || !strcmp(k, "creationTimestamp") ||
           !strcmp(k, "managedFields") || !strcmp(k, "deletionTimestamp");
  return false;
}

static json_object *fields_of(json_object *cfg, int depth, const char *parent) {
  json_object *set = json_object_new_object();
  json_object_object_foreach(cfg, k, v) {
    if (skip_field(depth, parent, k)) continue;
    char fk[512];
    snprintf(fk, sizeof fk, "f:%s", k);
    if (v && json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) {
      json_object *sub = fields_of(v, depth + 1, k);
      if (json_object_object_length(sub) == 0) { /* only identity fields, e.g. metadata.name */
        json_object_put(sub);
        continue;
      }
      json_object_object_add(set, fk, sub);
    } else
      json_object_object_add(set, fk, json_object_new_object());
  }
  return set;
}

/* Paths are arrays of plain field names. Leaves are entries whose value is {}. */
typedef struct Path {
  const char *parts[32];
  int n;
} Path;

static json_object *at_path(json_object *o, const Path *p) {
  for (int i = 0; i < p->n && o; i++) o = po_As_Get(o, p->parts[i]);
  return o;
}

/* Does set own the path (as a leaf, or through an ancestor leaf)? */
static bool owns(json_object *set, const Path *p) {
  json_object *cur = set;
  for (int i = 0; i < p->n; i++) {
    char fk[512];
    snprintf(fk, sizeof fk, "f:%s", p->parts[i]);
    cur = po_As_Get(cur, fk);
    if (!cur) return false;
    if (json_object_object_length(cur) == 0) return true;
  }
  return true;
}

static void path_text(const Path *p, char *out, size_t outsz) {
  size_t o = 0;
  out[0] = 0;
  for (int i = 0; i < p->n && o < outsz; i++) o += (size_t)snprintf(out + o, outsz - o, ".%s", p->parts[i]);
}

typedef struct Walk {
  json_object *live, *cfg, *managed;
  const char *manager;
  bool force;
  char *msg;
  size_t msgsz, msglen;
  int conflicts;
  json_object *newset;
} Walk;

static void check_conflicts(Walk *w, json_object *set, Path *p) {
  json_object_object_foreach(set, fk, sub) {
    if (p->n >= 32) return;
    p->parts[p->n++] = fk + 2;
    if (json_object_object_length(sub) > 0) {
      check_conflicts(w, sub, p);
    } else if (!po_As_Equal(at_path(w->live, p), at_path(w->cfg, p))) {
      for (size_t i = 0; w->managed && i < json_object_array_length(w->managed); i++) {
        json_object *mf = json_object_array_get_idx(w->managed, i);
        const char *m = po_As_GetStr(mf, "manager");
        if (!m || !strcmp(m, w->manager) || !po_As_GetStr(mf, "operation") ||
            strcmp(po_As_GetStr(mf, "operation"), "Apply") != 0)
          continue;
        if (!owns(po_As_Get(mf, "fieldsV1"), p)) continue;
        w->conflicts++;
        char pt[512];
        path_text(p, pt, sizeof pt);
        const char *mav = po_As_GetStr(mf, "apiVersion");
        /* structured-merge-diff's wording: one conflict inline, several as a list */
        if (w->msglen < w->msgsz)
          w->msglen += (size_t)snprintf(w->msg + w->msglen, w->msgsz - w->msglen, "%sconflict with \"%s\"%s%s: %s",
                                        w->msglen ? "\n" : "", m, mav ? " using " : "", mav ? mav : "", pt);
      }
    }
    p->n--;
  }
}

/* Remove the path from a field set (forced ownership transfer). */
static void disown(json_object *set, const Path *p, int i) {
  char fk[512];
  snprintf(fk, sizeof fk, "f:%s", p->parts[i]);
  json_object *sub = po_As_Get(set, fk);
  if (!sub) return;
  if (i == p->n - 1 || json_object_object_length(sub) == 0) {
    json_object_object_del(set, fk);
    return;
  }
  disown(sub, p, i + 1);
}

static void force_take(Walk *w, json_object *set, Path *p) {
  json_object_object_foreach(set, fk, sub) {
    if (p->n >= 32) return;
    p->parts[p->n++] = fk + 2;
    if (json_object_object_length(sub) > 0) force_take(w, sub, p);
    else
      for (size_t i = 0; w->managed && i < json_object_array_length(w->managed); i++) {
        json_object *mf = json_object_array_get_idx(w->managed, i);
        const char *m = po_As_GetStr(mf, "manager");
        if (m && strcmp(m, w->manager) != 0 && po_As_Get(mf, "fieldsV1")) disown(po_As_Get(mf, "fieldsV1"), p, 0);
      }
    p->n--;
  }
}

static void remove_path(json_object *o, const Path *p) {
  for (int i = 0; i < p->n - 1 && o; i++) o = po_As_Get(o, p->parts[i]);
  if (o && json_object_is_type(o, json_type_object)) json_object_object_del(o, p->parts[p->n - 1]);
}

/* Fields the manager owned before and no longer applies go, unless someone else owns them. */
static void drop_released(Walk *w, json_object *oldset, Path *p) {
  json_object_object_foreach(oldset, fk, sub) {
    if (p->n >= 32) return;
    p->parts[p->n++] = fk + 2;
    if (json_object_object_length(sub) > 0) {
      drop_released(w, sub, p);
    } else if (!owns(w->newset, p)) {
      bool other = false;
      for (size_t i = 0; w->managed && i < json_object_array_length(w->managed); i++) {
        json_object *mf = json_object_array_get_idx(w->managed, i);
        const char *m = po_As_GetStr(mf, "manager");
        if (m && strcmp(m, w->manager) != 0 && owns(po_As_Get(mf, "fieldsV1"), p)) other = true;
      }
      if (!other) remove_path(w->live, p);
    }
    p->n--;
  }
}

json_object *po_As_Apply(json_object *live, json_object *cfg, const char *manager, bool force,
                         const char *api_version, bool *conflict, char *msg, size_t msgsz) {
  *conflict = false;
  if (!cfg || !json_object_is_type(cfg, json_type_object)) {
    snprintf(msg, msgsz, "error decoding YAML: the apply configuration is not an object");
    return NULL;
  }
  if (!manager || !manager[0]) {
    snprintf(msg, msgsz, "PATCH, application/apply-patch+yaml requests require fieldManager to be set");
    return NULL;
  }
  json_object *newset = fields_of(cfg, 0, NULL);
  json_object *obj = live ? po_As_Copy(live) : json_object_new_object();
  json_object *managed = po_As_Get(po_As_Meta(obj), "managedFields");
  if (!managed || !json_object_is_type(managed, json_type_array)) {
    managed = json_object_new_array();
    json_object_object_add(po_As_Meta(obj), "managedFields", managed);
  }
  Walk w = {.live = obj, .cfg = cfg, .managed = managed, .manager = manager, .force = force,
            .msg = msg, .msgsz = msgsz, .newset = newset};
  Path p = {.n = 0};
  char detail[2048] = "";
  w.msg = detail;
  w.msgsz = sizeof detail;
  if (live) check_conflicts(&w, newset, &p);
  if (w.conflicts && !force) {
    snprintf(msg, msgsz, "Apply failed with %d conflict%s: %s", w.conflicts, w.conflicts > 1 ? "s" : "", detail);
    *conflict = true;
    json_object_put(newset);
    json_object_put(obj);
    return NULL;
  }
  if (w.conflicts) force_take(&w, newset, &p);
  /* the manager's previous set */
  json_object *mine = NULL;
  for (size_t i = 0; i < json_object_array_length(managed); i++) {
    json_object *mf = json_object_array_get_idx(managed, i);
    const char *m = po_As_GetStr(mf, "manager"), *op = po_As_GetStr(mf, "operation");
    if (m && op && !strcmp(m, manager) && !strcmp(op, "Apply")) mine = mf;
  }
  if (mine && po_As_Get(mine, "fieldsV1")) drop_released(&w, po_As_Get(mine, "fieldsV1"), &p);
  /* Merge the configuration in: maps recursively, lists and scalars replaced. */
  json_object *mf_saved = json_object_get(managed);
  json_object *cfg_copy = po_As_Copy(cfg);
  json_object_object_del(po_As_Meta(cfg_copy), "managedFields");
  json_object_object_del(po_As_Meta(cfg_copy), "resourceVersion");
  obj = po_As_MergePatch(obj, cfg_copy);
  json_object_put(cfg_copy);
  json_object_object_add(po_As_Meta(obj), "managedFields", mf_saved);
  if (!mine) {
    mine = json_object_new_object();
    json_object_array_add(mf_saved, mine);
  }
  char ts[32];
  po_As_Now(ts);
  json_object_object_add(mine, "manager", json_object_new_string(manager));
  json_object_object_add(mine, "operation", json_object_new_string("Apply"));
  json_object_object_add(mine, "apiVersion", json_object_new_string(api_version));
  json_object_object_add(mine, "time", json_object_new_string(ts));
  json_object_object_add(mine, "fieldsType", json_object_new_string("FieldsV1"));
  json_object_object_add(mine, "fieldsV1", newset);
  /* Managers left with nothing are dropped, as the real server does. */
  for (size_t i = json_object_array_length(mf_saved); i-- > 0;) {
    json_object *fv = po_As_Get(json_object_array_get_idx(mf_saved, i), "fieldsV1");
    if (fv && json_object_object_length(fv) == 0) json_object_array_del_idx(mf_saved, i, 1);
  }
  return obj;
}
