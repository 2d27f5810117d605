#include "po/base/status.h"

#include <stdarg.h>
#include <stdio.h>

static const struct {
  po_CtlCode code;
  const char *name;
} kNames[] = {
    {kPo_Ctl_Ok, "Ok"},
    {kPo_Ctl_BadRequest, "BadRequest"},
    {kPo_Ctl_Unauthorized, "Unauthorized"},
    {kPo_Ctl_Forbidden, "Forbidden"},
    {kPo_Ctl_NotFound, "NotFound"},
    {kPo_Ctl_AlreadyExists, "AlreadyExists"},
    {kPo_Ctl_Conflict, "Conflict"},
    {kPo_Ctl_Gone, "Gone"},
    {kPo_Ctl_Invalid, "Invalid"},
    {kPo_Ctl_TooManyRequests, "TooManyRequests"},
    {kPo_Ctl_ServerTimeout, "ServerTimeout"},
    {kPo_Ctl_Internal, "Internal"},
    {kPo_Ctl_ServiceUnavailable, "ServiceUnavailable"},
    {kPo_Ctl_MethodNotAllowed, "MethodNotAllowed"},
    {kPo_Ctl_UnsupportedMediaType, "UnsupportedMediaType"},
    {kPo_Ctl_RequestTooLarge, "RequestTooLarge"},
    {kPo_Ctl_Timeout, "Timeout"},
    {kPo_Ctl_OtherHttp, "OtherHttp"},
    {kPo_Ctl_Transport, "Transport"},
    {kPo_Ctl_Config, "Config"},
    {kPo_Ctl_Decode, "Decode"},
    {kPo_Ctl_NoMemory, "NoMemory"},
    {kPo_Ctl_Usage, "Usage"},
    {kPo_Ctl_Stopped, "Stopped"},
    {kPo_Ctl_Io, "Io"},
    {kPo_Ctl_System, "System"},
    {kPo_Ctl_Start, "Start"},
    {kPo_Ctl_Deadline, "Deadline"},
};

const char *po_CtlCode_Name(po_CtlCode code) {
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; i++)
    if (kNames[i].code == code) return kNames[i].name;
  return "Unknown";
}

bool po_CtlCode_IsRetryable(po_CtlCode code) {
  switch (code) {
    case kPo_Ctl_TooManyRequests:
    case kPo_Ctl_ServerTimeout:
    case kPo_Ctl_Internal:
    case kPo_Ctl_ServiceUnavailable:
    case kPo_Ctl_Timeout:
    case kPo_Ctl_Transport:
      return true;
    default:
      return false;
  }
}

void po_CtlStatus_Clear(po_CtlStatus *st) {
  if (!st) return;
  st->code = kPo_Ctl_Ok;
  st->http_status = 0;
  st->reason[0] = '\0';
  st->message[0] = '\0';
}

bool po_CtlStatus_Set(po_CtlStatus *st, po_CtlCode code, const char *fmt, ...) {
  if (!st) return false;
  st->code = code;
  st->http_status = 0;
  st->reason[0] = '\0';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->message, sizeof st->message, fmt, ap);
  va_end(ap);
  return false;
}
