/* Self-managed webhook certificates, checked every interval (12 hours by default; they are
 * renewed 30 days before expiry, so a missed check costs nothing). The webhook server re-reads
 * the files itself. A runnable of every replica (periodic.c: its stop wakes the wait and joins
 * the thread, so nothing outlives the app). */
#include "app_internal.h"

static bool renew(void *ctx) {
  po_Renewal *r = ctx;
  po_CtlStatus st;
  bool changed;
  if (!po_SelfCert_Ensure(r->client, &r->opt, &changed, &st)) {
    po_Log_Error(r->log, "renewing the webhook certificates", po_Str("error", st.message));
  } else if (changed) {
    po_Log_Info(r->log, "webhook certificates renewed");
  }
  return true;
}

bool po_Renewal_Init(po_Renewal *r, po_KubeClient *c, const po_SelfCertOptions *o, po_Logger *log, int64_t interval_ns) {
  *r = (po_Renewal){.client = c, .opt = *o, .log = log};
  return po_Periodic_Init(&r->every, "certificate-renewal", interval_ns, renew, NULL, r);
}

void po_Renewal_Destroy(po_Renewal *r) { po_Periodic_Destroy(&r->every); }

po_Runnable po_Renewal_Runnable(po_Renewal *r) { return po_Periodic_Runnable(&r->every); }
