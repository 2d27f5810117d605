#include "po/targets/native_error.h"

#include <stdlib.h>
#include <string.h>

const char *po_Native_ErrorPointer(const po_Value *v, const char *message, po_Arena *a, const char **what) {
  *what = NULL;
  const char *at = message ? strstr(message, "JSON @") : NULL;
  if (!at) return NULL;
  char *end = NULL;
  long line = strtol(at + 6, &end, 10);
  if (end == at + 6 || *end != ':' || line < 1 || line > 1L << 30) return NULL;
  const char *rest = strstr(end, ": ");
  if (!rest) return NULL;
  const char *pointer = po_Value_PrettyJsonPointerAt(v, (int)line, a);
  if (pointer) *what = rest + 2;
  return pointer;
}
