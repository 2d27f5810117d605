/* Listen addresses, for every server of the process (the ops server here, the admission
 * webhook): one syntax, one set of messages, one way to turn them into sockets.
 *
 * Flag syntax (controller-runtime's --metrics-bind-address and --health-probe-bind-address):
 * "127.0.0.1:8080", "localhost:8080", "[::1]:8080", ":8080" (every interface), port 0 (the
 * system picks one; the servers report it), or "0" alone (disabled: the server does not listen). */
#ifndef PO_RUNTIME_LISTEN_H
#define PO_RUNTIME_LISTEN_H

#include <stdbool.h>

#include "po/runtime/status.h"

struct sockaddr;

typedef struct {
  char host[256]; /* "" for every interface */
  int port;       /* 0..65535 */
  bool disabled;
} po_ListenAddr;

bool po_ListenAddr_Parse(const char *text, po_ListenAddr *out, po_CtlStatus *st);

/* Called with each candidate socket address, port set, until it returns true (it bound). v6:
 * an AF_INET6 address; dual_stack: the IPv6 wildcard, which should accept IPv4 too. */
typedef bool (*po_ListenFn)(void *ctx, const struct sockaddr *sa, bool v6, bool dual_stack);

/* The candidates in order: for every interface the IPv6 wildcard (dual stack), then 0.0.0.0
 * (hosts without IPv6); for a host, what it resolves to. false with st filled when the host does
 * not resolve (kPo_Ctl_Usage) or no candidate bound (kPo_Ctl_System). A disabled address
 * binds nothing and is true. */
bool po_ListenAddr_Bind(const po_ListenAddr *a, po_ListenFn fn, void *ctx, po_CtlStatus *st);

#endif
