/* Target adapters: one per mesh, each reading the one compiled form (po_CompiledOverride's
 * engine IR: per patch its resolved field chain, converted value, op and filter) and never the
 * patch paths again. An adapter says what its mesh cannot express with Consul's meaning (a
 * refusal per patch, kPo_DiagKind_Target, with the reason) and builds the mesh's objects.
 *
 *   mesh           targets                         objects                 header
 *   Consul         ServiceDefaults, ProxyDefaults  envoyExtensions entries po/targets/consul.h
 *   Istio          Service, Mesh                   EnvoyFilter             po/targets/istio.h
 *   Envoy Gateway  Gateway                         EnvoyPatchPolicy        po/targets/eg.h */
#ifndef PO_TARGETS_ADAPTER_H_
#define PO_TARGETS_ADAPTER_H_

#include <stdbool.h>

#include "po/targets/override.h"

typedef struct {
  po_Mesh mesh;
  /* Adds the mesh's refusals of c's patches to c->diags (c compiled without error). false only
   * when out of memory. */
  bool (*check)(po_CompiledOverride *c, po_Arena *a);
} po_TargetAdapter;

const po_TargetAdapter *po_TargetAdapter_For(po_Mesh mesh);

/* po_TargetAdapter_For(the mesh of c's target)->check(c, a). */
bool po_Target_Check(po_CompiledOverride *c, po_Arena *a);

#endif
