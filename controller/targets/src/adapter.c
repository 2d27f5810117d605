/* The adapter table (adapter.h): which mesh's rules judge a compiled override. */
#include "po/targets/adapter.h"

#include "po/targets/eg.h"
#include "po/targets/istio.h"

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

bool po_Target_Check(po_CompiledOverride *c, po_Arena *a) {
  return po_TargetAdapter_For(po_TargetKind_Mesh(c->target_kind))->check(c, a);
}
