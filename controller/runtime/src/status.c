#include "po/runtime/status.h"

#include <stdarg.h>
#include <stdio.h>

void po_RtStatus_Clear(po_RtStatus *st) {
  if (!st) return;
  st->code = kPo_RtErr_Ok;
  st->message[0] = '\0';
}

bool po_RtStatus_Set(po_RtStatus *st, po_RtErr code, const char *fmt, ...) {
  if (!st) return false;
  st->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->message, sizeof st->message, fmt, ap);
  va_end(ap);
  return false;
}
