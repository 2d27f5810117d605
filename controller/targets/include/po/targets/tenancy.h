/* Who may target what (ARCHITECTURE.md section 7, "Trust"). A PropertyOverride writes
 * into targets of its own namespace; a spec.targetRef.namespace naming another is allowed only
 * for ServiceDefaults targets and only to PropertyOverrides of the namespaces the operator names
 * (--allow-cross-namespace-from: platform teams). The mesh-wide targets (Consul's ProxyDefaults
 * `global`, Istio's Mesh `global`: an EnvoyFilter in Istio's root namespace) configure every proxy
 * of the mesh, so only namespaces the operator names may target them; `*` allows every namespace.
 * Checked by the webhook at admission and by the reconciler, so a PropertyOverride that slipped
 * past the webhook (failurePolicy Ignore, an outage) still writes nothing. */
#ifndef PO_TARGETS_TENANCY_H_
#define PO_TARGETS_TENANCY_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/base/status.h"
#include "po/targets/target_kind.h"

enum { kPo_TenancyMaxNamespaces = 64 };

struct po_Tenancy {
  const char *proxy_defaults_from[kPo_TenancyMaxNamespaces]; /* borrowed; "*" = any namespace */
  size_t n;
  /* namespaces whose PropertyOverrides may name another namespace in targetRef (owned copies) */
  char cross_namespace_from[kPo_TenancyMaxNamespaces][64];
  size_t n_cross;
};
typedef struct po_Tenancy po_Tenancy;

/* Adds a namespace (false when the table is full or the name is empty). */
bool po_Tenancy_AllowProxyDefaults(po_Tenancy *t, const char *ns);

/* Adds the namespaces of a comma-separated list (the value of one --allow-cross-namespace-from):
 * each a DNS label (no `*`: a platform team is named, never "everyone"), no empty item. On a bad
 * item returns false with st (kPo_Ctl_Usage) holding the sentence naming it and what is valid,
 * the policy as it was. Repeating a namespace is harmless. */
bool po_Tenancy_AllowCrossNamespace(po_Tenancy *t, const char *list, po_CtlStatus *st);

/* Whether a PropertyOverride of namespace `from` targeting `kind` may write into a target of
 * namespace `to` (spec.targetRef.namespace; "" or `from` itself: its own, always allowed). Another
 * namespace only for a ServiceDefaults target and a `from` the policy lists; when not, `why` gets
 * the sentence for the TargetNotAllowed condition and the denial, naming the flag. A NULL policy
 * allows nobody another namespace. */
bool po_Tenancy_AllowsNamespace(const po_Tenancy *t, po_TargetKind kind, const char *from, const char *to, char *why,
                                size_t size);

/* Whether a PropertyOverride of namespace `ns` may target `kind`. When not, `why` gets the
 * sentence for the condition and the denial. A NULL policy allows everything (unit tests). */
bool po_Tenancy_Allows(const po_Tenancy *t, po_TargetKind kind, const char *ns, char *why, size_t size);

#endif
