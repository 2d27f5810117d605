/* Parsing of flag-style listen addresses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/ops.h"

bool po_ListenAddr_Parse(const char *text, po_ListenAddr *out, po_RtStatus *st) {
  memset(out, 0, sizeof *out);
  if (!text) return po_RtStatus_Set(st, kPo_RtErr_Usage, "listen address: missing");
  if (strcmp(text, "0") == 0) {
    out->disabled = true;
    return true;
  }
  const char *colon = strrchr(text, ':');
  if (!colon)
    return po_RtStatus_Set(st, kPo_RtErr_Usage,
                           "listen address \"%s\": expected host:port, :port or 0 (disabled)", text);
  const char *host = text;
  size_t host_len = (size_t)(colon - text);
  if (host_len && text[0] == '[') {
    if (text[host_len - 1] != ']')
      return po_RtStatus_Set(st, kPo_RtErr_Usage,
                             "listen address \"%s\": an IPv6 host must be written [addr]:port", text);
    host++;
    host_len -= 2;
  } else if (memchr(text, ':', host_len)) {
    return po_RtStatus_Set(st, kPo_RtErr_Usage,
                           "listen address \"%s\": an IPv6 host must be written [addr]:port", text);
  }
  if (host_len >= sizeof out->host)
    return po_RtStatus_Set(st, kPo_RtErr_Usage, "listen address \"%s\": host too long", text);
  const char *port = colon + 1;
  char *end;
  errno = 0;
  long p = strtol(port, &end, 10);
  if (!*port || *end || errno || p < 0 || p > 65535 || port[0] == '-' || port[0] == '+')
    return po_RtStatus_Set(st, kPo_RtErr_Usage,
                           "listen address \"%s\": port \"%s\" is not a number from 0 to 65535",
                           text, port);
  memcpy(out->host, host, host_len);
  out->host[host_len] = '\0';
  out->port = (int)p;
  return true;
}
