/* po_Status: the caller-owned error object every fallible call of ours fills.
 * A fixed buffer, so that reporting a failure never allocates. Codes are never renumbered. */
#ifndef PO_STATUS_H_
#define PO_STATUS_H_

#include <stdbool.h>
#include <stddef.h>

typedef enum {
  kPo_Status_Ok = 0,
  kPo_Status_Usage = 1,       /* the caller passed something that cannot be right */
  kPo_Status_Parse = 2,       /* malformed JSON, YAML or protobuf input */
  kPo_Status_NotFound = 3,    /* an unknown message, field or file */
  kPo_Status_Patch = 4,       /* a patch could not be applied (Consul's PatchStruct errors) */
  kPo_Status_Invalid = 5,     /* a configuration failed validation (Consul's Constructor errors) */
  kPo_Status_NoMemory = 6,
  kPo_Status_Io = 7,
  kPo_Status_Limit = 8,       /* input over a size, depth or count bound */
  kPo_Status_Internal = 9,
} po_StatusCode;

#define PO_STATUS_MAX 8192

typedef struct {
  po_StatusCode code;
  char message[PO_STATUS_MAX]; /* NUL-terminated; truncated with "..." when longer */
} po_Status;

void po_Status_Clear(po_Status *s);
bool po_Status_IsOk(const po_Status *s);
/* Sets code and a printf-formatted message; returns false so `return po_Status_Set(...)` reads well. */
bool po_Status_Set(po_Status *s, po_StatusCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Puts "prefix" in front of the current message (e.g. a file name or a patch index). */
void po_Status_Prefix(po_Status *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
