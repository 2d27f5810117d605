/* The webhook's self-managed certificate mode: a CA and a serving certificate kept in a Secret
 * (shared by every replica: the first to start makes them, the others read them; a 409 on
 * create means another replica won), written to files the webhook server loads (and re-reads),
 * and the CA put into the caBundle of every webhook of the ValidatingWebhookConfiguration.
 * Renewed when less than 30 days are left (the serving certificate lasts a year, the CA ten). */
#ifndef PO_APP_SELFCERT_H_
#define PO_APP_SELFCERT_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/kube/client.h"

typedef struct {
  const char *ns;                 /* the Secret's namespace (the controller's) */
  const char *secret;             /* Secret name */
  const char *service;            /* the webhook Service: SANs service, .ns, .ns.svc, .ns.svc.cluster.local */
  const char *webhook_config;     /* ValidatingWebhookConfiguration name */
  const char *dir;                /* where tls.crt and tls.key are written */
  const char *const *extra_sans;  /* further DNS names or IPs */
  size_t n_sans;
} po_SelfCertOptions;

/* Makes sure all of the above holds; *changed tells whether anything was (re)generated. */
bool po_SelfCert_Ensure(po_KubeClient *c, const po_SelfCertOptions *o, bool *changed, po_CtlStatus *st);

#endif
