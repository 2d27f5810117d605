/* FAKE Envoy Gateway: a test double, off unless --fake-envoy-gateway[=disabled] is given. It
 * plays Envoy Gateway's part for EnvoyPatchPolicies (gateway.envoyproxy.io/v1alpha1) as far as
 * their status goes: after a change of a policy, a Gateway or an HTTPRoute it sets each policy's
 * status.ancestors[] (one per targetRef Gateway, controllerName Envoy Gateway's) with conditions
 * at the policy's metadata.generation (observedGeneration), a status-only write (a new
 * resourceVersion, no new generation):
 *   - disabled (extensionApis.enableEnvoyPatchPolicy off): Accepted=False reason Disabled;
 *   - else Accepted=True, and Programmed=True reason Programmed when every jsonPatches[].name is
 *     a resource the Gateway generates, Programmed=False reason ResourceNotFound naming the ones
 *     it does not ("Unable to find xds resources: a,b", Envoy Gateway's wording);
 *   - the names a Gateway generates, kept simple but real: listeners and route configurations
 *     "<ns>/<gateway>/<listener>" per spec.listeners[] entry, clusters
 *     "httproute/<ns>/<route>/rule/<i>" per rule with backendRefs of an HTTPRoute whose
 *     parentRefs name the Gateway (a missing Gateway generates nothing);
 *   - no write when the status is already that one (so its own writes end the loop).
 * Not played: allowedRoutes, sectionName, priorities, applying the patches. Works under
 * po_as.mu, woken by the server's broadcast on every event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

static struct {
  bool on, disabled;
  pthread_t thread;
  bool started;
} feg;

static bool is_kind(const po_As_Resource *r, const char *group, const char *plural) {
  return r && r->group && !strcmp(r->group, group) && !strcmp(r->plural, plural);
}
static bool is_policy(const po_As_Resource *r) { return is_kind(r, "gateway.envoyproxy.io", "envoypatchpolicies"); }
static bool relevant(const po_As_Resource *r) {
  return is_policy(r) || is_kind(r, "gateway.networking.k8s.io", "gateways") ||
         is_kind(r, "gateway.networking.k8s.io", "httproutes");
}

static size_t len(json_object *a) { return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0; }
static const char *or_default(const char *s, const char *d) { return s ? s : d; }

/* Whether HTTPRoute r has a parentRef naming Gateway ns/name (the Gateway API's defaults). */
static bool names_gateway(json_object *r, const char *ns, const char *name) {
  json_object *prs = po_As_Get(po_As_Get(r, "spec"), "parentRefs");
  for (size_t i = 0; i < len(prs); i++) {
    json_object *p = json_object_array_get_idx(prs, i);
    if (!strcmp(or_default(po_As_GetStr(p, "group"), "gateway.networking.k8s.io"), "gateway.networking.k8s.io") &&
        !strcmp(or_default(po_As_GetStr(p, "kind"), "Gateway"), "Gateway") &&
        !strcmp(or_default(po_As_GetStr(p, "name"), ""), name) &&
        !strcmp(or_default(po_As_GetStr(p, "namespace"), po_As_MetaStr(r, "namespace")), ns)) {
      return true;
    }
  }
  return false;
}

/* Whether the Gateway ns/gw (NULL: absent) generates a resource named `want`. */
static bool generates(json_object *gateway, const char *ns, const char *gw, const char *want) {
  if (!gateway) return false;
  json_object *ls = po_As_Get(po_As_Get(gateway, "spec"), "listeners");
  for (size_t i = 0; i < len(ls); i++) {
    char *n = po_As_Printf("%s/%s/%s", ns, gw, or_default(po_As_GetStr(json_object_array_get_idx(ls, i), "name"), ""));
    bool hit = !strcmp(n, want);
    free(n);
    if (hit) return true;
  }
  po_As_Resource *routes = po_As_Registry_FindGR("gateway.networking.k8s.io", "httproutes");
  for (size_t k = 0; routes && k < routes->nitems; k++) {
    json_object *r = routes->items[k].obj;
    if (!names_gateway(r, ns, gw)) continue;
    json_object *rules = po_As_Get(po_As_Get(r, "spec"), "rules");
    for (size_t i = 0; i < len(rules); i++) {
      if (!len(po_As_Get(json_object_array_get_idx(rules, i), "backendRefs"))) continue;
      char *n = po_As_Printf("httproute/%s/%s/rule/%zu", po_As_MetaStr(r, "namespace"), po_As_MetaStr(r, "name"), i);
      bool hit = !strcmp(n, want);
      free(n);
      if (hit) return true;
    }
  }
  return false;
}

static json_object *condition(const char *type, const char *status, const char *reason, const char *message,
                              int64_t gen) {
  char now[32];
  po_As_Now(now);
  json_object *c = json_object_new_object();
  json_object_object_add(c, "type", json_object_new_string(type));
  json_object_object_add(c, "status", json_object_new_string(status));
  json_object_object_add(c, "reason", json_object_new_string(reason));
  json_object_object_add(c, "message", json_object_new_string(message));
  json_object_object_add(c, "observedGeneration", json_object_new_int64(gen));
  json_object_object_add(c, "lastTransitionTime", json_object_new_string(now));
  return c;
}

/* The conditions Envoy Gateway would set on policy p (a new array). */
static json_object *conditions_of(json_object *p) {
  const char *ns = po_As_MetaStr(p, "namespace");
  json_object *g = po_As_Get(po_As_Meta(p), "generation"), *list = json_object_new_array();
  int64_t gen = g ? json_object_get_int64(g) : 0;
  if (feg.disabled) {
    json_object_array_add(list, condition("Accepted", "False", "Disabled",
                                          "EnvoyPatchPolicy is disabled in the EnvoyGateway configuration", gen));
    return list;
  }
  const char *gw = or_default(po_As_GetStr(po_As_Get(po_As_Get(p, "spec"), "targetRef"), "name"), "");
  po_As_Resource *gws = po_As_Registry_FindGR("gateway.networking.k8s.io", "gateways");
  po_As_Entry *ge = gws ? po_As_Store_Get(gws, ns, gw) : NULL;
  json_object *patches = po_As_Get(po_As_Get(p, "spec"), "jsonPatches");
  char *missing = po_As_Strdup("");
  for (size_t i = 0; i < len(patches); i++) {
    const char *n = or_default(po_As_GetStr(json_object_array_get_idx(patches, i), "name"), "");
    if (generates(ge ? ge->obj : NULL, ns, gw, n) || strstr(missing, n)) continue;
    char *m = po_As_Printf("%s%s%s", missing, *missing ? "," : "", n);
    free(missing);
    missing = m;
  }
  json_object_array_add(list, condition("Accepted", "True", "Accepted", "Policy has been accepted.", gen));
  if (*missing) {
    char *msg = po_As_Printf("Unable to find xds resources: %s", missing);
    json_object_array_add(list, condition("Programmed", "False", "ResourceNotFound", msg, gen));
    free(msg);
  } else {
    json_object_array_add(list, condition("Programmed", "True", "Programmed", "Patches have been successfully applied.", gen));
  }
  free(missing);
  return list;
}

/* Equal but for lastTransitionTime. */
static bool same_conditions(json_object *a, json_object *b) {
  if (len(a) != len(b)) return false;
  static const char *const kFields[] = {"type", "status", "reason", "message"};
  for (size_t i = 0; i < len(a); i++) {
    json_object *x = json_object_array_get_idx(a, i), *y = json_object_array_get_idx(b, i);
    for (size_t f = 0; f < sizeof kFields / sizeof kFields[0]; f++) {
      const char *s = po_As_GetStr(x, kFields[f]), *t = po_As_GetStr(y, kFields[f]);
      if (!s || !t || strcmp(s, t)) return false;
    }
    json_object *gx = po_As_Get(x, "observedGeneration"), *gy = po_As_Get(y, "observedGeneration");
    if (!gx || !gy || json_object_get_int64(gx) != json_object_get_int64(gy)) return false;
  }
  return true;
}

static void program(po_As_Resource *r, json_object *p) {
  json_object *want = conditions_of(p);
  json_object *ancs = po_As_Get(po_As_Get(p, "status"), "ancestors");
  if (len(ancs) == 1 && same_conditions(po_As_Get(json_object_array_get_idx(ancs, 0), "conditions"), want)) {
    json_object_put(want);
    return;
  }
  json_object *o = po_As_Copy(p), *anc = json_object_new_object(), *ref = json_object_new_object(),
              *st = json_object_new_object(), *list = json_object_new_array();
  json_object_object_add(ref, "group", json_object_new_string("gateway.networking.k8s.io"));
  json_object_object_add(ref, "kind", json_object_new_string("Gateway"));
  json_object_object_add(ref, "name", json_object_new_string(
      or_default(po_As_GetStr(po_As_Get(po_As_Get(p, "spec"), "targetRef"), "name"), "")));
  json_object_object_add(ref, "namespace", json_object_new_string(po_As_MetaStr(p, "namespace")));
  json_object_object_add(anc, "ancestorRef", ref);
  json_object_object_add(anc, "controllerName", json_object_new_string("gateway.envoyproxy.io/gatewayclass-controller"));
  json_object_object_add(anc, "conditions", want);
  json_object_array_add(list, anc);
  json_object_object_add(st, "ancestors", list);
  json_object_object_add(o, "status", st);
  po_As_Log(kPo_As_LogInfo, "fake envoy-gateway: EnvoyPatchPolicy %s/%s %s", po_As_MetaStr(p, "namespace"),
            po_As_MetaStr(p, "name"), po_As_GetStr(json_object_array_get_idx(want, len(want) - 1), "reason"));
  po_As_Store_Put(r, o, kPo_As_Modified);
}

/* Every policy looked at again: a Gateway or an HTTPRoute changes what several may touch. */
static void program_all(void) {
  po_As_Resource *r = po_As_Registry_FindGR("gateway.envoyproxy.io", "envoypatchpolicies");
  if (!r) return;
  size_t n = r->nitems;
  json_object **objs = calloc(n ? n : 1, sizeof *objs);
  if (!objs) return;
  /* the store's array changes under Put: the objects are taken first */
  for (size_t i = 0; i < n; i++) objs[i] = json_object_get(r->items[i].obj);
  for (size_t i = 0; i < n; i++) {
    program(r, objs[i]);
    json_object_put(objs[i]);
  }
  free(objs);
}

static void *run(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&po_as.mu);
  while (!po_as.stopping) {
    bool changed = false;
    for (size_t i = 0; i < po_as.ring_len && !changed; i++) {
      po_As_Event *ev = &po_as.ring[(po_as.ring_head + i) % po_as.ring_cap];
      changed = ev->rv > seen && relevant(ev->res);
    }
    /* events compacted away unseen: look at everything */
    if (seen < po_as.compacted_rv) changed = true;
    seen = po_as.rv;
    if (changed) program_all();
    if (po_as.rv == seen) pthread_cond_wait(&po_as.cond, &po_as.mu);
  }
  pthread_mutex_unlock(&po_as.mu);
  return NULL;
}

void po_As_FakeEnvoyGateway_Enable(bool disabled) {
  feg.on = true;
  feg.disabled = disabled;
}

void po_As_FakeEnvoyGateway_Start(void) {
  if (!feg.on) return;
  feg.started = pthread_create(&feg.thread, NULL, run, NULL) == 0;
  po_As_Log(kPo_As_LogInfo, "fake envoy-gateway: on (EnvoyPatchPolicies %s)", feg.disabled ? "disabled" : "enabled");
}

void po_As_FakeEnvoyGateway_Stop(void) {
  if (!feg.started) return;
  pthread_join(feg.thread, NULL); /* po_as.stopping is set and broadcast by the caller */
  feg.started = false;
}
