/* The kinds of object a PropertyOverride's spec.targetRef can name, and which mesh programs each:
 * what the compile (override.h), the tenancy policy (tenancy.h) and the meshes share, in a header
 * of its own so that none of them needs another for it. */
#ifndef PO_TARGETS_TARGET_KIND_H_
#define PO_TARGETS_TARGET_KIND_H_

#include <stdbool.h>

#include "po/engine.h"

/* spec.targetRef {group, kind, name} (Gateway API policy-attachment style); numbers never reused. */
typedef enum {
  kPo_TargetKind_ServiceDefaults = 0, /* consul.hashicorp.com ServiceDefaults <name> */
  kPo_TargetKind_ProxyDefaults,       /* consul.hashicorp.com ProxyDefaults global: every Consul proxy */
  kPo_TargetKind_Service,             /* core Service <name>: its Istio sidecars (an EnvoyFilter) */
  kPo_TargetKind_IstioMesh,           /* networking.istio.io Mesh global: every Istio sidecar (an
                                  * EnvoyFilter in Istio's root namespace) */
  kPo_TargetKind_Gateway,             /* gateway.networking.k8s.io Gateway <name>: Envoy Gateway */
} po_TargetKind;

const char *po_TargetKind_Name(po_TargetKind k);  /* "ServiceDefaults", "ProxyDefaults", "Service", "Mesh", "Gateway" */
const char *po_TargetKind_Group(po_TargetKind k); /* "consul.hashicorp.com", "", "networking.istio.io", ... */
po_Mesh po_TargetKind_Mesh(po_TargetKind k);
bool po_TargetKind_MeshWide(po_TargetKind k);     /* ProxyDefaults, Mesh: every proxy (tenancy-gated) */
/* The kind named `kind` (po_TargetKind_Name's word, exactly); false when none is. */
bool po_TargetKind_Parse(const char *kind, po_TargetKind *out);

#endif
