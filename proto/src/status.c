#include "po/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void po_Status_Clear(po_Status *s) {
  s->code = kPo_Status_Ok;
  s->message[0] = '\0';
}

bool po_Status_IsOk(const po_Status *s) { return s->code == kPo_Status_Ok; }

static void mark_truncated(char *buf, size_t cap, int n) {
  if (n >= 0 && (size_t)n >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
}

bool po_Status_Set(po_Status *s, po_StatusCode code, const char *fmt, ...) {
  if (!s) return false;
  s->code = code;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(s->message, sizeof s->message, fmt, ap);
  va_end(ap);
  mark_truncated(s->message, sizeof s->message, n);
  return false;
}

void po_Status_Prefix(po_Status *s, const char *fmt, ...) {
  if (!s) return;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t plen = strlen(prefix), mlen = strlen(s->message);
  if (plen + mlen + 1 > sizeof s->message) mlen = sizeof s->message - plen - 1;
  memmove(s->message + plen, s->message, mlen);
  memcpy(s->message, prefix, plen);
  s->message[plen + mlen] = '\0';
}
