/* Who may target what (DESIGN.md section 6, "ownership and trust"). A PropertyOverride writes
 * only into targets of its own namespace (a targetRef.namespace naming another is refused). The mesh-wide targets
 * (Consul's ProxyDefaults `global`, Istio's Mesh `global`: an EnvoyFilter in Istio's root
 * namespace) configure every proxy of the mesh, so only namespaces the operator names may target them;
 * `*` allows every namespace. Checked by the webhook at admission and by the reconciler, so a
 * PropertyOverride that slipped past the webhook (failurePolicy Ignore, an outage) still writes
 * nothing. */
#ifndef PO_TARGETS_TENANCY_H_
#define PO_TARGETS_TENANCY_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/targets/override.h"

enum { kPo_TenancyMaxNamespaces = 64 };

typedef struct {
  const char *proxy_defaults_from[kPo_TenancyMaxNamespaces]; /* borrowed; "*" = any namespace */
  size_t n;
} po_Tenancy;

/* Adds a namespace (false when the table is full or the name is empty). */
bool po_Tenancy_AllowProxyDefaults(po_Tenancy *t, const char *ns);

/* Whether a PropertyOverride of namespace `from` may write into a target of namespace `to`
 * (spec.targetRef.namespace; "" or `from` itself: its own). This version programs only targets of
 * a PropertyOverride's own namespace (the reconciler, the markers and the index name a
 * PropertyOverride by its name within the target's namespace), so any other namespace is refused
 * whatever the policy, with the sentence for the TargetNotAllowed condition and the denial in
 * `why`. */
bool po_Tenancy_AllowsNamespace(const po_Tenancy *t, const char *from, const char *to, char *why, size_t size);

/* Whether a PropertyOverride of namespace `ns` may target `kind`. When not, `why` gets the
 * sentence for the condition and the denial. A NULL policy allows everything (unit tests). */
bool po_Tenancy_Allows(const po_Tenancy *t, po_TargetKind kind, const char *ns, char *why, size_t size);

#endif
