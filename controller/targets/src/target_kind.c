/* The target kinds (target_kind.h): one row per kind. */
#include "po/targets/target_kind.h"

#include <stddef.h>
#include <string.h>

/* The targets, one row per kind: the group that owns it, and which mesh programs it. */
static const struct {
  const char *kind, *group;
  po_Mesh mesh;
  bool mesh_wide;
} kTargets[] = {
    [kPo_TargetKind_ServiceDefaults] = {"ServiceDefaults", "consul.hashicorp.com", kPo_Mesh_Consul, false},
    [kPo_TargetKind_ProxyDefaults] = {"ProxyDefaults", "consul.hashicorp.com", kPo_Mesh_Consul, true},
    [kPo_TargetKind_Service] = {"Service", "", kPo_Mesh_Istio, false},
    [kPo_TargetKind_IstioMesh] = {"Mesh", "networking.istio.io", kPo_Mesh_Istio, true},
    [kPo_TargetKind_Gateway] = {"Gateway", "gateway.networking.k8s.io", kPo_Mesh_EnvoyGateway, false},
};
enum { kTargetCount = sizeof kTargets / sizeof kTargets[0] };

const char *po_TargetKind_Name(po_TargetKind k) { return (unsigned)k < kTargetCount ? kTargets[k].kind : "?"; }
const char *po_TargetKind_Group(po_TargetKind k) { return (unsigned)k < kTargetCount ? kTargets[k].group : "?"; }
po_Mesh po_TargetKind_Mesh(po_TargetKind k) { return (unsigned)k < kTargetCount ? kTargets[k].mesh : kPo_Mesh_Consul; }
bool po_TargetKind_MeshWide(po_TargetKind k) { return (unsigned)k < kTargetCount && kTargets[k].mesh_wide; }

bool po_TargetKind_Parse(const char *kind, po_TargetKind *out) {
  for (size_t k = 0; kind && k < kTargetCount; k++) {
    if (!strcmp(kTargets[k].kind, kind)) {
      *out = (po_TargetKind)k;
      return true;
    }
  }
  return false;
}
