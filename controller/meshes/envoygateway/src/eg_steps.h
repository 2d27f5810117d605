/* Envoy Gateway validates the resource after each jsonPatches entry: what a PropertyOverride's
 * patches leave, one at a time, on the resources Envoy Gateway generates (eg_steps.c; private to
 * po_mesh_eg). */
#ifndef PO_MESHES_EG_STEPS_H_
#define PO_MESHES_EG_STEPS_H_

#include <stdbool.h>

#include "po/targets/override.h"

/* Applies c's add patches not already refused, in order, one at a time, to a model of each
 * resource shape Envoy Gateway v1.9.1 generates that they reach, and judges the resource after
 * each by Envoy's rules (the engine's one rule walk, po_Message_CheckRules): the first patch that
 * breaks a rule on a resource that passed before it gets a kPo_DiagKind_Target error (on the
 * shape every such target has: an EDS cluster, its ClusterLoadAssignment, the listener, the
 * route configuration) or warning (only on a shape some targets have: a Backend of hostnames'
 * cluster). Services named by the same patches share one model, at most 8 such sets; a patch
 * naming only Services of further sets gets a warning that it was not judged. Run after the other
 * refusals (po_EG_Check). false only when out of memory. */
bool po_EG_StepCheck(po_CompiledOverride *c, po_Arena *a);

#endif /* PO_MESHES_EG_STEPS_H_ */
