/* The runtime's errors are the controller's one status family (po/base/status.h): every
 * fallible function returns bool and fills a po_CtlStatus (NULL is allowed). The codes the
 * runtime uses: kPo_Ctl_Usage (a bad address, a NULL), kPo_Ctl_NoMemory, kPo_Ctl_System (pthread,
 * pipe, bind), kPo_Ctl_Start (a runnable refused to start), kPo_Ctl_Deadline. */
#ifndef PO_RUNTIME_STATUS_H
#define PO_RUNTIME_STATUS_H

#include "po/base/status.h"

#endif
