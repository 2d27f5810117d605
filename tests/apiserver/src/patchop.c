/* The PATCH verb: merge, strategic (built-ins only, as on a cluster), JSON patch and
 * server-side apply, each turned into an update of the current object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"
#include "objects_internal.h"

static bool parse_json(const char *b, size_t n, json_object **out) {
  json_tokener *tok = json_tokener_new_ex(kPo_As_MaxJsonDepth);
  *out = json_tokener_parse_ex(tok, b, (int)n);
  bool ok = json_tokener_get_error(tok) == json_tokener_success;
  json_tokener_free(tok);
  return ok;
}

bool po_As_ComputePatch(po_As_WriteCtx *w, json_object *cur, json_object **next, po_As_Reply *r) {
  po_As_Request *q = w->q;
  const char *ct = q->content_type ? q->content_type : "";
  bool apply = strstr(ct, "application/apply-patch") != NULL;
  json_object *patch = NULL;
  char msg[1024] = "";
  if (apply) {
    patch = json_object_get(w->body);
  } else if (!parse_json(q->body ? q->body : "", q->body_len, &patch)) {
    json_object_put(patch);
    po_As_Reply_Status(r, 400, "BadRequest", "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", NULL);
    return false;
  }
  if (!cur && !apply) {
    json_object_put(patch);
    po_As_NotFound(r, q->res, w->name);
    return false;
  }
  json_object *patched = NULL;
  char *av = po_As_ApiVersion(q->res, q->version);
  if (apply) {
    bool conflict = false;
    const char *ak = po_As_GetStr(patch, "kind"), *aav = po_As_GetStr(patch, "apiVersion");
    if (!ak || !aav || strcmp(ak, q->res->kind) != 0 || strcmp(aav, av) != 0) {
      snprintf(msg, sizeof msg, "the apply configuration must name apiVersion %s and kind %s", av, q->res->kind);
      po_As_Reply_Status(r, 400, "BadRequest", msg, NULL);
      goto fail;
    }
    const char *pn = po_As_MetaStr(patch, "name");
    if (pn && strcmp(pn, w->name) != 0) {
      po_As_Reply_Status(r, 400, "BadRequest", "the name of the object does not match the name on the URL", NULL);
      goto fail;
    }
    patched = po_As_Apply(cur, patch, q->field_manager, q->force, av, &conflict, msg, sizeof msg);
    if (!patched) {
      if (conflict) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "name", json_object_new_string(w->name));
        if (q->res->group[0]) json_object_object_add(d, "group", json_object_new_string(q->res->group));
        json_object_object_add(d, "kind", json_object_new_string(q->res->plural));
        po_As_Reply_Status(r, 409, "Conflict", msg, d);
      } else {
        po_As_Reply_Status(r, 400, "BadRequest", msg, NULL);
      }
      goto fail;
    }
    if (!cur) { /* server-side apply of a missing object creates it */
      json_object_object_add(po_As_Meta(patched), "name", json_object_new_string(w->name));
      if (!po_As_PrepareNew(q->res, patched, q->ns, r)) goto fail;
      json_object *nsr = NULL;
      (void)nsr;
      *next = patched;
      json_object_put(patch);
      free(av);
      return true;
    }
  } else if (strstr(ct, "application/merge-patch+json")) {
    patched = po_As_MergePatch(po_As_Copy(cur), patch);
  } else if (strstr(ct, "application/strategic-merge-patch+json")) {
    if (q->res->is_crd) {
      po_As_Reply_Status(r, 415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", NULL);
      goto fail;
    }
    patched = po_As_StrategicPatch(po_As_Copy(cur), patch);
  } else if (strstr(ct, "application/json-patch+json")) {
    patched = po_As_JsonPatch(po_As_Copy(cur), patch, msg, sizeof msg);
    if (!patched) {
      po_As_Reply_Status(r, 422, "Invalid", msg, NULL);
      goto fail;
    }
  } else {
    po_As_Reply_Status(r, 415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", NULL);
    goto fail;
  }
  if (!patched || !json_object_is_type(patched, json_type_object)) {
    po_As_Reply_Status(r, 400, "BadRequest", "the patch did not produce an object", NULL);
    goto fail;
  }
  /* Identity comes from the URL; a resourceVersion in the patch is a precondition. */
  json_object_object_add(patched, "apiVersion", json_object_new_string(av));
  json_object_object_add(patched, "kind", json_object_new_string(q->res->kind));
  if (!po_As_MetaStr(patched, "resourceVersion"))
    json_object_object_add(po_As_Meta(patched), "resourceVersion", json_object_get(po_As_Get(po_As_Get(cur, "metadata"), "resourceVersion")));
  bool ok = po_As_FinishUpdate(w, cur, patched, next, r);
  json_object_put(patched);
  json_object_put(patch);
  free(av);
  if (ok) po_As_CheckNoop(w, cur, *next);
  return ok;
fail:
  json_object_put(patched);
  json_object_put(patch);
  free(av);
  return false;
}
