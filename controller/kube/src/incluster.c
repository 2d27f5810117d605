/* In-cluster configuration: the service-account mount and the service environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_internal.h"

#define PO_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

bool po_KubeConfig_InCluster(const char *dir, po_KubeConfig **out, po_CtlStatus *st) {
  *out = NULL;
  if (!dir) dir = PO_SA_DIR;
  const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return po_CtlStatus_Set(st, kPo_Ctl_Config,
                             "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                             "must both be set");
  po_KubeConfig *c = po_KubeConfig_New_();
  if (!c) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  c->in_cluster = true;
  size_t n = strlen(host) + strlen(port) + 16;
  c->server = malloc(n);
  c->token_file = join(dir, "token");
  char *ns_file = join(dir, "namespace");
  c->ca_file = join(dir, "ca.crt");
  c->context = strdup("");
  if (!c->server || !c->token_file || !ns_file || !c->ca_file || !c->context) {
    free(ns_file);
    po_KubeConfig_Free(c);
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  }
  /* An IPv6 service address needs brackets (net.JoinHostPort). */
  snprintf(c->server, n, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
  if (access(c->ca_file, R_OK) != 0) {
    /* client-go only warns; curl would fail later with a vaguer message, so say it now. */
    po_CtlStatus_Set(st, kPo_Ctl_Config, "%s: in-cluster CA file is not readable", c->ca_file);
    free(ns_file);
    po_KubeConfig_Free(c);
    return false;
  }
  if (access(c->token_file, R_OK) != 0) {
    po_CtlStatus_Set(st, kPo_Ctl_Config, "%s: in-cluster token file is not readable",
                      c->token_file);
    free(ns_file);
    po_KubeConfig_Free(c);
    return false;
  }
  po_CtlStatus ignore;
  size_t len;
  char *ns = po_ReadFile_(ns_file, &len, &ignore);
  free(ns_file);
  if (ns) {
    while (len && (ns[len - 1] == '\n' || ns[len - 1] == ' ' || ns[len - 1] == '\r')) ns[--len] = '\0';
    c->ns = ns;
  }
  po_CtlStatus_Clear(st);
  *out = c;
  return true;
}
