/* Carrying out one mesh object's plan (owned_write.h): the create-then-bind, update, delete
 * sequence of every one-object-per-PropertyOverride mesh. */
#include "owned_write.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "compiled.h"
#include "po/base/json.h"

const char *po_Owned_Text(po_Arena *ar, const char *src, size_t size) {
  if (!src || !*src) return "";
  return po_Arena_Strndup(ar, src, strnlen(src, size - 1));
}

static void failed(po_OwnedOutcome *out, po_WriteResult w, const po_OwnedKindOps *k, const char *what, const char *ns,
                   const char *name, const po_CtlStatus *st) {
  out->failed = true;
  out->conflict = w == kPo_WriteResult_Conflict;
  out->code = st->code;
  snprintf(out->err, sizeof out->err, "%s %s %s/%s: %.400s", what, k->kind, ns, name, st->message);
}

/* Whether the PropertyOverride recorded in its status that the controller created `current`
 * (ns/name) and could not bind it: status.created names its namespace, name and uid. The status
 * is written only by the controller (tenants need no status RBAC), and a uid only by the API
 * server, for our own create: a copy, a restore or an object written by hand has another uid,
 * so it is never taken for ours by this. False when the PropertyOverride is cached but could not
 * be read (st): neither yes nor no. */
static bool recorded_created(const po_ReconcileIO *io, po_OwnedFor who, const char *owner_uid, const char *ns,
                             const char *name, const json_object *current, bool *yes_out, po_CtlStatus *st) {
  *yes_out = false;
  if (!who.ns || !who.name || !io->get_override) return true;
  void *ref = NULL;
  const json_object *po = io->get_override(io->ctx, who.ns, who.name, &ref, st);
  if (!po && st->code != kPo_Ctl_Ok) return false;
  json_object *cr = po_Json_Get(po_Json_Get(po, "status"), "created");
  const char *cuid = po_Json_Meta(current, "uid"), *u = po_Json_String(cr, "uid");
  const char *cns = po_Json_String(cr, "namespace"), *cn = po_Json_String(cr, "name");
  bool yes = po && owner_uid && !strcmp(po_Json_Meta(po, "uid"), owner_uid) && *cuid && u && !strcmp(u, cuid) && cns &&
             !strcmp(cns, ns) && cn && !strcmp(cn, name);
  if (po && io->release) io->release(io->ctx, ref);
  *yes_out = yes;
  return true;
}

/* o with spec.<member> an empty array, sharing everything else (json-c counts references: o is
 * not changed). NULL when out of memory. */
static json_object *without(const json_object *o, const char *member) {
  json_object *w = json_object_new_object(), *spec = json_object_new_object();
  bool ok = w && spec;
  if (ok) {
    json_object_object_foreach((json_object *)o, k, v) {
      if (ok && strcmp(k, "spec") != 0) ok = po_Json_Put(w, k, json_object_get(v));
    }
    json_object *os = po_Json_Get(o, "spec");
    if (json_object_is_type(os, json_type_object)) {
      json_object_object_foreach(os, sk, sv) {
        if (ok && strcmp(sk, member) != 0) ok = po_Json_Put(spec, sk, json_object_get(sv));
      }
    }
  }
  ok = ok && po_Json_Put(spec, member, json_object_new_array());
  if (ok) {
    ok = po_Json_Put(w, "spec", spec);
    spec = NULL;
  }
  json_object_put(spec);
  if (!ok) {
    json_object_put(w);
    return NULL;
  }
  return w;
}

/* The object's cache does not hold the one we created yet (po_TargetIndex_ObjectMade): judged
 * there, it is absent, and a deleted PropertyOverride's would be left for good. Said as a conflict:
 * no status, no finalizer released, the reconcile retried soon, by when the cache holds it. */
static bool behind(po_ObjectMade made, const po_OwnedKindOps *k, const char *ns, const char *name, po_OwnedOutcome *out) {
  if (made != kPo_ObjectMade_Behind) return false;
  out->failed = out->conflict = true;
  out->code = kPo_Ctl_Conflict;
  snprintf(out->err, sizeof out->err, "%s %s/%s: created, not in the cache yet (its watch event has not come)", k->kind,
           ns, name);
  return true;
}

bool po_Owned_CarryOut(const po_ReconcileIO *io, po_TargetIndex *ix, const po_OwnedKindOps *k, const char *ns,
                       const char *name, po_OwnedFor who, const char *owner_uid, const json_object *current,
                       const json_object *desired, int *writes, po_OwnedOutcome *out) {
  *out = (po_OwnedOutcome){.foreign = false};
  const char *cuid = current ? po_Json_Meta(current, "uid") : NULL;
  po_ObjectMade ours = po_TargetIndex_ObjectMade(ix, k->kind, ns, name, cuid);
  if (behind(ours, k, ns, name, out)) return true;
  const char *rv = po_Json_String(po_Json_Get(current, "metadata"), "resourceVersion");
  /* Created by this process, or by an earlier one that recorded it in the PropertyOverride's
   * status, and the write binding the created annotation failed (or its echo not in the cache
   * yet: ours Cached): still ours. */
  bool unbound = current && po_Owned_CreatedBy(current) == kPo_OwnedCreated_No &&
                 (ours == kPo_ObjectMade_Cached || po_TargetIndex_WasCreated(ix, cuid, false));
  po_CtlStatus rst;
  if (current && !unbound && po_Owned_CreatedBy(current) == kPo_OwnedCreated_No &&
      !recorded_created(io, who, owner_uid, ns, name, current, &unbound, &rst)) {
    out->code = rst.code; /* not read: no plan (a look-alike it is not) */
    snprintf(out->err, sizeof out->err, "%.500s", rst.message);
    return false;
  }
  po_OwnedPlan p = k->plan(current, desired, owner_uid, unbound ? cuid : NULL);
  if (p.out_of_memory) return false;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_WriteResult w = kPo_WriteResult_Ok;
  bool ok = true;
  switch (p.action) {
    case kPo_OwnedPlan_None: break;
    case kPo_OwnedPlan_Foreign:
      out->foreign = true;
      out->why = p.why;
      break;
    case kPo_OwnedPlan_Delete:
      w = k->write(io->ctx, ns, name, NULL, false, rv, NULL, &st);
      if (w == kPo_WriteResult_NotFound) w = kPo_WriteResult_Ok;
      if (w != kPo_WriteResult_Ok) failed(out, w, k, "deleting", ns, name, &st);
      else (*writes)++, po_TargetIndex_ObjectSeen(ix, k->kind, ns, name, NULL); /* gone: not waited for */
      break;
    case kPo_OwnedPlan_Update:
      w = k->write(io->ctx, ns, name, p.object, false, rv, NULL, &st);
      if (w != kPo_WriteResult_Ok) {
        failed(out, w, k, "updating", ns, name, &st);
        /* The binding retried and failed again: recorded as the failure right after the create
         * would have been. That one may have been a conflict (Envoy Gateway's first status
         * write of the new policy), which writes no status, leaving this retry the first
         * chance to record it (e2e_eg_unbound). */
        if (unbound) snprintf(out->unbound_uid, sizeof out->unbound_uid, "%s", cuid);
      } else {
        (*writes)++;
        if (unbound) po_TargetIndex_WasCreated(ix, cuid, true);
      }
      break;
    case kPo_OwnedPlan_Create: {
      /* Created first, then bound: the created annotation names the uid only the server assigns. */
      json_object *made = NULL, *bare = k->bulky ? without(p.object, k->bulky) : NULL;
      if (k->bulky && !bare) {
        ok = false;
        break;
      }
      w = k->write(io->ctx, ns, name, bare ? bare : p.object, true, NULL, &made, &st);
      json_object_put(bare);
      if (w == kPo_WriteResult_Ok && (!made || !*po_Json_Meta(made, "uid"))) {
        w = kPo_WriteResult_Failed;
        po_CtlStatus_Set(&st, kPo_Ctl_Decode, "the server returned no uid for the created object");
      }
      if (w != kPo_WriteResult_Ok) {
        failed(out, w, k, "creating", ns, name, &st);
        json_object_put(made);
        break;
      }
      (*writes)++;
      po_TargetIndex_NoteCreated(ix, po_Json_Meta(made, "uid"));
      po_TargetIndex_NoteObjectCreated(ix, k->kind, ns, name, po_Json_Meta(made, "uid"));
      po_OwnedPlan b = k->plan(made, desired, owner_uid, po_Json_Meta(made, "uid"));
      if (b.out_of_memory) {
        json_object_put(made);
        ok = false;
        break;
      }
      if (b.action == kPo_OwnedPlan_Update) {
        const char *mrv = po_Json_String(po_Json_Get(made, "metadata"), "resourceVersion");
        w = k->write(io->ctx, ns, name, b.object, false, mrv, NULL, &st);
        if (w != kPo_WriteResult_Ok) {
          failed(out, w, k, "binding the created annotation of", ns, name, &st);
          snprintf(out->unbound_uid, sizeof out->unbound_uid, "%s", po_Json_Meta(made, "uid"));
        } else {
          (*writes)++;
          po_TargetIndex_WasCreated(ix, po_Json_Meta(made, "uid"), true);
        }
      }
      json_object_put(b.object);
      json_object_put(made);
      break;
    }
  }
  json_object_put(p.object);
  return ok;
}

bool po_Owned_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const po_OwnedKindOps *k, const char *ns,
                    const char *name, po_OwnedFor who, const char *owner_uid, int *writes, po_CtlStatus *st) {
  if (!k->get || !k->write) return true;
  void *ref = NULL;
  const json_object *current = k->get(io->ctx, ns, name, &ref, st);
  po_OwnedOutcome out;
  if (!current && st->code == kPo_Ctl_Ok && behind(po_TargetIndex_ObjectMade(ix, k->kind, ns, name, NULL), k, ns, name, &out))
    return po_CtlStatus_Set(st, out.code, "%s", out.err); /* ours, not cached yet: not done */
  if (!current) return st->code == kPo_Ctl_Ok; /* cached, not readable: nothing deleted, not done */
  bool ok = po_Owned_CarryOut(io, ix, k, ns, name, who, owner_uid, current, NULL, writes, &out);
  if (io->release) io->release(io->ctx, ref);
  if (!ok || out.failed) {
    return ok ? po_CtlStatus_Set(st, out.code, "%s", out.err)
              : po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "%s", out.err[0] ? out.err : "out of memory");
  }
  return true;
}
