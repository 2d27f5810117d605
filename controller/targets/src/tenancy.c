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
             kind == kPo_TargetKind_IstioMesh ? "Service" : "ServiceDefaults");
  }
  return false;
}

/* A namespace name: an RFC 1123 label. */
static bool dns_label(const char *s, size_t n) {
  if (n == 0 || n > 63) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (!alnum && (ch != '-' || i == 0 || i == n - 1)) return false;
  }
  return true;
}

static bool cross_listed(const po_Tenancy *t, const char *ns, size_t n) {
  for (size_t i = 0; i < t->n_cross; i++) {
    if (strlen(t->cross_namespace_from[i]) == n && !strncmp(t->cross_namespace_from[i], ns, n)) return true;
  }
  return false;
}

bool po_Tenancy_AllowCrossNamespace(po_Tenancy *t, const char *list, po_CtlStatus *st) {
  size_t was = t->n_cross;
  const char *p = list ? list : "";
  for (size_t item = 1;; item++) {
    size_t n = strcspn(p, ",");
    if (!dns_label(p, n)) {
      /* all or nothing: a half-read list would allow some of what the operator wrote */
      t->n_cross = was;
      if (n == 0) {
        po_CtlStatus_Set(st, kPo_Ctl_Usage, "--allow-cross-namespace-from '%.200s': item %zu is empty (want namespace names separated by commas, "
                 "such as platform,infra)", list ? list : "", item);
      } else {
        po_CtlStatus_Set(st, kPo_Ctl_Usage, "--allow-cross-namespace-from '%.200s': item %zu '%.*s' is not a namespace name (want a DNS label: "
                 "at most 63 of a-z, 0-9 and '-', starting and ending alphanumeric; '*' is not accepted: name the "
                 "platform teams' namespaces)", list ? list : "", item, (int)(n > 80 ? 80 : n), p);
      }
      return false;
    }
    if (!cross_listed(t, p, n)) {
      if (t->n_cross == kPo_TenancyMaxNamespaces) {
        t->n_cross = was;
        return po_CtlStatus_Set(st, kPo_Ctl_Usage, "--allow-cross-namespace-from: at most %d namespaces",
                                kPo_TenancyMaxNamespaces);
      }
      memcpy(t->cross_namespace_from[t->n_cross], p, n);
      t->cross_namespace_from[t->n_cross++][n] = '\0';
    }
    if (!p[n]) return true;
    p += n + 1;
  }
}

bool po_Tenancy_AllowsNamespace(const po_Tenancy *t, po_TargetKind kind, const char *from, const char *to, char *why,
                                size_t size) {
  const char *f = from ? from : "";
  if (!to || !*to || !strcmp(to, f)) return true;
  bool listed = t && cross_listed(t, f, strlen(f));
  if (listed && kind == kPo_TargetKind_ServiceDefaults) return true;
  if (listed) {
    /* ProxyDefaults is mesh-wide (--allow-proxydefaults-from governs it, in its own namespace);
     * the Istio and Gateway adapters program their own namespace's objects only */
    snprintf(why, size,
             "PropertyOverrides in namespace '%s' may name another namespace ('%s') only for a ServiceDefaults target, "
             "not %s (leave spec.targetRef.namespace empty or set it to '%s')",
             f, to, po_TargetKind_Name(kind), f);
    return false;
  }
  /* The allowed list is the operator's configuration, not a secret: naming it tells the tenant
   * where such an override belongs. */
  int n = snprintf(why, size,
                   "PropertyOverrides in namespace '%s' may not write into targets of namespace '%s': the operator "
                   "allows another namespace only from namespace%s ",
                   f, to, t && t->n_cross == 1 ? "" : "s");
  for (size_t i = 0; t && i < t->n_cross && n >= 0 && (size_t)n < size; i++) {
    n += snprintf(why + n, size - (size_t)n, "%s'%s'", i ? ", " : "", t->cross_namespace_from[i]);
  }
  if ((!t || t->n_cross == 0) && n >= 0 && (size_t)n < size) n += snprintf(why + n, size - (size_t)n, "(none)");
  if (n >= 0 && (size_t)n < size) {
    snprintf(why + n, size - (size_t)n,
             " (--allow-cross-namespace-from); leave spec.targetRef.namespace empty or set it to '%s', or create the "
             "PropertyOverride in namespace '%s'", f, to);
  }
  return false;
}
