/* The adapter table (adapter.h): which mesh's rules judge a compiled override. */
#include "po/targets/adapter.h"

#include <stdio.h>
#include <string.h>

#include "po/targets/eg.h"
#include "po/targets/istio.h"

/* Kubernetes' longest object name (a DNS subdomain). */
enum { kMaxObjectName = 253 };

/* Consul's own refusals are the compile's wire verdicts (check_wire), made with the engine. */
static bool consul_check(po_CompiledOverride *c, po_Arena *a) {
  (void)c, (void)a;
  return true;
}

static const po_TargetAdapter kAdapters[] = {
    [kPo_Mesh_Consul] = {kPo_Mesh_Consul, consul_check},
    [kPo_Mesh_Istio] = {kPo_Mesh_Istio, po_Istio_Check},
    [kPo_Mesh_EnvoyGateway] = {kPo_Mesh_EnvoyGateway, po_EG_Check},
};

const po_TargetAdapter *po_TargetAdapter_For(po_Mesh mesh) {
  return (unsigned)mesh < sizeof kAdapters / sizeof kAdapters[0] ? &kAdapters[mesh] : &kAdapters[kPo_Mesh_Consul];
}

/* Istio and Envoy Gateway targets get an object of their own named after the PropertyOverride
 * (po_Istio_FilterName, po_EG_PolicyName): a name too long for it passed admission and then
 * failed at every create, so it is refused here, where the webhook says so. (Envoy Gateway's and
 * Istio's Mesh names hash a long name into 253 characters: only a Service target's can be too long.) */
static bool check_object_name(po_CompiledOverride *c, po_Arena *a) {
  po_Mesh m = po_TargetKind_Mesh(c->target_kind);
  if (m == kPo_Mesh_Consul || !c->name) return true;
  const char *obj = m == kPo_Mesh_Istio ? po_Istio_FilterName(c, a) : po_EG_PolicyName(c, a);
  if (!obj) return false;
  size_t n = strlen(obj), room = kMaxObjectName - (n - strlen(c->name));
  if (n <= kMaxObjectName) return true;
  const char *msg = po_Arena_Printf(a,
                                    "metadata.name: %zu characters: the %s is named %.*s<name>, and a Kubernetes name has "
                                    "at most %d characters (so at most %zu here)",
                                    strlen(c->name), m == kPo_Mesh_Istio ? "EnvoyFilter" : "EnvoyPatchPolicy",
                                    (int)(n - strlen(c->name)), obj, kMaxObjectName, room);
  return msg && po_Diagnostics_Add(c->diags, kPo_Severity_Error, kPo_DiagKind_Target, -1, NULL, msg) != NULL;
}

bool po_Target_Check(po_CompiledOverride *c, po_Arena *a) {
  return check_object_name(c, a) && po_TargetAdapter_For(po_TargetKind_Mesh(c->target_kind))->check(c, a);
}
