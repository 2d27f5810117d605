/* Parsing of flag-style listen addresses, and the sockets they name. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "po/runtime/listen.h"

bool po_ListenAddr_Parse(const char *text, po_ListenAddr *out, po_CtlStatus *st) {
  memset(out, 0, sizeof *out);
  if (!text) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "listen address: missing");
  if (strcmp(text, "0") == 0) {
    out->disabled = true;
    return true;
  }
  const char *colon = strrchr(text, ':');
  if (!colon)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage,
                           "listen address \"%s\": expected host:port, :port or 0 (disabled)", text);
  const char *host = text;
  size_t host_len = (size_t)(colon - text);
  if (host_len && text[0] == '[') {
    if (text[host_len - 1] != ']')
      return po_CtlStatus_Set(st, kPo_Ctl_Usage,
                             "listen address \"%s\": an IPv6 host must be written [addr]:port", text);
    host++;
    host_len -= 2;
  } else if (memchr(text, ':', host_len)) {
    return po_CtlStatus_Set(st, kPo_Ctl_Usage,
                           "listen address \"%s\": an IPv6 host must be written [addr]:port", text);
  }
  if (host_len >= sizeof out->host)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "listen address \"%s\": host too long", text);
  const char *port = colon + 1;
  char *end;
  errno = 0;
  long p = strtol(port, &end, 10);
  if (!*port || *end || errno || p < 0 || p > 65535 || port[0] == '-' || port[0] == '+')
    return po_CtlStatus_Set(st, kPo_Ctl_Usage,
                           "listen address \"%s\": port \"%s\" is not a number from 0 to 65535",
                           text, port);
  memcpy(out->host, host, host_len);
  out->host[host_len] = '\0';
  out->port = (int)p;
  return true;
}

bool po_ListenAddr_Bind(const po_ListenAddr *a, po_ListenFn fn, void *ctx, po_CtlStatus *st) {
  if (a->disabled) return true;
  struct sockaddr_in in4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)a->port)};
  struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)a->port)};
  if (a->host[0] == '\0') {
    in6.sin6_addr = in6addr_any;
    if (fn(ctx, (struct sockaddr *)&in6, true, true)) return true;
    in4.sin_addr.s_addr = htonl(INADDR_ANY); /* no IPv6 here: every IPv4 interface */
    if (fn(ctx, (struct sockaddr *)&in4, false, false)) return true;
    return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot listen on port %d (in use?)", a->port);
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
  struct addrinfo *res = NULL;
  int rc = getaddrinfo(a->host, NULL, &hints, &res);
  if (rc != 0) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "cannot resolve host \"%s\": %s", a->host, gai_strerror(rc));
  bool bound = false;
  for (struct addrinfo *ai = res; ai && !bound; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET && ai->ai_addrlen <= sizeof in4) {
      memcpy(&in4, ai->ai_addr, ai->ai_addrlen);
      in4.sin_port = htons((uint16_t)a->port);
      bound = fn(ctx, (struct sockaddr *)&in4, false, false);
    } else if (ai->ai_family == AF_INET6 && ai->ai_addrlen <= sizeof in6) {
      memcpy(&in6, ai->ai_addr, ai->ai_addrlen);
      in6.sin6_port = htons((uint16_t)a->port);
      bound = fn(ctx, (struct sockaddr *)&in6, true, false);
    }
  }
  freeaddrinfo(res);
  if (!bound) return po_CtlStatus_Set(st, kPo_Ctl_System, "cannot listen on %s:%d (address in use or not local?)", a->host, a->port);
  return true;
}
