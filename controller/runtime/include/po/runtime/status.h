/* Errors of the controller runtime: a caller-owned status with a fixed buffer, so failing never
 * allocates. Every fallible function returns bool and fills one (NULL is allowed). */
#ifndef PO_RUNTIME_STATUS_H
#define PO_RUNTIME_STATUS_H

#include <stdbool.h>

typedef enum {
  kPo_RtErr_Ok = 0,
  kPo_RtErr_Usage = 1,     /* the caller passed something invalid (a bad address, a NULL) */
  kPo_RtErr_NoMemory = 2,
  kPo_RtErr_System = 3,    /* a system call failed (pthread, pipe, bind) */
  kPo_RtErr_Start = 4,     /* a runnable refused to start */
  kPo_RtErr_Timeout = 5,   /* an orderly stop did not finish before its deadline */
} po_RtErr;

typedef struct {
  po_RtErr code;
  char message[640]; /* as large as po_KubeStatus's: a client error passes through whole */
} po_RtStatus;

void po_RtStatus_Clear(po_RtStatus *st);

/* Sets code and a printf-formatted message; always returns false. st may be NULL. */
bool po_RtStatus_Set(po_RtStatus *st, po_RtErr code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
