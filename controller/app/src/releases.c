/* Which release each mesh the controller writes to runs (issue 24): it chooses the Envoy API
 * snapshot every PropertyOverride of that mesh's targets is judged by, in the reconciler and the
 * webhook alike (po_TargetOptions.release, the one set both compile with).
 *
 * A configured release (--consul-version, --istio-version, --envoy-gateway-version) wins. Left
 * out, the release is read from the cluster where that costs one request the controller is
 * already allowed (the Services permission it holds for Istio targets) and nothing more:
 *   Istio          the istiod Service in the root namespace (label app=istiod), which Istio's
 *                  chart labels app.kubernetes.io/version: "1.30.2". During a canary upgrade
 *                  there is one per revision (istiod, istiod-1-31): the oldest release among
 *                  them is taken, the strictest: the EnvoyFilters we write carry no revision
 *                  label, so every revision's istiod and its proxies apply them, and a field or
 *                  feature (MERGE_AND_REPLACE_LIST) the oldest lacks would break its proxies.
 *                  (Judging per revision would need each target's revision, which nothing we
 *                  read ties to it.) Every Service seen, with its label, is logged.
 *   Envoy Gateway  the envoy-gateway Service (label control-plane=envoy-gateway), labelled
 *                  app.kubernetes.io/version: "v1.9.1" by its chart
 *   Consul         nothing readable without a new permission names it: configured only
 * Anything else (no such Service, forbidden, no label, a release without a snapshot) leaves the
 * mesh's default release (its table's, po/targets/release.h), and the log says which and why.
 * Read once, at start: after a mesh upgrade the controller is restarted (docs/crd.md, "Envoy
 * API"). */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "app_internal.h"
#include "po/base/json.h"
#include "po/meshes/mesh.h"

static const char *const kFlags[kPo_MeshSlots] = {
    [kPo_Mesh_Consul] = "--consul-version", [kPo_Mesh_Istio] = "--istio-version",
    [kPo_Mesh_EnvoyGateway] = "--envoy-gateway-version"};

/* The row of `text` in the mesh's table; NULL with `why` saying what is valid. */
static const po_MeshRelease *find(po_Mesh mesh, const char *text, char *why, size_t size) {
  const po_MeshOps *m = po_Mesh_Ops(mesh);
  const po_MeshRelease *r = po_MeshReleases_Find(m->releases, text);
  if (r) return r;
  po_Arena *a = po_Arena_New();
  const char *list = a ? po_MeshReleases_List(m->releases, a) : NULL;
  const po_MeshRelease *d = po_MeshReleases_Default(m->releases);
  snprintf(why, size, "%s '%.64s': %s; %s releases with an Envoy API snapshot in this build: %s (default %s)",
           kFlags[mesh], text ? text : "",
           po_MeshRelease_Valid(text) ? "not a release this build knows" : "a release such as 1.22 or 1.22.3 is expected",
           m->name, list ? list : "?", d ? d->release : "?");
  po_Arena_Free(a);
  return NULL;
}

/* Appends "NAME VERSION" (or why it has none) of one Service to `seen`. */
static void seen_add(char *seen, size_t size, const char *name, const char *version, const char *note) {
  size_t at = strlen(seen);
  if (at + 1 < size) {
    snprintf(seen + at, size - at, "%s%.63s %.32s%s", at ? ", " : "", name ? name : "?", version ? version : "(no label",
             note ? note : version ? "" : " app.kubernetes.io/version)");
  }
}

const po_MeshRelease *po_App_OldestRelease(po_Mesh mesh, json_object *items, const char *selector, char *why,
                                           size_t size, char *seen, size_t seen_size) {
  const po_MeshRelease *oldest = NULL;
  size_t n = json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
  if (seen_size) seen[0] = '\0';
  snprintf(why, size, "no Service labelled %s", selector);
  for (size_t i = 0; i < n; i++) {
    json_object *meta = po_Json_Get(json_object_array_get_idx(items, i), "metadata");
    const char *name = po_Json_String(meta, "name"), *v = po_Json_String(po_Json_Get(meta, "labels"), "app.kubernetes.io/version");
    char err[512];
    const po_MeshRelease *r = v ? find(mesh, v, err, sizeof err) : NULL;
    seen_add(seen, seen_size, name, v, v && !r ? " (not a release this build knows)" : NULL);
    /* rows are oldest first: the lowest row is the oldest release */
    if (r && (!oldest || r < oldest)) oldest = r;
    if (oldest) continue;
    if (!v) snprintf(why, size, "the Service labelled %s has no label app.kubernetes.io/version", selector);
    else snprintf(why, size, "the Service labelled %s: %s", selector, err);
  }
  return oldest;
}

/* The release the Services of the mesh's control plane are labelled with, the oldest of them
 * (NULL: none found, why in `why`); each Service seen in `seen`. */
static const po_MeshRelease *detect(po_App *app, po_Mesh mesh, const char *ns, const char *selector, char *why,
                                    size_t size, char *seen, size_t seen_size) {
  po_KubeRef ref = kPo_ServicesRef;
  ref.ns = ns;
  po_KubeListOptions lo = {.label_selector = selector, .limit = 8};
  json_object *out = NULL;
  po_CtlStatus ks;
  po_CtlStatus_Clear(&ks);
  if (seen_size) seen[0] = '\0';
  if (!po_KubeClient_List(app->io.client, &ref, &lo, &out, &ks)) {
    snprintf(why, size, "listing Services (%s): %.400s", selector, ks.message);
    return NULL;
  }
  const po_MeshRelease *found = po_App_OldestRelease(mesh, po_Json_Get(out, "items"), selector, why, size, seen, seen_size);
  if (!found && ns) snprintf(why + strlen(why), size - strlen(why), " in namespace %s", ns);
  json_object_put(out);
  return found;
}

/* The release chosen, where from and why; `seen`: every control-plane Service read and its
 * label ("istiod 1.30.2, istiod-1-31 1.31.0"), or "" when none was read. */
static void say(po_App *app, po_Mesh mesh, const char *source, const char *why, const char *seen) {
  const po_MeshRelease *r = app->target_options.release[mesh];
  if (!r) r = po_MeshReleases_Default(po_Mesh_Ops(mesh)->releases);
  /* several Services (a canary upgrade: one per revision) were read: say which was taken */
  if (!why && seen && strchr(seen, ',')) why = "the oldest release among the Services seen (one per revision): the strictest";
  po_Log_Info(app->log, "mesh release", po_Str("mesh", po_Mesh_Ops(mesh)->name), po_Str("release", r ? r->release : ""),
              po_Str("envoy_api", po_EnvoyApi_Version(po_MeshRelease_Api(r))), po_Str("source", source),
              po_Str("reason", why ? why : ""), po_Str("seen", seen ? seen : ""));
}

/* The releases the options configure (Istio's as 1.N), by mesh; NULL where none is. */
static void given_releases(const po_AppOptions *o, char *istio, size_t size, const char *given[kPo_MeshSlots]) {
  snprintf(istio, size, "1.%d", o->istio_minor);
  given[kPo_Mesh_Consul] = o->consul_version;
  given[kPo_Mesh_Istio] = o->istio_minor ? istio : NULL;
  given[kPo_Mesh_EnvoyGateway] = o->envoy_gateway_version;
}

bool po_App_CheckReleases(po_App *app, po_CtlStatus *st) {
  char why[768], text[16];
  const char *given[kPo_MeshSlots];
  given_releases(&app->o, text, sizeof text, given);
  for (int m = 0; m < kPo_MeshSlots; m++) {
    if (given[m] && !(app->target_options.release[m] = find((po_Mesh)m, given[m], why, sizeof why))) {
      return po_CtlStatus_Set(st, kPo_Ctl_Usage, "%s", why);
    }
  }
  return true;
}

void po_App_MeshReleases(po_App *app) {
  po_TargetOptions *t = &app->target_options;
  char why[768] = "", text[16], seen[512] = "";
  const char *given[kPo_MeshSlots];
  given_releases(&app->o, text, sizeof text, given);
  say(app, kPo_Mesh_Consul, given[kPo_Mesh_Consul] ? "configured" : "default",
      given[kPo_Mesh_Consul] ? NULL : "--consul-version not given (nothing in the cluster the controller may read names it)",
      NULL);
  /* Istio: read from istiod's Service when Istio targets are programmed; the release read is
   * also what MERGE_AND_REPLACE_LIST needs (1.31) */
  const char *src = "configured";
  if (!given[kPo_Mesh_Istio]) {
    src = "default";
    snprintf(why, sizeof why, "--istio-version not given and Istio targets not programmed at start");
    if (atomic_load(&app->io.istio) &&
        (t->release[kPo_Mesh_Istio] =
             detect(app, kPo_Mesh_Istio, t->istio_root_namespace, "app=istiod", why, sizeof why, seen, sizeof seen))) {
      src = "detected";
      sscanf(t->release[kPo_Mesh_Istio]->release, "1.%d", &t->istio_minor);
    }
  }
  if (!strcmp(src, "default")) {
    /* not known: judged and written as the newest listed (po_Istio_JudgedMinor), said here once
     * and in each PropertyOverride's status (the Accepted message's "assumed") */
    size_t at = strlen(why);
    snprintf(why + at, sizeof why - at, "; Istio targets judged as the newest release listed (lists written as "
             "MERGE_AND_REPLACE_LIST, which Istio before 1.31 refuses): set --istio-version");
  }
  say(app, kPo_Mesh_Istio, src, strcmp(src, "default") ? NULL : why, seen);
  seen[0] = '\0';
  src = "configured";
  if (!given[kPo_Mesh_EnvoyGateway]) {
    src = "default";
    snprintf(why, sizeof why, "--envoy-gateway-version not given and Envoy Gateway targets not programmed at start");
    /* Envoy Gateway's Service is read in every namespace (its namespace is not known): under
     * --namespace the controller may read only the namespaces it watches (the chart's
     * RoleBindings), and the list would be refused. */
    bool namespaced = app->o.n_namespaces > 0;
    if (app->io.eg && namespaced) {
      snprintf(why, sizeof why, "--envoy-gateway-version not given, and under --namespace the Services of every "
               "namespace are not read (no permission): set --envoy-gateway-version");
    }
    if (app->io.eg && !namespaced && (t->release[kPo_Mesh_EnvoyGateway] =
                           detect(app, kPo_Mesh_EnvoyGateway, NULL, "control-plane=envoy-gateway", why, sizeof why,
                                  seen, sizeof seen))) {
      src = "detected";
    }
  }
  say(app, kPo_Mesh_EnvoyGateway, src, strcmp(src, "default") ? NULL : why, seen);
}
