/* Which of the API server's "failed calling webhook" refusals mean the webhook could not be
 * reached at all (its retry is capped, kPo_ReconcileWebhookRetryMaxS), as opposed to an answer
 * the webhook gave or a call that ran out of time.
 *
 * kube-apiserver 1.32 (k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go
 * and mutating/dispatcher.go, callHook) wraps every failed call the same way:
 *   Internal error occurred: failed calling webhook "NAME": failed to call webhook: REASON
 * REASON is the REST client's error. A transport failure is a Go *url.Error,
 *   Post "https://SVC.NS.svc:443/PATH?timeout=10s": CAUSE
 * where CAUSE comes from the dialer (net.OpError: "dial tcp 10.96.0.7:443: connect: connection
 * refused", "... connect: no route to host", "... i/o timeout", "dial tcp: lookup HOST on
 * DNS:53: no such host") or from the service resolver the dialer calls first
 * (k8s.io/apiserver/pkg/util/proxy/proxy.go: the lister's `service "NAME" not found`,
 * `no endpoints available for service "NAME"`). Any status code the webhook answered with is a
 * StatusError without the Post prefix ("the server responded with the status code 413 but did
 * not return more information"), and a webhook that answers too slowly (429s until the
 * timeout) ends in `Post "...": context deadline exceeded`: both keep the normal backoff, which
 * grows, so a permanent refusal (our webhook's 413 over its memory budget) does not cost the API
 * server a try every 10 s forever. */
#include <stdbool.h>
#include <string.h>

#include "po/reconcile/reconcile.h"

/* The dialer's and resolver's words that mean nothing answered. */
static const char *const kUnreachable[] = {
    ": connect: connection refused",  /* nothing listens: the webhook's pod is down or starting */
    ": connect: no route to host",    /* the endpoint's address is gone (pod deleted) */
    ": connect: network is unreachable",
    ": i/o timeout",                  /* the dial timed out (an address nobody answers on) */
    ": no such host",                 /* DNS: the service name does not resolve */
    "no endpoints available for service \"", /* the service has no ready pod */
};

bool po_Reconcile_WebhookUnreachable(const char *err) {
  if (!err) return false;
  const char *call = strstr(err, "failed calling webhook \"");
  if (!call) return false;
  /* only a transport failure carries the request's method and URL */
  const char *post = strstr(call, ": failed to call webhook: Post \"");
  if (!post) return false;
  if (strstr(post, "context deadline exceeded")) return false; /* the webhook may be answering, slowly */
  for (size_t i = 0; i < sizeof kUnreachable / sizeof kUnreachable[0]; i++)
    if (strstr(post, kUnreachable[i])) return true;
  /* the resolver's lister: `service "NAME" not found` (the webhook's Service deleted) */
  const char *svc = strstr(post, ": service \"");
  return svc && strstr(svc + 11, "\" not found") != NULL;
}
