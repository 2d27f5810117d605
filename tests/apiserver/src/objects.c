/* get / list / create / update / patch / delete on registered resources and their /status.
 *
 * Every write runs as: lock, compute the new object from the current one, snapshot matching
 * webhooks, unlock, call them, lock, and commit only if the object has not changed meanwhile
 * (otherwise recompute: the real server retries patches the same way; an update that named a
 * resourceVersion gets its 409 from the recomputation). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"
#include "objects_internal.h"

/* ---- error replies ------------------------------------------------------------------------- */

void po_As_ResName(const po_As_Resource *res, char *out, size_t outsz) {
  if (res->group[0]) snprintf(out, outsz, "%s.%s", res->plural, res->group);
  else snprintf(out, outsz, "%s", res->plural);
}

static json_object *details(const po_As_Resource *res, const char *name, bool kind_is_kind) {
  json_object *d = json_object_new_object();
  if (name) json_object_object_add(d, "name", json_object_new_string(name));
  if (res->group[0]) json_object_object_add(d, "group", json_object_new_string(res->group));
  json_object_object_add(d, "kind", json_object_new_string(kind_is_kind ? res->kind : res->plural));
  return d;
}

void po_As_NotFound(po_As_Reply *r, const po_As_Resource *res, const char *name) {
  char rn[300], m[700];
  po_As_ResName(res, rn, sizeof rn);
  snprintf(m, sizeof m, "%s \"%s\" not found", rn, name);
  po_As_Reply_Status(r, 404, "NotFound", m, details(res, name, false));
}

static void conflict(po_As_Reply *r, const po_As_Resource *res, const char *name, const char *why) {
  char rn[300], m[1200];
  po_As_ResName(res, rn, sizeof rn);
  snprintf(m, sizeof m, "Operation cannot be fulfilled on %s \"%s\": %s", rn, name, why);
  po_As_Reply_Status(r, 409, "Conflict", m, details(res, name, false));
}

static void invalid(po_As_Reply *r, const po_As_Resource *res, const char *name, json_object *causes) {
  char kind[300];
  if (res->group[0]) snprintf(kind, sizeof kind, "%s.%s", res->kind, res->group);
  else snprintf(kind, sizeof kind, "%s", res->kind);
  size_t n = json_object_array_length(causes);
  char *m = po_As_Printf("%s \"%s\" is invalid: %s", kind, name ? name : "", n > 1 ? "[" : "");
  for (size_t i = 0; i < n; i++) {
    json_object *c = json_object_array_get_idx(causes, i);
    char *nm = po_As_Printf("%s%s%s: %s", m, i ? ", " : "", po_As_GetStr(c, "field"), po_As_GetStr(c, "message"));
    free(m);
    m = nm;
  }
  if (n > 1) {
    char *nm = po_As_Printf("%s]", m);
    free(m);
    m = nm;
  }
  json_object *d = details(res, name, true);
  json_object_object_add(d, "causes", causes);
  po_As_Reply_Status(r, 422, "Invalid", m, d);
  free(m);
}

static void invalid1(po_As_Reply *r, const po_As_Resource *res, const char *name, const char *reason,
                     const char *field, const char *msg) {
  json_object *causes = json_object_new_array();
  json_object *c = json_object_new_object();
  json_object_object_add(c, "reason", json_object_new_string(reason));
  json_object_object_add(c, "message", json_object_new_string(msg));
  json_object_object_add(c, "field", json_object_new_string(field));
  json_object_array_add(causes, c);
  invalid(r, res, name, causes);
}

/* ---- object preparation -------------------------------------------------------------------- */

static uint64_t obj_rv(json_object *o) {
  const char *s = po_As_MetaStr(o, "resourceVersion");
  return s ? strtoull(s, NULL, 10) : 0;
}

static json_object *strip(json_object *o, bool drop_status) {
  json_object *c = po_As_Copy(o);
  json_object_object_del(c, "metadata");
  if (drop_status) json_object_object_del(c, "status");
  return c;
}

/* Defaults and derived fields for built-in kinds (a small part of what their strategies do). */
static void builtin_defaults(po_As_Resource *res, json_object *obj) {
  if (res->is_crd || res->group[0]) return;
  if (!strcmp(res->plural, "secrets")) {
    if (!po_As_Get(obj, "type")) json_object_object_add(obj, "type", json_object_new_string("Opaque"));
    json_object *sd = po_As_Get(obj, "stringData");
    if (sd && json_object_is_type(sd, json_type_object)) {
      json_object *data = po_As_Get(obj, "data");
      if (!data) {
        data = json_object_new_object();
        json_object_object_add(obj, "data", data);
      }
      json_object_object_foreach(sd, k, v) {
        const char *s = json_object_get_string(v);
        char *b = po_As_Base64((const unsigned char *)(s ? s : ""), s ? strlen(s) : 0);
        json_object_object_add(data, k, json_object_new_string(b));
        free(b);
      }
      json_object_object_del(obj, "stringData");
    }
  } else if (!strcmp(res->plural, "namespaces")) {
    json_object *st = json_object_new_object();
    json_object_object_add(st, "phase", json_object_new_string("Active"));
    json_object_object_add(obj, "status", st);
    json_object *spec = po_As_Get(obj, "spec");
    if (!spec) {
      spec = json_object_new_object();
      json_object_object_add(obj, "spec", spec);
    }
    json_object *fin = json_object_new_array();
    json_object_array_add(fin, json_object_new_string("kubernetes"));
    json_object_object_add(spec, "finalizers", fin);
    json_object *labels = po_As_Get(po_As_Meta(obj), "labels");
    if (!labels) {
      labels = json_object_new_object();
      json_object_object_add(po_As_Meta(obj), "labels", labels);
    }
    json_object_object_add(labels, "kubernetes.io/metadata.name", json_object_new_string(po_As_MetaStr(obj, "name")));
  } else if (!strcmp(res->plural, "services")) {
    json_object *spec = po_As_Get(obj, "spec");
    if (!spec) {
      spec = json_object_new_object();
      json_object_object_add(obj, "spec", spec);
    }
    if (!po_As_Get(spec, "type")) json_object_object_add(spec, "type", json_object_new_string("ClusterIP"));
    if (!po_As_Get(spec, "sessionAffinity")) json_object_object_add(spec, "sessionAffinity", json_object_new_string("None"));
    if (!po_As_Get(spec, "clusterIP")) {
      static unsigned next_ip = 10;
      char ip[32];
      snprintf(ip, sizeof ip, "10.96.%u.%u", (next_ip / 250) % 250, next_ip % 250 + 1);
      next_ip++;
      json_object_object_add(spec, "clusterIP", json_object_new_string(ip));
      json_object *ips = json_object_new_array();
      json_object_array_add(ips, json_object_new_string(ip));
      json_object_object_add(spec, "clusterIPs", ips);
    }
    if (!po_As_Get(obj, "status")) {
      json_object *st = json_object_new_object();
      json_object_object_add(st, "loadBalancer", json_object_new_object());
      json_object_object_add(obj, "status", st);
    }
  }
}

static void crd_status(json_object *obj) {
  json_object *spec = po_As_Get(obj, "spec");
  json_object *st = json_object_new_object();
  json_object_object_add(st, "acceptedNames", po_As_Copy(po_As_Get(spec, "names")));
  json_object *conds = json_object_new_array();
  char ts[32];
  po_As_Now(ts);
  const char *types[] = {"NamesAccepted", "Established"};
  const char *reasons[] = {"NoConflicts", "InitialNamesAccepted"};
  const char *msgs[] = {"no conflicts found", "the initial names have been accepted"};
  for (int i = 0; i < 2; i++) {
    json_object *c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string(types[i]));
    json_object_object_add(c, "status", json_object_new_string("True"));
    json_object_object_add(c, "lastTransitionTime", json_object_new_string(ts));
    json_object_object_add(c, "reason", json_object_new_string(reasons[i]));
    json_object_object_add(c, "message", json_object_new_string(msgs[i]));
    json_object_array_add(conds, c);
  }
  json_object_object_add(st, "conditions", conds);
  json_object *stored = json_object_new_array();
  json_object *versions = po_As_Get(spec, "versions");
  for (size_t i = 0; versions && i < json_object_array_length(versions); i++) {
    json_object *v = json_object_array_get_idx(versions, i);
    if (json_object_get_boolean(po_As_Get(v, "storage")))
      json_object_array_add(stored, json_object_new_string(po_As_GetStr(v, "name")));
  }
  json_object_object_add(st, "storedVersions", stored);
  json_object_object_add(obj, "status", st);
}

/* Schema checks for custom resources; false = reply filled. */
static bool check_schema(po_As_WriteCtx *w, json_object *obj, po_As_Reply *r) {
  po_As_Resource *res = w->q->res;
  if (!res->is_crd) return true;
  /* the schema of the version the client wrote, else the storage version's */
  json_object *sch = po_As_Resource_Schema(res, w->q->version);
  if (!sch) sch = po_As_Resource_Schema(res, res->storage_version);
  if (!sch) return true;
  po_As_Causes c = {0};
  po_As_Schema_Validate(sch, obj, &c);
  const char *fv = w->q->field_validation ? w->q->field_validation : "Warn";
  if (c.unknown) {
    if (!strcmp(fv, "Strict") && !c.causes) {
      char *m = po_As_Printf("strict decoding error: ");
      for (size_t i = 0; i < json_object_array_length(c.unknown); i++) {
        char *nm = po_As_Printf("%s%sunknown field \"%s\"", m, i ? ", " : "",
                                json_object_get_string(json_object_array_get_idx(c.unknown, i)));
        free(m);
        m = nm;
      }
      po_As_Reply_Status(r, 400, "BadRequest", m, NULL);
      free(m);
      json_object_put(c.unknown);
      return false;
    }
    if (!strcmp(fv, "Warn") || !strcmp(fv, "Strict"))
      for (size_t i = 0; i < json_object_array_length(c.unknown); i++)
        po_As_Reply_Warn(&w->warn, "unknown field \"%s\"", json_object_get_string(json_object_array_get_idx(c.unknown, i)));
    json_object_put(c.unknown);
  }
  if (c.causes) {
    invalid(r, res, po_As_MetaStr(obj, "name"), c.causes);
    return false;
  }
  return true;
}

/* Shared tail of create and update: common checks of the would-be object. */
static bool validate_common(po_As_WriteCtx *w, json_object *obj, po_As_Reply *r) {
  po_As_Resource *res = w->q->res;
  const char *name = po_As_MetaStr(obj, "name");
  if (res->is_crd || !strcmp(res->plural, "customresourcedefinitions")) {
    if (!check_schema(w, obj, r)) return false;
  }
  if ((!strcmp(res->plural, "validatingwebhookconfigurations") || !strcmp(res->plural, "mutatingwebhookconfigurations")) &&
      !strcmp(res->group, "admissionregistration.k8s.io")) {
    char field[128], reason[64], msg[512];
    if (!po_As_Admission_CheckConfig(obj, field, sizeof field, reason, sizeof reason, msg, sizeof msg)) {
      invalid1(r, res, name, reason, field, msg);
      return false;
    }
  }
  if (!strcmp(res->plural, "customresourcedefinitions") && !strcmp(res->group, "apiextensions.k8s.io")) {
    json_object *spec = po_As_Get(obj, "spec");
    json_object *names = po_As_Get(spec, "names");
    const char *group = po_As_GetStr(spec, "group"), *plural = po_As_GetStr(names, "plural");
    char want[512];
    snprintf(want, sizeof want, "%s.%s", plural ? plural : "", group ? group : "");
    if (!group || !plural || !po_As_GetStr(names, "kind")) {
      invalid1(r, res, name, "FieldValueRequired", !group ? "spec.group" : !plural ? "spec.names.plural" : "spec.names.kind", "Required value");
      return false;
    }
    if (strcmp(name, want) != 0) {
      char m[1024];
      snprintf(m, sizeof m, "Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group", name);
      invalid1(r, res, name, "FieldValueInvalid", "metadata.name", m);
      return false;
    }
    json_object *versions = po_As_Get(spec, "versions");
    int storage = 0;
    for (size_t i = 0; versions && i < json_object_array_length(versions); i++)
      if (json_object_get_boolean(po_As_Get(json_object_array_get_idx(versions, i), "storage"))) storage++;
    if (storage != 1) {
      invalid1(r, res, name, "FieldValueInvalid", "spec.versions",
               storage ? "Invalid value: \"versions\": must have exactly one version marked as storage version"
                       : "Invalid value: \"versions\": must have exactly one version marked as storage version");
      return false;
    }
  }
  return true;
}

/* ---- the write driver ---------------------------------------------------------------------- */

static void commit(po_As_WriteCtx *w, json_object *cur, json_object *next, po_As_Reply *r);
static bool is_dry_run(po_As_WriteCtx *w) { return w->q->dry_run && !strcmp(w->q->dry_run, "All"); }

/* Answers a no-op write with the current object (taken). */
static void reply_current(po_As_WriteCtx *w, json_object *cur, po_As_Reply *r) {
  char *av = po_As_ApiVersion(w->q->res, w->q->version);
  free(r->body);
  r->code = 200;
  r->body = po_As_Serialize(cur, av);
  r->content_type = "application/json";
  free(av);
  json_object_put(cur);
}

/* An update the mutating webhooks changed: the generation rule over the object they made (the
 * real server's strategy runs after admission), and a no-op when they put everything back. */
static void after_mutation(po_As_WriteCtx *w, json_object *cur, json_object *next) {
  if (w->q->res->has_generation) {
    json_object *a = strip(cur, true), *b = strip(next, true), *g = po_As_Get(po_As_Get(cur, "metadata"), "generation");
    int64_t gen = g ? json_object_get_int64(g) : 0;
    json_object_object_add(po_As_Meta(next), "generation", json_object_new_int64(po_As_Equal(a, b) ? gen : gen + 1));
    json_object_put(a);
    json_object_put(b);
  }
  po_As_CheckNoop(w, cur, next);
}

static void run_write(po_As_WriteCtx *w, po_As_Reply *r) {
  po_As_Request *q = w->q;
  for (int attempt = 0; attempt < 8; attempt++) {
    pthread_mutex_lock(&po_as.mu);
    if (!q->res->registered) {
      pthread_mutex_unlock(&po_as.mu);
      po_As_NotFound(r, q->res, w->name ? w->name : "");
      return;
    }
    po_As_Entry *e = w->name ? po_As_Store_Get(q->res, q->ns, w->name) : NULL;
    json_object *cur = e ? json_object_get(e->obj) : NULL;
    uint64_t base = cur ? obj_rv(cur) : 0;
    json_object *next = NULL;
    for (int i = 0; i < w->warn.nwarnings; i++) free(w->warn.warnings[i]);
    w->warn.nwarnings = 0;
    bool ok = w->compute(w, cur, &next, r);
    if (ok && next && w->op != kPo_As_OpDelete && !validate_common(w, next, r)) ok = false;
    if (!ok) {
      json_object_put(cur);
      json_object_put(next);
      pthread_mutex_unlock(&po_as.mu);
      return;
    }
    if (w->noop) { /* nothing changes: answer with the current object */
      reply_current(w, cur, r);
      json_object_put(next);
      pthread_mutex_unlock(&po_as.mu);
      return;
    }
    const char *opname = w->op == kPo_As_OpDelete ? "DELETE" : cur ? "UPDATE" : "CREATE";
    const char *nm = next ? po_As_MetaStr(next, "name") : w->name;
    /* Mutating webhooks first (not on DELETE: there is no object to change), then the object
     * they made is validated again, as the real server does, and the validating ones see it. */
    po_As_AdmissionJob *mjob = w->op == kPo_As_OpDelete ? NULL
                               : po_As_Admission_Prepare(q->res, q->version, opname, q->sub, q->ns, nm, next, cur,
                                                         is_dry_run(w), true);
    if (mjob) {
      pthread_mutex_unlock(&po_as.mu);
      json_object *before = po_As_Copy(next);
      bool admitted = po_As_Admission_Mutate(mjob, &next, r);
      po_As_Admission_Free(mjob);
      pthread_mutex_lock(&po_as.mu);
      bool mutated = admitted && !json_object_equal(before, next);
      json_object_put(before);
      if (admitted) {
        for (int i = 0; i < r->nwarnings; i++) {
          if (w->warn.nwarnings < 16) w->warn.warnings[w->warn.nwarnings++] = r->warnings[i];
          else free(r->warnings[i]);
        }
        r->nwarnings = 0;
      }
      if (!admitted || (mutated && !validate_common(w, next, r))) {
        json_object_put(cur);
        json_object_put(next);
        pthread_mutex_unlock(&po_as.mu);
        return;
      }
      if (mutated && cur) after_mutation(w, cur, next);
      if (w->noop) { /* the webhooks put back what the request changed: nothing is written */
        reply_current(w, cur, r);
        json_object_put(next);
        pthread_mutex_unlock(&po_as.mu);
        return;
      }
      nm = po_As_MetaStr(next, "name");
    }
    po_As_AdmissionJob *job = po_As_Admission_Prepare(q->res, q->version, opname, q->sub, q->ns, nm,
                                                      w->op == kPo_As_OpDelete ? NULL : next, cur, is_dry_run(w), false);
    pthread_mutex_unlock(&po_as.mu);
    if (job) {
      bool admitted = po_As_Admission_Run(job, r);
      if (!admitted) {
        po_As_Admission_Free(job);
        json_object_put(cur);
        json_object_put(next);
        return;
      }
      for (int i = 0; i < r->nwarnings; i++) {
        if (w->warn.nwarnings < 16) w->warn.warnings[w->warn.nwarnings++] = r->warnings[i];
        else free(r->warnings[i]);
      }
      r->nwarnings = 0;
      po_As_Admission_Free(job);
      if (!admitted) {
        json_object_put(cur);
        json_object_put(next);
        return;
      }
    }
    pthread_mutex_lock(&po_as.mu);
    e = nm ? po_As_Store_Get(q->res, q->ns, nm) : NULL;
    uint64_t now = e ? obj_rv(e->obj) : 0;
    bool still = q->res->registered && ((cur && e && now == base) || (!cur && !e));
    if (!still) {
      pthread_mutex_unlock(&po_as.mu);
      json_object_put(cur);
      json_object_put(next);
      continue;
    }
    commit(w, cur, next, r);
    pthread_mutex_unlock(&po_as.mu);
    json_object_put(cur);
    return;
  }
  conflict(r, q->res, w->name ? w->name : "", "the object has been modified; please apply your changes to the latest version and try again");
}

static void reply_object(po_As_WriteCtx *w, po_As_Reply *r, int code, json_object *obj) {
  char *av = po_As_ApiVersion(w->q->res, w->q->version);
  free(r->body);
  r->code = code;
  r->body = po_As_Serialize(obj, av);
  r->content_type = "application/json";
  free(av);
}

/* ---- garbage collection of dependents (ownerReferences) ---------------------------------------- */

static bool uid_exists(const char *uid) {
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered) continue;
    for (size_t j = 0; j < r->nitems; j++) {
      const char *u = po_As_MetaStr(r->items[j].obj, "uid");
      if (u && !strcmp(u, uid)) return true;
    }
  }
  return false;
}

/* After an owner is gone: every object whose owners are all gone is deleted (with finalizers:
 * marked for deletion), as the garbage collector's background propagation does, only at once. */
static void collect_dependents(const char *owner_uid, int depth) {
  if (depth > 16) return;
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *r = po_as.res[i];
    if (!r->registered) continue;
    for (size_t j = r->nitems; j-- > 0;) {
      if (j >= r->nitems) continue;
      json_object *o = r->items[j].obj;
      json_object *refs = po_As_Get(po_As_Get(o, "metadata"), "ownerReferences");
      if (!refs || !json_object_is_type(refs, json_type_array)) continue;
      bool mine = false, other_alive = false;
      for (size_t k = 0; k < json_object_array_length(refs); k++) {
        const char *u = po_As_GetStr(json_object_array_get_idx(refs, k), "uid");
        if (!u) continue;
        if (!strcmp(u, owner_uid)) mine = true;
        else if (uid_exists(u)) other_alive = true;
      }
      if (!mine || other_alive) continue;
      json_object *fin = po_As_Get(po_As_Get(o, "metadata"), "finalizers");
      if (fin && json_object_array_length(fin) > 0) {
        if (po_As_MetaStr(o, "deletionTimestamp")) continue;
        json_object *n = po_As_Copy(o);
        char ts[32];
        po_As_Now(ts);
        json_object_object_add(po_As_Meta(n), "deletionTimestamp", json_object_new_string(ts));
        json_object_object_add(po_As_Meta(n), "deletionGracePeriodSeconds", json_object_new_int(0));
        po_As_Store_Put(r, n, kPo_As_Modified);
        continue;
      }
      char *uid = po_As_Strdup(po_As_MetaStr(o, "uid"));
      char *ns = po_As_Strdup(po_As_MetaStr(o, "namespace"));
      char *name = po_As_Strdup(po_As_MetaStr(o, "name"));
      po_As_Store_Remove(r, ns, name, NULL);
      if (uid) collect_dependents(uid, depth + 1);
      free(uid);
      free(ns);
      free(name);
      j = r->nitems; /* the array changed: rescan this resource */
    }
  }
}

/* propagationPolicy=Orphan (query or DeleteOptions) or the legacy orphanDependents=true. */
static bool orphan_requested(po_As_WriteCtx *w) {
  const char *pp = w->q->propagation_policy ? w->q->propagation_policy : po_As_GetStr(w->body, "propagationPolicy");
  if (pp) return !strcmp(pp, "Orphan");
  return json_object_get_boolean(po_As_Get(w->body, "orphanDependents"));
}

static void remove_with_side_effects(po_As_Resource *res, json_object *cur, json_object *fin, bool orphan) {
  const char *ns = po_As_MetaStr(cur, "namespace"), *name = po_As_MetaStr(cur, "name");
  if (!strcmp(res->plural, "namespaces") && !res->group[0]) po_As_Objects_DeleteNamespaceContents(name);
  if (!strcmp(res->plural, "customresourcedefinitions") && !strcmp(res->group, "apiextensions.k8s.io")) {
    json_object *spec = po_As_Get(cur, "spec");
    po_As_Resource *cr = po_As_Registry_FindGR(po_As_GetStr(spec, "group") ? po_As_GetStr(spec, "group") : "",
                                               po_As_GetStr(po_As_Get(spec, "names"), "plural") ? po_As_GetStr(po_As_Get(spec, "names"), "plural") : "");
    while (cr && cr->nitems > 0) {
      json_object *o = cr->items[cr->nitems - 1].obj;
      po_As_Store_Remove(cr, po_As_MetaStr(o, "namespace"), po_As_MetaStr(o, "name"), NULL);
    }
    po_As_Registry_RemoveCrd(cur);
  }
  char *uid = po_As_Strdup(po_As_MetaStr(cur, "uid"));
  po_As_Store_Remove(res, ns, name, fin);
  if (uid && !orphan) collect_dependents(uid, 0);
  free(uid);
}

static void commit(po_As_WriteCtx *w, json_object *cur, json_object *next, po_As_Reply *r) {
  po_As_Resource *res = w->q->res;
  for (int i = 0; i < w->warn.nwarnings; i++) {
    if (r->nwarnings < 16) r->warnings[r->nwarnings++] = w->warn.warnings[i];
    else free(w->warn.warnings[i]);
  }
  w->warn.nwarnings = 0;
  if (w->op == kPo_As_OpDelete && !next) {
    json_object *d = details(res, w->name, false);
    const char *uid = po_As_MetaStr(cur, "uid");
    if (uid) json_object_object_add(d, "uid", json_object_new_string(uid));
    if (!is_dry_run(w)) remove_with_side_effects(res, cur, NULL, orphan_requested(w));
    po_As_Reply_Status(r, 200, "", NULL, d);
    return;
  }
  bool dry = is_dry_run(w);
  json_object *fin = po_As_Get(po_As_Get(next, "metadata"), "finalizers");
  bool gone = po_As_MetaStr(next, "deletionTimestamp") && (!fin || json_object_array_length(fin) == 0);
  if (gone) {
    reply_object(w, r, 200, next);
    if (!dry) remove_with_side_effects(res, cur, next, false);
    else json_object_put(next);
    return;
  }
  if (dry) {
    reply_object(w, r, cur ? 200 : 201, next);
    json_object_put(next);
    return;
  }
  if (!strcmp(res->plural, "customresourcedefinitions") && !strcmp(res->group, "apiextensions.k8s.io")) {
    char m[256];
    if (!po_As_Registry_ApplyCrd(next, m, sizeof m)) po_As_Log(kPo_As_LogWarn, "CRD %s: %s", w->name, m);
  }
  po_As_Store_Put(res, next, cur ? kPo_As_Modified : kPo_As_Added);
  reply_object(w, r, cur ? 200 : 201, next);
}

/* ---- create ---------------------------------------------------------------------------------- */

bool po_As_PrepareNew(po_As_Resource *res, json_object *obj, const char *ns, po_As_Reply *r) {
  json_object *meta = po_As_Meta(obj);
  const char *name = po_As_GetStr(meta, "name");
  const char *gen = po_As_GetStr(meta, "generateName");
  char nb[300];
  if (!name && gen) {
    static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
    char sfx[6];
    char uid[37];
    po_As_Uuid(uid);
    for (int i = 0; i < 5; i++) sfx[i] = alpha[(unsigned char)uid[i * 3] % (sizeof alpha - 1)];
    sfx[5] = 0;
    snprintf(nb, sizeof nb, "%s%s", gen, sfx);
    json_object_object_add(meta, "name", json_object_new_string(nb));
    name = po_As_GetStr(meta, "name");
  }
  if (!name || !name[0]) {
    invalid1(r, res, "", "FieldValueRequired", "metadata.name", "Required value: name or generateName is required");
    return false;
  }
  if (res->namespaced) {
    const char *bns = po_As_GetStr(meta, "namespace");
    if (bns && ns && strcmp(bns, ns) != 0) {
      po_As_Reply_Status(r, 400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request", NULL);
      return false;
    }
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
  } else {
    json_object_object_del(meta, "namespace");
  }
  char uid[37], ts[32];
  po_As_Uuid(uid);
  po_As_Now(ts);
  json_object_object_add(meta, "uid", json_object_new_string(uid));
  json_object_object_add(meta, "creationTimestamp", json_object_new_string(ts));
  json_object_object_del(meta, "deletionTimestamp");
  json_object_object_del(meta, "deletionGracePeriodSeconds");
  json_object_object_del(meta, "resourceVersion");
  if (res->has_generation) json_object_object_add(meta, "generation", json_object_new_int64(1));
  else json_object_object_del(meta, "generation");
  if (res->is_crd && res->has_status) json_object_object_del(obj, "status");
  builtin_defaults(res, obj);
  if (!strcmp(res->plural, "customresourcedefinitions") && !strcmp(res->group, "apiextensions.k8s.io")) crd_status(obj);
  return true;
}

static bool ns_exists(const char *ns) {
  po_As_Resource *nsr = po_As_Registry_FindGR("", "namespaces");
  return nsr && po_As_Store_Get(nsr, NULL, ns);
}

static bool compute_create(po_As_WriteCtx *w, json_object *cur, json_object **next, po_As_Reply *r) {
  po_As_Resource *res = w->q->res;
  if (cur) {
    char rn[300], m[700];
    po_As_ResName(res, rn, sizeof rn);
    snprintf(m, sizeof m, "%s \"%s\" already exists", rn, w->name);
    po_As_Reply_Status(r, 409, "AlreadyExists", m, details(res, w->name, false));
    return false;
  }
  if (res->namespaced && !ns_exists(w->q->ns)) {
    char m[600];
    snprintf(m, sizeof m, "namespaces \"%s\" not found", w->q->ns);
    json_object *d = json_object_new_object();
    json_object_object_add(d, "name", json_object_new_string(w->q->ns));
    json_object_object_add(d, "kind", json_object_new_string("namespaces"));
    po_As_Reply_Status(r, 404, "NotFound", m, d);
    return false;
  }
  *next = po_As_Copy(w->body);
  return true;
}

bool po_As_Objects_CreateLocked(po_As_Resource *res, json_object *obj, char *msg, size_t msgsz) {
  po_As_Reply r = {0};
  const char *ns = po_As_MetaStr(obj, "namespace");
  if (res->namespaced && !ns) ns = "default";
  char *nsd = po_As_Strdup(ns);
  bool ok = po_As_PrepareNew(res, obj, nsd, &r);
  if (ok && po_As_Store_Get(res, nsd, po_As_MetaStr(obj, "name"))) {
    snprintf(msg, msgsz, "%s \"%s\" already exists", res->plural, po_As_MetaStr(obj, "name"));
    ok = false;
  } else if (!ok) {
    snprintf(msg, msgsz, "%s", r.body ? r.body : "invalid");
  }
  free(nsd);
  po_As_Reply_Free(&r);
  if (!ok) {
    json_object_put(obj);
    return false;
  }
  if (!strcmp(res->plural, "customresourcedefinitions") && !strcmp(res->group, "apiextensions.k8s.io") &&
      !po_As_Registry_ApplyCrd(obj, msg, msgsz)) {
    json_object_put(obj);
    return false;
  }
  po_As_Store_Put(res, obj, kPo_As_Added);
  return true;
}

void po_As_Objects_DeleteNamespaceContents(const char *ns) {
  for (size_t i = 0; i < po_as.nres; i++) {
    po_As_Resource *res = po_as.res[i];
    if (!res->namespaced) continue;
    for (size_t j = res->nitems; j-- > 0;) {
      json_object *o = res->items[j].obj;
      const char *ons = po_As_MetaStr(o, "namespace");
      if (ons && !strcmp(ons, ns)) po_As_Store_Remove(res, ons, po_As_MetaStr(o, "name"), NULL);
    }
  }
}

/* ---- update ---------------------------------------------------------------------------------- */

/* Builds the stored form of an update of cur to the client's body: keeps what clients cannot
 * change, applies the status-subresource split and the generation rule. */
bool po_As_FinishUpdate(po_As_WriteCtx *w, json_object *cur, json_object *body, json_object **next, po_As_Reply *r) {
  po_As_Resource *res = w->q->res;
  bool status_sub = w->q->sub && !strcmp(w->q->sub, "status");
  const char *brv = po_As_MetaStr(body, "resourceVersion");
  if (brv && brv[0] && strcmp(brv, po_As_MetaStr(cur, "resourceVersion")) != 0) {
    conflict(r, res, w->name, "the object has been modified; please apply your changes to the latest version and try again");
    return false;
  }
  const char *bname = po_As_MetaStr(body, "name");
  if (bname && strcmp(bname, w->name) != 0) {
    po_As_Reply_Status(r, 400, "BadRequest", "the name of the object does not match the name on the URL", NULL);
    return false;
  }
  json_object *n;
  if (status_sub) {
    n = po_As_Copy(cur);
    json_object *st = po_As_Get(body, "status");
    if (st) json_object_object_add(n, "status", po_As_Copy(st));
    else json_object_object_del(n, "status");
  } else {
    n = po_As_Copy(body);
    json_object *meta = po_As_Meta(n), *cmeta = po_As_Get(cur, "metadata");
    static const char *keep[] = {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                                 "generation", "namespace", "name"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
      json_object *v = po_As_Get(cmeta, keep[i]);
      if (v) json_object_object_add(meta, keep[i], json_object_get(v));
      else json_object_object_del(meta, keep[i]);
    }
    if (!po_As_Get(meta, "managedFields") && po_As_Get(cmeta, "managedFields"))
      json_object_object_add(meta, "managedFields", po_As_Copy(po_As_Get(cmeta, "managedFields")));
    if (!po_As_Get(n, "apiVersion")) json_object_object_add(n, "apiVersion", json_object_get(po_As_Get(cur, "apiVersion")));
    if (!po_As_Get(n, "kind")) json_object_object_add(n, "kind", json_object_get(po_As_Get(cur, "kind")));
    if (res->has_status) {
      json_object *st = po_As_Get(cur, "status");
      if (st) json_object_object_add(n, "status", po_As_Copy(st));
      else json_object_object_del(n, "status");
    }
    if (!strcmp(res->plural, "secrets") && !res->group[0]) builtin_defaults(res, n);
    if (!strcmp(res->plural, "customresourcedefinitions") && !strcmp(res->group, "apiextensions.k8s.io")) {
      json_object *cs = po_As_Get(cur, "status");
      crd_status(n);
      if (cs && po_As_Equal(po_As_Get(cur, "spec"), po_As_Get(n, "spec"))) json_object_object_add(n, "status", po_As_Copy(cs));
    }
    /* While deleting, finalizers may only be removed. */
    if (po_As_MetaStr(cur, "deletionTimestamp")) {
      json_object *nf = po_As_Get(meta, "finalizers"), *cf = po_As_Get(cmeta, "finalizers");
      for (size_t i = 0; nf && i < json_object_array_length(nf); i++) {
        bool had = false;
        for (size_t j = 0; cf && j < json_object_array_length(cf); j++)
          if (po_As_Equal(json_object_array_get_idx(nf, i), json_object_array_get_idx(cf, j))) had = true;
        if (!had) {
          char m[512];
          snprintf(m, sizeof m, "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"%s\"}",
                   json_object_get_string(json_object_array_get_idx(nf, i)));
          json_object_put(n);
          invalid1(r, res, w->name, "FieldValueForbidden", "metadata.finalizers", m);
          return false;
        }
      }
    }
    /* apps/v1 workloads: spec.selector is immutable, as on a cluster (a chart whose selector
     * differs cannot be applied over a Deployment made by other manifests). The value is shown
     * as JSON, not as the real server's Go struct dump. */
    if (!strcmp(res->group, "apps") && !po_As_Equal(po_As_Get(po_As_Get(cur, "spec"), "selector"),
                                                    po_As_Get(po_As_Get(n, "spec"), "selector"))) {
      json_object *sel = po_As_Get(po_As_Get(n, "spec"), "selector");
      char *m = po_As_Printf("Invalid value: %s: field is immutable",
                             sel ? json_object_to_json_string_ext(sel, JSON_C_TO_STRING_PLAIN) : "null");
      json_object_put(n);
      invalid1(r, res, w->name, "FieldValueInvalid", "spec.selector", m);
      free(m);
      return false;
    }
    if (res->has_generation) {
      json_object *a = strip(cur, true), *b = strip(n, true);
      if (!po_As_Equal(a, b)) {
        json_object *g = po_As_Get(cmeta, "generation");
        json_object_object_add(meta, "generation", json_object_new_int64((g ? json_object_get_int64(g) : 0) + 1));
      }
      json_object_put(a);
      json_object_put(b);
    }
  }
  json_object_object_add(po_As_Meta(n), "resourceVersion", json_object_get(po_As_Get(po_As_Get(cur, "metadata"), "resourceVersion")));
  *next = n;
  return true;
}

/* After validation (which prunes and defaults), an unchanged object is a no-op. */
static bool compute_update(po_As_WriteCtx *w, json_object *cur, json_object **next, po_As_Reply *r) {
  if (!cur) {
    po_As_NotFound(r, w->q->res, w->name);
    return false;
  }
  if (!po_As_FinishUpdate(w, cur, w->body, next, r)) return false;
  po_As_CheckNoop(w, cur, *next);
  return true;
}

void po_As_CheckNoop(po_As_WriteCtx *w, json_object *cur, json_object *next) {
  if (w->q->res->is_crd) {
    json_object *sch = po_As_Resource_Schema(w->q->res, w->q->version);
    if (sch) {
      po_As_Causes c = {0};
      json_object *probe = po_As_Copy(next);
      po_As_Schema_Validate(sch, probe, &c);
      bool same = po_As_Equal(probe, cur) && !c.causes;
      json_object_put(probe);
      json_object_put(c.causes);
      json_object_put(c.unknown);
      w->noop = same;
      return;
    }
  }
  w->noop = po_As_Equal(next, cur);
}

/* ---- delete ---------------------------------------------------------------------------------- */

static bool compute_delete(po_As_WriteCtx *w, json_object *cur, json_object **next, po_As_Reply *r) {
  if (!cur) {
    po_As_NotFound(r, w->q->res, w->name);
    return false;
  }
  json_object *pre = po_As_Get(w->body, "preconditions");
  const char *puid = po_As_GetStr(pre, "uid"), *prv = po_As_GetStr(pre, "resourceVersion");
  if (puid && strcmp(puid, po_As_MetaStr(cur, "uid")) != 0) {
    char m[300];
    snprintf(m, sizeof m, "Precondition failed: UID in precondition: %s, UID in object meta: %s", puid, po_As_MetaStr(cur, "uid"));
    conflict(r, w->q->res, w->name, m);
    return false;
  }
  if (prv && strcmp(prv, po_As_MetaStr(cur, "resourceVersion")) != 0) {
    char m[300];
    snprintf(m, sizeof m, "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", prv,
             po_As_MetaStr(cur, "resourceVersion"));
    conflict(r, w->q->res, w->name, m);
    return false;
  }
  json_object *fin = po_As_Get(po_As_Get(cur, "metadata"), "finalizers");
  if (fin && json_object_array_length(fin) > 0) {
    if (po_As_MetaStr(cur, "deletionTimestamp")) {
      w->noop = true;
      return true;
    }
    json_object *n = po_As_Copy(cur);
    char ts[32];
    po_As_Now(ts);
    json_object_object_add(po_As_Meta(n), "deletionTimestamp", json_object_new_string(ts));
    json_object_object_add(po_As_Meta(n), "deletionGracePeriodSeconds", json_object_new_int(0));
    *next = n;
    return true;
  }
  *next = NULL;
  return true;
}

/* ---- entry ------------------------------------------------------------------------------------ */

/* deletecollection: each selected object goes through the single-object delete (admission,
 * finalizers); the reply is the list of what was selected, as the real server answers. */
static void delete_collection(po_As_Request *q, po_As_WriteCtx *w, po_As_Reply *r) {
  char msg[512] = "";
  po_As_Selector *sel = po_As_Selector_Parse(q->label_selector, q->field_selector, msg, sizeof msg);
  if (!sel) {
    po_As_Reply_Status(r, 400, "BadRequest", msg, NULL);
    return;
  }
  pthread_mutex_lock(&po_as.mu);
  char **names = malloc((q->res->nitems + 1) * sizeof *names);
  char **nss = malloc((q->res->nitems + 1) * sizeof *nss);
  size_t n = 0;
  for (size_t i = 0; i < q->res->nitems; i++) {
    json_object *o = q->res->items[i].obj;
    const char *ons = po_As_MetaStr(o, "namespace");
    if (q->ns && (!ons || strcmp(ons, q->ns) != 0)) continue;
    if (!po_As_Selector_Match(sel, o)) continue;
    names[n] = strdup(po_As_MetaStr(o, "name"));
    nss[n++] = po_As_Strdup(ons);
  }
  pthread_mutex_unlock(&po_as.mu);
  po_As_Selector_Free(sel);
  json_object *items = json_object_new_array();
  for (size_t i = 0; i < n; i++) {
    po_As_Request one = *q;
    one.name = names[i];
    one.ns = nss[i];
    po_As_WriteCtx wi = {.q = &one, .name = names[i], .body = w->body, .op = kPo_As_OpDelete, .compute = compute_delete};
    po_As_Reply ri = {0};
    run_write(&wi, &ri);
    for (int k = 0; k < wi.warn.nwarnings; k++) free(wi.warn.warnings[k]);
    if (ri.code >= 400 && ri.code != 404) { /* stop at the first failure, as the real server does */
      po_As_Reply_Free(r);
      *r = ri;
      json_object_put(items);
      for (size_t k = 0; k < n; k++) free(names[k]), free(nss[k]);
      free(names);
      free(nss);
      return;
    }
    po_As_Reply_Free(&ri);
  }
  char *av = po_As_ApiVersion(q->res, q->version);
  json_object *list = json_object_new_object();
  json_object_object_add(list, "kind", json_object_new_string(q->res->list_kind));
  json_object_object_add(list, "apiVersion", json_object_new_string(av));
  json_object_object_add(list, "metadata", json_object_new_object());
  json_object_object_add(list, "items", items);
  free(av);
  po_As_Reply_Json(r, 200, list);
  for (size_t k = 0; k < n; k++) free(names[k]), free(nss[k]);
  free(names);
  free(nss);
}

static json_object *parse_body(po_As_Request *q, po_As_Reply *r) {
  if (!q->body || q->body_len == 0) return NULL;
  if (q->content_type && strstr(q->content_type, "application/vnd.kubernetes.protobuf")) {
    char msg[512] = "";
    json_object *o = po_As_Protobuf_Decode(q->body, q->body_len, msg, sizeof msg);
    if (!o) po_As_Reply_Status(r, 415, "UnsupportedMediaType", msg, NULL);
    return o;
  }
  bool yaml = q->content_type && strstr(q->content_type, "yaml");
  if (yaml) {
    char msg[512] = "";
    json_object *docs = po_As_Yaml_Parse(q->body, q->body_len, msg, sizeof msg);
    if (!docs || json_object_array_length(docs) != 1) {
      char m[700];
      snprintf(m, sizeof m, "error decoding YAML: %s", docs ? "expected exactly one document" : msg);
      po_As_Reply_Status(r, 400, "BadRequest", m, NULL);
      json_object_put(docs);
      return NULL;
    }
    json_object *o = json_object_get(json_object_array_get_idx(docs, 0));
    json_object_put(docs);
    return o;
  }
  json_tokener *tok = json_tokener_new_ex(kPo_As_MaxJsonDepth);
  json_object *o = json_tokener_parse_ex(tok, q->body, (int)q->body_len);
  enum json_tokener_error err = json_tokener_get_error(tok);
  json_tokener_free(tok);
  if (err != json_tokener_success) {
    char m[300];
    snprintf(m, sizeof m, "couldn't get version/kind; json parse error: %s", json_tokener_error_desc(err));
    po_As_Reply_Status(r, 400, "BadRequest", m, NULL);
    json_object_put(o);
    return NULL;
  }
  return o;
}

static bool check_type(po_As_Request *q, json_object *body, po_As_Reply *r) {
  const char *av = po_As_GetStr(body, "apiVersion"), *kind = po_As_GetStr(body, "kind");
  char *want = po_As_ApiVersion(q->res, q->version);
  bool ok = true;
  char m[600];
  if (av && strcmp(av, want) != 0) {
    snprintf(m, sizeof m, "the API version in the data (%s) does not match the expected API version (%s)", av, want);
    ok = false;
  } else if (kind && strcmp(kind, q->res->kind) != 0) {
    snprintf(m, sizeof m, "the kind in the data (%s) does not match the expected kind (%s)", kind, q->res->kind);
    ok = false;
  }
  if (!ok) po_As_Reply_Status(r, 400, "BadRequest", m, NULL);
  if (ok && body) {
    json_object_object_add(body, "apiVersion", json_object_new_string(want));
    json_object_object_add(body, "kind", json_object_new_string(q->res->kind));
  }
  free(want);
  return ok;
}

void po_As_Objects_Handle(po_As_Request *q, po_As_Reply *r) {
  const char *m = q->method;
  if (!strcmp(m, "GET")) {
    if (q->name) po_As_Read_Get(q, r);
    else po_As_Read_List(q, r);
    return;
  }
  if (q->sub && (strcmp(q->sub, "status") != 0 || !q->res->has_status)) {
    po_As_Reply_Status(r, 404, "NotFound", "the server could not find the requested resource", NULL);
    return;
  }
  po_As_WriteCtx w = {.q = q, .name = q->name};
  json_object *body = parse_body(q, r);
  if (r->code) return;
  w.body = body;
  if (!strcmp(m, "POST") && !q->name) {
    if (!body || !json_object_is_type(body, json_type_object)) {
      po_As_Reply_Status(r, 400, "BadRequest", "the request body must be an object", NULL);
      goto done;
    }
    if (q->res->namespaced && !q->ns) {
      po_As_Reply_Status(r, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource", NULL);
      goto done;
    }
    if (!check_type(q, body, r)) goto done;
    pthread_mutex_lock(&po_as.mu);
    bool ok = po_As_PrepareNew(q->res, body, q->ns, r);
    pthread_mutex_unlock(&po_as.mu);
    if (!ok) goto done;
    w.name = po_As_MetaStr(body, "name");
    w.op = kPo_As_OpCreate;
    w.compute = compute_create;
    run_write(&w, r);
  } else if (!strcmp(m, "PUT") && q->name) {
    if (!body || !json_object_is_type(body, json_type_object)) {
      po_As_Reply_Status(r, 400, "BadRequest", "the request body must be an object", NULL);
      goto done;
    }
    if (!check_type(q, body, r)) goto done;
    w.op = kPo_As_OpUpdate;
    w.compute = compute_update;
    run_write(&w, r);
  } else if (!strcmp(m, "PATCH") && q->name) {
    w.op = kPo_As_OpUpdate;
    w.compute = po_As_ComputePatch;
    run_write(&w, r);
  } else if (!strcmp(m, "DELETE") && q->name) {
    w.op = kPo_As_OpDelete;
    w.compute = compute_delete;
    run_write(&w, r);
  } else if (!strcmp(m, "DELETE") && !q->sub) {
    delete_collection(q, &w, r);
  } else {
    po_As_Reply_Status(r, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource", NULL);
  }
done:
  for (int i = 0; i < w.warn.nwarnings; i++) free(w.warn.warnings[i]);
  json_object_put(body);
}
