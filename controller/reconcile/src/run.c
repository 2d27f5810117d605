/* The helpers every phase of a reconcile and every mesh's part use (run.h). */
#include "run.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"

/* A day: far beyond any --consul-sync-timeout, far below an overflow of int64 nanoseconds. */
enum { kPo_ReconcileRecheckMaxS = 86400 };

json_object *po_Run_Copy(const json_object *o) {
  json_object *c = NULL;
  return o && json_object_deep_copy((json_object *)o, &c, NULL) == 0 ? c : NULL;
}

void po_Run_CopyText(char *dst, size_t size, const char *src) {
  size_t n = strnlen(src, size - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

const char *po_Run_Text(po_Run *run, const char *src, size_t size) {
  if (!src || !*src) return "";
  return po_Arena_Strndup(run->ar, src, strnlen(src, size - 1));
}

bool po_Run_Mismatch(po_Run *run, po_RunItem *it, const char *fmt, ...) {
  char m[kPo_RunItemMismatchSize]; /* the cut the message always had */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  const char *t = po_Run_Text(run, m, sizeof m);
  if (!t) return po_Run_Oom(run, po_Arena_Printf(run->ar, "the LastValidMismatch message of %s", it->name));
  it->mismatch = t;
  return true;
}

void po_Run_Fail(po_Run *run, po_WriteResult w, const char *what, const char *err) {
  if (w == kPo_WriteResult_Conflict) run->r.conflict = true;
  /* An admission webhook that could not be reached (nothing answered: webhook_error.c): its
   * return is no event of ours, so the retry must come soon (kPo_ReconcileWebhookRetryMaxS), not
   * after a backoff grown while it was down. An answer (any status code) or a timeout keeps the
   * normal backoff. */
  if (po_Reconcile_WebhookUnreachable(err)) run->r.webhook_unreachable = true;
  /* The first error wins; long texts are cut (the status conditions carry the whole of them). */
  if (!run->r.error[0]) {
    int k = snprintf(run->r.error, sizeof run->r.error, "%.200s: ", what);
    if (k > 0 && (size_t)k < sizeof run->r.error) snprintf(run->r.error + k, sizeof run->r.error - (size_t)k, "%.300s", err);
  }
  run->r.ok = false;
}

/* Nothing is written after memory ran out: a plan made with a missing piece would drop entries. */
bool po_Run_Oom(po_Run *run, const char *where) {
  run->r.out_of_memory = true;
  po_Run_Fail(run, kPo_WriteResult_Failed, "out of memory", where);
  return false;
}

/* Not "absent": a target written without an unreadable PropertyOverride would drop its entry, a
 * target that could not be read would be created again. */
bool po_Run_ReadFailed(po_Run *run, const po_CtlStatus *st) {
  run->r.out_of_memory = true;
  po_Run_Fail(run, kPo_WriteResult_Failed, "reading the cache", st->message);
  return false;
}

void po_Run_Release(po_Run *run, const json_object *obj, void *ref) {
  if (obj && run->io->release) run->io->release(run->io->ctx, ref);
}

bool po_Run_HasFinalizer(const json_object *obj) {
  json_object *f = po_Json_Get(po_Json_Get(obj, "metadata"), "finalizers");
  for (size_t i = 0; f && json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(f, i));
    if (s && strcmp(s, PO_FINALIZER) == 0) return true;
  }
  return false;
}

/* metadata.finalizers with ours added or removed, as a merge patch with the resourceVersion
 * as precondition (a merge patch replaces the whole list). Metadata only, never spec: the
 * shipped webhook configurations do not send such an update to our webhook (matchCondition
 * spec-changed), so a deletion never waits for a webhook that cannot be reached. New strings
 * only: the cached object's are shared. NULL when out of memory. */
json_object *po_Run_FinalizerPatch(const json_object *obj, bool add) {
  json_object *meta = po_Json_Get(obj, "metadata"), *old = po_Json_Get(meta, "finalizers"), *rv = po_Json_Get(meta, "resourceVersion");
  json_object *list = json_object_new_array(), *m = json_object_new_object(), *patch = json_object_new_object();
  bool ok = list && m && patch;
  for (size_t i = 0; ok && old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
    const char *f = json_object_get_string(json_object_array_get_idx(old, i));
    if (f && strcmp(f, PO_FINALIZER) != 0) ok = po_Json_Append(list, json_object_new_string(f));
  }
  /* Each string checked: a null in the list would stand for another's finalizer (the list is
   * replaced whole), a null resourceVersion would remove the precondition. */
  if (ok && add) ok = po_Json_Append(list, json_object_new_string(PO_FINALIZER));
  if (ok) ok = po_Json_Put(m, "finalizers", list), list = NULL; /* released by it on failure */
  if (ok && rv) ok = po_Json_Put(m, "resourceVersion", json_object_new_string(json_object_get_string(rv)));
  if (ok) ok = po_Json_Put(patch, "metadata", m), m = NULL;
  json_object_put(list);
  json_object_put(m);
  if (!ok) {
    json_object_put(patch);
    return NULL;
  }
  return patch;
}

/* "Kind/ns/name" split; false when malformed: an unknown kind, a missing part, or a part too long
 * for a Kubernetes name. */
bool po_Run_ParseKey(const char *key, po_TargetKind *kind, char ns[254], char name[254]) {
  const char *s1 = strchr(key, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  if (!s1 || !s2 || s2 == s1 + 1 || !s2[1] || strchr(s2 + 1, '/')) return false;
  char k[32];
  size_t kl = (size_t)(s1 - key);
  if (kl >= sizeof k) return false;
  memcpy(k, key, kl);
  k[kl] = '\0';
  if (!po_TargetKind_Parse(k, kind)) return false;
  if ((size_t)(s2 - s1 - 1) >= 254 || strlen(s2 + 1) >= 254) return false;
  memcpy(ns, s1 + 1, (size_t)(s2 - s1 - 1));
  ns[s2 - s1 - 1] = '\0';
  strcpy(name, s2 + 1);
  return true;
}

/* The generation of this PropertyOverride's entry in the target at `it->held_key`, 0 when that
 * target holds none, -1 when it could not be read: its mesh's part says
 * (po_ReconcileMesh.held_generation). */
int64_t po_Run_HeldGeneration(po_Run *run, const po_RunItem *it) {
  po_TargetKind kind;
  char ns[254], name[254];
  if (!po_Run_ParseKey(it->held_key, &kind, ns, name)) return 0;
  const po_ReconcileMesh *m = po_ReconcileMesh_For(kind);
  return m->held_generation ? m->held_generation(run, it, kind, ns, name) : 0;
}

/* The object of an item learnt from its memo, read now that it is needed; the reconcile ends
 * (to run again) when it changed meanwhile. */
bool po_Run_NeedObj(po_Run *run, po_RunItem *it) {
  if (it->obj) return true;
  po_CtlStatus st;
  const json_object *obj = run->io->get_override(run->io->ctx, it->ns, it->name, &it->ref, &st);
  if (!obj && st.code != kPo_Ctl_Ok) {
    it->ref = NULL;
    return po_Run_ReadFailed(run, &st);
  }
  json_object *rv = po_Json_Get(po_Json_Get(obj, "metadata"), "resourceVersion");
  if (!obj || !rv || strcmp(json_object_get_string(rv), it->rv) != 0) {
    po_Run_Release(run, obj, it->ref);
    it->ref = NULL;
    po_Run_Fail(run, kPo_WriteResult_Conflict, po_Arena_Printf(run->ar, "reading %s", it->name), "it changed during the reconcile");
    return false;
  }
  it->obj = obj;
  return true;
}

const char *po_Run_OrOom(const char *s) { return s ? s : "out of memory"; }

bool po_Run_HasEntry(const po_RunItem *it) { return it->entry || it->entry_copy; }

void po_Run_DropEntry(po_RunItem *it) {
  po_CompiledEntry_Release(it->entry);
  json_object_put(it->entry_copy);
  it->entry = NULL;
  it->entry_copy = NULL;
}

/* The version of an item, as our writes to it are noted (po_TargetIndex_NoteOverrideWrite). */
po_OverrideMemo po_Run_OwnVersion(const po_RunItem *it) {
  po_OverrideMemo m = {.generation = it->ce->generation, .spec_hash = it->ce->hash};
  po_Run_CopyText(m.uid, sizeof m.uid, it->uid);
  return m;
}

int64_t po_Run_NowS(po_Run *run) {
  char now[32];
  run->io->now(run->io->ctx, now);
  return po_Sync_ParseTime(now);
}

void po_Run_RecheckIn(po_Run *run, int64_t s) {
  if (s > kPo_ReconcileRecheckMaxS) s = kPo_ReconcileRecheckMaxS; /* RequeueAfter counts nanoseconds */
  if (s > 0 && (run->r.recheck_in_s == 0 || s < run->r.recheck_in_s)) run->r.recheck_in_s = s;
}
