/* The mutating route: a target write that would lose the controller's entries gets them back
 * (po/webhook/mutate.h). One JSONPatch operation replaces spec.envoyExtensions with the list the
 * controller's own plan makes of the incoming object: everybody else's extensions as they came,
 * in their order, ours after them. A new PropertyOverride the controller claims gets its
 * finalizer, one JSONPatch operation too. */
#include "po/webhook/mutate.h"

#include <gnutls/gnutls.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/base/json.h"
#include "po/meshes/consul.h"
#include "review.h"

static size_t count_ours(json_object *list) {
  size_t n = 0;
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    const char *name = po_Json_String(json_object_array_get_idx(list, i), "name");
    n += name && strcmp(name, PO_EXTENSION_NAME) == 0;
  }
  return n;
}

/* The incoming object as the store will hold it, for the plan: on UPDATE the API server keeps the
 * stored uid and namespace whatever the body says (a PUT may leave them out), and our markers
 * are bound to that uid. A new reference; NULL when out of memory. */
static json_object *view_of(json_object *obj, json_object *old, const char *req_ns) {
  json_object *v = NULL;
  if (json_object_deep_copy(obj, &v, NULL) != 0) return NULL;
  json_object *meta = po_Json_Get(v, "metadata");
  if (!meta || !json_object_is_type(meta, json_type_object)) {
    meta = json_object_new_object();
    if (!meta || json_object_object_add(v, "metadata", meta) != 0) {
      json_object_put(meta);
      json_object_put(v);
      return NULL;
    }
  }
  const char *ouid = po_Json_Meta(old, "uid");
  if (*ouid) json_object_object_add(meta, "uid", json_object_new_string(ouid));
  if (req_ns && *req_ns) json_object_object_add(meta, "namespace", json_object_new_string(req_ns));
  return v;
}

/* A JSONPatch (an array of operations; consumed) as the AdmissionResponse's patch field wants it:
 * base64, one unbroken line. malloc'd; NULL when out of memory. */
static char *encode_ops(json_object *ops) {
  size_t len;
  const char *text = json_object_to_json_string_length(ops, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
  gnutls_datum_t in = {(unsigned char *)text, (unsigned)len}, out = {0};
  char *b64 = NULL;
  if (text && gnutls_base64_encode2(&in, &out) == 0) {
    /* GnuTLS wraps at 64 columns: the API server wants one unbroken string */
    b64 = malloc(out.size + 1);
    size_t k = 0;
    for (unsigned i = 0; b64 && i < out.size; i++) {
      if (out.data[i] != '\n' && out.data[i] != '\r') b64[k++] = (char)out.data[i];
    }
    if (b64) b64[k] = '\0';
  }
  gnutls_free(out.data);
  json_object_put(ops);
  return b64;
}

/* [{"op": "add", "path": PATH, "value": value}] (add replaces a member that exists, RFC 6902
 * 4.1; value consumed), encoded. NULL when out of memory. */
static char *add_op(const char *path, json_object *value) {
  json_object *ops = json_object_new_array(), *op = json_object_new_object();
  if (!ops || !op || json_object_array_add(ops, op) != 0) {
    json_object_put(op);
    json_object_put(ops);
    json_object_put(value);
    return NULL;
  }
  json_object_object_add(op, "op", json_object_new_string("add"));
  json_object_object_add(op, "path", json_object_new_string(path));
  json_object_object_add(op, "value", value);
  return encode_ops(ops);
}

/* spec.envoyExtensions set to list, or the whole spec when the object has none. */
static char *patch_of(json_object *obj, json_object *list) {
  json_object *value = json_object_get(list);
  bool has_spec = json_object_is_type(po_Json_Get(obj, "spec"), json_type_object);
  if (!has_spec) {
    json_object *spec = json_object_new_object();
    json_object_object_add(spec, "envoyExtensions", value);
    value = spec;
  }
  return add_op(has_spec ? "/spec/envoyExtensions" : "/spec", value);
}

/* Our entries in the plan's list (bound to the stored uid) that the stored object does not hold
 * are left out: the webhook keeps entries, it never adds one. Its answer comes from this
 * replica's caches, which may lag the controller's (another replica, a watch reconnecting):
 * after the controller removed an entry and then its PropertyOverride's finalizer, a lagging
 * cache still shows the PropertyOverride, and adding its entry back would leave an entry whose
 * PropertyOverride no longer exists, which the controller can never tell from a forged one
 * (a ForeignEntry, left in place for good). An entry stays when oldObject holds one bound to the
 * same PropertyOverride name and uid (its content is the plan's, unless oldObject's carries a
 * newer generation: then oldObject's entry as it is, since a lagging cache must not take an
 * entry back a generation); a missing one is the controller's to write. A new reference; NULL
 * when out of memory. */
/* The entry of the stored list whose arguments are `args` (borrowed), NULL when none. */
static json_object *stored_entry(json_object *old, const json_object *args) {
  json_object *list = po_Json_Get(po_Json_Get(old, "spec"), "envoyExtensions");
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *e = json_object_array_get_idx(list, i);
    if (po_Json_Get(e, "arguments") == args) return e;
  }
  return NULL;
}

static json_object *kept_only(json_object *list, json_object *old, const char *tuid) {
  size_t nold = po_Consul_OwnedEntries(old, NULL, 0, NULL, 0, NULL);
  po_ConsulEntry *was = malloc((nold ? nold : 1) * sizeof *was);
  json_object *view = json_object_new_object(), *meta = json_object_new_object(), *spec = json_object_new_object();
  json_object *out = json_object_new_array();
  bool ok = was && view && meta && spec && out;
  if (ok) {
    json_object_object_add(meta, "uid", json_object_new_string(tuid));
    json_object_object_add(view, "metadata", meta);
    json_object_object_add(spec, "envoyExtensions", json_object_get(list));
    json_object_object_add(view, "spec", spec);
    meta = spec = NULL;
    nold = po_Consul_OwnedEntries(old, NULL, 0, was, nold, NULL);
  }
  size_t nnew = ok ? po_Consul_OwnedEntries(view, NULL, 0, NULL, 0, NULL) : 0;
  po_ConsulEntry *now = ok ? malloc((nnew ? nnew : 1) * sizeof *now) : NULL;
  ok = ok && now;
  if (ok) nnew = po_Consul_OwnedEntries(view, NULL, 0, now, nnew, NULL);
  for (size_t i = 0; ok && i < json_object_array_length(list); i++) {
    json_object *e = json_object_array_get_idx(list, i), *args = po_Json_Get(e, "arguments");
    bool keep = true;
    for (size_t k = 0; k < nnew && keep; k++) {
      if (now[k].arguments != args) continue;
      keep = false;
      for (size_t w = 0; w < nold && !keep; w++) {
        if (strcmp(was[w].owner, now[k].owner) != 0 || strcmp(was[w].uid, now[k].uid) != 0) continue;
        keep = true;
        /* A lagging cache plans an older generation than the leader already stored: the stored
         * entry stays as it is, so no revision goes back a generation (the leader's repair
         * decides the rest). */
        if (was[w].generation > now[k].generation) e = stored_entry(old, was[w].arguments);
      }
    }
    if (keep && e) ok = json_object_array_add(out, json_object_get(e)) == 0;
  }
  free(was);
  free(now);
  json_object_put(meta);
  json_object_put(spec);
  json_object_put(view);
  if (!ok) {
    json_object_put(out);
    return NULL;
  }
  return out;
}

/* Whether a PropertyOverride's metadata.finalizers holds `finalizer`; -1 when the member is there
 * but no list (the API server refuses such an object: nothing to patch). */
static int holds_finalizer(json_object *obj, const char *finalizer) {
  json_object *list = po_Json_Get(po_Json_Get(obj, "metadata"), "finalizers");
  if (!list) return 0;
  if (!json_object_is_type(list, json_type_array)) return -1;
  for (size_t i = 0; i < json_object_array_length(list); i++) {
    json_object *f = json_object_array_get_idx(list, i);
    if (json_object_is_type(f, json_type_string) && !strcmp(json_object_get_string(f), finalizer)) return 1;
  }
  return 0;
}

/* Whether the controller claims the object (held: one that holds the finalizer already): judged as
 * the store will hold it (the API server sets metadata.namespace before admission; a review
 * without it is read with its request's). */
static bool claimed(json_object *req, json_object *obj, bool held, const po_MutateOptions *opt, bool *oom) {
  const char *req_ns = po_Json_String(req, "namespace");
  if (*po_Json_Meta(obj, "namespace") || !req_ns || !*req_ns) return opt->claims(opt->ctx, obj, held);
  json_object *view = view_of(obj, NULL, req_ns);
  if (!view) return !(*oom = true);
  bool yes = opt->claims(opt->ctx, view, held);
  json_object_put(view);
  return yes;
}

/* The finalizer appended to the list the object has, else the list set (add replaces a null
 * member); the warning, when given, tells the writer why. "error" when out of memory. */
static const char *add_finalizer(json_object *obj, const char *finalizer, const char *warning, const char *outcome,
                                 json_object *resp) {
  bool is_list = json_object_is_type(po_Json_Get(po_Json_Get(obj, "metadata"), "finalizers"), json_type_array);
  json_object *value = NULL;
  if (is_list) {
    value = json_object_new_string(finalizer);
  } else if ((value = json_object_new_array()) && json_object_array_add(value, json_object_new_string(finalizer)) != 0) {
    json_object_put(value);
    value = NULL;
  }
  char *patch = value ? add_op(is_list ? "/metadata/finalizers/-" : "/metadata/finalizers", value) : NULL;
  if (!patch) return "error";
  json_object *type = json_object_new_string("JSONPatch"), *text = json_object_new_string(patch);
  json_object *warnings = warning ? json_object_new_array() : NULL, *w = warning ? json_object_new_string(warning) : NULL;
  free(patch);
  bool ok = type && text && (!warning || (warnings && w && json_object_array_add(warnings, w) == 0));
  if (ok && warning) w = NULL; /* the array holds it */
  if (ok) ok = json_object_object_add(resp, "patchType", type) == 0 && !(type = NULL);
  if (ok) ok = json_object_object_add(resp, "patch", text) == 0 && !(text = NULL);
  if (ok && warning) ok = json_object_object_add(resp, "warnings", warnings) == 0 && !(warnings = NULL);
  json_object_put(type);
  json_object_put(text);
  json_object_put(warnings);
  json_object_put(w);
  if (!ok) {
    json_object_object_del(resp, "patchType");
    json_object_object_del(resp, "patch");
    return "error";
  }
  return outcome;
}

/* `manager`'s server-side apply entry in an object's managedFields; NULL when none. */
static json_object *apply_entry(json_object *obj, const char *manager) {
  json_object *mf = po_Json_Get(po_Json_Get(obj, "metadata"), "managedFields");
  for (size_t i = 0; json_object_is_type(mf, json_type_array) && i < json_object_array_length(mf); i++) {
    json_object *e = json_object_array_get_idx(mf, i);
    const char *m = po_Json_String(e, "manager"), *how = po_Json_String(e, "operation");
    if (m && how && !strcmp(m, manager) && !strcmp(how, "Apply")) return e;
  }
  return NULL;
}

static bool lists_finalizers(json_object *entry) {
  return json_object_is_type(po_Json_Get(po_Json_Get(po_Json_Get(entry, "fieldsV1"), "f:metadata"), "f:finalizers"),
                             json_type_object);
}

/* The last-applied-configuration annotation (kubectl's client-side apply) parsed; NULL when none. */
static json_object *last_applied(json_object *obj) {
  json_object *a = po_Json_Get(po_Json_Get(po_Json_Get(obj, "metadata"), "annotations"),
                               "kubectl.kubernetes.io/last-applied-configuration");
  return json_object_is_type(a, json_type_string) ? json_tokener_parse(json_object_get_string(a)) : NULL;
}

/* kubectl patch's field manager: the documented hand removal, never taken for an apply. */
#define PO_HAND_REMOVAL_MANAGER "kubectl-patch"

/* The field managers of kubectl's hand edits (patch, edit, replace): never an apply. */
static bool hand_edit(const char *manager) {
  return !strcmp(manager, PO_HAND_REMOVAL_MANAGER) || !strcmp(manager, "kubectl-edit") ||
         !strcmp(manager, "kubectl-replace");
}

/* Whether this very request is an apply of a manifest that listed finalizers and changed them:
 * such an apply replaces the whole list, ours too, though it never listed ours. Server-side: the
 * request's field manager's Apply entry lists finalizers in the stored object and none in the
 * incoming one (the API server has worked the apply into managedFields before admission), by
 * any manager but kubectl's hand edits. Those are left out because the request does not say
 * whether it is an apply (a PATCH's options reach admission as UpdateOptions, as a PUT's) and the
 * real kube-apiserver trims the removed finalizers from every manager's entry: a hand removal by
 * `kubectl patch` trims an Apply entry of that name the same way (a tenant's own apply under that
 * name, or one it wrote into its object's managedFields). Client-side: the last-applied
 * annotation listed them and this request changed it (kubectl's merge patch sets the annotation
 * and the list together; a hand removal by patch leaves the annotation). */
static bool apply_replaces_list(json_object *req, json_object *obj, json_object *old) {
  const char *manager = po_Json_String(po_Json_Get(req, "options"), "fieldManager");
  json_object *was = manager && *manager && !hand_edit(manager) ? apply_entry(old, manager) : NULL;
  json_object *now = was ? apply_entry(obj, manager) : NULL;
  if (was && now && lists_finalizers(was) && !lists_finalizers(now)) return true;
  json_object *before = last_applied(old), *after = before ? last_applied(obj) : NULL;
  bool changes = before && after && !json_object_equal(before, after) &&
                 po_Json_Get(po_Json_Get(before, "metadata"), "finalizers");
  json_object_put(before);
  json_object_put(after);
  return changes;
}

/* A new PropertyOverride the controller claims gets the finalizer; an update that would drop it
 * from a claimed one that holds it, by anyone but the controller, keeps it, except a deliberate
 * removal from an object being deleted. */
static const char *finalize(json_object *req, json_object *obj, json_object *old, const po_MutateOptions *opt,
                            json_object *resp) {
  const char *op = po_Json_String(req, "operation");
  const char *fin = opt->finalizer;
  if (!fin || !*fin || !opt->claims || !op || po_Json_String(req, "subResource")) return "unchanged";
  if (!json_object_is_type(po_Json_Get(obj, "metadata"), json_type_object) || holds_finalizer(obj, fin) != 0)
    return "unchanged";
  bool create = !strcmp(op, "CREATE");
  if (!create && (strcmp(op, "UPDATE") != 0 || holds_finalizer(old, fin) != 1)) return "unchanged";
  /* Being deleted: the stored object says so (the API server puts its deletionTimestamp back only
   * after admission, so a body may leave it out). Removing the finalizer by hand is the way out
   * of a stuck deletion and is left alone. Not so an apply of a git version that changed the
   * finalizers it listed (apply_replaces_list), which would end the deletion before the cleanup. */
  bool deleting = create ? false : po_Json_Get(po_Json_Get(old, "metadata"), "deletionTimestamp") != NULL;
  if (deleting && !apply_replaces_list(req, obj, old)) return "unchanged";
  if (!create && po_Review_By(req, opt->controller_user)) return "exempt";
  /* only where the controller claims it (a new one), or will release it at the deletion (one that
   * holds it): elsewhere (a namespace it does not watch) nothing would ever remove it */
  bool oom = false;
  if (!claimed(req, obj, !create, opt, &oom)) return oom ? "error" : "unchanged";
  if (create) return add_finalizer(obj, fin, NULL, "finalized", resp);
  /* An update that does not list it: an apply that changed the finalizers it listed (above), a
   * PUT of the git version. */
  /* On an object being deleted the writer may mean to remove it by hand (kubectl edit and replace
   * rewrite the last-applied annotation too): the warning names the way that is left alone. */
  char w[512];
  if (deleting)
    snprintf(w, sizeof w,
             "metadata.finalizers: %s was kept: this apply replaced the whole list; the controller removes it once "
             "the entries of this PropertyOverride are cleaned up. To remove it by hand: kubectl patch "
             "--type=merge -p '{\"metadata\":{\"finalizers\":null}}' (field manager " PO_HAND_REMOVAL_MANAGER
             "; docs/gitops.md)",
             fin);
  else
    snprintf(w, sizeof w,
             "metadata.finalizers: %s was kept: the controller removes it once this PropertyOverride is deleted and "
             "its entries are cleaned up (docs/gitops.md)",
             fin);
  return add_finalizer(obj, fin, w, "finalizer-kept", resp);
}

static const char *decide(json_object *req, const po_MutateOptions *opt, json_object *resp) {
  const char *op = po_Json_String(req, "operation");
  json_object *rk = po_Json_Get(req, "kind"), *obj = po_Json_Get(req, "object"), *old = po_Json_Get(req, "oldObject");
  const char *group = po_Json_String(rk, "group"), *k = po_Json_String(rk, "kind");
  po_TargetKind kind;
  if (group && k && !strcmp(group, PO_OVERRIDE_GROUP) && !strcmp(k, "PropertyOverride"))
    return finalize(req, obj, old, opt, resp);
  if (!group || strcmp(group, PO_CONSUL_GROUP) != 0 || !k) return "unchanged";
  if (!strcmp(k, "ServiceDefaults")) kind = kPo_TargetKind_ServiceDefaults;
  else if (!strcmp(k, "ProxyDefaults")) kind = kPo_TargetKind_ProxyDefaults;
  else return "unchanged";
  /* CREATE: the server assigns the uid after mutating admission, so nothing can be bound to the
   * new object yet (a re-created object is a new one: the controller programs it). DELETE and
   * subresources carry no spec to keep. */
  if (!op || strcmp(op, "UPDATE") != 0 || po_Json_String(req, "subResource")) return "unchanged";
  if (!json_object_is_type(obj, json_type_object) || !*po_Json_Meta(old, "uid")) return "unchanged";
  if (po_Json_Get(po_Json_Get(obj, "metadata"), "deletionTimestamp")) return "unchanged";
  if (po_Review_By(req, opt->controller_user)) return "exempt";
  if (!opt->desired) return "unchanged";
  json_object *view = view_of(obj, old, po_Json_String(req, "namespace"));
  if (!view) return "error";
  json_object *list = NULL;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  po_MutateDecision d = opt->desired(opt->ctx, kind, view, &list, &st);
  const char *outcome = d == kPo_Mutate_NotReady ? "not-synced" : d == kPo_Mutate_Error ? "error" : "unchanged";
  if (d == kPo_Mutate_Set && list) {
    json_object *kept = kept_only(list, old, po_Json_Meta(old, "uid"));
    json_object_put(list);
    list = kept;
    if (!list) outcome = "error";
    json_object *incoming = po_Json_Get(po_Json_Get(obj, "spec"), "envoyExtensions");
    if (list && (incoming ? json_object_equal(incoming, list) : json_object_array_length(list) == 0)) {
      json_object_put(list); /* what is left is what the writer sent */
      list = NULL;
    }
  }
  if (d == kPo_Mutate_Set && list) {
    char *patch = patch_of(obj, list);
    if (patch) {
      json_object_object_add(resp, "patchType", json_object_new_string("JSONPatch"));
      json_object_object_add(resp, "patch", json_object_new_string(patch));
      size_t had = count_ours(po_Json_Get(po_Json_Get(obj, "spec"), "envoyExtensions")), have = count_ours(list);
      char w[256];
      snprintf(w, sizeof w,
               "spec.envoyExtensions: the builtin/property-override entries of the PropertyOverrides targeting this "
               "object were kept (%zu in the request, %zu stored; docs/gitops.md)",
               had, have);
      json_object *warnings = json_object_new_array();
      json_object_array_add(warnings, json_object_new_string(w));
      json_object_object_add(resp, "warnings", warnings);
      free(patch);
      outcome = "patched";
    } else {
      outcome = "error";
    }
  }
  json_object_put(list);
  json_object_put(view);
  return outcome;
}

json_object *po_Admission_Mutate(const char *body, size_t len, const po_MutateOptions *opt, po_CtlStatus *st,
                                 const char **outcome) {
  json_object *review = po_Review_Parse(body, len, st);
  if (!review) return NULL;
  json_object *req = po_Json_Get(review, "request");
  json_object *resp = json_object_new_object();
  json_object_object_add(resp, "uid", json_object_new_string(po_Json_String(req, "uid")));
  json_object_object_add(resp, "allowed", json_object_new_boolean(1));
  const char *o = decide(req, opt, resp);
  if (outcome) *outcome = o;
  json_object_put(review);
  return po_Review_Wrap(resp);
}
