#include "po/targets/tenancy.h"

#include <stdio.h>
#include <string.h>

bool po_Tenancy_AllowProxyDefaults(po_Tenancy *t, const char *ns) {
  if (!ns || !*ns || t->n == kPo_TenancyMaxNamespaces) return false;
  t->proxy_defaults_from[t->n++] = ns;
  return true;
}

bool po_Tenancy_Allows(const po_Tenancy *t, po_TargetKind kind, const char *ns, char *why, size_t size) {
  if (!t || !po_TargetKind_MeshWide(kind)) return true;
  for (size_t i = 0; i < t->n; i++) {
    if (!strcmp(t->proxy_defaults_from[i], "*") || !strcmp(t->proxy_defaults_from[i], ns ? ns : "")) return true;
  }
  /* The allowed list is the operator's configuration, not a secret: naming it tells the tenant
   * where such an override belongs. */
  int n = snprintf(why, size,
                   "PropertyOverrides in namespace '%s' may not target %s (it configures every proxy of the "
                   "mesh); the operator allows that only from namespace%s ",
                   ns ? ns : "", po_TargetKind_Name(kind), t->n == 1 ? "" : "s");
  for (size_t i = 0; i < t->n && n >= 0 && (size_t)n < size; i++) {
    n += snprintf(why + n, size - (size_t)n, "%s'%s'", i ? ", " : "", t->proxy_defaults_from[i]);
  }
  if (t->n == 0 && n >= 0 && (size_t)n < size) snprintf(why + n, size - (size_t)n, "(none)");
  if (n >= 0 && (size_t)n < size) {
    size_t l = strlen(why);
    snprintf(why + l, size - l, " (--allow-proxydefaults-from); a %s target of this namespace is allowed",
             kind == kPo_TargetIstioMesh ? "Service" : "ServiceDefaults");
  }
  return false;
}

bool po_Tenancy_AllowsNamespace(const po_Tenancy *t, const char *from, const char *to, char *why, size_t size) {
  (void)t; /* no policy can allow it yet: see tenancy.h */
  if (!to || !*to || !strcmp(to, from ? from : "")) return true;
  snprintf(why, size,
           "PropertyOverrides in namespace '%s' may not write into targets of namespace '%s': this version programs "
           "only targets of a PropertyOverride's own namespace (leave spec.targetRef.namespace empty or set it to "
           "'%s', or create the PropertyOverride in namespace '%s')",
           from ? from : "", to, from ? from : "", to);
  return false;
}
