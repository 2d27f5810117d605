/* Envoy Gateway validates the resource after each jsonPatches entry, not once after all of them
 * (private to po_mesh_eg; eg_stepwise.c).
 *
 * Why: Consul applies every patch, then Envoy judges the result; Envoy Gateway v1.9.1's
 * processJSONPatches (internal/xds/translator/jsonpatch.go) unmarshals and validates the
 * resource after each entry, and any failure makes the policy Invalid, none of its patches
 * applied. So two patches that build one message whose required parts the first lacks (a
 * SocketAddress's address then its port, a TransportSocket's typed_config then its name) are
 * valid for Consul and fail on Envoy Gateway (issue 23, class I). */
#ifndef PO_MESHES_EG_STEPWISE_H_
#define PO_MESHES_EG_STEPWISE_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/targets/override.h"

/* The reason patch i (an add of c, compiled) completes a message an earlier patch of c created
 * without a part Envoy requires, into *out (NULL: none). False only when out of memory. */
bool po_EG_StepCheck(const po_CompiledOverride *c, size_t i, po_Arena *a, const char **out);

#endif /* PO_MESHES_EG_STEPWISE_H_ */
